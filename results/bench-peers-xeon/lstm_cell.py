"""The LSTM cell's element-wise work (gates to states) as autograd's own operations or as one
autograd function with its backward written out, in a decoder-like loop of two layers over 16
steps (64 sentences, 256 units), forward and backward, two threads; milliseconds per loop, mean of
30 after 5 of warm-up, three rounds. Issue 94's micro-benchmark of a lever, tried and left
(results/bench-peers-xeon/README.md):

    python results/bench-peers-xeon/lstm_cell.py
"""

import time

import torch

from wean.training.allocator import keep_freed_memory

torch.set_num_threads(2)
keep_freed_memory()


def t(f, n=30):
    for _ in range(5):
        f()
    started = time.perf_counter()
    for _ in range(n):
        f()
    return (time.perf_counter() - started) / n * 1e3


class OneFunctionCell(torch.autograd.Function):
    """(gates, c) -> (h, c'), PyTorch's gate order, the backward written out."""

    @staticmethod
    def forward(ctx, gates, c):
        s = torch.sigmoid(gates)
        i, f, _, o = s.chunk(4, 1)
        quarter = gates.size(1) // 4
        g = torch.tanh(gates[:, 2 * quarter:3 * quarter])
        c_next = torch.addcmul(f * c, i, g)
        tc = torch.tanh(c_next)
        ctx.save_for_backward(s, g, c, tc)
        return o * tc, c_next

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, dh, dc):
        s, g, c, tc = ctx.saved_tensors
        i, f, _, o = s.chunk(4, 1)
        dh = torch.zeros_like(tc) if dh is None else dh
        dc_total = dh * o * (1 - tc * tc) + (0 if dc is None else dc)
        d = torch.empty_like(s)
        di, df, dg, do = d.chunk(4, 1)
        torch.mul(dc_total * g, i * (1 - i), out=di)
        torch.mul(dc_total * c, f * (1 - f), out=df)
        torch.mul(dc_total * i, 1 - g * g, out=dg)
        torch.mul(dh * tc, o * (1 - o), out=do)
        return d, dc_total * f


def autograd_cell(gates, c):
    i, f, g, o = gates.chunk(4, 1)
    c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


SENTENCES, UNITS, STEPS = 64, 256, 16
weights = [(torch.randn(4 * UNITS, 2 * UNITS) * 0.05).requires_grad_() for _ in range(2)]
biases = [torch.zeros(4 * UNITS, requires_grad=True) for _ in range(2)]
inputs, upstream = torch.randn(SENTENCES, STEPS, UNITS), torch.randn(SENTENCES, STEPS, UNITS)


def loop(cell) -> list[torch.Tensor]:
    """Forward and backward; the weights' gradients."""
    for tensor in weights + biases:
        tensor.grad = None
    h, c, outputs = [torch.zeros(SENTENCES, UNITS)] * 2, [torch.zeros(SENTENCES, UNITS)] * 2, []
    for x in inputs.unbind(1):
        below = x
        for layer in range(2):
            gates = torch.addmm(biases[layer], torch.cat([below, h[layer]], 1), weights[layer].t())
            h[layer], c[layer] = cell(gates, c[layer])
            below = h[layer]
        outputs.append(h[1])
    (torch.stack(outputs, 1) * upstream).sum().backward()
    return [w.grad for w in weights]


difference = max((a - b).abs().max().item() for a, b in zip(loop(autograd_cell), loop(OneFunctionCell.apply)))
print(f"largest difference between the two's weight gradients: {difference:.2g}")
for _ in range(3):  # rounds, each setting in turn
    print(f"autograd's own {t(lambda: loop(autograd_cell)):.2f} ms, one function {t(lambda: loop(OneFunctionCell.apply)):.2f} ms")
