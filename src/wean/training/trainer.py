"""The training loop: batches → Adam updates → validation → checkpoints, resumable exactly.

Every ``validate_every`` updates (or at the end of each epoch when it is 0) the model is scored on
the validation split: teacher-forced loss, and BLEU, SARI and ROUGE-2 of greedy outputs. The
``selection_metric`` then decides three things: which checkpoints are kept (the best
``keep_best``; ``model.safetensors`` is always the best one), when the learning rate is halved
(after ``lr_patience`` validations without improvement) and when training stops (after
``early_stopping_patience``). Only the validation split is ever scored: there is no way to select
on a test set here.

A checkpoint holds the weights, the optimizer and scheduler state, the random-number generator,
the epoch, the position in that epoch's batch order and the validation history, so
``wean train --resume`` continues with exactly the updates the uninterrupted run would have made.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch
from torch import nn

from wean.checkpoint import WEIGHTS, atomic_write_json, save_weights
from wean.config import Config
from wean.criterion import Criterion
from wean.data.assets import build_assets
from wean.data.corpus import encode_pairs, hold_out, make_batches, read_parallel
from wean.device import bf16_lstm_supported, resolve_device
from wean.errors import WeanError
from wean.model_dir import Assets, load_assets, save_assets, write_control_counts
from wean.models.interfaces import TrainingCorpus
from wean.models.model import build_model
from wean.training.checkpoints import RunCheckpoints
from wean.training.validation import Validation

HIGHER_IS_BETTER = {"loss": False, "bleu": True, "sari": True, "rouge2": True}


@dataclass
class TrainingState:
    epoch: int = 0
    batches_done: int = 0  # in the current epoch's batch order
    updates: int = 0
    tokens: int = 0
    bad_validations: int = 0
    best: list = field(default_factory=list)  # [[metric value, updates, checkpoint name]], best first
    validations: list = field(default_factory=list)
    losses: list = field(default_factory=list)  # training loss of every update, for tests and curves
    finished: bool = False


class Trainer:
    def __init__(self, config: Config, resume: bool = False, log=None):
        if not config.model_dir:
            raise WeanError("config: model_dir is empty; say where the model goes (--set model_dir=DIR)")
        if not config.data.train:
            raise WeanError("config: data.train is empty; say where the training pairs are (--set data.train=PREFIX)")
        self.config = config
        self.directory = Path(config.model_dir)
        self.log_file = None
        self._print = log or (lambda message: print(message, file=sys.stderr))
        self.checkpoints = RunCheckpoints(self.directory)
        if resume and not self.checkpoints.exist():
            raise WeanError(f"{self.directory}: nothing to resume (no checkpoints/latest)")
        if not resume and self.checkpoints.exist():
            raise WeanError(
                f"{self.directory}: already holds a training run; pass --resume to continue it "
                "or choose another model_dir"
            )
        torch.manual_seed(config.training.seed)
        train = read_parallel(config.data.train)
        self.validation_note = ""  # said in the log when training starts
        if config.data.valid:
            valid = read_parallel(config.data.valid)
        else:
            train, valid = hold_out(train, config.data.valid_holdout, config.training.seed)
            self.validation_note = (
                f"data.valid is not set: {len(valid.sources)} of the {len(train.sources) + len(valid.sources):,} "
                f"training pairs (chosen with training.seed {config.training.seed}) are held out and validated on "
                "(data.valid_holdout)")
        if resume:
            assets = load_assets(self.directory)
            for section in ("data", "model"):
                if _weights_depend_on(assets.config, section) != _weights_depend_on(config, section):
                    raise WeanError(
                        f"{self.directory}: the {section} section differs from the run being resumed; "
                        "only training and generation settings may change on --resume"
                    )
            if assets.config.training.selection_metric != config.training.selection_metric:
                # the kept best values, the plateau scheduler and early stopping all count in the old metric
                raise WeanError(
                    f"{self.directory}: training.selection_metric was {assets.config.training.selection_metric!r}; "
                    "it cannot change on --resume"
                )
            self.assets = Assets(config, assets.tokenizer, assets.source_vocabulary, assets.target_vocabulary)
            save_assets(self.directory, self.assets)  # the model is used with the settings it finished under
        else:
            self.assets = build_assets(config, train)
            save_assets(self.directory, self.assets)
        self.device = resolve_device(config.training.device)
        if config.training.precision == "bf16" and not bf16_lstm_supported(self.device):
            raise WeanError(
                f"training.precision: bf16 cannot run here: PyTorch has no bfloat16 LSTM for this "
                f"{self.device.type} (on a CPU it needs AVX-512); use fp32"
            )
        self.model = build_model(config.model, len(self.assets.source_vocabulary), len(self.assets.target_vocabulary))
        self.model.to(self.device)
        if not resume:  # what parts learn from the corpus (WEAN's candidate words) comes with the weights on resume
            self.model.prepare(TrainingCorpus(train.sources, self.assets.tokenizer, self.assets.target_vocabulary))
        # fused: every parameter's Adam update in one kernel, not a dozen tensor operations each
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.training.learning_rate, fused=True)
        higher = HIGHER_IS_BETTER[config.training.selection_metric]
        self.scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            self.optimizer,
            mode="max" if higher else "min",
            factor=0.5,
            patience=config.training.lr_patience - 1,  # torch waits patience + 1 bad validations
            min_lr=config.training.min_learning_rate,
        )
        self.criterion = Criterion(self.model, config.training.label_smoothing, config.training.precision == "bf16")
        self.train_examples = encode_pairs(
            train,
            self.assets.tokenizer,
            self.assets.source_vocabulary,
            self.assets.target_vocabulary,
            config.data.max_tokens,
            self.assets.control,
        )
        if self.assets.control and not resume:
            write_control_counts(self.directory, self.assets, self.train_examples)
        self.validation = Validation(config, self.assets, valid)
        self.state = TrainingState()
        if resume:
            self._restore()

    # --- checkpoints ----------------------------------------------------------------------------

    def _restore(self) -> None:
        name, saved = self.checkpoints.load_latest(self.model)
        self.optimizer.load_state_dict(saved["optimizer"])
        self.scheduler.load_state_dict(saved["scheduler"])
        torch.set_rng_state(saved["rng"])
        if self.device.type == "cuda" and "cuda_rng" in saved:
            torch.cuda.set_rng_state(saved["cuda_rng"])
        self.state = TrainingState(**saved["trainer"])
        self.state.finished = False
        self._print(f"resumed from {name}: epoch {self.state.epoch + 1}, update {self.state.updates}")

    def _save(self, name: str) -> None:
        state = {
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "rng": torch.get_rng_state(),
            **({"cuda_rng": torch.cuda.get_rng_state()} if self.device.type == "cuda" else {}),  # dropout masks
            "trainer": self.state.__dict__,
        }
        self.checkpoints.save(name, self.model, state)

    # --- the loop -------------------------------------------------------------------------------

    def _epoch_batches(self, epoch: int) -> list:
        generator = torch.Generator().manual_seed(self.config.training.seed * 100003 + epoch)
        settings = self.config.training
        return make_batches(self.train_examples, settings.batch_size, settings.batch_tokens, generator)

    def _update(self, examples) -> tuple[float, int]:
        """One Adam step on a batch; returns the loss per target token and the token count."""
        self.model.train()
        batch = self.criterion.training_batch(examples)
        tokens = batch.target_tokens  # counted on the CPU: no wait for the GPU
        loss = self.criterion.training_loss(batch.to(self.device)) / tokens
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        if self.config.training.clip_grad_norm > 0:
            nn.utils.clip_grad_norm_(self.model.parameters(), self.config.training.clip_grad_norm)
        self.optimizer.step()
        return loss.item(), tokens

    def train(self) -> TrainingState:
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        settings = self.config.training
        self.directory.mkdir(parents=True, exist_ok=True)
        self.log_file = open(self.directory / "train.log", "a", encoding="utf-8")
        writer = SummaryWriter(str(self.directory / "tensorboard"))
        self.log(
            f"training {self.config.name}: {len(self.train_examples)} pairs, vocabulary "
            f"{len(self.assets.source_vocabulary)}/{len(self.assets.target_vocabulary)}, "
            f"{sum(p.numel() for p in self.model.parameters()):,} parameters"
        )
        if self.validation_note:
            self.log(self.validation_note)
        stop = False
        try:
            if settings.max_updates and self.state.updates >= settings.max_updates:  # a resumed run at its budget
                self.log(f"update {self.state.updates} already reaches training.max_updates={settings.max_updates}")
                return self.state
            if self._out_of_patience():  # a resumed run that stopped early
                self.log(f"the run stopped early at update {self.state.updates}: nothing left to train")
                return self.state
            # the loss and tokens/s window spans epochs and skips the time spent validating
            window_loss, window_tokens, window_start = 0.0, 0, time.perf_counter()
            while not stop and self.state.epoch < settings.max_epochs:
                batches = self._epoch_batches(self.state.epoch)
                self.batches_per_epoch = len(batches)
                progress = tqdm(
                    total=len(batches), initial=self.state.batches_done, desc=f"epoch {self.state.epoch + 1}",
                    disable=None, file=sys.stderr, leave=False,
                )
                while self.state.batches_done < len(batches):
                    loss, tokens = self._update(batches[self.state.batches_done])
                    self.state.batches_done += 1
                    self.state.updates += 1
                    self.state.tokens += tokens
                    self.state.losses.append(loss)
                    window_loss += loss * tokens
                    window_tokens += tokens
                    progress.update()
                    if self.state.updates % settings.log_every == 0:
                        rate = window_tokens / (time.perf_counter() - window_start)
                        mean = window_loss / window_tokens
                        lr = self.optimizer.param_groups[0]["lr"]
                        progress.set_postfix(loss=f"{mean:.3f}", tok_s=f"{rate:.0f}", lr=f"{lr:.2g}")
                        self.log(f"update {self.state.updates} loss {mean:.4f} tokens/s {rate:.0f} lr {lr:.3g}",
                                 quiet=True)
                        writer.add_scalar("train/loss", mean, self.state.updates)
                        writer.add_scalar("train/tokens_per_second", rate, self.state.updates)
                        writer.add_scalar("train/learning_rate", lr, self.state.updates)
                        window_loss, window_tokens, window_start = 0.0, 0, time.perf_counter()
                    end_of_epoch = self.state.batches_done == len(batches)
                    if end_of_epoch:
                        self.state.epoch += 1
                        self.state.batches_done = 0
                    due = (settings.validate_every and self.state.updates % settings.validate_every == 0) or (
                        not settings.validate_every and end_of_epoch
                    )
                    limit = settings.max_updates and self.state.updates >= settings.max_updates
                    if due:
                        validation_start = time.perf_counter()
                        stop = self._validate(writer)
                        window_start += time.perf_counter() - validation_start
                    if limit:
                        stop = True
                    if due or limit or stop:
                        self._save(f"step-{self.state.updates:08d}")
                        self._prune()
                    if stop or end_of_epoch:
                        break
                progress.close()
            self.state.finished = True
            self._save(f"step-{self.state.updates:08d}")
            self._prune()
            if not (self.directory / WEIGHTS).exists():
                # no validation ran (max_updates below validate_every or an epoch): a run that exits 0
                # leaves a model to use all the same. Not validated here, so that a longer resumed
                # run stays identical to one never stopped
                save_weights(self.model, self.directory / WEIGHTS)
                self.log(f"no validation ran before update {self.state.updates}: model.safetensors holds "
                         "the last weights, not selected ones")
        finally:
            writer.close()
            self.log_file.close()
        return self.state

    def log(self, message: str, quiet: bool = False) -> None:
        if self.log_file:
            self.log_file.write(message + "\n")
            self.log_file.flush()
        if not quiet:
            self._print(message)

    # --- validation and selection ----------------------------------------------------------------

    def _validate(self, writer) -> bool:
        """Score the validation split, update selection state; True when training should stop."""
        started = time.perf_counter()
        epochs = self.state.epoch + self.state.batches_done / self.batches_per_epoch
        record = {"updates": self.state.updates, "epochs": epochs,
                  **self.validation.scores(self.criterion, self.assets, self.device),
                  "learning_rate": self.optimizer.param_groups[0]["lr"]}
        record["seconds"] = time.perf_counter() - started
        self.state.validations.append(record)
        atomic_write_json(self.directory / "validations.json", self.state.validations)
        for key in ("loss", "bleu", "sari", "rouge2"):
            writer.add_scalar(f"valid/{key}", record[key], self.state.updates)

        metric = self.config.training.selection_metric
        value = record[metric]
        higher = HIGHER_IS_BETTER[metric]
        improved = not self.state.best or (value > self.state.best[0][0] if higher else value < self.state.best[0][0])
        name = f"step-{self.state.updates:08d}"
        self.state.best.append([value, self.state.updates, name])
        self.state.best.sort(key=lambda entry: -entry[0] if higher else entry[0])
        if improved:
            self.state.bad_validations = 0
            save_weights(self.model, self.directory / WEIGHTS)
            atomic_write_json(self.directory / "best.json", record)
        else:
            self.state.bad_validations += 1
        self.scheduler.step(value)
        self.log(
            f"validation at update {self.state.updates} (epoch {epochs:.2f}): loss {record['loss']:.4f} "
            f"BLEU {record['bleu']:.2f} SARI {record['sari']:.2f} ROUGE-2 {record['rouge2']:.2f}"
            f"{'  *best*' if improved else ''}"
        )
        if self._out_of_patience():
            patience = self.config.training.early_stopping_patience
            self.log(f"early stopping: no {metric} improvement in {patience} validations")
            return True
        return False

    def _out_of_patience(self) -> bool:
        patience = self.config.training.early_stopping_patience
        return bool(patience) and self.state.bad_validations >= patience

    def _prune(self) -> None:
        """Keep the best ``keep_best`` validated checkpoints and the latest one."""
        self.checkpoints.prune({entry[2] for entry in self.state.best[: self.config.training.keep_best]})


def _weights_depend_on(config: Config, section: str):
    """A config section without the settings that only matter outside training: how the corpus was
    tokenized is used only to turn plain text into model text and back."""
    value = getattr(config, section)
    if section == "data":
        value = replace(value, tokenizer=replace(value.tokenizer, corpus_tokenization="none"))
    return value


def train(config: Config, resume: bool = False) -> TrainingState:
    return Trainer(config, resume=resume).train()
