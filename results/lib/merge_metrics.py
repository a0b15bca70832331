"""Adds to a folder's metrics.json the records another copy of it holds for outputs written since
the copy was taken (`lab/gpu.sh import`): a record moves when its hypothesis file lies
beside the copy; every other record of either file stays as it is.

    python results/lib/merge_metrics.py PACKED/results/X/metrics.json results/X/metrics.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def merge(packed: dict, local: dict, written: set[str]) -> list[str]:
    """Moves into ``local`` each record of ``packed`` whose hypothesis file is in ``written``;
    returns the "system benchmark" pairs it moved."""
    moved = []
    for system, records in packed.items():
        for benchmark, record in records.items():
            if record["inputs"]["hypothesis"]["path"] in written:
                local.setdefault(system, {})[benchmark] = record
                moved.append(f"{system} {benchmark}")
    return moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packed", type=Path)
    parser.add_argument("local", type=Path)
    args = parser.parse_args()
    written = {path.name for path in args.packed.parent.iterdir()}
    local = json.loads(args.local.read_text()) if args.local.exists() else {}
    moved = merge(json.loads(args.packed.read_text()), local, written)
    args.local.write_text(json.dumps(local, indent=1, ensure_ascii=False) + "\n")
    print(f"{args.local}: {len(moved)} record(s) from the GPU: {', '.join(moved) or 'none'}")


if __name__ == "__main__":
    main()
