"""One timed `generate()` over a file's sentences with the shipped simplifier (beam 5, plain text),
from whichever wean tree is on PYTHONPATH (named LABEL in what it prints): `plain` (no fallback, no channel model: what the
guard is measured against) or `guarded` (`wean simplify`'s default pipeline). Prints the label,
the pipeline and sentences/s as one JSON line; writes the outputs to OUT.

    PYTHONPATH=TREE/src python results/bench-copy-mixture/decode_one.py MODEL SENTENCES plain|guarded OUT LABEL
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import wean

PIPELINES = {"plain": {"fallback": "none", "rerank": ""}, "guarded": {}}


def main() -> None:
    model_dir, sentences_path, pipeline, out, label = sys.argv[1:6]
    sentences = Path(sentences_path).read_text(encoding="utf-8").splitlines()
    model = wean.load(model_dir, device="cpu")
    options = dict(beam=5, plain_text=True, **PIPELINES[pipeline])
    model.generate(sentences[:8], **options)  # warm-up
    start = time.perf_counter()
    outputs = [generation.text for generation in model.generate(sentences, **options)]
    rate = len(sentences) / (time.perf_counter() - start)
    Path(out).write_text("\n".join(outputs) + "\n", encoding="utf-8")
    print(json.dumps({"tree": label, "pipeline": pipeline, "sentences_per_second": rate}))


if __name__ == "__main__":
    main()
