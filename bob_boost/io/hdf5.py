"""Low-level HDF5 helpers shared by every machine's ``save``/``load``.

Readers validate what they read and raise :class:`~bob_boost.ModelFormatError`
naming the file, the group and the problem; they accept the variants that
bob.learn.boosting writes (scalars as shape () or (1,), strings as
fixed-length byte arrays, integer arrays where floats are expected).
"""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator

import h5py
import numpy as np

from ..exceptions import ModelFormatError

#: Largest dataset a model may hold (2**27 float64 = 1 GiB); a file declaring
#: more is rejected before anything is allocated.
MAX_ELEMENTS = 1 << 27


def where(group: h5py.Group) -> str:
    """Return ``"<file>:<group>"`` for error messages."""
    try:
        return f"{group.file.filename}:{group.name}"
    except Exception:  # a closed or anonymous group still needs a message
        return "<HDF5 group>"


def fail(group: h5py.Group, problem: str) -> ModelFormatError:
    """Build the package's format error for ``group``."""
    return ModelFormatError(f"{where(group)}: {problem}")


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
    item = group.get(name)
    if item is None:
        raise fail(group, f"missing dataset {name!r}")
    if not isinstance(item, h5py.Dataset):
        raise fail(group, f"{name!r} is not a dataset")
    if item.dtype.kind not in "iuf":
        raise fail(group, f"dataset {name!r} has non-numeric type {item.dtype}")
    if item.size > MAX_ELEMENTS:
        raise fail(group, f"dataset {name!r} declares {item.size} elements, more than a model can hold "
                          f"({MAX_ELEMENTS})")
    data = np.asarray(item[()])
    if ndim is not None and data.ndim != ndim:
        raise fail(group, f"dataset {name!r} has shape {data.shape}, expected {ndim} dimension(s)")
    if kind == "float":
        data = data.astype(np.float64)
        if not np.all(np.isfinite(data)):
            raise fail(group, f"dataset {name!r} contains NaN or infinite values")
        return data
    if data.dtype.kind == "f":
        if not np.all(np.isfinite(data)) or np.any(data != np.round(data)):
            raise fail(group, f"dataset {name!r} must hold integers")
    return data.astype(np.int64)


def read_scalar(group: h5py.Group, name: str, kind: str) -> float | int:
    """Read a scalar stored with shape () or (1,) (bob's variant)."""
    data = read_array(group, name, kind)
    if data.size != 1 or data.ndim > 1:
        raise fail(group, f"dataset {name!r} must hold one value, has shape {data.shape}")
    value = data.reshape(())[()]
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
        return h5py.File(path, "r")
    except OSError as error:
        raise ModelFormatError(f"{name}: {path} is not a readable HDF5 file ({error})") from None


def write_scalar(group: h5py.Group, name: str, value, dtype) -> None:
    """Write a scalar the way bob does: a shape-(1,) dataset."""
    group.create_dataset(name, data=np.asarray([value], dtype=dtype))


def write_string_attribute(node: h5py.Group, name: str, value: str) -> None:
    """Write a string attribute as bob does: a fixed-length byte string in a shape-(1,) array."""
    encoded = value.encode("utf-8")
    node.attrs.create(name, np.array([encoded], dtype=f"S{max(len(encoded), 1)}"))


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = ".tmp") -> Iterator[str]:
    """A temporary path to write that replaces ``path`` only if the block succeeds.

    The file is created in the same directory, synced and renamed over
    ``path`` at the end; on any exception it is deleted and ``path`` is left
    as it was.
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".bob_boost-", suffix=suffix, dir=directory)
    os.close(handle)
    try:
        yield temporary
        with open(temporary, "rb") as stream:
            os.fsync(stream.fileno())
        # mkstemp creates the file private (0600); give it the mode the
        # replaced file had, or the one a plain open() would have given
        os.chmod(temporary, _mode_for(path))
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)
        raise


@contextlib.contextmanager
def atomic_file(path: str | os.PathLike) -> Iterator[h5py.File]:
    """Open a new HDF5 file that replaces ``path`` only if the block succeeds (see :func:`atomic_path`)."""
    with atomic_path(path, ".hdf5.tmp") as temporary:
        with h5py.File(temporary, "w") as h5:
            yield h5


def _mode_for(path: str) -> int:
    """Permission bits of ``path`` if it exists, else 0666 minus the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask
