"""OpenCV's Haar and LBP features and the arithmetic of its CPU detector at a window, for training and checking
cascades.

:func:`haar_features` and :func:`lbp_features` enumerate the features ``opencv_traincascade`` trains with (Haar
modes BASIC, CORE and ALL; multi-block LBP), in its order; :func:`haar_values` computes Haar values at windows as
the detector does (float32 weighted rectangle sums times the float32 reciprocal of the window interior's spread;
flat windows rejected), :func:`lbp_codes` the 8-bit LBP codes, and :func:`window_decisions` a cascade's decisions
at windows, stage by stage as the detector sums and compares them.
"""
from __future__ import annotations

import numpy as np

from .._validation import check_positive_int
from ..exceptions import InvalidValueError
from ._opencv_kernels import haar_window_values, integrals, lbp_window_codes
from .opencv import THRESHOLD_EPS, ScanFeatures
from .opencv_xml import OpenCVCascade

__all__ = ["MODES", "haar_features", "haar_values", "lbp_codes", "lbp_features", "window_decisions"]

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

def lbp_features(width: int, height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The multi-block LBP features ``opencv_traincascade`` enumerates for a ``width`` x ``height`` window, in its
    order: every 3 x 3 grid of ``w`` x ``h`` blocks at ``(x, y)`` that fits (``x`` slowest, then ``y``, ``w`` and
    ``h`` from 1; a 24 x 24 window has 8,464).

    Returns
    -------
    tuple of numpy.ndarray
        ``rects`` (#features, 3, 4) int32, the block ``x, y, w, h`` in slot 0 (the others zero), ``weights``
        (#features, 3) zeros and ``tilted`` (#features,) False, as :class:`~bob_boost.vision.opencv_xml.
        OpenCVCascade` holds an LBP cascade's features.
    """
    width, height = check_positive_int(width, "width"), check_positive_int(height, "height")
    x, y, w, h = (grid.ravel() for grid in np.meshgrid(np.arange(width), np.arange(height),
                                                      np.arange(1, width // 3 + 1), np.arange(1, height // 3 + 1),
                                                      indexing="ij"))
    keep = (x + 3 * w <= width) & (y + 3 * h <= height)
    rects = np.zeros((int(keep.sum()), 3, 4), np.int32)
    rects[:, 0] = np.column_stack([x[keep], y[keep], w[keep], h[keep]])
    return rects, np.zeros((rects.shape[0], 3)), np.zeros(rects.shape[0], bool)


def _window_integrals(windows: np.ndarray, tilted_too: bool) -> tuple[np.ndarray, ...]:
    """Every window's flattened (h+1, w+1) int32 integral images (sums, squares, tilted sums)."""
    n, h, w = windows.shape
    totals = np.zeros((n, h + 1, w + 1), np.int32)
    squares = np.zeros_like(totals)
    tilteds = np.zeros_like(totals) if tilted_too else np.zeros((n, 1, 1), np.int32)
    for index in range(n):
        integrals(windows[index], tilted_too, totals[index], squares[index], tilteds[index])
    return (totals.reshape(n, totals[0].size if n else (h + 1) * (w + 1)),
            squares.reshape(n, squares[0].size if n else (h + 1) * (w + 1)),
            tilteds.reshape(n, tilteds.shape[1] * tilteds.shape[2]))


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
                       *ScanFeatures(False, rects, weights, tilted).arrays(stride)[:4], factors, values)
    return values, factors

def lbp_codes(windows: np.ndarray, rects: np.ndarray) -> np.ndarray:
    """The LBP features' 8-bit codes at every window, as OpenCV's CPU detector computes them (a neighbour block
    whose pixel sum is at least the centre block's sets its bit, clockwise from the top-left, 128, to the left, 1).

    Parameters
    ----------
    windows : numpy.ndarray
        (#windows, h, w) uint8 grey windows of the cascade's size.
    rects : numpy.ndarray
        (#features, 3, 4) features as :func:`lbp_features` gives them.

    Returns
    -------
    numpy.ndarray
        (#features, #windows) uint8.
    """
    n, h, w = windows.shape
    totals = _window_integrals(np.ascontiguousarray(windows, dtype=np.uint8), False)[0]
    grid = ScanFeatures(True, rects, np.zeros((rects.shape[0], 3)), np.zeros(rects.shape[0], bool)).arrays(w + 1)[4]
    codes = np.empty((rects.shape[0], n), np.uint8)
    lbp_window_codes(totals, np.ascontiguousarray(grid), codes)
    return codes


def stump_sides(values: np.ndarray, split) -> np.ndarray:
    """Which windows a stump sends to its first leaf, as the detector decides.

    Parameters
    ----------
    values : numpy.ndarray
        (#windows,) float32 Haar values, or uint8 LBP codes.
    split : numpy.float32 or numpy.ndarray
        A Haar stump's threshold (a value below it goes to the first leaf), or an LBP stump's eight int32
        category words (a code whose bit is set goes to the first leaf).

    Returns
    -------
    numpy.ndarray
        (#windows,) bool.
    """
    if np.ndim(split) == 0:
        return values < split
    words = np.asarray(split, np.int32).view(np.uint32)
    return (words[values >> 5] >> (values & 31).astype(np.uint32) & 1).astype(bool)


def stage_scores(values: np.ndarray, stumps: list[tuple]) -> np.ndarray:
    """Each window's stage score: the float32 leaves of the stumps, summed in double in order, as the detector
    sums them (``values``: (#windows, #stumps) float32, each stump's own feature's column)."""
    score = np.zeros(values.shape[0])
    for column, (_, split, left, right) in enumerate(stumps):
        score += np.where(stump_sides(values[:, column], split), np.float64(left), np.float64(right))
    return score

def passes(score: np.ndarray, threshold: np.float32) -> np.ndarray:
    """The detector's stage decision: a score of at least the loaded threshold ``float32(t - 1e-5)``."""
    return ~(score < np.float64(np.float32(threshold - THRESHOLD_EPS)))

def check_windows(windows, name: str, size: tuple[int, int] | None) -> np.ndarray:
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

def window_decisions(cascade: OpenCVCascade, windows) -> np.ndarray:
    """Whether ``cascade`` (of stumps) accepts each window, as OpenCV 4's CPU detector decides at a window: flat
    windows are rejected (Haar), every stage must score at least its loaded threshold.

    Parameters
    ----------
    cascade : OpenCVCascade
        A Haar or LBP cascade whose weak classifiers are stumps (:func:`train_opencv_cascade`'s, and most of
        OpenCV's).
    windows : array_like
        (#windows, height, width) uint8 windows of the cascade's size.

    Returns
    -------
    numpy.ndarray
        (#windows,) bool.

    Raises
    ------
    ValueError
        For a cascade with deeper trees, and windows of another size.
    """
    if not np.all(np.diff(cascade.weak_nodes) == 1):
        raise InvalidValueError("cascade: window decisions take a cascade of stumps")
    array = check_windows(windows, "windows", (cascade.height, cascade.width))
    lbp = cascade.feature_type == "LBP"
    subsets = cascade.node_subset.reshape(-1, 8)
    if lbp:
        values, accepted = lbp_codes(array, cascade.rects), np.ones(array.shape[0], bool)
    else:
        values, factors = haar_values(array, cascade.rects, cascade.rect_weights, cascade.tilted)
        accepted = factors != 0
    for stage in range(cascade.number_of_stages):
        first, last = int(cascade.stage_weak[stage]), int(cascade.stage_weak[stage + 1])
        stumps = [(None, subsets[w] if lbp else np.float32(cascade.node_threshold[w]),
                   np.float32(cascade.leaves[cascade.weak_leaves[w]]),
                   np.float32(cascade.leaves[cascade.weak_leaves[w] + 1])) for w in range(first, last)]
        own = values[cascade.node_feature[first:last]].T
        accepted &= passes(stage_scores(own, stumps), np.float32(cascade.stage_thresholds[stage]))
    return accepted
