"""Training is tested by learning: a small model must fit a synthetic task; and by resuming."""

import json
from pathlib import Path

import pytest
import torch

from synthetic import reverse_pairs, tiny_config, write_corpus
from wean.errors import WeanError
from wean.inference.generator import load
from wean.models.device import bf16_lstm_supported
from wean.training import Trainer
from wean.training.criterion import Criterion


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reverse")
    data = write_corpus(folder / "data")
    state = Trainer(tiny_config(data, folder / "model")).train()
    return folder, state


def test_small_model_learns_to_reverse_symbols(trained):
    folder, _ = trained
    sources, targets = reverse_pairs(200, seed=7)  # unseen sequences
    model = load(folder / "model")
    greedy = [g.text for g in model.generate(sources, beam=1)]
    beam = [g.text for g in model.generate(sources, beam=5)]
    assert sum(o == t for o, t in zip(greedy, targets)) / len(targets) >= 0.95
    assert sum(o == t for o, t in zip(beam, targets)) / len(targets) >= 0.95


def test_training_writes_a_loadable_model_without_pickle(trained):
    folder, state = trained
    model_dir = folder / "model"
    names = {p.name for p in model_dir.rglob("*") if p.is_file()}
    assert {"config.yaml", "vocab.json", "tokenizer.json", "model.safetensors", "best.json"} <= names
    assert not [n for n in names if n.endswith((".pt", ".pth", ".pkl", ".bin"))]
    checkpoints = [p for p in (model_dir / "checkpoints").iterdir() if p.is_dir()]
    assert 1 <= len(checkpoints) <= 3 + 1  # keep_best + latest
    # the selected model is the validation-best one, and the loss went down
    best = json.loads((model_dir / "best.json").read_text())
    assert best["bleu"] == max(v["bleu"] for v in state.validations)
    assert state.losses[-1] < state.losses[0] / 3


def test_resume_gives_the_same_next_losses_as_an_uninterrupted_run(tmp_path):
    data = write_corpus(tmp_path / "data", train=300, valid=20)
    settings = dict(max_updates=16, validate_every=5, batch_size=16, max_epochs=10)
    # 300 pairs / 16 = 19 batches per epoch: the interruption at 8 is mid-epoch
    full = Trainer(tiny_config(data, tmp_path / "full", **settings)).train()
    interrupted = tiny_config(data, tmp_path / "resumed", **{**settings, "max_updates": 8})
    first = Trainer(interrupted).train()
    assert len(first.losses) == 8
    resumed = Trainer(tiny_config(data, tmp_path / "resumed", **settings), resume=True).train()
    assert resumed.losses[:8] == full.losses[:8]
    assert resumed.losses[8:] == full.losses[8:16]  # exactly: optimizer, RNG and data order restored


def killed_at(monkeypatch, config, update: int) -> None:
    """``config``'s run trained until a kill (KeyboardInterrupt, as -9 would) at its ``update``-th update."""
    from wean.training.trainer import Trainer as TrainerClass

    real_update, calls = TrainerClass._update, []

    def killing(self, examples):
        calls.append(1)
        if len(calls) == update:
            raise KeyboardInterrupt("kill -9")
        return real_update(self, examples)

    monkeypatch.setattr(TrainerClass, "_update", killing)
    with pytest.raises(KeyboardInterrupt):
        Trainer(config).train()
    monkeypatch.setattr(TrainerClass, "_update", real_update)


def test_a_run_killed_between_validations_resumes_from_its_last_save_every_checkpoint(tmp_path, monkeypatch):
    data = write_corpus(tmp_path / "data", train=300, valid=20)
    settings = dict(max_updates=12, validate_every=0, save_every=4, batch_size=16, max_epochs=10)
    # 19 batches per epoch: no validation before the kill, only the checkpoints of updates 4 and 8
    full = Trainer(tiny_config(data, tmp_path / "full", **settings)).train()
    killed_at(monkeypatch, tiny_config(data, tmp_path / "killed", **settings), 10)
    checkpoints = tmp_path / "killed" / "checkpoints"
    assert (checkpoints / "latest").read_text().strip() == "step-00000008"
    assert not (checkpoints / "step-00000004").exists()  # not validated, so not kept once a later one is
    resumed = Trainer(tiny_config(data, tmp_path / "killed", **settings), resume=True).train()
    assert resumed.losses == full.losses


def test_an_existing_run_is_never_overwritten(tmp_path):
    data = write_corpus(tmp_path / "data", train=50, valid=10)
    config = tiny_config(data, tmp_path / "model", max_updates=2)
    Trainer(config).train()
    with pytest.raises(WeanError, match="already holds a training run; pass --resume"):
        Trainer(config)
    with pytest.raises(WeanError, match="nothing to resume"):
        Trainer(tiny_config(data, tmp_path / "other", max_updates=2), resume=True)
    assert not (tmp_path / "other").exists()  # a run that could not start leaves no folder


def test_a_second_training_of_a_directory_is_refused_while_the_first_holds_it(tmp_path):
    data = write_corpus(tmp_path / "data", train=50, valid=10)
    first = Trainer(tiny_config(data, tmp_path / "model", max_updates=2))
    for resume in (False, True):  # neither a new run nor a resume may write beside it
        with pytest.raises(WeanError, match="another process is training into this directory"):
            Trainer(tiny_config(data, tmp_path / "model", max_updates=4), resume=resume, overwrite=True)
    first.train()
    resumed = Trainer(tiny_config(data, tmp_path / "model", max_updates=4), resume=True).train()
    assert resumed.updates == 4


def test_the_run_lock_holds_against_another_process_and_goes_with_it(tmp_path):
    import signal
    import subprocess
    import sys

    from wean.training.run_directory import RunLock

    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; from wean.training.run_directory import "
         "RunLock; lock = RunLock(Path(sys.argv[1])); print('held', flush=True); time.sleep(60)", str(tmp_path / "run")],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(WeanError, match="another process is training into this directory"):
            RunLock(tmp_path / "run")
    finally:
        holder.send_signal(signal.SIGKILL)  # a kill -9: the system drops the lock
        holder.wait()
    assert RunLock(tmp_path / "run").held


def test_a_run_from_a_trained_model_starts_from_its_weights_and_tokens(trained, tmp_path):
    from wean.export import export_model

    folder, state = trained
    exported = tmp_path / "exported"
    export_model(folder / "model", exported, fp16=True)  # an fp16 export: cast back to float32
    data = write_corpus(tmp_path / "data", train=200, valid=10)
    settings = dict(max_updates=2, learning_rate=0.0005)
    fresh = Trainer(tiny_config(data, tmp_path / "fresh", **settings)).train()
    tuned = Trainer(tiny_config(data, tmp_path / "tuned", init_from=str(exported), **settings)).train()
    assert tuned.losses[0] < 0.2 * fresh.losses[0]  # it already reverses
    assert tuned.losses[0] < 2 * min(state.losses[-10:]) + 0.05
    assert (tmp_path / "tuned" / "vocab.json").read_text() == (exported / "vocab.json").read_text()
    assert (tmp_path / "tuned" / "tokenizer.json").read_text() == (exported / "tokenizer.json").read_text()


def test_a_run_from_a_model_carries_the_models_its_generation_settings_name_inside_it(trained, tmp_path):
    from wean.export import export_model

    folder, _ = trained
    start = tmp_path / "start"
    export_model(folder / "model", start)
    export_model(folder / "model", start / "reranker" / "channel")  # any model directory stands for one
    data = write_corpus(tmp_path / "data", train=50, valid=10)
    config = tiny_config(data, tmp_path / "tuned", init_from=str(start), max_updates=1)
    config.generation.fallback = "source"
    config.generation.fallback_channel = "reranker/channel=-3"
    killed = Trainer(config)  # stopped before its first checkpoint, its reranker/ copied
    assert (tmp_path / "tuned" / "reranker" / "channel" / "config.yaml").exists()
    killed.run_lock.release()
    Trainer(config, resume=True).train()  # --resume starts it again, not "nothing to resume"
    carried = tmp_path / "tuned" / "reranker" / "channel"
    original = start / "reranker" / "channel" / "model.safetensors"
    assert (carried / "model.safetensors").read_bytes() == original.read_bytes()
    load(tmp_path / "tuned").generate(["a b c"])  # its fallback finds its channel model


def test_a_run_from_a_model_validates_the_model_first_and_resumes_exactly(trained, tmp_path, monkeypatch):
    folder, _ = trained
    data = write_corpus(tmp_path / "data", train=200, valid=10)
    settings = dict(init_from=str(folder / "model"), max_updates=10, save_every=4, batch_size=16,
                    learning_rate=0.05)  # a rate that can only make the model worse
    full = Trainer(tiny_config(data, tmp_path / "full", **settings)).train()
    assert full.validations[0]["updates"] == 0 and full.best[0][1] == 0  # the starting model stays the best
    killed_at(monkeypatch, tiny_config(data, tmp_path / "killed", **settings), 6)
    resumed = Trainer(tiny_config(data, tmp_path / "killed", **settings), resume=True).train()
    assert resumed.losses == full.losses
    assert [v["updates"] for v in resumed.validations] == [v["updates"] for v in full.validations]


def test_a_run_from_a_model_of_another_architecture_is_refused(trained, tmp_path):
    folder, _ = trained
    data = write_corpus(tmp_path / "data", train=50, valid=10)
    other = tiny_config(data, tmp_path / "tuned", init_from=str(folder / "model"))
    other.model.embedding_size = 16
    with pytest.raises(WeanError, match="model.embedding_size is 32 there and 16 here"):
        Trainer(other)
    assert not (tmp_path / "tuned").exists()
    with pytest.raises(WeanError, match="init_from: .*not a model directory"):
        Trainer(tiny_config(data, tmp_path / "tuned", init_from=str(tmp_path / "data")))
    with pytest.raises(WeanError, match="overlap; train into another directory"):
        Trainer(tiny_config(data, folder / "model", init_from=str(folder / "model")), overwrite=True)
    assert (folder / "model" / "model.safetensors").exists()  # --overwrite removed nothing of the start
    other_dropout = tiny_config(data, tmp_path / "dropout", init_from=str(folder / "model"), max_updates=1)
    other_dropout.model.dropout = 0.5  # changes how it trains, not what its weights mean
    Trainer(other_dropout)
    ensemble = tiny_config(data, tmp_path / "tuned", init_from=str(folder / "model"))
    ensemble.generation.ensemble = ["ensemble/1"]
    with pytest.raises(WeanError, match="a run trains one model"):
        Trainer(ensemble)


def test_resume_refuses_a_changed_model(tmp_path):
    data = write_corpus(tmp_path / "data", train=50, valid=10)
    Trainer(tiny_config(data, tmp_path / "model", max_updates=2)).train()
    changed = tiny_config(data, tmp_path / "model", max_updates=4)
    changed.model.embedding_size = 16
    with pytest.raises(WeanError, match="model.embedding_size differs from the run being resumed"):
        Trainer(changed, resume=True)
    other_metric = tiny_config(data, tmp_path / "model", max_updates=4, selection_metric="loss")
    with pytest.raises(WeanError, match="selection_metric was 'bleu'; it cannot change"):
        Trainer(other_metric, resume=True)
    other_optimizer = tiny_config(data, tmp_path / "model", max_updates=4, optimizer="sgd")
    with pytest.raises(WeanError, match="training.optimizer was 'adam'; it cannot change"):
        Trainer(other_optimizer, resume=True)


def test_resume_accepts_a_new_corpus_tokenization_and_keeps_it(tmp_path):
    # how the corpus was tokenized only matters to plain text at inference: declaring it later is allowed
    data = write_corpus(tmp_path / "data", train=50, valid=10)
    Trainer(tiny_config(data, tmp_path / "model", max_updates=2)).train()
    declared = tiny_config(data, tmp_path / "model", max_updates=4)
    declared.data.tokenizer.corpus_tokenization = "ptb"
    Trainer(declared, resume=True).train()
    assert load(tmp_path / "model").config.data.tokenizer.corpus_tokenization == "ptb"


BF16 = pytest.mark.skipif(not bf16_lstm_supported(torch.device("cpu")),
                          reason="this CPU has no bfloat16 LSTM (no AVX-512); bf16 training is refused here")


def test_bf16_is_refused_in_one_line_where_the_cpu_cannot_run_it(tmp_path, monkeypatch):
    import wean.training.precision

    monkeypatch.setattr(wean.training.precision, "bf16_lstm_supported", lambda device: False)
    data = write_corpus(tmp_path / "data", train=20, valid=4)
    with pytest.raises(WeanError, match="training.precision: bf16 cannot run here.*use fp32"):
        Trainer(tiny_config(data, tmp_path / "model", precision="bf16"))


@BF16
def test_bf16_training_learns_and_keeps_fp32_weights(tmp_path):
    data = write_corpus(tmp_path / "data")
    # 8 epochs: bf16's accuracy on this task settles only then (0.995-1.0 over seeds; after 6 it
    # still moves with rounding-level changes, 0.92-0.99)
    # kernels fixed, not timed (auto): the same arithmetic on every run
    trainer = Trainer(tiny_config(data, tmp_path / "model", precision="bf16", max_epochs=8, kernels="onednn"))
    trainer.train()
    assert all(p.dtype == torch.float32 for p in trainer.model.parameters())  # autocast, not a cast
    sources, targets = reverse_pairs(200, seed=7)
    outputs = [g.text for g in load(tmp_path / "model").generate(sources, beam=1)]
    assert sum(o == t for o, t in zip(outputs, targets)) / len(targets) >= 0.95


@BF16
@pytest.mark.parametrize("spm", [False, True])
def test_bf16_loss_is_the_fp32_loss_to_bf16_precision(tmp_path, spm):
    data = write_corpus(tmp_path / "data", train=64, valid=8)
    config = tiny_config(data, tmp_path / "model")
    config.model.spm.enabled = spm
    trainer = Trainer(config)
    batch = trainer.criterion.training_batch(trainer.train_examples[:32])
    trainer.model.eval()  # no dropout: the same function twice
    with torch.no_grad():
        fp32 = float(trainer.criterion.training_loss(batch))
        bf16 = Criterion(trainer.model, autocast=torch.bfloat16).training_loss(batch)
    assert bf16.dtype == torch.float32
    assert float(bf16) != fp32  # bf16 really ran...
    assert abs(float(bf16) - fp32) / fp32 < 0.02  # ...and agrees to its ~3 significant digits


def test_resuming_a_run_at_its_update_budget_trains_nothing(tmp_path):
    data = write_corpus(tmp_path / "data", train=100, valid=10)
    settings = dict(max_updates=4, validate_every=2, batch_size=16)
    Trainer(tiny_config(data, tmp_path / "model", **settings)).train()
    weights = (tmp_path / "model" / "model.safetensors").read_bytes()
    final = tmp_path / "model" / "checkpoints" / "step-00000004" / "training.json"
    written = final.stat().st_mtime_ns
    again = Trainer(tiny_config(data, tmp_path / "model", **settings), resume=True).train()
    assert again.updates == 4 and len(again.losses) == 4
    assert (tmp_path / "model" / "model.safetensors").read_bytes() == weights
    assert final.stat().st_mtime_ns == written  # a finished run is not written again
    lower = Trainer(tiny_config(data, tmp_path / "model", **{**settings, "max_updates": 2}), resume=True).train()
    assert lower.updates == 4  # a budget already passed stops at once too


def test_resuming_a_run_that_stopped_early_trains_nothing(tmp_path):
    data = write_corpus(tmp_path / "data", train=100, valid=10)
    # learning rate 0: the validation loss never improves after the first, so patience 2 ends the run
    settings = dict(max_updates=40, validate_every=2, batch_size=16, learning_rate=0.0,
                    selection_metric="loss", early_stopping_patience=2)
    first = Trainer(tiny_config(data, tmp_path / "model", **settings)).train()
    assert first.updates == 6  # validations at 2 (best), 4 and 6 (no gain): stopped
    again = Trainer(tiny_config(data, tmp_path / "model", **settings), resume=True).train()
    assert again.updates == 6 and len(again.losses) == 6


@pytest.mark.parametrize("watch_loss, stop_at, lr_of_validations", [
    # the metric never rises after the first validation: patience runs out on it alone ...
    (False, 5, [0.004, 0.004, 0.004, 0.002, 0.002]),
    # ... while the loss falls until the 4th: with the loss watched, the count starts there
    (True, 8, [0.004] * 6 + [0.002] * 2),
])
def test_both_patiences_count_validations_without_progress(tmp_path, monkeypatch, watch_loss, stop_at,
                                                          lr_of_validations):
    """A run whose selection metric is flat while its validation loss still falls is learning:
    with ``patience_watches_loss`` only validations where neither improved count against it."""
    import wean.training.validation

    losses = iter([5.0, 4.0, 3.0, 2.0, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5])
    monkeypatch.setattr(wean.training.validation.Validation, "scores",
                        lambda self, *args: {"loss": next(losses), "bleu": 1.0, "sari": 1.0, "rouge2": 1.0})
    data = write_corpus(tmp_path / "data", train=100, valid=10)
    settings = dict(max_updates=40, validate_every=1, batch_size=16, learning_rate=0.004, lr_patience=2,
                    early_stopping_patience=4, patience_watches_loss=watch_loss)
    state = Trainer(tiny_config(data, tmp_path / "model", **settings)).train()
    assert state.updates == stop_at
    assert [record["learning_rate"] for record in state.validations] == lr_of_validations


def test_the_logged_loss_averages_the_last_updates_across_an_epoch_boundary(tmp_path):
    data = write_corpus(tmp_path / "data", train=300, valid=20)
    # 19 batches per epoch: the line at update 20 covers updates 16-20, four of them in epoch 1
    settings = dict(max_updates=20, validate_every=0, batch_size=16, log_every=5, max_epochs=5)
    state = Trainer(tiny_config(data, tmp_path / "model", **settings)).train()
    lines = (tmp_path / "model" / "train.log").read_text().splitlines()
    logged = float(next(line for line in lines if line.startswith("update 20 ")).split()[3])
    window = state.losses[15:20]
    assert min(window) - 1e-4 <= logged <= max(window) + 1e-4
    assert abs(logged - state.losses[19]) > 1e-3  # not the first update of epoch 2 alone


def test_without_a_validation_split_training_pairs_are_held_out_and_said_so(tmp_path):
    """`make train-demo DEMO_TRAIN=mine` on a machine without ../shared used to stop at once: the
    demo config named a validation split there."""
    import dataclasses

    data = write_corpus(tmp_path / "data", train=300, valid=20)
    config = tiny_config(data, tmp_path / "model", max_updates=4, validate_every=2, batch_size=16)
    config = dataclasses.replace(config, data=dataclasses.replace(config.data, valid="", valid_holdout=40))
    trainer = Trainer(config)
    assert len(trainer.train_examples) == 260 and len(trainer.validation.valid.sources) == 40
    trained_lines = {example.index for example in trainer.train_examples}
    assert len(trained_lines) == 260
    state = trainer.train()
    assert state.validations and "40 of the 300 training pairs" in (tmp_path / "model" / "train.log").read_text()
    # the same pairs again on resume: the choice is a function of the seed
    again = Trainer(config, resume=True)
    assert again.validation.valid.sources == trainer.validation.valid.sources


def test_the_log_names_the_device_and_thread_count(tmp_path):
    """The thread count may change a CPU run's float summation order, so its log names it."""
    data = write_corpus(tmp_path / "data", train=100, valid=10)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        Trainer(tiny_config(data, tmp_path / "model", max_updates=1, batch_size=16)).train()
    finally:
        torch.set_num_threads(threads)
    header = (tmp_path / "model" / "train.log").read_text().splitlines()[0]
    assert header.endswith("parameters, cpu, 1 thread"), header


def test_a_budget_that_ends_between_validations_still_writes_the_model(tmp_path):
    data = write_corpus(tmp_path / "data", train=300, valid=20)
    state = Trainer(tiny_config(data, tmp_path / "model", max_updates=7, batch_size=16)).train()  # epoch: 19
    assert state.validations == [] and "holds the last weights" in (tmp_path / "model" / "train.log").read_text()
    load(tmp_path / "model").generate(["a b c"])


def saved_trainer_state(model_dir):
    from wean.tensor_files import read_tensors, unflatten_state
    from wean.textio import read_json

    checkpoint = model_dir / "checkpoints" / (model_dir / "checkpoints" / "latest").read_text().strip()
    return unflatten_state(read_json(checkpoint / "training.json"),
                           read_tensors(checkpoint / "training.safetensors")[0])["trainer"]


def test_a_kill_anywhere_in_the_final_save_resumes_to_a_finished_run_without_leftovers(tmp_path, monkeypatch):
    """kill -9 at each rename and each fsync of the last save (the checkpoint and ``latest``): the
    resumed run removes what the kill left, ends marked finished with a model to load, and has the
    losses of the run never killed."""
    import os

    from wean.training.trainer import Trainer as TrainerClass

    data = write_corpus(tmp_path / "data", train=100, valid=10)
    settings = dict(max_updates=3, validate_every=2, batch_size=16)  # the kills come after the checkpoint of 2
    whole = Trainer(tiny_config(data, tmp_path / "whole", **settings)).train()
    assert saved_trainer_state(tmp_path / "whole")["finished"]

    calls = []
    real_replace, real_fsync, real_finish = os.replace, os.fsync, TrainerClass._finish
    state = {"finishing": False, "kill_at": None}

    def counted(real):
        def call(*args):
            if state["finishing"]:
                calls.append(real.__name__)
                if len(calls) == state["kill_at"]:
                    raise KeyboardInterrupt("kill -9")
            return real(*args)
        return call

    def finish(self):
        state["finishing"] = True
        try:
            real_finish(self)
        finally:
            state["finishing"] = False

    monkeypatch.setattr(os, "replace", counted(real_replace))
    monkeypatch.setattr(os, "fsync", counted(real_fsync))
    monkeypatch.setattr(TrainerClass, "_finish", finish)
    Trainer(tiny_config(data, tmp_path / "counted", **settings)).train()
    points = len(calls)
    assert calls.count("replace") >= 4 and calls.count("fsync") >= calls.count("replace")  # each file synced
    for kill_at in range(1, points + 1):
        calls.clear()
        state["kill_at"] = kill_at
        run = tmp_path / f"killed-{kill_at}"
        with pytest.raises(KeyboardInterrupt):
            Trainer(tiny_config(data, run, **settings)).train()
        state["kill_at"] = None
        resumed = Trainer(tiny_config(data, run, **settings), resume=True).train()
        assert resumed.losses == whole.losses, kill_at
        assert saved_trainer_state(run)["finished"], kill_at
        leftovers = [path.name for path in run.rglob("*") if path.name.endswith((".tmp", ".old"))]
        assert not leftovers, (kill_at, leftovers)
        load(run)


def test_a_run_killed_before_its_first_checkpoint_starts_again_on_resume_or_overwrite(tmp_path):
    """What a kill leaves before the first checkpoint (config, tokenizer, vocabularies, a log,
    temporaries) is no run to resume and no model: --resume starts the run again from the
    beginning, and --overwrite replaces it, leaving no temporary behind."""
    data = write_corpus(tmp_path / "data", train=60, valid=10)
    for flags in ({"resume": True}, {"overwrite": True}):
        directory = tmp_path / f"killed-{next(iter(flags))}"
        config = tiny_config(data, directory, max_updates=2)
        Trainer(config)  # what training writes before its first update: assets, then the kill
        (directory / "vocab.json.4242.tmp").write_text("[")  # a write the kill cut short
        assert not (directory / "checkpoints" / "latest").exists()
        with pytest.raises(WeanError, match="already holds a training run|not empty"):
            Trainer(config)
        state = Trainer(config, **flags).train()
        assert state.updates == 2 and (directory / "model.safetensors").is_file()
        assert not list(directory.glob("*.tmp"))
        if "resume" in flags:
            assert "starts again from the beginning" in (directory / "train.log").read_text()
    only_a_log = tmp_path / "only-a-log"  # killed at once: the log is all there is
    only_a_log.mkdir()
    (only_a_log / "train.log").write_text("training ...\n")
    assert Trainer(tiny_config(data, only_a_log, max_updates=1), overwrite=True).train().updates == 1


def test_overwrite_leaves_nothing_of_the_old_model(tmp_path):
    """A model's card and the models it carried describe it, and are false of another put in its
    place: --overwrite removes them with its weights; a card in a folder with no run stays."""
    data = write_corpus(tmp_path / "data", train=60, valid=10)
    directory = tmp_path / "model"
    Trainer(tiny_config(data, directory, max_updates=1)).train()
    (directory / "MODEL_CARD.md").write_text("# The old model\n")
    for carried in ("reranker/channel", "ensemble/1"):
        (directory / carried).mkdir(parents=True)
        (directory / carried / "config.yaml").write_text("name: old\n")
    Trainer(tiny_config(data, directory, max_updates=1), overwrite=True).train()
    assert not any((directory / name).exists() for name in ("MODEL_CARD.md", "reranker", "ensemble"))
    card_only = tmp_path / "card-only"  # not a run killed before its first checkpoint, nor a model
    card_only.mkdir()
    (card_only / "MODEL_CARD.md").write_text("# To be trained\n")
    with pytest.raises(WeanError, match="nothing to resume"):
        Trainer(tiny_config(data, card_only, max_updates=1), resume=True)
    with pytest.raises(WeanError, match="replaces a wean model directory, and this is none"):
        Trainer(tiny_config(data, card_only, max_updates=1), overwrite=True)
    assert (card_only / "MODEL_CARD.md").is_file()


def test_a_kill_while_checkpoints_are_pruned_leaves_no_half_checkpoint(tmp_path, monkeypatch):
    """Pruning renames a checkpoint before deleting it: a kill in between leaves step-N.pruned,
    which wean average and wean verify pass over and the next start removes."""
    import shutil

    from wean.cli import main
    from wean.training import checkpoints

    data = write_corpus(tmp_path / "data", train=60, valid=10)
    directory = tmp_path / "model"
    config = tiny_config(data, directory, max_updates=6, save_every=2, validate_every=0, keep_best=1)
    real_rmtree = shutil.rmtree

    def killed_midway(path, *args, **kwargs):
        if not str(path).endswith(".pruned"):  # shutil's own: the saves' rmtree too
            return real_rmtree(path, *args, **kwargs)
        (Path(path) / "training.json").unlink()  # part of it gone, then the kill
        raise KeyboardInterrupt("kill -9")

    monkeypatch.setattr(checkpoints.shutil, "rmtree", killed_midway)
    with pytest.raises(KeyboardInterrupt):
        Trainer(config).train()
    monkeypatch.setattr(checkpoints.shutil, "rmtree", real_rmtree)
    folder = directory / "checkpoints"
    half = [path.name for path in folder.glob("*.pruned")]
    assert half and not (folder / half[0] / "training.json").exists()
    assert main(["verify", str(directory)]) == 0
    assert main(["average", str(directory), "--last", "1", "--out", str(tmp_path / "averaged")]) == 0
    Trainer(config, resume=True).train()
    assert not list(folder.glob("*.pruned"))
