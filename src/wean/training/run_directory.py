"""What a run directory may hold when training starts, and what may change when a run resumes:
a new run does not write over another unless told to (``--overwrite``); a resumed run keeps its
data and model sections (the weights depend on them), its selection metric (the kept best values
and both patiences count in it) and its optimizer (the saved state is that optimizer's), and the
plug-in files it was trained with; and one run at a time writes into a directory."""

from __future__ import annotations

import os
from dataclasses import fields, replace
from pathlib import Path

from wean.config import Config
from wean.data.root import data_path
from wean.errors import WeanError
from wean.model_dir import Assets, check_directory, check_resumed_plugins, load_assets, unfinished_start

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; runs there are not guarded against each other
    fcntl = None


class RunLock:
    """An exclusive lock on a run directory (made if missing) while a process trains into it: a
    second `wean train` of the same directory, which would interleave its checkpoints with the
    first's, is refused in one line. The lock is on the directory itself, so it leaves no file
    behind, and the system drops it when its process ends, a kill -9 included. Where the file
    system cannot lock (some network ones), ``note`` says the run goes on unguarded."""

    def __init__(self, directory: Path):
        if directory.exists() and not directory.is_dir():
            raise WeanError(f"{directory}: not a directory")
        self.directory = directory
        self.note = ""
        self._descriptor: int | None = None
        self._made = next((folder for folder in (*reversed(directory.parents), directory) if not folder.exists()), None)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise WeanError(f"{directory}: cannot be made ({error.strerror})") from None
        if fcntl is None:
            return
        try:
            descriptor = os.open(directory, os.O_RDONLY)
        except OSError as error:
            raise WeanError(f"{directory}: cannot be opened ({error.strerror})") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            raise WeanError(f"{directory}: another process is training into this directory; wait for it to "
                            "end, or choose another model_dir") from None
        except OSError as error:
            os.close(descriptor)
            self.note = f"{directory}: not locked ({error.strerror}): nothing stops a second run writing into it"
            return
        self._descriptor = descriptor

    @property
    def held(self) -> bool:
        return self._descriptor is not None

    def release(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)  # closing the descriptor drops its lock
            self._descriptor = None

    def abandon(self) -> None:
        """Released by a run that could not start: the folders it made go too, while empty."""
        self.release()
        if self._made is None:
            return
        folder = self.directory
        while folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            if folder == self._made:
                break
            folder = folder.parent

    def __del__(self) -> None:
        self.release()


def check_new_run(directory: Path, has_checkpoints: bool, resume: bool, overwrite: bool) -> tuple[bool, bool]:
    """Refuse to resume nothing, or to start a run where another is, unless ``overwrite``; return
    (resume, overwrite) as the run goes: a run killed before its first checkpoint has nothing to
    resume from, so ``resume`` starts it again from the beginning, over what it had written."""
    if resume and not has_checkpoints:
        if unfinished_start(directory):
            return False, True
        raise WeanError(f"{directory}: nothing to resume (no checkpoints/latest); start the run without --resume")
    if not resume and has_checkpoints and not overwrite:
        raise WeanError(
            f"{directory}: already holds a training run; pass --resume to continue it, --overwrite to "
            "replace it, or choose another model_dir"
        )
    if not resume:  # checked now; the old model's files go only when the new one is first written
        check_directory(directory, overwrite)
    return resume, overwrite


def resumed_assets(directory: Path, config: Config) -> Assets:
    """The run's tokenizer and vocabularies under ``config``, once ``config`` is one the run may
    resume with."""
    check_resumed_plugins(directory, config.plugins)
    saved = load_assets(directory)
    for section in ("data", "model"):
        before, now = _weights_depend_on(saved.config, section), _weights_depend_on(config, section)
        if before != now:
            keys = [f.name for f in fields(before) if getattr(before, f.name) != getattr(now, f.name)]
            raise WeanError(
                f"{directory}: {section}.{keys[0]} differs from the run being resumed; "
                "only training and generation settings may change on --resume"
            )
    for setting in ("selection_metric", "optimizer"):
        before, now = getattr(saved.config.training, setting), getattr(config.training, setting)
        if before != now:
            raise WeanError(f"{directory}: training.{setting} was {before!r}; it cannot change on --resume")
    return Assets(config, saved.tokenizer, saved.source_vocabulary, saved.target_vocabulary)


def _weights_depend_on(config: Config, section: str):
    """A config section without the settings that only matter outside training: how the corpus was
    tokenized is used only to turn plain text into model text and back, and a data path counts by
    the files it leads to (``../data/x`` and ``${WEAN_DATA_ROOT}/x`` may be the same)."""
    value = getattr(config, section)
    if section == "data":
        value = replace(value, tokenizer=replace(value.tokenizer, corpus_tokenization="none"),
                        train=_where(value.train), valid=_where(value.valid))
    return value


def _where(path: str) -> str:
    return str(data_path(path).resolve()) if path else ""
