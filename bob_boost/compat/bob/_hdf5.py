"""The ``hdf5`` argument of bob's constructors, ``load`` and ``save``.

bob took a ``bob.io.base.HDF5File`` positioned in a group. Here it may be a path, an open
:class:`h5py.File` or :class:`h5py.Group`, or :class:`bob_boost.compat.io_base.HDF5File`; the file format
itself is bob_boost's (:mod:`bob_boost.io.model`, :mod:`bob_boost.io.hdf5`), which is bob's layout.
"""
from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import h5py

from ...exceptions import InvalidTypeError, InvalidValueError, ModelFormatError
from ...io import hdf5
from ..io_base import HDF5File

#: What an ``hdf5`` argument may be.
HDF5Argument = str | os.PathLike | h5py.Group | HDF5File


def is_hdf5_argument(value) -> bool:
    """Whether ``value`` is something :func:`readable_group` accepts (for constructors with two call forms)."""
    return isinstance(value, (str, os.PathLike, h5py.Group, HDF5File))


def _open_group(value, name: str) -> h5py.Group | None:
    """The group an already open argument designates, or None for a path."""
    if isinstance(value, HDF5File):
        return value.group
    if isinstance(value, h5py.Group):  # an h5py.File is its root group
        if not value:
            raise InvalidValueError(f"{name}: the HDF5 file is closed")
        return value
    if isinstance(value, (str, os.PathLike)):
        return None
    raise InvalidTypeError(f"{name}: expected a path, an h5py.File or h5py.Group, or an HDF5File, "
                           f"got {type(value).__name__}")


@contextlib.contextmanager
def readable_group(value: HDF5Argument, name: str = "hdf5") -> Iterator[h5py.Group]:
    """Yield the group to read from; a path is opened read-only for the block and closed after it."""
    group = _open_group(value, name)
    if group is not None:
        yield group
        return
    with hdf5.open_for_reading(value, name) as handle:
        yield handle


@contextlib.contextmanager
def writable_group(value: HDF5Argument, name: str = "hdf5") -> Iterator[h5py.Group]:
    """Yield the group to write into, flushed after the block.

    A path gets a new file, which replaces an existing one only once the block has succeeded
    (:func:`bob_boost.io.hdf5.atomic_file`). Nothing keeps a reference to the file afterwards.
    """
    group = _open_group(value, name)
    if group is None:
        with hdf5.atomic_file(value) as handle:
            yield handle
        return
    if group.file.mode != "r+":
        raise InvalidValueError(f"{name}: {group.file.filename} is open read-only")
    yield group
    # a caller may close or drop the file right away (bob's scripts do); what we wrote is on disk then
    group.file.flush()


def machine_error(name: str, error: Exception) -> ModelFormatError:
    """The error for an ``hdf5`` argument that holds no (valid) machine, naming the argument."""
    return ModelFormatError(f"{name}: {error}")


__all__ = ["HDF5Argument", "is_hdf5_argument", "machine_error", "readable_group", "writable_group"]
