"""The training loop: batches → optimizer steps → validation → checkpoints, resumable exactly.

Every ``validate_every`` updates (or at the end of each epoch when it is 0) the model is scored on
the validation split: teacher-forced loss, and BLEU, SARI, ROUGE-2 and the keys of
``validation_metrics`` of greedy outputs. The ``selection_metric`` (any of them, in the direction
its metric declares) then decides three things: which checkpoints are kept (the best
``keep_best``; ``model.safetensors`` is always the best one), when the learning rate is halved
(every ``lr_patience`` validations without improvement) and when training stops (after
``early_stopping_patience``). Both patiences count the same validations; with
``patience_watches_loss`` a validation that lowers the best loss is not among them. Only the
validation split is ever scored: there is no way to select on a test set here.

A checkpoint holds the weights, the optimizer state, the random-number generator,
the epoch, the position in that epoch's batch order and the validation history, so
``wean train --resume`` continues with exactly the updates the uninterrupted run would have made.

Started by ``torchrun``, each process trains on its share of every batch and only rank 0 writes
and validates (:mod:`wean.training.distributed`); ``training.precision`` runs the forward pass
under bf16 or fp16 autocast (:mod:`wean.training.precision`).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from wean.config import Config
from wean.data.corpus import Batch, encode_pairs, make_batches
from wean.data.training_text import training_text
from wean.data.vocabulary import SPECIALS
from wean.errors import WeanError
from wean.model_dir import (
    KERNELS_CHOSEN, Assets, clear_model_files, load_assets, remove_leftovers_of_a_kill, save_assets, write_control_counts,
)
from wean.models import kernel_choice
from wean.models.device import resolve_device
from wean.models.encoder import LSTMEncoder
from wean.models.interfaces import TrainingCorpus
from wean.models.kernels import use_kernels
from wean.models.model import build_model
from wean.models.pretrained_embeddings import load_pretrained
from wean.tensor_files import WEIGHTS, save_weights
from wean.textio import atomic_write_json, read_json
from wean.training.allocator import keep_freed_memory
from wean.training.assets import build_assets
from wean.training.checkpoints import RunCheckpoints
from wean.training.criterion import Criterion
from wean.training.distributed import join, leave
from wean.training.fine_tuning import carry_generation_models, starting_model
from wean.training.optimizers import build_optimizer
from wean.training.patience import halved, higher_is_better, judge
from wean.training.precision import autocast_dtype, check_precision
from wean.training.run_directory import RunLock, check_new_run, resumed_assets
from wean.training.run_log import RunLog
from wean.training.validation import Validation


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
    def __init__(self, config: Config, resume: bool = False, log=None, overwrite: bool = False):
        """``overwrite``: a new run into a model_dir that holds something replaces the model there
        (:func:`wean.model_dir.check_directory`); without it, such a directory is refused."""
        if not config.model_dir:
            raise WeanError("config: model_dir is empty; say where the model goes (--set model_dir=DIR)")
        if not config.data.train:
            raise WeanError("config: data.train is empty; say where the training pairs are (--set data.train=PREFIX)")
        # a run from a trained model takes its embeddings with its weights
        pretrained = "" if config.training.init_from else config.model.embeddings.pretrained
        if pretrained and not resume and not Path(pretrained).is_file():  # before the tokenizer is trained
            raise WeanError(f"model.embeddings.pretrained: {pretrained}: file not found")
        self.config = config
        self.directory = Path(config.model_dir)
        # joined first: on GPUs, each process's own device is known only then
        self.distributed, self.device = join(resolve_device(config.training.device), config.training.distributed_timeout)
        check_precision(config.training.precision, self.device)
        if self.device.type == "cpu":
            # process-wide, and kept after training: up to 1 GiB of freed heap stays with the process
            keep_freed_memory()
        main = self.distributed.main
        self.run_lock, refused = None, ""
        if main:  # held until train() returns
            try:
                self.run_lock = RunLock(self.directory)
            except WeanError as error:
                refused = str(error)
        refused = self.distributed.broadcast(refused)  # every process stops, not rank 0 alone
        if refused:
            raise WeanError(refused)
        try:
            self._set_up(config, resume, log, overwrite)
        except BaseException:
            if self.run_lock is not None:
                self.run_lock.abandon()
            raise

    def _release(self) -> None:
        if self.run_lock is not None:
            self.run_lock.release()

    def _set_up(self, config: Config, resume: bool, log, overwrite: bool) -> None:
        main = self.distributed.main
        start = None  # training.init_from's model, read by rank 0
        self.run_log = RunLog(self.directory, main, log)
        self.checkpoints = RunCheckpoints(self.directory)
        asked_to_resume = resume
        resume, overwrite = check_new_run(self.directory, self.checkpoints.exist(), resume, overwrite)
        if not resume:
            self.distributed.barrier()  # every process has checked before the first writes
        torch.manual_seed(config.training.seed)
        train, valid, self.notes = training_text(config)  # self.notes: said in the log when training starts
        if self.run_lock is not None and self.run_lock.note:
            self.notes.append(self.run_lock.note)
        if asked_to_resume and not resume:
            self.notes.append("--resume: no checkpoint was written before the run stopped, so it starts again from "
                              "the beginning")
        if resume:
            if main:
                leftovers = remove_leftovers_of_a_kill(self.directory)
                if leftovers:
                    self.notes.append(f"removed what a kill during a save left: {', '.join(leftovers)}")
            self.assets = resumed_assets(self.directory, config)
            self.distributed.barrier()  # every process has read them before rank 0 rewrites them
            if main:
                save_assets(self.directory, self.assets)  # the model is used with the settings it finished under
        else:
            if main:  # the others read what rank 0 learned: one tokenizer, one vocabulary
                start = starting_model(config, self.directory) if config.training.init_from else None
                self.assets = start.assets if start else build_assets(config, train)
                if overwrite:
                    clear_model_files(self.directory)
                save_assets(self.directory, self.assets)
                if start:
                    carry_generation_models(start, self.directory)
                    self.notes.append(f"starts from {start.directory.resolve()}'s weights and tokens"
                                      + "".join(f"; carries its {folder}" for folder in start.carried))
            self.distributed.barrier()
            if not main:
                saved = load_assets(self.directory)
                self.assets = Assets(config, saved.tokenizer, saved.source_vocabulary, saved.target_vocabulary)
        if start is not None:  # loaded when checked; the other processes take its weights when DDP wraps it
            self.model = start.model
        else:
            self.model = build_model(config.model, len(self.assets.source_vocabulary),
                                     len(self.assets.target_vocabulary))
        self.model.to(self.device)
        # what parts learn from the corpus (WEAN's candidate words) comes with the weights on resume,
        # and from a trained model
        if not resume and not config.training.init_from:
            self.model.prepare(TrainingCorpus(train.sources, self.assets.tokenizer, self.assets.target_vocabulary))
            if config.model.embeddings.pretrained:
                self._load_pretrained_embeddings(Path(config.model.embeddings.pretrained))
        # before auto's measure, which takes the pairs' lengths
        self.train_examples = encode_pairs(
            train,
            self.assets.tokenizer,
            self.assets.source_vocabulary,
            self.assets.target_vocabulary,
            config.data.max_tokens,
            self.assets.control,
            quiet=not main,  # one warning, not one per process
            copies=self.model.copies_source,
        )
        if self.assets.control and not resume and main:
            write_control_counts(self.directory, self.assets, self.train_examples)
        kernels = config.training.kernels
        for module in self.model.modules():  # before auto times a training step: as training runs it
            if isinstance(module, LSTMEncoder):
                module.split_by_length = kernels != "blas"
        if kernels == "auto":  # before DDP wraps the model: measuring runs its backward
            kernels = self._chosen_kernels(resume, main)
        use_kernels(self.model, kernels, "config: training.kernels")
        replica = self.model
        if self.distributed.enabled:
            # DDP starts every process from rank 0's weights and buffers and all-reduces (averages)
            # gradients in backward; no buffer changes during training, so none is synced at each forward
            replica = DistributedDataParallel(
                self.model, device_ids=[self.device] if self.device.type == "cuda" else None, forward_sync_buffers=False
            )
            # dropout masks: a stream per process (rank 0 keeps the one-process stream)
            torch.manual_seed(config.training.seed + 1_000_003 * self.distributed.rank)
        self.optimizer = build_optimizer(self.model, config.training.optimizer, config.training.learning_rate)
        # fp16 gradients can underflow: the scaler multiplies the loss and skips steps with inf/NaN
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=config.training.precision == "fp16")
        # training.kernels: onednn also takes the loss from the logits in one step; blas keeps
        # PyTorch's own operations throughout, the floats of the tables' runs
        self.criterion = Criterion(self.model, config.training.label_smoothing,
                                   autocast_dtype(config.training.precision), training_forward=replica,
                                   loss_from_logits=kernels == "onednn",
                                   # measured on the CPU only (results/bench-peers-xeon)
                                   by_target_length=config.training.kernels != "blas" and self.device.type == "cpu")
        self.validation = Validation(config, self.assets, valid, self.model.copies_source) if main else None
        self.state = TrainingState()
        self.finished_before = False  # a resumed run that had finished and been saved so
        if resume:
            self._restore()

    def _chosen_kernels(self, resume: bool, main: bool) -> str:
        """training.kernels: auto for this run: what it chose when it started, kept in the run folder
        so that a resume computes with the same floats; else measured now by the first process
        (wean.models.kernel_choice), whose choice every process takes."""
        path = self.directory / KERNELS_CHOSEN
        if main and not (resume and path.is_file()):
            training, lengths = self.config.training, self._mean_lengths()
            chosen = kernel_choice.choose_kernels(
                self.model, "training", self._sentences_per_batch(max(lengths)), self._measured_loss, lengths,
                setting=f"{training.precision}, label smoothing {training.label_smoothing:g}")
            atomic_write_json(path, {"kernels": chosen})
            self.notes.append(f"training.kernels auto: {chosen}, the faster for this model here ({KERNELS_CHOSEN})")
        self.distributed.barrier()  # the others read it once it is written
        recorded = read_json(path)
        if not (isinstance(recorded, dict) and recorded.get("kernels") in ("onednn", "blas")):
            raise WeanError(f"{path}: not a record of the kernels this run chose; delete it to measure again")
        return recorded["kernels"]

    def _measured_loss(self, model, source, lengths, target, kernels: str) -> torch.Tensor:
        """The training loss of the kernels' measure batch, per target token, as this run's
        criterion takes it under ``kernels`` (its precision; oneDNN's path from the logits where
        the criterion can)."""
        training = self.config.training
        criterion = Criterion(model, training.label_smoothing, autocast_dtype(training.precision),
                              loss_from_logits=kernels == "onednn")
        return criterion.training_loss(Batch(source, lengths, target, target)) / target.numel()

    def _mean_lengths(self) -> tuple[int, int]:
        """The training pairs' mean source and target lengths in tokens, for the kernels' measure:
        the target as a training batch holds it (a model with auxiliary losses may extend it)."""
        examples, pairs = self.train_examples, max(1, len(self.train_examples))
        targets = Criterion(self.model).target_tokens(examples)
        return max(1, round(sum(len(e.source) for e in examples) / pairs)), max(1, round(targets / pairs))

    def _sentences_per_batch(self, length: int) -> int:
        """About the sentences of one process's share of a training batch (the batch is global),
        for the kernels' measure on pairs whose longer side holds ``length`` tokens."""
        training = self.config.training
        sentences = training.batch_size
        if training.batch_tokens:
            sentences = min(sentences, training.batch_tokens // length)
        return max(1, sentences // self.distributed.world_size)

    # --- checkpoints ----------------------------------------------------------------------------

    def _restore(self) -> None:
        name, saved = self.checkpoints.load_latest(self.model)
        processes, world_size = saved.get("processes", 1), self.distributed.world_size
        if processes != world_size:
            raise WeanError(
                f"{self.directory}: the run was trained by {processes} process(es) and resumes exactly only "
                f"with as many (torchrun --nproc_per_node/--nnodes), not {world_size}"
            )
        self.optimizer.load_state_dict(saved["optimizer"])  # the learning rate with it
        if "scaler" in saved:
            self.scaler.load_state_dict(saved["scaler"])
        rank = self.distributed.rank
        torch.set_rng_state(saved["rng"] if rank == 0 else saved["rng_of_ranks"][rank - 1])
        if self.device.type == "cuda" and "cuda_rng" in saved:
            torch.cuda.set_rng_state(saved["cuda_rng"] if rank == 0 else saved["cuda_rng_of_ranks"][rank - 1])
        self.state = TrainingState(**saved["trainer"])
        self.finished_before = self.state.finished
        self.state.finished = False
        self.run_log.show(f"resumed from {name}: epoch {self.state.epoch + 1}, update {self.state.updates}")

    def _save(self, name: str) -> None:
        # every process's random state (its dropout masks), kept by rank 0
        rng = self.distributed.gather(torch.get_rng_state())
        cuda_rng = self.distributed.gather(torch.cuda.get_rng_state()) if self.device.type == "cuda" else None
        if not self.distributed.main:
            return
        state = {
            "optimizer": self.optimizer.state_dict(),
            "rng": rng[0],
            **({"cuda_rng": cuda_rng[0]} if cuda_rng else {}),
            **({"scaler": self.scaler.state_dict()} if self.scaler.is_enabled() else {}),
            "trainer": self.state.__dict__,
        }
        if self.distributed.enabled:
            state.update(processes=self.distributed.world_size, rng_of_ranks=rng[1:],
                         **({"cuda_rng_of_ranks": cuda_rng[1:]} if cuda_rng else {}))
        self.checkpoints.save(name, self.model, state)

    # --- the loop -------------------------------------------------------------------------------

    def _epoch_batches(self, epoch: int) -> list:
        generator = torch.Generator().manual_seed(self.config.training.seed * 100003 + epoch)
        settings = self.config.training
        return make_batches(self.train_examples, settings.batch_size, settings.batch_tokens, generator)

    def _update(self, examples) -> tuple[float, int]:
        """One optimizer step on a batch (this process's share of it); returns the loss per target
        token and the token count, of the whole batch."""
        self.model.train()
        tokens = self.criterion.target_tokens(examples)  # of the whole batch, counted on the CPU
        share, weight = self.distributed.shard(examples), 1.0
        if not share:  # fewer sentences than processes: DDP still needs this one's backward, of zero
            share, weight = examples[:1], 0.0
        summed = self.criterion.training_loss(self.criterion.training_batch(share).to(self.device))
        loss = summed / (tokens if self.config.training.loss_per == "token" else len(examples))
        if self.distributed.enabled:  # DDP averages the processes' gradients: undo the 1/N
            loss = loss * (self.distributed.world_size * weight)
        self.optimizer.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        if self.distributed.enabled and not self.state.updates:
            _check_every_parameter_learns(self.model)
        if self.config.training.clip_grad_norm > 0:
            self.scaler.unscale_(self.optimizer)
            nn.utils.clip_grad_norm_(self.model.parameters(), self.config.training.clip_grad_norm)
        self.scaler.step(self.optimizer)
        self.scaler.update()
        # reported per token whatever loss_per is; total() is the value itself on one process
        return self.distributed.total(summed.item() * weight) / tokens, tokens

    def _load_pretrained_embeddings(self, path: Path) -> None:
        """model.embeddings.pretrained into the source embeddings, and into the target's if separate."""
        tables = [(self.model.encoder, self.assets.source_vocabulary, "source")]
        if not self.config.model.share_embeddings:
            tables.append((self.model.decoder, self.assets.target_vocabulary, "target"))
        notes = []
        for part, vocabulary, side in tables:
            embedding = getattr(part, "embedding", None)
            if not isinstance(embedding, nn.Embedding):
                raise WeanError(f"model.embeddings.pretrained: the {side} side's {type(part).__name__} has no "
                                "`embedding` table to load vectors into")
            found = load_pretrained(embedding, vocabulary.itos, path, len(SPECIALS),
                                    pieces=self.config.data.tokenizer.type in ("bpe", "unigram"))
            missing = f" (e.g. {', '.join(found.examples_missing)})" if found.examples_missing else ""
            notes.append(f"{side} {found.matched} of {found.matched + found.missing} words found, "
                         f"{found.missing} missing{missing}")
        self.notes.append(f"pretrained embeddings from {path}: " + "; ".join(notes))

    def train(self) -> TrainingState:
        settings = self.config.training
        main = self.distributed.main
        if main and not (self.run_lock and self.run_lock.held):  # trained again after a first train()
            self.run_lock = RunLock(self.directory)
        self.run_log.open()
        processes = f", {self.distributed.world_size} processes" if self.distributed.enabled else ""
        # the thread count may change float summation order: replay a CPU run on as many threads
        count = torch.get_num_threads()
        threads = f", {count} {'thread' if count == 1 else 'threads'}" if self.device.type == "cpu" else ""
        self.log(
            f"training {self.config.name}: {len(self.train_examples)} pairs, vocabulary "
            f"{len(self.assets.source_vocabulary)}/{len(self.assets.target_vocabulary)}, "
            f"{sum(p.numel() for p in self.model.parameters()):,} parameters, {self.device}{threads}{processes}"
        )
        for note in self.notes:
            self.log(note)
        stop = False
        try:
            # a resumed run with nothing left to train is finished again: a kill inside its last
            # save may have left the final checkpoint unmarked or model.safetensors unwritten
            finished = self.finished_before and (self.directory / WEIGHTS).exists()
            if settings.max_updates and self.state.updates >= settings.max_updates:
                self.log(f"update {self.state.updates} already reaches training.max_updates={settings.max_updates}")
                if not finished:
                    self._finish()
                return self.state
            if self._out_of_patience():
                self.log(f"the run stopped early at update {self.state.updates}: nothing left to train")
                if not finished:
                    self._finish()
                return self.state
            if settings.init_from and not self.state.validations:
                # the starting model is the first candidate: a fine-tune that only loses keeps it
                stop = self._validate()
                self._save(f"step-{self.state.updates:08d}")
            # the loss and tokens/s window spans epochs and skips the time spent validating and saving
            window_loss, window_tokens, window_start = 0.0, 0, time.perf_counter()
            while not stop and self.state.epoch < settings.max_epochs:
                batches = self._epoch_batches(self.state.epoch)
                self.batches_per_epoch = len(batches)
                progress = tqdm(
                    total=len(batches), initial=self.state.batches_done, desc=f"epoch {self.state.epoch + 1}",
                    disable=None if main else True, file=sys.stderr, leave=False,
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
                        self._scalar("train/loss", mean)
                        self._scalar("train/tokens_per_second", rate)
                        self._scalar("train/learning_rate", lr)
                        window_loss, window_tokens, window_start = 0.0, 0, time.perf_counter()
                    end_of_epoch = self.state.batches_done == len(batches)
                    if end_of_epoch:
                        self.state.epoch += 1
                        self.state.batches_done = 0
                    due = (settings.validate_every and self.state.updates % settings.validate_every == 0) or (
                        not settings.validate_every and end_of_epoch
                    )
                    limit = settings.max_updates and self.state.updates >= settings.max_updates
                    save = settings.save_every and self.state.updates % settings.save_every == 0
                    if due:
                        validation_start = time.perf_counter()
                        stop = self._validate()
                        window_start += time.perf_counter() - validation_start
                    if limit:
                        stop = True
                    if (due or save) and not stop:  # the run's last checkpoint is _finish's
                        save_start = time.perf_counter()
                        self._save(f"step-{self.state.updates:08d}")
                        self._prune()
                        window_start += time.perf_counter() - save_start
                    if stop or end_of_epoch:
                        break
                progress.close()
            self._finish()
        finally:
            self.run_log.close()
            self._release()
            if self.distributed.enabled:
                leave()
        return self.state

    def _finish(self) -> None:
        """The run's last checkpoint, marked finished, and a model to use."""
        self.state.finished = True
        self._save(f"step-{self.state.updates:08d}")
        self._prune()
        if self.distributed.main and not (self.directory / WEIGHTS).exists():
            # no validation ran (max_updates below validate_every or an epoch): a run that exits 0
            # leaves a model to use all the same. Not validated here, so that a longer resumed
            # run stays identical to one never stopped
            save_weights(self.model, self.directory / WEIGHTS)
            self.log(f"no validation ran before update {self.state.updates}: model.safetensors holds "
                     "the last weights, not selected ones")
        # every process done before any leaves: one leaving while another still talks to it
        # aborted at exit now and then ("terminate called without an active exception")
        self.distributed.barrier()

    def _scalar(self, name: str, value: float) -> None:
        self.run_log.scalar(name, value, self.state.updates)

    def log(self, message: str, quiet: bool = False) -> None:
        self.run_log.line(message, quiet)

    # --- validation and selection ----------------------------------------------------------------

    def _validate(self) -> bool:
        """Score the validation split, update selection state; True when training should stop.
        Rank 0 scores; every process takes its scores and so the same decisions."""
        main = self.distributed.main
        record = None
        if main:
            started = time.perf_counter()
            done = self.state.batches_done  # none before a run's first update
            epochs = self.state.epoch + (done / self.batches_per_epoch if done else 0)
            record = {"updates": self.state.updates, "epochs": epochs,
                      **self.validation.scores(self.criterion, self.assets, self.device),
                      "learning_rate": self.optimizer.param_groups[0]["lr"]}
            record["seconds"] = time.perf_counter() - started
        record = self.distributed.broadcast(record)
        self.state.validations.append(record)
        if main:
            atomic_write_json(self.directory / "validations.json", self.state.validations)
        for key, value in record.items():
            if key not in ("updates", "epochs", "learning_rate", "seconds", "perplexity"):
                self._scalar(f"valid/{key}", value)

        settings = self.config.training
        metric = settings.selection_metric
        if metric not in record:
            raise WeanError(f"validation recorded no {metric!r} (training.selection_metric): its metric did not report it")
        improved, progress = judge(record, self.state.validations[:-1], metric, settings.patience_watches_loss)
        name = f"step-{self.state.updates:08d}"
        self.state.best.append([record[metric], self.state.updates, name])
        sign = -1 if higher_is_better(metric) else 1
        self.state.best.sort(key=lambda entry: sign * entry[0])
        if improved and main:
            save_weights(self.model, self.directory / WEIGHTS)
            atomic_write_json(self.directory / "best.json", record)
        if progress:
            self.state.bad_validations = 0
        else:
            self.state.bad_validations += 1
            if settings.lr_patience and self.state.bad_validations % settings.lr_patience == 0:
                for group in self.optimizer.param_groups:
                    group["lr"] = halved(group["lr"], settings.min_learning_rate)
        self.log(
            f"validation at update {self.state.updates} (epoch {record['epochs']:.2f}): loss {record['loss']:.4f} "
            f"BLEU {record['bleu']:.2f} SARI {record['sari']:.2f} ROUGE-2 {record['rouge2']:.2f}"
            f"{'' if metric in ('loss', 'bleu', 'sari', 'rouge2') else f' {metric} {record[metric]:.2f}'}"
            f"{'  *best*' if improved else ''}"
        )
        if self._out_of_patience():
            watched = f"{metric} or loss" if settings.patience_watches_loss else metric
            self.log(f"early stopping: no {watched} improvement in {settings.early_stopping_patience} validations")
            return True
        return False

    def _out_of_patience(self) -> bool:
        patience = self.config.training.early_stopping_patience
        return bool(patience) and self.state.bad_validations >= patience

    def _prune(self) -> None:
        """Keep the best ``keep_best`` validated checkpoints and the latest one."""
        if self.distributed.main:
            self.checkpoints.prune({entry[2] for entry in self.state.best[: self.config.training.keep_best]})


def _check_every_parameter_learns(model: nn.Module) -> None:
    """DistributedDataParallel all-reduces each parameter's gradient once per update and waits for
    every one: a parameter the loss does not use stops it at the next update with a page of
    RuntimeError. Said here, after the first backward, in one line."""
    unused = [name for name, parameter in model.named_parameters() if parameter.requires_grad and parameter.grad is None]
    if unused:
        raise WeanError(
            f"training on several processes needs every parameter in the loss, and {len(unused)} took no part "
            f"in it ({', '.join(unused[:5])}{', ...' if len(unused) > 5 else ''}): a component that leaves "
            "parameters unused trains in one process only"
        )


def train(config: Config, resume: bool = False) -> TrainingState:
    return Trainer(config, resume=resume).train()
