"""A minimal plain-PyTorch version of the baseline model, written the way a first
implementation usually is: the same computation as wean's LSTM encoder-decoder with Luong
`general` attention and a linear output layer, with a step-by-step training loop and beam search
one sentence at a time. It is the yardstick for bench/seq2seq_speed.py, not part of wean."""

from __future__ import annotations

import torch
from torch import nn


class ReferenceSeq2seq(nn.Module):
    def __init__(self, vocabulary: int, size: int, layers: int):
        super().__init__()
        self.embedding = nn.Embedding(vocabulary, size, padding_idx=0)
        self.encoder = nn.LSTM(size, size, layers, batch_first=True)
        self.decoder_cells = nn.ModuleList(nn.LSTMCell(size, size) for _ in range(layers))
        self.attention = nn.Linear(size, size, bias=False)
        self.combine = nn.Linear(2 * size, size)
        self.output = nn.Linear(size, vocabulary)

    def encode(self, source):
        states, (h, c) = self.encoder(self.embedding(source))
        return states, [(h[i], c[i]) for i in range(h.size(0))]

    def step(self, word, hidden, states, mask):
        x = self.embedding(word)
        new_hidden = []
        for cell, (h, c) in zip(self.decoder_cells, hidden):
            h, c = cell(x, (h, c))
            new_hidden.append((h, c))
            x = h
        scores = torch.bmm(self.attention(states), x.unsqueeze(2)).squeeze(2).masked_fill(~mask, float("-inf"))
        context = torch.bmm(torch.softmax(scores, -1).unsqueeze(1), states).squeeze(1)
        return self.output(torch.tanh(self.combine(torch.cat([context, x], -1)))), new_hidden

    def loss(self, source, target_in, target_out):
        states, hidden = self.encode(source)
        mask = source != 0
        logits = []
        for t in range(target_in.size(1)):
            step_logits, hidden = self.step(target_in[:, t], hidden, states, mask)
            logits.append(step_logits)
        logits = torch.stack(logits, 1)
        return nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), target_out.reshape(-1), ignore_index=-100)

    @torch.no_grad()
    def beam_search(self, source, beam: int, max_length: int, bos: int = 2, eos: int = 3):
        """One sentence (1, length); returns the best token list."""
        states, hidden = self.encode(source)
        mask = source != 0
        hypotheses = [([], 0.0, hidden)]
        finished = []
        for _ in range(max_length):
            candidates = []
            for tokens, score, state in hypotheses:
                word = torch.tensor([tokens[-1] if tokens else bos])
                logits, new_state = self.step(word, state, states, mask)
                log_probs = torch.log_softmax(logits, -1)[0]
                top = log_probs.topk(beam)
                for lp, w in zip(top.values.tolist(), top.indices.tolist()):
                    candidates.append((tokens + [w], score + lp, new_state))
            candidates.sort(key=lambda c: -c[1])
            hypotheses = []
            for tokens, score, state in candidates[:beam]:
                (finished if tokens[-1] == eos else hypotheses).append((tokens, score, state))
            if not hypotheses or (finished and max(f[1] for f in finished) >= hypotheses[0][1]):
                break
        best = max(finished or hypotheses, key=lambda h: h[1])
        return best[0]
