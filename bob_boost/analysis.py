"""What the figures draw, computed with numpy alone: error per round, margin distributions, feature names and weights.

:mod:`bob_boost.plots` draws these (and re-exports them under their old
names); the command line's ``inspect`` reads the feature names from here
without importing any plotting code.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._validation import check_integer_vector, check_positive_int
from .exceptions import InvalidValueError
from .machine import BoostedMachine

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
        index the machine's ``predict`` returns; for a multi-label machine
        the (#samples, #labels) 0 / 1 indicator.

    Returns
    -------
    numpy.ndarray
        (#rounds,) error rates (multi-label: the share of samples with some
        label wrong).
    """
    truth = np.asarray(class_indices)
    staged = machine.staged_decision_scores(features)  # validates the features before the first round
    n_samples = np.atleast_2d(np.asarray(features)).shape[0]
    multilabel = machine.decision_rule == "multilabel"
    expected = (n_samples, machine.number_of_outputs) if multilabel else (n_samples,)
    if truth.shape != expected:
        raise InvalidValueError(f"class_indices: expected shape {expected}, got {truth.shape}")
    wrong = (lambda scores: np.any(machine.class_indices_from_scores(scores) != truth, axis=1)) if multilabel \
        else (lambda scores: machine.class_indices_from_scores(scores) != truth)
    return np.array([np.mean(wrong(scores)) for scores in staged], dtype=np.float64)


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
    if not machine.is_classifier or machine.decision_rule == "multilabel":
        raise InvalidValueError(f"machine: margins need a classifier of one class per sample, the decision rule is "
                                f"{machine.decision_rule!r}")
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
