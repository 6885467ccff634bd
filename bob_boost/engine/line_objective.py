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

The passes run down one output's column at a time on column-major (Fortran)
copies of the inputs, so that each inner loop reads and writes contiguous
memory and compiles to SIMD instructions; an entry's arithmetic does not
depend on the order in which entries are visited, so neither do the bits.
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

#: Entries per chunk of a thread's rows: its three intermediates (256 kB each) stay in a core's L2 cache
#: (1 MB on Zen 4: one call on MNIST's 60000 x 10 at 2 threads, median of 200, 2.78 ms with 16,384 entries,
#: 2.54 with 32,768, 2.53 with 65,536; on a 512 kB L2, 4,096 to 32,768 were within 0.3 ms of each other).
CHUNK_ENTRIES = 1 << 15


@numba.njit(**_JIT)
def _exponential_arguments(alpha, targets, previous, current, limit, start, stop, exponent):
    """``min(-t * (p + alpha * h), limit)``: the exponential loss's exponent, rows ``start:stop`` into
    ``exponent[0:stop - start]`` (every array column-major)."""
    rows = stop - start
    for j in range(targets.shape[1]):
        a = alpha[j]
        t, p, h = targets[start:stop, j], previous[start:stop, j], current[start:stop, j]
        out = exponent[:rows, j]
        for i in range(rows):
            out[i] = min(-t[i] * (p[i] + a * h[i]), limit)


@numba.njit(**_JIT)
def _exponential_terms(targets, current, weights, loss, start, stop, values_by_row, values, products):
    """From ``loss = exp(exponent)`` (row ``i`` at ``i - start``): the (weighted) loss terms and gradient
    terms times ``h`` of rows ``start:stop``, the loss terms walking ``values``' memory in order."""
    rows = stop - start
    weighted = weights.size > 0
    w = weights[start:stop]
    for j in range(targets.shape[1]):
        t, h, value = targets[start:stop, j], current[start:stop, j], loss[:rows, j]
        out = products[start:stop, j]
        for i in range(rows):
            gradient = -t[i] * value[i]
            if weighted:
                gradient = w[i] * gradient
            out[i] = gradient * h[i]
        if not values_by_row:
            target = values[start:stop, j]
            for i in range(rows):
                target[i] = w[i] * value[i] if weighted else value[i]
    if values_by_row:
        for i in range(rows):
            for j in range(targets.shape[1]):
                values[start + i, j] = w[i] * loss[i, j] if weighted else loss[i, j]


@numba.njit(**_JIT)
def _logit_arguments(alpha, targets, previous, current, start, stop, margin, exponent):
    """The margin ``t * (p + alpha * h)`` and ``-|margin|``, rows ``start:stop`` into rows ``0:stop - start``
    (every array column-major)."""
    rows = stop - start
    for j in range(targets.shape[1]):
        a = alpha[j]
        t, p, h = targets[start:stop, j], previous[start:stop, j], current[start:stop, j]
        m, e = margin[:rows, j], exponent[:rows, j]
        for i in range(rows):
            value = t[i] * (p[i] + a * h[i])
            m[i] = value
            e[i] = -abs(value)


@numba.njit(inline="always", **_JIT)
def _logit_value(margin, log_term, weights, i, weighted):
    """``max(-margin, 0) + log1p(exp(-|margin|))``, times ``weights[i]`` when ``weighted``."""
    negative = -margin
    value = (negative if negative > 0.0 else 0.0) + log_term
    return weights[i] * value if weighted else value


@numba.njit(**_JIT)
def _logit_terms(targets, current, weights, margin, small, log_term, start, stop, values_by_row, values, products):
    """From ``small = exp(-|margin|)`` and ``log_term = log1p(small)`` (row ``i`` at ``i - start``): the
    (weighted) loss terms and gradient terms times ``h`` of rows ``start:stop``, the loss terms walking
    ``values``' memory in order."""
    rows = stop - start
    weighted = weights.size > 0
    w = weights[start:stop]
    for j in range(targets.shape[1]):
        t, h, m, e = targets[start:stop, j], current[start:stop, j], margin[:rows, j], small[:rows, j]
        out = products[start:stop, j]
        for i in range(rows):
            gradient = -t[i] * ((e[i] if m[i] >= 0 else 1.0) / (1.0 + e[i]))
            if weighted:
                gradient = w[i] * gradient
            out[i] = gradient * h[i]
        if not values_by_row:
            log, target = log_term[:rows, j], values[start:stop, j]
            for i in range(rows):
                target[i] = _logit_value(m[i], log[i], w, i, weighted)
    if values_by_row:
        for i in range(rows):
            for j in range(targets.shape[1]):
                values[start + i, j] = _logit_value(margin[i, j], log_term[i, j], w, i, weighted)


@numba.njit(**_JIT)
def _signs(values, by_row):
    """``values`` as column-major int8 when every entry is -1.0 or +1.0, else an empty array; read row by row
    (``by_row``, for a row-major ``values``) or column by column, in memory order."""
    rows, columns = values.shape
    if rows == 0 or columns == 0 or not (values[0, 0] == 1.0 or values[0, 0] == -1.0):
        return np.empty((0, 0), dtype=np.int8).T
    signs = np.empty((columns, rows), dtype=np.int8).T
    exact = True
    # branch-free, so that the loops vectorise: a value other than -1 or +1 only clears ``exact``
    if by_row:
        for i in range(rows):
            for j in range(columns):
                value = values[i, j]
                exact &= (value == 1.0) | (value == -1.0)
                signs[i, j] = np.int8(value)
    else:
        for j in range(columns):
            column, out = values[:, j], signs[:, j]
            for i in range(rows):
                value = column[i]
                exact &= (value == 1.0) | (value == -1.0)
                out[i] = np.int8(value)
    return signs if exact else np.empty((0, 0), dtype=np.int8).T


def _column_major(values: np.ndarray) -> np.ndarray:
    """A column-major copy of ``values`` (the array itself when it is one already), as int8 when every entry
    is -1 or +1 (one-vs-rest targets, look-up tables' and stumps' outputs): an eighth of the memory to read
    on every call, and the same arithmetic, as int8 -1 and +1 convert to float64 exactly. Any other value
    keeps float64: the int8 path is kept to the two values it is for."""
    signs = _signs(values, bool(values.flags.c_contiguous and not values.flags.f_contiguous))
    return signs if signs.size else np.asfortranarray(values)


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
        (#samples, #outputs) float64 targets, scores so far and the new weak machine's outputs (read
        through column-major copies where they are row-major, and targets and outputs that are all -1 or
        +1 as int8; the caller's arrays are not changed).
    sample_weight : numpy.ndarray or None
        (#samples,) float64 factors of the loss terms.
    limit : float
        The exponential loss's cap on its exponent
        (:data:`~bob_boost.losses.exponential.EXPONENT_LIMIT`).
    orders : tuple of str
        The memory order ("C" or "F") of the generic path's loss terms and of its gradient terms times
        ``h``: numpy's sums add in memory order, so the terms are summed here in the same order.
    n_threads : int
        Threads for the elementwise work, on contiguous row blocks (each entry is computed alone, so
        the blocks change nothing); the two sums add in numpy's order, over the whole arrays.
    """

    def __init__(self, loss: int, targets: np.ndarray, previous_scores: np.ndarray, current_scores: np.ndarray,
                 sample_weight: np.ndarray | None, limit: float, orders: tuple[str, str] = ("C", "C"),
                 n_threads: int = 1) -> None:
        self.loss = loss
        self.targets, self.current = _column_major(targets), _column_major(current_scores)
        self.previous = np.asfortranarray(previous_scores)
        self.weights = np.empty(0) if sample_weight is None else sample_weight
        self.limit = float(limit)
        shape = targets.shape
        # the loss terms in the generic path's layout (numpy sums them in memory order); the gradient
        # terms column by column, summed by row below where the generic path's are row-major
        self._values = np.empty(shape, order=orders[0])
        self._values_by_row = orders[0] == "C" and shape[1] > 1
        self._products = np.empty(shape, order="F")
        self._gradient_by_row = orders[1] == "C" and shape[1] > 1
        self.n_threads = n_threads
        rows = shape[0]
        self._rows = [(rows * b // n_threads, rows * (b + 1) // n_threads) for b in range(n_threads)]
        self._chunk = max(1, CHUNK_ENTRIES // max(1, shape[1]))
        # each thread's block of rows has its own intermediates, one chunk long
        chunk_shape = (min(self._chunk, max(1, -(-rows // n_threads))), shape[1])
        self._scratch = [[np.empty(chunk_shape, order="F") for _ in range(1 if loss == EXPONENTIAL else 3)]
                         for _ in range(n_threads)]

    def __call__(self, alpha: np.ndarray) -> tuple[float, np.ndarray]:
        """The summed loss at ``alpha`` and its (#outputs,) gradient."""
        alpha = np.ascontiguousarray(alpha, dtype=np.float64)
        run_blocks(self._terms, [(alpha, start, stop, scratch) for (start, stop), scratch in
                                 zip(self._rows, self._scratch)], self.n_threads, work=float(self.targets.size))
        if self._gradient_by_row:
            # numpy adds along a slow axis one row after the other (its documented naive summation);
            # so does this loop, without numpy's per-row call
            gradient = np.empty(self._products.shape[1])
            _column_sums(self._products, gradient)
        else:
            gradient = np.sum(self._products, axis=0)
        return float(np.sum(self._values)), gradient

    def _terms(self, alpha: np.ndarray, start: int, stop: int, scratch: list[np.ndarray]) -> None:
        """The loss terms and gradient terms of rows ``start:stop``, chunk by chunk (numpy's ufuncs release the GIL)."""
        for first in range(start, stop, self._chunk):
            last = min(first + self._chunk, stop)
            # the kernels get whole scratch arrays (a shorter last chunk would be a non-contiguous view, of
            # another, slower compiled version); numpy's ufuncs get the chunk's rows
            rows = slice(0, last - first)
            if self.loss == EXPONENTIAL:
                (loss,) = scratch
                _exponential_arguments(alpha, self.targets, self.previous, self.current, self.limit, first, last,
                                       loss)
                np.exp(loss[rows], out=loss[rows])
                _exponential_terms(self.targets, self.current, self.weights, loss, first, last,
                                   self._values_by_row, self._values, self._products)
            else:
                margin, small, log_term = scratch
                _logit_arguments(alpha, self.targets, self.previous, self.current, first, last, margin, small)
                np.exp(small[rows], out=small[rows])
                np.log1p(small[rows], out=log_term[rows])
                _logit_terms(self.targets, self.current, self.weights, margin, small, log_term, first, last,
                             self._values_by_row, self._values, self._products)
