"""Speed of two checkouts of wean (say, before and after a change), interleaved in one run: each
round times one child process per checkout, in alternating order; the ratios are of the medians
over the rounds.

    python bench/revisions.py --old ../wean-before --new . [--rounds 3] [--out DIR]
    python bench/revisions.py --old ../wean-before --new . --decode-model src/wean/pretrained/simplifier \
        --sentences-file $WEAN_DATA_ROOT/turkcorpus/case_detok/test.src

Without ``--decode-model``: the Trainer's update step and ``beam_search`` on a synthetic corpus
and an untrained model of the shipped simplifier's architecture (start-up, corpus reading and
validation left out). With it: ``generate`` of that trained model, as a user calls it (beam 5,
greedy, and greedy without n-gram blocking; plain text, batches of 32 sorted by length), on the
first ``--sentences`` lines; ``--quantize int8``, ``--shortlist N`` (a table is made first, in
a copy of the model, where it has none) and ``--tokenized`` (input already in the model's tokens)
as in ``wean generate``. Each mode's share of outputs that are the same in both checkouts is recorded too.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r'''
import json, random, sys, time
import torch
from wean.config import config_from_dict
from wean.search import beam_search
from wean.training import Trainer

folder, updates, sentences = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(0)
values = {
    "model_dir": folder + "/model",
    "data": {"train": folder + "/train", "valid": folder + "/valid", "max_tokens": 80,
             "tokenizer": {"type": "word", "vocab_size": 8000}},
    "model": {"embedding_size": 256, "dropout": 0.2,
              "encoder": {"hidden_size": 128, "layers": 2, "bidirectional": True, "dropout": 0.2},
              "decoder": {"hidden_size": 256, "layers": 1, "bridge": "linear"},
              "output_layer": {"type": "wean"}},
    "training": {"batch_size": 64},
}
trainer = Trainer(config_from_dict(values))
batches = trainer._epoch_batches(0)[:updates + 2]
for examples in batches[:2]:  # warm-up
    trainer._update(examples)
tokens, start = 0, time.perf_counter()
for examples in batches[2:]:
    tokens += trainer._update(examples)[1]
train_rate = tokens / (time.perf_counter() - start)

model = trainer.model.eval()
rows = [e.source for e in trainer.train_examples[:sentences]]
source = torch.zeros(len(rows), max(map(len, rows)), dtype=torch.long)
for i, row in enumerate(rows):
    source[i, : len(row)] = torch.tensor(row)
lengths = torch.tensor([len(row) for row in rows])
beam_search(model, source[:8], lengths[:8], beam_size=5, max_length=60)  # warm-up
start = time.perf_counter()
for begin in range(0, len(rows), 32):
    beam_search(model, source[begin:begin + 32], lengths[begin:begin + 32], beam_size=5, max_length=60,
                length_penalty=1.0, block_ngram_repeat=3)
beam_rate = len(rows) / (time.perf_counter() - start)
print(json.dumps({"train_tokens_per_second": train_rate, "beam5_sentences_per_second": beam_rate}))
'''


DECODE_CHILD = r'''
import json, sys, time
import torch
import wean

model, path, sentences, settings, outputs = sys.argv[1], sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4]), sys.argv[5]
lines = [line.strip() for line in open(path, encoding="utf-8")][:sentences]
generator = wean.load(model, quantization=settings["quantize"])
common = {"plain_text": settings["plain_text"], "split_sentences": False}
if settings["shortlist"]:  # only then: checkouts before the shortlist have no such argument
    common["shortlist"] = settings["shortlist"]
generator.generate(lines[:8], beam=5, **common)  # warm-up (and the shortlist table read)
rates, written = {}, {}
# the model's own search options at beam 5 and 1, and greedy without n-gram blocking (the same work
# for checkouts whose greedy search ignores block_ngram_repeat and for those that apply it)
for name, options in (("beam5_sentences_per_second", {"beam": 5}), ("greedy_sentences_per_second", {"beam": 1}),
                      ("greedy_unblocked_sentences_per_second", {"beam": 1, "block_ngram_repeat": 0})):
    start = time.perf_counter()
    found = generator.generate(lines, **common, **options)
    rates[name] = len(lines) / (time.perf_counter() - start)
    written[name.removesuffix("_sentences_per_second")] = [generation.text for generation in found]
json.dump(written, open(outputs, "w"))
print(json.dumps(rates))
'''


def write_corpus(folder: Path, pairs: int = 4000, vocabulary: int = 8000) -> None:
    """Zipf-like words, sources of 10-40 words, targets a shortened copy (as simplification data)."""
    import random

    rng = random.Random(0)
    words = [f"w{i}" for i in range(vocabulary)]
    weights = [1 / (rank + 1) for rank in range(vocabulary)]
    for split, count in (("train", pairs), ("valid", 50)):
        sources, targets = [], []
        for _ in range(count):
            source = rng.choices(words, weights, k=rng.randint(10, 40))
            target = [w for w in source if rng.random() > 0.15] or source[:1]
            sources.append(" ".join(source))
            targets.append(" ".join(target))
        (folder / f"{split}.src").write_text("\n".join(sources) + "\n")
        (folder / f"{split}.dst").write_text("\n".join(targets) + "\n")


def package_root(checkout: Path) -> Path:
    """The folder that holds a checkout's package: src/ since the src layout, the checkout before."""
    return (checkout / "src").resolve() if (checkout / "src" / "wean").is_dir() else checkout.resolve()


def child_environment(checkout: Path) -> dict:
    return {**os.environ, "PYTHONPATH": str(package_root(checkout)),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}


def measure_decoding(checkout: Path, model: Path, sentences_file: Path, sentences: int, settings: dict,
                     outputs: Path) -> dict:
    """Sentences/s per mode; the outputs of each mode written to ``outputs`` (JSON)."""
    result = subprocess.run([sys.executable, "-c", DECODE_CHILD, str(model.resolve()), str(sentences_file.resolve()),
                             str(sentences), json.dumps(settings), str(outputs)], env=child_environment(checkout),
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def with_shortlist_table(model: Path, copy: Path) -> Path:
    """``model`` where it has a shortlist table, else a copy of it in ``copy`` given one (the
    model directory measured is left as it was)."""
    from wean.model_dir import SHORTLIST
    from wean.inference.shortlist import make_shortlist_table

    if (model / SHORTLIST).exists():
        return model
    shutil.copytree(model, copy, ignore=shutil.ignore_patterns("checkpoints", "tensorboard"))
    make_shortlist_table(copy)
    return copy


def same_outputs(old: Path, new: Path) -> dict:
    """Per mode, the share of inputs whose outputs the two checkouts wrote alike (the last round's)."""
    old_outputs, new_outputs = json.loads(old.read_text()), json.loads(new.read_text())
    return {mode: sum(a == b for a, b in zip(texts, new_outputs[mode])) / len(texts) for mode, texts in old_outputs.items()}


def measure(checkout: Path, corpus: Path, updates: int, sentences: int) -> dict:
    with tempfile.TemporaryDirectory() as run:
        for name in ("train", "valid"):
            for side in ("src", "dst"):
                os.symlink(corpus / f"{name}.{side}", Path(run) / f"{name}.{side}")
        result = subprocess.run([sys.executable, "-c", CHILD, run, str(updates), str(sentences)],
                                env=child_environment(checkout),
                                capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, required=True, help="checkout measured as the baseline")
    parser.add_argument("--new", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--updates", type=int, default=30)
    parser.add_argument("--sentences", type=int, default=96)
    parser.add_argument("--decode-model", type=Path, help="time generate() of this trained model instead")
    parser.add_argument("--sentences-file", type=Path, help="with --decode-model: one input per line")
    parser.add_argument("--quantize", default="none", choices=["none", "int8"], help="with --decode-model")
    parser.add_argument("--shortlist", type=int, default=0, help="with --decode-model: score only this shortlist's words")
    parser.add_argument("--tokenized", action="store_true", help="with --decode-model: the input is in the model's tokens")
    parser.add_argument("--out", type=Path, help="write metrics.json here")
    args = parser.parse_args()
    loadavg = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else None
    runs: dict[str, list[dict]] = {"old": [], "new": []}
    settings = {"quantize": args.quantize, "shortlist": args.shortlist, "plain_text": not args.tokenized}
    with tempfile.TemporaryDirectory() as corpus:
        write_corpus(Path(corpus))
        decode_model = args.decode_model
        if decode_model and args.shortlist:
            decode_model = with_shortlist_table(decode_model, Path(corpus) / "model")
        for round_number in range(args.rounds):
            order = ("old", "new") if round_number % 2 == 0 else ("new", "old")
            for name in order:
                if decode_model:
                    result = measure_decoding(getattr(args, name), decode_model, args.sentences_file,
                                              args.sentences, settings, Path(corpus) / f"{name}.outputs.json")
                else:
                    result = measure(getattr(args, name), Path(corpus), args.updates, args.sentences)
                runs[name].append(result)
                print(f"round {round_number + 1} {name}: {runs[name][-1]}", flush=True)
        identical = same_outputs(Path(corpus) / "old.outputs.json", Path(corpus) / "new.outputs.json") \
            if args.decode_model else None
    medians = {name: {key: statistics.median(r[key] for r in rounds) for key in rounds[0]}
               for name, rounds in runs.items()}
    ratios = {key: medians["new"][key] / medians["old"][key] for key in medians["old"]}
    record = {"medians": medians, "ratios_new_over_old": ratios, "rounds": runs,
              "threads": int(os.environ.get("OMP_NUM_THREADS", "1")), "machine": platform.processor() or platform.machine(),
              "loadavg_at_start": loadavg, "settings": settings if args.decode_model else None,
              "identical_outputs": identical}
    print(json.dumps({"ratios_new_over_old": ratios, "identical_outputs": identical}, indent=1))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "metrics.json").write_text(json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
