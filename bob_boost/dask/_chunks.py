"""The Dask source of the row-partition seam (:mod:`bob_boost.boosting.partitions`): the raw row blocks of
Dask arrays (:class:`DaskRows`), and the futures of each coded chunk's arrays, kept together on its worker
(:class:`Chunks`)."""
from __future__ import annotations

import numpy as np

from ..boosting.partition_tasks import checked_weights
from ..boosting.partitions import in_order
from ._dask import delayed, per_chunk, row_blocks, wait_for


#: Every this many rounds the chunks' scores (or weights) are rebuilt from their codes and the model so far,
#: instead of from the last round's: otherwise each round's scores depend on the last, and the scheduler
#: keeps the whole chain (a graph growing with the rounds, and a recovery replaying every round).
CHECKPOINT_ROUNDS = 32

#: Results of at most this many bytes in all are gathered to the client and combined there
#: (:attr:`Chunks.gathered_bytes`): about a millisecond's transfer on a local network, against the round trip
#: of a combining task (about 6 ms on a local cluster of this package's benchmark machines).
GATHERED_BYTES = 1 << 20


class DaskRows:
    """The row blocks of Dask arrays chunked like the features' rows: the Dask
    :class:`~bob_boost.boosting.partitions.RowSource`, whose handles are futures on the workers.

    Consecutive blocks are asked to run on the workers in turn (:func:`bob_boost.dask._dask.per_chunk`), and
    :meth:`place` makes every chunk's other arrays on the worker holding its codes.
    """

    def __init__(self, client, features) -> None:
        self.client, self.features, self.rows = client, features, tuple(features.chunks[0])

    def raw(self, values, function, *fields) -> list:
        """See :meth:`RowSource.raw <bob_boost.boosting.partitions.RowSource.raw>` (a block that is not the shape
        its array declares is an error naming ``features``, or ``targets`` for any other array)."""
        name = "features" if values is self.features else "targets"
        return per_chunk(self.client, function, values, *fields, name=name)

    def each(self, function, *fields) -> list:
        """See :meth:`RowSource.each <bob_boost.boosting.partitions.RowSource.each>`."""
        per_block = [f for f in fields if isinstance(f, list)]
        constants = fields[len(per_block):]
        return [self.client.submit(function, *parts, *constants) for parts in zip(*per_block)]

    def gather(self, parts: list) -> list:
        """The results of the futures ``parts``."""
        return self.client.gather(parts)

    def combined(self, function, parts: list):
        """``function(*parts)`` computed on a worker; only the result comes to the client."""
        return self.client.submit(function, *parts).result()

    def place(self, coded: list, targets, weights, outputs: int | None, check, *arguments) -> "Chunks":
        """See :meth:`Chunks.place`."""
        return Chunks.place(self.client, coded, targets, weights, outputs, check, *arguments)


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
            chunks.weights = chunks.each(checked_weights, chunks.blocks(weights, "sample_weight"))
        if outputs is not None:
            chunks.scores = chunks.each(np.zeros, [(n, outputs) for n in chunks.rows], pure=False)
        return chunks

    @property
    def gathered_bytes(self) -> int:
        """See :class:`~bob_boost.boosting.partitions.Partitions` (:data:`GATHERED_BYTES`)."""
        return GATHERED_BYTES

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
