"""The row-partition seam: how training reads rows that are split into partitions.

The partitioned algorithms (:mod:`bob_boost.boosting.partitioned`) and growers
(:mod:`bob_boost.weak_trainers.partitioned`) never touch a row themselves. They
hold one *handle* per partition for each per-row array (bin codes, targets,
sample weights, scores, tree positions) and ask the partitions for a few
collective operations:

- :meth:`Partitions.each`: a plain numpy function of each partition's arrays, whose results stay
  with their partition (new handles);
- :meth:`Partitions.summed`: the same, with the results brought back and added in partition order
  (loss values, the step rules' sums, class and leaf totals);
- :meth:`Partitions.combined`: a reduction of handles (histograms) made where they are, only its
  result brought back;
- :meth:`Partitions.gather`: the values of some handles;
- :meth:`Partitions.raw`: a function of each partition's raw feature rows (a continued machine's
  scores, replayed weights), for sources that keep them.

Before there are partitions there are raw rows: a :class:`RowSource` reads row blocks of the caller's
features, targets and weights (each block only inside the function given it), which is how bins are found
globally and every partition coded (:mod:`bob_boost.boosting.partitioned_data`), and then places the coded
partitions (:meth:`RowSource.place`). A data source implements these two protocols and nothing else.

Sums are always taken in partition order, so a model depends on where the
partition boundaries are (to the last bits of its sums), never on scheduling.
:class:`LocalRows` and :class:`LocalPartitions` are the in-memory source, whose handles are the arrays
themselves; :class:`bob_boost.dask._chunks.DaskRows` and :class:`~bob_boost.dask._chunks.Chunks` are the
Dask source, whose handles are futures of chunks kept on the workers.
"""
from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ..exceptions import InvalidValueError
from .partition_tasks import checked_weights


def in_order(*parts):
    """Sum ``parts`` left to right: the reduction's order is the partitions' order."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def summed_pieces(*pieces: tuple) -> tuple:
    """Each field of the partitions' tuples (a histogram and its totals, say) summed by :func:`in_order`."""
    return tuple(in_order(*fields) for fields in zip(*pieces))


def gathers(partitions: "Partitions", part_bytes: int) -> bool:
    """Whether results of about ``part_bytes`` a partition are small enough in all to gather
    (``partitions.gathered_bytes``): a reducing task would cost a round trip of its own."""
    return part_bytes * len(partitions.rows) <= partitions.gathered_bytes


def reduced(partitions: "Partitions", function: Callable, parts: list, part_bytes: int):
    """``function(*parts)`` of one handle a partition: gathered and made here when they are small (:func:`gathers`),
    else made where they are (:meth:`Partitions.combined`). The same function of the same values either way."""
    if gathers(partitions, part_bytes):
        return function(*partitions.gather(parts))
    return partitions.combined(function, parts)


def rebuilds(partitions: "Partitions", rounds: int) -> bool:
    """Whether per-partition state is rebuilt from the codes after ``rounds`` rounds (a checkpoint)."""
    return partitions.checkpoint_rounds > 0 and rounds % partitions.checkpoint_rounds == 0


class Partitions(Protocol):
    """The collective operations over row partitions that partitioned training uses (see the module).

    Attributes
    ----------
    rows : tuple of int
        Rows of each partition.
    coded, targets, weights, scores, start : list
        One handle per partition: the bin codes, targets, sample weights (None entries: unweighted),
        current scores, and the scores before the run (None entries: zeros).
    checkpoint_rounds : int
        Every this many rounds, per-partition state is rebuilt from the codes and the rounds so far instead
        of updated from the last round (0: never); it bounds the chain of work a lost partition needs.
    gathered_bytes : int
        Results of at most this many bytes in all are better gathered and combined by the caller than
        combined where they are (:meth:`combined`): they move little, and a combining task would cost a
        round trip of its own.
    """

    rows: tuple[int, ...]
    coded: list
    targets: list
    weights: list
    scores: list
    start: list
    checkpoint_rounds: int
    gathered_bytes: int

    def each(self, function: Callable, *fields: Any, pure: bool = True) -> list:
        """``function(partition's fields..., *constants)`` per partition: each of ``fields`` is a list with one
        handle per partition; the arguments after the last list are the same for every partition."""

    def summed(self, function: Callable, *fields: Any, pure: bool = True) -> Any:
        """:meth:`each`'s results added in partition order."""

    def combined(self, function: Callable, parts: list) -> Any:
        """``function(*parts)`` made where the handles ``parts`` are; only its result comes back."""

    def gather(self, parts: list) -> list:
        """The values of the handles ``parts``."""

    def raw(self, features: Any, function: Callable, *fields: Any) -> list:
        """``function(partition's raw feature rows, fields..., *constants)`` per partition (``fields`` as
        :meth:`each` takes them), the rows read from ``features`` again, never kept."""


class LocalPartitions:
    """In-memory :class:`Partitions`: the handles are the partitions' arrays themselves.

    Parameters
    ----------
    coded : list
        Each partition's bin codes (:class:`~bob_boost.engine.codes.CodedFeatures`).
    targets, weights : list
        Each partition's targets and sample weights (None entries: unweighted).
    outputs : int or None
        Columns of the zero scores each partition starts from (None: no scores).

    Raises
    ------
    ValueError
        When ``targets`` or ``weights`` have another number of partitions, or of rows in one, than ``coded``,
        or the partitions of ``coded`` have different numbers of features.
    """

    checkpoint_rounds = 0
    gathered_bytes = sys.maxsize  # the results are here already

    def __init__(self, coded: list, targets: list, weights: list, outputs: int | None) -> None:
        sizes = [c.n_samples for c in coded]
        features = {c.n_features for c in coded}
        if len(features) > 1:
            raise InvalidValueError(f"coded: partitions of {sorted(features)} features; all must have the same")
        for name, parts in (("targets", targets), ("weights", weights)):
            if len(parts) != len(coded):
                raise InvalidValueError(f"{name}: {len(parts)} partitions, the features have {len(coded)}")
            for part, size in zip(parts, sizes):
                if part is not None and len(part) != size:
                    raise InvalidValueError(f"{name}: a partition of {len(part)} rows, its features have {size}")
        self.coded, self.targets, self.weights = list(coded), list(targets), list(weights)
        self.rows = tuple(sizes)
        self.scores = [None if outputs is None else np.zeros((n, outputs)) for n in sizes]
        self.start: list = [None] * len(coded)

    @staticmethod
    def bounds(rows: Sequence[int]) -> np.ndarray:
        """Row offsets of partitions of ``rows`` rows each: partition ``p`` is ``bounds[p]:bounds[p + 1]``."""
        return np.concatenate([[0], np.cumsum(rows)]).astype(np.int64)

    def each(self, function: Callable, *fields: Any, pure: bool = True) -> list:
        """See :meth:`Partitions.each`."""
        per_partition = [f for f in fields if isinstance(f, list)]
        constants = fields[len(per_partition):]
        return [function(*parts, *constants) for parts in zip(*per_partition)]

    def summed(self, function: Callable, *fields: Any, pure: bool = True) -> Any:
        """See :meth:`Partitions.summed`."""
        return in_order(*self.each(function, *fields))

    def combined(self, function: Callable, parts: list) -> Any:
        """See :meth:`Partitions.combined`."""
        return function(*parts)

    def gather(self, parts: list) -> list:
        """See :meth:`Partitions.gather`."""
        return list(parts)

    def raw(self, features: Any, function: Callable, *fields: Any) -> list:
        """See :meth:`Partitions.raw`: ``features`` is the whole (#rows, #features) matrix."""
        edges = self.bounds(self.rows)
        blocks = [features[edges[p]:edges[p + 1]] for p in range(len(self.rows))]
        return self.each(function, blocks, *fields)


class RowSource(Protocol):
    """Raw rows in blocks, before they are coded into :class:`Partitions` (see the module).

    Its ``values`` arguments are the caller's arrays in the source's own form (numpy arrays for
    :class:`LocalRows`, Dask arrays chunked like the features' rows for the Dask source), split into the
    blocks of :attr:`rows`.

    Attributes
    ----------
    rows : tuple of int
        Rows of each block (each becomes one partition).
    """

    rows: tuple[int, ...]

    def raw(self, values: Any, function: Callable, *fields: Any) -> list:
        """``function(block of values, block's fields..., *constants)`` per block, its result a handle kept with
        the block (``fields`` as :meth:`Partitions.each` takes them); the block itself is not kept."""

    def each(self, function: Callable, *fields: Any) -> list:
        """``function(fields..., *constants)`` per block of handles, where they are (:meth:`Partitions.each`)."""

    def gather(self, parts: list) -> list:
        """The values of the handles ``parts``."""

    def combined(self, function: Callable, parts: list) -> Any:
        """``function(*parts)`` made where the handles are; only its result comes back."""

    def place(self, coded: list, targets: Any, weights: Any, outputs: int | None, check: Callable,
              *arguments: Any) -> Partitions:
        """The partitions of the coded blocks ``coded``: targets ``check(block of targets, *arguments)``, weights
        checked by :func:`bob_boost.boosting.partition_tasks.checked_weights` (None: unweighted), and zero scores
        of ``outputs`` columns (None: none)."""


class LocalRows:
    """In-memory :class:`RowSource`: numpy arrays cut into blocks of ``rows`` rows.

    Parameters
    ----------
    rows : sequence of int
        Rows of each block, each at least 1.

    Raises
    ------
    ValueError
        For an empty sequence or a block without rows; later, for an array of another number of rows.
    """

    def __init__(self, rows: Sequence[int]) -> None:
        self.rows = tuple(int(n) for n in rows)
        if not self.rows or min(self.rows) < 1:
            raise InvalidValueError(f"rows: expected a block size of at least 1 for every block, got {list(rows)}")

    def _blocks(self, values) -> list:
        edges = LocalPartitions.bounds(self.rows)
        if len(values) != edges[-1]:
            raise InvalidValueError(f"rows: the blocks hold {int(edges[-1])} rows, an array has {len(values)}")
        return [values[edges[p]:edges[p + 1]] for p in range(len(self.rows))]

    def raw(self, values, function: Callable, *fields: Any) -> list:
        """See :meth:`RowSource.raw`."""
        return self.each(function, self._blocks(values), *fields)

    def each(self, function: Callable, *fields: Any) -> list:
        """See :meth:`RowSource.each`."""
        per_block = [f for f in fields if isinstance(f, list)]
        constants = fields[len(per_block):]
        return [function(*parts, *constants) for parts in zip(*per_block)]

    def gather(self, parts: list) -> list:
        """See :meth:`RowSource.gather`."""
        return list(parts)

    def combined(self, function: Callable, parts: list) -> Any:
        """See :meth:`RowSource.combined`."""
        return function(*parts)

    def place(self, coded: list, targets, weights, outputs: int | None, check: Callable,
              *arguments: Any) -> LocalPartitions:
        """See :meth:`RowSource.place`."""
        checked = self.raw(targets, check, *arguments)
        weight_parts = [None] * len(coded) if weights is None else self.raw(weights, checked_weights)
        return LocalPartitions(coded, checked, weight_parts, outputs)
