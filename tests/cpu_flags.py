"""What the test machine's CPU can run, read without numpy (the suite pins OpenBLAS before numpy loads)."""
from __future__ import annotations

from pathlib import Path

#: The AVX-512 subsets OpenBLAS's SkylakeX kernels need.
SKYLAKEX_FLAGS = {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}


def has_avx512(unknown: bool) -> bool:
    """Whether the CPU has the AVX-512 subsets of :data:`SKYLAKEX_FLAGS`; ``unknown`` without /proc/cpuinfo."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        return unknown
    flags = next((line.split(":", 1)[1].split() for line in cpuinfo.splitlines() if line.startswith("flags")), [])
    return SKYLAKEX_FLAGS <= set(flags)
