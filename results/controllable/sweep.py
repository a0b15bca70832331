"""SARI, BLEU and % unchanged as each control value is swept, the others held at the model's
defaults, on the TurkCorpus tune sentences that `wean tune-control` used (validation data: the
test sets are not read). Writes sweep.json and sweep.png.

    python results/controllable/sweep.py --model RUN_DIR --out-dir results/controllable
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from wean.control import max_value  # noqa: E402
from wean.evaluation import evaluate  # noqa: E402
from wean.inference.generator import load  # noqa: E402
from wean.inference.tune_control import tuning_set  # noqa: E402

VALUES = [0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, required=True, help="model directory, after wean tune-control")
    parser.add_argument("--out-dir", type=Path, required=True)
    parser.add_argument("--beam", type=int, help="default: the model's")
    parser.add_argument("--plot-only", action="store_true", help="redraw sweep.png from OUT_DIR/sweep.json")
    args = parser.parse_args()
    if args.plot_only:
        plot(json.loads((args.out_dir / "sweep.json").read_text()), args.out_dir / "sweep.png")
        return
    generator = load(args.model)
    tuning = json.loads((args.model / "control-tuning.json").read_text())
    sources, references, settings = tuning_set(tuning["benchmark"], [n - 1 for n in tuning["lines"]])
    defaults = generator.control.defaults
    sweep = {"benchmark": tuning["benchmark"], "sentences": len(sources), "defaults": defaults, "curves": {}}
    for name in generator.control.attributes:
        curve = []
        for value in VALUES:
            if value > max_value(name):
                continue
            outputs = [g.text for g in generator.generate(
                sources, plain_text=True, split_sentences=False, control={**defaults, name: value}, beam=args.beam
            )]
            scores = evaluate(outputs, sources, references, settings).scores
            curve.append({"value": value, "sari": scores["sari"], "bleu": scores["bleu"],
                          "identical": scores["identical_to_source"], "compression": scores["compression_ratio"]})
            print(f"{name} {value:.2f}: SARI {scores['sari']:.2f} BLEU {scores['bleu']:.2f} "
                  f"unchanged {scores['identical_to_source']:.1f} %", flush=True)
        sweep["curves"][name] = curve
    args.out_dir.mkdir(parents=True, exist_ok=True)
    (args.out_dir / "sweep.json").write_text(json.dumps(sweep, indent=1) + "\n")
    plot(sweep, args.out_dir / "sweep.png")


def plot(sweep: dict, path: Path) -> None:
    figure, axes = plt.subplots(2, 1, figsize=(6, 6), sharex=True)
    for name, curve in sweep["curves"].items():
        values = [point["value"] for point in curve]
        axes[0].plot(values, [point["sari"] for point in curve], marker="o", label=name)
        axes[1].plot(values, [point["identical"] for point in curve], marker="o", label=name)
    axes[0].set_ylabel("SARI")
    axes[1].set_ylabel("% outputs unchanged")
    axes[1].set_xlabel("control value asked for (others at the tuned defaults)")
    axes[0].legend()
    axes[0].set_title(f"{sweep['benchmark']}, {sweep['sentences']} sentences (validation)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)


if __name__ == "__main__":
    main()
