"""Turning PTB-tokenized model output (``-LRB-``, `` `` ``, ``do n't``) back into plain text, for
benchmarks whose references are detokenized (EASSE's TurkCorpus). Moses' English rules through
sacremoses, after undoing the PTB bracket and quote escapes; English clitics are reattached."""

from __future__ import annotations

from functools import lru_cache

PTB_ESCAPES = {
    "-lrb-": "(", "-rrb-": ")", "-lsb-": "[", "-rsb-": "]", "-lcb-": "{", "-rcb-": "}", "``": '"', "''": '"',
}
CLITICS = {"'s", "'ve", "'re", "'ll", "'d", "'m", "n't"}
DETOKENIZERS = ("none", "ptb")


@lru_cache(maxsize=1)
def _moses():
    from sacremoses import MosesDetokenizer

    return MosesDetokenizer(lang="en")


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
