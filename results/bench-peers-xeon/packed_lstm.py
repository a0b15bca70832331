"""The peers' encoder LSTM (2 layers, bidirectional, 128 per direction, inputs of 256) over a packed
batch of 64 sources, forward and backward, in training mode: every source of one length (23)
against lengths of 15 to 30 (about as many tokens), interleaved rounds, median milliseconds; and
which of PyTorch's LSTM kernels each ran (oneDNN's ``mkldnn_rnn_layer`` or not).

    OMP_NUM_THREADS=2 python results/bench-peers-xeon/packed_lstm.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

BATCHES = {"one length": [23] * 64, "lengths 15-30": [15 + (i * 7) % 16 for i in range(64)]}


def step(rnn: torch.nn.LSTM, lengths: list[int]):
    width = max(lengths)
    inputs = torch.randn(len(lengths), width, 256, requires_grad=True)

    def run() -> None:
        packed = pack_padded_sequence(inputs, torch.tensor(lengths), batch_first=True, enforce_sorted=False)
        output, _ = rnn(packed)
        states, _ = pad_packed_sequence(output, batch_first=True, total_length=width)
        states.sum().backward()

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    rnn = torch.nn.LSTM(256, 128, num_layers=2, bidirectional=True, batch_first=True, dropout=0.3).train()
    runs = {name: step(rnn, lengths) for name, lengths in BATCHES.items()}
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, run in runs.items():
            for _ in range(10):
                started = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - started)
    for name, run in runs.items():
        with torch.autograd.profiler.profile() as profile:
            run()
        onednn = any(event.key.startswith("aten::mkldnn_rnn_layer") for event in profile.key_averages())
        print(f"{name}: {sum(BATCHES[name])} tokens, {1000 * statistics.median(times[name]):.1f} ms, "
              f"oneDNN's LSTM: {'yes' if onednn else 'no'}")


if __name__ == "__main__":
    main()
