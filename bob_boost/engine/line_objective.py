"""The L-BFGS step objective of the exponential and logit losses, with the generic path's bits, faster.

L-BFGS minimises ``sum_n w_n l(t_n, p_n + alpha * h_n)`` over the weights
``alpha`` of a new weak machine, and asks for that sum and its gradient a dozen
times a round. The generic path (``LossFunction.loss_and_gradient_sum``) makes
about ten full-size temporaries per call. :class:`LineObjective` keeps its
buffers from call to call and does the arithmetic elementwise in compiled
passes over chunks of rows small enough to stay in cache (the exponential and
logarithm between them are the largest cost, and the chunks spare their
intermediates a trip through memory), with the same IEEE operations in the same order as the numpy
expressions of :mod:`bob_boost.losses`; the exponential and ``log1p`` stay
numpy's own (their SIMD versions round differently from the C library's), and
the sums add in numpy's order (pairwise along a contiguous axis, numpy's own
call; row after row along the other). So every value and gradient is
bit-identical to the generic path's (tested), and so are L-BFGS's iterates and
the models bob.learn.boosting's tests and the golden files hold.
"""
from __future__ import annotations

import numba
import numpy as np

from .newton import EXPONENTIAL, LOGIT
from .threads import run_blocks

__all__ = ["LineObjective", "SUPPORTED"]

_JIT = {"nogil": True, "cache": True, "error_model": "numpy"}

#: The loss codes (of :mod:`.newton`) with a compiled objective.
SUPPORTED = (EXPONENTIAL, LOGIT)

#: Entries per chunk of a thread's rows: its three intermediates (128 kB each) stay in a core's L2 cache.
CHUNK_ENTRIES = 1 << 14


@numba.njit(**_JIT)
def _exponential_arguments(alpha, targets, previous, current, limit, start, stop, exponent):
    """``min(-t * (p + alpha * h), limit)``: the exponential loss's exponent, rows ``start:stop`` into
    ``exponent[0:stop - start]``."""
    k = targets.shape[1]
    for i in range(start, stop):
        for j in range(k):
            exponent[i - start, j] = min(-targets[i, j] * (previous[i, j] + alpha[j] * current[i, j]), limit)


@numba.njit(**_JIT)
def _exponential_terms(targets, current, weights, loss, start, stop, values, products):
    """From ``loss = exp(exponent)`` (row ``i`` at ``i - start``): the (weighted) loss terms and gradient terms
    times ``h``, rows ``start:stop``."""
    k = targets.shape[1]
    weighted = weights.size > 0
    for i in range(start, stop):
        for j in range(k):
            value = loss[i - start, j]
            gradient = -targets[i, j] * value
            if weighted:
                value = weights[i] * value
                gradient = weights[i] * gradient
            values[i, j] = value
            products[i, j] = gradient * current[i, j]


@numba.njit(**_JIT)
def _logit_arguments(alpha, targets, previous, current, start, stop, margin, exponent):
    """The margin ``t * (p + alpha * h)`` and ``-|margin|``, rows ``start:stop`` into rows ``0:stop - start``."""
    k = targets.shape[1]
    for i in range(start, stop):
        for j in range(k):
            value = targets[i, j] * (previous[i, j] + alpha[j] * current[i, j])
            margin[i - start, j] = value
            exponent[i - start, j] = -abs(value)


@numba.njit(**_JIT)
def _logit_terms(targets, current, weights, margin, small, log_term, start, stop, values, products):
    """From ``small = exp(-|margin|)`` and ``log_term = log1p(small)`` (row ``i`` at ``i - start``): loss and
    gradient terms times ``h``, rows ``start:stop``."""
    k = targets.shape[1]
    weighted = weights.size > 0
    for i in range(start, stop):
        for j in range(k):
            m = margin[i - start, j]
            e = small[i - start, j]
            negative = -m
            value = (negative if negative > 0.0 else 0.0) + log_term[i - start, j]
            gradient = -targets[i, j] * ((e if m >= 0 else 1.0) / (1.0 + e))
            if weighted:
                value = weights[i] * value
                gradient = weights[i] * gradient
            values[i, j] = value
            products[i, j] = gradient * current[i, j]


@numba.njit(**_JIT)
def _column_sums(terms, out):
    """``out[j] = 0 + terms[0, j] + terms[1, j] + ...``, added in row order (from +0, as numpy's sum: an
    all -0 column sums to +0)."""
    out[:] = 0.0
    for i in range(terms.shape[0]):
        for j in range(terms.shape[1]):
            out[j] += terms[i, j]


class LineObjective:
    """``alpha -> (summed loss, its gradient)`` of one round's weight search, with reused buffers.

    Parameters
    ----------
    loss : int
        :data:`~bob_boost.engine.newton.EXPONENTIAL` or :data:`~bob_boost.engine.newton.LOGIT`.
    targets, previous_scores, current_scores : numpy.ndarray
        (#samples, #outputs) float64 targets, scores so far and the new weak machine's outputs.
    sample_weight : numpy.ndarray or None
        (#samples,) float64 factors of the loss terms.
    limit : float
        The exponential loss's cap on its exponent
        (:data:`~bob_boost.losses.exponential.EXPONENT_LIMIT`).
    orders : tuple of str
        The memory order ("C" or "F") of the generic path's loss terms and of its gradient terms times
        ``h``: numpy's sums add in memory order, so the terms summed here are laid out the same way.
    n_threads : int
        Threads for the elementwise work, on contiguous row blocks (each entry is computed alone, so
        the blocks change nothing); the two sums are numpy's, over the whole arrays.
    """

    def __init__(self, loss: int, targets: np.ndarray, previous_scores: np.ndarray, current_scores: np.ndarray,
                 sample_weight: np.ndarray | None, limit: float, orders: tuple[str, str] = ("C", "C"),
                 n_threads: int = 1) -> None:
        self.loss = loss
        self.targets, self.previous, self.current = targets, previous_scores, current_scores
        self.weights = np.empty(0) if sample_weight is None else sample_weight
        self.limit = float(limit)
        shape = targets.shape
        self._outputs = (np.empty(shape, order=orders[0]), np.empty(shape, order=orders[1]))
        self.n_threads = n_threads
        rows = shape[0]
        self._rows = [(rows * b // n_threads, rows * (b + 1) // n_threads) for b in range(n_threads)]
        self._chunk = max(1, CHUNK_ENTRIES // max(1, shape[1]))
        # each thread's block of rows has its own intermediates, one chunk long
        chunk_shape = (min(self._chunk, max(1, -(-rows // n_threads))), shape[1])
        self._scratch = [[np.empty(chunk_shape) for _ in range(1 if loss == EXPONENTIAL else 3)]
                         for _ in range(n_threads)]

    def __call__(self, alpha: np.ndarray) -> tuple[float, np.ndarray]:
        """The summed loss at ``alpha`` and its (#outputs,) gradient."""
        alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        run_blocks(self._terms, [(alpha, start, stop, scratch) for (start, stop), scratch in
                                 zip(self._rows, self._scratch)], self.n_threads, work=float(self.targets.size))
        values, products = self._outputs
        if products.flags.c_contiguous and not products.flags.f_contiguous:
            # numpy adds along a slow axis one row after the other (its documented naive summation);
            # so does this loop, without numpy's per-row call
            gradient = np.empty(products.shape[1])
            _column_sums(products, gradient)
        else:
            gradient = np.sum(products, axis=0)
        return float(np.sum(values)), gradient

    def _terms(self, alpha: np.ndarray, start: int, stop: int, scratch: list[np.ndarray]) -> None:
        """The loss terms and gradient terms of rows ``start:stop``, chunk by chunk (numpy's ufuncs release the GIL)."""
        values, products = self._outputs
        for first in range(start, stop, self._chunk):
            last = min(first + self._chunk, stop)
            if self.loss == EXPONENTIAL:
                exponent = scratch[0]
                _exponential_arguments(alpha, self.targets, self.previous, self.current, self.limit, first, last,
                                       exponent)
                loss = exponent[:last - first]
                np.exp(loss, out=loss)
                _exponential_terms(self.targets, self.current, self.weights, exponent, first, last, values, products)
            else:
                margin, small, log_term = scratch
                _logit_arguments(alpha, self.targets, self.previous, self.current, first, last, margin, small)
                exponentials = small[:last - first]
                np.exp(exponentials, out=exponentials)
                np.log1p(exponentials, out=log_term[:last - first])
                _logit_terms(self.targets, self.current, self.weights, margin, small, log_term, first, last, values,
                             products)
