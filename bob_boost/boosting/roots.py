"""The step equations of AdaBoostDB and Cost-Sensitive AdaBoost, and their root finders.

A stump's step ``alpha`` minimises the bound after the step; both algorithms write its optimality condition
as an equation with exactly one root: AdaBoostDB's double-base polynomial in ``x = exp(alpha)``, solved here
multiplied by ``x^{-C_P}`` and written in ``alpha`` (:func:`double_base_roots` for many candidates at once,
:func:`double_base_root` for one, in plain floats), and Cost-Sensitive AdaBoost's hyperbolic equation
(:func:`hyperbolic_roots`, vectorised, or :func:`hyperbolic_roots_brent`, the paper's one scalar search per
candidate). The vectorised solvers take Newton steps kept inside a closed-form bracket (:func:`bracket_root`,
:func:`bracketed_newton`). :class:`DoubleBaseEquation` and :class:`HyperbolicEquation` bind one round's
equation to a :class:`RootCounter`, which counts every root searched in a training run.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Callable

import numpy as np
import scipy.optimize

from ..losses.exponential import EXPONENT_LIMIT

logger = logging.getLogger(__name__)

#: Iteration limit of the bracketed Newton search (it usually converges in under 10).
_MAX_ITERATIONS = 200
#: A step function whose value is below this times the sum of its terms' sizes is at rounding level.
_NOISE = 8 * np.finfo(np.float64).eps
_EPS = float(np.finfo(np.float64).eps)
_TINY = float(np.finfo(np.float64).tiny)


class RootCounter:
    """The number of step equations solved: one per candidate whose root is searched.

    A trainer starts one for each call of ``train`` and passes it to the equations it solves
    (:class:`DoubleBaseEquation`, :class:`HyperbolicEquation`), which add what they solve.
    """

    __slots__ = ("searches",)

    def __init__(self) -> None:
        #: Roots searched so far.
        self.searches = 0

    def add(self, number: int) -> None:
        """Count ``number`` more root searches."""
        self.searches += number


def saturating_exp(values: np.ndarray) -> np.ndarray:
    """``exp`` saturating at ``exp(EXPONENT_LIMIT)`` so that ``0 * exp(...)`` stays 0."""
    return np.exp(np.minimum(values, EXPONENT_LIMIT))


def infinite_step(wrong_positive: float, right_positive: float, wrong_negative: float,
                  right_negative: float) -> float | None:
    """``+inf`` / ``-inf`` when a weak learner's step equation has no finite root, else None.

    That is when the learner is right (wrong) on every weighted sample, given its misclassified and correctly
    classified weight per class.
    """
    if wrong_positive + wrong_negative == 0:
        return np.inf
    if right_positive + right_negative == 0:
        return -np.inf
    return None


def bracket_root(up: np.ndarray, vp: np.ndarray, un: np.ndarray, vn: np.ndarray, cost_positive: float,
                 cost_negative: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bracket and first guess for the root of ``up e^{C_P a} - vp e^{-C_P a} + un e^{C_N a} - vn e^{-C_N a}``.

    All coefficients are >= 0 and every candidate has ``up + un > 0`` and
    ``vp + vn > 0``, so the increasing function has one finite root. With
    ``U = up + un`` and ``V = vp + vn``: a root ``a >= 0`` satisfies
    ``up e^{C_P a} <= V`` (and likewise for ``un``), a root ``a <= 0``
    satisfies ``vp e^{-C_P a} <= U``; these give the bracket ends.

    Parameters
    ----------
    up, vp, un, vn : numpy.ndarray
        (#candidates,) coefficients of the growing and shrinking exponentials.
    cost_positive, cost_negative : float
        The costs ``C_P`` and ``C_N``.

    Returns
    -------
    tuple of numpy.ndarray
        ``(lower, upper, guess)``: the bracket ends and a first guess inside them.
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


def bracketed_newton(function: Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]],
                     lower: np.ndarray, upper: np.ndarray, guess: np.ndarray) -> np.ndarray:
    """Roots of increasing functions, one per element, by Newton steps kept inside a bracket.

    A Newton step that leaves the bracket, or that is more than half the
    previous move (Newton crawls along a flat exponential tail, a fixed
    distance per step), is replaced by bisection. Each element stops on its
    own -- after a Newton step from a value at rounding level of its
    magnitude, or a step or bracket below rounding of ``alpha`` -- so its
    result does not depend on which other elements are solved along with it.

    Parameters
    ----------
    function : callable
        ``function(alpha, index)`` returns the values, slopes and magnitudes
        (sum of the absolute values of the terms) of the functions ``index``
        at ``alpha``.
    lower, upper, guess : numpy.ndarray
        (#functions,) bracket ends and first guesses (not modified).

    Returns
    -------
    numpy.ndarray
        (#functions,) roots.
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


def double_base_roots(error_positive: np.ndarray, error_negative: np.ndarray, a: float, b: float,
                      cost_positive: float, cost_negative: float) -> np.ndarray:
    """AdaBoostDB steps: ``log`` of the positive root of the double-base polynomial.

    The polynomial ``a e_P x^{2C_P} + b e_N x^{C_P+C_N} + b (e_N - 1) x^{C_P-C_N} + a (e_P - 1)``
    is multiplied by ``x^{-C_P}`` and written in ``alpha = log x``, which keeps
    the same root, stays finite for large costs and needs no integer exponents.

    Parameters
    ----------
    error_positive, error_negative : numpy.ndarray
        (#candidates,) class-conditional errors ``e_P``, ``e_N``. Every
        candidate must satisfy the Contribution Condition and have some error.
    a, b : float
        The round's static parameters.
    cost_positive, cost_negative : float
        The costs ``C_P`` and ``C_N``.

    Returns
    -------
    numpy.ndarray
        (#candidates,) steps ``alpha``.
    """
    up, vp = a * error_positive, a * (1.0 - error_positive)
    un, vn = b * error_negative, b * (1.0 - error_negative)

    def evaluate(alpha: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        grow_p, shrink_p = saturating_exp(cost_positive * alpha), saturating_exp(-cost_positive * alpha)
        grow_n, shrink_n = saturating_exp(cost_negative * alpha), saturating_exp(-cost_negative * alpha)
        terms = (up[index] * grow_p, vp[index] * shrink_p, un[index] * grow_n, vn[index] * shrink_n)
        value = terms[0] - terms[1] + terms[2] - terms[3]
        slope = cost_positive * (terms[0] + terms[1]) + cost_negative * (terms[2] + terms[3])
        return value, slope, sum(terms)

    lower, upper, guess = bracket_root(up, vp, un, vn, cost_positive, cost_negative)
    return bracketed_newton(evaluate, lower, upper, guess)


def double_base_root(error_positive: float, error_negative: float, a: float, b: float, cost_positive: float,
                     cost_negative: float) -> float:
    """One AdaBoostDB step, as :func:`double_base_roots` computes it, in plain floats.

    The Conditional Search solves one candidate at a time; scalar arithmetic
    avoids numpy's per-call overhead there (the two paths agree to rounding).
    Same parameters as :func:`double_base_roots`, for one candidate; returns
    0 for a candidate that does not contribute and ``inf`` for one whose
    scaled errors are 0.
    """
    up, vp = a * error_positive, a * (1.0 - error_positive)
    un, vn = b * error_negative, b * (1.0 - error_negative)
    total_up, total_down = up + un, vp + vn
    if total_up >= total_down:
        return 0.0
    if total_up == 0.0:  # nothing misclassified once scaled: the root is at infinity
        return math.inf
    # differences of logarithms, as in bracket_root: a quotient of a subnormal term could overflow
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


def hyperbolic_roots(wrong_positive: np.ndarray, right_positive: np.ndarray, wrong_negative: np.ndarray,
                     right_negative: np.ndarray, cost_positive: float, cost_negative: float) -> np.ndarray:
    """Cost-Sensitive AdaBoost steps: the roots ``alpha`` of the hyperbolic equation.

    ``2 C_P B cosh(C_P alpha) + 2 C_N D cosh(C_N alpha) = C_P T_P e^{-C_P alpha} + C_N T_N e^{-C_N alpha}``

    with ``B``, ``D`` the misclassified positive / negative weight and
    ``T_P = B + right_positive``, ``T_N = D + right_negative``.

    Parameters
    ----------
    wrong_positive, right_positive, wrong_negative, right_negative : numpy.ndarray
        (#candidates,) misclassified and correctly classified weight per
        class. Every candidate must have some error and some correct weight.
    cost_positive, cost_negative : float
        The costs ``C_P`` and ``C_N``.

    Returns
    -------
    numpy.ndarray
        (#candidates,) steps ``alpha`` (negative where flipping the stump helps).
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

    lower, upper, guess = bracket_root(cost_positive * wrong_positive, cost_positive * right_positive,
                                       cost_negative * wrong_negative, cost_negative * right_negative,
                                       cost_positive, cost_negative)
    return bracketed_newton(evaluate, lower, upper, guess)


def hyperbolic_equation(alpha: float, wrong_positive: float, wrong_negative: float, total_positive: float,
                        total_negative: float, cost_positive: float, cost_negative: float) -> float:
    """Left minus right side of the hyperbolic equation of one candidate, in plain floats."""
    arg_p = min(max(cost_positive * alpha, -EXPONENT_LIMIT), EXPONENT_LIMIT)
    arg_n = min(max(cost_negative * alpha, -EXPONENT_LIMIT), EXPONENT_LIMIT)
    hyperbolic = 2 * (cost_positive * wrong_positive * math.cosh(arg_p)
                      + cost_negative * wrong_negative * math.cosh(arg_n))
    exponential = cost_positive * total_positive * math.exp(-arg_p) + cost_negative * total_negative * math.exp(-arg_n)
    return hyperbolic - exponential


def hyperbolic_roots_brent(wrong_positive: np.ndarray, right_positive: np.ndarray,
                           wrong_negative: np.ndarray, right_negative: np.ndarray, cost_positive: float,
                           cost_negative: float) -> np.ndarray:
    """The roots of :func:`hyperbolic_roots`, one scalar Brent search (``scipy.optimize.brentq``) per candidate.

    This Python loop over the candidates is deliberate: it is Cost-Sensitive
    AdaBoost as Algorithm 1 of the AdaBoostDB paper states it (a scalar root
    search per weak learner, Zeroin in the paper), the baseline against which
    the paper measures AdaBoostDB's training time. The brackets are the
    closed-form ones of the vectorised search; when rounding gives both ends
    the same sign, the root is within rounding of the end nearer to zero
    value, which is returned. Same parameters and result as
    :func:`hyperbolic_roots`.
    """
    lower, upper, _ = bracket_root(cost_positive * wrong_positive, cost_positive * right_positive,
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
            root, result = scipy.optimize.brentq(hyperbolic_equation, low, high, args=arguments, xtol=tiny,
                                                 rtol=4 * eps, maxiter=_MAX_ITERATIONS, full_output=True,
                                                 disp=False)
        except ValueError:  # no sign change between the ends: rounding at a bracket end
            root = min((low, high), key=lambda end: abs(hyperbolic_equation(end, *arguments)))
        else:
            if not result.converged:
                logger.warning("root search: a step did not converge in %d iterations", _MAX_ITERATIONS)
        roots[k] = root
    return roots


#: The hyperbolic solvers by the name ``CostSensitiveAdaBoostTrainer(root_search=...)`` gives them.
HYPERBOLIC_SOLVERS: dict[str, Callable[..., np.ndarray]] = {"vectorised": hyperbolic_roots,
                                                            "scalar": hyperbolic_roots_brent}
ROOT_SEARCHES = tuple(HYPERBOLIC_SOLVERS)


class DoubleBaseEquation:
    """One round's AdaBoostDB step equation, solved for candidates given by their class errors.

    Parameters
    ----------
    a, b : float
        The round's static parameters.
    cost_positive, cost_negative : float
        The costs ``C_P`` and ``C_N``.
    counter : RootCounter
        Counts the searches of :meth:`roots` and :meth:`root`.
    """

    __slots__ = ("a", "b", "cost_positive", "cost_negative", "counter")

    def __init__(self, a: float, b: float, cost_positive: float, cost_negative: float,
                 counter: RootCounter) -> None:
        self.a, self.b = a, b
        self.cost_positive, self.cost_negative = cost_positive, cost_negative
        self.counter = counter

    def roots(self, error_positive: np.ndarray, error_negative: np.ndarray) -> np.ndarray:
        """Steps of many candidates (:func:`double_base_roots`), counting one search each."""
        self.counter.add(error_positive.size)
        return double_base_roots(error_positive, error_negative, self.a, self.b, self.cost_positive,
                                 self.cost_negative)

    def root(self, error_positive: float, error_negative: float) -> float:
        """Step of one candidate (:func:`double_base_root`), counting one search."""
        self.counter.add(1)
        return self.step(error_positive, error_negative)

    def step(self, error_positive: float, error_negative: float) -> float:
        """Step of one candidate from the scalar solver, not counted: the step stored for a candidate solved
        (and counted) by :meth:`roots` already, so that whatever the search the stored step comes from the same
        solver and all searches give the same bits."""
        return double_base_root(float(error_positive), float(error_negative), self.a, self.b, self.cost_positive,
                                self.cost_negative)


class HyperbolicEquation:
    """One round's Cost-Sensitive AdaBoost step equation, solved by one of :data:`ROOT_SEARCHES`.

    Parameters
    ----------
    cost_positive, cost_negative : float
        The costs ``C_P`` and ``C_N``.
    root_search : {"vectorised", "scalar"}
        The solver (:data:`HYPERBOLIC_SOLVERS`).
    counter : RootCounter
        Counts the searches of :meth:`roots`.
    """

    __slots__ = ("cost_positive", "cost_negative", "solve", "counter")

    def __init__(self, cost_positive: float, cost_negative: float, root_search: str, counter: RootCounter) -> None:
        self.cost_positive, self.cost_negative = cost_positive, cost_negative
        self.solve = HYPERBOLIC_SOLVERS[root_search]
        self.counter = counter

    def roots(self, wrong_positive: np.ndarray, right_positive: np.ndarray, wrong_negative: np.ndarray,
              right_negative: np.ndarray) -> np.ndarray:
        """Steps of the candidates (see :func:`hyperbolic_roots`), counting one search each."""
        self.counter.add(wrong_positive.size)
        return self.solve(wrong_positive, right_positive, wrong_negative, right_negative, self.cost_positive,
                          self.cost_negative)
