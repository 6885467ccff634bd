"""The Dask estimators' rows: :class:`~bob_boost.sklearn._fit_data.FitData` on Dask arrays whose chunks stay on
the workers, so that the in-memory estimators' ``fit`` trains on a cluster.

Each operation is lazy or one bounded computation on the cluster: label sets, class sums and the held-out rows'
two passes come back to the client, the held-out rows themselves are gathered there (they score the growing
machine every round), and training runs the recipe's partitioned twin on the chunks
(:func:`~bob_boost.dask._trainers.dask_trainer`). The training rows' loss is not recorded: the training scores
stay on the workers.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

import numpy as np

from ..costs import check_sample_costs
from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..io.frames import frame_kind
from ..recipes import Recipe
from ..sklearn import _categories
from ..sparse import is_sparse
from . import _dask
from ._dask import da
from ._trainers import dask_trainer

logger = logging.getLogger(__name__)

#: ``early_stopping="auto"`` holds out no rows when their features would take more than this many bytes on the
#: client (which scores them every round); with less, it holds out the rows the in-memory estimator would.
AUTO_HELD_OUT_BYTES = 1 << 30


class ClusterData:
    """The rows of a Dask estimator's ``fit`` as Dask arrays, trained on by ``client``'s workers.

    Parameters
    ----------
    client : distributed.Client, str or None
        The cluster's client, its scheduler's address, or None (the default client).
    max_bins : int
        Bins per feature of the partitioned trainers.
    n_threads : int or None
        Threads of each task's kernels on its worker.
    """

    records_training = False

    def __init__(self, client, max_bins: int, n_threads: int | None) -> None:
        self.client, self.max_bins, self.n_threads = client, max_bins, n_threads

    @staticmethod
    def is_multilabel(y) -> bool:
        return np.ndim(y) == 2 and np.shape(y)[1] > 1

    @staticmethod
    def validated(estimator, X, y, reset: bool, multi_output: bool = False, y_numeric: bool = False) -> tuple:
        if reset:  # as scikit-learn's validate_data: a fresh fit forgets the last one's columns
            for attribute in ("feature_names_in_", "_category_values"):
                estimator.__dict__.pop(attribute, None)
            names = list(getattr(X, "columns", ()))
            if names and all(isinstance(name, str) for name in names):  # a dataframe's, as scikit-learn keeps them
                estimator.feature_names_in_ = np.asarray(names, dtype=object)
        features = _dask.as_row_chunked(coded_frame(estimator, X, reset), "X")
        if is_sparse(getattr(features, "_meta", None)) and not estimator._sparse_formats():
            raise InvalidTypeError(f"X: {type(estimator).__name__} reads dense chunks; its trainer does not take "
                                   f"scipy sparse chunks (BoostingClassifier and BoostingRegressor do)")
        if not reset and features.shape[1] != estimator.n_features_in_:
            raise InvalidValueError(f"X has {features.shape[1]} features, but {type(estimator).__name__} is "
                                    f"expecting {estimator.n_features_in_} features as input")
        if reset:
            estimator.n_features_in_ = int(features.shape[1])
        rows = features.chunks[0]
        if multi_output:
            return features, _dask.as_matching_targets(y, rows, "y")
        if y_numeric:
            return features, _dask.as_matching_vector(y, rows, "y")
        return features, _dask.as_label_vector(y, rows, "y")

    @staticmethod
    def checked(X: "da.Array", check: Callable[[np.ndarray], None]) -> "da.Array":
        return X.map_blocks(_checked_block, check, dtype=X.dtype)

    @staticmethod
    def all_constant(X: "da.Array") -> bool:
        return False

    @staticmethod
    def weights(sample_weight, rows: "da.Array") -> "da.Array | None":
        return None if sample_weight is None else _dask.as_matching_vector(sample_weight, rows.chunks[0],
                                                                            "sample_weight")

    @staticmethod
    def rows(function: Callable, array: "da.Array", dtype, columns: int | None = None) -> "da.Array":
        shape: dict = {"chunks": (array.chunks[0],) if columns is None else (array.chunks[0], (columns,))}
        if array.ndim == 2 and columns is None:
            shape["drop_axis"] = 1
        elif array.ndim == 1 and columns is not None:
            shape["new_axis"] = 1
        return array.map_blocks(function, dtype=dtype, **shape)

    @staticmethod
    def distinct(values: "da.Array") -> np.ndarray:
        return _dask.distinct_labels(values)

    @staticmethod
    def sums(indices: "da.Array", weights: "da.Array | None", number: int) -> np.ndarray:
        return _dask.class_sizes(indices, weights, number)

    @staticmethod
    def positive_shares(targets: "da.Array", weights: "da.Array | None") -> np.ndarray:
        positive, total = _dask.positive_weights(targets, weights)
        return positive / total

    @staticmethod
    def class_halves(weights: "da.Array | None", positive: "da.Array") -> "da.Array | None":
        # without weights the trainer starts each class at half the weight itself
        return None if weights is None else _dask.class_halves(weights, positive, "sample_weight")

    @staticmethod
    def aligned(values, rows: "da.Array", name: str) -> "da.Array":
        return _dask.as_matching_rows(values, rows.chunks[0], name)

    @staticmethod
    def cost_rows(sample_costs: "da.Array", indices: "da.Array", number: int) -> "da.Array":
        if sample_costs.shape[1:] not in ((number,), (number, number)):  # the whole array's shape, not a chunk's
            n = sample_costs.shape[0]
            raise InvalidValueError(f"sample_costs: expected shape ({n}, {number}) (a row per sample) or ({n}, "
                                    f"{number}, {number}) (a matrix per sample), got {sample_costs.shape}")
        # the labels as a column (or a column of matrices): blocks are aligned by their trailing axes
        labels = indices.rechunk((sample_costs.chunks[0],)).reshape((-1,) + (1,) * (sample_costs.ndim - 1))
        options = {"drop_axis": 2} if sample_costs.ndim == 3 else {}
        return da.map_blocks(_cost_rows, sample_costs, labels, number, chunks=(sample_costs.chunks[0], (number,)),
                             dtype=np.float64, **options)

    @staticmethod
    def class_means(indices: "da.Array", cost_rows: "da.Array", number: int) -> np.ndarray:
        return _dask.class_means(indices, cost_rows, number)

    @staticmethod
    def positive(weights: "da.Array | None", *arrays) -> tuple:
        if weights is None:
            return None, None, list(arrays)
        index = da.arange(weights.shape[0], chunks=weights.chunks[0], dtype=np.int64)
        kept = _dask.rows_kept(weights > 0, weights, index, *arrays)
        if kept[0].shape[0] == weights.shape[0]:  # every weight positive: the arrays as they are
            return weights, None, list(arrays)
        return kept[0], kept[1], kept[2:]

    @staticmethod
    def held_out(index: "da.Array | None", groups: "da.Array | None", counts: np.ndarray, seed: int,
                 rows: "da.Array") -> "da.Array":
        if groups is None:
            groups = da.zeros(rows.shape[0], chunks=rows.chunks[0], dtype=np.int64)
        return _dask.holdout(groups, counts, seed, index)

    @staticmethod
    def kept(mask: "da.Array", *arrays) -> list:
        return _dask.rows_kept(mask, *arrays)

    @staticmethod
    def gathered(mask: "da.Array", *arrays) -> list:
        return _dask.rows_where(mask, *arrays)

    @staticmethod
    def holds_out(estimator, X: "da.Array", stopping: bool) -> bool:
        """As in memory, except that ``"auto"`` holds out nothing when the held-out rows' features would take
        more than :data:`AUTO_HELD_OUT_BYTES` on the client (logged): of sparse chunks, their share of the
        stored values and indices, counted on the cluster."""
        entries = X.shape[0] * X.shape[1]
        entry_bytes = X.dtype.itemsize
        if stopping and estimator.early_stopping == "auto" and is_sparse(getattr(X, "_meta", None)):
            entries = int(X.map_blocks(_stored, chunks=((1,) * X.numblocks[0], (1,)), dtype=np.int64).sum().compute())
            entry_bytes += 4  # a stored value's column index
        held_out_bytes = estimator.validation_fraction * entries * entry_bytes
        if stopping and estimator.early_stopping == "auto" and held_out_bytes > AUTO_HELD_OUT_BYTES:
            logger.info("%s: early_stopping='auto' holds out no rows: they would take %.3g GB on the client "
                        "(early_stopping=True holds them out)", type(estimator).__name__, held_out_bytes / 1e9)
            return False
        return stopping

    @staticmethod
    def regression_baseline(loss, targets: "da.Array", weights: "da.Array | None") -> np.ndarray:
        """The optimal constant of the losses trained on a cluster: a function of the weighted mean."""
        return loss.baseline(np.array([[_dask.weighted_mean(targets, weights)]]))

    def train(self, recipe: Recipe, X: "da.Array", targets: "da.Array", rounds: int, *, callback=None,
              sample_weight=None, boosted_machine=None, baseline=None) -> BoostedMachine:
        trainer = dask_trainer(recipe.trainer, self.max_bins, self.client, self.n_threads)
        options = {} if baseline is None else {"baseline": baseline}
        if recipe.sample_costs is not None:
            options["sample_costs"] = recipe.sample_costs
        return trainer.train(X, targets, rounds, sample_weight=sample_weight, callback=callback,
                             boosted_machine=boosted_machine, **options)


def coded_frame(estimator, X, reset: bool):
    """A Dask dataframe's categorical category and text columns as float codes, partition by partition, as the
    in-memory estimators code a pandas frame (:mod:`bob_boost.sklearn._categories`); anything else as it is.

    At ``reset`` the categories are kept on the estimator: a ``category`` column's own (when Dask does not know
    them yet, every partition's, sorted, as pandas orders a column it makes categorical), a text column's sorted
    distinct values (each computed on the cluster).
    """
    meta = getattr(X, "_meta", None)
    if not hasattr(X, "map_partitions") or frame_kind(meta) != "pandas":
        return X
    if reset:
        option = getattr(estimator, "categorical_features", None)
        _categories.check_option(option)
        kept = {}
        for j, kind in _categories.categorical_columns(option, meta, "pandas"):
            column = X.iloc[:, j]
            if kind == "category" and column.cat.known:
                kept[j] = column.cat.categories.tolist()
            elif kind == "category":  # each partition's own: sorted, as pandas orders the categories of a column
                kept[j] = sorted(column.cat.as_known().cat.categories.tolist())
            else:
                # one partition of distinct values: a few of them, gathered without a shuffle
                distinct = column.dropna().unique(split_out=1).compute()
                kept[j] = _categories.column_categories(distinct.to_frame(), "pandas", 0)
        estimator._category_values = kept
    kept = getattr(estimator, "_category_values", {})
    if not kept:
        return X
    return X.map_partitions(_categories.coded_columns, "pandas", kept,
                            meta=_categories.coded_columns(meta, "pandas", kept))


def _cost_rows(costs: np.ndarray, indices: np.ndarray, number: int, block_info=None) -> np.ndarray:
    """A block's checked cost rows, its samples named by their rows in the whole array."""
    first = 0 if block_info is None else block_info[0]["array-location"][0][0]
    return check_sample_costs(costs, indices.reshape(-1), number, first=first)


def _stored(block) -> np.ndarray:
    """A sparse block's count of stored values, as a (1, 1) block."""
    return np.array([[block.nnz]], dtype=np.int64)


def _checked_block(block: np.ndarray, check: Callable[[np.ndarray], None]) -> np.ndarray:
    check(block)
    return block
