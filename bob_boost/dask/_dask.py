"""The one module of bob_boost.dask that imports Dask (through :mod:`bob_boost._optional`): clients, and
validation of Dask inputs at the public edge."""
from __future__ import annotations

import contextlib

import numpy as np

from .._optional import optional_import
from ..costs import class_cost_sums, class_means_of
from ..engine import hashing
from ..exceptions import BobBoostError, InvalidTypeError, InvalidValueError

dask = optional_import("dask", "bob_boost.dask")
da = optional_import("dask.array", "bob_boost.dask")
_distributed = optional_import("distributed", "bob_boost.dask")
Client, default_client, wait = _distributed.Client, _distributed.default_client, _distributed.wait


def dataframe_reader():
    """:func:`dask.dataframe.read_csv` (imported on first use: it needs pandas and pyarrow, text tables only)."""
    import dask.dataframe

    return dask.dataframe.read_csv


class NoClientError(BobBoostError, ValueError):
    """No Dask client was given and none is running."""


#: Seconds to wait for a scheduler given by its address.
CONNECT_TIMEOUT = 10.0


def check_address(address: str) -> None:
    """Raise :class:`NoClientError` for a malformed scheduler address.

    Checked before connecting: distributed's ``Client`` raises a bare ValueError for one (no port, say),
    and its half-built client then takes 20 s to close.
    """
    from distributed.comm import get_address_host_port, parse_address
    from distributed.comm.registry import get_backend

    try:
        scheme, _ = parse_address(address)
        get_backend(scheme)
        if scheme != "inproc":  # an in-process scheduler's address has no port
            get_address_host_port(address)
    except ValueError as error:
        raise NoClientError(f"client: {address!r} is not a scheduler address ({error}); expected one such as "
                            f"tcp://scheduler:8786") from None


def client_or_default(client):
    """``client``; a client connected to the scheduler at ``client`` when it is an address; else the default.

    Raises
    ------
    NoClientError
        When no scheduler answers at the address within :data:`CONNECT_TIMEOUT` seconds, or when no client
        is given and none is running.
    """
    if isinstance(client, str):
        check_address(client)
        try:
            return Client(client, timeout=CONNECT_TIMEOUT, set_as_default=False)
        except (OSError, TimeoutError) as error:
            raise NoClientError(f"client: no Dask scheduler answers at {client!r} within {CONNECT_TIMEOUT:g} s "
                                f"({type(error).__name__})") from None
    if client is not None:
        return client
    try:
        return default_client()
    except ValueError:
        raise NoClientError("client: none given and no Dask client is running; start one with "
                            "distributed.Client() (or Client('tcp://scheduler:8786'))") from None


def _as_array(values, name: str):
    """A Dask dataframe or series as the Dask array of its values (its partitions as row chunks)."""
    to_array = getattr(values, "to_dask_array", None)
    if to_array is None or isinstance(values, da.Array):
        return values
    try:
        return to_array(lengths=True)
    except (TypeError, ValueError) as error:
        raise InvalidValueError(f"{name}: cannot be read as an array ({error})") from None


@contextlib.contextmanager
def connected(client):
    """:func:`client_or_default`, current while in use, closed afterwards when it was connected here."""
    active = client_or_default(client)
    try:
        # current for the run, so that Dask's own compute() and wait() calls use it rather than a default
        with active.as_current():
            yield active
    finally:
        if isinstance(client, str):
            active.close()


def as_row_chunked(features, name: str) -> "da.Array":
    """A 2-D numeric Dask array with known row chunks and the columns in one chunk.

    A Dask dataframe is taken as the array of its values, one row chunk per partition.
    """
    features = _as_array(features, name)
    if not isinstance(features, da.Array):
        raise InvalidTypeError(f"{name}: expected a dask.array.Array or dask.dataframe.DataFrame, "
                               f"got {type(features).__name__}")
    if features.ndim != 2:
        raise InvalidValueError(f"{name}: expected a 2-D array, got {features.ndim} dimension(s)")
    if any(np.isnan(c) for c in features.chunks[0]):
        raise InvalidValueError(f"{name}: the chunk sizes are unknown; call compute_chunk_sizes() first")
    if features.dtype == bool or not (np.issubdtype(features.dtype, np.integer)
                                      or np.issubdtype(features.dtype, np.floating)):
        raise InvalidTypeError(f"{name}: expected numeric features, got dtype {features.dtype}")
    if features.shape[0] == 0 or features.shape[1] == 0:
        raise InvalidValueError(f"{name}: is empty (shape {features.shape})")
    return features.rechunk({1: -1}) if len(features.chunks[1]) > 1 else features


def as_matching_targets(values, chunks: tuple[int, ...], name: str, vector: bool = False) -> "da.Array":
    """``values`` as a float64 Dask array chunked like the features' rows (rechunked if needed).

    1-D, or 2-D with its columns in one chunk (a single column becomes 1-D); ``vector``: 1-D only.
    """
    array = as_matching_rows(values, chunks, name)
    if array.ndim == 2 and array.shape[1] == 1:
        array = array[:, 0]
    if array.ndim not in ((1,) if vector else (1, 2)):
        raise InvalidValueError(f"{name}: expected {sum(chunks)} values{'' if vector else ' (or rows)'}, "
                                f"got shape {array.shape}")
    return array


def as_matching_rows(values, chunks: tuple[int, ...], name: str) -> "da.Array":
    """``values`` (a Dask array, dataframe or array_like of any dimensions) as a float64 Dask array with the
    features' row chunks and its other axes in one chunk (rechunked if needed)."""
    values = _as_array(values, name)
    if isinstance(values, da.Array):
        if values.ndim and any(np.isnan(c) for c in values.chunks[0]):
            raise InvalidValueError(f"{name}: the chunk sizes are unknown; call compute_chunk_sizes() first")
        array = values
    else:
        array = np.asarray(values)
        if array.dtype.kind == "O":  # numbers held as objects (a nullable pandas column) read as floats
            try:
                array = array.astype(np.float64)
            except (TypeError, ValueError):
                raise InvalidTypeError(f"{name}: expected numbers, got dtype object") from None
    if array.dtype.kind not in "biuf":
        raise InvalidTypeError(f"{name}: expected numbers, got dtype {array.dtype}")
    if array.ndim == 0 or array.shape[0] != sum(chunks):
        raise InvalidValueError(f"{name}: expected {sum(chunks)} rows (one per row of the features), got shape "
                                f"{array.shape}")
    if not isinstance(array, da.Array):
        array = da.from_array(array, chunks=(chunks,) + tuple((size,) for size in array.shape[1:]))
    wanted = (chunks,) + tuple((size,) for size in array.shape[1:])
    if array.chunks != wanted:
        array = array.rechunk(wanted)
    return array.astype(np.float64)


def as_matching_vector(values, chunks: tuple[int, ...], name: str) -> "da.Array":
    """``values`` as a 1-D float64 Dask array chunked like the features' rows (rechunked if needed)."""
    return as_matching_targets(values, chunks, name, vector=True)


def wait_for(futures: list) -> None:
    """Block until every future is done (its result on some worker)."""
    wait(futures)


def _shaped(block: np.ndarray, shape: tuple, name: str, index: int) -> np.ndarray:
    """``block``, if it has the shape its array declares for it: a collection built from delayed pieces
    (``from_delayed``, a dataframe's partitions) can hold a block of another width than it says."""
    if np.shape(block) != shape:
        raise InvalidValueError(f"{name}: chunk {index} has shape {np.shape(block)}, but the array declares "
                                f"{shape} for it (its chunks disagree on the number of columns or rows)")
    return block


def delayed(function):
    """``dask.delayed(function, pure=True)``: a task of the graph being built."""
    return dask.delayed(function, pure=True)


def row_blocks(array: "da.Array", name: str) -> list:
    """The delayed row blocks of ``array`` (columns in one chunk), each checked against its declared shape."""
    blocks = array.to_delayed().reshape(len(array.chunks[0]), -1)[:, 0]
    tail = tuple(array.shape[1:])
    return [delayed(_shaped)(block, (rows,) + tail, name, index)
            for index, (block, rows) in enumerate(zip(blocks, array.chunks[0]))]


def per_chunk(client, function, array: "da.Array", *fields, name: str = "features") -> list:
    """Futures of ``function(block, block's fields..., *constants)`` for every row block of ``array``, in row
    order: the leading ``fields`` that are lists hold one value per block, the rest are the same for all.

    The blocks are computed inside the tasks and never kept: only what ``function`` returns stays on the
    workers (a chunk's codes, say, not its raw values), so data that does not fit the workers' memory
    passes through it one block at a time. Consecutive blocks are asked to run on the workers in turn
    (contiguous groups of about equal size; loosely, so that Dask may still move a task): the scheduler
    alone sometimes ran every block on one worker, and the trainers keep each chunk's later tasks where
    its first result lives.
    """
    per_block = [f for f in fields if isinstance(f, list)]
    constants = fields[len(per_block):]
    parts = [delayed(function)(block, *own, *constants)
             for block, *own in zip(row_blocks(array, name), *per_block)]
    workers = sorted(client.scheduler_info()["workers"])
    if len(workers) < 2:
        return client.compute(parts)
    return [client.compute(part, workers=[workers[i * len(workers) // len(parts)]], allow_other_workers=True)
            for i, part in enumerate(parts)]


def is_dask(value) -> bool:
    """Whether ``value`` is a Dask array or dataframe."""
    return isinstance(value, da.Array) or dask.is_dask_collection(value) and hasattr(value, "map_partitions")


def as_label_vector(values, chunks: tuple[int, ...], name: str) -> "da.Array":
    """Labels of any dtype as a 1-D Dask array chunked like the features' rows."""
    values = _as_array(values, name)
    vector = values if isinstance(values, da.Array) else da.from_array(np.asarray(values), chunks=(chunks,))
    if vector.ndim != 1 or vector.shape[0] != sum(chunks):
        raise InvalidValueError(f"{name}: expected {sum(chunks)} labels, got shape {vector.shape}")
    return vector if vector.chunks[0] == chunks else vector.rechunk((chunks,))


def distinct_labels(labels: "da.Array") -> np.ndarray:
    """The sorted distinct labels (computed on the cluster; only they come back)."""
    return da.unique(labels).compute()


def weighted_mean(values: "da.Array", weights: "da.Array | None") -> float:
    """The (weighted) mean of a Dask vector, computed on the cluster."""
    if weights is None:
        return float(values.mean().compute())
    return float(((values * weights).sum() / weights.sum()).compute())


def positive_weights(targets: "da.Array", weights: "da.Array | None") -> tuple[np.ndarray, float]:
    """(#columns,) the (weighted) number of rows of each column's positive targets, and the rows' total weight,
    summed on the cluster."""
    rows = da.ones(targets.shape[0], chunks=targets.chunks[0]) if weights is None else weights
    positive, total = da.compute(((targets > 0) * rows[:, np.newaxis]).sum(axis=0), rows.sum())
    return np.asarray(positive, dtype=np.float64), float(total)


def class_halves(weights: "da.Array", positive: "da.Array", name: str) -> "da.Array":
    """``weights`` rescaled so that each class (``positive`` or not) weighs 1/2 (class sums on the cluster)."""
    sums = da.compute(weights[positive].sum(), weights[~positive].sum())
    if not (sums[0] > 0 and sums[1] > 0):
        raise InvalidValueError(f"{name}: each class needs some positive weight")
    return weights / da.where(positive, 2.0 * sums[0], 2.0 * sums[1])


def class_sizes(classes: "da.Array", weights: "da.Array | None", number_of_classes: int) -> np.ndarray:
    """(K,) the (weighted) number of samples of each class index, counted on the cluster."""
    return np.asarray(da.bincount(classes, weights=weights, minlength=number_of_classes).compute(),
                      dtype=np.float64)


def class_means(classes: "da.Array", rows: "da.Array", number_of_classes: int) -> np.ndarray:
    """(K, K) each class's mean of the (#samples, K) cost ``rows`` (0 for a class without samples), summed on the
    cluster chunk by chunk (:func:`~bob_boost.costs.class_cost_sums`) and added in chunk order."""
    pairs = zip(classes.rechunk((rows.chunks[0],)).to_delayed().ravel(), rows.to_delayed().reshape(-1, 1)[:, 0])
    pieces = dask.compute(*[dask.delayed(class_cost_sums)(block, values, number_of_classes)
                            for block, values in pairs])
    return class_means_of(np.sum([piece[0] for piece in pieces], axis=0),
                          np.sum([piece[1] for piece in pieces], axis=0))


def holdout(groups: "da.Array", counts: np.ndarray, seed: int, index: "da.Array | None" = None) -> "da.Array":
    """A boolean vector of the held-out rows: of each group ``g`` (``groups``' values) the ``counts[g]`` rows with
    the smallest hashes of their positions ``index`` in the data (None: ``0 .. n - 1``;
    :mod:`bob_boost.holdout`), the rows the in-memory estimators hold out of the same data.

    The largest hash held out of each group comes from two passes over the chunks, each gathering little
    (:func:`bob_boost.engine.hashing.kth_keys`); the vector itself is lazy.
    """
    if index is None:
        index = da.arange(groups.shape[0], chunks=groups.chunks[0], dtype=np.int64)
    hashes = index.map_blocks(hashing.row_hashes, seed, dtype=np.uint64)
    pairs = list(zip(groups.to_delayed().ravel(), hashes.to_delayed().ravel()))
    counts = np.asarray(counts)
    histograms = np.sum(dask.compute(*[dask.delayed(_bucket_counts)(block, keys, len(counts))
                                       for block, keys in pairs]), axis=0)
    buckets = hashing.last_buckets(histograms, counts)
    candidates = dask.compute(*[dask.delayed(_bucket_hashes)(block, keys, buckets) for block, keys in pairs])
    thresholds = hashing.kth_keys(histograms, candidates, counts)
    return da.map_blocks(_held_out_block, groups, hashes, thresholds, counts > 0, dtype=bool)


def _bucket_counts(groups: np.ndarray, hashes: np.ndarray, number: int) -> np.ndarray:
    """:func:`~bob_boost.engine.hashing.bucket_counts` of the block's row hashes."""
    return hashing.bucket_counts(hashes, np.asarray(groups, dtype=np.int64), number)


def _bucket_hashes(groups: np.ndarray, hashes: np.ndarray, buckets: np.ndarray) -> list[np.ndarray]:
    """:func:`~bob_boost.engine.hashing.bucket_keys` of the block's row hashes."""
    return hashing.bucket_keys(hashes, np.asarray(groups, dtype=np.int64), buckets)


def _held_out_block(groups: np.ndarray, hashes: np.ndarray, thresholds: np.ndarray,
                    holding: np.ndarray) -> np.ndarray:
    """The block's rows whose hash is at most their group's threshold (groups holding out rows only)."""
    groups = np.asarray(groups, dtype=np.int64)
    return holding[groups] & (hashes <= thresholds[groups])


def rows_where(mask: "da.Array", *arrays) -> list:
    """The rows of every array (None stays None) where ``mask`` holds, computed into numpy arrays."""
    # selected as rows_kept selects the training rows: the same kind of graph around the same arrays, which the
    # scheduler then sees under consistent keys
    kept = rows_kept(mask, *arrays)
    computed = iter(da.compute(*[a for a in kept if a is not None]))
    return [None if a is None else next(computed) for a in kept]


def rows_kept(mask: "da.Array", *arrays) -> list:
    """The rows of every array (None stays None) where ``mask`` holds, as Dask arrays with known row chunks (the
    chunks' kept counts, computed once; chunks left empty are merged away), in the rows' order."""
    sizes = np.asarray(mask.map_blocks(_count, chunks=((1,) * mask.numblocks[0],), dtype=np.int64).compute())
    chunks = tuple(int(size) for size in sizes)
    kept = []
    for array in arrays:
        if array is None:
            kept.append(None)
            continue
        # a column (of columns ...): map_blocks lines blocks up by their last axes
        flags = mask.reshape((-1,) + (1,) * (array.ndim - 1))
        rows = da.map_blocks(_selected, array, flags, chunks=(chunks,) + array.chunks[1:], dtype=array.dtype)
        kept.append(rows.rechunk({0: tuple(size for size in chunks if size)}) if 0 in chunks else rows)
    return kept


def _count(block: np.ndarray) -> np.ndarray:
    return np.array([np.count_nonzero(block)], dtype=np.int64)


def _selected(block: np.ndarray, flags: np.ndarray) -> np.ndarray:
    return block[flags.reshape(-1)]


def where(mask: "da.Array", yes: float, no: float) -> "da.Array":
    """``yes`` where ``mask`` holds, else ``no`` (lazily)."""
    return da.where(mask, yes, no)


def decision_scores(machine, features) -> "da.Array":
    """(#samples, #outputs) scores of ``machine`` on a Dask array, chunk by chunk (a Dask array, lazy)."""
    array = as_row_chunked(features, "features")
    outputs = machine.number_of_outputs or 1
    return array.map_blocks(machine.decision_scores, chunks=(array.chunks[0], (outputs,)), dtype=np.float64)
