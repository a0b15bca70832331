"""Training keeps freed tensors' memory for the next step (wean.training.allocator)."""

import os
import platform
import subprocess
import sys

import pytest

from wean.training import allocator

GLIBC = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"

# A batch's logits (64 sentences of ~28 tokens, 8,000 words: 50-60 MB), a different size each step
# and freed before the next; the page faults after a first round of steps say whether the memory
# was kept for reuse.
STEPS = """
import resource, sys, torch
from wean.training.allocator import keep_freed_memory
kept = sys.argv[1] == "keep" and keep_freed_memory()
faults = []
for _ in range(3):
    for tokens in (1900, 1700, 1800, 1750, 1850, 1720):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        logits = torch.ones(tokens, 8000)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        del logits
print(kept, sum(faults[6:]))
"""


def page_faults(mode: str) -> tuple[str, int]:
    # glibc's own allocator, untuned: no preloaded tcmalloc, no malloc tunables from the caller
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD" and not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    done = subprocess.run([sys.executable, "-c", STEPS, mode], capture_output=True, text=True, check=True, env=env)
    kept, faults = done.stdout.split()
    return kept, int(faults)


@pytest.mark.skipif(not GLIBC, reason="the thresholds are glibc's")
def test_freed_logits_are_reused_instead_of_faulted_in_again():
    _, faults_glibc = page_faults("glibc")
    # each tensor is 13,000-15,000 pages, mapped anew at every step above 32 MiB; with transparent
    # huge pages always on, the kernel maps them in 2 MiB pages and there is little to save
    if faults_glibc < 12 * 13_000:
        pytest.skip(f"glibc's allocator faulted only {faults_glibc} pages here (huge pages?)")
    kept, faults_kept = page_faults("keep")
    assert kept == "True"
    # at most a tensor's worth once the heap has grown to the largest (the heap's layout varies)
    assert faults_kept < faults_glibc / 5, (faults_kept, faults_glibc)


def test_another_c_library_is_left_alone(monkeypatch):
    monkeypatch.setattr(allocator.platform, "libc_ver", lambda: ("", ""))
    assert allocator.keep_freed_memory() is False
