"""A round's per-sample arithmetic on blocks of rows, in threads, for losses that allow it.

A loss whose gradient and hessian at a sample depend on that sample's targets
and scores only (:attr:`~bob_boost.losses.base.LossFunction.row_separable`)
gives the same bits on any slice of rows as on the whole matrix. Its
derivatives, and the score update of each round, are then computed on fixed
blocks of rows in the engine's threads; numpy's elementwise functions and the
compiled kernels release the GIL. The result does not depend on the thread
count: every row is computed by the same operations, only somewhere else.
"""
from __future__ import annotations

import numpy as np

from ..engine.threads import MIN_PARALLEL_WORK, run_blocks
from ..losses.base import LossFunction, joined_derivatives, weighted

#: Rows per block (any fixed size gives the same bits; 1024 and 4096 timed alike on letter's and
#: MNIST's shapes with ``bench/bench_loss_rows.py``).
BLOCK_ROWS = 4096

#: Elementary steps counted for one loss term (an exponential or a logarithm) when deciding whether a
#: block of rows of a loss total is worth a thread (:data:`~bob_boost.engine.threads.MIN_PARALLEL_WORK`; a
#: loss's derivatives count its :attr:`~bob_boost.losses.base.LossFunction.derivative_steps`).
TRANSCENDENTAL_STEPS = 16

#: Entries of a block of :func:`loss_total` and :func:`updated_scores` at least: a block's Python call costs
#: about as much as 10,000 loss terms, so small blocks would cost more than their work (a score update of
#: 300,000 x 1 took 0.60 ms on two threads in blocks of 4,096 rows, 0.15 ms in blocks of 65,536).
TOTAL_BLOCK_ENTRIES = 1 << 16


def _blocks(rows: int, size: int = BLOCK_ROWS) -> list[tuple[int, int]]:
    return [(start, min(start + size, rows)) for start in range(0, rows, size)]


def _threaded(scores: np.ndarray, n_threads: int, steps: int = 1) -> bool:
    """Whether ``scores`` are worth row blocks on threads, at ``steps`` elementary steps an entry."""
    return n_threads > 1 and scores.ndim == 2 and scores.size * steps >= MIN_PARALLEL_WORK


def _in_blocks(loss: LossFunction, targets: np.ndarray, scores: np.ndarray, n_threads: int) -> bool:
    """Whether ``loss``'s derivatives at ``scores`` are worth row blocks on threads."""
    return loss.row_separable and targets.flags.c_contiguous and _threaded(scores, n_threads, loss.derivative_steps)


def loss_derivatives(loss: LossFunction, targets: np.ndarray, scores: np.ndarray, with_hessian: bool,
                     n_threads: int, out: tuple | None = None,
                     joint: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """The loss gradient at ``scores`` and, ``with_hessian``, its hessian (else None).

    Unweighted, as :meth:`~bob_boost.losses.base.LossFunction.gradient_and_hessian`
    returns them; on row blocks in up to ``n_threads`` threads when the loss is
    row-separable and the matrix large enough to gain from it. The blocks fill
    C-ordered arrays, as the built-in losses return for C-ordered targets
    (whatever the scores' order): sums over them (a weak trainer's totals) then
    round alike on both paths, so Fortran-ordered targets are computed whole. ``out``, a (gradient, hessian)
    pair of arrays no longer needed, is filled instead of new arrays where the blocks are (:func:`_buffers`).
    ``joint`` (with the hessian) returns the two halves of one C-ordered (#samples, 2K) array
    (:meth:`~bob_boost.losses.base.LossFunction.derivatives_into`), the same bits.
    """
    if joint and with_hessian:
        return _joint_derivatives(loss, targets, scores, n_threads, out)
    if not _in_blocks(loss, targets, scores, n_threads):
        if with_hessian:
            return loss.gradient_and_hessian(targets, scores)
        return loss.loss_gradient(targets, scores), None
    gradient, hessian = _buffers(scores.shape, out)
    hessian = hessian if with_hessian else None

    def block(start: int, stop: int) -> None:
        if with_hessian:
            gradient[start:stop], hessian[start:stop] = loss.gradient_and_hessian(targets[start:stop],
                                                                                  scores[start:stop])
        else:
            gradient[start:stop] = loss.loss_gradient(targets[start:stop], scores[start:stop])

    run_blocks(block, _blocks(scores.shape[0]), n_threads)
    return gradient, hessian


def _joint_derivatives(loss: LossFunction, targets: np.ndarray, scores: np.ndarray, n_threads: int,
                       out: tuple | None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`loss_derivatives`' joint halves."""
    gradient, hessian = _buffers(scores.shape, out, joint=True)
    joint = gradient.base
    if _in_blocks(loss, targets, scores, n_threads):
        run_blocks(lambda start, stop: loss.derivatives_into(targets[start:stop], scores[start:stop],
                                                             joint[start:stop]),
                   _blocks(scores.shape[0]), n_threads)
    else:
        loss.derivatives_into(targets, scores, joint)
    return gradient, hessian


def derivatives_and_total(loss: LossFunction, targets: np.ndarray, scores: np.ndarray, with_hessian: bool,
                          sample_weight: np.ndarray | None, n_threads: int, out: tuple | None = None,
                          joint: bool = False) -> tuple[np.ndarray, np.ndarray | None, float]:
    """:func:`loss_derivatives` and :func:`loss_total` at ``scores``, the same bits as the two calls (``out``
    and ``joint`` as for :func:`loss_derivatives`).

    A loss whose :meth:`~bob_boost.losses.base.LossFunction.loss_and_derivatives` shares its work (the
    softmax's one exponential per entry) computes the three in one pass.
    """
    if not (with_hessian and loss.row_separable and _fused(loss)):
        gradient, hessian = loss_derivatives(loss, targets, scores, with_hessian, n_threads, out, joint)
        return gradient, hessian, loss_total(loss, targets, scores, sample_weight, n_threads)
    if not _in_blocks(loss, targets, scores, n_threads):
        values, gradient, hessian = loss.loss_and_derivatives(targets, scores)
        if joint:
            halves = _buffers(scores.shape, out, joint)
            halves[0][...], halves[1][...] = gradient, hessian
            gradient, hessian = halves
    else:
        blocks = _blocks(scores.shape[0])
        parts: list = [None] * len(blocks)  # a loss's values may have one column or one per output
        gradient, hessian = _buffers(scores.shape, out, joint)

        def block(index: int, start: int, stop: int) -> None:
            parts[index], gradient[start:stop], hessian[start:stop] = loss.loss_and_derivatives(
                targets[start:stop], scores[start:stop])

        run_blocks(block, [(index, start, stop) for index, (start, stop) in enumerate(blocks)], n_threads)
        values = np.concatenate(parts)
    sums = [np.sum(weighted(values[start:stop], None if sample_weight is None else sample_weight[start:stop]))
            for start, stop in _entry_blocks(scores)]
    return gradient, hessian, float(np.add.reduce(np.array(sums)))


def _buffers(shape: tuple, out: tuple | None, joint: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Two C-ordered float arrays of ``shape`` to fill (``joint``: the halves of one C-ordered array of twice its
    columns): ``out``'s when they are such arrays, else new ones.

    A round's derivatives of a million entries are 8 MB each; new memory of that size comes from the system
    a page at a time, which took longer than filling it (softmax, 28,000 x 18: 2.6 ms a round in new
    arrays, 1.0 ms in the last round's).
    """
    if joint:
        both = None if out is None else joined_derivatives(*out)
        if both is None or both.shape != (shape[0], 2 * shape[1]) or not both.flags.writeable:
            both = np.empty((shape[0], 2 * shape[1]))
        return both[:, :shape[1]], both[:, shape[1]:]
    if out is not None and all(isinstance(a, np.ndarray) and a.shape == shape and a.dtype == np.float64
                               and a.flags.c_contiguous and a.flags.writeable for a in out):
        return out[0], out[1]
    return np.empty(shape), np.empty(shape)


def _fused(loss: LossFunction) -> bool:
    """Whether ``loss``'s ``loss_and_derivatives`` is its own: defined by the class that defines its loss and
    derivatives (a subclass changing one of those inherits a fused method that no longer matches it)."""
    mro = type(loss).__mro__
    owner = next(cls for cls in mro if "loss_and_derivatives" in vars(cls))
    if owner is LossFunction:
        return False
    parts = ("loss", "loss_gradient", "loss_hessian", "gradient_and_hessian")
    return all(next(cls for cls in mro if name in vars(cls)) in owner.__mro__ for name in parts)


def updated_scores(scores: np.ndarray, weight: np.ndarray, weak_scores: np.ndarray,
                   n_threads: int) -> np.ndarray:
    """A new array ``weight * weak_scores + scores``, product then sum (a callback may keep ``scores``).

    Laid out in memory as ``weak_scores`` (often Fortran-ordered), as numpy
    lays out the product: sums along its rows, as the losses take them, then
    round the same whichever path computed it.
    """
    same_shape = weak_scores.shape == scores.shape == np.broadcast_shapes(np.shape(weight), weak_scores.shape)
    same_type = np.result_type(weight, weak_scores) == scores.dtype == weak_scores.dtype
    if not (same_shape and same_type and _threaded(scores, n_threads)):
        update = weight * weak_scores
        if update.shape == scores.shape and update.dtype == scores.dtype:
            return np.add(update, scores, out=update)
        return scores + update
    result = np.empty_like(weak_scores)

    def block(start: int, stop: int) -> None:
        part = result[start:stop]
        np.multiply(weight, weak_scores[start:stop], out=part)
        np.add(part, scores[start:stop], out=part)

    # an addition per entry: blocks of many entries, or waking threads per block costs more than the work
    run_blocks(block, _entry_blocks(scores), n_threads)
    return result


def loss_total(loss: LossFunction, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None,
               n_threads: int) -> float:
    """The training loss ``sum_n w_n sum_k loss(t_n, s_n)_k``, the same float for any ``n_threads``.

    A row-separable loss is summed per block of at least :data:`BLOCK_ROWS` rows and
    :data:`TOTAL_BLOCK_ENTRIES` entries (in threads where that pays), and the block sums are added in block
    order whatever the thread count; any other loss is summed whole.
    """
    if not loss.row_separable:
        return float(np.sum(weighted(loss.loss(targets, scores), sample_weight)))
    blocks = _entry_blocks(scores)
    sums = np.empty(len(blocks))

    def block(index: int, start: int, stop: int) -> None:
        part = None if sample_weight is None else sample_weight[start:stop]
        sums[index] = np.sum(weighted(loss.loss(targets[start:stop], scores[start:stop]), part))

    # a loss term costs an exponential or a logarithm: worth threads on a few thousand rows already
    run_blocks(block, [(index, start, stop) for index, (start, stop) in enumerate(blocks)], n_threads,
               work=float(scores.size) * TRANSCENDENTAL_STEPS)
    return float(np.add.reduce(sums))


def _entry_blocks(scores: np.ndarray) -> list[tuple[int, int]]:
    """Row blocks of at least :data:`BLOCK_ROWS` rows and :data:`TOTAL_BLOCK_ENTRIES` entries, which
    :func:`loss_total` sums separately (their bounds depend on the shape only)."""
    return _blocks(scores.shape[0], max(BLOCK_ROWS, -(-TOTAL_BLOCK_ENTRIES // max(1, scores.shape[1]))))


def step_moments(gradient: np.ndarray, outputs: np.ndarray,
                 sample_weight: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(#outputs,) ``sum_n w_n g_nk o_nk`` and ``sum_n w_n o_nk^2`` of the loss ``gradient`` and a weak machine's
    training ``outputs``, in one pass each and the same order on any CPU: a step ``a`` along the outputs changes
    the loss by ``a . first`` to first order, and its weighted squared length is ``a^2 . second``."""
    if sample_weight is None:
        return (np.einsum("nk,nk->k", gradient, outputs, optimize=False),
                np.einsum("nk,nk->k", outputs, outputs, optimize=False))
    return (np.einsum("n,nk,nk->k", sample_weight, gradient, outputs, optimize=False),
            np.einsum("n,nk,nk->k", sample_weight, outputs, outputs, optimize=False))
