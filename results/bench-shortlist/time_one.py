"""One process's beam-5 sentences/s of a model with --shortlist N (0: the full vocabulary), plain
text, one thread, after a warm-up: how results/bench-shortlist compared two checkouts, each run with
PYTHONPATH=CHECKOUT/src, alternating.

    PYTHONPATH=../old/src python results/bench-shortlist/time_one.py SOURCES MODEL_DIR N
"""

import sys
import time

import torch

import wean

torch.set_num_threads(1)
sources = open(sys.argv[1], encoding="utf-8").read().splitlines()
model = wean.load(sys.argv[2], device="cpu")
size = int(sys.argv[3])
model.generate(sources[:8], beam=5, plain_text=True, shortlist=size)
start = time.perf_counter()
model.generate(sources, beam=5, plain_text=True, shortlist=size)
print(f"{size} {len(sources) / (time.perf_counter() - start):.2f}")
