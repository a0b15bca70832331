"""Training on two CPU processes (gloo), launched as a user launches it: ``torchrun -m wean train``.
Each launch costs a few seconds of start-up; the models are tiny."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from safetensors.torch import load_file

from synthetic import tiny_config, write_corpus
from wean.config import OutputLayerConfig
from wean.errors import WeanError
from wean.training import Trainer

SETTINGS = dict(batch_size=16, validate_every=4, max_epochs=10, log_every=1)
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}


def config_file(tmp_path: Path, data: Path, name: str, dropout: float = 0.0, **training) -> Path:
    config = tiny_config(data, tmp_path / name, **{**SETTINGS, **training})
    config.model.dropout = dropout
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config.to_dict()))
    return path


def torchrun(config: Path, *options: str, **popen) -> subprocess.CompletedProcess | subprocess.Popen:
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2",
               "-m", "wean", "train", str(config), *options]
    if popen:
        return subprocess.Popen(command, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **popen)
    return subprocess.run(command, env=ENV, capture_output=True, text=True, timeout=300)


def last_weights(model_dir: Path) -> dict[str, torch.Tensor]:
    latest = (model_dir / "checkpoints" / "latest").read_text().strip()
    return load_file(str(model_dir / "checkpoints" / latest / "model.safetensors"))


def logged_losses(model_dir: Path) -> list[float]:
    return [float(loss) for loss in re.findall(r"^update \d+ loss (\S+)", (model_dir / "train.log").read_text(), re.M)]


@pytest.mark.slow
def test_two_processes_with_half_the_batch_each_make_the_one_process_updates(tmp_path):
    """training.batch_size is the global batch: the same config on 2 processes (8 sentences each)
    makes the updates of 1 process (16), to float rounding; only rank 0 writes."""
    data = write_corpus(tmp_path / "data", train=300, valid=20)
    Trainer(tiny_config(data, tmp_path / "one", **SETTINGS, max_updates=12)).train()  # dropout 0: deterministic
    result = torchrun(config_file(tmp_path, data, "two", max_updates=12))
    assert result.returncode == 0, result.stderr
    one, two = last_weights(tmp_path / "one"), last_weights(tmp_path / "two")
    assert max(float((one[name] - two[name]).abs().max()) for name in one) < 1e-4
    assert logged_losses(tmp_path / "two") == pytest.approx(logged_losses(tmp_path / "one"), abs=2e-4)
    assert len(logged_losses(tmp_path / "two")) == 12
    # one writer: one TensorBoard file, each log line and validation once, one final line on stdout
    log = (tmp_path / "two" / "train.log").read_text()
    assert log.count("training model:") == 1 and "2 processes" in log
    assert len([line for line in log.splitlines() if line.startswith("validation at update 8 ")]) == 1
    assert len(list((tmp_path / "two" / "tensorboard").iterdir())) == 1
    assert result.stdout.count("best bleu") == 1


@pytest.mark.slow
def test_a_killed_two_process_run_resumes_to_the_uninterrupted_weights(tmp_path):
    """kill -9 of the whole run (torchrun and both processes) after its first checkpoint; --resume
    with 2 processes reaches the weights of the run never killed exactly (dropout on: each
    process's random state is restored). Resuming with 1 process is refused in one line."""
    data = write_corpus(tmp_path / "data", train=300, valid=20)
    settings = dict(dropout=0.3, max_updates=24)
    full_run = torchrun(config_file(tmp_path, data, "full", **settings))
    assert full_run.returncode == 0, full_run.stderr[-4000:]
    killed = config_file(tmp_path, data, "killed", **settings)
    run = torchrun(killed, start_new_session=True)
    latest = tmp_path / "killed" / "checkpoints" / "latest"
    deadline = time.monotonic() + 120
    while not latest.exists() and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    kill_everything(run)
    assert int(latest.read_text().strip().split("-")[1]) < 24  # it was stopped mid-run
    with pytest.raises(WeanError, match="trained by 2 process.*not 1"):
        Trainer(yaml_config(killed), resume=True)
    result = torchrun(killed, "--resume")
    assert result.returncode == 0, result.stderr
    full, resumed = last_weights(tmp_path / "full"), last_weights(tmp_path / "killed")
    assert all(torch.equal(full[name], resumed[name]) for name in full)


def kill_everything(run: subprocess.Popen) -> None:
    """kill -9 of torchrun and of its processes, which it starts each in a session of its own (a
    kill of torchrun's group alone leaves them training and writing checkpoints), and wait until
    all are gone."""
    workers = children(run.pid)
    assert len(workers) == 2, workers
    os.killpg(run.pid, signal.SIGKILL)
    for pid in workers:
        os.killpg(pid, signal.SIGKILL)
    run.wait()
    deadline = time.monotonic() + 30
    while not all(exited(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.02)


def children(parent: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()  # after "pid (name)": state, ppid, ...
        except OSError:  # gone meanwhile
            continue
        if int(fields[1]) == parent:
            found.append(int(stat.parent.name))
    return found


def exited(pid: int) -> bool:
    """Whether every thread of ``pid`` has exited (a zombie, or gone): its main thread turns zombie
    while others may still run, holding its files (and the run directory's lock) open."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return True
    return all(zombie(task / "stat") for task in tasks)


def zombie(stat: Path) -> bool:
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def yaml_config(path: Path):
    from wean.config import load_config

    return load_config(path)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("rank, message", [
    (1, "process 1 of 2 could not reach process 0 at 127.0.0.1:"),  # nobody listens
    (0, "process 0 of 2 could not join the others at 127.0.0.1:"),  # nobody joins it
])
def test_a_process_that_cannot_meet_the_others_stops_with_one_line(tmp_path, rank, message):
    data = write_corpus(tmp_path / "data", train=20, valid=4)
    config = config_file(tmp_path, data, "model", distributed_timeout=2)
    env = {**ENV, "RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": "127.0.0.1",
           "MASTER_PORT": str(free_port())}
    started = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "wean", "train", str(config)], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1 and time.monotonic() - started < 60
    assert result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
    assert result.stderr.startswith(f"wean train (process {rank}): error: ")


def test_fp16_is_refused_in_one_line_off_cuda(tmp_path):
    data = write_corpus(tmp_path / "data", train=20, valid=4)
    with pytest.raises(WeanError, match="fp16 runs on CUDA GPUs only"):
        Trainer(tiny_config(data, tmp_path / "model", precision="fp16", device="cpu"))


def test_the_gradient_scaler_state_resumes_exactly(tmp_path, monkeypatch):
    """fp16's loss scaling, wired through a run and its checkpoints. Off CUDA the forward pass stays
    fp32 (a CPU has no fp16 LSTM): what is tested is the scaler's place in the update and its
    state in the checkpoint, not fp16 arithmetic (test_fp16_learns_on_cuda does that)."""
    import wean.training.trainer as trainer_module

    monkeypatch.setattr(trainer_module, "check_precision", lambda precision, device: None)
    monkeypatch.setattr(trainer_module, "autocast_dtype", lambda precision: None)
    data = write_corpus(tmp_path / "data", train=300, valid=20)
    settings = dict(precision="fp16", device="cpu", max_updates=12, validate_every=4, batch_size=16)
    full = Trainer(tiny_config(data, tmp_path / "full", **settings))
    assert full.scaler.is_enabled()
    full_state = full.train()
    Trainer(tiny_config(data, tmp_path / "resumed", **{**settings, "max_updates": 6})).train()
    resumed = Trainer(tiny_config(data, tmp_path / "resumed", **settings), resume=True)
    assert resumed.scaler.state_dict()["_growth_tracker"] == 6  # its steps without overflow, saved at 6
    assert resumed.train().losses == full_state.losses


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("precision", ["fp16", "bf16"])
def test_mixed_precision_learns_on_cuda(tmp_path, precision):
    from synthetic import reverse_pairs
    from wean.inference.generator import load

    data = write_corpus(tmp_path / "data")
    trainer = Trainer(tiny_config(data, tmp_path / "model", precision=precision, device="cuda"))
    trainer.train()
    assert all(p.dtype == torch.float32 for p in trainer.model.parameters())  # autocast, not a cast
    sources, targets = reverse_pairs(200, seed=7)
    outputs = [g.text for g in load(tmp_path / "model").generate(sources, beam=1)]
    assert sum(o == t for o, t in zip(outputs, targets)) / len(targets) >= 0.95


UNUSED_PARAMETER_PLUGIN = '''
import torch
from torch import nn

from wean.models.output_layer import LinearOutput
from wean.registry import OUTPUT_LAYERS


@OUTPUT_LAYERS.register("linear-with-a-spare")
class LinearWithASpare(LinearOutput):
    """A linear output layer holding a parameter its forward pass never uses."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.spare = nn.Parameter(torch.zeros(3))
'''


@pytest.mark.slow
def test_a_parameter_outside_the_loss_is_named_in_one_line_under_torchrun(tmp_path):
    data = write_corpus(tmp_path / "data", train=100, valid=8)
    plugin = tmp_path / "spare.py"
    plugin.write_text(UNUSED_PARAMETER_PLUGIN)
    config = tiny_config(data, tmp_path / "model", **SETTINGS, max_updates=3)
    config.plugins = [str(plugin)]
    config.model.output_layer = OutputLayerConfig(type="linear-with-a-spare")
    path = tmp_path / "model.yaml"
    path.write_text(yaml.safe_dump(config.to_dict()))
    result = torchrun(path)
    assert result.returncode != 0
    # both processes fail the check, but torchrun stops the other as soon as the first one exits,
    # so the second line comes only when that process is fast enough: one is certain
    errors = [line for line in result.stderr.splitlines() if line.startswith("wean train (process")]
    assert 1 <= len(errors) <= 2, result.stderr
    assert all("output_layer.spare" in line and "took no part" in line for line in errors)
    assert "Expected to have finished reduction" not in result.stderr
