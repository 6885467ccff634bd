"""What the benchmark scripts print about the machine they ran on."""
from __future__ import annotations

import platform


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or the machine's architecture where there is none."""
    try:
        with open("/proc/cpuinfo") as info:
            return next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.machine()
