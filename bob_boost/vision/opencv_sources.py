"""Training windows from ``opencv_traincascade``'s inputs: positives from a ``.vec`` or info file, negatives from a
background list.

Background windows are cut as OpenCV's negative reader cuts them: each image is first shrunk
(``INTER_LINEAR_EXACT``) until the window (and the pass's offset) just fits, then windows are read in raster
order with half a window's step from the offset, and the image is enlarged by sqrt(2) (float32, OpenCV's
``1.41421354f``) until it would exceed its own size; then the next image follows. Pass ``r`` over the list
(``r = 0 .. w h - 1``) starts its grid at the offset ``(r mod w, r div w)`` (at most the image's size less the
window's), so later passes cut new windows. The images are read once and the windows of a scale come as one
batch.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from ..exceptions import DataFormatError
from .opencv import _eight_bit_gray, opencv_resize
from .opencv_samples import read_info, read_vec

__all__ = ["background_windows", "image_windows", "info_positives", "read_background_list", "vec_positives"]

#: OpenCV's negative reader's scale step, float32 sqrt(2).
_SCALE_STEP = np.float32(1.41421354)


def read_background_list(path: str | os.PathLike) -> list[Path]:
    """The image paths of a background list (one per line, relative to the list's folder; ``#`` lines skipped;
    reading stops at the first empty line, as OpenCV's reader does).

    Raises
    ------
    bob_boost.DataFormatError
        For a list without images, or naming an image that does not exist (the list, the line and the path).
    """
    source = Path(os.fspath(path))
    if not source.is_file():
        raise DataFormatError(f"{source}: no such background list")
    paths = []
    for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
        name = line.rstrip()
        if not name:
            break
        if name.startswith("#"):
            continue
        image = Path(name) if Path(name).is_absolute() else source.parent / name
        if not image.is_file():
            raise DataFormatError(f"{source}, line {number}: no image {name!r}")
        paths.append(image)
    if not paths:
        raise DataFormatError(f"{source}: lists no background image")
    return paths


def _gray(path: Path) -> np.ndarray:
    from .data import read_image
    return _eight_bit_gray(read_image(os.fspath(path)), "rgb")


def _image_windows(gray: np.ndarray, width: int, height: int, pass_index: int = 0) -> Iterator[np.ndarray]:
    """One image's windows, scale by scale, as OpenCV's negative reader cuts them on pass ``pass_index``."""
    rows, columns = gray.shape
    if columns < width or rows < height:
        return
    offset_x = min(pass_index % width, columns - width)
    offset_y = min(pass_index // width, rows - height)
    scale = max(np.float32(width + offset_x) / np.float32(columns), np.float32(height + offset_y) / np.float32(rows))
    size = (int(scale * np.float32(columns) + np.float32(0.5)), int(scale * np.float32(rows) + np.float32(0.5)))
    while True:
        image = opencv_resize(gray, *size)
        xs = [offset_x]
        while int(xs[-1] + np.float32(1.5) * width) < image.shape[1]:
            xs.append(xs[-1] + int(np.float32(0.5) * width))
        ys = [offset_y]
        while int(ys[-1] + np.float32(1.5) * height) < image.shape[0]:
            ys.append(ys[-1] + int(np.float32(0.5) * height))
        windows = [image[y:y + height, x:x + width] for y in ys for x in xs]
        windows = [window for window in windows if window.shape == (height, width)]
        if windows:
            yield np.stack(windows)
        scale = np.float32(scale * _SCALE_STEP)
        if scale > 1:
            return
        size = (int(scale * np.float32(columns)), int(scale * np.float32(rows)))


def background_windows(paths: Sequence[str | os.PathLike], width: int,
                       height: int) -> Callable[[], Iterator[np.ndarray]]:
    """A source of background windows for :func:`~bob_boost.vision.opencv_train.train_opencv_cascade`: a callable
    returning a new iterator over batches of ``(n, height, width)`` uint8 windows of the images at ``paths`` (see
    the module's description). The images are read once, on first use."""
    cache: list[np.ndarray] = []

    def windows() -> Iterator[np.ndarray]:
        if not cache:
            cache.extend(_gray(Path(os.fspath(path))) for path in paths)
        yield from _passes(cache, width, height)

    return windows


def _passes(grays: list[np.ndarray], width: int, height: int) -> Iterator[np.ndarray]:
    """The windows of every pass over the images (``w h`` passes, each with its offset)."""
    for pass_index in range(width * height):
        for gray in grays:
            yield from _image_windows(gray, width, height, pass_index)


def image_windows(images: Sequence[np.ndarray], width: int, height: int) -> Callable[[], Iterator[np.ndarray]]:
    """:func:`background_windows` of images in memory: 8-bit grey (H, W) or RGB (H, W, 3) arrays."""
    grays = [_eight_bit_gray(image, "rgb") for image in images]

    def windows() -> Iterator[np.ndarray]:
        yield from _passes(grays, width, height)

    return windows


def vec_positives(path: str | os.PathLike, width: int, height: int) -> np.ndarray:
    """The (n, height, width) uint8 samples of an ``opencv_createsamples`` ``.vec`` file (:func:`read_vec`)."""
    return read_vec(path, width, height)


def info_positives(path: str | os.PathLike, width: int, height: int) -> np.ndarray:
    """Every box of an info file cut from its grey image and resized to ``width`` x ``height``.

    ``opencv_createsamples -info`` shrinks a box with ``INTER_AREA``; here every box is resized with OpenCV's
    ``INTER_LINEAR_EXACT`` (bob_boost has no area resampling), so these positives can differ slightly from the
    ``.vec`` file it would write; a ``.vec`` file gives the same positives as OpenCV's.

    Raises
    ------
    bob_boost.DataFormatError
        For an info file :func:`read_info` refuses, or one without boxes.
    """
    samples = []
    for image_path, boxes in read_info(path):
        gray = _gray(image_path)
        for x, y, w, h in boxes.tolist():
            samples.append(opencv_resize(np.ascontiguousarray(gray[y:y + h, x:x + w]), width, height))
    if not samples:
        raise DataFormatError(f"{os.fspath(path)}: lists no box")
    return np.stack(samples)
