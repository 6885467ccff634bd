"""Haar-like features: every two-, three- and four-rectangle mask of a base window.

A feature is a box ``(x, y, width, height)`` in the window split into equal
unit rectangles, some white and some dark (the masks of the AdaBoost chapter,
section 7.4, after Viola and Jones, 2001):

=====================  =========  ===========================================
type                   units      white / dark
=====================  =========  ===========================================
``two-horizontal``     2 x 1      left / right
``two-vertical``       1 x 2      top / bottom
``three-horizontal``   3 x 1      outer two / middle
``three-vertical``     1 x 3      outer two / middle
``four``               2 x 2      top-left and bottom-right / the other two
=====================  =========  ===========================================

Its value is the **mean** grey level over the white area minus the mean over
the dark area, divided by the window's standard deviation. This is the
chapter's "white sum minus dark sum" divided by the (equal) area of each
side, which changes no stump's choice at one scale, and it makes the value
independent of the window's mean and contrast (Viola and Jones' variance
normalisation) and of the scale at which a detector evaluates it, even when
the scaled rectangles are rounded to unequal sizes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse

from .._validation import check_positive_int
from ..exceptions import InvalidTypeError, InvalidValueError
from .integral import (MINIMUM_DEVIATION, as_gray_image, integral_image, integral_images, rectangle_sums,
                       window_deviations)

#: Every mask type, in the order of their codes in a feature table.
FEATURE_TYPES = ("two-horizontal", "two-vertical", "three-horizontal", "three-vertical", "four")

#: The chapter's four masks (Viola and Jones' original set): the default pool.
CHAPTER_TYPES = ("two-horizontal", "two-vertical", "three-horizontal", "four")

#: Per type: units across, units down, and the (column, row, sign) of every unit rectangle (+1 white).
_MASKS = (
    (2, 1, ((0, 0, 1), (1, 0, -1))),
    (1, 2, ((0, 0, 1), (0, 1, -1))),
    (3, 1, ((0, 0, 1), (1, 0, -1), (2, 0, 1))),
    (1, 3, ((0, 0, 1), (0, 1, -1), (0, 2, 1))),
    (2, 2, ((0, 0, 1), (1, 0, -1), (0, 1, -1), (1, 1, 1))),
)

#: Rectangles per feature in :class:`Rectangles` (the four-rectangle mask has the most).
MAX_RECTANGLES = 4


@dataclass(frozen=True)
class Rectangles:
    """The rectangles of a feature table at one scale, ready for integral-image look-ups.

    Attributes
    ----------
    x, y, width, height : numpy.ndarray
        (#features, 4) int64 rectangles relative to the window's top-left corner (unused slots have
        width and height 0).
    coefficient : numpy.ndarray
        (#features, 4) float64 factor of each rectangle's sum: ``+1 / white area`` or ``-1 / dark area``
        (0 in unused slots).
    window_width, window_height : int
        Size of the window at this scale.
    """

    x: np.ndarray
    y: np.ndarray
    width: np.ndarray
    height: np.ndarray
    coefficient: np.ndarray
    window_width: int
    window_height: int


def _check_window_size(window_size) -> tuple[int, int]:
    """``(height, width)`` of at least 1 pixel each."""
    if (isinstance(window_size, (str, bytes)) or not hasattr(window_size, "__len__")
            or len(window_size) != 2):
        raise InvalidValueError(f"window_size: expected (height, width), got {window_size!r}")
    height = check_positive_int(window_size[0], "window_size[0] (height)")
    width = check_positive_int(window_size[1], "window_size[1] (width)")
    return height, width


class HaarFeatures:
    """A table of Haar-like features of a base window: one row ``(type, x, y, width, height)`` each.

    Parameters
    ----------
    table : array_like of int
        (#features, 5) rows: the type's index in :data:`FEATURE_TYPES`, then the box's column, row,
        width and height in pixels of the base window; width and height must be multiples of the
        type's units across and down.
    window_size : (int, int)
        (height, width) of the base window.

    Raises
    ------
    ValueError
        For a row of unknown type, a box that is empty, not a whole number of units, or outside the window.
    """

    def __init__(self, table, window_size) -> None:
        self.window_size = _check_window_size(window_size)
        array = np.asarray(table)
        if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
            raise InvalidTypeError(f"table: expected integers, got dtype {array.dtype}")
        if array.ndim != 2 or array.shape[1] != 5:
            raise InvalidValueError(f"table: expected (#features, 5) rows (type, x, y, width, height), "
                                    f"got shape {array.shape}")
        array = array.astype(np.int64)
        kind, x, y, width, height = array.T
        if np.any((kind < 0) | (kind >= len(FEATURE_TYPES))):
            raise InvalidValueError(f"table: feature types are 0 .. {len(FEATURE_TYPES) - 1}, got "
                                    f"{int(kind[(kind < 0) | (kind >= len(FEATURE_TYPES))][0])}")
        units = np.array([(m[0], m[1]) for m in _MASKS])[np.clip(kind, 0, len(_MASKS) - 1)]
        bad = ((width <= 0) | (height <= 0) | (width % units[:, 0] != 0) | (height % units[:, 1] != 0)
               # x > window - width, not x + width > window: the sum of two int64 from a file can wrap
               | (x < 0) | (y < 0) | (x > self.window_size[1] - width) | (y > self.window_size[0] - height))
        if np.any(bad):
            row = int(np.flatnonzero(bad)[0])
            raise InvalidValueError(
                f"table: feature {row} {tuple(int(v) for v in array[row])} is empty, not a whole number of "
                f"{FEATURE_TYPES[int(kind[row])]} units, or outside the {self.window_size[0]}x"
                f"{self.window_size[1]} window")
        self.table = array
        self.table.flags.writeable = False
        self._matrix: scipy.sparse.csr_matrix | None = None

    @classmethod
    def all(cls, window_size=(24, 24), types=CHAPTER_TYPES, stride: int = 1) -> "HaarFeatures":
        """Every feature of ``types`` at every size, and at every position ``stride`` pixels apart, in the window.

        A 24x24 window has 134,736 features of the chapter's four types (162,336 with
        ``three-vertical``); ``stride=2`` keeps every size at a quarter of the positions (37,908). The
        order is by type, unit width, unit height, row, column.

        Raises
        ------
        ValueError
            For an unknown type, or a window in which no feature of ``types`` fits.
        """
        height, width = _check_window_size(window_size)
        stride = check_positive_int(stride, "stride")
        if isinstance(types, str):
            types = (types,)
        unknown = [t for t in types if t not in FEATURE_TYPES]
        if unknown or not len(types):
            raise InvalidValueError(f"types: expected some of {FEATURE_TYPES}, got {list(types)!r}")
        rows = []
        for name in dict.fromkeys(types):
            kind = FEATURE_TYPES.index(name)
            across, down = _MASKS[kind][:2]
            for unit_w in range(1, width // across + 1):
                for unit_h in range(1, height // down + 1):
                    box_w, box_h = across * unit_w, down * unit_h
                    ys, xs = np.mgrid[0:height - box_h + 1:stride, 0:width - box_w + 1:stride]
                    block = np.empty((xs.size, 5), dtype=np.int64)
                    block[:, 0], block[:, 1], block[:, 2] = kind, xs.ravel(), ys.ravel()
                    block[:, 3], block[:, 4] = box_w, box_h
                    rows.append(block)
        if not rows:
            raise InvalidValueError(f"window_size: no feature of {list(types)} fits a {height}x{width} window")
        return cls(np.concatenate(rows), (height, width))

    def __len__(self) -> int:
        return self.table.shape[0]

    def __eq__(self, other) -> bool:
        return (isinstance(other, HaarFeatures) and self.window_size == other.window_size
                and np.array_equal(self.table, other.table))

    def __repr__(self) -> str:
        return f"HaarFeatures({len(self)} features, window {self.window_size[0]}x{self.window_size[1]})"

    def subset(self, indices) -> "HaarFeatures":
        """The features at ``indices``, in that order."""
        return HaarFeatures(self.table[np.asarray(indices, dtype=np.int64)], self.window_size)

    def rectangles(self, scale: float = 1.0) -> Rectangles:
        """The features' rectangles and coefficients for a window ``scale`` times the base window.

        Unit sizes and positions are scaled and rounded (units at least one pixel, and no larger than lets
        the box fit the scaled window); a box that rounding pushes past the scaled window is moved back
        inside it. At scale 1 these are the table's rectangles.
        """
        window_h = int(round(self.window_size[0] * scale))
        window_w = int(round(self.window_size[1] * scale))
        kind, x, y, width, height = self.table.T
        n = len(self)
        out = {name: np.zeros((n, MAX_RECTANGLES), dtype=np.int64) for name in ("x", "y", "width", "height")}
        coefficient = np.zeros((n, MAX_RECTANGLES))
        for code, (across, down, units) in enumerate(_MASKS):
            rows = np.flatnonzero(kind == code)
            if rows.size == 0:
                continue
            # rounded units could make a box wider than the (rounded) window: cap them so it fits
            unit_w = np.clip(np.rint(width[rows] / across * scale).astype(np.int64), 1, max(window_w // across, 1))
            unit_h = np.clip(np.rint(height[rows] / down * scale).astype(np.int64), 1, max(window_h // down, 1))
            left = np.minimum(np.rint(x[rows] * scale).astype(np.int64), window_w - across * unit_w)
            top = np.minimum(np.rint(y[rows] * scale).astype(np.int64), window_h - down * unit_h)
            area = (unit_w * unit_h).astype(np.float64)
            white = sum(1 for u in units if u[2] > 0)
            for slot, (column, row, sign) in enumerate(units):
                out["x"][rows, slot] = left + column * unit_w
                out["y"][rows, slot] = top + row * unit_h
                out["width"][rows, slot] = unit_w
                out["height"][rows, slot] = unit_h
                coefficient[rows, slot] = 1.0 / (white * area) if sign > 0 else -1.0 / ((len(units) - white) * area)
        return Rectangles(out["x"], out["y"], out["width"], out["height"], coefficient, window_w, window_h)

    def corner_matrix(self) -> scipy.sparse.csr_matrix:
        """(#features, (h+1)(w+1)) sparse map from a window's flattened integral image to the features' raw values.

        Raw values are the white mean minus the dark mean, before division by the window's deviation.
        """
        if self._matrix is None:
            rects = self.rectangles()
            stride = self.window_size[1] + 1
            right, bottom = rects.x + rects.width, rects.y + rects.height
            corners = np.stack([bottom * stride + right, rects.y * stride + right,
                                bottom * stride + rects.x, rects.y * stride + rects.x], axis=-1)
            signs = np.array([1.0, -1.0, -1.0, 1.0])
            values = rects.coefficient[..., np.newaxis] * signs
            used = np.broadcast_to((rects.coefficient != 0)[..., np.newaxis], corners.shape)
            rows = np.broadcast_to(np.arange(len(self))[:, np.newaxis, np.newaxis], corners.shape)
            size = (self.window_size[0] + 1) * stride
            # duplicate corners (adjacent rectangles share edges) are summed by the conversion
            self._matrix = scipy.sparse.coo_matrix((values[used], (rows[used], corners[used])),
                                                   shape=(len(self), size)).tocsr()
        return self._matrix

    def evaluate(self, windows) -> np.ndarray:
        """(N, #features) normalised feature values of a stack of base-size windows.

        Parameters
        ----------
        windows : array_like
            (N, height, width) grey windows of the base window size (or one (height, width) window).

        Raises
        ------
        ValueError
            For windows of another size or non-finite pixels; TypeError for a non-numeric dtype.
        """
        stack = check_windows(windows, self.window_size)
        integral = integral_images(stack).reshape(stack.shape[0], -1)
        return self.values_from_integrals(integral, stack_deviations(stack)).T

    def values_from_integrals(self, integral: np.ndarray, deviations: np.ndarray,
                              start: int = 0, stop: int | None = None) -> np.ndarray:
        """(stop - start, N) values of features ``start:stop`` from (N, (h+1)(w+1)) flattened integral images.

        Each feature's values come from its own row of :meth:`corner_matrix` whatever the block, so a
        feature's values are the same bit for bit in any block that holds it.
        """
        matrix = self.corner_matrix()[start:stop]
        return (matrix @ integral.T) / deviations[np.newaxis, :]

    def evaluate_at(self, image, x, y, scale: float = 1.0) -> np.ndarray:
        """(#positions, #features) values of the windows at ``(x, y)`` (top-left, pixels) of ``image`` at ``scale``.

        The window is ``scale`` times the base window; the features are scaled with it
        (:meth:`rectangles`), as a detector evaluates them, from the whole image's integral images.

        Raises
        ------
        ValueError
            For an invalid image, a non-positive scale, or a window that leaves the image.
        """
        gray = as_gray_image(image)
        if not (np.isfinite(scale) and scale > 0):
            raise InvalidValueError(f"scale: must be a positive number, got {scale!r}")
        rects = self.rectangles(scale)
        x = np.atleast_1d(np.asarray(x, dtype=np.int64))
        y = np.atleast_1d(np.asarray(y, dtype=np.int64))
        if (np.any(x < 0) or np.any(y < 0) or np.any(x + rects.window_width > gray.shape[1])
                or np.any(y + rects.window_height > gray.shape[0])):
            raise InvalidValueError(f"x, y: a {rects.window_height}x{rects.window_width} window at these positions "
                                    f"leaves the {gray.shape[0]}x{gray.shape[1]} image")
        integral, squared = integral_image(gray), integral_image(gray * gray)
        deviation = window_deviations(integral, squared, x, y, rects.window_width, rects.window_height)
        px, py = x[:, np.newaxis, np.newaxis], y[:, np.newaxis, np.newaxis]
        sums = rectangle_sums(integral, px + rects.x, py + rects.y, rects.width, rects.height)
        return (sums * rects.coefficient).sum(axis=2) / deviation[:, np.newaxis]

    def draw(self, index: int, window) -> np.ndarray:
        """An (h, w, 3) RGB picture of feature ``index`` on a base-size ``window``: white area lightened, dark darkened.

        The window is stretched to [0, 1] first; the picture is for figures, not for features.
        """
        gray = check_windows(window, self.window_size)[0]
        index = int(index)
        if not 0 <= index < len(self):
            raise InvalidValueError(f"index: must be in [0, {len(self)}), got {index}")
        span = gray.max() - gray.min()
        picture = np.repeat(((gray - gray.min()) / (span if span > 0 else 1.0))[..., np.newaxis], 3, axis=2)
        rects = self.rectangles()
        for slot in range(MAX_RECTANGLES):
            c = rects.coefficient[index, slot]
            if c == 0:
                continue
            xs = slice(rects.x[index, slot], rects.x[index, slot] + rects.width[index, slot])
            ys = slice(rects.y[index, slot], rects.y[index, slot] + rects.height[index, slot])
            target = 1.0 if c > 0 else 0.0
            picture[ys, xs] = 0.5 * picture[ys, xs] + 0.5 * target
        return picture


def check_windows(windows, window_size: tuple[int, int], name: str = "windows") -> np.ndarray:
    """(N, height, width) float64 grey windows (a single 2-D window becomes a stack of one)."""
    array = np.asarray(windows)
    if array.dtype == bool or not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise InvalidTypeError(f"{name}: expected numeric windows, got dtype {array.dtype}")
    if array.ndim == 2:
        array = array[np.newaxis]
    if array.ndim != 3 or array.shape[1:] != tuple(window_size):
        raise InvalidValueError(f"{name}: expected (N, {window_size[0]}, {window_size[1]}) windows, "
                                f"got shape {np.asarray(windows).shape}")
    if array.shape[0] == 0:
        raise InvalidValueError(f"{name}: no window")
    if np.issubdtype(array.dtype, np.integer):
        return array.astype(np.float64) / float(np.iinfo(array.dtype).max)
    stack = array.astype(np.float64)
    if not np.isfinite(stack).all():
        raise InvalidValueError(f"{name}: has NaN or infinite pixels")
    return stack


def stack_deviations(stack: np.ndarray) -> np.ndarray:
    """(N,) per-window standard deviations, clipped as :func:`~bob_boost.vision.integral.window_deviations` does."""
    flat = stack.reshape(stack.shape[0], -1)
    mean = flat.mean(axis=1)
    variance = (flat * flat).mean(axis=1) - mean * mean
    return np.maximum(np.sqrt(np.maximum(variance, 0.0)), MINIMUM_DEVIATION)
