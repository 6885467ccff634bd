"""Figures: error per round, margin distributions, confusion matrix, feature maps and weights, cost curves.

matplotlib is optional (``pip install bob_boost[plot]``); it is imported
only when a ``plot_*`` function runs. The functions that compute what is
drawn (:func:`errors_per_round`, :func:`margin_distribution`,
:func:`feature_weights`, :func:`feature_map`, :func:`feature_names`) need
only numpy. Every ``plot_*`` function returns a
:class:`matplotlib.figure.Figure` and writes it as PNG when ``path`` is
given; no pyplot state is touched.
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

import numpy as np

from .evaluation import confusion_matrix
from ._validation import check_integer_vector, check_positive_int
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


def default_margin_rounds(number_of_rounds: int, count: int = 4) -> list[int]:
    """Rounds at which :func:`margin_distribution` looks by default: log-spaced, the last included.

    Log spacing because margins change fastest in the first rounds (the
    chapter's figure shows 5, 100 and 1000 rounds); for 100 rounds this
    gives 1, 5, 22 and 100.

    Parameters
    ----------
    number_of_rounds : int
        The machine's number of rounds (>= 1).
    count : int
        At most this many rounds (fewer when rounds coincide).
    """
    number_of_rounds = check_positive_int(number_of_rounds, "number_of_rounds")
    count = check_positive_int(count, "count")
    spread = np.geomspace(1, number_of_rounds, num=min(count, number_of_rounds))
    return sorted({int(r) for r in np.rint(spread)} | {number_of_rounds})


def _check_rounds(rounds, number_of_rounds: int) -> list[int]:
    """``rounds`` (an int or a sequence of ints in 1 .. number_of_rounds) as a sorted list without repeats."""
    values = [rounds] if isinstance(rounds, (int, np.integer)) else list(rounds)
    if not values:
        raise InvalidValueError("rounds: give at least one round")
    for value in values:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise InvalidValueError(f"rounds: expected integers, got {value!r}")
        if not 1 <= value <= number_of_rounds:
            raise InvalidValueError(f"rounds: must be in 1 .. {number_of_rounds} (the machine's number of rounds), "
                                    f"got {value}")
    return sorted({int(value) for value in values})


def margin_distribution(machine: BoostedMachine, features, class_indices,
                        rounds: int | Sequence[int] | None = None) -> dict[int, np.ndarray]:
    """Normalised margins of every sample after the chosen rounds (Schapire et al., 1998).

    A univariate (``"sign"``) machine ``S(x) = b + sum_t w_t W_t(x)`` gives
    the sample ``(x, y)``, ``y = +1`` for class index 1 and ``-1`` for 0, the
    margin ``y S(x) / (|b| + sum_t |w_t|)``: the chapter's
    ``y H(x) / sum_t alpha_t``, the baseline counted as one more weak machine
    (it is 0 for AdaBoost). A multi-output machine gives the multi-class
    margin ``(S_y(x) - max_{k != y} S_k(x)) / (2 (max_k |b_k| + sum_t max_k |w_tk|))``:
    the score of the true class minus the best other one.

    Both lie in [-1, 1] whenever every weak machine's outputs do (stumps,
    look-up tables, the multi-class weak machines' margin vectors); the
    factor 2 makes a two-output machine with ``S_1 = -S_0`` have its
    univariate margin. Weak machines with larger outputs (gradient trees'
    leaves) can give margins beyond [-1, 1]. The margin is negative where
    the prediction (sign, or largest score) is wrong and positive where it is
    right; a margin of exactly 0 lies on the decision boundary (where the
    decision rule breaks the tie). A cost-sensitive machine's margins are
    those of its scores, not of its minimum-cost decisions.

    Parameters
    ----------
    machine : BoostedMachine
        A trained classifier (decision rule ``"sign"``, ``"argmax"`` or
        ``"cost_sensitive"``) with at least one round.
    features : array_like
        (#samples, #features) data.
    class_indices : array_like of int
        True class of each sample: for univariate machines 1 for the
        positive class (score > 0) and 0 for the negative one; otherwise the
        class index ``0 .. #outputs-1``.
    rounds : int or sequence of int, optional
        Numbers of rounds in ``1 .. len(machine)`` after which the margins
        are taken; default :func:`default_margin_rounds` (a few log-spaced
        rounds and the last).

    Returns
    -------
    dict of int to numpy.ndarray
        For each chosen round, in increasing order, the (#samples,) margins
        in the order of the samples.

    Raises
    ------
    ValueError
        For a regression or empty machine, rounds outside ``1 .. len(machine)``,
        or class indices of the wrong number or range.
    """
    if not machine.is_classifier:
        raise InvalidValueError(f"machine: margins need a classifier, the decision rule is {machine.decision_rule!r}")
    if len(machine) == 0:
        raise InvalidValueError("machine: has no rounds, so no margins")
    chosen = default_margin_rounds(len(machine)) if rounds is None else _check_rounds(rounds, len(machine))
    staged = machine.staged_decision_scores(features)  # validates the features before any round is evaluated
    truth = np.asarray(class_indices)
    n_samples = np.atleast_2d(np.asarray(features)).shape[0]
    if truth.shape != (n_samples,):
        raise InvalidValueError(f"class_indices: expected {n_samples} labels, got shape {truth.shape}")
    univariate = machine.decision_rule == "sign"
    n_classes = 2 if univariate else machine.number_of_outputs
    if n_classes < 2:
        raise InvalidValueError("machine: a one-output machine under the 'argmax' rule has no other class to "
                                "measure a margin against")
    truth = check_integer_vector(truth, "class_indices", "class indices")
    if truth.size and (truth.min() < 0 or truth.max() >= n_classes):
        raise InvalidValueError(f"class_indices: must be in 0 .. {n_classes - 1}, got values in "
                                f"{truth.min()} .. {truth.max()}")
    weights, baseline = np.abs(machine.weights), np.abs(machine.baseline)
    if univariate:
        sizes = baseline[0] + np.cumsum(weights[:, 0])
    else:
        # |S_y - S_k| <= |b_y - b_k| + sum_t (|w_ty| + |w_tk|) for outputs in [-1, 1]
        sizes = 2.0 * (baseline.max() + np.cumsum(weights.max(axis=1)))
    signs = np.where(truth == 1, 1.0, -1.0)
    rows = np.arange(n_samples)
    result: dict[int, np.ndarray] = {}
    for number, scores in enumerate(staged, start=1):
        if number not in chosen:
            continue
        if univariate:
            raw = signs * scores[:, 0]
        else:
            true_scores = scores[rows, truth]
            others = scores.copy()
            others[rows, truth] = -np.inf
            raw = true_scores - others.max(axis=1)
        size = sizes[number - 1]
        # bob's converged zero-weight rounds leave an empty machine scoring 0: every margin is 0
        result[number] = raw / size if size > 0 else np.zeros(n_samples)
        if number == chosen[-1]:
            break  # the later rounds are not needed
    return result


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
    figure = _figure(figsize=(6, 4))
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


def feature_names(machine: BoostedMachine) -> list[str] | None:
    """The names of the machine's input features, when its metadata holds them; else None.

    ``bob-boost train`` writes them as ``metadata["feature_names"]`` from a
    header line; the scikit-learn estimators' ``"feature_names_in"`` (their
    ``feature_names_in_``) is read too. Names that do not fit the machine (not
    a list of strings, or another count than ``machine.number_of_features``)
    are ignored: they only label output, so a model with odd metadata is still
    shown, by feature index. So are names that only repeat each column's
    index (``"0", "1", ...``, the header of a table whose columns are numbered),
    which would add nothing to the index they are shown beside.
    """
    for key in ("feature_names", "feature_names_in"):
        names = machine.metadata.get(key)
        if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
            continue
        used = machine.feature_indices()
        too_few = used.size and used[-1] >= len(names)
        if too_few or machine.number_of_features not in (None, len(names)):
            continue
        if names == [str(i) for i in range(len(names))]:
            return None
        return list(names)
    return None


def feature_label(index: int, names: Sequence[str] | None) -> str:
    """``"3 (px_3)"`` for feature 3 when ``names`` are known, else ``"3"``."""
    return f"{index} ({names[index]})" if names is not None else str(index)


def feature_weights(machine: BoostedMachine) -> np.ndarray:
    """Sum of ``|weight|`` of the weak machines that read each feature.

    A weak machine whose outputs read one feature each (a multi-variate LUT)
    adds each output's ``|weight|`` to that output's feature; any other weak
    machine spreads the sum of its ``|weights|`` evenly over the features it
    reads. (This is how much of the machine's scale each feature carries, not
    the loss decrease each feature brought.)

    Returns
    -------
    numpy.ndarray
        (#features,) sums: ``machine.number_of_features`` entries, or up to
        the highest feature index used when the width is not recorded.
    """
    total = machine.number_of_features or int(machine.feature_indices().max(initial=-1)) + 1
    importance = np.zeros(total)
    for weak, weight in zip(machine.weak_machines, machine.weights):
        per_output = getattr(weak, "indices", None)
        if per_output is not None and np.ndim(per_output) == 1 and len(per_output) == weight.size:
            np.add.at(importance, np.asarray(per_output), np.abs(weight))
        else:
            used = weak.feature_indices()
            importance[used] += np.abs(weight).sum() / max(used.size, 1)
    return importance


def feature_map(machine: BoostedMachine, image_shape: tuple[int, int] | None = None) -> np.ndarray:
    """:func:`feature_weights` as an image: the sum of ``|weight|`` of the weak machines that read each pixel.

    Parameters
    ----------
    machine : BoostedMachine
        A machine trained on flattened images.
    image_shape : (int, int), optional
        (height, width); default a square of ``machine.number_of_features``
        (or of the highest feature index used) pixels.
    """
    weights = feature_weights(machine)
    total = weights.size
    if image_shape is None:
        side = int(round(np.sqrt(total)))
        if side * side != total:
            raise InvalidValueError(f"image_shape: {total} features are not a square image; give the shape")
        image_shape = (side, side)
    height, width = (int(v) for v in image_shape)
    if height * width < total:
        raise InvalidValueError(f"image_shape: {height}x{width} pixels are fewer than the {total} features")
    importance = np.zeros(height * width)
    importance[:total] = weights
    return importance.reshape(height, width)


def plot_feature_map(machine: BoostedMachine, image_shape: tuple[int, int] | None = None,
                     path: str | os.PathLike | None = None):
    """Show :func:`feature_map` as a heat map (pixels never selected stay white).

    When the machine knows its feature names (:func:`feature_names`), the
    title names the feature of the largest summed ``|weight|``.
    """
    importance = feature_map(machine, image_shape)
    figure = _figure(figsize=(4.8, 4))
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
    return _finish(figure, path)


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
    figure = _figure(figsize=(6, 1.0 + 0.3 * order.size))
    axes = figure.add_subplot()
    positions = np.arange(order.size)[::-1]
    axes.barh(positions, weights[order], color="tab:blue")
    axes.set_yticks(positions, [feature_label(int(i), names) for i in order], fontsize=8)
    axes.set_xlabel("sum of |weights|")
    axes.set_title(f"{len(machine)} weak machines, {used.size} features used"
                   + (f" (top {order.size} shown)" if order.size < used.size else ""))
    axes.grid(axis="x", alpha=0.3)
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
