"""Penn Treebank tokenization conventions (``-LRB-``, `` `` ``, ``do n't``), the form of the
simplification corpora here. Plain text is brought into that form before a model trained on them
reads it, and model output is brought back into plain text: for benchmarks whose references are
detokenized (EASSE's TurkCorpus) and for people (``wean simplify``, ``wean serve``).

Tokenizing is NLTK's Treebank word tokenizer, which splits only a line's final period; a period
ending an inner sentence ("left. It") is split off too when a capital follows and the word it
ends is no known abbreviation ("Mr. Smith"); abbreviations with inner periods ("U.S.") stay whole. Detokenizing is Moses' English rules through
sacremoses, after undoing the bracket and quote escapes and reattaching English clitics.
"""

from __future__ import annotations

import re
from functools import lru_cache

from nltk.tokenize import TreebankWordTokenizer

PTB_ESCAPES = {
    "-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]", "-lcb-": "{", "-rcb-": "}", "``": '"', "''": '"',
}
BRACKET_ESCAPES = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}
CLITICS = {"'s", "'ve", "'re", "'ll", "'d", "'m", "n't"}
DETOKENIZERS = ("none", "ptb")


@lru_cache(maxsize=1)
def _moses():
    from sacremoses import MosesDetokenizer  # deferred: 0.35 s to import, and only detokenizing needs it

    return MosesDetokenizer(lang="en")


INNER_SENTENCE_END = re.compile(r"^[A-Za-z0-9]+\.$")
ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "st", "jr", "sr", "prof", "gen", "col", "lt", "sgt", "capt", "rev", "gov", "sen",
    "rep", "inc", "ltd", "co", "corp", "mt", "ft", "no", "vol", "vs", "jan", "feb", "mar", "apr", "jun", "jul",
    "aug", "sep", "sept", "oct", "nov", "dec",
}


@lru_cache(maxsize=1)
def _treebank():
    return TreebankWordTokenizer()


def ptb_tokenize(text: str) -> str:
    """'He said "no" (twice).' -> 'He said `` no '' -LRB- twice -RRB- .'"""
    tokens = _treebank().tokenize(text)
    split: list[str] = []
    for token, following in zip(tokens, tokens[1:] + [""]):
        if INNER_SENTENCE_END.match(token) and following[:1].isupper() and len(token) > 2 \
                and token[:-1].lower() not in ABBREVIATIONS:
            split += [token[:-1], "."]
        else:
            split.append(BRACKET_ESCAPES.get(token, token))
    return " ".join(split)


def ptb_detokenize(text: str) -> str:
    tokens: list[str] = []
    for token in text.split():
        token = PTB_ESCAPES.get(token.lower(), token)
        if tokens and token.lower() in CLITICS:
            tokens[-1] += token
        else:
            tokens.append(token)
    return _moses().detokenize(tokens)


def detokenize(text: str, kind: str) -> str:
    if kind == "none":
        return text
    if kind == "ptb":
        return ptb_detokenize(text)
    raise ValueError(f"unknown detokenizer {kind!r}; choose one of {', '.join(DETOKENIZERS)}")
