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

Sums are always taken in partition order, so a model depends on where the
partition boundaries are (to the last bits of its sums), never on scheduling.
:class:`LocalPartitions` is the in-memory source, whose handles are the arrays
themselves; :class:`bob_boost.dask._chunks.Chunks` is the Dask source, whose
handles are futures of chunks kept on the workers.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from ..exceptions import InvalidValueError


def in_order(*parts):
    """Sum ``parts`` left to right: the reduction's order is the partitions' order."""
    total = parts[0]
    for part in parts[1:]:
        total = total + part
    return total


def summed_pieces(*pieces: tuple) -> tuple:
    """Each field of the partitions' tuples (a histogram and its totals, say) summed by :func:`in_order`."""
    return tuple(in_order(*fields) for fields in zip(*pieces))


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
    """

    rows: tuple[int, ...]
    coded: list
    targets: list
    weights: list
    scores: list
    start: list
    checkpoint_rounds: int

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

    def __init__(self, coded: list, targets: list, weights: list, outputs: int | None) -> None:
        sizes = [c.codes.shape[1] for c in coded]
        features = {c.codes.shape[0] for c in coded}
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
