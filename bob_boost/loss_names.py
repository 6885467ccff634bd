"""Losses by name: the words the command line, the estimators and the MNIST example give a loss, and the
configured :class:`~bob_boost.losses.base.LossFunction` each stands for (:mod:`bob_boost.recipes` re-exports
them)."""
from __future__ import annotations

import functools
import inspect

from ._validation import check_choice
from .exceptions import InvalidValueError
from .losses.base import BinaryClassificationLoss, LossFunction
from .losses.log_link import GammaLoss, PoissonLoss, TweedieLoss, check_max_delta_step
from .losses.robust import AbsoluteErrorLoss, HuberLoss, QuantileLoss
from .losses.squared import SquaredLoss
from .registry import loss_class, loss_names

__all__ = ["CLASSIFICATION_LOSSES", "LOSS_ALIASES", "REGRESSION_LOSSES", "is_regression_loss", "make_loss",
           "make_regression_loss"]

#: The losses of the classification estimators (binary, or one-vs-rest with several outputs).
CLASSIFICATION_LOSSES = ("exponential", "logit", "tangential", "softmax", "focal")

#: bob.learn.boosting's short loss names (its MNIST example's ``-l`` option).
LOSS_ALIASES = {"exp": "exponential", "log": "logit", "tan": "tangential"}


#: The estimators' regression losses, by the names scikit-learn gives them.
REGRESSION_LOSSES = ("squared_error", "absolute_error", "huber", "quantile", "poisson", "gamma", "tweedie")


def make_regression_loss(name: str, quantile: float | None = None, huber_delta: float = 1.0,
                         tweedie_power: float = 1.5, poisson_max_delta_step: float = 0.0) -> LossFunction:
    """The regression loss of scikit-learn's name ``name`` (:data:`REGRESSION_LOSSES`) with its parameter
    (``poisson_max_delta_step``: :class:`~bob_boost.losses.PoissonLoss`'s ``max_delta_step``, named as the
    estimators' parameter in errors).

    Raises
    ------
    ValueError
        For an unknown name, ``"quantile"`` without a ``quantile`` in (0, 1), or a bad parameter (named).
    """
    check_choice(name, "loss", REGRESSION_LOSSES)
    if name == "quantile":
        if quantile is None:
            raise InvalidValueError("quantile: loss='quantile' needs the quantile to estimate, in (0, 1)")
        return QuantileLoss(quantile)
    if name == "huber":
        return HuberLoss(huber_delta)
    if name == "tweedie":
        return TweedieLoss(tweedie_power)
    if name == "poisson":
        return PoissonLoss(check_max_delta_step(poisson_max_delta_step, "poisson_max_delta_step"))
    return {"squared_error": SquaredLoss, "absolute_error": AbsoluteErrorLoss, "gamma": GammaLoss}[name]()


def make_loss(name: str, cost_matrix=None, cost_positive: float | None = None,
              cost_negative: float | None = None) -> LossFunction:
    """The registered loss ``name`` (or a :data:`LOSS_ALIASES` name), given the cost options its constructor takes.

    Raises
    ------
    ValueError
        For an unknown name, or a loss whose required cost option is missing
        (the message names the option, e.g. ``cost_matrix``).
    """
    name = LOSS_ALIASES.get(name, name)
    try:
        cls = loss_class(name)
    except KeyError:
        raise InvalidValueError(f"loss: unknown loss {name!r}; known losses: {', '.join(loss_names())}") from None
    available = {"cost_matrix": cost_matrix, "cost_positive": cost_positive, "cost_negative": cost_negative}
    kwargs = {}
    for parameter, required in _parameters(cls):
        if available.get(parameter) is not None:
            kwargs[parameter] = available[parameter]
        elif required:
            raise InvalidValueError(f"loss: {name!r} needs {parameter}")
    return cls(**kwargs)


@functools.cache
def _parameters(cls: type) -> tuple[tuple[str, bool], ...]:
    """Each parameter of ``cls``'s constructor and whether it is required (read once per class: the estimators
    make their loss at every prediction, and a signature takes tens of microseconds to read)."""
    return tuple((parameter.name, parameter.default is inspect.Parameter.empty
                  and parameter.kind in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY))
                 for parameter in inspect.signature(cls).parameters.values())


def is_regression_loss(loss: LossFunction) -> bool:
    """Whether ``loss`` fits real targets rather than classes.

    Its decision rule says so (``"identity"``, ``"exp"``); a loss that states no rule
    is a classification loss when it is a
    :class:`~bob_boost.losses.base.BinaryClassificationLoss` or has a cost
    matrix, and a regression loss otherwise.
    """
    rule = loss.decision_rule(1)
    if rule is not None:
        return rule in ("identity", "exp")
    return not isinstance(loss, BinaryClassificationLoss) and loss.cost_matrix is None
