"""bob.learn.boosting's machines: ``WeakMachine``, ``StumpMachine``, ``LUTMachine`` and ``BoostedMachine``.

Each wraps the bob_boost machine that does the work (its :attr:`core`): evaluation, validation and the
HDF5 format are bob_boost's, which is bob's layout, so files go both ways between bob 2.0 and these
classes. What is added here is bob's API: its constructors (parameters or an ``hdf5`` argument), its
attributes, its call forms with output arrays (:mod:`bob_boost.compat.bob._calls`) and its in-place
``load``.

The numbers are bob's too. Weights keep the signs they have in the file (bob's trainers give stumps and
look-up tables the opposite sign of bob_boost's and negative weights; the products are the same), and a
strong machine adds its weak machines' weighted outputs in bob's order, from the last to the first, so
that a machine saved by bob scores exactly what bob scored, bit for bit.
"""
from __future__ import annotations

import functools
import numbers

import numpy as np

from ... import machine as core_machine
from ...exceptions import BobBoostError, InvalidTypeError, InvalidValueError
from ...io import hdf5 as core_hdf5
from ...registry import weak_machine_class
from ...weak import base as core_base
from ...weak import lut as core_lut
from ...weak import stump as core_stump
from ..._validation import as_feature_matrix
from ._calls import bob_call
from ._hdf5 import HDF5Argument, is_hdf5_argument, machine_error, readable_group, writable_group


class WeakMachine:
    """bob's base class of weak machines, here wrapping any bob_boost weak machine.

    bob's own base class could not be instantiated; this one wraps a :class:`bob_boost.WeakMachine`
    (a tree, say) so that it can join a :class:`BoostedMachine`. :class:`StumpMachine` and
    :class:`LUTMachine` are its bob subclasses.

    Parameters
    ----------
    machine : bob_boost.WeakMachine
        The machine to wrap.
    """

    #: The bob_boost class this bob class wraps (and reads from a file); None: whatever the file says.
    _core_class: type[core_base.WeakMachine] | None = None

    def __init__(self, machine: core_base.WeakMachine) -> None:
        if not isinstance(machine, core_base.WeakMachine):
            raise InvalidTypeError(f"machine: expected a bob_boost WeakMachine, got {type(machine).__name__}")
        self._core = machine

    @property
    def core(self) -> core_base.WeakMachine:
        """The bob_boost weak machine that does the work (bob's signs)."""
        return self._core

    def forward(self, features, predictions: np.ndarray | None = None):
        """The machine's output for one sample or several, in bob's call forms.

        Parameters
        ----------
        features : array_like
            One 1-D sample, or a (#samples, #features) array.
        predictions : numpy.ndarray, optional
            Filled with the outputs: (#outputs,) for one sample, (#samples,) (uni-variate) or
            (#samples, #outputs) for several.

        Returns
        -------
        float, numpy.ndarray or None
            The output of one sample of a uni-variate machine; a new array of outputs for several
            samples when ``predictions`` is not given; None when ``predictions`` was filled.
        """
        return bob_call(self._core, self._core.number_of_outputs, features, predictions)

    def __call__(self, features, predictions: np.ndarray | None = None):
        """Alias of :meth:`forward`, as in bob."""
        return self.forward(features, predictions)

    def feature_indices(self) -> np.ndarray:
        """The sorted feature columns the machine reads (int32, as bob returns them)."""
        return self._core.feature_indices().astype(np.int32)

    def save(self, hdf5: HDF5Argument) -> None:
        """Write the machine into ``hdf5`` (a path, an open h5py file or group, or an HDF5File), as bob does.

        The group gets the machine's datasets and its ``MachineType`` attribute; it must not hold a
        machine yet.
        """
        with writable_group(hdf5) as group:
            if "MachineType" in group.attrs:
                raise InvalidValueError(f"hdf5: {core_hdf5.where(group)} already holds a weak machine; "
                                        f"save into another group")
            try:
                self._core.save(group)
            except (ValueError, OSError) as error:  # h5py refuses to overwrite a dataset of the same name
                raise InvalidValueError(f"hdf5: cannot write the machine into {core_hdf5.where(group)} "
                                        f"({error})") from None
            core_hdf5.write_string_attribute(group, "MachineType", self._core.machine_type)

    def load(self, hdf5: HDF5Argument) -> None:
        """Replace this machine by the one stored in ``hdf5`` (bob's ``load``, in place)."""
        self._core = self._read(hdf5)

    @classmethod
    def _read(cls, hdf5: HDF5Argument) -> core_base.WeakMachine:
        """The bob_boost weak machine stored in ``hdf5``, of this class's kind."""
        with readable_group(hdf5) as group:
            try:
                stored = core_hdf5.read_string_attribute(group, "MachineType") if "MachineType" in group.attrs \
                    else None
                if cls._core_class is None:
                    if stored is None:
                        raise core_hdf5.fail(group, "no MachineType attribute: not a weak machine")
                    return weak_machine_class(stored).load(group)
                if stored not in (None, cls._core_class.machine_type):
                    raise core_hdf5.fail(group, f"holds a {stored}, not a {cls._core_class.machine_type}")
                return cls._core_class.load(group)
            except (BobBoostError, KeyError) as error:
                raise machine_error("hdf5", error) from None

    def __repr__(self) -> str:
        return f"bob.{self._core!r}"


class StumpMachine(WeakMachine):
    """bob's decision stump: ``polarity`` where ``x[index] >= threshold``, ``-polarity`` below.

    ``StumpMachine(threshold, polarity, index)`` or ``StumpMachine(hdf5)``.

    Parameters
    ----------
    threshold : float
        The decision threshold.
    polarity : {+1, -1}
        The output at or above the threshold.
    index : int
        The feature column compared with the threshold.
    hdf5 : path, h5py.Group or HDF5File, optional
        Read the stump from here instead (it may also be the only positional argument).
    """

    _core_class = core_stump.StumpMachine

    def __init__(self, threshold: float | HDF5Argument | None = None, polarity: float | None = None,
                 index: int | None = None, hdf5: HDF5Argument | None = None) -> None:
        if hdf5 is None and polarity is None and index is None and is_hdf5_argument(threshold):
            hdf5, threshold = threshold, None
        if hdf5 is not None:
            if (threshold, polarity, index) != (None, None, None):
                raise InvalidValueError("hdf5: give either hdf5 or threshold, polarity and index, not both")
            self._core = self._read(hdf5)
            return
        if threshold is None or polarity is None or index is None:
            raise InvalidValueError("threshold, polarity, index: all three are needed (or a single hdf5 argument)")
        self._core = core_stump.StumpMachine(threshold, polarity, index)

    @property
    def threshold(self) -> float:
        """The decision threshold."""
        return self._core.threshold

    @property
    def polarity(self) -> float:
        """+1 if the output is +1 at or above the threshold, -1 if it is -1 there."""
        return self._core.polarity

    @property
    def index(self) -> int:
        """The feature column the stump reads (bob's :meth:`feature_indices` ``[0]``)."""
        return self._core.index


class LUTMachine(WeakMachine):
    """bob's look-up-table machine: output ``o`` is ``lut[x[indices[o]], o]`` for integer features.

    ``LUTMachine(look_up_table, index)`` (uni-variate), ``LUTMachine(look_up_tables, indices)`` or
    ``LUTMachine(hdf5)``.

    Parameters
    ----------
    look_up_tables : array_like
        (#entries, #outputs) tables, or one (#entries,) table.
    indices : int or array_like of int
        The feature column of each output (one int for one table).
    hdf5 : path, h5py.Group or HDF5File, optional
        Read the machine from here instead (it may also be the only positional argument).
    look_up_table, index : optional
        bob's keyword names of the uni-variate form.
    """

    _core_class = core_lut.LUTMachine

    def __init__(self, look_up_tables=None, indices=None, hdf5: HDF5Argument | None = None, *,
                 look_up_table=None, index: int | None = None) -> None:
        if look_up_table is not None or index is not None:
            if look_up_tables is not None or indices is not None:
                raise InvalidValueError("look_up_table, index: bob's uni-variate keywords replace "
                                        "look_up_tables and indices; give one pair")
            look_up_tables, indices = look_up_table, index
        if hdf5 is None and indices is None and is_hdf5_argument(look_up_tables):
            hdf5, look_up_tables = look_up_tables, None
        if hdf5 is not None:
            if look_up_tables is not None or indices is not None:
                raise InvalidValueError("hdf5: give either hdf5 or look-up tables and indices, not both")
            self._core = self._read(hdf5)
            return
        if look_up_tables is None or indices is None:
            raise InvalidValueError("look_up_tables, indices: both are needed (or a single hdf5 argument)")
        self._core = core_lut.LUTMachine(look_up_tables, indices)

    @property
    def lut(self) -> np.ndarray:
        """The (#entries, #outputs) look-up tables (read-only); #outputs is 1 for a uni-variate machine."""
        return self._core.look_up_tables


#: bob_boost weak machine class -> the bob class wrapping it.
_WRAPPERS: dict[type, type[WeakMachine]] = {core_stump.StumpMachine: StumpMachine, core_lut.LUTMachine: LUTMachine}


def wrap(machine: core_base.WeakMachine) -> WeakMachine:
    """The bob object for a bob_boost weak machine (a :class:`StumpMachine`, a :class:`LUTMachine`, or else
    a :class:`WeakMachine`), sharing it."""
    wrapper = object.__new__(_WRAPPERS.get(type(machine), WeakMachine))
    wrapper._core = machine
    return wrapper


def unwrap(machine, name: str = "machine") -> core_base.WeakMachine:
    """The bob_boost weak machine of a bob :class:`WeakMachine` (a bob_boost one is taken as it is)."""
    if isinstance(machine, WeakMachine):
        return machine.core
    if isinstance(machine, core_base.WeakMachine):
        return machine
    raise InvalidTypeError(f"{name}: expected a WeakMachine, got {type(machine).__name__}")


class BoostedMachine:
    """bob's strong machine: the weighted sum of weak machines.

    ``BoostedMachine()`` is empty (see :meth:`add_weak_machine`); ``BoostedMachine(hdf5)`` reads one
    saved by bob.learn.boosting, by :meth:`save` or by :meth:`bob_boost.BoostedMachine.save`.

    Parameters
    ----------
    hdf5 : path, h5py.File, h5py.Group or HDF5File, optional
        Where to read the machine from.

    Raises
    ------
    bob_boost.ModelFormatError
        If ``hdf5`` holds no valid machine; the message names the argument, the file and the group.
    """

    def __init__(self, hdf5: HDF5Argument | None = None) -> None:
        self._core = core_machine.BoostedMachine() if hdf5 is None else self._read(hdf5)

    @classmethod
    def from_core(cls, machine: core_machine.BoostedMachine) -> BoostedMachine:
        """The bob view of a :class:`bob_boost.BoostedMachine`, sharing it (not part of bob's API)."""
        if not isinstance(machine, core_machine.BoostedMachine):
            raise InvalidTypeError(f"machine: expected a bob_boost BoostedMachine, got {type(machine).__name__}")
        view = cls()
        view._core = machine
        return view

    @property
    def core(self) -> core_machine.BoostedMachine:
        """The :class:`bob_boost.BoostedMachine` holding the weak machines and weights (bob's signs)."""
        return self._core

    # -- bob's attributes ----------------------------------------------------------
    @property
    def weights(self) -> np.ndarray:
        """(#machines, #outputs) weights of the weak machines."""
        return self._core.weights

    @property
    def alpha(self) -> np.ndarray:
        """Alias of :attr:`weights`, as in bob."""
        return self.weights

    @property
    def outputs(self) -> int:
        """The number of outputs (1 for uni-variate machines; 0 while the machine is empty)."""
        return self._core.number_of_outputs or 0

    @property
    def weak_machines(self) -> list[WeakMachine]:
        """The weak machines, in the order they were added (new bob objects sharing the machines)."""
        return [wrap(machine) for machine in self._core.weak_machines]

    @property
    def indices(self) -> np.ndarray:
        """The sorted feature columns any weak machine reads (int32)."""
        return self.feature_indices()

    def feature_indices(self, start: int = 0, end: int = -1) -> np.ndarray:
        """The sorted feature columns read by the weak machines ``start`` to ``end - 1`` (``end=-1``: all).

        Returns
        -------
        numpy.ndarray
            int32 column indices, each once.
        """
        for value, label in ((start, "start"), (end, "end")):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise InvalidTypeError(f"{label}: expected an int, got {type(value).__name__}")
        machines = self._core.weak_machines
        selected = machines[start:] if end < 0 else machines[start:end]
        if not selected:
            return np.zeros(0, dtype=np.int32)
        return np.unique(np.concatenate([m.feature_indices() for m in selected])).astype(np.int32)

    def add_weak_machine(self, machine: WeakMachine, weight) -> None:
        """Append ``machine`` with ``weight``: a float (uni-variate) or one weight per output."""
        self._core.add_weak_machine(unwrap(machine), weight)

    # -- evaluation ----------------------------------------------------------------
    def _scores(self, features, outputs: int = 1) -> np.ndarray:
        """(#samples, #outputs) scores, summed as bob sums them: from the last weak machine to the first.

        An empty machine scores 0, as bob's, with ``outputs`` columns.
        """
        machines, weights = self._core.weak_machines, self._core.weights
        array = as_feature_matrix(features)
        if not machines:
            return np.zeros((array.shape[0], outputs))
        indices = self._core.feature_indices()
        if indices[-1] >= array.shape[1]:
            raise InvalidValueError(f"features: the machine reads feature {indices[-1]} but features have only "
                                    f"{array.shape[1]} columns")
        for machine in machines:
            machine.check_values(array)
        scores = np.zeros((array.shape[0], weights.shape[1]))
        # bob's order of additions gives bob's rounding: scores of bob's files equal bob's bit for bit
        for i in range(len(machines) - 1, -1, -1):
            scores += weights[i] * machines[i].forward(array)
        return scores

    def forward(self, features, predictions: np.ndarray | None = None, labels: np.ndarray | None = None):
        """The strong machine's scores (and labels) in bob's call forms.

        Parameters
        ----------
        features : array_like
            One 1-D sample, or a (#samples, #features) array (bob took uint16; any integer or float
            type is accepted, and look-up tables need integers below their size).
        predictions : numpy.ndarray, optional
            float64 array filled with the scores: (#outputs,) for one sample, (#samples,) for a
            uni-variate machine or (#samples, #outputs).
        labels : numpy.ndarray, optional
            float64 array of ``predictions``' shape, filled with +1 / -1: the sign of a uni-variate
            score (+1 only above 0), or +1 at each sample's largest score and -1 elsewhere.

        Returns
        -------
        float, numpy.ndarray or None
            The score of one sample of a uni-variate machine; new scores for several samples when no
            ``predictions`` are given; None when the arrays were filled.

        Raises
        ------
        TypeError, ValueError
            Output arrays that are not float64 or have the wrong shape (bob_boost's
            ``InvalidTypeError`` / ``InvalidValueError``, naming the argument).
        """
        outputs = self.outputs
        if not outputs:  # an empty machine: as many outputs as the arrays to fill have (bob filled zeros)
            outputs = predictions.shape[-1] if isinstance(predictions, np.ndarray) and (
                predictions.ndim == 2 or (predictions.ndim == 1 and np.ndim(features) == 1)) else 1
        return bob_call(functools.partial(self._scores, outputs=outputs), outputs, features, predictions, labels)

    def __call__(self, features, predictions: np.ndarray | None = None, labels: np.ndarray | None = None):
        """Alias of :meth:`forward`, as in bob."""
        return self.forward(features, predictions, labels)

    # -- HDF5 ------------------------------------------------------------------------
    @staticmethod
    def _read(hdf5: HDF5Argument) -> core_machine.BoostedMachine:
        with readable_group(hdf5) as group:
            try:
                return core_machine.BoostedMachine.load(group)
            except BobBoostError as error:
                raise machine_error("hdf5", error) from None

    def load(self, hdf5: HDF5Argument) -> None:
        """Replace this machine's content by the machine stored in ``hdf5`` (bob's ``load``, in place)."""
        self._core = self._read(hdf5)

    def save(self, hdf5: HDF5Argument) -> None:
        """Write the machine to ``hdf5``: a path, or an empty open h5py file or group, or an HDF5File.

        The layout is bob's (a ``version`` attribute, ``Weights``, ``WeakMachine_<i>`` groups), plus the
        attributes bob_boost adds where it has something to say (:mod:`bob_boost.io.model`), which bob
        ignores. The file is flushed; nothing keeps a reference to it.
        """
        with writable_group(hdf5) as group:
            self._core.save(group)

    def __repr__(self) -> str:
        return f"bob.BoostedMachine({len(self._core)} weak machines, {self.outputs} output(s))"


__all__ = ["BoostedMachine", "LUTMachine", "StumpMachine", "WeakMachine", "unwrap", "wrap"]
