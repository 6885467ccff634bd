"""Training and prediction on a Dask cluster (the optional ``dask`` extra).

- :class:`DaskBoosting`: the generic trainer's decision stumps with any twice-differentiable loss, trained
  from a ``dask.array`` whose row chunks stay on the workers; each round moves one histogram per chunk;
- :func:`decision_scores`: any machine's scores on a ``dask.array``, lazily, chunk by chunk;
- :class:`DaskBoostingClassifier` (needs scikit-learn too): a binary stump classifier fitted from Dask
  arrays, predicting Dask arrays, with ``to_local()`` giving the in-memory ``BoostingClassifier``;
  :class:`DaskBoostingRegressor`, its squared-loss twin of ``BoostingRegressor``.

Importing this module without Dask raises ``ImportError`` naming the extra.
"""
from ._dask import NoClientError, decision_scores
from ._training import DaskBoosting

__all__ = ["DaskBoosting", "DaskBoostingClassifier", "DaskBoostingRegressor", "NoClientError", "decision_scores"]


def __getattr__(name: str):
    # the estimator needs scikit-learn, which the dask extra alone does not install
    if name in ("DaskBoostingClassifier", "DaskBoostingRegressor"):
        from . import _estimators
        return getattr(_estimators, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
