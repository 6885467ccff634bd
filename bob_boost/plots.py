"""Figures: error per round, confusion matrix, feature maps for image data, cost curves.

matplotlib is optional (``pip install bob_boost[plot]``); it is imported
only when a ``plot_*`` function runs. The functions that compute what is
drawn (:func:`errors_per_round`, :func:`feature_map`) need only numpy. Every
``plot_*`` function returns a :class:`matplotlib.figure.Figure` and writes
it as PNG when ``path`` is given; no pyplot state is touched.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np

from .evaluation import confusion_matrix
from .exceptions import InvalidValueError
from .machine import BoostedMachine


def _figure(**kwargs):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("plots need matplotlib: pip install bob_boost[plot]") from None
    return Figure(**kwargs)


def _finish(figure, path: str | os.PathLike | None):
    figure.tight_layout()
    if path is not None:
        figure.savefig(path, format="png", dpi=100)
    return figure


def errors_per_round(machine: BoostedMachine, features, class_indices) -> np.ndarray:
    """Error rate of the first 1, 2, ..., #rounds weak machines.

    Parameters
    ----------
    machine : BoostedMachine
        The trained machine.
    features : array_like
        (#samples, #features) data.
    class_indices : array_like of int
        True class of each sample: for univariate machines 1 for the
        positive class (score > 0) and 0 for the negative one; otherwise the
        index the machine's ``predict`` returns.

    Returns
    -------
    numpy.ndarray
        (#rounds,) error rates.
    """
    truth = np.asarray(class_indices)
    staged = machine.staged_decision_scores(features)  # validates the features before the first round
    n_samples = np.atleast_2d(np.asarray(features)).shape[0]
    if truth.shape != (n_samples,):
        raise InvalidValueError(f"class_indices: expected {n_samples} labels, got shape {truth.shape}")
    return np.array([np.mean(machine.class_indices_from_scores(scores) != truth) for scores in staged],
                    dtype=np.float64)


def plot_error_curves(curves: Mapping[str, Sequence[float]], path: str | os.PathLike | None = None):
    """Plot error rate against the number of rounds, one line per entry of ``curves`` (e.g. training, test)."""
    figure = _figure(figsize=(6, 4))
    axes = figure.add_subplot()
    for name, errors in curves.items():
        errors = np.asarray(errors, dtype=np.float64)
        axes.plot(np.arange(1, errors.size + 1), 100 * errors, label=f"{name} ({100 * errors[-1]:.2f}% at the end)")
    axes.set_xlabel("number of weak machines")
    axes.set_ylabel("error rate (%)")
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend()
    return _finish(figure, path)


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
    figure = _figure(figsize=(1.2 + 0.55 * k, 1.0 + 0.5 * k))
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
    return _finish(figure, path)


def feature_map(machine: BoostedMachine, image_shape: tuple[int, int] | None = None) -> np.ndarray:
    """Sum of ``|weight|`` of the weak machines that read each pixel, as an image.

    A weak machine whose outputs read one feature each (a multi-variate LUT)
    adds each output's ``|weight|`` to that output's feature; any other weak
    machine spreads the sum of its ``|weights|`` evenly over the features it
    reads.

    Parameters
    ----------
    machine : BoostedMachine
        A machine trained on flattened images.
    image_shape : (int, int), optional
        (height, width); default a square of ``machine.number_of_features``
        (or of the highest feature index used) pixels.
    """
    total = machine.number_of_features or int(machine.feature_indices().max(initial=-1)) + 1
    if image_shape is None:
        side = int(round(np.sqrt(total)))
        if side * side != total:
            raise InvalidValueError(f"image_shape: {total} features are not a square image; give the shape")
        image_shape = (side, side)
    height, width = (int(v) for v in image_shape)
    if height * width < total:
        raise InvalidValueError(f"image_shape: {height}x{width} pixels are fewer than the {total} features")
    importance = np.zeros(height * width)
    for weak, weight in zip(machine.weak_machines, machine.weights):
        per_output = getattr(weak, "indices", None)
        if per_output is not None and np.ndim(per_output) == 1 and len(per_output) == weight.size:
            np.add.at(importance, np.asarray(per_output), np.abs(weight))
        else:
            used = weak.feature_indices()
            importance[used] += np.abs(weight).sum() / max(used.size, 1)
    return importance.reshape(height, width)


def plot_feature_map(machine: BoostedMachine, image_shape: tuple[int, int] | None = None,
                     path: str | os.PathLike | None = None):
    """Show :func:`feature_map` as a heat map (pixels never selected stay white)."""
    importance = feature_map(machine, image_shape)
    figure = _figure(figsize=(4.8, 4))
    axes = figure.add_subplot()
    masked = np.ma.masked_equal(importance, 0.0)
    image = axes.imshow(masked, cmap="viridis", interpolation="nearest")
    axes.set_title(f"{len(machine)} weak machines, {np.count_nonzero(importance)} pixels used")
    axes.set_xticks([])
    axes.set_yticks([])
    figure.colorbar(image, ax=axes, label="sum of |weights|")
    return _finish(figure, path)


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
    figure = _figure(figsize=(6, 4.5))
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
    return _finish(figure, path)
