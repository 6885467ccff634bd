"""Look-up-table weak machines for discrete features."""
from __future__ import annotations

import h5py
import numpy as np

from ..exceptions import InvalidTypeError, InvalidValueError
from ..io import hdf5
from ..registry import register_weak_machine
from ..sparse import is_sparse
from .base import WeakMachine
from .tree import check_missing_features


def check_discrete(features: np.ndarray, number_of_entries: int, name: str = "features",
                   allow_nan: bool = False) -> None:
    """Raise unless every value is an integer in ``[0, number_of_entries)`` (or NaN, with ``allow_nan``)."""
    if is_sparse(features):  # its implicit zeros are valid entries: only the stored values need checking
        if features.data.size:
            check_discrete(features.data, number_of_entries, name, allow_nan)
        return
    if allow_nan and features.dtype.kind == "f":
        with np.errstate(invalid="ignore"):  # NaN compares false: only the values are checked
            if np.any(features - np.floor(features) > 0):
                raise InvalidValueError(f"{name}: LUT features must be integers (or NaN, a missing value)")
        present = features[~np.isnan(features)]
        if present.size:
            check_discrete(present, number_of_entries, name)
        return
    if np.issubdtype(features.dtype, np.floating) and np.any(features != np.floor(features)):
        raise InvalidValueError(f"{name}: LUT features must be integers")
    if features.min() < 0:
        raise InvalidValueError(f"{name}: LUT features must be non-negative, found {features.min()}")
    if features.max() >= number_of_entries:
        raise InvalidValueError(
            f"{name}: LUT feature value {features.max()} is >= the number of LUT entries ({number_of_entries})")


@register_weak_machine
class LUTMachine(WeakMachine):
    """Output ``look_up_tables[x[indices[o]], o]`` for every output ``o``.

    Parameters
    ----------
    look_up_tables : array_like
        (#entries, #outputs) table, or a 1-D table for one output.
    indices : array_like of int
        One feature column per output.
    missing_entry : bool
        Whether the table's last row is the output for NaN (a missing value; the features then
        take values ``0 .. #entries - 2``), as ``LUTTrainer(missing="bin")`` learns it. False (the
        default, bob's tables, and every file written without it): the machine does not accept NaN.
    """

    machine_type = "LUTMachine"

    def __init__(self, look_up_tables, indices, missing_entry: bool = False) -> None:
        table = np.array(look_up_tables, dtype=np.float64)
        if table.ndim == 1:
            table = table[:, np.newaxis]
        if table.ndim != 2 or table.shape[0] == 0 or table.shape[1] == 0:
            raise InvalidValueError(f"look_up_tables: expected a non-empty (#entries, #outputs) array, "
                                    f"got shape {table.shape}")
        if not np.all(np.isfinite(table)):
            raise InvalidValueError("look_up_tables: contains NaN or infinite values")
        index_array = np.atleast_1d(np.array(indices))
        if index_array.ndim != 1 or not np.issubdtype(index_array.dtype, np.integer):
            raise InvalidTypeError(f"indices: expected a 1-D integer array, got {index_array.dtype} of shape "
                                   f"{index_array.shape}")
        if index_array.shape[0] != table.shape[1]:
            raise InvalidValueError(f"indices: {index_array.shape[0]} indices for {table.shape[1]} LUT outputs")
        if np.any(index_array < 0):
            raise InvalidValueError("indices: must be non-negative")
        if not isinstance(missing_entry, (bool, np.bool_)):
            raise InvalidTypeError(f"missing_entry: expected a bool, got {type(missing_entry).__name__}")
        if missing_entry and table.shape[0] < 2:
            raise InvalidValueError("look_up_tables: with missing_entry, needs a row per value and one for NaN")
        self.missing_entry = bool(missing_entry)
        table.setflags(write=False)
        self.look_up_tables = table
        self.indices = index_array.astype(np.int64)
        self.indices.setflags(write=False)

    @property
    def number_of_outputs(self) -> int:
        """Number of LUT columns."""
        return self.look_up_tables.shape[1]

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN is a missing value with its own entry (:attr:`missing_entry`), rather than an error."""
        return self.missing_entry

    @property
    def number_of_values(self) -> int:
        """Feature values the table covers: its rows, less the NaN row where there is one."""
        return self.look_up_tables.shape[0] - int(self.missing_entry)

    def check_features(self, features) -> np.ndarray:
        """Validate ``features`` (2-D, wide enough, valid values; NaN allowed when :attr:`accepts_missing`)."""
        return check_missing_features(self, features)

    def feature_indices(self) -> np.ndarray:
        """Sorted unique feature columns used by any output."""
        return np.unique(self.indices)

    def check_values(self, features: np.ndarray) -> None:
        """Require the columns read to hold integers in ``[0, #values)`` (or NaN, with a NaN entry)."""
        check_discrete(features[:, self.feature_indices()], self.number_of_values, allow_nan=self.missing_entry)

    def forward(self, features: np.ndarray) -> np.ndarray:
        """Return the (#samples, #outputs) looked-up values (NaN reads the last row, with :attr:`missing_entry`)."""
        columns = features[:, self.indices]
        if self.missing_entry and columns.dtype.kind == "f":
            columns = np.where(np.isnan(columns), self.number_of_values, columns)
        values = columns.astype(np.intp)
        return self.look_up_tables[values, np.arange(self.number_of_outputs)]

    def save(self, group: h5py.Group) -> None:
        """Write ``LUT`` (#entries x #outputs) and ``Indices`` as bob does (and ``MissingEntry`` when set)."""
        hdf5.write_array(group, "LUT", self.look_up_tables)
        hdf5.write_array(group, "Indices", self.indices.astype(np.int32))
        if self.missing_entry:
            hdf5.write_scalar(group, "MissingEntry", 1, np.int8)

    @classmethod
    def load(cls, group: h5py.Group) -> "LUTMachine":
        """Read a LUT machine; integer LUTs and 1-D LUTs are accepted."""
        table = hdf5.read_array(group, "LUT", "float")
        if table.ndim == 1:
            table = table[:, np.newaxis]
        indices = np.atleast_1d(hdf5.read_array(group, "Indices", "int"))
        if table.ndim != 2 or table.size == 0:
            raise hdf5.fail(group, f"LUT must be a non-empty (#entries, #outputs) array, has shape {table.shape}")
        if indices.ndim != 1 or indices.shape[0] != table.shape[1]:
            raise hdf5.fail(group, f"Indices has shape {indices.shape} but LUT has {table.shape[1]} output(s)")
        if np.any(indices < 0):
            raise hdf5.fail(group, "Indices must be non-negative")
        missing_entry = False  # files without it (bob's, and ours before missing values) reject NaN
        if "MissingEntry" in group:
            flag = hdf5.read_scalar(group, "MissingEntry", "int")
            if flag not in (0, 1) or (flag and table.shape[0] < 2):
                raise hdf5.fail(group, f"MissingEntry must be 0 or 1 (1 needs at least 2 LUT rows), got {flag}")
            missing_entry = bool(flag)
        return cls(table, indices, missing_entry)

    def _state(self) -> tuple:
        return (self.look_up_tables.tobytes(), self.look_up_tables.shape, tuple(self.indices.tolist()),
                self.missing_entry)

    def __repr__(self) -> str:
        return f"LUTMachine(#entries={self.look_up_tables.shape[0]}, indices={self.indices.tolist()})"
