"""bob.learn.boosting's MNIST example: boosted stumps or LUTs separating two digits, or all ten at once.

The options mirror those of bob's example script, whose flags (``-t``, ``-l``, ``-m``, ...) the error
messages name; ``bob-boost example mnist|digits`` runs it on MNIST or on generated 8x8 digits.

Example
-------
>>> from bob_boost import datasets
>>> from bob_boost.examples.mnist import example_accuracy, train_example
>>> x, y = datasets.make_digits(300, random_state=0)
>>> data = datasets.MNIST(x, y, x, y).subset([5, 6])
>>> machine = train_example(data, [5, 6], "lut", "log", rounds=5, entries=17)
>>> example_accuracy(machine, data.test_data, data.test_labels, [5, 6], False) > 0.9
True
"""
from __future__ import annotations

import logging

import numpy as np

from ..datasets import MNIST
from ..evaluation import accuracy
from ..exceptions import InvalidValueError
from ..labels import ClassEncoding
from ..machine import BoostedMachine
from ..progress import Progress
from ..recipes import LOSS_ALIASES, make_recipe

__all__ = ["EXAMPLE_LOSSES", "TRAINER_TYPES", "check_example_options", "example_accuracy", "example_targets",
           "train_example"]

logger = logging.getLogger(__name__)

#: bob.learn.boosting's short loss names in its MNIST example (the recipes' aliases).
EXAMPLE_LOSSES = LOSS_ALIASES
#: The example's weak trainers.
TRAINER_TYPES = ("stump", "lut")


def check_example_options(digits: list[int], trainer_type: str, multi_variate: bool,
                          loss_type: str = "exp") -> None:
    """Raise a ValueError if the options do not describe a run of the example.

    Parameters
    ----------
    digits : list of int
        Digits to separate: exactly two unless ``multi_variate``.
    trainer_type : {"stump", "lut"}
        The weak trainer; stumps are univariate only.
    multi_variate : bool
        One output per digit.
    loss_type : {"exp", "log", "tan"}
        Exponential, logit or tangential loss.

    Raises
    ------
    ValueError
        Naming the option that is wrong.
    """
    if trainer_type not in TRAINER_TYPES:
        raise InvalidValueError(f"trainer_type: expected one of {', '.join(TRAINER_TYPES)}, got {trainer_type!r}")
    if loss_type not in EXAMPLE_LOSSES:
        raise InvalidValueError(f"loss_type: expected one of {', '.join(EXAMPLE_LOSSES)}, got {loss_type!r}")
    if not multi_variate and len(digits) != 2:
        raise InvalidValueError(f"univariate training compares exactly two digits, got {digits}; "
                                f"use -m/--multi-variate for more")
    if trainer_type == "stump" and multi_variate:
        raise InvalidValueError("stumps are univariate; use -t lut with -m/--multi-variate")


def example_targets(labels: np.ndarray, digits: list[int], multi_variate: bool) -> np.ndarray:
    """bob's targets: +1 for the first digit and -1 for the second, or per-digit +1/-1 columns.

    Parameters
    ----------
    labels : numpy.ndarray
        (#samples,) digits.
    digits : list of int
        The digits the machine separates.
    multi_variate : bool
        One column per digit, +1 for the true digit and -1 for the others.

    Returns
    -------
    numpy.ndarray
        (#samples,) or (#samples, len(digits)) float64 targets.
    """
    if multi_variate:
        return np.where(labels[:, np.newaxis] == np.asarray(digits)[np.newaxis, :], 1.0, -1.0)
    return np.where(labels == digits[0], 1.0, -1.0)


def train_example(data: MNIST, digits: list[int], trainer_type: str = "stump", loss_type: str = "exp",
                  rounds: int = 100, multi_variate: bool = False, selection_style: str = "independent",
                  entries: int = 256, quiet: bool = True) -> BoostedMachine:
    """Train as bob.learn.boosting's MNIST example does.

    Parameters
    ----------
    data : datasets.MNIST
        Images (integers in ``0 .. entries-1``) and digit labels.
    digits : list of int
        Digits to separate; univariate training takes exactly two, the first
        gets target +1. Multi-variate training has one output per digit with
        +1 for the true digit and -1 for the others.
    trainer_type : {"stump", "lut"}
        The weak trainer; stumps are univariate only.
    loss_type : {"exp", "log", "tan"}
        Exponential, logit or tangential loss.
    rounds : int
        Number of boosting rounds.
    multi_variate : bool
        One output per digit (needs ``trainer_type="lut"``).
    selection_style : {"independent", "shared"}
        Feature selection of multi-variate LUTs.
    entries : int
        LUT size: 256 for MNIST pixels, 17 for :func:`datasets.make_digits`.
    quiet : bool
        No progress display.

    Returns
    -------
    BoostedMachine
        Its metadata ``classes`` maps predictions to digits as ``bob-boost evaluate`` expects.

    Raises
    ------
    ValueError
        If the options do not fit together (see :func:`check_example_options`).
    """
    check_example_options(digits, trainer_type, multi_variate, loss_type)
    targets = example_targets(data.train_labels, digits, multi_variate)
    # class index i is output i (multi-variate), or index 1 is +1, the first digit (univariate)
    encoding = ClassEncoding(list(digits) if multi_variate else list(digits[::-1]))
    recipe = make_recipe("boosting", number_of_classes=encoding.number_of_classes, loss=EXAMPLE_LOSSES[loss_type],
                         weak_learner=trainer_type, lut_entries=entries, selection_style=selection_style,
                         one_vs_rest=multi_variate)
    logger.debug("MNIST example: %s weak machines, %s loss, %d rounds, digits %s", trainer_type, loss_type, rounds,
                 digits)
    with Progress(rounds, recipe.loss, targets, quiet=quiet) as progress:
        machine = recipe.train(data.train_data, targets, rounds, callback=progress)
    machine.metadata.update(encoding.to_metadata())
    return machine


def example_accuracy(machine: BoostedMachine, features: np.ndarray, labels: np.ndarray, digits: list[int],
                     multi_variate: bool) -> float:
    """Fraction of correctly classified digits; multi-variate machines predict the digit of the largest score.

    Parameters
    ----------
    machine : BoostedMachine
        A machine trained by :func:`train_example`.
    features, labels : numpy.ndarray
        Images (#samples, #pixels) and their digits (#samples,).
    digits : list of int
        The digits the machine was trained on, in the same order.
    multi_variate : bool
        Whether the machine has one output per digit.

    Returns
    -------
    float
        The accuracy; NaN when there is no sample.
    """
    if labels.size == 0:
        return float("nan")
    predicted = np.asarray(machine.predict(features))
    if multi_variate:
        return accuracy(labels, np.asarray(digits)[predicted])
    return accuracy(labels, np.where(predicted > 0, digits[0], digits[1]))
