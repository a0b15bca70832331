import math

import pytest
import torch
from torch import nn

from wean.config import ModelConfig
from wean.data.vocabulary import BOS_ID, EOS_ID
from wean.models.model import build_model
from wean.search import beam_search, block_repeated_ngrams, greedy_search

from synthetic import A, B, C, ScriptedModel


SOURCE, LENGTHS = torch.tensor([[A, B]]), torch.tensor([2])


def test_beam_finds_a_more_probable_output_than_greedy():
    # Greedy takes A (0.6) and is then stuck with at best 0.4: 0.24 in all.
    # Beam search also keeps B (0.4), after which <eos> is nearly certain: 0.396.
    model = ScriptedModel({BOS_ID: {A: 0.6, B: 0.4}, A: {EOS_ID: 0.4, C: 0.3, B: 0.3}, B: {EOS_ID: 0.99, C: 0.01},
                           C: {EOS_ID: 1.0}})
    greedy = greedy_search(model, SOURCE, LENGTHS, max_length=5)[0]
    beam = beam_search(model, SOURCE, LENGTHS, beam_size=2, max_length=5)[0]
    assert greedy.tokens == [A] and greedy.log_prob == pytest.approx(math.log(0.24), abs=1e-4)
    assert beam.tokens == [B] and beam.log_prob == pytest.approx(math.log(0.396), abs=1e-4)
    assert beam.log_prob > greedy.log_prob


def test_length_penalty_and_min_length_change_the_winner():
    # "A <eos>" = 0.5 * 0.5; "B C <eos>" = 0.5 * 0.45 * 1.0: shorter is more probable,
    # but per token (alpha = 1) the longer one wins.
    model = ScriptedModel({BOS_ID: {A: 0.5, B: 0.5}, A: {EOS_ID: 0.5, C: 0.5}, B: {C: 0.45, EOS_ID: 0.55},
                           C: {EOS_ID: 1.0}})
    plain = beam_search(model, SOURCE, LENGTHS, beam_size=3, max_length=6)[0]
    normalized = beam_search(model, SOURCE, LENGTHS, beam_size=3, max_length=6, length_penalty=1.0)[0]
    assert len(plain.tokens) == 1
    assert len(normalized.tokens) == 2
    assert normalized.score == pytest.approx(normalized.log_prob / 3)
    long_enough = beam_search(model, SOURCE, LENGTHS, beam_size=3, max_length=6, min_length=2)[0]
    assert len(long_enough.tokens) >= 2


def test_max_length_ends_every_hypothesis():
    model = ScriptedModel({BOS_ID: {A: 1.0}, A: {A: 1.0}})
    # <eos> is as unlikely after one A as after three (the forced <eos> keeps its log-probability,
    # and the A's cost nothing in float32): min_length keeps the outputs that end early out of the tie
    result = beam_search(model, SOURCE, LENGTHS, beam_size=3, max_length=4, min_length=3)[0]
    assert result.tokens == [A, A, A]  # the fourth step may only be <eos>
    assert greedy_search(model, SOURCE, LENGTHS, max_length=4)[0].tokens == [A, A, A]


def test_ngram_blocking():
    history = torch.tensor([[A, B, A, C, A]])
    log_probs = torch.zeros(1, 7)
    block_repeated_ngrams(log_probs, history, 2)
    # after the last "A", the bigrams "A B" and "A C" already occurred
    assert torch.isinf(log_probs[0, B]) and torch.isinf(log_probs[0, C])
    assert not torch.isinf(log_probs[0, A])
    model = ScriptedModel({BOS_ID: {A: 0.9, B: 0.1}, A: {B: 0.9, EOS_ID: 0.1}, B: {A: 0.9, EOS_ID: 0.1}})
    free = beam_search(model, SOURCE, LENGTHS, beam_size=2, max_length=8, min_length=6)[0]
    blocked = beam_search(model, SOURCE, LENGTHS, beam_size=2, max_length=8, min_length=6, block_ngram_repeat=2)[0]
    assert free.tokens[:4] == [A, B, A, B]
    bigrams = list(zip(blocked.tokens, blocked.tokens[1:]))
    assert len(bigrams) == len(set(bigrams))


@pytest.mark.parametrize("input_feeding, bidirectional", [(False, False), (True, True)])
def test_beam_of_width_one_is_greedy_on_a_real_model(input_feeding, bidirectional):
    torch.manual_seed(3)
    config = ModelConfig(embedding_size=16)
    config.encoder.hidden_size, config.encoder.bidirectional = 16, bidirectional
    config.decoder.hidden_size, config.decoder.input_feeding, config.decoder.bridge = 16, input_feeding, "linear"
    model = build_model(config, 30, 30).eval()
    source = torch.randint(4, 30, (6, 9))
    lengths = torch.tensor([9, 8, 7, 5, 3, 1])
    source[torch.arange(9) >= lengths.unsqueeze(1)] = 0
    greedy = greedy_search(model, source, lengths, max_length=12)
    beam = beam_search(model, source, lengths, beam_size=1, max_length=12)
    assert [h.tokens for h in beam] == [h.tokens for h in greedy]
    assert [h.log_prob for h in beam] == pytest.approx([h.log_prob for h in greedy], abs=1e-4)
    # wider beams never find a worse raw score than greedy
    wide = beam_search(model, source, lengths, beam_size=4, max_length=12)
    assert all(w.log_prob >= g.log_prob - 1e-4 for w, g in zip(wide, greedy))
    # attention rows cover each output token and <eos>, over the real source only
    assert all(h.attention.shape == (len(h.tokens) + 1, int(n)) for h, n in zip(beam, lengths))


@pytest.mark.parametrize("length_penalty", [0.0, 1.0])
def test_beam_attention_is_the_attention_of_the_hypothesis_it_returns(length_penalty):
    """Each returned hypothesis's attention rows are those the model gives when it is teacher-forced
    with that hypothesis, and its score is the sum of the log-probabilities of its tokens and <eos>.
    (Here the winners stay in the first beam; the next test makes one change beams.)"""
    torch.manual_seed(5)
    config = ModelConfig(embedding_size=16)
    config.encoder.hidden_size = config.decoder.hidden_size = 16
    config.decoder.input_feeding, config.decoder.layers, config.encoder.layers = True, 1, 1
    model = build_model(config, 30, 30).eval()
    source = torch.randint(4, 30, (5, 8))
    lengths = torch.tensor([8, 6, 5, 3, 2])
    source[torch.arange(8) >= lengths.unsqueeze(1)] = 0
    hypotheses = beam_search(model, source, lengths, beam_size=4, max_length=10, length_penalty=length_penalty)
    for i, hypothesis in enumerate(hypotheses):
        n = int(lengths[i])
        previous = torch.tensor([[BOS_ID] + hypothesis.tokens])
        with torch.no_grad():
            output = model(source[i : i + 1, :n], lengths[i : i + 1], previous)
        assert torch.allclose(hypothesis.attention, output.attention[0], atol=1e-5)
        log_probs = output.log_probs[0]
        expected = log_probs.gather(1, torch.tensor(hypothesis.tokens + [EOS_ID]).unsqueeze(1)).sum()
        assert hypothesis.log_prob == pytest.approx(float(expected), abs=1e-4)


class PointingModel(ScriptedModel):
    """ScriptedModel whose attention at each step points at source position (previous word mod
    source length): the attention rows spell out the path a hypothesis took."""

    def decode_step(self, previous, encoded, state):
        step = super().decode_step(previous, encoded, state)
        lengths = encoded.mask.sum(1)
        step.attention = nn.functional.one_hot(previous % lengths, encoded.mask.size(1)).float()
        return step


def test_beam_attention_follows_a_hypothesis_that_changed_beams():
    # After step 1, "B C" (0.4) overtakes "A A" / "A C" (0.3): the winner sat in the second beam
    # at step 1 and in the first at step 2, and its rows must come from each.
    model = PointingModel({BOS_ID: {A: 0.6, B: 0.4}, A: {A: 0.5, C: 0.5}, B: {C: 1.0}, C: {EOS_ID: 1.0}})
    best = beam_search(model, SOURCE, LENGTHS, beam_size=2, max_length=5)[0]
    assert best.tokens == [B, C]
    previous = [BOS_ID, B, C]  # positions 0, 1, 0 of the two-token source
    assert best.attention.tolist() == [[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]] == \
        [[float(p % 2 == i) for i in range(2)] for p in previous]


def test_generate_cuts_its_model_calls_by_length_so_one_long_input_runs_alone():
    from wean.inference.pipeline import length_chunks

    lengths = [3, 4, 3, 700, 4, 6, 7]
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    # no sentence padded past twice its length: 7 would pad a 3 to 7, and 700 anything
    assert length_chunks(order, lengths, batch_size=32) == [[0, 2, 1, 4, 5], [6], [3]]
    assert length_chunks(order, [4] * 7, batch_size=3) == [order[:3], order[3:6], order[6:]]
    assert [i for chunk in length_chunks(order, lengths, 2) for i in chunk] == order


class CountingModel(nn.Module):
    """Wraps a model and records how many rows each decode step ran."""

    def __init__(self, model):
        super().__init__()
        self.model, self.rows = model, []

    def encode(self, source, lengths):
        return self.model.encode(source, lengths)

    def init_state(self, encoded):
        return self.model.init_state(encoded)

    def decode_step(self, previous, encoded, state):
        self.rows.append(previous.size(0))
        return self.model.decode_step(previous, encoded, state)


@pytest.mark.parametrize("beam", [1, 3])
def test_an_abandoned_row_leaves_the_search_and_the_others_keep_their_outputs(beam):
    """Row 1 is abandoned after step 2: from step 3 on no decode step runs it, its result is None,
    and every other row gets the output it gets when nothing is abandoned."""
    torch.manual_seed(3)
    config = ModelConfig(embedding_size=16)
    config.encoder.hidden_size = config.decoder.hidden_size = 16
    model = CountingModel(build_model(config, 30, 30).eval())
    source = torch.randint(4, 30, (4, 7))
    lengths = torch.tensor([7, 7, 6, 5])
    source[torch.arange(7) >= lengths.unsqueeze(1)] = 0
    ban_eos = dict(max_length=12, min_length=12)  # every row searches all 12 steps: counts are exact
    search = (lambda **kw: greedy_search(model, source, lengths, **ban_eos, **kw)) if beam == 1 else \
        (lambda **kw: beam_search(model, source, lengths, beam_size=beam, **ban_eos, **kw))
    full = search()
    assert model.rows == [4 * beam] * 12
    model.rows.clear()
    asked = []

    def abandoned(live):
        asked.append(live)
        return [1] if len(asked) >= 3 else []

    partial = search(abandoned=abandoned)
    assert partial[1] is None
    assert [h.tokens for i, h in enumerate(partial) if i != 1] == [h.tokens for i, h in enumerate(full) if i != 1]
    assert model.rows == [4 * beam] * 3 + [3 * beam] * 9
    assert asked == [[0, 1, 2, 3]] * 3 + [[0, 2, 3]] * 9  # asked about the rows still searched only
    # a row abandoned before the first step runs one step only (the encoder ran before the check)
    model.rows.clear()
    assert [h is None for h in search(abandoned=lambda live: live)] == [True] * 4
    assert model.rows == [4 * beam]
