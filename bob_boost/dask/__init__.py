"""Training and prediction on a Dask cluster (the optional ``dask`` extra).

- :class:`DaskBoosting`: the generic trainer's decision stumps with any twice-differentiable loss, trained
  from a ``dask.array`` whose row chunks stay on the workers; each round moves one histogram per chunk;
- :func:`decision_scores`: any machine's scores on a ``dask.array``, lazily, chunk by chunk.

Importing this module without Dask raises ``ImportError`` naming the extra.
"""
from ._dask import NoClientError, decision_scores
from ._training import DaskBoosting

__all__ = ["DaskBoosting", "NoClientError", "decision_scores"]
