"""The boosting run every estimator's ``fit`` shares: warm start, early stopping, histories, importances.

Early stopping follows scikit-learn's ``HistGradientBoostingClassifier`` (``early_stopping``,
``validation_fraction``, ``n_iter_no_change``, ``tol``, ``scoring``; enabled by ``"auto"`` above
:data:`AUTO_EARLY_STOPPING_SAMPLES` samples), with one difference: the machine is trimmed to its best
round (:class:`bob_boost.callbacks.EarlyStopping`), so ``len(machine_) == n_iter_`` and the model file
holds only what predicts.
"""
from __future__ import annotations

import copy
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._validation import check_bool, check_positive_int, check_scalar
from ..boosting.sampling import Sampling, sampling_from
from ..callbacks import EarlyStopping, RecordEvaluation
from ..exceptions import InvalidValueError
from ..machine import BoostedMachine
from ..recipes import Recipe
from . import _holdout
from ._compat import check_random_state, check_scoring
from ._eval_sets import EvalSet

#: ``early_stopping="auto"`` holds out a validation set when there are more samples than this.
AUTO_EARLY_STOPPING_SAMPLES = 10_000

#: Metadata key of the per-feature training-loss decrease behind ``feature_importances_``.
IMPORTANCE_KEY = "feature_loss_decrease"

#: Seeds drawn once and kept across warm starts (and in saved models): the validation split's and
#: BAdaCost's feature sampling's.
SEED_ATTRIBUTES = ("_random_seed", "_trainer_seed")


def check_fit_parameters(estimator) -> None:
    """Validate the shared fitting parameters, with scikit-learn's wording where it has one."""
    check_early_stopping(estimator)
    check_bool(estimator.warm_start, "warm_start")


def check_early_stopping(estimator) -> None:
    """Validate ``early_stopping``, ``validation_fraction``, ``n_iter_no_change`` and ``tol``."""
    if estimator.early_stopping not in ("auto", True, False):
        raise InvalidValueError(f"early_stopping: must be 'auto', True or False, got {estimator.early_stopping!r}")
    check_scalar(estimator.validation_fraction, "validation_fraction", numbers.Real, min_val=0, max_val=1,
                 include_boundaries="neither")
    check_positive_int(estimator.n_iter_no_change, "n_iter_no_change")
    check_scalar(estimator.tol, "tol", numbers.Real, min_val=0)


def early_stopping_enabled(estimator, n_samples: int) -> bool:
    """Whether this fit holds out a validation set."""
    if estimator.early_stopping == "auto":
        return n_samples > AUTO_EARLY_STOPPING_SAMPLES
    return bool(estimator.early_stopping)


def previous_machine(estimator, rounds: int) -> BoostedMachine | None:
    """The fitted machine a warm start continues, or None for a fresh fit.

    Raises
    ------
    ValueError
        If ``n_estimators`` is smaller than the fitted machine's length.
    """
    machine = getattr(estimator, "machine_", None)
    if not estimator.warm_start or machine is None:
        return None
    if rounds < len(machine):
        raise InvalidValueError(f"n_estimators={rounds} must be larger or equal to len(machine_)={len(machine)} "
                                "when warm_start==True")
    return machine


def kept_seed(estimator, attribute: str, continuing: bool) -> int:
    """A seed drawn from ``random_state`` and kept (saved with the model) across warm starts.

    scikit-learn's estimators keep theirs the same way; ``attribute`` names what it seeds
    (``"_random_seed"``: the validation split).
    """
    if not continuing or not hasattr(estimator, attribute):
        state = getattr(estimator, "random_state", None)
        setattr(estimator, attribute, int(check_random_state(state).randint(np.iinfo(np.int32).max)))
    return getattr(estimator, attribute)


def validation_seed(estimator, continuing: bool) -> int:
    """The seed of the held-out rows, kept (and saved with the model) as ``_random_seed`` for warm starts:
    ``random_state`` when an int, 0 when None (every fit of the same data holds out the same rows, in memory
    and on Dask), else one drawn from the ``RandomState``."""
    if continuing and hasattr(estimator, "_random_seed"):
        return estimator._random_seed
    state = estimator.random_state
    if state is None:
        estimator._random_seed = 0
    elif isinstance(state, numbers.Integral):
        estimator._random_seed = int(state)
    else:
        return kept_seed(estimator, "_random_seed", False)
    return estimator._random_seed


def estimator_sampling(estimator, continuing: bool) -> Sampling | None:
    """The estimator's sampling parameters (:data:`~bob_boost.boosting.sampling.SAMPLING_OPTIONS`, those it has)
    as a :class:`~bob_boost.Sampling` seeded as its validation split (:func:`validation_seed`); None when they
    sample nothing (the defaults)."""
    return sampling_from(estimator, lambda: validation_seed(estimator, continuing))


def validation_split(estimator, rows: np.ndarray, stratify: np.ndarray | None,
                     seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the training and validation samples among ``rows`` (the samples' indices in the data the
    caller passed), chosen by :mod:`bob_boost.sklearn._holdout`: stratified by class for classifiers.

    Raises
    ------
    ValueError
        If the split leaves a class (or a regressor's samples) without training samples.
    """
    if stratify is None:
        groups, names = np.zeros(rows.size, dtype=np.int64), None
    else:
        present, groups = np.unique(stratify, return_inverse=True)
        classes = getattr(estimator, "classes_", None)
        names = [classes[int(c)] if classes is not None else int(c) for c in present]
    counts = _holdout.held_out_counts(_holdout.group_sizes(groups, len(names or [0])),
                                      estimator.validation_fraction, names)
    held_out = _holdout.held_out_mask(rows, groups, counts, seed)
    return np.flatnonzero(~held_out), np.flatnonzero(held_out)


def scorer_metric(estimator, scorer, features: np.ndarray, labels: np.ndarray, weights: np.ndarray):
    """``metric(machine, scores)`` scoring a copy of ``estimator`` that holds the growing machine."""
    view = copy.copy(estimator)
    # the view is scored on validated arrays: without names, as scikit-learn's own inner scoring
    view.__dict__.pop("feature_names_in_", None)

    def metric(machine: BoostedMachine, scores: np.ndarray) -> float:
        view.machine_ = machine
        return float(scorer(view, features, labels, sample_weight=weights))
    return metric


def boost(estimator, recipe: Recipe, X: np.ndarray, targets: np.ndarray, weights: np.ndarray,
          y: np.ndarray, rounds: int, stratify: np.ndarray | None = None,
          split_weights: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
          rows: np.ndarray | None = None, eval_sets: Sequence[EvalSet] = (),
          baseline: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None) -> BoostedMachine:
    """Run ``recipe`` for an estimator: continue or start, hold out validation data, record histories.

    Sets ``n_iter_``, ``train_score_`` and ``validation_score_`` (each ``n_iter_ + 1`` entries, the
    first before any round; scores are higher-is-better, so ``scoring="loss"`` records minus the mean
    loss) and returns the machine with its per-feature loss decrease in the metadata.

    Parameters
    ----------
    estimator : object
        The estimator being fitted (its parameters are validated).
    recipe : Recipe
        The configured trainer.
    X, targets, weights, y : numpy.ndarray
        Samples with positive weight: features, the recipe's targets, weights, and the labels (or
        values) a scorer compares predictions with.
    rounds : int
        ``n_estimators``.
    stratify : numpy.ndarray, optional
        Class indices of a classifier, to stratify the validation split.
    split_weights : callable, optional
        ``split_weights(weights, indices)``: the weights the trainer gets for the training samples
        ``indices`` (AdaBoostDB gives each class half of the total again after a split).
    rows : numpy.ndarray, optional
        The samples' indices in the data passed to ``fit`` (default ``0 .. n - 1``): the held-out samples
        are a function of them (:func:`validation_split`), so dropping zero-weight samples moves no other.
    eval_sets : sequence of EvalSet
        ``fit``'s evaluation sets, each scored every round into ``evals_result_``; with early stopping the
        first is the validation data (no samples are held out of ``X``).
    baseline : callable, optional
        ``baseline(indices, weights)``: a new machine's constant scores from its training samples' indices
        (into ``X``) and weights (a classifier's weighted class prior); None: the recipe's default.
    """
    previous = previous_machine(estimator, rounds)
    validation = early_stopping_enabled(estimator, X.shape[0])
    train = np.arange(X.shape[0])
    callbacks: list = []
    if validation and not eval_sets:
        train, held_out = validation_split(estimator, train if rows is None else rows, stratify,
                                           validation_seed(estimator, previous is not None))
    train_weights = weights[train] if split_weights is None else split_weights(weights[train], train)
    loss_record = RecordEvaluation(X[train], recipe.loss, targets[train], train_weights, name="training",
                                   training=True)
    callbacks.append(loss_record)
    train_record = loss_record
    scoring = getattr(estimator, "scoring", "loss")
    scorer = None if scoring == "loss" else check_scoring(estimator, scoring)
    if scorer is not None:
        train_record = RecordEvaluation(X[train], scorer_metric(estimator, scorer, X[train], y[train],
                                                                 weights[train]),
                                        greater_is_better=True, name="training")
        callbacks.append(train_record)
    records = eval_records(estimator, scorer, recipe.loss, eval_sets, validation)
    if validation and not eval_sets:
        records = eval_records(estimator, scorer, recipe.loss, [EvalSet("validation", X[held_out], targets[held_out],
                                                                        weights[held_out], y[held_out])], True)
    stopper = records[0] if validation else None
    callbacks += records
    start = 0 if previous is None else len(previous)
    if previous is not None and rounds == start:
        return previous
    start_scores = None if baseline is None or previous is not None else baseline(train, train_weights)
    machine = recipe.train(X[train], targets[train], rounds - start, callback=callbacks,
                           sample_weight=train_weights, boosted_machine=previous, baseline=start_scores)
    _record_histories(estimator, machine, start, train_record, stopper, previous is not None)
    estimator.evals_result_ = evals_result(eval_sets, records, len(machine) - start + 1)
    _record_importances(machine, loss_record.history, start, X.shape[1])
    return machine


def scored(estimator, scorer, loss, data: EvalSet) -> tuple:
    """``(metric, targets, weights, greater_is_better)`` of a recorder of ``data``: the trained ``loss``, or the
    scorer (which reads ``estimator``'s predictions of ``data.features``)."""
    if scorer is None:
        return loss, data.targets, data.weights, None
    return scorer_metric(estimator, scorer, data.features, data.y, data.weights), None, None, True


def eval_records(estimator, scorer, loss, eval_sets: Sequence[EvalSet], stopping: bool) -> list:
    """A recorder of every evaluation set, the first an :class:`~bob_boost.callbacks.EarlyStopping` when
    ``stopping``."""
    records = []
    for data in eval_sets:
        arguments = scored(estimator, scorer, loss, data)
        records.append(EarlyStopping(data.features, *arguments, name=data.name, patience=estimator.n_iter_no_change,
                                     tol=estimator.tol) if stopping and not records
                       else RecordEvaluation(data.features, *arguments, name=data.name))
    return records


def evals_result(eval_sets: Sequence[EvalSet], records: list, kept: int) -> dict[str, np.ndarray]:
    """``evals_result_``: every set's first ``kept`` scores, higher is better."""
    return {data.name: signed(record, kept) for data, record in zip(eval_sets, records)}


def signed(record: RecordEvaluation, kept: int) -> np.ndarray:
    """The first ``kept`` entries of a record's history, higher is better."""
    values = np.asarray(record.history[:kept], dtype=np.float64)
    return values if record.greater_is_better else -values


def _record_histories(estimator, machine: BoostedMachine, start: int, train_record: RecordEvaluation,
                      stopper: EarlyStopping | None, continuing: bool) -> None:
    """``n_iter_`` and the score histories, cut to the (possibly trimmed) machine."""
    kept = len(machine) - start + 1  # this run's entries: the score before it and one per kept round
    train = signed(train_record, kept)
    validation = signed(stopper, kept) if stopper is not None else np.zeros(0)
    if continuing:  # the run's first entry repeats the last of the previous history
        train = np.concatenate([_history(estimator.train_score_, start), train])
        if validation.size:
            validation = np.concatenate([_history(estimator.validation_score_, start), validation])
    estimator.n_iter_ = len(machine)
    estimator.train_score_ = train
    estimator.validation_score_ = validation


def _history(values: np.ndarray, length: int) -> np.ndarray:
    """The first ``length`` entries of a history, NaN where it is unknown (a run without early stopping,
    a file without histories)."""
    known = np.full(length, np.nan)
    known[:min(length, values.size)] = values[:length]
    return known


def unknown_history(rounds: int) -> np.ndarray:
    """The ``rounds + 1`` NaN scores of a machine whose history was not recorded (files of older versions)."""
    return np.full(rounds + 1, np.nan)


def _record_importances(machine: BoostedMachine, losses: list[float], start: int, n_features: int) -> None:
    """Add this run's kept rounds' training-loss decreases to the machine's per-feature totals.

    A round's decrease (clipped at 0) is shared equally by the features its weak machine reads.
    """
    totals = loss_decrease(machine, n_features)
    for offset, weak_machine in enumerate(machine.weak_machines[start:]):
        decrease = max(0.0, losses[offset] - losses[offset + 1])
        features = weak_machine.feature_indices()
        if features.size:
            totals[features] += decrease / features.size
    machine.metadata[IMPORTANCE_KEY] = {str(int(f)): float(totals[f]) for f in np.flatnonzero(totals)}


def loss_decrease(machine: BoostedMachine, n_features: int) -> np.ndarray:
    """(#features,) training-loss decrease per feature stored in the machine's metadata (zeros if none)."""
    totals = np.zeros(n_features)
    for key, value in machine.metadata.get(IMPORTANCE_KEY, {}).items():
        totals[int(key)] = float(value)
    return totals


def importances(machine: BoostedMachine, n_features: int) -> np.ndarray:
    """The normalised per-feature loss decrease: non-negative, summing to 1 (all zeros without any)."""
    totals = loss_decrease(machine, n_features)
    total = totals.sum()
    return totals / total if total > 0 else totals


def fitted_state(estimator) -> dict[str, Any]:
    """The histories and kept seeds a saved estimator restores (metadata values; NaN is stored as None)."""
    state: dict[str, Any] = {
        "n_iter": int(estimator.n_iter_),
        "train_score": [None if np.isnan(v) else float(v) for v in estimator.train_score_],
        "validation_score": [None if np.isnan(v) else float(v) for v in estimator.validation_score_]}
    for attribute in SEED_ATTRIBUTES:
        if hasattr(estimator, attribute):
            state[attribute.lstrip("_")] = int(getattr(estimator, attribute))
    return state


def restore_state(estimator, machine: BoostedMachine, metadata: dict[str, Any]) -> None:
    """Set the histories and seeds of a loaded estimator; unknown for files that have none."""
    estimator.n_iter_ = len(machine)
    train = metadata.get("train_score")
    estimator.train_score_ = (unknown_history(len(machine)) if train is None
                              else np.array([np.nan if v is None else v for v in train], dtype=np.float64))
    estimator.validation_score_ = np.array([np.nan if v is None else v for v in metadata.get("validation_score", [])],
                                           dtype=np.float64)
    for attribute in SEED_ATTRIBUTES:
        if attribute.lstrip("_") in metadata:
            setattr(estimator, attribute, int(metadata[attribute.lstrip("_")]))
