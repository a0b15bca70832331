"""Word attention with contextual gates (Wu et al., AAAI 2018) on the bahdanau decoder."""

from dataclasses import asdict

import pytest
import torch

from synthetic import reverse_pairs, tiny_config, write_corpus
from wean.config import ModelConfig, section_config
from wean.errors import WeanError
from wean.inference.generator import load
from wean.models.model import build_model
from wean.search import beam_search, greedy_search
from wean.training import Trainer


def model_with(variant: str, seed: int = 0):
    torch.manual_seed(seed)
    config = ModelConfig(embedding_size=12)
    config.encoder.hidden_size, config.encoder.bidirectional = 8, True
    config.decoder = section_config("model.decoder", {"type": "bahdanau", "word_attention": variant, "hidden_size": 10,
                                                      "bridge": "linear", "attention": "concat"})
    return build_model(config, 25, 25).eval()


SOURCE = torch.tensor([[5, 6, 7, 8, 9], [10, 11, 12, 0, 0]])
LENGTHS = torch.tensor([5, 3])
PREVIOUS = torch.tensor([[2, 5, 6], [2, 7, 8]])


@pytest.mark.parametrize("variant", ["none", "attention", "gates"])
def test_variants_mask_padding_and_keep_the_search_contract(variant):
    model = model_with(variant)
    output = model(SOURCE, LENGTHS, PREVIOUS, extras=True)
    logits, attention = output.log_probs, output.attention
    assert logits.shape == (2, 3, 25) and attention.shape == (2, 3, 5)
    assert torch.all(attention[1, :, 3:] == 0)
    if variant != "none":
        word = output.extras["word_attention"]
        assert torch.all(word[1, :, 3:] == 0) and torch.allclose(word.sum(-1), torch.ones(2, 3))
    if variant == "gates":
        gates = output.extras["gate"]
        assert gates.shape == (2, 3) and torch.all((gates > 0) & (gates < 1))
    greedy = greedy_search(model, SOURCE, LENGTHS, max_length=8)
    beam = beam_search(model, SOURCE, LENGTHS, beam_size=1, max_length=8)
    assert [h.tokens for h in beam] == [h.tokens for h in greedy]


def test_closed_gates_reduce_to_the_hidden_context_model():
    """o_i = 1 everywhere: only C^a c^a enters, exactly as in the baseline without word attention."""
    gated, baseline = model_with("gates"), model_with("none", seed=1)
    baseline.load_state_dict({k: v for k, v in gated.state_dict().items() if k in baseline.state_dict()})
    with torch.no_grad():
        gated.decoder.gate.weight.zero_()
        gated.decoder.gate.bias.fill_(60.0)  # sigmoid(60) == 1 in float32
    assert torch.allclose(gated(SOURCE, LENGTHS, PREVIOUS).log_probs, baseline(SOURCE, LENGTHS, PREVIOUS).log_probs, atol=1e-6)
    with torch.no_grad():
        gated.decoder.gate.bias.fill_(-60.0)  # now only the word context: the outputs change
    assert not torch.allclose(gated(SOURCE, LENGTHS, PREVIOUS).log_probs, baseline(SOURCE, LENGTHS, PREVIOUS).log_probs)


def test_word_attention_is_a_key_of_the_bahdanau_decoder_only(tmp_path):
    data = write_corpus(tmp_path / "data", train=20, valid=5)
    config = tiny_config(data, tmp_path / "m")
    assert not hasattr(config.model.decoder, "word_attention")  # luong's config
    config.model.decoder.type = "bahdanau"  # its keys are not there: refused, not built as a luong section
    with pytest.raises(WeanError, match="model.decoder holds the keys of decoder 'luong', not of its type 'bahdanau'"):
        config.validate()


def test_gated_word_attention_model_learns_to_reverse_symbols(tmp_path):
    data = write_corpus(tmp_path / "data")
    config = tiny_config(data, tmp_path / "model", max_epochs=8)
    config.model.decoder = section_config("model.decoder", {**asdict(config.model.decoder), "type": "bahdanau",
                                                            "word_attention": "gates"})
    config.model.init_range = 0  # PyTorch's defaults: uniform(-0.1, 0.1) reached 0.93 with two threads here
    Trainer(config).train()
    sources, targets = reverse_pairs(200, seed=7)
    outputs = [g.text for g in load(tmp_path / "model").generate(sources, beam=1)]
    assert sum(o == t for o, t in zip(outputs, targets)) / len(targets) >= 0.95


def test_attention_figures_of_a_word_attention_model(tmp_path, capsys):
    from wean.cli import main

    data = write_corpus(tmp_path / "data", train=40, valid=5)
    config = tiny_config(data, tmp_path / "model", max_updates=2)
    config.model.decoder = section_config("model.decoder", {**asdict(config.model.decoder), "type": "bahdanau",
                                                            "word_attention": "gates"})
    Trainer(config).train()
    maps = load(tmp_path / "model").attention_maps("a b c d e", "e d c b a")
    assert maps.target_tokens == ["e", "d", "c", "b", "a", "<eos>"] and maps.hidden.shape == (6, 5)
    o = maps.gates.unsqueeze(1)
    assert torch.allclose(maps.gated, o * maps.hidden + (1 - o) * maps.word)
    assert torch.allclose(maps.gated.sum(1), torch.ones(6), atol=1e-5)
    out = tmp_path / "figures"
    assert main(["attention", "--model", str(tmp_path / "model"), "--source", "a b c d e", "--out-dir", str(out)]) == 0
    names = sorted(p.name for p in out.iterdir())
    assert names == ["attention.png", "gated_attention.png", "gates.png", "word_attention.png"]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in out.iterdir())
