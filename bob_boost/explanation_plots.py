"""Figures that explain a model: one tree drawn node by node, and Shapley values as a summary (beeswarm) and a
dependence plot.

matplotlib is optional (``pip install "bob_boost[plot]"``), imported when a function runs; every function
returns a :class:`matplotlib.figure.Figure` and writes it as PNG when ``path`` is given, as
:mod:`bob_boost.plots` does.
"""
from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from ._validation import check_positive_int
from .exceptions import InvalidValueError
from .machine import BoostedMachine
from .plots import new_figure, finish_figure
from .tree_tables import tree_table


def _node_label(table: dict, row: int) -> str:
    """A node's box text: its split, or its leaf value; with its cover when recorded."""
    if table["feature"][row] >= 0:
        name = table["feature_name"][row]
        text = (f"{name} in {{{', '.join(f'{c:g}' for c in table['categories'][row])}}}"
                if table["decision_type"][row] == "in" else f"{name} < {table['threshold'][row]:.4g}")
    else:
        values = [table[key][row] for key in table if key == "class" or key.startswith("value")]
        text = ("class " if "class" in table else "") + ", ".join(f"{v:.4g}" for v in values)
    if not np.isnan(table["cover"][row]):
        text += f"\ncover {table['cover'][row]:.4g}"
    return text


def plot_tree(machine: BoostedMachine, index: int = 0, tree: int = 0, path: str | os.PathLike | None = None):
    """Draw tree ``tree`` of weak machine ``index``: each split with the branch its test sends left (yes) and
    right, the leaves with their values, every node with its training cover where recorded; the leaves in a
    row at the bottom, each parent centred above its children.

    Raises
    ------
    ValueError
        For an ``index`` or ``tree`` the machine does not have.
    TypeError
        For a weak machine without a tree form (:func:`bob_boost.tree_tables.tree_table`).
    """
    if not isinstance(index, (int, np.integer)) or not 0 <= index < len(machine):
        raise InvalidValueError(f"index: expected a weak machine's index in [0, {len(machine)}), got {index!r}")
    table = tree_table(machine)
    own = table["round"] == index
    trees = int(table["tree"][own].max()) + 1
    if not isinstance(tree, (int, np.integer)) or not 0 <= tree < trees:
        raise InvalidValueError(f"tree: weak machine {index} has {trees} trees, got {tree!r}")
    rows = np.flatnonzero(own & (table["tree"] == tree))
    first = int(rows[0])
    x, leaves = {}, 0

    def place(node: int) -> float:  # leaves left to right, parents above the middle of their children
        nonlocal leaves
        row = first + node - int(table["node"][first])
        if table["feature"][row] < 0:
            x[row], leaves = float(leaves), leaves + 1
        else:
            x[row] = (place(int(table["left_child"][row])) + place(int(table["right_child"][row]))) / 2
        return x[row]

    place(int(table["node"][first]))
    depth = int(table["depth"][rows].max())
    figure = new_figure(figsize=(max(4.0, 1.6 * leaves), 1.0 + 1.1 * (depth + 1)))
    axes = figure.add_subplot()
    for row, position in x.items():
        height = -float(table["depth"][row])
        for key, label in (("left_child", "yes"), ("right_child", "no")):
            child = int(table[key][row])
            if child >= 0:
                child_row = first + child - int(table["node"][first])
                axes.plot([position, x[child_row]], [height, height - 1], color="grey", linewidth=1, zorder=1)
                axes.text((position + x[child_row]) / 2, height - 0.5, label, fontsize=7, ha="center",
                          color="dimgrey")
        leaf = table["feature"][row] < 0
        axes.text(position, height, _node_label(table, row), ha="center", va="center", fontsize=7, zorder=2,
                  bbox={"boxstyle": "round", "facecolor": "honeydew" if leaf else "aliceblue", "edgecolor": "grey"})
    axes.set_xlim(-0.7, leaves - 0.3)
    axes.set_ylim(-depth - 0.5, 0.5)
    axes.axis("off")
    axes.set_title(f"weak machine {index}" + (f", tree {tree}" if trees > 1 else ""))
    return finish_figure(figure, path)


def _shap_inputs(values, features, names: Sequence[str] | None, output: int) -> tuple:
    """One output's (#rows, #features) values, the features as float, and the feature labels."""
    values = np.asarray(values, dtype=np.float64)
    features = np.asarray(features, dtype=np.float64)
    if values.ndim == 3:
        if not 0 <= output < values.shape[2]:
            raise InvalidValueError(f"output: the values have {values.shape[2]} outputs, got {output}")
        values = values[:, :, output]
    if values.ndim != 2 or features.ndim != 2 or values.shape != (features.shape[0], features.shape[1] + 1):
        raise InvalidValueError(f"values: expected shap_values' (#rows, #features + 1[, #outputs]) of the "
                                f"{features.shape} features, got shape {values.shape}")
    labels = list(names) if names is not None else [f"f{j}" for j in range(features.shape[1])]
    if len(labels) != features.shape[1]:
        raise InvalidValueError(f"names: {len(labels)} names for {features.shape[1]} features")
    return values[:, :-1], features, labels


def _colours(column: np.ndarray) -> np.ndarray:
    """A feature's values mapped to [0, 1] by rank (NaN: 0.5), so that outliers do not flatten the colours."""
    shown = np.full(column.size, 0.5)
    finite = np.isfinite(column)
    if finite.sum() > 1:
        ranks = np.argsort(np.argsort(column[finite], kind="stable"), kind="stable")
        shown[finite] = ranks / (finite.sum() - 1)
    return shown


def plot_shap_summary(values, features, names: Sequence[str] | None = None, top: int = 20, output: int = 0,
                      path: str | os.PathLike | None = None):
    """A beeswarm of Shapley values: one row per feature (the ``top`` of largest mean absolute value, largest
    at the top), one dot per explained row at its value, coloured by the row's feature value (low blue,
    high red); the rows of a feature are spread vertically where their values crowd.

    Parameters
    ----------
    values : numpy.ndarray
        :meth:`~bob_boost.BoostedMachine.shap_values` of ``features``.
    features : array_like
        The explained rows.
    names : sequence of str, optional
        Feature names (default f0, f1, ...).
    output : int
        With several outputs, the one shown.
    """
    values, features, labels = _shap_inputs(values, features, names, output)
    top = check_positive_int(top, "top")
    order = np.argsort(-np.abs(values).mean(axis=0), kind="stable")[:top]
    figure = new_figure(figsize=(7, 1.0 + 0.35 * order.size))
    axes = figure.add_subplot()
    colour_map = None
    for place, j in enumerate(order):
        y = order.size - 1 - place
        column = values[:, j]
        bins = np.round((column - column.min()) / max(np.ptp(column), 1e-300) * 50).astype(int)
        spread = np.zeros(column.size)
        for b in np.unique(bins):  # dots of about the same value stacked around the row's line
            members = np.flatnonzero(bins == b)
            spread[members] = (np.arange(members.size) - (members.size - 1) / 2) / max(members.size, 8) * 0.8
        colour_map = axes.scatter(column, y + spread, c=_colours(features[:, j]), cmap="coolwarm", s=6,
                                  vmin=0, vmax=1, linewidths=0)
    axes.axvline(0.0, color="grey", linewidth=0.8)
    axes.set_yticks(np.arange(order.size)[::-1], [labels[j] for j in order], fontsize=8)
    axes.set_xlabel("Shapley value (effect on the score)")
    if colour_map is not None:
        bar = figure.colorbar(colour_map, ax=axes, ticks=[0, 1])
        bar.ax.set_yticklabels(["low", "high"])
        bar.set_label("feature value")
    return finish_figure(figure, path)


def plot_shap_dependence(values, features, feature: int, names: Sequence[str] | None = None, output: int = 0,
                         path: str | os.PathLike | None = None):
    """Each row's Shapley value of ``feature`` against the feature's value: how the model's use of the feature
    changes along it (the vertical spread at one value comes from its interactions with other features)."""
    values, features, labels = _shap_inputs(values, features, names, output)
    if not isinstance(feature, (int, np.integer)) or not 0 <= feature < features.shape[1]:
        raise InvalidValueError(f"feature: expected a column index in [0, {features.shape[1]}), got {feature!r}")
    figure = new_figure(figsize=(6, 4))
    axes = figure.add_subplot()
    axes.scatter(features[:, feature], values[:, feature], s=6, color="tab:blue", linewidths=0)
    axes.axhline(0.0, color="grey", linewidth=0.8)
    axes.set_xlabel(labels[feature])
    axes.set_ylabel(f"Shapley value of {labels[feature]}")
    axes.grid(alpha=0.3)
    return finish_figure(figure, path)
