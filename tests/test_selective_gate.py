"""SEASS's selective gate on the encoder states."""

import torch

from wean.config import ModelConfig, section_config
from wean.models.model import build_model


def gated_model(encoder_type="lstm"):
    torch.manual_seed(0)
    config = ModelConfig(embedding_size=8)
    config.encoder = section_config("model.encoder", {"type": encoder_type, "hidden_size": 6, "selective_gate": True,
                                                      **({"bidirectional": True} if encoder_type == "lstm" else {})})
    config.decoder.hidden_size, config.decoder.bridge = 12, "zero" if encoder_type == "conv" else "linear"
    return build_model(config, 20, 20).eval()


SOURCE, LENGTHS = torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0]]), torch.tensor([4, 2])


def test_gate_is_sigmoid_of_state_and_sentence_vector():
    model = gated_model()
    raw = model.encoder(SOURCE, LENGTHS)
    gated = model.encode(SOURCE, LENGTHS)
    sentence = raw.final[0][-1]  # [last forward; last backward] of the top layer
    assert torch.equal(sentence[:, :6], raw.states[torch.arange(2), LENGTHS - 1, :6])  # forward: last word
    assert torch.equal(sentence[:, 6:], raw.states[:, 0, 6:])  # backward: first word
    layer = model.selective_gate.gate
    expected = raw.states[0, 1] * torch.sigmoid(layer(torch.cat([raw.states[0, 1], sentence[0]])))
    assert torch.allclose(gated.states[0, 1], expected, atol=1e-6)
    assert torch.all(gated.states[1, 2:] == 0)  # padding stays zero
    assert torch.all(gated.states.abs() <= raw.states.abs() + 1e-7)  # a gate only attenuates


def test_open_gate_changes_nothing_and_conv_encoders_are_gated_too():
    model = gated_model()
    with torch.no_grad():
        model.selective_gate.gate.weight.zero_()
        model.selective_gate.gate.bias.fill_(60.0)
    assert torch.allclose(model.encode(SOURCE, LENGTHS).states, model.encoder(SOURCE, LENGTHS).states)
    conv = gated_model("conv")
    raw, gated = conv.encoder(SOURCE, LENGTHS), conv.encode(SOURCE, LENGTHS)
    assert not torch.allclose(raw.attention_keys, gated.attention_keys)
    assert torch.all(gated.attention_keys[1, 2:] == 0)
