"""Global bin thresholds for stumps, and every chunk coded against them on its worker."""
from __future__ import annotations

import numpy as np

from ..engine.codes import padded_thresholds
from ..engine.edges import all_thresholds, count_thresholds, sample_rows
from ..exceptions import InvalidValueError
from . import _tasks as tasks
from ._dask import per_chunk


def global_thresholds(client, array, max_bins: int) -> list[np.ndarray]:
    """Every feature's thresholds, as the in-memory binning finds them.

    Integer features: from the per-chunk counts of every value, summed. Float features: from the rows of
    the engine's deterministic sample, gathered once.
    """
    if np.issubdtype(array.dtype, np.integer):
        ranges = client.gather(per_chunk(client, tasks.integer_range, array))
        low = np.min([r[0] for r in ranges], axis=0)
        high = np.max([r[1] for r in ranges], axis=0)
        span = int((high - low).max()) + 1
        counts = client.submit(tasks.in_order, *per_chunk(client, tasks.value_counts, array, low, span)).result()
        return count_thresholds(counts, low, max_bins)
    rows = sample_rows(array.shape[0])
    sample = (array if rows is None else array[rows]).compute()
    if not np.isfinite(sample).all():
        raise InvalidValueError("features: contain NaN or infinite values")
    return all_thresholds(sample, max_bins, 1, None)[0]


def binned_chunks(client, array, max_bins: int) -> tuple[list, np.ndarray, np.ndarray]:
    """Futures of every chunk's codes, the bins' ``offsets`` and each bin's upper threshold (NaN for a last bin)."""
    thresholds = global_thresholds(client, array, max_bins)
    offsets = np.concatenate([[0], np.cumsum([t.size + 1 for t in thresholds])]).astype(np.int64)
    split = np.concatenate([np.append(t, np.nan) for t in thresholds])
    padded = padded_thresholds(thresholds)  # in the tasks themselves, so lost chunks can be recomputed
    bins = int(max(t.size for t in thresholds) + 1)
    return per_chunk(client, tasks.coded_bins, array, padded, bins), offsets, split
