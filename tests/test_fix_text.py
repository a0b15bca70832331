"""data.fix_text: mojibake in the training pairs repaired with ftfy, counted, idempotent; clean
text, validation text and quotes left as written."""

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from synthetic import tiny_config, write_corpus
from wean.data.corpus import read_parallel
from wean.data.fix_text import fix_line, fix_training_text
from wean.training import Trainer

BROKEN = {
    "The ticket is valid in ZÃ¼rich .": "The ticket is valid in Zürich .",
    "It costs â‚¬60 â€” about Â£50 .": "It costs €60 — about £50 .",
    "FranÃ§ois TruffautÂ was born in Paris .": "François Truffaut\u00a0was born in Paris .",
}
CLEAN = ["A plain sentence .", "“Curly quotes” stay , and so do &amp; and ﬁ .", "Zürich is in Switzerland ."]


def test_mojibake_is_repaired_and_clean_text_left_as_written():
    for broken, fixed in BROKEN.items():
        assert fix_line(broken) == fixed
    for line in CLEAN:
        assert fix_line(line) == line


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40) | st.sampled_from(list(BROKEN)))
def test_repairing_twice_is_repairing_once(text):
    once = fix_line(text)
    assert fix_line(once) == once


def _corpus(folder: Path) -> Path:
    folder.mkdir(parents=True)
    sources = list(BROKEN) + CLEAN
    targets = [BROKEN[line] if line in BROKEN else line for line in sources]
    targets[0] = "It is valid in ZÃ¼rich ."  # a broken target too
    (folder / "train.src").write_text("\n".join(sources) + "\n", encoding="utf-8")
    (folder / "train.dst").write_text("\n".join(targets) + "\n", encoding="utf-8")
    return folder / "train"


def test_the_training_text_is_repaired_and_counted(tmp_path):
    text, repaired = fix_training_text(read_parallel(_corpus(tmp_path / "data")))
    assert (repaired.pairs, repaired.sources, repaired.targets) == (3, 3, 1)
    assert text.sources[0] == "The ticket is valid in Zürich ." and text.targets[0] == "It is valid in Zürich ."
    assert text.references[0] == text.targets


@pytest.mark.parametrize("fix", [True, False])
def test_training_repairs_the_training_pairs_only(tmp_path, fix):
    data = write_corpus(tmp_path / "data", train=200, valid=20)
    lines = (data / "train.src").read_text(encoding="utf-8").splitlines()
    lines[0] = "a b ZÃ¼rich c"
    (data / "train.src").write_text("\n".join(lines) + "\n", encoding="utf-8")
    valid = (data / "valid.src").read_text(encoding="utf-8").splitlines()
    valid[0] = "a ZÃ¼rich"
    (data / "valid.src").write_text("\n".join(valid) + "\n", encoding="utf-8")
    config = tiny_config(data, tmp_path / "model")
    config = dataclasses.replace(config, data=dataclasses.replace(config.data, fix_text=fix))
    trainer = Trainer(config)
    vocabulary = trainer.assets.source_vocabulary.stoi
    assert ("Zürich" in vocabulary) == fix and ("ZÃ¼rich" in vocabulary) != fix
    repaired = [note for note in trainer.notes if note.startswith("data.fix_text")]
    assert repaired == (["data.fix_text: 1 of 200 training pairs repaired (1 sources, 0 targets)"] if fix else [])
    assert trainer.validation.valid.sources[0] == "a ZÃ¼rich"  # validation text as written
