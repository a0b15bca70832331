"""The plain-PyTorch reference of the peer benchmark: the benchmark's model written directly in
PyTorch, as a competent first implementation would be, with no toolkit around it. It shows what
any toolkit adds or saves over the bare computation.

Model: embeddings 256; 2-layer bidirectional LSTM encoder (128 per direction); 2-layer LSTM
decoder (256, LSTMCell stack) started from the encoder's final states, with input feeding and
Luong `general` attention (score = h_s . W h_t, then tanh(W_c [c; h])); untied linear output.
Training: Adam 1e-3, gradient-norm clip 5, cross-entropy per target token, batches of 64 sentences
sorted by length within pools of 100 batches. Decoding: batched greedy or beam search.

    python bench/peers/reference.py train  --data DIR --model FILE [--updates 300]
    python bench/peers/reference.py decode --data DIR --model FILE --beam 5 --min-length 15 --max-length 16

It prints `update N loss L tokens T seconds S` every 10 updates and `decoded N sentences in S s`, the lines
bench/peers/run.py reads. Checkpoints are safetensors (weights) plus JSON (vocabularies).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import Counter
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from torch import nn

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]


def read_lines(path: Path) -> list[list[str]]:
    return [line.split() for line in path.read_text(encoding="utf-8").splitlines()]


def build_vocabulary(sentences: list[list[str]], size: int = 10000) -> list[str]:
    counts = Counter(word for sentence in sentences for word in sentence)
    return SPECIALS + [word for word, _ in counts.most_common(size)]


class Seq2seq(nn.Module):
    def __init__(self, source_size: int, target_size: int, embedding: int = 256, hidden: int = 256,
                 layers: int = 2, dropout: float = 0.3):
        super().__init__()
        self.source_embedding = nn.Embedding(source_size, embedding, padding_idx=PAD)
        self.target_embedding = nn.Embedding(target_size, embedding, padding_idx=PAD)
        self.encoder = nn.LSTM(embedding, hidden // 2, layers, batch_first=True, bidirectional=True,
                               dropout=dropout)
        self.cells = nn.ModuleList(nn.LSTMCell((embedding + hidden) if i == 0 else hidden, hidden)
                                   for i in range(layers))
        self.attention = nn.Linear(hidden, hidden, bias=False)
        self.combine = nn.Linear(2 * hidden, hidden)
        self.output = nn.Linear(hidden, target_size)
        self.dropout = nn.Dropout(dropout)
        self.layers, self.hidden = layers, hidden
        for parameter in self.parameters():
            nn.init.uniform_(parameter, -0.1, 0.1)

    def encode(self, source: torch.Tensor, lengths: torch.Tensor):
        packed = nn.utils.rnn.pack_padded_sequence(self.dropout(self.source_embedding(source)), lengths,
                                                   batch_first=True, enforce_sorted=False)
        states, (h, c) = self.encoder(packed)
        states, _ = nn.utils.rnn.pad_packed_sequence(states, batch_first=True)
        # final states of both directions side by side: (layers, batch, hidden)
        h = h.view(self.layers, 2, -1, self.hidden // 2).transpose(1, 2).reshape(self.layers, -1, self.hidden)
        c = c.view(self.layers, 2, -1, self.hidden // 2).transpose(1, 2).reshape(self.layers, -1, self.hidden)
        keys = self.attention(states)  # W h_s once per sentence, not once per step
        return states, keys, [(h[i], c[i]) for i in range(self.layers)]

    def step(self, word, hidden, feed, states, keys, mask):
        x = torch.cat([self.dropout(self.target_embedding(word)), feed], -1)
        new_hidden = []
        for i, cell in enumerate(self.cells):
            h, c = cell(x, hidden[i])
            new_hidden.append((h, c))
            x = self.dropout(h) if i < self.layers - 1 else h
        scores = torch.bmm(keys, x.unsqueeze(2)).squeeze(2).masked_fill(~mask, float("-inf"))
        context = torch.bmm(torch.softmax(scores, -1).unsqueeze(1), states).squeeze(1)
        attentional = self.dropout(torch.tanh(self.combine(torch.cat([context, x], -1))))
        return attentional, new_hidden

    def loss(self, source, lengths, target_in, target_out):
        states, keys, hidden = self.encode(source, lengths)
        mask = source != PAD
        feed = states.new_zeros(source.size(0), self.hidden)
        outputs = []
        for t in range(target_in.size(1)):
            feed, hidden = self.step(target_in[:, t], hidden, feed, states, keys, mask)
            outputs.append(feed)
        logits = self.output(torch.stack(outputs, 1))
        return nn.functional.cross_entropy(logits.flatten(0, 1), target_out.flatten(), ignore_index=PAD,
                                           reduction="sum")

    @torch.no_grad()
    def search(self, source, lengths, beam: int, min_length: int, max_length: int) -> list[list[int]]:
        """Batched beam search (beam 1 = greedy); `</s>` is blocked for the first min_length steps."""
        batch = source.size(0)
        states, keys, hidden = self.encode(source, lengths)
        rows = torch.arange(batch).repeat_interleave(beam)  # each sentence's beam rows
        states, keys, mask = states[rows], keys[rows], (source != PAD)[rows]
        hidden = [(h[rows], c[rows]) for h, c in hidden]
        feed = states.new_zeros(batch * beam, self.hidden)
        word = torch.full((batch * beam,), BOS, dtype=torch.long)
        scores = torch.full((batch, beam), float("-inf"))
        scores[:, 0] = 0.0  # one live hypothesis per sentence at the start
        history = torch.empty(batch, beam, 0, dtype=torch.long)
        finished = torch.zeros(batch, beam, dtype=torch.bool)
        for t in range(max_length):
            feed, hidden = self.step(word, hidden, feed, states, keys, mask)
            log_probs = torch.log_softmax(self.output(feed), -1).view(batch, beam, -1)
            if t < min_length:
                log_probs[:, :, EOS] = float("-inf")
            # a finished hypothesis only extends with padding, at no cost
            log_probs = log_probs.masked_fill(finished.unsqueeze(2), float("-inf"))
            log_probs[:, :, PAD] = torch.where(finished, 0.0, float("-inf"))
            total = (scores.unsqueeze(2) + log_probs).view(batch, -1)
            scores, choice = total.topk(beam, -1)
            origin, word = choice // log_probs.size(2), choice % log_probs.size(2)
            history = torch.cat([history.gather(1, origin.unsqueeze(2).expand_as(history)), word.unsqueeze(2)], 2)
            finished = finished.gather(1, origin) | (word == EOS)
            flat = (origin + torch.arange(batch).unsqueeze(1) * beam).flatten()
            hidden = [(h[flat], c[flat]) for h, c in hidden]
            feed, word = feed[flat], word.flatten()
            if finished.all():
                break
        best = history[:, 0].tolist()
        return [[w for w in sentence if w not in (PAD, EOS)] for sentence in best]


def tensor(sentences: list[list[int]]) -> torch.Tensor:
    return nn.utils.rnn.pad_sequence([torch.tensor(s) for s in sentences], batch_first=True, padding_value=PAD)


def train(args) -> None:
    torch.manual_seed(args.seed)
    random.seed(args.seed)
    sources, targets = read_lines(args.data / "train.src"), read_lines(args.data / "train.dst")
    source_words, target_words = build_vocabulary(sources), build_vocabulary(targets)
    source_index = {w: i for i, w in enumerate(source_words)}
    target_index = {w: i for i, w in enumerate(target_words)}
    pairs = [([source_index.get(w, UNK) for w in s] + [EOS], [target_index.get(w, UNK) for w in t])
             for s, t in zip(sources, targets)]
    random.shuffle(pairs)
    batches = []
    pool_size = 100 * args.batch_size  # length-sorted pools: little padding, still shuffled
    for start in range(0, len(pairs), pool_size):
        pool = sorted(pairs[start:start + pool_size], key=lambda p: len(p[1]))
        batches += [pool[i:i + args.batch_size] for i in range(0, len(pool), args.batch_size)]
    random.shuffle(batches)
    model = Seq2seq(len(source_words), len(target_words))
    print(f"reference: {sum(p.numel() for p in model.parameters())} parameters, "
          f"vocabulary {len(source_words)}/{len(target_words)}", flush=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    window_tokens, window_loss, window_start = 0, 0.0, time.perf_counter()
    for update in range(1, args.updates + 1):
        batch = batches[(update - 1) % len(batches)]
        source = tensor([s for s, _ in batch])
        lengths = torch.tensor([len(s) for s, _ in batch])
        target_in = tensor([[BOS] + t for _, t in batch])
        target_out = tensor([t + [EOS] for _, t in batch])
        tokens = int((target_out != PAD).sum())
        loss = model.loss(source, lengths, target_in, target_out)
        optimizer.zero_grad()
        (loss / tokens).backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        window_tokens += tokens
        window_loss += loss.item()
        if update % 10 == 0:
            seconds = time.perf_counter() - window_start
            print(f"update {update} loss {window_loss / window_tokens:.4f} tokens {window_tokens} "
                  f"seconds {seconds:.4f}", flush=True)
            window_tokens, window_loss, window_start = 0, 0.0, time.perf_counter()
    save_file(model.state_dict(), str(args.model))
    args.model.with_suffix(".json").write_text(json.dumps({"source": source_words, "target": target_words}))


def decode(args) -> None:
    vocabularies = json.loads(args.model.with_suffix(".json").read_text())
    source_index = {w: i for i, w in enumerate(vocabularies["source"])}
    model = Seq2seq(len(vocabularies["source"]), len(vocabularies["target"]))
    model.load_state_dict(load_file(str(args.model)))
    model.eval()
    sources = [[source_index.get(w, UNK) for w in s] + [EOS] for s in read_lines(args.data / "test.src")]
    start = time.perf_counter()
    outputs = []
    for i in range(0, len(sources), args.batch_size):
        chunk = sources[i:i + args.batch_size]
        outputs += model.search(tensor(chunk), torch.tensor([len(s) for s in chunk]), args.beam,
                                args.min_length, args.max_length)
    elapsed = time.perf_counter() - start
    print(f"decoded {len(sources)} sentences in {elapsed:.3f} s", flush=True)
    if args.out:
        args.out.write_text("".join(" ".join(vocabularies["target"][w] for w in o) + "\n" for o in outputs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["train", "decode"])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--model", type=Path, required=True, help="the .safetensors file (and its .json)")
    parser.add_argument("--updates", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--beam", type=int, default=5)
    parser.add_argument("--min-length", type=int, default=15)
    parser.add_argument("--max-length", type=int, default=16)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    train(args) if args.mode == "train" else decode(args)


if __name__ == "__main__":
    main()
