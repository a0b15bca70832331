"""Reading aligned plain-text files: one segment per line, UTF-8.

Every reader in wean goes through :func:`read_lines` (text) or :func:`read_json` so that a bad
file fails in one way: a :class:`~wean.errors.WeanError` naming the file (and the line).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from wean.errors import WeanError


def is_file(path: str | Path) -> bool:
    """Whether ``path`` names a file; a text that cannot be a path (a NUL, over-long) names none."""
    try:
        return Path(path).is_file()
    except (OSError, ValueError):
        return False


def read_lines(path: str | Path, *, strip: bool = True) -> list[str]:
    """Return the lines of a UTF-8 text file, without line ends.

    A missing final newline neither adds nor drops a line (as ``readlines()``). With ``strip``,
    surrounding whitespace is removed from each line, as EASSE does before scoring.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise WeanError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise WeanError(f"{path}: is a directory, expected a text file") from None
    except OSError as error:
        raise WeanError(f"{path}: cannot read ({error.strerror})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise WeanError(
            f"{path}:{line}: not valid UTF-8 (byte 0x{data[error.start]:02x} at offset {error.start})"
        ) from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    lines = [line.rstrip("\r") for line in lines]
    return [line.strip() for line in lines] if strip else lines


def check_same_length(named_streams: Sequence[tuple[str | Path, Sequence[str]]]) -> int:
    """Raise unless every stream has as many lines as the first; return that count."""
    (first_name, first), *rest = named_streams
    for name, stream in rest:
        if len(stream) != len(first):
            raise WeanError(
                f"{name}: has {len(stream)} lines but {first_name} has {len(first)}; "
                "aligned files need one line per segment"
            )
    return len(first)


def empty_line_numbers(lines: Sequence[str]) -> list[int]:
    """1-based numbers of the lines that are empty after stripping."""
    return [number for number, line in enumerate(lines, start=1) if not line.strip()]


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise WeanError(f"{path}: file not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise WeanError(f"{path}: corrupt JSON ({error})") from None
