"""On which scale a system's outputs miss "good" (every scale's mean rating at least 4), on one
blind sheet: per system, how many items fall under 4 on each scale, on that scale alone, and how
many reach 4 in simplicity.

    python results/asset-simplifier/good_lost.py rating-ship
"""

from __future__ import annotations

import argparse
import csv
import json

from score_lines import HERE

SCALES = ("adequacy", "fluency", "simplicity")
GOOD = 4.0  # `wean rate score`'s good: every scale's mean rating at least this


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sheet", help="a sheet folder of this experiment, its raters' files in it")
    args = parser.parse_args()
    sheet = HERE / args.sheet
    ratings: dict[str, list[dict]] = {}
    for rater in sorted(sheet.glob("rater-*.csv")):
        with rater.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                ratings.setdefault(row["candidate"], []).append(row)
    report: dict[str, dict] = {}
    for item in json.loads((sheet / "key.json").read_text())["items"]:
        for candidate, systems in item["candidates"].items():
            means = {s: sum(int(r[s]) for r in ratings[candidate]) / len(ratings[candidate]) for s in SCALES}
            low = [s for s in SCALES if means[s] < GOOD]
            for system in systems:
                counts = report.setdefault(system, {"items": 0, "good": 0, "simplicity_at_least_4": 0,
                                                    **{f"{s}_under_4": 0 for s in SCALES},
                                                    **{f"only_{s}_under_4": 0 for s in SCALES}})
                counts["items"] += 1
                counts["good"] += not low
                counts["simplicity_at_least_4"] += "simplicity" not in low
                for scale in low:
                    counts[f"{scale}_under_4"] += 1
                if len(low) == 1:
                    counts[f"only_{low[0]}_under_4"] += 1
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
