"""Data sets for examples: MNIST (bob's HDF5 layout, IDX files, or a verified download) and generated digits.

MNIST is looked for, in order, at the path the caller gives (an HDF5 file in
bob.learn.boosting's layout or a folder of the four original IDX files,
gzip-compressed or not), then in the user cache (``$BOB_BOOST_DATA`` or
``~/.cache/bob_boost``), and finally downloaded into that cache; every
downloaded file is checked against its SHA-256 sum before it is used.

:func:`make_digits` generates a small 8x8 digits set (values 0..16, like the
UCI optical digits), so examples and tests run offline without any download.
"""
from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from collections.abc import Sequence

import h5py
import numpy as np

from .exceptions import InvalidTypeError, InvalidValueError

#: Environment variable naming the data cache directory.
DATA_ENVIRONMENT_VARIABLE = "BOB_BOOST_DATA"

#: The four MNIST archives with their SHA-256 sums.
MNIST_FILES = {
    "train_data": ("train-images-idx3-ubyte.gz",
                   "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
    "train_labels": ("train-labels-idx1-ubyte.gz",
                     "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
    "test_data": ("t10k-images-idx3-ubyte.gz",
                  "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
    "test_labels": ("t10k-labels-idx1-ubyte.gz",
                    "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
}

#: Mirrors tried in order; each holds the four archives under the names above.
MNIST_MIRRORS = (
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
)

#: IDX type codes (third byte of the magic number) -> big-endian numpy dtype.
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}

Opener = Callable[[str], object]


@dataclass(frozen=True)
class MNIST:
    """MNIST split into training and test images.

    Attributes
    ----------
    train_data, test_data : numpy.ndarray
        (#samples, 784) uint8 pixel values 0..255, one row per image.
    train_labels, test_labels : numpy.ndarray
        (#samples,) uint8 digits 0..9.
    """

    train_data: np.ndarray
    train_labels: np.ndarray
    test_data: np.ndarray
    test_labels: np.ndarray

    def subset(self, digits: Sequence[int], number_per_class: int | None = None) -> "MNIST":
        """Keep only ``digits``, and at most the first ``number_per_class`` images of each digit per split."""
        arrays = []
        for data, labels in ((self.train_data, self.train_labels), (self.test_data, self.test_labels)):
            keep = np.isin(labels, digits)
            if number_per_class is not None:
                # rank of each image among the images of its own digit, in file order
                order = np.argsort(labels, kind="stable")
                rank = np.empty(labels.size, dtype=np.int64)
                starts = np.searchsorted(labels[order], labels[order])
                rank[order] = np.arange(labels.size) - starts
                keep &= rank < number_per_class
            arrays += [data[keep], labels[keep]]
        return MNIST(*arrays)


def data_home(directory: str | os.PathLike | None = None) -> Path:
    """Return the cache directory: ``directory``, else ``$BOB_BOOST_DATA``, else ``~/.cache/bob_boost``."""
    if directory is not None:
        return Path(directory)
    from_environment = os.environ.get(DATA_ENVIRONMENT_VARIABLE)
    if from_environment:
        return Path(from_environment)
    return Path.home() / ".cache" / "bob_boost"


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (as the original MNIST files are), gzip-compressed or not.

    Raises
    ------
    ValueError
        If the file is not a complete IDX file.
    """
    path = Path(path)
    with open(path, "rb") as handle:
        compressed = handle.read(2) == b"\x1f\x8b"
    try:
        with (gzip.open(path, "rb") if compressed else open(path, "rb")) as handle:
            content = handle.read()
    except (OSError, EOFError) as error:
        raise InvalidValueError(f"{path}: not a readable IDX file ({error})") from None
    if len(content) < 4 or content[:2] != b"\x00\x00" or content[2] not in _IDX_TYPES:
        raise InvalidValueError(f"{path}: not an IDX file (bad magic number {content[:4].hex()})")
    dtype = np.dtype(_IDX_TYPES[content[2]])
    ndim = content[3]
    header = 4 + 4 * ndim
    if ndim == 0 or len(content) < header:
        raise InvalidValueError(f"{path}: truncated IDX header")
    shape = tuple(int(n) for n in np.frombuffer(content, ">u4", ndim, 4))
    expected = header + int(np.prod(shape)) * dtype.itemsize
    if len(content) != expected:
        raise InvalidValueError(f"{path}: IDX header announces shape {shape} ({expected} bytes) but the file has "
                                f"{len(content)} bytes")
    return np.frombuffer(content, dtype, offset=header).reshape(shape).astype(dtype.newbyteorder("="))


def write_idx(path: str | os.PathLike, array: np.ndarray, compress: bool | None = None) -> None:
    """Write ``array`` as an IDX file; gzip-compressed when ``compress`` or when the name ends with ``.gz``."""
    path = Path(path)
    array = np.asarray(array)
    codes = {np.dtype(v).newbyteorder("="): k for k, v in _IDX_TYPES.items()}
    code = codes.get(array.dtype.newbyteorder("="))
    if code is None:
        raise InvalidTypeError(f"array: IDX cannot store dtype {array.dtype}")
    content = (bytes([0, 0, code, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
               + array.astype(_IDX_TYPES[code]).tobytes())
    if compress if compress is not None else path.suffix == ".gz":
        content = gzip.compress(content, mtime=0)
    path.write_bytes(content)


def load_mnist_hdf5(path: str | os.PathLike) -> MNIST:
    """Load MNIST from bob's HDF5 layout (``train/data``, ``train/labels``, ``test/data``, ``test/labels``)."""
    try:
        handle = h5py.File(path, "r")
    except OSError as error:
        raise InvalidValueError(f"{path}: not a readable HDF5 file ({error})") from None
    arrays = []
    with handle:
        for split in ("train", "test"):
            for name in ("data", "labels"):
                key = f"{split}/{name}"
                if not isinstance(handle.get(key), h5py.Dataset):
                    raise InvalidValueError(f"{path}: missing dataset {key!r} (expected bob's MNIST layout)")
                arrays.append(np.asarray(handle[key][()]))
    return _check_mnist(MNIST(*arrays), str(path))


def _find_idx(folder: Path, name: str) -> Path:
    """The IDX file ``name`` in ``folder``: compressed, uncompressed, or spelled ``train-images.idx3-ubyte``."""
    stem = name[:-3]
    candidates = [name, stem, stem.replace("-idx", ".idx", 1)]
    for candidate in candidates:
        if (folder / candidate).is_file():
            return folder / candidate
    raise FileNotFoundError(f"{folder}: no MNIST file {name} (nor uncompressed {stem})")


def load_mnist_idx(folder: str | os.PathLike) -> MNIST:
    """Load MNIST from a folder holding the four original IDX files (gzip-compressed or not)."""
    folder = Path(folder)
    arrays = [read_idx(_find_idx(folder, MNIST_FILES[key][0])) for key in MNIST_FILES]
    arrays[0] = arrays[0].reshape(arrays[0].shape[0], -1)
    arrays[2] = arrays[2].reshape(arrays[2].shape[0], -1)
    return _check_mnist(MNIST(*arrays), str(folder))


def _check_mnist(data: MNIST, source: str) -> MNIST:
    for split in ("train", "test"):
        images, labels = getattr(data, f"{split}_data"), getattr(data, f"{split}_labels")
        if images.ndim != 2 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
            raise InvalidValueError(f"{source}: {split} images {images.shape} and labels {labels.shape} do not match")
    return data


def sha256_of(path: str | os.PathLike) -> str:
    """Hex SHA-256 digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(url: str, destination: str | os.PathLike, sha256: str, opener: Opener | None = None) -> Path:
    """Download ``url`` to ``destination`` unless a file with the right checksum is already there.

    The download goes to a temporary file that is renamed into place only
    after its SHA-256 sum matched, so an interrupted or corrupted download
    never leaves a file that looks valid.

    Parameters
    ----------
    url : str
        Any URL ``opener`` understands (``urllib.request.urlopen`` handles
        ``https://`` and ``file://``).
    destination : path
        Where the file is kept.
    sha256 : str
        Expected hex SHA-256 digest.
    opener : callable, optional
        ``opener(url)`` returns a readable binary file object; defaults to
        ``urllib.request.urlopen``.

    Raises
    ------
    OSError
        If the download fails or the checksum does not match.
    """
    destination = Path(destination)
    if destination.is_file() and sha256_of(destination) == sha256:
        return destination
    destination.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(dir=destination.parent, prefix=destination.name, suffix=".part")
    try:
        with os.fdopen(descriptor, "wb") as output, (opener or urllib.request.urlopen)(url) as response:
            shutil.copyfileobj(response, output)
        actual = sha256_of(temporary)
        if actual != sha256:
            raise OSError(f"{url}: checksum mismatch (SHA-256 {actual}, expected {sha256})")
        os.replace(temporary, destination)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)
    return destination


def download_mnist(directory: str | os.PathLike | None = None, mirrors: Sequence[str] = MNIST_MIRRORS,
                   opener: Opener | None = None, files: dict[str, tuple[str, str]] | None = None) -> Path:
    """Download the four MNIST archives into ``data_home(directory) / "mnist"``, verifying their checksums.

    Each file is taken from the first mirror that delivers it with the right
    checksum; files already present with the right checksum are kept.

    Parameters
    ----------
    directory : path, optional
        Cache directory (default: :func:`data_home`).
    mirrors : sequence of str
        Base URLs ending with ``/``.
    opener : callable, optional
        See :func:`fetch`.
    files : dict, optional
        ``{key: (file name, sha256)}``; defaults to :data:`MNIST_FILES`.

    Returns
    -------
    pathlib.Path
        The folder holding the archives.

    Raises
    ------
    OSError
        If a file cannot be obtained from any mirror; the message lists why.
    """
    folder = data_home(directory) / "mnist"
    for name, sha256 in (files or MNIST_FILES).values():
        problems = []
        for mirror in mirrors:
            try:
                fetch(mirror + name, folder / name, sha256, opener)
                break
            except (OSError, ValueError) as error:  # urllib raises ValueError for malformed URLs
                problems.append(str(error))
        else:
            raise OSError(f"could not download {name} into {folder}: " + "; ".join(problems))
    return folder


def load_mnist(path: str | os.PathLike | None = None, download: bool = True,
               directory: str | os.PathLike | None = None, mirrors: Sequence[str] = MNIST_MIRRORS,
               opener: Opener | None = None) -> MNIST:
    """Load MNIST from ``path``, the cache, or the network.

    Parameters
    ----------
    path : path, optional
        An HDF5 file in bob's layout, or a folder of the original IDX files.
    download : bool
        Without ``path`` and without a complete cached copy, download the
        archives (see :func:`download_mnist`); otherwise raise.
    directory, mirrors, opener
        Passed to :func:`download_mnist`.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist, or nothing is cached and ``download`` is false.
    ValueError
        If the files are not MNIST in a supported layout.
    """
    if path is not None:
        path = Path(path)
        if path.is_dir():
            return load_mnist_idx(path)
        if path.is_file():
            return load_mnist_hdf5(path)
        raise FileNotFoundError(f"{path}: no such MNIST file or folder")
    folder = data_home(directory) / "mnist"
    cached = all((folder / name).is_file() for name, _ in MNIST_FILES.values())
    if not cached:
        if not download:
            raise FileNotFoundError(f"{folder}: no cached MNIST copy; give a path or allow the download")
        folder = download_mnist(directory, mirrors, opener)
    return load_mnist_idx(folder)


# -- generated digits -----------------------------------------------------

#: Strokes of each digit as polylines in the unit square (x right, y down).
_DIGIT_STROKES = (
    [(0.5, 0.0), (0.8, 0.2), (0.8, 0.8), (0.5, 1.0), (0.2, 0.8), (0.2, 0.2), (0.5, 0.0)],
    [(0.3, 0.25), (0.55, 0.0), (0.55, 1.0)],
    [(0.2, 0.2), (0.5, 0.0), (0.8, 0.2), (0.8, 0.4), (0.2, 1.0), (0.8, 1.0)],
    [(0.2, 0.0), (0.8, 0.0), (0.45, 0.45), (0.8, 0.7), (0.5, 1.0), (0.2, 0.9)],
    [(0.65, 1.0), (0.65, 0.0), (0.15, 0.65), (0.85, 0.65)],
    [(0.8, 0.0), (0.25, 0.0), (0.2, 0.45), (0.7, 0.45), (0.8, 0.75), (0.6, 1.0), (0.2, 0.95)],
    [(0.75, 0.0), (0.3, 0.4), (0.2, 0.75), (0.45, 1.0), (0.8, 0.8), (0.7, 0.5), (0.25, 0.6)],
    [(0.2, 0.0), (0.8, 0.0), (0.4, 1.0)],
    [(0.5, 0.5), (0.2, 0.25), (0.5, 0.0), (0.8, 0.25), (0.5, 0.5), (0.2, 0.75), (0.5, 1.0), (0.8, 0.75),
     (0.5, 0.5)],
    [(0.75, 0.4), (0.3, 0.45), (0.2, 0.2), (0.5, 0.0), (0.8, 0.2), (0.75, 0.4), (0.7, 1.0)],
)


def _vertices() -> np.ndarray:
    """(10, V, 2) polyline vertices per digit, padded by repeating the last vertex."""
    width = max(len(stroke) for stroke in _DIGIT_STROKES)
    return np.array([stroke + [stroke[-1]] * (width - len(stroke)) for stroke in _DIGIT_STROKES])


def make_digits(number_of_samples: int = 3000, random_state: int | None = 0,
                chunk_size: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """Generate handwritten-looking 8x8 digits.

    Each digit's strokes are drawn with a random affine distortion (scale,
    rotation, shear, shift) and a random pen width on a 32x32 binary raster;
    counting the set pixels of each 4x4 block gives 8x8 images with integer
    values 0..16, as in the UCI optical-digits data. The classes are
    balanced (sample ``i`` is digit ``i % 10``) and a given ``random_state``
    always gives the same data.

    Parameters
    ----------
    number_of_samples : int
        Number of images.
    random_state : int, optional
        Seed of the generator.
    chunk_size : int
        Images rendered at once (bounds the memory used).

    Returns
    -------
    images : numpy.ndarray
        (#samples, 64) uint8 values in 0..16.
    labels : numpy.ndarray
        (#samples,) int64 digits.
    """
    if isinstance(number_of_samples, bool) or not isinstance(number_of_samples, (int, np.integer)) \
            or number_of_samples < 1:
        raise InvalidValueError(f"number_of_samples: expected a positive integer, got {number_of_samples!r}")
    rng = np.random.default_rng(random_state)
    labels = np.arange(number_of_samples) % 10
    angle = rng.normal(0.0, 0.12, number_of_samples)
    shear = rng.normal(0.0, 0.15, number_of_samples)
    scale = rng.uniform(0.75, 0.95, (number_of_samples, 2))
    shift = rng.uniform(-0.07, 0.07, (number_of_samples, 2))
    pen = rng.uniform(0.04, 0.07, number_of_samples)
    # maps glyph coordinates (centred on 0) to image coordinates in [0, 1]
    cos, sin = np.cos(angle), np.sin(angle)
    rotation = np.stack([np.stack([cos, -sin], -1), np.stack([sin, cos], -1)], -2)
    shearing = np.zeros((number_of_samples, 2, 2))
    shearing[:, 0, 0] = shearing[:, 1, 1] = 1.0
    shearing[:, 0, 1] = shear
    transform = rotation @ shearing * scale[:, np.newaxis, :]
    # every vertex moves a little on its own, so shapes vary beyond the affine distortion
    vertices = _vertices()[labels] - 0.5
    vertices += rng.normal(0.0, 0.04, vertices.shape)
    vertices = np.einsum("nij,nvj->nvi", transform, vertices) + 0.5 + shift[:, np.newaxis]
    start, end = vertices[:, :-1], vertices[:, 1:]

    grid = ((np.arange(32) + 0.5) / 32.0).astype(np.float32)
    pixel_x, pixel_y = (g.reshape(1, -1) for g in np.meshgrid(grid, grid, indexing="xy"))  # (1, 1024)
    images = np.empty((number_of_samples, 64), dtype=np.uint8)
    for first in range(0, number_of_samples, chunk_size):
        part = slice(first, first + chunk_size)
        a, b = start[part].astype(np.float32), end[part].astype(np.float32)  # (n, S, 2)
        direction = b - a
        length2 = np.maximum((direction ** 2).sum(-1), 1e-12)
        nearest = np.full((a.shape[0], 1024), np.inf, dtype=np.float32)
        for s in range(a.shape[1]):  # squared distance of every pixel to segment s, kept as a running minimum
            ax, ay = a[:, s, 0:1], a[:, s, 1:2]
            dx, dy = direction[:, s, 0:1], direction[:, s, 1:2]
            t = np.clip(((pixel_x - ax) * dx + (pixel_y - ay) * dy) / length2[:, s:s + 1], 0.0, 1.0)
            np.minimum(nearest, (ax + t * dx - pixel_x) ** 2 + (ay + t * dy - pixel_y) ** 2, out=nearest)
        raster = (nearest < (pen[part, np.newaxis] ** 2)).reshape(-1, 8, 4, 8, 4)
        images[part] = raster.sum(axis=(2, 4)).reshape(-1, 64)
    return images, labels
