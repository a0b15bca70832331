"""Mojibake in training text repaired with ftfy (``data.fix_text``).

Text decoded with the wrong encoding somewhere upstream (``ZÃ¼rich`` for ``Zürich``, ``â€”`` for
``—``) teaches a model to write it. ftfy undoes such round trips where it can tell them from real
text. Only the encoding repairs are asked for: quotes stay curly, HTML entities, ligatures, widths
and Unicode normalization stay as written, so a line without mojibake comes back unchanged.
Applied to the training pairs only, never to validation or test sources or references, which are
scored as their authors wrote them.

Mojibake that lost a byte cannot be repaired, only guessed at. kauchak_v2's is all of that kind:
its 3,723 broken lines (of 66,372, sources and targets) hold ``Ã`` followed by a space where the
second byte of a two-byte character was, and ftfy reads ``Ã`` + space as ``à`` (its second byte
taken for a no-break space), which is right only where the word had an ``à`` ("Dáil Éireann",
written ``DÃ il Ã ireann``, becomes ``Dà il à ireann``). No broken sequence of that corpus kept its
bytes, so the option changes 1,703 of its pairs and restores none; it is for corpora whose
mojibake did.
"""

from __future__ import annotations

from dataclasses import dataclass

import ftfy

from wean.data.corpus import ParallelText

ENCODING_REPAIRS_ONLY = ftfy.TextFixerConfig(
    unescape_html=False, fix_latin_ligatures=False, fix_character_width=False, uncurl_quotes=False,
    fix_line_breaks=False, normalization=None, explain=False,
)


def fix_line(line: str) -> str:
    return ftfy.fix_text(line, ENCODING_REPAIRS_ONLY)


@dataclass
class Repaired:
    pairs: int  # pairs with at least one side changed
    sources: int  # source lines changed
    targets: int  # target lines changed (every reference stream of the training text counts)


def fix_training_text(text: ParallelText) -> tuple[ParallelText, Repaired]:
    """``text`` with every line repaired, and what changed."""
    sources = [fix_line(line) for line in text.sources]
    references = [[fix_line(line) for line in stream] for stream in text.references]
    changed_sources = [a != b for a, b in zip(sources, text.sources)]
    changed_targets = [any(fixed[i] != stream[i] for fixed, stream in zip(references, text.references))
                       for i in range(len(sources))]
    repaired = Repaired(sum(s or t for s, t in zip(changed_sources, changed_targets)), sum(changed_sources),
                        sum(changed_targets))
    return ParallelText(sources, references[0], references, text.source_path, text.line_numbers), repaired
