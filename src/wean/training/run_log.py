"""What a training run says: each line appended to its ``train.log`` (flushed at once, so a kill
loses none) and, unless quiet, shown to the user; each scalar to TensorBoard (``tensorboard/``).
Only the main process of a run speaks: the others' log says nothing."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable


class RunLog:
    def __init__(self, directory: Path, main: bool, show: Callable[[str], None] | None = None):
        """``show``: where lines go besides the file (default: stderr)."""
        self.directory = directory
        self.main = main
        self._show = show or (lambda message: print(message, file=sys.stderr))
        self._file = None
        self._writer = None

    def open(self) -> None:
        """Start writing into the run directory (made if missing)."""
        if not self.main:
            return
        from torch.utils.tensorboard import SummaryWriter  # deferred: 1.4 s to import, for rank 0 alone

        self.directory.mkdir(parents=True, exist_ok=True)
        self._file = open(self.directory / "train.log", "a", encoding="utf-8")
        self._writer = SummaryWriter(str(self.directory / "tensorboard"))

    def show(self, message: str) -> None:
        """To the user only (before the log is open)."""
        if self.main:
            self._show(message)

    def line(self, message: str, quiet: bool = False) -> None:
        if self._file:
            self._file.write(message + "\n")
            self._file.flush()
        if not quiet:
            self.show(message)

    def scalar(self, name: str, value: float, step: int) -> None:
        if self._writer:
            self._writer.add_scalar(name, value, step)

    def close(self) -> None:
        if self._writer:
            self._writer.close()
        if self._file:
            self._file.close()
