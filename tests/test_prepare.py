"""``wean prepare``: training splits built from the benchmark files, with nothing of a test set in them."""

from pathlib import Path

import pytest

from wean.data.prepare import prepare


def write_pairs(folder: Path, prefix: str, pairs: list[tuple[str, str]]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{prefix}.src").write_text("".join(s + "\n" for s, _ in pairs), encoding="utf-8")
    (folder / f"{prefix}.dst").write_text("".join(t + "\n" for _, t in pairs), encoding="utf-8")


def read_pairs(folder: Path, split: str) -> list[tuple[str, str]]:
    sources = (folder / f"{split}.src").read_text(encoding="utf-8").splitlines()
    return list(zip(sources, (folder / f"{split}.dst").read_text(encoding="utf-8").splitlines()))


def test_lcsts_part2_holds_out_a_seeded_selection_set_and_drops_part3_texts(tmp_path):
    root = tmp_path / "data"
    part3 = [("第三部分的文本 一", "标题一"), ("第三部分的文本二", "标题二")]
    write_pairs(root / "lcsts", "part3", part3)
    pairs = [(f"文本{i}", f"摘要{i}") for i in range(1200)] + [("第三部分的文本一", "另一个标题")]  # a PART III text, spaced differently
    write_pairs(root / "lcsts" / "part2", "train", pairs)
    counts = prepare("lcsts-part2", root, tmp_path / "a")
    assert counts == {"train": 200, "valid": 1000, "part3_overlap": 1}
    train, valid = read_pairs(tmp_path / "a", "train"), read_pairs(tmp_path / "a", "valid")
    assert not {s for s, _ in train} & {s for s, _ in valid}
    assert sorted(train + valid) == sorted(pairs[:1200])
    prepare("lcsts-part2", root, tmp_path / "b")
    assert read_pairs(tmp_path / "b", "valid") == valid  # seeded
    assert "part3_overlap: 1" in (tmp_path / "a" / "README.txt").read_text()


def test_the_staged_lcsts_part2_has_no_part3_text(data_dir, tmp_path):
    if not (data_dir / "lcsts" / "part2").is_dir():
        pytest.skip("../shared/data/lcsts/part2 is not staged")
    assert prepare("lcsts-part2", data_dir, tmp_path) == {"train": 9336, "valid": 1000, "part3_overlap": 0}


def test_lcsts_part2_with_too_few_pairs_to_hold_out_is_refused(tmp_path):
    from wean.errors import WeanError

    write_pairs(tmp_path / "data" / "lcsts", "part3", [("文本", "标题")])
    write_pairs(tmp_path / "data" / "lcsts" / "part2", "train", [(f"文本{i}", f"摘要{i}") for i in range(1000)])
    with pytest.raises(WeanError, match="1000 pairs, too few to hold 1000 out"):
        prepare("lcsts-part2", tmp_path / "data", tmp_path / "out")
