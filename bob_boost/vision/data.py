"""The bundled face data: scikit-image's LFW subset and photographs (the only import of scikit-image).

Everything here is offline: scikit-image's wheel ships the images. ``astronaut()`` and ``grass()`` are
evaluation images and are never among :func:`negative_images`.
"""
from __future__ import annotations

import numpy as np

from .._optional import optional_import
from ..exceptions import BobBoostError, InvalidValueError as BobBoostValueError

#: Face-free images of scikit-image used to mine negatives (``camera``, ``cat`` and ``chelsea`` show faces;
#: ``astronaut`` and ``grass`` are kept for evaluation).
NEGATIVE_IMAGES = ("brick", "gravel", "coins", "text", "page", "moon", "clock", "coffee", "rocket",
                   "cell", "hubble_deep_field", "immunohistochemistry", "colorwheel", "checkerboard", "retina",
                   "logo", "horse", "binary_blobs", "shepp_logan_phantom", "microaneurysms")

#: Face-free photographs held out for evaluation, with ``astronaut`` (one face).
EVALUATION_IMAGES = ("grass",)

#: The astronaut's face in ``skimage.data.astronaut()`` (x, y, width, height), marked by hand for the
#: intersection-over-union test (eyebrows to chin, cheek to cheek).
ASTRONAUT_FACE = (176, 72, 88, 88)


class MissingExtraError(BobBoostError, ImportError):
    """An optional package this feature needs is not installed."""


def _skimage_data():
    return optional_import("skimage.data", "the face data", MissingExtraError)


def lfw_windows() -> tuple[np.ndarray, np.ndarray]:
    """scikit-image's LFW subset: (100, 25, 25) face windows and (100, 25, 25) non-face windows, floats in [0, 1]."""
    windows = _skimage_data().lfw_subset()
    return windows[:100], windows[100:]


def crops(windows: np.ndarray, size: tuple[int, int] = (24, 24), mirror: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Every ``size`` crop of each window (all shifts), with their mirror images: augmented copies and their groups.

    Returns the (N * shifts * (1 + mirror), h, w) crops and, for each, the index of its source window.
    """
    h, w = size
    out, groups = [], []
    for dy in range(windows.shape[1] - h + 1):
        for dx in range(windows.shape[2] - w + 1):
            crop = windows[:, dy:dy + h, dx:dx + w]
            out.append(crop)
            groups.append(np.arange(windows.shape[0]))
            if mirror:
                out.append(crop[:, :, ::-1])
                groups.append(np.arange(windows.shape[0]))
    order = np.argsort(np.concatenate(groups), kind="stable")
    return np.concatenate(out)[order], np.concatenate(groups)[order]


def augment(windows: np.ndarray, size: tuple[int, int] = (24, 24), angles=(0.0,), mirror: bool = True,
            ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`crops` of each window rotated by each of ``angles`` (degrees, about its centre): copies and groups.

    Rotation uses bilinear interpolation (:func:`scipy.ndimage.rotate`, edges repeated) of the whole
    window before cropping, so no crop sees outside the original window's edge pixels.
    """
    from scipy import ndimage
    out, groups = [], []
    for angle in angles:
        turned = windows if angle == 0 else ndimage.rotate(windows, angle, axes=(2, 1), reshape=False, order=1,
                                                           mode="nearest")
        copies, group = crops(turned, size, mirror)
        out.append(copies)
        groups.append(group)
    order = np.argsort(np.concatenate(groups), kind="stable")
    return np.concatenate(out)[order], np.concatenate(groups)[order]


def image(name: str) -> np.ndarray:
    """The scikit-image image ``name`` as grey or RGB pixels (binary images as 0/255, RGBA without alpha).

    ``binary_blobs`` is generated: with seed 0, so that it is the same image every time.
    """
    loader = getattr(_skimage_data(), name)
    pixels = np.asarray(loader(rng=0) if name == "binary_blobs" else loader())
    if pixels.dtype == bool:
        return pixels.astype(np.uint8) * 255
    return pixels[:, :, :3] if pixels.ndim == 3 and pixels.shape[2] == 4 else pixels


def negative_images(transposed: bool = True) -> list[np.ndarray]:
    """The face-free images of :data:`NEGATIVE_IMAGES`, and (``transposed``) each of them transposed.

    A transposed photograph is still free of (upright) faces and shows its textures in other orientations.
    """
    images = [image(name) for name in NEGATIVE_IMAGES]
    if transposed:
        images += [np.ascontiguousarray(np.swapaxes(pixels, 0, 1)) for pixels in images]
    return images


def _imageio():
    return optional_import("imageio.v3", "reading and writing images", MissingExtraError)


def read_image(path) -> np.ndarray:
    """The pixels of a PNG, JPEG or other image file Pillow reads, through imageio (RGBA loses its alpha channel).

    Raises
    ------
    FileNotFoundError
        When there is no file at ``path``.
    ValueError
        When the file is not an image imageio can read.
    """
    import os
    if not os.path.isfile(path):
        raise FileNotFoundError(f"image: no such file {os.fspath(path)!r}")
    try:
        pixels = np.asarray(_imageio().imread(path, plugin="pillow"))
    except Exception as error:  # imageio raises many types for a file that is not an image
        raise BobBoostValueError(f"image: cannot read {os.fspath(path)} as an image ({error})") from None
    if pixels.ndim == 3 and pixels.shape[2] == 4:
        pixels = pixels[:, :, :3]
    return pixels


def draw_boxes(image: np.ndarray, boxes: np.ndarray, thickness: int = 2) -> np.ndarray:
    """An RGB uint8 copy of ``image`` with the (x, y, width, height) ``boxes`` outlined in red."""
    from .integral import as_gray_image
    pixels = np.asarray(image)
    if pixels.ndim == 3 and pixels.dtype == np.uint8:
        out = pixels.copy()
    else:  # grey, or colour of another dtype: shown as grey levels
        gray = np.clip(as_gray_image(pixels), 0.0, 1.0)
        out = np.repeat((gray * 255).round().astype(np.uint8)[..., np.newaxis], 3, axis=2)
    height, width = out.shape[:2]
    for x, y, w, h in np.asarray(boxes, dtype=np.int64).reshape(-1, 4):
        x0, y0, x1, y1 = max(x, 0), max(y, 0), min(x + w, width), min(y + h, height)
        out[y0:min(y0 + thickness, y1), x0:x1] = (255, 0, 0)
        out[max(y1 - thickness, y0):y1, x0:x1] = (255, 0, 0)
        out[y0:y1, x0:min(x0 + thickness, x1)] = (255, 0, 0)
        out[y0:y1, max(x1 - thickness, x0):x1] = (255, 0, 0)
    return out


def write_image(path, pixels: np.ndarray) -> None:
    """Write ``pixels`` (uint8 RGB) to ``path`` atomically, in the format its suffix names."""
    import os
    from ..io.hdf5 import atomic_path
    suffix = os.path.splitext(os.fspath(path))[1] or ".png"
    with atomic_path(path, suffix) as temporary:
        _imageio().imwrite(temporary, pixels, extension=suffix)
