"""Texts in, outputs out, around a search (:func:`wean.search.decode`): sources tokenized (plain
text put in the corpus's tokenization and split into sentences first), control tokens
prepended, sorted by length into model calls, searched, and each output turned back into text
(``<unk>`` replaced, copied words written back, detokenized), its n-best list reranked where
asked. The user-facing :class:`wean.inference.generator.Generator` resolves what a caller asks for into a
:class:`TextSearch`; validation during training uses one directly, so that a validation scores
the outputs ``wean test`` would write."""

from __future__ import annotations

import dataclasses
from dataclasses import KW_ONLY, dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Callable

import torch

from wean.control import Control
from wean.data.copy_vocabulary import encode_source, token_of
from wean.data.corpus import pad
from wean.data.plain_text import PlainText
from wean.data.sentences import split_sentences
from wean.data.tokenizers import SentencePieceTokenizer
from wean.data.vocabulary import UNK_ID
from wean.errors import WeanError
from wean.evaluation.fidelity import faults
from wean.inference.outputs import Generation, joined
from wean.inference.rerank import rerank as rerank_lists
from wean.inference.shortlist import Shortlisted, ShortlistTable, compact_decode, searches_compactly
from wean.inference.source_names import SourceNamesOnly, TokenClasses
from wean.model_dir import Assets
from wean.models.device import model_device
from wean.models.model import EncoderDecoder
from wean.search import Hypothesis, decode
from wean.search_options import SearchOptions
from wean.textio import one_line

if TYPE_CHECKING:
    from wean.inference.model_scores import ChannelScore


def banned_ids(assets: Assets) -> list[int]:
    """Ids the search never writes: control tokens, and <unk> where the tokenizer can spell every
    character (byte fallback), so that nothing unreadable reaches the output."""
    target = assets.target_vocabulary
    banned = [target.stoi[t] for t in assets.control.reserved_tokens() if t in target.stoi]
    if isinstance(assets.tokenizer, SentencePieceTokenizer) and assets.tokenizer.byte_fallback:
        banned.append(UNK_ID)
    return banned


@dataclass
class TextSearch:
    """A model with its tokenizer and vocabularies (``assets``), and how to search with it."""

    model: EncoderDecoder
    assets: Assets
    options: SearchOptions
    batch_size: int
    replace_unk: bool
    _: KW_ONLY  # the rest by name
    prefix: list[str] = field(default_factory=list)  # control tokens every source starts with
    scorers: list = field(default_factory=list)  # (name, function, weight): reranking of each n-best list
    keep: int = 1  # outputs returned per sentence: the caller's nbest, though more may be reranked
    progress: Callable[[int, int], None] | None = None  # told (done, total) after each model call
    names: TokenClasses | None = None  # the target's numbers and names, if worked out already
    shortlist_table: ShortlistTable | None = None  # needed with the shortlist option
    # with fallback: a channel model (scorer of log P(source | output)) and the least per-token
    # log-probability it may give a faithful output
    fallback_channel: tuple[ChannelScore, float] | None = None
    # with fallback: the control tokens of lighter settings, a sentence searched again with each in
    # turn where every output failed the checks, before its source is returned
    fallback_prefixes: list[list[str]] = field(default_factory=list)

    @cached_property
    def plain_text(self) -> PlainText:
        return PlainText(self.assets.config.data.tokenizer)

    @cached_property
    def banned_ids(self) -> list[int]:
        return banned_ids(self.assets)

    def texts(
        self, texts: list[str], split: bool, wanted: Callable[[int], bool] | None = None
    ) -> list[Generation | None]:
        """Outputs for untokenized ``texts``, as text for people. With ``split``, each text split
        into sentences, each sentence searched, the outputs joined back: one text in, one out; a
        sentence longer than any the model was trained on (data.max_tokens) comes back unchanged
        with a warning: a model asked for it invents text. ``wanted`` as :meth:`sentences`', by text."""
        split_texts = [split_sentences(text) if split else [text] for text in texts]
        sentences = [sentence for parts in split_texts for sentence in parts]
        text_of = [t for t, parts in enumerate(split_texts) for _ in parts]  # each sentence's text
        tokenizer = self.assets.tokenizer
        source_tokens = [tokenizer.encode(self.plain_text.to_model_source(sentence)) for sentence in sentences]
        longest = self.assets.config.data.max_tokens if split else 0
        too_long = [bool(longest) and len(tokens) > longest for tokens in source_tokens]
        kept = [i for i, long in enumerate(too_long) if not long]
        generated = self.sentences(
            [sentences[i] for i in kept], [source_tokens[i] for i in kept],
            None if wanted is None else lambda j: wanted(text_of[kept[j]]), self.plain_text.to_plain_text,
        )
        per_sentence: list[Generation | None] = [None] * len(sentences)
        for i, generation in zip(kept, generated):
            if generation is not None:  # None: abandoned
                per_sentence[i] = generation
        for i, long in enumerate(too_long):
            if long:
                per_sentence[i] = Generation(
                    sentences[i], one_line(sentences[i]), [], [], 0.0, 0.0, torch.zeros(1, 0),
                    warning=f"a sentence of {len(source_tokens[i])} tokens, longer than any "
                    f"this model was trained on (data.max_tokens {longest}), was left unchanged",
                )
        results: list[Generation | None] = []
        start = 0
        for text, parts in zip(texts, split_texts):
            done = per_sentence[start : start + len(parts)]
            results.append(None if None in done else joined(text, done))
            start += len(parts)
        return results

    def sentences(
        self, sentences: list[str], source_tokens: list[list[str]],
        wanted: Callable[[int], bool] | None = None, to_text: Callable[[str, str], str] | None = None,
    ) -> list[Generation | None]:
        """Outputs for ``sentences``, given as the tokens the model reads (``source_tokens``), in
        their order. ``wanted(i)``, asked between search steps, turns False once nobody wants the
        output of ``sentences[i]``: its search stops and its place is None. ``to_text(output,
        source)`` turns each output's text into the caller's (plain text), before any reranking
        scores it."""
        prefix = self.prefix
        limit = self.model.max_source_length
        for number, tokens in enumerate(source_tokens, start=1):
            if limit and len(tokens) + len(prefix) > limit:
                raise WeanError(
                    f"input line {number}: {len(tokens)} tokens, more than this model's encoder takes "
                    f"(max_positions {limit}); it is not truncated"
                )
        results: list[Generation | None] = [None] * len(sentences)
        order = sorted((i for i, tokens in enumerate(source_tokens) if tokens), key=lambda i: len(source_tokens[i]))
        read = list(source_tokens)
        for i, tokens in enumerate(source_tokens):
            if not tokens:  # nothing to say about an empty line
                results[i] = Generation(sentences[i], "", [], [], 0.0, 0.0, torch.zeros(1, 0))
            else:
                read[i] = prefix + tokens
        device = model_device(self.model)
        model, search = self.model, decode
        names_from_source = self.options.names_and_numbers == "from_source"
        if self.options.shortlist:
            if self.shortlist_table is None:
                raise WeanError("shortlist: this model has no shortlist table; make one with `wean shortlist DIR`")
            model = Shortlisted(model, self.shortlist_table, self.options.shortlist,
                                compact=searches_compactly(self.options))
            search = compact_decode if model.compact else decode
        if names_from_source:
            if self.assets.source_vocabulary.itos != self.assets.target_vocabulary.itos:
                raise WeanError("names_and_numbers from_source compares source tokens with output tokens: it needs "
                                "a model with one vocabulary for both (data.tokenizer.shared_vocab)")
            model = SourceNamesOnly(model, self.names or TokenClasses.of(self.assets.target_vocabulary))
        done = len(sentences) - len(order)  # empty ones
        for chunk in length_chunks(order, [len(tokens) for tokens in read], self.batch_size):
            done += len(chunk)
            abandoned = None
            if wanted is not None:
                chunk = [i for i in chunk if wanted(i)]
                if not chunk:
                    continue
                abandoned = lambda live, rows=chunk: [row for row in live if not wanted(rows[row])]  # noqa: E731
            encoded = [encode_source(read[i], self.assets.source_vocabulary, self.model.copies_source) for i in chunk]
            copied = {i: words for i, (_, words) in zip(chunk, encoded)}
            source = pad([ids for ids, _ in encoded]).to(device)
            lengths = torch.tensor([len(ids) for ids, _ in encoded], device=device)
            nbest_lists = search(model, source, lengths, self.options, self.banned_ids, abandoned)
            kept = [(i, hypotheses) for i, hypotheses in zip(chunk, nbest_lists) if hypotheses]  # None: abandoned
            outputs = [[self._finish(sentences[i], read[i], copied[i], h, to_text) for h in hypotheses]
                       for i, hypotheses in kept]
            if self.scorers and kept:
                outputs = rerank_lists([sentences[i] for i, _ in kept], outputs, self.scorers)
            if self.options.fallback == "source":
                outputs = self._faithful_first([sentences[i] for i, _ in kept], outputs)
            for (i, _), generations in zip(kept, outputs):
                results[i] = dataclasses.replace(generations[0], alternatives=generations[1:self.keep])
            if self.progress is not None:
                self.progress(done, len(sentences))
        if self.fallback_prefixes and self.options.fallback == "source":
            self._search_lighter(results, sentences, source_tokens, wanted, to_text)
        if self.prefix:  # the source came back where control tokens asked for a change: say which were searched
            tried = "".join(f"; then {Control.describe(prefix)}" for prefix in self.fallback_prefixes)
            for i, result in enumerate(results):
                if result is not None and result.returned_source:
                    results[i] = dataclasses.replace(result, warning=(
                        f"{result.warning} (searched with control {Control.describe(self.prefix)}{tried})"))
        return results

    def _search_lighter(
        self, results: list[Generation | None], sentences: list[str], source_tokens: list[list[str]],
        wanted: Callable[[int], bool] | None, to_text: Callable[[str, str], str] | None,
    ) -> None:
        """Each result the fallback returned unchanged replaced, in place, by the output of the next
        control setting that passes the checks (its ``source_tokens`` start with that setting's
        tokens); the unchanged source stays where none does. ``progress`` is not told of these
        searches again."""
        failed = [i for i, result in enumerate(results) if result is not None and result.fell_back]
        if not failed:
            return
        lighter = dataclasses.replace(self, prefix=self.fallback_prefixes[0],
                                      fallback_prefixes=self.fallback_prefixes[1:], progress=None)
        retried = lighter.sentences(
            [sentences[i] for i in failed], [source_tokens[i] for i in failed],
            None if wanted is None else lambda j: wanted(failed[j]), to_text,
        )
        asked = Control.describe(self.prefix)
        for i, result in zip(failed, retried):
            if result is None:  # abandoned: nobody wants it any more
                results[i] = None
            elif not result.fell_back:
                # the reader gets less change than asked for: said, as a return of the source is
                used = Control.describe(result.source_tokens[:len(self.prefix)])
                results[i] = dataclasses.replace(result, warning=(
                    f"every output searched with control {asked} failed a fidelity or meaning check, so this one "
                    f"is of a lighter setting ({used}), which asks for less change"))

    def _faithful_first(self, sources: list[str], nbest_lists: list[list[Generation]]) -> list[list[Generation]]:
        """Each list as :func:`faithful_first` orders it, an output the channel model finds
        too unlikely to have come from its source counted unfaithful too. Only the first ``keep``
        entries of a list are returned, so the channel model reads a list's outputs free of
        fidelity faults in order, and no further than its ``keep``-th that passes: most lists need
        one forced pass over one output, not over every output of the beam."""
        words = self.options.fallback_words == "known"
        found = [[faults(source, output.text, words) for output in outputs]
                 for source, outputs in zip(sources, nbest_lists)]
        if self.fallback_channel is not None:
            channel, threshold = self.fallback_channel
            waiting = [[column for column, fault in enumerate(row) if not fault] for row in found]
            passed = [0] * len(found)
            while True:
                asked = [(row, waiting[row].pop(0)) for row in range(len(found)) if waiting[row] and passed[row] < self.keep]
                if not asked:
                    break
                scores = channel.log_probs_per_token([nbest_lists[row][column].text for row, column in asked],
                                                     [sources[row] for row, _ in asked])
                for (row, column), score in zip(asked, scores):
                    if score < threshold:
                        found[row][column] = {"channel": [f"{score:.2f} per token, below {threshold:g}"]}
                    else:
                        passed[row] += 1
        return [faithful_first(source, outputs, faults_found) for source, outputs, faults_found
                in zip(sources, nbest_lists, found)]

    def _finish(
        self, sentence: str, source_tokens: list[str], copied: list[str], hypothesis: Hypothesis,
        to_text: Callable[[str, str], str] | None = None,
    ) -> Generation:
        """``copied``: the source's words outside the vocabulary, which extended ids copy."""
        vocabulary = self.assets.target_vocabulary
        tokens = [token_of(i, vocabulary, copied) for i in hypothesis.tokens]
        if self.replace_unk:
            # <unk> becomes the source token it attended to most (Luong et al. 2015; WEAN's -unk),
            # never one of the control tokens
            prefix = len(self.prefix)
            for position, index in enumerate(hypothesis.tokens):
                if index == UNK_ID:
                    tokens[position] = source_tokens[prefix + int(hypothesis.attention[position, prefix:].argmax())]
        text = self.assets.tokenizer.decode(tokens)
        return Generation(
            sentence,
            # one line, as the CLI writes it: a copied word may hold a control character
            one_line(to_text(text, sentence) if to_text is not None else text),
            tokens,
            source_tokens,
            hypothesis.score,
            hypothesis.log_prob,
            hypothesis.attention.cpu(),
        )


def faithful_first(source: str, nbest: list[Generation],
                   found: list[dict[str, list[str]]] | None = None) -> list[Generation]:
    """``nbest`` with the outputs free of faults first, each part in its order; where none is
    free, the source unchanged comes first (the fallback option): a reader is better served by the
    sentence as it was than by a fluent one that says something else. ``found``: each output's
    faults (default: its fidelity faults, :func:`wean.evaluation.fidelity.faults`)."""
    if found is None:
        found = [faults(source, generation.text) for generation in nbest]
    free = [generation for generation, fault in zip(nbest, found, strict=True) if not fault]
    if free:
        return free + [generation for generation, fault in zip(nbest, found) if fault]
    best_faults = "; ".join(f"{check.replace('_', ' ')}: {', '.join(words[:3])}" for check, words in found[0].items())
    unchanged = Generation(source, one_line(source), [], [], 0.0, 0.0, torch.zeros(1, 0),
                           warning=f"every output found failed a fidelity or meaning check (the best: {best_faults}), "
                           "so the source is returned unchanged", fell_back=True)
    return [unchanged, *nbest]


def length_chunks(order: list[int], lengths: list[int], batch_size: int) -> list[list[int]]:
    """``order`` (indices sorted by length) cut into model calls of at most ``batch_size``
    sentences in which no sentence is padded past twice its length: one very long input then runs
    alone instead of making every sentence of its batch as long (7 inputs, one of them of 7,056
    tokens: 34 s in one call, 7 s one at a time)."""
    chunks: list[list[int]] = []
    for i in order:
        if not chunks or len(chunks[-1]) == batch_size or lengths[i] > 2 * lengths[chunks[-1][0]]:
            chunks.append([i])
        else:
            chunks[-1].append(i)
    return chunks
