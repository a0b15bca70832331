"""Keep the memory of freed tensors for the next training step, on glibc's allocator.

glibc's malloc serves a block larger than its mmap threshold (128 KiB, raised as such blocks are
freed, to at most 32 MiB) straight from the kernel and gives it back on free. A training step's
largest tensors (a batch's logits, their log-softmax and their gradients: tokens x vocabulary
floats, tens of megabytes) change size with every batch, so each step page-faults them in anew.
Raising the mmap and trim thresholds keeps freed blocks in the heap for reuse, which is what
tcmalloc does when preloaded (results/bench-allocator), without a preload. Numerics and alignment
are unchanged (PyTorch aligns every tensor itself). The setting lasts as long as the process.
"""

from __future__ import annotations

import ctypes
import platform

# mallopt's parameters (malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
KEEP_BYTES = 1 << 30  # blocks up to this size come from the heap, and this much free heap is kept


def keep_freed_memory() -> bool:
    """Set glibc's thresholds for this process; False where the C library is not glibc (macOS,
    musl), where nothing changes, or where glibc refuses a threshold."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return bool(mallopt(M_MMAP_THRESHOLD, KEEP_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD, KEEP_BYTES))
