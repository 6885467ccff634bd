"""Global feature importances of a boosted machine, by the names LightGBM and XGBoost give them.

- ``"split"`` (LightGBM's name; ``"weight"`` is XGBoost's for the same count): how many times the weak
  machines read each feature: a tree's split nodes on it, and 1 for each other weak machine that reads it
  (a stump, a table, each distinct feature of a multi-output table).
- ``"gain"``: the summed gains of the trees' splits on each feature (LightGBM's ``"gain"``, XGBoost's
  ``"total_gain"``; XGBoost's ``"gain"`` is this divided by ``"split"``). Trees record their split gains.
- ``"cover"``: the summed training cover of the trees' split nodes on each feature (XGBoost's
  ``"total_cover"``).
- ``"shap"``: the mean absolute Shapley value of each feature over rows (summed over the outputs),
  :meth:`bob_boost.BoostedMachine.shap_values`.

The counts, gains and covers are those of the weak machines, not scaled by their weights in the machine.
"""
from __future__ import annotations

import numpy as np

from .exceptions import InvalidValueError
from .weak.base import WeakMachine
from .weak.multiclass import MultiClassTreeMachine
from .weak.tree import TreeMachine

#: The kinds :func:`feature_importances` computes.
KINDS = ("split", "weight", "gain", "cover", "shap")


def check_kind(kind, name: str = "kind", known: tuple[str, ...] = KINDS) -> str:
    """``kind`` if it is one of ``known``, else a ValueError naming ``name``."""
    if not isinstance(kind, str) or kind not in known:
        raise InvalidValueError(f"{name}: expected one of {', '.join(map(repr, known))}, got {kind!r}")
    return kind


def of_machine(machine, kind: str = "split", features=None, background=None) -> np.ndarray:
    """(#features,) each feature's global importance in a :class:`~bob_boost.BoostedMachine`.

    Parameters
    ----------
    machine : BoostedMachine
        The trained machine.
    kind : {"split", "weight", "gain", "cover", "shap"}
        How many times the weak machines read each feature (``"split"``, or XGBoost's name ``"weight"``);
        the summed split gains or training cover of the trees' nodes on it; or its mean absolute Shapley
        value over the rows of ``features`` (summed over the outputs).
    features, background : array_like, optional
        ``"shap"`` only: the rows (required) and :meth:`~bob_boost.BoostedMachine.shap_values`' background
        rows (None: path-dependent).

    Raises
    ------
    ValueError
        Naming ``kind``, for an unknown kind or gains/covers of weak machines that record none; naming
        ``features``, for ``"shap"`` without rows, or rows given to another kind.
    """
    kind = check_kind(kind)
    if kind == "shap":
        if features is None:
            raise InvalidValueError("features: kind 'shap' averages the Shapley values of rows; pass them")
        return mean_absolute(machine.shap_values(features, background))
    if features is not None or background is not None:
        raise InvalidValueError(f"features: only kind 'shap' reads rows, not {kind!r}")
    read = [int(m.feature_indices().max()) + 1 for m in machine.weak_machines if m.feature_indices().size]
    width = max([machine.number_of_features or 0] + read)
    return tree_importances(machine.weak_machines, kind, width)


def tree_importances(machines: list[WeakMachine], kind: str, width: int) -> np.ndarray:
    """(#features,) the ``"split"``/``"weight"``, ``"gain"`` or ``"cover"`` importance of ``machines``
    (``width`` features at least as wide as any read).

    Raises
    ------
    ValueError
        Naming ``kind``, for gains or covers of a weak machine that records none (stumps, tables, trees
        read from files written before trees recorded them).
    """
    totals = np.zeros(width)
    for machine in machines:
        tree = isinstance(machine, (TreeMachine, MultiClassTreeMachine))
        if kind in ("split", "weight"):
            if tree:
                totals += np.bincount(machine.features[machine.features >= 0], minlength=width)[:width]
            else:  # the features it reads
                totals[machine.feature_indices()] += 1.0
            continue
        record = getattr(machine, "gains" if kind == "gain" else "cover", None) if tree else None
        if record is None:
            raise InvalidValueError(f"kind: {kind!r} needs the {'split gains' if kind == 'gain' else 'training cover'} "
                                    f"trees record; {machine!r} has none (use 'split' or 'shap')")
        inner = machine.features >= 0
        totals += np.bincount(machine.features[inner], weights=record[inner], minlength=width)[:width]
    return totals


def mean_absolute(values: np.ndarray) -> np.ndarray:
    """(#features,) the mean absolute Shapley value of each feature, summed over the outputs, of
    :meth:`~bob_boost.BoostedMachine.shap_values`' (#rows, #features + 1[, #outputs]) array."""
    magnitudes = np.abs(values[:, :-1]).mean(axis=0)
    return magnitudes if magnitudes.ndim == 1 else magnitudes.sum(axis=1)
