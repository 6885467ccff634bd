"""Continuing a trained machine on a cluster: what the distributed trainers check before they add rounds."""
from __future__ import annotations

import numpy as np

from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine


def check_continued(machine, outputs: int | None, n_features: int) -> BoostedMachine | None:
    """``machine`` (None stays None) if the run can continue it: a BoostedMachine with ``outputs`` outputs
    (None: any) and ``n_features`` features, as the in-memory loop checks.

    Raises
    ------
    TypeError
        If ``machine`` is not a :class:`~bob_boost.BoostedMachine`.
    ValueError
        If its outputs or features differ from the run's.
    """
    if machine is None:
        return None
    if not isinstance(machine, BoostedMachine):
        raise InvalidTypeError(f"boosted_machine: expected a BoostedMachine, got {type(machine).__name__}")
    if outputs is not None and machine.number_of_outputs not in (None, outputs):
        raise InvalidValueError(f"boosted_machine: has {machine.number_of_outputs} outputs but the targets have "
                                f"{outputs}")
    if machine.number_of_features not in (None, n_features):
        raise InvalidValueError(f"boosted_machine: reads {machine.number_of_features} features but the data has "
                                f"{n_features}")
    return machine


def continued_baseline(baseline, machine: BoostedMachine | None, outputs: int) -> np.ndarray | None:
    """The run's baseline, validated: the given one for a new machine, the machine's own (when not zero) for
    one being continued, as :meth:`bob_boost.Boosting.train` has it.

    Raises
    ------
    ValueError
        For a baseline given with a machine being continued, or one of another length than the outputs.
    """
    if baseline is not None:
        if machine is not None:
            raise InvalidValueError("baseline: a machine being continued keeps its own baseline")
        return BoostedMachine(number_of_outputs=outputs, baseline=baseline).baseline
    if machine is not None and np.any(machine.baseline != 0):
        if machine.baseline.shape != (outputs,):
            raise InvalidValueError(f"boosted_machine: has {machine.baseline.size} outputs but the targets have "
                                    f"{outputs}")
        return machine.baseline
    return None


def starts_from_scores(machine: BoostedMachine | None) -> bool:
    """Whether a continued machine's scores differ from a new machine's zeros."""
    return machine is not None and (len(machine) > 0 or bool(np.any(machine.baseline != 0)))
