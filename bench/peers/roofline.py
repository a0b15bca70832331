"""The head-room of the peer benchmark: this CPU's measured peak matrix-product rate, and the
matrix-product work of the benchmark model per target token (training) and per sentence
(decoding), counted GEMM by GEMM. A toolkit's achieved rate divided by the peak is the fraction of
the machine it uses; what is left is all that any implementation could still win.

    python bench/peers/roofline.py [--threads 2]      # prints the peak GFLOP/s

Counting: 2 FLOPs per multiply-add; a training update is 3x the forward products (forward, input
gradient, weight gradient); decoding is the encoder once plus 16 decoder steps per hypothesis.
Element-wise work (gates, softmax, dropout) and the search itself are left out: the count is a floor.
"""

from __future__ import annotations

import argparse
import time

EMBEDDING, HIDDEN, ENCODER_HALF, LAYERS = 256, 256, 128, 2


def peak_gflops(threads: int = 2, size: int = 2048, seconds: float = 1.0, rounds: int = 3) -> float:
    """The best fp32 GEMM rate torch reaches here: a large square product, repeated."""
    import torch

    torch.set_num_threads(threads)
    a, b = torch.randn(size, size), torch.randn(size, size)
    for _ in range(3):
        torch.mm(a, b)
    rates = []
    for _ in range(rounds):
        count, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            torch.mm(a, b)
            count += 1
        rates.append(2 * size**3 * count / (time.perf_counter() - start) / 1e9)
    return max(rates)


def encoder_macs_per_token() -> int:
    first = 2 * 4 * ENCODER_HALF * (EMBEDDING + ENCODER_HALF)  # both directions: input + recurrent
    second = 2 * 4 * ENCODER_HALF * (2 * ENCODER_HALF + ENCODER_HALF)
    attention_keys = 2 * ENCODER_HALF * HIDDEN  # W h_s, once per source position
    return first + second + attention_keys


def decoder_macs_per_step(source_length: float, target_vocabulary: int) -> float:
    first = 4 * HIDDEN * (EMBEDDING + HIDDEN + HIDDEN)  # input feeding: [embedding; attentional] + recurrent
    second = 4 * HIDDEN * (HIDDEN + HIDDEN)
    attention = 2 * HIDDEN * source_length  # scores and context
    combine = HIDDEN * 2 * HIDDEN
    return first + second + attention + combine + HIDDEN * target_vocabulary


def training_flops_per_target_token(source_tokens: float, target_tokens: float, target_vocabulary: int) -> float:
    """Per target token of an epoch, with `source_tokens` / `target_tokens` its mean lengths
    (</s> included)."""
    per_sentence = encoder_macs_per_token() * source_tokens + target_tokens * decoder_macs_per_step(
        source_tokens, target_vocabulary
    )
    return 3 * 2 * per_sentence / target_tokens


def decoding_flops_per_sentence(source_tokens: float, beam: int, steps: int, target_vocabulary: int) -> float:
    return 2 * (encoder_macs_per_token() * source_tokens
                + beam * steps * decoder_macs_per_step(source_tokens, target_vocabulary))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    print(f"peak fp32 GEMM, {args.threads} threads: {peak_gflops(args.threads):.1f} GFLOP/s")


if __name__ == "__main__":
    main()
