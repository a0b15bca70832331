"""Control tokens (wean/control.py): attributes computed exactly, reserved tokens that no
tokenizer splits, a tiny model that obeys its length token, checked values on every interface,
and the tuning of default values on validation data."""

from __future__ import annotations

import json
import math

import numpy
import pytest
import yaml

from synthetic import control_config, tiny_config, write_corpus
from wean.cli import main
from wean.config import config_from_dict
from wean.control import Control, chars_ratio, levenshtein, lexical_complexity, parse_control, word_rank
from wean.data.corpus import encode_pairs, read_parallel
from wean.data.vocabulary import UNK_ID
from wean.errors import WeanError
from wean.inference.generator import load
from wean.inference.tune_control import Requirement, Trial, coordinate_ascent, tune_control
from wean.training.assets import build_assets


def test_attributes_on_hand_made_pairs():
    assert chars_ratio("abcd", "ab") == 0.5
    assert chars_ratio("ab", "abcd") == 2.0
    # InDel distance of "kitten" / "sitting" is 5 (2 deletions, 3 insertions) over 13 characters
    assert levenshtein("kitten", "sitting") == pytest.approx(1 - 5 / 13)
    assert levenshtein("same text", "same text") == 1.0
    assert levenshtein("abc", "xyz") == 0.0


def test_word_rank_is_the_third_quartile_of_log_ranks():
    from wean.control import _word_ranks

    ranks = _word_ranks()
    assert "zyzzogeton" not in ranks  # a word outside the list: the rank after its last
    rank = {**ranks, "zyzzogeton": 100_001}
    words = ["the", "cat", "sat", "on", "zyzzogeton", "mat"]
    expected = numpy.quantile([math.log(rank[w]) for w in words], 0.75)  # numpy's linear quantile
    assert lexical_complexity("The cat sat , on the zyzzogeton mat . 1998") == pytest.approx(
        numpy.quantile([math.log(rank[w]) for w in words + ["the"]], 0.75)
    )
    assert lexical_complexity(" ".join(words)) == pytest.approx(expected)
    # a rarer word in the target raises the ratio; punctuation alone counts as an unknown word
    assert word_rank("the big house", "the enormous house") > 1 > word_rank("the enormous house", "the big house")
    assert lexical_complexity(", .") == pytest.approx(math.log(100_001))


def test_values_are_bucketed_and_clipped_into_reserved_tokens():
    control = Control(["chars_ratio", "levenshtein"], 0.05)
    assert control.token("chars_ratio", 0.812) == "<chars_ratio_0.80>"
    assert control.token("chars_ratio", 0.826) == "<chars_ratio_0.85>"
    assert control.token("levenshtein", 7.0) == "<levenshtein_2.00>"
    reserved = control.reserved_tokens()
    assert len(reserved) == 2 * 41 and len(set(reserved)) == len(reserved)
    assert control.oracle_tokens("abcd", "abc") == ["<chars_ratio_0.75>", "<levenshtein_0.85>"]
    assert set(control.oracle_tokens("a long sentence", "short")) <= set(reserved)
    # defaults: 1.0 unless given, and a request overrides them one by one
    assert Control(["chars_ratio", "levenshtein"], 0.05, {"levenshtein": 0.7}).tokens({"chars_ratio": 0.5}) == [
        "<chars_ratio_0.50>", "<levenshtein_0.70>"]


@pytest.mark.parametrize("values, message", [
    ({"length": 0.5}, "unknown attribute 'length'; this model knows chars_ratio, levenshtein"),
    ({"chars_ratio": 2.5}, "chars_ratio is 2.5; it must be a number from 0 to 2"),
    ({"levenshtein": 1.1}, "levenshtein is 1.1; it must be a number from 0 to 1"),
    ({"chars_ratio": -0.1}, "it must be a number from 0 to 2"),
    ({"chars_ratio": float("nan")}, "it must be a number"),
    ({"chars_ratio": True}, "it must be a number"),
])
def test_bad_values_are_one_clear_line(values, message):
    with pytest.raises(WeanError, match=message.replace("(", r"\(")):
        Control(["chars_ratio", "levenshtein"], 0.05).check(values)


def test_command_line_values_parse_or_fail_clearly():
    assert parse_control("chars_ratio=0.8, levenshtein=0.7") == {"chars_ratio": 0.8, "levenshtein": 0.7}
    for bad in ("chars_ratio", "chars_ratio=high", "chars_ratio=inf"):
        with pytest.raises(WeanError, match="--control"):
            parse_control(bad)


def test_config_rejects_unknown_attributes_and_defaults(tmp_path):
    values = tiny_config(tmp_path, tmp_path / "m").to_dict()
    values["data"]["control"] = {"attributes": ["chars_ratio", "tree_depth"]}
    with pytest.raises(WeanError, match="unknown control attribute 'tree_depth'"):
        config_from_dict(values)
    values["data"]["control"] = {"attributes": ["chars_ratio"]}
    values["generation"]["control"] = {"levenshtein": 0.5}
    with pytest.raises(WeanError, match="unknown attribute 'levenshtein'"):
        config_from_dict(values)
    values["generation"]["control"] = {"chars_ratio": "short"}
    with pytest.raises(WeanError, match="generation.control.chars_ratio must be float"):
        config_from_dict(values)


def test_reserved_tokens_survive_tokenization_and_lead_every_source(tmp_path):
    data = write_corpus(tmp_path / "data", train=300, valid=10)
    values = control_config(data, tmp_path / "model").to_dict()
    values["data"]["tokenizer"] = {"type": "bpe", "vocab_size": 300, "byte_fallback": True}
    values["model"]["share_embeddings"] = True
    config = config_from_dict(values)
    train = read_parallel(config.data.train)
    assets = build_assets(config, train)
    vocabulary = assets.source_vocabulary
    control = assets.control
    assert all(token in vocabulary.stoi for token in control.reserved_tokens())
    # text spelling a control token is text: the tokenizer splits it, and it never becomes the token
    spelt = assets.tokenizer.encode("<chars_ratio_0.50> a b")
    assert "<chars_ratio_0.50>" not in spelt and UNK_ID not in vocabulary.encode(spelt)
    examples = encode_pairs(train, assets.tokenizer, vocabulary, assets.target_vocabulary, control=control)
    first = train.sources[0], train.targets[0]
    assert vocabulary.itos[examples[0].source[0]] == control.oracle_tokens(*first)[0]
    assert examples[0].source[1:] == vocabulary.encode(assets.tokenizer.encode(first[0]))


def test_byte_fallback_gives_every_character_back(tmp_path):
    from wean.data.tokenizers import SentencePieceTokenizer
    from wean.data.vocabulary import Vocabulary

    english = ["the cat sat on the mat", "a dog ran in the park", "it was a sunny day"] * 30
    tokenizer = SentencePieceTokenizer.train("bpe", english, 300, False, byte_fallback=True)
    vocabulary = Vocabulary(tokenizer.pieces())
    for text in ("The ticket costs £50 — about €60 — and is valid in Zürich.", "“Curly” quotes, é, ã, 東京 \U0001F600"):
        tokens = tokenizer.encode(text)
        assert UNK_ID not in vocabulary.encode(tokens)
        assert tokenizer.decode(tokens) == text
    # a byte written alone is no character: it is left out, not printed as U+FFFD
    pieces = tokenizer.encode("a Zürich")
    assert "<0xC3>" in pieces and "<0xBC>" in pieces  # ü, spelt in bytes
    assert tokenizer.decode([p for p in pieces if p != "<0xBC>"]) == "a Zrich"
    # the replacement character a text holds is a character like any other: kept
    assert tokenizer.decode(tokenizer.encode("a \ufffd b")) == "a \ufffd b"
    assert tokenizer.decode(["▁a", "<0xEF>", "<0xBF>", "<0xBD>", "<0xE2>", "▁the"]) == "a\ufffd the"


def test_a_tiny_model_obeys_its_length_token(control_model):
    generator = load(control_model)
    sources = [line.split("\t")[0] for line in (control_model.parent / "data" / "valid.src").read_text().splitlines()]

    def mean_length(ratio):
        outputs = generator.generate(sources, beam=1, control={"chars_ratio": ratio})
        return sum(len(g.tokens) for g in outputs) / len(outputs)

    source_length = sum(len(s.split()) for s in sources) / len(sources)
    short, half, full = mean_length(0.3), mean_length(0.6), mean_length(1.0)
    assert short < half and short < full * 0.6
    assert short < 0.5 * source_length and full > 0.75 * source_length
    # what the model read starts with the requested token; the default is the config's (1.0)
    generation = generator.generate([sources[0]], beam=1, control={"chars_ratio": 0.3})[0]
    assert generation.source_tokens[0] == "<chars_ratio_0.30>"
    assert generator.generate([sources[0]], beam=1)[0].source_tokens[0] == "<chars_ratio_1.00>"
    assert not any(t.startswith("<chars_ratio") for g in generator.generate(sources, beam=3) for t in g.tokens)


def test_generate_refuses_control_a_model_does_not_have(tmp_path, control_model):
    with pytest.raises(WeanError, match="unknown attribute 'levenshtein'"):
        load(control_model).generate(["a b c"], control={"levenshtein": 0.5})
    with pytest.raises(WeanError, match=r"control: 'chars_ratio=0.5' is not a mapping of attributes to values"):
        load(control_model).generate(["a b c"], control="chars_ratio=0.5")
    data = write_corpus(tmp_path / "data", train=50, valid=5)
    from wean.training import Trainer

    Trainer(tiny_config(data, tmp_path / "plain", max_updates=1, validate_every=1)).train()
    with pytest.raises(WeanError, match="trained without control tokens"):
        load(tmp_path / "plain").generate(["a b c"], control={"chars_ratio": 0.5})


def test_cli_control_changes_outputs_and_rejects_bad_names(control_model, capsys):
    source = "a b c d e f g h i j a b"
    outputs = {}
    for ratio in ("0.3", "1.0"):
        assert main(["simplify", "--model", str(control_model), "--beam", "1", "--control", f"chars_ratio={ratio}",
                     source]) == 0
        outputs[ratio] = capsys.readouterr().out.strip()
    assert len(outputs["0.3"].split()) < len(outputs["1.0"].split())
    assert main(["simplify", "--model", str(control_model), "--control", "shorter=0.5", source]) == 1
    error = capsys.readouterr().err.strip()
    assert error == "wean simplify: error: control: unknown attribute 'shorter'; this model knows chars_ratio"
    assert main(["simplify", "--model", str(control_model), "--control", "chars_ratio=3", source]) == 1
    assert "from 0 to 2" in capsys.readouterr().err


class Passing:
    """A stand-in channel model that finds only the given outputs likely. Built from the model's own
    beams, it makes the tests below hold whatever lengths the tiny model learned to write for each
    control value (which moves with the CPU's arithmetic)."""

    def __init__(self, texts):
        self.texts = set(texts)

    def log_probs_per_token(self, outputs, sources):
        return [0.0 if output in self.texts else -9.0 for output in outputs]


def beam_outputs(generator, sources, ratio: float, beam: int = 5) -> list[set[str]]:
    """Every output of each source's beam at this control value, unguarded."""
    return [{g.text for g in result.nbest} for result in
            generator.generate(sources, control={"chars_ratio": ratio}, beam=beam, nbest=beam)]


class NothingPasses:
    def log_probs_per_token(self, outputs, sources):
        return [-9.0] * len(outputs)


def test_the_fallback_tries_a_lighter_control_setting_before_the_source(control_model, monkeypatch):
    generator = load(control_model)
    sources = ["a b c d e f g h i j", "j i h g f e d c"]
    # the channel passes what the beams at 0.6 and 1.0 write and the beam at 0.3 does not
    at_03 = set().union(*beam_outputs(generator, sources, 0.3))
    lighter_beams = beam_outputs(generator, sources, 0.6) + beam_outputs(generator, sources, 1.0)
    assert all(beam - at_03 for beam in lighter_beams), "the tiny model's beam at 0.6 or 1.0 is its beam at 0.3"
    channel = Passing(set().union(*lighter_beams) - at_03)
    monkeypatch.setattr(generator, "fallback_channel", lambda plain_text=None: (channel, -1.0))
    short = {"chars_ratio": 0.3}
    unchanged = generator.generate(sources, control=short, fallback="source")
    assert [g.text for g in unchanged] == sources and all(g.fell_back and g.warning for g in unchanged)
    # the guard undid what was asked: the warning says what that was
    assert all(g.warning.endswith("(searched with control chars_ratio=0.30)") for g in unchanged)
    lighter = generator.generate(sources, control=short, fallback="source",
                                 fallback_control=[{"chars_ratio": 0.6}, {"chars_ratio": 1.0}])
    # each sentence gets the output of the first setting, in order, at which one passes
    at = {ratio: generator.generate(sources, control={"chars_ratio": ratio}, fallback="source") for ratio in (0.6, 1.0)}
    full = at[1.0]
    assert not any(g.fell_back for g in at[0.6] + full)  # the channel passes one of each beam's outputs
    assert [(g.text, g.source_tokens[0]) for g in lighter] == [(g.text, "<chars_ratio_0.60>") for g in at[0.6]]
    assert not any(g.fell_back for g in lighter)
    assert all(g.warning == "every output searched with control chars_ratio=0.30 failed a fidelity or meaning check, "
               "so this one is of a lighter setting (chars_ratio=0.60), which asks for less change" for g in lighter)
    with monkeypatch.context() as strict:  # a guard no output passes: the source, with each setting tried named
        strict.setattr(generator, "fallback_channel", lambda plain_text=None: (NothingPasses(), -1.0))
        failing = generator.generate(sources, control=short, fallback="source", fallback_control=[{"chars_ratio": 0.6}])
    assert [g.text for g in failing] == sources
    assert all(g.warning.endswith("(searched with control chars_ratio=0.30; then chars_ratio=0.60)") for g in failing)
    # a setting that asks for more change than the values asked for is skipped: the next one is searched
    skipped = generator.generate(sources, control=short, fallback="source",
                                 fallback_control=[{"chars_ratio": 0.1}, {"chars_ratio": 1.0}])
    assert [(g.text, g.source_tokens[0]) for g in skipped] == [(g.text, "<chars_ratio_1.00>") for g in full]
    # a setting is taken only as far as it asks for less change (nearer 1) than the values asked
    # for, and once: the retries are 0.6 then 1.0
    settings = [{"chars_ratio": 0.6}, {"chars_ratio": 0.1}, {"chars_ratio": 1.0}, {"chars_ratio": 0.6}]
    assert generator.fallback_prefixes(short, settings, "source") == [["<chars_ratio_0.60>"], ["<chars_ratio_1.00>"]]
    assert generator.fallback_prefixes(None, [{"chars_ratio": 0.3}], "source") == []  # the default asks 1.0
    # the model's own settings apply unless the call names none
    generator.config.generation.fallback_control = [{"chars_ratio": 1.0}]
    assert [g.text for g in generator.generate(sources, control=short, fallback="source")] == [g.text for g in full]
    assert [g.text for g in generator.generate(sources, control=short, fallback="source", fallback_control=[])] == sources


class CountingChannel(Passing):
    def __init__(self, texts):
        super().__init__(texts)
        self.read = 0

    def log_probs_per_token(self, outputs, sources):
        self.read += len(outputs)
        return super().log_probs_per_token(outputs, sources)


def test_the_channel_model_reads_no_more_outputs_than_the_answer_needs(control_model, monkeypatch):
    """The guard's channel model reads a beam's outputs in order and stops at the caller's n-th that
    passes: the n-best returned are those of reading every output, for fewer forced passes."""
    generator = load(control_model)
    sources = ["a b c d e f g h i j", "j i h g f e d c", "b c d e", "e f g h i j a"]
    # the channel fails each beam's best output and passes the rest
    beams = [result.nbest for result in generator.generate(sources, beam=4, nbest=4)]
    passing = {g.text for beam in beams for g in beam[1:]} - {beam[0].text for beam in beams}
    returned = {}
    for nbest in (1, 2, 4):
        channel = CountingChannel(passing)
        monkeypatch.setattr(generator, "fallback_channel", lambda plain_text=None, channel=channel: (channel, -1.0))
        returned[nbest] = ([[g.text for g in result.nbest] for result in
                            generator.generate(sources, beam=4, nbest=nbest, fallback="source")], channel.read)
    everything, read_all = returned[4]  # four of four: every output is read
    for nbest in (1, 2):
        texts, read = returned[nbest]
        assert texts == [row[:nbest] for row in everything]
        assert read < read_all
    # two outputs per sentence (the best fails, the next passes), but for a sentence returned
    # unchanged, whose every output was read
    assert returned[1][1] <= 2 * len(sources) + sum(row[0] == source for row, source in zip(everything, sources)) * 4


def test_fallback_control_is_checked_where_it_is_given(control_model):
    with pytest.raises(WeanError, match=r"fallback_control\[0\]: control: unknown attribute 'levenshtein'"):
        load(control_model).generate(["a b"], fallback="source", fallback_control=[{"levenshtein": 0.8}])
    with pytest.raises(WeanError, match=r"^fallback_control needs fallback source \(it is none\)"):
        load(control_model).generate(["a b"], fallback="none", fallback_control=[{"chars_ratio": 0.8}])
    with pytest.raises(WeanError, match="takes a list of settings"):
        load(control_model).generate(["a b"], fallback="source", fallback_control={"chars_ratio": 0.8})
    values = yaml.safe_load((control_model / "config.yaml").read_text())
    values["generation"]["fallback_control"] = [{"chars_ratio": 0.8}]
    with pytest.raises(WeanError, match=r"config: generation.fallback_control needs fallback source \(it is none\)"):
        config_from_dict(values)
    values["generation"]["fallback"] = "source"
    assert config_from_dict(values).generation.fallback_control == [{"chars_ratio": 0.8}]
    values["generation"]["fallback_control"] = [{"chars_ratio": 5}]
    with pytest.raises(WeanError, match=r"config: generation.fallback_control\[0\]: control: chars_ratio is 5"):
        config_from_dict(values)


def test_coordinate_ascent_finds_the_best_setting_above_the_bleu_floor():
    floor = Requirement.parse("bleu>=50")

    def score(values):  # SARI peaks at a=0.3, b=0.6, but BLEU falls below 50 for a < 0.5
        scores = {"sari": -((values["a"] - 0.3) ** 2) - (values["b"] - 0.6) ** 2, "bleu": 100 * values["a"]}
        return Trial(values, scores, floor.shortfall(scores, {}))

    grid = [0.1 * i for i in range(11)]
    best, trials = coordinate_ascent(score, {"a": 1.0, "b": 1.0}, {"a": grid, "b": grid})
    assert best["a"] == pytest.approx(0.5) and best["b"] == pytest.approx(0.6)
    assert len({tuple(sorted(t.control.items())) for t in trials}) == len(trials)  # nothing scored twice


def test_coordinate_ascent_minimises_a_lower_is_better_objective_under_a_references_bound():
    bound = Requirement.parse("invented_names<=references")
    references = {"invented_names": 10.0}

    def score(values):  # fewer invented names for a larger a, but a above 0.7 copies too much
        scores = {"invented_names": 30 * (1 - values["a"]), "copied": 100 * values["a"]}
        scores["sari"] = -abs(values["a"] - 0.2)
        return Trial(values, scores, bound.shortfall(scores, references))

    grid = [0.1 * i for i in range(11)]
    best, _ = coordinate_ascent(score, {"a": 0.0}, {"a": grid}, objective="sari")
    assert best["a"] == pytest.approx(0.7)  # the SARI peak at 0.2 invents 24 %: over the references' 10 %
    best, _ = coordinate_ascent(score, {"a": 0.0}, {"a": grid}, objective="invented_names", higher_is_better=False)
    assert best["a"] == pytest.approx(1.0)


@pytest.mark.parametrize("text, message", [
    ("bleu=>60", "write KEY>=NUMBER"),
    ("bleu>=sixty", "'sixty' is neither a finite number nor 'references'"),
    ("bleu>=nan", "'nan' is neither a finite number"),
    ("loss<=3", "'loss' exists during training only"),
    ("reverse_log_prob>=-2", "needs a reverse model"),
    ("bleu>=references", "only a reference-free metric's key"),
    ("blue>=60", "did you mean 'bleu'"),
])
def test_a_malformed_requirement_is_one_line(text, message):
    with pytest.raises(WeanError, match=message):
        Requirement.parse(text)


def test_a_score_that_is_not_a_number_never_meets_a_requirement():
    assert Requirement.parse("bleu>=60").shortfall({"bleu": float("nan")}, {}) == float("inf")
    assert Requirement.parse("invented_names<=references").shortfall({"invented_names": 5.0}, {"invented_names": 7.0}) == 0
    assert Requirement.parse("invented_names<=references").shortfall({"invented_names": 9.0}, {"invented_names": 7.0}) == 2


def model_and_tune_set(tmp_path, control_model):
    """A copy of the control model, and a data root with a stand-in for TurkCorpus tune: sources
    whose references keep about half of each."""
    import shutil

    model = tmp_path / "model"
    shutil.copytree(control_model, model, ignore=shutil.ignore_patterns("checkpoints", "tensorboard"))
    root = tmp_path / "root"
    folder = root / "turkcorpus" / "case_detok"
    folder.mkdir(parents=True)
    sources = (control_model.parent / "data" / "valid.src").read_text().splitlines()[:40]
    (folder / "tune.src").write_text("\n".join(sources) + "\n")
    for k in range(8):
        halves = [" ".join(s.split()[: max(1, len(s.split()) // 2)]) for s in sources]
        (folder / f"tune.ref.{k}").write_text("\n".join(halves) + "\n")
    return model, root


def test_tune_control_writes_chosen_values_into_the_model(tmp_path, control_model):
    model, root = model_and_tune_set(tmp_path, control_model)
    messages = []
    values = tune_control(load(model), model, sentences=30, skip=5, requirements=["bleu>=0", "invented_numbers<=references"],
                          rounds=1, plain_text=False, root=root, log=messages.append, beam=1)
    assert values["chars_ratio"] < 0.9  # the references keep about half
    assert yaml.safe_load((model / "config.yaml").read_text())["generation"]["control"] == values
    record = json.loads((model / "control-tuning.json").read_text())
    assert record["chosen"]["control"] == values and min(record["lines"]) > 5 and len(record["lines"]) == 30
    assert record["requirements"] == ["bleu>=0", "invented_numbers<=references"]
    assert record["reference_rates"] == {"invented_numbers": 0.0}  # symbols hold no digits
    assert set(record["chosen"]) == {"control", "sari", "bleu", "invented_numbers"}
    # the task keeps a prefix, so training never saw a ratio above 1: that value is not tried
    counts = json.loads((control_model / "control-counts.json").read_text())
    assert "<chars_ratio_1.10>" not in counts and counts["<chars_ratio_0.50>"] > 0
    assert sum(counts.values()) == 2000
    assert "chars_ratio: 1.10 never occurred in training; not tried" in messages
    assert all(t["control"]["chars_ratio"] <= 1.0 for t in record["trials"])
    assert len([m for m in messages if "->" in m]) == len(record["trials"])
    assert load(model).control.defaults == values
    assert record["met"] is True


def test_a_requirement_no_setting_meets_keeps_the_defaults_or_takes_the_nearest(tmp_path, control_model):
    model, root = model_and_tune_set(tmp_path, control_model)
    defaults = dict(load(model).control.defaults)
    search = dict(sentences=10, skip=5, requirements=["bleu>=101"], rounds=1, plain_text=False, root=root, beam=1)
    before = (model / "control-tuning.json").read_text() if (model / "control-tuning.json").exists() else None
    with pytest.raises(WeanError, match="no control values meet bleu>=101 .*the search is in .*unmet.json; --nearest"):
        tune_control(load(model), model, log=lambda _: None, **search)
    record = json.loads((model / "control-tuning-unmet.json").read_text())  # the search is kept, apart
    assert record["met"] is False and "chosen" not in record and record["trials"]
    assert load(model).control.defaults == defaults
    # the record of the values the model has is not replaced by a search that changed none
    after = (model / "control-tuning.json").read_text() if (model / "control-tuning.json").exists() else None
    assert after == before
    messages = []
    values = tune_control(load(model), model, log=messages.append, nearest=True, **search)
    record = json.loads((model / "control-tuning.json").read_text())
    assert record["met"] is False and record["chosen"]["control"] == values
    best_bleu = max(trial["scores"]["bleu"] for trial in record["trials"])
    assert record["chosen"]["bleu"] == best_bleu  # nearest to 101: the highest BLEU tried
    assert any(m.startswith("warning: no control values meet bleu>=101") for m in messages)
    assert values != defaults and load(model).control.defaults == values


def test_a_control_value_never_trained_on_is_warned_of_on_every_interface(control_model, capsys, monkeypatch):
    """The prefix task never has a ratio above 1: asking for 1.1 uses an embedding nothing trained."""
    import warnings

    from wean.inference.generator import UntrainedControlWarning

    generator = load(control_model)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a trained value warns of nothing
        generator.generate(["a b c d e"], control={"chars_ratio": 0.5})
    with pytest.warns(UntrainedControlWarning, match="<chars_ratio_1.10>: no training pair had this value"):
        generator.generate(["a b c d e"], control={"chars_ratio": 1.1})

    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"a b c\nd e f\n"), encoding="utf-8"))
    assert main(["generate", "--model", str(control_model), "--control", "chars_ratio=1.1"]) == 0
    err = capsys.readouterr().err
    assert err.count("no training pair had this value") == 1  # once, not once per line


@pytest.mark.filterwarnings("ignore::wean.inference.generator.UntrainedControlWarning")  # serve() silences it; tests call create_app
def test_the_server_warns_of_a_control_value_never_trained_on(control_model):
    import httpx

    from test_server import LIMITS, Server
    from wean.server.app import create_app

    with Server(create_app(load(control_model), LIMITS)) as server:
        body = {"texts": ["a b c d e"], "control": {"chars_ratio": 1.1}}
        outputs = httpx.post(f"{server.url}/v1/generate", json=body, timeout=60).json()["outputs"]
        assert "no training pair had this value" in outputs[0]["warning"]
        body["control"] = {"chars_ratio": 0.5}
        assert "warning" not in httpx.post(f"{server.url}/v1/generate", json=body, timeout=60).json()["outputs"][0]
