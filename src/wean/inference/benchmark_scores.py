"""A trained model on named benchmarks: generate for each benchmark's source, write the outputs
as ``<system>.<benchmark>.txt`` and score them with the benchmark's conventions (``wean test``)."""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Sequence

from wean.data.ptb import detokenize
from wean.evaluation import EvaluationSettings, data_root, evaluate_files, get_benchmark
from wean.evaluation.evaluate import metric_list
from wean.inference.generator import Generator
from wean.search_options import SearchOptions, parse_rerank
from wean.textio import atomic_write_json, atomic_write_text, one_line, read_json, read_lines


def score_on_benchmarks(
    generator: Generator,
    benchmarks: Sequence[str],
    system: str,
    out_dir: Path,
    root: Path | None = None,
    detokenizer: str = "none",
    plain_text: bool | None = None,
    metrics: str | None = None,
    rerank: str | None = None,
    **search,
) -> dict[str, dict]:
    """Outputs and scores of ``generator`` on each benchmark; ``metrics.json`` in ``out_dir``
    gathers the records of every system and benchmark scored there. ``plain_text`` None: each
    benchmark's own (yes for untokenized ones such as turkcorpus-test). ``metrics``: registered
    metrics, comma-separated, in place of the benchmark's (``+name,...``: besides them).
    ``rerank``: NAME=WEIGHT,... (``--rerank``), which reorders each n-best list; the first output
    of each list is the one written and scored."""
    root = data_root(root)
    out_dir.mkdir(parents=True, exist_ok=True)
    metrics_path = out_dir / "metrics.json"
    _read_metrics(metrics_path)  # a damaged metrics.json stops us now, not after the generation
    records = {}
    for name in benchmarks:
        benchmark = get_benchmark(name)
        source, references = benchmark.paths(root)
        # a benchmark line is one sentence: never split, as the references were written
        as_plain_text = benchmark.plain_text if plain_text is None else plain_text
        generations = generator.generate(read_lines(source), plain_text=as_plain_text, split_sentences=False,
                                         rerank=rerank, **search)
        outputs = [one_line(detokenize(g.text, detokenizer)) for g in generations]
        hypothesis = out_dir / f"{system}.{name}.txt"
        atomic_write_text(hypothesis, "".join(line + "\n" for line in outputs))
        settings = EvaluationSettings(metric_list(metrics, benchmark.metrics), "default", benchmark.lowercase,
                                      benchmark.tokenizer)
        evaluation = evaluate_files(hypothesis, source, references, settings, benchmark, root)
        record = evaluation.to_dict()
        record["inputs"]["hypothesis"]["path"] = hypothesis.name  # relative: the folder moves
        record["generation"] = {key: value for key, value in search.items() if value is not None}
        record["generation"]["detokenize"] = detokenizer
        record["generation"].update(_reranking(generator, rerank, search))
        if as_plain_text:
            record["generation"]["plain_text"] = True
        records[name] = record
        with _locked(out_dir):  # re-read: another `wean test` may have added its records meanwhile
            gathered = _read_metrics(metrics_path)
            gathered.setdefault(system, {})[name] = record
            atomic_write_json(metrics_path, gathered)
    return records


def _reranking(generator: Generator, rerank: str | None, search: dict) -> dict:
    """The reranking a record names: the caller's, or the model directory's own where its search
    does it (with the beam it widens to)."""
    if rerank is not None:
        return {"rerank": rerank} if parse_rerank(rerank) else {}
    own_rerank = getattr(generator, "own_rerank", None)  # stand-ins in tests have none
    if own_rerank is None:
        return {}
    chosen, options = own_rerank(generator.search_options(
        **{name: value for name, value in search.items() if name in SearchOptions.names()}))  # not control
    if not chosen:
        return {}
    own = generator.config.generation
    return {"rerank": own.rerank, "rerank_size": own.rerank_size, "beam": options.beam}


def _read_metrics(path: Path) -> dict:
    return read_json(path) if path.exists() else {}


@contextmanager
def _locked(folder: Path):
    """An exclusive lock on ``folder`` (POSIX flock on the folder itself: no lock file left behind)."""
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)
