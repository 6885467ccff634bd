"""Progress reporting for long training runs.

:class:`Progress` is a callback for ``Boosting.train(..., callback=...)``
(and every trainer that takes ``callback(round, machine, scores)``). After
each round it shows the training loss and, for classification losses, the
training error: as a tqdm progress bar when the output stream is a terminal
and tqdm is installed, as plain lines otherwise (about twenty per run), and
not at all when ``quiet`` is set.

Example
-------
>>> import numpy as np, io
>>> from bob_boost import Boosting, StumpTrainer, ExponentialLoss
>>> from bob_boost.progress import Progress
>>> x = np.arange(20.0).reshape(10, 2); t = np.where(x[:, 0] > 8, 1.0, -1.0)
>>> loss = ExponentialLoss()
>>> out = io.StringIO()
>>> with Progress(3, loss, t, stream=out) as progress:
...     machine = Boosting(StumpTrainer(), loss).train(x, t, 3, callback=progress)
>>> print(out.getvalue().splitlines()[0])  # doctest: +ELLIPSIS
round 1/3: loss ..., training error 0.00%
"""
from __future__ import annotations

import sys
from typing import IO

import numpy as np

from ._optional import import_or_none, optional_import
from .losses.base import BinaryClassificationLoss, LossFunction
from .machine import BoostedMachine

#: Roughly this many plain lines are written per run.
PLAIN_LINES = 20


def training_error(loss_function: LossFunction, targets: np.ndarray, scores: np.ndarray,
                   machine: BoostedMachine) -> float | None:
    """Fraction of training samples that ``machine`` classifies wrongly from ``scores``, or None for regression.

    Parameters
    ----------
    loss_function : LossFunction
        The loss being minimised; without a cost matrix, only
        :class:`~bob_boost.losses.base.BinaryClassificationLoss` classifies.
    targets : numpy.ndarray
        (#samples, #outputs) targets as ``loss_function.check_targets`` returns them:
        -1/+1 for one output, else the class is the largest entry.
    scores : numpy.ndarray
        (#samples, #outputs) current training scores.
    machine : BoostedMachine
        The machine being trained; :meth:`~bob_boost.BoostedMachine.labels_from_scores`
        decides as its ``predict`` does (sign, argmax or the cost rule).
    """
    if getattr(loss_function, "cost_matrix", None) is None and not isinstance(loss_function,
                                                                              BinaryClassificationLoss):
        return None
    predicted = machine.labels_from_scores(scores)
    truth = targets[:, 0] if targets.shape[1] == 1 else np.argmax(targets, axis=1)
    return float(np.mean(predicted != truth))


class Progress:
    """Round callback that shows the training loss and error.

    Parameters
    ----------
    number_of_rounds : int
        Rounds the training will run at most (the bar's length).
    loss_function : LossFunction
        The loss the trainer minimises.
    targets : array_like
        The training targets, as passed to the trainer.
    quiet : bool
        Show nothing (and compute nothing).
    stream : file-like, optional
        Where to write; default ``sys.stderr``.
    bar : bool, optional
        Force (True) or forbid (False) the tqdm bar; default: a bar when
        ``stream`` is a terminal and tqdm is importable.
    """

    def __init__(self, number_of_rounds: int, loss_function: LossFunction, targets, quiet: bool = False,
                 stream: IO[str] | None = None, bar: bool | None = None) -> None:
        self.number_of_rounds = int(number_of_rounds)
        self.loss_function = loss_function
        self.targets = None if quiet else loss_function.check_targets(targets)
        self.quiet = quiet
        self.stream = sys.stderr if stream is None else stream
        self._every = max(1, self.number_of_rounds // PLAIN_LINES)
        self._bar = None
        if not quiet and (bar if bar is not None else _is_terminal(self.stream)):
            # a bar asked for must be drawn; one merely fit for the stream is left out without tqdm
            tqdm = optional_import("tqdm", "bar=True") if bar else import_or_none("tqdm")
            if tqdm is not None:
                self._bar = tqdm.tqdm(total=self.number_of_rounds, file=self.stream, unit="round",
                                      dynamic_ncols=True, leave=True)

    def __call__(self, round_index: int, machine: BoostedMachine, scores: np.ndarray) -> None:
        """Report round ``round_index`` (0-based) with the current training ``scores``."""
        if self.quiet:
            return
        last = round_index + 1 == self.number_of_rounds
        if self._bar is None and (round_index + 1) % self._every and not last and round_index:
            return
        scores = np.asarray(scores, dtype=np.float64).reshape(self.targets.shape)
        loss = float(np.sum(self.loss_function.loss(self.targets, scores))) / self.targets.shape[0]
        error = training_error(self.loss_function, self.targets, scores, machine)
        if self._bar is not None:
            postfix = {"loss": f"{loss:.4g}"}
            if error is not None:
                postfix["error"] = f"{error:.2%}"
            self._bar.set_postfix(postfix, refresh=False)
            self._bar.update(round_index + 1 - self._bar.n)
            return
        line = f"round {round_index + 1}/{self.number_of_rounds}: loss {loss:.4g}"
        if error is not None:
            line += f", training error {error:.2%}"
        print(line, file=self.stream, flush=True)

    def close(self) -> None:
        """Finish the progress bar, if any."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def _is_terminal(stream) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False
