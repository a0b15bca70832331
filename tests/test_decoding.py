"""The decoding toolbox: n-best lists, sampling, diverse beam search, coverage and length
penalties, ensembles, reranking and plug-in strategies, each on a case whose answer is known."""

import itertools
import json
import math
import re
import shutil
import sys
from collections import Counter

import pytest
import torch

from synthetic import A, B, C, ScriptedModel, conv_model
from wean.cli import main
from wean.config import ModelConfig, section_config
from wean.data.vocabulary import BOS_ID, EOS_ID, UNK_ID
from wean.errors import WeanError
from wean.evaluation.fidelity import faults
from wean.inference.ensemble import Ensemble
from wean.inference.generator import Generator, load
from wean.inference.outputs import Generation
from wean.inference.pipeline import TextSearch, faithful_first
from wean.model_dir import TOKEN_DIGESTS, TOKEN_FILES
from wean.models.model import build_model
from wean.search import decode
from wean.search.common import length_normalized
from wean.search_options import SearchOptions
from wean.textio import file_digest

SOURCE, LENGTHS = torch.tensor([[A, B]]), torch.tensor([2])
BRANCHING = {BOS_ID: {A: 0.4, B: 0.35, C: 0.2, EOS_ID: 0.05}, A: {A: 0.3, B: 0.3, EOS_ID: 0.4},
             B: {C: 0.5, EOS_ID: 0.5}, C: {EOS_ID: 0.7, A: 0.3}}


def _all_outputs(model: ScriptedModel, max_length: int) -> list[tuple[float, tuple[int, ...]]]:
    """Every output of 1 to max_length - 1 words (min_length 1), with its log-probability, best first."""
    table = torch.log_softmax(model.table, dim=-1)
    words = [UNK_ID, A, B, C]
    scored = []
    for length in range(1, max_length):
        for words_ in itertools.product(words, repeat=length):
            previous, total = BOS_ID, 0.0
            for word in (*words_, EOS_ID):
                total += float(table[previous, word])
                previous = word
            scored.append((total, words_))
    return sorted(scored, reverse=True)


def test_an_exhaustive_beam_returns_the_true_n_best_in_order():
    model = ScriptedModel(BRANCHING)
    options = SearchOptions(beam=100, nbest=6, max_length=4)
    (nbest,) = decode(model, SOURCE, LENGTHS, options)
    expected = _all_outputs(model, 4)[:6]
    assert [tuple(h.tokens) for h in nbest] == [words for _, words in expected]
    assert [h.log_prob for h in nbest] == pytest.approx([score for score, _ in expected], abs=1e-4)


@pytest.mark.parametrize("strategy, beam", [("beam", 5), ("beam", 3), ("diverse_beam", 4)])
def test_n_best_lists_are_sorted_distinct_and_of_the_asked_size(strategy, beam):
    model = ScriptedModel(BRANCHING)
    source = torch.tensor([[A, B, C], [C, A, 0]])
    options = SearchOptions(strategy=strategy, beam=beam, nbest=3, max_length=6, diverse_groups=2)
    for nbest in decode(model, source, torch.tensor([3, 2]), options):
        assert len(nbest) == 3
        assert len({tuple(h.tokens) for h in nbest}) == 3
        assert [h.score for h in nbest] == sorted((h.score for h in nbest), reverse=True)
        for h in nbest:
            assert h.attention.shape == (len(h.tokens) + 1, h.attention.size(1))


def test_the_best_of_an_n_best_list_is_the_one_best_output():
    model = ScriptedModel(BRANCHING)
    for alpha in (0.0, 1.0):
        one = decode(model, SOURCE, LENGTHS, SearchOptions(beam=4, length_penalty=alpha))[0]
        several = decode(model, SOURCE, LENGTHS, SearchOptions(beam=4, nbest=4, length_penalty=alpha))[0]
        assert one[0].tokens == several[0].tokens and one[0].score == several[0].score


def test_gnmt_length_penalty():
    model = ScriptedModel(BRANCHING)
    options = SearchOptions(beam=4, nbest=3, length_penalty=0.8, length_penalty_form="wu")
    for h in decode(model, SOURCE, LENGTHS, options)[0]:
        assert h.score == pytest.approx(h.log_prob / ((5 + len(h.tokens) + 1) / 6) ** 0.8, rel=1e-5)
    assert float(length_normalized(torch.tensor(-2.0), 1, options)) == pytest.approx(-2.0)  # lp(1) = 1


# Coverage: X = "A C" is more probable than Y = "B C", but X attends to source token 0 at every
# step and never to token 1, while Y covers both (the attention of a step depends on the word
# written before it).
COVERAGE_CASE = ScriptedModel({BOS_ID: {A: 0.55, B: 0.45}, A: {C: 1.0}, B: {C: 1.0}, C: {EOS_ID: 1.0}},
                              attention={BOS_ID: [1.0, 0.0], A: [1.0, 0.0], B: [0.0, 1.0], C: [1.0, 0.0]})


@pytest.mark.parametrize("form, weight", [("wu", 0.1), ("summary", 0.5)])
def test_the_coverage_penalty_changes_the_ranking_in_a_hand_made_case(form, weight):
    plain = decode(COVERAGE_CASE, SOURCE, LENGTHS, SearchOptions(beam=2, nbest=2))[0]
    assert [h.tokens for h in plain] == [[A, C], [B, C]]
    covered = decode(COVERAGE_CASE, SOURCE, LENGTHS,
                     SearchOptions(beam=2, nbest=2, coverage_penalty=form, coverage_weight=weight))[0]
    assert [h.tokens for h in covered] == [[B, C], [A, C]]
    # the score is the log-probability plus the penalty of the output's own coverage
    x = covered[1]
    expected = {"wu": weight * math.log(1e-10), "summary": -weight * 2.0}[form]  # coverage (3, 0)
    assert x.score == pytest.approx(x.log_prob + expected, rel=1e-4)
    assert covered[0].log_prob == pytest.approx(math.log(0.45), abs=1e-4)


def test_with_a_coverage_penalty_no_beam_goes_on_after_its_end():
    # only A can be written (the other words banned): fewer live extensions than beams
    model = ScriptedModel({BOS_ID: {A: 0.8, EOS_ID: 0.2}, A: {A: 0.5, EOS_ID: 0.5}})
    banned = [UNK_ID, B, C]
    plain = decode(model, SOURCE, LENGTHS, SearchOptions(beam=8, nbest=8, max_length=4), banned)[0]
    covered = decode(model, SOURCE, LENGTHS, SearchOptions(beam=8, nbest=8, max_length=4, coverage_penalty="summary",
                                                           coverage_weight=1e-9), banned)[0]
    assert [h.tokens for h in covered] == [h.tokens for h in plain] == [[A], [A, A], [A, A, A]]  # all there are


def test_greedy_search_blocks_repeated_n_grams_as_beam_search_does():
    model = ScriptedModel({BOS_ID: {A: 0.6, B: 0.4}, A: {A: 0.6, B: 0.3, EOS_ID: 0.1}, B: {A: 0.6, EOS_ID: 0.4}})
    free = decode(model, SOURCE, LENGTHS, SearchOptions(strategy="greedy", max_length=6))[0][0]
    blocked = decode(model, SOURCE, LENGTHS, SearchOptions(strategy="greedy", max_length=6, block_ngram_repeat=2))[0][0]
    assert free.tokens == [A, A, A, A, A]
    bigrams = list(zip(blocked.tokens, blocked.tokens[1:]))
    assert len(bigrams) == len(set(bigrams)) and blocked.tokens[:2] == [A, A]


@pytest.mark.parametrize("strategy", ["greedy", "beam", "sampling", "diverse_beam"])
def test_an_output_whose_every_next_token_is_banned_ends_there_in_every_strategy(strategy):
    """Unigram blocking over the four words (A, B, C, <unk>) with min_length 5: once each is
    written nothing is allowed. Beam search used to lose every beam and return no output at all."""
    model = ScriptedModel({BOS_ID: {A: 0.5, B: 0.3, C: 0.2}, A: {B: 0.6, C: 0.4}, B: {C: 0.6, A: 0.4},
                           C: {A: 0.6, B: 0.4}})
    options = SearchOptions(strategy=strategy, beam=3, nbest=2 if strategy != "greedy" else 1, max_length=10,
                            min_length=5, block_ngram_repeat=1)
    outputs = decode(model, SOURCE, LENGTHS, options)[0]
    assert outputs and all(sorted(h.tokens) == sorted([A, B, C, UNK_ID]) for h in outputs)


# Sampling: after <bos> the model says A 0.5, B 0.3, C 0.2; then <eos>.
SAMPLED = ScriptedModel({BOS_ID: {A: 0.5, B: 0.3, C: 0.2}, A: {EOS_ID: 1.0}, B: {EOS_ID: 1.0}, C: {EOS_ID: 1.0}})


def _first_words(options: SearchOptions, rows: int = 20) -> Counter:
    source = torch.arange(rows).unsqueeze(1) % 3 + A  # distinct inputs draw differently
    source = torch.cat([source, torch.arange(rows).unsqueeze(1) + 7], 1)
    results = decode(SAMPLED, source, torch.full((rows,), 2), options)
    return Counter(h.tokens[0] for samples in results for h in samples)


@pytest.mark.parametrize("settings, expected", [
    ({}, {A: 0.5, B: 0.3, C: 0.2}),
    ({"temperature": 0.5}, {A: 0.25 / 0.38, B: 0.09 / 0.38, C: 0.04 / 0.38}),
    ({"sampling_topk": 2}, {A: 0.625, B: 0.375, C: 0.0}),
    ({"sampling_topp": 0.6}, {A: 0.625, B: 0.375, C: 0.0}),
    ({"sampling_topp": 0.5}, {A: 1.0, B: 0.0, C: 0.0}),
])
def test_sampling_follows_the_distribution(settings, expected):
    counts = _first_words(SearchOptions(strategy="sampling", nbest=100, **settings))
    total = sum(counts.values())
    assert total == 2000
    for word, probability in expected.items():
        assert counts[word] / total == pytest.approx(probability, abs=0.035), (word, counts)


def test_sampling_is_reproducible_under_a_seed_whatever_the_batch():
    model = ScriptedModel(BRANCHING)
    options = SearchOptions(strategy="sampling", nbest=8, seed=7, max_length=8)
    source = torch.tensor([[A, B, C], [C, A, 0]])
    together = decode(model, source, torch.tensor([3, 2]), options)
    alone = decode(model, source[1:, :2], torch.tensor([2]), options)
    assert [h.tokens for h in together[1]] == [h.tokens for h in alone[0]]
    assert [h.tokens for h in decode(model, source, torch.tensor([3, 2]), options)[0]] == \
        [h.tokens for h in together[0]]
    other_seed = decode(model, source, torch.tensor([3, 2]), SearchOptions(strategy="sampling", nbest=8, seed=8,
                                                                             max_length=8))
    assert [h.tokens for h in other_seed[0]] != [h.tokens for h in together[0]]
    for samples in together:
        assert [h.score for h in samples] == sorted((h.score for h in samples), reverse=True)


def test_diverse_beam_groups_differ_where_a_beam_does_not():
    # "A" (0.385) and "A A" (0.173) are the two most probable outputs: a beam's 2-best both start
    # with A; penalised for choosing what the first group has just chosen, the second group
    # starts with B and finds "B" (0.18).
    model = ScriptedModel({BOS_ID: {A: 0.7, B: 0.3}, A: {A: 0.45, EOS_ID: 0.55}, B: {EOS_ID: 0.6, C: 0.4},
                           C: {EOS_ID: 1.0}})
    beam = decode(model, SOURCE, LENGTHS, SearchOptions(beam=2, nbest=2))[0]
    assert [h.tokens for h in beam] == [[A], [A, A]]
    diverse = decode(model, SOURCE, LENGTHS, SearchOptions(strategy="diverse_beam", beam=2, nbest=2,
                                                           diverse_groups=2, diverse_strength=5.0))[0]
    assert [h.tokens for h in diverse] == [[A], [B]]
    assert [h.log_prob for h in diverse] == pytest.approx([math.log(0.385), math.log(0.18)], abs=1e-4)
    # without the penalty the two groups are two identical beams: one distinct output
    same = decode(model, SOURCE, LENGTHS, SearchOptions(strategy="diverse_beam", beam=2, nbest=2,
                                                        diverse_groups=2, diverse_strength=0.0))[0]
    assert [h.tokens for h in same] == [[A]]


@pytest.mark.parametrize("strategy", ["greedy", "beam", "sampling", "diverse_beam"])
def test_every_strategy_leaves_abandoned_rows_out(strategy):
    model = ScriptedModel(BRANCHING)
    source = torch.tensor([[A, B], [B, A], [C, C]])
    results = decode(model, source, torch.tensor([2, 2, 2]), SearchOptions(strategy=strategy, beam=4, nbest=2 if
                     strategy != "greedy" else 1), abandoned=lambda live: [row for row in live if row == 1])
    assert results[1] is None and results[0] and results[2]


ARCHITECTURES = [(encoder, decoder, output) for encoder in ("lstm", "conv")
                 for decoder in ("luong", "bahdanau", "conditional") for output in ("linear", "wean")]


def _model(encoder: str, decoder: str, output: str, seed: int = 0):
    if encoder == "conv":
        return conv_model(decoder, output, seed)
    torch.manual_seed(seed)
    config = ModelConfig(embedding_size=16)
    config.encoder.hidden_size, config.encoder.layers = 16, 1
    config.decoder = section_config("model.decoder", {"type": decoder, "hidden_size": 16, "layers": 1,
                                                      "bridge": "zero" if decoder == "conditional" else "copy"})
    config.output_layer = section_config("model.output_layer", {"type": output})
    return build_model(config, 30, 30).eval()


def _same(first, second) -> None:
    for a, b in zip(first, second):
        assert [h.tokens for h in a] == [h.tokens for h in b]
        assert [h.score for h in a] == [h.score for h in b]  # bit for bit
        assert all(torch.equal(x.attention, y.attention) for x, y in zip(a, b))


@pytest.mark.parametrize("architecture", ARCHITECTURES, ids="-".join)
def test_an_ensemble_of_one_model_or_of_two_copies_is_that_model_bit_for_bit(architecture):
    model = _model(*architecture)
    source = torch.randint(4, 30, (3, 6))
    lengths = torch.tensor([6, 4, 5])
    for options in (SearchOptions(beam=3, nbest=2, max_length=8), SearchOptions(strategy="greedy", max_length=8)):
        alone = decode(model, source, lengths, options)
        _same(alone, decode(Ensemble([model]), source, lengths, options))
        _same(alone, decode(Ensemble([model, model]), source, lengths, options))


def test_an_ensemble_averages_log_probabilities_across_architectures():
    models = [_model(*architecture, seed=i) for i, architecture in enumerate(ARCHITECTURES)]
    ensemble = Ensemble(models)
    source, lengths = torch.randint(4, 30, (2, 5)), torch.tensor([5, 3])
    encoded = ensemble.encode(source, lengths)
    step = ensemble.decode_step(torch.full((2,), BOS_ID), encoded, ensemble.init_state(encoded))
    each = [m.decode_step(torch.full((2,), BOS_ID), e, m.init_state(e)).log_probs
            for m, e in ((m, m.encode(source, lengths)) for m in models)]
    assert torch.allclose(step.log_probs, torch.stack(each).mean(0))
    assert all(decode(ensemble, source, lengths, SearchOptions(beam=3, nbest=3, max_length=6)))


def test_ensembles_load_from_directories_and_refuse_other_vocabularies(model_dir, tmp_path):
    single, pair = load(model_dir), load([model_dir, model_dir])
    sentences = ["a b c d e", "j i h"]
    for one, two in zip(single.generate(sentences, nbest=2), pair.generate(sentences, nbest=2)):
        assert [g.text for g in one.nbest] == [g.text for g in two.nbest]
        assert [g.score for g in one.nbest] == [g.score for g in two.nbest]
    other = tmp_path / "other"
    shutil.copytree(model_dir, other)
    vocabulary = json.loads((other / "vocab.json").read_text())
    tokens = vocabulary["itos"] if isinstance(vocabulary, dict) else vocabulary
    tokens[-1], tokens[-2] = tokens[-2], tokens[-1]
    (other / "vocab.json").write_text(json.dumps(vocabulary))
    (other / TOKEN_DIGESTS).write_text(json.dumps({name: file_digest(other / name) for name in TOKEN_FILES
                                                   if (other / name).is_file()}))  # a model of its own
    with pytest.raises(WeanError, match=f"^model {other}: its source vocabulary differs from"):
        load([model_dir, other])


def perturbed_copy(model_dir, folder, seed=0):
    """A copy of ``model_dir`` with other weights: another member for an ensemble."""
    from wean.tensor_files import read_tensors, write_tensors

    shutil.copytree(model_dir, folder)
    tensors, metadata = read_tensors(folder / "model.safetensors")
    noise = torch.Generator().manual_seed(seed)
    write_tensors(folder / "model.safetensors", {name: tensor + 0.3 * torch.randn(tensor.shape, generator=noise)
                                                 for name, tensor in tensors.items()}, metadata)
    return folder


def test_a_model_directory_carries_its_ensemble_through_export(model_dir, tmp_path, capsys, monkeypatch):
    other = perturbed_copy(model_dir, tmp_path / "other")
    carrying = tmp_path / "carrying"
    monkeypatch.chdir(tmp_path)  # a member named on the command line is read from the current directory
    assert main(["export", str(model_dir), str(carrying), "--set", "generation.ensemble=[other]"]) == 0
    assert (carrying / "ensemble" / "1" / "model.safetensors").is_file()
    sentences = ["a b c d e", "j i h"]
    expected = load([model_dir, other]).generate(sentences, nbest=2)
    shutil.rmtree(other)  # the exported directory holds its member
    found = load(carrying).generate(sentences, nbest=2)
    scored = [[(g.text, g.score) for g in one.nbest] for one in found]
    assert scored == [[(g.text, g.score) for g in one.nbest] for one in expected]
    assert [g.score for g in found] != [g.score for g in load(model_dir).generate(sentences)]
    assert main(["verify", str(carrying)]) == 0
    assert "its ensemble's 2 models read and write the same tokens" in capsys.readouterr().out

    again = tmp_path / "again"  # an exported ensemble exports again, with its members
    assert main(["export", str(carrying), str(again)]) == 0
    assert [[(g.text, g.score) for g in one.nbest] for one in load(again).generate(sentences, nbest=2)] == scored

    config = carrying / "config.yaml"
    config.write_text(config.read_text().replace("ensemble/1", "ensemble/2"))
    with pytest.raises(WeanError, match=f"^{carrying}: generation.ensemble: ensemble/2: not a model directory"):
        load(carrying)


def test_an_ensemble_refuses_a_member_twice_nesting_and_a_target_over_a_member(model_dir, tmp_path, capsys):
    other = perturbed_copy(model_dir, tmp_path / "other")
    carrying = tmp_path / "carrying"
    assert main(["export", str(model_dir), str(carrying), "--set", f"generation.ensemble=[{other}]"]) == 0
    refusals = [
        ([f"generation.ensemble=[{other},{other}]"], tmp_path / "twice", f"{other} is named twice"),
        ([f"generation.ensemble=[{model_dir}]"], tmp_path / "itself", f"{model_dir} is named twice (or is the model itself)"),
        ([f"generation.ensemble=[{carrying}]"], tmp_path / "nested",
         f"{carrying} names an ensemble of its own; list its members in this one instead"),
        ([f"generation.ensemble=[{other}]"], other, f"{other}: overlaps {other}, which it would carry"),
    ]
    for overrides, target, message in refusals:
        assert main(["export", str(model_dir), str(target), "--overwrite", "--set", *overrides]) == 1
        assert message in capsys.readouterr().err
    assert load(other).generate(["a b c"])[0].text  # the member refused as a target is whole

    # --overwrite over an ensemble of two with one of one leaves no stale member behind
    second = perturbed_copy(model_dir, tmp_path / "second", seed=1)
    assert main(["export", str(model_dir), str(carrying), "--overwrite", "--set",
                 f"generation.ensemble=[{other},{second}]"]) == 0
    assert (carrying / "ensemble" / "2").is_dir()
    assert main(["export", str(model_dir), str(carrying), "--overwrite", "--set", f"generation.ensemble=[{second}]"]) == 0
    assert not (carrying / "ensemble" / "2").exists()
    assert [g.score for g in load(carrying).generate(["a b c"])] == \
        [g.score for g in load([model_dir, second]).generate(["a b c"])]
    with pytest.raises(WeanError, match=f"carries one: generation.ensemble"):
        Generator.from_directory(carrying, weights=carrying / "model.safetensors")


def test_the_cli_writes_n_best_lists_as_json_lines_and_takes_an_ensemble(model_dir, tmp_path, capsys):
    inputs = tmp_path / "in.txt"
    inputs.write_text("a b c d e\nj i h\n")
    assert main(["generate", "--model", str(model_dir), str(model_dir), "--input", str(inputs),
                 "--nbest", "3", "--beam", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    for line, source in zip(lines, ["a b c d e", "j i h"]):
        record = json.loads(line)
        assert record["source"] == source and len(record["nbest"]) == 3
        scores = [entry["score"] for entry in record["nbest"]]
        assert scores == sorted(scores, reverse=True) and all("log_prob" in entry for entry in record["nbest"])
    assert main(["generate", "--model", str(model_dir), "--input", str(inputs), "--nbest", "9"]) == 1
    assert capsys.readouterr().err.strip().endswith("nbest is 9, more than beam (5): a beam search finds at most "
                                                    "one output per beam")


def test_reranking_reorders_an_n_best_list(model_dir, tmp_path, capsys):
    generator = load(model_dir)
    sentences = ["a b c d e f g", "j i h g"]
    plain = generator.generate(sentences, nbest=4)
    longer = generator.generate(sentences, nbest=4, rerank=[("length", 100.0)])
    shorter = generator.generate(sentences, nbest=4, rerank=[(lambda s, outs: [-len(o.tokens) for o in outs], 100.0)])
    for p, up, down in zip(plain, longer, shorter):
        assert len(up.tokens) == max(len(g.tokens) for g in p.nbest)
        assert len(down.tokens) == min(len(g.tokens) for g in p.nbest)
        assert [g.score for g in up.nbest] == sorted((g.score for g in up.nbest), reverse=True)
        assert up.rerank_scores["length"] == len(up.tokens) and "search" in up.rerank_scores
    with pytest.raises(WeanError, match="nothing to reorder"):
        generator.generate(sentences, rerank=[("length", 1.0)])
    as_text = generator.generate(sentences, nbest=4, rerank="length=100")
    assert [g.text for g in as_text] == [g.text for g in longer]
    for bad, message in (([("length", math.inf)], "must be a finite number"),
                         (["length"], "not a \\(scorer, weight\\) pair"), ("length=x", "expected NAME=WEIGHT")):
        with pytest.raises(WeanError, match=message):
            generator.generate(sentences, nbest=2, rerank=bad)
    with pytest.raises(WeanError, match="^config: rerank is 'lenght'; choose one of|^rerank"):
        generator.generate(sentences, nbest=2, rerank=[("lenght", 1.0)])
    inputs = tmp_path / "in.txt"
    inputs.write_text("a b c d e f g\n")
    assert main(["generate", "--model", str(model_dir), "--input", str(inputs), "--nbest", "4",
                 "--rerank", "length=100"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["nbest"][0]["text"] == longer[0].text
    assert main(["generate", "--model", str(model_dir), "--input", str(inputs), "--rerank", "length"]) == 1
    assert "expected NAME=WEIGHT" in capsys.readouterr().err


def _generation(source: str, text: str, score: float) -> Generation:
    return Generation(source, text, text.split(), source.split(), score, score, torch.zeros(1, 0))


def test_the_fallback_puts_faithful_outputs_first_and_else_the_source():
    source = "He moved to Paris in 1998."
    nbest = [_generation(source, "He moved to Paris in 1999.", -1.0),
             _generation(source, "He went to Paris, Paris.", -2.0),
             _generation(source, "He moved to Paris.", -3.0)]
    assert [g.text for g in faithful_first(source, nbest)] == [
        "He moved to Paris.", "He moved to Paris in 1999.", "He went to Paris, Paris."]
    unfaithful = faithful_first(source, nbest[:2])
    assert [g.text for g in unfaithful] == [source, "He moved to Paris in 1999.", "He went to Paris, Paris."]
    assert unfaithful[0].warning.startswith("every output found failed a fidelity or meaning check (the best: "
                                            "invented numbers: 1999)")


def test_generate_with_the_fallback_returns_the_beams_first_faithful_output_or_the_source(model_dir):
    generator = load(model_dir)
    sentences = ["a b c d e f g", "j i h g", "a a b b c c", "g g g g g"]
    beams = generator.generate(sentences, nbest=5)
    chosen = generator.generate(sentences, fallback="source")
    wider = generator.generate(sentences, fallback="source", nbest=3)
    for source, beam, output, three in zip(sentences, beams, chosen, wider):
        faithful = [g.text for g in beam.nbest if not faults(source, g.text)]
        assert output.text == (faithful[0] if faithful else source)
        assert (output.warning is None) == bool(faithful)
        assert output.alternatives == [] and three.text == output.text and len(three.nbest) == 3
    assert [g.text for g in generator.generate(sentences, fallback="none")] == [g.text for g in generator.generate(sentences)]


def test_the_fallback_can_count_unknown_words_as_faults():
    source = "Deep convection strengthened near the coast."
    nbest = [_generation(source, "Deep convection strengthenisted near the coast.", -1.0),
             _generation(source, "Convection grew near the coast.", -2.0)]
    plain = TextSearch(None, None, SearchOptions(fallback="source"), 1, False)
    assert plain._faithful_first([source], [nbest])[0][0].text == "Deep convection strengthenisted near the coast."
    checked = TextSearch(None, None, SearchOptions(fallback="source", fallback_words="known"), 1, False)
    assert [g.text for g in checked._faithful_first([source], [nbest])[0]] == [
        "Convection grew near the coast.", "Deep convection strengthenisted near the coast."]
    alone = checked._faithful_first([source], [nbest[:1]])[0][0]
    assert alone.text == source and "unknown words: strengthenisted" in alone.warning


def test_the_fallback_counts_an_output_the_channel_model_finds_unlikely_as_unfaithful():
    class Channel:  # log P(source | output) per token: high only for outputs that keep "moved"
        def log_probs_per_token(self, outputs, sources):
            return [-1.0 if "moved" in output else -5.0 for output in outputs]

    source = "He moved to Paris in 1998."
    nbest = [_generation(source, "He went to Paris in 1998.", -1.0), _generation(source, "He moved to Paris.", -2.0)]
    search = TextSearch(None, None, SearchOptions(fallback="source"), 1, False, fallback_channel=(Channel(), -2.0))
    assert [g.text for g in search._faithful_first([source], [nbest])[0]] == [
        "He moved to Paris.", "He went to Paris in 1998."]
    unlikely = search._faithful_first([source], [nbest[:1]])[0][0]
    assert unlikely.text == source and "channel: -5.00 per token, below -2" in unlikely.warning


def test_a_channel_reads_text_as_the_search_that_asks_it_does(model_dir, tmp_path, monkeypatch):
    import yaml

    from wean.inference import model_scores, pipeline
    from wean.inference.model_scores import ChannelScore

    own = tmp_path / "own"
    shutil.copytree(model_dir, own)
    shutil.copytree(model_dir, own / "reranker")
    for path, plain_text in ((own / "config.yaml", None), (own / "reranker" / "config.yaml", True)):
        config = yaml.safe_load(path.read_text())
        if plain_text is None:
            config["generation"].update(fallback="source", fallback_channel="reranker=-1e9")
        else:  # the channel's own default is the other reading
            config["generation"]["plain_text"] = plain_text
        path.write_text(yaml.safe_dump(config))
    readings = []
    real = model_scores.forced_log_probs
    # this tiny model's outputs repeat words, which the fidelity checks reject before the channel
    # model reads them: here none is rejected, so the channel reads the first
    monkeypatch.setattr(pipeline, "faults", lambda *args: {})
    monkeypatch.setattr(model_scores, "forced_log_probs",
                        lambda loaded, sources, targets, plain_text=None: readings.append(plain_text)
                        or real(loaded, sources, targets, plain_text))
    for plain_text in (False, True):
        readings.clear()
        load(own).generate(["a b c d e f g"], plain_text=plain_text)
        load(model_dir).generate(["a b c d e f g"], plain_text=plain_text, nbest=2,
                                 rerank=[(ChannelScore(own / "reranker"), 0.1)])
        assert readings == [plain_text, plain_text]


def test_a_model_directory_names_its_fallback_channel_model(model_dir, tmp_path):
    import yaml

    own = tmp_path / "own"
    shutil.copytree(model_dir, own)
    shutil.copytree(model_dir, own / "reranker")
    config = yaml.safe_load((own / "config.yaml").read_text())
    sentences = ["a b c d e f g", "j i h g"]
    for threshold in (-1e9, 0.0):  # every output passes; none can (a log-probability is below 0)
        config["generation"].update(fallback="source", fallback_channel=f"reranker={threshold}")
        (own / "config.yaml").write_text(yaml.safe_dump(config))
        generator = load(own)
        assert generator.fallback_channel()[0].directory == own / "reranker"
        outputs = generator.generate(sentences)
        if threshold == 0.0:
            assert [g.text for g in outputs] == sentences and all(g.warning for g in outputs)
        else:
            assert [g.text for g in outputs] == [g.text for g in load(model_dir).generate(sentences, fallback="source")]
    assert load(own).generate(sentences, nbest=2, fallback="none")[0].alternatives  # the check is the fallback's
    exported = tmp_path / "exported"  # the channel model travels with an export
    channel_config = yaml.safe_load((own / "reranker" / "config.yaml").read_text())
    channel_config["generation"]["plain_text"] = not config["generation"]["plain_text"]
    (own / "reranker" / "config.yaml").write_text(yaml.safe_dump(channel_config))
    assert main(["export", str(own), str(exported)]) == 0
    assert (exported / "reranker" / "config.yaml").is_file() and load(exported).generate(sentences)
    # it keeps reading text as it did, unless the export sets how the exported model reads it
    assert load(exported / "reranker").config.generation.plain_text == channel_config["generation"]["plain_text"]
    assert main(["export", str(own), str(exported), "--overwrite", "--set",
                 f"generation.plain_text={str(config['generation']['plain_text']).lower()}"]) == 0
    assert load(exported / "reranker").config.generation.plain_text == config["generation"]["plain_text"]
    config["generation"].update(fallback_channel="absent=-1")
    (own / "config.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(WeanError, match="generation.fallback_channel: .*absent: not a model directory"):
        load(own).generate(sentences)
    for bad in ("reranker", "reranker=x", "=1"):
        config["generation"].update(fallback_channel=bad)
        (own / "config.yaml").write_text(yaml.safe_dump(config))
        with pytest.raises(WeanError, match="config: generation.fallback_channel: .*expected DIR=THRESHOLD"):
            load(own)
    with pytest.raises(WeanError, match="rerank: an n-best list of one output has nothing to reorder"):
        load(model_dir).generate(sentences, fallback="source", rerank="length=1")  # not widened for the reranking


def test_wean_test_writes_and_scores_the_reranked_best(model_dir, tmp_path, monkeypatch, capsys):
    import dataclasses

    from wean.evaluation import benchmarks

    (tmp_path / "b.src").write_text("a b c d e f g\nj i h g\n")
    (tmp_path / "b.ref").write_text("g f e d c b a\ng h i j\n")
    tiny = dataclasses.replace(benchmarks.BENCHMARKS["wikismall-test"], name="tiny", source="b.src",
                               references=("b.ref",), plain_text=False)
    monkeypatch.setitem(benchmarks.BENCHMARKS, "tiny", tiny)
    longer = load(model_dir).generate(["a b c d e f g", "j i h g"], nbest=4, rerank="length=100")
    out = tmp_path / "out"
    assert main(["test", "--model", str(model_dir), "--benchmark", "tiny", "--out-dir", str(out), "--system", "s",
                 "--data-root", str(tmp_path), "--nbest", "4", "--rerank", "length=100"]) == 0
    assert (out / "s.tiny.txt").read_text().splitlines() == [g.text for g in longer]
    assert json.loads((out / "metrics.json").read_text())["s"]["tiny"]["generation"]["rerank"] == "length=100"
    assert main(["test", "--model", str(model_dir), "--benchmark", "tiny", "--out-dir", str(out),
                 "--data-root", str(tmp_path), "--rerank", "length=x"]) == 1
    assert "expected NAME=WEIGHT" in capsys.readouterr().err
    import yaml  # a model directory that reranks by itself: its record says so

    own = tmp_path / "own"
    shutil.copytree(model_dir, own)
    config = yaml.safe_load((own / "config.yaml").read_text())
    config["generation"].update(rerank="length=100", rerank_size=4)
    (own / "config.yaml").write_text(yaml.safe_dump(config))
    assert main(["test", "--model", str(own), "--benchmark", "tiny", "--out-dir", str(out), "--system", "own",
                 "--data-root", str(tmp_path)]) == 0
    assert (out / "own.tiny.txt").read_text().splitlines() == [g.text for g in longer]
    generation = json.loads((out / "metrics.json").read_text())["own"]["tiny"]["generation"]
    assert (generation["rerank"], generation["rerank_size"], generation["beam"]) == ("length=100", 4, 5)


def test_a_model_directory_reranks_with_the_models_it_carries(model_dir, tmp_path):
    """generation.rerank: beam search keeps rerank_size outputs, reranks them with the scorers the
    config names (a relative DIR read inside the model directory) and returns the caller's nbest;
    "none" and greedy search do without."""
    import yaml

    own = tmp_path / "own"
    shutil.copytree(model_dir, own)
    shutil.copytree(model_dir, own / "reranker")  # its channel model travels inside it
    config = yaml.safe_load((own / "config.yaml").read_text())
    config["generation"].update(rerank="length=100,channel:reranker=0.5", rerank_size=4)
    (own / "config.yaml").write_text(yaml.safe_dump(config))
    sentences = ["a b c d e f g", "j i h g", "c a"]
    plain, carrying = load(model_dir), load(own)
    asked = plain.generate(sentences, nbest=4, rerank=f"length=100,channel:{own / 'reranker'}=0.5")
    default = carrying.generate(sentences)
    assert [g.text for g in default] == [g.text for g in asked]
    assert all(g.alternatives == [] for g in default)  # nbest 1, though 4 were reranked
    assert [len(g.nbest) for g in carrying.generate(sentences, nbest=2)] == [2, 2, 2]
    assert [g.text for g in carrying.generate(sentences, rerank="none")] == [g.text for g in plain.generate(sentences)]
    assert [g.text for g in carrying.generate(sentences, beam=1)] == [g.text for g in plain.generate(sentences, beam=1)]
    for bad, message in (({"rerank": "length"}, "config: generation.rerank: .*expected NAME=WEIGHT"),
                         ({"rerank": "length=1", "rerank_size": 1}, "generation.rerank_size is 1")):
        config["generation"].update(bad)
        (own / "config.yaml").write_text(yaml.safe_dump(config))
        with pytest.raises(WeanError, match=message):
            load(own)


def test_a_reranking_model_is_loaded_on_the_device_of_the_model_it_reranks_for(model_dir, monkeypatch):
    from wean.inference import model_scores
    from wean.inference.loading import LoadedModel

    generator = load(model_dir, device="cpu")
    real_load, asked = LoadedModel.from_directory.__func__, []

    def recording_load(cls, directory, device="auto", **kwargs):
        asked.append(device)
        return real_load(cls, directory, device=device, **kwargs)

    monkeypatch.setattr(LoadedModel, "from_directory", classmethod(recording_load))
    monkeypatch.setattr(model_scores, "_loaded", {})
    generator.generate(["a b c d e f g"], nbest=2, rerank=f"lm:{model_dir}=1")
    assert asked == ["cpu"]  # not "auto", which takes the GPU where there is one


def test_noisy_channel_scorers_ask_other_models(model_dir, tmp_path, capsys):
    """channel:DIR scores log P(source | output), lm:DIR log P(output | <lm>), each under DIR's
    model as forced_scores computes it; with weight 0 the list keeps the search's order."""
    from wean.inference.forced_scores import forced_log_probs

    generator = load(model_dir)
    sentences = ["a b c d e f g", "j i h g"]
    plain = generator.generate(sentences, nbest=4)
    spec = f"channel:{model_dir}=0,lm:{model_dir}=0"
    reranked = generator.generate(sentences, nbest=4, rerank=spec)
    for before, after, source in zip(plain, reranked, sentences):
        assert [g.text for g in after.nbest] == [g.text for g in before.nbest]  # lambda 0: beam search's order
        outputs = [g.text for g in after.nbest]
        channel = [total for total, _ in forced_log_probs(generator, outputs, [source] * len(outputs))]
        lm = [total for total, _ in forced_log_probs(generator, ["<lm>"] * len(outputs), outputs)]
        assert [g.rerank_scores[f"channel:{model_dir}"] for g in after.nbest] == pytest.approx(channel)
        assert [g.rerank_scores[f"lm:{model_dir}"] for g in after.nbest] == pytest.approx(lm)
    # a large weight puts first the output from which the channel best recovers the source
    channel_first = generator.generate(sentences, nbest=4, rerank=f"channel:{model_dir}=100")
    for result in channel_first:
        assert result.rerank_scores[f"channel:{model_dir}"] == max(g.rerank_scores[f"channel:{model_dir}"]
                                                                    for g in result.nbest)
    for bad, message in (("channel=1", "channel needs an argument: channel:DIR=WEIGHT"),
                         (f"length:{model_dir}=1", "length takes no argument"),
                         (f"lm:{tmp_path}=1", "not a model directory")):
        with pytest.raises(WeanError, match=message):
            generator.generate(sentences, nbest=2, rerank=bad)
    inputs = tmp_path / "in.txt"
    inputs.write_text("a b c d e f g\n")
    assert main(["generate", "--model", str(model_dir), "--input", str(inputs), "--nbest", "3",
                 "--rerank", f"channel:{tmp_path / 'absent'}=1"]) == 1
    assert "not a model directory" in capsys.readouterr().err


PLUGIN = '''
from wean.registry import STRATEGIES
from wean.search.common import Hypothesis
import torch


@STRATEGIES.register("echo")
def echo(model, source, lengths, options, banned_ids=(), abandoned=None):
    """Writes the source back, with score 0: no model needed."""
    return [[Hypothesis(source[i, : int(lengths[i])].tolist(), 0.0, 0.0, torch.zeros(int(lengths[i]) + 1,
             int(lengths[i])))] for i in range(source.size(0))]
'''


def generate_with_plugin(model_dir, tmp_path, plugin_text: str, lines: str, *options: str) -> int:
    """``wean generate`` of ``lines`` with the plug-in file ``plugin_text``; its exit status."""
    plugin, inputs = tmp_path / "plugin.py", tmp_path / "in.txt"
    plugin.write_text(plugin_text)
    inputs.write_text(lines)
    return main(["generate", "--model", str(model_dir), "--input", str(inputs), "--plugins", str(plugin), *options])


def test_a_strategy_from_a_plug_in_file_is_selected_by_name(model_dir, tmp_path, capsys):
    assert generate_with_plugin(model_dir, tmp_path, PLUGIN, "a b c d e\nj i h\n", "--strategy", "echo") == 0
    assert capsys.readouterr().out == "a b c d e\nj i h\n"
    generator = Generator.from_directory(model_dir)
    assert [g.text for g in generator.generate(["c b a"], strategy="echo")] == ["c b a"]


NBEST_PLUGIN = '''
import torch

from wean.registry import STRATEGIES
from wean.search.common import Hypothesis
from wean.search_options import Capabilities

ASKED = []  # the nbest of each call


@STRATEGIES.register("both_ways", capabilities=Capabilities(outputs="beam"))
def both_ways(model, source, lengths, options, banned_ids=(), abandoned=None):
    """The source, then the source reversed: an n-best list of two, no model needed."""
    ASKED.append(options.nbest)
    lists = []
    for i in range(source.size(0)):
        tokens = source[i, : int(lengths[i])].tolist()
        attention = torch.zeros(len(tokens) + 1, len(tokens))
        lists.append([Hypothesis(tokens, 0.0, 0.0, attention), Hypothesis(tokens[::-1], -1.0, -1.0, attention)]
                     [: options.nbest])
    return lists
'''


def test_a_plug_in_strategy_that_declares_n_best_lists_works_as_a_built_in_one(model_dir, tmp_path, capsys):
    from wean.registry import load_plugins
    from wean.search_options import Capabilities, SearchOptions, capabilities

    plugin = tmp_path / "both_ways.py"
    plugin.write_text(NBEST_PLUGIN)
    load_plugins([str(plugin)])
    recorder = next(module for name, module in sys.modules.items() if name.startswith("wean_plugin_both_ways"))
    generator = load(model_dir)
    (result,) = generator.generate(["c b a"], strategy="both_ways", beam=2, nbest=2)
    assert [g.text for g in result.nbest] == ["c b a", "a b c"]
    with pytest.raises(WeanError, match="^nbest is 3, more than beam \\(2\\)"):
        generator.generate(["c b a"], strategy="both_ways", beam=2, nbest=3)
    recorder.ASKED.clear()
    generator.generate(["c b a"], strategy="both_ways", beam=2, fallback="source")
    assert recorder.ASKED == [2]  # the fallback reads every output of the beam, as beam search's
    inputs = tmp_path / "in.txt"
    inputs.write_text("a b c\n")
    assert main(["generate", "--model", str(model_dir), "--input", str(inputs), "--plugins", str(plugin),
                 "--strategy", "both_ways", "--beam", "2", "--nbest", "2"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert [output["text"] for output in json.loads(line)["nbest"]] == ["a b c", "c b a"]
    # the server's bound on work: hypotheses per input as the strategy declares them
    assert capabilities("both_ways").width(SearchOptions(strategy="both_ways", beam=4)) == 4
    assert capabilities("greedy").width(SearchOptions(strategy="greedy", beam=4)) == 1
    assert capabilities("sampling").width(SearchOptions(strategy="sampling", beam=4, nbest=3)) == 3
    assert Capabilities(declared=False).width(SearchOptions(beam=4)) == 4  # declared nothing: cost not known


def test_a_plug_in_strategy_that_declares_nothing_finds_one_output_and_says_so(model_dir, tmp_path, capsys):
    assert generate_with_plugin(model_dir, tmp_path, PLUGIN, "a b c\n", "--strategy", "echo", "--nbest", "3") == 1
    assert re.search(r"error: --nbest is 3; echo search finds one output \(beam, sampling, diverse_beam.* find "
                     r"several\)$", capsys.readouterr().err.strip())


SCORER_PLUGIN = '''
from wean.registry import RERANKERS


@RERANKERS.register("fewest_words")
def fewest_words(sources, outputs):
    """Minus each output's length in words: with a large weight, the shortest output comes first."""
    return [-len(output.text.split()) for output in outputs]
'''


def test_a_reranking_scorer_from_a_plug_in_file_is_named_on_the_command_line(model_dir, tmp_path, capsys):
    orders = {}
    for weight in (100, -100):  # shortest first, then longest first
        assert generate_with_plugin(model_dir, tmp_path, SCORER_PLUGIN, "a b c d e f g\nj i h g\n", "--nbest", "4",
                                    "--rerank", f"fewest_words={weight}") == 0
        lists = [[len(output["text"].split()) for output in json.loads(line)["nbest"]]
                 for line in capsys.readouterr().out.splitlines()]
        assert all(lengths == sorted(lengths, reverse=weight < 0) for lengths in lists)
        orders[weight] = lists
    assert orders[100] != orders[-100]  # the scorer reordered the lists: their lengths differ


def test_a_plain_text_of_several_sentences_has_joined_alternatives(model_dir):
    generator = load(model_dir)
    first, second = "a b c d e!", "j i h g."  # two sentences to the splitter
    (text,) = generator.generate([f"{first} {second}"], plain_text=True, nbest=3)
    each = generator.generate([first, second], plain_text=True, nbest=3, split_sentences=False)
    assert len(text.nbest) == 3
    for j, alternative in enumerate(text.nbest):
        assert alternative.text == " ".join(part.nbest[j].text for part in each if part.nbest[j].text)
        assert alternative.score == pytest.approx(sum(part.nbest[j].score for part in each))


def test_a_scorer_that_gives_no_number_is_one_line(model_dir):
    for bad in (lambda s, outs: ["long"] * len(outs), lambda s, outs: [math.nan] * len(outs), lambda s, outs: [1.0]):
        with pytest.raises(WeanError, match="^rerank: scorer "):
            load(model_dir).generate(["a b c d e"], nbest=2, rerank=[(bad, 1.0)])
