"""Blind rating sheets and their scores: a sheet filled by a script of known ratings gives back
the known means, the key never reaches the sheet, bad ratings are one line."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from wean.cli import main
from wean.errors import WeanError
from wean.rating.score import agreement, score_ratings
from wean.rating.sheet import CutLineWarning, Rating, candidate_ids, load_sheet, prepare, read_ratings

SOURCES = [f"The source sentence number {i} is rather long and complicated." for i in range(30)]
SYSTEMS = {
    "terser": [f"Sentence {i}." for i in range(30)],
    "copier": list(SOURCES),
    "echoer": list(SOURCES),  # writes what copy writes: one candidate, rated once, credited to both
    "oddball": [f"Sentence {i} is odd." if i % 2 else f"Sentence {i}." for i in range(30)],  # half like terse
}
# what the script's raters give each system's text (adequacy, fluency, simplicity)
GIVEN = {"terser": (2, 5, 5), "copier": (5, 5, 3), "oddball": (4, 1, 4)}


def writers_of(key: dict, candidate: str) -> list[str]:
    return next(item["candidates"][candidate] for item in key["items"] if candidate in item["candidates"])


def fill(folder, rater: str, shift: int = 0) -> None:
    """A filled copy of sheet.csv: each candidate rated as GIVEN says for its first writer that
    has an entry there (odd's even lines are terse's text), ``shift`` added to adequacy."""
    key = json.loads((folder / "key.json").read_text())
    rows = list(csv.DictReader(open(folder / "sheet.csv", encoding="utf-8")))
    for row in rows:
        writers = writers_of(key, row["candidate"])
        given = next(GIVEN[w] for w in ("terser", "copier", "oddball") if w in writers)
        row.update(adequacy=min(5, given[0] + shift), fluency=given[1], simplicity=given[2])
    with open(folder / f"{rater}.csv", "w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


@pytest.fixture
def sheet_folder(tmp_path):
    folder = tmp_path / "sheet"
    prepare(SOURCES, SYSTEMS, folder, sentences=12, seed=3)
    return folder


def test_the_sheet_is_blind_deduplicated_and_shuffled(sheet_folder):
    sheet = load_sheet(sheet_folder)
    key = json.loads((sheet_folder / "key.json").read_text())
    assert len(sheet["items"]) == 12 and [i["item"] for i in sheet["items"]] == list(range(1, 13))
    text = (sheet_folder / "sheet.json").read_text() + (sheet_folder / "sheet.csv").read_text()
    for name in SYSTEMS:  # no system's name anywhere a rater looks
        assert name not in text
    assert "line" not in json.dumps(sheet["items"])  # nor the line, which would find the system files
    positions = []
    for item, keyed in zip(sheet["items"], key["items"]):
        line = keyed["line"] - 1
        assert item["source"] == SOURCES[line]
        texts = [c["text"] for c in item["candidates"]]
        assert sorted(texts) == sorted({outputs[line] for outputs in SYSTEMS.values()})  # each text once
        for candidate in item["candidates"]:  # the key gives back every writer of every candidate
            assert sorted(keyed["candidates"][candidate["id"]]) == sorted(
                name for name, outputs in SYSTEMS.items() if outputs[line] == candidate["text"])
        positions.append(texts.index(SOURCES[line]))
    assert len(set(positions)) > 1  # the copy is not always in the same place
    # the same seed, the same sheet; another folder is needed for it
    again = sheet_folder.parent / "again"
    assert prepare(SOURCES, SYSTEMS, again, sentences=12, seed=3) == sheet
    with pytest.raises(WeanError, match="holds a rating sheet already"):
        prepare(SOURCES, SYSTEMS, sheet_folder, sentences=12, seed=3)


def test_a_sheet_filled_by_a_script_gives_the_known_means(sheet_folder):
    fill(sheet_folder, "first")
    fill(sheet_folder, "second", shift=1)  # the second rater is one point kinder on adequacy
    key = json.loads((sheet_folder / "key.json").read_text())
    known = candidate_ids(load_sheet(sheet_folder))
    ratings = read_ratings([sheet_folder / "first.csv", sheet_folder / "second.csv"], known)
    scores = score_ratings(key, ratings, samples=200)
    systems = scores["systems"]
    assert set(systems) == set(SYSTEMS) and all(s["items"] == 12 for s in systems.values())
    assert systems["copier"]["adequacy"]["value"] == 5.0  # min(5, 5 + 1) for both raters
    assert systems["echoer"] == systems["copier"]
    assert systems["terser"]["adequacy"]["value"] == 2.5 and systems["terser"]["simplicity"]["value"] == 5.0
    assert systems["terser"]["good"]["value"] == 0.0 and systems["terser"]["meaning_changed"]["value"] == 0.0
    lines = [item["line"] - 1 for item in key["items"]]
    odd_share = sum(1 for line in lines if line % 2) / len(lines)  # odd's own text, not terse's
    assert systems["oddball"]["fluency"]["value"] == pytest.approx(1 * odd_share + 5 * (1 - odd_share))
    assert systems["oddball"]["broken"]["value"] == pytest.approx(100 * odd_share)
    assert systems["oddball"]["fluency"]["low"] <= systems["oddball"]["fluency"]["value"] <= systems["oddball"]["fluency"]["high"]
    assert systems["copier"]["simplicity"]["low"] == systems["copier"]["simplicity"]["high"] == 3.0
    pair = next(c for c in scores["comparisons"] if {c["a"], c["b"]} == {"copier", "terser"})
    sign = 1 if pair["a"] == "copier" else -1
    assert sign * pair["adequacy"]["difference"] == 2.5 and pair["adequacy"]["p"] < 0.01
    alpha = scores["agreement"]["krippendorff_alpha_ordinal"]
    assert alpha["fluency"] == pytest.approx(1.0) and alpha["adequacy"] < 1.0


def test_agreement_is_krippendorffs_alpha():
    # two raters, four units: the krippendorff package's value, which is 1 for identical raters
    def ratings(values_a, values_b):
        return [Rating(rater, f"c{i}", {"adequacy": v, "fluency": v, "simplicity": v})
                for rater, values in (("a", values_a), ("b", values_b)) for i, v in enumerate(values)]

    assert agreement(ratings([1, 2, 3, 4], [1, 2, 3, 4]))["adequacy"] == pytest.approx(1.0)
    assert agreement(ratings([1, 2, 3, 4], [4, 3, 2, 1]))["adequacy"] < 0
    assert agreement(ratings([1, 2, 3, 4], [1, 2, 3, 4])[:4]) == {"adequacy": None, "fluency": None, "simplicity": None}
    # two raters who split the candidates between them: no unit to agree on
    split = [r for r in ratings([1, 2, 3, 4], [4, 3, 2, 1]) if (r.rater == "a") == (r.candidate in ("c0", "c1"))]
    assert agreement(split) == {"adequacy": None, "fluency": None, "simplicity": None}


@pytest.mark.parametrize("row, message", [
    ({"adequacy": "6"}, r"first.csv:2: adequacy of .*: '6'; a whole number from 1 to 5"),
    ({"simplicity": "²"}, r"first.csv:2: simplicity of .*: '²'"),
    ({"fluency": "x"}, r"first.csv:2: fluency of .*: 'x'"),
    ({"candidate": "99.9"}, r"first.csv:2: candidate '99.9' is not on this sheet"),
])
def test_a_bad_rating_is_one_line_naming_file_and_line(sheet_folder, row, message):
    fill(sheet_folder, "first")
    path = sheet_folder / "first.csv"
    rows = list(csv.DictReader(open(path, encoding="utf-8")))
    rows[0].update(row)
    with open(path, "w", encoding="utf-8", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    with pytest.raises(WeanError, match=message):
        read_ratings([path], candidate_ids(load_sheet(sheet_folder)))


def test_prepare_and_score_from_the_command_line(tmp_path, capsys):
    paths = {}
    for name, lines in {"src": SOURCES, **SYSTEMS}.items():
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    folder = tmp_path / "sheet"
    systems = [argument for name in SYSTEMS for argument in ("--system", f"{name}={paths[name]}")]
    assert main(["rate", "prepare", "--src", str(paths["src"]), *systems, "--sentences", "8", "--out", str(folder)]) == 0
    assert "8 items" in capsys.readouterr().out
    assert main(["rate", "score", str(folder)]) == 1
    assert "no ratings" in capsys.readouterr().err
    fill(folder, "alice")
    # a later rating of a candidate replaces an earlier one: the page's file, read after the CSV
    first = next(iter(json.loads((folder / "key.json").read_text())["items"][0]["candidates"]))
    (folder / "ratings" / "alice.jsonl").write_text(
        json.dumps({"rater": "alice", "candidate": first, "adequacy": 1, "fluency": 1, "simplicity": 1}) + "\n")
    assert main(["rate", "score", str(folder), str(folder / "alice.csv"), str(folder / "ratings" / "alice.jsonl"),
                 "--json", "--samples", "50"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["raters"] == ["alice"] and record["ratings"] == len(candidate_ids(load_sheet(folder)))
    assert main(["rate", "score", str(folder), str(folder / "alice.csv")]) == 0
    table = capsys.readouterr().out
    assert "terser" in table and "Krippendorff" in table
    assert main(["rate", "prepare", "--src", str(paths["src"]), "--system", "bad", "--out", str(tmp_path / "x")]) == 1
    assert "write NAME=FILE" in capsys.readouterr().err
    short = tmp_path / "short.txt"
    short.write_text("one line\n")
    assert main(["rate", "prepare", "--src", str(paths["src"]), "--system", f"s={short}", "--out", str(tmp_path / "y")]) == 1
    assert "has 1 lines but" in capsys.readouterr().err


def test_resampled_intervals_are_seeded(sheet_folder):
    fill(sheet_folder, "first")
    key = json.loads((sheet_folder / "key.json").read_text())
    ratings = read_ratings([sheet_folder / "first.csv"], candidate_ids(load_sheet(sheet_folder)))
    assert score_ratings(key, ratings, samples=100, seed=5) == score_ratings(key, ratings, samples=100, seed=5)
    assert not np.isnan(score_ratings(key, ratings, samples=100)["systems"]["oddball"]["fluency"]["low"])


def test_spreadsheet_csv_files_and_bad_files_are_read_or_named(sheet_folder):
    known = candidate_ids(load_sheet(sheet_folder))
    fill(sheet_folder, "first")
    text = (sheet_folder / "first.csv").read_text(encoding="utf-8")
    (sheet_folder / "excel.csv").write_text("\ufeff" + text, encoding="utf-8")  # "CSV UTF-8" has a byte-order mark
    assert len(read_ratings([sheet_folder / "excel.csv"], known)) == len(known)
    (sheet_folder / "latin.csv").write_bytes(text.replace("Sentence", "Séntence").encode("cp1252"))
    (sheet_folder / "no scores.csv").write_text("candidate,output\n1.1,x\n", encoding="utf-8")
    (sheet_folder / "bad name!.csv").write_text(text, encoding="utf-8")
    for name, message in [("absent.csv", "absent.csv: cannot read"), ("latin.csv", "latin.csv: not UTF-8 text"),
                          ("no scores.csv", "no column 'adequacy'"),
                          ("bad name!.csv", "the file's name is the rater's: rater 'bad name!'"),
                          ("ratings.txt", "ratings are .jsonl")]:
        with pytest.raises(WeanError, match=message):
            read_ratings([sheet_folder / name], known)


def test_a_line_cut_short_by_a_crash_spoils_only_itself(sheet_folder):
    from wean.rating.sheet import check_rating, save_rating

    known = sorted(candidate_ids(load_sheet(sheet_folder)))
    path = sheet_folder / "ratings" / "cy.jsonl"
    save_rating(sheet_folder, check_rating("cy", known[0], {"adequacy": 5, "fluency": 5, "simplicity": 5}, set(known)))
    with open(path, "a", encoding="utf-8") as stream:
        stream.write('{"rater": "cy", "candid')  # the process died mid-write
    save_rating(sheet_folder, check_rating("cy", known[1], {"adequacy": 2, "fluency": 3, "simplicity": 4}, set(known)))
    with pytest.warns(CutLineWarning, match=r"cy.jsonl:2: not JSON .*a line a crash cut short; left out"):
        kept = read_ratings([path], set(known))
    assert [(r.candidate, r.scores["adequacy"]) for r in kept] == [(known[0], 5), (known[1], 2)]
    kept = read_ratings([path], set(known), skip_bad=True)  # the server's reading: no warning to anyone
    assert [(r.candidate, r.scores["adequacy"]) for r in kept] == [(known[0], 5), (known[1], 2)]
    with pytest.warns(CutLineWarning):
        assert main(["rate", "score", str(sheet_folder)]) == 0  # the folder's other ratings are scored
    with open(path, "a", encoding="utf-8") as stream:
        stream.write("an edit by hand\n")  # not what the page writes: not forgiven
    with pytest.warns(CutLineWarning), pytest.raises(WeanError, match=r"cy.jsonl:4: not JSON"):
        read_ratings([path], set(known))


def test_lines_and_empty_sources_are_checked(tmp_path):
    with pytest.raises(WeanError, match="a line is named twice"):
        prepare(SOURCES, SYSTEMS, tmp_path / "a", lines=[3, 3])
    with pytest.raises(WeanError, match="no non-empty line to rate"):
        prepare(["", " "], {"x": ["a", "b"]}, tmp_path / "b", source_name="blank.txt")


def test_serve_refuses_a_rating_sheet_behind_a_token(sheet_folder, tmp_path, capsys):
    token = tmp_path / "token"
    token.write_text("secret\n")
    assert main(["serve", "--rating-sheet", str(sheet_folder), "--token-file", str(token)]) == 1
    assert "the rating page sends no token" in capsys.readouterr().err


def test_a_rating_post_reads_the_raters_file_once_not_at_every_post(sheet_folder, monkeypatch):
    import asyncio

    import httpx
    from fastapi import FastAPI

    import wean.server.rating
    from wean.server.rating import rating_routes

    reads = []
    real = wean.server.rating.read_ratings
    monkeypatch.setattr(wean.server.rating, "read_ratings", lambda *args, **kwargs: reads.append(1) or real(*args, **kwargs))
    app = FastAPI()
    app.include_router(rating_routes(sheet_folder))
    known = sorted(candidate_ids(load_sheet(sheet_folder)))

    async def post_all() -> list[int]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://rating") as client:
            return [(await client.post("/v1/rate", json={"rater": "dee", "candidate": candidate, "adequacy": 3,
                                                         "fluency": 4, "simplicity": 5})).json()["rated"]
                    for candidate in known[:6] + known[:2]]  # two rated again: counted once

    assert asyncio.run(post_all()) == [1, 2, 3, 4, 5, 6, 6, 6] and len(reads) == 1
