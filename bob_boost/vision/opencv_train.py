"""Training Haar cascades in OpenCV's own feature values, so that OpenCV 4 runs them as bob_boost does.

The features are those ``opencv_traincascade`` enumerates (:func:`haar_features`, modes BASIC, CORE and ALL),
and every value is computed as OpenCV's CPU detector computes it at a window (float32 weighted rectangle sums
times the float32 reciprocal of the interior's spread, :func:`~bob_boost.vision._opencv_kernels.haar_window_values`);
windows the detector rejects as flat are never samples. Each stage boosts stumps by Gentle AdaBoost, as
``opencv_traincascade -bt GAB`` does (leaves the weighted means of the +-1 labels, weights times
``exp(-y f)``, the lightest 5% of the weight trimmed from each fit), its threshold is the positive score at
OpenCV's index ``int((1 - minHitRate) numPos)``, and it stops adding stumps at a false-alarm rate of at most
``max_false_alarm_rate`` (or ``max_weak_count`` stumps). A split's threshold lies strictly between the values
it separates and is compared as the detector compares it (``value < threshold`` goes left), the leaves are
float32, the stage scores their double sums in order, and a window passes a stage at a score of at least
``float32(threshold - 1e-5)``: the training's decisions are the detector's, window for window. The next stage
trains on the negatives (from the pool given) and positives that every stage so far accepts.

Differences from ``opencv_traincascade``: each stage searches a random sample of ``features_per_stage``
features (OpenCV searches all of them, 162,336 for a 24 x 24 BASIC window, through a value cache), drawn from
``random_state``; negatives come from an array of windows rather than its background-image reader.
"""
from __future__ import annotations

import logging
import numbers

import numpy as np

from .._validation import check_positive_int, check_scalar
from ..exceptions import InvalidValueError
from ._opencv_kernels import haar_window_values, integrals
from .opencv import THRESHOLD_EPS
from .opencv_xml import OpenCVCascade

__all__ = ["haar_features", "haar_values", "train_opencv_cascade", "window_decisions"]

logger = logging.getLogger(__name__)

#: ``opencv_traincascade``'s feature sets.
MODES = ("BASIC", "CORE", "ALL")

# (kind, modes, fits(x, y, dx, dy, W, H), rectangles as (x, y, w, h, weight) of x, y, dx, dy, tilted), in the
# order opencv_traincascade tries the kinds at each (x, y, dx, dy)
_KINDS = (
    ("x2", MODES, lambda x, y, dx, dy, W, H: (x + 2 * dx <= W) & (y + dy <= H),
     lambda x, y, dx, dy: [(x, y, 2 * dx, dy, -1), (x + dx, y, dx, dy, 2)], False),
    ("y2", MODES, lambda x, y, dx, dy, W, H: (x + dx <= W) & (y + 2 * dy <= H),
     lambda x, y, dx, dy: [(x, y, dx, 2 * dy, -1), (x, y + dy, dx, dy, 2)], False),
    ("x3", MODES, lambda x, y, dx, dy, W, H: (x + 3 * dx <= W) & (y + dy <= H),
     lambda x, y, dx, dy: [(x, y, 3 * dx, dy, -1), (x + dx, y, dx, dy, 2)], False),
    ("y3", MODES, lambda x, y, dx, dy, W, H: (x + dx <= W) & (y + 3 * dy <= H),
     lambda x, y, dx, dy: [(x, y, dx, 3 * dy, -1), (x, y + dy, dx, dy, 2)], False),
    ("x4", ("CORE", "ALL"), lambda x, y, dx, dy, W, H: (x + 4 * dx <= W) & (y + dy <= H),
     lambda x, y, dx, dy: [(x, y, 4 * dx, dy, -1), (x + dx, y, 2 * dx, dy, 2)], False),
    ("y4", ("CORE", "ALL"), lambda x, y, dx, dy, W, H: (x + dx <= W) & (y + 4 * dy <= H),
     lambda x, y, dx, dy: [(x, y, dx, 4 * dy, -1), (x, y + dy, dx, 2 * dy, 2)], False),
    ("x2y2", MODES, lambda x, y, dx, dy, W, H: (x + 2 * dx <= W) & (y + 2 * dy <= H),
     lambda x, y, dx, dy: [(x, y, 2 * dx, 2 * dy, -1), (x, y, dx, dy, 2), (x + dx, y + dy, dx, dy, 2)], False),
    ("point", ("CORE", "ALL"), lambda x, y, dx, dy, W, H: (x + 3 * dx <= W) & (y + 3 * dy <= H),
     lambda x, y, dx, dy: [(x, y, 3 * dx, 3 * dy, -1), (x + dx, y + dy, dx, dy, 9)], False),
    ("tilted_x2", ("ALL",), lambda x, y, dx, dy, W, H: (x + 2 * dx <= W) & (y + 2 * dx + dy <= H) & (x - dy >= 0),
     lambda x, y, dx, dy: [(x, y, 2 * dx, dy, -1), (x, y, dx, dy, 2)], True),
    ("tilted_y2", ("ALL",), lambda x, y, dx, dy, W, H: (x + dx <= W) & (y + dx + 2 * dy <= H) & (x - 2 * dy >= 0),
     lambda x, y, dx, dy: [(x, y, dx, 2 * dy, -1), (x, y, dx, dy, 2)], True),
    ("tilted_x3", ("ALL",), lambda x, y, dx, dy, W, H: (x + 3 * dx <= W) & (y + 3 * dx + dy <= H) & (x - dy >= 0),
     lambda x, y, dx, dy: [(x, y, 3 * dx, dy, -1), (x + dx, y + dx, dx, dy, 3)], True),
    ("tilted_y3", ("ALL",), lambda x, y, dx, dy, W, H: (x + dx <= W) & (y + dx + 3 * dy <= H) & (x - 3 * dy >= 0),
     lambda x, y, dx, dy: [(x, y, dx, 3 * dy, -1), (x - dy, y + dy, dx, dy, 3)], True),
    ("tilted_x4", ("ALL",), lambda x, y, dx, dy, W, H: (x + 4 * dx <= W) & (y + 4 * dx + dy <= H) & (x - dy >= 0),
     lambda x, y, dx, dy: [(x, y, 4 * dx, dy, -1), (x + dx, y + dx, 2 * dx, dy, 2)], True),
    ("tilted_y4", ("ALL",), lambda x, y, dx, dy, W, H: (x + dx <= W) & (y + dx + 4 * dy <= H) & (x - 4 * dy >= 0),
     lambda x, y, dx, dy: [(x, y, dx, 4 * dy, -1), (x - dy, y + dy, dx, 2 * dy, 2)], True),
)


def haar_features(width: int, height: int, mode: str = "BASIC") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The Haar features ``opencv_traincascade`` enumerates for a ``width`` x ``height`` window, in its order.

    Every ``(x, y, dx, dy)`` (``x`` slowest, then ``y``, ``dx`` from 1, ``dy`` from 1) takes the kinds that fit in
    the order two-rectangle horizontal and vertical, three-rectangle horizontal and vertical, (CORE, ALL:
    four-wide horizontal and vertical), the 2 x 2 checker, (CORE, ALL: the centre of a 3 x 3 block, weight 9) and
    (ALL: the six 45-degree kinds); the outer rectangle weighs -1 (a 24 x 24 window has 162,336 BASIC, 210,400
    CORE and 261,600 ALL features).

    Returns
    -------
    tuple of numpy.ndarray
        ``rects`` (#features, 3, 4) int32 ``x, y, w, h`` (an unused third rectangle all zero), ``weights``
        (#features, 3) float64 and ``tilted`` (#features,) bool, as :class:`~bob_boost.vision.opencv_xml.
        OpenCVCascade` holds them.
    """
    if mode not in MODES:
        raise InvalidValueError(f"mode: must be one of {MODES}, got {mode!r}")
    width, height = check_positive_int(width, "width"), check_positive_int(height, "height")
    x, y, dx, dy = (grid.ravel() for grid in np.meshgrid(np.arange(width), np.arange(height),
                                                          np.arange(1, width + 1), np.arange(1, height + 1),
                                                          indexing="ij"))
    keys, rects, weights, tilted = [], [], [], []
    kinds = [kind for kind in _KINDS if mode in kind[1]]
    for order, (_, _, fits, rectangles, is_tilted) in enumerate(kinds):
        keep = fits(x, y, dx, dy, width, height)
        parts = rectangles(x[keep], y[keep], dx[keep], dy[keep])
        block = np.zeros((int(keep.sum()), 3, 4), np.int32)
        weight = np.zeros((block.shape[0], 3))
        for r, (rx, ry, rw, rh, w) in enumerate(parts):
            block[:, r] = np.column_stack([rx, ry, rw, rh])
            weight[:, r] = w
        keys.append(np.flatnonzero(keep) * len(kinds) + order)
        rects.append(block)
        weights.append(weight)
        tilted.append(np.full(block.shape[0], is_tilted))
    order = np.argsort(np.concatenate(keys), kind="stable")
    return np.concatenate(rects)[order], np.concatenate(weights)[order], np.concatenate(tilted)[order]


def _window_integrals(windows: np.ndarray, tilted_too: bool) -> tuple[np.ndarray, ...]:
    """Every window's flattened (h+1, w+1) int32 integral images (sums, squares, tilted sums)."""
    n, h, w = windows.shape
    totals = np.zeros((n, h + 1, w + 1), np.int32)
    squares = np.zeros_like(totals)
    tilteds = np.zeros_like(totals) if tilted_too else np.zeros((n, 1, 1), np.int32)
    for index in range(n):
        integrals(windows[index], tilted_too, totals[index], squares[index], tilteds[index])
    return totals.reshape(n, -1), squares.reshape(n, -1), tilteds.reshape(n, -1)


def _feature_arrays(rects: np.ndarray, weights: np.ndarray, tilted: np.ndarray, stride: int) -> tuple:
    """Corner offsets (12 per feature), float32 weights, rectangle counts and tilts, as the scan reads them."""
    x, y, w, h = (rects[:, :, k].astype(np.int64) for k in range(4))
    upright_rows, upright_columns = np.stack([y, y, y + h, y + h], -1), np.stack([x, x + w, x, x + w], -1)
    rotated_rows, rotated_columns = np.stack([y, y + h, y + w, y + w + h], -1), np.stack([x, x - h, x + w, x + w - h],
                                                                                        -1)
    rows = np.where(tilted[:, None, None], rotated_rows, upright_rows)
    columns = np.where(tilted[:, None, None], rotated_columns, upright_columns)
    unused = weights == 0
    rows[unused], columns[unused] = 0, 0
    corners = (rows * stride + columns).reshape(-1)
    return (corners, weights.astype(np.float32).ravel(), np.where(weights[:, 2] != 0, 3, 2).astype(np.int8),
            np.ascontiguousarray(tilted, dtype=bool))


def haar_values(windows: np.ndarray, rects: np.ndarray, weights: np.ndarray,
                tilted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The features' values at every window, as OpenCV's CPU detector computes them.

    Parameters
    ----------
    windows : numpy.ndarray
        (#windows, h, w) uint8 grey windows of the cascade's size.
    rects, weights, tilted : numpy.ndarray
        Features as :func:`haar_features` gives them.

    Returns
    -------
    tuple of numpy.ndarray
        ``values`` (#features, #windows) float32 and ``factors`` (#windows,) float32, the windows'
        normalisations: 0 for a window the detector rejects as flat (its values are 0).
    """
    n, h, w = windows.shape
    totals, squares, tilteds = _window_integrals(np.ascontiguousarray(windows, dtype=np.uint8), bool(tilted.any()))
    stride = w + 1
    norm = np.array([stride + 1, stride + w - 1, (h - 1) * stride + 1, (h - 1) * stride + w - 1], np.int64)
    values = np.empty((rects.shape[0], n), np.float32)
    factors = np.empty(n, np.float32)
    haar_window_values(totals, squares, tilteds, norm, float((w - 2) * (h - 2)),
                       *_feature_arrays(rects, weights, tilted, stride), factors, values)
    return values, factors


def _split_thresholds(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """float32 thresholds ``t`` with ``low < t <= high`` (the midpoint, or ``high`` where the midpoint rounds to
    ``low``): ``value < t`` then sends ``low`` left and ``high`` right."""
    middle = ((low.astype(np.float64) + high) / 2).astype(np.float32)
    return np.where((middle > low) & (middle <= high), middle, high)


def _stage_scores(values: np.ndarray, stumps: list[tuple]) -> np.ndarray:
    """Each window's stage score: the float32 leaves of the stumps, summed in double in order, as the detector
    sums them (``values``: (#windows, #stumps) float32, each stump's own feature's column)."""
    score = np.zeros(values.shape[0])
    for column, (_, threshold, left, right) in enumerate(stumps):
        score += np.where(values[:, column] < threshold, np.float64(left), np.float64(right))
    return score


def _passes(score: np.ndarray, threshold: np.float32) -> np.ndarray:
    """The detector's stage decision: a score of at least the loaded threshold ``float32(t - 1e-5)``."""
    return ~(score < np.float64(np.float32(threshold - THRESHOLD_EPS)))


def _sorted_features(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's window order by value (int32) and its sorted values: the stage's stumps reuse them."""
    order = np.argsort(values, axis=1, kind="stable").astype(np.int32)
    return order, np.take_along_axis(values, order, axis=1)


def _best_stump(order: np.ndarray, ordered: np.ndarray, labels: np.ndarray, weights: np.ndarray,
                chunk: int) -> tuple | None:
    """Gentle AdaBoost's stump: the feature and split of largest ``S_L^2 / W_L + S_R^2 / W_R`` (``S`` the weighted
    label sums, ``W`` the weights, over the rows of positive weight), between two distinct values; ``order`` and
    ``ordered`` are :func:`_sorted_features`'.

    Returns ``(feature row, threshold, left leaf, right leaf)`` (leaves as doubles), or None without a split."""
    best = (-np.inf, None)
    signed = weights * labels
    total_w, total_s = weights.sum(), signed.sum()
    for start in range(0, order.shape[0], chunk):
        rows, sorted_values = order[start:start + chunk], ordered[start:start + chunk]
        left_w = np.cumsum(weights[rows], axis=1)[:, :-1]
        left_s = np.cumsum(signed[rows], axis=1)[:, :-1]
        right_w, right_s = total_w - left_w, total_s - left_s
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where(left_w > 0, left_s ** 2 / left_w, 0.0) + np.where(right_w > 0, right_s ** 2 / right_w, 0.0)
        gain[sorted_values[:, 1:] <= sorted_values[:, :-1]] = -np.inf  # no split between equal values
        row, position = np.unravel_index(int(np.argmax(gain)), gain.shape)
        if gain[row, position] > best[0]:
            low, high = sorted_values[row, position], sorted_values[row, position + 1]
            leaves = (left_s[row, position] / left_w[row, position] if left_w[row, position] > 0 else 0.0,
                      right_s[row, position] / right_w[row, position] if right_w[row, position] > 0 else 0.0)
            best = (gain[row, position], (start + row, _split_thresholds(np.array([low]), np.array([high]))[0],
                                          *leaves))
    return best[1]


def _trimmed(weights: np.ndarray, trim_rate: float) -> np.ndarray:
    """The rows the next stump fits: all but the lightest, whose summed weight first reaches ``1 - trim_rate`` of
    the total (OpenCV's weight trimming; ties with the first kept weight are kept)."""
    ordered = np.sort(weights)
    dropped = int(np.searchsorted(np.cumsum(ordered), (1.0 - trim_rate) * weights.sum(), side="left")) + 1
    if dropped >= weights.size:
        return np.ones(weights.size, bool)
    return weights >= ordered[dropped]


def _check_windows(windows, name: str, size: tuple[int, int] | None) -> np.ndarray:
    array = np.asarray(windows)
    if array.ndim != 3 or array.shape[0] == 0 or array.dtype.kind not in "ub" and array.dtype != np.uint8:
        raise InvalidValueError(f"{name}: expected a non-empty (#windows, height, width) uint8 array, got "
                                f"{array.dtype} of shape {array.shape}")
    if size is not None and array.shape[1:] != size:
        raise InvalidValueError(f"{name}: windows are {array.shape[2]}x{array.shape[1]} but the positives are "
                                f"{size[1]}x{size[0]}")
    if array.shape[1] < 3 or array.shape[2] < 3:
        raise InvalidValueError(f"{name}: windows must be at least 3 x 3 (OpenCV normalises by their interior)")
    return np.ascontiguousarray(array, dtype=np.uint8)


def _cascade_decisions(windows: np.ndarray, features: tuple, stages: list[tuple]) -> np.ndarray:
    """Whether every stage so far accepts each window (flat windows never pass), as the detector decides."""
    accepted = np.ones(windows.shape[0], bool)
    if not stages:
        return accepted
    rects, weights, tilted = features
    used = sorted({stump[0] for _, stumps in stages for stump in stumps})
    values, factors = haar_values(windows, rects[used], weights[used], tilted[used])
    column = {feature: row for row, feature in enumerate(used)}
    accepted &= factors != 0
    for threshold, stumps in stages:
        own = values[[column[stump[0]] for stump in stumps]].T
        accepted &= _passes(_stage_scores(own, stumps), threshold)
    return accepted


def train_opencv_cascade(positives, negatives, number_of_stages: int = 20, min_hit_rate: float = 0.995,
                         max_false_alarm_rate: float = 0.5, max_weak_count: int = 100, mode: str = "BASIC",
                         num_pos: int | None = None, num_neg: int | None = None, features_per_stage: int = 8000,
                         weight_trim_rate: float = 0.95, random_state=0) -> OpenCVCascade:
    """Train a Haar cascade of stumps stage by stage (see the module's description).

    Parameters
    ----------
    positives : array_like
        (#positives, h, w) uint8 object windows; the window is ``w`` x ``h``.
    negatives : array_like
        (#negatives, h, w) uint8 background windows, a pool read in order: every stage takes the first
        ``num_neg`` that the stages so far accept.
    number_of_stages : int
        The most stages (``-numStages``); training ends earlier when too few negatives pass.
    min_hit_rate, max_false_alarm_rate : float
        Each stage's least share of positives kept and most share of negatives passed (``-minHitRate``,
        ``-maxFalseAlarmRate``), in (0, 1].
    max_weak_count : int
        The most stumps a stage (``-maxWeakCount``).
    mode : {"BASIC", "CORE", "ALL"}
        The Haar feature set (``-mode``).
    num_pos, num_neg : int, optional
        Positives and negatives per stage (``-numPos``, ``-numNeg``); default all positives and as many
        negatives as positives.
    features_per_stage : int
        Features drawn (without replacement) for each stage's search.
    weight_trim_rate : float
        In (0, 1]: the share of the weight the stumps are fitted to (``-weightTrimRate``).
    random_state : int
        Seed of the feature draws.

    Returns
    -------
    OpenCVCascade
        The cascade, for :func:`~bob_boost.vision.opencv_write.write_opencv_cascade` and
        :class:`~bob_boost.vision.opencv.CascadeClassifier`.

    Raises
    ------
    ValueError
        For windows of the wrong shape or type, rates outside (0, 1] and counts below 1, naming the argument.
    """
    positives = _check_windows(positives, "positives", None)
    negatives = _check_windows(negatives, "negatives", positives.shape[1:])
    rates = {name: float(check_scalar(value, name, numbers.Real, min_val=0, max_val=1, include_boundaries="right"))
             for name, value in (("min_hit_rate", min_hit_rate), ("max_false_alarm_rate", max_false_alarm_rate),
                                 ("weight_trim_rate", weight_trim_rate))}
    stages_wanted = check_positive_int(number_of_stages, "number_of_stages")
    weak_count = check_positive_int(max_weak_count, "max_weak_count")
    pos_count = positives.shape[0] if num_pos is None else check_positive_int(num_pos, "num_pos")
    neg_count = pos_count if num_neg is None else check_positive_int(num_neg, "num_neg")
    draws = check_positive_int(features_per_stage, "features_per_stage")
    height, width = positives.shape[1:]
    features = haar_features(width, height, mode)
    rng = np.random.default_rng(random_state)
    stages: list[tuple] = []
    for stage in range(stages_wanted):
        kept_pos = positives[_cascade_decisions(positives, features, stages)][:pos_count]
        passing = np.flatnonzero(_cascade_decisions(negatives, features, stages))
        kept_neg = negatives[passing[:neg_count]]
        if kept_pos.shape[0] == 0 or kept_neg.shape[0] == 0:
            logger.info("stage %d: %d positives and %d negatives pass; stopping", stage, kept_pos.shape[0],
                        kept_neg.shape[0])
            break
        chosen = np.sort(rng.choice(features[0].shape[0], min(draws, features[0].shape[0]), replace=False))
        windows = np.concatenate([kept_pos, kept_neg])
        values, factors = haar_values(windows, *(part[chosen] for part in features))
        usable = factors != 0  # the detector rejects flat windows before any stage
        labels = np.where(np.arange(windows.shape[0]) < kept_pos.shape[0], 1.0, -1.0)[usable]
        values = values[:, usable]
        stage_stumps, threshold = _train_stage(values, labels, chosen, rates, weak_count)
        stages.append((threshold, stage_stumps))
        logger.info("stage %d: %d stumps on %d positives and %d negatives (%d features searched)", stage,
                    len(stage_stumps), int(np.sum(labels > 0)), int(np.sum(labels < 0)), chosen.size)
    return _cascade(features, stages, width, height)


def _train_stage(values: np.ndarray, labels: np.ndarray, chosen: np.ndarray, rates: dict,
                 weak_count: int) -> tuple[list[tuple], np.float32]:
    """One stage's stumps ``(feature, threshold, left, right)`` (global feature index, float32 values) and its
    float32 threshold: Gentle AdaBoost until the false-alarm rate is at most the most allowed."""
    weights = np.full(labels.size, 1.0 / labels.size)
    active = np.ones(labels.size, bool)
    positive = labels > 0
    count = int(np.float32(np.float32(1.0) - np.float32(rates["min_hit_rate"])) * np.float32(positive.sum()))
    stumps, score, threshold = [], np.zeros(labels.size), np.float32(0.0)
    order, ordered = _sorted_features(values)
    for _ in range(weak_count):
        found = _best_stump(order, ordered, labels, np.where(active, weights, 0.0),
                            chunk=max(1, 4_000_000 // labels.size))
        if found is None:
            break
        row, split, left, right = found
        goes_left = values[row] < split
        weights = weights * np.exp(-labels * np.where(goes_left, left, right))
        weights /= weights.sum()
        active = _trimmed(weights, rates["weight_trim_rate"])
        stump = (int(chosen[row]), np.float32(split), np.float32(left), np.float32(right))
        stumps.append(stump)
        score += np.where(goes_left, np.float64(stump[2]), np.float64(stump[3]))
        threshold = np.sort(score[positive].astype(np.float32))[count]
        if np.mean(_passes(score[~positive], threshold)) <= rates["max_false_alarm_rate"]:
            break
    return stumps, threshold


def _cascade(features: tuple, stages: list[tuple], width: int, height: int) -> OpenCVCascade:
    """The :class:`OpenCVCascade` of the trained stages, its features the used ones in ascending order (as
    ``opencv_traincascade`` numbers them in ``cascade.xml``)."""
    rects, weights, tilted = features
    used = sorted({stump[0] for _, stumps in stages for stump in stumps})
    index = {feature: position for position, feature in enumerate(used)}
    stumps = [stump for _, stage_stumps in stages for stump in stage_stumps]
    counts = [len(stage_stumps) for _, stage_stumps in stages]
    n = len(stumps)
    return OpenCVCascade(
        feature_type="HAAR", width=width, height=height,
        stage_thresholds=np.array([float(threshold) for threshold, _ in stages]),
        stage_weak=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        weak_nodes=np.arange(n + 1, dtype=np.int64), weak_leaves=np.arange(0, 2 * n + 1, 2, dtype=np.int64),
        node_left=np.zeros(n, np.int32), node_right=np.full(n, -1, np.int32),
        node_feature=np.array([index[stump[0]] for stump in stumps], np.int32),
        node_threshold=np.array([float(stump[1]) for stump in stumps]), node_subset=np.zeros((0, 8), np.int32),
        leaves=np.array([float(leaf) for stump in stumps for leaf in stump[2:]]),
        rects=rects[used].astype(np.int32), rect_weights=weights[used].astype(np.float64),
        tilted=tilted[used].astype(bool))


def window_decisions(cascade: OpenCVCascade, windows) -> np.ndarray:
    """Whether ``cascade`` (Haar, of stumps) accepts each window, as OpenCV 4's CPU detector decides at a window:
    flat windows are rejected, every stage must score at least its loaded threshold.

    Parameters
    ----------
    cascade : OpenCVCascade
        A Haar cascade whose weak classifiers are stumps (:func:`train_opencv_cascade`'s, and most of OpenCV's).
    windows : array_like
        (#windows, height, width) uint8 windows of the cascade's size.

    Returns
    -------
    numpy.ndarray
        (#windows,) bool.

    Raises
    ------
    ValueError
        For an LBP cascade or one with deeper trees, and windows of another size.
    """
    if cascade.feature_type != "HAAR" or not np.all(np.diff(cascade.weak_nodes) == 1):
        raise InvalidValueError("cascade: window decisions take a Haar cascade of stumps")
    array = _check_windows(windows, "windows", (cascade.height, cascade.width))
    values, factors = haar_values(array, cascade.rects, cascade.rect_weights, cascade.tilted)
    accepted = factors != 0
    for stage in range(cascade.number_of_stages):
        first, last = int(cascade.stage_weak[stage]), int(cascade.stage_weak[stage + 1])
        stumps = [(None, np.float32(cascade.node_threshold[w]), np.float32(cascade.leaves[cascade.weak_leaves[w]]),
                   np.float32(cascade.leaves[cascade.weak_leaves[w] + 1])) for w in range(first, last)]
        own = values[cascade.node_feature[first:last]].T
        accepted &= _passes(_stage_scores(own, stumps), np.float32(cascade.stage_thresholds[stage]))
    return accepted
