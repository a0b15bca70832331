"""Search with the model's decoder step compiled by ``torch.compile`` (inductor, which writes C++
kernels on a CPU) against the same step run eagerly: sentences/s of ``generate`` (beam 5, plain
text, batches of 32 sorted by length) on the first ``--sentences`` lines, interleaved rounds, and
the share of outputs that are the same, over every line of the file.

    python bench/compiled_step.py --model src/wean/pretrained/simplifier \
        --sentences-file $WEAN_DATA_ROOT/turkcorpus/case_detok/test.src [--rounds 5] [--out DIR]
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings
from pathlib import Path

import torch

from timing import interleaved, load_average, rates, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--sentences-file", type=Path, required=True)
    parser.add_argument("--sentences", type=int, default=160)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, help="write metrics.json here")
    args = parser.parse_args()
    import wean

    warnings.simplefilter("ignore")
    lines = [line.strip() for line in args.sentences_file.read_text(encoding="utf-8").splitlines()]
    generator = wean.load(args.model)
    eager_step = generator.model.decode_step
    compiled_step = torch.compile(eager_step, dynamic=True)

    def run(step, sentences):
        generator.model.decode_step = step
        return [g.text for g in generator.generate(sentences, beam=5, plain_text=True, split_sentences=False)]

    start = time.perf_counter()
    run(compiled_step, lines[:32])
    compile_seconds = time.perf_counter() - start
    run(eager_step, lines[:32])  # the same warm-up for the eager step
    timed = lines[: args.sentences]
    times = interleaved({"eager": lambda: run(eager_step, timed), "compiled": lambda: run(compiled_step, timed)},
                        args.rounds)
    eager, compiled = run(eager_step, lines), run(compiled_step, lines)
    record = {
        "model": str(args.model), "sentences": len(timed), "threads": torch.get_num_threads(),
        "machine": platform.processor() or platform.machine(), "loadavg_at_start": load_average(),
        "compile_and_first_batch_seconds": compile_seconds,
        "identical_outputs": sum(a == b for a, b in zip(eager, compiled)), "outputs": len(lines),
        "seconds": times, **rates(times, len(timed), "eager"),
    }
    report(record, args.out)


if __name__ == "__main__":
    main()
