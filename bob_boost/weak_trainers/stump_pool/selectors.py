"""The per-round selection among the stump pool's candidates: conditions, selection rules and ties.

* The Contribution Condition (:func:`contributes`): a stump helps only if its cost-weighted error is below
  1/2, here by the relative margin :data:`CONTRIBUTION_MARGIN`.
* The Improvement Condition (:func:`improves`): whether a stump's AdaBoostDB root exceeds a known one,
  without solving for it.
* Cost-Sensitive AdaBoost's choice (:func:`smallest_bound_of_all`): every stump solved, the smallest bound
  kept; a stump without error (:func:`first_perfect`) is taken before any root is searched.
* The selection rules of AdaBoostDB (:data:`SELECTIONS`): :class:`LargestStep` (``"alpha"``, the paper's
  rule) and :class:`SmallestBound` (``"loss"``, exact greedy minimisation, Cost-Sensitive AdaBoost's rule).
  A search (:mod:`.searches`) proposes which candidates to solve; the rule solves them and chooses, among
  the contributing candidates of the round (:class:`Candidates`).

Ties: candidates whose steps (selection by alpha) or bounds (selection by loss) agree to within
:data:`TIE_TOLERANCE` (relative) count as equal, and the first in pool order (feature, then threshold, then
polarity +1 before -1) wins. This makes the result independent of rounding and of the search strategy.
"""
from __future__ import annotations

import math
from functools import cached_property
from typing import ClassVar

import numpy as np
import scipy.special

from ...exceptions import InvalidValueError
from ...losses.exponential import EXPONENT_LIMIT
from .bounds import bound_after_step
from ...boosting.roots import DoubleBaseEquation, HyperbolicEquation

#: Relative tolerance under which two alphas (or two bounds) count as a tie. Wider than the gradient
#: trainers' tolerances: alphas are roots solved numerically, and the bounds computed from them, which
#: resolve differences only to about eps / :data:`CONTRIBUTION_MARGIN` (~2e-10).
TIE_TOLERANCE = 1e-9
#: A stump contributes only if its cost-weighted error is below 1/2 by this relative margin. Steps
#: of stumps closer to 1/2 lower the bound by about 1e-12 or less, and the Improvement Condition and
#: the tie rule cannot compare them reliably (their resolution is about eps / margin).
CONTRIBUTION_MARGIN = 1e-6
_EPS = float(np.finfo(np.float64).eps)


def contributes(weighted_error: np.ndarray, weighted_total: np.ndarray | float = 1.0) -> np.ndarray:
    """Contribution Condition: mask of the candidates whose cost-weighted error is below half their total.

    For AdaBoostDB the weighted error is ``a eps_P + b eps_N`` and the total 1 (``V(1) < S(1)``); for
    Cost-Sensitive AdaBoost ``C_P B + C_N D`` out of ``C_P T_P + C_N T_N``. The margin
    :data:`CONTRIBUTION_MARGIN` makes both trainers stop, and skip steps at rounding level, alike.
    """
    return weighted_error < 0.5 * (1.0 - CONTRIBUTION_MARGIN) * weighted_total


def improves(equation: DoubleBaseEquation, error_positive: np.ndarray, error_negative: np.ndarray,
             alpha: float) -> np.ndarray:
    """Improvement Condition ``c . r < s`` against the root ``x = exp(alpha)``.

    With ``c = (a eps_P, b eps_N)`` and both sides divided by ``x^C_P`` (same sign, no overflow):
    ``r = (2 cosh(C_P alpha), 2 cosh(C_N alpha))`` and ``s = S(x) x^-C_P = a x^-C_P + b x^-C_N``. It
    holds exactly when the candidate's root is larger than ``x``.

    Parameters
    ----------
    equation : DoubleBaseEquation
        The round's equation (static parameters and costs).
    error_positive, error_negative : numpy.ndarray
        Class-conditional errors of the candidates to test.
    alpha : float
        The known step.

    Returns
    -------
    numpy.ndarray
        Mask of the candidates whose root is larger.
    """
    a, b, cost_positive, cost_negative = equation.a, equation.b, equation.cost_positive, equation.cost_negative
    r_p = 2.0 * math.cosh(min(abs(cost_positive * alpha), EXPONENT_LIMIT))
    r_n = 2.0 * math.cosh(min(abs(cost_negative * alpha), EXPONENT_LIMIT))
    s = a * math.exp(-cost_positive * alpha) + b * math.exp(-cost_negative * alpha)
    return a * error_positive * r_p + b * error_negative * r_n < s


def first_smallest(bounds: np.ndarray) -> int:
    """Position of the first bound within :data:`TIE_TOLERANCE` (relative) of the smallest."""
    return int(np.argmax(bounds <= bounds.min() * (1.0 + TIE_TOLERANCE)))


def first_perfect(wrong_positive: np.ndarray, wrong_negative: np.ndarray) -> int | None:
    """The first candidate without error on either class (its step is infinite), if any."""
    candidates = np.flatnonzero(wrong_positive + wrong_negative == 0)
    perfect = candidates[(wrong_positive[candidates] == 0) & (wrong_negative[candidates] == 0)]
    return int(perfect[0]) if perfect.size else None


def smallest_bound_of_all(wrong_positive: np.ndarray, right_positive: np.ndarray, wrong_negative: np.ndarray,
                          right_negative: np.ndarray, equation: HyperbolicEquation) -> tuple[int, float] | None:
    """Cost-Sensitive AdaBoost's choice: the first stump of smallest bound after its step, among all.

    Every candidate with a finite step (some error and some correct weight)
    is solved. A candidate whose root is negative is the mirror image of the
    opposite-polarity stump, which has the same bound and a positive root;
    so only positive steps that satisfy the Contribution Condition compete.

    Parameters
    ----------
    wrong_positive, right_positive, wrong_negative, right_negative : numpy.ndarray
        (#candidates,) misclassified and correctly classified weight per class, for the whole pool.
    equation : HyperbolicEquation
        The round's equation (it counts the root searches).

    Returns
    -------
    tuple of (int, float) or None
        The candidate and its step, or None when no candidate contributes.
    """
    index = np.flatnonzero((wrong_positive + wrong_negative > 0) & (right_positive + right_negative > 0))
    alpha = equation.roots(wrong_positive[index], right_positive[index], wrong_negative[index],
                           right_negative[index])
    cost_positive, cost_negative = equation.cost_positive, equation.cost_negative
    weighted_error = cost_positive * wrong_positive[index] + cost_negative * wrong_negative[index]
    weighted_total = (cost_positive * (wrong_positive[index] + right_positive[index])
                      + cost_negative * (wrong_negative[index] + right_negative[index]))
    useful = (alpha > 0) & contributes(weighted_error, weighted_total)
    if not useful.any():
        return None
    index, alpha = index[useful], alpha[useful]
    loss = bound_after_step(alpha, wrong_positive[index], right_positive[index], wrong_negative[index],
                            right_negative[index], cost_positive, cost_negative)
    chosen = first_smallest(loss)
    return int(index[chosen]), float(alpha[chosen])


class Candidates:
    """The contributing candidates of one AdaBoostDB round, with the round's equation.

    Parameters
    ----------
    error_positive, error_negative : numpy.ndarray
        (#candidates,) class-conditional errors, in pool order.
    equation : DoubleBaseEquation
        The round's step equation (it counts the root searches).
    log_total_positive, log_total_negative : float
        Logarithms of the classes' current total weights, for :attr:`shares`.
    """

    def __init__(self, error_positive: np.ndarray, error_negative: np.ndarray, equation: DoubleBaseEquation,
                 log_total_positive: float, log_total_negative: float) -> None:
        self.error_positive, self.error_negative = error_positive, error_negative
        self.equation = equation
        self._log_totals = log_total_positive, log_total_negative

    @cached_property
    def shares(self) -> tuple[float, float]:
        """``(p, q)``: the positives' and the negatives' shares of the current weight.

        Each is computed on its own so that the smaller one is not lost to rounding; only the rules and
        searches that compare bounds need them.
        """
        log_total_positive, log_total_negative = self._log_totals
        return (float(scipy.special.expit(log_total_positive - log_total_negative)),
                float(scipy.special.expit(log_total_negative - log_total_positive)))


class SelectionRule:
    """How a round's stump is chosen among the candidates a search proposes."""

    #: The rule's name, as ``AdaBoostDBTrainer(selection=...)`` gives it.
    selection: ClassVar[str]

    def pick(self, candidates: Candidates, error_positive: np.ndarray, error_negative: np.ndarray,
             roots: np.ndarray) -> int:
        """Index, among solved candidates with these errors and roots, of the rule's choice."""
        raise NotImplementedError

    def settle_ties(self, candidates: Candidates, position: int, alpha: float) -> tuple[int, float]:
        """Apply the tie rule to the choice at ``position`` with step ``alpha``; the default keeps it."""
        return position, alpha

    def choose(self, candidates: Candidates, solved: np.ndarray,
               known: tuple[int, float] | None) -> tuple[int, float]:
        """Solve the proposed candidates and choose; returns the position (among ``candidates``) and the step.

        Parameters
        ----------
        candidates : Candidates
            The round's contributing candidates.
        solved : numpy.ndarray
            Increasing positions of the candidates to solve: all those that may be chosen.
        known : tuple of (int, float), optional
            A position whose scalar-solver step the search has computed already, and that step.
        """
        equation = candidates.equation
        error_positive, error_negative = candidates.error_positive, candidates.error_negative
        if solved.size == 1:  # nothing to compare; its root is searched once, for the step
            position = int(solved[0])
            if known is not None and known[0] == position:
                return self.settle_ties(candidates, position, known[1])
            return self.settle_ties(candidates, position,
                                    equation.root(error_positive[position], error_negative[position]))
        solved_positive, solved_negative = error_positive[solved], error_negative[solved]
        roots = equation.roots(solved_positive, solved_negative)
        position = int(solved[self.pick(candidates, solved_positive, solved_negative, roots)])
        # the tie rule and the stored step use the scalar solver's root, as the Conditional Search's do, so
        # that all searches return the same bits
        return self.settle_ties(candidates, position, equation.step(error_positive[position],
                                                                     error_negative[position]))


class LargestStep(SelectionRule):
    """``selection="alpha"``: the candidate with the largest root (the AdaBoostDB paper's rule)."""

    selection = "alpha"

    def pick(self, candidates: Candidates, error_positive: np.ndarray, error_negative: np.ndarray,
             roots: np.ndarray) -> int:
        return int(np.argmax(roots))

    def settle_ties(self, candidates: Candidates, position: int, alpha: float) -> tuple[int, float]:
        """The first candidate whose root is within :data:`TIE_TOLERANCE` of the largest, ``alpha``.

        The test ``root >= alpha_low`` is the Improvement Condition at
        ``alpha_low`` (or equality), so it needs no root search; as that
        condition saturates for extreme costs and steps, a candidate before
        ``position`` that passes it is solved (and counted) to confirm.
        """
        equation = candidates.equation
        a, b, cost_positive, cost_negative = equation.a, equation.b, equation.cost_positive, equation.cost_negative
        alpha_low = alpha - TIE_TOLERANCE * alpha
        r_p = 2.0 * np.cosh(min(cost_positive * alpha_low, EXPONENT_LIMIT))
        r_n = 2.0 * np.cosh(min(cost_negative * alpha_low, EXPONENT_LIMIT))
        s = a * np.exp(-cost_positive * alpha_low) + b * np.exp(-cost_negative * alpha_low)
        # a little slack, as rounding can tip the test either way for a root right at alpha_low; the
        # root of each passing candidate decides
        error_positive, error_negative = candidates.error_positive, candidates.error_negative
        left = a * error_positive[:position] * r_p + b * error_negative[:position] * r_n
        passing = np.flatnonzero(left <= s + 16 * _EPS * (left + s))
        for candidate in passing:
            root = equation.root(error_positive[candidate], error_negative[candidate])
            if root >= alpha_low:
                return int(candidate), root
        return position, alpha


class SmallestBound(SelectionRule):
    """``selection="loss"``: the first candidate whose bound after its step ties with the smallest."""

    selection = "loss"

    def pick(self, candidates: Candidates, error_positive: np.ndarray, error_negative: np.ndarray,
             roots: np.ndarray) -> int:
        p, q = candidates.shares
        equation = candidates.equation
        loss = bound_after_step(roots, p * error_positive, p * (1 - error_positive), q * error_negative,
                                q * (1 - error_negative), equation.cost_positive, equation.cost_negative)
        return first_smallest(loss)


#: The selection rules by name, in the order of the error messages and documentation.
SELECTION_RULES: dict[str, type[SelectionRule]] = {rule.selection: rule for rule in (LargestStep, SmallestBound)}
SELECTIONS = tuple(SELECTION_RULES)


def selection_rule(selection: str) -> SelectionRule:
    """The :class:`SelectionRule` named ``selection``; raises ``InvalidValueError`` for another name."""
    if selection not in SELECTIONS:
        raise InvalidValueError(f"selection: must be one of {SELECTIONS}, got {selection!r}")
    return SELECTION_RULES[selection]()
