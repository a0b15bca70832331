"""How likely a model finds a given output: teacher-forced log P(target | source), as the
validation loss computes it, per pair. With a model trained in the other direction (simple ->
complex), log P(source | output) says how much of the source an output still lets one recover:
the metric ``reverse`` of :mod:`wean.inference.reverse_metric`."""

from __future__ import annotations

from typing import Sequence

import torch

from wean.data.copy_vocabulary import encode_source, encode_target
from wean.data.corpus import IGNORE, Example, collate
from wean.data.vocabulary import EOS_ID
from wean.errors import WeanError
from wean.inference.loading import LoadedModel
from wean.models.device import model_device


@torch.no_grad()
def forced_log_probs(
    loaded: LoadedModel, sources: Sequence[str], targets: Sequence[str], plain_text: bool | None = None,
    batch_size: int = 32, oracle_control: bool = False,
) -> list[tuple[float, int]]:
    """(sum of the log-probabilities of target i's tokens, <eos> included; that many tokens) for
    each pair, given source i as the model reads it: tokenized as its corpus was when
    ``plain_text`` (default: the model's ``generation.plain_text``), with its default control
    tokens in front, or with ``oracle_control`` the tokens describing the pair itself, as training
    gave them (a training pair's score, not an output's). An empty source is read as a lone </s>;
    an empty target scores its </s>."""
    examples = _examples(loaded, sources, targets, plain_text, oracle_control)
    results: list[tuple[float, int]] = [(0.0, 0)] * len(examples)
    for chunk, picked, kept in _scored_batches(loaded.model, examples, batch_size):
        # where, not a product: a padding position's log-probability may be -inf (WEAN's candidates)
        sums = torch.where(kept, picked, torch.zeros_like(picked)).sum(dim=1)
        for example, total, count in zip(chunk, sums.tolist(), kept.sum(dim=1).tolist()):
            results[example.index] = (total, int(count))
    return results


@torch.no_grad()
def forced_token_log_probs(
    loaded: LoadedModel, sources: Sequence[str], targets: Sequence[str], plain_text: bool | None = None,
    batch_size: int = 32,
) -> list[list[float]]:
    """The log-probability of each of target i's tokens (<eos> last) given source i, read as
    :func:`forced_log_probs` reads them: where in a target a model finds it unlikely."""
    examples = _examples(loaded, sources, targets, plain_text, oracle_control=False)
    results: list[list[float]] = [[] for _ in examples]
    for chunk, picked, kept in _scored_batches(loaded.model, examples, batch_size):
        for example, row, mask in zip(chunk, picked, kept):
            results[example.index] = row[mask].tolist()
    return results


def _scored_batches(model, examples: list[Example], batch_size: int):
    """(examples, each target position's log-probability, which positions are tokens) per model call."""
    device = model_device(model)
    ordered = sorted(examples, key=lambda e: len(e.source))
    for start in range(0, len(ordered), batch_size):
        chunk = ordered[start : start + batch_size]
        batch = collate(chunk).to(device)
        log_probs = model(batch.source, batch.source_lengths, batch.target_input).log_probs
        targets_out = model.loss_targets(batch.target_output)
        picked = log_probs.gather(-1, targets_out.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        yield chunk, picked, targets_out != IGNORE


def _examples(loaded: LoadedModel, sources: Sequence[str], targets: Sequence[str], plain_text: bool | None,
              oracle_control: bool) -> list[Example]:
    """Each pair as the model reads it (see :func:`forced_log_probs`)."""
    assets, model = loaded.assets, loaded.model
    plain_text = loaded.config.generation.plain_text if plain_text is None else plain_text

    def unchanged(text: str) -> str:
        return text

    to_model_source = loaded.plain_text.to_model_source if plain_text else unchanged
    to_model_text = loaded.plain_text.to_model_text if plain_text else unchanged
    default_prefix = loaded.control_prefix(None)
    examples = []
    for i, (source, target) in enumerate(zip(sources, targets)):
        source, target = to_model_source(source), to_model_text(target)
        prefix = loaded.control.oracle_tokens(source, target) if oracle_control and loaded.control else default_prefix
        source_ids, copied = encode_source(prefix + loaded.tokenizer.encode(source),
                                           assets.source_vocabulary, model.copies_source)
        target_ids = encode_target(loaded.tokenizer.encode(target), assets.target_vocabulary, copied, add_eos=True)
        examples.append(Example(i, source_ids or [EOS_ID], target_ids))
    limit = model.max_source_length
    for number, example in enumerate(examples, start=1):
        if limit and len(example.source) > limit:
            raise WeanError(f"line {number}: {len(example.source)} tokens, more than this model's encoder takes "
                            f"(max_positions {limit})")
    return examples
