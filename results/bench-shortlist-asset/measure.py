"""The shipped simplifier (issue 91's) with and without a vocabulary shortlist, in fp32 and int8:
for each setting, the share of outputs identical to fp32's over the full vocabulary, and
generate() sentences/s, interleaved rounds (each round times every setting once, in a rotated
order; medians over rounds, and the median of the per-round ratios to the full vocabulary).

``--pipeline plain``: beam 5 with the shipped control values and names constraint, no fallback
and no channel model (what the guard is measured against); ``guarded``: `wean simplify`'s
default pipeline, every output checked, lighter settings and the source as fallbacks.

    python results/bench-shortlist-asset/measure.py --model DIR --sentences FILE \
        --settings fp32:0 fp32:1000 int8:0 int8:1000 --rounds 3 [--role selection] [--pipeline plain] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch

import wean

SPLIT = Path(__file__).resolve().parent.parent / "asset-simplifier" / "split.json"
PIPELINES = {"plain": {"fallback": "none", "rerank": ""}, "guarded": {}}


def setting(text: str) -> tuple[str, int]:
    quantization, _, size = text.partition(":")
    if quantization not in ("fp32", "int8") or not size.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: give fp32:N or int8:N (N: shortlist size, 0 for none)")
    return quantization, int(size)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="the shipped model's copy, with its shortlist table")
    parser.add_argument("--sentences", type=Path, required=True)
    parser.add_argument("--role", help="only the TurkCorpus tune lines of this role in issue 91's split (e.g. selection)")
    parser.add_argument("--settings", type=setting, nargs="+", required=True)
    parser.add_argument("--pipeline", choices=sorted(PIPELINES), default="plain")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--outputs", type=Path, help="a folder: each setting's outputs of the last round, "
                        "as SYSTEM.BENCHMARK.txt")
    parser.add_argument("--benchmark", default="turkcorpus-test", help="the benchmark's name in those files")
    args = parser.parse_args()
    if ("fp32", 0) not in args.settings:
        parser.error("--settings needs fp32:0, the outputs the others are compared with")
    sentences = args.sentences.read_text(encoding="utf-8").splitlines()
    if args.role:
        roles = json.loads(SPLIT.read_text())["roles"]
        sentences = [sentences[number - 1] for number in roles[args.role]]
    models = {quantization: wean.load(args.model, device="cpu", quantization="none" if quantization == "fp32" else "int8")
              for quantization in {quantization for quantization, _ in args.settings}}
    options = dict(beam=5, plain_text=True, **PIPELINES[args.pipeline])
    for model in models.values():
        model.generate(sentences[:8], **options)  # warm-up
    rates: dict[tuple[str, int], list[float]] = {s: [] for s in args.settings}
    outputs: dict[tuple[str, int], list[str]] = {}
    for round_ in range(args.rounds):
        shift = round_ % len(args.settings)
        for quantization, size in args.settings[shift:] + args.settings[:shift]:
            start = time.perf_counter()
            generated = models[quantization].generate(sentences, shortlist=size, **options)
            rates[quantization, size].append(len(sentences) / (time.perf_counter() - start))
            outputs[quantization, size] = [g.text for g in generated]
    full, full_rates = outputs["fp32", 0], rates["fp32", 0]
    result = {"sentences": len(sentences), "threads": torch.get_num_threads(), "rounds": args.rounds,
              "pipeline": args.pipeline, "settings": {}}
    for quantization, size in args.settings:
        name = f"{quantization}:{size}"
        same = sum(a == b for a, b in zip(outputs[quantization, size], full)) / len(full)
        ratios = [r / f for r, f in zip(rates[quantization, size], full_rates)]
        median = statistics.median(rates[quantization, size])
        result["settings"][name] = {
            "sentences_per_second": rates[quantization, size], "median": median,
            "ratio_to_full": median / statistics.median(full_rates), "per_round_ratio_to_full": ratios,
            "median_of_round_ratios": statistics.median(ratios), "identical_to_fp32_full": same,
        }
        print(f"{quantization} shortlist {size or 'none':>5}: {median:6.1f} sentences/s "
              f"({statistics.median(ratios):.2f}x fp32 full, rounds {', '.join(f'{r:.2f}' for r in ratios)}), "
              f"{100 * same:.1f} % outputs identical to fp32 full's", flush=True)
        if args.outputs:
            args.outputs.mkdir(parents=True, exist_ok=True)
            system = f"shipped-{args.pipeline}-{quantization}" + (f"-shortlist-{size}" if size else "")
            (args.outputs / f"{system}.{args.benchmark}.txt").write_text("\n".join(outputs[quantization, size]) + "\n")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
