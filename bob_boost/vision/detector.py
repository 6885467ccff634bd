"""Sliding-window detection with a cascade: every position and scale, early exit, grouped boxes.

As Viola and Jones do, the image is not resized: the cascade's features are scaled with the window
(:meth:`HaarFeatures.rectangles`) and evaluated from the image's integral images, so every scale costs
the same per window. The parameters follow OpenCV's ``CascadeClassifier.detectMultiScale``.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .._validation import check_scalar
from ..engine.threads import check_threads, run_blocks
from ..exceptions import InvalidTypeError, InvalidValueError
from ._kernels import scan_windows, similar_box_roots
from .cascade import Cascade
from .integral import MINIMUM_DEVIATION, as_gray_image, integral_image

#: Windows per block handed to a thread.
BLOCK_WINDOWS = 4096

#: OpenCV's ``groupRectangles`` tolerance: boxes whose corners differ by less than this fraction of their
#: mean size are the same detection.
GROUPING_EPS = 0.2


@dataclass(frozen=True)
class Detections:
    """The boxes found in one image.

    Attributes
    ----------
    boxes : numpy.ndarray
        (n, 4) int64 ``x, y, width, height`` in pixels, top-left origin.
    scores : numpy.ndarray
        (n,) float64 confidence: the number of raw detections merged into each box (with
        ``min_neighbors=0``, the last stage's margin of each raw detection).
    windows : int
        Windows scanned.
    features_evaluated : int
        Stumps evaluated over all windows (one feature each).
    """

    boxes: np.ndarray
    scores: np.ndarray
    windows: int
    features_evaluated: int

    @property
    def features_per_window(self) -> float:
        """Average number of features evaluated per scanned window."""
        return self.features_evaluated / self.windows if self.windows else 0.0

    def __len__(self) -> int:
        return self.boxes.shape[0]


def _check_size(size, name: str) -> tuple[int, int] | None:
    if size is None:
        return None
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        size = (size, size)
    if isinstance(size, (str, bytes)) or not hasattr(size, "__len__") or len(size) != 2:
        raise InvalidValueError(f"{name}: expected (width, height) in pixels or one size, got {size!r}")
    return (int(check_scalar(size[0], f"{name}[0]", numbers.Integral, min_val=1)),
            int(check_scalar(size[1], f"{name}[1]", numbers.Integral, min_val=1)))


def scales(image_shape: tuple[int, int], window_size: tuple[int, int], scale_factor: float,
           min_size: tuple[int, int] | None, max_size: tuple[int, int] | None) -> list[float]:
    """The window scales scanned: powers of ``scale_factor`` from the smallest allowed window to the largest."""
    height, width = window_size
    smallest = 1.0 if min_size is None else max(1.0, min_size[0] / width, min_size[1] / height)
    largest_w, largest_h = image_shape[1], image_shape[0]
    if max_size is not None:
        largest_w, largest_h = min(largest_w, max_size[0]), min(largest_h, max_size[1])
    out = []
    scale = smallest
    while round(width * scale) <= largest_w and round(height * scale) <= largest_h:
        out.append(scale)
        scale *= scale_factor
    return out


def window_grid(image_shape: tuple[int, int], scale: float, window_size: tuple[int, int],
                step: float) -> tuple[np.ndarray, np.ndarray]:
    """Tops and lefts of every window of the scaled size, ``round(step * scale)`` pixels apart (row-major)."""
    height, width = round(window_size[0] * scale), round(window_size[1] * scale)
    shift = max(1, int(round(step * scale)))
    ys = np.arange(0, image_shape[0] - height + 1, shift)
    xs = np.arange(0, image_shape[1] - width + 1, shift)
    tops, lefts = np.meshgrid(ys, xs, indexing="ij")
    return tops.ravel().astype(np.int64), lefts.ravel().astype(np.int64)


def scan_positions(cascade: Cascade, integral: np.ndarray, squared: np.ndarray, scale: float, tops: np.ndarray,
                   lefts: np.ndarray, n_threads: int,
                   flat: dict[str, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run the compiled cascade on the windows at ``tops``/``lefts`` of one image's (H+1, W+1) integral images.

    ``flat`` is ``cascade.flat()`` when the caller scans several scales or images with one cascade.
    Returns each window's number of passed stages, last stage margin and number of stumps evaluated.
    """
    rects = cascade.features.rectangles(scale)
    stride = integral.shape[1]
    flat = cascade.flat() if flat is None else flat
    weak = flat["weak_feature"]
    x, y, w, h = rects.x[weak], rects.y[weak], rects.width[weak], rects.height[weak]
    corners = np.stack([(y + h) * stride + x + w, y * stride + x + w, (y + h) * stride + x, y * stride + x], axis=-1)
    window_corners = np.array([rects.window_height * stride + rects.window_width, rects.window_width,
                               rects.window_height * stride, 0], dtype=np.int64)
    n = tops.size
    passed = np.zeros(n, dtype=np.int64)
    margins = np.zeros(n)
    evaluated = np.zeros(n, dtype=np.int64)
    bases = tops * stride + lefts
    args = (integral.ravel(), squared.ravel(), bases, window_corners, float(rects.window_height * rects.window_width),
            MINIMUM_DEVIATION, np.ascontiguousarray(corners), np.ascontiguousarray(rects.coefficient[weak]),
            flat["weak_threshold"], flat["weak_above"], flat["weak_below"], flat["stage_ends"],
            flat["stage_thresholds"])
    blocks = [args + (a, min(a + BLOCK_WINDOWS, n), passed, margins, evaluated) for a in range(0, n, BLOCK_WINDOWS)]
    run_blocks(scan_windows, blocks, n_threads, work=float(n) * 16)
    return passed, margins, evaluated


def detect(image, cascade: Cascade, scale_factor: float = 1.2, step: float = 1.0, min_size=None, max_size=None,
           min_neighbors: int = 3, n_threads: int | None = None) -> Detections:
    """Find the objects of ``cascade`` in ``image`` at every position and scale.

    Parameters
    ----------
    image : array_like
        (H, W) grey or (H, W, 3) RGB image, numeric (uint8 as read from PNG/JPEG, or floats).
    cascade : Cascade
        The trained cascade.
    scale_factor : float
        Ratio > 1 between consecutive window scales (OpenCV's ``scaleFactor``).
    step : float
        Shift >= 1 between neighbouring windows, in pixels of the base window: at scale ``s`` windows are
        ``round(step * s)`` pixels apart.
    min_size, max_size : (int, int) or int, optional
        Smallest and largest window (width, height) in pixels; default: the base window and the image.
    min_neighbors : int
        A box needs more than this many overlapping raw detections (OpenCV's ``minNeighbors``); 0 returns
        every raw detection, ungrouped.
    n_threads : int or None
        Threads (None: every core); the boxes do not depend on it.

    Returns
    -------
    Detections
        Boxes, scores and the scanning statistics.

    Raises
    ------
    TypeError
        For a cascade that is not a :class:`Cascade`, or an image of non-numeric dtype.
    ValueError
        For an image that is not grey or RGB, is empty or smaller than the window, a cascade without
        stages, ``scale_factor <= 1``, ``step < 1``, sizes that are not positive, ``min_size`` above
        ``max_size`` or a negative ``min_neighbors``.
    """
    if not isinstance(cascade, Cascade):
        raise InvalidTypeError(f"cascade: expected a Cascade, got {type(cascade).__name__}")
    if len(cascade) == 0:
        raise InvalidValueError("cascade: has no stage")
    scale_factor = float(check_scalar(scale_factor, "scale_factor", numbers.Real, min_val=1,
                                      include_boundaries="neither"))
    step = float(check_scalar(step, "step", numbers.Real, min_val=1))
    min_size, max_size = _check_size(min_size, "min_size"), _check_size(max_size, "max_size")
    if min_size is not None and max_size is not None and (min_size[0] > max_size[0] or min_size[1] > max_size[1]):
        raise InvalidValueError(f"min_size: {min_size} is larger than max_size {max_size}")
    min_neighbors = int(check_scalar(min_neighbors, "min_neighbors", numbers.Integral, min_val=0))
    n_threads = check_threads(n_threads)
    gray = as_gray_image(image, "image", cascade.window_size)
    integral, squared = integral_image(gray), integral_image(gray * gray)
    raw_boxes, raw_margins, windows, evaluated_total = [], [], 0, 0
    flat = cascade.flat()
    for scale in scales(gray.shape, cascade.window_size, scale_factor, min_size, max_size):
        tops, lefts = window_grid(gray.shape, scale, cascade.window_size, step)
        passed, margins, evaluated = scan_positions(cascade, integral, squared, scale, tops, lefts, n_threads, flat)
        width, height = round(cascade.window_size[1] * scale), round(cascade.window_size[0] * scale)
        windows += tops.size
        evaluated_total += int(evaluated.sum())
        hit = passed == len(cascade)
        raw_boxes.append(np.column_stack([lefts[hit], tops[hit], np.full(hit.sum(), width),
                                          np.full(hit.sum(), height)]))
        raw_margins.append(margins[hit])
    boxes = np.concatenate(raw_boxes) if raw_boxes else np.empty((0, 4), dtype=np.int64)
    margins = np.concatenate(raw_margins) if raw_margins else np.empty(0)
    if min_neighbors == 0:
        return Detections(boxes.astype(np.int64).reshape(-1, 4), margins, windows, evaluated_total)
    grouped, counts = group_rectangles(boxes, min_neighbors)
    return Detections(grouped, counts.astype(np.float64), windows, evaluated_total)


def group_rectangles(boxes, min_neighbors: int, eps: float = GROUPING_EPS) -> tuple[np.ndarray, np.ndarray]:
    """Merge overlapping boxes as OpenCV's ``groupRectangles`` does.

    Boxes whose four sides each differ by at most ``eps`` times their mean size are similar; groups are
    the connected components of that relation (found with a compiled search, so that even a cascade that
    accepts every window is grouped in seconds). A group of more than ``min_neighbors`` boxes becomes its
    average box; a box lying inside another kept box is dropped when the other has more than
    ``max(3, its own count)`` members, or its own count is below 3, as OpenCV does.

    Parameters
    ----------
    boxes : array_like of int
        (n, 4) boxes ``x, y, width, height`` in pixels.
    min_neighbors : int
        Groups need more than this many boxes.
    eps : float
        OpenCV's tolerance.

    Returns
    -------
    boxes : numpy.ndarray
        (n, 4) int64 merged boxes, ordered by decreasing count then position.
    counts : numpy.ndarray
        (n,) number of boxes merged into each.
    """
    array = np.asarray(boxes)
    if array.size and (not np.issubdtype(array.dtype, np.number) or array.dtype == bool
                       or not np.all(np.isfinite(array)) or not np.array_equal(array, np.round(array))):
        raise InvalidValueError("boxes: expected integer pixel boxes (x, y, width, height)")
    boxes = array.astype(np.int64).reshape(-1, 4)
    n = boxes.shape[0]
    if n == 0:
        return np.empty((0, 4), dtype=np.int64), np.empty(0, dtype=np.int64)
    x, y, w, h = boxes.T
    column, row = x - x.min(), y - y.min()
    y_span, x_span = int(row.max()) + 1, int(column.max()) + 1
    sizes, size_class = np.unique(boxes[:, 2:], axis=0, return_inverse=True)
    size_class = size_class.reshape(-1)
    keys = column * y_span + row
    order = np.lexsort((keys, size_class))
    class_starts = np.searchsorted(size_class[order], np.arange(sizes.shape[0] + 1))
    labels = similar_box_roots(order, keys[order], class_starts, sizes[:, 0].astype(np.float64),
                               sizes[:, 1].astype(np.float64), column, row, y_span, x_span, float(eps))
    groups, inverse, counts = np.unique(labels, return_inverse=True, return_counts=True)
    sums = np.zeros((groups.size, 4), np.int64)
    np.add.at(sums, inverse.reshape(-1), boxes)
    # OpenCV's average: the sum times 1/n, both float32, rounded half to even
    inverse_counts = np.float32(1.0) / counts.astype(np.float32)
    merged = np.rint(sums.astype(np.float32) * inverse_counts[:, np.newaxis]).astype(np.int64)
    keep = counts > min_neighbors
    merged, counts = merged[keep], counts[keep]
    dx, dy = np.rint(merged[:, 2] * eps).astype(np.int64), np.rint(merged[:, 3] * eps).astype(np.int64)
    inside = np.zeros(merged.shape[0], dtype=bool)
    for i in range(merged.shape[0]):
        # OpenCV's rule: drop box i inside box j when j has clearly more support (or i has little)
        stronger = (counts > max(3, counts[i])) | (counts[i] < 3)
        stronger[i] = False
        within = (stronger & (merged[i, 0] >= merged[:, 0] - dx) & (merged[i, 1] >= merged[:, 1] - dy)
                  & (merged[i, 0] + merged[i, 2] <= merged[:, 0] + merged[:, 2] + dx)
                  & (merged[i, 1] + merged[i, 3] <= merged[:, 1] + merged[:, 3] + dy))
        inside[i] = within.any()
    merged, counts = merged[~inside], counts[~inside]
    order = np.lexsort((merged[:, 1], merged[:, 0], -counts))
    return merged[order], counts[order]
