"""The weak-trainer protocol and the state of a training run.

A weak trainer is prepared once per run and asked for one weak machine per round::

    prepared = weak_trainer.prepare(features)          # validate, bin or sort the features once
    proposal = weak_trainer.propose(prepared, state)   # trusted inputs: no validation every round

``propose`` reads what its algorithm puts into the :class:`RoundState` (the loss gradient for the generic
trainer; the sample weights, labels, loss matrix and feature subset for the multi-class trainers; the log
weights for the cost-sensitive stump pool) and returns a :class:`Proposal`. A weak trainer whose choice is
tied to its step (AdaBoostDB's largest root) returns the weight too; otherwise the algorithm's step rule
fits it.

A weak trainer whose ``samples_columns`` is true reads ``state.feature_subset`` in the generic algorithm too:
a round's column sample (:class:`~bob_boost.boosting.sampling.Sampling`), the features its machine may use.

A weak trainer whose ``joint_derivatives(K)`` is true for the targets' K outputs (a lone gradient tree) may be
given ``state.gradient`` and ``state.hessian`` as the two halves of one C-ordered (#samples, 2K) array
(:func:`~bob_boost.losses.base.joined_derivatives` finds it), which it then reads without copying them together.

A weak trainer whose ``accepts_missing`` is true (``StumpTrainer(missing="bin")``) is given features with NaN
(missing values); the others never see NaN, which the trainers reject at their public edge.

A weak trainer whose ``accepts_sparse`` is true (stumps, look-up tables, gradient trees) is given a scipy
sparse matrix as it was passed (canonical CSR, :mod:`bob_boost.sparse`); it must not densify it whole, and
where the algorithm reads the rows themselves (a weak machine's outputs without codes) it does so a block of
rows at a time. The others are given dense arrays only.

Weak trainers written for bob_boost 0.1, with only ``train(...)``, keep working: the algorithms adapt them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:  # annotations only; the weak machines know nothing of the loop
    from ..weak.base import WeakMachine


@dataclass(frozen=True)
class Proposal:
    """A round's weak machine, and its weight when the weak trainer chose both together.

    Attributes
    ----------
    machine : WeakMachine
        The weak machine.
    weight : float or numpy.ndarray, optional
        Its weight (one per output); None lets the algorithm's step rule fit it.
    perfect : bool
        The machine makes no training error: the loop adds it and stops.
    outputs : numpy.ndarray, optional
        (#samples, #outputs) the machine's outputs on the training samples, equal to
        ``machine.forward(features)``, when the weak trainer has them more cheaply (from its bin codes);
        the algorithm then need not evaluate the machine on the raw features.
    leaves : numpy.ndarray, optional
        (#samples, #trees) the node of every training sample's leaf in every tree of a tree machine, equal to
        ``machine.leaves(features)``, when the weak trainer has them from its growing.
    """

    machine: WeakMachine
    weight: float | np.ndarray | None = None
    perfect: bool = False
    outputs: np.ndarray | None = None
    leaves: np.ndarray | None = None


@dataclass
class RoundState:
    """What the loop knows between rounds; the algorithm fills the fields its weak trainer reads.

    Attributes
    ----------
    features : numpy.ndarray or dask.array.Array
        The validated (#samples, #features) training features (for a partitioned algorithm, where its
        partitions' raw rows are read from: a Dask array on a cluster).
    scores : numpy.ndarray or None
        (#samples, #outputs) training scores of the machine so far (baseline included), or None for a
        partitioned algorithm, whose scores stay with their partitions; always up to date
        when :attr:`track_scores` is set, which the loop does when a callback will read them (an algorithm
        that trains from other quantities, such as BAdaCost's log weights, may skip them otherwise).
    round_index : int
        The 0-based index of the current round.
    rounds_before : int
        Weak machines the machine already had when this run began (a continued machine's rounds):
        ``rounds_before + round_index`` is the round's place in the whole machine.
    gradient : numpy.ndarray, optional
        The loss gradient at ``scores`` (generic boosting). It and :attr:`hessian` hold for the round: the
        next round's derivatives may be computed into the same arrays (a weak trainer that keeps them past
        its ``propose`` copies them).
    hessian : numpy.ndarray, optional
        The diagonal of the loss Hessian at ``scores``, for a weak trainer with ``uses_hessian`` and a loss
        that has one (generic boosting); None otherwise.
    labels, sample_weights, loss_matrix, feature_subset : numpy.ndarray, optional
        Class indices, normalised sample weights, the (K, K) loss matrix and the feature columns the round
        may use (multi-class boosting).
    row_losses : numpy.ndarray, optional
        (#samples, K) the cost of each prediction for each row: example-dependent costs in place of
        ``loss_matrix``'s class rows (BAdaCost with per-sample costs), or MultiBoost's loss terms.
    log_weights : numpy.ndarray, optional
        Log sample weights (cost-sensitive stump boosting).
    rows : numpy.ndarray, optional
        The ascending rows a sampled round's weak machine is fitted to (generic boosting with a
        :class:`~bob_boost.boosting.sampling.Sampling`); the others have zero gradient and hessian. A tree
        grows on these rows alone (its ``min_samples_leaf`` counts them); None: every row.
    node_columns : tuple, optional
        ``(key, fraction)``: a sampled round's per-node column sampling (the share of the round's columns each
        tree node may split on, :func:`~bob_boost.engine.split_scan.node_columns`), for weak trainers with
        ``samples_node_columns``; None: every node may use the round's columns.
    track_scores : bool
        Whether :attr:`scores` must follow every round.
    score_offset : numpy.ndarray, optional
        Added to :attr:`scores` where the loop reports them (callbacks): the machine's baseline when the
        algorithm boosts residuals from 0.
    prepared : object, optional
        What the weak trainer's ``prepare`` returned for this run (set by the loop), e.g. the
        :class:`~bob_boost.binning.BinnedFeatures` whose ``lossy`` flag chooses the generic step rule.
    extra : dict
        Whatever else an algorithm keeps between its own hooks.
    """

    features: np.ndarray
    scores: np.ndarray | None
    round_index: int = 0
    rounds_before: int = 0
    gradient: np.ndarray | None = None
    hessian: np.ndarray | None = None
    labels: np.ndarray | None = None
    sample_weights: np.ndarray | None = None
    loss_matrix: np.ndarray | None = None
    feature_subset: np.ndarray | None = None
    row_losses: np.ndarray | None = None
    log_weights: np.ndarray | None = None
    rows: np.ndarray | None = None
    node_columns: tuple[int, float] | None = None
    track_scores: bool = True
    score_offset: np.ndarray | None = None
    prepared: Any = None
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class WeakTrainer(Protocol):
    """What the loop needs of a weak trainer."""

    def prepare(self, features: np.ndarray) -> Any:
        """Validate and preprocess the training features once per run."""

    def propose(self, prepared: Any, state: RoundState) -> Proposal | None:
        """The round's weak machine for trusted, prepared inputs; None when none can contribute."""


def uses_propose(weak_trainer: Any) -> bool:
    """Whether the loop should call ``propose`` rather than bob_boost 0.1's ``train``.

    A subclass of a built-in weak trainer that overrides only ``train`` keeps its ``train``.
    """
    definers = {name: next((cls for cls in type(weak_trainer).__mro__ if name in vars(cls)), None)
                for name in ("propose", "train")}
    if definers["propose"] is None:
        return False
    if definers["train"] is None:
        return True
    return issubclass(definers["propose"], definers["train"])
