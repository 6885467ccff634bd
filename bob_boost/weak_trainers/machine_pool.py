"""A weak trainer that chooses from a fixed pool of multi-class weak machines (MultiBoost's).

:func:`subsample_pool` grows the pool: every member a multi-class weak machine fitted, with the 0|1 loss and
uniform weights, to a random share of the training rows (the BAdaCost paper grows MultiBoost's pool of 6,000
trees from 30%, 45% and 60% samples). :class:`MachinePool` then proposes, every round, the member of least
summed cost ``sum_n R[n, G(x_n)]`` for the round's per-row costs ``R`` (``state.row_losses``, (#samples, K)).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numba
import numpy as np

from ..boosting.protocol import Proposal, RoundState, uses_propose
from ..costs import zero_one_cost_matrix
from ..weak.multiclass import MultiClassWeakMachine

__all__ = ["MachinePool", "subsample_pool"]


@numba.njit(parallel=True, cache=True)
def _pool_costs(predictions: np.ndarray, row_costs: np.ndarray) -> np.ndarray:  # pragma: no cover (compiled)
    """``sum_n row_costs[n, predictions[p, n]]`` for every member ``p``; each sum in row order, so the same
    for any thread count."""
    members, rows = predictions.shape
    costs = np.empty(members)
    for p in numba.prange(members):
        total = 0.0
        for n in range(rows):
            total += row_costs[n, predictions[p, n]]
        costs[p] = total
    return costs


class MachinePool:
    """Propose, every round, the pool member whose predictions cost least under the round's per-row costs.

    Parameters
    ----------
    machines : sequence of MultiClassWeakMachine
        The pool, every member of the same number of classes.
    """

    def __init__(self, machines: Sequence[MultiClassWeakMachine]) -> None:
        self.machines = list(machines)

    def prepare(self, features: np.ndarray) -> np.ndarray:
        """(#members, #samples) classes every member predicts (int16: at most 32,767 classes)."""
        predictions = np.empty((len(self.machines), features.shape[0]), dtype=np.int16)
        for row, machine in zip(predictions, self.machines):
            row[:] = machine.forward_labels(features)
        return predictions

    def propose(self, prepared: np.ndarray, state: RoundState) -> Proposal:
        """The member of least ``sum_n R[n, G(x_n)]`` (the first on ties); its training predictions are in
        ``state.extra["predicted"]``."""
        best = int(np.argmin(_pool_costs(prepared, state.row_losses)))
        state.extra["predicted"] = prepared[best].astype(np.int64)
        return Proposal(self.machines[best])

    def __repr__(self) -> str:
        return f"MachinePool({len(self.machines)} machines)"


def subsample_pool(weak_trainer: Any, features: np.ndarray, labels: np.ndarray, number_of_classes: int,
                   size: int, fractions: Sequence[float], rng: np.random.Generator,
                   sample_weight: np.ndarray | None = None) -> list[MultiClassWeakMachine]:
    """``size`` weak machines of ``number_of_classes`` classes, in consecutive blocks of (nearly) equal
    size for ``fractions`` in order, each fitted by ``weak_trainer`` with the 0|1 loss to a sample without
    replacement of that fraction of the rows of positive ``sample_weight`` (at least one row), weighted by
    ``sample_weight`` (uniform by default).

    The features are prepared (binned) once; a member's sample is its rows of non-zero weight. A weak trainer of
    the loop's protocol (``propose``) gets the members' inputs as they are, checked by the caller (``labels``,
    ``sample_weight``) or made here; another one's ``train`` checks them for every member (MultiBoost's default
    pool of 6,000 depth-2 trees on 420 rows took 4-7% longer so). A member the trainer proposes none for (None) is
    left out.
    """
    prepared = weak_trainer.prepare(features)
    loss = zero_one_cost_matrix(number_of_classes)
    base = np.ones(labels.size) if sample_weight is None else sample_weight
    candidates = np.flatnonzero(base > 0)
    trusted = uses_propose(weak_trainer)
    machines = []
    for index in range(size):
        fraction = fractions[index * len(fractions) // size]
        rows = rng.choice(candidates, max(1, int(round(fraction * candidates.size))), replace=False)
        weights = np.zeros(labels.size)
        weights[rows] = base[rows]
        weights /= weights.sum()
        if not trusted:
            machines.append(weak_trainer.train(prepared, labels, weights, loss))
            continue
        proposal = weak_trainer.propose(prepared, RoundState(features=features, scores=None, labels=labels,
                                                             sample_weights=weights, loss_matrix=loss))
        if proposal is not None:
            machines.append(proposal.machine)
    return machines
