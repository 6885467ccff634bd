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

from .. import holdout as _holdout
from .._validation import check_bool, check_positive_int, check_scalar
from ..boosting.sampling import Sampling, sampling_from
from ..callbacks import EarlyStopping, RecordEvaluation
from ..exceptions import InvalidValueError
from ..machine import BoostedMachine
from ..recipes import Recipe
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


def held_out_rows(estimator, data, targets, index, groups, seed: int):
    """The boolean row vector of the rows early stopping holds out, chosen by :mod:`bob_boost.holdout`
    from the rows' positions ``index`` in the data (None: ``0 .. n - 1``): stratified by the class indices
    ``groups`` for classifiers (None: all rows, those of ``targets``, are one group).

    Raises
    ------
    ValueError
        If the split leaves a class (or a regressor's samples) without training samples.
    """
    if groups is None:  # one group: its size is known without a pass over the rows
        counts = _holdout.held_out_counts(np.array([targets.shape[0]]), estimator.validation_fraction)
    else:
        names = list(estimator.classes_)
        counts = _holdout.held_out_counts(data.sums(groups, None, len(names)), estimator.validation_fraction, names)
    return data.held_out(index, groups, counts, seed, targets)


def scorer_metric(estimator, scorer, features: np.ndarray, labels: np.ndarray, weights: np.ndarray):
    """``metric(machine, scores)`` scoring a copy of ``estimator`` that holds the growing machine."""
    view = copy.copy(estimator)
    # the view is scored on validated arrays: without names, as scikit-learn's own inner scoring
    view.__dict__.pop("feature_names_in_", None)

    def metric(machine: BoostedMachine, scores: np.ndarray) -> float:
        view.machine_ = machine
        return float(scorer(view, features, labels, sample_weight=weights))
    return metric


def boost(estimator, data, recipe: Recipe, X, targets, weights, y, rounds: int, groups=None, index=None,
          split_weights: Callable | None = None, eval_sets: Sequence[EvalSet] = (),
          baseline: Callable | None = None) -> BoostedMachine:
    """Run ``recipe`` for an estimator: continue or start, hold out validation data, record histories.

    Sets ``n_iter_``, ``train_score_`` and ``validation_score_`` (each ``n_iter_ + 1`` entries, the
    first before any round; scores are higher-is-better, so ``scoring="loss"`` records minus the mean
    loss; the training scores are NaN when ``data`` does not record them) and returns the machine with its
    per-feature loss decrease in the metadata.

    Parameters
    ----------
    estimator : object
        The estimator being fitted (its parameters are validated).
    data : FitData
        Where the rows are (:mod:`bob_boost.sklearn._fit_data`); the arrays below are its row arrays.
    recipe : Recipe
        The configured trainer.
    X, targets, weights, y
        The samples with positive weight: features, the recipe's targets, weights (None: all 1), and the
        labels (or values) a scorer compares predictions with.
    rounds : int
        ``n_estimators``.
    groups : row array, optional
        Class indices of a classifier, to stratify the validation split.
    index : row array, optional
        The samples' positions in the data passed to ``fit`` (None: ``0 .. n - 1``): the held-out samples
        are a function of them (:func:`held_out_rows`), so dropping zero-weight samples moves no other.
    split_weights : callable, optional
        ``split_weights(data, weights, groups)``: the weights the trainer gets for the training samples
        (AdaBoostDB gives each class half of the total again after a split).
    eval_sets : sequence of EvalSet
        ``fit``'s evaluation sets, each scored every round into ``evals_result_``; with early stopping the
        first is the validation data (no samples are held out of ``X``).
    baseline : callable, optional
        ``baseline(data, targets, weights, groups)``: a new machine's constant scores from its training
        samples (a classifier's weighted class prior); None: the recipe's default.
    """
    previous = previous_machine(estimator, rounds)
    scoring = getattr(estimator, "scoring", "loss")
    scorer = None if scoring == "loss" else check_scoring(estimator, scoring)
    start = 0 if previous is None else len(previous)
    if previous is not None and rounds == start:
        return previous
    stopping = early_stopping_enabled(estimator, X.shape[0])
    validation = not eval_sets and data.holds_out(estimator, X, stopping)
    if validation:
        held_out = held_out_rows(estimator, data, targets, index, groups,
                                 validation_seed(estimator, previous is not None))
        validation_set = data.gathered(held_out, X, targets, weights, y)
        X, targets, weights, y, groups = data.kept(~held_out, X, targets, weights, y, groups)
        if validation_set[2] is None:
            validation_set[2] = np.ones(validation_set[0].shape[0])
        eval_sets = [EvalSet("validation", *validation_set)]
    train_weights = weights if split_weights is None else split_weights(data, weights, groups)
    callbacks: list = []
    loss_record = train_record = None
    if data.records_training:
        loss_record = train_record = RecordEvaluation(X, recipe.loss, targets, train_weights, name="training",
                                                      training=True, n_threads=_threads(estimator))
        callbacks.append(loss_record)
        if scorer is not None:
            train_record = RecordEvaluation(X, scorer_metric(estimator, scorer, X, y, weights),
                                            greater_is_better=True, name="training")
            callbacks.append(train_record)
    records = eval_records(estimator, scorer, recipe.loss, eval_sets, stopping)
    stopper = records[0] if stopping and records else None
    callbacks += records
    start_scores = None if baseline is None or previous is not None else baseline(data, targets, train_weights,
                                                                                    groups)
    machine = data.train(recipe, X, targets, rounds - start, callback=callbacks, sample_weight=train_weights,
                         boosted_machine=previous, baseline=start_scores)
    _record_histories(estimator, machine, start, train_record, stopper, previous is not None)
    estimator.evals_result_ = evals_result([] if validation else eval_sets, records, len(machine) - start + 1)
    if loss_record is not None:
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
                                     tol=estimator.tol, n_threads=_threads(estimator)) if stopping and not records
                       else RecordEvaluation(data.features, *arguments, name=data.name, n_threads=_threads(estimator)))
    return records


def _threads(estimator) -> int | None:
    """The threads of the recorders' loss sums: the estimator's own (1 for one without ``n_threads``)."""
    return getattr(estimator, "n_threads", 1)


def evals_result(eval_sets: Sequence[EvalSet], records: list, kept: int) -> dict[str, np.ndarray]:
    """``evals_result_``: every set's first ``kept`` scores, higher is better."""
    return {data.name: signed(record, kept) for data, record in zip(eval_sets, records)}


def signed(record: RecordEvaluation, kept: int) -> np.ndarray:
    """The first ``kept`` entries of a record's history, higher is better."""
    values = np.asarray(record.history[:kept], dtype=np.float64)
    return values if record.greater_is_better else -values


def _record_histories(estimator, machine: BoostedMachine, start: int, train_record: RecordEvaluation | None,
                      stopper: EarlyStopping | None, continuing: bool) -> None:
    """``n_iter_`` and the score histories, cut to the (possibly trimmed) machine."""
    kept = len(machine) - start + 1  # this run's entries: the score before it and one per kept round
    train = np.full(kept, np.nan) if train_record is None else signed(train_record, kept)
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
