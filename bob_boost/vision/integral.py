"""Images as float64 grey levels, and their integral images.

The integral image ``I`` of an image ``x`` (height ``H``, width ``W``) has one
more row and column than the image, with ``I[y, x] = sum(x[:y, :x])``; the sum
over any rectangle is then four look-ups,
``I[y+h, x+w] - I[y, x+w] - I[y+h, x] + I[y, x]`` (Viola and Jones, 2001).
The squared integral image (the integral of ``x**2``) gives every window's
variance the same way, for the per-window normalisation of the Haar features.
"""
from __future__ import annotations

import numpy as np

from ..exceptions import InvalidTypeError, InvalidValueError

#: Luma weights of ITU-R BT.601 (R, G, B), the conversion OpenCV uses for colour images.
LUMA_WEIGHTS = np.array([0.299, 0.587, 0.114])


def as_gray_image(image, name: str = "image", minimum_size: tuple[int, int] | None = None) -> np.ndarray:
    """A 2-D float64 grey-level image from a grey or RGB image, without modifying the caller's array.

    Integer images are scaled to [0, 1] by their dtype's largest value (255 for uint8), so that a
    uint8 image and the same image as floats in [0, 1] give the same features; float images are kept
    as they are (the features are normalised by each window's standard deviation, so any scale works).

    Parameters
    ----------
    image : array_like
        (H, W) grey levels or (H, W, 3) RGB colour, numeric.
    name : str
        The argument's name in error messages.
    minimum_size : (int, int), optional
        (height, width) the image must reach at least.

    Raises
    ------
    TypeError
        For a non-numeric dtype.
    ValueError
        For another shape, an empty image, one smaller than ``minimum_size``, or non-finite values.
    """
    array = np.asarray(image)
    if array.dtype == bool or not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise InvalidTypeError(f"{name}: expected a numeric image, got dtype {array.dtype}")
    if array.ndim == 3 and array.shape[2] != 3 or array.ndim not in (2, 3):
        raise InvalidValueError(f"{name}: expected a 2-D grey image or an (H, W, 3) colour image, "
                                f"got shape {array.shape}")
    if array.shape[0] == 0 or array.shape[1] == 0:
        raise InvalidValueError(f"{name}: is empty (shape {array.shape})")
    if minimum_size is not None and (array.shape[0] < minimum_size[0] or array.shape[1] < minimum_size[1]):
        raise InvalidValueError(f"{name}: is {array.shape[0]}x{array.shape[1]} pixels (height x width), smaller "
                                f"than the {minimum_size[0]}x{minimum_size[1]} window")
    if np.issubdtype(array.dtype, np.integer):
        gray = array.astype(np.float64) / float(np.iinfo(array.dtype).max)
    else:
        gray = array.astype(np.float64)  # a copy: the caller's image is never touched
        if not np.isfinite(gray).all():
            raise InvalidValueError(f"{name}: has NaN or infinite pixels")
    if gray.ndim == 3:
        gray = gray @ LUMA_WEIGHTS
    return gray


def integral_image(image: np.ndarray) -> np.ndarray:
    """(H+1, W+1) integral image of a 2-D float64 image (first row and column 0)."""
    out = np.zeros((image.shape[0] + 1, image.shape[1] + 1))
    np.cumsum(np.cumsum(image, axis=0), axis=1, out=out[1:, 1:])
    return out


def integral_images(windows: np.ndarray) -> np.ndarray:
    """(N, h+1, w+1) integral images of a stack of (N, h, w) float64 windows."""
    out = np.zeros((windows.shape[0], windows.shape[1] + 1, windows.shape[2] + 1))
    np.cumsum(np.cumsum(windows, axis=1), axis=2, out=out[:, 1:, 1:])
    return out


def rectangle_sums(integral: np.ndarray, x, y, width, height) -> np.ndarray:
    """Sums of the rectangles ``[y, y+height) x [x, x+width)`` from an integral image (any broadcastable indices).

    ``integral`` may be one (H+1, W+1) integral image or an (N, H+1, W+1) stack; the indices then select
    the last two axes.
    """
    x, y = np.asarray(x), np.asarray(y)
    right, bottom = x + np.asarray(width), y + np.asarray(height)
    return (integral[..., bottom, right] - integral[..., y, right]
            - integral[..., bottom, x] + integral[..., y, x])


#: A window whose standard deviation is below this (grey levels in [0, 1]) is normalised by this instead:
#: a flat window has no contrast to normalise, and dividing by ~0 would turn rounding into features.
MINIMUM_DEVIATION = 1e-3


def window_deviations(integral: np.ndarray, squared: np.ndarray, x, y, width: int, height: int) -> np.ndarray:
    """Standard deviation of the pixels of each window, from the integral and squared integral images.

    Clipped below at :data:`MINIMUM_DEVIATION`.
    """
    area = float(width * height)
    mean = rectangle_sums(integral, x, y, width, height) / area
    variance = rectangle_sums(squared, x, y, width, height) / area - mean * mean
    return np.maximum(np.sqrt(np.maximum(variance, 0.0)), MINIMUM_DEVIATION)
