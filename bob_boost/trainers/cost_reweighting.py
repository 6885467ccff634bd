"""The binary cost-sensitive boosting algorithms that reweight AdaBoost's rows by their costs: AdaC1, AdaC2,
AdaC3, AdaCost, CSB0, CSB1, CSB2 and AsymBoost (the rules of :mod:`bob_boost.boosting.reweighting`).

Each trainer boosts +-1 weak machines (decision stumps by default) on targets in {-1, +1}, with the cost
``C_P`` of misclassifying a positive row (a false negative) and ``C_N`` of a negative one (a false positive),
and predicts the sign of ``F = sum_t alpha_t h_t``.

Sources. The rules follow the papers as restated by Nikolaou, Edakunni, Kull, Flach and Brown ("Cost-sensitive
boosting algorithms: do we really need them?", Machine Learning 104, 2016), with discrete weak machines. The
papers themselves were not available here; every update rule was checked against an independent
implementation (the Weka package ``oaidtb``'s CSB0/1/2 and AdaCost, libAdaboost's asymmetric AdaBoost) or
follows from the rule's derivation, and the AdaC steps are the minimisers they are derived as (AdaC2's
minimises ``sum_i c_i D_i exp(-alpha u_i)``; AdaC1's and AdaC3's minimise the convexity bound
``exp(-alpha a) <= ((1 + a)/2) e^(-alpha) + ((1 - a)/2) e^(alpha)`` of their losses, which needs costs in
(0, 1]), which the tests check numerically:

- AdaC1, AdaC2, AdaC3: Sun, Kamel, Wong and Wang, "Cost-sensitive boosting for classification of imbalanced
  data", Pattern Recognition 40, 2007.
- AdaCost: Fan, Stolfo, Zhang and Chan, "AdaCost: misclassification cost-sensitive boosting", ICML 1999, with
  ``D_1`` proportional to the costs, which are in (0, 1].
- CSB0, CSB1, CSB2: Ting, "A comparative study of cost-sensitive boosting algorithms", ICML 2000 (CSB1 drops the
  step from AdaBoost's update, CSB0 the exponential factor; Ting's minimum-expected-cost vote is not applied:
  the machines vote by the sign of ``F``, as the restatement compares them). Their costs are not scale-free:
  Ting's are at least 1, and a cost below 1 shrinks a wrong row.
- AsymBoost: Viola and Jones, "Fast and robust classification using asymmetric AdaBoost and a detector cascade",
  NIPS 2001: the asymmetry ``sqrt(k)``, ``k = C_P / C_N``, spread over ``T`` rounds.

With equal costs of 1, AdaC1, AdaC2, AdaC3, CSB2 and AsymBoost are discrete AdaBoost; CSB1 is AdaBoost with a
unit step in its update, CSB0 never changes the weights, and AdaCost is not: its step is positive only where
``(1 - c) sum_(u_i = 1) D_i > (1 + c) sum_(u_i = -1) D_i`` for the common cost ``c``, never at ``c = 1``, where it
stops at once with an empty machine.
"""
from __future__ import annotations

import numpy as np
import scipy.special

from .._validation import as_feature_matrix, as_score_matrix, check_positive_int, check_same_samples
from ..boosting import loop
from ..boosting.reweighting import ReweightingBoosting
from ..callbacks import RoundCallback
from ..exceptions import InvalidValueError
from ..losses.double_base import check_cost
from ..losses.exponential import ExponentialLoss
from ..machine import BoostedMachine
from ..weak_trainers.stump import StumpTrainer

__all__ = ["AdaC1Trainer", "AdaC2Trainer", "AdaC3Trainer", "AdaCostTrainer", "AsymBoostTrainer", "CSB0Trainer",
           "CSB1Trainer", "CSB2Trainer", "CostReweightingTrainer"]


class CostReweightingTrainer:
    """What the cost-reweighting trainers share; a subclass names its rule.

    Parameters
    ----------
    cost_positive, cost_negative : float
        ``C_P``, the cost of a false negative, and ``C_N``, of a false positive: finite and > 0 (in (0, 1]
        for the rules whose derivation needs it, :attr:`unit_costs`).
    weak_trainer : object, optional
        A trainer of +-1 weak machines following the exponential loss's gradient: default ``StumpTrainer()``.
    """

    #: The rule of :mod:`bob_boost.boosting.reweighting`.
    rule = ""
    #: The name in the log and the machine's metadata.
    algorithm = ""
    #: Whether the costs must lie in (0, 1].
    unit_costs = False

    def __init__(self, cost_positive: float = 1.0, cost_negative: float = 1.0, weak_trainer=None) -> None:
        self.cost_positive = check_cost(cost_positive, "cost_positive")
        self.cost_negative = check_cost(cost_negative, "cost_negative")
        if self.unit_costs:
            for name, value in (("cost_positive", self.cost_positive), ("cost_negative", self.cost_negative)):
                if value > 1.0:
                    raise InvalidValueError(f"{name}: {self.algorithm} takes costs in (0, 1] (its step is derived for "
                                            f"them), got {value!r}; divide both costs by the larger")
        self.weak_trainer = StumpTrainer() if weak_trainer is None else weak_trainer
        #: The loss the estimators report and score: AdaBoost's exponential loss.
        self.loss_function = ExponentialLoss()

    def model_metadata(self) -> dict:
        """The metadata a trained machine holds."""
        return {"loss": ExponentialLoss.name, "trainer": self.algorithm, "cost_positive": self.cost_positive,
                "cost_negative": self.cost_negative}

    def _log_initial(self, labels: np.ndarray, costs: np.ndarray, machine: BoostedMachine | None,
                     number_of_rounds: int) -> tuple[np.ndarray, np.ndarray | None]:
        """The rule's factor of ``D_1`` (log) and the per-round log factor (AsymBoost's)."""
        return (np.log(costs) if self.rule == "adacost" else np.zeros(labels.size)), None

    def train(self, features, targets, number_of_rounds: int = 20, boosted_machine: BoostedMachine | None = None,
              callback: RoundCallback | None = None, sample_weight=None) -> BoostedMachine:
        """Boost up to ``number_of_rounds`` weak machines.

        Parameters
        ----------
        features : array_like
            (#samples, #features) training features.
        targets : array_like
            (#samples,) or (#samples, 1) targets in {-1, +1}; both classes must occur.
        number_of_rounds : int
            Maximum number of weak machines to add.
        boosted_machine : BoostedMachine, optional
            Continue this univariate machine (extended in place and returned), as one longer run would.
        callback : callable, optional
            ``callback(round, machine, scores)`` after each round; returning True stops training.
        sample_weight : array_like, optional
            (#samples,) non-negative factors of ``D_1`` (uniform by default), some weight in each class.

        Returns
        -------
        BoostedMachine
            The weak machines weighted by their steps (AdaC1-3's may be negative:
            :mod:`bob_boost.boosting.reweighting`); training stops early at a step of 0 (for the other rules,
            one that is not positive) or after a machine without weighted training error.
        """
        features = as_feature_matrix(features, allow_nan=bool(getattr(self.weak_trainer, "accepts_missing", False)))
        targets = self.loss_function.check_targets(targets)
        check_same_samples(features, targets)
        if targets.shape[1] != 1:
            raise InvalidValueError(f"targets: binary trainers need one column, got {targets.shape[1]}")
        number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        labels = targets[:, 0]
        positive = labels > 0
        if positive.all() or not positive.any():
            raise InvalidValueError("targets: both classes (-1 and +1) must occur")
        log_weights = np.zeros(labels.size)
        if sample_weight is not None:
            weights = as_score_matrix(sample_weight, "sample_weight", labels.size)
            if weights.shape[1] != 1 or np.any(weights < 0):
                raise InvalidValueError("sample_weight: expected one non-negative weight per sample")
            if not (weights[positive, 0].sum() > 0 and weights[~positive, 0].sum() > 0):
                raise InvalidValueError("sample_weight: each class needs some positive weight")
            with np.errstate(divide="ignore"):  # a zero weight stays zero: log -inf
                log_weights = np.log(weights[:, 0])
        costs = np.where(positive, self.cost_positive, self.cost_negative)
        log_factor, log_asymmetry = self._log_initial(labels, costs, boosted_machine, number_of_rounds)
        log_initial = log_weights + log_factor
        log_initial = log_initial - scipy.special.logsumexp(log_initial)
        algorithm = ReweightingBoosting(self.rule, self.weak_trainer, labels, log_initial, costs, log_asymmetry,
                                        self.model_metadata(), self.algorithm)
        return loop.run(algorithm, self.weak_trainer, features, number_of_rounds, boosted_machine, callback)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(cost_positive={self.cost_positive!r}, cost_negative={self.cost_negative!r})"


class AdaC1Trainer(CostReweightingTrainer):
    """AdaC1 (Sun et al. 2007): the cost inside the exponent.

    ``alpha_t = (1/2) ln((1 + sum_i c_i D_i u_i) / (1 - sum_i c_i D_i u_i))``,
    ``D_(t+1)(i) ∝ D_t(i) exp(-alpha_t c_i u_i)``, ``u_i = y_i h_t(x_i)``; costs in (0, 1]. Parameters as
    :class:`CostReweightingTrainer`'s.
    """

    rule, algorithm, unit_costs = "adac1", "AdaC1", True


class AdaC2Trainer(CostReweightingTrainer):
    """AdaC2 (Sun et al. 2007): the cost outside the exponent.

    ``alpha_t = (1/2) ln(sum_(u_i = 1) c_i D_i / sum_(u_i = -1) c_i D_i)``,
    ``D_(t+1)(i) ∝ c_i D_t(i) exp(-alpha_t u_i)``. Parameters as :class:`CostReweightingTrainer`'s.
    """

    rule, algorithm = "adac2", "AdaC2"


class AdaC3Trainer(CostReweightingTrainer):
    """AdaC3 (Sun et al. 2007): the cost inside and outside the exponent.

    ``alpha_t = (1/2) ln((sum_i c_i D_i + sum_i c_i^2 D_i u_i) / (sum_i c_i D_i - sum_i c_i^2 D_i u_i))``,
    ``D_(t+1)(i) ∝ c_i D_t(i) exp(-alpha_t c_i u_i)``; costs in (0, 1]. Parameters as
    :class:`CostReweightingTrainer`'s.
    """

    rule, algorithm, unit_costs = "adac3", "AdaC3", True


class AdaCostTrainer(CostReweightingTrainer):
    """AdaCost (Fan et al. 1999): a cost adjustment in the exponent.

    ``D_1(i) ∝ c_i``, ``beta_i = (1 - c_i u_i) / 2``, ``r_t = sum_i D_i u_i beta_i``,
    ``alpha_t = (1/2) ln((1 + r_t) / (1 - r_t))``, ``D_(t+1)(i) ∝ D_t(i) exp(-alpha_t beta_i u_i)``; costs in
    (0, 1], without default. Parameters as :class:`CostReweightingTrainer`'s.

    For +-1 machines ``r_t = (sum_i D_i u_i - sum_i D_i c_i) / 2``: a step is positive only when the weak machine's
    edge exceeds the weighted mean cost, so AdaCost boosts stumps at small costs only (equal costs of 1, the other
    trainers' default, would stop it at once).
    """

    rule, algorithm, unit_costs = "adacost", "AdaCost", True

    def __init__(self, cost_positive: float, cost_negative: float, weak_trainer=None) -> None:
        super().__init__(cost_positive, cost_negative, weak_trainer)


class CSB0Trainer(CostReweightingTrainer):
    """CSB0 (Ting 2000): a wrong row's weight times its cost, nothing else.

    ``D_(t+1)(i) ∝ c_i^[u_i = -1] D_t(i)``; the vote weight is AdaBoost's
    ``alpha_t = (1/2) ln((1 + r_t) / (1 - r_t))``, ``r_t = sum_i D_i u_i``. Parameters as
    :class:`CostReweightingTrainer`'s.
    """

    rule, algorithm = "csb0", "CSB0"


class CSB1Trainer(CostReweightingTrainer):
    """CSB1 (Ting 2000): AdaBoost's update without its step.

    ``D_(t+1)(i) ∝ c_i^[u_i = -1] D_t(i) exp(-u_i)``; the vote weight is AdaBoost's ``alpha_t``. Parameters as
    :class:`CostReweightingTrainer`'s.
    """

    rule, algorithm = "csb1", "CSB1"


class CSB2Trainer(CostReweightingTrainer):
    """CSB2 (Ting 2000): AdaBoost's update times a wrong row's cost.

    ``D_(t+1)(i) ∝ c_i^[u_i = -1] D_t(i) exp(-alpha_t u_i)`` with AdaBoost's ``alpha_t``. Parameters as
    :class:`CostReweightingTrainer`'s.
    """

    rule, algorithm = "csb2", "CSB2"


class AsymBoostTrainer(CostReweightingTrainer):
    """AsymBoost (Viola and Jones 2001): AdaBoost with the asymmetry ``sqrt(k)``, ``k = C_P / C_N``, spread over
    ``T`` rounds.

    ``D_1(i) ∝ k^(y_i / (2T))``, ``D_(t+1)(i) ∝ D_t(i) exp(-alpha_t u_i) k^(y_i / (2T))`` with AdaBoost's
    ``alpha_t``, so that the ``T``-th weak machine is fitted to weights carrying ``k^(y_i / 2)``.

    Parameters
    ----------
    cost_positive, cost_negative, weak_trainer
        As :class:`CostReweightingTrainer`'s.
    asymmetry_rounds : int, optional
        ``T``; default the ``number_of_rounds`` of :meth:`train`. A continued machine keeps the ``T`` saved in
        its metadata, whatever this says. Rounds beyond ``T`` keep multiplying.
    """

    rule, algorithm = "asymboost", "AsymBoost"

    def __init__(self, cost_positive: float = 1.0, cost_negative: float = 1.0, weak_trainer=None,
                 asymmetry_rounds: int | None = None) -> None:
        super().__init__(cost_positive, cost_negative, weak_trainer)
        self.asymmetry_rounds = None if asymmetry_rounds is None else check_positive_int(asymmetry_rounds,
                                                                                          "asymmetry_rounds")
        self._rounds = self.asymmetry_rounds

    def _log_initial(self, labels, costs, machine, number_of_rounds):
        # a continued machine keeps the T it was trained with: its rounds' weights are replayed with it
        saved = None if machine is None else machine.metadata.get("asymmetry_rounds")
        rounds = int(saved) if saved is not None else self.asymmetry_rounds
        if rounds is None:
            rounds = number_of_rounds
        self._rounds = rounds
        log_asymmetry = labels * np.log(self.cost_positive / self.cost_negative) / (2.0 * rounds)
        return log_asymmetry, log_asymmetry

    def model_metadata(self) -> dict:
        return {**super().model_metadata(), "asymmetry_rounds": self._rounds}
