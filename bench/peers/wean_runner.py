"""wean's side of the peer benchmark: trains and decodes through the library calls that
`wean train` and `wean generate` make, and prints the lines bench/peers/run.py reads.

    python bench/peers/wean_runner.py train  --config bench/peers/configs/wean.yaml --data DIR --run DIR
    python bench/peers/wean_runner.py decode --run DIR --data DIR --beam 5 [--quantize int8] [--shortlist N]
        [--kernels auto|onednn|blas]

train: Trainer(config).train(), as `wean train` runs it. The one addition is a timer around each
update (Trainer._update), so that every 10 updates it prints the window's target tokens and
seconds: the same measure as the reference's, with no time of wean's own logging in it. Both modes
print the kernels the model computes with (``kernels: auto``, the default, chooses them).
decode: Generator.generate() on the test sources, forced to 16 decoder steps per sentence; the timer
covers generate() only (loading excluded), as the peers' own generation timers do. With --shortlist,
the run's model directory gets its table first (`wean shortlist`'s defaults, from the training pairs,
outside the timer: it is made once, with the model).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path


def train(args) -> None:
    from wean.config import load_config
    from wean.models.kernels import kernels_of
    from wean.training import Trainer

    args.run.mkdir(parents=True, exist_ok=True)
    config_file = args.run / "wean.yaml"
    config_file.write_text(args.config.read_text().replace("@DATA@", str(args.data)).replace("@RUN@", str(args.run)))
    # a run repeated because other processes took CPU replaces the model its first try left
    config = load_config(config_file, args.set)
    trainer = Trainer(config, overwrite=True)
    autocast = "" if config.training.precision == "fp32" else f" under {config.training.precision} autocast"
    print(f"kernels {kernels_of(trainer.model)}{autocast}", flush=True)
    update = trainer._update
    window = {"tokens": 0, "loss": 0.0, "start": time.perf_counter(), "updates": 0}

    def timed_update(examples):
        loss, tokens = update(examples)
        window["updates"] += 1
        window["tokens"] += tokens
        window["loss"] += loss * tokens
        if window["updates"] % 10 == 0:
            seconds = time.perf_counter() - window["start"]
            print(f"update {window['updates']} loss {window['loss'] / window['tokens']:.4f} "
                  f"tokens {window['tokens']} seconds {seconds:.4f}", flush=True)
            window.update(tokens=0, loss=0.0, start=time.perf_counter())
        return loss, tokens

    trainer._update = timed_update
    trainer.train()


def decode(args) -> None:
    from wean.inference.generator import Generator
    from wean.model_dir import SHORTLIST
    from wean.inference.shortlist import make_shortlist_table

    # the run never validates, so it has no best weights: decode its last checkpoint
    checkpoints = args.run / "model" / "checkpoints"
    weights = checkpoints / (checkpoints / "latest").read_text().strip() / "model.safetensors"
    if args.shortlist and not (args.run / "model" / SHORTLIST).exists():
        make_shortlist_table(args.run / "model")
    generator = Generator.from_directory(args.run / "model", weights=weights, device="cpu",
                                         quantization=args.quantize, kernels=args.kernels)
    print(f"kernels {generator.kernels}", flush=True)
    sources = (args.data / "test.src").read_text(encoding="utf-8").splitlines()
    if args.shortlist:
        generator.shortlist_table  # read before the timer, as the model is
    start = time.perf_counter()
    outputs = generator.generate(sources, beam=args.beam, min_length=15, max_length=16, batch_size=64,
                                 plain_text=False, shortlist=args.shortlist)
    print(f"decoded {len(sources)} sentences in {time.perf_counter() - start:.3f} s", flush=True)
    if args.out:
        args.out.write_text("".join(g.text + "\n" for g in outputs), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["train", "decode"])
    parser.add_argument("--config", type=Path, default=Path(__file__).parent / "configs" / "wean.yaml")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--quantize", default="none", choices=["none", "int8"])
    parser.add_argument("--kernels", default="auto", choices=["auto", "onednn", "blas"])
    parser.add_argument("--shortlist", type=int, default=0, help="score only this shortlist's words (0: all)")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    train(args) if args.mode == "train" else decode(args)


if __name__ == "__main__":
    main()
