"""The LSTM encoder's two ways through a batch in training: one packed call, or one call per
source length (faster on the CPU where a batch holds few lengths); the same function either way."""

import pytest
import torch
from torch import nn

from synthetic import reverse_pairs, tiny_config, write_corpus
from wean.inference.generator import load
from wean.models.encoder import LSTMEncoder, LSTMEncoderConfig
from wean.training import Trainer


def _encoder(min_sources_per_length: int, layers: int = 2, bidirectional: bool = True) -> LSTMEncoder:
    torch.manual_seed(0)
    encoder = LSTMEncoder(nn.Embedding(50, 8, padding_idx=0),
                          LSTMEncoderConfig(hidden_size=16, layers=layers, bidirectional=bidirectional)).train()
    encoder.split_by_length, encoder.min_sources_per_length = True, min_sources_per_length
    return encoder


def _batch(lengths: list[int], width: int = 0):
    """Sources of these lengths, padded to ``width`` (at least the longest)."""
    lengths = torch.tensor(lengths)
    width = max(width, int(lengths.max()))
    source = torch.randint(1, 50, (len(lengths), width), generator=torch.Generator().manual_seed(1))
    source[torch.arange(width) >= lengths.unsqueeze(1)] = 0
    return source, lengths


def _splits(encoder: LSTMEncoder, source, lengths) -> bool:
    return encoder._splits_by_length(encoder.embedding(source), lengths)


def _run(encoder: LSTMEncoder, source, lengths):
    encoded = encoder(source, lengths)
    h, c = encoded.final
    loss = (encoded.states * torch.linspace(-1, 1, encoded.states.size(-1))).square().sum() + h.sum() + c.square().sum()
    return encoded, torch.autograd.grad(loss, list(encoder.parameters()))


@pytest.mark.parametrize("layers, bidirectional, width", [(2, True, 0), (1, False, 9)])
def test_one_call_per_length_is_the_packed_call_up_to_rounding(layers, bidirectional, width):
    source, lengths = _batch([5, 3, 5, 7, 3, 3, 5, 7] * 4, width)  # 32 sources, 3 lengths
    split, packed = _encoder(8, layers, bidirectional), _encoder(10**9, layers, bidirectional)
    assert _splits(split, source, lengths) and not _splits(packed, source, lengths)
    (ours, our_gradients), (theirs, their_gradients) = _run(split, source, lengths), _run(packed, source, lengths)
    assert ours.states.shape == theirs.states.shape == (32, source.size(1), split.output_size)
    torch.testing.assert_close(ours.states, theirs.states, rtol=0, atol=1e-6)
    assert not ours.states[lengths == 3, 3:].any()  # padded positions are zeros, as pad_packed_sequence's
    for ours_state, theirs_state in zip(ours.final, theirs.final):
        torch.testing.assert_close(ours_state, theirs_state, rtol=0, atol=1e-6)
    for name, ours_gradient, theirs_gradient in zip(
            [n for n, _ in split.named_parameters()], our_gradients, their_gradients):
        torch.testing.assert_close(ours_gradient, theirs_gradient, rtol=1e-5, atol=1e-5, msg=name)


def test_the_packed_call_serves_inference_and_batches_of_many_lengths():
    encoder = _encoder(8)
    mixed, mixed_lengths = _batch(list(range(2, 18)) * 2)  # 16 lengths among 32 sources
    assert not _splits(encoder, mixed, mixed_lengths)
    few, few_lengths = _batch([4, 6] * 16)
    assert _splits(encoder, few, few_lengths)
    with torch.no_grad():
        assert not _splits(encoder, few, few_lengths)
    assert not _splits(encoder.eval(), few, few_lengths)


def test_autocast_keeps_the_packed_call():
    source, lengths = _batch([4, 6] * 16)
    encoder = _encoder(8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert not _splits(encoder, source, lengths)


@pytest.mark.parametrize("kernels, split", [("blas", False), ("onednn", True), ("auto", True)])
def test_training_splits_by_length_unless_its_kernels_are_the_tables_floats(tmp_path, kernels, split):
    """training.kernels: blas keeps every float of the tables' runs: the packed call; auto splits
    whichever products it picks."""
    config = tiny_config(write_corpus(tmp_path / "data", train=40, valid=4), tmp_path / "model", kernels=kernels)
    assert Trainer(config).model.encoder.split_by_length is split
    assert LSTMEncoder.split_by_length is False  # a model that no trainer set up (search, a user's own loop)


def test_a_small_model_trained_with_a_call_per_length_learns_to_reverse_symbols(tmp_path, monkeypatch):
    # 10 epochs selected by loss: 0.995-1.0 on 8 seeds (6 by BLEU: 0.765-1.0)
    calls = []
    shipped = LSTMEncoder._run_by_length
    monkeypatch.setattr(LSTMEncoder, "_run_by_length", lambda self, *args: calls.append(1) or shipped(self, *args))
    data = write_corpus(tmp_path / "data")
    state = Trainer(tiny_config(data, tmp_path / "model", kernels="onednn", max_epochs=10,
                                selection_metric="loss")).train()
    assert len(calls) == state.updates  # batches of 32 sources of 5-12 symbols, grouped by length: each
    sources, targets = reverse_pairs(200, seed=7)
    outputs = [g.text for g in load(tmp_path / "model").generate(sources, beam=1)]
    assert sum(o == t for o, t in zip(outputs, targets)) / len(targets) >= 0.95
