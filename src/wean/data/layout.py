"""Laying the recorded data files (:mod:`wean.data.sources`) out under a data root
(``wean data layout``): from a clone of a source repository, as recorded (copied, a final newline
added, CRLF made LF, a stray U+0092 removed, a zip archive's member), or from another data root;
then the derived files wean rebuilds from those. Only bytes with the recorded sha256 are written.
"""

from __future__ import annotations

import hashlib
import re
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from wean.data.ptb import PTB_ESCAPES
from wean.data.sources import SourceFile, recorded_bytes, source_files
from wean.errors import WeanError
from wean.textio import atomic_write_bytes, read_file

MAX_ARCHIVE_BYTES = 1 << 30  # a zip the record names is a few MB; anything far larger is not it


def _from_repository(entry: SourceFile, clone: Path) -> bytes | None:
    """The file's bytes built from a clone of its repository, or None where the clone lacks it."""
    origin = clone / entry.source
    if not entry.repository or not origin.is_file():
        return None
    if entry.how == "zip-member":
        if origin.stat().st_size > MAX_ARCHIVE_BYTES:
            raise WeanError(f"{origin}: {origin.stat().st_size:,} bytes, far more than the archive recorded")
        try:
            with zipfile.ZipFile(origin) as archive:
                info = archive.getinfo(entry.member)
                if info.file_size > 2 * entry.bytes:
                    raise WeanError(f"{origin}: member {entry.member} holds {info.file_size:,} bytes, not "
                                    f"the {entry.bytes:,} recorded")
                return archive.read(info)
        except (zipfile.BadZipFile, KeyError, RuntimeError, NotImplementedError, zlib.error, EOFError, OSError) as error:
            raise WeanError(f"{origin}: not the archive recorded ({error})") from None
    data = read_file(origin, 2 * entry.bytes + 1024)  # CRLF and a missing newline: under twice the size
    if entry.how == "crlf-final-newline":
        data = data.replace(b"\r\n", b"\n")
    if entry.how == "remove-u0092":  # bytes that are no UTF-8 pass through, for the checksum to refuse
        data = data.decode("utf-8", "surrogateescape").replace("\u0092", "").encode("utf-8", "surrogateescape")
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


def _overlap_key(source: str) -> str:
    words = " ".join(PTB_ESCAPES.get(token, token) for token in source.lower().split())
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


DERIVATIONS = {"lcsts-part3": _lcsts_part3, "kauchak-train": _kauchak_train}


def _derived(entry: SourceFile, root: Path, recorded: dict[str, SourceFile]) -> bytes | None:
    """The file rebuilt from the recorded files it derives from, or None where one is not laid out."""
    if entry.derive is None:
        return None
    inputs = [recorded_bytes(recorded[path], root) for path in entry.derive["from"]]
    if any(data is None for data in inputs):
        return None
    settings = {key: value for key, value in entry.derive.items() if key not in ("kind", "from")}
    return DERIVATIONS[entry.derive["kind"]](inputs, **settings)


@dataclass
class LayoutReport:
    written: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # already there with the recorded checksum
    refused: list[str] = field(default_factory=list)  # one line each: not written


def layout(origin: Path | None, root: Path) -> LayoutReport:
    """Every recorded file that ``origin`` (a clone of a source repository, or a data root; None:
    only the derived files) holds, written under ``root`` where its sha256 is the recorded one, and
    then each derived file whose sources are laid out; a file already there as recorded is kept,
    another in its place replaced."""
    if origin is not None and not origin.is_dir():
        raise WeanError(f"{origin}: not a folder (give a clone of a source repository, or a data root)")
    report = LayoutReport()
    entries = source_files()
    recorded = {entry.path: entry for entry in entries}
    for entry in sorted(entries, key=lambda each: each.derive is not None):  # derived ones from the rest
        if recorded_bytes(entry, root) is not None:
            report.kept.append(entry.path)
            continue
        try:
            copy = origin / entry.path if origin is not None else None
            if copy is not None and copy.is_file():
                data = read_file(copy, entry.bytes)
            elif entry.repository:
                data = _from_repository(entry, origin) if origin is not None else None
            else:
                data = _derived(entry, root, recorded)
        except WeanError as error:
            report.refused.append(f"{entry.path}: {error}")
            continue
        if data is None:
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry.sha256:
            report.refused.append(f"{entry.path}: sha256 {digest[:12]}, recorded {entry.sha256[:12]} "
                                  f"({entry.repository or 'derived'} {entry.commit[:12]}); not written")
            continue
        target = root / entry.path
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(target, data)
        except OSError as error:
            raise WeanError(f"{target}: cannot write ({error.strerror or error})") from None
        report.written.append(entry.path)
    return report
