"""Why do the SPM rows learn more slowly per update? Two probes of trained runs.

* <pad> mass: SPM makes <pad> an output class, the target of about two thirds of its training
  steps. On the validation pairs (real targets Y only), the mean probability the model gives
  <pad> at real steps, and the cross-entropy with <pad> removed from the softmax (search never
  emits it). If the lag were probability lost to <pad>, the second would close it.
* Adam's step size: from a checkpoint's optimizer state, the mean over each parameter tensor of
  |m_hat| / (sqrt(v_hat) + eps), the size of Adam's update relative to the learning rate. A
  consistent gradient gives values near 1; gradient noise (a large second moment for its mean)
  makes them small, and the parameters then move less per update.

Usage: python results/spm/probe_training.py RUN_DIR [RUN_DIR ...] --updates 1600 2000
"""

from __future__ import annotations

import argparse
import copy
from pathlib import Path

import torch

import wean
from wean.data.corpus import collate, encode_pairs, make_batches, read_parallel
from wean.data.vocabulary import PAD_ID
from wean.tensor_files import load_checkpoint


@torch.no_grad()
def pad_mass(generator) -> dict:
    model, assets = generator.model.eval(), generator.assets
    valid = read_parallel(assets.config.data.valid)
    examples = encode_pairs(valid, assets.tokenizer, assets.source_vocabulary, assets.target_vocabulary)
    with_pad = without_pad = pad_probability = 0.0
    tokens = 0
    for chunk in make_batches(examples, 64):
        batch = collate(chunk)
        log_probs = model(batch.source, batch.source_lengths, batch.target_input).log_probs
        real = batch.target_output >= 0
        targets = batch.target_output.clamp(min=0).unsqueeze(-1)
        no_pad = log_probs.index_fill(-1, torch.tensor([PAD_ID]), float("-inf")).log_softmax(-1)
        with_pad -= log_probs.gather(-1, targets).squeeze(-1)[real].sum().item()
        without_pad -= no_pad.gather(-1, targets).squeeze(-1)[real].sum().item()
        pad_probability += log_probs[..., PAD_ID].exp()[real].sum().item()
        tokens += int(real.sum())
    return {"loss": with_pad / tokens, "loss_without_pad": without_pad / tokens, "pad_probability": pad_probability / tokens}


def adam_step_sizes(generator, run: str, updates: int) -> dict[str, float]:
    """Per parameter tensor, from the checkpoint's optimizer state (loaded into a copy of the
    model, so the selected weights the first probe reads stay in place)."""
    model = copy.deepcopy(generator.model)
    optimizer = load_checkpoint(Path(run) / "checkpoints" / f"step-{updates:08d}", model)["optimizer"]
    group = optimizer["param_groups"][0]
    (beta1, beta2), eps = group["betas"], group["eps"]
    sizes = {}
    for (name, _), index in zip(model.named_parameters(), group["params"]):
        state = optimizer["state"][index]
        step = float(state["step"])
        m_hat = state["exp_avg"] / (1 - beta1**step)
        v_hat = state["exp_avg_sq"] / (1 - beta2**step)
        sizes[name] = (m_hat.abs() / (v_hat.sqrt() + eps)).mean().item()
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--updates", type=int, nargs="+", default=[2000])
    args = parser.parse_args()
    torch.set_num_threads(1)
    generators = {run: wean.load(run) for run in args.runs}
    names = [run.rstrip("/").rsplit("/", 1)[-1] for run in args.runs]
    print("validation pairs, real targets only:")
    for run, name in zip(args.runs, names):
        result = pad_mass(generators[run])
        print(f"  {name}: loss {result['loss']:.3f}, without <pad> in the softmax {result['loss_without_pad']:.3f}, "
              f"mean p(<pad>) at real steps {result['pad_probability']:.4f}")
    for updates in args.updates:
        sizes = {name: adam_step_sizes(generators[run], run, updates) for run, name in zip(args.runs, names)}
        print(f"\nAdam step size |m_hat| / sqrt(v_hat) at update {updates}, mean per tensor:")
        print("  " + "parameter".ljust(40) + "".join(f"{name[-18:]:>20}" for name in names))
        for parameter in sizes[names[0]]:
            cells = "".join(f"{sizes[name][parameter]:>20.3f}" if parameter in sizes[name] else " " * 20 for name in names)
            print("  " + parameter[:40].ljust(40) + cells)


if __name__ == "__main__":
    main()
