"""Blind rating sheets: several systems' outputs for a sample of sources, as raters see them.

``prepare`` samples sentences, gathers each system's output, merges identical outputs into one
candidate (rated once, credited to every system that wrote it), shuffles the candidates of each
sentence and writes, into one folder:

- ``sheet.json`` and ``sheet.csv``: the protocol, and per item the source and its candidates, by
  opaque ids; nothing says which system wrote what;
- ``key.json``: which systems wrote each candidate, and which line each item is. Raters never
  get it; ``wean serve --rating-sheet`` never reads it;
- ``ratings/``: where the rating page saves each rating as it is given (one JSON line a rating,
  ``ratings/<rater>.jsonl``; the last rating of a candidate counts).

The protocol is the WEAN paper's (Table 3, after Nisioi et al. 2017 and Zhang and Lapata 2017):
adequacy, fluency and simplicity, each from 1 to 5.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import re
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from wean.errors import WeanError
from wean.textio import atomic_write_json, atomic_write_text, check_same_length, read_json

SCALES = ("adequacy", "fluency", "simplicity")
PROTOCOL = """\
Each item is a source sentence and one or more candidate rewrites of it, meant to be simpler.
Rate every candidate on its own, on three scales from 1 (very bad) to 5 (very good):

adequacy   Does the candidate keep the meaning of the source? 5: all of it, nothing false added;
           3: part of the meaning lost or changed; 1: unrelated to the source, or contradicts it.
           A candidate that states something the source does not (a name, a number, a place)
           is not adequate, however fluent.
fluency    Is the candidate grammatical, well-formed English? 5: perfect; 3: understandable but
           with errors; 1: broken.
simplicity How much simpler than the source is the candidate to read? 1: harder than the source;
           3: as simple as the source (an unchanged copy is a 3); 5: much simpler.

The candidates of an item are in random order; some may be the source itself or a person's
rewrite. Rate what is written, not what was probably meant.
"""
RATER_NAME = re.compile(r"[A-Za-z0-9_.-]{1,40}")


@dataclass(frozen=True)
class Rating:
    rater: str
    candidate: str
    scores: dict[str, int]


def prepare(
    sources: Sequence[str], systems: dict[str, Sequence[str]], out: Path, sentences: int = 50, seed: int = 1,
    lines: Sequence[int] | None = None, source_name: str = "",
) -> dict:
    """Write a blind sheet of ``sentences`` sampled lines (or the 1-based ``lines``) into ``out``;
    ``systems`` maps each system's name to its outputs, line by line with ``sources``."""
    if len(systems) < 1:
        raise WeanError("no systems: give at least one --system NAME=FILE")
    check_same_length([("source", sources)] + [(f"system {name}", outputs) for name, outputs in systems.items()])
    if (out / "key.json").exists() or (out / "sheet.json").exists():
        raise WeanError(f"{out}: holds a rating sheet already; choose an empty folder (ratings would be lost)")
    rng = random.Random(seed)
    if lines is not None:
        bad = [line for line in lines if not 1 <= line <= len(sources)]
        if bad:
            raise WeanError(f"--lines: line {bad[0]} is outside the source's 1-{len(sources)}")
        if len(set(lines)) != len(lines):
            raise WeanError("--lines: a line is named twice")
        chosen = [line - 1 for line in lines]
    else:
        usable = [i for i in range(len(sources)) if sources[i].strip()]
        chosen = sorted(rng.sample(usable, min(sentences, len(usable))))
    if not chosen:
        raise WeanError(f"{source_name or 'the source'}: no non-empty line to rate")
    items, key_items = [], []
    for number, index in enumerate(chosen, start=1):
        writers: dict[str, list[str]] = {}
        for name, outputs in systems.items():
            writers.setdefault(" ".join(outputs[index].split()), []).append(name)
        texts = list(writers)
        rng.shuffle(texts)
        candidates = [{"id": f"{number}.{k + 1}", "text": text} for k, text in enumerate(texts)]
        items.append({"item": number, "source": sources[index], "candidates": candidates})
        key_items.append({"item": number, "line": index + 1,
                          "candidates": {c["id"]: writers[c["text"]] for c in candidates}})
    out.mkdir(parents=True, exist_ok=True)
    (out / "ratings").mkdir(exist_ok=True)
    sheet = {"protocol": PROTOCOL, "scales": list(SCALES), "items": items}
    atomic_write_json(out / "sheet.json", sheet)
    atomic_write_text(out / "sheet.csv", _csv(items))
    atomic_write_json(out / "key.json", {"source": source_name, "seed": seed, "systems": list(systems),
                                         "items": key_items})
    return sheet


def _csv(items: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["candidate", "source", "output", *SCALES])
    for item in items:
        for candidate in item["candidates"]:
            writer.writerow([candidate["id"], item["source"], candidate["text"], "", "", ""])
    return buffer.getvalue()


def load_sheet(folder: Path) -> dict:
    path = Path(folder) / "sheet.json"
    if not path.is_file():
        raise WeanError(f"{path}: not found; make a sheet with wean rate prepare")
    sheet = read_json(path)
    if not isinstance(sheet, dict) or not isinstance(sheet.get("items"), list):
        raise WeanError(f"{path}: not a rating sheet (no items)")
    return sheet


def candidate_ids(sheet: dict) -> set[str]:
    return {c["id"] for item in sheet["items"] for c in item["candidates"]}


def check_rater(rater) -> str:
    """A rater's name: 1-40 letters, digits, ``_``, ``.`` or ``-`` (it names a file)."""
    if not isinstance(rater, str) or not RATER_NAME.fullmatch(rater):
        raise WeanError(f"rater {rater!r}: 1-40 letters, digits, '_', '.' or '-'")
    return rater


def check_rating(rater: str, candidate: str, scores: dict, known: set[str]) -> Rating:
    """A rating as given, checked: a rater's name (:func:`check_rater`), a candidate of the sheet,
    and a whole number from 1 to 5 on each scale (a string of one such digit is read as it)."""
    check_rater(rater)
    if not isinstance(candidate, str) or candidate not in known:
        raise WeanError(f"candidate {candidate!r} is not on this sheet")
    checked = {}
    for scale in SCALES:
        value = scores.get(scale)
        if isinstance(value, str) and re.fullmatch(r"\s*[1-5]\s*", value):
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
            raise WeanError(f"{scale} of {candidate}: {value!r}; a whole number from 1 to 5")
        checked[scale] = value
    return Rating(rater, candidate, checked)


def save_rating(folder: Path, rating: Rating) -> None:
    """Append one rating to ``ratings/<rater>.jsonl`` and sync it before returning: a closed page
    or a crash loses nothing said. A line cut short by an earlier crash is ended first, so that it
    spoils only itself."""
    path = Path(folder) / "ratings" / f"{rating.rater}.jsonl"
    path.parent.mkdir(exist_ok=True)
    record = {"rater": rating.rater, "candidate": rating.candidate, **rating.scores, "time": time.time()}
    line = json.dumps(record) + "\n"
    with open(path, "a+b") as stream:
        stream.seek(0, 2)
        if stream.tell():
            stream.seek(-1, 2)
            if stream.read(1) != b"\n":
                line = "\n" + line
        stream.write(line.encode("utf-8"))  # one write, appended
        stream.flush()
        os.fsync(stream.fileno())


class CutLineWarning(UserWarning):
    """A line of a ratings file that a crash cut short, left out."""


def read_ratings(paths: Sequence[Path], known: set[str], skip_bad: bool = False) -> list[Rating]:
    """Ratings from the page's ``.jsonl`` files (rater in each line) and filled ``sheet.csv``
    copies (UTF-8, with or without a byte-order mark; the rater is the file's name without
    ``.csv``); a later rating of the same candidate by the same rater replaces the earlier.
    Unrated rows of a CSV are left out; a bad value is one line naming its file and line, or,
    with ``skip_bad``, skipped (the server reading back a file a crash may have cut). A line of a
    ``.jsonl`` file that begins a rating but is not JSON is one a crash cut short (the page writes
    whole lines): it is left out, with a warning naming it, rather than every rating of the folder."""
    ratings: dict[tuple[str, str], Rating] = {}
    for path in paths:
        path = Path(path)
        for number, row in _rows(path, skip_bad):
            try:
                if not isinstance(row, dict):
                    raise WeanError("not a rating")
                rating = check_rating(row.get("rater"), row.get("candidate"), row, known)
            except WeanError as error:
                if skip_bad:
                    continue
                raise WeanError(f"{path}:{number}: {error}") from None
            ratings[(rating.rater, rating.candidate)] = rating
    return list(ratings.values())


def _rows(path: Path, skip_bad: bool) -> list[tuple[int, object]]:
    """(line number, row) of a ratings file, rows of a CSV with the rater named by the file."""
    if path.suffix not in (".jsonl", ".csv"):
        raise WeanError(f"{path}: ratings are .jsonl (the rating page's) or .csv (a filled sheet.csv)")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as error:
        raise WeanError(f"{path}: cannot read ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise WeanError(f"{path}: not UTF-8 text; save the sheet as UTF-8 CSV") from None
    if path.suffix == ".jsonl":
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append((number, json.loads(line)))
                except json.JSONDecodeError as error:
                    if skip_bad:
                        continue
                    if not line.startswith('{"'):  # not the start of a rating the page wrote: an edit
                        raise WeanError(f"{path}:{number}: not JSON ({error.msg})") from None
                    warnings.warn(f"{path}:{number}: not JSON ({error.msg}), a line a crash cut short; left out",
                                  CutLineWarning, stacklevel=3)
        return rows
    reader = csv.DictReader(io.StringIO(text))
    missing = [column for column in ("candidate", *SCALES) if column not in (reader.fieldnames or [])]
    if missing:
        raise WeanError(f"{path}: no column {missing[0]!r}; a filled copy of sheet.csv has candidate, "
                        f"{', '.join(SCALES)}")
    try:
        check_rater(path.stem)
    except WeanError as error:
        raise WeanError(f"{path}: the file's name is the rater's: {error}") from None
    return [(number, {**row, "rater": path.stem}) for number, row in enumerate(reader, start=2)
            if any((row.get(scale) or "").strip() for scale in SCALES)]
