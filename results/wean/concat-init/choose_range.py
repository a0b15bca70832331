"""Choose WEAN concat's initialisation range from gpu-sweep.sh's runs, on validation data only.

Reads DIR/sweep-R.json (each run's validations.json: greedy BLEU on WikiLarge valid every 100
updates) and prints the R whose best BLEU over the validations every run reached is highest, the
smaller R on a tie; with --write FILE it also writes that R there, with the scores that chose it
(results/wean/converged/run.sh reads the first line for its concat rows).
Usage: python results/wean/concat-init/choose_range.py DIR [--write FILE]
"""

import argparse
import json
import sys
from pathlib import Path


def choose(histories: dict[float, list[dict]]) -> tuple[float, dict[float, float], int]:
    """-> (the chosen range, each range's best BLEU, the last update every run validated)."""
    if not histories or any(not history for history in histories.values()):
        raise ValueError("every range needs at least one validation")
    shared = set.intersection(*({record["updates"] for record in history} for history in histories.values()))
    if not shared:
        raise ValueError("the runs share no validated update")
    best = {r: max(record["bleu"] for record in history if record["updates"] in shared)
            for r, history in histories.items()}
    chosen = max(sorted(best), key=lambda r: best[r])  # max keeps the first, the smaller r, on a tie
    return chosen, best, max(shared)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", type=Path)
    parser.add_argument("--write", type=Path)
    args = parser.parse_args()
    histories = {}
    for path in sorted(args.dir.glob("sweep-*.json")):
        histories[float(path.stem.removeprefix("sweep-"))] = json.loads(path.read_text())
    try:
        chosen, best, last = choose(histories)
    except ValueError as error:
        sys.exit(f"{args.dir}: {error}")
    scores = ", ".join(f"r = {r:g}: {bleu:.2f}" for r, bleu in sorted(best.items()))
    if args.write:
        args.write.write_text(f"{chosen:g}\n# best valid BLEU by update {last} (WikiLarge valid, greedy): {scores}\n")
    print(f"{chosen:g} (best valid BLEU by update {last}: {scores})")


if __name__ == "__main__":
    main()
