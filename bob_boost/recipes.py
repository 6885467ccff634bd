"""The one factory from option names to a configured trainer.

The command line (``bob-boost train``), every scikit-learn estimator's
``fit`` and the MNIST example describe a training run with the same words;
:func:`make_recipe` turns them into a :class:`Recipe`: the configured
trainer, the loss it minimises (for progress and evaluation), the form of
targets it takes, and one ``train`` call for all of them.

Vocabulary
----------
trainers (:data:`TRAINERS`)
    ``"boosting"`` (generic loss-driven boosting, bob's), ``"adaboostdb"``,
    ``"cost-sensitive-adaboost"``, ``"badacost"``, ``"samme"``, ``"adaboost-m1"``, ``"real-adaboost"``,
    ``"samme-r"``, ``"gentle-adaboost"``, ``"logitboost"``, ``"arc-gv"``, ``"rusboost"``, ``"piboost"``, and the
    binary cost-reweighting ``"adac1"``, ``"adac2"``, ``"adac3"``, ``"adacost"``, ``"csb0"``, ``"csb1"``,
    ``"csb2"``, ``"asymboost"``, calibrated AdaMEC ``"adamec"``, and the multi-class cost-sensitive
    ``"adac2-m1"``, ``"multiboost"``, ``"lp-csb"``.
weak learners (:data:`WEAK_LEARNERS`)
    ``"stump"``, ``"lut"``, ``"tree"`` (multi-class trainers only).
losses
    The names in :func:`bob_boost.registry.loss_names` (``"exponential"``,
    ``"logit"``, ``"tangential"``, ``"squared"``, ``"jesorsky"``, ``"cmel"``,
    ``"double_base"``, and plugins), plus bob's short names in :data:`LOSS_ALIASES`.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import check_positive_int
from .callbacks import RoundCallback
from .exceptions import InvalidValueError
from .family_recipes import (FAMILY_TRAINERS, MULTICLASS_COST_TRAINERS, REWEIGHTING_TRAINERS, adamec_trainer,
                             family_trainer, multiclass_cost_trainer, reweighting_trainer)
from .labels import ClassEncoding
from .losses.base import LossFunction
from .losses.cmel import CMELoss
from .losses.softmax import SoftmaxLoss
from .boosting.sampling import Sampling
from .machine import BoostedMachine
from .trainers import Boosting, LUTTrainer, StumpTrainer
from .trainers.badacost import AdaBoostM1Trainer, BAdaCostTrainer, SAMMETrainer
from .trainers.cost_sensitive import AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer
from .weak_trainers.lut import SELECTION_STYLES  # noqa: F401 (the front doors' choices, re-exported)
from .weak_trainers.multiclass import CostSensitiveTreeTrainer, MultiClassLUTTrainer, MultiClassStumpTrainer
from .weak_trainers.tree import TreeTrainer
# the losses by name, re-exported: the front doors import them from here
from .loss_names import (CLASSIFICATION_LOSSES, LOSS_ALIASES, REGRESSION_LOSSES,  # noqa: F401
                         is_regression_loss, make_loss, make_regression_loss)

TRAINERS = ("boosting", "adaboostdb", "cost-sensitive-adaboost", "badacost", "samme", "adaboost-m1", "real-adaboost",
            "samme-r", "gentle-adaboost", "logitboost", "arc-gv", "rusboost", "piboost", *REWEIGHTING_TRAINERS,
            "adamec", *MULTICLASS_COST_TRAINERS)
WEAK_LEARNERS = ("stump", "lut", "tree")
MULTICLASS_TRAINERS = ("badacost", "samme", "adaboost-m1", "rusboost")
BINARY_COST_TRAINERS = ("adaboostdb", "cost-sensitive-adaboost")


@dataclass(frozen=True)
class Recipe:
    """A configured trainer and how to feed it.

    Attributes
    ----------
    name : str
        The trainer's name in :data:`TRAINERS`.
    trainer : object
        The configured trainer (:class:`~bob_boost.Boosting`,
        :class:`~bob_boost.AdaBoostDBTrainer`, :class:`~bob_boost.BAdaCostTrainer`, ...).
    loss : LossFunction
        The loss the trainer minimises, on the targets it takes.
    target_kind : str
        ``"signed"``, ``"one_vs_rest"``, ``"indices"`` (see
        :meth:`bob_boost.labels.ClassEncoding.targets`) or ``"values"`` (regression).
    sample_costs : numpy.ndarray, dask.array.Array or None
        BAdaCost's example-dependent costs, given to every run (``sample_costs`` of
        :meth:`~bob_boost.trainers.badacost.BAdaCostTrainer.train`; on a cluster, a Dask array with the training
        rows' chunks), or None.
    """

    name: str
    trainer: Any
    loss: LossFunction
    target_kind: str
    sample_costs: np.ndarray | None = None

    def prior_baseline(self, class_weights: np.ndarray) -> np.ndarray:
        """(#outputs,) the generic trainer's scores of least loss for a classifier that knows only the class
        prior: its loss's optimal constant (:meth:`LossFunction.baseline`, e.g. half the log-odds for the
        exponential loss) on one target row per class weighted by ``class_weights``, each class's (K,) total
        sample weight.

        All rows of a class have the same targets, so this is the optimal constant of the training data
        itself; the totals are all it needs, which a cluster counts as cheaply as memory.
        """
        weights = np.asarray(class_weights, dtype=np.float64)
        indices = np.arange(weights.size)
        rows = self.loss.check_targets(ClassEncoding(indices).targets(self.target_kind, indices))
        return self.loss.baseline(rows, weights)

    def train(self, features, targets, number_of_rounds: int, callback: RoundCallback | None = None,
              sample_weight: np.ndarray | None = None,
              boosted_machine: BoostedMachine | None = None, baseline: np.ndarray | None = None) -> BoostedMachine:
        """Train a new machine, or continue ``boosted_machine``, for ``number_of_rounds`` rounds at most.

        Parameters
        ----------
        features : array_like
            (#samples, #features) training features.
        targets : array_like
            Targets of :attr:`target_kind`.
        number_of_rounds : int
            Maximum number of rounds.
        callback : callable, optional
            The round callback (:mod:`bob_boost.callbacks`).
        sample_weight : numpy.ndarray, optional
            (#samples,) non-negative weights: factors of the generic trainer's
            loss, the initial distributions of the other trainers.
        boosted_machine : BoostedMachine, optional
            A machine this recipe trained on the same data, extended in place:
            the result equals one run of the total number of rounds.
        baseline : numpy.ndarray, optional
            The generic trainer's new machine starts from these (#outputs,)
            constant scores (a classifier's :meth:`prior_baseline`).

        Notes
        -----
        With a regression loss a new machine's baseline is by default the loss's
        optimal constant (:meth:`LossFunction.baseline`: the weighted mean of the
        targets for the squared loss, its log for the log-link losses); with a
        classification loss it is 0, bob.learn.boosting's model.
        """
        number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        options: dict[str, Any] = {"callback": callback, "boosted_machine": boosted_machine}
        if baseline is not None and self.name != "boosting":
            raise InvalidValueError(f"baseline: only the generic trainer starts from one, not {self.name!r}")
        if self.name in BINARY_COST_TRAINERS:
            return self.trainer.train(features, targets, number_of_rounds, sample_weights=sample_weight, **options)
        if (baseline is None and self.name == "boosting" and is_regression_loss(self.loss)
                and self.loss.has_baseline and boosted_machine is None):
            # weak machines output +-1: without the optimal constant a target far from 0 takes many rounds
            # just to reach its level
            baseline = "auto"
        if baseline is not None:
            options["baseline"] = baseline
        if self.sample_costs is not None:
            options["sample_costs"] = self.sample_costs
        return self.trainer.train(features, targets, number_of_rounds, sample_weight=sample_weight, **options)


def make_recipe(trainer: str = "boosting", *, number_of_classes: int | None,
                loss: str | LossFunction | None = None,
                weak_learner: str = "stump", lut_entries: int = 256, selection_style: str = "independent",
                cost_positive: float | None = None, cost_negative: float | None = None, cost_matrix=None,
                selection: str = "alpha", tree_depth: int | None = None, shrinkage: float | None = None,
                feature_fraction: float = 1.0, random_state: int | None = None,
                number_of_rounds: int = 100, one_vs_rest: bool = False, max_bins: int | None = 256,
                n_threads: int | None = None, missing: str | None = None, tree_leaves: int | None = 31,
                tree_growth: str = "leafwise", tree_outputs: str = "per_output",
                tree_quantized_gradients: int | None = None, sampling: Sampling | None = None,
                tree_min_weight_fraction_leaf: float = 0.0, tree_monotonic_cst=None,
                tree_interaction_cst=None, categorical_features=None, lp_norm: float = 2.0,
                pool_size: int = 6000, subset_size: int = 1, calibration: str | None = "platt",
                calibration_fraction: float = 0.5, sample_costs=None) -> Recipe:
    """Configure a trainer from option names.

    Parameters
    ----------
    trainer : str
        One of :data:`TRAINERS`.
    number_of_classes : int or None
        K of a classification problem; None for regression.
    loss : str or LossFunction, optional
        The generic trainer's loss, by its registered name or as an instance;
        default exponential for two classes, logit for more, squared for
        regression. Other trainers fix their loss.
    weak_learner : {"stump", "lut", "tree"}
        Trees: the multi-class trainers' cost-sensitive trees, or for the
        generic trainer gradient trees (:class:`~bob_boost.TreeTrainer`, depth
        ``tree_depth``, shrunk by ``shrinkage``).
    lut_entries : int
        Entries of each look-up table (features in ``0 .. lut_entries-1``).
    selection_style : {"independent", "shared"}
        Multi-output LUTs: a feature per output, or one shared by all.
    cost_positive, cost_negative : float, optional
        The binary costs (AdaBoostDB, Cost-Sensitive AdaBoost, the cost-reweighting trainers, AdaMEC, the
        double-base loss); default 1.
    cost_matrix : array_like, optional
        (K, K) costs of BAdaCost, AdaC2.M1, MultiBoost, Lp-CSB and the CMEL loss.
    selection : {"alpha", "loss"}
        AdaBoostDB's selection rule.
    tree_depth, shrinkage, feature_fraction, random_state, number_of_rounds
        Options of the multi-class trainers (``tree_depth`` and ``shrinkage``, the learning rate, also of the
        generic trainer). ``tree_depth`` None: depth 2 for the multi-class trainers' cost-sensitive trees, no
        depth limit for gradient trees (which ``tree_leaves`` limits). ``shrinkage`` None: 1 for the
        multi-class trainers and for stumps and LUTs, 0.1 for gradient trees
        (:attr:`~bob_boost.TreeTrainer.default_learning_rate`).
    one_vs_rest : bool
        Generic boosting of a classification loss: one output per class even
        for two classes (bob's multi-variate MNIST example), instead of one
        +-1 output.
    max_bins, n_threads : int or None
        The generic trainer's weak trainers: bins per feature of the stump
        search (None: every distinct value) and threads (None: every core).
    missing : {None, "bin"}
        ``"bin"``: NaN is a missing value with a bin of its own (the generic
        trainer's weak trainers and the multi-class trees); None rejects NaN.
    tree_leaves, tree_growth, tree_outputs, tree_quantized_gradients
        The generic trainer's gradient trees: ``max_leaves``, ``growth``,
        ``multi_output`` and ``quantized_gradients`` of :class:`~bob_boost.TreeTrainer`
        (by default 31 leaves grown leaf-wise, as LightGBM).
    sampling : Sampling, optional
        Stochastic boosting (:class:`~bob_boost.Sampling`) of the generic and the multi-class trainers
        (whose columns ``feature_fraction`` samples); AdaBoostDB and Cost-Sensitive AdaBoost take none.
    tree_monotonic_cst, tree_interaction_cst : optional
        The generic trainer's gradient trees: -1, 0 or +1 per feature, and groups of features that may
        interact (``monotonic_cst`` and ``interaction_cst`` of :class:`~bob_boost.TreeTrainer`).
    categorical_features : optional
        The features split by category sets: by the generic trainer's stumps and gradient trees
        (``categorical_features`` of :class:`~bob_boost.StumpTrainer` and :class:`~bob_boost.TreeTrainer`)
        by the stump pools of AdaBoostDB and Cost-Sensitive AdaBoost, and by the multi-class trainers'
        cost-sensitive trees (of :class:`~bob_boost.weak_trainers.multiclass.CostSensitiveTreeTrainer`);
        look-up tables read every feature as categories already, and take them as they are.
    tree_min_weight_fraction_leaf : float
        The multi-class trainers' stumps and cost-sensitive trees: the least share of the round's weight
        in each child of a split (``min_weight_fraction_leaf`` of
        :class:`~bob_boost.weak_trainers.multiclass.CostSensitiveTreeTrainer`).
    lp_norm : float
        Lp-CSB's norm ``p`` (>= 1).
    pool_size : int
        MultiBoost's number of pool trees.
    subset_size : int
        PIBoost's largest label subsets (1: every label against the others).
    calibration, calibration_fraction
        AdaMEC's calibration (``"platt"``, ``"isotonic"`` or None) and the share of each class held out for it
        (held-out rows chosen from ``random_state``, None: 0).
    sample_costs : array_like, optional
        BAdaCost's (with trees) example-dependent costs, one row (or matrix) per training sample
        (:attr:`Recipe.sample_costs`; checked against the labels when training).

    Raises
    ------
    ValueError
        For an unknown name, or options that do not fit together (the
        message names them).
    """
    if trainer not in TRAINERS:
        raise InvalidValueError(f"trainer: must be one of {TRAINERS}, got {trainer!r}")
    if weak_learner not in WEAK_LEARNERS:
        raise InvalidValueError(f"weak_learner: must be one of {WEAK_LEARNERS}, got {weak_learner!r}")
    if sample_costs is not None and (trainer != "badacost" or weak_learner != "tree"):
        raise InvalidValueError(f"sample_costs: example-dependent costs are BAdaCost's with trees (trainer="
                                f"'badacost', weak_learner='tree'), got trainer={trainer!r} with "
                                f"weak_learner={weak_learner!r}")
    if trainer == "rusboost":  # SAMME on every round's random under-sample of the majority classes
        if sampling is not None and sampling.method != "undersample":
            raise InvalidValueError(f"sampling: RUSBoost under-samples every class (method 'undersample'), got "
                                    f"{sampling.method!r}")
        sampling = sampling or Sampling(method="undersample", random_state=0 if random_state is None
                                        else int(random_state))
    if trainer in REWEIGHTING_TRAINERS:
        return Recipe(trainer, *reweighting_trainer(
            trainer, number_of_classes, weak_learner, cost_positive=cost_positive, cost_negative=cost_negative,
            number_of_rounds=number_of_rounds, max_bins=max_bins, n_threads=n_threads, missing=missing,
            shrinkage=shrinkage, feature_fraction=feature_fraction, sampling=sampling,
            categorical_features=categorical_features))
    if trainer == "adamec":
        return Recipe(trainer, *adamec_trainer(
            number_of_classes, weak_learner, cost_positive=cost_positive, cost_negative=cost_negative,
            calibration=calibration, calibration_fraction=calibration_fraction, random_state=random_state,
            max_bins=max_bins, n_threads=n_threads, missing=missing, shrinkage=shrinkage,
            feature_fraction=feature_fraction, sampling=sampling, categorical_features=categorical_features))
    if trainer in MULTICLASS_COST_TRAINERS:
        return Recipe(trainer, *multiclass_cost_trainer(
            trainer, number_of_classes, weak_learner, cost_matrix=cost_matrix, tree_depth=tree_depth,
            number_of_rounds=number_of_rounds, shrinkage=shrinkage, feature_fraction=feature_fraction,
            random_state=random_state, sampling=sampling, missing=missing,
            min_weight_fraction_leaf=tree_min_weight_fraction_leaf, categorical_features=categorical_features,
            lp_norm=lp_norm, pool_size=pool_size))
    if trainer in FAMILY_TRAINERS:
        return Recipe(trainer, *family_trainer(
            trainer, number_of_classes, weak_learner, tree_depth=tree_depth, number_of_rounds=number_of_rounds,
            max_bins=max_bins, n_threads=n_threads, missing=missing, shrinkage=shrinkage,
            min_weight_fraction_leaf=tree_min_weight_fraction_leaf, categorical_features=categorical_features,
            feature_fraction=feature_fraction, sampling=sampling, subset_size=subset_size))
    if categorical_features is not None and trainer in MULTICLASS_TRAINERS and weak_learner != "tree":
        raise InvalidValueError(f"categorical_features: split by the stumps and gradient trees of trainer='boosting', "
                                f"the stump pools of {' and '.join(map(repr, BINARY_COST_TRAINERS))} and the "
                                f"cost-sensitive trees of the multi-class trainers, got trainer={trainer!r} with "
                                f"weak_learner={weak_learner!r}")
    if trainer in MULTICLASS_TRAINERS:
        recipe = _multiclass_recipe(trainer, number_of_classes, weak_learner, lut_entries,
                                    2 if tree_depth is None else tree_depth, cost_matrix,
                                    dict(number_of_rounds=number_of_rounds,
                                         shrinkage=1.0 if shrinkage is None else shrinkage,
                                         feature_fraction=feature_fraction, random_state=random_state,
                                         sampling=sampling), missing, tree_min_weight_fraction_leaf,
                                    categorical_features)
        return recipe if sample_costs is None else dataclasses.replace(recipe, sample_costs=sample_costs)
    if trainer in BINARY_COST_TRAINERS:
        if sampling is not None:
            raise InvalidValueError(f"sampling: {trainer!r} chooses each stump with its closed-form step on every "
                                    f"sample; it takes no subsampling")
        if number_of_classes != 2:
            raise InvalidValueError(f"trainer: {trainer!r} is binary but there are {number_of_classes} classes")
        if weak_learner != "stump":  # recorded in the model's metadata: it must be what was trained
            raise InvalidValueError(f"weak_learner: {trainer!r} boosts decision stumps, got {weak_learner!r}")
        costs = (1.0 if cost_positive is None else cost_positive, 1.0 if cost_negative is None else cost_negative)
        configured = (AdaBoostDBTrainer(*costs, selection=selection, categorical_features=categorical_features)
                      if trainer == "adaboostdb" else
                      CostSensitiveAdaBoostTrainer(*costs, categorical_features=categorical_features))
        return Recipe(trainer, configured, configured.loss_function, "signed")
    return _boosting_recipe(number_of_classes, loss, weak_learner, lut_entries, selection_style,
                            cost_positive, cost_negative, cost_matrix, one_vs_rest, max_bins, n_threads,
                            dict(max_depth=tree_depth, max_leaves=tree_leaves, growth=tree_growth,
                                 multi_output=tree_outputs, quantized_gradients=tree_quantized_gradients,
                                 monotonic_cst=tree_monotonic_cst, interaction_cst=tree_interaction_cst,
                                 categorical_features=categorical_features),
                            shrinkage, missing, sampling)


def _boosting_recipe(number_of_classes, loss, weak_learner, lut_entries, selection_style, cost_positive,
                     cost_negative, cost_matrix, one_vs_rest: bool, max_bins, n_threads, tree_options: dict,
                     shrinkage, missing, sampling) -> Recipe:
    if loss is None:
        loss = "squared" if number_of_classes is None else ("exponential" if number_of_classes == 2 else "logit")
    loss_function = (loss if isinstance(loss, LossFunction)
                     else make_loss(loss, cost_matrix, cost_positive, cost_negative))
    if isinstance(loss_function, SoftmaxLoss) and number_of_classes is not None:
        loss_function = SoftmaxLoss(number_of_classes)  # the count is known: no chunk of the labels need tell it
    if is_regression_loss(loss_function):
        if number_of_classes is not None:
            raise InvalidValueError(f"loss: {loss_function.name!r} is a regression loss, not one for classes")
        kind = "values"
    elif number_of_classes is None:
        raise InvalidValueError(f"loss: {loss_function.name!r} is a classification loss; it needs class labels")
    elif loss_function.cost_matrix is not None or isinstance(loss_function, SoftmaxLoss):
        kind = "indices"
    else:
        kind = "signed" if number_of_classes == 2 and not one_vs_rest else "one_vs_rest"
    outputs = None
    if kind == "one_vs_rest":
        outputs = number_of_classes
    elif kind == "indices":
        outputs = number_of_classes if loss_function.cost_matrix is None else loss_function.cost_matrix.shape[0]
    elif kind == "signed":
        outputs = 1
    categorical = tree_options.pop("categorical_features")
    for name in ("monotonic_cst", "interaction_cst"):
        if tree_options[name] is not None and weak_learner != "tree":
            raise InvalidValueError(f"{name}: constrains gradient trees (weak_learner='tree'), got "
                                    f"weak_learner={weak_learner!r}")
    if weak_learner == "tree":
        weak = TreeTrainer(max_bins=max_bins, n_threads=n_threads, missing=missing, categorical_features=categorical,
                           **tree_options)
    elif weak_learner == "stump":
        if outputs not in (None, 1):
            raise InvalidValueError(f"weak_learner: stumps are univariate but this task has {outputs} outputs; "
                                    "use 'lut'")
        weak = StumpTrainer(max_bins=max_bins, n_threads=n_threads, missing=missing, categorical_features=categorical)
    else:
        weak = LUTTrainer(lut_entries, 1 if outputs is None else outputs, selection_style, n_threads=n_threads,
                          missing=missing)
    return Recipe("boosting", Boosting(weak, loss_function, learning_rate=shrinkage, sampling=sampling),
                  loss_function, kind)


def _multiclass_recipe(trainer, number_of_classes, weak_learner, lut_entries, tree_depth, cost_matrix,
                       options: dict[str, Any], missing: str | None = None,
                       min_weight_fraction_leaf: float = 0.0, categorical_features=None) -> Recipe:
    if number_of_classes is None:
        raise InvalidValueError(f"trainer: {trainer!r} is a classifier; it needs class labels")
    if missing is not None and weak_learner == "lut":
        raise InvalidValueError("missing: the multi-class LUT learner has no missing-value handling; use "
                                "weak_learner='tree' or 'stump'")
    if min_weight_fraction_leaf and weak_learner == "lut":
        raise InvalidValueError("min_weight_fraction_leaf: a look-up table has an entry per feature value, no "
                                "leaves; use weak_learner='tree' or 'stump'")
    if weak_learner == "lut":
        weak = MultiClassLUTTrainer(lut_entries)
    elif weak_learner == "stump":
        weak = MultiClassStumpTrainer(missing=missing, min_weight_fraction_leaf=min_weight_fraction_leaf)
    else:
        weak = CostSensitiveTreeTrainer(max_depth=tree_depth, missing=missing,
                                        min_weight_fraction_leaf=min_weight_fraction_leaf,
                                        categorical_features=categorical_features)
    if trainer == "badacost":
        if cost_matrix is None:
            raise InvalidValueError("cost_matrix: the badacost trainer needs a cost matrix")
        configured = BAdaCostTrainer(cost_matrix, weak_learner=weak, **options)
        if configured.cost_matrix.shape[0] != number_of_classes:
            size = configured.cost_matrix.shape[0]
            raise InvalidValueError(f"cost_matrix: is {size}x{size} but there are {number_of_classes} classes")
    else:
        cls = AdaBoostM1Trainer if trainer == "adaboost-m1" else SAMMETrainer  # RUSBoost: SAMME, sampled
        configured = cls(number_of_classes=number_of_classes, weak_learner=weak, **options)
    return Recipe(trainer, configured, CMELoss(configured.cost_matrix), "indices")
