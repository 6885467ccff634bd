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
    missing_above : bool or None
        Where a missing value (NaN) goes: above the threshold (True) or below
        (False). None (bob's stumps, and stumps trained without missing-value
        handling): the machine does not accept NaN.
    categories : array_like or None
        A categorical stump: the category values (non-negative integers) that
        output ``polarity``; every other value, a category never seen in
        training too, outputs ``-polarity`` (``threshold`` is unused, and NaN
        goes "above", into the set, where ``missing_above`` says). None (the
        default): a threshold.
    """

    machine_type = "StumpMachine"

    def __init__(self, threshold: float, polarity: float, index: int, missing_above: bool | None = None,
                 categories=None) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real):
            raise InvalidTypeError(f"threshold: expected a real number, got {type(threshold).__name__}")
        if not np.isfinite(threshold):
            raise InvalidValueError(f"threshold: must be finite, got {threshold}")
        if isinstance(polarity, bool) or not isinstance(polarity, numbers.Real) or polarity not in (1, -1):
            raise InvalidValueError(f"polarity: must be +1 or -1, got {polarity!r}")
        if isinstance(index, bool) or not isinstance(index, numbers.Integral) or index < 0:
            raise InvalidValueError(f"index: must be a non-negative integer, got {index!r}")
        if missing_above is not None and not isinstance(missing_above, (bool, np.bool_)):
            raise InvalidTypeError(f"missing_above: expected None or a bool, got {type(missing_above).__name__}")
        self.threshold = float(threshold)
        self.polarity = float(polarity)
        self.index = int(index)
        self.missing_above = None if missing_above is None else bool(missing_above)
        self.categories = None
        if categories is not None:
            values = np.unique(np.asarray(categories, dtype=np.float64).ravel())
            if values.size == 0 or not np.all(np.isfinite(values) & (values >= 0) & (values == np.round(values))):
                raise InvalidValueError("categories: must be a non-empty set of non-negative integers")
            values.setflags(write=False)
            self.categories = values

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN in the feature read is a missing value the stump routes (see ``missing_above``)."""
        return self.missing_above is not None

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
        column = features[:, self.index]
        above = (column >= np.float64(self.threshold) if self.categories is None
                 else np.isin(column, self.categories))
        if self.missing_above is not None and column.dtype.kind == "f":
            above = np.where(np.isnan(column), self.missing_above, above)
        return np.where(above, self.polarity, -self.polarity)[:, np.newaxis]

    def save(self, group: h5py.Group) -> None:
        """Write ``Threshold``, ``Polarity`` and ``Index`` as bob does (and ``MissingAbove`` when set)."""
        hdf5.write_scalar(group, "Threshold", self.threshold, np.float64)
        hdf5.write_scalar(group, "Polarity", self.polarity, np.float64)
        hdf5.write_scalar(group, "Index", self.index, np.int32)
        if self.missing_above is not None:
            hdf5.write_scalar(group, "MissingAbove", int(self.missing_above), np.int8)
        if self.categories is not None:
            hdf5.write_array(group, "Categories", self.categories)

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
        missing_above = None
        if "MissingAbove" in group:
            flag = hdf5.read_scalar(group, "MissingAbove", "int")
            if flag not in (0, 1):
                raise hdf5.fail(group, f"MissingAbove must be 0 or 1, got {flag}")
            missing_above = bool(flag)
        categories = hdf5.read_array(group, "Categories", "float", ndim=1) if "Categories" in group else None
        try:
            return cls(threshold, polarity, index, missing_above, categories)
        except ValueError as error:
            raise hdf5.fail(group, str(error)) from None

    def _state(self) -> tuple:
        return (self.threshold, self.polarity, self.index, self.missing_above,
                None if self.categories is None else self.categories.tobytes())

    def __repr__(self) -> str:
        missing = "" if self.missing_above is None else f", missing_above={self.missing_above}"
        if self.categories is not None:
            missing += f", categories={self.categories.tolist()}"
        return (f"StumpMachine(threshold={self.threshold!r}, polarity={self.polarity:+.0f}, "
                f"index={self.index}{missing})")
