"""What `training.kernels: auto` measures for the peers' benchmark model on this machine: a Trainer
on the peers' corpus (bench/peers) with an empty kernels cache, then the cache's entry (the
seconds of each kernel and the choice). From the repository root, one fresh process per measure:

    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/auto_measure.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, "bench")
from peers_setup import peers_config, peers_corpus  # noqa: E402

from wean.training import Trainer  # noqa: E402


def main() -> None:
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    work = Path(tempfile.mkdtemp(prefix="wean-auto-"))
    os.environ["WEAN_CACHE_DIR"] = str(work / "cache")
    peers_corpus(work)
    Trainer(peers_config(work, ["training.kernels=auto", "training.max_updates=1"]), overwrite=True,
            log=lambda *_, **__: None)
    print(json.dumps(json.loads((work / "cache" / "kernels.json").read_text()), indent=1))


if __name__ == "__main__":
    main()
