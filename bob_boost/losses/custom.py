"""A loss given as plain functions: its gradient and hessian, and optionally its values (a LightGBM custom
objective, in two functions)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._validation import as_score_matrix, sum_is_finite
from ..decision import RULES as DECISION_RULES
from ..exceptions import InvalidTypeError, InvalidValueError
from .base import LossFunction

Derivative = Callable[[np.ndarray, np.ndarray], np.ndarray]


class FunctionLoss(LossFunction):
    """A loss of the caller's functions of ``(targets, scores)``, both (#samples, #outputs) float arrays.

    Without ``loss`` it is what a LightGBM custom objective is: gradient trees with Newton leaves
    (:class:`~bob_boost.TreeTrainer`, whose weight is the learning rate) train on it, but nothing that needs
    the loss's values does: the weight searches of stumps and tables, the descent guarantee (which it then
    goes without), estimators' scores. With ``loss`` it is a full loss.

    Parameters
    ----------
    gradient, hessian : callable
        ``f(targets, scores)``: the loss's first and second derivatives in every score, arrays shaped like
        ``scores``; the hessian non-negative for Newton leaves.
    loss : callable, optional
        ``f(targets, scores)``: the (#samples, #outputs) per-sample losses.
    decision_rule : str, optional
        How scores become predictions (:mod:`bob_boost.decision`, e.g. ``"identity"`` for regression); None:
        bob's (the sign of one output, the largest of several).
    name : str
        A name for the model's metadata.

    Raises
    ------
    TypeError
        When ``gradient`` or ``hessian`` (or a given ``loss``) is not callable.
    ValueError
        For an unknown decision rule; in training, when a function returns an array of another shape than
        the scores, or values that are not finite.
    """

    def __init__(self, gradient: Derivative, hessian: Derivative, loss: Derivative | None = None,
                 decision_rule: str | None = None, name: str = "function") -> None:
        for argument, function in (("gradient", gradient), ("hessian", hessian), ("loss", loss)):
            if not callable(function) and (function is not None or argument != "loss"):
                raise InvalidTypeError(f"{argument}: expected a function of (targets, scores), got "
                                       f"{type(function).__name__}")
        if decision_rule is not None and decision_rule not in DECISION_RULES:
            raise InvalidValueError(f"decision_rule: must be None or one of {DECISION_RULES}, got {decision_rule!r}")
        self._functions = {"gradient": gradient, "hessian": hessian, "loss": loss}
        self._rule = decision_rule
        self.name = name

    @property
    def has_loss(self) -> bool:
        """Whether the loss's values are known (``loss`` was given)."""
        return self._functions["loss"] is not None

    def _call(self, which: str, targets: np.ndarray, scores: np.ndarray) -> np.ndarray:
        values = np.asarray(self._functions[which](targets, scores), dtype=np.float64)
        if values.shape != scores.shape:
            raise InvalidValueError(f"{which}: returned an array of shape {values.shape} for scores of shape "
                                    f"{scores.shape}")
        if not sum_is_finite(values):
            raise InvalidValueError(f"{which}: returned values that are not finite")
        return values

    def loss(self, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """The given ``loss`` function's values.

        Raises
        ------
        NotImplementedError
            Without a ``loss`` function.
        """
        if not self.has_loss:
            raise NotImplementedError("FunctionLoss: no loss function was given, so its values are unknown")
        return self._weighted(self._call("loss", targets, scores), sample_weight)

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray, sample_weight=None) -> np.ndarray:
        """The ``gradient`` function's values."""
        return self._weighted(self._call("gradient", targets, scores), sample_weight)

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray, sample_weight=None) -> np.ndarray:
        """The ``hessian`` function's values."""
        return self._weighted(self._call("hessian", targets, scores), sample_weight)

    @staticmethod
    def _weighted(values: np.ndarray, sample_weight) -> np.ndarray:
        return values if sample_weight is None else values * np.asarray(sample_weight)[:, np.newaxis]

    def decision_rule(self, number_of_outputs: int) -> str | None:
        """The given decision rule."""
        return self._rule

    def check_targets(self, targets) -> np.ndarray:
        """Finite real targets, (#samples,) or (#samples, #outputs)."""
        return as_score_matrix(targets, "targets")

    def __repr__(self) -> str:
        return f"FunctionLoss(name={self.name!r})"
