"""Where the simplifier recipe's training update goes, and how much of its batches is padding:
the first epoch's batches' padded positions per real token (source and target side), then the
forward time of the encoder, the decoder, the output layer and the whole loss, and the
optimizer's step, as shares of an update (timers around each call, updates 21-70, two threads;
the backward pass is the update less the loss's forward and the step). From the repository root:

    OMP_NUM_THREADS=2 MKL_NUM_THREADS=2 python results/bench-peers-xeon/simplifier_parts.py \\
        results/asset-simplifier/configs/asset-simplifier-pg-seed1.yaml [--set KEY=VALUE ...]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

from wean.config import load_config
from wean.training import Trainer

sys.path.insert(0, "bench")
from training_profile import timed  # noqa: E402  (bench/ is not a package)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("config")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wean-parts-") as folder:
        config = load_config(args.config, [*args.set, f"model_dir={folder}/model", "training.max_updates=70",
                                           "training.validate_every=100000"])
        trainer = Trainer(config, overwrite=True)
        batches = trainer._epoch_batches(0)
        for side in ("source", "target"):
            padded = sum(len(b) * max(len(getattr(e, side)) for e in b) for b in batches)
            real = sum(len(getattr(e, side)) for b in batches for e in b)
            print(f"{side}: {padded / real:.3f} padded positions per token over {len(batches)} batches")
        model, spent, updates = trainer.model, {}, []
        model.encoder.forward = timed(model.encoder.forward, "encoder", spent)
        model.decoder.forward = timed(model.decoder.forward, "decoder", spent)
        model.output_layer.log_probs = timed(model.output_layer.log_probs, "output layer", spent)
        trainer.criterion.training_loss = timed(trainer.criterion.training_loss, "the loss's forward", spent)
        trainer.optimizer.step = timed(trainer.optimizer.step, "optimizer step", spent)
        update, warm = trainer._update, [20]

        def measured(examples):
            if warm[0]:
                warm[0] -= 1
                result = update(examples)
                spent.clear()
                return result
            started = time.perf_counter()
            result = update(examples)
            updates.append(time.perf_counter() - started)
            return result

        trainer._update = measured
        trainer.train()
    total = sum(updates)
    print(f"{len(updates)} updates, {total / len(updates) * 1000:.0f} ms each on average; "
          f"by target length: {trainer.criterion.by_target_length}")
    for name, seconds in spent.items():
        print(f"{name}: {seconds / total:.3f}")


if __name__ == "__main__":
    main()
