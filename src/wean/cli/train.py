"""``wean train``: train a model from a YAML config."""

from __future__ import annotations

import argparse
from pathlib import Path

from wean.config import load_config


def add(subparsers) -> None:
    parser = subparsers.add_parser("train", help="train a model from a YAML config",
                                   description="Train a model; checkpoints, logs and the selected model "
                                   "go to the config's model_dir. Started by torchrun (torchrun --nproc_per_node N "
                                   "-m wean train CONFIG), each process trains on its share of every batch; see the "
                                   "README, 'Training on several GPUs or machines'. To fine-tune a trained model, "
                                   "take its config.yaml and --set training.init_from=ITS_DIRECTORY.")
    parser.add_argument("config", type=Path, nargs="+",
                        help="YAML config (see configs/); several: each read over the ones before, e.g. a "
                        "preset and a training schedule")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="override a config key, e.g. --set training.max_epochs=3 (repeatable)")
    parser.add_argument("--resume", action="store_true", help="continue the run in model_dir exactly")
    parser.add_argument("--overwrite", action="store_true",
                        help="model_dir holds something: replace the model there (its model files are removed)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    # deferred: it imports torch, which `wean --help` and the light commands never load
    from wean.training import Trainer

    config = load_config(args.config, args.overrides)
    trainer = Trainer(config, resume=args.resume, overwrite=args.overwrite)
    state = trainer.train()
    best = state.best[0] if state.best else None
    if best and trainer.distributed.main:
        print(f"{config.model_dir}: best {config.training.selection_metric} {best[0]:.4f} at update {best[1]}")
    return 0
