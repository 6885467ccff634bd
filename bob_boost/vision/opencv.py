"""OpenCV's cascade files run as OpenCV 4's ``CascadeClassifier.detectMultiScale`` runs them.

:class:`CascadeClassifier` reads an OpenCV Haar or LBP cascade (XML, :mod:`.opencv_xml`) and finds its objects
with OpenCV 4's own procedure, so that the boxes are OpenCV's:

1. a colour image is made grey as OpenCV does (BGR order, ``(3735 B + 19235 G + 9798 R + 2^14) >> 15``);
2. the scales are the powers of ``scale_factor`` (products repeated in double precision) whose windows fit the
   image, within ``min_size`` and ``max_size`` (when none does, the one closest to ``min_size``);
3. at each scale ``s`` the image is resized to ``round(width / s) x round(height / s)`` with OpenCV's
   bit-exact bilinear interpolation (8-bit fixed-point weights), and its integral images computed;
4. the windows of the base size, ``step = 1`` pixel apart at scales of 2 and more and 2 below (the rows OpenCV's
   parallel stripes cover: its stripes are whole numbers of steps rounded down, so that it skips the last row
   of windows at some sizes, and so does this), run the stages
   (Haar features normalised by the window's standard deviation over its interior, in float32 as OpenCV
   computes them; windows of nearly uniform grey rejected; LBP codes of 3x3 blocks); a window rejected by the
   first stage skips the next one on its row;
5. the accepted windows, mapped back to the image, are grouped (:func:`~bob_boost.vision.group_rectangles`,
   OpenCV's ``groupRectangles`` with ``eps = 0.2``) and clipped to the image.

A bob_boost HDF5 cascade (:class:`~bob_boost.vision.Cascade`) is accepted too and runs with
:func:`~bob_boost.vision.detect`, which scales the features rather than the image.
"""
from __future__ import annotations

import numbers
import os

import numpy as np

from .._validation import check_choice, check_scalar
from ..engine.threads import check_threads, run_blocks
from ..exceptions import InvalidTypeError, InvalidValueError
from ._opencv_kernels import ACCEPTED, integrals, resize_rows, scan_rows, scan_rows_haar_stumps
from .cascade import Cascade
from .detector import GROUPING_EPS, Detections, _check_size, detect, group_rectangles
from .opencv_xml import OpenCVCascade, read_opencv_cascade

#: A window not scanned (skipped after a first-stage rejection, or off the step grid).
UNSCANNED = -3

#: OpenCV's stage thresholds are read as float32 less this (``THRESHOLD_EPS``).
THRESHOLD_EPS = np.float32(1e-5)

#: Windows per block of rows handed to a thread (about: whole rows of windows).
BLOCK_WINDOWS = 2048

#: The scales scanned in one parallel pass hold at most about this many integral-image pixels (int32, two or
#: three images each).
SCAN_PIXELS = 1 << 24


def bgr_to_gray(image: np.ndarray) -> np.ndarray:
    """OpenCV's ``COLOR_BGR2GRAY`` of an 8-bit (H, W, 3 or 4) image (alpha ignored)."""
    pixels = image.astype(np.int64)
    gray = (3735 * pixels[..., 0] + 19235 * pixels[..., 1] + 9798 * pixels[..., 2] + 16384) >> 15
    return gray.astype(np.uint8)


def _eight_bit_gray(image, channels: str) -> np.ndarray:
    """The validated grey uint8 image (a colour image converted in ``channels`` order)."""
    array = np.asarray(image)
    if array.dtype == bool or not np.issubdtype(array.dtype, np.integer):
        raise InvalidTypeError(f"image: OpenCV's cascades run on 8-bit images; got dtype {array.dtype} (convert, "
                               f"e.g. with skimage.util.img_as_ubyte)")
    if array.ndim == 3 and array.shape[2] in (3, 4):
        if channels == "rgb":
            array = array[..., [2, 1, 0]]
    elif array.ndim != 2:
        raise InvalidValueError(f"image: expected (H, W) grey or (H, W, 3 or 4) colour, got shape {array.shape}")
    if array.size == 0:
        raise InvalidValueError("image: is empty")
    if array.min() < 0 or array.max() > 255:
        raise InvalidValueError("image: 8-bit values 0..255 expected")
    array = array.astype(np.uint8)
    return bgr_to_gray(array) if array.ndim == 3 else array


def opencv_scales(image_size: tuple[int, int], window: tuple[int, int], scale_factor: float,
                  min_size: tuple[int, int], max_size: tuple[int, int]) -> list[np.float32]:
    """OpenCV 4's scales for an image of ``(width, height)`` and a base window ``(width, height)``: every
    ``scale_factor^k`` (float32) whose window fits, within the sizes (0: no limit); when none is within them, the
    one whose window is closest to ``min_size``."""
    width, height = image_size
    if width < window[0] or height < window[1]:
        return []
    every = []
    factor = 1.0
    while round(window[0] * factor) <= width and round(window[1] * factor) <= height:
        every.append(np.float32(factor))
        factor *= scale_factor
    largest = (width, height) if 0 in max_size else max_size

    def size_at(scale: np.float32) -> tuple[int, int]:
        return round(float(np.float32(window[0]) * scale)), round(float(np.float32(window[1]) * scale))
    kept = []
    for scale in every:
        w, h = size_at(scale)
        if w > largest[0] or h > largest[1]:
            break
        if w < min_size[0] or h < min_size[1]:
            continue
        kept.append(scale)
    if not kept and every:
        distances = [(min_size[0] - w) ** 2 + (min_size[1] - h) ** 2 for w, h in map(size_at, every)]
        kept = [every[int(np.argmin(distances))]]
    return kept


def _axis(source: int, target: int) -> tuple[np.ndarray, ...]:
    """OpenCV's ``INTER_LINEAR_EXACT`` source indices and 8-bit weights along one axis (in double precision, as its
    soft-float computes them; rounded half to even)."""
    scale = 1.0 / (target / source)
    f = scale * (np.arange(target) + 0.5) - 0.5
    i = np.floor(f).astype(np.int64)
    inside = (i >= 0) & (i < source - 1) & (source > 1)
    second_weight = np.where(inside, np.maximum(np.rint((f - i) * 256), 0), 0).astype(np.int64)
    # left of the first source pixel (or a one-pixel source) its value, right of the last the last one's
    first = np.where(inside, i, np.where((i >= 0) & (source > 1), source - 1, 0))
    second = np.where(inside, i + 1, first)
    return first, second, 256 - second_weight, second_weight


def opencv_resize(gray: np.ndarray, width: int, height: int) -> np.ndarray:
    """OpenCV's ``resize(..., INTER_LINEAR_EXACT)`` of a grey uint8 image to ``width x height``."""
    if (height, width) == gray.shape:
        return gray.copy()
    x0, x1, cx0, cx1 = _axis(gray.shape[1], width)
    y0, y1, cy0, cy1 = _axis(gray.shape[0], height)
    out = np.empty((height, width), np.uint8)
    resize_rows(gray, x0, x1, cx0, cx1, y0, y1, cy0, cy1, out)
    return out


class CascadeClassifier:
    """An object detector from a cascade file, with OpenCV's ``cv2.CascadeClassifier`` interface.

    Parameters
    ----------
    filename : str or os.PathLike, optional
        An OpenCV cascade XML file (Haar or LBP, either layout) or a bob_boost HDF5 cascade; :meth:`load` can
        read it later.

    Raises
    ------
    bob_boost.ModelFormatError
        For a file that is neither.
    """

    def __init__(self, filename: str | os.PathLike | None = None) -> None:
        self.cascade: OpenCVCascade | Cascade | None = None
        if filename is not None:
            self.load(filename)

    def load(self, filename: str | os.PathLike) -> bool:
        """Read ``filename`` (see the class); True, as OpenCV's ``load`` returns on success (a failure raises)."""
        path = os.fspath(filename)
        with open(path, "rb") as stream:
            hdf5 = stream.read(8) == b"\x89HDF\r\n\x1a\n"
        self.cascade = Cascade.load(path) if hdf5 else read_opencv_cascade(path)
        return True

    def empty(self) -> bool:
        """Whether no cascade is loaded."""
        return self.cascade is None

    def getOriginalWindowSize(self) -> tuple[int, int]:  # noqa: N802 (OpenCV's name)
        """The base window ``(width, height)``."""
        cascade = self._loaded()
        if isinstance(cascade, Cascade):
            return cascade.window_size[1], cascade.window_size[0]
        return cascade.width, cascade.height

    def _loaded(self) -> OpenCVCascade | Cascade:
        if self.cascade is None:
            raise InvalidValueError("cascade: none loaded (give a file to CascadeClassifier or load)")
        return self.cascade

    def detect_multi_scale(self, image, scale_factor: float = 1.1, min_neighbors: int = 3, flags: int = 0,
                           min_size=None, max_size=None, *, channels: str = "bgr",
                           n_threads: int | None = None) -> np.ndarray:
        """The objects' boxes in ``image``, as OpenCV 4's ``detectMultiScale`` finds them (see the module).

        Parameters
        ----------
        image : array_like
            (H, W) grey or (H, W, 3 or 4) colour 8-bit image (values 0..255).
        scale_factor : float
            > 1: ratio between consecutive scales.
        min_neighbors : int
            >= 0: a box needs more than this many raw detections; 0 returns every raw window.
        flags : int
            Ignored, as OpenCV 4 ignores it.
        min_size, max_size : (int, int) or int, optional
            Smallest and largest window (width, height); default none (OpenCV's ``()``).
        channels : {"bgr", "rgb"}
            The order of a colour image's channels: OpenCV's (``cv2.imread``) or that of scikit-image, PIL and
            matplotlib.
        n_threads : int or None
            Threads (None: every core); the boxes do not depend on it.

        Returns
        -------
        numpy.ndarray
            (n, 4) int32 boxes ``x, y, width, height``.
        """
        return self.detect(image, scale_factor, min_neighbors, flags, min_size, max_size, channels=channels,
                           n_threads=n_threads).boxes.astype(np.int32)

    def detect(self, image, scale_factor: float = 1.1, min_neighbors: int = 3, flags: int = 0, min_size=None,
               max_size=None, *, channels: str = "bgr", n_threads: int | None = None) -> Detections:
        """:meth:`detect_multi_scale`'s boxes with their scores (the raw windows each box merges; 1 for raw
        windows) and the windows scanned, as :func:`~bob_boost.vision.detect` reports them (for an OpenCV cascade
        ``features_evaluated`` is not counted: 0)."""
        cascade = self._loaded()
        check_choice(channels, "channels", ("bgr", "rgb"))
        scale_factor = float(check_scalar(scale_factor, "scale_factor", numbers.Real, min_val=1,
                                          include_boundaries="neither"))
        min_neighbors = int(check_scalar(min_neighbors, "min_neighbors", numbers.Integral, min_val=0))
        check_scalar(flags, "flags", numbers.Integral)
        minimum, maximum = _check_size(min_size, "min_size"), _check_size(max_size, "max_size")
        n_threads = check_threads(n_threads)
        if isinstance(cascade, Cascade):
            rgb = np.asarray(image)
            if rgb.ndim == 3 and channels == "bgr":
                rgb = rgb[..., [2, 1, 0]]
            return detect(rgb, cascade, scale_factor=scale_factor, min_size=minimum, max_size=maximum,
                          min_neighbors=min_neighbors, n_threads=n_threads)
        gray = _eight_bit_gray(image, channels)
        if gray.shape[1] < cascade.width or gray.shape[0] < cascade.height:
            raise InvalidValueError(f"image: {gray.shape[1]}x{gray.shape[0]} is smaller than the cascade's "
                                    f"{cascade.width}x{cascade.height} window ({cascade.source})")
        raw, windows = scan_image(cascade, gray, scale_factor, minimum or (0, 0), maximum or (0, 0), n_threads)
        if min_neighbors == 0:
            boxes, counts = raw, np.ones(raw.shape[0], np.int64)
        else:
            boxes, counts = group_rectangles(raw, min_neighbors, GROUPING_EPS)
        boxes, kept = _clipped(boxes, gray.shape)
        return Detections(boxes, counts[kept].astype(np.float64), windows, 0)

    def detectMultiScale(self, image, scaleFactor: float = 1.1, minNeighbors: int = 3, flags: int = 0,  # noqa: N802,N803
                         minSize=(), maxSize=()) -> np.ndarray:  # noqa: N803 (OpenCV's names, for ported code)
        """:meth:`detect_multi_scale` with OpenCV's argument names and defaults (a colour image is BGR)."""
        return self.detect_multi_scale(image, scaleFactor, minNeighbors, flags, tuple(minSize) or None,
                                       tuple(maxSize) or None)


def _clipped(boxes: np.ndarray, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Boxes cut to the image, empty ones dropped (OpenCV's ``clipObjects``), and which were kept."""
    boxes = np.asarray(boxes, np.int64).reshape(-1, 4)
    x0, y0 = np.maximum(boxes[:, 0], 0), np.maximum(boxes[:, 1], 0)
    x1 = np.minimum(boxes[:, 0] + boxes[:, 2], shape[1])
    y1 = np.minimum(boxes[:, 1] + boxes[:, 3], shape[0])
    keep = (x1 > x0) & (y1 > y0)
    return np.column_stack([x0, y0, x1 - x0, y1 - y0])[keep], keep


def _arrays(cascade: OpenCVCascade) -> dict:
    """The cascade's arrays in the types OpenCV evaluates them in."""
    stump_only = bool(np.all(np.diff(cascade.weak_nodes) == 1))
    left, right = cascade.node_left, cascade.node_right
    if stump_only:  # OpenCV then takes leaf 0 below the threshold and leaf 1 above, whatever the children say
        left, right = np.zeros_like(left), np.full_like(right, -1)
    thresholds = (cascade.stage_thresholds.astype(np.float32) - THRESHOLD_EPS).astype(np.float32)
    return {"stage_weak": cascade.stage_weak, "stage_threshold": thresholds, "weak_nodes": cascade.weak_nodes,
            "weak_leaves": cascade.weak_leaves, "node_left": left, "node_right": right,
            "node_threshold": cascade.node_threshold.astype(np.float32),
            "node_subset": cascade.node_subset.reshape(-1, 8) if cascade.node_subset.size else
            np.zeros((1, 8), np.int32), "leaves": cascade.leaves.astype(np.float32)}


class ScanFeatures:
    """Features in scan order (a cascade's split by split, or a trainer's), as row and column parts of
    integral-image offsets: the offsets for integral images of row length ``stride`` are
    ``rows * stride + columns``. Haar: 12 offsets per feature (three rectangles' ``+ - - +`` corners, an unused
    rectangle's all 0), weights (3, float32), rectangle count and tilt; LBP: the 16 corners of its 3x3 block grid.

    Parameters
    ----------
    lbp : bool
        LBP blocks (rectangle 0 of each) rather than Haar rectangles.
    rects, weights, tilted : numpy.ndarray
        (#features, 3, 4) ``x, y, w, h``, (#features, 3) weights and (#features,) tilts, as
        :class:`~bob_boost.vision.opencv_xml.OpenCVCascade` holds them.
    """

    def __init__(self, lbp: bool, rects: np.ndarray, weights: np.ndarray, tilted: np.ndarray) -> None:
        x, y, w, h = (rects[:, :, k].astype(np.int64) for k in range(4))
        self.lbp = lbp
        if self.lbp:
            steps = np.arange(4)
            self.rows = (y[:, :1, None] + steps[None, :, None] * h[:, :1, None]) + 0 * steps[None, None, :]
            self.columns = 0 * steps[None, :, None] + (x[:, :1, None] + steps[None, None, :] * w[:, :1, None])
            self.rows, self.columns = self.rows.reshape(-1, 16), self.columns.reshape(-1, 16)
            self.weights, self.rectangles = np.zeros(3, np.float32), np.zeros(1, np.int8)
            self.tilted = np.zeros(1, bool)
            return
        self.weights = weights.astype(np.float32)
        self.tilted = np.ascontiguousarray(tilted, dtype=bool)
        upright_rows = np.stack([y, y, y + h, y + h], -1)
        upright_columns = np.stack([x, x + w, x, x + w], -1)
        rotated_rows = np.stack([y, y + h, y + w, y + w + h], -1)
        rotated_columns = np.stack([x, x - h, x + w, x + w - h], -1)
        turned = self.tilted[:, None, None]
        self.rows = np.where(turned, rotated_rows, upright_rows)
        self.columns = np.where(turned, rotated_columns, upright_columns)
        self.rows[self.weights == 0] = 0
        self.columns[self.weights == 0] = 0
        self.rows, self.columns = self.rows.reshape(-1), self.columns.reshape(-1)
        # a third rectangle of weight 0 is skipped, as OpenCV skips it
        self.rectangles = np.where(self.weights[:, 2] != 0, 3, 2).astype(np.int8)
        self.weights = self.weights.ravel()

    @classmethod
    def of_splits(cls, cascade: OpenCVCascade) -> "ScanFeatures":
        """Every split's feature of ``cascade``, in split order."""
        features = cascade.node_feature
        return cls(cascade.feature_type == "LBP", cascade.rects[features], cascade.rect_weights[features],
                   cascade.tilted[features])

    def arrays(self, stride: int) -> tuple[np.ndarray, ...]:
        """``(corners, weights, rectangles, tilted, grid)`` of :func:`scan_rows` for this stride."""
        offsets = self.rows * stride + self.columns
        if self.lbp:
            return np.zeros(12, np.int64), self.weights, self.rectangles, self.tilted, offsets
        return offsets, self.weights, self.rectangles, self.tilted, np.zeros((1, 16), np.int64)


def scan_image(cascade: OpenCVCascade, gray: np.ndarray, scale_factor: float, min_size: tuple[int, int],
               max_size: tuple[int, int], n_threads: int) -> tuple[np.ndarray, int]:
    """OpenCV 4's raw detections (before grouping) of ``cascade`` in the grey uint8 image ``gray``: (n, 4) int64
    boxes, scale by scale, then row and column; and the number of windows scanned.

    The scales' integral images are made first and their rows of windows then scanned in one parallel pass (in
    groups of scales of at most :data:`SCAN_PIXELS` integral-image pixels)."""
    arrays = tuple(_arrays(cascade).values())
    splits = ScanFeatures.of_splits(cascade)
    stumps = bool(np.all(np.diff(cascade.weak_nodes) == 1))
    lbp = cascade.feature_type == "LBP"
    # a stump's two leaves side by side (its split is the weak classifier's only one)
    stump_leaves = arrays[-1][np.column_stack([cascade.weak_leaves[:-1], cascade.weak_leaves[:-1] + 1])].ravel() \
        if stumps else None
    tilted_too = bool(cascade.tilted.any())
    height, width = gray.shape
    norm_area = float((cascade.width - 2) * (cascade.height - 2))
    found, group, pixels, windows = [], [], 0, 0
    scales = opencv_scales((width, height), (cascade.width, cascade.height), scale_factor, min_size, max_size)
    stripes = 0
    for n, scale in enumerate(scales):
        scaled_w = round(float(np.float32(width) / scale))
        scaled_h = round(float(np.float32(height) / scale))
        step = 1 if scale >= 2 else 2
        columns, rows = max(scaled_w + 1 - cascade.width, 0), max(scaled_h + 1 - cascade.height, 0)
        if n == 0:
            stripes = -(-columns // 32)
        # OpenCV splits every scale's rows into as many stripes as the first scale has 32-column groups, each a
        # whole number of steps rounded down: rows past the last stripe are not scanned
        rows = min(rows, stripes * max((rows // step + stripes - 1) // stripes, 1) * step) if stripes else 0
        if columns and rows:
            total = np.zeros((scaled_h + 1, scaled_w + 1), np.int32)
            squares = np.zeros_like(total)
            tilted = np.zeros_like(total) if tilted_too else np.zeros((1, 1), np.int32)
            stride = scaled_w + 1
            norm = np.array([stride + 1, stride + cascade.width - 1, (cascade.height - 1) * stride + 1,
                             (cascade.height - 1) * stride + cascade.width - 1], np.int64)
            out = np.full((rows, columns), UNSCANNED, np.int8)
            if stumps and not lbp:
                kernel = scan_rows_haar_stumps
                head = (total.ravel(), squares.ravel(), tilted.ravel(), stride)
                tail = (step, columns, norm, norm_area, *splits.arrays(stride)[:4], arrays[0], arrays[1],
                        arrays[6], stump_leaves, out)
            else:
                kernel = scan_rows
                head = (total.ravel(), squares.ravel(), tilted.ravel(), stride, lbp, stumps)
                tail = (step, columns, norm, norm_area, *splits.arrays(stride), *arrays, out)
            # about BLOCK_WINDOWS windows a block, so that blocks of equal counts are equal work
            span = step * max(1, BLOCK_WINDOWS // -(-columns // step))
            group.append((scale, out, [(kernel,) + head + (start, min(start + span, rows)) + tail
                                       for start in range(0, rows, span)],
                          (gray, scaled_w, scaled_h, tilted_too, total, squares, tilted)))
            pixels += total.size
        if group and (pixels > SCAN_PIXELS or n == len(scales) - 1):
            # the scales' images and integral images, alternate scales to each half of the threads (the scales
            # shrink, so that the halves' work is about even)
            run_blocks(_prepare, [job[3] for job in group[0::2] + group[1::2]], n_threads, work=float(pixels))
            blocks = [block for _, _, scale_blocks, _ in group for block in scale_blocks]
            # every other block to each half of the threads: neighbouring rows cost about the same
            blocks = blocks[0::2] + blocks[1::2]
            run_blocks(_scan, blocks, n_threads, work=float(sum(job[1].size for job in group)) * 64)
            found.extend(_accepted(scale, out, cascade) for scale, out, _, _ in group)
            windows += sum(int(np.count_nonzero(out != UNSCANNED)) for _, out, _, _ in group)
            group, pixels = [], 0
    return (np.concatenate(found) if found else np.empty((0, 4), np.int64)), windows


def _scan(kernel, *arguments) -> None:
    """Run a block of the scan with its kernel."""
    kernel(*arguments)


def _prepare(gray: np.ndarray, width: int, height: int, tilted_too: bool, total: np.ndarray, squares: np.ndarray,
             tilted: np.ndarray) -> None:
    """One scale's resized image and its integral images (into ``total``, ``squares``, ``tilted``)."""
    integrals(opencv_resize(gray, width, height), tilted_too, total, squares, tilted)


def _accepted(scale: np.float32, out: np.ndarray, cascade: OpenCVCascade) -> np.ndarray:
    """The accepted windows of one scale as boxes of the image: ``round(x s), round(y s)`` (float32 products) and
    the base window times ``s``."""
    ys, xs = np.nonzero(out == ACCEPTED)
    size = (round(float(np.float32(cascade.width) * scale)), round(float(np.float32(cascade.height) * scale)))
    lefts = np.rint(xs.astype(np.float32) * scale).astype(np.int64)
    tops = np.rint(ys.astype(np.float32) * scale).astype(np.int64)
    return np.column_stack([lefts, tops, np.full(xs.size, size[0]), np.full(xs.size, size[1])])
