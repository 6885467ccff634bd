"""Training and prediction on a Dask cluster (the optional ``dask`` extra).

- :class:`DaskBoosting`: the generic trainer's decision stumps or look-up tables (one or several outputs)
  with any twice-differentiable loss, trained from a ``dask.array`` or ``dask.dataframe`` whose row chunks
  stay on the workers; each round moves one histogram per chunk;
- :class:`DaskCostSensitiveBoosting`: AdaBoostDB (with its Conditional Search) and Cost-Sensitive AdaBoost,
  the in-memory trainers' own rules on class histograms summed over the chunks;
- :class:`DaskMultiClassBoosting`: BAdaCost, SAMME and AdaBoost.M1 with cost-sensitive trees, grown level by
  level from per-node class histograms summed over the chunks;
- :func:`read_lazy_table`: an HDF5, NPY or CSV/TSV file as Dask arrays whose row chunks the workers read;
- :func:`decision_scores`: any machine's scores on a ``dask.array``, lazily, chunk by chunk;
- scikit-learn estimators (they need scikit-learn too), each a subclass of its in-memory estimator with a
  ``client`` and ``to_local()`` giving its in-memory twin:
  :class:`DaskBoostingClassifier` (stumps or look-up tables), :class:`DaskAdaBoostDBClassifier`,
  :class:`DaskBAdaCostClassifier` (trees) and :class:`DaskBoostingRegressor` (squared loss).

Importing this module without Dask raises ``ImportError`` naming the extra.
"""
from ._dask import NoClientError, decision_scores
from ._files import LazyTable, read_lazy_table
from ._trainers import DaskBoosting, DaskCostSensitiveBoosting, DaskMultiClassBoosting

#: The estimators, imported on first use (they need scikit-learn, which the dask extra does not install).
_ESTIMATORS = ("DaskAdaBoostDBClassifier", "DaskBAdaCostClassifier", "DaskBoostingClassifier",
               "DaskBoostingRegressor")

__all__ = ["DaskBoosting", "DaskCostSensitiveBoosting", "DaskMultiClassBoosting", "LazyTable", "NoClientError",
           "decision_scores", "read_lazy_table", *_ESTIMATORS]


def __getattr__(name: str):
    if name in _ESTIMATORS:
        from . import _estimators
        return getattr(_estimators, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
