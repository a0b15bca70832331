"""Whether an output's new words are substitutions people have made: a meaning check that reads
words, not a channel model's mean. A table counts, over this experiment's training pairs, each
content word of a replaced span of the complex side against each new content word of the simple
side (difflib's alignment of lower-cased PTB words, spans of at most 4 words a side). An output's
new words are its content words that its source lacks (both stemmed crudely); one is attested if
the table counts it at least MIN times against a content word the output dropped. The score is
the number of unattested new words; its ROC AUC (the chance that a kept meaning scores below a
changed one) is measured on the rated outputs of the sheets given by --develop, then on --confirm's
outputs not among them, for MIN 1 and 2 (meaning_check.py's sheets and definition of a meaning
changed: raters' mean adequacy 2.5 or less).

    python results/asset-simplifier/substitution_check.py --train ~/runs/asset-data \\
        --develop rating-settings rating-candidate rating-order --confirm rating-weighted \\
        --out results/asset-simplifier/substitution-check.json
"""

from __future__ import annotations

import re
from collections import Counter
from difflib import SequenceMatcher
from functools import lru_cache
from pathlib import Path

from meaning_check import LOW, auc, sheets_parser, sheets_report, write_report

from wean.data.ptb import ptb_tokenize
from wean.textio import read_lines

MINIMUM_COUNTS = (1, 2)
LONGEST_SPAN = 4
CLOSED_CLASS = frozenset("""
a an the this that these those some any each every either neither no all both half several such
i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
one ones who whom whose which what where when why how whoever whatever
myself yourself himself herself itself ourselves themselves
of in on at by for with from to into onto upon about above below over under between among through
during before after since until till against within without across along around behind beyond
near off out up down toward towards via per than as like
and or but nor so yet if because although though while whereas unless whether
be am is are was were been being have has had having do does did doing done
can could may might must shall should will would
not n't there here then also too very
""".split())
SUFFIXES = ("ing", "es", "ed", "ly", "s", "d")
WORD = re.compile(r"^[a-z]+$")


@lru_cache(maxsize=None)
def stem(word: str) -> str:
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def words(text: str, tokenized: bool) -> list[str]:
    """Lower-cased PTB words of letters only."""
    tokens = (text if tokenized else ptb_tokenize(text)).lower().split()
    return [token for token in tokens if WORD.match(token)]


def is_content(word: str) -> bool:
    return word not in CLOSED_CLASS


def substitution_table(sources: list[str], simples: list[str]) -> Counter:
    """(complex content word, new simple content word) -> how often a training pair replaced the one
    by the other, within one aligned span."""
    table: Counter = Counter()
    for source_text, simple_text in zip(sources, simples):
        source, simple = words(source_text, True), words(simple_text, True)
        source_stems = {stem(word) for word in source}
        matcher = SequenceMatcher(None, source, simple, autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            if tag != "replace" or i2 - i1 > LONGEST_SPAN or j2 - j1 > LONGEST_SPAN:
                continue
            old = [word for word in source[i1:i2] if is_content(word)]
            new = [word for word in simple[j1:j2] if is_content(word) and stem(word) not in source_stems]
            for old_word in old:
                for new_word in new:
                    table[stem(old_word), stem(new_word)] += 1
    return table


def unattested(source_text: str, output_text: str, table: Counter, minimum: int) -> list[str]:
    """The output's new content words that the table never counts ``minimum`` times against a
    content word of the source that the output dropped."""
    source, output = words(source_text, False), words(output_text, False)
    source_stems = {stem(word) for word in source}
    output_stems = {stem(word) for word in output}
    dropped = {stem(word) for word in source if is_content(word)} - output_stems
    new = [word for word in output if is_content(word) and stem(word) not in source_stems]
    return [word for word in new if not any(table[old, stem(word)] >= minimum for old in dropped)]


def scored(outputs: dict, table: Counter) -> dict:
    changed = [sum(entry["adequacy"]) / len(entry["adequacy"]) <= LOW for entry in outputs.values()]
    result: dict = {"outputs": len(outputs), "meaning_changed": sum(changed), "auc": {}, "flagged": {}}
    for minimum in MINIMUM_COUNTS:
        counts = [len(unattested(entry["source"], output, table, minimum)) for (_, output), entry in outputs.items()]
        # a kept meaning should have the lower count: AUC over negated counts
        kept = [-count for count, lost in zip(counts, changed) if not lost]
        lost = [-count for count, lost in zip(counts, changed) if lost]
        name = f"min_{minimum}"
        result["auc"][name] = round(auc(kept, lost), 3)
        result["flagged"][name] = {"changed": sum(count > 0 for count, c in zip(counts, changed) if c),
                                   "kept": sum(count > 0 for count, c in zip(counts, changed) if not c)}
    return result


def main() -> None:
    parser = sheets_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=Path, required=True, help="make_data.py's folder (train.src, train.dst)")
    args = parser.parse_args()
    table = substitution_table(read_lines(args.train / "train.src"), read_lines(args.train / "train.dst"))
    write_report(args.out, {"substitutions": len(table), "changed_if_mean_adequacy_at_most": LOW,
                            **sheets_report(args.develop, args.confirm, ("adequacy",), lambda o: scored(o, table))})


if __name__ == "__main__":
    main()
