"""``wean data``: the record of where each data file comes from, and laying files out from a
clone of their repository with every checksum checked."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest
import yaml

from wean.cli import main
from wean.data import layout as layout_module
from wean.data import sources
from wean.data.layout import layout
from wean.data.sources import SourceFile, source_files, status
from wean.evaluation.benchmarks import BENCHMARKS


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_the_record_covers_every_benchmark_and_preset_and_says_where_each_file_comes_from():
    recorded = {entry.path: entry for entry in source_files()}
    for benchmark in BENCHMARKS.values():
        for path in (benchmark.source, *benchmark.references):
            assert path in recorded, f"{benchmark.name}: {path} has no recorded source"
    for config in Path("configs").rglob("*.yaml"):
        data = yaml.safe_load(config.read_text()).get("data") or {}
        for key in ("train", "valid"):
            value = data.get(key) or ""
            if value.startswith("${WEAN_DATA_ROOT}/"):
                prefix = value[len("${WEAN_DATA_ROOT}/"):]
                assert f"{prefix}.src" in recorded, f"{config}: data.{key} {value} has no recorded source"
    for entry in recorded.values():
        assert len(entry.sha256) == 64 and entry.bytes > 0
        if entry.how == "derived":
            assert entry.note and not entry.repository
            if entry.derive:
                assert entry.derive["kind"] in layout_module.DERIVATIONS
                assert all(path in recorded for path in entry.derive["from"])
        else:
            assert entry.how in ("copy", "final-newline", "crlf-final-newline", "remove-u0092", "zip-member")
            assert "/" in entry.repository and len(entry.commit) >= 12 and entry.source


def fake_record(monkeypatch, entries: list[SourceFile]) -> None:
    monkeypatch.setattr(sources, "source_files", lambda: entries)
    monkeypatch.setattr(layout_module, "source_files", lambda: entries)


def test_a_clone_is_laid_out_as_recorded_and_a_file_of_other_bytes_is_refused(tmp_path, monkeypatch, capsys):
    clone, root = tmp_path / "clone", tmp_path / "root"
    (clone / "data").mkdir(parents=True)
    (clone / "data" / "a.txt").write_bytes(b"one\ntwo")  # no final newline upstream
    (clone / "data" / "b.txt").write_bytes(b"three\r\nfour\r\n")
    (clone / "data" / "c.txt").write_bytes(b"changed upstream\n")
    with zipfile.ZipFile(clone / "sample.zip", "w") as archive:
        archive.writestr("inside/d.txt", "five\n")
    (clone / "data" / "e.txt").write_text("ZÃ\u0092rich\n", encoding="utf-8")
    record = dict(repository="someone/corpus", commit="0" * 40)
    entries = [
        SourceFile("x/a.src", sha256(b"one\ntwo\n"), 8, "final-newline", source="data/a.txt", **record),
        SourceFile("x/b.src", sha256(b"three\nfour\n"), 11, "crlf-final-newline", source="data/b.txt", **record),
        SourceFile("x/c.src", sha256(b"as recorded\n"), 12, "copy", source="data/c.txt", **record),
        SourceFile("x/d.src", sha256(b"five\n"), 5, "zip-member", source="sample.zip", member="inside/d.txt", **record),
        SourceFile("x/e.src", sha256("ZÃrich\n".encode()), 8, "remove-u0092", source="data/e.txt", **record),
        SourceFile("y/f.src", sha256(b"elsewhere\n"), 10, "copy", repository="other/repo", commit="1" * 40,
                   source="f.txt"),
    ]
    fake_record(monkeypatch, entries)
    report = layout(clone, root)
    assert sorted(report.written) == ["x/a.src", "x/b.src", "x/d.src", "x/e.src"]
    assert (root / "x/a.src").read_bytes() == b"one\ntwo\n" and (root / "x/b.src").read_bytes() == b"three\nfour\n"
    assert not (root / "x/c.src").exists() and report.refused[0].startswith("x/c.src: sha256 ")
    # a damaged file is replaced, a good one kept
    (root / "x/a.src").write_bytes(b"damaged\n")
    again = layout(clone, root)
    assert "x/a.src" in again.written and "x/b.src" in again.kept
    states = status(root)
    assert [e.path for e in states["x"]["present"]] == ["x/a.src", "x/b.src", "x/d.src", "x/e.src"]
    assert [e.path for e in states["x"]["missing"]] == ["x/c.src"]
    # the command: one line per refusal, exit status 1; status names the clone commands of what is missing
    assert main(["data", "layout", "--from", str(clone), "--data-root", str(root)]) == 1
    out = capsys.readouterr().out
    assert "refused x/c.src" in out and "0 file(s) written, 4 already there, 1 refused" in out
    assert main(["data", "status", "--data-root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "x/: 4 present, 1 missing" in out and "y/: 1 missing" in out
    assert f"git clone https://github.com/other/repo repo-111111111111" in out and f"checkout -q {'1' * 40}" in out
    assert f"--data-root {root}" in out
    # a folder that holds none of the recorded files is said to be the wrong one
    (tmp_path / "elsewhere").mkdir()
    assert main(["data", "layout", "--from", str(tmp_path / "elsewhere"), "--data-root", str(tmp_path / "new")]) == 1
    assert "holds none of the recorded files" in capsys.readouterr().err


def test_an_archive_member_far_larger_than_recorded_is_not_read(tmp_path, monkeypatch):
    clone = tmp_path / "clone"
    clone.mkdir()
    with zipfile.ZipFile(clone / "sample.zip", "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bomb.txt", b"0" * 10_000_000)
    fake_record(monkeypatch, [SourceFile("x/a.src", "0" * 64, 5, "zip-member", repository="a/b", commit="0" * 40,
                                         source="sample.zip", member="bomb.txt")])
    report = layout(clone, tmp_path / "root")
    assert report.refused == [f"x/a.src: {clone / 'sample.zip'}: member bomb.txt holds 10,000,000 bytes, not the 5 recorded"]


def reverse(entry: SourceFile, data: bytes) -> bytes:
    """The upstream bytes a recorded file was laid out from (for the transforms that can be undone)."""
    if entry.how == "final-newline":
        return data[:-1]
    if entry.how == "crlf-final-newline":
        return data[:-1].replace(b"\n", b"\r\n")
    return data


def test_the_shared_data_are_rebuilt_from_clones_of_their_repositories(data_dir, tmp_path, monkeypatch):
    """Each repository's files put back as they lie upstream (final newline removed, CRLF, zipped),
    laid out again into an empty root: every checksum as recorded; then the derived files (Kauchak
    train, LCSTS PART III's columns) rebuilt from the laid-out files they come from."""
    root = tmp_path / "root"
    clones: dict[tuple[str, str], Path] = {}
    for entry in source_files():
        if entry.how in ("derived", "remove-u0092"):
            continue  # remove-u0092 cannot be undone; derived ones are rebuilt below
        clone = clones.setdefault((entry.repository, entry.commit), tmp_path / f"clone{len(clones)}")
        data = reverse(entry, (data_dir / entry.path).read_bytes())
        target = clone / entry.source
        target.parent.mkdir(parents=True, exist_ok=True)
        if entry.how == "zip-member":
            with zipfile.ZipFile(target, "a") as archive:
                archive.writestr(entry.member, data)
        else:
            target.write_bytes(data)
    for clone in clones.values():
        assert not layout(clone, root).refused
    for entry in source_files():  # the rest: the files with U+0092 removed, from a copy of the data root
        if entry.how == "remove-u0092":
            (root / entry.path).write_bytes((data_dir / entry.path).read_bytes())
    report = layout(None, root)
    # LCSTS PART III's columns came with their clone's layout, derived once PART_III.txt was there
    assert sorted(report.written) == ["kauchak_v2/train.dst", "kauchak_v2/train.src"]
    states = status(root)
    assert {entry for dataset in states.values() for entry in dataset["missing"]} == \
        {e for e in source_files() if e.how == "derived" and not e.derive}  # LCSTS PART II: its TSVs are not recorded
    assert not any(dataset["damaged"] for dataset in states.values())


def test_a_missing_benchmark_says_how_to_get_it(tmp_path, capsys):
    hypotheses = tmp_path / "out.txt"
    hypotheses.write_text("a\n")
    assert main(["evaluate", "--hyp", str(hypotheses), "--benchmark", "asset-valid", "--data-root", str(tmp_path)]) == 1
    error = capsys.readouterr().err
    assert "benchmark asset-valid:" in error and "11 of its 11 files missing" in error and "wean data status" in error


def test_every_shared_data_file_is_recorded_with_its_checksum(data_dir):
    states = status(data_dir)
    assert not any(dataset["damaged"] or dataset["missing"] for dataset in states.values())
    assert {entry.path for entry in source_files()} == \
        {str(p.relative_to(data_dir)) for p in data_dir.rglob("*") if p.is_file() and p.name != "README.md"}
