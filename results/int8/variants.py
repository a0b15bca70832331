"""How far int8 moves the shipped simplifier's outputs, by which layers are quantized: TurkCorpus
test (359 sentences, plain text, beam 5, no sentence splitting), each variant's outputs against the
fp32 outputs (results/controllable/shipped.turkcorpus-test.txt): identical lines and BLEU.

    OMP_NUM_THREADS=1 python results/int8/variants.py | tee results/int8/variants.txt

Variants: ``shipped`` is ``--quantize int8`` (LSTM weights one scale per tensor, linear layers one
per output row); ``lstm-per-row`` gives the LSTMs a scale per row too; ``linear-only`` leaves the
LSTMs in fp32 and quantizes only the linear layers (bridge, attention keys, combine).
"""

import warnings

import sacrebleu
import torch
from torch import nn
from torch.ao.quantization import default_dynamic_qconfig, per_channel_dynamic_qconfig, quantize_dynamic

from wean.evaluation import data_root
from wean.inference.generator import load
from wean.textio import read_lines

sources = read_lines(data_root() / "turkcorpus/case_detok/test.src")
fp32_outputs = read_lines("results/controllable/shipped.turkcorpus-test.txt")
LSTM_SCALES = {"shipped": default_dynamic_qconfig, "lstm-per-row": per_channel_dynamic_qconfig, "linear-only": None}

for variant, lstm_qconfig in LSTM_SCALES.items():
    generator = load(device="cpu")
    model = generator.model
    # the layers wean.inference.quantize leaves in fp32 (WEAN's output layer reads its weights directly)
    direct = {name for name, module in model.named_modules() if getattr(module, "reads_weights", False)}
    spec = {}
    for name, module in model.named_modules():
        if any(name.startswith(owner + ".") for owner in direct):
            continue
        if isinstance(module, nn.Linear):
            spec[name] = per_channel_dynamic_qconfig
        elif isinstance(module, nn.LSTM) and lstm_qconfig is not None:
            spec[name] = lstm_qconfig
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        generator.model = quantize_dynamic(model, spec, dtype=torch.qint8)
    outputs = [output.text for output in generator.generate(sources, plain_text=True, split_sentences=False)]
    identical = sum(a == b for a, b in zip(outputs, fp32_outputs))
    bleu = sacrebleu.corpus_bleu(outputs, [fp32_outputs], lowercase=True).score
    print(f"{variant:13s} quantized {', '.join(spec)}: identical {identical}/{len(sources)}, BLEU against fp32 {bleu:.2f}")
