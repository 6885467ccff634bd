"""How the benchmark scripts time a call."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np


def fastest(function: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """The fastest of ``repeats`` calls of ``function()`` in seconds, and the last call's result."""
    best, result = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result
