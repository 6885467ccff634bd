"""Step rules: how a round's weak machine gets its weight.

- :func:`fit_weights`: L-BFGS on the loss along the weak machine's outputs, one weight per output
  (bob.learn.boosting's rule, the generic trainer's); :func:`fit_line_step` also says what the loss was
  before and after, which the loop's descent guarantee reads;
- :func:`newton_fit_weights`: the same minimiser for a separable built-in loss (exponential, logit,
  squared) by a compiled one-dimensional Newton solve per output (:mod:`bob_boost.engine.newton`), which
  the generic trainer uses on quantised features;
- :func:`optimal_step`: the minimiser of BAdaCost's convex step function (CMEL along the margin vectors), its
  search :func:`exponential_root` on sums that may be made elsewhere (row partitions);
- :func:`adaboost_m1_step`: AdaBoost.M1's ``log((1 - E) / E)``;
- :func:`capped_step`: the finite step that replaces an infinite one (a weak learner without costly error);
- :func:`adac2_m1_step`: AdaC2.M1's step, AdaC2's on a multi-class weak learner's weighted confusions;
- :func:`multiboost_step`: MultiBoost's exact line search along a margin vector;
- :func:`reweighting_step`: the closed-form step of the binary cost-reweighting family (AdaC1-3, AdaCost, CSB,
  AsymBoost: :mod:`bob_boost.boosting.reweighting`), ``(1/2) ln`` of a ratio of weighted agreements;
- :func:`double_base_root` / :func:`double_base_roots`: AdaBoostDB's step, the positive root of its
  polynomial in ``exp(alpha)`` (one stump / every candidate of the pool at once);
- :func:`hyperbolic_roots`: Cost-Sensitive AdaBoost's step, the root of its hyperbolic equation, for every
  candidate at once;
- shrinkage is a factor the algorithms apply to these.

The two cost-sensitive roots are in :mod:`bob_boost.boosting.roots`, vectorised over the stump pool's
candidates they are solved for; they are listed here so that every step
rule is found in one place.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import logging
import warnings

import numpy as np
import scipy.optimize

from ..exceptions import ConvergenceWarning, InvalidValueError
from ..engine import line_objective, newton
from ..losses.base import LossFunction
from ..losses.base import weighted as weighted_terms
from ..losses.exponential import EXPONENT_LIMIT, ExponentialLoss
from ..losses.logit import LogitLoss
from ..losses.squared import SquaredLoss
from .roots import double_base_root, double_base_roots, hyperbolic_roots

__all__ = ["DESCENT_TOLERANCE", "GRADIENT_TOLERANCE", "PERFECT_LEARNER_WEIGHT_RATIO", "LineStep", "adac2_m1_step",
           "adaboost_m1_step", "capped_step", "compiled_loss", "double_base_root", "double_base_roots",
           "exponential_derivative", "exponential_root", "fit_line_step", "fit_weights", "hyperbolic_roots",
           "minimise_line_step", "minimise_weights", "multiboost_step", "newton_fit_step", "newton_fit_weights",
           "optimal_step", "proves_descent", "reweighting_step", "unbounded"]

logger = logging.getLogger(__name__)


#: L-BFGS stops when the per-sample mean of the loss derivative is below this.
GRADIENT_TOLERANCE = 1e-12

#: A round's training loss may rise by this much relative to its value and still count as not rising: the
#: rounding of two sums of the same terms, never a real increase (the descent guarantee's tolerance).
DESCENT_TOLERANCE = 1e-13

#: The descent guarantee halves a round's weight at most this many times (to 2^-30 of it, about 1e-9)
#: before it rejects the round.
MAX_HALVINGS = 30


def fit_weights(loss_function: LossFunction, targets: np.ndarray, previous_scores: np.ndarray,
                current_scores: np.ndarray, sample_weight: np.ndarray | None = None,
                n_threads: int = 1) -> np.ndarray:
    """Find the weight(s) of a new weak machine with L-BFGS, starting at zero.

    Minimises ``loss_function.loss_sum`` with its derivative
    ``loss_gradient_sum`` (both from one call of ``loss_and_gradient_sum``),
    one weight per output, each sample's loss multiplied by ``sample_weight``
    when given. The objective is divided by the number of samples so that one
    gradient tolerance fits data sets of any size. The exponential and logit
    losses (exactly these classes) get the same values and gradients, bit for
    bit, from the compiled :class:`~bob_boost.engine.line_objective.LineObjective`,
    on ``n_threads`` threads.

    Returns
    -------
    numpy.ndarray
        (#outputs,) weights.
    """
    return fit_line_step(loss_function, targets, previous_scores, current_scores, sample_weight, n_threads).weights


@dataclass(frozen=True)
class LineStep:
    """A step rule's weights, with what it knows of the loss along the weak machine's outputs.

    Attributes
    ----------
    weights : numpy.ndarray
        (#outputs,) weights.
    start, end : float or None
        The summed (weighted) training loss at weight 0 and at ``weights``, when the rule evaluated them.
    converged : bool
        Whether the rule met its own stopping criterion.
    """

    weights: np.ndarray
    start: float | None
    end: float | None
    converged: bool


def proves_descent(line: LineStep, learning_rate: float, convex: bool) -> bool:
    """Whether a step rule's weights, times ``learning_rate`` (<= 1), cannot raise the training loss.

    L-BFGS reports the loss at 0 and at its weights; a converged Newton solve minimises a convex loss along
    the weak machine. Shrunk weights lie between 0 and the rule's, where a convex loss is no higher than at
    either end. (The exponential losses' cap at ``exp(600)`` makes them flat, not convex, beyond margins of
    -600; no training reaches it.) A rule that did not converge proves nothing.
    """
    if not line.converged:
        return False
    if line.start is not None:
        proven = line.end <= line.start + DESCENT_TOLERANCE * abs(line.start)
    else:
        proven = convex
    return proven and (learning_rate == 1.0 or convex)


def descending_weight(weight: np.ndarray, before: float, loss_at: Callable[[np.ndarray, int], float],
                      trainer: str, round_index: int, loss_name: str) -> tuple[np.ndarray, float] | None:
    """The descent guarantee's rule: ``weight``, or the largest of its :data:`MAX_HALVINGS` halvings whose
    training loss ``loss_at(weight, halvings)`` is not above ``before`` (to :data:`DESCENT_TOLERANCE`),
    with that loss; None, with a :class:`~bob_boost.exceptions.ConvergenceWarning` naming ``trainer``, the
    round and the loss, when none is."""
    weight = np.asarray(weight, dtype=np.float64)
    for halvings in range(MAX_HALVINGS + 1):
        after = loss_at(weight, halvings)
        if after <= before + DESCENT_TOLERANCE * abs(before):
            if halvings:
                logger.info("%s round %d: weight halved %d times so that the training loss decreases",
                            trainer, round_index + 1, halvings)
            return weight, after
        weight = weight * 0.5
    warnings.warn(f"{trainer} round {round_index + 1}: no step along the weak machine decreases the training "
                  f"loss of {loss_name} ({before:.6g}; is its loss_gradient the derivative of its loss?); the round "
                  f"is rejected and training stopped", ConvergenceWarning, stacklevel=3)
    return None


def fit_line_step(loss_function: LossFunction, targets: np.ndarray, previous_scores: np.ndarray,
                  current_scores: np.ndarray, sample_weight: np.ndarray | None = None,
                  n_threads: int = 1) -> LineStep:
    """:func:`fit_weights`' L-BFGS weights, with the loss at 0 and at the weights (from the same objective)."""
    objective = _line_objective(loss_function, targets, previous_scores, current_scores, sample_weight, n_threads)
    return minimise_line_step(objective, targets.shape[1], targets.shape[0])


def _line_objective(loss_function: LossFunction, targets: np.ndarray, previous_scores: np.ndarray,
                    current_scores: np.ndarray, sample_weight: np.ndarray | None,
                    n_threads: int = 1) -> Callable[[np.ndarray], tuple[float, np.ndarray]]:
    """The compiled objective of :mod:`~bob_boost.engine.line_objective` where it applies, else the loss's own."""
    code = compiled_loss(loss_function)
    arrays = (targets, previous_scores, current_scores)
    if code in line_objective.SUPPORTED and all(
            isinstance(a, np.ndarray) and a.dtype == np.float64 and a.ndim == 2 and a.shape == targets.shape
            and (a.flags.c_contiguous or a.flags.f_contiguous) for a in arrays) and (
            sample_weight is None or (isinstance(sample_weight, np.ndarray) and sample_weight.dtype == np.float64
                                      and sample_weight.shape == (targets.shape[0],))):
        orders = _generic_orders(loss_function, arrays, sample_weight is not None)
        return line_objective.LineObjective(code, targets, previous_scores, current_scores, sample_weight,
                                            EXPONENT_LIMIT, orders, n_threads)

    def objective(alpha: np.ndarray) -> tuple[float, np.ndarray]:
        return loss_function.loss_and_gradient_sum(alpha, targets, previous_scores, current_scores, sample_weight)
    return objective


#: numpy computes into a temporary operand of at least this many bytes in place ("temporary elision"), so
#: that a result may take the temporary's memory order instead of its other operand's.
_ELISION_BYTES = 256 * 1024


def _generic_orders(loss_function: LossFunction, arrays: tuple[np.ndarray, ...], weighted: bool) -> tuple[str, str]:
    """The memory order of the loss terms and of the gradient terms times ``h`` that the generic path sums.

    numpy lays an elementwise result out as its operands are laid out, so
    the generic path runs here on stand-ins laid out as ``arrays`` (the loop's
    weak outputs and scores are often Fortran-ordered): 3 rows, or, for arrays
    numpy would elide temporaries of, just enough rows to be elided too.
    """
    columns = max(2, arrays[0].shape[1])
    rows = 3
    if arrays[0].size * arrays[0].itemsize >= _ELISION_BYTES:
        rows = max(rows, -(-_ELISION_BYTES // (columns * arrays[0].itemsize)))

    def stand_in(a: np.ndarray) -> np.ndarray:
        return np.ones((rows, columns), order="C" if a.flags.c_contiguous else "F")
    targets, previous, current = (stand_in(a) for a in arrays)
    values, gradients = loss_function.loss_and_gradient(targets, previous + np.zeros(columns) * current)
    if weighted:
        values, gradients = weighted_terms(values, np.ones(rows)), weighted_terms(gradients, np.ones(rows))
    return tuple("C" if a.flags.c_contiguous else "F" for a in (values, gradients * current))


def minimise_weights(objective: Callable[[np.ndarray], tuple[float, np.ndarray]], number_of_outputs: int,
                     number_of_samples: int) -> np.ndarray:
    """L-BFGS from zero on ``objective(alpha) -> (summed loss, its gradient)``: :func:`fit_weights`' search,
    for sums computed anywhere (row partitions, :mod:`bob_boost.boosting.partitioned_steps`).

    The objective is divided by ``number_of_samples`` so that one gradient tolerance fits data sets of any size.
    """
    return minimise_line_step(objective, number_of_outputs, number_of_samples).weights


def minimise_line_step(objective: Callable[[np.ndarray], tuple[float, np.ndarray]], number_of_outputs: int,
                       number_of_samples: int) -> LineStep:
    """:func:`minimise_weights`' search, with the objective's values at 0 (its first call) and at the result,
    and whether it converged."""
    scale = 1.0 / number_of_samples
    values: list[float] = []

    def scaled(alpha: np.ndarray) -> tuple[float, np.ndarray]:
        value, gradient = objective(alpha)
        if not values:
            values.append(float(value))
        return value * scale, gradient * scale

    result = scipy.optimize.minimize(
        scaled, np.zeros(number_of_outputs), jac=True, method="L-BFGS-B",
        options={"ftol": 1e-15, "gtol": GRADIENT_TOLERANCE, "maxiter": 500})
    # At machine precision the line search can stop with an "abnormal" status
    # although the minimum is reached; only a large remaining gradient matters.
    converged = bool(result.success or np.max(np.abs(result.jac)) <= 1e6 * GRADIENT_TOLERANCE)
    if not converged:
        logger.warning("L-BFGS stopped before converging (%s); gradient %s", result.message, result.jac)
    return LineStep(np.asarray(result.x, dtype=np.float64), values[0] if values else None,
                    float(result.fun) / scale, converged)


#: The built-in losses with a compiled Newton form (exact classes: a subclass may change the loss).
_COMPILED_LOSSES = {ExponentialLoss: newton.EXPONENTIAL, LogitLoss: newton.LOGIT, SquaredLoss: newton.SQUARED}


def compiled_loss(loss_function: LossFunction) -> int | None:
    """The :mod:`~bob_boost.engine.newton` code of ``loss_function``, or None when it has no compiled form."""
    return _COMPILED_LOSSES.get(type(loss_function))


def newton_fit_weights(loss_function: LossFunction, targets: np.ndarray, previous_scores: np.ndarray,
                       current_scores: np.ndarray, sample_weight: np.ndarray | None = None,
                       n_threads: int = 1) -> np.ndarray:
    """The weights :func:`fit_weights` finds, by a compiled Newton solve per output.

    Only for a loss with :func:`compiled_loss`; the objective is separable
    per output, so each weight is a one-dimensional minimisation. Newton's
    weights are the minimiser up to rounding (tested against closed forms);
    L-BFGS's stop on its line search about 1e-8 relative from it, and the
    two rules agree to that (tested at 1e-7).
    """
    return newton_fit_step(loss_function, targets, previous_scores, current_scores, sample_weight,
                           n_threads).weights


def newton_fit_step(loss_function: LossFunction, targets: np.ndarray, previous_scores: np.ndarray,
                    current_scores: np.ndarray, sample_weight: np.ndarray | None = None,
                    n_threads: int = 1) -> LineStep:
    """:func:`newton_fit_weights`' weights and whether the solve converged (no loss values: it computes none)."""
    code = compiled_loss(loss_function)
    weights, converged = newton.newton_weights(code, np.ascontiguousarray(targets, dtype=np.float64),
                                               np.ascontiguousarray(previous_scores, dtype=np.float64),
                                               np.ascontiguousarray(current_scores, dtype=np.float64),
                                               sample_weight, n_threads, EXPONENT_LIMIT)
    return LineStep(weights, None, None, converged)


#: A weak learner without costly errors has an infinite optimal step; it gets the step at which
#: the sample weights span this ratio (the range of float64 precision) instead, and training stops.
PERFECT_LEARNER_WEIGHT_RATIO = 1e16


def optimal_step(confusion, exponents) -> float:
    """Minimise ``phi(beta) = sum_ij confusion[i, j] * exp(beta * exponents[i, j])``.

    ``phi`` is convex, so its minimiser is the root of the increasing
    derivative ``sum_ij confusion[i, j] exponents[i, j] exp(beta exponents[i, j])``,
    found by bracketing (doubling the interval) and Brent's method.

    Parameters
    ----------
    confusion : array_like
        (K, K) non-negative weights ``S[i, j]`` (or any shape: a weight per term, e.g. per sample).
    exponents : array_like
        Finite exponents of ``confusion``'s shape, e.g. ``C2 = K/(K-1) C*``.

    Returns
    -------
    float
        The minimiser; ``+inf`` / ``-inf`` when ``phi`` decreases without
        bound in that direction (e.g. a weak learner making no costly error),
        0 when the derivative vanishes at 0.
    """
    weights = np.asarray(confusion, dtype=np.float64)
    values = np.asarray(exponents, dtype=np.float64)
    if weights.shape != values.shape:
        raise InvalidValueError(f"exponents: shape {values.shape} differs from confusion's {weights.shape}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise InvalidValueError("confusion: entries must be finite and non-negative")
    if not np.all(np.isfinite(values)):
        raise InvalidValueError("exponents: contains NaN or infinite values")
    active = weights > 0
    s, u = weights[active], values[active]
    if u.size == 0:
        return 0.0

    def derivative(beta: float, shift: float) -> float:
        return exponential_derivative(s, u, beta, shift)

    return exponential_root(float(np.sum(s * u)), float(u.min()), float(u.max()), derivative)


def exponential_root(slope: float, lowest: float, highest: float,
                     derivative: Callable[[float, float], float]) -> float:
    """The minimiser of the convex ``phi(beta) = sum_i s_i exp(beta u_i)`` (all ``s_i > 0``), from its sums:
    :func:`optimal_step`'s search, for terms held anywhere (row partitions sum them where they are).

    Parameters
    ----------
    slope : float
        ``phi'(0) = sum_i s_i u_i``.
    lowest, highest : float
        The smallest and largest exponent ``u_i``.
    derivative : callable
        ``derivative(beta, shift) = sum_i s_i u_i exp(beta u_i - shift)``; ``shift`` is the largest
        ``beta u_i`` (so that no term overflows), which the search computes from ``lowest`` and ``highest``
        (rounding is monotone, so it is exactly the largest of the products).

    Returns
    -------
    float
        As :func:`optimal_step`: ``+-inf`` when ``phi`` decreases without bound, 0 when ``slope`` is 0.
    """
    if slope == 0.0:
        return 0.0
    direction = -1.0 if slope < 0 else 1.0
    # phi is bounded in the descent direction only if some exponent grows along it
    if unbounded(slope, lowest, highest):
        return -direction * np.inf

    def scaled(beta: float) -> float:
        return derivative(beta, beta * highest if beta >= 0 else beta * lowest)

    near, far = 0.0, -direction / max(abs(lowest), abs(highest))
    while np.sign(scaled(far)) == np.sign(slope):
        near, far = far, 2.0 * far
    low, high = sorted((near, far))
    return float(scipy.optimize.brentq(scaled, low, high, xtol=1e-15, rtol=4 * np.finfo(float).eps))


def exponential_derivative(s: np.ndarray, u: np.ndarray, beta: float, shift: float) -> float:
    """``sum_i s_i u_i exp(beta u_i - shift)``: :func:`exponential_root`'s derivative of the terms ``(s, u)``."""
    return float(np.sum(s * u * np.exp(beta * u - shift)))


def unbounded(slope: float, lowest: float, highest: float) -> bool:
    """Whether :func:`exponential_root`'s ``phi`` decreases without bound (an infinite step: along the descent
    direction no exponent grows, e.g. a weak learner without costly errors)."""
    return slope != 0.0 and not (highest > 0 if slope < 0 else lowest < 0)


def adaboost_m1_step(confusion: np.ndarray, exponents: np.ndarray) -> float:
    """AdaBoost.M1's weight ``log((1 - E) / E)`` for the weighted error ``E``.

    Parameters
    ----------
    confusion : numpy.ndarray
        (K, K) weights of class-``i`` samples predicted ``j``.
    exponents : numpy.ndarray
        (K, K) 0|1 costs: positive where a prediction is wrong.

    Returns
    -------
    float
        0 when ``E >= 1/2`` (the algorithm stops), ``inf`` when ``E = 0``.
    """
    error = float(np.sum(confusion[exponents > 0]) / np.sum(confusion))
    if error >= 0.5:
        logger.info("AdaBoost.M1: weighted error %.6g >= 1/2", error)
        return 0.0
    return np.inf if error == 0 else float(np.log((1.0 - error) / error))


def adac2_m1_step(confusion: np.ndarray, class_costs: np.ndarray) -> float:
    """AdaC2.M1's step ``(1/2) ln(sum_i C_i S[i, i] / sum_i C_i sum_(j != i) S[i, j])``.

    ``S`` is the (K, K) weighted confusion matrix of the round's distribution and ``C_i`` the cost of class
    ``i``. With equal costs it is half of AdaBoost.M1's ``log((1 - E) / E)``.

    Returns
    -------
    float
        ``inf`` without a costly error, and not positive when the costly agreements do not outweigh the
        costly errors (the algorithm then stops).
    """
    costed = confusion * class_costs[:, np.newaxis]
    diagonal = np.eye(costed.shape[0], dtype=bool)
    # summed apart (not as the total less the trace), so that a tiny costly error keeps its digits
    correct, wrong = float(costed[diagonal].sum()), float(costed[~diagonal].sum())
    if wrong <= 0.0:
        return np.inf
    if correct <= 0.0:
        return -np.inf
    return float(0.5 * np.log(correct / wrong))


def multiboost_step(predicted_cost: float, other_cost: float, number_of_classes: int) -> float:
    """MultiBoost's step ``beta = (K-1)/K ln(B / ((K-1) A))`` along the margin vector of the predicted classes.

    With ``R[n, k] = C(l_n, k) exp(f_k(x_n))`` the terms of the loss ``sum_n sum_k C(l_n, k) exp(f_k(x_n))``,
    ``A = sum_n R[n, G(x_n)]`` and ``B = sum_n sum_(k != G(x_n)) R[n, k]``, adding ``beta`` times the margin
    vectors (1 at ``G(x)``, ``-1/(K-1)`` elsewhere) turns the loss into ``A e^beta + B e^(-beta/(K-1))``,
    whose minimiser this is.

    Returns
    -------
    float
        ``inf`` when ``A = 0`` (no costly prediction); not positive when ``B <= (K-1) A``.
    """
    if predicted_cost <= 0.0:
        return np.inf
    if other_cost <= 0.0:
        return -np.inf
    k = number_of_classes
    return float((k - 1) / k * np.log(other_cost / ((k - 1) * predicted_cost)))


def capped_step(exponents: np.ndarray) -> float:
    """The step given to a weak learner without costly errors instead of its infinite optimum.

    At this step the sample weights span :data:`PERFECT_LEARNER_WEIGHT_RATIO`, the range of float64
    precision; training stops after it.
    """
    return float(np.log(PERFECT_LEARNER_WEIGHT_RATIO) / np.abs(exponents).max())


def arc_gv_step(edge: float, minimum_margin: float) -> float:
    """Breiman's arc-gv weight ``(1/2) ln((1 + g) / (1 - g)) - (1/2) ln((1 + r) / (1 - r))`` of a +-1 weak machine
    of edge ``g = sum_i D_i y_i h(x_i)`` for an ensemble whose normalised minimum margin is ``r`` (0 before the
    first round): AdaBoost's weight less the one that would bring the margins to ``r``. An edge of 1 (no
    training error) gets the weight at which the sample weights span :data:`PERFECT_LEARNER_WEIGHT_RATIO`."""
    if edge >= 1.0:
        return float(np.log(PERFECT_LEARNER_WEIGHT_RATIO) / 2.0)
    if minimum_margin >= edge:  # no positive weight raises the margins (with the edge below 1: r < 1 too)
        return 0.0
    return float(0.5 * np.log((1.0 + edge) / (1.0 - edge)) - 0.5 * np.log((1.0 + minimum_margin)
                                                                          / (1.0 - minimum_margin)))


def reweighting_step(distribution: np.ndarray, agreement: np.ndarray, row_factors: np.ndarray | float,
                     agreement_factors: np.ndarray | float) -> float:
    """The step ``(1/2) ln(sum_i D_i w_i (1 + a_i u_i) / sum_i D_i w_i (1 - a_i u_i))`` of a +-1 weak machine.

    ``D`` is the round's distribution (summing to 1), ``u_i = y_i h(x_i)`` the agreements, ``w`` the row
    factors and ``a`` the agreement factors. With ``w = a = 1`` it is AdaBoost's ``(1/2) ln((1 - e) / e)``;
    the cost-reweighting algorithms (:mod:`bob_boost.boosting.reweighting`) choose ``w`` and ``a`` from the
    rows' costs. Written as two sums of non-negative terms (``|a_i| <= 1``), it has no cancellation when the
    weighted error is tiny.

    Returns
    -------
    float
        The step; ``inf`` when the denominator is 0 (no weighted disagreement), and not positive when the
        machine does no better than the rule asks (the algorithm then stops).
    """
    terms = distribution * row_factors
    scaled = agreement_factors * agreement
    numerator, denominator = float(np.sum(terms * (1.0 + scaled))), float(np.sum(terms * (1.0 - scaled)))
    if denominator <= 0.0:
        return np.inf
    if numerator <= 0.0:
        return -np.inf
    return float(0.5 * np.log(numerator / denominator))
