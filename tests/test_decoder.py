"""The decoders' teacher-forced path (RecurrentDecoder's loop with the LSTM unrolled by hand for
speed, UnrolledLSTM) computes the same function as the step path that search takes, with either
kernels (wean.models.kernels)."""

import gc
import weakref

import pytest
import torch

from wean.config import ModelConfig, section_config
from wean.models import deferred_gradients
from wean.models.deferred_gradients import DeferredMemoryGradient
from wean.models.kernels import use_kernels
from wean.models.model import build_model


def model_and_batch(layers: int, bridge: str, attention: str, seed: int = 0, decoder: str = "luong",
                    word_attention: str = "none", input_feeding: bool = True, coverage: bool = False):
    torch.manual_seed(seed)
    config = ModelConfig(embedding_size=12, dropout=0.0, share_embeddings=False)
    config.encoder.hidden_size, config.encoder.layers, config.encoder.bidirectional = 8, layers, True
    own = {"luong": {"attention": attention, "input_feeding": input_feeding, "coverage": coverage},
           "bahdanau": {"attention": attention, "word_attention": word_attention}, "conditional": {}}[decoder]
    config.decoder = section_config("model.decoder", {"type": decoder, "hidden_size": 16, "layers": layers,
                                                      "bridge": bridge, **own})
    model = build_model(config, 30, 25)
    source = torch.randint(4, 30, (3, 7))
    source[1, 5:] = 0  # padding
    lengths = torch.tensor([7, 5, 7])
    previous = torch.randint(4, 25, (3, 6))
    return model, source, lengths, previous


def step_by_step(model, source, lengths, previous):
    """The search's path: one decoder call per target word."""
    encoded = model.encode(source, lengths)
    state = model.init_state(encoded)
    queries, attention = [], []
    for t in range(previous.size(1)):
        output = model.decoder(previous[:, t : t + 1], encoded, state)
        state = output.state
        queries.append(output.queries)
        attention.append(output.attention)
    return torch.cat(queries, 1), torch.cat(attention, 1), state


@pytest.mark.parametrize("kernels", ["blas", "onednn"])
@pytest.mark.parametrize("layers,bridge,attention", [(2, "copy", "general"), (1, "linear", "dot"),
                                                     (3, "zero", "concat")])
def test_unrolled_training_path_equals_the_step_path(layers, bridge, attention, kernels):
    model, source, lengths, previous = model_and_batch(layers, bridge, attention)
    use_kernels(model, kernels)
    model.train()  # dropout 0: the training path is taken and deterministic
    whole = model(source, lengths, previous)
    queries, attention_maps, state = step_by_step(model, source, lengths, previous)
    assert torch.allclose(whole.queries, queries, atol=1e-6)
    assert torch.allclose(whole.attention, attention_maps, atol=1e-6)
    encoded = model.encode(source, lengths)
    final = model.decoder(previous, encoded, model.init_state(encoded)).state
    assert torch.allclose(final.hidden[0], state.hidden[0], atol=1e-6)
    assert torch.allclose(final.hidden[1], state.hidden[1], atol=1e-6)
    assert torch.allclose(final.input_feed, state.input_feed, atol=1e-6)

    # and so are the gradients the optimizer sees
    model.zero_grad()
    whole.log_probs.square().mean().backward()
    unrolled = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    model.output_layer(step_by_step(model, source, lengths, previous)[0]).log_softmax(-1).square().mean().backward()
    assert set(unrolled) == {name for name, p in model.named_parameters() if p.grad is not None}
    for name, p in model.named_parameters():
        if name in unrolled:
            assert torch.allclose(unrolled[name], p.grad, atol=1e-6), name


@pytest.mark.parametrize("decoder,word_attention,layers,bridge", [
    ("bahdanau", "none", 1, "linear"), ("bahdanau", "attention", 2, "copy"), ("bahdanau", "gates", 2, "zero"),
    ("conditional", "none", 1, "zero"), ("conditional", "none", 3, "linear"),
])
@pytest.mark.parametrize("kernels", ["blas", "onednn"])
def test_unrolled_lstm_equals_the_step_path(decoder, word_attention, layers, bridge, kernels):
    """RecurrentDecoder's teacher-forced loop (UnrolledLSTM) against one nn.LSTM call per step:
    the queries, the final state and every gradient."""
    model, source, lengths, previous = model_and_batch(layers, bridge, "concat", decoder=decoder,
                                                       word_attention=word_attention)
    use_kernels(model, kernels)
    model.train()  # dropout 0: deterministic
    whole = model(source, lengths, previous)
    queries, attention_maps, state = step_by_step(model, source, lengths, previous)
    assert torch.allclose(whole.queries, queries, atol=1e-6)
    assert torch.allclose(whole.attention, attention_maps, atol=1e-6)
    encoded = model.encode(source, lengths)
    final = model.decoder(previous, encoded, model.init_state(encoded)).state
    assert all(torch.allclose(a, b, atol=1e-6) for a, b in zip(final.hidden, state.hidden))
    model.zero_grad()
    whole.log_probs.square().mean().backward()
    unrolled = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    model.output_layer(step_by_step(model, source, lengths, previous)[0]).log_softmax(-1).square().mean().backward()
    stepped = {name: p.grad for name, p in model.named_parameters() if p.grad is not None}
    assert unrolled.keys() == stepped.keys() and "decoder.rnn.weight_ih_l0" in unrolled
    for name in unrolled:
        assert torch.allclose(unrolled[name], stepped[name], atol=1e-6), name


@pytest.mark.parametrize("decoder", ["luong", "bahdanau", "conditional"])
def test_an_int8_decoders_teacher_forced_path_steps_its_own_lstm(decoder):
    """An int8 LSTM (wean.inference.quantize) has no float weights to write out: teacher-forced,
    as forced scores and the kernel choice's measure run it, it takes the step path's function."""
    from wean.inference.quantize import quantize

    model, source, lengths, previous = model_and_batch(2, "copy" if decoder == "luong" else "zero", "general",
                                                       decoder=decoder)
    model = quantize(model.eval(), "int8", torch.device("cpu"))
    with torch.no_grad():
        whole = model(source, lengths, previous)
        queries, attention_maps, _ = step_by_step(model, source, lengths, previous)
    assert torch.allclose(whole.queries, queries, atol=1e-6)
    assert torch.allclose(whole.attention, attention_maps, atol=1e-6)


def test_dropout_between_layers_is_applied_in_training_only():
    model, source, lengths, previous = model_and_batch(2, "copy", "general")
    model.decoder.rnn.dropout = 0.5
    model.train()
    torch.manual_seed(1)
    first = model(source, lengths, previous).queries
    torch.manual_seed(2)
    second = model(source, lengths, previous).queries
    assert not torch.allclose(first, second)
    model.eval()
    assert torch.allclose(model(source, lengths, previous).queries, step_by_step(model, source, lengths, previous)[0],
                          atol=1e-6)


@pytest.mark.parametrize("attention,input_feeding", [("general", True), ("concat", False)])
def test_the_coverage_vector_enters_the_attention_on_both_paths(attention, input_feeding):
    """See et al.'s coverage: the teacher-forced path equals the step path, the state carries the
    attention summed so far, and with w_c = 0 the attention is the one without coverage."""
    model, source, lengths, previous = model_and_batch(1, "linear", attention, input_feeding=input_feeding,
                                                       coverage=True)
    with torch.no_grad():  # U(-0.1, 0.1) barely moves this untrained model's near-uniform attention
        model.decoder.attention.coverage_projection.weight.normal_(0, 3)
    model.train()
    whole = model(source, lengths, previous)
    queries, attention_maps, state = step_by_step(model, source, lengths, previous)
    assert torch.allclose(whole.queries, queries, atol=1e-6)
    assert torch.allclose(whole.attention, attention_maps, atol=1e-6)
    assert torch.allclose(state.coverage, attention_maps.sum(1), atol=1e-6)
    plain, *_ = model_and_batch(1, "linear", attention, input_feeding=input_feeding)
    plain.load_state_dict({k: v for k, v in model.state_dict().items() if "coverage" not in k})
    plain.train()
    assert (plain(source, lengths, previous).attention - whole.attention).abs().max() > 1e-5  # float noise: 1e-7
    with torch.no_grad():
        model.decoder.attention.coverage_projection.weight.zero_()
    assert torch.allclose(plain(source, lengths, previous).attention, model(source, lengths, previous).attention,
                          atol=1e-6)


@pytest.mark.parametrize("decoder, attention, coverage, word_attention, memories", [
    ("luong", "concat", False, "none", 1), ("luong", "general", False, "none", 2), ("luong", "dot", False, "none", 1),
    ("luong", "general", True, "none", 1), ("bahdanau", "concat", False, "none", 1),
    ("bahdanau", "general", False, "none", 2), ("bahdanau", "general", False, "gates", 3),
    # the conditional decoder's own choice: general, its embeddings (12) are not the states (16)
    ("conditional", "general", False, "none", 2),
])
def test_the_onednn_training_path_gives_the_gradients_of_pytorchs_own(decoder, attention, coverage, word_attention,
                                                                     memories, monkeypatch):
    """oneDNN's products with the loop's weight gradients and its attention's keys' and values'
    gradients deferred, against PyTorch's own products on the same model and batch: an
    independent reference for the deferral (the step path above defers too). ``memories``: the
    states whose gradient is one product per backward (keys and values; one where they are the
    same tensor (dot), where coverage gives each step its own keys, or where a concat score reads
    the keys without a product; the word attention's values besides). Under autocast nothing is
    deferred."""
    taken = []
    take = DeferredMemoryGradient.take_gradient
    monkeypatch.setattr(DeferredMemoryGradient, "take_gradient", lambda self: taken.append(1) or take(self))
    grads = {}
    for kernel in ("blas", "onednn"):
        model, source, lengths, previous = model_and_batch(2, "copy" if decoder == "luong" else "zero", attention,
                                                           decoder=decoder, coverage=coverage,
                                                           word_attention=word_attention)
        use_kernels(model, kernel)
        model.train()
        model(source, lengths, previous).log_probs.square().mean().backward()
        grads[kernel] = {name: p.grad for name, p in model.named_parameters() if p.grad is not None}
        assert len(taken) == (memories if kernel == "onednn" else 0)
    assert grads["blas"].keys() == grads["onednn"].keys() and "decoder.rnn.weight_hh_l0" in grads["blas"]
    for name, grad in grads["blas"].items():
        torch.testing.assert_close(grads["onednn"][name], grad, rtol=1e-4, atol=1e-6, msg=name)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        model(source, lengths, previous).log_probs.float().square().mean().backward()
    assert len(taken) == memories


def test_a_training_forward_without_a_backward_leaves_no_cycle_for_the_garbage_collector():
    """The deferred gradients' anchors are let go once the loop is through: a forward whose
    backward never runs (an exception after it, a validation with gradients on) frees its graph
    as soon as its outputs go, not at the garbage collector's next pass."""
    kept = []
    model, source, lengths, previous = model_and_batch(2, "copy", "general")
    use_kernels(model, "onednn")
    model.train()
    original = deferred_gradients.DeferredGradient.__init__

    def tracked(self, tensor):
        original(self, tensor)
        kept.append(weakref.ref(self))

    gc.disable()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(deferred_gradients.DeferredGradient, "__init__", tracked)
            output = model(source, lengths, previous)
        assert len(kept) > 2  # the LSTM's and the attentional layer's weights, the keys and values
        del output
        assert all(reference() is None for reference in kept)
    finally:
        gc.enable()
