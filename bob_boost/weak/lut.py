"""Look-up-table weak machines for discrete features."""
from __future__ import annotations

import h5py
import numpy as np

from ..exceptions import InvalidTypeError, InvalidValueError
from ..io import hdf5
from ..registry import register_weak_machine
from .base import WeakMachine


def check_discrete(features: np.ndarray, number_of_entries: int, name: str = "features") -> None:
    """Raise unless every value is an integer in ``[0, number_of_entries)``."""
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
    """

    machine_type = "LUTMachine"

    def __init__(self, look_up_tables, indices) -> None:
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
        table.setflags(write=False)
        self.look_up_tables = table
        self.indices = index_array.astype(np.int64)
        self.indices.setflags(write=False)

    @property
    def number_of_outputs(self) -> int:
        """Number of LUT columns."""
        return self.look_up_tables.shape[1]

    def feature_indices(self) -> np.ndarray:
        """Sorted unique feature columns used by any output."""
        return np.unique(self.indices)

    def check_values(self, features: np.ndarray) -> None:
        """Require the columns read to hold integers in ``[0, #entries)``."""
        check_discrete(features[:, self.feature_indices()], self.look_up_tables.shape[0])

    def forward(self, features: np.ndarray) -> np.ndarray:
        """Return the (#samples, #outputs) looked-up values."""
        values = features[:, self.indices].astype(np.intp)
        return self.look_up_tables[values, np.arange(self.number_of_outputs)]

    def save(self, group: h5py.Group) -> None:
        """Write ``LUT`` (#entries x #outputs) and ``Indices`` as bob does."""
        group.create_dataset("LUT", data=self.look_up_tables)
        group.create_dataset("Indices", data=self.indices.astype(np.int32))

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
        return cls(table, indices)

    def _state(self) -> tuple:
        return (self.look_up_tables.tobytes(), self.look_up_tables.shape, tuple(self.indices.tolist()))

    def __repr__(self) -> str:
        return f"LUTMachine(#entries={self.look_up_tables.shape[0]}, indices={self.indices.tolist()})"
