"""The pointer-generator output layer (See et al. 2017), the extended ids of copied words and the
coverage loss."""

import random

import pytest
import torch

from synthetic import tiny_config
from wean.config import ModelConfig, config_from_dict, section_config
from wean.data.copy_vocabulary import encode_source, encode_target, token_of
from wean.data.corpus import Example, collate
from wean.data.vocabulary import EOS_ID, UNK_ID, Vocabulary
from wean.errors import WeanError
from wean.inference.ensemble import Ensemble
from wean.inference.generator import load
from wean.models.coverage_loss import coverage_loss
from wean.models.interfaces import OutputContext
from wean.models.model import build_model
from wean.models.log_softmax_at import log_softmax_at
from wean.search import decode
from wean.search_options import SearchOptions
from wean.training import Trainer
from wean.training.criterion import Criterion

V = 30  # vocabulary size of the hand-built models


def pointer_model(vocabulary_layer="wean", seed=0, coverage_vector=False, **model):
    torch.manual_seed(seed)
    config = ModelConfig(embedding_size=16, **model)
    config.encoder.hidden_size = config.decoder.hidden_size = 16
    config.decoder.coverage = coverage_vector
    config.output_layer = section_config("model.output_layer", {"type": "pointer_generator",
                                                                "vocabulary_layer": vocabulary_layer})
    return build_model(config, V, V)


def batch_with_copies():
    """Two sentences; the first has two words outside the vocabulary (ids 30, 31), its target
    copies one of them."""
    examples = [Example(0, [5, 30, 6, 31, 30], [30, 7, EOS_ID]), Example(1, [8, 9, 10], [9, 10, EOS_ID])]
    return collate(examples)


@pytest.mark.parametrize("vocabulary_layer", ["linear", "wean"])
def test_the_mixed_distribution_sums_to_one_over_the_extended_vocabulary(vocabulary_layer):
    model = pointer_model(vocabulary_layer)
    batch = batch_with_copies()
    log_probs = model(batch.source, batch.source_lengths, batch.target_input).log_probs
    assert log_probs.shape == (2, 3, V + 2) and torch.isfinite(log_probs[0]).all()
    assert torch.allclose(log_probs.exp().sum(-1), torch.ones(2, 3), atol=1e-5)
    # the second sentence has no word outside the vocabulary: its extended ids are never written
    assert torch.isfinite(log_probs[1, :, :V]).all() and (log_probs[1, :, V:] == float("-inf")).all()
    flushing = torch.set_flush_denormal(True)  # where the CPU can: tiny numbers become 0
    try:
        again = model(batch.source, batch.source_lengths, batch.target_input).log_probs
    finally:
        torch.set_flush_denormal(False)
    assert not flushing or torch.isfinite(again[0]).all()


@pytest.mark.parametrize("vocabulary_layer", ["linear", "wean"])
def test_the_mixture_and_its_gradients_are_equation_9_over_the_whole_vocabulary(vocabulary_layer):
    """Taken at the source's words alone, the mixture is See et al.'s equation 9 computed densely
    over the extended vocabulary in float64, its gradients too: a word the source holds twice
    (id 30 in the first sentence) gets its copy mass summed and its gradient once."""
    model = pointer_model(vocabulary_layer, seed=3)
    batch = batch_with_copies()
    encoded = model.encode(batch.source, batch.source_lengths)
    previous = model.in_vocabulary(batch.target_input)
    decoded = model.decoder(previous, encoded, model.init_state(encoded))
    context = OutputContext(decoded.attention, encoded, previous)
    layer = model.output_layer
    mixed = layer.log_probs(decoded.queries, context)
    p_gen = torch.sigmoid(layer.generation_probability(decoded.queries, context).double()).unsqueeze(-1)
    vocabulary = layer.vocabulary.log_probs(decoded.queries, context).double().exp()
    attention = decoded.attention.double()
    copied = attention.new_zeros(2, 3, V + 2).scatter_add(2, batch.source.unsqueeze(1).expand(-1, 3, -1), attention)
    probability = p_gen * torch.nn.functional.pad(vocabulary, (0, 2)) + (1 - p_gen) * copied
    finite = probability > 0  # 0: another sentence's extended ids
    expected = probability.masked_fill(~finite, 1).log()  # no log(0), whose gradient is NaN
    assert torch.equal(torch.isinf(mixed), ~finite)
    assert torch.allclose(mixed[finite].double(), expected[finite], atol=1e-5)
    weights = torch.randn(mixed.shape, generator=torch.Generator().manual_seed(0)).masked_fill(~finite, 0)
    parameters = [p for p in model.parameters() if p.requires_grad]
    got = torch.autograd.grad((mixed.masked_fill(~finite, 0) * weights).sum(), parameters, retain_graph=True,
                              allow_unused=True)
    want = torch.autograd.grad((expected.masked_fill(~finite, 0) * weights.double()).sum(), parameters,
                               allow_unused=True)
    for name, a, b in zip([n for n, p in model.named_parameters() if p.requires_grad], got, want):
        assert (a is None) == (b is None), name
        if a is not None:
            assert torch.allclose(a, b, rtol=1e-4, atol=1e-5)


def test_log_softmax_at_one_class_is_the_log_softmax_gathered_and_so_is_its_gradient():
    torch.manual_seed(0)
    logits = (torch.randn(3, 5, 11, dtype=torch.float64) * 4).requires_grad_()
    picked = torch.randint(0, 11, (3, 5))
    weights = torch.randn(3, 5, dtype=torch.float64)
    got = log_softmax_at(logits, picked)
    want = torch.log_softmax(logits, -1).gather(-1, picked.unsqueeze(-1)).squeeze(-1)
    torch.testing.assert_close(got, want)
    (fused,) = torch.autograd.grad((got * weights).sum(), logits)
    (plain,) = torch.autograd.grad((want * weights).sum(), logits)
    torch.testing.assert_close(fused, plain)


@pytest.mark.parametrize("vocabulary_layer", ["linear", "wean"])
def test_with_p_gen_one_the_layer_is_its_vocabulary_layer(vocabulary_layer):
    model = pointer_model(vocabulary_layer).eval()
    with torch.no_grad():
        model.output_layer.switch.weight.zero_()
        model.output_layer.switch.bias.fill_(60.0)  # p_gen = 1 - 1e-26
    batch = batch_with_copies()
    encoded = model.encode(batch.source, batch.source_lengths)
    decoded = model.decoder(model.in_vocabulary(batch.target_input), encoded, model.init_state(encoded))
    mixed = model.log_probs(decoded.queries, decoded.attention, encoded, model.in_vocabulary(batch.target_input))
    alone = model.output_layer.vocabulary.log_probs(decoded.queries, None)
    assert torch.allclose(mixed[..., :V], alone, atol=1e-6)
    with torch.no_grad():
        model.output_layer.switch.bias.fill_(-60.0)  # p_gen = 0: only copying, as the attention says
    mixed = model.log_probs(decoded.queries, decoded.attention, encoded, model.in_vocabulary(batch.target_input))
    copied = torch.zeros(2, 3, V + 2).scatter_add_(2, batch.source.unsqueeze(1).expand(-1, 3, -1), decoded.attention)
    assert torch.allclose(mixed.exp(), copied, atol=1e-6)


def test_the_loss_trains_the_switch_and_every_part_and_copies_need_the_extended_target():
    model = pointer_model("linear")
    batch = batch_with_copies()
    loss = Criterion(model).training_loss(batch)
    assert torch.isfinite(loss)
    loss.backward()
    for name, parameter in model.named_parameters():
        assert parameter.grad is not None and torch.isfinite(parameter.grad).all(), name
    assert model.output_layer.switch.weight.grad.abs().sum() > 0


def test_extended_ids_of_words_outside_the_vocabulary():
    vocabulary = Vocabulary(["the", "cat"])  # ids 4, 5; size 6
    ids, copied = encode_source(["the", "Zürich", "cat", "Bern", "Zürich"], vocabulary, copies=True)
    assert ids == [4, 6, 5, 7, 6] and copied == ["Zürich", "Bern"]
    assert encode_target(["Bern", "cat", "Basel"], vocabulary, copied, add_eos=True) == [7, 5, UNK_ID, EOS_ID]
    assert [token_of(i, vocabulary, copied) for i in (7, 4, 6)] == ["Bern", "the", "Zürich"]
    assert encode_source(["the", "Zürich"], vocabulary, copies=False) == ([4, UNK_ID], [])
    assert encode_source(["<unk>"], vocabulary, copies=True) == ([UNK_ID], [])  # <unk> is no word to copy


def test_coverage_loss_is_zero_for_attention_that_never_returns():
    one_hot = torch.eye(4).unsqueeze(0)  # step t attends to token t only
    mask = torch.ones(1, 4, dtype=torch.bool)
    assert coverage_loss(one_hot, mask).item() == 0.0
    again = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]]])  # the third step returns to both
    assert coverage_loss(again, torch.ones(1, 3, dtype=torch.bool)).item() == pytest.approx(1.0)
    assert coverage_loss(again, torch.tensor([[True, True, False]])).item() == 0.0  # a padded step costs nothing


def test_the_coverage_loss_is_a_registered_part_of_the_training_loss():
    plain, covered = pointer_model("linear"), pointer_model("linear", coverage_loss=1.0)
    assert plain.auxiliary_losses == [] and covered.auxiliary_losses == ["coverage_loss"]
    covered.load_state_dict(plain.state_dict())  # no weights of its own
    batch = batch_with_copies()
    output = covered(batch.source, batch.source_lengths, batch.target_input)
    expected = coverage_loss(output.attention, batch.target_output != -100)
    difference = Criterion(covered).training_loss(batch) - Criterion(plain).training_loss(batch)
    assert expected > 0 and difference.item() == pytest.approx(expected.item(), rel=1e-4)
    assert Criterion(covered).validation_loss(batch) == Criterion(plain).validation_loss(batch)


@pytest.mark.parametrize("coverage_vector", [False, True])
def test_search_strategies_and_ensembles_write_extended_ids(coverage_vector):
    """See et al.'s model with and without the coverage vector in the attention (which search
    carries in the decoder state)."""
    model = pointer_model("linear", coverage_vector=coverage_vector).eval()
    with torch.no_grad():
        model.output_layer.switch.bias.fill_(-60.0)  # copy only: every word written is a source word
    batch = batch_with_copies()
    for strategy in ("greedy", "beam", "sampling", "diverse_beam"):
        options = SearchOptions(strategy=strategy, beam=4, nbest=2 if strategy != "greedy" else 1, max_length=6)
        for nbest in decode(model, batch.source, batch.source_lengths, options):
            for hypothesis in nbest:
                assert set(hypothesis.tokens) <= set(batch.source[0].tolist()) | set(batch.source[1].tolist())
    beam = SearchOptions(beam=4, nbest=2, max_length=6)
    alone = decode(model, batch.source, batch.source_lengths, beam)
    twice = decode(Ensemble([model, model]), batch.source, batch.source_lengths, beam)
    assert [[h.tokens for h in n] for n in alone] == [[h.tokens for h in n] for n in twice]
    # a model that cannot copy vetoes the words outside the vocabulary
    torch.manual_seed(1)
    config = ModelConfig(embedding_size=16)
    config.encoder.hidden_size = config.decoder.hidden_size = 16
    mixed = decode(Ensemble([model, build_model(config, V, V).eval()]), batch.source, batch.source_lengths, beam)
    assert all(token < V for nbest in mixed for h in nbest for token in h.tokens)


def test_a_pointer_generator_needs_one_vocabulary_and_a_vocabulary_layer(tmp_path):
    values = tiny_config(tmp_path, tmp_path / "model").to_dict()
    values["model"]["output_layer"] = {"type": "pointer_generator"}
    values["model"]["share_embeddings"] = False
    values["data"]["tokenizer"]["shared_vocab"] = False
    with pytest.raises(WeanError, match="needs one vocabulary: data.tokenizer.shared_vocab: true"):
        config_from_dict(values).validate()
    values["data"]["tokenizer"]["shared_vocab"] = True
    values["model"]["output_layer"]["vocabulary_layer"] = "pointer_generator"
    with pytest.raises(WeanError, match="vocabulary_layer is 'pointer_generator'"):
        config_from_dict(values).validate()
    values["model"]["output_layer"]["vocabulary_layer"] = "softmax"
    with pytest.raises(WeanError, match="model.output_layer.vocabulary_layer is 'softmax'; choose one of"):
        config_from_dict(values).validate()
    values["model"]["output_layer"] = {"type": "pointer_generator", "candidates": 100}
    with pytest.raises(WeanError, match="the pointer-generator needs candidates: 0"):
        config_from_dict(values).validate()
    values["model"]["output_layer"] = {"type": "pointer_generator"}
    values["training"]["label_smoothing"] = 0.1
    with pytest.raises(WeanError, match="the pointer-generator needs label_smoothing: 0"):
        config_from_dict(values).validate()


FILLERS = ["and", "with", "then", "also"]


def names_corpus(folder, count, seed):
    """Keep the names of 2-4 names between filler words; each name is new (a random
    five-letter word), so none is in a vocabulary of words seen twice: only copying writes it."""
    rng = random.Random(seed)
    sources, targets = [], []
    for _ in range(count):
        names = ["".join(rng.choice("bcdfghklmnprstvz") for _ in range(5)) for _ in range(rng.randint(2, 4))]
        words = []
        for name in names:
            words += [rng.choice(FILLERS), name]
        sources.append(" ".join(words))
        targets.append(" ".join(names))
    return sources, targets


def write_names(folder):
    folder.mkdir(parents=True, exist_ok=True)
    for split, count, seed in (("train", 800, 0), ("valid", 60, 1)):
        sources, targets = names_corpus(folder, count, seed)
        (folder / f"{split}.src").write_text("\n".join(sources) + "\n")
        (folder / f"{split}.dst").write_text("\n".join(targets) + "\n")
    return folder


@pytest.mark.slow
def test_a_tiny_pointer_generator_learns_to_copy_words_no_vocabulary_holds(tmp_path):
    data = write_names(tmp_path / "data")
    rates = {}
    for layer in ("linear", "pointer_generator"):
        values = tiny_config(data, tmp_path / layer, max_epochs=5, selection_metric="loss").to_dict()
        values["data"]["tokenizer"]["min_frequency"] = 2  # every name is outside the vocabulary
        values["model"]["output_layer"] = {"type": layer, "vocabulary_layer": "linear"} if layer != "linear" else {}
        torch.manual_seed(0)
        Trainer(config_from_dict(values)).train()
        generator = load(tmp_path / layer, device="cpu")
        sources, targets = names_corpus(None, 40, seed=7)  # names never seen in training
        outputs = [g.text for g in generator.generate(sources, replace_unk=False)]
        rates[layer] = sum(o == t for o, t in zip(outputs, targets)) / len(targets)
    assert rates["linear"] == 0.0  # it can only write <unk> for a name
    assert rates["pointer_generator"] >= 0.8, rates
