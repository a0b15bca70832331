"""int8 dynamic quantization for CPU inference (wean/inference/quantize.py)."""

import pytest
import torch
from torch import nn
from torch.ao.nn.quantized import dynamic as quantized

from synthetic import reverse_pairs
from wean.cli import main
from wean.errors import WeanError
from wean.inference.generator import load
from wean.inference.quantize import quantize


def test_int8_quantizes_the_lstms_and_linear_layers_and_keeps_the_outputs(model_dir):
    exact, int8 = load(model_dir, device="cpu"), load(model_dir, device="cpu", quantization="int8")
    assert isinstance(int8.model.encoder.rnn, quantized.LSTM)
    assert isinstance(int8.model.output_layer.projection, quantized.Linear)
    assert not any(isinstance(m, (quantized.LSTM, quantized.Linear)) for m in exact.model.modules())
    sources, _ = reverse_pairs(100, seed=7)
    same = [a.text == b.text for a, b in zip(exact.generate(sources, beam=2), int8.generate(sources, beam=2))]
    assert sum(same) >= 90  # int8 weights round: a few outputs may change, not most


def test_the_wean_output_layer_keeps_its_fp32_projection():
    """WEAN scores the embeddings through its projection's weight tensor, which int8 would remove."""
    simplifier = load(device="cpu", quantization="int8")
    wean_layer = simplifier.model.output_layer.vocabulary  # inside the pointer-generator
    assert isinstance(wean_layer.projection, nn.Linear)  # an fp32 layer, whatever its kernels
    assert isinstance(simplifier.model.decoder.rnn, quantized.LSTM)
    assert simplifier.generate(["The cat sat on the mat."])[0].text


def test_int8_is_refused_off_the_cpu_and_by_name(model_dir, capsys):
    with pytest.raises(WeanError, match="runs on the CPU"):
        quantize(nn.Linear(2, 2), "int8", torch.device("cuda"))
    with pytest.raises(WeanError, match="choose one of none, int8"):
        quantize(nn.Linear(2, 2), "int4", torch.device("cpu"))
    with pytest.raises(SystemExit):
        main(["generate", "--model", str(model_dir), "--quantize", "int4"])
    assert "invalid choice: 'int4'" in capsys.readouterr().err
