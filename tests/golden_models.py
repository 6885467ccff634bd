"""Golden models: small, fixed trainings of every algorithm, stored as HDF5 reference files.

The library is about to be refactored (the model file will say what it
means, the front doors will become thin, and the training loops will be
merged). These configurations pin down what today's code trains, so that
``tests/test_golden_models.py`` can retrain each one after the refactor and
prove that the weak machines, their weights and the scores they give are
unchanged, bit for bit.

Every configuration is a function without arguments that trains on the
fixed data of this module and returns either a
:class:`bob_boost.BoostedMachine` or a fitted :mod:`bob_boost.sklearn`
estimator. Only public, documented APIs are used, so the same code keeps
working while the internals change.

Regenerate the stored files (only on purpose, e.g. after an intended change
of the trained models, and say why in the commit) with::

    python tests/golden_models.py [--out DIR] [NAME ...]

which writes ``<name>.hdf5`` for every configuration (or only the named
ones) into ``DIR`` (default ``tests/data/golden`` beside this file).

Notes
-----
The files were written on one machine with one numpy / scipy build (OpenBLAS's
SkylakeX kernels). The test compares the structure and the weights of closed
forms, root searches and Newton steps exactly; the weights L-BFGS-B fits move
with the BLAS kernels (those OpenBLAS picks for another CPU) within what
L-BFGS-B's stopping rule allows, which the test derives
(``lbfgs_allowance`` in ``tests/test_golden_models.py``).
``RELATIVE_TOLERANCE`` in the test is for an understood change beyond that.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable

import numpy as np

import bob_boost
from bob_boost import (AdaBoostDBTrainer, AdaBoostM1Trainer, BAdaCostTrainer, Boosting, BoostedMachine, CMELoss,
                       CostSensitiveAdaBoostTrainer, CostSensitiveTreeTrainer, DoubleBaseLoss, ExponentialLoss,
                       JesorskyLoss, LogitLoss, LUTTrainer, MultiClassLUTTrainer, MultiClassStumpTrainer,
                       SAMMETrainer, SquaredLoss, StumpTrainer, TangentialLoss)

#: Where the stored reference files live.
GOLDEN_DIRECTORY = Path(__file__).resolve().parent / "data" / "golden"

#: Number of training samples; small so that all configurations retrain in a few seconds.
NUMBER_OF_SAMPLES = 300
#: Real-valued (Gaussian) feature columns of the mixed matrix; they come first.
NUMBER_OF_REAL_FEATURES = 5
#: Integer-valued feature columns in ``[0, NUMBER_OF_VALUES)``; they come last, and alone they are
#: the discrete matrix on which the LUT trainers work.
NUMBER_OF_DISCRETE_FEATURES = 4
#: Number of LUT entries: integer features are in ``[0, NUMBER_OF_VALUES)``.
NUMBER_OF_VALUES = 16
#: Number of classes of the multi-class labels.
NUMBER_OF_CLASSES = 3
#: Boosting rounds of most configurations (a few stop earlier on their own). bob's HDF5 layout
#: costs about 2 kB per stump and 3 kB per tree (a group and small datasets each) plus 8 kB per
#: file; 12 rounds keep the 38 files near 1.2 MB, where 20 rounds took 1.9 MB.
ROUNDS = 12

#: The slice of the mixed matrix (rows, columns: 3 real and 1 integer) for the configuration whose
#: Python-level root search would be too slow on the full data.
SMALL_SAMPLES = 80
SMALL_COLUMNS = [0, 1, 2, NUMBER_OF_REAL_FEATURES]

#: Seeds of the fixed data; changing one changes every stored model.
TRAINING_SEED = 20240611
PROBE_SEED = 20240612

#: A non-trivial cost matrix for the multi-class cost-sensitive configurations (zero diagonal,
#: asymmetric, so that the cost rule differs from the arg-max rule). Its entries are of the size of
#: SAMME's 1/(K(K-1)): with the matrix eight times larger, BAdaCost's step turns negative after two
#: rounds on this data and training stops, which would pin down little.
COST_MATRIX = np.array([[0.0, 1.0, 4.0],
                        [2.0, 0.0, 1.0],
                        [1.0, 3.0, 0.0]]) / 8.0
#: Unequal binary costs (false negative, false positive) of the cost-sensitive binary trainers. With
#: (1, 3) AdaBoostDB's two selection rules happen to pick the same stumps on this data; with (1, 5)
#: they differ from the first round, so the "alpha" and "loss" files pin down different models.
COST_POSITIVE, COST_NEGATIVE = 1.0, 5.0


@dataclass(frozen=True)
class TrainingData:
    """The fixed training set, in every form a configuration needs.

    Attributes
    ----------
    mixed : numpy.ndarray
        (#samples, 9) float64: 5 Gaussian columns, then 4 integer columns in [0, 16).
    discrete : numpy.ndarray
        (#samples, 4) int64: the integer columns of ``mixed``.
    binary : numpy.ndarray
        (#samples,) targets in {-1, +1} that depend on real and integer columns, with label noise.
    regression : numpy.ndarray
        (#samples,) real targets around 100.
    classes : numpy.ndarray
        (#samples,) int64 labels in 0 .. 2.
    one_vs_rest : numpy.ndarray
        (#samples, 3) targets: +1 in the column of the class, -1 elsewhere.
    landmarks : numpy.ndarray
        (#samples, 6) three (y, x) points (two eyes, then a nose) for the Jesorsky loss.
    sample_weight : numpy.ndarray
        (#samples,) non-negative integer weights with some zeros.
    separable : numpy.ndarray
        (#samples,) targets in {-1, +1} that one stump on column 0 separates.
    separable_classes : numpy.ndarray
        (#samples,) int64 labels in 0 .. 2 that one LUT on the first integer column separates.
    """

    mixed: np.ndarray
    discrete: np.ndarray
    binary: np.ndarray
    regression: np.ndarray
    classes: np.ndarray
    one_vs_rest: np.ndarray
    landmarks: np.ndarray
    sample_weight: np.ndarray
    separable: np.ndarray
    separable_classes: np.ndarray


def _features(rng: np.random.Generator, number_of_samples: int) -> np.ndarray:
    """A mixed matrix: Gaussian columns with distinct float values, then integer columns."""
    real = rng.normal(size=(number_of_samples, NUMBER_OF_REAL_FEATURES))
    discrete = rng.integers(0, NUMBER_OF_VALUES, size=(number_of_samples, NUMBER_OF_DISCRETE_FEATURES))
    return np.hstack([real, discrete.astype(np.float64)])


def training_data() -> TrainingData:
    """Build the fixed training set (afresh on every call, so no training can alter another's input)."""
    rng = np.random.default_rng(TRAINING_SEED)
    n = NUMBER_OF_SAMPLES
    mixed = _features(rng, n)
    real, discrete = mixed[:, :NUMBER_OF_REAL_FEATURES], mixed[:, NUMBER_OF_REAL_FEATURES:].astype(np.int64)
    # centred integer columns, so that both kinds of feature carry signal and no stump or LUT
    # separates the data after a few rounds (training would stop early)
    centred = (discrete - (NUMBER_OF_VALUES - 1) / 2) / (NUMBER_OF_VALUES / 2)
    margin = real[:, 0] + 0.7 * real[:, 1] - 0.5 * real[:, 2] ** 2 + 0.9 * centred[:, 0] - 0.6 * centred[:, 1]
    binary = np.where(margin + 0.5 * rng.normal(size=n) > -0.2, 1.0, -1.0)
    regression = (100.0 + 3.0 * real[:, 0] - 2.0 * real[:, 3] + 4.0 * centred[:, 2] + 2.0 * centred[:, 0] * real[:, 1]
                  + 0.5 * rng.normal(size=n))
    class_scores = np.column_stack([real[:, 0] + centred[:, 0], real[:, 1] - centred[:, 1],
                                    0.5 * real[:, 2] + centred[:, 2] + 0.3])
    classes = np.argmax(class_scores + 0.4 * rng.normal(size=class_scores.shape), axis=1).astype(np.int64)
    one_vs_rest = np.where(classes[:, np.newaxis] == np.arange(NUMBER_OF_CLASSES), 1.0, -1.0)
    # eyes about 2 apart (y, x) = (0, -1) and (0, 1), a nose below; offsets follow the integer columns
    base = np.array([0.0, -1.0, 0.0, 1.0, 1.0, 0.0])
    landmarks = (base + 0.2 * centred[:, [0, 1, 1, 2, 3, 0]] + 0.05 * rng.normal(size=(n, 6)))
    sample_weight = rng.integers(0, 4, size=n).astype(np.float64)
    separable = np.where(real[:, 0] > 0.1, 1.0, -1.0)
    separable_classes = discrete[:, 0] % NUMBER_OF_CLASSES
    return TrainingData(mixed, discrete, binary, regression, classes, one_vs_rest, landmarks, sample_weight,
                        separable, separable_classes)


def probe_features(kind: str = "mixed") -> np.ndarray:
    """The fixed probe matrix on which the stored and the retrained machines are scored.

    Parameters
    ----------
    kind : {"mixed", "discrete", "small"}
        ``"mixed"``: (60, 9) -- 40 fresh samples (5 of them with real values
        far outside the training range) followed by the first 20 training
        rows; ``"discrete"``: its integer columns, for machines trained on the
        discrete matrix (LUTs need integers in [0, 16)); ``"small"``: its
        :data:`SMALL_COLUMNS`, for the configuration trained on that slice.
    """
    rng = np.random.default_rng(PROBE_SEED)
    fresh = _features(rng, 40)
    # beyond the training range: every stump and tree sends these to one side
    fresh[:5, :NUMBER_OF_REAL_FEATURES] *= 10.0
    probe = np.vstack([fresh, training_data().mixed[:20]])
    if kind == "mixed":
        return probe
    if kind == "discrete":
        return probe[:, NUMBER_OF_REAL_FEATURES:].astype(np.int64)
    if kind == "small":
        return probe[:, SMALL_COLUMNS]
    raise ValueError(f"kind: must be 'mixed', 'discrete' or 'small', got {kind!r}")


#: name -> function that trains and returns a BoostedMachine or a fitted bob_boost.sklearn estimator.
CONFIGURATIONS: dict[str, Callable[[], object]] = {}
#: name -> the ``kind`` of :func:`probe_features` that the configuration's machine reads.
PROBE_KINDS: dict[str, str] = {}


def configuration(name: str, probe: str = "mixed") -> Callable[[Callable[[], object]], Callable[[], object]]:
    """Register a training function under ``name``; ``probe`` is the probe kind it is scored on."""
    def register(function: Callable[[], object]) -> Callable[[], object]:
        if name in CONFIGURATIONS:
            raise ValueError(f"configuration {name!r} is defined twice")
        CONFIGURATIONS[name] = function
        PROBE_KINDS[name] = probe
        return function
    return register


# -- generic boosting: StumpTrainer with every binary / regression loss -----------
@configuration("boosting_stump_exponential")
def _boosting_stump_exponential() -> BoostedMachine:
    data = training_data()
    return Boosting(StumpTrainer(max_bins=None), ExponentialLoss()).train(data.mixed, data.binary, ROUNDS)


@configuration("boosting_stump_logit")
def _boosting_stump_logit() -> BoostedMachine:
    data = training_data()
    return Boosting(StumpTrainer(max_bins=None), LogitLoss()).train(data.mixed, data.binary, ROUNDS)


@configuration("boosting_stump_logit_continued")
def _boosting_stump_logit_continued() -> BoostedMachine:
    # continuing a machine (boosted_machine=) restarts from its training scores; one training loop
    # must keep that path
    data = training_data()
    trainer = Boosting(StumpTrainer(max_bins=None), LogitLoss())
    machine = trainer.train(data.mixed, data.binary, ROUNDS // 2)
    return trainer.train(data.mixed, data.binary, ROUNDS - ROUNDS // 2, boosted_machine=machine)


@configuration("boosting_stump_tangential")
def _boosting_stump_tangential() -> BoostedMachine:
    data = training_data()
    return Boosting(StumpTrainer(max_bins=None), TangentialLoss()).train(data.mixed, data.binary, ROUNDS)


@configuration("boosting_stump_squared")
def _boosting_stump_squared() -> BoostedMachine:
    # no intercept in the generic trainer: the first rounds climb to the level of ~100
    data = training_data()
    return Boosting(StumpTrainer(max_bins=None), SquaredLoss()).train(data.mixed, data.regression, ROUNDS)


@configuration("boosting_stump_double_base")
def _boosting_stump_double_base() -> BoostedMachine:
    data = training_data()
    loss = DoubleBaseLoss(cost_positive=COST_POSITIVE, cost_negative=COST_NEGATIVE)
    return Boosting(StumpTrainer(max_bins=None), loss).train(data.mixed, data.binary, ROUNDS)


# -- generic boosting: LUTTrainer -------------------------------------------------
@configuration("boosting_lut_univariate_exponential", probe="discrete")
def _boosting_lut_univariate_exponential() -> BoostedMachine:
    data = training_data()
    return Boosting(LUTTrainer(NUMBER_OF_VALUES), ExponentialLoss()).train(data.discrete, data.binary, ROUNDS)


@configuration("boosting_lut_multivariate_independent_logit", probe="discrete")
def _boosting_lut_multivariate_independent_logit() -> BoostedMachine:
    data = training_data()
    lut = LUTTrainer(NUMBER_OF_VALUES, number_of_outputs=NUMBER_OF_CLASSES, selection_style="independent")
    return Boosting(lut, LogitLoss()).train(data.discrete, data.one_vs_rest, ROUNDS)


@configuration("boosting_lut_multivariate_shared_logit", probe="discrete")
def _boosting_lut_multivariate_shared_logit() -> BoostedMachine:
    data = training_data()
    lut = LUTTrainer(NUMBER_OF_VALUES, number_of_outputs=NUMBER_OF_CLASSES, selection_style="shared")
    return Boosting(lut, LogitLoss()).train(data.discrete, data.one_vs_rest, ROUNDS)


@configuration("boosting_lut_jesorsky", probe="discrete")
def _boosting_lut_jesorsky() -> BoostedMachine:
    # the Jesorsky loss couples (y, x) outputs, so it needs a multi-variate weak trainer: StumpTrainer
    # is univariate, LUTTrainer with one output per coordinate is what bob.learn.boosting used
    data = training_data()
    lut = LUTTrainer(NUMBER_OF_VALUES, number_of_outputs=data.landmarks.shape[1], selection_style="independent")
    return Boosting(lut, JesorskyLoss()).train(data.discrete, data.landmarks, ROUNDS)


@configuration("boosting_lut_cmel", probe="discrete")
def _boosting_lut_cmel() -> BoostedMachine:
    # CMEL gives a K-column gradient; the generic loop needs a K-output weak trainer (doc/multiclass.md)
    data = training_data()
    lut = LUTTrainer(NUMBER_OF_VALUES, number_of_outputs=NUMBER_OF_CLASSES)
    return Boosting(lut, CMELoss(COST_MATRIX)).train(data.discrete, data.classes, ROUNDS)


# -- AdaBoostDB: every selection rule with every search it accepts -------------------
def _adaboostdb(selection: str, search: str, cost_positive: float = COST_POSITIVE,
                cost_negative: float = COST_NEGATIVE) -> BoostedMachine:
    data = training_data()
    trainer = AdaBoostDBTrainer(cost_positive, cost_negative, selection=selection, search=search)
    return trainer.train(data.mixed, data.binary, ROUNDS)


# AdaBoostDBTrainer.__init__: "conditional" needs selection "alpha", "bound" needs "loss";
# "exhaustive" and "pareto" go with both. For one rule all searches must give the same model.
_ADABOOSTDB_SEARCHES = {"alpha": ("conditional", "exhaustive", "pareto"), "loss": ("bound", "exhaustive", "pareto")}
for _selection, _searches in _ADABOOSTDB_SEARCHES.items():
    for _search in _searches:
        configuration(f"adaboostdb_{_selection}_{_search}")(
            lambda selection=_selection, search=_search: _adaboostdb(selection, search))
del _selection, _searches, _search


@configuration("adaboostdb_loss_bound_costs_2.5_0.75")
def _adaboostdb_other_costs() -> BoostedMachine:
    # non-integer costs with C_P > C_N: the other side of the polynomial's exponents
    return _adaboostdb("loss", "bound", 2.5, 0.75)


@configuration("adaboostdb_alpha_conditional_continued")
def _adaboostdb_continued() -> BoostedMachine:
    data = training_data()
    trainer = AdaBoostDBTrainer(COST_POSITIVE, COST_NEGATIVE)
    machine = trainer.train(data.mixed, data.binary, ROUNDS // 2)
    return trainer.train(data.mixed, data.binary, ROUNDS - ROUNDS // 2, boosted_machine=machine)


@configuration("adaboostdb_separable_capped_alpha")
def _adaboostdb_separable() -> BoostedMachine:
    # a stump without training error: added with the capped alpha, then training stops
    data = training_data()
    return AdaBoostDBTrainer(COST_POSITIVE, COST_NEGATIVE).train(data.mixed, data.separable, ROUNDS)


# -- Cost-Sensitive AdaBoost ------------------------------------------------------
@configuration("cost_sensitive_adaboost_vectorised")
def _cost_sensitive_adaboost_vectorised() -> BoostedMachine:
    data = training_data()
    trainer = CostSensitiveAdaBoostTrainer(COST_POSITIVE, COST_NEGATIVE, root_search="vectorised")
    return trainer.train(data.mixed, data.binary, ROUNDS)


@configuration("cost_sensitive_adaboost_scalar", probe="small")
def _cost_sensitive_adaboost_scalar() -> BoostedMachine:
    # one Brent search per candidate stump and round in Python: on the full data this alone would
    # take seconds, so it trains on a slice (the first SMALL_SAMPLES rows of SMALL_COLUMNS)
    data = training_data()
    trainer = CostSensitiveAdaBoostTrainer(COST_POSITIVE, COST_NEGATIVE, root_search="scalar")
    return trainer.train(data.mixed[:SMALL_SAMPLES][:, SMALL_COLUMNS], data.binary[:SMALL_SAMPLES], ROUNDS)


@configuration("cost_sensitive_adaboost_separable_capped_alpha")
def _cost_sensitive_adaboost_separable() -> BoostedMachine:
    data = training_data()
    return CostSensitiveAdaBoostTrainer(COST_POSITIVE, COST_NEGATIVE).train(data.mixed, data.separable, ROUNDS)


# -- multi-class: BAdaCost, SAMME, AdaBoost.M1 ---------------------------------------
@configuration("badacost_tree")
def _badacost_tree() -> BoostedMachine:
    data = training_data()
    trainer = BAdaCostTrainer(COST_MATRIX, weak_learner=CostSensitiveTreeTrainer(max_depth=2), number_of_rounds=ROUNDS)
    return trainer.train(data.mixed, data.classes)


@configuration("badacost_tree_exact_depth3")
def _badacost_tree_exact() -> BoostedMachine:
    # quantized=False searches splits on the distinct raw values (the exact float path)
    data = training_data()
    tree = CostSensitiveTreeTrainer(max_depth=3, quantized=False)
    return BAdaCostTrainer(COST_MATRIX, weak_learner=tree, number_of_rounds=ROUNDS).train(data.mixed, data.classes)


@configuration("badacost_stump")
def _badacost_stump() -> BoostedMachine:
    data = training_data()
    trainer = BAdaCostTrainer(COST_MATRIX, weak_learner=MultiClassStumpTrainer(), number_of_rounds=ROUNDS)
    return trainer.train(data.mixed, data.classes)


@configuration("badacost_lut", probe="discrete")
def _badacost_lut() -> BoostedMachine:
    data = training_data()
    trainer = BAdaCostTrainer(COST_MATRIX, weak_learner=MultiClassLUTTrainer(NUMBER_OF_VALUES),
                              number_of_rounds=ROUNDS)
    return trainer.train(data.discrete, data.classes)


@configuration("badacost_lut_separable_capped_step", probe="discrete")
def _badacost_lut_separable() -> BoostedMachine:
    # a LUT without costly errors has an infinite step: it gets the capped step and training stops
    data = training_data()
    trainer = BAdaCostTrainer(COST_MATRIX, weak_learner=MultiClassLUTTrainer(NUMBER_OF_VALUES),
                              number_of_rounds=ROUNDS)
    return trainer.train(data.discrete, data.separable_classes)


@configuration("badacost_tree_shrinkage_feature_fraction")
def _badacost_tree_shrinkage_feature_fraction() -> BoostedMachine:
    # the feature subsets are drawn from the seeded generator, so the model is fixed
    data = training_data()
    trainer = BAdaCostTrainer(COST_MATRIX, weak_learner=CostSensitiveTreeTrainer(max_depth=2), number_of_rounds=ROUNDS,
                              shrinkage=0.5, feature_fraction=0.5, random_state=7)
    return trainer.train(data.mixed, data.classes)


@configuration("badacost_tree_continued")
def _badacost_tree_continued() -> BoostedMachine:
    data = training_data()
    trainer = BAdaCostTrainer(COST_MATRIX, weak_learner=CostSensitiveTreeTrainer(max_depth=2),
                              number_of_rounds=ROUNDS // 2)
    machine = trainer.train(data.mixed, data.classes)
    return trainer.train(data.mixed, data.classes, number_of_rounds=ROUNDS - ROUNDS // 2, boosted_machine=machine)


@configuration("samme_tree")
def _samme_tree() -> BoostedMachine:
    data = training_data()
    trainer = SAMMETrainer(weak_learner=CostSensitiveTreeTrainer(max_depth=2), number_of_rounds=ROUNDS)
    return trainer.train(data.mixed, data.classes)


@configuration("adaboost_m1_tree")
def _adaboost_m1_tree() -> BoostedMachine:
    data = training_data()
    trainer = AdaBoostM1Trainer(weak_learner=CostSensitiveTreeTrainer(max_depth=2), number_of_rounds=ROUNDS)
    return trainer.train(data.mixed, data.classes)


# -- scikit-learn estimators -------------------------------------------------------
@configuration("sklearn_boosting_classifier_stump_strings")
def _sklearn_boosting_classifier_stump() -> object:
    from bob_boost.sklearn import BoostingClassifier

    data = training_data()
    labels = np.where(data.binary > 0, "face", "background")
    # the stored files are bob's models: without the intercept a classifier has by default
    model = BoostingClassifier(loss="exponential", weak_learner="stump", n_estimators=ROUNDS, max_bins=None,
                               boost_from_average=False)
    return model.fit(data.mixed, labels)


@configuration("sklearn_boosting_classifier_lut_multiclass", probe="discrete")
def _sklearn_boosting_classifier_lut() -> object:
    from bob_boost.sklearn import BoostingClassifier

    data = training_data()
    model = BoostingClassifier(loss="logit", weak_learner="lut", n_estimators=ROUNDS,
                               maximum_feature_value=NUMBER_OF_VALUES, selection_style="independent",
                               boost_from_average=False)
    return model.fit(data.discrete, data.classes)


@configuration("sklearn_boosting_regressor_stump")
def _sklearn_boosting_regressor() -> object:
    from bob_boost.sklearn import BoostingRegressor

    data = training_data()
    return BoostingRegressor(weak_learner="stump", n_estimators=ROUNDS, max_bins=None).fit(data.mixed, data.regression)


@configuration("sklearn_boosting_regressor_stump_weighted")
def _sklearn_boosting_regressor_weighted() -> object:
    # sample weights (with zeros, which drop samples) go through a weighted loss today
    from bob_boost.sklearn import BoostingRegressor

    data = training_data()
    model = BoostingRegressor(weak_learner="stump", n_estimators=ROUNDS, max_bins=None)
    return model.fit(data.mixed, data.regression, sample_weight=data.sample_weight)


@configuration("sklearn_adaboostdb_classifier")
def _sklearn_adaboostdb() -> object:
    from bob_boost.sklearn import AdaBoostDBClassifier

    data = training_data()
    model = AdaBoostDBClassifier(cost_positive=COST_POSITIVE, cost_negative=COST_NEGATIVE, n_estimators=ROUNDS,
                                 selection="loss")
    return model.fit(data.mixed, data.binary.astype(np.int64))


@configuration("sklearn_badacost_classifier")
def _sklearn_badacost() -> object:
    from bob_boost.sklearn import BAdaCostClassifier

    data = training_data()
    labels = np.array(["car", "person", "tree"])[data.classes]
    model = BAdaCostClassifier(cost_matrix=COST_MATRIX, max_depth=2, n_estimators=ROUNDS, shrinkage=0.8,
                               feature_fraction=0.6, random_state=11)
    return model.fit(data.mixed, labels)


# -- helpers for the test and the command line ------------------------------------------
def machine_of(trained: object) -> BoostedMachine:
    """The :class:`BoostedMachine` of a configuration's result (an estimator's ``machine_``)."""
    if isinstance(trained, BoostedMachine):
        return trained
    machine = getattr(trained, "machine_", None)
    if not isinstance(machine, BoostedMachine):
        raise TypeError(f"expected a BoostedMachine or a fitted bob_boost.sklearn estimator, got {type(trained)!r}")
    return machine


def probe_for(name: str) -> np.ndarray:
    """The probe matrix that the machine of configuration ``name`` is scored on."""
    return probe_features(PROBE_KINDS[name])


def save(trained: object, path: str | os.PathLike) -> None:
    """Write a trained machine or a fitted estimator to ``path`` with its own ``save`` method."""
    if not callable(getattr(trained, "save", None)):
        raise TypeError(f"{type(trained).__name__} has no save(path) method")
    trained.save(path)


def load_machine(path: str | os.PathLike) -> BoostedMachine:
    """Read the machine stored at ``path`` (estimator files hold a machine too)."""
    return BoostedMachine.load(path)


def main(argv: list[str] | None = None) -> int:
    """Train the configurations and write ``<name>.hdf5`` files; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=GOLDEN_DIRECTORY, help="directory of the files")
    parser.add_argument("names", nargs="*", help="configurations to write (default: all)")
    arguments = parser.parse_args(argv)
    unknown = sorted(set(arguments.names) - set(CONFIGURATIONS))
    if unknown:
        parser.error(f"unknown configuration(s) {unknown}; known: {sorted(CONFIGURATIONS)}")
    arguments.out.mkdir(parents=True, exist_ok=True)
    # say which code wrote the files: they must come from the checkout being pinned
    print(f"bob_boost {bob_boost.__version__} from {bob_boost.__file__}", file=sys.stderr)
    for name in arguments.names or CONFIGURATIONS:
        trained = CONFIGURATIONS[name]()
        path = arguments.out / f"{name}.hdf5"
        save(trained, path)
        print(f"{path}: {len(machine_of(trained))} weak machines", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
