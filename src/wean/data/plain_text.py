"""Plain text, as people write and read it, and the text a model was trained on: the corpora here
are PTB-tokenized (``data.tokenizer.corpus_tokenization: ptb``), some lowercased. Used on the way
in (``wean simplify``, the server, validation on plain text) and on the way out."""

from __future__ import annotations

from wean.config import TokenizerConfig
from wean.data.corpus import LM_SOURCE
from wean.data.ptb import ptb_detokenize, ptb_tokenize


class PlainText:
    def __init__(self, settings: TokenizerConfig):
        self.settings = settings

    def to_model_text(self, text: str) -> str:
        """Plain text in the tokenization of the training corpus."""
        if self.settings.corpus_tokenization == "ptb":
            return ptb_tokenize(text)
        return text

    def to_model_source(self, text: str) -> str:
        """A source in the tokenization of the training corpus. A language model's one source
        word is a token, not text, and stays whole (tokenized, ``<lm>`` would be ``< lm >``)."""
        return text if text == LM_SOURCE else self.to_model_text(text)

    def to_plain_text(self, output: str, source: str) -> str:
        """A model output as text for people: PTB escapes undone, and for a lowercasing model the
        casing of the source's words restored and the first letter capitalised."""
        settings = self.settings
        if settings.lowercase and output:
            first_word, *others = self.to_model_text(source).split() or [""]
            # the sentence-initial word is capitalised by position, so any later occurrence of it
            # tells its casing better ("The ... the"); among those the first wins
            casing = {first_word.lower(): first_word}
            for word in others[::-1]:
                casing[word.lower()] = word
            first, *rest = output.split()
            first = casing.get(first, first)
            output = " ".join([first[:1].upper() + first[1:]] + [casing.get(word, word) for word in rest])
        if settings.corpus_tokenization == "ptb":
            output = ptb_detokenize(output)
        return output
