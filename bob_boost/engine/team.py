"""A team of threads that share the steps of one compiled call, handed over in microseconds.

The compiled kernels release the GIL, and :func:`~bob_boost.engine.threads.run_blocks` runs their blocks on
Python threads; handing work to a pool thread and collecting it costs tens of microseconds, more than a
gradient tree's node of a few thousand rows takes. A team instead keeps its helper threads inside a
compiled loop (:func:`next_job`) for as long as one call (a tree's growth) lasts: the leader publishes a
job of a number of shares in a small control array, and every thread of the team, the leader too, claims
shares (:func:`claim`) and does them until none is left; the leader then waits for the shares claimed by
others, with acquire/release atomics and no system call on the way (about a microsecond on 2 cores).

A helper starts a tenth of a millisecond or more after the leader asks for it (a pool thread wakes up and
takes the GIL): by claiming, the leader does the shares of the jobs that come first itself, and never waits
for a helper that has not started, nor for one that waits for a pool thread (several calls leading teams
at once). A waiting thread spins briefly, then yields its core at each check (``sched_yield``), so a thread
that is descheduled (more threads than cores) does not starve. Every share writes its own part of the
output, so a job's result depends neither on which thread did which share nor on how many threads there were.

Control array (int64, :data:`CONTROL_SIZE`): the job's generation, kind and arguments, the shares done and
the claims (the generation in the high bits, the shares claimed in the low :data:`CLAIM_BITS`), each group on
its own cache line.
"""
from __future__ import annotations

import os
import platform
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from .threads import thread_pool
from .unliteral import ZERO

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: Control array fields: the job generation, the job kind and its arguments (up to 15), the shares done, the
#: claims.
GENERATION, KIND, ARGUMENTS, DONE, CLAIMS = 0, 8, 9, 24, 32
CONTROL_SIZE = 40
#: Low bits of the claims field that count the shares claimed (a job has fewer shares than this).
CLAIM_BITS = 16
#: The job kind that ends the helpers' loop.
STOP = -1
#: Checks a waiting thread makes before it yields its core at each further one.
SPINS = 1 << 12


@numba.njit(**_JIT)
def control_array():
    """A fresh control array (generation 0, no job)."""
    return np.zeros(CONTROL_SIZE, dtype=np.int64)


def _int64s(array_type) -> bool:
    return isinstance(array_type, types.Array) and array_type.dtype == types.int64


def _element(context, builder, array_type, array, index):
    data = context.make_array(array_type)(context, builder, array)
    return builder.gep(data.data, [index])


@intrinsic
def load_acquire(typingctx, array, index):
    """``array[index]`` (int64) read with acquire ordering: what was written before its release is visible."""
    if not _int64s(array):
        return None

    def codegen(context, builder, sig, args):
        return builder.load_atomic(_element(context, builder, sig.args[0], *args), "acquire", 8)
    return types.int64(array, index), codegen


@intrinsic
def store_release(typingctx, array, index, value):
    """Write ``value`` to ``array[index]`` (int64) with release ordering: every earlier write is published."""
    if not _int64s(array):
        return None

    def codegen(context, builder, sig, args):
        value = context.cast(builder, args[2], sig.args[2], types.int64)
        builder.store_atomic(value, _element(context, builder, sig.args[0], args[0], args[1]), "release", 8)
        return context.get_dummy_value()
    return types.void(array, index, value), codegen


@intrinsic
def fetch_add(typingctx, array, index, value):
    """Add ``value`` to ``array[index]`` (int64) atomically (acquire and release); returns the old value."""
    if not _int64s(array):
        return None

    def codegen(context, builder, sig, args):
        value = context.cast(builder, args[2], sig.args[2], types.int64)
        return builder.atomic_rmw("add", _element(context, builder, sig.args[0], args[0], args[1]), value, "acq_rel")
    return types.int64(array, index, value), codegen


@intrinsic
def compare_swap(typingctx, array, index, expected, value):
    """Write ``value`` to ``array[index]`` (int64) if it holds ``expected``, atomically (acquire and release);
    returns whether it did."""
    if not _int64s(array):
        return None

    def codegen(context, builder, sig, args):
        expected = context.cast(builder, args[2], sig.args[2], types.int64)
        value = context.cast(builder, args[3], sig.args[3], types.int64)
        result = builder.cmpxchg(_element(context, builder, sig.args[0], args[0], args[1]), expected, value,
                                 "acq_rel", "acquire")
        return builder.extract_value(result, 1)
    return types.boolean(array, index, expected, value), codegen


@intrinsic
def _yield_core(typingctx):
    """Let another thread run on this core (POSIX ``sched_yield``; elsewhere nothing: the wait spins on)."""
    def codegen(context, builder, sig, args):
        if os.name == "posix":
            function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []),
                                                      "sched_yield")
            builder.call(function, [])
        return context.get_dummy_value()
    return types.void(), codegen


@intrinsic
def _pause(typingctx):
    """A spin-wait hint to the processor (x86 ``pause``; nothing elsewhere)."""
    def codegen(context, builder, sig, args):
        if platform.machine().lower() in ("x86_64", "amd64", "i386", "i686", "x86"):
            builder.call(cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                                        "llvm.x86.sse2.pause"), [])
        return context.get_dummy_value()
    return types.void(), codegen


@numba.njit(**_JIT)
def _wait_a_little(checks):
    """A waiting thread's pause between two checks (a yield of its core after :data:`SPINS` checks); returns the
    number of checks made."""
    if checks >= SPINS:
        _yield_core()
    else:
        _pause()
    return checks + 1


@numba.njit(**_JIT)
def _wait_while(control, field, value):
    """Wait until ``control[field]`` differs from ``value``; returns what it became."""
    checks = ZERO
    while True:
        now = load_acquire(control, field)
        if now != value:
            return now
        checks = _wait_a_little(checks)


@numba.njit(**_JIT)
def start_job(control, kind):
    """Publish a job of ``kind`` (its arguments already in ``control[ARGUMENTS:]``), none of its shares claimed;
    returns its generation."""
    generation = control[GENERATION] + 1
    control[DONE] = 0
    control[KIND] = kind
    store_release(control, CLAIMS, generation << CLAIM_BITS)
    store_release(control, GENERATION, generation)
    return generation


@numba.njit(**_JIT)
def claim(control, generation, shares):
    """Claim the next unclaimed share of the job of ``generation`` (of ``shares`` shares): its number, or -1 when
    every share is claimed or that job is over. A share claimed is the caller's to do and report
    (:func:`share_done`); the job's kind and arguments stay until it is."""
    while True:
        word = load_acquire(control, CLAIMS)
        share = word & ((1 << CLAIM_BITS) - 1)
        if word >> CLAIM_BITS != generation or share >= shares:
            return -1
        if compare_swap(control, CLAIMS, word, word + 1):
            return share


@numba.njit(**_JIT)
def finish_job(control, shares):
    """The leader's wait for the job's ``shares`` shares to be done (those it did itself reported too)."""
    checks = ZERO
    while load_acquire(control, DONE) < shares:
        checks = _wait_a_little(checks)


@numba.njit(**_JIT)
def next_job(control, seen):
    """A helper's wait for a job after generation ``seen``; returns ``(generation, kind)`` as they were read (the
    kind may be a later job's: a job's kind is certain once one of its shares is claimed)."""
    generation = _wait_while(control, GENERATION, seen)
    return generation, control[KIND]


@numba.njit(**_JIT)
def share_done(control):
    """Report a claimed share done."""
    fetch_add(control, DONE, 1)


@numba.njit(**_JIT)
def stop_helpers(control):
    """End the helpers' loops (they return once they read the job)."""
    start_job(control, STOP)


def _help(serve: Callable, context: tuple, helper: int, control: np.ndarray) -> None:
    try:
        serve(context, helper)
    except BaseException:
        control[DONE] = 1 << 40  # let the leader go on: its call's results are discarded when this is raised
        raise


@contextmanager
def helpers(serve: Callable, context: tuple, shares: int, control: np.ndarray) -> Iterator[None]:
    """Run ``serve(context, helper)`` for the helpers ``1 .. shares - 1`` on helper threads while the block runs
    (the caller leads), then stop them (``control``: the team's control array).

    Several calls may lead teams at once; a helper that has not started when the block ends never runs. An
    exception of a helper is raised here.
    """
    if shares <= 1:
        yield
        return
    control[:] = 0  # generation 0: what a helper starting now waits past (no helper of it is running)
    # the helpers' own threads: a helper stays for a whole call, and must never hold up the blocks of
    # run_blocks, which another call of the same process may be waiting for
    pool = thread_pool(shares - 1, "team")
    futures = [pool.submit(_help, serve, context, helper, control) for helper in range(1, shares)]
    try:
        yield
    finally:
        stop_helpers(control)
        for future in futures:
            if not future.cancel():  # started: it returns once it reads the stop
                future.result()
