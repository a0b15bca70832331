"""Output layers over the vocabulary: from the decoder's attentional state to scores of every
target word.

Both layers here map queries (..., hidden) to logits (..., vocabulary); ``OutputLayer.log_probs``
normalizes them for the loss and the search (the pointer-generator, which also copies from the
source, is ``pointer_generator.py``). ``model.output_layer.type`` picks one:

``linear``
    the usual softmax layer, logits = W q + b with its own |V| x H matrix.
``wean``
    WEAN (Ma et al., NAACL 2018, section 2.3): the query q_t = tanh(W_c[s_t; c_t]), which is the
    decoder's attentional state, scores every candidate word by its embedding e_i, equation (5):

        dot      f(q, e_i) = q^T e_i
        general  f(q, e_i) = q^T W_a e_i          (+ b^T e_i with ``bias``, as the public code)
        concat   f(q, e_i) = v^T tanh(W_q q + W_e e_i)

    The embeddings are the decoder-input embeddings (shared with the encoder when the vocabulary
    is), so the output layer adds at most 2 H^2 + H parameters, whatever the vocabulary size.
    Switches of the public code: ``bias`` on the ``general`` projection; ``detach_embeddings``
    (its ``dotnot``/``generalnot``) stops the output layer's gradient from reaching the
    embeddings. ``candidates`` restricts generation to the n most frequent source words
    (section 2.4); 0 keeps the whole vocabulary, as the public code did.

    The embedding-side terms (W_a E^T and b E^T for ``general``, W_e E^T for ``concat``) do not
    depend on the query, so in inference they are computed once and reused at every step until
    the weights change or the layer enters training mode.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import torch
from torch import nn
from torch.ao.nn.quantized.dynamic import Linear as DynamicQuantizedLinear
from torch.utils.checkpoint import checkpoint

from wean.config import OutputLayerConfig
from wean.data.vocabulary import EOS_ID, PAD_ID, UNK_ID
from wean.errors import WeanError
from wean.models import kernels
from wean.models.concat_score import fused_concat_scores
from wean.models.interfaces import OutputLayer, Shortlist, TrainingCorpus
from wean.registry import OUTPUT_LAYERS

NEG_INF = float("-inf")


@dataclass
class WeanOutputLayerConfig(OutputLayerConfig):
    score: str = "general"  # dot | general | concat (equation 5)
    bias: bool = True  # general: bias on the query projection, as the public code
    detach_embeddings: bool = False  # no gradient from the output layer into the embeddings
    candidates: int = 0  # generate only the n most frequent training-source words; 0: all
    # concat: chunked (plain PyTorch, any machine) | fused (torch.compile's kernels, which never
    # write out the queries x words x hidden tensor; a GPU, or a CPU with a C++ compiler)
    concat_kernel: str = "chunked"
    # concat: its W_q and W_e start in U(-r, r) for this r; 0: as every weight (model.init_range).
    # At 0.1 concat's scores start nearly blind to the query (results/wean/concat-init)
    concat_init_range: float = 0.0


@OUTPUT_LAYERS.register("linear")
class LinearOutput(OutputLayer):
    """The usual softmax layer: logits = W q + b, with its own |V| x H matrix."""

    def __init__(self, hidden_size: int, vocabulary_size: int):
        super().__init__()
        self.projection = nn.Linear(hidden_size, vocabulary_size)

    @classmethod
    def build(cls, config, embedding, hidden_size, vocabulary_size):
        return cls(hidden_size, vocabulary_size)

    def forward(self, query: torch.Tensor) -> torch.Tensor:
        return self.projection(query)

    def shortlist(self, words: torch.Tensor) -> Shortlist | None:
        if isinstance(self.projection, DynamicQuantizedLinear):  # wean.inference.quantize: its int8 product over the kept rows
            rows, bias = self._int8_rows(words)
            return Shortlist(words, None, bias, self.projection.out_features,
                             prepacked_int8=torch.ops.quantized.linear_prepack(rows, bias))
        if not isinstance(self.projection, nn.Linear):
            return None
        weight, bias = self.projection.weight, self.projection.bias
        return Shortlist(words, weight[words], None if bias is None else bias[words], weight.size(0),
                         onednn=self.onednn_products)

    def _int8_rows(self, words: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The int8 layer's rows of ``words``, quantized as in its whole weight, and their bias.
        Its weight is unpacked once per set of weights, not per batch (a third of a shortlist's
        cost), at the price of an int8 copy of it; loading weights packs new ones, which unpacks
        them again."""
        packed = self.projection._packed_params._packed_params  # replaced whenever weights are loaded
        if getattr(self, "_unpacked", (None,))[0] is not packed:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch's deprecation notice of quantized tensors (wean.inference.quantize)
                weight, bias = self.projection.weight(), self.projection.bias()
                if weight.qscheme() not in (torch.per_channel_affine, torch.per_channel_symmetric) \
                        or weight.q_per_channel_axis() != 0:
                    raise WeanError("shortlist: an int8 output layer needs a scale per row (wean.inference.quantize's "
                                    f"per-channel weights), not {weight.qscheme()}")
                self._unpacked = (packed, weight.int_repr(), weight.q_per_channel_scales(),
                                  weight.q_per_channel_zero_points(), bias)
        _, values, scales, zero_points, bias = self._unpacked
        scales, zero_points = scales[words], zero_points[words]
        dequantized = (values[words].float() - zero_points.unsqueeze(1).float()) * scales.unsqueeze(1).float()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rows = torch.quantize_per_channel(dequantized, scales, zero_points, 0, torch.qint8)
        return rows, None if bias is None else bias[words]


@OUTPUT_LAYERS.register("wean", config=WeanOutputLayerConfig)
class WeanOutput(OutputLayer):
    reads_weights = True  # uses its projections' weight tensors, not only their forward (int8 keeps fp32)
    def __init__(
        self,
        embedding: nn.Embedding,
        hidden_size: int,
        score: str = "general",
        bias: bool = True,
        detach_embeddings: bool = False,
        candidates: int = 0,
        concat_chunk_elements: int = 2**25,
        concat_kernel: str = "chunked",
        concat_init_range: float = 0.0,
    ):
        super().__init__()
        self.embedding = embedding  # shared, not owned: its parameters count as embeddings
        self.score = score
        self.detach_embeddings = detach_embeddings
        self.candidate_count = candidates
        self.concat_chunk_elements = concat_chunk_elements
        if concat_kernel not in ("chunked", "fused"):
            raise ValueError(f"unknown concat kernel {concat_kernel!r}")
        self.concat_kernel = concat_kernel
        self.concat_init_range = concat_init_range
        embedding_size = embedding.embedding_dim
        if score == "dot":
            if hidden_size != embedding_size:
                raise ValueError(f"WEAN dot needs hidden size {hidden_size} == embedding size {embedding_size}")
        elif score == "general":
            self.projection = nn.Linear(hidden_size, embedding_size, bias=bias)  # q -> W q + b
        elif score == "concat":
            self.query_projection = nn.Linear(hidden_size, hidden_size, bias=False)
            self.embedding_projection = nn.Linear(embedding_size, hidden_size, bias=False)
            self.energy = nn.Linear(hidden_size, 1, bias=False)
        else:
            raise ValueError(f"unknown WEAN score {score!r}")
        # True for words that may be generated; saved with the weights
        self.register_buffer("candidates", torch.ones(embedding.num_embeddings, dtype=torch.bool))
        self._cache: tuple | None = None

    @classmethod
    def build(cls, config, embedding, hidden_size, vocabulary_size):
        return cls(embedding, hidden_size, config.score, config.bias, config.detach_embeddings, config.candidates,
                   concat_kernel=config.concat_kernel, concat_init_range=config.concat_init_range)

    @classmethod
    def check_config(cls, config) -> None:
        model = config.model
        if model.output_layer.score == "dot" and model.decoder.hidden_size != model.embedding_size:
            raise WeanError(
                f"config: WEAN dot scores the query ({model.decoder.hidden_size}) against embeddings "
                f"({model.embedding_size}); make them equal or use score general or concat"
            )

    def initialize(self) -> None:
        if self.score == "concat" and self.concat_init_range > 0:
            for projection in (self.query_projection, self.embedding_projection):
                nn.init.uniform_(projection.weight, -self.concat_init_range, self.concat_init_range)

    def prepare(self, corpus: TrainingCorpus) -> None:
        """WEAN's candidate words (section 2.4): the ``candidates`` most frequent words of the
        training sources that the target vocabulary has, plus <unk> and <eos>; 0: every word."""
        if not self.candidate_count:
            return
        vocabulary = corpus.target_vocabulary
        counts = corpus.source_token_counts
        ranked = [t for t, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0])) if t in vocabulary.stoi]
        self.set_candidates([UNK_ID, EOS_ID] + [vocabulary.stoi[t] for t in ranked[: self.candidate_count]])

    def set_candidates(self, word_ids: list[int]) -> None:
        """Only these words (and <pad>, a training class of SPM that search never emits) may be
        generated."""
        mask = torch.zeros_like(self.candidates)
        mask[torch.as_tensor(word_ids + [PAD_ID], dtype=torch.long, device=mask.device)] = True
        self.candidates.copy_(mask)

    def map_targets(self, targets: torch.Tensor) -> torch.Tensor:
        """Words that can never be generated are trained as <unk>; ignored positions (negative)
        stay ignored."""
        if bool(self.candidates.all()):
            return targets
        keep = (targets < 0) | self.candidates[targets.clamp(min=0)]
        return torch.where(keep, targets, torch.full_like(targets, UNK_ID))

    def _embeddings(self) -> torch.Tensor:
        weight = self.embedding.weight
        return weight.detach() if self.detach_embeddings else weight

    def _keys(self) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The query-independent side: a (V x H) weight and a V bias for dot/general, so that
        scoring is the same kernel as a linear layer; the (V x H) W_e E^T rows for concat."""
        embeddings = self._embeddings()
        if self.score == "dot":
            return embeddings, None
        if self.score == "general":
            weight = embeddings @ self.projection.weight  # row i: W^T e_i
            bias = None if self.projection.bias is None else embeddings @ self.projection.bias
            return weight, bias
        return self.embedding_projection(embeddings), None

    def train(self, mode: bool = True):
        # a fused optimizer (the trainer's Adam) writes the weights without bumping their version
        # counters, which the cache below is keyed on: every validation after a process's first
        # scored through a stale embedding side. Entering training mode, as the trainer does
        # before every update, drops the cache.
        self._cache = None
        return super().train(mode)

    def _cached_keys(self):
        if self.training or torch.is_grad_enabled():
            return self._keys()
        # the versions catch weights changed in place outside training (load_state_dict, add_)
        version = tuple(p._version for p in [self.embedding.weight, *self.parameters()])
        if self._cache is None or self._cache[0] != version:
            self._cache = (version, self._keys())
        return self._cache[1]

    def forward(self, query: torch.Tensor) -> torch.Tensor:
        keys, bias = self._cached_keys()
        if self.score == "concat":
            logits = self._concat_scores(query, keys)
        else:
            logits = kernels.linear(query, keys, bias, self.onednn_products)
        if not bool(self.candidates.all()):
            logits = logits.masked_fill(~self.candidates, NEG_INF)
        return logits

    def shortlist(self, words: torch.Tensor) -> Shortlist | None:
        if self.score == "concat":
            return None
        keys, bias = self._cached_keys()
        bias = keys.new_zeros(keys.size(0)) if bias is None else bias
        bias = bias[words].masked_fill(~self.candidates[words], NEG_INF)
        return Shortlist(words, keys[words], bias, keys.size(0), onednn=self.onednn_products)

    def _concat_scores(self, query: torch.Tensor, embedding_side: torch.Tensor) -> torch.Tensor:
        """v^T tanh(W_q q + W_e e) for every query and word, in chunks of words of at most
        ``concat_chunk_elements`` (queries x words x hidden) values. The whole tensor is far too
        large (a batch of ~1,440 target tokens, 50k words and H 256: 74 GB), and so is what autograd
        would keep of it, so in training each chunk is recomputed in the backward pass instead.
        The fused kernel (``concat_score.py``) never writes it out at all."""
        if self.concat_kernel == "fused":
            return fused_concat_scores(self.query_projection(query), embedding_side, self.energy.weight.squeeze(0))
        query_side = self.query_projection(query).unsqueeze(-2)  # (..., 1, H)
        words = max(1, self.concat_chunk_elements // max(1, query_side.numel()))  # numel: queries x H
        chunks = []
        for start in range(0, embedding_side.size(0), words):
            keys = embedding_side[start : start + words]
            if torch.is_grad_enabled():  # no randomness inside: no RNG state to keep
                chunks.append(checkpoint(self._concat_chunk, query_side, keys, use_reentrant=False,
                                         preserve_rng_state=False))
            else:
                chunks.append(self._concat_chunk(query_side, keys))
        return torch.cat(chunks, dim=-1)

    def _concat_chunk(self, query_side: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return self.energy(torch.tanh(query_side + keys)).squeeze(-1)
