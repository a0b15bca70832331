"""The pointer-generator (See, Liu and Manning, ACL 2017, section 2.2) as an output layer over any
decoder and any vocabulary layer: at each step a switch p_gen chooses between generating from the
vocabulary layer's distribution (``vocabulary_layer``: linear or wean) and copying a source token
with the attention as the distribution over source positions,

    p_gen = sigmoid(w_c . c_t + w_q . q_t + w_x . x_t + b)                      (equation 8)
    P(w)  = p_gen P_vocab(w) + (1 - p_gen) sum_{i: w_i = w} a_ti               (equation 9)

with c_t the attention's context (the attention-weighted encoder states), q_t the decoder's query
(its attentional state: wean's decoders have no separate s_t and h*_t) and x_t the embedding of
the word the decoder read. Source words outside the vocabulary are copied through extended ids
(:mod:`wean.data.copy_vocabulary`), so the distribution has V + (the batch's most unknown source
words) entries; plain text gets each copied word's surface form back. The coverage loss of the
same paper is :mod:`wean.models.coverage_loss` (``model.coverage_loss``).

The mixture is taken in log space (logaddexp of the two weighted terms), so a word the vocabulary
layer gives exp(-100) keeps a finite log-probability, and only at the row's source words: every
other word has no copy mass, so its log-probability is log p_gen + log P_vocab(w) (-inf where the
vocabulary layer gives it 0, a shortlist's left-out words), and the mixture costs a few dozen
entries per row rather than the vocabulary's width. The copy term is floored at
float32's smallest normal number (TINY) rather than 0 (a padded position, a word whose attention
underflows), so that logaddexp never meets two -inf and no gradient is NaN. An extended id that
the row's own source lacks (another sentence's unknown word) stays at -inf, so search never
writes it.

Label smoothing would spread probability over entries a row can never produce, and WEAN's
``candidates`` would train a copyable word outside them as <unk>: both are refused with copying
(as OpenNMT-py's copy loss has no smoothing).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from wean.data.vocabulary import UNK_ID
from wean.errors import WeanError
from wean.models.interfaces import OutputContext, OutputLayer, TrainingCorpus
from wean.models.log_softmax_at import log_softmax_at
from wean.models.output_layer import WeanOutputLayerConfig
from wean.registry import OUTPUT_LAYERS

TINY = torch.finfo(torch.float32).tiny  # the least copy mass an entry is given: a normal number, never flushed to 0


@dataclass
class PointerGeneratorConfig(WeanOutputLayerConfig):
    # linear | wean: the layer whose distribution over the vocabulary copying is mixed with (WEAN's
    # keys, inherited, apply when it is wean)
    vocabulary_layer: str = "wean"


@OUTPUT_LAYERS.register("pointer_generator", config=PointerGeneratorConfig)
class PointerGenerator(OutputLayer):
    reads_source = True
    copies_source = True

    def __init__(self, vocabulary: OutputLayer, embedding: nn.Embedding, hidden_size: int, memory_size: int,
                 vocabulary_size: int):
        super().__init__()
        self.vocabulary = vocabulary
        self.embedding = embedding  # the target embeddings (x_t), shared, not owned
        self.switch = nn.Linear(memory_size + hidden_size + embedding.embedding_dim, 1)  # w_c, w_q, w_x, b
        self.vocabulary_size = vocabulary_size

    @classmethod
    def build(cls, config, embedding, hidden_size, vocabulary_size, memory_size):
        inner = OUTPUT_LAYERS.get(config.vocabulary_layer, "model.output_layer.vocabulary_layer")
        vocabulary = inner.build(config, embedding, hidden_size, vocabulary_size)
        return cls(vocabulary, embedding, hidden_size, memory_size, vocabulary_size)

    @classmethod
    def check_config(cls, config) -> None:
        layer = config.model.output_layer
        inner = OUTPUT_LAYERS.get(layer.vocabulary_layer, "model.output_layer.vocabulary_layer")
        if inner.reads_source:
            raise WeanError(f"config: model.output_layer.vocabulary_layer is {layer.vocabulary_layer!r}, which "
                            "reads the source itself; choose a layer over the vocabulary (linear or wean)")
        if not config.data.tokenizer.shared_vocab:
            raise WeanError("config: model.output_layer.type pointer_generator copies source tokens as target "
                            "tokens, which needs one vocabulary: data.tokenizer.shared_vocab: true")
        if layer.candidates:
            raise WeanError("config: model.output_layer.candidates would train a copyable word outside them as "
                            "<unk>; the pointer-generator needs candidates: 0")
        if config.training.label_smoothing:
            raise WeanError("config: training.label_smoothing would spread probability over words a sentence "
                            "cannot copy; the pointer-generator needs label_smoothing: 0")
        inner.check_config(config)

    def prepare(self, corpus: TrainingCorpus) -> None:
        self.vocabulary.prepare(corpus)

    def shortlist(self, words: torch.Tensor):
        """The vocabulary layer's: copying reads the source, whose words every shortlist holds."""
        return self.vocabulary.shortlist(words)

    def generation_probability(self, queries: torch.Tensor, context: OutputContext) -> torch.Tensor:
        """The switch's logit (batch, steps): p_gen = sigmoid of it."""
        contexts = torch.bmm(context.attention.to(context.encoded.states.dtype), context.encoded.states)
        inputs = torch.cat([contexts, queries, self.embedding(context.previous).to(queries.dtype)], dim=-1)
        return self.switch(inputs).squeeze(-1).float()

    def log_probs(self, queries: torch.Tensor, context: OutputContext) -> torch.Tensor:
        vocabulary = self.vocabulary.log_probs(queries, context)  # (batch, steps, V)
        source = context.encoded.source  # (batch, source): extended ids
        attention = context.attention.float()
        width = max(self.vocabulary_size, int(source.max()) + 1)
        switch = self.generation_probability(queries, context).unsqueeze(-1)
        if width > self.vocabulary_size:  # a word no row copies stays at -inf
            vocabulary = F.pad(vocabulary, (0, width - self.vocabulary_size), value=float("-inf"))
        # Only the row's source words have copy mass: the mixture is taken at them alone, and every
        # other word keeps log p_gen + log P_vocab, which is what the mixture is where copying gives 0.
        first = first_positions(source)  # each source position's first position with the same id
        at_first = first.unsqueeze(1).expand_as(attention)
        copy_mass = torch.zeros_like(attention).scatter_add_(2, at_first, attention).gather(2, at_first)
        index = source.unsqueeze(1).expand_as(attention)
        log_generate = F.logsigmoid(switch)
        mixed = torch.logaddexp(log_generate + vocabulary.gather(2, index),
                                F.logsigmoid(-switch) + copy_mass.clamp(min=TINY).log())
        # a word the source holds twice is written twice with one value; its gradient flows once
        repeated = (first != torch.arange(source.size(1), device=source.device)).unsqueeze(1)
        return (log_generate + vocabulary).scatter_(2, index, torch.where(repeated, mixed.detach(), mixed))

    def target_log_probs(self, queries: torch.Tensor, context: OutputContext,
                         targets: torch.Tensor) -> torch.Tensor | None:
        """The mixture at each target alone: log P_vocab(target) from the logits and their
        normalizer (:func:`log_softmax_at`), the copy mass from the positions holding the target.
        None under a shortlist, or over a vocabulary layer that is not a softmax of logits."""
        vocabulary = self.vocabulary
        if context.encoded.shortlist is not None or not vocabulary.softmax_of_logits:
            return None
        in_vocabulary = (targets >= 0) & (targets < self.vocabulary_size)
        picked = targets.clamp(0, self.vocabulary_size - 1)  # IGNORE and extended ids: any word, then masked
        log_vocabulary = log_softmax_at(vocabulary(queries).float(), picked).masked_fill(~in_vocabulary, float("-inf"))
        at_target = context.encoded.source.unsqueeze(1) == targets.unsqueeze(2)  # (batch, steps, source)
        copy_mass = context.attention.float().masked_fill(~at_target, 0.0).sum(-1)
        switch = self.generation_probability(queries, context)
        generated = F.logsigmoid(switch) + log_vocabulary
        mixed = torch.logaddexp(generated, F.logsigmoid(-switch) + copy_mass.clamp(min=TINY).log())
        return torch.where(at_target.any(-1), mixed, generated)

    def map_targets(self, targets: torch.Tensor) -> torch.Tensor:
        """The vocabulary layer's mapping (WEAN's candidates) for words in the vocabulary; copied
        words outside it keep their extended ids."""
        extended = targets >= self.vocabulary_size
        if not bool(extended.any()):
            return self.vocabulary.map_targets(targets)
        return torch.where(extended, targets, self.vocabulary.map_targets(targets.masked_fill(extended, UNK_ID)))


def first_positions(source: torch.Tensor) -> torch.Tensor:
    """For ids ``source`` (batch, length), the first position of each position's id in its row
    (batch, length): where copy mass for that id is summed."""
    same = source.unsqueeze(2) == source.unsqueeze(1)
    return same.to(torch.uint8).argmax(dim=2)  # argmax gives the first of equal maxima
