"""Cost-sensitive binary boosting of decision stumps.

Two trainers minimise, one stump per round, the same class-dependent
exponential bound ``sum_i D_1(i) exp(-C_{y_i} y_i F(x_i))`` (the
:class:`~bob_boost.losses.double_base.DoubleBaseLoss` weighted by the initial
distribution ``D_1``), ``F = sum_m alpha_m h_m``:

* :class:`CostSensitiveAdaBoostTrainer` (Masnadi-Shirazi & Vasconcelos, as
  Algorithm 1 of the AdaBoostDB paper states it) solves the hyperbolic
  step equation for every stump of the pool (all at once in numpy, or, with
  ``root_search="scalar"``, one scalar search per stump as the paper does)
  and keeps the stump whose step gives the smallest bound;
* :class:`AdaBoostDBTrainer` (Landesa-Vazquez & Alba-Castro, "Double-Base
  Asymmetric AdaBoost", Algorithm 2) writes the step as the positive root of
  a polynomial in ``x = exp(alpha)`` whose coefficients only involve two
  static numbers ``a, b`` and the class-conditional errors of the stump, which
  lets the Conditional Search skip almost every root computation.

Both evaluate the class-conditional weighted errors of the whole stump pool
(every feature, every threshold half-way between consecutive distinct values,
both polarities) at once in :class:`StumpPool`: one sparse product per round
gives per-bin sums of the class-wise weights, and running sums within each
feature (in rows of a fixed width, plus the rows' totals) turn them into the
errors of all thresholds without any subtraction.

Scaling of the weights: the trainers store ``alpha_m`` itself as the weight of
stump ``m``, so :meth:`BoostedMachine.predict` (the sign of the score) is the
algorithms' classifier ``sign(sum_m alpha_m h_m)``. The costs act inside the
loss, ``exp(-C_t t F)``, not on the stored weights: with ``C_P = C_N = C`` the
stored weight is discrete AdaBoost's ``0.5 ln((1 - e) / e)`` divided by ``C``,
which is also what the generic :class:`~bob_boost.trainers.Boosting` fits with
``DoubleBaseLoss(C, C)``.

Degenerate cases:

* A stump with no weighted error on either class has its root at infinity
  (``x -> inf``). It is added with the capped weight
  ``alpha = ALPHA_CAP_MARGIN / min(C_P, C_N)`` (its bound factor is then below
  ``exp(-36)``, under double-precision resolution relative to 1) and
  training stops, because every later round would pick the same stump again.
  A stump that is perfect on one class only has a finite root.
* When no stump satisfies the Contribution Condition (no positive step
  lowers the bound, e.g. every stump has ``a eps_P + b eps_N = 1/2``),
  training stops early with a log message.
* Costs that are not finite numbers > 0 raise ValueError.

Ties: candidates whose alphas (selection by alpha) or bounds (selection by
loss) agree to within :data:`TIE_TOLERANCE` (relative) count as equal, and
the first in pool order (feature, then threshold, then polarity +1 before
-1) wins. This makes the result independent of rounding and of the search
strategy.
"""
from __future__ import annotations

import logging
import math
from typing import Callable

import numpy as np
import scipy.optimize
import scipy.special

from .._validation import as_feature_matrix, as_score_matrix, check_positive_int, check_same_samples
from ..exceptions import InvalidTypeError, InvalidValueError
from ..losses.double_base import DoubleBaseLoss, check_cost
from ..losses.exponential import EXPONENT_LIMIT
from ..callbacks import RoundCallback, check_callback, stop_requested
from ..machine import BoostedMachine
from ..weak.stump import StumpMachine
from .binning import BinnedFeatures, midpoints

logger = logging.getLogger(__name__)

#: A stump without training error gets ``alpha = ALPHA_CAP_MARGIN / min(C_P, C_N)``.
ALPHA_CAP_MARGIN = 36.0
#: Relative tolerance under which two alphas (or two bounds) count as a tie.
TIE_TOLERANCE = 1e-9
#: Absolute error margin under which the Pareto search treats two error rates as equal.
DOMINANCE_MARGIN = 1e-12
#: First block size of the Conditional Search's scan (see ``AdaBoostDBTrainer._conditional_search``).
_SCAN_BLOCK = 256
#: A step function whose value is below this times the sum of its terms' sizes is at rounding level.
_NOISE = 8 * np.finfo(np.float64).eps
_EPS = float(np.finfo(np.float64).eps)
_TINY = float(np.finfo(np.float64).tiny)
#: Bins per row of ``StumpPool``'s grid of class-wise sums.
_ROW_WIDTH = 32
#: A stump contributes only if its cost-weighted error is below 1/2 by this relative margin. Steps
#: of stumps closer to 1/2 lower the bound by about 1e-12 or less, and the Improvement Condition and
#: the tie rule cannot compare them reliably (their resolution is about eps / margin).
_CONTRIBUTION_MARGIN = 1e-6
#: Relative allowance for rounding in the bound search's lower bounds.
_BOUND_MARGIN = 1e-12
#: Screening rounds of the bound search (see ``AdaBoostDBTrainer._bound_candidates``).
_BOUND_STEPS = 6
#: Iteration limit of the bracketed Newton search (it usually converges in under 10).
_MAX_ITERATIONS = 200

SELECTIONS = ("alpha", "loss")
SEARCHES = ("conditional", "bound", "exhaustive", "pareto")
ROOT_SEARCHES = ("vectorised", "scalar")


# -- the stump pool -----------------------------------------------------------
class StumpPool:
    """Every decision stump of a feature matrix, with vectorised class-wise errors.

    Candidate ``k`` is split ``k // 2`` (splits ordered by feature, then
    threshold) with polarity +1 for even ``k`` and -1 for odd ``k``; a stump
    of polarity +1 outputs +1 at or above its threshold.

    Parameters
    ----------
    features : array_like
        (#samples, #features) matrix; binned once here.
    """

    def __init__(self, features) -> None:
        # every bin summed directly, so that tiny class errors keep their relative precision
        binned = BinnedFeatures.from_values(as_feature_matrix(features), exact=True)
        offsets = binned.offsets
        sizes = np.diff(offsets)
        n_features = sizes.size
        self._binned = binned
        self._feature_of_bin = np.repeat(np.arange(n_features), sizes)
        last_bin = offsets[1:] - 1
        splits = np.ones(offsets[-1], dtype=bool)
        splits[last_bin] = False
        self._splits = np.flatnonzero(splits)
        if self._splits.size == 0:
            raise InvalidValueError("features: every feature is constant, so no stump can split them")
        # Each feature's bins are cut into rows of _ROW_WIDTH bins (plus an always-empty column), laid out
        # in one grid. Sums below and above a threshold are then sums of non-negative terms within a row
        # plus the totals of the feature's other rows -- never differences -- so they keep their relative
        # precision however small, are exactly 0 over bins without weight, and one wide feature does
        # not pad the grid of the others.
        position = np.arange(offsets[-1]) - np.repeat(offsets[:-1], sizes)
        # flat positions in the (#rows, _ROW_WIDTH + 1) grid and in the (#features, most rows + 1) grid
        # of row totals, for the bins, the rows and the splits
        rows_per_feature = -(-sizes // _ROW_WIDTH)
        first_row = np.concatenate([[0], np.cumsum(rows_per_feature)[:-1]])
        chunk = position // _ROW_WIDTH
        width, chunks = _ROW_WIDTH + 1, int(rows_per_feature.max()) + 1
        bin_row = first_row[self._feature_of_bin] + chunk
        self._bin_cell = bin_row * width + position % _ROW_WIDTH
        self._grid_size = int(rows_per_feature.sum()) * width
        row_feature = np.repeat(np.arange(n_features), rows_per_feature)
        self._row_chunk = row_feature * chunks + np.arange(rows_per_feature.sum()) - first_row[row_feature]
        self._row_last = np.arange(1, rows_per_feature.sum() + 1) * width - 1
        self._chunk_grid = (n_features, chunks)
        split_bin = self._splits
        self._split_cell = self._bin_cell[split_bin]
        self._split_chunk = self._feature_of_bin[split_bin] * chunks + chunk[split_bin]
        self.size = 2 * self._splits.size

    def class_errors(self, class_weights: np.ndarray) -> tuple[np.ndarray, ...]:
        """Misclassified and correctly classified weight of every candidate, per class.

        Parameters
        ----------
        class_weights : numpy.ndarray
            (#samples, 2) non-negative weights: column 0 the weights of the
            positive samples (zero on negatives), column 1 those of the
            negatives (zero on positives).

        Returns
        -------
        tuple of numpy.ndarray
            ``(wrong_positive, right_positive, wrong_negative, right_negative)``,
            each of shape (#candidates,).
        """
        # plain sums of non-negative weights: >= 0, and exactly 0 over bins without weight
        sums = self._binned.histograms(class_weights)
        grid = np.zeros((2, self._grid_size))
        grid[:, self._bin_cell] = sums.T
        rows = grid.reshape(2, -1, _ROW_WIDTH + 1)
        up_to = np.cumsum(rows, axis=2).reshape(2, -1)  # within a row, up to and including each bin
        from_here = np.cumsum(rows[:, :, ::-1], axis=2)[:, :, ::-1].reshape(2, -1)  # from each bin to the row's end
        # each row's total, placed so that running sums over a feature's rows give the totals of the
        # rows before (first grid) and after (second grid) a given row
        totals = up_to[:, self._row_last]
        before, after = np.zeros((2,) + self._chunk_grid), np.zeros((2,) + self._chunk_grid)
        before.reshape(2, -1)[:, self._row_chunk + 1] = totals
        after.reshape(2, -1)[:, self._row_chunk] = totals
        before = np.cumsum(before, axis=2).reshape(2, -1)
        after = np.cumsum(after[:, :, ::-1], axis=2)[:, :, ::-1].reshape(2, -1)
        below = before[:, self._split_chunk] + up_to[:, self._split_cell]
        above = from_here[:, self._split_cell + 1] + after[:, self._split_chunk + 1]
        # candidates 2k and 2k+1: polarity +1 (misclassifies the positives below the threshold) and -1
        wrong_positive, right_positive = np.empty(2 * below.shape[1]), np.empty(2 * below.shape[1])
        wrong_negative, right_negative = np.empty(2 * below.shape[1]), np.empty(2 * below.shape[1])
        wrong_positive[0::2], wrong_positive[1::2] = below[0], above[0]
        right_positive[0::2], right_positive[1::2] = above[0], below[0]
        wrong_negative[0::2], wrong_negative[1::2] = above[1], below[1]
        right_negative[0::2], right_negative[1::2] = below[1], above[1]
        return wrong_positive, right_positive, wrong_negative, right_negative

    def stump(self, candidate: int) -> StumpMachine:
        """The :class:`StumpMachine` of candidate ``candidate``."""
        split = int(self._splits[candidate // 2])
        values = self._binned.bin_values
        threshold = midpoints(values[split], values[split + 1])
        polarity = 1.0 if candidate % 2 == 0 else -1.0
        return StumpMachine(float(threshold), polarity, int(self._feature_of_bin[split]))


# -- root finding -------------------------------------------------------------
def _exp(values: np.ndarray) -> np.ndarray:
    """``exp`` saturating at ``exp(EXPONENT_LIMIT)`` so that ``0 * exp(...)`` stays 0."""
    return np.exp(np.minimum(values, EXPONENT_LIMIT))


def _bracket(up: np.ndarray, vp: np.ndarray, un: np.ndarray, vn: np.ndarray, cost_positive: float,
             cost_negative: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bracket and first guess for the root of ``up e^{C_P a} - vp e^{-C_P a} + un e^{C_N a} - vn e^{-C_N a}``.

    All coefficients are >= 0 and every candidate has ``up + un > 0`` and
    ``vp + vn > 0``, so the increasing function has one finite root. With
    ``U = up + un`` and ``V = vp + vn``: a root ``a >= 0`` satisfies
    ``up e^{C_P a} <= V`` (and likewise for ``un``), a root ``a <= 0``
    satisfies ``vp e^{-C_P a} <= U``; these give the bracket ends.
    """
    total_up, total_down = up + un, vp + vn
    with np.errstate(divide="ignore"):
        log_up, log_un, log_vp, log_vn = np.log(up), np.log(un), np.log(vp), np.log(vn)
        log_total_up, log_total_down = np.log(total_up), np.log(total_down)
    upper = np.minimum(np.where(up > 0, (log_total_down - log_up) / cost_positive, np.inf),
                       np.where(un > 0, (log_total_down - log_un) / cost_negative, np.inf))
    lower = np.maximum(np.where(vp > 0, (log_vp - log_total_up) / cost_positive, -np.inf),
                       np.where(vn > 0, (log_vn - log_total_up) / cost_negative, -np.inf))
    positive = total_up < total_down
    negative = total_up > total_down
    lower = np.where(positive, 0.0, np.where(negative, lower, 0.0))
    upper = np.where(positive, upper, 0.0)
    # discrete AdaBoost's step with the geometric mean cost, moved into the bracket
    guess = 0.5 * (log_total_down - log_total_up) / (np.sqrt(cost_positive) * np.sqrt(cost_negative))
    return lower, upper, np.clip(guess, lower, upper)


def _bracketed_newton(function: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]],
                      lower: np.ndarray, upper: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """Roots of increasing functions, one per element, by Newton steps kept inside a bracket.

    ``function(alpha, index)`` returns the values, slopes and magnitudes
    (sum of the absolute values of the terms) of the functions ``index`` at
    ``alpha``. A Newton step that leaves the bracket, or that is more than
    half the previous move (Newton crawls along a flat exponential tail, a
    fixed distance per step), is replaced by bisection. Each element stops on its own -- after a Newton step from a
    value at rounding level of its magnitude, or a step or bracket below
    rounding of ``alpha`` -- so its result does not depend on which other
    elements are solved along with it.
    """
    alpha, lower, upper = guess.copy(), lower.copy(), upper.copy()
    moves = upper - lower
    active = np.arange(alpha.size)
    for _ in range(_MAX_ITERATIONS):
        if active.size == 0:
            break
        current, low, high, move = alpha[active], lower[active], upper[active], moves[active]
        value, slope, magnitude = function(current, active)
        low = np.where(value < 0, current, low)
        high = np.where(value > 0, current, high)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = current - value / slope
        # at the noise floor the next value's sign is rounding, so the Newton step is final
        noise_floor = np.abs(value) <= _NOISE * magnitude
        inside = (step > low) & (step < high) & (np.abs(step - current) <= 0.5 * move)
        step = np.clip(np.where(inside | noise_floor, step, 0.5 * (low + high)), low, high)
        step = np.where(value == 0, current, step)
        tolerance = 4 * np.finfo(np.float64).eps * np.maximum(np.abs(step), np.finfo(np.float64).tiny)
        done = noise_floor | (np.abs(step - current) <= tolerance) | (high - low <= tolerance)
        alpha[active], lower[active], upper[active], moves[active] = step, low, high, np.abs(step - current)
        active = active[~done]
    if active.size:
        logger.warning("root search: %d step(s) did not converge in %d iterations", active.size, _MAX_ITERATIONS)
    return alpha


def _double_base_roots(error_positive: np.ndarray, error_negative: np.ndarray, a: float, b: float,
                       cost_positive: float, cost_negative: float) -> np.ndarray:
    """AdaBoostDB steps: ``log`` of the positive root of the double-base polynomial.

    The polynomial ``a e_P x^{2C_P} + b e_N x^{C_P+C_N} + b (e_N - 1) x^{C_P-C_N} + a (e_P - 1)``
    is multiplied by ``x^{-C_P}`` and written in ``alpha = log x``, which keeps
    the same root, stays finite for large costs and needs no integer exponents.
    Every candidate must satisfy the Contribution Condition and have some error.
    """
    up, vp = a * error_positive, a * (1.0 - error_positive)
    un, vn = b * error_negative, b * (1.0 - error_negative)

    def evaluate(alpha: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        grow_p, shrink_p = _exp(cost_positive * alpha), _exp(-cost_positive * alpha)
        grow_n, shrink_n = _exp(cost_negative * alpha), _exp(-cost_negative * alpha)
        terms = (up[index] * grow_p, vp[index] * shrink_p, un[index] * grow_n, vn[index] * shrink_n)
        value = terms[0] - terms[1] + terms[2] - terms[3]
        slope = cost_positive * (terms[0] + terms[1]) + cost_negative * (terms[2] + terms[3])
        return value, slope, sum(terms)

    lower, upper, guess = _bracket(up, vp, un, vn, cost_positive, cost_negative)
    return _bracketed_newton(evaluate, lower, upper, guess)


def _double_base_root(error_positive: float, error_negative: float, a: float, b: float, cost_positive: float,
                      cost_negative: float) -> float:
    """One AdaBoostDB step, as :func:`_double_base_roots` computes it, in plain floats.

    The Conditional Search solves one candidate at a time; scalar arithmetic
    avoids numpy's per-call overhead there (the two paths agree to rounding).
    """
    up, vp = a * error_positive, a * (1.0 - error_positive)
    un, vn = b * error_negative, b * (1.0 - error_negative)
    total_up, total_down = up + un, vp + vn
    if total_up >= total_down:
        return 0.0
    if total_up == 0.0:  # nothing misclassified once scaled: the root is at infinity
        return math.inf
    # differences of logarithms, as in _bracket: a quotient of a subnormal term could overflow
    log_down = math.log(total_down)
    low = 0.0
    high = min((log_down - math.log(up)) / cost_positive if up > 0 else math.inf,
               (log_down - math.log(un)) / cost_negative if un > 0 else math.inf)
    guess = 0.5 * (log_down - math.log(total_up)) / (math.sqrt(cost_positive) * math.sqrt(cost_negative))
    alpha = min(max(guess, low), high)
    move = high - low
    for _ in range(_MAX_ITERATIONS):
        # alpha stays in [0, high], so only the growing terms can need the saturation
        grow_p = up * math.exp(min(cost_positive * alpha, EXPONENT_LIMIT))
        shrink_p = vp * math.exp(-cost_positive * alpha)
        grow_n = un * math.exp(min(cost_negative * alpha, EXPONENT_LIMIT))
        shrink_n = vn * math.exp(-cost_negative * alpha)
        value = grow_p - shrink_p + grow_n - shrink_n
        if value == 0:
            return alpha
        slope = cost_positive * (grow_p + shrink_p) + cost_negative * (grow_n + shrink_n)
        if value < 0:
            low = alpha
        else:
            high = alpha
        step = alpha - value / slope
        if abs(value) <= _NOISE * (grow_p + shrink_p + grow_n + shrink_n):  # rounding level: the step is final
            return min(max(step, low), high)
        if not (low < step < high and abs(step - alpha) <= 0.5 * move):
            step = 0.5 * (low + high)
        tolerance = 4 * _EPS * max(abs(step), _TINY)
        if abs(step - alpha) <= tolerance or high - low <= tolerance:
            return step
        move, alpha = abs(step - alpha), step
    logger.warning("root search: a step did not converge in %d iterations", _MAX_ITERATIONS)
    return alpha


def _hyperbolic_roots(wrong_positive: np.ndarray, right_positive: np.ndarray, wrong_negative: np.ndarray,
                      right_negative: np.ndarray, cost_positive: float, cost_negative: float) -> np.ndarray:
    """Cost-Sensitive AdaBoost steps: the root ``alpha`` of the hyperbolic equation

    ``2 C_P B cosh(C_P alpha) + 2 C_N D cosh(C_N alpha) = C_P T_P e^{-C_P alpha} + C_N T_N e^{-C_N alpha}``

    with ``B``, ``D`` the misclassified positive / negative weight and
    ``T_P = B + right_positive``, ``T_N = D + right_negative``. Every
    candidate must have some error and some correct weight.
    """
    total_positive = wrong_positive + right_positive
    total_negative = wrong_negative + right_negative

    def evaluate(alpha: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        arg_p = np.clip(cost_positive * alpha, -EXPONENT_LIMIT, EXPONENT_LIMIT)
        arg_n = np.clip(cost_negative * alpha, -EXPONENT_LIMIT, EXPONENT_LIMIT)
        b, d = wrong_positive[index], wrong_negative[index]
        t_p, t_n = total_positive[index], total_negative[index]
        shrink_p, shrink_n = np.exp(-arg_p), np.exp(-arg_n)
        hyperbolic = 2 * cost_positive * b * np.cosh(arg_p) + 2 * cost_negative * d * np.cosh(arg_n)
        exponential = cost_positive * t_p * shrink_p + cost_negative * t_n * shrink_n
        slope = (2 * cost_positive ** 2 * b * np.sinh(arg_p) + 2 * cost_negative ** 2 * d * np.sinh(arg_n)
                 + cost_positive ** 2 * t_p * shrink_p + cost_negative ** 2 * t_n * shrink_n)
        return hyperbolic - exponential, slope, hyperbolic + exponential

    lower, upper, guess = _bracket(cost_positive * wrong_positive, cost_positive * right_positive,
                                   cost_negative * wrong_negative, cost_negative * right_negative,
                                   cost_positive, cost_negative)
    return _bracketed_newton(evaluate, lower, upper, guess)


def _hyperbolic_equation(alpha: float, wrong_positive: float, wrong_negative: float, total_positive: float,
                         total_negative: float, cost_positive: float, cost_negative: float) -> float:
    """Left minus right side of the hyperbolic equation of one candidate, in plain floats."""
    arg_p = min(max(cost_positive * alpha, -EXPONENT_LIMIT), EXPONENT_LIMIT)
    arg_n = min(max(cost_negative * alpha, -EXPONENT_LIMIT), EXPONENT_LIMIT)
    hyperbolic = 2 * (cost_positive * wrong_positive * math.cosh(arg_p)
                      + cost_negative * wrong_negative * math.cosh(arg_n))
    exponential = cost_positive * total_positive * math.exp(-arg_p) + cost_negative * total_negative * math.exp(-arg_n)
    return hyperbolic - exponential


def _hyperbolic_roots_one_by_one(wrong_positive: np.ndarray, right_positive: np.ndarray,
                                 wrong_negative: np.ndarray, right_negative: np.ndarray, cost_positive: float,
                                 cost_negative: float) -> np.ndarray:
    """The roots of :func:`_hyperbolic_roots`, one scalar Brent search (``scipy.optimize.brentq``) per candidate.

    This Python loop over the candidates is deliberate: it is Cost-Sensitive
    AdaBoost as Algorithm 1 of the AdaBoostDB paper states it (a scalar root
    search per weak learner, Zeroin in the paper), the baseline against which
    the paper measures AdaBoostDB's training time. The brackets are the
    closed-form ones of the vectorised search; when rounding gives both ends
    the same sign, the root is within rounding of the end nearer to zero
    value, which is returned.
    """
    lower, upper, _ = _bracket(cost_positive * wrong_positive, cost_positive * right_positive,
                               cost_negative * wrong_negative, cost_negative * right_negative,
                               cost_positive, cost_negative)
    total_positive = wrong_positive + right_positive
    total_negative = wrong_negative + right_negative
    roots = np.empty(wrong_positive.size)
    tiny, eps = np.finfo(np.float64).tiny, np.finfo(np.float64).eps
    for k in range(wrong_positive.size):
        arguments = (float(wrong_positive[k]), float(wrong_negative[k]), float(total_positive[k]),
                     float(total_negative[k]), cost_positive, cost_negative)
        low, high = float(lower[k]), float(upper[k])
        try:
            # relative tolerance at rounding level (an absolute one would spoil small steps)
            root, result = scipy.optimize.brentq(_hyperbolic_equation, low, high, args=arguments, xtol=tiny,
                                                 rtol=4 * eps, maxiter=_MAX_ITERATIONS, full_output=True,
                                                 disp=False)
        except ValueError:  # no sign change between the ends: rounding at a bracket end
            root = min((low, high), key=lambda end: abs(_hyperbolic_equation(end, *arguments)))
        else:
            if not result.converged:
                logger.warning("root search: a step did not converge in %d iterations", _MAX_ITERATIONS)
        roots[k] = root
    return roots


def _bound(alpha: np.ndarray, wrong_positive: np.ndarray, right_positive: np.ndarray,
           wrong_negative: np.ndarray, right_negative: np.ndarray, cost_positive: float,
           cost_negative: float) -> np.ndarray:
    """The exponential bound after a step ``alpha``, up to the round's common factor."""
    return (right_positive * _exp(-cost_positive * alpha) + wrong_positive * _exp(cost_positive * alpha)
            + right_negative * _exp(-cost_negative * alpha) + wrong_negative * _exp(cost_negative * alpha))


def _bound_coefficients(p: float, q: float, cost_positive: float, cost_negative: float,
                        alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The bound ``L(alpha)`` and its slope as affine functions of the class errors.

    ``L(alpha) = p ((1 - e_P) e^{-C_P alpha} + e_P e^{C_P alpha}) + q ((1 - e_N) e^{-C_N alpha}
    + e_N e^{C_N alpha})``, with ``p`` and ``q = 1 - p`` the positives' and
    the negatives' shares of the current weight (each computed on its own,
    so that neither is lost to rounding), is convex in ``alpha``. Returns
    two arrays of shape ``(3,) + alpha.shape``: the coefficients of
    ``(1, e_P, e_N)`` in ``L(alpha)`` and in ``L'(alpha)``.
    """
    # rows: e^{C_P alpha}, e^{-C_P alpha}, e^{C_N alpha}, e^{-C_N alpha}
    exponentials = np.exp(np.multiply.outer([cost_positive, -cost_positive, cost_negative, -cost_negative], alpha))
    slope_p, slope_n = p * cost_positive, q * cost_negative
    value = np.array([[0.0, p, 0.0, q], [p, -p, 0.0, 0.0], [0.0, 0.0, q, -q]]) @ exponentials
    slope = np.array([[0.0, -slope_p, 0.0, -slope_n], [slope_p, slope_p, 0.0, 0.0],
                      [0.0, 0.0, slope_n, slope_n]]) @ exponentials
    return value, slope


def _class_part_minimum(error: np.ndarray) -> np.ndarray:
    """``min over alpha >= 0`` of ``(1 - e) e^{-C alpha} + e e^{C alpha}``.

    That is ``2 sqrt(e (1 - e))``, or 1 for ``e > 1/2``.
    """
    return np.where(error <= 0.5, 2.0 * np.sqrt(error * (1.0 - error)), 1.0)


def _tangents_meet(low: tuple[np.ndarray, ...], high: tuple[np.ndarray, ...],
                   steepness: float) -> tuple[np.ndarray, np.ndarray]:
    """Where the tangents at ``low`` and ``high`` (each ``(alpha, value, slope)``) meet, and a bound below.

    When the slope at ``low`` is <= 0 and the one at ``high`` > 0, the
    minimum of a convex function lies between them and is at least the
    value where the two tangents meet. The returned bound is the lower of
    the two tangents at the computed meeting point (below the true meeting
    value even when rounding moved the point), minus an allowance for the
    rounding of the values and slopes, whose terms are at most about
    ``steepness * (value + 2)`` in size for the bound ``L`` (``steepness``:
    the larger cost). Returns ``(alpha, lower bound)``.
    """
    at_low, value_low, slope_low = low
    at_high, value_high, slope_high = high
    meet = (value_high - value_low + slope_low * at_low - slope_high * at_high) / (slope_low - slope_high)
    meet = np.clip(meet, at_low, at_high)
    to_low, to_high = meet - at_low, at_high - meet
    lower = np.minimum(value_low + slope_low * to_low, value_high - slope_high * to_high)
    allowance = _BOUND_MARGIN * (value_low + value_high - slope_low * to_low + slope_high * to_high
                                 + steepness * (value_low + value_high + 4.0) * (at_high - at_low))
    return meet, lower - allowance


def _first_smallest(bounds: np.ndarray) -> int:
    """Position of the first bound within :data:`TIE_TOLERANCE` (relative) of the smallest."""
    return int(np.argmax(bounds <= bounds.min() * (1.0 + TIE_TOLERANCE)))


def _pareto_candidates(error_positive: np.ndarray, error_negative: np.ndarray) -> np.ndarray:
    """Positions of the points not beaten by another by more than the margin in both errors.

    A superset of the lower-left Pareto front of ``(error_positive,
    error_negative)``: a point is dropped only when another point is lower
    by :data:`DOMINANCE_MARGIN` in both coordinates, so points that differ
    only by rounding are kept together. Returned in increasing order.
    """
    order = np.lexsort((error_negative, error_positive))
    sorted_positive = error_positive[order]
    running_minimum = np.minimum.accumulate(error_negative[order])
    count = np.searchsorted(sorted_positive, error_positive - DOMINANCE_MARGIN, side="right")
    beaten_by = np.where(count > 0, running_minimum[np.maximum(count - 1, 0)], np.inf)
    return np.flatnonzero(beaten_by > error_negative - DOMINANCE_MARGIN)


# -- shared training loop -------------------------------------------------------
class _CostSensitiveStumpBoosting:
    """Training loop shared by the two trainers; subclasses choose each round's stump and step."""

    #: Written into the trained machine's metadata.
    algorithm = ""

    def __init__(self, cost_positive: float, cost_negative: float) -> None:
        self.cost_positive = check_cost(cost_positive, "cost_positive")
        self.cost_negative = check_cost(cost_negative, "cost_negative")
        self.loss_function = DoubleBaseLoss(self.cost_positive, self.cost_negative)
        #: Number of step equations solved in the last call of :meth:`train`.
        self.root_searches = 0

    @property
    def alpha_cap(self) -> float:
        """Weight given to a stump without training error (see the module documentation)."""
        return ALPHA_CAP_MARGIN / min(self.cost_positive, self.cost_negative)

    def _metadata(self) -> dict:
        return {"loss": DoubleBaseLoss.name, "trainer": self.algorithm,
                "cost_positive": self.cost_positive, "cost_negative": self.cost_negative}

    def _select(self, pool: StumpPool, positive: np.ndarray,
                log_weights: np.ndarray) -> tuple[int, float, bool] | None:
        """Return ``(candidate, alpha, perfect)`` for this round, or None when no stump contributes.

        ``perfect`` is True for a stump without training error (capped alpha).
        """
        raise NotImplementedError

    def train(self, features, targets, number_of_rounds: int = 20,
              boosted_machine: BoostedMachine | None = None, sample_weights=None,
              callback: RoundCallback | None = None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` stumps.

        Parameters
        ----------
        features : array_like
            (#samples, #features) training features.
        targets : array_like
            (#samples,) or (#samples, 1) targets in {-1, +1}; both classes must occur.
        number_of_rounds : int
            Maximum number of stumps to add.
        boosted_machine : BoostedMachine, optional
            Continue training this univariate machine (extended in place and returned).
        sample_weights : array_like, optional
            Initial distribution ``D_1`` (non-negative, some weight in each
            class). Default: uniform within each class with each class
            weighing 1/2, as both papers initialise.
        callback : callable, optional
            ``callback(round, machine, scores)`` after each round; returning
            True stops training (see :mod:`bob_boost.callbacks`).

        Returns
        -------
        BoostedMachine
            Stumps weighted by their steps ``alpha``. Training stops early,
            with a log message, when no stump contributes or after a stump
            without training error.
        """
        features = as_feature_matrix(features)
        targets = self.loss_function.check_targets(targets)
        check_same_samples(features, targets)
        if targets.shape[1] != 1:
            raise InvalidValueError(f"targets: binary trainers need one column, got {targets.shape[1]}")
        number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        check_callback(callback)
        labels = targets[:, 0]
        positive = labels > 0
        if positive.all() or not positive.any():
            raise InvalidValueError("targets: both classes (-1 and +1) must occur")
        log_initial = self._initial_log_weights(sample_weights, positive)

        if boosted_machine is None:
            boosted_machine = BoostedMachine(number_of_outputs=1, number_of_features=features.shape[1],
                                             metadata=self._metadata())
            scores = np.zeros(labels.size)
        else:
            if not isinstance(boosted_machine, BoostedMachine):
                raise InvalidTypeError("boosted_machine: expected a BoostedMachine, got "
                                       f"{type(boosted_machine).__name__}")
            if boosted_machine.number_of_outputs not in (None, 1):
                raise InvalidValueError(f"boosted_machine: has {boosted_machine.number_of_outputs} outputs, expected 1")
            scores = boosted_machine.decision_scores(features)[:, 0]

        pool = StumpPool(features)
        costs = np.where(positive, self.cost_positive, self.cost_negative)
        self.root_searches = 0
        logger.info("%s: up to %d rounds on %d samples, %d candidate stumps, costs (%g, %g)", self.algorithm,
                    number_of_rounds, labels.size, pool.size, self.cost_positive, self.cost_negative)
        for round_index in range(number_of_rounds):
            log_weights = log_initial - costs * labels * scores
            choice = self._select(pool, positive, log_weights)
            if choice is None:
                logger.info("%s round %d: no stump satisfies the Contribution Condition; stopping after %d stumps",
                            self.algorithm, round_index + 1, len(boosted_machine))
                break
            candidate, alpha, perfect = choice
            stump = pool.stump(candidate)
            boosted_machine.add_weak_machine(stump, alpha)
            scores = scores + alpha * stump.forward(features)[:, 0]
            if logger.isEnabledFor(logging.INFO):
                bound = np.exp(log_initial - costs * labels * scores).sum()
                logger.info("%s round %d/%d: %r, alpha %.6g, training bound %.6g", self.algorithm,
                            round_index + 1, number_of_rounds, stump, alpha, bound)
            if stop_requested(callback, round_index, boosted_machine, scores[:, np.newaxis]):
                break
            if perfect:
                logger.info("%s round %d: %r classifies every training sample correctly; added with the capped "
                            "alpha %g and stopped", self.algorithm, round_index + 1, stump, alpha)
                break
        return boosted_machine

    @staticmethod
    def _initial_log_weights(sample_weights, positive: np.ndarray) -> np.ndarray:
        """Logarithm of the initial distribution ``D_1`` (-inf for zero weights)."""
        if sample_weights is None:
            counts = np.where(positive, positive.sum(), (~positive).sum())
            return -np.log(2.0 * counts)
        weights = as_score_matrix(sample_weights, "sample_weights", positive.size)
        if weights.shape[1] != 1:
            raise InvalidValueError(f"sample_weights: expected one weight per sample, got shape {weights.shape}")
        weights = weights[:, 0]
        if np.any(weights < 0):
            raise InvalidValueError("sample_weights: must be non-negative")
        if not (weights[positive].sum() > 0 and weights[~positive].sum() > 0):
            raise InvalidValueError("sample_weights: each class needs some positive weight")
        # in the log domain: weights may span more than the range of doubles (1e-200 next to 1e200)
        with np.errstate(divide="ignore"):
            logs = np.log(weights)
        return logs - scipy.special.logsumexp(logs)

    def _step_inputs(self, targets, predictions, sample_weights) -> tuple[float, float, float, float]:
        """Validate the arguments of ``optimal_step``; return the class-wise wrong/right weights."""
        targets = self.loss_function.check_targets(targets)[:, 0]
        predictions = as_score_matrix(predictions, "predictions", targets.size)[:, 0]
        if not np.all(np.abs(predictions) == 1.0):
            raise InvalidValueError("predictions: a discrete weak learner outputs -1 or +1")
        weights = as_score_matrix(sample_weights, "sample_weights", targets.size)[:, 0]
        if np.any(weights < 0):
            raise InvalidValueError("sample_weights: must be non-negative")
        positive, wrong = targets > 0, predictions != targets
        sums = [float(weights[positive & wrong].sum()), float(weights[positive & ~wrong].sum()),
                float(weights[~positive & wrong].sum()), float(weights[~positive & ~wrong].sum())]
        if sums[0] + sums[1] <= 0 or sums[2] + sums[3] <= 0:
            raise InvalidValueError("sample_weights: each class needs some positive weight")
        return sums[0], sums[1], sums[2], sums[3]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(cost_positive={self.cost_positive!r}, cost_negative={self.cost_negative!r})"


def _perfect(wrong_positive: np.ndarray, wrong_negative: np.ndarray, candidates: np.ndarray) -> int | None:
    """The first of ``candidates`` without error on either class, if any."""
    perfect = candidates[(wrong_positive[candidates] == 0) & (wrong_negative[candidates] == 0)]
    return int(perfect[0]) if perfect.size else None


def _infinite_step(wrong_positive: float, right_positive: float, wrong_negative: float,
                   right_negative: float) -> float | None:
    """``+inf`` / ``-inf`` when the step equation has no finite root, else None."""
    if wrong_positive + wrong_negative == 0:
        return np.inf
    if right_positive + right_negative == 0:
        return -np.inf
    return None


# -- Cost-Sensitive AdaBoost ----------------------------------------------------
class CostSensitiveAdaBoostTrainer(_CostSensitiveStumpBoosting):
    """Cost-Sensitive AdaBoost of Masnadi-Shirazi & Vasconcelos over the stump pool.

    Every round, for every stump of the pool, the step ``alpha`` is the root
    of the hyperbolic equation (Algorithm 1 of the AdaBoostDB paper)::

        2 C_P B cosh(C_P alpha) + 2 C_N D cosh(C_N alpha) = C_P T_P exp(-C_P alpha) + C_N T_N exp(-C_N alpha)

    (``B``, ``D``: weight of the misclassified positives / negatives; ``T_P``,
    ``T_N``: total weight of each class), and the stump whose step gives the
    smallest loss ``L = B (e^{C_P alpha} - e^{-C_P alpha}) + T_P e^{-C_P alpha}
    + D (e^{C_N alpha} - e^{-C_N alpha}) + T_N e^{-C_N alpha}`` is kept. The
    weights are then multiplied by ``exp(-C_y y alpha h(x))``.

    :attr:`root_searches` counts one search per candidate and round, as the
    algorithm solves the equation for every candidate. A candidate whose
    root is negative is the mirror image of the opposite-polarity stump,
    which has the same loss and a positive root; the positive one is kept.
    The weights are renormalised every round, which changes neither the roots
    nor the choice (the equation and the losses scale with the weights).

    Parameters
    ----------
    cost_positive, cost_negative : float
        Finite costs > 0 of a false negative (``C_P``) and a false positive (``C_N``).
    root_search : {"vectorised", "scalar"}
        How the roots of a round are found; both select the same stumps, with
        steps equal to rounding (about 1e-15 relative per round).
        ``"vectorised"`` (default) solves all candidates' equations together
        by bracketed Newton steps in numpy. ``"scalar"`` runs one Brent search
        (``scipy.optimize.brentq``) per candidate in a Python loop: the
        algorithm as the AdaBoostDB paper states and times it, kept as the
        reference baseline for training-time comparisons; in
        ``bench/bench_adaboostdb.py`` it is 26 to 53 times slower.
    """

    algorithm = "CostSensitiveAdaBoost"

    def __init__(self, cost_positive: float, cost_negative: float, root_search: str = "vectorised") -> None:
        super().__init__(cost_positive, cost_negative)
        if root_search not in ROOT_SEARCHES:
            raise InvalidValueError(f"root_search: must be one of {ROOT_SEARCHES}, got {root_search!r}")
        self.root_search = root_search

    def _metadata(self) -> dict:
        return {**super()._metadata(), "root_search": self.root_search}

    def _roots(self, wrong_positive: np.ndarray, right_positive: np.ndarray, wrong_negative: np.ndarray,
               right_negative: np.ndarray) -> np.ndarray:
        """Roots of the candidates' hyperbolic equations, by the :attr:`root_search` strategy."""
        solve = _hyperbolic_roots if self.root_search == "vectorised" else _hyperbolic_roots_one_by_one
        return solve(wrong_positive, right_positive, wrong_negative, right_negative, self.cost_positive,
                     self.cost_negative)

    def optimal_step(self, targets, predictions, sample_weights) -> float:
        """Step that minimises the cost-sensitive bound for one weak learner.

        Parameters
        ----------
        targets : array_like
            (#samples,) targets in {-1, +1}.
        predictions : array_like
            (#samples,) outputs of the weak learner, each -1 or +1.
        sample_weights : array_like
            (#samples,) current non-negative sample weights ``D(i)`` (any
            scale), with some weight in each class.

        Returns
        -------
        float
            The root ``alpha`` of the hyperbolic equation: the ``alpha``
            minimising ``sum_i D(i) exp(-C_{y_i} y_i alpha h(x_i))``. It is
            negative when flipping the learner helps, and ``+inf`` (``-inf``)
            when the learner is right (wrong) on every weighted sample.
        """
        sums = self._step_inputs(targets, predictions, sample_weights)
        infinite = _infinite_step(*sums)
        if infinite is not None:
            return infinite
        return float(self._roots(*[np.array([value]) for value in sums])[0])

    def _select(self, pool: StumpPool, positive: np.ndarray,
                log_weights: np.ndarray) -> tuple[int, float, bool] | None:
        distribution = np.exp(log_weights - log_weights.max())
        distribution /= distribution.sum()
        class_weights = np.zeros((positive.size, 2))
        class_weights[positive, 0] = distribution[positive]
        class_weights[~positive, 1] = distribution[~positive]
        wrong_p, right_p, wrong_n, right_n = pool.class_errors(class_weights)
        finite = (wrong_p + wrong_n > 0) & (right_p + right_n > 0)
        perfect = _perfect(wrong_p, wrong_n, np.flatnonzero(wrong_p + wrong_n == 0))
        if perfect is not None:
            return perfect, self.alpha_cap, True
        index = np.flatnonzero(finite)
        alpha = self._roots(wrong_p[index], right_p[index], wrong_n[index], right_n[index])
        self.root_searches += index.size
        # the cost-weighted error must be below half by the same margin as AdaBoostDB's Contribution
        # Condition, so that both trainers stop, and skip steps at rounding level, alike
        weighted_error = self.cost_positive * wrong_p[index] + self.cost_negative * wrong_n[index]
        weighted_total = (self.cost_positive * (wrong_p[index] + right_p[index])
                          + self.cost_negative * (wrong_n[index] + right_n[index]))
        useful = (alpha > 0) & (weighted_error < 0.5 * (1.0 - _CONTRIBUTION_MARGIN) * weighted_total)
        if not useful.any():
            return None
        index, alpha = index[useful], alpha[useful]
        loss = _bound(alpha, wrong_p[index], right_p[index], wrong_n[index], right_n[index],
                      self.cost_positive, self.cost_negative)
        chosen = _first_smallest(loss)
        return int(index[chosen]), float(alpha[chosen]), False


# -- AdaBoostDB -------------------------------------------------------------------
class AdaBoostDBTrainer(_CostSensitiveStumpBoosting):
    """AdaBoostDB (Double-Base Asymmetric AdaBoost) over the stump pool.

    Each round the weights of each class are normalised into the
    sub-distributions ``D_P`` and ``D_N``, whose former totals are folded
    into the accumulators ``A_P`` and ``A_N``; the static parameters are
    ``a = C_P W_P A_P / (C_P W_P A_P + C_N W_N A_N)`` and ``b = 1 - a``
    (``W_P``, ``W_N``: the initial class weights, 1/2 each by default). A
    stump with class-conditional errors ``eps_P``, ``eps_N`` can contribute
    only if ``a eps_P + b eps_N < 1/2`` (Contribution Condition), and its step
    is ``alpha = log x`` for the unique positive root ``x`` of::

        a eps_P x^(2 C_P) + b eps_N x^(C_P + C_N) + b (eps_N - 1) x^(C_P - C_N) + a (eps_P - 1) = 0

    Parameters
    ----------
    cost_positive, cost_negative : float
        Finite costs > 0 of a false negative (``C_P``) and a false positive
        (``C_N``); they need not be integers.
    selection : {"alpha", "loss"}
        ``"alpha"`` keeps the stump with the largest root (the paper's rule);
        ``"loss"`` the stump whose step gives the smallest bound, i.e. exact
        greedy minimisation, the same choice as Cost-Sensitive AdaBoost. With
        equal costs the two coincide.
    search : {"conditional", "bound", "exhaustive", "pareto"}, optional
        How the stump is found; for a given rule all give the same stump and
        alpha. ``"conditional"`` (default for ``selection="alpha"``, and only
        for it) is the paper's Conditional Search: candidates are scanned in
        pool order and a root is computed only for one that passes the
        Contribution Condition and the Improvement Condition ``c . r < s``
        against the best root so far (``c = (a eps_P, b eps_N)``; ``r``,
        ``s`` built from that root), i.e. only for one whose root is larger.
        ``"bound"`` (default for ``selection="loss"``, and only for it)
        computes roots only for candidates whose lower bound on the loss
        (from tangents of the convex bound on a grid of steps) does not
        exceed the best upper bound: usually one or two a round.
        ``"exhaustive"`` computes the root of every contributing candidate.
        ``"pareto"`` computes roots only on the lower-left Pareto front of
        the candidates' ``(eps_P, eps_N)``, where both optima lie (the root
        and the bound are monotone in each error); with the ``"loss"`` rule
        it also solves the bound search's survivors, because a dominated
        candidate can still tie with the best within the tie tolerance and
        come first in pool order.
    """

    algorithm = "AdaBoostDB"

    def __init__(self, cost_positive: float, cost_negative: float, selection: str = "alpha",
                 search: str | None = None) -> None:
        super().__init__(cost_positive, cost_negative)
        if selection not in SELECTIONS:
            raise InvalidValueError(f"selection: must be one of {SELECTIONS}, got {selection!r}")
        if search is None:
            search = "conditional" if selection == "alpha" else "bound"
        if search not in SEARCHES:
            raise InvalidValueError(f"search: must be one of {SEARCHES}, got {search!r}")
        if search == "conditional" and selection == "loss":
            raise InvalidValueError("search: the Conditional Search compares roots, so it needs selection='alpha'; "
                                    "use search='bound', 'pareto' or 'exhaustive' with selection='loss'")
        if search == "bound" and selection == "alpha":
            raise InvalidValueError("search: the bound search compares bounds, so it needs selection='loss'; "
                                    "use search='conditional', 'pareto' or 'exhaustive' with selection='alpha'")
        self.selection = selection
        self.search = search

    def _metadata(self) -> dict:
        return {**super()._metadata(), "selection": self.selection, "search": self.search}

    def static_parameters(self, log_total_positive: float, log_total_negative: float) -> tuple[float, float]:
        """``(a, b)`` from the logarithms of the current class totals ``W_P A_P`` and ``W_N A_N``."""
        log_p = math.log(self.cost_positive) + log_total_positive
        log_n = math.log(self.cost_negative) + log_total_negative
        return float(scipy.special.expit(log_p - log_n)), float(scipy.special.expit(log_n - log_p))

    def optimal_step(self, targets, predictions, sample_weights) -> float:
        """Step that minimises the cost-sensitive bound for one weak learner, via the polynomial.

        Same arguments and result as :meth:`CostSensitiveAdaBoostTrainer.optimal_step`
        (the two equations have the same root).
        """
        wrong_p, right_p, wrong_n, right_n = self._step_inputs(targets, predictions, sample_weights)
        infinite = _infinite_step(wrong_p, right_p, wrong_n, right_n)
        if infinite is not None:
            return infinite
        a, b = self.static_parameters(np.log(wrong_p + right_p), np.log(wrong_n + right_n))
        error_p = np.array([wrong_p / (wrong_p + right_p)])
        error_n = np.array([wrong_n / (wrong_n + right_n)])
        return float(_double_base_roots(error_p, error_n, a, b, self.cost_positive, self.cost_negative)[0])

    def _select(self, pool: StumpPool, positive: np.ndarray,
                log_weights: np.ndarray) -> tuple[int, float, bool] | None:
        # each class's weights normalised to the sub-distributions D_P and D_N, in the log domain because
        # the two classes' totals can be hundreds of orders of magnitude apart
        class_weights = np.zeros((positive.size, 2))
        log_totals = []
        for column, members in enumerate((np.flatnonzero(positive), np.flatnonzero(~positive))):
            values = log_weights[members]
            peak = values.max()
            scaled = np.exp(values - peak)
            total = scaled.sum()
            class_weights[members, column] = scaled / total
            log_totals.append(float(peak + np.log(total)))
        log_total_p, log_total_n = log_totals
        a, b = self.static_parameters(log_total_p, log_total_n)
        # each class's weights sum to 1 (D_P, D_N), so the misclassified weights are the errors
        error_p, _, error_n, _ = pool.class_errors(class_weights)
        # subnormal errors carry too few significant bits for the scalar and the vectorised root searches
        # to agree on their steps; they count as no error
        error_p[error_p < _TINY] = 0.0
        error_n[error_n < _TINY] = 0.0
        # a class's misclassified weight can exceed its total (1) by rounding
        np.minimum(error_p, 1.0, out=error_p)
        np.minimum(error_n, 1.0, out=error_n)
        # Contribution Condition V(1) < S(1), i.e. a eps_P + b eps_N < 1/2, with a margin: see
        # _CONTRIBUTION_MARGIN
        scaled_error = a * error_p + b * error_n
        contributing = np.flatnonzero(scaled_error < 0.5 * (1.0 - _CONTRIBUTION_MARGIN))
        if contributing.size == 0:
            return None
        # no weight misclassified once scaled by a and b: the root is at infinity
        perfect = contributing[scaled_error[contributing] == 0.0]
        if perfect.size:
            return int(perfect[0]), self.alpha_cap, True
        error_p, error_n = error_p[contributing], error_n[contributing]
        if self.selection == "alpha":
            position, alpha = self._largest_root(error_p, error_n, a, b)
            if self.search != "conditional":
                # the tie rule and the stored step use the scalar solver's root whatever the search (the
                # Conditional Search's roots are scalar already), so that all searches return the same bits
                alpha = self._step(error_p, error_n, a, b, position)
            position, alpha = self._first_tied(error_p, error_n, a, b, position, alpha)
        else:
            # the shares of the positives and of the negatives in the current total weight, each computed
            # on its own so that the smaller one is not lost to rounding
            p = float(scipy.special.expit(log_total_p - log_total_n))
            q = float(scipy.special.expit(log_total_n - log_total_p))
            position, alpha = self._smallest_bound(error_p, error_n, a, b, p, q)
            if alpha is None:
                alpha = self._step(error_p, error_n, a, b, position)
        if not alpha > 0:
            return None
        return int(contributing[position]), alpha, False

    def _step(self, error_p: np.ndarray, error_n: np.ndarray, a: float, b: float, position: int) -> float:
        """The stored step of the chosen candidate, from the scalar solver (its root was counted already)."""
        return _double_base_root(float(error_p[position]), float(error_n[position]), a, b, self.cost_positive,
                                 self.cost_negative)

    def _largest_root(self, error_p: np.ndarray, error_n: np.ndarray, a: float, b: float) -> tuple[int, float]:
        """``selection="alpha"``: position and step of a candidate with the largest root."""
        if self.search == "conditional":
            return self._conditional_search(error_p, error_n, a, b)
        solved = _pareto_candidates(error_p, error_n) if self.search == "pareto" else np.arange(error_p.size)
        roots = self._roots(error_p[solved], error_n[solved], a, b)
        best = int(np.argmax(roots))
        return int(solved[best]), float(roots[best])

    def _smallest_bound(self, error_p: np.ndarray, error_n: np.ndarray, a: float, b: float, p: float,
                        q: float) -> tuple[int, float | None]:
        """``selection="loss"``: position of the first candidate whose optimal bound ties with the smallest.

        Also returns its step when the bound search has solved it already with the scalar solver
        (as the grid's centre), else None.
        """
        known = None
        if self.search == "pareto":
            # a dominated candidate may still tie with the best within the tolerance and come first in
            # pool order; the bound screening keeps every such candidate
            survivors, known = self._bound_candidates(error_p, error_n, a, b, p, q)
            solved = np.union1d(_pareto_candidates(error_p, error_n), survivors)
        elif self.search == "bound":
            solved, known = self._bound_candidates(error_p, error_n, a, b, p, q)
        else:
            solved = np.arange(error_p.size)
        if solved.size == 1:  # nothing to compare; its root is solved once, for the step
            position = int(solved[0])
            if known is not None and known[0] == position:
                return position, known[1]
            self.root_searches += 1
            return position, None
        roots = self._roots(error_p[solved], error_n[solved], a, b)
        loss = _bound(roots, p * error_p[solved], p * (1 - error_p[solved]), q * error_n[solved],
                      q * (1 - error_n[solved]), self.cost_positive, self.cost_negative)
        return int(solved[_first_smallest(loss)]), None

    def _bound_candidates(self, error_p: np.ndarray, error_n: np.ndarray, a: float, b: float, p: float,
                          q: float) -> tuple[np.ndarray, tuple[int, float]]:
        """Positions of the candidates whose smallest bound may tie with the round's smallest.

        Also returns the grid's centre: the steepest candidate's position and its step (scalar solver).

        A candidate's bound ``L(alpha)`` is convex, so the tangents at two
        points that bracket its minimum meet below that minimum: a lower bound
        without a root search, while any value of ``L`` is an upper bound of
        the round's best. A candidate whose lower bound exceeds the best upper
        bound (plus the tie tolerance) cannot be chosen and is dropped. The
        brackets come from a coarse grid around the step of the steepest
        candidate at ``alpha = 0`` (one root search); then each remaining
        candidate is evaluated where its two tangents meet, which narrows its
        bracket and raises its lower bound, for a few rounds of screening.
        Candidates that no grid point brackets are kept.
        """
        steepest = int(np.argmin(a * error_p + b * error_n))
        centre = self._root(error_p[steepest], error_n[steepest], a, b)
        costs = (self.cost_positive, self.cost_negative)
        steepness = max(costs)
        # beyond this the exponentials would overflow
        far = EXPONENT_LIMIT / steepness
        grid = np.minimum([0.0, 0.5 * centre, centre, 2.0 * centre, 8.0 * centre, far], far)
        grid = grid[np.concatenate([[True], np.diff(grid) > 0])]
        errors = np.stack([np.ones_like(error_p), error_p, error_n], axis=1)
        value, slope = (errors @ coefficients for coefficients in _bound_coefficients(p, q, *costs, grid))
        # the candidate holding the best upper bound always stays, whatever rounding does to the others
        smallest = int(np.argmin(value))  # flat: a reduction along the short grid axis is slow
        best = smallest // grid.size
        threshold = float(value.flat[smallest]) * (1.0 + TIE_TOLERANCE + _BOUND_MARGIN)
        rows = np.arange(error_p.size)
        high = np.argmax(slope > 0, axis=1)
        bracketed = (high > 0) & (slope[rows, high] > 0)
        candidates = np.flatnonzero(~bracketed)
        candidates = candidates[self._possible(error_p, error_n, p, q, candidates, threshold, best)]
        inside = np.flatnonzero(bracketed)
        high = high[inside]
        low = (grid[high - 1], value[inside, high - 1], slope[inside, high - 1])
        high = (grid[high], value[inside, high], slope[inside, high])
        for _ in range(_BOUND_STEPS):
            meet, lower = _tangents_meet(low, high, steepness)
            keep = np.flatnonzero((lower <= threshold) | (inside == best))
            keep = keep[self._possible(error_p, error_n, p, q, inside[keep], threshold, best)]
            inside = inside[keep]
            if inside.size == 0 or inside.size + candidates.size <= 1:
                break
            meet = meet[keep]
            low, high = tuple(part[keep] for part in low), tuple(part[keep] for part in high)
            value, slope = (np.einsum("ij,ji->i", errors[inside], coefficients)
                            for coefficients in _bound_coefficients(p, q, *costs, meet))
            if value.min() * (1.0 + TIE_TOLERANCE + _BOUND_MARGIN) < threshold:
                best = int(inside[np.argmin(value)])
                threshold = float(value.min()) * (1.0 + TIE_TOLERANCE + _BOUND_MARGIN)
            rising = slope > 0
            low = tuple(np.where(rising, old, new) for old, new in zip(low, (meet, value, slope)))
            high = tuple(np.where(rising, new, old) for old, new in zip(high, (meet, value, slope)))
        return np.sort(np.concatenate([candidates, inside])), (steepest, centre)

    @staticmethod
    def _possible(error_p: np.ndarray, error_n: np.ndarray, p: float, q: float, candidates: np.ndarray,
                  threshold: float, best: int) -> np.ndarray:
        """Mask of ``candidates`` not ruled out by the sum of the class parts' own minima over ``alpha >= 0``."""
        if candidates.size == 0:
            return np.zeros(0, dtype=bool)
        separate = p * _class_part_minimum(error_p[candidates]) + q * _class_part_minimum(error_n[candidates])
        return (separate <= threshold) | (candidates == best)

    def _roots(self, error_p: np.ndarray, error_n: np.ndarray, a: float, b: float) -> np.ndarray:
        """Solve the polynomial for each candidate, counting the searches."""
        self.root_searches += error_p.size
        return _double_base_roots(error_p, error_n, a, b, self.cost_positive, self.cost_negative)

    def _root(self, error_p: float, error_n: float, a: float, b: float) -> float:
        """Solve the polynomial for one candidate, counting the search."""
        self.root_searches += 1
        return _double_base_root(float(error_p), float(error_n), a, b, self.cost_positive, self.cost_negative)

    def _improves(self, error_p: np.ndarray, error_n: np.ndarray, a: float, b: float,
                  alpha: float) -> np.ndarray:
        """Improvement Condition ``c . r < s`` against the root ``x = exp(alpha)``.

        With both sides divided by ``x^C_P`` (same sign, no overflow):
        ``r = (2 cosh(C_P alpha), 2 cosh(C_N alpha))`` and
        ``s = S(x) x^-C_P = a x^-C_P + b x^-C_N``. It holds exactly when the
        candidate's root is larger than ``x``.
        """
        r_p = 2.0 * math.cosh(min(abs(self.cost_positive * alpha), EXPONENT_LIMIT))
        r_n = 2.0 * math.cosh(min(abs(self.cost_negative * alpha), EXPONENT_LIMIT))
        s = a * math.exp(-self.cost_positive * alpha) + b * math.exp(-self.cost_negative * alpha)
        return a * error_p * r_p + b * error_n * r_n < s

    def _conditional_search(self, error_p: np.ndarray, error_n: np.ndarray, a: float,
                            b: float) -> tuple[int, float]:
        """The paper's sequential Conditional Search over the contributing candidates.

        Candidates are tested in pool order against the best root so far,
        a block at a time (vectorised); the first one that satisfies the
        Improvement Condition is solved and becomes the best, and the scan
        goes on after it. Blocks start small, because the next improvement
        is usually close, and double while none is found, so a round costs
        about one pass over the pool plus one block per root search.
        """
        position = 0
        alpha = self._root(error_p[0], error_n[0], a, b)
        start, block = 1, _SCAN_BLOCK
        while start < error_p.size:
            stop = min(error_p.size, start + block)
            improves = self._improves(error_p[start:stop], error_n[start:stop], a, b, alpha)
            if improves.any():
                candidate = start + int(np.argmax(improves))
                root = self._root(error_p[candidate], error_n[candidate], a, b)
                # the condition saturates for extreme costs and steps (cosh beyond EXPONENT_LIMIT), so a
                # candidate that passes it is taken only if its root is indeed larger
                if root > alpha:
                    position, alpha = candidate, root
                start, block = candidate + 1, _SCAN_BLOCK
            else:
                start, block = stop, 2 * block
        return position, alpha

    def _first_tied(self, error_p: np.ndarray, error_n: np.ndarray, a: float, b: float, position: int,
                    alpha: float) -> tuple[int, float]:
        """Apply the tie rule for ``selection="alpha"``: the first candidate whose root is within tolerance.

        ``position`` holds the largest root ``alpha``. The test ``root >=
        alpha_low`` is the Improvement Condition at ``alpha_low`` (or
        equality), so it needs no root search; as that condition saturates
        for extreme costs and steps, a candidate before ``position`` that
        passes it is solved (and counted) to confirm. Returns the position
        and the step.
        """
        alpha_low = alpha - TIE_TOLERANCE * alpha
        r_p = 2.0 * np.cosh(min(self.cost_positive * alpha_low, EXPONENT_LIMIT))
        r_n = 2.0 * np.cosh(min(self.cost_negative * alpha_low, EXPONENT_LIMIT))
        s = a * np.exp(-self.cost_positive * alpha_low) + b * np.exp(-self.cost_negative * alpha_low)
        # a little slack, as rounding can tip the test either way for a root right at alpha_low; the
        # root of each passing candidate decides
        left = a * error_p[:position] * r_p + b * error_n[:position] * r_n
        passing = np.flatnonzero(left <= s + 16 * _EPS * (left + s))
        for candidate in passing:
            root = self._root(error_p[candidate], error_n[candidate], a, b)
            if root >= alpha_low:
                return int(candidate), root
        return position, alpha
