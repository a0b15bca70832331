"""Teacher-forced log P(target | source) per pair, and the reverse-model metric built on it."""

from __future__ import annotations

import json
import math
import random

import pytest
import torch

from synthetic import reverse_pairs
from wean.cli import main
from wean.data.corpus import ParallelText, collate, encode_pairs
from wean.data.vocabulary import PAD_ID
from wean.errors import WeanError
from wean.evaluation import EvaluationSettings, evaluate
from wean.inference.forced_scores import forced_log_probs, forced_token_log_probs
from wean.inference.generator import load
from wean.training.criterion import Criterion


def test_token_log_probs_sum_to_the_pair_scores_and_point_at_the_changed_word(control_model):
    generator = load(control_model)
    sources, _ = reverse_pairs(20, seed=12, reverse=False)
    tokens = forced_token_log_probs(generator, sources, sources, batch_size=6)
    totals = forced_log_probs(generator, sources, sources, batch_size=4)
    assert [len(row) for row in tokens] == [count for _, count in totals]
    assert [sum(row) for row in tokens] == pytest.approx([total for total, _ in totals], abs=1e-4)
    # one symbol of a copy changed: its position is the least likely of its target
    source = sources[0].split()
    changed = source[:3] + [next(s for s in "abcdefghij" if s != source[3])] + source[4:]
    row = forced_token_log_probs(generator, [sources[0]], [" ".join(changed)])[0]
    assert min(range(len(row)), key=row.__getitem__) == 3


def test_log_probs_sum_to_the_validation_loss_and_prefer_the_true_target(control_model):
    # the keep-a-prefix model, asked by default to keep everything (chars_ratio 1): copies
    generator = load(control_model)
    sources, _ = reverse_pairs(40, seed=11, reverse=False)
    targets = list(sources)
    scores = forced_log_probs(generator, sources, targets, batch_size=7)
    assert [count for _, count in scores] == [len(t.split()) + 1 for t in targets]  # <eos> included
    # the training code's own loss on the same pairs, in one batch: the same total
    text = ParallelText(sources=sources, targets=targets, references=[targets], source_path="pairs")
    assets = generator.assets
    examples = encode_pairs(text, assets.tokenizer, assets.source_vocabulary, assets.target_vocabulary,
                            control=assets.control)  # a copy's own control token is the default
    with torch.no_grad():
        loss = float(Criterion(generator.model).validation_loss(collate(examples)))
    assert -sum(total for total, _ in scores) == pytest.approx(loss, rel=1e-5)
    # a trained model finds the true target likelier than another sentence's
    shuffled = targets[1:] + targets[:1]
    wrong = forced_log_probs(generator, sources, shuffled)
    assert sum(t for t, _ in scores) / sum(n for _, n in scores) > sum(t for t, _ in wrong) / sum(n for _, n in wrong) + 1
    assert forced_log_probs(generator, [""], ["a b"])[0][1] == 3  # an empty source is read, not refused
    # an output layer that never writes <pad> (WEAN's candidate words) gives padding -inf: still finite sums
    hook = generator.model.output_layer.register_forward_hook(
        lambda module, inputs, logits: logits.index_fill(-1, torch.tensor([PAD_ID]), float("-inf")))
    try:
        masked = forced_log_probs(generator, sources, targets, batch_size=7)
    finally:
        hook.remove()
    assert all(math.isfinite(total) for total, _ in masked)
    assert sum(t for t, _ in masked) == pytest.approx(sum(t for t, _ in scores), rel=0.05)


def test_oracle_control_scores_each_pair_as_training_read_it(control_model):
    # prefixes of their sources, of different lengths: each pair's own chars_ratio token, not the default 1
    generator = load(control_model)
    sources, _ = reverse_pairs(24, seed=3, reverse=False)
    targets = [" ".join(s.split()[: max(1, len(s.split()) * (1 + i % 3) // 4)]) for i, s in enumerate(sources)]
    text = ParallelText(sources=sources, targets=targets, references=[targets], source_path="pairs")
    assets = generator.assets
    examples = encode_pairs(text, assets.tokenizer, assets.source_vocabulary, assets.target_vocabulary,
                            control=assets.control)
    with torch.no_grad():
        loss = float(Criterion(generator.model).validation_loss(collate(examples)))
    oracle = forced_log_probs(generator, sources, targets, batch_size=5, oracle_control=True)
    default = forced_log_probs(generator, sources, targets, batch_size=5)
    assert -sum(total for total, _ in oracle) == pytest.approx(loss, rel=1e-5)
    # the model learned its control token: told the true ratio, it finds the prefixes far likelier
    assert sum(total for total, _ in oracle) > sum(total for total, _ in default) + len(sources)


def test_the_reverse_metric_scores_outputs_by_how_well_they_give_back_the_source(control_model, tmp_path, capsys):
    # the model copies by default, so it is its own reverse model: a faithful output gives the source back
    model_dir = control_model
    sources, _ = reverse_pairs(30, seed=5, reverse=False)
    faithful = list(sources)
    rng = random.Random(1)
    garbled = [" ".join(rng.sample(o.split(), len(o.split()))) for o in faithful]
    settings = EvaluationSettings(("reverse",), reverse_model=str(model_dir))
    good = evaluate(faithful, sources, [faithful], settings)
    bad = evaluate(garbled, sources, [faithful], settings)
    assert good.scores["reverse_log_prob"] > bad.scores["reverse_log_prob"]
    assert good.reference_scores["reverse_log_prob"] == pytest.approx(good.scores["reverse_log_prob"])
    with pytest.raises(WeanError, match="needs a model trained from simple to complex"):
        evaluate(faithful, sources, [faithful], EvaluationSettings(("reverse",)))

    paths = {}
    for name, lines in {"src": sources, "ref": faithful, "a": faithful, "b": garbled}.items():
        paths[name] = tmp_path / name
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["compare", "--hyp", str(paths["a"]), str(paths["b"]), "--src", str(paths["src"]), "--refs",
                 str(paths["ref"]), "--reverse-model", str(model_dir), "--samples", "100", "--json"]) == 0
    comparison = next(c for c in json.loads(capsys.readouterr().out)["comparisons"] if c["metric"] == "reverse_log_prob")
    assert comparison["difference"] > 0 and comparison["p_value"] < 0.05
    assert main(["evaluate", "--hyp", str(paths["a"]), "--src", str(paths["src"]), "--refs", str(paths["ref"]),
                 "--reverse-model", str(tmp_path)]) == 1
    assert "not a model directory" in capsys.readouterr().err


@pytest.mark.parametrize("benchmark, plain_text", [("turkcorpus-test", True), ("wikismall-test", False), (None, None)])
def test_the_reverse_metric_reads_a_benchmarks_text_as_the_benchmark_writes_it(tmp_path, monkeypatch, benchmark,
                                                                               plain_text):
    # a research run's reverse model reads tokenized text by its own config; TurkCorpus is plain text
    import argparse
    from types import SimpleNamespace

    import wean.inference.forced_scores
    from wean.inference.loading import LoadedModel
    from wean.cli import options
    from wean.evaluation.significance import paired_bootstrap

    (tmp_path / "config.yaml").write_text("name: reverse\n", encoding="utf-8")
    if benchmark:  # a data root that holds it: a missing benchmark is refused at once
        from wean.evaluation.benchmarks import get_benchmark

        for path in (get_benchmark(benchmark).source, *get_benchmark(benchmark).references):
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text("a\n", encoding="utf-8")
    parser = argparse.ArgumentParser()
    options.add_scoring_options(parser)
    given = ["--benchmark", benchmark] if benchmark else ["--src", str(tmp_path / "src"), "--refs", str(tmp_path / "ref")]
    args = parser.parse_args([*given, "--data-root", str(tmp_path), "--reverse-model", str(tmp_path)])
    settings = options.scoring_inputs(args)[3]
    assert settings.plain_text is plain_text
    for flag, reading in (("--plain-text", True), ("--no-plain-text", False)):  # the user's word wins
        told = parser.parse_args([*given, "--data-root", str(tmp_path), "--reverse-model", str(tmp_path), flag])
        assert options.scoring_inputs(told)[3].plain_text is reading
    own_reading = False  # the model's generation.plain_text, where the text's form is not known
    read_as = []

    def recording(generator, sources, targets, plain_text=None, batch_size=32):
        read_as.append(plain_text)
        return [(-1.0, 1)] * len(sources)

    monkeypatch.setattr(LoadedModel, "from_directory", lambda path: SimpleNamespace(
        config=SimpleNamespace(generation=SimpleNamespace(plain_text=own_reading))))
    monkeypatch.setattr(wean.inference.forced_scores, "forced_log_probs", recording)
    expected = own_reading if plain_text is None else plain_text
    result = evaluate(["a b"], ["a b"], [["a b"]], settings)
    assert read_as and set(read_as) == {expected}
    assert result.to_dict()["signatures"]["reverse"]["text"] == ("plain" if expected else "tokenized")
    read_as.clear()
    paired_bootstrap(["a b"], ["b a"], ["a b"], [["a b"]], ["reverse"], samples=10,
                     reverse_model=settings.reverse_model, plain_text=settings.plain_text)
    assert read_as and set(read_as) == {expected}
