"""Figures: error per round, margin distributions, confusion matrix, feature maps and weights, cost curves.

matplotlib is optional (``pip install "bob_boost[plot]"``); it is imported
only when a ``plot_*`` function runs. The functions that compute what is
drawn (:func:`errors_per_round`, :func:`margin_distribution`,
:func:`feature_weights`, :func:`feature_map`, :func:`feature_names`) live
in :mod:`bob_boost.analysis` and need only numpy; they are importable from
here too. Every ``plot_*`` function returns a
:class:`matplotlib.figure.Figure` and writes it as PNG when ``path`` is
given; no pyplot state is touched.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np

from .analysis import (default_margin_rounds, errors_per_round, feature_label,  # noqa: F401 (re-exported)
                       feature_map, feature_names, feature_weights, margin_distribution)
from .evaluation import confusion_matrix
from ._optional import optional_import
from ._validation import check_positive_int
from .exceptions import InvalidValueError
from .machine import BoostedMachine


def new_figure(**kwargs):
    """A :class:`matplotlib.figure.Figure` (no pyplot state), or an ImportError naming the ``plot`` extra."""
    return optional_import("matplotlib.figure", "plotting").Figure(**kwargs)


def finish_figure(figure, path: str | os.PathLike | None):
    """Lay ``figure`` out, write it as PNG to ``path`` when given, and return it."""
    figure.tight_layout()
    if path is not None:
        figure.savefig(path, format="png", dpi=100)
    return figure


def plot_error_curves(curves: Mapping[str, Sequence[float]], path: str | os.PathLike | None = None):
    """Plot error rate against the number of rounds, one line per entry of ``curves`` (e.g. training, test)."""
    figure = new_figure(figsize=(6, 4))
    axes = figure.add_subplot()
    for name, errors in curves.items():
        errors = np.asarray(errors, dtype=np.float64)
        axes.plot(np.arange(1, errors.size + 1), 100 * errors, label=f"{name} ({100 * errors[-1]:.2f}% at the end)")
    axes.set_xlabel("number of weak machines")
    axes.set_ylabel("error rate (%)")
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend()
    return finish_figure(figure, path)


def plot_margins(margins: Mapping[int | str, Sequence[float]], path: str | os.PathLike | None = None,
                 title: str | None = None):
    """Cumulative distributions of normalised margins, one curve per entry (the chapter's Figure 7.10, right).

    Each curve shows, at ``theta``, the fraction of samples whose margin is
    at most ``theta``; the curve's height at 0 is (up to samples on the
    decision boundary) the error rate. Curves that move right as rounds are
    added show boosting enlarging the margins.

    Parameters
    ----------
    margins : mapping of int or str to array_like
        E.g. :func:`margin_distribution`'s result; an int key is labelled
        "N rounds", any other key as it is (e.g. "training", "test").
    path : path, optional
        PNG file to write.
    title : str, optional
        Title of the axes.
    """
    if not margins:
        raise InvalidValueError("margins: give at least one distribution")
    curves = {}
    for key, values in margins.items():
        values = np.sort(np.asarray(values, dtype=np.float64).reshape(-1))
        if values.size == 0 or not np.all(np.isfinite(values)):
            raise InvalidValueError(f"margins: the distribution {key!r} is empty or not finite")
        curves[key] = values
    # [-1, 1] is the margins' range for bounded weak machines; wider only when some margin lies outside
    low = min(-1.0, min(values[0] for values in curves.values()))
    high = max(1.0, max(values[-1] for values in curves.values()))
    figure = new_figure(figsize=(6, 4))
    axes = figure.add_subplot()
    for key, values in curves.items():
        name = (f"{key} round{'s' if key != 1 else ''}" if isinstance(key, (int, np.integer)) else str(key))
        fraction = np.arange(1, values.size + 1) / values.size
        # a step at each margin (the empirical distribution function itself), from 0 at the left edge to 1
        # at the right edge
        axes.step(np.concatenate([[low], values, [high]]), np.concatenate([[0.0], fraction, [1.0]]),
                  where="post", label=f"{name}: min {values[0]:.2f}, {np.mean(values <= 0):.1%} <= 0")
    axes.axvline(0.0, color="grey", linestyle=":", linewidth=1)
    axes.set_xlim(low, high)
    axes.set_ylim(0, 1.02)
    axes.set_xlabel("normalised margin")
    axes.set_ylabel("cumulative fraction of samples")
    if title:
        axes.set_title(title)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="upper left")
    return finish_figure(figure, path)


def plot_confusion_matrix(truth, predicted, class_names: Sequence[str], path: str | os.PathLike | None = None):
    """Plot the row-normalised confusion matrix with the counts written in each cell.

    Parameters
    ----------
    truth, predicted : array_like of int
        Class indices in ``0 .. len(class_names)-1``.
    class_names : sequence of str
        Names of the classes, in index order.
    """
    k = len(class_names)
    counts = confusion_matrix(truth, predicted, k)
    rates = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
    figure = new_figure(figsize=(1.2 + 0.55 * k, 1.0 + 0.5 * k))
    axes = figure.add_subplot()
    image = axes.imshow(rates, cmap="Blues", vmin=0.0, vmax=1.0)
    for (i, j), count in np.ndenumerate(counts):
        axes.text(j, i, str(count), ha="center", va="center", fontsize=8,
                  color="white" if rates[i, j] > 0.5 else "black")
    axes.set_xticks(range(k), class_names)
    axes.set_yticks(range(k), class_names)
    axes.set_xlabel("predicted class")
    axes.set_ylabel("true class")
    axes.set_title(f"accuracy {np.trace(counts) / max(counts.sum(), 1):.2%}")
    figure.colorbar(image, ax=axes, label="fraction of the true class")
    return finish_figure(figure, path)


def plot_feature_map(machine: BoostedMachine, image_shape: tuple[int, int] | None = None,
                     path: str | os.PathLike | None = None):
    """Show :func:`feature_map` as a heat map (pixels never selected stay white).

    When the machine knows its feature names (:func:`feature_names`), the
    title names the feature of the largest summed ``|weight|``.
    """
    importance = feature_map(machine, image_shape)
    figure = new_figure(figsize=(4.8, 4))
    axes = figure.add_subplot()
    masked = np.ma.masked_equal(importance, 0.0)
    image = axes.imshow(masked, cmap="viridis", interpolation="nearest")
    title = f"{len(machine)} weak machines, {np.count_nonzero(importance)} pixels used"
    names = feature_names(machine)
    if names is not None and np.any(importance):
        title += f"\nstrongest: {names[int(np.argmax(importance))]}"
    axes.set_title(title)
    axes.set_xticks([])
    axes.set_yticks([])
    figure.colorbar(image, ax=axes, label="sum of |weights|")
    return finish_figure(figure, path)


def plot_feature_weights(machine: BoostedMachine, top: int = 20, path: str | os.PathLike | None = None):
    """Horizontal bars of the ``top`` features of largest :func:`feature_weights`, strongest at the top.

    Each bar is labelled with the feature's index and, when the machine
    knows them (:func:`feature_names`), its name: the view of non-image data
    that :func:`plot_feature_map` gives of images.

    Parameters
    ----------
    machine : BoostedMachine
        A trained machine with at least one round.
    top : int
        At most this many features (those never used are left out).
    path : path, optional
        PNG file to write.
    """
    top = check_positive_int(top, "top")
    weights = feature_weights(machine)
    used = np.flatnonzero(weights > 0)
    if used.size == 0:
        raise InvalidValueError("machine: no weak machine with a non-zero weight reads any feature")
    # strongest first; equal sums keep the lower index first (a stable sort of the negated sums)
    order = used[np.argsort(-weights[used], kind="stable")][:top]
    names = feature_names(machine)
    figure = new_figure(figsize=(6, 1.0 + 0.3 * order.size))
    axes = figure.add_subplot()
    positions = np.arange(order.size)[::-1]
    axes.barh(positions, weights[order], color="tab:blue")
    axes.set_yticks(positions, [feature_label(int(i), names) for i in order], fontsize=8)
    axes.set_xlabel("sum of |weights|")
    axes.set_title(f"{len(machine)} weak machines, {used.size} features used"
                   + (f" (top {order.size} shown)" if order.size < used.size else ""))
    axes.grid(axis="x", alpha=0.3)
    return finish_figure(figure, path)


def plot_cost_curves(fn_rates: Sequence[float], fp_rates: Sequence[float], names: Sequence[str] | None = None,
                     path: str | os.PathLike | None = None, points: int = 201):
    """Drummond-Holte cost curves: each classifier's line and the family's lower envelope.

    Parameters
    ----------
    fn_rates, fp_rates : sequence of float
        False-negative and false-positive rate of each classifier.
    names : sequence of str, optional
        Legend entries.
    points : int
        Number of PCF values at which the lines are evaluated.
    """
    from .evaluation import cost_lines, lower_envelope

    pcf = np.linspace(0.0, 1.0, points)
    lines = cost_lines(fn_rates, fp_rates, pcf)
    envelope, _ = lower_envelope(fn_rates, fp_rates, pcf, include_trivial=True)
    names = list(names) if names is not None else [f"classifier {i + 1}" for i in range(lines.shape[0])]
    if len(names) != lines.shape[0]:
        raise InvalidValueError(f"names: {len(names)} names for {lines.shape[0]} classifiers")
    figure = new_figure(figsize=(6, 4.5))
    axes = figure.add_subplot()
    for name, line in zip(names, lines):
        axes.plot(pcf, line, linewidth=1, alpha=0.7, label=name)
    axes.plot(pcf, np.minimum(pcf, 1 - pcf), color="grey", linestyle=":", label="trivial classifiers")
    axes.plot(pcf, envelope, color="black", linewidth=2.5, label="lower envelope")
    axes.set_xlabel("probability cost function PCF(+)")
    axes.set_ylabel("normalized expected cost")
    axes.set_xlim(0, 1)
    axes.set_ylim(0, max(0.5, float(lines.max()) * 1.05))
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    return finish_figure(figure, path)
