"""The training inputs of OpenCV's cascade tools: ``.vec`` files of positive samples and info files of boxes.

A ``.vec`` file (``opencv_createsamples`` writes it, ``opencv_traincascade`` reads it) holds, little-endian: the
number of samples (int32), the pixels per sample ``w * h`` (int32), two unused int16, then per sample one unused
byte and its ``w * h`` grey values as int16, row by row (OpenCV keeps their low byte). An info file lists one
image per line: its path (relative to the info file's folder), the number of boxes and each box ``x y w h``.

Every problem is a :class:`~bob_boost.exceptions.DataFormatError` naming the file (and line) and the problem,
found before any array is sized from the file.
"""
from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np

from ..exceptions import DataFormatError, InvalidValueError
from ..io.hdf5 import atomic_path

#: The ``.vec`` header: sample count, pixels per sample, two unused int16.
VEC_HEADER = struct.Struct("<iihh")


def read_vec(path: str | os.PathLike, width: int, height: int) -> np.ndarray:
    """The samples of a ``.vec`` file as a (#samples, height, width) uint8 array.

    Parameters
    ----------
    path : str or os.PathLike
        The file.
    width, height : int
        The sample size the caller trains at (``opencv_traincascade``'s ``-w`` and ``-h``).

    Raises
    ------
    bob_boost.DataFormatError
        For a header that is not a ``.vec`` header, a sample size other than ``width x height``, or a file
        holding fewer samples than its header says.
    """
    source = os.fspath(path)
    size = os.path.getsize(source)
    with open(source, "rb") as stream:
        header = stream.read(VEC_HEADER.size)
        if len(header) < VEC_HEADER.size:
            raise DataFormatError(f"{source}: not a .vec file: {len(header)} bytes, shorter than its header")
        count, pixels, _, _ = VEC_HEADER.unpack(header)
        if pixels != width * height:
            raise DataFormatError(f"{source}: samples of {pixels} pixels, not {width}x{height} = {width * height} "
                                  f"(the -w and -h it was made with differ)")
        record = 1 + 2 * pixels
        if count < 0 or VEC_HEADER.size + count * record > size:
            raise DataFormatError(f"{source}: its header says {count} samples of {pixels} pixels, but the file holds "
                                  f"{max(size - VEC_HEADER.size, 0) // record}")
        data = np.frombuffer(stream.read(count * record), dtype=np.uint8).reshape(count, record)
    values = data[:, 1:].copy().view("<i2")
    return (values & 0xFF).astype(np.uint8).reshape(count, height, width)


def write_vec(samples, path: str | os.PathLike) -> None:
    """Write (#samples, height, width) 8-bit samples as a ``.vec`` file (atomically).

    Raises
    ------
    ValueError
        For samples that are not a 3-d array of values 0..255.
    """
    array = np.asarray(samples)
    if array.ndim != 3 or not np.issubdtype(array.dtype, np.integer) or array.size and (
            array.min() < 0 or array.max() > 255):
        raise InvalidValueError("samples: expected a (#samples, height, width) array of 8-bit values 0..255")
    count, height, width = array.shape
    records = np.zeros((count, 1 + 2 * height * width), np.uint8)
    records[:, 1:] = array.reshape(count, -1).astype("<i2").view(np.uint8)
    with atomic_path(path, ".vec.tmp") as temporary, open(temporary, "wb") as stream:
        stream.write(VEC_HEADER.pack(count, height * width, 0, 0))
        stream.write(records.tobytes())


def read_info(path: str | os.PathLike, image_size=None) -> list[tuple[Path, np.ndarray]]:
    """The images and boxes of an info file: ``[(image path, (n, 4) int64 boxes x, y, w, h), ...]``.

    Parameters
    ----------
    path : str or os.PathLike
        The info file.
    image_size : callable, optional
        ``image_size(path) -> (width, height)``; default: read from the image file (the ``faces`` extra's
        imageio). The boxes must lie in their images.

    Raises
    ------
    bob_boost.DataFormatError
        For a line that is not ``path count x y w h ...``, a box count other than the boxes given, an empty box,
        a missing image, or a box outside its image (naming the file, the line and the problem).
    """
    source = os.fspath(path)
    folder = Path(source).parent
    if image_size is None:
        from .data import read_image

        def image_size(image_path):
            pixels = read_image(os.fspath(image_path))
            return pixels.shape[1], pixels.shape[0]
    entries = []
    with open(source) as stream:
        for number, line in enumerate(stream, start=1):
            words = line.split()
            if not words:
                continue
            where = f"{source}, line {number}"
            try:
                count = int(words[1])
                numbers = [int(word) for word in words[2:]]
            except (IndexError, ValueError):
                raise DataFormatError(f"{where}: expected 'image count x y w h ...', got {line.strip()[:80]!r}") \
                    from None
            if count < 0 or len(numbers) != 4 * count:
                raise DataFormatError(f"{where}: {count} boxes announced, {len(numbers) / 4:g} given")
            boxes = np.array(numbers, dtype=np.int64).reshape(count, 4)
            if np.any(boxes[:, 2:] <= 0) or np.any(boxes[:, :2] < 0):
                raise DataFormatError(f"{where}: a box has a negative corner or an empty size")
            image = folder / words[0]
            if not image.is_file():
                raise DataFormatError(f"{where}: image {words[0]} does not exist")
            width, height = image_size(image)
            outside = (boxes[:, 0] + boxes[:, 2] > width) | (boxes[:, 1] + boxes[:, 3] > height)
            if outside.any():
                raise DataFormatError(f"{where}: box {boxes[outside][0].tolist()} falls outside {words[0]} "
                                      f"({width}x{height})")
            entries.append((image, boxes))
    return entries
