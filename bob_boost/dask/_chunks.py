"""The row chunks on the workers: global bin thresholds, each chunk coded on its worker, and the futures of
each chunk's arrays, kept together."""
from __future__ import annotations

import numpy as np

from ..boosting.partitions import in_order
from ..engine.codes import padded_thresholds
from ..weak_trainers.lut import LUTTrainer
from ..weak_trainers.partitioned import LUTChooser
from ..engine.edges import all_thresholds, check_max_bins, count_thresholds, sample_rows
from ..engine.threads import check_threads
from ..engine.values import MAX_TABLE_SIZE
from ..exceptions import InvalidValueError
from . import _tasks as tasks
from ._dask import delayed, per_chunk, row_blocks, wait_for


#: Every this many rounds the chunks' scores (or weights) are rebuilt from their codes and the model so far,
#: instead of from the last round's: otherwise each round's scores depend on the last, and the scheduler
#: keeps the whole chain (a graph growing with the rounds, and a recovery replaying every round).
CHECKPOINT_ROUNDS = 32


def check_cluster_bins(max_bins) -> int:
    """``max_bins`` as the distributed trainers take it: an integer in [2, 256] (their codes are one byte)."""
    checked = check_max_bins(max_bins)
    if checked is None or checked > 256:
        raise InvalidValueError(f"max_bins: must be in [2, 256] for distributed training, got {max_bins!r}")
    return checked


def check_cluster_threads(n_threads) -> int | None:
    """``n_threads`` checked as in memory (None or an integer >= 1) and kept as given: each worker resolves None
    to its own cores.

    Raises
    ------
    TypeError, ValueError
        For a non-integer or a count below 1 (naming ``n_threads``).
    """
    check_threads(n_threads)
    return n_threads


def global_thresholds(client, array, max_bins: int, missing: bool = False,
                      n_threads: int | None = 1) -> list[np.ndarray]:
    """Every feature's thresholds, as the in-memory binning finds them.

    Integer features: from the per-chunk counts of every value, summed (unless the value range is too wide
    for a table, as in memory). Float features, and any feature with ``missing`` (NaN a missing value): from
    the rows of the engine's deterministic sample, gathered once; with ``missing`` at most ``max_bins - 1``
    value bins, from the values that are not NaN.
    """
    if np.issubdtype(array.dtype, np.integer) and not missing:
        ranges = client.gather(per_chunk(client, tasks.integer_range, array))
        low = np.min([r[0] for r in ranges], axis=0)
        high = np.max([r[1] for r in ranges], axis=0)
        span = int((high - low).max()) + 1
        # the in-memory rule (bob_boost.engine.values.integer_range): a value table only when it is small
        if -(1 << 62) <= int(low.min()) <= int(high.max()) < 1 << 62 and span * array.shape[1] <= MAX_TABLE_SIZE:
            counts = client.submit(in_order, *per_chunk(client, tasks.value_counts, array, low, span,
                                                                      n_threads)).result()
            return count_thresholds(counts, low, max_bins)
    rows = sample_rows(array.shape[0])
    edges = np.concatenate([[0], np.cumsum(array.chunks[0])])
    picks = [None if rows is None else rows[(rows >= a) & (rows < b)] - a for a, b in zip(edges[:-1], edges[1:])]
    # each chunk's rows of the sample are taken in the task that reads the chunk: no raw chunk is kept
    parts = [delayed(tasks.rows_of)(block, pick) for block, pick in zip(row_blocks(array, "features"), picks)]
    sample = np.concatenate(client.gather(client.compute(parts)))
    if np.isinf(sample).any() if missing else not np.isfinite(sample).all():
        raise InvalidValueError("features: contain infinite values" if missing
                                else "features: contain NaN or infinite values")
    return all_thresholds(sample, max_bins - 1 if missing else max_bins, 1, None)[0]


def binned_chunks(client, array, max_bins: int, missing: bool = False,
                  n_threads: int | None = 1) -> tuple[list, np.ndarray, np.ndarray]:
    """Futures of every chunk's codes, the bins' ``offsets`` and each bin's upper threshold (NaN for a last bin).

    With ``missing``, every feature's last bin holds its NaN values, as in memory (``missing="bin"``); the
    chunks' kernels run on ``n_threads`` (None: every core of the worker).
    """
    thresholds = global_thresholds(client, array, max_bins, missing, n_threads)
    sizes = np.array([t.size + 1 + missing for t in thresholds], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    tail = [np.nan, np.nan] if missing else [np.nan]
    split = np.concatenate([np.append(t, tail) for t in thresholds])
    padded = padded_thresholds(thresholds)  # in the tasks themselves, so lost chunks can be recomputed
    missing_codes = sizes - 1 if missing else None
    return (per_chunk(client, tasks.coded_bins, array, padded, int(sizes.max()), missing_codes, n_threads), offsets,
            split)


class Chunks:
    """The futures of every row chunk's coded features, targets, weights and current scores, on the workers:
    the Dask source of :class:`bob_boost.boosting.partitions.Partitions`.

    Every task of a chunk is asked to run on the worker that holds the chunk's codes (where its other arrays
    were made too), so a chunk's arrays never move between rounds. The request is loose: when that worker is
    lost, Dask recomputes the chunk's arrays elsewhere and the tasks follow them.
    """

    def __init__(self, client, coded: list, targets: list, weights: list, scores: list, places: list,
                 rows: tuple[int, ...]) -> None:
        self.client = client
        self.coded, self.targets, self.weights, self.scores = coded, targets, weights, scores
        self.places = places
        self.rows = rows
        self.checkpoint_rounds = CHECKPOINT_ROUNDS
        #: Every chunk's scores before the run's first round (None: zeros), from a machine being continued.
        self.start: list = [None] * len(coded)

    @classmethod
    def place(cls, client, coded: list, labels, weights, outputs: int | None, check, *arguments) -> "Chunks":
        """The chunks' targets (``check(block, *arguments)``), weights (checked) and zero scores with ``outputs``
        columns (none for None), each made on the worker holding the chunk's codes."""
        wait_for(coded)
        for future in coded:
            if future.status == "error":
                future.result()  # raises the chunk's error (bad features), as in memory
        holders = client.who_has(coded)
        places = [list(holders.get(future.key, ()))[:1] or None for future in coded]

        chunks = cls(client, coded, [], [None] * len(coded), [], places, tuple(labels.chunks[0]))
        chunks.targets = chunks.each(check, chunks.blocks(labels, "targets"), *arguments, pure=False)
        if weights is not None:
            chunks.weights = chunks.each(tasks.checked_weights, chunks.blocks(weights, "sample_weight"))
        if outputs is not None:
            chunks.scores = chunks.each(np.zeros, [(n, outputs) for n in chunks.rows], pure=False)
        return chunks

    def blocks(self, array, name: str) -> list:
        """Futures of every row block of ``array``, each on its chunk's worker."""
        return [self.client.compute(part, **_near(place)) for part, place in zip(row_blocks(array, name), self.places)]

    def raw(self, features, function, *fields) -> list:
        """Futures of ``function(block, chunk's fields..., *constants)`` of every row block of the Dask array
        ``features`` (the block not kept; ``fields`` as :meth:`each` takes them), each on its chunk's worker."""
        per_chunk = [f for f in fields if isinstance(f, list)]
        constants = fields[len(per_chunk):]
        parts = [delayed(function)(block, *own, *constants)
                 for block, *own in zip(row_blocks(features, "features"), *per_chunk)]
        return [self.client.compute(part, **_near(place)) for part, place in zip(parts, self.places)]

    def each(self, function, *fields, pure: bool = True) -> list:
        """``function(chunk's fields..., *constants)`` per chunk, on its worker: each of ``fields`` is a list with
        one entry per chunk; the arguments after the last list are the same for every chunk."""
        per_chunk = [f for f in fields if isinstance(f, list)]
        constants = fields[len(per_chunk):]
        submit = self.client.submit
        return [submit(function, *parts, *constants, pure=pure, **_near(place))
                for parts, place in zip(zip(*per_chunk), self.places)]

    def summed(self, function, *fields, pure: bool = True):
        """:func:`~bob_boost.boosting.partitions.in_order` over :meth:`each`'s results, gathered: the sum is made
        here, in chunk order, which spares the round trip of a reducing task. For small results (sums, totals,
        loss terms); histograms are summed on a worker (:meth:`combined`), which moves fewer bytes."""
        return in_order(*self.client.gather(self.each(function, *fields, pure=pure)))

    def combined(self, function, parts: list):
        """``function(*parts)`` computed on a worker, where most of the chunks' ``parts`` (futures) already
        are: only the result comes to the client."""
        return self.client.submit(function, *parts).result()

    def gather(self, parts: list) -> list:
        """The results of the futures ``parts``."""
        return self.client.gather(parts)


def _near(place: list | None) -> dict:
    """Dask's loose request for a task to run on ``place`` (any worker once that one is lost)."""
    return {} if place is None else {"workers": place, "allow_other_workers": True}


def lut_chunks(client, array, entries: int | None, trainer_options: dict,
               n_threads: int | None) -> tuple[list, np.ndarray, LUTChooser]:
    """Futures of every chunk's codes for look-up tables, the bins' ``offsets`` and the chooser.

    ``entries`` (None: the largest value + 1, at least 2) value rows per table; with
    ``trainer_options["missing"] == "bin"`` NaN is code ``entries`` of its feature, the tables' last row,
    as :meth:`bob_boost.binning.BinnedFeatures.from_integers` codes it in memory. ``trainer_options`` are
    :class:`~bob_boost.LUTTrainer`'s other arguments (``number_of_outputs``, ``selection_style``,
    ``missing``).
    """
    missing = trainer_options.get("missing") is not None
    if entries is None:
        largest = max(client.gather(per_chunk(client, tasks.finite_max, array, missing)))
        entries = max(2, int(largest) + 1) if np.isfinite(largest) else 2  # every value NaN: the smallest table
    coded = per_chunk(client, tasks.coded_values, array, entries, n_threads, missing)
    offsets = np.arange(array.shape[1] + 1, dtype=np.int64) * (entries + missing)
    all_missing = None
    if missing:  # counted on the codes: the raw blocks are not read again
        counts = client.submit(in_order, *[client.submit(tasks.code_counts, part, entries) for part in coded])
        all_missing = counts.result() == array.shape[0]
    return coded, offsets, LUTChooser(LUTTrainer(entries, **trainer_options), all_missing)
