"""Low-level HDF5 helpers shared by every machine's ``save``/``load``.

Readers validate what they read and raise :class:`~bob_boost.ModelFormatError`
naming the file, the group and the problem; they accept the variants that
bob.learn.boosting writes (scalars as shape () or (1,), strings as
fixed-length byte arrays, integer arrays where floats are expected).
"""
from __future__ import annotations

import contextlib
import math
import mmap
import os
import stat
import struct
import tempfile
from collections.abc import Iterator

import h5py
import numpy as np

from ..exceptions import ModelFormatError

#: Largest dataset a model may hold (2**27 float64 = 1 GiB); a file declaring
#: more is rejected before anything is allocated.
MAX_ELEMENTS = 1 << 27

#: A filtered (compressed) dataset may hold at most this many times its stored bytes, beyond
#: :data:`EXPANSION_FLOOR` bytes: deflate can expand a few kilobytes into a gigabyte of zeros, and
#: model data (thresholds, indices, leaf values) compresses far less.
MAX_EXPANSION = 100
EXPANSION_FLOOR = 1 << 24


def where(group: h5py.Group) -> str:
    """Return ``"<file>:<group>"`` for error messages."""
    try:
        return f"{group.file.filename}:{group.name}"
    except Exception:  # a closed or anonymous group still needs a message
        return "<HDF5 group>"


def fail(group: h5py.Group, problem: str) -> ModelFormatError:
    """Build the package's format error for ``group``."""
    return ModelFormatError(f"{where(group)}: {problem}")


def shorten(value, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters, for messages quoting what a (hostile) file holds."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 5]}...{text[-2:]}"


def has_item(group: h5py.Group, name: str) -> bool:
    """Whether ``group`` has a link called ``name``, even a dangling one (which reading then reports)."""
    return group.get(name, getlink=True) is not None


def _open(group: h5py.Group, name: str, missing: str):
    """The low-level object ``name`` of ``group`` (see :func:`get_item`); ``missing`` is the message when there is
    no such link.

    h5py's low-level calls, not its high-level ``get``: a model's loader opens every dataset of every weak machine
    (eight a tree), and the high-level path's lookups and checks made loading 1.5 to 2 times slower
    (``bench/bench_model_files.py``: a model of 500 trees of 31 leaves in 2.0-2.2 s, now 1.1-1.2 s).
    """
    key = name.encode()
    if not group.id.links.exists(key):
        raise fail(group, missing)
    link = group.id.links.get_info(key)
    if link.type == h5py.h5l.TYPE_EXTERNAL:
        external = group.get(name, getlink=True)
        raise fail(group, f"{name!r} is an external link to {external.filename}:{external.path}; a model keeps all "
                          "its data in its own file")
    if link.type not in (h5py.h5l.TYPE_HARD, h5py.h5l.TYPE_SOFT):
        raise TypeError(f"Unknown link type {link.type}")  # as h5py's get(getlink=True), a damaged file
    try:
        item = h5py.h5o.open(group.id, key, lapl=getattr(group, "_lapl", None))
    except KeyError:  # h5py's get returns None: the link leads nowhere
        target = f" to {group.id.links.get_val(key).decode(errors='replace')!r}" if link.type == h5py.h5l.TYPE_SOFT \
            else ""
        raise fail(group, f"damaged or invalid content ({name!r} is a link{target} that leads nowhere)") from None
    except (RuntimeError, OSError) as error:  # h5py's words for a link cycle or a damaged target
        raise fail(group, f"damaged or invalid content ({name!r} is a link that cannot be followed: {error})") from None
    if not isinstance(item, (h5py.h5d.DatasetID, h5py.h5g.GroupID)):  # a named datatype, h5py's Datatype
        raise fail(group, f"{name!r} is a Datatype, not a dataset or a group")
    return item


def get_item(group: h5py.Group, name: str) -> h5py.Dataset | h5py.Group:
    """The dataset or group ``name`` of ``group``, following hard and soft links within the file only.

    A model keeps everything in its own file: an external link would make
    loading open another file (any path the model's author chose), so it is
    refused, as is a link that leads nowhere.
    """
    item = _open(group, name, f"missing {name!r}")
    return h5py.Group(item) if isinstance(item, h5py.h5g.GroupID) else h5py.Dataset(item)


def _checked_dataset(group: h5py.Group, name: str) -> tuple[h5py.h5d.DatasetID, tuple[int, ...], np.dtype]:
    """The low-level dataset ``name`` of ``group`` with its shape and type, checked (:func:`read_dataset`)."""
    item = _open(group, name, f"missing dataset {name!r}")
    if not isinstance(item, h5py.h5d.DatasetID):
        raise fail(group, f"{name!r} is not a dataset")
    space = item.get_space()
    if space.get_simple_extent_type() == h5py.h5s.NULL:
        raise fail(group, f"dataset {name!r} has no dataspace (an HDF5 empty dataset), expected numbers")
    dtype = item.dtype
    if dtype.kind not in "iuf":
        raise fail(group, f"dataset {name!r} has non-numeric type {dtype}")
    shape = tuple(int(extent) for extent in space.shape)
    size = math.prod(shape)  # Python's integers: a forged shape's product does not wrap around
    if size > MAX_ELEMENTS:
        raise fail(group, f"dataset {name!r} declares {size} elements, more than a model can hold "
                          f"({MAX_ELEMENTS})")
    plist = item.get_create_plist()
    layout = plist.get_layout()
    if layout == h5py.h5d.VIRTUAL or plist.get_external_count() > 0:
        raise fail(group, f"dataset {name!r} keeps its data in other files; a model keeps all its data in its own "
                          "file")
    chunks = plist.get_chunk() if layout == h5py.h5d.CHUNKED else None
    nbytes = size * dtype.itemsize
    if size and not _fully_written(item, layout, shape, chunks, nbytes):
        raise fail(group, f"dataset {name!r} declares {size} elements of which only part was written "
                          "(a forged shape, or an interrupted writer)")
    if chunks is not None and plist.get_nfilters():
        stored = item.get_storage_size()
        if nbytes > max(EXPANSION_FLOOR, MAX_EXPANSION * stored):
            raise fail(group, f"dataset {name!r} would expand from {stored} stored bytes to {nbytes}, more "
                              f"than {MAX_EXPANSION} times (a decompression bomb?)")
    return item, shape, dtype


def read_dataset(group: h5py.Group, name: str) -> np.ndarray:
    """The values of the numeric dataset ``name`` of ``group``, in its own type and shape, checked before any of
    them is read.

    Its declared size must be at most :data:`MAX_ELEMENTS`, and its data must
    be stored in this file and written in full: a dataset whose data lives in
    another file (external storage, a virtual dataset) or that declares more
    elements than were ever written (a huge shape over a few bytes of unwritten
    chunks, read back as the fill value) is refused, so that a forged shape
    costs neither memory nor time. A compressed dataset may expand to at most
    :data:`MAX_EXPANSION` times its stored bytes (or :data:`EXPANSION_FLOOR`).
    """
    return _read(*_checked_dataset(group, name))


def _read(item: h5py.h5d.DatasetID, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """The values of a checked dataset (:func:`_checked_dataset`)."""
    data = np.empty(shape, dtype=dtype)
    if data.size:
        item.read(h5py.h5s.ALL, h5py.h5s.ALL, data)
    return data


def _fully_written(item: h5py.h5d.DatasetID, layout: int, shape: tuple[int, ...], chunks: tuple[int, ...] | None,
                   nbytes: int) -> bool:
    """Whether every chunk (or the contiguous block) of ``item`` is allocated in the file.

    Counting allocated chunks walks the chunk index, whose size is bounded by
    the file's, so this costs nothing like reading a forged shape would.
    """
    if chunks is None:
        return layout == h5py.h5d.COMPACT or item.get_storage_size() >= nbytes
    declared = 1
    for extent, chunk in zip(shape, chunks):
        declared *= -(-extent // chunk)
    return item.get_num_chunks() >= declared


def read_array(group: h5py.Group, name: str, kind: str, ndim: int | None = None) -> np.ndarray:
    """Read dataset ``name`` of ``group`` as a float64 or int64 array.

    Parameters
    ----------
    group : h5py.Group
        The group holding the dataset.
    name : str
        Dataset name.
    kind : {"float", "int"}
        ``"float"`` accepts integer or float data and returns float64;
        ``"int"`` accepts integer data (or floats holding whole numbers) and
        returns int64.
    ndim : int, optional
        Required number of dimensions.
    """
    item, shape, dtype = _checked_dataset(group, name)
    if ndim is not None and len(shape) != ndim:
        raise fail(group, f"dataset {name!r} has shape {shape}, expected {ndim} dimension(s)")
    return _convert(group, name, _read(item, shape, dtype), kind)


def _convert(group: h5py.Group, name: str, data: np.ndarray, kind: str) -> np.ndarray:
    """``data`` as float64 (finite) or int64 (whole numbers within int64's range)."""
    if kind == "float":
        data = data.astype(np.float64)
        if not np.all(np.isfinite(data)):
            raise fail(group, f"dataset {name!r} contains NaN or infinite values")
        return data
    if data.dtype.kind == "f":
        with np.errstate(invalid="ignore"):  # NaN and inf are what the test is looking for
            whole = np.isfinite(data) & (data == np.round(data))
        if not np.all(whole):
            raise fail(group, f"dataset {name!r} must hold integers")
    # uint64 above 2**63 - 1 and floats beyond it would wrap around (a huge value read as -1, a leaf)
    if data.size and ((data.dtype.kind == "u" and data.max() > np.iinfo(np.int64).max)
                      or (data.dtype.kind == "f" and np.max(np.abs(data)) >= 2.0 ** 63)):
        raise fail(group, f"dataset {name!r} holds integers beyond the 64-bit range")
    return data.astype(np.int64)


def read_scalar(group: h5py.Group, name: str, kind: str) -> float | int:
    """Read a scalar stored with shape () or (1,) (bob's variant)."""
    data = read_dataset(group, name)
    if data.size != 1 or data.ndim > 1:
        raise fail(group, f"dataset {name!r} must hold one value, has shape {data.shape}")
    value = _convert(group, name, data, kind).reshape(())[()]
    return float(value) if kind == "float" else int(value)


def read_string_attribute(node: h5py.Group, name: str) -> str:
    """Read a string attribute, stored as str, bytes or a one-element byte array."""
    if name not in node.attrs:
        raise fail(node, f"missing attribute {name!r}")
    value = node.attrs[name]
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise fail(node, f"attribute {name!r} must hold one string, has shape {value.shape}")
        value = value.reshape(())[()]
    if isinstance(value, (bytes, np.bytes_)):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise fail(node, f"attribute {name!r} is not valid UTF-8") from None
    if not isinstance(value, str):
        raise fail(node, f"attribute {name!r} must be a string, got {type(value).__name__}")
    return value


def open_for_reading(path: str | os.PathLike, name: str) -> h5py.File:
    """Open an HDF5 file read-only; errors name the argument ``name``.

    Raises
    ------
    FileNotFoundError
        When there is no file at ``path``.
    ModelFormatError
        When the file is not HDF5.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{name}: no such file {path!r}")
    try:
        h5 = h5py.File(path, "r")
    except OSError as error:
        raise ModelFormatError(f"{name}: {path} is not a readable HDF5 file ({error})") from None
    try:
        problem = damaged_global_heap(path)
    except BaseException:
        h5.close()
        raise
    if problem is not None:
        h5.close()
        raise ModelFormatError(f"{name}: {path} is not a readable HDF5 file ({problem})")
    return h5


#: A global heap collection starts with this signature and version 1 (HDF5 file format, section III.E).
_GLOBAL_HEAP = b"GCOL\x01\x00\x00\x00"
#: The smallest collection HDF5 writes; a signature followed by a smaller size is not a collection.
_GLOBAL_HEAP_MIN_SIZE = 4096


def damaged_global_heap(path: str | os.PathLike) -> str | None:
    """What is wrong with a global heap of ``path`` on which HDF5 would loop forever (None if nothing).

    Variable-length strings (the ``Metadata`` and ``bob_boost_version``
    attributes h5py writes) live in global heap collections. HDF5 (2.0 among
    others) decodes a collection object by object, stepping by each object's
    stored size; a damaged size that lands on zeroed free space reads an
    object of size 0, and the loop never advances. This walks every
    collection the same way, reading nothing else, so that the loader can
    refuse the file before HDF5 hangs on it.
    """
    with open(path, "rb") as stream:
        size = os.fstat(stream.fileno()).st_size
        if size < _GLOBAL_HEAP_MIN_SIZE:
            return None
        with mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ) as data:
            start = data.find(_GLOBAL_HEAP)
            while start >= 0:
                problem = _walk_collection(data, start, size)
                if problem is not None:
                    return problem
                start = data.find(_GLOBAL_HEAP, start + 1)
    return None


def _walk_collection(data: mmap.mmap, start: int, file_size: int) -> str | None:
    """Walk one collection as HDF5's decoder does (8-byte lengths): every step must advance."""
    (length,) = struct.unpack_from("<Q", data, start + 8)
    if length < _GLOBAL_HEAP_MIN_SIZE or length > file_size - start:
        return None  # not a collection HDF5 would read whole (or reading it fails cleanly at the end of file)
    position, end = start + 16, start + length
    while end - position >= 16:  # a smaller tail is free space
        index, _, _, object_size = struct.unpack_from("<HHIQ", data, position)
        step = (16 + (object_size + 7) // 8 * 8 if index else object_size) % (1 << 64)  # HDF5's size_t
        if step == 0 or step >= 1 << 62:
            return (f"damaged global heap at byte {start}: object {index} at byte {position} has size "
                    f"{object_size}, on which HDF5 would loop")
        position += step
    return None


def write_scalar(group: h5py.Group, name: str, value, dtype) -> None:
    """Write a scalar the way bob does: a shape-(1,) dataset."""
    write_array(group, name, np.asarray([value], dtype=dtype))


def _link_creation() -> h5py.h5p.PropLCID:
    plist = h5py.h5p.create(h5py.h5p.LINK_CREATE)
    plist.set_create_intermediate_group(True)
    return plist


#: h5py's default link creation properties (missing groups of a path are created).
_LINK_CREATION = _link_creation()


def write_array(group: h5py.Group, name: str, data) -> None:
    """Write ``data`` as the dataset ``name`` of ``group``: the bytes ``group.create_dataset(name, data=data)``
    writes (contiguous, no creation times), through h5py's low-level calls (a model writes several small datasets a
    weak machine, and the high-level ones took about 0.2 ms each, these 0.1 ms)."""
    data = np.ascontiguousarray(data)
    plist = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    plist.set_obj_track_times(False)
    item = h5py.h5d.create(group.id, name.encode(), h5py.h5t.py_create(data.dtype, logical=1),
                           h5py.h5s.create_simple(data.shape), dcpl=plist, lcpl=_LINK_CREATION)
    if data.size:
        item.write(h5py.h5s.ALL, h5py.h5s.ALL, data)


def write_string_attribute(node: h5py.Group, name: str, value: str) -> None:
    """Write a string attribute as bob does: a fixed-length byte string in a shape-(1,) array."""
    encoded = value.encode("utf-8")
    node.attrs.create(name, np.array([encoded], dtype=f"S{max(len(encoded), 1)}"))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = ".tmp") -> Iterator[str]:
    """A temporary path to write that replaces ``path`` only if the block succeeds.

    The file is created in the same directory, synced and renamed over
    ``path`` at the end; on any exception it is deleted and ``path`` is left
    as it was. An ``OSError`` (a full disk, a file size limit) is raised again
    with ``path`` in its message, since the temporary name means nothing to
    the caller. A process killed while writing cannot delete its temporary
    file: it stays next to ``path`` as ``.bob_boost-<random><suffix>``, and
    ``path`` is untouched.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        handle, temporary = tempfile.mkstemp(prefix=".bob_boost-", suffix=suffix, dir=directory)
    except OSError as error:
        raise _naming(error, path) from error
    os.close(handle)
    try:
        yield temporary
        with open(temporary, "rb") as stream:
            os.fsync(stream.fileno())
        # mkstemp creates the file private (0600); give it the mode the
        # replaced file had, or the one a plain open() would have given
        os.chmod(temporary, _mode_for(path))
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        if os.fspath(path) in str(error):
            raise
        raise _naming(error, path) from error
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        raise


def _naming(error: OSError, path: str) -> OSError:
    """``error`` as the same OSError subclass, its message naming ``path``."""
    reason = error.strerror or str(error)
    return type(error)(error.errno, f"cannot write {path}: {reason}") if error.errno else OSError(
        f"cannot write {path}: {reason}")


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike) -> Iterator[h5py.File]:
    """Open a new HDF5 file that replaces ``path`` only if the block succeeds (see :func:`atomic_path`).

    HDF5 builds the file in memory (its ``core`` driver, no backing store),
    and the finished image, byte for byte what HDF5 would have written, goes
    to disk with ordinary writes. HDF5 itself never meets a failing write:
    when one fails under it (a full disk, ``RLIMIT_FSIZE``) h5py raises from
    object destructors and the process can crash, with the error naming only
    the temporary file.
    """
    with atomic_path(path, ".hdf5.tmp") as temporary:
        with h5py.File(temporary, "w", driver="core", backing_store=False) as h5:
            yield h5
            h5.flush()
            image = h5.id.get_file_image()
        with open(temporary, "wb") as stream:
            stream.write(image)


def _mode_for(path: str) -> int:
    """Permission bits of ``path`` if it exists, else 0666 minus the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
