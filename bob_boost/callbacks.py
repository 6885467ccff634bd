"""The one callback signature every trainer calls after each round.

``callback(round, machine, scores) -> bool | None``

``round``
    The 0-based index of the round just finished.
``machine``
    The :class:`~bob_boost.BoostedMachine` being trained, with the round's
    weak machine already added (do not modify it).
``scores``
    The (#samples, #outputs) training scores of ``machine`` (baseline
    included), as :meth:`~bob_boost.BoostedMachine.decision_scores` would give
    them on the training features.

Returning ``True`` stops training after this round (the machine keeps it);
any other value (``None``, ``False``, a number) lets it go on. :class:`bob_boost.progress.Progress` is
such a callback; early stopping plugs in the same way.

Example
-------
>>> import numpy as np
>>> from bob_boost import Boosting, ExponentialLoss, StumpTrainer
>>> x = np.arange(40.0).reshape(20, 2); t = np.where(x[:, 0] % 4 < 2, 1.0, -1.0)
>>> def stop_after_three(round_index, machine, scores):
...     return len(machine) == 3
>>> machine = Boosting(StumpTrainer(), ExponentialLoss()).train(x, t, 50, callback=stop_after_three)
>>> len(machine)
3
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from collections.abc import Callable

import numpy as np

from .exceptions import InvalidTypeError

if TYPE_CHECKING:  # the machine module imports nothing of this one; the annotation only names it
    from .machine import BoostedMachine

logger = logging.getLogger(__name__)

#: ``callback(round, machine, scores) -> bool | None``; True stops training.
RoundCallback = Callable[[int, "BoostedMachine", np.ndarray], bool | None]


def check_callback(callback, name: str = "callback") -> RoundCallback | None:
    """Return ``callback`` after checking that it is None or callable.

    Raises
    ------
    TypeError
        If ``callback`` is neither None nor callable.
    """
    if callback is not None and not callable(callback):
        raise InvalidTypeError(f"{name}: expected a callable, got {type(callback).__name__}")
    return callback


def stop_requested(callback: RoundCallback | None, round_index: int, machine: "BoostedMachine",
                   scores: np.ndarray) -> bool:
    """Call ``callback`` (if any) for a finished round; True when it asks to stop training."""
    if callback is None:
        return False
    result = callback(round_index, machine, scores)
    # only a boolean: bob_boost 0.1 ignored return values, and a callback returning, say, a loss must not stop
    if isinstance(result, (bool, np.bool_)) and result:
        logger.info("Round %d: the callback stopped training after %d weak machines", round_index + 1, len(machine))
        return True
    return False
