"""The interface every weak machine implements."""
from __future__ import annotations

import h5py
import numpy as np

from .._validation import as_feature_matrix
from ..exceptions import InvalidValueError


class WeakMachine:
    """Base class of weak machines.

    A weak machine is a pure function of a feature matrix: ``machine(features)``
    maps a (#samples, #features) array to a float64 (#samples, #outputs)
    array. It knows which feature columns it reads (:meth:`feature_indices`)
    and stores itself in an HDF5 group (:meth:`save` / :meth:`load`) under
    the ``MachineType`` string :attr:`machine_type`, by which the registry
    (:mod:`bob_boost.registry`) finds the class again.
    """

    #: String stored as the ``MachineType`` attribute of the machine's group.
    machine_type: str = ""

    @property
    def number_of_outputs(self) -> int:
        """Number of output columns the machine produces."""
        raise NotImplementedError

    def feature_indices(self) -> np.ndarray:
        """Sorted unique feature columns the machine reads (int64 array)."""
        raise NotImplementedError

    def forward(self, features: np.ndarray) -> np.ndarray:
        """Evaluate a feature matrix that has already been validated.

        Subclasses implement this; :meth:`__call__` validates first.
        """
        raise NotImplementedError

    def __call__(self, features) -> np.ndarray:
        """Evaluate every row of ``features``; returns (#samples, #outputs) float64."""
        return self.forward(self.check_features(features))

    def check_features(self, features) -> np.ndarray:
        """Validate ``features`` for this machine (2-D, finite, enough columns, valid values)."""
        array = as_feature_matrix(features)
        indices = self.feature_indices()
        if indices.size and indices[-1] >= array.shape[1]:
            raise InvalidValueError(
                f"features: {type(self).__name__} reads feature {indices[-1]} but features have "
                f"only {array.shape[1]} columns")
        self.check_values(array)
        return array

    #: Whether NaN in the columns it reads is a missing value the machine handles (else NaN is rejected).
    accepts_missing = False

    def check_values(self, features: np.ndarray) -> None:
        """Raise ``ValueError`` if the columns this machine reads hold values it cannot evaluate.

        ``features`` is already a finite 2-D array wide enough for the machine.
        The default accepts any value.
        """

    def save(self, group: h5py.Group) -> None:
        """Write the machine's parameters into ``group`` (MachineType is written by the caller)."""
        raise NotImplementedError

    @classmethod
    def load(cls, group: h5py.Group) -> "WeakMachine":
        """Read a machine written by :meth:`save` (or by bob.learn.boosting) from ``group``."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._state() == other._state()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._state()))

    def _state(self) -> tuple:
        """Hashable summary of the parameters, used for equality: what the machine computes (a tree's training
        records, its nodes' cover and gains, are not compared: sums of the same rows in another order
        differ in their last bits)."""
        raise NotImplementedError
