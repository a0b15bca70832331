"""The lab's job queue, GPU lease, replay and rewind scripts (lab/): what ran the project's own
experiments, not part of wean. Run with `python -m pytest lab/tests` from the repository root."""

import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
from synthetic import tiny_config, write_corpus  # noqa: E402
from wean.training import Trainer  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "lab"
LIB = ROOT / "results" / "lib"


def run_shell(script: str, cwd: Path = ROOT, **env) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", script], cwd=cwd, env={"PATH": "/usr/bin:/bin", **env},
                          capture_output=True, text=True)


def test_a_rewound_run_resumes_from_that_checkpoint_with_the_rate_set(tmp_path):
    data = write_corpus(tmp_path / "data", train=100, valid=10)
    settings = dict(max_updates=6, validate_every=2, batch_size=16, keep_best=3, learning_rate=0.004, lr_patience=0)
    run = tmp_path / "model"
    Trainer(tiny_config(data, run, **settings)).train()
    (run / "finished").write_text("x")
    subprocess.run([sys.executable, LAB / "rewind.py", run, "step-00000002", "--learning-rate", "0.001",
                    "--why", "test"], check=True, capture_output=True)
    assert not (run / "finished").exists()
    assert sorted(p.name for p in (run / "rewound").iterdir()) == ["step-00000004", "step-00000006"]
    assert "rewound to step-00000002, learning rate set to 0.001" in (run / "train.log").read_text()
    state = Trainer(tiny_config(data, run, **settings), resume=True).train()
    assert [v["updates"] for v in state.validations] == [2, 4, 6]
    assert [v["learning_rate"] for v in state.validations] == [0.004, 0.001, 0.001]


def test_the_rule_check_finds_where_a_run_parts_from_the_rule(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text(
        "training:\n  selection_metric: rouge2\n  learning_rate: 0.001\n  min_learning_rate: 0.00001\n"
        "  lr_patience: 2\n  early_stopping_patience: 4\n")
    rouge = [1.0, 2.0, 1.5, 1.8, 1.9]
    loss = [5.0, 4.0, 3.0, 3.5, 3.6]
    # validation 3 lowers the loss: progress under the rule, a bad one under the metric alone; a run
    # that halved after validations 3 and 4 (the metric's count) parts from the rule at validation 5
    rates = [0.001, 0.001, 0.001, 0.001, 0.0005]
    (run / "validations.json").write_text(json.dumps([
        {"rouge2": r, "loss": l, "learning_rate": lr, "epochs": i + 1} for i, (r, l, lr) in
        enumerate(zip(rouge, loss, rates))]))
    out = subprocess.run([sys.executable, LAB / "check_rule.py", run], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == ("run: parts at validation 5 (epoch 5): learning rate 0.0005, the rule's 0.001; "
                                  "the counts part at validation 3")
    rates[-1] = 0.001
    (run / "validations.json").write_text(json.dumps([
        {"rouge2": r, "loss": l, "learning_rate": lr, "epochs": i + 1} for i, (r, l, lr) in
        enumerate(zip(rouge, loss, rates))]))
    out = subprocess.run([sys.executable, LAB / "check_rule.py", run], check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "run: agrees over 5 validations (still training)"


def job_list(runs, complete_first: str | None = None) -> list[list[str]]:
    # the table scripts themselves list their runs (STAGE=list trains nothing)
    env = {"PATH": "/usr/bin:/bin", "WEAN_DATA_ROOT": "data", "RUNS": str(runs)}
    if complete_first is not None:
        env["COMPLETE_FIRST"] = complete_first
    out = subprocess.run(["bash", "-c", 'source lab/jobs.sh && job_list $CPU_TABLES'], cwd=ROOT,
                         env=env, check=True, capture_output=True, text=True).stdout.splitlines()
    return [line.split()[0].split(":") for line in out]


def test_the_workers_job_list_puts_seeds_outermost_across_the_tables(tmp_path):
    jobs = job_list(tmp_path, complete_first="")
    seeds = [int(seed) for _, seed, _ in jobs]
    assert seeds == sorted(seeds) and set(seeds) == {1, 2, 3}
    first_seed = [(table, row) for table, seed, row in jobs if seed == "1"]
    assert len(jobs) == 3 * len(first_seed)
    # within a seed the tables keep CPU_TABLES' order, and each table its rows' order
    tables = list(dict.fromkeys(table for table, _ in first_seed))
    assert tables == ["lcsts", "spm", "gigaword", "simplification", "wean-cpu"]
    assert [row for table, row in first_seed if table == "spm"] == ["encdec", "sgate", "spm", "sgate-spm"]


def test_tables_to_complete_first_come_whole_before_the_seeds_outermost_rest(tmp_path):
    everything = job_list(tmp_path, complete_first="")
    jobs = job_list(tmp_path)  # the default: LCSTS, Kiyono's table and WEAN's at the CPU's scale
    early = [job for job in everything if job[0] in ("lcsts", "spm", "wean-cpu")]
    assert len(early) == 27 and jobs[:27] == early  # seeds outermost among them too, rows in order
    assert jobs[27:] == [job for job in everything if job[0] not in ("lcsts", "spm", "wean-cpu")]
    assert sorted(map(tuple, jobs)) == sorted(map(tuple, everything))


def test_jobs_named_first_come_first_in_their_order_and_an_unknown_one_is_refused(tmp_path):
    everything = job_list(tmp_path)
    env = {"PATH": "/usr/bin:/bin", "WEAN_DATA_ROOT": "data", "RUNS": str(tmp_path), "FIRST_JOBS": "wean-cpu:2:wean spm:3:sgate"}
    script = 'source lab/jobs.sh && job_list $CPU_TABLES'
    out = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, check=True, capture_output=True,
                         text=True).stdout.splitlines()
    jobs = [line.split()[0].split(":") for line in out]
    assert jobs[:2] == [["wean-cpu", "2", "wean"], ["spm", "3", "sgate"]]
    assert jobs[2:] == [job for job in everything if job not in jobs[:2]]
    env["FIRST_JOBS"] = "spm:3:sgate spm:4:sgate"
    refused = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert refused.returncode != 0 and "FIRST_JOBS: no job spm:4:sgate" in refused.stderr


def test_the_jobs_finished_first_are_the_named_ones_and_the_complete_first_tables():
    # lab/queue.sh works these, then their tables' replays and reports, before the others
    script = 'source lab/jobs.sh && for job in "$@"; do comes_early "$job" && echo "$job"; done; true'
    jobs = ["lcsts:1:wean", "spm:3:spm", "simplification:2:conv-encoder", "simplification:3:rnnsearch",
            "gigaword:1:rnnsearch", ""]
    out = subprocess.run(["bash", "-c", script, "-", *jobs], cwd=ROOT, check=True, capture_output=True,
                         text=True, env={"PATH": "/usr/bin:/bin", "FIRST_JOBS": "simplification:2:conv-encoder",
                                         "COMPLETE_FIRST": "lcsts spm"}).stdout.split()
    assert out == ["lcsts:1:wean", "spm:3:spm", "simplification:2:conv-encoder"]
    out = subprocess.run(["bash", "-c", script, "-", *jobs], cwd=ROOT, check=True, capture_output=True,
                         text=True, env={"PATH": "/usr/bin:/bin", "COMPLETE_FIRST": "", "FIRST_JOBS": ""}).stdout.split()
    assert out == []


def test_every_job_names_the_results_folder_that_records_it(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "WEAN_DATA_ROOT": "data", "RUNS": str(tmp_path)}
    out = subprocess.run(["bash", "-c", 'source lab/jobs.sh && job_list $CPU_TABLES'], cwd=ROOT,
                         env=env, check=True, capture_output=True, text=True).stdout.splitlines()
    folders = {line.split()[2] for line in out}
    assert all(len(line.split()) == 3 for line in out)
    assert folders == {"results/lcsts/part2", "results/spm/converged", "results/word-attention/converged",
                       "results/conv-encoder/converged", "results/wean/converged-cpu"}


def test_the_replays_are_the_recorded_runs_whose_history_is_missing(tmp_path):
    root = ROOT
    jobs = run_shell("source lab/jobs.sh && job_list $CPU_TABLES", RUNS=str(tmp_path)).stdout.splitlines()
    missing = set()
    for line in jobs:
        _, run_dir, out = line.split()
        run = Path(run_dir).name
        if (root / out / "configs" / f"{run}.yaml").exists() and not (root / out / "validations" / f"{run}.json").exists():
            missing.add((run, out))
    replays = run_shell("source lab/jobs.sh && replay_list $CPU_TABLES", RUNS=str(tmp_path))
    assert replays.returncode == 0, replays.stderr
    listed = [line.split() for line in replays.stdout.splitlines()]
    assert {(run, out) for _, run, out, _, _ in listed} == missing
    for _, run, out, system, benchmark in listed:
        # the recorded output the replay must reproduce byte for byte
        assert run.endswith(system.rsplit("-", 1)[1]) and (root / out / f"{system}.{benchmark}.txt").exists()


def test_a_worker_skips_a_replay_that_another_finished_after_its_list_was_made(tmp_path):
    # each worker makes its replay list once; the other worker may replay a listed run meanwhile
    shutil.copytree(LIB, tmp_path / "results" / "lib")
    lab = tmp_path / "lab"
    shutil.copytree(LAB, lab, ignore=shutil.ignore_patterns("replay.sh", "tests"))
    (lab / "replay.sh").write_text('mkdir -p "$1/validations"; echo "[]" > "$1/validations/$2.json"; echo "trained $2"\n')
    (tmp_path / "runs" / "claims").mkdir(parents=True)
    stale_list = 'replay_list() { echo "spm spm-encdec-seed1 results/spm encdec-seed1 gigaword-test"; }'
    both = subprocess.run(["bash", "-c", f"source lab/queue.sh && {stale_list} && replay spm && replay spm"],
                          cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "RUNS": str(tmp_path / "runs")},
                          capture_output=True, text=True)
    assert both.returncode == 0, both.stderr
    assert both.stdout.count("trained spm-encdec-seed1") == 1  # the second call finds its history kept
    assert (tmp_path / "results" / "spm" / "validations" / "spm-encdec-seed1.json").exists()


def test_the_runs_replayed_on_avx2_kernels_are_recorded_runs_of_the_tables(tmp_path):
    root = ROOT
    listed = [line for line in (LAB / "trained-on-avx2.txt").read_text().splitlines() if not line.startswith("#")]
    jobs = run_shell("source lab/jobs.sh && job_list $CPU_TABLES", RUNS=str(tmp_path)).stdout.splitlines()
    recorded = {Path(run_dir).name for _, run_dir, out in (line.split() for line in jobs)
                if (root / out / "configs" / f"{Path(run_dir).name}.yaml").exists()}
    assert listed and set(listed) <= recorded  # a misspelt name would be replayed on AVX-512 kernels


def test_the_gpu_wait_packs_the_logs_and_only_the_finished_runs_outputs(tmp_path):
    base, out = tmp_path / "gpu", tmp_path / "out"
    # run directories as results/wean/converged/run.sh names them under RUNS=$BASE/runs
    finishing, cut_off = base / "runs" / "wean-converged-seq2seq-seed1", base / "runs" / "wean-converged-wean-seed1"
    table = base / "tree" / "results" / "wean" / "converged"
    for folder in (table, finishing, cut_off, base / "logs", base / "done"):
        folder.mkdir(parents=True)
    out.mkdir()
    (base / "jobs").write_text("wean:1:seq2seq\nwean:1:wean\n")
    (base / ".started").touch()
    (base / "logs" / "wean:1:wean.out").write_text("validation at update 485 (epoch 1.00): loss 5.2\n")

    def wait() -> list[str]:
        done = run_shell("bash lab/gpu.sh wait 0", GPU_BASE=str(base), OUT=str(out), DEVICE="cpu")
        assert done.returncode == 0, done.stderr
        listing = subprocess.run(["tar", "tzf", out / "runs.tgz"], check=True, capture_output=True, text=True)
        return sorted(name for name in listing.stdout.split() if not name.endswith("/"))

    assert wait() == ["logs/wean:1:wean.out"]  # none finished: the logs still come back
    for name in ("finished-elsewhere", "validations.json", "train.log"):
        (finishing / name).write_text("{}")
    (finishing / "model.safetensors").write_text("too large to bring back")
    (table / "seq2seq-seed1.turkcorpus-test.txt").write_text("finished\n")
    (table / "wean-seed1.wikismall-test.txt").write_text("the machine went back before its other tests\n")
    assert wait() == ["logs/wean:1:wean.out", "results/wean/converged/seq2seq-seed1.turkcorpus-test.txt",
                      "runs/wean-converged-seq2seq-seed1/finished-elsewhere",
                      "runs/wean-converged-seq2seq-seed1/train.log",
                      "runs/wean-converged-seq2seq-seed1/validations.json"]


def test_a_lent_gpu_takes_the_wean_rows_that_stop_soonest_first_and_leaves_concat_out():
    jobs = "wean:3:wean-concat\nwean:3:seq2seq\nwean:2:wean\nwean:1:wean-dot\nwean:1:seq2seq\nwean:1:wean\n"
    ordered = run_shell(f"source lab/jobs.sh && printf '{jobs}' | gpu_order")
    assert ordered.returncode == 0, ordered.stderr
    assert ordered.stdout.split() == ["wean:1:wean", "wean:2:wean", "wean:1:wean-dot", "wean:1:seq2seq",
                                      "wean:3:seq2seq"]


def test_a_lent_gpu_takes_concat_at_the_cpu_scale_first_seed_by_seed(tmp_path):
    pending = run_shell("bash lab/gpu.sh pending", RUNS=str(tmp_path))
    assert pending.returncode == 0, pending.stderr
    jobs = pending.stdout.split()
    assert jobs[:3] == [f"wean-cpu-concat:{seed}:wean-concat" for seed in (1, 2, 3)]
    # this CPU's workers list the cpu scale, never its concat row (an update takes minutes here)
    workers = run_shell("source lab/jobs.sh && runs_of $CPU_TABLES", RUNS=str(tmp_path))
    assert workers.returncode == 0, workers.stderr
    assert "wean-concat" not in workers.stdout and "wean-cpu:1:wean-dot" in workers.stdout


def test_a_gpu_only_run_left_part_way_comes_back_to_resume_on_the_next_gpu(tmp_path):
    base, out, here = tmp_path / "gpu", tmp_path / "out", tmp_path / "runs-here"
    concat = base / "runs" / "wean-cpu-converged-wean-concat-seed1"
    cpu_row = base / "runs" / "simplification-converged-contextual-gates-seed2"  # a CPU table's run
    for folder in (base / "tree" / "results", base / "logs", base / "done", out):
        folder.mkdir(parents=True)
    for run in (concat, cpu_row):
        for step in ("step-00000010", "step-00000020"):
            (run / "checkpoints" / step).mkdir(parents=True)
            (run / "checkpoints" / step / "training.safetensors").write_bytes(bytes(range(256)) * 20)
            (run / "checkpoints" / step / "training.json").write_text("{}")
        (run / "checkpoints" / "latest").write_text("step-00000020\n")
        for name in ("best.json", "config.yaml", "validations.json", "model.safetensors"):
            (run / name).write_text(name)
        (run / "tensorboard").mkdir()
        (run / "tensorboard" / "events").write_text("not needed to resume")
        for name in ("best.json", "validations.json"):  # written before their epoch's checkpoint
            os.utime(run / name, (1, 1))
    (base / "jobs").write_text("simplification:2:contextual-gates\nwean-cpu-concat:1:wean-concat\n")
    (base / "logs" / "xargs.out").write_text("")
    (base / ".started").touch()

    packed = run_shell("bash lab/gpu.sh wait 0", GPU_BASE=str(base), OUT=str(out), DEVICE="cpu",
                       RESUME_PART="2k")
    assert packed.returncode == 0, packed.stderr
    assert "packed wean-cpu-converged-wean-concat-seed1's state" in packed.stdout
    parts = sorted(out.glob("resume.tar.part-*"))
    assert len(parts) > 1 and all(part.stat().st_size <= 2048 for part in parts)  # the tool's limit a file

    imported = run_shell(f"bash lab/gpu.sh import {out / 'runs.tgz'}", RUNS=str(here))
    assert imported.returncode == 0, imported.stderr
    resumed = here / concat.name
    assert (resumed / "checkpoints" / "latest").read_text() == "step-00000020\n"
    assert (resumed / "checkpoints" / "step-00000020" / "training.safetensors").read_bytes() == bytes(range(256)) * 20
    assert not (resumed / "checkpoints" / "step-00000010").exists() and not (resumed / "tensorboard").exists()
    assert "left at step-00000020" in (resumed / "resume-on-gpu").read_text()
    assert not (here / cpu_row.name).exists()  # this CPU's workers would take it
    pending = run_shell("bash lab/gpu.sh pending", RUNS=str(here))
    assert pending.stdout.split()[0] == "wean-cpu-concat:1:wean-concat"

    # the same run finished on the next GPU: its finished files replace the state left part way
    (base / "jobs").write_text("wean-cpu-concat:1:wean-concat\n")
    (concat / "finished-elsewhere").write_text("trained and tested\n")
    shutil.rmtree(out)
    out.mkdir()
    assert run_shell("bash lab/gpu.sh wait 0", GPU_BASE=str(base), OUT=str(out), DEVICE="cpu").returncode == 0
    assert not list(out.glob("resume.tar.part-*"))
    imported = run_shell(f"bash lab/gpu.sh import {out / 'runs.tgz'}", RUNS=str(here))
    assert imported.returncode == 0, imported.stderr
    assert (resumed / "finished-elsewhere").exists() and not (resumed / "checkpoints").exists()
    assert not (resumed / "resume-on-gpu").exists()


def test_a_lent_gpu_resumes_the_run_carried_to_it(tmp_path):
    # a checkout with the scripts, what `carry` made, and a stand-in for the machine's python
    root, base = tmp_path / "checkout", tmp_path / "gpu"
    for script in ("results/lib", "results/wean/converged", "lab"):
        shutil.copytree(ROOT / script, root / script)
    run = tmp_path / "left" / "wean-cpu-converged-wean-concat-seed1"
    (run / "checkpoints" / "step-00000020").mkdir(parents=True)
    (run / "checkpoints" / "latest").write_text("step-00000020\n")
    (root / ".devcarry" / "resume").mkdir(parents=True)
    carried = root / ".devcarry" / "resume" / f"{run.name}.tar"
    subprocess.run(["tar", "cf", carried, "-C", run.parent, run.name], check=True)
    subprocess.run(["tar", "czf", root / ".devcarry" / "carry.tgz", "-T", "/dev/null"], check=True)
    python = tmp_path / "python"
    python.write_text('#!/bin/sh\necho "python $*"\nexit 3\n')
    python.chmod(0o755)
    (tmp_path / "chosen-range.txt").write_text("0.5\n")

    started = run_shell("bash lab/gpu.sh start wean-cpu-concat:1:wean-concat", cwd=root,
                        GPU_BASE=str(base), DEVICE="cpu", PYTHON=str(python),
                        CHOSEN_RANGE=str(tmp_path / "chosen-range.txt"), WEAN_ALLOCATOR="glibc")
    assert started.returncode == 0, started.stderr
    assert f"resuming {run.name}" in started.stdout
    done = base / "done" / "wean-cpu-concat:1:wean-concat"
    for _ in range(300):
        if done.exists():
            break
        time.sleep(0.1)
    log = (base / "logs" / "wean-cpu-concat:1:wean-concat.out").read_text()
    assert "python -m wean train configs/wean-pwkp.yaml" in log and log.rstrip().endswith("--resume")
    assert f"model_dir={base / 'runs' / run.name}" in log
