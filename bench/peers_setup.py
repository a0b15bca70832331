"""The peer benchmark's model and corpus (bench/peers) for wean's own benchmarks of it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from wean.config import Config, load_config

HERE = Path(__file__).resolve().parent
CONFIG = HERE / "peers" / "configs" / "wean.yaml"


def peers_corpus(folder: Path) -> None:
    """bench/peers' seeded synthetic corpus, written to ``folder``/data."""
    subprocess.run([sys.executable, str(HERE / "peers" / "corpus.py"), "--out", str(folder / "data")], check=True,
                   stdout=subprocess.DEVNULL)


def peers_config(folder: Path, sets: list[str] | None = None) -> Config:
    """bench/peers' wean config with its data in ``folder``/data and its run in ``folder``/run,
    ``sets`` (KEY=VALUE) over it; written to ``folder``/wean.yaml."""
    path = folder / "wean.yaml"
    path.write_text(CONFIG.read_text().replace("@DATA@", str(folder / "data")).replace("@RUN@", str(folder / "run")))
    return load_config(path, sets or [])
