"""The model format: a :class:`~bob_boost.BoostedMachine` in an HDF5 file or group.

The layout is bob.learn.boosting 2.x's, which bob can read: a root
``version`` attribute (2), a (#machines, #outputs) ``Weights`` dataset and a
group ``WeakMachine_<i>`` per weak machine holding its ``MachineType`` and its
state. bob_boost adds, only where they have something to say:

``NumberOfFeatures`` (attribute)
    The width of the training features.
``CostMatrix`` (dataset)
    The (K, K) costs of a cost-sensitive machine.
``Baseline`` (dataset)
    The (#outputs,) constant added to every score; absent means zeros.
``DecisionRule`` (attribute)
    How scores become predictions (:mod:`bob_boost.decision`); absent means
    bob's implicit rule for the outputs and cost matrix.
``Metadata`` (attribute)
    A JSON object: loss, trainer, class labels (:mod:`bob_boost.labels`), ...
``bob_boost_version`` (attribute)
    The version that wrote the file.

A machine with categorical tree splits (``CategoryOffsets`` and
``CategoryValues`` in a tree's group) is written with ``version`` 3, so that
readers that do not know them, bob.learn.boosting and earlier bob_boost,
refuse the file instead of routing its categories by thresholds.
"""
from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import h5py
import numpy as np

from .. import decision
from .._version import __version__
from ..costs import check_cost_matrix
from ..exceptions import InvalidTypeError, InvalidValueError, ModelFormatError
from ..registry import weak_machine_class
from . import hdf5

if TYPE_CHECKING:  # the machine module imports this one; the class arrives as an argument
    from ..machine import BoostedMachine

#: Value of the root ``version`` attribute, as bob.learn.boosting 2.x writes it.
FORMAT_VERSION = 2

#: The ``version`` of a machine whose trees have categorical splits.
CATEGORICAL_FORMAT_VERSION = 3

_ROOT_ATTRIBUTES = {"version", "bob_boost_version", "NumberOfFeatures", "Metadata", "DecisionRule"}
_ROOT_ITEMS = {"Weights", "CostMatrix", "Baseline"}

#: Errors h5py and numpy raise on damaged or hostile files (dangling links,
#: undecodable names, absurd declared sizes); loading models and cascades turns them into ModelFormatError.
DAMAGE = (KeyError, TypeError, ValueError, MemoryError, OSError, RuntimeError, OverflowError)


def save_machine(machine: BoostedMachine, target: str | os.PathLike | h5py.Group) -> None:
    """Write ``machine`` to a path (atomically) or into an empty open group (see :meth:`BoostedMachine.save`)."""
    if isinstance(target, h5py.Group):
        clashes = sorted(set(target.attrs) & _ROOT_ATTRIBUTES
                         | {k for k in target.keys() if k in _ROOT_ITEMS or k.startswith("WeakMachine_")})
        if clashes:
            raise InvalidValueError(f"target: group {target.name} already holds {clashes}; save into an empty group")
        added_keys = set(target.keys())
        added_attrs = set(target.attrs.keys())
        try:
            write_machine(machine, target)
        except BaseException:
            for key in set(target.keys()) - added_keys:
                del target[key]
            for key in set(target.attrs.keys()) - added_attrs:
                del target.attrs[key]
            raise
        return
    if not isinstance(target, (str, os.PathLike)):
        raise InvalidTypeError(f"target: expected a path or an h5py.Group, got {type(target).__name__}")
    with hdf5.atomic_file(target) as h5:
        write_machine(machine, h5)


def write_machine(machine: BoostedMachine, group: h5py.Group) -> None:
    """Write ``machine`` into the empty ``group``: bob's layout, then bob_boost's extras."""
    categorical = any(getattr(weak, "categories", None) is not None for weak in machine.weak_machines)
    group.attrs.create("version", np.array([CATEGORICAL_FORMAT_VERSION if categorical else FORMAT_VERSION],
                                           dtype=np.int32))
    group.attrs["bob_boost_version"] = __version__
    hdf5.write_array(group, "Weights", machine.weights)
    for i, weak in enumerate(machine.weak_machines):
        sub = group.create_group(f"WeakMachine_{i}")
        hdf5.write_string_attribute(sub, "MachineType", weak.machine_type)
        weak.save(sub)
    if machine.cost_matrix is not None:
        hdf5.write_array(group, "CostMatrix", machine.cost_matrix)
    if machine.number_of_features is not None:
        group.attrs["NumberOfFeatures"] = np.int64(machine.number_of_features)
    if machine.metadata:
        group.attrs["Metadata"] = json.dumps(machine.metadata, sort_keys=True)
    # written only where they differ from bob's implicit meaning, so that
    # classifier files stay exactly what bob.learn.boosting writes
    baseline = machine.baseline
    if np.any(baseline != 0):
        hdf5.write_array(group, "Baseline", baseline)
    if machine.decision_rule != decision.default_rule(machine.number_of_outputs, machine.cost_matrix is not None):
        hdf5.write_string_attribute(group, "DecisionRule", machine.decision_rule)


def load_machine(source: str | os.PathLike | h5py.Group, cls: type[BoostedMachine]) -> BoostedMachine:
    """Read a machine of class ``cls`` from a path or an open group (see :meth:`BoostedMachine.load`)."""
    if isinstance(source, h5py.Group):
        return read_machine(source, cls)
    if not isinstance(source, (str, os.PathLike)):
        raise InvalidTypeError(f"source: expected a path or an h5py.Group, got {type(source).__name__}")
    with hdf5.open_for_reading(source, "source") as h5:
        return read_machine(h5, cls)


def read_machine(group: h5py.Group, cls: type[BoostedMachine]) -> BoostedMachine:
    """Read the machine in ``group``; every kind of damage becomes a :class:`~bob_boost.ModelFormatError`."""
    try:
        return _read_checked(group, cls)
    except ModelFormatError:
        raise
    except DAMAGE as error:
        raise hdf5.fail(group, f"damaged or invalid content ({type(error).__name__}: {error})") from None


def read_metadata(group: h5py.Group) -> dict[str, Any]:
    """The JSON object of ``group``'s ``Metadata`` attribute (empty when absent), as models and cascades keep it.

    Raises
    ------
    ModelFormatError
        When the attribute is not a string holding a JSON object, naming the file and the group.
    """
    if "Metadata" not in group.attrs:
        return {}
    text = hdf5.read_string_attribute(group, "Metadata")
    try:
        metadata = json.loads(text)
    except (ValueError, RecursionError) as error:
        # ValueError: JSONDecodeError, or an integer with more digits than Python converts;
        # RecursionError: arrays or objects nested deeper than the parser's recursion limit
        reason = "nests too deeply" if isinstance(error, RecursionError) else str(error)
        raise hdf5.fail(group, f"attribute 'Metadata' is not valid JSON ({reason})") from None
    if not isinstance(metadata, dict):
        raise hdf5.fail(group, f"attribute 'Metadata' must be a JSON object, got {type(metadata).__name__}")
    return metadata


def _read_checked(group: h5py.Group, cls: type[BoostedMachine]) -> BoostedMachine:
    if "version" not in group.attrs:
        raise hdf5.fail(group, "no 'version' attribute: not a boosted machine")
    version = np.asarray(group.attrs["version"]).reshape(-1)
    if version.size != 1 or version.dtype.kind not in "iu" or int(version[0]) not in (FORMAT_VERSION,
                                                                                      CATEGORICAL_FORMAT_VERSION):
        raise hdf5.fail(group, f"unsupported format version {hdf5.shorten(version.tolist())} "
                               f"(expected {FORMAT_VERSION}, or {CATEGORICAL_FORMAT_VERSION} with categorical splits)")
    weights = hdf5.read_array(group, "Weights", "float")
    if weights.ndim == 1:
        weights = weights[:, np.newaxis]
    if weights.ndim != 2:
        raise hdf5.fail(group, f"Weights must be 2-D (#machines, #outputs), has shape {weights.shape}")
    machine_groups = sorted((k for k in group.keys() if isinstance(k, str) and k.startswith("WeakMachine_")),
                            key=lambda k: (len(k), k))
    expected = [f"WeakMachine_{i}" for i in range(weights.shape[0])]
    if machine_groups != expected:
        raise hdf5.fail(group, f"Weights has {weights.shape[0]} rows but the file has "
                               f"{len(machine_groups)} WeakMachine_<i> groups")
    cost_matrix = None
    if hdf5.has_item(group, "CostMatrix"):
        costs = hdf5.read_array(group, "CostMatrix", "float", ndim=2)  # its errors name the file already
        try:
            cost_matrix = check_cost_matrix(costs, "CostMatrix")
        except ValueError as error:
            raise hdf5.fail(group, str(error)) from None
        if cost_matrix.shape[0] != weights.shape[1]:
            raise hdf5.fail(group, f"CostMatrix has shape {cost_matrix.shape} but the machine has "
                                   f"{weights.shape[1]} outputs")
    number_of_features = None
    if "NumberOfFeatures" in group.attrs:
        value = np.asarray(group.attrs["NumberOfFeatures"])
        if value.size != 1 or value.dtype.kind not in "iu" or int(value.reshape(())) < 1:
            raise hdf5.fail(group, f"attribute 'NumberOfFeatures' must be one positive integer, "
                                   f"got {hdf5.shorten(value.tolist())}")
        number_of_features = int(value.reshape(()))
    metadata = read_metadata(group)
    baseline, rule = _read_meaning(group, weights.shape[1], cost_matrix is not None, metadata)
    machine = cls(number_of_outputs=weights.shape[1] or None, cost_matrix=cost_matrix,
                  number_of_features=number_of_features, metadata=metadata, baseline=baseline,
                  decision_rule=rule)
    for i, name in enumerate(expected):
        sub = hdf5.get_item(group, name)
        if not isinstance(sub, h5py.Group):
            raise hdf5.fail(group, f"{name} is not a group")
        machine_type = hdf5.read_string_attribute(sub, "MachineType")
        try:
            weak_class = weak_machine_class(machine_type)
        except KeyError:
            raise hdf5.fail(sub, f"unknown MachineType {hdf5.shorten(machine_type)}") from None
        try:
            weak = weak_class.load(sub)
        except ModelFormatError:
            raise
        except (ValueError, TypeError, KeyError) as error:
            raise hdf5.fail(sub, str(error)) from None
        if weak.number_of_outputs != weights.shape[1]:
            raise hdf5.fail(sub, f"{weak.number_of_outputs} output(s) but Weights has {weights.shape[1]} columns")
        if number_of_features is not None and np.any(weak.feature_indices() >= number_of_features):
            raise hdf5.fail(sub, f"reads feature {weak.feature_indices()[-1]} but the machine was "
                                 f"trained on {number_of_features} features")
        machine.add_weak_machine(weak, weights[i])
    return machine


def _read_meaning(group: h5py.Group, number_of_outputs: int, has_cost_matrix: bool,
                  metadata: dict[str, Any]) -> tuple[np.ndarray | None, str | None]:
    """The baseline and decision rule a file states, or implies for files written before they were stored.

    bob_boost 0.1 kept a ``BoostingRegressor``'s intercept in the metadata
    only, and marked command-line regression models with ``task``; such files
    get the baseline and the ``"identity"`` rule they always meant.
    """
    baseline = None
    if hdf5.has_item(group, "Baseline"):
        baseline = hdf5.read_array(group, "Baseline", "float", ndim=1)
        if baseline.shape != (number_of_outputs,):
            raise hdf5.fail(group, f"Baseline has shape {baseline.shape} but the machine has "
                                   f"{number_of_outputs} outputs")
    rule = None
    if "DecisionRule" in group.attrs:
        rule = hdf5.read_string_attribute(group, "DecisionRule")
        try:
            decision.check_rule(rule, number_of_outputs, has_cost_matrix, "DecisionRule")
        except ValueError as error:
            raise hdf5.fail(group, str(error)) from None
    elif metadata.get("task") == "regression" or metadata.get("sklearn_estimator") == "BoostingRegressor":
        rule = "identity"
        intercept = metadata.get("intercept")
        if baseline is None and isinstance(intercept, (int, float)) and not isinstance(intercept, bool):
            if number_of_outputs != 1 or not np.isfinite(intercept):
                raise hdf5.fail(group, f"metadata 'intercept' {intercept!r} does not fit the machine")
            baseline = np.array([float(intercept)])
    return baseline, rule
