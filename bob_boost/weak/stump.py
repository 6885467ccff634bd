"""Decision stumps: a threshold on one feature."""
from __future__ import annotations

import numbers

import h5py
import numpy as np

from ..exceptions import InvalidTypeError, InvalidValueError
from ..io import hdf5
from ..registry import register_weak_machine
from .base import WeakMachine


@register_weak_machine
class StumpMachine(WeakMachine):
    """Output ``polarity`` where ``x[index] >= threshold`` and ``-polarity`` elsewhere.

    Parameters
    ----------
    threshold : float
        Decision threshold, in the units of the feature.
    polarity : {+1, -1}
        Output for samples at or above the threshold.
    index : int
        Feature column the stump reads.
    """

    machine_type = "StumpMachine"

    def __init__(self, threshold: float, polarity: float, index: int) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
            raise InvalidTypeError(f"threshold: expected a real number, got {type(threshold).__name__}")
        if not np.isfinite(threshold):
            raise InvalidValueError(f"threshold: must be finite, got {threshold}")
        if isinstance(polarity, bool) or not isinstance(polarity, numbers.Real) or polarity not in (1, -1):
            raise InvalidValueError(f"polarity: must be +1 or -1, got {polarity!r}")
        if isinstance(index, bool) or not isinstance(index, numbers.Integral) or index < 0:
            raise InvalidValueError(f"index: must be a non-negative integer, got {index!r}")
        self.threshold = float(threshold)
        self.polarity = float(polarity)
        self.index = int(index)

    @property
    def number_of_outputs(self) -> int:
        """Always 1."""
        return 1

    def feature_indices(self) -> np.ndarray:
        """The single feature column the stump reads."""
        return np.array([self.index], dtype=np.int64)

    def forward(self, features: np.ndarray) -> np.ndarray:
        """Return ``polarity`` / ``-polarity`` per sample as a (#samples, 1) array.

        The comparison is in float64 (the threshold's precision, as in
        training) whatever the features' dtype.
        """
        above = features[:, self.index] >= np.float64(self.threshold)
        return np.where(above, self.polarity, -self.polarity)[:, np.newaxis]

    def save(self, group: h5py.Group) -> None:
        """Write ``Threshold``, ``Polarity`` and ``Index`` as bob does."""
        hdf5.write_scalar(group, "Threshold", self.threshold, np.float64)
        hdf5.write_scalar(group, "Polarity", self.polarity, np.float64)
        hdf5.write_scalar(group, "Index", self.index, np.int32)

    @classmethod
    def load(cls, group: h5py.Group) -> "StumpMachine":
        """Read a stump, accepting scalars of shape () or (1,)."""
        threshold = hdf5.read_scalar(group, "Threshold", "float")
        polarity = hdf5.read_scalar(group, "Polarity", "float")
        index = hdf5.read_scalar(group, "Index", "int")
        if polarity not in (1.0, -1.0):
            raise hdf5.fail(group, f"Polarity must be +1 or -1, got {polarity}")
        if index < 0:
            raise hdf5.fail(group, f"Index must be non-negative, got {index}")
        return cls(threshold, polarity, index)

    def _state(self) -> tuple:
        return (self.threshold, self.polarity, self.index)

    def __repr__(self) -> str:
        return f"StumpMachine(threshold={self.threshold!r}, polarity={self.polarity:+.0f}, index={self.index})"
