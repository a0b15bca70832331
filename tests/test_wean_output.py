"""The WEAN output layer (Ma et al. 2018, equation 5) against hand-computed cases."""

import shutil

import pytest
import torch
from torch import nn

from synthetic import reverse_pairs, tiny_config, write_corpus
from wean.config import ModelConfig, section_config
from wean.data.vocabulary import UNK_ID
from wean.errors import WeanError
from wean.inference.generator import load
from wean.models.model import build_model
from wean.models.output_layer import LinearOutput, WeanOutput
from wean.training import Trainer
from wean.training.criterion import Criterion

E = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [2.0, -1.0]])  # 4 words, 2-d embeddings
Q = torch.tensor([[1.0, 2.0]])


def embedding():
    layer = nn.Embedding(4, 2)
    layer.weight.data.copy_(E)
    return layer


def test_dot_is_the_tied_softmax():
    """WEAN-dot = a linear output layer tied to the embeddings without bias (fairseq's
    share_all_embeddings, OpenNMT's share_decoder_embeddings)."""
    shared = embedding()
    wean = WeanOutput(shared, hidden_size=2, score="dot")
    tied = LinearOutput(2, 4)
    tied.projection.weight = shared.weight
    nn.init.zeros_(tied.projection.bias)
    query = torch.randn(3, 5, 2)
    assert torch.equal(wean(query), tied(query))
    assert torch.allclose(wean(Q), torch.tensor([[1.0, 2.0, 3.0, 0.0]]))  # q . e_i by hand


def test_dot_model_equals_a_tied_linear_model():
    torch.manual_seed(0)
    config = ModelConfig(embedding_size=8)
    config.encoder.hidden_size = config.decoder.hidden_size = 8
    config.output_layer = section_config("model.output_layer", {"type": "wean", "score": "dot"})
    model = build_model(config, 20, 20).eval()
    source, lengths, previous = torch.randint(4, 20, (2, 6)), torch.tensor([6, 6]), torch.randint(4, 20, (2, 4))
    output = model(source, lengths, previous)
    tied_logits = nn.functional.linear(output.queries, model.decoder.embedding.weight)
    logits = output.log_probs
    assert torch.allclose(torch.log_softmax(logits, -1), torch.log_softmax(tied_logits, -1), atol=1e-6)


def test_general_by_hand():
    layer = WeanOutput(embedding(), hidden_size=2, score="general", bias=True)
    layer.projection.weight.data = torch.tensor([[1.0, 1.0], [0.0, 2.0]])  # W q = [q1 + q2, 2 q2]
    layer.projection.bias.data = torch.tensor([0.5, -1.0])
    # W q + b = [3.5, 3.0]; scores = [3.5, 3.0, 6.5, 4.0]
    assert torch.allclose(layer(Q), torch.tensor([[3.5, 3.0, 6.5, 4.0]]))
    unbiased = WeanOutput(embedding(), hidden_size=2, score="general", bias=False)
    unbiased.projection.weight.data = torch.tensor([[1.0, 1.0], [0.0, 2.0]])
    assert torch.allclose(unbiased(Q), torch.tensor([[3.0, 4.0, 7.0, 2.0]]))


def test_concat_by_hand():
    layer = WeanOutput(embedding(), hidden_size=2, score="concat", concat_chunk_elements=6)  # 3 words a chunk
    layer.query_projection.weight.data = torch.eye(2)
    layer.embedding_projection.weight.data = torch.tensor([[1.0, 0.0], [0.0, 0.0]])
    layer.energy.weight.data = torch.tensor([[1.0, 1.0]])
    # W_q q + W_e e_i = [1 + e_i1, 2]; score = tanh(1 + e_i1) + tanh(2)
    expected = torch.tanh(torch.tensor([2.0, 1.0, 2.0, 3.0])) + torch.tanh(torch.tensor(2.0))
    assert torch.allclose(layer(Q), expected.unsqueeze(0))


def test_concat_training_keeps_no_queries_x_words_x_hidden_tensor_and_gets_the_same_gradients():
    """Chunks recomputed in the backward pass: the gradients of the direct formula, while what
    autograd keeps is far smaller than the (queries x words x hidden) tensor."""
    torch.manual_seed(0)
    words, hidden, rows = 50, 8, 12
    layer = WeanOutput(nn.Embedding(words, hidden), hidden_size=hidden, score="concat",
                       concat_chunk_elements=rows * hidden * 7)  # 8 chunks, the last one short
    query = torch.randn(3, 4, hidden, requires_grad=True)
    kept = {}  # storage -> its size in values: a chunk of keys is a view of one (words x hidden) table

    def pack(tensor):
        kept[tensor.untyped_storage().data_ptr()] = tensor.untyped_storage().nbytes() // tensor.element_size()
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        scores = layer(query)
    assert sum(kept.values()) < rows * words * hidden / 3
    weights = torch.randn(3, 4, words)
    (scores * weights).sum().backward()
    chunked = [t.grad.clone() for t in (query, layer.embedding.weight, layer.energy.weight)]
    for t in (query, layer.embedding.weight, layer.energy.weight):
        t.grad = None
    direct = layer.energy(torch.tanh(layer.query_projection(query).unsqueeze(-2)
                                     + layer.embedding_projection(layer.embedding.weight))).squeeze(-1)
    assert torch.allclose(scores, direct, atol=1e-6)
    (direct * weights).sum().backward()
    for got, want in zip(chunked, (query.grad, layer.embedding.weight.grad, layer.energy.weight.grad)):
        assert torch.allclose(got, want, atol=1e-5)


@pytest.mark.skipif(not (shutil.which("c++") or shutil.which("g++")), reason="torch.compile on a CPU needs a C++ compiler")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.compile's own imports
def test_the_fused_concat_kernel_gives_the_chunked_scores_and_gradients():
    torch.manual_seed(0)
    words, hidden = 50, 8
    shared = nn.Embedding(words, hidden)
    chunked = WeanOutput(shared, hidden_size=hidden, score="concat", concat_chunk_elements=12 * hidden * 7)
    fused = WeanOutput(shared, hidden_size=hidden, score="concat", concat_kernel="fused")
    fused.load_state_dict(chunked.state_dict())
    query = torch.randn(3, 4, hidden, requires_grad=True)
    weights = torch.randn(3, 4, words)
    results = []
    for layer in (chunked, fused):
        for tensor in (query, *layer.parameters()):
            tensor.grad = None
        scores = layer(query)
        (scores * weights).sum().backward()
        results.append([scores, query.grad, shared.weight.grad, layer.query_projection.weight.grad,
                        layer.embedding_projection.weight.grad, layer.energy.weight.grad])
    for want, got in zip(*results):
        assert torch.allclose(got, want, atol=1e-5)
    with torch.no_grad():  # search's path: other query counts, no autograd
        assert torch.allclose(fused(query[0]), chunked(query[0]), atol=1e-6)


@pytest.mark.skipif(not (shutil.which("c++") or shutil.which("g++")), reason="torch.compile on a CPU needs a C++ compiler")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_the_fused_concat_kernel_under_bf16_autocast_scores_in_fp32_and_trains_every_weight():
    """Under autocast the projections come out bf16 and v stays fp32: the fused scores are fp32 (the
    chunked kernel's are bf16), near the fp32 scores, and every weight gets a gradient."""
    torch.manual_seed(0)
    words, hidden = 30, 8
    layer = WeanOutput(nn.Embedding(words, hidden), hidden_size=hidden, score="concat", concat_kernel="fused")
    chunked = WeanOutput(layer.embedding, hidden_size=hidden, score="concat")
    chunked.load_state_dict(layer.state_dict())
    query = torch.randn(2, 3, hidden)
    with torch.no_grad():
        full_precision = layer(query)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        scores = layer(query)
        assert chunked(query).dtype == torch.bfloat16
    assert scores.dtype == torch.float32
    assert torch.allclose(scores, full_precision, atol=0.05)  # bf16 projections: ~3 significant digits
    scores.sum().backward()
    for name, weight in layer.named_parameters():
        assert weight.grad is not None and weight.grad.abs().sum() > 0, name


def test_the_fused_concat_kernel_on_a_cpu_without_a_compiler_says_so_in_one_line(monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name: None)
    layer = WeanOutput(embedding(), hidden_size=2, score="concat", concat_kernel="fused")
    with pytest.raises(WeanError, match="concat_kernel: fused needs a GPU, or a C\\+\\+ compiler"):
        layer(Q)


@pytest.mark.parametrize("score", ["general", "concat"])
def test_inference_reuses_the_embedding_side_until_weights_change(score):
    layer = WeanOutput(embedding(), hidden_size=2, score=score).eval()
    query = torch.randn(4, 2)
    with torch.no_grad():
        first = layer(query)
        cached = layer._cache
        assert torch.equal(layer(query), first) and layer._cache is cached
        layer.embedding.weight.add_(1.0)  # as an optimizer step does
        changed = layer(query)
    assert layer._cache is not cached
    with torch.enable_grad():
        assert torch.allclose(layer(query), changed)


@pytest.mark.parametrize("score", ["general", "concat"])
def test_a_fused_optimizer_step_between_two_inferences_drops_the_cache(score):
    """Fused Adam updates the weights without bumping their version counters: the cache must not
    outlive the step (the trainer puts the model in training mode before each update)."""
    layer = WeanOutput(embedding(), hidden_size=2, score=score)
    optimizer = torch.optim.Adam(layer.parameters(), lr=0.1, fused=True)
    query = torch.randn(4, 2)
    layer.eval()
    with torch.no_grad():
        before = layer(query)
    layer.train()
    layer(query).logsumexp(-1).sum().backward()
    optimizer.step()
    layer.eval()
    with torch.no_grad():
        after = layer(query)
        fresh = nn.functional.linear(query, *layer._keys()) if score == "general" else layer._concat_scores(
            query, layer._keys()[0])
    assert not torch.allclose(after, before)
    assert torch.allclose(after, fresh, atol=1e-6)


def test_validation_scores_the_weights_trained_so_far(tmp_path):
    """The trainer's validation loss equals that of a fresh model holding the same weights, at
    every validation, not only the first."""
    data = write_corpus(tmp_path / "data", train=200, valid=20)
    config = tiny_config(data, tmp_path / "model", max_updates=12, validate_every=4, batch_size=16,
                         selection_metric="loss")
    config.model.output_layer = section_config("model.output_layer", {"type": "wean"})
    trainer = Trainer(config)
    state = trainer.train()
    fresh = build_model(config.model, len(trainer.assets.source_vocabulary), len(trainer.assets.target_vocabulary))
    fresh.load_state_dict(trainer.model.state_dict())
    scores = trainer.validation.scores(Criterion(fresh), trainer.assets, trainer.device)
    assert len(state.validations) == 3
    assert scores["loss"] == pytest.approx(state.validations[-1]["loss"], abs=1e-5)


def test_candidates_limit_generation_and_training_targets():
    layer = WeanOutput(embedding(), hidden_size=2, score="dot")
    layer.set_candidates([UNK_ID, 3])
    logits = layer(Q)
    assert torch.isinf(logits[0, 2])  # not a candidate: never generated
    assert logits[0, 1] == 2.0 and logits[0, 3] == 0.0
    assert logits[0, 0] == 1.0  # <pad> stays a class (SPM trains it; search never emits it)
    assert layer.map_targets(torch.tensor([3, 2, 0, -100])).tolist() == [3, UNK_ID, 0, -100]


def test_candidates_are_the_most_frequent_source_words_the_target_vocabulary_has():
    """Section 2.4, prepared from the training sources before a new run trains."""
    from wean.data.tokenizers import WordTokenizer
    from wean.data.vocabulary import EOS_ID, Vocabulary
    from wean.models.interfaces import TrainingCorpus

    vocabulary = Vocabulary(["b", "c", "d", "e"])  # ids 4..7 after the four specials
    layer = WeanOutput(nn.Embedding(len(vocabulary), 2), hidden_size=2, score="dot", candidates=2)
    corpus = TrainingCorpus(["a a a b c", "b c d", "c z z z z"], WordTokenizer(), vocabulary)
    layer.prepare(corpus)  # a and z are frequent but not in the target vocabulary; c 3, b 2, d 1
    chosen = {i for i, kept in enumerate(layer.candidates.tolist()) if kept}
    assert chosen == {0, UNK_ID, EOS_ID, vocabulary.stoi["c"], vocabulary.stoi["b"]}  # 0: <pad>, for SPM


def test_detached_embeddings_get_no_gradient_from_the_output():
    for detach, expect_gradient in ((False, True), (True, False)):
        layer = WeanOutput(embedding(), hidden_size=2, score="general", detach_embeddings=detach)
        layer(Q).sum().backward()
        has_gradient = layer.embedding.weight.grad is not None and bool(layer.embedding.weight.grad.abs().sum() > 0)
        assert has_gradient == expect_gradient
        assert layer.projection.weight.grad is not None


def test_wean_model_learns_to_reverse_symbols(tmp_path):
    data = write_corpus(tmp_path / "data")
    config = tiny_config(data, tmp_path / "model")
    config.model.output_layer = section_config("model.output_layer", {"type": "wean"})
    config.model.embedding_size = 64  # WEAN scores 64-d queries against these embeddings
    Trainer(config).train()
    sources, targets = reverse_pairs(200, seed=7)
    outputs = [g.text for g in load(tmp_path / "model").generate(sources, beam=1)]
    assert sum(o == t for o, t in zip(outputs, targets)) / len(targets) >= 0.95


def test_concat_init_range_draws_only_concats_projections_and_its_default_draws_nothing():
    config = ModelConfig(embedding_size=16)
    config.decoder.hidden_size = 16
    config.output_layer = section_config("model.output_layer", {"type": "wean", "score": "concat"})

    def built(init_range):
        config.output_layer.concat_init_range = init_range
        torch.manual_seed(0)
        return build_model(config, 30, 30)

    default, wide = built(0.0), built(0.5)
    layer = wide.output_layer
    for projection in (layer.query_projection.weight, layer.embedding_projection.weight):
        assert projection.abs().max() > 0.3 and projection.abs().max() <= 0.5
    assert default.output_layer.query_projection.weight.abs().max() <= config.init_range
    others = {name: tensor for name, tensor in wide.state_dict().items() if "_projection" not in name}
    assert all(torch.equal(tensor, default.state_dict()[name]) for name, tensor in others.items())


def test_wean_concat_learns_to_reverse_symbols_from_a_wider_start(tmp_path):
    """At every weight in U(-0.1, 0.1) it learned nothing here (results/wean/concat-init)."""
    data = write_corpus(tmp_path / "data")
    config = tiny_config(data, tmp_path / "model")
    config.model.output_layer = section_config("model.output_layer", {"type": "wean", "score": "concat",
                                                                      "concat_init_range": 0.5})
    config.model.embedding_size = 64
    Trainer(config).train()
    sources, targets = reverse_pairs(200, seed=7)
    outputs = [g.text for g in load(tmp_path / "model").generate(sources, beam=1)]
    assert sum(o == t for o, t in zip(outputs, targets)) / len(targets) >= 0.9


def test_candidate_words_are_the_most_frequent_source_words_and_are_saved(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "train.src").write_text("a a a b b c\na a b d\n")
    (data / "train.dst").write_text("e a\nb e\n")  # "e" is only ever a target word
    (data / "valid.src").write_text("a b\n")
    (data / "valid.dst").write_text("a\n")
    config = tiny_config(data, tmp_path / "model", max_updates=1)
    config.model.output_layer = section_config("model.output_layer", {"type": "wean", "candidates": 2})
    config.model.embedding_size = 64
    Trainer(config).train()
    model = load(tmp_path / "model")
    vocabulary = model.assets.target_vocabulary
    allowed = {vocabulary.itos[i] for i in model.model.output_layer.candidates.nonzero().flatten().tolist()}
    assert allowed == {"a", "b", "<unk>", "<eos>", "<pad>"}  # the 2 most frequent source words
    assert all(set(g.tokens) <= {"a", "b", "<unk>"} for g in model.generate(["a b c d"], beam=2, replace_unk=False))
