"""Where the data lives: the folder that benchmark paths are relative to and that a config's data
path starting with ``${WEAN_DATA_ROOT}`` stands in. It is ``--data-root`` where a command has
that option, else the environment variable ``WEAN_DATA_ROOT``; the package assumes no layout of
its own (this repository's Makefile and tests set the variable for theirs).

A config keeps the placeholder as written, so that a model directory names no machine's folders
and a run resumes on another machine whose data lies elsewhere.
"""

from __future__ import annotations

import os
from pathlib import Path

from wean.errors import WeanError

VARIABLE = "WEAN_DATA_ROOT"
PLACEHOLDER = "${" + VARIABLE + "}"


def data_root(explicit: str | Path | None = None) -> Path:
    """``explicit`` (a command's --data-root), else ``$WEAN_DATA_ROOT``; an existing folder."""
    if explicit is not None and str(explicit):
        root, origin = Path(explicit), "--data-root"
    elif os.environ.get(VARIABLE):
        root, origin = Path(os.environ[VARIABLE]), f"${VARIABLE}"
    else:
        raise WeanError(f"no data root: pass --data-root DIR or set {VARIABLE} to the folder that holds the "
                        "benchmarks (turkcorpus/, wikismall/, ...)")
    if not root.is_dir():
        raise WeanError(f"data root {root} ({origin}) is not a folder")
    return root


def portable_path(path: str | Path, root: str | Path | None = None) -> str:
    """``path`` as a record should name it: under the data root (``root``, a command's --data-root,
    else ``$WEAN_DATA_ROOT``), as ``${WEAN_DATA_ROOT}/...``, so that no machine's folders are
    written into results; any other as given."""
    root = root if root is not None and str(root) else os.environ.get(VARIABLE)
    if root:
        try:
            return f"{PLACEHOLDER}/{Path(path).resolve().relative_to(Path(root).resolve()).as_posix()}"
        except ValueError:  # not under the root
            pass
    return str(path)


def data_path(text: str | Path) -> Path:
    """A config's data path with a leading ``${WEAN_DATA_ROOT}`` replaced by :func:`data_root`;
    any other path as written (relative to the working directory)."""
    text = str(text)
    if text.startswith("$" + VARIABLE):  # the shell's spelling, without braces
        text = PLACEHOLDER + text[len(VARIABLE) + 1:]
    if text.startswith(PLACEHOLDER):
        if not os.environ.get(VARIABLE):
            raise WeanError(f"{text}: {VARIABLE} is not set; set it to the folder the data lie in")
        return data_root() / text[len(PLACEHOLDER):].lstrip("/")
    if VARIABLE in text:
        raise WeanError(f"{text}: {PLACEHOLDER} may only begin a data path")
    return Path(text)
