"""data.direction (the reverse and language models of noisy-channel reranking) and
data.drop_if_matches: which pairs training reads, and that a model learns the direction asked."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from synthetic import tiny_config
from wean.config import config_from_dict
from wean.data.corpus import LM_SOURCE, ParallelText, drop_matching, oriented
from wean.data.plain_text import PlainText
from wean.errors import WeanError
from wean.inference.forced_scores import forced_log_probs
from wean.inference.generator import load
from wean.training import Trainer

# forward: each symbol to the next one; a reverse model must learn the previous one
NEXT = dict(zip("abcdefgh", "bcdefgha"))


def _write(folder: Path, pairs: list[tuple[str, str]], split: str) -> None:
    (folder / f"{split}.src").write_text("".join(s + "\n" for s, _ in pairs), encoding="utf-8")
    (folder / f"{split}.dst").write_text("".join(t + "\n" for _, t in pairs), encoding="utf-8")


def _shifted(count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    pairs = []
    for _ in range(count):
        symbols = [rng.choice(list(NEXT)) for _ in range(rng.randint(4, 8))]
        pairs.append((" ".join(symbols), " ".join(NEXT[s] for s in symbols)))
    return pairs


@pytest.fixture(scope="module")
def shifted_corpus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("shifted")
    _write(folder, _shifted(2000, 0), "train")
    _write(folder, _shifted(60, 1), "valid")
    return folder


def _config(data: Path, model_dir: Path, **data_settings):
    config = tiny_config(data, model_dir, max_epochs=5, learning_rate=0.01, selection_metric="loss")
    return dataclasses.replace(config, data=dataclasses.replace(config.data, **data_settings))


def test_oriented_pairs():
    text = ParallelText(["s1", "s2"], ["t1", "t2"], [["t1", "t2"], ["r1", "r2"]], Path("x.src"), [3, 7])
    assert oriented(text, "forward") is text
    reverse = oriented(text, "reverse")
    assert (reverse.sources, reverse.targets, reverse.references) == (["t1", "t2"], ["s1", "s2"], [["s1", "s2"]])
    assert reverse.line_number(1) == 7
    lm = oriented(text, "lm")
    assert (lm.sources, lm.targets, lm.references) == ([LM_SOURCE] * 2, ["t1", "t2"], text.references)


def test_a_reverse_model_learns_the_other_direction(shifted_corpus, tmp_path):
    Trainer(_config(shifted_corpus, tmp_path / "reverse", direction="reverse")).train()
    generator = load(tmp_path / "reverse")
    previous = {b: a for a, b in NEXT.items()}
    targets = [t for _, t in _shifted(30, 2)]
    outputs = [g.text for g in generator.generate(targets)]
    expected = [" ".join(previous[s] for s in t.split()) for t in targets]
    assert sum(o == e for o, e in zip(outputs, expected)) >= 27


def test_a_language_model_learns_the_target_side(tmp_path):
    # the targets are the sources' symbols in order: a language model of the targets finds a
    # sorted sequence likelier than the same symbols shuffled, which no source could teach it
    def pairs(count, seed):
        return [(s, " ".join(sorted(s.split()))) for s, _ in _shifted(count, seed)]

    data = tmp_path / "data"
    data.mkdir()
    _write(data, pairs(1200, 0), "train")
    _write(data, pairs(60, 1), "valid")
    Trainer(_config(data, tmp_path / "lm", direction="lm")).train()
    generator = load(tmp_path / "lm")
    assert generator.assets.source_vocabulary.stoi.keys() >= {LM_SOURCE}
    real = [t for _, t in pairs(40, 3)]
    shuffled = [" ".join(random.Random(i).sample(t.split(), len(t.split()))) for i, t in enumerate(real)]
    changed = [(r, s) for r, s in zip(real, shuffled) if r != s]

    def log_prob(texts):
        return [total for total, _ in forced_log_probs(generator, [LM_SOURCE] * len(texts), texts)]

    better = sum(r > s for r, s in zip(log_prob([r for r, _ in changed]), log_prob([s for _, s in changed])))
    assert better >= 0.9 * len(changed)
    # read as plain text in a PTB-tokenized corpus, the source <lm> is read as in training, not as < lm >
    generator.plain_text = PlainText(dataclasses.replace(generator.config.data.tokenizer, corpus_tokenization="ptb"))
    tokenized = forced_log_probs(generator, [LM_SOURCE] * len(real), real, plain_text=False)
    assert forced_log_probs(generator, [LM_SOURCE] * len(real), real, plain_text=True) == tokenized


def test_a_language_model_validates_on_its_source_token_when_validation_text_is_plain(shifted_corpus, tmp_path):
    config = _config(shifted_corpus, tmp_path / "lm", direction="lm", valid_plain_text=True)
    config.data.tokenizer = dataclasses.replace(config.data.tokenizer, corpus_tokenization="ptb")
    trainer = Trainer(config)
    lm_id = trainer.assets.source_vocabulary.stoi[LM_SOURCE]
    assert {tuple(example.source) for example in trainer.validation.examples} == {(lm_id,)}


def test_drop_if_matches_drops_training_pairs_only(shifted_corpus, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    pairs = _shifted(200, 0)
    pairs[5] = ("a ZÃ rich b", "b c")  # mojibake that lost its byte, in a source
    pairs[9] = ("a b", "b ZÃ rich")  # and in a target
    _write(data, pairs, "train")
    _write(data, [("a ZÃ rich", "b")] + _shifted(19, 1), "valid")
    trainer = Trainer(_config(data, tmp_path / "model", drop_if_matches="[\u00c2-\u00f4](?=\\s|$)"))
    assert "data.drop_if_matches: 2 training pairs dropped, 198 kept" in trainer.notes
    assert len(trainer.train_examples) == 198
    assert "ZÃ" not in trainer.assets.source_vocabulary.stoi
    assert trainer.validation.valid.sources[0] == "a ZÃ rich"  # validation text as written


def test_drop_matching_keeps_line_numbers():
    text = ParallelText(["a", "b x", "c"], ["A", "B", "C x"], [["A", "B", "C x"], ["1", "2", "3"]], Path("t.src"))
    kept, dropped = drop_matching(text, "x")
    assert dropped == 2 and kept.sources == ["a"] and kept.references == [["A"], ["1"]] and kept.line_number(0) == 1
    kept, dropped = drop_matching(text, "^3$")  # a match in a second reference drops the pair too
    assert dropped == 1 and kept.sources == ["a", "b x"] and kept.line_number(1) == 2


@pytest.mark.parametrize("data, message", [
    ({"direction": "sideways"}, "data.direction is 'sideways'; choose one of forward, reverse, lm"),
    ({"drop_if_matches": "(unclosed"}, "data.drop_if_matches is not a regular expression"),
    ({"direction": "lm", "control": {"attributes": ["chars_ratio"]}}, "a language model (data.direction: lm) has none"),
])
def test_bad_settings_are_one_line(data, message):
    with pytest.raises(WeanError, match=message.replace("(", r"\(").replace(")", r"\)")):
        config_from_dict({"data": {"train": "x", **data}})
