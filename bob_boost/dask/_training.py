"""Boosting decision stumps on a Dask cluster: per-chunk histograms, reduced in a fixed order.

The rows of the training matrix stay where Dask holds them. Once per run, the bin thresholds are found
globally, exactly as :meth:`bob_boost.binning.BinnedFeatures.from_values` finds them in memory:

- integer features: per-chunk counts of every value, summed;
- float features: the rows of the engine's deterministic sample
  (:func:`bob_boost.engine.edges.sample_rows`), gathered once.

Every chunk is coded against those thresholds on its worker. Each round then moves only small things:

- every chunk sends the histogram of its loss gradient over its bins (#bins floats) and its gradient
  totals;
- the histograms are summed chunk after chunk, always in chunk order, so the result does not depend on
  scheduling;
- the stump is chosen from the sum by the engine's own split search;
- its weight is found by Newton's method on sums of the loss's first and second derivatives over the
  chunks (three floats per chunk and iteration);
- the stump (a few bytes) goes to every chunk, to update its scores.
"""
from __future__ import annotations

import logging

import numpy as np

from .._validation import check_positive_int
from ..callbacks import check_callback, stop_requested, training_ended, training_started
from ..engine.codes import CodedFeatures, count_integer_values, encode, padded_thresholds
from ..engine.edges import all_thresholds, check_max_bins, count_thresholds, sample_rows
from ..engine import kernels
from ..exceptions import InvalidTypeError, InvalidValueError
from ..losses import ExponentialLoss, LossFunction
from ..losses.exponential import EXPONENT_LIMIT
from ..machine import BoostedMachine
from ..trainers.stump import TIE_TOLERANCE
from ..weak.stump import StumpMachine

logger = logging.getLogger(__name__)

#: Newton's method stops when a step is below this fraction of the weight. The in-memory rule stops at
#: 1e-15; as Newton converges quadratically, the step after a 1e-12 one is far below rounding, and every
#: iteration costs a pass over the cluster's chunks.
NEWTON_TOLERANCE = 1e-12

#: Newton iterations per round at most.
NEWTON_ITERATIONS = 100

#: A Newton step is halved only when it raises the summed loss by more than this fraction (rounding).
LOSS_ROUNDING = 1e-12

#: Halvings of one step at most.
MAX_HALVINGS = 60


# -- tasks run on the workers -------------------------------------------------------------------------

def _integer_range(chunk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return chunk.min(axis=0).astype(np.int64), chunk.max(axis=0).astype(np.int64)


def _value_counts(chunk: np.ndarray, low: np.ndarray, span: int) -> np.ndarray:
    return count_integer_values(chunk, low, span, 1)


def _encode(chunk: np.ndarray, padded: np.ndarray) -> np.ndarray:
    return encode(chunk, padded, 1)


def _gradient_histogram(codes: np.ndarray, targets: np.ndarray, scores: np.ndarray, weights, loss: LossFunction,
                        number_of_bins: int, offsets: np.ndarray) -> tuple[np.ndarray, float, float]:
    """The chunk's gradient histogram over the global bins, the gradient's sum and its absolute sum."""
    gradient = loss.loss_gradient(targets, scores)
    if weights is not None:
        gradient = gradient * weights[:, np.newaxis]
    histogram = CodedFeatures(codes, number_of_bins, 1).histograms(gradient, offsets)[:, 0]
    return histogram, float(gradient[:, 0].sum()), float(np.abs(gradient).sum())


def _stump_outputs(codes: np.ndarray, feature: int, code_threshold: int, polarity: float) -> np.ndarray:
    return np.where(codes[feature] >= code_threshold, polarity, -polarity)[:, np.newaxis]


def _newton_sums(targets, scores, outputs, weights, loss: LossFunction, alpha: float) -> np.ndarray:
    """The chunk's loss, its derivative and its second derivative along ``outputs`` at step ``alpha``."""
    moved = scores + alpha * outputs
    values = loss.loss(targets, moved)[:, 0]
    first = (loss.loss_gradient(targets, moved) * outputs)[:, 0]
    second = (loss.loss_hessian(targets, moved) * outputs * outputs)[:, 0]
    if weights is not None:
        values, first, second = values * weights, first * weights, second * weights
    return np.array([values.sum(), first.sum(), second.sum()])


def _exponential_sums(targets, scores, outputs, weights) -> np.ndarray:
    """The exponential loss's weight on the samples the stump gets right and wrong, the largest exponent,
    and whether every target is +-1: ``phi(alpha) = right * exp(-alpha) + wrong * exp(alpha)`` then."""
    exponent = -targets * scores
    values = np.exp(np.minimum(exponent, EXPONENT_LIMIT))[:, 0]
    if weights is not None:
        values = values * weights
    right = (targets * outputs)[:, 0] > 0
    return np.array([values[right].sum(), values[~right].sum(), exponent.max(),
                     float(np.all(np.abs(targets) == 1.0))])


def _moved(scores: np.ndarray, outputs: np.ndarray, alpha: float) -> np.ndarray:
    return scores + alpha * outputs


def _in_order(*parts):
    """Sum ``parts`` left to right: the reduction's order is the chunks' order, whatever the scheduling."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def _check_chunk_targets(chunk: np.ndarray, loss: LossFunction) -> np.ndarray:
    if np.isnan(chunk).any():
        raise InvalidValueError("targets: contain NaN")
    return loss.check_targets(chunk)


# -- the driver ---------------------------------------------------------------------------------------

class DaskBoosting:
    """Boost decision stumps on a Dask cluster with any loss that has a second derivative.

    The model is the one :class:`bob_boost.Boosting` trains in memory with
    ``StumpTrainer(max_bins=max_bins)`` and ``step_rule="newton"``:

    - the same bins, so the same stumps, whenever the splits are not tied within rounding;
    - weights equal to about 1e-12 relative, since the sums are added per chunk rather than over the
      whole matrix at once.

    Parameters
    ----------
    loss_function : LossFunction
        A univariate loss with ``loss_hessian`` (exponential, logit, squared, ...).
    max_bins : int
        Bins per feature, as :class:`~bob_boost.StumpTrainer`'s ``max_bins`` (2 .. 256 here).
    client : distributed.Client or str, optional
        The cluster's client, or its scheduler's address (``"tcp://scheduler:8786"``, connected to when
        training starts); None uses the current default client.
    """

    def __init__(self, loss_function: LossFunction, max_bins: int = 256, client=None) -> None:
        if not isinstance(loss_function, LossFunction):
            raise InvalidTypeError(f"loss_function: expected a LossFunction, got {type(loss_function).__name__}")
        if not loss_function.has_hessian:
            raise InvalidValueError(f"loss_function: {type(loss_function).__name__} has no second derivative; "
                                    f"distributed Newton steps need one")
        self.loss_function = loss_function
        self.max_bins = check_max_bins(max_bins)
        if self.max_bins is None or self.max_bins > 256:
            raise InvalidValueError(f"max_bins: must be in [2, 256] for distributed training, got {max_bins!r}")
        self.client = client

    def train(self, features, targets, number_of_rounds: int = 20, sample_weight=None,
              callback=None, baseline: float | None = None) -> BoostedMachine:
        """Boost ``number_of_rounds`` stumps on the Dask array ``features`` (rows in chunks).

        Parameters
        ----------
        features : dask.array.Array
            (#samples, #features) numeric features with known chunk sizes; chunked by rows (column
            chunks are joined).
        targets : dask.array.Array or array_like
            (#samples,) targets; rechunked to the features' row chunks (the model does not change).
        number_of_rounds : int
            Stumps to add at most; training stops earlier when no stump or no step helps.
        sample_weight : dask.array.Array or array_like, optional
            (#samples,) non-negative weights, used as given (the in-memory trainer's mean-1 rescaling
            changes the weights only by rounding).
        callback : callable or list, optional
            As in memory (:mod:`bob_boost.callbacks`): ``callback(round, machine, scores)`` after each round,
            True stops training; ``scores`` is None, since the training scores stay on the workers
            (evaluate on a validation set instead, e.g. ``RecordEvaluation(validation_features, ...)``).
        baseline : float, optional
            The machine starts from this constant and the rounds boost ``targets - baseline``, as
            :meth:`bob_boost.Boosting.train`'s ``baseline`` (the regressor's mean).

        Raises
        ------
        ValueError
            For unknown chunk sizes, features that are not 2-D, targets of another length or with NaN,
            a feature matrix with NaN, or no client.
        """
        from . import _dask
        client = _dask.client_or_default(self.client)
        try:
            return self._train(client, features, targets, number_of_rounds, sample_weight, callback, baseline)
        finally:
            if isinstance(self.client, str):  # connected here for this run
                client.close()

    def _train(self, client, features, targets, number_of_rounds, sample_weight, callback,
               baseline) -> BoostedMachine:
        from . import _dask
        number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
        callback = check_callback(callback)
        array = _dask.as_row_chunked(features, "features")
        chunks = array.chunks[0]
        labels = _dask.as_matching_vector(targets, chunks, "targets")
        if baseline is not None:
            baseline = BoostedMachine(number_of_outputs=1, baseline=baseline).baseline  # validated
            labels = labels - baseline[0]
        weights = None if sample_weight is None else _dask.as_matching_vector(sample_weight, chunks, "sample_weight")
        loss = self.loss_function
        parts = client.compute(list(array.to_delayed()[:, 0]))
        label_parts = [client.submit(_check_chunk_targets, part, loss, pure=False)
                       for part in client.compute(list(labels.to_delayed()))]
        weight_parts = ([None] * len(parts) if weights is None else client.compute(list(weights.to_delayed())))
        thresholds = self._thresholds(client, array, parts)
        offsets = np.concatenate([[0], np.cumsum([t.size + 1 for t in thresholds])]).astype(np.int64)
        split = np.concatenate([np.append(t, np.nan) for t in thresholds])
        number_of_bins = int(max(t.size for t in thresholds) + 1)
        padded = padded_thresholds(thresholds)  # in the tasks themselves, so lost chunks can be recomputed
        codes = [client.submit(_encode, part, padded) for part in parts]
        del parts
        scores = [client.submit(np.zeros, (n, 1)) for n in chunks]
        machine = BoostedMachine(number_of_outputs=1, number_of_features=array.shape[1],
                                 metadata={"loss": loss.name or type(loss).__name__, "trainer": "DaskBoosting"},
                                 decision_rule=loss.decision_rule(1), baseline=baseline)
        training_started(callback, machine)
        for round_index in range(number_of_rounds):
            pieces = [client.submit(_gradient_histogram, c, t, s, w, loss, number_of_bins, offsets)
                      for c, t, s, w in zip(codes, label_parts, scores, weight_parts)]
            histograms = client.submit(_in_order, *[client.submit(lambda p: p[0], p) for p in pieces]).result()
            totals = client.gather(client.submit(lambda *ps: [(p[1], p[2]) for p in ps], *pieces))
            gradient_sum = _in_order(*[t[0] for t in totals])
            absolute_sum = _in_order(*[t[1] for t in totals])
            tolerance = TIE_TOLERANCE * absolute_sum
            best, gain, _ = kernels.best_stump_split(histograms, offsets, -gradient_sum,
                                                     tolerance, False)
            if best < 0 or abs(gain) <= tolerance:
                logger.info("DaskBoosting round %d: no stump follows the gradient; stopping", round_index + 1)
                break
            index = int(np.searchsorted(offsets, best, side="right") - 1)
            polarity = 1.0 if gain >= 0 else -1.0
            code_threshold = int(best - offsets[index]) + 1
            outputs = [client.submit(_stump_outputs, c, index, code_threshold, polarity) for c in codes]
            alpha = self._newton(client, label_parts, scores, outputs, weight_parts)
            if alpha == 0.0:
                logger.info("DaskBoosting round %d: the optimal weight is zero; stopping", round_index + 1)
                break
            machine.add_weak_machine(StumpMachine(float(split[best]), polarity, index), np.array([alpha]))
            scores = [client.submit(_moved, s, o, alpha) for s, o in zip(scores, outputs)]
            logger.info("DaskBoosting round %d/%d: feature %d, weight %.6g", round_index + 1, number_of_rounds,
                        index, alpha)
            if stop_requested(callback, round_index, machine, None):
                break
        training_ended(callback, machine)
        return machine

    def _thresholds(self, client, array, parts) -> list[np.ndarray]:
        """Every feature's thresholds, as the in-memory binning finds them, from global counts or the sample."""
        if np.issubdtype(array.dtype, np.integer):
            ranges = client.gather([client.submit(_integer_range, p) for p in parts])
            low = np.min([r[0] for r in ranges], axis=0)
            high = np.max([r[1] for r in ranges], axis=0)
            span = int((high - low).max()) + 1
            counts = client.submit(_in_order, *[client.submit(_value_counts, p, low, span) for p in parts]).result()
            return count_thresholds(counts, low, self.max_bins)
        rows = sample_rows(array.shape[0])
        sample = (array if rows is None else array[rows]).compute()
        if not np.isfinite(sample).all():
            raise InvalidValueError("features: contain NaN or infinite values")
        return all_thresholds(sample, self.max_bins, 1, None)[0]

    def _newton(self, client, label_parts, scores, outputs, weight_parts) -> float:
        """The step minimising the summed loss along the stump's outputs (Newton, halving on an increase).

        For the exponential loss with +-1 targets the minimum is ``1/2 log(right / wrong)`` from two sums,
        one pass instead of Newton's several, unless an exponent reaches the loss's cap on the way.
        """
        loss = self.loss_function
        if type(loss) is ExponentialLoss:
            parts = [client.submit(_exponential_sums, t, s, o, w)
                     for t, s, o, w in zip(label_parts, scores, outputs, weight_parts)]
            right, wrong, largest, plus_minus_one = (
                client.submit(lambda *ps: [_in_order(*[p[i] for p in ps]) for i in range(3)]
                              + [min(p[3] for p in ps)], *parts).result())
            if plus_minus_one and right > 0 and wrong > 0:
                alpha = 0.5 * float(np.log(right / wrong))
                if largest + abs(alpha) < EXPONENT_LIMIT:
                    return alpha

        def sums(alpha: float) -> np.ndarray:
            parts = [client.submit(_newton_sums, t, s, o, w, loss, alpha, pure=False)
                     for t, s, o, w in zip(label_parts, scores, outputs, weight_parts)]
            return client.submit(_in_order, *parts).result()

        alpha = 0.0
        value, first, second = sums(alpha)
        for _ in range(NEWTON_ITERATIONS):
            if not second > 0:
                break
            step = -first / second
            candidate = alpha + step
            new_value, new_first, new_second = sums(candidate)
            # halve only a step that is worse beyond rounding: near the minimum, rounding alone makes the loss
            # wobble by ulps, and each halving is another pass over every chunk
            halvings = 0
            while new_value > value + LOSS_ROUNDING * abs(value) and halvings < MAX_HALVINGS:
                step /= 2.0
                candidate = alpha + step
                new_value, new_first, new_second = sums(candidate)
                halvings += 1
            alpha, value, first, second = candidate, new_value, new_first, new_second
            if abs(step) <= NEWTON_TOLERANCE * max(1.0, abs(alpha)):
                break
        return float(alpha)

