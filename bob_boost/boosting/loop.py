"""The one training loop.

Every trainer of bob_boost runs :func:`run`: it validates the run's arguments once, prepares the features
once (the weak trainer's ``prepare``), creates the machine or continues the given one (adding nothing when
its last weak machine has no training error, where one longer run would have stopped), and then, every
round,

1. lets the algorithm set up the round (the loss gradient, or the sample weights and a feature subset);
2. asks the weak trainer for a :class:`~bob_boost.boosting.protocol.Proposal`;
3. takes the proposal's weight, or lets the algorithm's step rule fit it, and lets the algorithm's
   descent guarantee (its optional ``descend`` hook) shrink it until the training loss does not rise, or
   reject the round, which ends training;
4. stops when there is no proposal or the step says so (a zero or non-positive step), else adds the weak
   machine and lets the algorithm update the training scores and sample weights;
5. logs the round, calls the callback (which may stop training, see :mod:`bob_boost.callbacks`) and stops
   after a weak machine without training error.

An algorithm (:mod:`bob_boost.boosting.algorithms`) is the object with the hooks below; the published
algorithms differ only in them. The partitioned algorithms (:mod:`bob_boost.boosting.partitioned`, which
the distributed trainers of :mod:`bob_boost.dask` run) keep the rows, scores and weights in row partitions
(:mod:`bob_boost.boosting.partitions`), so their ``features`` is where the raw rows are read from (a Dask
array on a cluster) and the state's ``scores`` (and a callback's) are None.
"""
from __future__ import annotations

import logging
from typing import Any, Protocol

import numpy as np

from .._validation import check_positive_int
from ..callbacks import (RoundCallback, check_callback, loss_reached, stop_requested, training_ended,
                         training_started)
from ..exceptions import InvalidTypeError
from ..machine import BoostedMachine
from ..weak.base import WeakMachine
from .protocol import Proposal, RoundState

logger = logging.getLogger(__name__)


class Algorithm(Protocol):
    """The hooks through which an algorithm configures the loop."""

    #: Names the algorithm in log messages.
    name: str

    def new_machine(self, features: np.ndarray) -> BoostedMachine:
        """The empty machine a new run fills (outputs, cost matrix, decision rule, metadata)."""

    def check_machine(self, machine: BoostedMachine) -> None:
        """Raise unless ``machine`` can be continued by this algorithm."""

    def start(self, features: np.ndarray, machine: BoostedMachine) -> RoundState:
        """The state before the first round of this run (scores of ``machine`` on ``features``)."""

    def ended_perfect(self, machine: BoostedMachine, state: RoundState) -> bool:
        """Whether ``machine``'s last weak machine has no training error on this run's data (optional hook).

        A run stops after such a machine; continuing the machine on the same data stops at once, as one
        longer run would have.
        """

    def begin_round(self, state: RoundState) -> None:
        """Fill what this round's weak trainer reads."""

    def propose(self, prepared: Any, state: RoundState) -> Proposal | None:
        """Ask the weak trainer for the round's weak machine."""

    def step(self, machine: WeakMachine, state: RoundState) -> tuple[np.ndarray | float, bool] | None:
        """``(weight, perfect)`` for a proposal without weight, or None to stop (zero or non-positive step)."""

    def descend(self, machine: WeakMachine, weight: np.ndarray | float, state: RoundState) -> np.ndarray | None:
        """``weight``, or a smaller one, that does not raise the training loss; None rejects the round and
        stops training (optional hook: algorithms whose closed-form step minimises their own bound need none).
        """

    def end_round(self, state: RoundState, machine: WeakMachine, weight: np.ndarray) -> None:
        """Update the training scores (and sample weights) after adding ``machine`` with ``weight``."""

    def describe(self, state: RoundState) -> str:
        """A few words on the state after a round, for the log (e.g. the training loss)."""


def run(algorithm: Algorithm, weak_trainer: Any, features: np.ndarray, number_of_rounds: int,
        boosted_machine: BoostedMachine | None = None, callback: RoundCallback | None = None) -> BoostedMachine:
    """Train with ``algorithm`` for ``number_of_rounds`` rounds at most.

    Parameters
    ----------
    algorithm : Algorithm
        The configured algorithm (its targets already validated).
    weak_trainer : object
        Its weak trainer; ``prepare(features)``, if it has one, is called once.
    features : numpy.ndarray or dask.array.Array
        The validated (#samples, #features) training features (a Dask array for a distributed algorithm).
    number_of_rounds : int
        Maximum number of weak machines to add.
    boosted_machine : BoostedMachine, optional
        Continue this machine (extended in place and returned); a new one is created otherwise.
    callback : callable, optional
        ``callback(round, machine, scores)`` after each round; True stops training.

    Returns
    -------
    BoostedMachine
        The trained machine.
    """
    number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
    callback = check_callback(callback)
    if boosted_machine is None:
        machine = algorithm.new_machine(features)
    else:
        if not isinstance(boosted_machine, BoostedMachine):
            raise InvalidTypeError(f"boosted_machine: expected a BoostedMachine, got {type(boosted_machine).__name__}")
        algorithm.check_machine(boosted_machine)
        machine = boosted_machine
    prepare = getattr(weak_trainer, "prepare", None)
    prepared = prepare(features) if prepare is not None else features
    state = algorithm.start(features, machine)
    state.prepared = prepared
    state.rounds_before = len(machine)
    state.track_scores = callback is not None
    logger.info("%s: up to %d rounds on %d samples x %d features", algorithm.name, number_of_rounds,
                features.shape[0], features.shape[1])
    training_started(callback, machine)
    ended_perfect = getattr(algorithm, "ended_perfect", None)
    descend = getattr(algorithm, "descend", None)
    reached_loss = getattr(algorithm, "reached_loss", None)
    if boosted_machine is not None and len(machine) and ended_perfect is not None and ended_perfect(machine, state):
        logger.info("%s: the machine's last weak machine classifies every training sample correctly; nothing "
                    "to add", algorithm.name)
        number_of_rounds = 0
    for round_index in range(number_of_rounds):
        state.round_index = round_index
        # the last round's training outputs and leaves (arrays of every training row) are let go before this
        # round makes its own
        proposal = None
        algorithm.begin_round(state)
        proposal = algorithm.propose(prepared, state)
        if proposal is None:
            logger.info("%s round %d: no weak machine contributes; stopping after %d weak machines",
                        algorithm.name, round_index + 1, len(machine))
            break
        if proposal.weight is not None:
            weight, perfect = proposal.weight, proposal.perfect
        else:
            step = algorithm.step(proposal.machine, state)
            if step is None:
                logger.info("%s round %d: the step is not positive; stopping after %d weak machines",
                            algorithm.name, round_index + 1, len(machine))
                break
            weight, perfect = step
        if descend is not None:
            weight = descend(proposal.machine, weight, state)
            if weight is None:  # the algorithm warned
                break
        machine.add_weak_machine(proposal.machine, weight)
        algorithm.end_round(state, proposal.machine, weight)
        if logger.isEnabledFor(logging.INFO):
            logger.info("%s round %d/%d: %r, weight %s%s", algorithm.name, round_index + 1, number_of_rounds,
                        proposal.machine, np.array2string(np.asarray(weight), precision=4), algorithm.describe(state))
        if callback is not None and reached_loss is not None and (reached := reached_loss(state)) is not None:
            loss_reached(callback, *reached)
        if callback is not None and stop_requested(callback, round_index, machine, _reported_scores(state)):
            break
        if perfect:
            logger.info("%s round %d: %r classifies every training sample correctly (weight %s); stopping",
                        algorithm.name, round_index + 1, proposal.machine, np.array2string(np.asarray(weight)))
            break
    training_ended(callback, machine)
    return machine


def _reported_scores(state: RoundState) -> np.ndarray:
    """The machine's training scores as a callback sees them (baseline included)."""
    return state.scores if state.score_offset is None else state.scores + state.score_offset
