"""results/lib's tools that the tables' run.sh scripts use to train, record and compare runs: pinned to the
trainer's formats. Experiments' tools, not wean: run with `python -m pytest results/lib/tests` from the
repository root."""

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


LIB = Path(__file__).resolve().parents[1]


def run_shell(script: str, cwd: Path = LIB.parent.parent, **env) -> subprocess.CompletedProcess:
    """``script`` in bash, with the wean of this test's environment (whatever its folder)."""
    wean = str(Path(sys.executable).with_name("wean"))
    return subprocess.run(["bash", "-c", script], cwd=cwd, env={"PATH": "/usr/bin:/bin", "WEAN": wean, **env},
                          capture_output=True, text=True)


def test_a_run_recorded_in_results_is_done_though_its_run_directory_is_gone(tmp_path):
    # a session may start on a new machine: what results/ records must not be trained again
    run, out = tmp_path / "runs" / "lcsts-part2-wean-seed3", tmp_path / "results"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(f"model_dir: {run}\nseed: 3\n")
    records = [{"epochs": float(i + 1), "updates": i, "rouge2": v, "loss": 1.0} for i, v in enumerate([3, 9, 8])]
    (run / "validations.json").write_text(json.dumps(records))
    finished = 'source results/lib/record.sh && recorded "$RUN" "$OUT"'
    assert run_shell(finished, RUN=str(run), OUT=str(out)).returncode == 1
    kept = run_shell('source results/lib/converge.sh && keep_run "$RUN" "$OUT" && recorded "$RUN" "$OUT"',
                     RUN=str(run), OUT=str(out))
    assert kept.returncode == 0, kept.stderr
    assert (out / "configs" / "lcsts-part2-wean-seed3.yaml").read_text() == \
        "model_dir: runs/lcsts-part2-wean-seed3\nseed: 3\n"  # no machine's paths in results/
    assert json.loads((out / "validations" / "lcsts-part2-wean-seed3.json").read_text()) == records
    shutil.rmtree(run.parent)
    assert run_shell(finished, RUN=str(run), OUT=str(out)).returncode == 0


def test_training_preloads_tcmalloc_where_installed_unless_glibc_is_asked_for(tmp_path):
    # the allocator changes speed only (results/bench-allocator); a run trains with or without it
    (tmp_path / "results").symlink_to(LIB.parent)
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "wean").write_text('#!/bin/sh\necho "preloaded [$LD_PRELOAD]"\n')
    (tmp_path / ".venv" / "bin" / "wean").chmod(0o755)
    libraries, run = tmp_path / "lib", tmp_path / "run"
    libraries.mkdir()
    run.mkdir()
    train = 'source results/lib/converge.sh && train_to_end config.yaml "$RUN"'
    stand_in = str(tmp_path / ".venv" / "bin" / "wean")
    absent = run_shell(train, tmp_path, RUN=str(run), ALLOCATOR_DIRS=str(libraries), WEAN=stand_in)
    assert "preloaded []" in absent.stdout and "allocator: glibc" in absent.stdout, absent.stderr
    assert (run / "finished").exists()
    (run / "finished").unlink()
    (libraries / "libtcmalloc_minimal.so.4").touch()  # not a library: the loader skips it with a warning
    found = run_shell(train, tmp_path, RUN=str(run), ALLOCATOR_DIRS=str(libraries), WEAN=stand_in)
    assert f"preloaded [{libraries}/libtcmalloc_minimal.so.4]" in found.stdout, found.stderr
    (run / "finished").unlink()
    asked = run_shell(train, tmp_path, RUN=str(run), ALLOCATOR_DIRS=str(libraries), WEAN_ALLOCATOR="glibc",
                      WEAN=stand_in)
    assert "preloaded []" in asked.stdout and "allocator: glibc" in asked.stdout


def test_overlays_are_read_after_the_preset_and_the_schedule(tmp_path):
    (tmp_path / "results").symlink_to(LIB.parent)
    stand_in, run = tmp_path / "wean", tmp_path / "run"
    stand_in.write_text('#!/bin/sh\necho "$@"\n')
    stand_in.chmod(0o755)
    run.mkdir()
    # under the table scripts' set -euo pipefail, where an empty array must still expand
    train = 'set -euo pipefail; source results/lib/converge.sh && schedule=s.yaml train_to_end p.yaml "$RUN" --set a=1'
    plain = run_shell(train, tmp_path, RUN=str(run), WEAN=str(stand_in), WEAN_ALLOCATOR="glibc")
    assert f"train p.yaml s.yaml --set model_dir={run} --set a=1" in plain.stdout, plain.stderr
    (run / "finished").unlink()
    overlaid = run_shell(train, tmp_path, RUN=str(run), WEAN=str(stand_in), WEAN_ALLOCATOR="glibc",
                         OVERLAYS="o1.yaml o2.yaml")
    assert f"train p.yaml s.yaml o1.yaml o2.yaml --set model_dir={run} --set a=1" in overlaid.stdout
    # a run killed before its first checkpoint starts again; one with a checkpoint resumes
    (run / "finished").unlink()
    (run / "config.yaml").write_text("name: x\n")
    assert plain.stdout.rstrip().endswith("--set a=1")
    restarted = run_shell(train, tmp_path, RUN=str(run), WEAN=str(stand_in), WEAN_ALLOCATOR="glibc")
    assert restarted.stdout.splitlines()[-1].endswith("--set a=1 --overwrite"), restarted.stderr
    (run / "finished").unlink()
    (run / "checkpoints").mkdir()
    (run / "checkpoints" / "latest").write_text("step-00000100\n")
    resumed = run_shell(train, tmp_path, RUN=str(run), WEAN=str(stand_in), WEAN_ALLOCATOR="glibc")
    assert resumed.stdout.splitlines()[-1].endswith("--set a=1 --resume")


def test_training_searches_the_folders_the_allocator_benchmark_times():
    # a library found by one and not the other would time an allocator that training does not use
    sys.path.insert(0, str(LIB.parent.parent / "bench"))
    try:
        import allocator_speed
    finally:
        sys.path.pop(0)
    default = re.search(r"\$\{ALLOCATOR_DIRS:-([^}]*)\}", (LIB / "converge.sh").read_text())
    assert default and tuple(default.group(1).split()) == allocator_speed.LIBRARY_DIRS


def test_curves_are_drawn_from_the_kept_histories_and_a_missing_one_is_said(tmp_path):
    out = tmp_path / "results"
    (out / "validations").mkdir(parents=True)
    records = [{"epochs": float(i + 1), "updates": i, "rouge2": v, "loss": 1.0} for i, v in enumerate([3, 9, 8])]
    (out / "validations" / "wean-seed3.json").write_text(json.dumps(records))
    plotted = run_shell('source results/lib/converge.sh && plot_kept "$OUT" rouge2 "$OUT/curve.png" Seq2seq,WEAN '
                        'seq2seq-seed3 wean-seed3', OUT=str(out))
    assert plotted.returncode == 0, plotted.stderr
    assert plotted.stdout.splitlines()[0] == "Seq2seq: no curve (seq2seq-seed3's validation history was not kept)"
    assert "WEAN: best rouge2 9.00 at epoch 2.00" in plotted.stdout
    assert (out / "curve.png").read_bytes()[:4] == b"\x89PNG"


def test_the_seed_table_gives_means_spreads_and_each_seeds_gap_to_the_base(tmp_path):
    def tested(score: float) -> dict:
        return {"gigaword-test": {"scores": {"rouge2": score}}}
    scores = {"encdec": [12.0, 13.0, 11.0], "spm": [11.5, 12.0, 11.0]}
    metrics = {f"{row}-seed{seed}": tested(value) for row, values in scores.items()
               for seed, value in enumerate(values, 1)}
    del metrics["spm-seed3"]  # a seed not tested yet is left out, and said
    (tmp_path / "metrics.json").write_text(json.dumps(metrics))
    out = subprocess.run([sys.executable, LIB / "seed_table.py", tmp_path / "metrics.json", "--rows", "encdec", "spm",
                          "--benchmark", "gigaword-test", "--metrics", "rouge2"], check=True, capture_output=True, text=True)
    assert "seed 3: spm not tested on gigaword-test; left out" in out.stderr
    rows = [line.split(" | ") for line in out.stdout.splitlines()[2:]]
    assert rows[0][1:] == ["12.50 ± 0.71", "+0.00, +0.00 |"]
    # gaps -0.5 and -1.0: mean -0.75, sample std 0.35; t = -3, one degree of freedom, where
    # Student's two-sided p is 1 - 2 atan(|t|) / pi = 0.205
    assert rows[1][1:] == ["11.75 ± 0.35", "-0.50, -1.00; mean -0.75 ± 0.35, t-test over seeds p = 0.205 |"]


def test_changed_outputs_counts_mangled_characters_looping_spans_and_what_sari_makes_of_them(tmp_path):
    sources = ["Graubünden is a canton in the east.", "It costs £5 now.", "The cat sat on the mat.", "A b c d."]
    folder = tmp_path / "data" / "turkcorpus" / "case_detok"
    folder.mkdir(parents=True)
    (folder / "test.src").write_text("\n".join(sources) + "\n", encoding="utf-8")
    for k in range(8):
        (folder / f"test.ref.{k}").write_text("Graubünden is a canton.\nIt costs £5.\nThe cat sat.\nA b c.\n",
                                              encoding="utf-8")
    systems = {"copy.txt": sources, "mangled.txt": ["GraubÃnden is a canton in the east."] + sources[1:],
               "sys.txt": ["GraubÃnden is a canton in the east.", "It costs £5 now.",
                           "The cat sat on the cat sat on the mat.", "A b c d."]}
    for name, lines in systems.items():
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = subprocess.run([sys.executable, LIB / "changed_outputs.py", "turkcorpus-test",
                          *(tmp_path / name for name in systems)], check=True, capture_output=True, text=True,
                         env={**os.environ, "WEAN_DATA_ROOT": str(tmp_path / "data")})
    rows = {line.split("\t")[0]: line.split("\t")[1:] for line in out.stdout.splitlines()[1:]}
    # two sources hold a non-ASCII character; sys.txt lost one of them and loops over one span
    assert rows["sys.txt"][:5] == ["4", "2", "2", "1", "1"]
    assert rows["copy.txt"][:5] == ["4", "0", "2", "0", "0"]
    # the mangled output scores apart from the source it should have kept; restored, it is the copy
    copy_sari, mangled_sari, restored_sari = rows["copy.txt"][5], *rows["mangled.txt"][5:]
    assert mangled_sari != copy_sari and restored_sari == copy_sari
    (tmp_path / "short.txt").write_text("one line\n", encoding="utf-8")
    short = subprocess.run([sys.executable, LIB / "changed_outputs.py", "turkcorpus-test", tmp_path / "short.txt"],
                           capture_output=True, text=True, env={**os.environ, "WEAN_DATA_ROOT": str(tmp_path / "data")})
    assert short.returncode == 2 and "short.txt: 1 lines" in short.stderr
    missing = subprocess.run([sys.executable, LIB / "changed_outputs.py", "turkcorpus-test", tmp_path / "gone.txt"],
                             capture_output=True, text=True, env={**os.environ, "WEAN_DATA_ROOT": str(tmp_path / "data")})
    assert missing.returncode == 2 and "gone.txt" in missing.stderr and "Traceback" not in missing.stderr


def test_the_t_test_over_seeds_matches_students_distribution():
    sys.path.insert(0, str(LIB))
    try:
        from seed_table import paired_t_p
    finally:
        sys.path.remove(str(LIB))
    # two degrees of freedom have a closed form, p = 1 - |t| / sqrt(2 + t^2): gaps 1, 2, 3 give
    # t = 2 sqrt(3)
    t = 2 * math.sqrt(3)
    assert paired_t_p([1.0, 2.0, 3.0]) == pytest.approx(1 - t / math.sqrt(2 + t * t), rel=1e-9)
    # the tables' 5 % critical values: 4.303 (2 degrees of freedom), 2.776 (4)
    assert paired_t_p([4.303 / math.sqrt(3) + d for d in (-1, 0, 1)]) == pytest.approx(0.05, abs=1e-4)
    assert paired_t_p([2.776 * math.sqrt(2.5) / math.sqrt(5) + d for d in (-2, -1, 0, 1, 2)]) == pytest.approx(0.05, abs=1e-4)
    assert paired_t_p([-1.0, 1.0]) == 1.0  # no mean gap
    assert paired_t_p([0.5, 0.5, 0.5]) == 0.0  # the same gap on every seed


def _concat_row_training(tmp_path: Path, chosen_range: Path) -> subprocess.CompletedProcess:
    """The cpu-concat row's training command, in a copy of the scripts with a stand-in wean."""
    tree = tmp_path / "tree"
    for script in ("results/lib", "results/wean/converged"):
        shutil.copytree(LIB.parent.parent / script, tree / script)
    (tree / ".venv" / "bin").mkdir(parents=True)
    (tree / ".venv" / "bin" / "wean").write_text('#!/bin/sh\necho "wean $*"\nexit 3\n')
    (tree / ".venv" / "bin" / "wean").chmod(0o755)
    return run_shell("SEEDS=1 STAGE=train bash results/wean/converged/run.sh cpu-concat", cwd=tree,
                     RUNS=str(tmp_path / "runs"), CHOSEN_RANGE=str(chosen_range), WEAN_ALLOCATOR="glibc",
                     WEAN=str(tree / ".venv" / "bin" / "wean"))


def test_the_concat_rows_train_from_the_chosen_range_and_refuse_without_one(tmp_path):
    missing = _concat_row_training(tmp_path, tmp_path / "chosen-range.txt")
    assert missing.returncode != 0 and "gpu-sweep.sh" in missing.stderr
    assert "wean train" not in missing.stdout
    (tmp_path / "chosen-range.txt").write_text("0.5\n# best valid BLEU by update 400: ...\n")
    shutil.rmtree(tmp_path / "tree")
    chosen = _concat_row_training(tmp_path, tmp_path / "chosen-range.txt")
    assert chosen.returncode == 3  # the stand-in's
    command = chosen.stdout
    assert "model.output_layer.score=concat" in command and "model.output_layer.concat_kernel=fused" in command
    assert "model.output_layer.concat_init_range=0.5 " in command and "training.seed=1" in command


def test_concat_initialisation_is_chosen_by_the_best_validation_bleu_all_runs_reached(tmp_path):
    sys.path.insert(0, str(LIB.parent / "wean" / "concat-init"))
    try:
        from choose_range import choose
    finally:
        sys.path.pop(0)

    def history(*bleus: float) -> list[dict]:
        return [{"updates": 100 * (i + 1), "bleu": bleu, "loss": 5.0} for i, bleu in enumerate(bleus)]

    # r = 1 leads only at an update the others never reached, so it is not compared there
    chosen, best, last = choose({0.0: history(1.0, 2.0), 0.5: history(3.0, 4.0), 1.0: history(2.0, 3.0, 9.0)})
    assert (chosen, best, last) == (0.5, {0.0: 2.0, 0.5: 4.0, 1.0: 3.0}, 200)
    assert choose({1.0: history(4.0), 0.3: history(4.0)})[0] == 0.3  # a tie: the smaller range
    with pytest.raises(ValueError):
        choose({0.0: history(1.0), 0.5: []})
    for r, bleus in ((0, (1.0, 2.0)), (0.5, (3.0, 4.0))):
        (tmp_path / f"sweep-{r}.json").write_text(json.dumps(history(*bleus)))
    written = tmp_path / "chosen-range.txt"
    done = subprocess.run([sys.executable, LIB.parent / "wean" / "concat-init" / "choose_range.py", tmp_path,
                           "--write", written], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert written.read_text().splitlines()[0] == "0.5" and done.stdout.startswith("0.5 ")


def test_the_schedule_file_reads_over_a_preset_as_its_settings_did_on_the_command_line():
    """train_row trains `wean train PRESET results/lib/converge.yaml`; runs started when the schedule
    was a string of --set options resume under it, so both must give the same config (save_every,
    added since, changes no weight; kernels: blas keeps the products those runs computed)."""
    from wean.config import load_config

    preset = LIB.parent.parent / "configs" / "encdec-gigaword.yaml"
    as_options = ["training.max_updates=0", "training.max_epochs=100", "training.validate_every=0",
                  "training.lr_patience=2", "training.early_stopping_patience=4",
                  "training.patience_watches_loss=true", "training.keep_best=1", "training.save_every=100",
                  "training.kernels=blas"]
    assert load_config([preset, LIB / "converge.yaml"]) == load_config(preset, as_options)
    assert load_config([preset, LIB / "converge.yaml"]) != load_config(preset)


def test_train_row_reads_the_schedule_over_the_preset(tmp_path):
    (tmp_path / "results").symlink_to(LIB.parent)
    wean = tmp_path / "bin" / "wean"
    wean.parent.mkdir()
    wean.write_text('#!/bin/sh\necho "wean $*"\n')
    wean.chmod(0o755)
    run = tmp_path / "run"
    run.mkdir()
    trained = run_shell('source results/lib/converge.sh && train_row preset.yaml "$RUN" --set x=1', tmp_path,
                        RUN=str(run), WEAN=str(wean), WEAN_ALLOCATOR="glibc")
    assert f"wean train preset.yaml results/lib/converge.yaml --set model_dir={run} --set training.max_epochs=100 " \
           "--set training.device=auto --set x=1" in trained.stdout, trained.stderr
