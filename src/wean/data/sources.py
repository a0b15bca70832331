"""Where the benchmark data come from (``wean data status``).

``sources.json`` records every file this project's benchmarks, presets and experiments read under
the data root: its sha256 and size, and the public repository, commit and path it was read from
with how it was laid out (copied; a final newline added; CRLF made LF; a stray U+0092 removed; one
member of a zip archive). A file derived from others (a subset, a deduplicated union) names what it
came from, and how wean rebuilds it where it can (:mod:`wean.data.layout`).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path

from wean.errors import WeanError
from wean.textio import read_file

SOURCES = Path(__file__).with_name("sources.json")


@dataclass(frozen=True)
class SourceFile:
    path: str  # under the data root
    sha256: str
    bytes: int
    how: str  # copy | final-newline | crlf-final-newline | remove-u0092 | zip-member | derived
    repository: str = ""  # owner/name of a public repository (derived files: none)
    commit: str = ""
    source: str = ""  # the path in that repository
    member: str = ""  # how zip-member: the archive's member
    note: str = ""  # how derived: what it was derived from, and how
    # how derived, where wean rebuilds it: its kind (wean.data.layout), the recorded files it
    # reads ("from") and the kind's settings
    derive: dict | None = None

    @property
    def dataset(self) -> str:
        return self.path.split("/", 1)[0]


def source_files() -> list[SourceFile]:
    return [SourceFile(**entry) for entry in json.loads(SOURCES.read_text(encoding="utf-8"))["files"]]


def recorded_bytes(entry: SourceFile, root: Path) -> bytes | None:
    """The file's bytes where it is under ``root`` with its recorded size and sha256, else None
    (a file of another size is not read)."""
    path = root / entry.path
    try:
        if not path.is_file() or path.stat().st_size != entry.bytes:
            return None
        data = read_file(path, entry.bytes)
    except (OSError, WeanError):
        return None
    return data if hashlib.sha256(data).hexdigest() == entry.sha256 else None


def status(root: Path) -> dict[str, dict[str, list[SourceFile]]]:
    """Per dataset (first folder under the root): its files ``present`` (as recorded), ``damaged``
    (there, with another size or sha256) and ``missing``."""
    report: dict[str, dict[str, list[SourceFile]]] = {}
    for entry in source_files():
        there = (root / entry.path).exists()
        state = "missing" if not there else "present" if recorded_bytes(entry, root) is not None else "damaged"
        report.setdefault(entry.dataset, {"present": [], "damaged": [], "missing": []})[state].append(entry)
    return report


def fetch_commands(repository: str, commit: str, root: Path | None = None) -> str:
    """The shell commands that lay out one repository's files at one commit, for people to run
    where a network is: a clone of its own, named by the commit, so that two commits of one
    repository and a dataset folder of the same name never meet."""
    folder = f"{repository.split('/')[1]}-{commit[:12]}"
    to = f" --data-root {shlex.quote(str(root))}" if root is not None else ""
    return (f"(test -d {folder} || git clone https://github.com/{repository} {folder}) && "
            f"git -C {folder} checkout -q {commit} && wean data layout --from {folder}{to}")
