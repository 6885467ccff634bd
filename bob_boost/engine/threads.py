"""Thread counts and the worker threads that run the compiled kernels.

The kernels are compiled with ``nogil=True``: each call works on a block of
features or rows and releases the GIL, so plain Python threads run them in
parallel. Work is split into blocks whose boundaries do not depend on the
thread count and every block writes its own part of the output (or its own
partial sum, reduced afterwards in block order), so results are bit-identical
whatever ``n_threads`` is. Several Python threads may train or predict at
once: each call waits only for its own blocks.
"""
from __future__ import annotations

import numbers
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable, Sequence

import numpy as np
from threadpoolctl import ThreadpoolController

from ..exceptions import InvalidTypeError, InvalidValueError

_pools: dict[tuple[int, str], ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()
_blas: list[ThreadpoolController] = []


def single_threaded_blas():
    """A context in which BLAS calls run on one thread.

    The loop's step rules make many tiny BLAS calls a round, for which a multi-threaded BLAS spends more on
    waking its threads than on the work (3x slower on 2 cores). The thread pools are found once per process
    (finding them takes about a millisecond, as much as a small fit's ten rounds), as scikit-learn does;
    a BLAS loaded later is not limited.
    """
    with _pools_lock:
        if not _blas:
            _blas.append(ThreadpoolController())
    return _blas[0].limit(limits=1, user_api="blas")


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the platform tells it)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS and Windows have no sched_getaffinity
        return max(1, os.cpu_count() or 1)


def check_threads(n_threads, name: str = "n_threads") -> int:
    """Resolve ``n_threads``: ``None`` means every available core, else an integer >= 1.

    Raises
    ------
    InvalidTypeError, InvalidValueError
        For a non-integer or a count below 1.
    """
    if n_threads is None:
        return available_cores()
    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral):
        raise InvalidTypeError(f"{name}: expected None or an integer >= 1, got {type(n_threads).__name__}")
    if n_threads < 1:
        raise InvalidValueError(f"{name}: must be None or an integer >= 1, got {n_threads}")
    return int(n_threads)


def thread_pool(size: int, purpose: str = "blocks") -> ThreadPoolExecutor:
    """The process's pool of ``size`` threads for ``purpose`` (made once; pools of different purposes never wait
    for each other)."""
    with _pools_lock:
        pool = _pools.get((size, purpose))
        if pool is None:
            pool = _pools[size, purpose] = ThreadPoolExecutor(max_workers=size,
                                                             thread_name_prefix=f"bob_boost-{purpose}")
        return pool


#: Below this many elementary steps (e.g. rows x features of a histogram) a call's blocks run in the
#: caller's thread: waking pool threads costs more than the work (a third of the training time of
#: gradient trees on pendigits' 7,494 x 16 went to it).
MIN_PARALLEL_WORK = 1 << 18


def run_blocks(kernel: Callable[..., None], blocks: Sequence[tuple], n_threads: int,
               work: float | None = None) -> None:
    """Call ``kernel(*block)`` for every block, on up to ``n_threads`` threads.

    The blocks are grouped into ``n_threads`` contiguous runs (so at most that
    many run at once), the last in the caller's thread; with one thread, one block, or less ``work`` than
    :data:`MIN_PARALLEL_WORK`, they run in the caller's thread. The blocks'
    results must not depend on the thread that runs them. Exceptions of a
    kernel are raised here.
    """
    if n_threads == 1 or len(blocks) == 1 or (work is not None and work < MIN_PARALLEL_WORK):
        for block in blocks:
            kernel(*block)
        return
    groups = min(n_threads, len(blocks))
    bounds = [len(blocks) * g // groups for g in range(groups + 1)]

    def run_group(start: int, stop: int) -> None:
        for block in blocks[start:stop]:
            kernel(*block)

    # the caller runs the last group itself instead of waiting idle
    futures = [thread_pool(groups - 1).submit(run_group, bounds[g], bounds[g + 1]) for g in range(groups - 1)]
    try:
        run_group(bounds[groups - 1], bounds[groups])
    finally:
        for future in futures:
            future.result()


def balanced_ranges(costs, parts: int) -> list[tuple[int, int]]:
    """Split ``range(len(costs))`` into at most ``parts`` contiguous ranges of similar total cost.

    The split depends only on the costs and ``parts``; each range's results
    must not depend on where it was cut (per-feature work, for instance).
    """
    cumulative = np.cumsum(np.asarray(costs, dtype=np.float64))
    total = cumulative[-1] if cumulative.size else 0.0
    if total <= 0 or parts <= 1:
        return [(0, len(cumulative))] if len(cumulative) else []
    cuts = np.searchsorted(cumulative, total * np.arange(1, parts) / parts, side="left") + 1
    edges = np.unique(np.concatenate([[0], np.clip(cuts, 0, len(cumulative)), [len(cumulative)]]))
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a]
