"""Where the benchmark data come from, and laying them out under the data root (``wean data``).

``sources.json`` records every file this project's benchmarks, presets and experiments read under
the data root: its sha256 and size, and the public repository, commit and path it was read from
with how it was laid out (copied; a final newline added; CRLF made LF; a stray U+0092 removed; one
member of a zip archive). A file derived from others (a subset, a deduplicated union) names what it
came from. :func:`layout` fills a data root from a clone of a source repository, or from another
copy of the data root, and keeps only files whose checksum is the recorded one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from wean.data.root import VARIABLE
from wean.errors import WeanError
from wean.textio import atomic_write_bytes, read_file

SOURCES = Path(__file__).with_name("sources.json")
MAX_ARCHIVE_BYTES = 1 << 30  # a zip the record names is a few MB; anything far larger is not it


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
    # how derived, where wean rebuilds it: its kind (see _DERIVATIONS), the recorded files it reads
    # ("from") and the kind's settings
    derive: dict | None = None

    @property
    def dataset(self) -> str:
        return self.path.split("/", 1)[0]


def source_files() -> list[SourceFile]:
    return [SourceFile(**entry) for entry in json.loads(SOURCES.read_text(encoding="utf-8"))["files"]]


def _digest(path: Path) -> str | None:
    """The file's sha256, or None where it is missing or no regular file."""
    try:
        return hashlib.sha256(read_file(path)).hexdigest() if path.is_file() else None
    except WeanError:
        return None


def status(root: Path) -> dict[str, dict[str, list[SourceFile]]]:
    """Per dataset (first folder under the root): its files ``present`` (checksum as recorded),
    ``damaged`` (another checksum) and ``missing``."""
    report: dict[str, dict[str, list[SourceFile]]] = {}
    for entry in source_files():
        digest = _digest(root / entry.path)
        state = "missing" if digest is None else "present" if digest == entry.sha256 else "damaged"
        report.setdefault(entry.dataset, {"present": [], "damaged": [], "missing": []})[state].append(entry)
    return report


def _read_bounded(path: Path, limit: int) -> bytes:
    size = path.stat().st_size
    if size > limit:
        raise WeanError(f"{path}: {size:,} bytes, more than the {limit:,} of the file it should be")
    return read_file(path)


def _from_repository(entry: SourceFile, clone: Path) -> bytes | None:
    """The file's bytes built from a clone of its repository, or None where the clone lacks it."""
    origin = clone / entry.source
    if not entry.repository or not origin.is_file():
        return None
    if entry.how == "zip-member":
        try:
            with zipfile.ZipFile(origin) as archive:
                info = archive.getinfo(entry.member)
                if info.file_size > 2 * entry.bytes:
                    raise WeanError(f"{origin}: member {entry.member} holds {info.file_size:,} bytes, not "
                                    f"the {entry.bytes:,} recorded")
                return archive.read(info)
        except (zipfile.BadZipFile, KeyError) as error:
            raise WeanError(f"{origin}: not the archive recorded ({error})") from None
    data = _read_bounded(origin, 2 * entry.bytes + 1024)
    if entry.how in ("crlf-final-newline",):
        data = data.replace(b"\r\n", b"\n")
    if entry.how == "remove-u0092":
        data = data.decode("utf-8").replace("\u0092", "").encode("utf-8")
    if entry.how in ("final-newline", "crlf-final-newline") and data and not data.endswith(b"\n"):
        data += b"\n"
    return data


def _lines(data: bytes) -> list[str]:
    return data.decode("utf-8").split("\n")[:-1]


def _text(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


def _lcsts_part3(inputs: list[bytes], field: str, min_label: int) -> bytes:
    """One field of PART III's documents, whitespace collapsed, where the human label is at least
    ``min_label``."""
    documents = re.findall(r"<doc id=\d+>\s*<human_label>(.*?)</human_label>\s*<summary>(.*?)</summary>\s*"
                           r"<short_text>(.*?)</short_text>\s*</doc>", inputs[0].decode("utf-8"), re.S)
    index = {"human_label": 0, "summary": 1, "short_text": 2}[field]
    return _text([" ".join(document[index].split()) for document in documents if int(document[0]) >= min_label])


# PTB's escapes as the characters they stand for, so that both conventions normalise alike
_PTB_TOKENS = {"-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]", "``": '"', "''": '"'}


def _overlap_key(source: str) -> str:
    words = " ".join(_PTB_TOKENS.get(token, token) for token in source.lower().split())
    return " ".join(re.findall(r"[a-z0-9]+", words))


def _kauchak_train(inputs: list[bytes], side: str) -> bytes:
    """Subsets 1 and 2 in order, without repeated pairs (the first kept) and without a pair whose
    source, lowercased with PTB's escapes read and only [a-z0-9] words kept, is an evaluation source."""
    source_1, target_1, source_2, target_2, *evaluation = (_lines(data) for data in inputs)
    held_out = {_overlap_key(line) for lines in evaluation for line in lines}
    seen, kept = set(), []
    for pair in zip(source_1 + source_2, target_1 + target_2):
        if pair not in seen and _overlap_key(pair[0]) not in held_out:
            kept.append(pair)
        seen.add(pair)
    return _text([pair[0 if side == "src" else 1] for pair in kept])


_DERIVATIONS = {"lcsts-part3": _lcsts_part3, "kauchak-train": _kauchak_train}


def _derived(entry: SourceFile, root: Path) -> bytes | None:
    """The file rebuilt from the recorded files it derives from, or None where one is not laid out."""
    if entry.derive is None:
        return None
    settings = {key: value for key, value in entry.derive.items() if key not in ("kind", "from")}
    recorded = {each.path: each for each in source_files()}
    inputs = []
    for path in entry.derive["from"]:
        if _digest(root / path) != recorded[path].sha256:
            return None
        inputs.append(read_file(root / path))
    return _DERIVATIONS[entry.derive["kind"]](inputs, **settings)


@dataclass
class LayoutReport:
    written: list[str]
    kept: list[str]  # already there with the recorded checksum
    refused: list[str]  # built, but not with the recorded checksum: one line each


def layout(origin: Path, root: Path) -> LayoutReport:
    """Every recorded file that ``origin`` (a clone of a source repository, or a data root) holds,
    written under ``root`` where its checksum is the recorded one; a file already there with that
    checksum is kept, a damaged one replaced."""
    if not origin.is_dir():
        raise WeanError(f"{origin}: not a folder (give a clone of a source repository, or a data root)")
    report = LayoutReport([], [], [])
    entries = source_files()
    # derived files last: they are built from the files laid out before them
    for entry in sorted(entries, key=lambda each: each.derive is not None):
        target = root / entry.path
        if _digest(target) == entry.sha256:
            report.kept.append(entry.path)
            continue
        copy = origin / entry.path
        if copy.is_file():
            data = _read_bounded(copy, 2 * entry.bytes + 1024)
        else:
            data = _from_repository(entry, origin) if entry.repository else _derived(entry, root)
        if data is None:
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry.sha256:
            report.refused.append(f"{entry.path}: sha256 {digest[:12]}, recorded {entry.sha256[:12]} "
                                  f"({entry.repository or 'derived'} {entry.commit[:12]}); not written")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data)
        report.written.append(entry.path)
    return report


def fetch_commands(repository: str, commit: str) -> str:
    """The commands that lay out one repository's files, for people to run where a network is."""
    folder = repository.split("/")[1]
    return (f"(test -d {folder} || git clone https://github.com/{repository} {folder}) && "
            f"git -C {folder} checkout {commit} && wean data layout --from {folder}")


def default_root(explicit: Path | None) -> Path:
    """--data-root, else $WEAN_DATA_ROOT; for ``layout`` it may not exist yet."""
    if explicit is not None and str(explicit):
        return explicit
    if os.environ.get(VARIABLE):
        return Path(os.environ[VARIABLE])
    raise WeanError(f"no data root: pass --data-root DIR or set {VARIABLE} to the folder the data go to")
