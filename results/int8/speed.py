"""Beam-5 sentences/s of the shipped simplifier in fp32 and int8, interleaved in one process, 3
rounds, on the first 200 TurkCorpus test sentences (plain text, generate() as a user calls it):

    OMP_NUM_THREADS=1 python results/int8/speed.py
"""

import statistics
import time

from wean.evaluation import data_root
from wean.inference.generator import load
from wean.textio import read_lines

sources = read_lines(data_root() / "turkcorpus/case_detok/test.src")[:200]
models = {"fp32": load(device="cpu"), "int8": load(device="cpu", quantization="int8")}
for model in models.values():  # warm-up
    model.generate(sources[:8], plain_text=True, split_sentences=False)
rates: dict[str, list[float]] = {name: [] for name in models}
for round_number in range(3):
    for name in ("fp32", "int8") if round_number % 2 == 0 else ("int8", "fp32"):
        start = time.perf_counter()
        models[name].generate(sources, plain_text=True, split_sentences=False)
        rates[name].append(len(sources) / (time.perf_counter() - start))
print({name: [round(rate, 1) for rate in values] for name, values in rates.items()})
print(f"median int8 / fp32: {statistics.median(rates['int8']) / statistics.median(rates['fp32']):.2f}")
