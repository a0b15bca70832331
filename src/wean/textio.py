"""Reading aligned plain-text files: one segment per line, UTF-8; and writing files whole.

What users give and what model directories hold is read through :func:`read_file` (bytes),
:func:`read_lines` (text) or :func:`read_json`, so that a bad file fails in one way: a :class:`~wean.errors.WeanError` naming
the file (and the line); what is not a regular file (``/dev/zero``, a pipe) is refused before a
byte is read, where reading would never end or never begin. Every
file of a model directory is written through :func:`atomic_write_bytes`: to a temporary name,
synced to disk, renamed into place, so a kill or a power loss leaves the old file or the new.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any, Sequence

from wean.errors import WeanError


def sync_directory(directory: Path) -> None:
    """A rename is durable only once its directory is synced; some file systems cannot, and
    there the rename is as durable as they make it."""
    try:
        descriptor = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    # the process id in the name: two processes writing one file never share a temporary
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    with open(temporary, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())
    os.replace(temporary, path)
    sync_directory(path.parent)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: Path, value: Any) -> None:
    atomic_write_text(path, json.dumps(value, indent=1, ensure_ascii=False) + "\n")


# what str.splitlines() and file readers take for a line end, and the tab (a column separator)
LINE_BREAKING = dict.fromkeys(map(ord, "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029\t"), " ")
OTHER_CONTROLS = dict.fromkeys([*range(0x20), 0x7F, *range(0x80, 0xA0)], None)


def one_line(text: str) -> str:
    """``text`` as one line of an output file, whatever it holds: every character some reader
    takes for a line end (``\r``, U+2028, U+0085, ...) and the tab become a space; other control
    characters (escape sequences, NUL) are left out. Outputs are written through it, so n lines in
    are n lines out for ``str.splitlines()``, ``open()`` and ``wc -l`` alike."""
    return text.translate(LINE_BREAKING).translate(OTHER_CONTROLS)


def printable(text: str) -> str:
    """``text`` with every character that is not printable (escape, NUL, line breaks) written as
    its escape: a log line shows what came, and a terminal that shows it does nothing else."""
    return "".join(char if char.isprintable() else char.encode("unicode_escape").decode("ascii") for char in text)


def one_line_json(value: Any) -> str:
    """``value`` as one line of JSON: json.dumps escapes the C0 controls, and here also the
    three line ends it leaves raw (U+0085, U+2028, U+2029)."""
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("\x85", "\\u0085").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def read_file(path: str | Path, max_bytes: int | None = None, head: int | None = None) -> bytes:
    """The bytes of a regular file (a link is followed); a WeanError naming it where it is missing,
    a directory, or no regular file: a device such as /dev/zero never ends and a pipe may never
    begin, so neither is read. ``max_bytes``: a file larger (by its size, checked before a byte is
    read) is refused; ``head``: only its first bytes."""
    path = Path(path)
    try:  # O_NONBLOCK: opening a pipe that no one writes to returns at once, to be refused
        descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        raise WeanError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise WeanError(f"{path}: is a directory, expected a file") from None
    except (OSError, ValueError) as error:
        raise WeanError(f"{path}: cannot read ({getattr(error, 'strerror', None) or error})") from None
    with os.fdopen(descriptor, "rb") as file:
        status = os.fstat(descriptor)
        if stat.S_ISDIR(status.st_mode):
            raise WeanError(f"{path}: is a directory, expected a file")
        if not stat.S_ISREG(status.st_mode):
            raise WeanError(f"{path}: not a regular file (a device, a pipe or a socket), which wean does not read")
        if max_bytes is not None and status.st_size > max_bytes:
            raise WeanError(f"{path}: {status.st_size:,} bytes, more than the {max_bytes:,} such a file holds")
        try:
            data = file.read(head if head is not None else (max_bytes + 1 if max_bytes is not None else -1))
        except OSError as error:
            raise WeanError(f"{path}: cannot read ({error.strerror})") from None
        if head is None and max_bytes is not None and len(data) > max_bytes:
            raise WeanError(f"{path}: grew past {max_bytes:,} bytes while it was read")
        return data


def file_digest(path: Path) -> str:
    """The sha256 of a file's bytes, in hex."""
    return hashlib.sha256(read_file(path)).hexdigest()


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
    data = read_file(path)
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


# a model directory's JSON (a vocabulary of millions of words included) is far smaller
MAX_JSON_BYTES = 1 << 28


def read_json(path: Path, max_bytes: int = MAX_JSON_BYTES) -> Any:
    data = read_file(path, max_bytes)
    try:
        return json.loads(data.decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise WeanError(f"{path}: corrupt JSON ({error})") from None
