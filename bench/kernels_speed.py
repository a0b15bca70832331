"""Search with a model's float32 products through oneDNN (``--kernels onednn``)
against PyTorch's own products (``--kernels blas``): sentences/s of ``generate`` as a user calls
it (the model's generation defaults, batches of 32) on the first ``--sentences`` lines,
interleaved rounds, and how many outputs are the same, over every line of the file.

    python bench/kernels_speed.py --model src/wean/pretrained/simplifier \
        --sentences-file $WEAN_DATA_ROOT/turkcorpus/case_detok/test.src [--no-plain-text] [--rounds 5] \
        [--out DIR --benchmark turkcorpus-test]
"""

from __future__ import annotations

import argparse
import platform
import warnings
from pathlib import Path

import torch

from timing import interleaved, load_average, rates, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--sentences-file", type=Path, required=True)
    parser.add_argument("--plain-text", action=argparse.BooleanOptionalAction, default=True,
                        help="read the file as plain text (TurkCorpus) or tokenized (WikiSmall)")
    parser.add_argument("--sentences", type=int, default=160)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="write metrics.json and each system's outputs here")
    parser.add_argument("--benchmark", default="test", help="the file's name in the outputs' names: KERNELS.BENCHMARK.txt")
    args = parser.parse_args()
    import wean

    warnings.simplefilter("ignore")  # the fallback's per-sentence warnings
    lines = [line.strip() for line in args.sentences_file.read_text(encoding="utf-8").splitlines()]
    generators = {kernels: wean.load(args.model, kernels=kernels) for kernels in ("blas", "onednn")}

    def run(kernels, sentences):
        return [g.text for g in generators[kernels].generate(sentences, plain_text=args.plain_text,
                                                             split_sentences=False, batch_size=32)]

    for kernels in generators:  # warm-up: first calls allocate and load the fallback's channel model
        run(kernels, lines[:32])
    timed = lines[: args.sentences]
    times = interleaved({kernels: (lambda k=kernels: run(k, timed)) for kernels in generators}, args.rounds)
    outputs = {kernels: run(kernels, lines) for kernels in generators}
    differing = [i + 1 for i, (a, b) in enumerate(zip(outputs["blas"], outputs["onednn"])) if a != b]
    record = {
        "model": str(args.model), "benchmark": args.benchmark, "plain_text": args.plain_text,
        "sentences": len(timed), "threads": torch.get_num_threads(),
        "machine": platform.processor() or platform.machine(), "loadavg_at_start": load_average(),
        "identical_outputs": len(lines) - len(differing), "outputs": len(lines), "differing_lines": differing,
        "seconds": times, **rates(times, len(timed), "blas"),
    }
    report(record, args.out)
    if args.out:
        for kernels, texts in outputs.items():
            (args.out / f"{kernels}.{args.benchmark}.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")


if __name__ == "__main__":
    main()
