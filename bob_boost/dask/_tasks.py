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


# -- cost-sensitive binary boosting: the targets' check ------------------------------------------------------

def binary_labels(chunk: np.ndarray) -> np.ndarray:
    """The chunk's +-1 targets (checked); NaN and other values are errors."""
    if np.isnan(chunk).any():
        raise InvalidValueError("targets: contain NaN")
    if not np.all(np.abs(chunk) == 1.0):
        raise InvalidValueError("targets: must be -1 or +1")
    return chunk
