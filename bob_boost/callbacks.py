"""The one callback signature every trainer calls after each round.

``callback(round, machine, scores) -> bool | None``

``round``
    The 0-based index of the round just finished.
``machine``
    The :class:`~bob_boost.BoostedMachine` being trained, with the round's
    weak machine already added (do not modify it).
``scores``
    The (#samples, #outputs) training scores of ``machine`` (baseline
    included), as :meth:`~bob_boost.BoostedMachine.decision_scores` would give
    them on the training features.

Returning ``True`` stops training after this round (the machine keeps it);
any other value (``None``, ``False``, a number) lets it go on. :class:`bob_boost.progress.Progress` is
such a callback; early stopping plugs in the same way.

A callback object may also define ``before_training(machine)`` (called once before the first round,
with the empty or continued machine), ``after_training(machine)`` (called once when the run's last round is
done, whatever stopped it; :class:`EarlyStopping` trims the machine there) and ``loss_reached(loss_function,
targets, sample_weight, total)`` (called before a round's call when the trainer has just summed its training
loss at the round's scores, :func:`loss_reached`). A list or tuple of callbacks is called in order, and
training stops when any of them asks.

The objects below follow LightGBM's ``callback.py``: :class:`RecordEvaluation` evaluates a metric on
a data set before the first round and after every round (keeping the history),
:class:`EarlyStopping` is such a record that stops training once the metric has not improved for
``patience`` rounds and trims the machine to its best round, :class:`LogEvaluation` logs records.
Their scores follow the machine round by round (one weak machine's outputs per round), in the order
:meth:`~bob_boost.BoostedMachine.staged_decision_scores` adds them, so a history equals the metric of
the staged scores bit for bit (a training record that takes the trainer's summed loss rounds as the trainer's
blocks of rows are summed).

Example
-------
>>> import numpy as np
>>> from bob_boost import Boosting, ExponentialLoss, StumpTrainer
>>> x = np.arange(40.0).reshape(20, 2); t = np.where(x[:, 0] % 4 < 2, 1.0, -1.0)
>>> def stop_after_three(round_index, machine, scores):
...     return len(machine) == 3
>>> machine = Boosting(StumpTrainer(), ExponentialLoss()).train(x, t, 50, callback=stop_after_three)
>>> len(machine)
3

Early stopping on held-out data (here the training data itself, for brevity):

>>> from bob_boost.callbacks import EarlyStopping
>>> stopper = EarlyStopping(x, ExponentialLoss(), targets=t, patience=2)
>>> machine = Boosting(StumpTrainer(), ExponentialLoss()).train(x, t, 50, callback=stopper)
>>> len(machine) == stopper.best_length and len(stopper.history) > len(machine)
True
"""
from __future__ import annotations

import logging
import numbers
from typing import TYPE_CHECKING
from collections.abc import Callable, Sequence

import numpy as np

from ._validation import as_feature_matrix, check_positive_int, check_sample_weight, check_scalar
from .boosting.rows import loss_total
from .engine.threads import check_threads
from .exceptions import InvalidTypeError, InvalidValueError
from .losses.base import LossFunction, unit_weights
from .sparse import by_row_blocks

if TYPE_CHECKING:  # the machine module imports nothing of this one; the annotation only names it
    from .machine import BoostedMachine

logger = logging.getLogger(__name__)

#: ``callback(round, machine, scores) -> bool | None``; True stops training.
RoundCallback = Callable[[int, "BoostedMachine", np.ndarray], bool | None]


def check_callback(callback, name: str = "callback") -> RoundCallback | None:
    """Return ``callback`` after checking that it is None, callable, or a list or tuple of callables.

    A list or tuple comes back as one :class:`CallbackList`.

    Raises
    ------
    TypeError
        If ``callback`` (or an element of the list) is neither None nor callable.
    """
    if isinstance(callback, (list, tuple)):
        return CallbackList(callback, name)
    if callback is not None and not callable(callback):
        raise InvalidTypeError(f"{name}: expected a callable, got {type(callback).__name__}")
    return callback


def stop_requested(callback: RoundCallback | None, round_index: int, machine: "BoostedMachine",
                   scores: np.ndarray) -> bool:
    """Call ``callback`` (if any) for a finished round; True when it asks to stop training."""
    if callback is None:
        return False
    if _asks_to_stop(callback(round_index, machine, scores)):
        logger.info("Round %d: the callback stopped training after %d weak machines", round_index + 1, len(machine))
        return True
    return False


def _asks_to_stop(result) -> bool:
    # only a boolean: bob_boost 0.1 ignored return values, and a callback returning, say, a loss must not stop
    return isinstance(result, (bool, np.bool_)) and bool(result)


def training_started(callback: RoundCallback | None, machine: "BoostedMachine") -> None:
    """Call the callback's ``before_training(machine)``, when it has one."""
    hook = getattr(callback, "before_training", None)
    if hook is not None:
        hook(machine)


def loss_reached(callback: RoundCallback, loss_function: LossFunction, targets: np.ndarray,
                 sample_weight: np.ndarray | None, total: float) -> None:
    """Tell the callback's ``loss_reached`` hook, when it has one, the training loss the trainer summed at the
    round's scores (``sum_n w_n sum_k loss(t_n, s_n)_k`` of ``loss_function`` on ``targets`` with
    ``sample_weight``, None: ones), before the round's call."""
    hook = getattr(callback, "loss_reached", None)
    if hook is not None:
        hook(loss_function, targets, sample_weight, total)


def training_ended(callback: RoundCallback | None, machine: "BoostedMachine") -> None:
    """Call the callback's ``after_training(machine)``, when it has one."""
    hook = getattr(callback, "after_training", None)
    if hook is not None:
        hook(machine)


class CallbackList:
    """Several callbacks as one: each is called in order, and training stops when any asks.

    Parameters
    ----------
    callbacks : sequence of callables
        The round callbacks; their ``before_training``/``after_training`` hooks are called too.
    """

    def __init__(self, callbacks: Sequence[RoundCallback], name: str = "callback") -> None:
        self.callbacks = [check_callback(c, f"{name}[{i}]") for i, c in enumerate(callbacks) if c is not None]

    def before_training(self, machine: "BoostedMachine") -> None:
        """Every callback's ``before_training``."""
        for callback in self.callbacks:
            training_started(callback, machine)

    def __call__(self, round_index: int, machine: "BoostedMachine", scores: np.ndarray) -> bool:
        # every callback sees every round, even after one has asked to stop
        stops = [_asks_to_stop(callback(round_index, machine, scores)) for callback in self.callbacks]
        return any(stops)

    def loss_reached(self, loss_function: LossFunction, targets: np.ndarray, sample_weight: np.ndarray | None,
                     total: float) -> None:
        """Every callback's ``loss_reached`` (:func:`loss_reached`)."""
        for callback in self.callbacks:
            loss_reached(callback, loss_function, targets, sample_weight, total)

    def after_training(self, machine: "BoostedMachine") -> None:
        """Every callback's ``after_training``."""
        for callback in self.callbacks:
            training_ended(callback, machine)


#: ``metric(machine, scores) -> float`` of a :class:`RecordEvaluation`.
Metric = Callable[["BoostedMachine", np.ndarray], float]


def _unless_units(sample_weight: np.ndarray | None) -> np.ndarray | None:
    """``sample_weight``, or None when it is absent or every weight is 1 (the same weighted sums)."""
    return None if unit_weights(sample_weight) else sample_weight


class RecordEvaluation:
    """Record a metric of the growing machine on one data set, before training and after every round.

    Parameters
    ----------
    features : array_like
        (#samples, #features) the data set.
    metric : LossFunction or callable
        A loss: the metric is its sample-weighted mean (per-sample losses summed over outputs), lower
        is better. A callable ``metric(machine, scores) -> float`` gets the machine so far and its
        (#samples, #outputs) scores on ``features``.
    targets : array_like, optional
        The loss's targets on ``features`` (required with a loss; the callable binds its own).
    sample_weight : array_like, optional
        (#samples,) non-negative weights of the loss's mean.
    greater_is_better : bool, optional
        Whether larger values are better; a loss is always lower-is-better, a callable defaults to
        False.
    name : str
        Names the data set in log messages.
    training : bool
        ``features`` are the training features, in the trainer's order: after each round the metric
        reads the training scores the trainer passes instead of evaluating the round's weak machine
        (``features`` then serve only for the scores before the first round). A loss the trainer has
        just summed at those scores, on the same targets and weights (:func:`loss_reached`), is taken as
        summed, which rounds as the trainer's sums do.
    n_threads : int or None
        Threads of a loss's sums (None: every core this process may use); the value is the same for any number:
        the rows' losses are summed in fixed blocks (:func:`~bob_boost.boosting.rows.loss_total`), as the
        trainer sums them.

    Attributes
    ----------
    history : list of float
        The metric before the first round of the run, then after each round.
    """

    def __init__(self, features, metric: LossFunction | Metric, targets=None, sample_weight=None,
                 greater_is_better: bool | None = None, name: str = "validation", training: bool = False,
                 n_threads: int | None = 1) -> None:
        self.features = as_feature_matrix(features, allow_nan=True, accept_sparse=True)
        self._threads = check_threads(n_threads)
        if isinstance(metric, LossFunction):
            if targets is None:
                raise InvalidValueError("targets: a loss metric needs the targets of the features")
            if greater_is_better:
                raise InvalidValueError("greater_is_better: a loss is lower-is-better")
            self._targets = metric.check_targets(targets)
            if self._targets.shape[0] != self.features.shape[0]:
                raise InvalidValueError(f"targets: has {self._targets.shape[0]} samples but features have "
                                        f"{self.features.shape[0]}")
            greater_is_better = False
        elif not callable(metric):
            raise InvalidTypeError(f"metric: expected a LossFunction or a callable, got {type(metric).__name__}")
        self.metric = metric
        self.sample_weight = (None if sample_weight is None
                              else check_sample_weight(sample_weight, self.features.shape[0]))
        # weights of 1 (an estimator's default) leave the losses as they are: multiplying costs a pass a round
        self._loss_weights = _unless_units(self.sample_weight)
        self._total = (self.features.shape[0] if self._loss_weights is None
                       else float(np.sum(self._loss_weights)))
        self.greater_is_better = bool(greater_is_better)
        self.name = str(name)
        self.training = bool(training)
        self.history: list[float] = []
        self._scores: np.ndarray | None = None
        self._rounds = 0
        # the trainer's own sum of this loss at the round's training scores (loss_reached), and whether it sums
        # this metric's loss of these targets and weights (checked once a run)
        self._reached: float | None = None
        self._same_sum: bool | None = None

    def before_training(self, machine: "BoostedMachine") -> None:
        """Start the history with the metric of the machine before this run's first round."""
        # an empty machine scores its baseline; NaN (a missing value the trainer handles) is no error there
        self._scores = (machine.decision_scores(self.features) if len(machine)
                        else np.tile(machine.baseline, (self.features.shape[0], 1)))
        self._rounds = len(machine)
        self._reached, self._same_sum = None, None
        self.history = [self._evaluate(machine)]

    def loss_reached(self, loss_function: LossFunction, targets: np.ndarray, sample_weight: np.ndarray | None,
                     total: float) -> None:
        """Keep the trainer's training loss of the round, when it is this record's metric on the same training
        targets and weights: the round's value is then that sum over the weights' total, not a second pass."""
        if not self.training or loss_function is not self.metric:
            return
        if self._same_sum is None:
            ours, theirs = self._loss_weights, _unless_units(sample_weight)
            same_weights = (ours is None and theirs is None) or (
                ours is not None and theirs is not None and np.array_equal(ours, theirs))
            self._same_sum = bool(same_weights and np.shape(targets) == self._targets.shape
                                  and np.array_equal(targets, self._targets))
        if self._same_sum:
            self._reached = float(total)

    def __call__(self, round_index: int, machine: "BoostedMachine", scores: np.ndarray) -> bool | None:
        if self._scores is None:  # called without before_training (a trainer of bob_boost 0.1's loop)
            raise InvalidValueError(f"{type(self).__name__}: training did not call before_training")
        if self.training:
            self._scores = scores
        else:
            for weak_machine, weight in zip(machine.weak_machines[self._rounds:], machine.weights[self._rounds:]):
                self._scores = self._scores + weight * by_row_blocks(weak_machine.forward, self.features)
        self._rounds = len(machine)
        reached, self._reached = self._reached, None
        self.history.append(self._evaluate(machine) if reached is None else float(reached / self._total))
        return None

    def _evaluate(self, machine: "BoostedMachine") -> float:
        if isinstance(self.metric, LossFunction):
            return loss_total(self.metric, self._targets, self._scores, self._loss_weights, self._threads) / self._total
        return float(self.metric(machine, self._scores))

    def improvement(self, new: float, old: float) -> float:
        """How much better ``new`` is than ``old`` (positive: better)."""
        return new - old if self.greater_is_better else old - new


class EarlyStopping(RecordEvaluation):
    """Stop training when the metric on held-out data stops improving; keep the best round.

    A round improves when its value is better than the best so far by more than ``tol``. Training
    stops after ``patience`` rounds without improvement, and the machine is then trimmed to the best
    round's length (:meth:`after_training`), as LightGBM's ``best_iteration`` but in the model itself.
    The best so far starts with the machine the run begins with (a continued machine starts afresh).

    Parameters
    ----------
    features, metric, targets, sample_weight, greater_is_better, name, n_threads
        As for :class:`RecordEvaluation`.
    patience : int
        Rounds without improvement before stopping (>= 1).
    tol : float
        The smallest change (>= 0) that counts as an improvement.
    trim : bool
        Whether :meth:`after_training` trims the machine to :attr:`best_length`.

    Attributes
    ----------
    best_length : int
        The machine's length at its best value (its length before the run if no round improved).
    best_score : float
        The best value.
    stopped : bool
        Whether this callback stopped training.
    """

    def __init__(self, features, metric: LossFunction | Metric, targets=None, sample_weight=None,
                 greater_is_better: bool | None = None, name: str = "validation", patience: int = 10,
                 tol: float = 0.0, trim: bool = True, n_threads: int | None = 1) -> None:
        super().__init__(features, metric, targets, sample_weight, greater_is_better, name, n_threads=n_threads)
        self.patience = check_positive_int(patience, "patience")
        self.tol = float(check_scalar(tol, "tol", numbers.Real, min_val=0))
        self.trim = bool(trim)
        self.best_length = 0
        self.best_score = np.nan
        self.stopped = False

    def before_training(self, machine: "BoostedMachine") -> None:
        """The value before the first round is the first best."""
        super().before_training(machine)
        self.best_length, self.best_score, self.stopped = len(machine), self.history[0], False

    def __call__(self, round_index: int, machine: "BoostedMachine", scores: np.ndarray) -> bool:
        super().__call__(round_index, machine, scores)
        value = self.history[-1]
        if self.improvement(value, self.best_score) > self.tol:
            self.best_length, self.best_score = len(machine), value
        elif len(machine) - self.best_length >= self.patience:
            logger.info("Early stopping: %s did not improve on %.6g (after %d weak machines) for %d rounds",
                        self.name, self.best_score, self.best_length, self.patience)
            self.stopped = True
        return self.stopped

    def after_training(self, machine: "BoostedMachine") -> None:
        """Trim the machine to its best round, when this callback stopped training and :attr:`trim` is set.

        A run that ends otherwise (its last round, or another stop rule) keeps every round: none of
        them has used up its patience, and a warm start continues where one longer run would.
        """
        if self.trim and self.stopped and len(machine) > self.best_length:
            machine.truncate(self.best_length)


class LogEvaluation:
    """Log the latest values of evaluation records every ``period`` rounds (``logging``, level INFO).

    Parameters
    ----------
    records : RecordEvaluation or sequence of them
        Records that come before this callback in the same callback list.
    period : int
        Log every ``period`` rounds (>= 1).
    """

    def __init__(self, records: RecordEvaluation | Sequence[RecordEvaluation], period: int = 1) -> None:
        self.records = [records] if isinstance(records, RecordEvaluation) else list(records)
        for i, record in enumerate(self.records):
            if not isinstance(record, RecordEvaluation):
                raise InvalidTypeError(f"records[{i}]: expected a RecordEvaluation, got {type(record).__name__}")
        self.period = check_positive_int(period, "period")

    def __call__(self, round_index: int, machine: "BoostedMachine", scores: np.ndarray) -> None:
        if (round_index + 1) % self.period == 0:
            logger.info("round %d: %s", round_index + 1,
                        ", ".join(f"{r.name} {r.history[-1]:.6g}" for r in self.records if r.history))

