"""Named evaluation sets: where their files lie under the data root, and the casing and
tokenization their references are in. This table is the one place these conventions are written.

A system output scored against a benchmark must be in the convention of its references
(``output_convention``): one line per source line, in order. The scoring options default to the
ones under which published numbers on that set are usually reported; any of them can be overridden
on the command line, and the report always says which were used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wean.errors import WeanError

SIMPLIFICATION_METRICS = ("sari", "bleu", "fkgl", "stats", "fidelity")
HEADLINE_METRICS = ("rouge", "stats")


@dataclass(frozen=True)
class Benchmark:
    name: str
    source: str  # path under the data root
    references: tuple[str, ...]
    output_convention: str
    metrics: tuple[str, ...]
    lowercase: bool = True
    tokenizer: str = "13a"
    note: str = ""
    # sources and references are text for people (untokenized): a model trained on tokenized text
    # reads them through its plain-text conversion (wean test --plain-text is then the default)
    plain_text: bool = False

    def source_path(self, root: Path) -> Path:
        """Its source under the data root, for a reader that needs no reference."""
        return self._present(root, [self.source])[0]

    def paths(self, root: Path) -> tuple[Path, list[Path]]:
        """Its source and references under the data root."""
        paths = self._present(root, [self.source, *self.references])
        return paths[0], paths[1:]

    def _present(self, root: Path, names: list[str]) -> list[Path]:
        """The files under the data root; a WeanError saying where to get them where one is missing."""
        paths = [root / name for name in names]
        missing = [path for path in paths if not path.exists()]
        if missing:
            raise WeanError(f"benchmark {self.name}: {missing[0]} not found ({len(missing)} of its {len(paths)} files "
                            f"missing under the data root {root}); `wean data status` says where they come from "
                            "and how to lay them out")
        return paths


def _turkcorpus(split: str, variant: str) -> tuple[str, tuple[str, ...]]:
    folder = f"turkcorpus/{variant}"
    return f"{folder}/{split}.src", tuple(f"{folder}/{split}.ref.{k}" for k in range(8))


_TURK_DETOK = (
    "truecased, detokenized English: EASSE's turkcorpus_{split} (ACCESS, MUSS and EASSE's own numbers)"
)
_TURK_LOWER = "lowercased, PTB-tokenized English (-lrb- -rrb-): the original 2016 release and the WEAN paper's EW-SEW test"
_PTB = "truecased, PTB-tokenized English (-LRB- -RRB- `` ''), as the DRESS release"
_ASSET = tuple(f"asset/valid.ref.{k}" for k in range(10))

BENCHMARKS: dict[str, Benchmark] = {
    "turkcorpus-test": Benchmark(
        "turkcorpus-test", *_turkcorpus("test", "case_detok"), _TURK_DETOK.format(split="test"),
        SIMPLIFICATION_METRICS, note="359 sentences, 8 references", plain_text=True,
    ),
    "turkcorpus-tune": Benchmark(
        "turkcorpus-tune", *_turkcorpus("tune", "case_detok"), _TURK_DETOK.format(split="valid"),
        SIMPLIFICATION_METRICS, note="2,000 sentences, 8 references; EASSE's validation set", plain_text=True,
    ),
    # ASSET's validation set: TurkCorpus tune's sentences (line for line; 68 differ in spacing only)
    # with 10 simplifications that also delete and split; CC BY-NC 4.0
    "asset-valid": Benchmark(
        "asset-valid", "asset/valid.src", _ASSET, "truecased, detokenized English: EASSE's asset_valid",
        SIMPLIFICATION_METRICS, note="2,000 sentences, 10 references", plain_text=True,
    ),
    "turkcorpus-asset-tune": Benchmark(
        "turkcorpus-asset-tune", _turkcorpus("tune", "case_detok")[0], _turkcorpus("tune", "case_detok")[1] + _ASSET,
        "truecased, detokenized English: TurkCorpus tune's 8 references, then ASSET valid's 10",
        SIMPLIFICATION_METRICS, note="2,000 sentences, 18 references; validation only", plain_text=True,
    ),
    "turkcorpus-test-lower": Benchmark(
        "turkcorpus-test-lower", *_turkcorpus("test", "lower_tok"), _TURK_LOWER,
        ("sari", "multi-bleu", "fkgl", "stats"), tokenizer="none",
        note="359 sentences, 8 references, already tokenized: scored without re-tokenizing",
    ),
    "wikismall-test": Benchmark(
        "wikismall-test", "wikismall/test.src", ("wikismall/test.dst",), _PTB,
        ("sari", "bleu", "multi-bleu", "fkgl", "stats", "fidelity"),
        note="PWKP test (Zhu et al. 2010), 100 sentences, 1 reference; EASSE's pwkp_test",
    ),
    "wikilarge-valid": Benchmark(
        "wikilarge-valid", "wikilarge/valid.src", ("wikilarge/valid.dst",), _PTB,
        SIMPLIFICATION_METRICS, note="992 sentences, 1 reference; for model selection",
    ),
    "wikilarge-test": Benchmark(
        "wikilarge-test", "wikilarge/test.src", ("wikilarge/test.dst",), _PTB,
        SIMPLIFICATION_METRICS,
        note="TurkCorpus test sources with one Simple Wikipedia reference; use turkcorpus-test for 8 references",
    ),
    "gigaword-valid": Benchmark(
        "gigaword-valid", "gigaword/valid1k.src", ("gigaword/valid1k.dst",),
        "lowercased, PTB-tokenized, digits as #, rare words <unk>", HEADLINE_METRICS,
        note="first 1,000 pairs of the filtered validation split; for model selection",
    ),
    "gigaword-test": Benchmark(
        "gigaword-test", "gigaword/test1951.src", ("gigaword/test1951.dst",),
        "lowercased, PTB-tokenized, digits as #, rare words UNK", HEADLINE_METRICS,
        note="the 1,951-pair test set of Rush et al. 2015; ROUGE-1.5.5-style word ROUGE",
    ),
    "lcsts-test": Benchmark(
        "lcsts-test", "lcsts/part3_label3plus.src", ("lcsts/part3_label3plus.dst",),
        "raw simplified Chinese, not segmented", HEADLINE_METRICS, tokenizer="char",
        note="LCSTS PART III pairs with human score >= 3 (725); character-level ROUGE",
    ),
}


def get_benchmark(name: str) -> Benchmark:
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise WeanError(f"unknown benchmark {name!r}; known: {', '.join(BENCHMARKS)}") from None
