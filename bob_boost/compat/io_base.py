"""A stand-in for ``bob.io.base``: its :class:`HDF5File`, on h5py, for the scripts that keep machine files.

bob's scripts open a file, move into a group with :meth:`HDF5File.cd` and let a machine write or read
itself there (``machine.save(hdf5)``, ``BoostedMachine(hdf5)``); the machines of
:mod:`bob_boost.compat.bob` accept this class as they accept an ``h5py.File`` or ``h5py.Group``. Only
that part of bob's class is provided: moving between groups, creating and listing groups, reading and
writing datasets. New code can use :mod:`h5py` directly.
"""
from __future__ import annotations

import os
import posixpath

import h5py
import numpy as np

from ..exceptions import InvalidTypeError, InvalidValueError

#: bob's file modes: read only, read/write (created if missing), truncate, create (fail if it exists).
MODES = ("r", "a", "w", "x")


class HDF5File:
    """An HDF5 file with bob's "current directory": paths are relative to the group :meth:`cd` moved to.

    Parameters
    ----------
    filename : str or os.PathLike
        The file.
    mode : {"r", "a", "w", "x"}
        ``"r"`` read only (the default); ``"a"`` read and write, creating the file if needed; ``"w"``
        a new empty file, replacing an existing one; ``"x"`` a new file that must not exist yet.
    """

    def __init__(self, filename: str | os.PathLike, mode: str = "r") -> None:
        if not isinstance(filename, (str, os.PathLike)):
            raise InvalidTypeError(f"filename: expected a path, got {type(filename).__name__}")
        if mode not in MODES:
            raise InvalidValueError(f"mode: must be one of {MODES}, got {mode!r}")
        self._file = h5py.File(filename, mode)
        self._cwd = "/"

    # -- where we are ----------------------------------------------------------
    @property
    def filename(self) -> str:
        """The file's name."""
        return self._file.filename

    @property
    def cwd(self) -> str:
        """The current group's absolute path (``"/"`` after opening)."""
        return self._cwd

    @property
    def group(self) -> h5py.Group:
        """The current group as an :class:`h5py.Group` (what the compat machines read and write)."""
        self._check_open()
        return self._file[self._cwd]

    def _check_open(self) -> None:
        if not self._file:
            raise InvalidValueError("hdf5: the file is closed")

    def _path(self, path: str) -> str:
        """``path`` (absolute, or relative to :attr:`cwd`, ``..`` allowed) as a normalised absolute path."""
        if not isinstance(path, str):
            raise InvalidTypeError(f"path: expected a str, got {type(path).__name__}")
        # posixpath.normpath keeps a leading "//"; the root is spelled "/"
        return "/" + posixpath.normpath(posixpath.join(self._cwd, path)).lstrip("/")

    def cd(self, path: str) -> None:
        """Make ``path`` (absolute, or relative to the current group; ``".."`` is the parent) the current group."""
        self._check_open()
        target = self._path(path)
        if not isinstance(self._file.get(target), h5py.Group):
            raise InvalidValueError(f"path: {self.filename} has no group {target!r}")
        self._cwd = target

    # -- groups ------------------------------------------------------------------
    def has_group(self, path: str) -> bool:
        """Whether the group ``path`` exists."""
        self._check_open()
        return isinstance(self._file.get(self._path(path)), h5py.Group)

    def create_group(self, path: str) -> None:
        """Create the group ``path`` (and missing parents); it must not exist yet."""
        self._check_open()
        target = self._path(path)
        if target in self._file:
            raise InvalidValueError(f"path: {self.filename} already holds {target!r}")
        self._file.create_group(target)

    def sub_groups(self, relative: bool = False, recursive: bool = True) -> list[str]:
        """The groups below the current one, in name order.

        Parameters
        ----------
        relative : bool
            Paths relative to the current group instead of absolute ones.
        recursive : bool
            All groups below, or only the direct children.
        """
        self._check_open()
        here = self._file[self._cwd]
        names: list[str] = []
        if recursive:
            here.visit(lambda name: names.append(name) if isinstance(here.get(name), h5py.Group) else None)
        else:
            names = [name for name in here if isinstance(here.get(name), h5py.Group)]
        names.sort()
        return names if relative else [posixpath.join(self._cwd, name) for name in names]

    # -- datasets -----------------------------------------------------------------
    def has_key(self, path: str) -> bool:
        """Whether the dataset ``path`` exists."""
        self._check_open()
        return isinstance(self._file.get(self._path(path)), h5py.Dataset)

    has_dataset = has_key

    def keys(self, relative: bool = False) -> list[str]:
        """The datasets directly in the current group, absolute or relative to it, in name order."""
        self._check_open()
        here = self._file[self._cwd]
        names = sorted(name for name in here if isinstance(here.get(name), h5py.Dataset))
        return names if relative else [posixpath.join(self._cwd, name) for name in names]

    def read(self, path: str) -> np.ndarray:
        """The content of dataset ``path`` (a NumPy array; a 0-d dataset gives a NumPy scalar)."""
        self._check_open()
        item = self._file.get(self._path(path))
        if not isinstance(item, h5py.Dataset):
            raise InvalidValueError(f"path: {self.filename} has no dataset {self._path(path)!r}")
        return item[()]

    get = read

    def set(self, path: str, data) -> None:
        """Write ``data`` to dataset ``path``, replacing what was there (a scalar gets shape (1,), as bob stores it)."""
        self._check_open()
        array = np.asarray(data)
        if array.ndim == 0:
            array = array.reshape(1)
        target = self._path(path)
        if target in self._file:
            del self._file[target]
        self._file.create_dataset(target, data=array)

    replace = set

    # -- the file -----------------------------------------------------------------
    def flush(self) -> None:
        """Write buffered changes to disk."""
        self._check_open()
        self._file.flush()

    def close(self) -> None:
        """Close the file (bob closes it when the object is deleted; here both work)."""
        if self._file:
            self._file.close()

    def __enter__(self) -> HDF5File:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __del__(self) -> None:
        # bob's scripts end the file's use with `del hdf5`; close it then, as bob does
        try:
            self.close()
        except Exception:  # interpreter shutdown may have torn h5py down already
            pass

    def __repr__(self) -> str:
        state = f"{self.filename!r}, cwd={self._cwd!r}" if self._file else "closed"
        return f"HDF5File({state})"


__all__ = ["HDF5File", "MODES"]
