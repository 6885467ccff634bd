"""Cost-sensitive binary boosting of decision stumps: AdaBoostDB and Cost-Sensitive AdaBoost.

Both trainers minimise, one stump per round, the same class-dependent exponential bound
``sum_i D_1(i) exp(-C_{y_i} y_i F(x_i))`` (the :class:`~bob_boost.losses.double_base.DoubleBaseLoss`
weighted by the initial distribution ``D_1``), ``F = sum_m alpha_m h_m``.
:class:`CostSensitiveAdaBoostTrainer` (Masnadi-Shirazi & Vasconcelos, as Algorithm 1 of the AdaBoostDB paper
states it) solves the hyperbolic step equation of every stump of the pool and keeps the stump whose step
gives the smallest bound. :class:`AdaBoostDBTrainer` (Landesa-Vazquez & Alba-Castro, "Double-Base Asymmetric
AdaBoost", Algorithm 2) writes the step as the positive root of a polynomial in ``x = exp(alpha)`` whose
coefficients only involve two static numbers ``a, b`` and the class-conditional errors of the stump, which
lets the Conditional Search skip almost every root computation.

This module holds their shared training loop and the trainers; the stump pool, the root finders, the bound
geometry, the selection rules and the searches are in :mod:`bob_boost.weak_trainers.stump_pool`.

Scaling of the weights: the trainers store ``alpha_m`` itself as the weight of stump ``m``, so
:meth:`BoostedMachine.predict` (the sign of the score) is the algorithms' classifier
``sign(sum_m alpha_m h_m)``. The costs act inside the loss, ``exp(-C_t t F)``, not on the stored weights:
with ``C_P = C_N = C`` the stored weight is discrete AdaBoost's ``0.5 ln((1 - e) / e)`` divided by ``C``,
which is also what the generic :class:`~bob_boost.trainers.Boosting` fits with ``DoubleBaseLoss(C, C)``.

Degenerate cases:

* A stump with no weighted error on either class has its root at infinity (``x -> inf``). It is added with
  the capped weight ``alpha = ALPHA_CAP_MARGIN / min(C_P, C_N)`` (its bound factor is then below
  ``exp(-36)``, under double-precision resolution relative to 1) and training stops, because every later
  round would pick the same stump again. A stump that is perfect on one class only has a finite root.
* When no stump satisfies the Contribution Condition (no positive step lowers the bound, e.g. every stump
  has ``a eps_P + b eps_N = 1/2``), training stops early with a log message.
* Costs that are not finite numbers > 0 raise ValueError.

Ties (within :data:`TIE_TOLERANCE`, the first stump in pool order wins) are explained in
:mod:`bob_boost.weak_trainers.stump_pool.selectors`.
"""
from __future__ import annotations

import logging
import math

import numpy as np
import scipy.special

from .._validation import as_feature_matrix, as_score_matrix, check_positive_int, check_same_samples
from ..boosting import loop
from ..boosting.closed_form import CostSensitiveStumpBoosting
from ..boosting.protocol import Proposal, RoundState
from ..callbacks import RoundCallback
from ..exceptions import InvalidValueError
from ..losses.double_base import DoubleBaseLoss, check_cost
from ..machine import BoostedMachine
from ..weak_trainers.stump_pool.pool import StumpPool
from ..weak_trainers.tree_categories import check_categorical_features
from ..boosting.roots import (HYPERBOLIC_SOLVERS, ROOT_SEARCHES, DoubleBaseEquation,
                                              HyperbolicEquation, RootCounter, double_base_roots, infinite_step)
from ..weak_trainers.stump_pool.searches import DOMINANCE_MARGIN, SEARCHES, make_search
from ..weak_trainers.stump_pool.selectors import (SELECTIONS, TIE_TOLERANCE, Candidates, contributes,
                                                  first_perfect, smallest_bound_of_all)

# with the names of bob_boost.weak_trainers.stump_pool that were defined here before the split, so that their
# old import path keeps working
__all__ = ["ALPHA_CAP_MARGIN", "AdaBoostDBTrainer", "CostSensitiveAdaBoostTrainer", "DOMINANCE_MARGIN",
           "ROOT_SEARCHES", "SEARCHES", "SELECTIONS", "StumpPool", "TIE_TOLERANCE"]

logger = logging.getLogger(__name__)

#: A stump without training error gets ``alpha = ALPHA_CAP_MARGIN / min(C_P, C_N)``.
ALPHA_CAP_MARGIN = 36.0
_TINY = float(np.finfo(np.float64).tiny)


# -- the stump pool as the loop's weak trainer ------------------------------------
class _PoolTrainer:
    """The stump pool as a weak trainer of the loop: the trainer's selection rule picks a stump and its step."""

    def __init__(self, select, positive: np.ndarray, counter: RootCounter, algorithm: str,
                 categorical_features=None) -> None:
        self.select = select
        self.positive = positive
        self.counter = counter
        self.algorithm = algorithm
        self.categorical_features = categorical_features

    def prepare(self, features: np.ndarray) -> StumpPool:
        """Every stump of ``features``, with exact class errors."""
        return StumpPool(features, self.categorical_features)

    def propose(self, pool: StumpPool, state: RoundState) -> Proposal | None:
        """The round's stump with its step; None when no stump satisfies the Contribution Condition."""
        choice = self.select(pool, self.positive, state.log_weights, self.counter)
        if choice is None:
            logger.info("%s round %d: no stump satisfies the Contribution Condition", self.algorithm,
                        state.round_index + 1)
            return None
        candidate, alpha, perfect = choice
        return Proposal(pool.stump(candidate), alpha, perfect)


# -- what the two trainers share ---------------------------------------------------
class _CostSensitiveStumpBoosting:
    """What the two trainers share; subclasses choose each round's stump and step (the loop is the one loop)."""

    #: Written into the trained machine's metadata.
    algorithm = ""

    def __init__(self, cost_positive: float, cost_negative: float, categorical_features=None) -> None:
        self.cost_positive = check_cost(cost_positive, "cost_positive")
        self.cost_negative = check_cost(cost_negative, "cost_negative")
        check_categorical_features(categorical_features)
        self.categorical_features = categorical_features
        self.loss_function = DoubleBaseLoss(self.cost_positive, self.cost_negative)
        self._root_counter = RootCounter()

    @property
    def root_searches(self) -> int:
        """Number of step equations solved in the last call of :meth:`train` (so far, during one)."""
        return self._root_counter.searches

    @property
    def alpha_cap(self) -> float:
        """Weight given to a stump without training error (see the module documentation)."""
        return ALPHA_CAP_MARGIN / min(self.cost_positive, self.cost_negative)

    def model_metadata(self) -> dict:
        """The metadata a trained machine holds: the loss, the algorithm, its costs and options (in-memory
        and distributed training write the same)."""
        return {"loss": DoubleBaseLoss.name, "trainer": self.algorithm,
                "cost_positive": self.cost_positive, "cost_negative": self.cost_negative}

    #: Whether each round normalises each class's weights to sum 1 (AdaBoostDB's ``D_P``, ``D_N``) rather than
    #: all weights together (Cost-Sensitive AdaBoost's distribution).
    normalises_classes = False

    def select(self, pool: StumpPool, positive: np.ndarray, log_weights: np.ndarray,
               counter: RootCounter) -> tuple[int, float, bool] | None:
        """Return ``(candidate, alpha, perfect)`` for this round, or None when no stump contributes.

        ``log_weights`` are the logarithms of the current sample weights; the equations solved add their root
        searches to ``counter``. ``perfect`` is True for a stump without training error (capped alpha).
        """
        # in the log domain, because the two classes' totals can be hundreds of orders of magnitude apart
        groups = (np.flatnonzero(positive), np.flatnonzero(~positive))
        peaks = np.array([log_weights[members].max() for members in groups])
        class_weights = np.zeros((positive.size, 2))
        if self.normalises_classes:
            totals = np.empty(2)
            for column, members in enumerate(groups):
                scaled = np.exp(log_weights[members] - peaks[column])
                totals[column] = scaled.sum()
                class_weights[members, column] = scaled / totals[column]
            log_totals = peaks + np.log(totals)
        else:
            distribution = np.exp(log_weights - peaks.max())
            total = distribution.sum()
            distribution /= total
            for column, members in enumerate(groups):
                class_weights[members, column] = distribution[members]
            log_totals = None  # Cost-Sensitive AdaBoost's rule does not use them
        return self.choose(pool.class_errors(class_weights), log_totals, counter)

    def choose(self, errors: tuple[np.ndarray, ...], log_totals: np.ndarray | None,
               counter: RootCounter) -> tuple[int, float, bool] | None:
        """The round's ``(candidate, alpha, perfect)`` from the pool's class errors, or None.

        Parameters
        ----------
        errors : tuple of numpy.ndarray
            :meth:`StumpPool.class_errors` of the round's class weights, normalised as
            :attr:`normalises_classes` says.
        log_totals : numpy.ndarray or None
            (2,) logarithms of the positive and negative classes' current total weights, when
            :attr:`normalises_classes` (AdaBoostDB's static parameters need them); else None.
        counter : RootCounter
            Counts the step equations solved.
        """
        raise NotImplementedError

    def train(self, features, targets, number_of_rounds: int = 20,
              boosted_machine: BoostedMachine | None = None, sample_weights=None,
              callback: RoundCallback | None = None, sample_weight=None) -> BoostedMachine:
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
            Initial distribution ``D_1`` (non-negative, some weight in each class). Default: uniform within each
            class with each class weighing 1/2, as both papers initialise. Normalised to sum 1 (in the log
            domain), so scaling every weight changes the model by rounding only.
        callback : callable, optional
            ``callback(round, machine, scores)`` after each round; returning True stops training (see
            :mod:`bob_boost.callbacks`).
        sample_weight : array_like, optional
            The name every other trainer uses for ``sample_weights``; give one or the other.

        Returns
        -------
        BoostedMachine
            Stumps weighted by their steps ``alpha``. Training stops early, with a log message, when no stump
            contributes or after a stump without training error.
        """
        if sample_weight is not None:
            if sample_weights is not None:
                raise InvalidValueError("sample_weight: give sample_weight or its older name sample_weights, "
                                        "not both")
            sample_weights = sample_weight
        features = as_feature_matrix(features)
        targets = self.loss_function.check_targets(targets)
        check_same_samples(features, targets)
        if targets.shape[1] != 1:
            raise InvalidValueError(f"targets: binary trainers need one column, got {targets.shape[1]}")
        number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        labels = targets[:, 0]
        positive = labels > 0
        if positive.all() or not positive.any():
            raise InvalidValueError("targets: both classes (-1 and +1) must occur")
        log_initial = self._initial_log_weights(sample_weights, positive)
        counter = self._root_counter = RootCounter()
        pool_trainer = _PoolTrainer(self.select, positive, counter, self.algorithm, self.categorical_features)
        algorithm = CostSensitiveStumpBoosting(self.algorithm, pool_trainer, labels, log_initial, self.cost_positive,
                                               self.cost_negative, self.model_metadata())
        return loop.run(algorithm, pool_trainer, features, number_of_rounds, boosted_machine, callback)

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


# -- Cost-Sensitive AdaBoost ----------------------------------------------------
class CostSensitiveAdaBoostTrainer(_CostSensitiveStumpBoosting):
    """Cost-Sensitive AdaBoost of Masnadi-Shirazi & Vasconcelos over the stump pool.

    Every round, for every stump of the pool, the step ``alpha`` is the root of the hyperbolic equation
    (Algorithm 1 of the AdaBoostDB paper)::

        2 C_P B cosh(C_P alpha) + 2 C_N D cosh(C_N alpha) = C_P T_P exp(-C_P alpha) + C_N T_N exp(-C_N alpha)

    (``B``, ``D``: weight of the misclassified positives / negatives; ``T_P``, ``T_N``: total weight of each
    class), and the stump whose step gives the smallest loss ``L = B (e^{C_P alpha} - e^{-C_P alpha})
    + T_P e^{-C_P alpha} + D (e^{C_N alpha} - e^{-C_N alpha}) + T_N e^{-C_N alpha}`` is kept. The weights are then
    multiplied by ``exp(-C_y y alpha h(x))``.

    :attr:`root_searches` counts one search per candidate and round, as the algorithm solves the equation for every
    candidate. A candidate whose root is negative is the mirror image of the opposite-polarity stump, which has the
    same loss and a positive root; the positive one is kept. The weights are renormalised every round, which
    changes neither the roots nor the choice (the equation and the losses scale with the weights).

    Parameters
    ----------
    cost_positive, cost_negative : float
        Finite costs > 0 of a false negative (``C_P``) and a false positive (``C_N``).
    root_search : {"vectorised", "scalar"}
        How the roots of a round are found; both select the same stumps, with steps equal to rounding (about 1e-15
        relative per round). ``"vectorised"`` (default) solves all candidates' equations together by bracketed
        Newton steps in numpy. ``"scalar"`` runs one Brent search (``scipy.optimize.brentq``) per candidate in a
        Python loop: the algorithm as the AdaBoostDB paper states and times it, kept as the reference baseline for
        training-time comparisons; in ``bench/bench_adaboostdb.py`` it is 26 to 53 times slower.
    categorical_features : sequence of int, boolean mask or None
        Features whose values are categories (integers): their stumps output one sign on a set of categories,
        the best of all sets (:mod:`bob_boost.weak_trainers.stump_pool.pool`); a category unseen in training
        gets the other sign. None: every feature is ordered.
    """

    algorithm = "CostSensitiveAdaBoost"

    def __init__(self, cost_positive: float, cost_negative: float, root_search: str = "vectorised",
                 categorical_features=None) -> None:
        super().__init__(cost_positive, cost_negative, categorical_features)
        if root_search not in ROOT_SEARCHES:
            raise InvalidValueError(f"root_search: must be one of {ROOT_SEARCHES}, got {root_search!r}")
        self.root_search = root_search

    def model_metadata(self) -> dict:
        return {**super().model_metadata(), "root_search": self.root_search}

    def optimal_step(self, targets, predictions, sample_weights) -> float:
        """Step that minimises the cost-sensitive bound for one weak learner.

        Parameters
        ----------
        targets : array_like
            (#samples,) targets in {-1, +1}.
        predictions : array_like
            (#samples,) outputs of the weak learner, each -1 or +1.
        sample_weights : array_like
            (#samples,) current non-negative sample weights ``D(i)`` (any scale), with some weight in each class.

        Returns
        -------
        float
            The root ``alpha`` of the hyperbolic equation: the ``alpha`` minimising
            ``sum_i D(i) exp(-C_{y_i} y_i alpha h(x_i))``. It is negative when flipping the learner helps, and
            ``+inf`` (``-inf``) when the learner is right (wrong) on every weighted sample.
        """
        sums = self._step_inputs(targets, predictions, sample_weights)
        infinite = infinite_step(*sums)
        if infinite is not None:
            return infinite
        solve = HYPERBOLIC_SOLVERS[self.root_search]
        return float(solve(*[np.array([value]) for value in sums], self.cost_positive, self.cost_negative)[0])

    def choose(self, errors: tuple[np.ndarray, ...], log_totals: np.ndarray | None,
               counter: RootCounter) -> tuple[int, float, bool] | None:
        wrong_p, right_p, wrong_n, right_n = errors
        perfect = first_perfect(wrong_p, wrong_n)
        if perfect is not None:
            return perfect, self.alpha_cap, True
        equation = HyperbolicEquation(self.cost_positive, self.cost_negative, self.root_search, counter)
        choice = smallest_bound_of_all(wrong_p, right_p, wrong_n, right_n, equation)
        return None if choice is None else (*choice, False)


# -- AdaBoostDB -------------------------------------------------------------------
class AdaBoostDBTrainer(_CostSensitiveStumpBoosting):
    """AdaBoostDB (Double-Base Asymmetric AdaBoost) over the stump pool.

    Each round the weights of each class are normalised into the sub-distributions ``D_P`` and ``D_N``, whose
    former totals are folded into the accumulators ``A_P`` and ``A_N``; the static parameters are
    ``a = C_P W_P A_P / (C_P W_P A_P + C_N W_N A_N)`` and ``b = 1 - a`` (``W_P``, ``W_N``: the initial class
    weights, 1/2 each by default). A stump with class-conditional errors ``eps_P``, ``eps_N`` can contribute only
    if ``a eps_P + b eps_N < 1/2`` (Contribution Condition), and its step is ``alpha = log x`` for the unique
    positive root ``x`` of::

        a eps_P x^(2 C_P) + b eps_N x^(C_P + C_N) + b (eps_N - 1) x^(C_P - C_N) + a (eps_P - 1) = 0

    Parameters
    ----------
    cost_positive, cost_negative : float
        Finite costs > 0 of a false negative (``C_P``) and a false positive (``C_N``); they need not be integers.
    selection : {"alpha", "loss"}
        ``"alpha"`` keeps the stump with the largest root (the paper's rule); ``"loss"`` the stump whose step gives
        the smallest bound, i.e. exact greedy minimisation, the same choice as Cost-Sensitive AdaBoost. With equal
        costs the two coincide.
    search : {"conditional", "bound", "exhaustive", "pareto"}, optional
        How the stump is found (:mod:`bob_boost.weak_trainers.stump_pool.searches`); for a given rule all give
        the same stump and alpha. ``"conditional"`` (default for ``selection="alpha"``, and only for it) is the
        paper's Conditional Search: candidates are scanned in pool order and a root is computed only for one that
        passes the Contribution Condition and the Improvement Condition ``c . r < s`` against the best root so far
        (``c = (a eps_P, b eps_N)``; ``r``, ``s`` built from that root), i.e. only for one whose root is larger.
        ``"bound"`` (default for ``selection="loss"``, and only for it) computes roots only for candidates whose
        lower bound on the loss (from tangents of the convex bound on a grid of steps) does not exceed the best
        upper bound: usually one or two a round. ``"exhaustive"`` computes the root of every contributing
        candidate. ``"pareto"`` computes roots only on the lower-left Pareto front of the candidates'
        ``(eps_P, eps_N)``, where both optima lie (the root and the bound are monotone in each error); with the
        ``"loss"`` rule it also solves the bound search's survivors, because a dominated candidate can still tie
        with the best within the tie tolerance and come first in pool order.
    categorical_features : sequence of int, boolean mask or None
        As :class:`CostSensitiveAdaBoostTrainer`'s: the best set of categories for either selection rule.
    """

    algorithm = "AdaBoostDB"

    def __init__(self, cost_positive: float, cost_negative: float, selection: str = "alpha",
                 search: str | None = None, categorical_features=None) -> None:
        super().__init__(cost_positive, cost_negative, categorical_features)
        # validates the selection, then the search and the combination
        self._search = make_search(search, selection)

    @property
    def selection(self) -> str:
        """The selection rule, ``"alpha"`` or ``"loss"``."""
        return self._search.rule.selection

    @property
    def search(self) -> str:
        """The search strategy's name."""
        return self._search.name

    def model_metadata(self) -> dict:
        return {**super().model_metadata(), "selection": self.selection, "search": self.search}

    def static_parameters(self, log_total_positive: float, log_total_negative: float) -> tuple[float, float]:
        """``(a, b)`` from the logarithms of the current class totals ``W_P A_P`` and ``W_N A_N``."""
        log_p = math.log(self.cost_positive) + log_total_positive
        log_n = math.log(self.cost_negative) + log_total_negative
        return float(scipy.special.expit(log_p - log_n)), float(scipy.special.expit(log_n - log_p))

    def optimal_step(self, targets, predictions, sample_weights) -> float:
        """Step that minimises the cost-sensitive bound for one weak learner, via the polynomial.

        Same arguments and result as :meth:`CostSensitiveAdaBoostTrainer.optimal_step` (the two equations have the
        same root).
        """
        wrong_p, right_p, wrong_n, right_n = self._step_inputs(targets, predictions, sample_weights)
        infinite = infinite_step(wrong_p, right_p, wrong_n, right_n)
        if infinite is not None:
            return infinite
        a, b = self.static_parameters(np.log(wrong_p + right_p), np.log(wrong_n + right_n))
        error_p = np.array([wrong_p / (wrong_p + right_p)])
        error_n = np.array([wrong_n / (wrong_n + right_n)])
        return float(double_base_roots(error_p, error_n, a, b, self.cost_positive, self.cost_negative)[0])

    normalises_classes = True

    def choose(self, errors: tuple[np.ndarray, ...], log_totals: np.ndarray,
               counter: RootCounter) -> tuple[int, float, bool] | None:
        log_total_p, log_total_n = float(log_totals[0]), float(log_totals[1])
        a, b = self.static_parameters(log_total_p, log_total_n)
        # each class's weights sum to 1 (D_P, D_N), so the misclassified weights are the errors
        error_p, error_n = errors[0].copy(), errors[2].copy()
        # subnormal errors carry too few significant bits for the scalar and the vectorised root searches
        # to agree on their steps; they count as no error
        error_p[error_p < _TINY] = 0.0
        error_n[error_n < _TINY] = 0.0
        # a class's misclassified weight can exceed its total (1) by rounding
        np.minimum(error_p, 1.0, out=error_p)
        np.minimum(error_n, 1.0, out=error_n)
        # Contribution Condition V(1) < S(1), i.e. a eps_P + b eps_N < 1/2
        scaled_error = a * error_p + b * error_n
        contributing = np.flatnonzero(contributes(scaled_error))
        if contributing.size == 0:
            return None
        # no weight misclassified once scaled by a and b: the root is at infinity
        perfect = contributing[scaled_error[contributing] == 0.0]
        if perfect.size:
            return int(perfect[0]), self.alpha_cap, True
        equation = DoubleBaseEquation(a, b, self.cost_positive, self.cost_negative, counter)
        candidates = Candidates(error_p[contributing], error_n[contributing], equation, log_total_p, log_total_n)
        position, alpha = self._search.select(candidates)
        if not alpha > 0:
            return None
        return int(contributing[position]), alpha, False
