"""Shared fixtures. Tests that need ``../shared`` (benchmark data, EASSE reference values) skip
with a reason where it is absent, as in a user's fresh clone; CI has it."""

from __future__ import annotations

import inspect
import json
import os
import tempfile
from pathlib import Path

import pytest
import torch

# One thread per test process, here and in the commands tests start: the tests' models are tiny,
# and where other work holds the cores a second OpenMP thread spins at every operation's barrier.
os.environ["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS") or "1"
torch.set_num_threads(int(os.environ["OMP_NUM_THREADS"]))

# kernels: auto measures each model once and caches the choice: in a folder of the test process's
# own, not the user's cache
os.environ["WEAN_CACHE_DIR"] = tempfile.mkdtemp(prefix="wean-test-cache-")

SHARED = Path(__file__).resolve().parents[2] / "shared"
if (SHARED / "data").is_dir():  # this repository's data layout, as the Makefile sets it
    os.environ.setdefault("WEAN_DATA_ROOT", str(SHARED / "data"))


def _require(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} not found: these tests need the shared data beside the checkout")
    return path


@pytest.fixture(scope="session")
def parity_dir() -> Path:
    return _require(SHARED / "metric-parity")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    return _require(SHARED / "data")


def parity_records(metric_prefix: str) -> list[dict]:
    """EASSE reference records for parametrizing; empty (so the test is skipped) without shared/."""
    path = SHARED / "metric-parity" / "expected.json"
    if not path.exists():
        return []
    return [r for r in json.loads(path.read_text()) if r["metric"].startswith(metric_prefix)]


def record_id(record: dict) -> str:
    index = f"[{record['index']}]" if "index" in record else ""
    case = "lc" if record["lowercase"] else "cased"
    return f"{record['testset']}-{record['system']}{index}-{record['variant']}-{case}-{record['metric']}"


@pytest.fixture(scope="session")
def control_model(tmp_path_factory) -> Path:
    """A tiny model trained with a length-ratio control token on the keep-a-prefix task (shared by
    the control, CLI and server tests: training it once is the slow part)."""
    from synthetic import control_config, write_prefix_corpus
    from wean.training import Trainer

    folder = tmp_path_factory.mktemp("control")
    data = write_prefix_corpus(folder / "data", train=2000, valid=60)
    # 20 epochs, the learning rate halved only after 3 validations without a better loss: it
    # learns its control token on each of 8 seeds, with either of the encoder's paths (10 epochs
    # halving after every one failed test_a_tiny_model_obeys_its_length_token on 4 seeds of 6)
    Trainer(control_config(data, folder / "model", max_epochs=20, lr_patience=3, early_stopping_patience=100,
                           selection_metric="loss")).train()
    return folder / "model"


@pytest.fixture(scope="session")
def model_dir(tmp_path_factory) -> Path:
    """A tiny model trained by the installed ``wean train`` command, as a user runs it."""
    import subprocess
    import sys

    import yaml

    from synthetic import tiny_config, write_corpus

    folder = tmp_path_factory.mktemp("cli")
    data = write_corpus(folder / "data", train=400, valid=20)
    config = tiny_config(data, folder / "model", max_epochs=2)
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config.to_dict()))
    wean = str(Path(sys.executable).with_name("wean"))
    result = subprocess.run([wean, "train", str(path), "--set", "training.max_epochs=1"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "best bleu" in result.stdout
    return folder / "model"


# fixtures that train a model: every test that uses one is slow
TRAINING_FIXTURES = {"control_model", "model_dir", "trained", "copier", "generator"}


def pytest_collection_modifyitems(items):
    """Mark ``slow`` every test that trains a model, itself or through a fixture, so that
    ``pytest -m "not slow"`` is the quick loop (the full suite is still what CI runs)."""
    for item in items:
        function = getattr(item, "function", None)
        trains = function is not None and ".train()" in inspect.getsource(function)
        if trains or TRAINING_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)

