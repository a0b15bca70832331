"""How different the alternatives of each strategy are: the shipped simplifier's 5-best lists on
TurkCorpus test by beam search, diverse beam search and sampling, with distinct-n (Li et al.
2016, per input: distinct n-grams over all n-grams of its 5 outputs, lowercased words; averaged
over inputs), distinct outputs per input, the share of outputs identical to their source, and the
SARI/BLEU of the first output. Settings fixed in advance, none chosen on these scores.

    python results/decoding/distinct.py      # writes distinct.json and the n-best lists
"""

from __future__ import annotations

import json
from pathlib import Path

from wean.evaluation import EvaluationSettings, data_root, get_benchmark
from wean.evaluation.evaluate import evaluate
from wean.inference.generator import load
from wean.textio import read_lines

OUT = Path(__file__).parent
SYSTEMS = {
    "beam": {"strategy": "beam", "beam": 5, "nbest": 5},
    "diverse-beam": {"strategy": "diverse_beam", "beam": 10, "diverse_groups": 5, "diverse_strength": 0.5,
                     "nbest": 5},
    "sampling-p0.9": {"strategy": "sampling", "nbest": 5, "sampling_topp": 0.9, "seed": 1},
    "sampling-t0.7": {"strategy": "sampling", "nbest": 5, "temperature": 0.7, "seed": 1},
}


def distinct(texts: list[str], n: int) -> float:
    grams = [tuple(words[i : i + n]) for words in (t.lower().split() for t in texts)
             for i in range(len(words) - n + 1)]
    return len(set(grams)) / len(grams) if grams else 0.0


def main() -> None:
    benchmark = get_benchmark("turkcorpus-test")
    source_path, reference_paths = benchmark.paths(data_root(None))
    sources = read_lines(source_path)
    references = [read_lines(path) for path in reference_paths]
    settings = EvaluationSettings(("sari", "bleu"), "default", benchmark.lowercase, benchmark.tokenizer)
    generator = load()
    record = {}
    for system, options in SYSTEMS.items():
        generations = generator.generate(sources, plain_text=True, split_sentences=False, **options)
        lists = [[g.text for g in generation.nbest] for generation in generations]
        with (OUT / f"{system}.turkcorpus-test.nbest.jsonl").open("w", encoding="utf-8") as out:
            for source, generation in zip(sources, generations):
                out.write(json.dumps({"source": source, "nbest": [
                    {"text": g.text, "score": round(g.score, 4)} for g in generation.nbest]}, ensure_ascii=False) + "\n")
        first = [texts[0] for texts in lists]
        (OUT / f"{system}.turkcorpus-test.txt").write_text("".join(t + "\n" for t in first), encoding="utf-8")
        scores = evaluate(first, sources, references, settings, yardstick=False).scores
        record[system] = {
            "options": options,
            "distinct_1": round(100 * sum(distinct(t, 1) for t in lists) / len(lists), 2),
            "distinct_2": round(100 * sum(distinct(t, 2) for t in lists) / len(lists), 2),
            "distinct_outputs": round(sum(len(set(t)) for t in lists) / len(lists), 2),
            "outputs_per_input": round(sum(len(t) for t in lists) / len(lists), 2),
            "unchanged": round(100 * sum(text == source for texts, source in zip(lists, sources) for text in texts)
                               / sum(len(t) for t in lists), 2),
            "first_sari": round(scores["sari"], 2),
            "first_bleu": round(scores["bleu"], 2),
        }
        print(system, record[system], flush=True)
    (OUT / "distinct.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
