"""Training keeps freed tensors' memory for the next step (wean.training.allocator)."""

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
for round in range(3):
    for tokens in (1900, 1700, 1800, 1750, 1850, 1720):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        logits = torch.ones(tokens, 8000)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        del logits
print(kept, sum(faults[6:]))
"""


def page_faults(mode: str) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-c", STEPS, mode], capture_output=True, text=True, check=True)
    kept, faults = done.stdout.split()
    return kept, int(faults)


@pytest.mark.skipif(not GLIBC, reason="the thresholds are glibc's")
def test_freed_logits_are_reused_instead_of_faulted_in_again():
    kept, faults_kept = page_faults("keep")
    _, faults_glibc = page_faults("glibc")
    assert kept == "True"
    # each tensor is 13,000-15,000 pages: glibc maps them anew at every step, above 32 MiB
    assert faults_glibc > 12 * 13_000, faults_glibc
    assert faults_kept < faults_glibc / 20, (faults_kept, faults_glibc)


def test_another_c_library_is_left_alone(monkeypatch):
    monkeypatch.setattr(allocator.platform, "libc_ver", lambda: ("", ""))
    assert allocator.keep_freed_memory() is False
