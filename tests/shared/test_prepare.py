"""Training splits built from the shared benchmark files."""

from wean.data.prepare import prepare
from wean.textio import read_lines


def test_gigaword_training_split_is_clean(data_dir, tmp_path):
    counts = prepare("gigaword", data_dir, tmp_path)
    sources, targets = read_lines(tmp_path / "train.src"), read_lines(tmp_path / "train.dst")
    assert len(sources) == len(targets) == counts["train"] > 30000
    held_out = set(read_lines(data_dir / "gigaword/test1951.src")) | set(read_lines(tmp_path / "valid.src"))
    assert not held_out & set(sources)
    assert len(set(zip(sources, targets))) == len(sources)
    assert not any("<unk>" in line.split() for line in sources + targets)
    assert counts["candidates"] == counts["train"] + counts["duplicates"] + counts["overlap"] + counts["empty"]
    assert (tmp_path / "README.txt").read_text().startswith("gigaword splits")


def test_lcsts_splits_follow_the_human_scores(data_dir, tmp_path):
    counts = prepare("lcsts", data_dir, tmp_path)
    # 165 + 216 pairs score < 3, of which 5 repeat a test text; 725 score >= 3
    assert counts == {"train": 339, "valid": 37, "test": 725, "overlap": 5}
    test = read_lines(tmp_path / "test.src")
    assert test == read_lines(data_dir / "lcsts/part3_label3plus.src")
    train = set(read_lines(tmp_path / "train.src")) | set(read_lines(tmp_path / "valid.src"))
    assert not train & set(test)
