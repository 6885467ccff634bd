"""What the workers run: plain numpy functions of one chunk, with no Dask in them.

Each takes the arrays of one row chunk (its coded features, targets, current scores, sample weights) and
returns a few numbers or a histogram; the driver sums what the chunks return, in chunk order.
"""
from __future__ import annotations

import numpy as np

from ..engine.codes import CodedFeatures, code_dtype, count_integer_values, encode
from ..engine.threads import check_threads
from ..exceptions import InvalidValueError
from ..losses import LossFunction
from ..losses.exponential import EXPONENT_LIMIT
from ..weak.lut import check_discrete


def integer_range(chunk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each column's smallest and largest value."""
    return chunk.min(axis=0).astype(np.int64), chunk.max(axis=0).astype(np.int64)


def value_counts(chunk: np.ndarray, low: np.ndarray, span: int, n_threads: int | None = 1) -> np.ndarray:
    """(#features, span) counts of every integer value ``low[f] + k``."""
    return count_integer_values(chunk, low, span, check_threads(n_threads))


def rows_of(chunk: np.ndarray, rows) -> np.ndarray:
    """The chunk's ``rows`` (all for None): its part of the deterministic sample."""
    return chunk if rows is None else chunk[rows]


def finite_max(chunk: np.ndarray, allow_nan: bool = False) -> float:
    """The chunk's largest value; infinity is an error, and so is NaN unless ``allow_nan`` (a missing value,
    skipped: -inf for a chunk of NaN only)."""
    _check_finite(chunk, allow_nan)
    if allow_nan and chunk.dtype.kind == "f":
        present = chunk[~np.isnan(chunk)]
        return float(present.max()) if present.size else -np.inf
    return float(chunk.max())


def _check_finite(chunk: np.ndarray, allow_nan: bool) -> None:
    """Raise for infinity in the chunk, and for NaN unless ``allow_nan`` (NaN a missing value)."""
    if chunk.dtype.kind != "f":
        return
    if allow_nan:
        if np.isinf(chunk).any():
            raise InvalidValueError("features: contain infinite values")
    elif not np.isfinite(chunk).all():
        raise InvalidValueError("features: contain NaN or infinite values")


def coded_bins(chunk: np.ndarray, padded: np.ndarray, number_of_bins: int,
               missing_codes: np.ndarray | None = None, n_threads: int | None = 1) -> CodedFeatures:
    """The chunk's bin codes against the global thresholds, ready for histograms (built once per run).

    NaN or infinity anywhere is an error, as in memory (the sample that placed the bins may have missed it);
    with ``missing_codes`` NaN is a missing value and gets its feature's code (infinity is still an error).
    ``n_threads`` (None: every core of the worker, as in memory) code the chunk and build its histograms.
    """
    threads = check_threads(n_threads)
    _check_finite(chunk, missing_codes is not None)
    return CodedFeatures(encode(chunk, padded, threads, missing_codes), number_of_bins, threads)


def coded_values(chunk: np.ndarray, entries: int, n_threads: int | None = 1, missing: bool = False) -> CodedFeatures:
    """The chunk's integer values as their own codes, for look-up tables of ``entries`` value rows (their
    histograms built on ``n_threads``).

    With ``missing`` NaN is a missing value with code ``entries`` (one more bin per feature), as
    :meth:`bob_boost.binning.BinnedFeatures.from_integers` codes it in memory; infinity is an error either way.
    """
    _check_finite(chunk, missing)
    check_discrete(chunk, entries, allow_nan=missing)
    bins = entries + int(missing)
    codes = np.empty((chunk.shape[1], chunk.shape[0]), dtype=code_dtype(bins))
    codes[...] = np.where(np.isnan(chunk), entries, chunk).T if missing and chunk.dtype.kind == "f" else chunk.T
    return CodedFeatures(codes, bins, check_threads(n_threads))


def code_counts(coded: CodedFeatures, code: int) -> np.ndarray:
    """(#features,) rows of the chunk whose code is ``code`` (a look-up table's NaN code: its missing values)."""
    return np.count_nonzero(coded.codes == code, axis=1)


def checked_weights(chunk: np.ndarray) -> np.ndarray:
    """The chunk's sample weights; NaN, infinite or negative ones are errors."""
    if not (np.isfinite(chunk).all() and np.all(chunk >= 0)):
        raise InvalidValueError("sample_weight: must be finite and non-negative")
    return chunk


def _read_targets(chunk: np.ndarray, loss: LossFunction) -> np.ndarray:
    """The chunk's targets as the loss reads them; NaN, and what the loss rejects, are errors."""
    if np.isnan(chunk).any():
        raise InvalidValueError("targets: contain NaN")
    try:
        return loss.check_chunk_targets(chunk)
    except InvalidValueError as error:
        raise InvalidValueError(f"{error}, in one chunk ({type(loss).__name__} checks the targets of each chunk "
                                f"on their own)") from None


def checked_targets(chunk: np.ndarray, loss: LossFunction, columns: int) -> np.ndarray:
    """The chunk's targets as the loss reads them, ``columns`` of them; NaN is an error."""
    targets = _read_targets(chunk, loss)
    if targets.shape[1] != columns:
        raise InvalidValueError(f"targets: {type(loss).__name__} reads this chunk as {targets.shape[1]} columns, "
                                f"the first as {columns} (a loss that counts the classes of its labels needs "
                                f"their number given)")
    return targets


def loss_columns(chunk: np.ndarray, loss: LossFunction) -> tuple[int, int]:
    """Columns of the targets as the loss reads them, and of its per-sample values (one per output for a
    separable loss, one for a loss that couples the outputs)."""
    targets = _read_targets(chunk, loss)[:1]
    return int(targets.shape[1]), int(loss.loss(targets, np.zeros_like(targets)).shape[1])


def gradient_histogram(coded: CodedFeatures, targets: np.ndarray, scores: np.ndarray, weights,
                       loss: LossFunction, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(#bins, #outputs) histogram of the chunk's weighted loss gradient, its column sums and absolute sums."""
    gradient = loss.loss_gradient(targets, scores)
    if weights is not None:
        gradient = gradient * weights[:, np.newaxis]
    gradient = np.ascontiguousarray(gradient)
    return coded.histograms(gradient, offsets), gradient.sum(axis=0), np.abs(gradient).sum(axis=0)


def newton_derivatives(targets: np.ndarray, scores: np.ndarray, outputs: np.ndarray, weights, loss: LossFunction,
                       alpha: np.ndarray) -> np.ndarray:
    """(2, #outputs): the chunk's derivative and second derivative of the loss along ``outputs`` at ``alpha``."""
    moved = scores + alpha * outputs
    first = loss.loss_gradient(targets, moved) * outputs
    second = loss.loss_hessian(targets, moved) * outputs * outputs
    if weights is not None:
        first, second = first * weights[:, np.newaxis], second * weights[:, np.newaxis]
    return np.stack([first.sum(axis=0), second.sum(axis=0)])


def loss_and_gradient(targets: np.ndarray, scores: np.ndarray, outputs: np.ndarray, weights, loss: LossFunction,
                      alpha: np.ndarray) -> np.ndarray:
    """``[loss, gradient in alpha...]``: the chunk's summed loss at ``scores + alpha * outputs`` and its
    derivative in each output's weight (the L-BFGS objective's part of this chunk)."""
    value, gradient = loss.loss_and_gradient_sum(alpha, targets, scores, outputs, weights)
    return np.concatenate([[value], gradient])


def exponential_sums(targets: np.ndarray, scores: np.ndarray, outputs: np.ndarray, weights) -> np.ndarray:
    """The exponential loss's weight on the samples the stump gets right and wrong, the largest exponent,
    and whether every target is +-1: ``phi(alpha) = right * exp(-alpha) + wrong * exp(alpha)`` then."""
    exponent = -targets * scores
    values = np.exp(np.minimum(exponent, EXPONENT_LIMIT))[:, 0]
    if weights is not None:
        values = values * weights
    right = (targets * outputs)[:, 0] > 0
    return np.array([values[right].sum(), values[~right].sum(), exponent.max(),
                     float(np.all(np.abs(targets) == 1.0))])


def moved(scores: np.ndarray, outputs: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The chunk's scores after the round's weak machine."""
    return scores + alpha * outputs


def training_loss(targets: np.ndarray, scores: np.ndarray, weights, loss: LossFunction) -> float:
    """The chunk's (weighted) training loss."""
    values = loss.loss(targets, scores)
    return float(np.sum(values if weights is None else weights[:, np.newaxis] * values))


def moved_loss(targets: np.ndarray, scores: np.ndarray, outputs: np.ndarray, weights, loss: LossFunction,
               alpha: np.ndarray) -> float:
    """The chunk's (weighted) training loss at its scores moved by ``alpha`` times the round's weak outputs."""
    return training_loss(targets, scores + alpha * outputs, weights, loss)


def machine_scores(chunk: np.ndarray, machine, include_baseline: bool) -> np.ndarray:
    """(#rows, #outputs) scores of a machine being continued on the chunk's raw rows: its rounds added in
    order from the baseline (or from 0, for residuals), as training added them, so bit for bit the scores
    one longer run would have reached."""
    return machine.decision_scores(chunk, include_baseline=include_baseline)


def rebuilt_scores(coded: CodedFeatures, start, outputs: int, history: tuple) -> np.ndarray:
    """The chunk's scores rebuilt from its codes and the weak machines so far.

    ``start`` holds the scores before the run (None: zeros); ``history`` holds each round's ``(output
    task, its arguments, weights)``; the rounds are added in their order, as :func:`moved` added them, so
    the scores are the same bit for bit. This cuts the chain of each round's scores depending on the last
    (see :data:`bob_boost.dask._chunks.CHECKPOINT_ROUNDS`).
    """
    scores = np.zeros((coded.codes.shape[1], outputs)) if start is None else start
    for task, arguments, alpha in history:
        scores = scores + alpha * task(coded, *arguments)
    return scores


def column_sums(values: np.ndarray) -> np.ndarray:
    """The chunk's column sums (a one-hot target matrix: its class counts)."""
    return values.sum(axis=0)


# -- cost-sensitive binary boosting (AdaBoostDB, Cost-Sensitive AdaBoost) -------------------------------

def binary_labels(chunk: np.ndarray) -> np.ndarray:
    """The chunk's +-1 targets (checked); NaN and other values are errors."""
    if np.isnan(chunk).any():
        raise InvalidValueError("targets: contain NaN")
    if not np.all(np.abs(chunk) == 1.0):
        raise InvalidValueError("targets: must be -1 or +1")
    return chunk


def weak_outputs(chunk: np.ndarray, weak) -> np.ndarray:
    """(#rows, #outputs) a weak machine's outputs on the chunk's raw rows."""
    return weak.forward(chunk)


def classifies_all(outputs: np.ndarray, labels: np.ndarray, log_initial: np.ndarray) -> bool:
    """Whether the outputs' sign is every weighted row's label (a stump without training error)."""
    weighted = np.isfinite(log_initial)
    return bool(np.all(np.sign(outputs[weighted, 0]) == labels[weighted]))


def class_sums(labels: np.ndarray, weights) -> np.ndarray:
    """(2,) the chunk's positive and negative sample counts (or weights)."""
    values = np.ones(labels.size) if weights is None else weights
    positive = labels > 0
    return np.array([values[positive].sum(), values[~positive].sum()])


def log_weight_peak(weights) -> float:
    """The largest logarithm of the chunk's sample weights (for a global log-sum-exp)."""
    with np.errstate(divide="ignore"):
        return float(np.log(weights).max())


def scaled_weight_sum(weights, peak: float) -> float:
    """``sum exp(log w - peak)`` over the chunk."""
    with np.errstate(divide="ignore"):
        return float(np.exp(np.log(weights) - peak).sum())


def log_initial(labels: np.ndarray, weights, shifts: np.ndarray) -> np.ndarray:
    """The chunk's ``log D_1``: ``log w + shift`` (``shifts``: (2,) per class, or the same for both)."""
    shift = np.where(labels > 0, shifts[0], shifts[1])
    if weights is None:
        return shift
    with np.errstate(divide="ignore"):  # a zero weight is -inf: the sample never counts
        return np.log(weights) + shift


def _log_weights(labels, scores, initial, costs):
    return initial - np.where(labels > 0, costs[0], costs[1]) * labels * scores[:, 0]


def class_peaks(labels: np.ndarray, scores: np.ndarray, initial: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """(2,) the largest current log weight of each class in the chunk (-inf for a class it lacks)."""
    log_weights = _log_weights(labels, scores, initial, costs)
    positive = labels > 0
    return np.array([log_weights[positive].max(initial=-np.inf), log_weights[~positive].max(initial=-np.inf)])


def class_histogram(coded: CodedFeatures, labels: np.ndarray, scores: np.ndarray, initial: np.ndarray,
                    costs: np.ndarray, references: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(#bins, 2) per-bin sums of each class's ``exp(log weight - reference)``, and their (2,) totals."""
    log_weights = _log_weights(labels, scores, initial, costs)
    positive = labels > 0
    weights = np.zeros((labels.size, 2))
    weights[positive, 0] = np.exp(log_weights[positive] - references[0])
    weights[~positive, 1] = np.exp(log_weights[~positive] - references[1])
    return coded.histograms(weights, offsets), weights.sum(axis=0)


