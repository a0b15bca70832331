"""Scoring a model on the validation split while it trains: the teacher-forced loss, and BLEU, SARI,
ROUGE-2 and any other registered metric (``training.validation_metrics``, the selection metric's)
of its greedy outputs, computed as ``wean test`` computes them. Only the validation
split is ever read here: there is no way to select on a test set."""

from __future__ import annotations

import math
from dataclasses import replace

import torch

from wean.config import Config
from wean.data.corpus import ParallelText, collate, encode_pairs, make_batches
from wean.data.plain_text import PlainText
from wean.evaluation import EvaluationSettings, evaluate
from wean.inference.pipeline import TextSearch
from wean.model_dir import Assets
from wean.registry import METRICS, score_key
from wean.search_options import SearchOptions
from wean.training.criterion import Criterion


class Validation:
    def __init__(self, config: Config, assets: Assets, valid: ParallelText, copies: bool = False):
        """``valid``: the pairs of data.valid, or those held out of the training pairs;
        ``copies``: the model copies (:mod:`wean.data.copy_vocabulary`)."""
        self.config = config
        self.valid = valid
        if config.training.max_valid_sentences:
            n = config.training.max_valid_sentences
            self.valid.sources = self.valid.sources[:n]
            self.valid.references = [stream[:n] for stream in self.valid.references]
            self.valid.targets = self.valid.references[0]
        model_text = self.valid
        if config.data.valid_plain_text:  # the loss reads the pairs as the training corpus is written
            plain_text = PlainText(config.data.tokenizer)
            model_text = replace(self.valid, sources=[plain_text.to_model_source(s) for s in self.valid.sources],
                                 targets=[plain_text.to_model_text(t) for t in self.valid.targets])
        self.examples = encode_pairs(  # the loss reads each pair with its own (oracle) control values
            model_text, assets.tokenizer, assets.source_vocabulary, assets.target_vocabulary, control=assets.control,
            copies=copies,
        )

    @torch.no_grad()
    def loss(self, criterion: Criterion, device: torch.device) -> float:
        """Cross-entropy per target token of the validation pairs (Y, never Y': comparable
        across models with and without auxiliary losses)."""
        criterion.model.eval()
        total, tokens = 0.0, 0
        for examples in make_batches(self.examples, self.config.training.batch_size):
            batch = collate(examples).to(device)
            total += float(criterion.validation_loss(batch))
            tokens += batch.target_tokens
        return total / tokens

    def scores(self, criterion: Criterion, assets: Assets, device: torch.device) -> dict[str, float]:
        """loss and perplexity of the model the criterion trains, and every score key of
        :func:`validation_metrics` (bleu, sari, sari_add, ..., rouge2, ...)."""
        record = {"loss": self.loss(criterion, device)}
        record["perplexity"] = math.exp(min(record["loss"], 50))
        # greedy and without n-gram blocking (the model's own choices), with the model's default
        # control values (generation.control) if it has control tokens
        # and over the whole vocabulary (a shortlist's table is made after training), never
        # returning the source in their place (fallback)
        options = SearchOptions.of(self.config.generation).replace(strategy="greedy", nbest=1, block_ngram_repeat=0,
                                                                   shortlist=0, fallback="none")
        prefix = assets.control.tokens(None) if assets.control else []
        search = TextSearch(criterion.model.eval(), assets, options, self.config.generation.batch_size,
                            replace_unk=True, prefix=prefix)
        sources = self.valid.sources
        if self.config.data.valid_plain_text:
            generations = search.texts(sources, split=False)
        else:
            generations = search.sentences(sources, [assets.tokenizer.encode(source) for source in sources])
        outputs = [g.text for g in generations]
        characters = self.config.data.tokenizer.type == "char"  # Chinese: character-level scores
        metrics = validation_metrics(self.config)
        settings = EvaluationSettings(metrics=metrics, tokenizer="char" if characters else "13a")
        scores = evaluate(outputs, self.valid.sources, self.valid.references, settings, yardstick=False).scores
        for name in metrics:
            record.update({key: scores[key] for key in METRICS.get(name).keys if key in scores})
        return record


def validation_metrics(config: Config) -> tuple[str, ...]:
    """The registered metrics a validation scores, every key of each recorded: sari, bleu and
    rouge always, those of ``training.validation_metrics``, and the selection metric's."""
    names = ["sari", "bleu", "rouge", *config.training.validation_metrics]
    owner, _ = score_key(config.training.selection_metric)
    if owner is not None:
        names.append(owner)
    return tuple(dict.fromkeys(names))
