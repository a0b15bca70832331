"""The seed table of results/wean/README.md, from metrics.json (which `wean test` writes).

    python results/wean/seed_table.py [--seeds 1 2 3]

For each benchmark and metric: each seed's score of Seq2seq and WEAN, the WEAN - Seq2seq gap
per seed, and the mean over seeds. A seed whose outputs are not yet tested is left out, with a
note on stderr.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lib"))
from seed_table import tested_seeds  # noqa: E402  (results/lib/seed_table.py)

METRICS = {  # benchmark -> (metric key in metrics.json, label), the paper's BLEU setting first
    "turkcorpus-test-lower": [("sari", "SARI"), ("multi_bleu", "BLEU (multi-bleu)"), ("identical_to_source", "unchanged %")],
    "turkcorpus-test": [("sari", "SARI"), ("bleu", "BLEU (sacreBLEU, lc)"), ("identical_to_source", "unchanged %")],
    "wikismall-test": [("sari", "SARI"), ("multi_bleu", "BLEU (multi-bleu)"), ("identical_to_source", "unchanged %")],
}
MODELS = ("seq2seq", "wean")


def system_name(model: str, seed: int) -> str:
    return model if seed == 1 else f"{model}-seed{seed}"  # run.sh's suffix


def table(metrics: dict, seeds: list[int]) -> str:
    rows = [
        "| benchmark | metric | " + " | ".join(f"seed {s}: Seq2seq / WEAN / gap" for s in seeds) + " | mean gap |",
        "|---|---|" + "---:|" * (len(seeds) + 1),
    ]
    for benchmark, columns in METRICS.items():
        for key, label in columns:
            cells, gaps = [], []
            for seed in seeds:
                seq2seq, wean = (metrics[system_name(m, seed)][benchmark]["scores"][key] for m in MODELS)
                gaps.append(wean - seq2seq)
                cells.append(f"{seq2seq:.2f} / {wean:.2f} / {wean - seq2seq:+.2f}")
            rows.append(f"| {benchmark} | {label} | " + " | ".join(cells) + f" | {sum(gaps) / len(gaps):+.2f} |")
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--metrics", type=Path, default=Path(__file__).parent / "metrics.json")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args()
    metrics = json.loads(args.metrics.read_text())
    tested = tested_seeds(args.seeds, lambda seed: [
        system_name(m, seed) for m in MODELS if system_name(m, seed) not in metrics
    ], f"not in {args.metrics}")
    if not tested:
        sys.exit(f"{args.metrics}: no seed with both systems tested")
    print(table(metrics, tested))


if __name__ == "__main__":
    main()
