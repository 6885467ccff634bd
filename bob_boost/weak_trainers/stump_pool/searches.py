"""AdaBoostDB's search strategies: which contributing candidates a round solves the step equation for.

Each search serves the selection rules it names in :attr:`Search.selections` and is built for one of them
(:func:`make_search`); a search built for a rule it does not serve raises ``InvalidValueError`` naming both.
For a given rule all its searches return the same stump and step, bit for bit; they differ in how many
roots they search (:class:`~.roots.RootCounter`):

* :class:`ConditionalSearch` (``"alpha"``): the paper's Conditional Search, which solves a candidate only
  when the Improvement Condition says its root is larger than the best so far;
* :class:`BoundSearch` (``"loss"``): solves only the candidates whose lower bound on the bound after their
  step does not exceed the best upper bound (see :mod:`.bounds`);
* :class:`ExhaustiveSearch` (both): solves every contributing candidate;
* :class:`ParetoSearch` (both): solves the lower-left Pareto front of the candidates' ``(eps_P, eps_N)``,
  where both optima lie (the root and the bound are monotone in each error).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...exceptions import InvalidValueError
from ...losses.exponential import EXPONENT_LIMIT
from .bounds import BOUND_MARGIN, bound_coefficients, separate_minima, tangents_meet
from .selectors import TIE_TOLERANCE, Candidates, SelectionRule, improves, selection_rule

#: Absolute error margin under which the Pareto search treats two error rates as equal.
DOMINANCE_MARGIN = 1e-12
#: First block size of the Conditional Search's scan (see :meth:`ConditionalSearch.select`).
_SCAN_BLOCK = 256
#: Screening rounds of the bound search (see :func:`_bound_survivors`).
_BOUND_STEPS = 6


class Search:
    """A search strategy, built for one selection rule it serves.

    Parameters
    ----------
    rule : SelectionRule
        The rule; raises ``InvalidValueError`` naming the search and the
        selection if the search does not serve it.
    """

    #: The search's name, as ``AdaBoostDBTrainer(search=...)`` gives it.
    name: ClassVar[str]
    #: The selection rules the search serves.
    selections: ClassVar[tuple[str, ...]]
    #: Why the search serves only :attr:`selections`, for the error message (searches serving every rule: None).
    restriction: ClassVar[str | None] = None

    def __init__(self, rule: SelectionRule) -> None:
        if rule.selection not in self.selections:
            wanted = " or ".join(repr(selection) for selection in self.selections)
            serving = [repr(name) for name in _BY_ROOT_SEARCHES if rule.selection in SEARCH_TYPES[name].selections]
            raise InvalidValueError(f"search: {self.restriction}, so it needs selection={wanted}; "
                                    f"use search={', '.join(serving[:-1])} or {serving[-1]} "
                                    f"with selection={rule.selection!r}")
        self.rule = rule

    def select(self, candidates: Candidates) -> tuple[int, float]:
        """Position (among ``candidates``) and step of the round's choice by :attr:`rule`."""
        return self.rule.choose(candidates, *self.proposals(candidates))

    def proposals(self, candidates: Candidates) -> tuple[np.ndarray, tuple[int, float] | None]:
        """Increasing positions of the candidates the rule may choose, and a step already known, if any.

        The known step is ``(position, step)`` from the scalar solver (:meth:`~.roots.DoubleBaseEquation.root`).
        """
        raise NotImplementedError


class ConditionalSearch(Search):
    """The paper's sequential Conditional Search over the contributing candidates (``selection="alpha"``).

    Candidates are tested in pool order against the best root so far, a
    block at a time (vectorised); the first one that satisfies the
    Improvement Condition is solved and becomes the best, and the scan goes
    on after it. Blocks start small, because the next improvement is
    usually close, and double while none is found, so a round costs about
    one pass over the pool plus one block per root search.
    """

    name = "conditional"
    selections = ("alpha",)
    restriction = "the Conditional Search compares roots"

    def select(self, candidates: Candidates) -> tuple[int, float]:
        error_positive, error_negative, equation = (candidates.error_positive, candidates.error_negative,
                                                    candidates.equation)
        position = 0
        alpha = equation.root(error_positive[0], error_negative[0])
        start, block = 1, _SCAN_BLOCK
        while start < error_positive.size:
            stop = min(error_positive.size, start + block)
            passing = improves(equation, error_positive[start:stop], error_negative[start:stop], alpha)
            if passing.any():
                candidate = start + int(np.argmax(passing))
                root = equation.root(error_positive[candidate], error_negative[candidate])
                # the condition saturates for extreme costs and steps (cosh beyond EXPONENT_LIMIT), so a
                # candidate that passes it is taken only if its root is indeed larger
                if root > alpha:
                    position, alpha = candidate, root
                start, block = candidate + 1, _SCAN_BLOCK
            else:
                start, block = stop, 2 * block
        # its roots come from the scalar solver already
        return self.rule.settle_ties(candidates, position, alpha)


class BoundSearch(Search):
    """Solves only the candidates that the bound's lower bounds do not rule out (``selection="loss"``)."""

    name = "bound"
    selections = ("loss",)
    restriction = "the bound search compares bounds"

    def proposals(self, candidates: Candidates) -> tuple[np.ndarray, tuple[int, float] | None]:
        return _bound_survivors(candidates)


class ExhaustiveSearch(Search):
    """Solves every contributing candidate."""

    name = "exhaustive"
    selections = ("alpha", "loss")

    def proposals(self, candidates: Candidates) -> tuple[np.ndarray, tuple[int, float] | None]:
        return np.arange(candidates.error_positive.size), None


class ParetoSearch(Search):
    """Solves the lower-left Pareto front of the candidates' class errors (:func:`pareto_candidates`).

    With the ``"loss"`` rule it also solves the bound search's survivors,
    because a dominated candidate can still tie with the best within the
    tie tolerance and come first in pool order.
    """

    name = "pareto"
    selections = ("alpha", "loss")

    def proposals(self, candidates: Candidates) -> tuple[np.ndarray, tuple[int, float] | None]:
        front = pareto_candidates(candidates.error_positive, candidates.error_negative)
        if self.rule.selection == "alpha":
            return front, None
        survivors, known = _bound_survivors(candidates)
        return np.union1d(front, survivors), known


#: The searches by name, in the order of the error messages and documentation.
SEARCH_TYPES: dict[str, type[Search]] = {search.name: search for search in
                                         (ConditionalSearch, BoundSearch, ExhaustiveSearch, ParetoSearch)}
SEARCHES = tuple(SEARCH_TYPES)
#: The searches from (usually) fewest to most root searches; a rule's default is the first that serves it.
_BY_ROOT_SEARCHES = ("conditional", "bound", "pareto", "exhaustive")


def default_search(selection: str) -> str:
    """Name of the default search of a selection rule: ``"conditional"`` for ``"alpha"``, ``"bound"`` for ``"loss"``."""
    return next(name for name in _BY_ROOT_SEARCHES if selection in SEARCH_TYPES[name].selections)


def make_search(search: str | None, selection: str) -> Search:
    """The search named ``search`` (default: :func:`default_search`), built for the rule named ``selection``.

    Raises ``InvalidValueError`` for an unknown selection or search, or a
    search that does not serve the selection.
    """
    rule = selection_rule(selection)
    if search is None:
        search = default_search(selection)
    if search not in SEARCHES:
        raise InvalidValueError(f"search: must be one of {SEARCHES}, got {search!r}")
    return SEARCH_TYPES[search](rule)


def pareto_candidates(error_positive: np.ndarray, error_negative: np.ndarray) -> np.ndarray:
    """Positions of the points not beaten by another by more than the margin in both errors.

    A superset of the lower-left Pareto front of ``(error_positive,
    error_negative)``: a point is dropped only when another point is lower
    by :data:`DOMINANCE_MARGIN` in both coordinates, so points that differ
    only by rounding are kept together.

    Parameters
    ----------
    error_positive, error_negative : numpy.ndarray
        (#candidates,) class-conditional errors.

    Returns
    -------
    numpy.ndarray
        Positions of the kept points, in increasing order.
    """
    order = np.lexsort((error_negative, error_positive))
    sorted_positive = error_positive[order]
    running_minimum = np.minimum.accumulate(error_negative[order])
    count = np.searchsorted(sorted_positive, error_positive - DOMINANCE_MARGIN, side="right")
    beaten_by = np.where(count > 0, running_minimum[np.maximum(count - 1, 0)], np.inf)
    return np.flatnonzero(beaten_by > error_negative - DOMINANCE_MARGIN)


def _bound_survivors(candidates: Candidates) -> tuple[np.ndarray, tuple[int, float]]:
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
    error_p, error_n, equation = candidates.error_positive, candidates.error_negative, candidates.equation
    p, q = candidates.shares
    steepest = int(np.argmin(equation.a * error_p + equation.b * error_n))
    centre = equation.root(error_p[steepest], error_n[steepest])
    costs = (equation.cost_positive, equation.cost_negative)
    steepness = max(costs)
    # beyond this the exponentials would overflow
    far = EXPONENT_LIMIT / steepness
    grid = np.minimum([0.0, 0.5 * centre, centre, 2.0 * centre, 8.0 * centre, far], far)
    grid = grid[np.concatenate([[True], np.diff(grid) > 0])]
    errors = np.stack([np.ones_like(error_p), error_p, error_n], axis=1)
    value, slope = (errors @ coefficients for coefficients in bound_coefficients(p, q, *costs, grid))
    # the candidate holding the best upper bound always stays, whatever rounding does to the others
    smallest = int(np.argmin(value))  # flat: a reduction along the short grid axis is slow
    best = smallest // grid.size
    threshold = float(value.flat[smallest]) * (1.0 + TIE_TOLERANCE + BOUND_MARGIN)
    rows = np.arange(error_p.size)
    high = np.argmax(slope > 0, axis=1)
    bracketed = (high > 0) & (slope[rows, high] > 0)
    unbracketed = np.flatnonzero(~bracketed)
    unbracketed = unbracketed[_possible(error_p, error_n, p, q, unbracketed, threshold, best)]
    inside = np.flatnonzero(bracketed)
    high = high[inside]
    low = (grid[high - 1], value[inside, high - 1], slope[inside, high - 1])
    high = (grid[high], value[inside, high], slope[inside, high])
    for _ in range(_BOUND_STEPS):
        meet, lower = tangents_meet(low, high, steepness)
        keep = np.flatnonzero((lower <= threshold) | (inside == best))
        keep = keep[_possible(error_p, error_n, p, q, inside[keep], threshold, best)]
        inside = inside[keep]
        if inside.size == 0 or inside.size + unbracketed.size <= 1:
            break
        meet = meet[keep]
        low, high = tuple(part[keep] for part in low), tuple(part[keep] for part in high)
        value, slope = (np.einsum("ij,ji->i", errors[inside], coefficients)
                        for coefficients in bound_coefficients(p, q, *costs, meet))
        if value.min() * (1.0 + TIE_TOLERANCE + BOUND_MARGIN) < threshold:
            best = int(inside[np.argmin(value)])
            threshold = float(value.min()) * (1.0 + TIE_TOLERANCE + BOUND_MARGIN)
        rising = slope > 0
        low = tuple(np.where(rising, old, new) for old, new in zip(low, (meet, value, slope)))
        high = tuple(np.where(rising, new, old) for old, new in zip(high, (meet, value, slope)))
    return np.sort(np.concatenate([unbracketed, inside])), (steepest, centre)


def _possible(error_p: np.ndarray, error_n: np.ndarray, p: float, q: float, positions: np.ndarray,
              threshold: float, best: int) -> np.ndarray:
    """Mask of ``positions`` not ruled out by the sum of the class parts' own minima over ``alpha >= 0``."""
    if positions.size == 0:
        return np.zeros(0, dtype=bool)
    return (separate_minima(error_p[positions], error_n[positions], p, q) <= threshold) | (positions == best)
