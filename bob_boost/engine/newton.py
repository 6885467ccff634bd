"""A compiled one-dimensional Newton solve for the weight of a weak machine under a separable loss.

For a loss that is a sum of per-sample, per-output terms ``l(t, s)``, the
weight of output ``k`` minimises ``sum_n w_n l(t_nk, s_nk + alpha_k h_nk)``
on its own. Each Newton iteration needs the first two derivatives of that sum,
computed here in fixed blocks of rows (in threads; the block sums are added in
block order, so the result does not depend on the thread count). The
iteration keeps a bracket of the minimiser and bisects when a Newton step
would leave it, so it converges for every convex loss.
"""
from __future__ import annotations

import math
from collections.abc import Callable

import numba
import numpy as np

from .threads import run_blocks

#: The losses with a compiled form, by code.
EXPONENTIAL, LOGIT, SQUARED = 0, 1, 2

#: Rows per block of the derivative sums (fixed, so the sums do not depend on the thread count).
BLOCK_ROWS = 1 << 14

#: Iterations stop after a step smaller than this, relative to max(1, |weight|): Newton converges
#: quadratically, so the weight is then exact up to rounding (a tighter test would only chase the
#: rounding noise of the derivative).
STEP_TOLERANCE = 1e-12

MAX_ITERATIONS = 100


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _derivatives(loss, limit, target, score):
    """First and second derivative of the loss term ``l(target, score)`` in ``score``."""
    if loss == EXPONENTIAL:
        value = math.exp(min(-target * score, limit))
        return -target * value, target * target * value
    if loss == LOGIT:
        margin = -target * score
        if margin >= 0.0:
            p = 1.0 / (1.0 + math.exp(-margin))
        else:
            e = math.exp(margin)
            p = e / (1.0 + e)
        return -target * p, target * target * p * (1.0 - p)
    return score - target, 1.0


@numba.njit(nogil=True, cache=True, error_model="numpy")
def _block_sums(loss, limit, targets, scores, weak, weights, alpha, block, out):
    """``out[block, k] = (sum w h l', sum w h^2 l'')`` over the block's rows at ``scores + alpha h``."""
    start = block * BLOCK_ROWS
    stop = min(start + BLOCK_ROWS, targets.shape[0])
    weighted = weights.size > 0
    for k in range(targets.shape[1]):
        first = 0.0
        second = 0.0
        for i in range(start, stop):
            h = weak[i, k]
            if h == 0.0:
                continue
            d1, d2 = _derivatives(loss, limit, targets[i, k], scores[i, k] + alpha[k] * h)
            w = weights[i] if weighted else 1.0
            first += w * h * d1
            second += w * h * h * d2
        out[block, k, 0] = first
        out[block, k, 1] = second


def newton_weights(loss: int, targets: np.ndarray, scores: np.ndarray, weak: np.ndarray,
                   sample_weight: np.ndarray | None, n_threads: int, limit: float = np.inf) -> tuple[np.ndarray, bool]:
    """(#outputs,) minimisers ``alpha`` of ``sum_n w_n l(t_n, s_n + alpha h_n)``, one per output, and whether
    the solve converged (:func:`newton_solve_status`).

    Parameters
    ----------
    loss : int
        :data:`EXPONENTIAL`, :data:`LOGIT` or :data:`SQUARED`.
    targets, scores, weak : numpy.ndarray
        (#samples, #outputs) float64 targets, current scores and weak-machine outputs.
    sample_weight : numpy.ndarray or None
        (#samples,) factors of each sample's loss.
    n_threads : int
        Threads for the derivative sums.
    limit : float
        The exponential loss's cap on its exponent (its ``EXPONENT_LIMIT``).
    """
    weights = np.empty(0) if sample_weight is None else np.ascontiguousarray(sample_weight, dtype=np.float64)
    n_blocks = -(-targets.shape[0] // BLOCK_ROWS)
    partial = np.empty((n_blocks, targets.shape[1], 2))

    def derivatives(alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        blocks = [(loss, limit, targets, scores, weak, weights, alpha, b, partial) for b in range(n_blocks)]
        run_blocks(_block_sums, blocks, n_threads)
        return partial[:, :, 0].sum(axis=0), partial[:, :, 1].sum(axis=0)
    return newton_solve_status(derivatives, targets.shape[1])


def newton_solve(derivatives: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], outputs: int) -> np.ndarray:
    """(#outputs,) zeros of the first derivatives of separate convex one-dimensional functions.

    ``derivatives(alpha)`` returns the first and second derivatives at ``alpha``, one of each per output
    (sums over the blocks of rows here, over a cluster's chunks in :mod:`bob_boost.dask`). Newton steps,
    kept inside a bracket of the zero once one is known, and doubled while none is (see below).
    """
    return newton_solve_status(derivatives, outputs)[0]


def newton_solve_status(derivatives: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                        outputs: int) -> tuple[np.ndarray, bool]:
    """:func:`newton_solve`'s zeros, and whether every output converged within :data:`MAX_ITERATIONS`.

    A converged weight is the minimiser of its convex function up to rounding, so it cannot raise the
    function above its value at 0: the training loop's descent guarantee needs no further evaluation.
    """
    alpha = np.zeros(outputs)
    low, high = np.full(outputs, -np.inf), np.full(outputs, np.inf)
    slope_low, slope_high = np.zeros(outputs), np.zeros(outputs)
    previous = np.zeros(outputs)
    active = np.ones(outputs, dtype=bool)
    for _ in range(MAX_ITERATIONS):
        first, second = derivatives(alpha)
        below, above = first < 0, first > 0
        low, slope_low = np.where(below, alpha, low), np.where(below, first, slope_low)
        high, slope_high = np.where(above, alpha, high), np.where(above, first, slope_high)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = -first / second
            # not yet bracketed and Newton undershooting (steps not shrinking, as on a flattening
            # logistic loss): double the last step instead, to bracket the minimiser quickly
            slow = (~np.isfinite(low) | ~np.isfinite(high)) & (step * previous > 0) & (
                np.abs(step) > 0.5 * np.abs(previous))
            step = np.where(slow, np.maximum(np.abs(step), 2 * np.abs(previous)) * np.sign(step), step)
            proposal = alpha + step
            # inside a bracket a step that leaves it is replaced by the secant of the two ends (which lies
            # in the bracket up to rounding; the middle if it cannot be computed)
            outside = ~((proposal >= low) & (proposal <= high))
            bracketed = np.isfinite(low) & np.isfinite(high)
            secant = low - slope_low * (high - low) / (slope_high - slope_low)
            secant = np.where(np.isfinite(secant), np.clip(secant, low, high), low / 2 + high / 2)
            proposal = np.where(outside & bracketed, secant, proposal)
            # one side unknown and no usable Newton step (zero curvature): move a unit towards descent
            unusable = ~np.isfinite(proposal) & ~bracketed
            proposal = np.where(unusable, alpha - np.sign(first) * np.maximum(1.0, 2 * np.abs(alpha)), proposal)
        # a converged output keeps its weight: its next "step" would only follow rounding noise
        proposal = np.where((first == 0) | ~active, alpha, proposal)
        change = proposal - alpha
        active &= np.abs(change) > STEP_TOLERANCE * np.maximum(1.0, np.abs(alpha))
        previous, alpha = change, proposal
        if not np.any(active):
            return alpha, True
    return alpha, False
