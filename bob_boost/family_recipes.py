"""The configurations of the boosting family beside bob's generic trainer and the cost-sensitive trainers, from
option names (:func:`bob_boost.recipes.make_recipe` wraps them into recipes): Real AdaBoost and SAMME.R on
class-probability trees, Gentle AdaBoost and LogitBoost on least-squares trees, arc-gv and PIBoost on stumps, the
binary cost-reweighting algorithms (AdaC1-3, AdaCost, CSB0-2, AsymBoost) and calibrated AdaMEC on stumps, and
the BAdaCost paper's multi-class cost-sensitive competitors (AdaC2.M1, MultiBoost, Lp-CSB) on trees.
"""
from __future__ import annotations

from .boosting.sampling import Sampling
from .costs import samme_cost_matrix, zero_one_cost_matrix
from .exceptions import InvalidValueError
from .losses.cmel import CMELoss
from .losses.cost_family import CostExponentialLoss, PNormCostLoss
from .losses.exponential import ExponentialLoss
from .trainers.adamec import AdaMECTrainer
from .trainers.additive_logistic import GentleAdaBoostTrainer, LogitBoostTrainer
from .trainers.arc_gv import ArcGVTrainer
from .trainers.badacost import AdaC2M1Trainer
from .trainers.cost_reweighting import (AdaC1Trainer, AdaC2Trainer, AdaC3Trainer, AdaCostTrainer, AsymBoostTrainer,
                                        CSB0Trainer, CSB1Trainer, CSB2Trainer)
from .trainers.lp_csb import LpCSBTrainer
from .trainers.multiboost import MultiBoostTrainer
from .trainers.piboost import PIBoostTrainer
from .trainers.real_adaboost import RealAdaBoostTrainer, SAMMERTrainer
from .weak_trainers.multiclass import CostSensitiveTreeTrainer, MultiClassStumpTrainer
from .weak_trainers.probability_trees import ProbabilityTreeTrainer
from .weak_trainers.relational import RelationalTreeTrainer
from .weak_trainers.stump import StumpTrainer

#: The trainers that boost class-probability trees with weight 1 (Real AdaBoost, SAMME.R).
PROBABILITY_TRAINERS = ("real-adaboost", "samme-r")
#: The two-class trainers that boost weighted least-squares trees with weight 1 (Gentle AdaBoost, LogitBoost).
LEAST_SQUARES_TRAINERS = ("gentle-adaboost", "logitboost")
#: The binary cost-reweighting trainers (:mod:`bob_boost.trainers.cost_reweighting`), by name.
REWEIGHTING_TRAINERS = {"adac1": AdaC1Trainer, "adac2": AdaC2Trainer, "adac3": AdaC3Trainer, "adacost": AdaCostTrainer,
                        "csb0": CSB0Trainer, "csb1": CSB1Trainer, "csb2": CSB2Trainer, "asymboost": AsymBoostTrainer}
#: The multi-class cost-sensitive trainers the BAdaCost paper compares with (:func:`multiclass_cost_trainer`).
MULTICLASS_COST_TRAINERS = ("adac2-m1", "multiboost", "lp-csb")
#: Every trainer of this module but the cost-reweighting ones (which take costs: :func:`reweighting_trainer`).
FAMILY_TRAINERS = (*PROBABILITY_TRAINERS, *LEAST_SQUARES_TRAINERS, "arc-gv", "piboost")


def reweighting_trainer(trainer: str, number_of_classes: int | None, weak_learner: str, *,
                        cost_positive: float | None, cost_negative: float | None, number_of_rounds: int,
                        max_bins: int | None, n_threads: int | None, missing: str | None, shrinkage: float | None,
                        feature_fraction: float, sampling: Sampling | None, categorical_features) -> tuple:
    """``(configured trainer, the loss it reports, the targets it takes)`` of the cost-reweighting ``trainer``
    (one of :data:`REWEIGHTING_TRAINERS`) on stumps, its costs default 1 (AdaCost's have no default; AsymBoost's
    asymmetry is spread over ``number_of_rounds``).

    Raises
    ------
    ValueError
        For options the algorithm does not take, or costs out of its range, naming them.
    """
    if feature_fraction != 1.0 or sampling is not None or shrinkage not in (None, 1.0):
        raise InvalidValueError(f"shrinkage, feature_fraction, sampling: {trainer!r} weights every stump by its "
                                f"closed-form step on every row and column (as its paper); leave them at their "
                                f"defaults")
    if number_of_classes != 2:
        raise InvalidValueError(f"trainer: {trainer!r} is binary but there are {number_of_classes} classes")
    if weak_learner != "stump":
        raise InvalidValueError(f"weak_learner: {trainer!r} boosts +-1 decision stumps, got {weak_learner!r}")
    if trainer == "adacost" and (cost_positive is None or cost_negative is None):
        raise InvalidValueError("cost_positive, cost_negative: 'adacost' needs both costs, in (0, 1] (its steps are "
                                "positive only where a stump's edge exceeds the weighted mean cost: small costs)")
    costs = (1.0 if cost_positive is None else cost_positive, 1.0 if cost_negative is None else cost_negative)
    stumps = StumpTrainer(max_bins=max_bins, n_threads=n_threads, missing=missing,
                          categorical_features=categorical_features)
    if trainer == "asymboost":
        configured = AsymBoostTrainer(*costs, weak_trainer=stumps, asymmetry_rounds=number_of_rounds)
    else:
        configured = REWEIGHTING_TRAINERS[trainer](*costs, weak_trainer=stumps)
    return configured, configured.loss_function, "signed"


def adamec_trainer(number_of_classes: int | None, weak_learner: str, *, cost_positive: float | None,
                   cost_negative: float | None, calibration: str | None, calibration_fraction: float,
                   random_state, max_bins: int | None, n_threads: int | None, missing: str | None,
                   shrinkage: float | None, feature_fraction: float, sampling: Sampling | None,
                   categorical_features) -> tuple:
    """``(configured trainer, the loss it reports, the targets it takes)`` of AdaMEC
    (:class:`~bob_boost.trainers.adamec.AdaMECTrainer`): AdaBoost of stumps, calibrated on held-out rows
    (``random_state`` None: seed 0), deciding by least expected cost; the costs default to 1.

    Raises
    ------
    ValueError
        For options AdaMEC does not take, or costs and a calibration out of range, naming them.
    """
    if feature_fraction != 1.0 or sampling is not None or shrinkage not in (None, 1.0):
        raise InvalidValueError("shrinkage, feature_fraction, sampling: 'adamec' trains discrete AdaBoost on "
                                "every training row and column (as its paper); leave them at their defaults")
    if number_of_classes != 2:
        raise InvalidValueError(f"trainer: 'adamec' is binary but there are {number_of_classes} classes")
    if weak_learner != "stump":
        raise InvalidValueError(f"weak_learner: 'adamec' boosts +-1 decision stumps, got {weak_learner!r}")
    stumps = StumpTrainer(max_bins=max_bins, n_threads=n_threads, missing=missing,
                          categorical_features=categorical_features)
    configured = AdaMECTrainer(1.0 if cost_positive is None else cost_positive,
                               1.0 if cost_negative is None else cost_negative, calibration, calibration_fraction,
                               0 if random_state is None else random_state, weak_trainer=stumps)
    return configured, configured.loss_function, "signed"


def multiclass_cost_trainer(trainer: str, number_of_classes: int | None, weak_learner: str, *, cost_matrix,
                            tree_depth: int | None, number_of_rounds: int, shrinkage: float | None,
                            feature_fraction: float, random_state, sampling: Sampling | None, missing: str | None,
                            min_weight_fraction_leaf: float, categorical_features, lp_norm: float,
                            pool_size: int) -> tuple:
    """``(configured trainer, the loss it reports, the targets it takes)`` of AdaC2.M1, MultiBoost or Lp-CSB
    (:data:`MULTICLASS_COST_TRAINERS`) for the (K, K) ``cost_matrix``.

    AdaC2.M1 boosts the multi-class trees (or stumps) of BAdaCost with its options, its trees by default
    ``max(2, ceil(log2 K))`` deep, leaves enough for every class (AdaBoost.M1's rounds stop at a weighted error
    of 1/2, which shallower trees reach at once on many classes); MultiBoost grows its pool
    of ``pool_size`` trees of ``tree_depth`` (default 2) from ``random_state``; Lp-CSB boosts relational trees
    (a vote per label in each leaf) of ``tree_depth`` (default 2) with the norm ``lp_norm``.

    Raises
    ------
    ValueError
        For a missing or mis-sized cost matrix, and options the algorithm does not take, naming them.
    """
    if number_of_classes is None:
        raise InvalidValueError(f"trainer: {trainer!r} is a classifier; it needs class labels")
    if cost_matrix is None:
        raise InvalidValueError(f"cost_matrix: the {trainer} trainer needs a cost matrix")
    matrix = CMELoss(cost_matrix).cost_matrix
    if matrix.shape[0] != number_of_classes:
        raise InvalidValueError(f"cost_matrix: is {matrix.shape[0]}x{matrix.shape[0]} but there are "
                                f"{number_of_classes} classes")
    if trainer == "adac2-m1":
        if weak_learner not in ("tree", "stump"):
            raise InvalidValueError(f"weak_learner: 'adac2-m1' boosts multi-class trees or stumps, got "
                                    f"{weak_learner!r}")
        weak = (MultiClassStumpTrainer(missing=missing, min_weight_fraction_leaf=min_weight_fraction_leaf)
                if weak_learner == "stump" else
                CostSensitiveTreeTrainer(max_depth=AdaC2M1Trainer.default_depth(number_of_classes)
                                         if tree_depth is None else tree_depth, missing=missing,
                                         min_weight_fraction_leaf=min_weight_fraction_leaf,
                                         categorical_features=categorical_features))
        configured = AdaC2M1Trainer(matrix, weak, number_of_rounds, 1.0 if shrinkage is None else shrinkage,
                                    feature_fraction, random_state, sampling)
        return configured, CMELoss(zero_one_cost_matrix(number_of_classes)), "indices"
    refused = {"weak_learner": weak_learner != "tree", "shrinkage": shrinkage not in (None, 1.0),
               "min_weight_fraction_leaf": trainer == "lp-csb" and min_weight_fraction_leaf != 0.0,
               "feature_fraction": feature_fraction != 1.0, "sampling": sampling is not None,
               "missing": missing is not None, "categorical_features": categorical_features is not None}
    if any(refused.values()):
        names = ", ".join(name for name, bad in refused.items() if bad)
        raise InvalidValueError(f"{names}: {trainer!r} boosts whole trees (weak_learner='tree') fitted to every row "
                                f"and column of numeric features without missing values, as its paper; leave "
                                f"the others at their defaults")
    if trainer == "multiboost":
        weak = CostSensitiveTreeTrainer(max_depth=2 if tree_depth is None else tree_depth,
                                        min_weight_fraction_leaf=min_weight_fraction_leaf)
        configured = MultiBoostTrainer(matrix, weak, number_of_rounds, pool_size=pool_size,
                                       random_state=random_state)
        return configured, CostExponentialLoss(matrix), "indices"
    weak = RelationalTreeTrainer(number_of_classes, 2 if tree_depth is None else tree_depth)
    configured = LpCSBTrainer(matrix, lp_norm, weak, number_of_rounds)
    return configured, PNormCostLoss(matrix, lp_norm), "indices"


def family_trainer(trainer: str, number_of_classes: int | None, weak_learner: str, *, tree_depth: int | None,
                   number_of_rounds: int, max_bins: int | None, n_threads: int | None, missing: str | None,
                   shrinkage: float | None, min_weight_fraction_leaf: float, categorical_features,
                   feature_fraction: float, sampling: Sampling | None, subset_size: int = 1) -> tuple:
    """``(configured trainer, the loss it minimises, the targets it takes)`` of ``trainer`` (one of
    :data:`FAMILY_TRAINERS`) and the options of :func:`~bob_boost.recipes.make_recipe` (``subset_size``:
    PIBoost's largest label subsets).

    Raises
    ------
    ValueError
        For options the algorithm does not take (sampling, other weak learners, a class count it does not
        classify), naming them.
    """
    if feature_fraction != 1.0 or sampling is not None:
        raise InvalidValueError(f"feature_fraction, sampling: {trainer!r} fits every weak machine to every row and "
                                f"column (as its paper); leave them at their defaults")
    if trainer == "piboost":  # every label against the others, stumps and steps of Cost-Sensitive AdaBoost
        if number_of_classes is None or weak_learner != "stump":
            raise InvalidValueError("trainer: 'piboost' classifies (class labels) with decision stumps "
                                    "(weak_learner='stump')")
        return (PIBoostTrainer(number_of_rounds, subset_size, number_of_classes=number_of_classes),
                CMELoss(samme_cost_matrix(number_of_classes)), "indices")
    if trainer == "arc-gv":
        return _arc_gv(number_of_classes, weak_learner, max_bins, n_threads, missing, shrinkage)
    if trainer in LEAST_SQUARES_TRAINERS:
        return _least_squares(trainer, number_of_classes, weak_learner, tree_depth, max_bins, n_threads, missing,
                              shrinkage)
    return _probability(trainer, number_of_classes, weak_learner, tree_depth, number_of_rounds, shrinkage, missing,
                        min_weight_fraction_leaf, categorical_features)


def _arc_gv(number_of_classes, weak_learner, max_bins, n_threads, missing, shrinkage) -> tuple:
    """arc-gv on signed targets with +-1 decision stumps."""
    if number_of_classes != 2:
        raise InvalidValueError(f"trainer: 'arc-gv' is binary but there are {number_of_classes} classes")
    if weak_learner != "stump":
        raise InvalidValueError(f"weak_learner: 'arc-gv' boosts +-1 decision stumps, got {weak_learner!r}")
    configured = ArcGVTrainer(StumpTrainer(max_bins=max_bins, n_threads=n_threads, missing=missing),
                              learning_rate=1.0 if shrinkage is None else shrinkage)
    return configured, configured.loss_function, "signed"


def _least_squares(trainer, number_of_classes, weak_learner, tree_depth, max_bins, n_threads, missing,
                   shrinkage) -> tuple:
    """Gentle AdaBoost or two-class LogitBoost on signed targets: weighted least-squares stumps, or trees of
    ``tree_depth`` (default 2), weight 1."""
    if number_of_classes != 2:
        raise InvalidValueError(f"trainer: {trainer!r} is binary but there are {number_of_classes} classes")
    if weak_learner not in ("stump", "tree"):
        raise InvalidValueError(f"weak_learner: {trainer!r} boosts regression trees ('stump' or 'tree'), got "
                                f"{weak_learner!r}")
    if shrinkage not in (None, 1.0):
        raise InvalidValueError(f"shrinkage, feature_fraction, sampling: {trainer!r} adds every tree whole, fitted "
                                f"to every row and column (as its paper); leave them at their defaults")
    depth = 1 if weak_learner == "stump" else (2 if tree_depth is None else tree_depth)
    cls = GentleAdaBoostTrainer if trainer == "gentle-adaboost" else LogitBoostTrainer
    configured = cls(depth, max_bins=max_bins, n_threads=n_threads, missing=missing)
    return configured, configured.loss_function, "signed"


def _probability(trainer, number_of_classes, weak_learner, tree_depth, number_of_rounds, shrinkage, missing,
                 min_weight_fraction_leaf, categorical_features) -> tuple:
    """Real AdaBoost (two classes, signed targets, the exponential loss) or SAMME.R (class indices, the
    multi-class exponential loss: CMEL of SAMME's costs) on class-probability trees: stumps, or trees of
    ``tree_depth`` (default 2)."""
    if number_of_classes is None:
        raise InvalidValueError(f"trainer: {trainer!r} is a classifier; it needs class labels")
    if weak_learner not in ("stump", "tree"):
        raise InvalidValueError(f"weak_learner: {trainer!r} boosts class-probability trees ('stump' or 'tree'), "
                                f"got {weak_learner!r}")
    if trainer == "real-adaboost" and number_of_classes != 2:
        raise InvalidValueError(f"trainer: 'real-adaboost' is binary but there are {number_of_classes} classes; use "
                                f"'samme-r', its multi-class form")
    depth = 1 if weak_learner == "stump" else (2 if tree_depth is None else tree_depth)
    real = trainer == "real-adaboost"
    weak = ProbabilityTreeTrainer(depth, leaves="real" if real else "samme.r", missing=missing,
                                  min_weight_fraction_leaf=min_weight_fraction_leaf,
                                  categorical_features=categorical_features)
    rate = 1.0 if shrinkage is None else shrinkage
    if real:
        return RealAdaBoostTrainer(weak, number_of_rounds, rate), ExponentialLoss(), "signed"
    configured = SAMMERTrainer(weak, number_of_rounds, rate, number_of_classes=number_of_classes)
    return configured, CMELoss(samme_cost_matrix(number_of_classes)), "indices"
