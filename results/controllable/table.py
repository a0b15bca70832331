"""The results table of results/controllable/README.md, from metrics.json (and the simplifier
shipped before, from results/simplifier/metrics.json): python results/controllable/table.py"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
COLUMNS = [("sari", "SARI"), ("sari_add", "add"), ("sari_keep", "keep"), ("sari_del", "delete"), ("bleu", "BLEU"),
           ("fkgl", "FKGL"), ("identical_to_source", "% unchanged"), ("compression_ratio", "compression")]


def main() -> None:
    systems = json.loads((HERE / "metrics.json").read_text())
    before = json.loads((HERE.parent / "simplifier" / "metrics.json").read_text())
    systems = {"shipped before (results/simplifier)": before["wean-simplifier"], **systems}
    for benchmark in ("turkcorpus-test", "wikismall-test"):
        print(f"\n{benchmark}\n")
        print("| system | " + " | ".join(title for _, title in COLUMNS) + " |")
        print("|---|" + "---:|" * len(COLUMNS))
        for name, records in systems.items():
            if benchmark in records:
                scores = records[benchmark]["scores"]
                print(f"| {name} | " + " | ".join(f"{scores[key]:.2f}" for key, _ in COLUMNS) + " |")


if __name__ == "__main__":
    main()
