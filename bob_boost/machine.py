"""The strong machine: a weighted sum of weak machines, and its HDF5 format."""
from __future__ import annotations

import json
import os
from typing import Any, Iterator

import h5py
import numpy as np

from . import decision, hdf5
from ._validation import as_feature_matrix, check_positive_int
from ._version import __version__
from .costs import check_cost_matrix, cost_star  # noqa: F401  (cost_star: re-exported, old import path)
from .exceptions import ModelFormatError
from .registry import weak_machine_class
from .weak.base import WeakMachine

#: Value of the root ``version`` attribute, as bob.learn.boosting 2.x writes it.
FORMAT_VERSION = 2

#: Errors h5py and numpy raise on damaged or hostile files (dangling links,
#: undecodable names, absurd declared sizes); loading turns them into ModelFormatError.
_ROOT_ATTRIBUTES = {"version", "bob_boost_version", "NumberOfFeatures", "Metadata", "DecisionRule"}
_ROOT_ITEMS = {"Weights", "CostMatrix", "Baseline"}

_DAMAGE = (KeyError, TypeError, ValueError, MemoryError, OSError, RuntimeError)


class BoostedMachine:
    """Strong machine ``S(x) = b + sum_i w_i * W_i(x)``.

    The machine owns its meaning: the baseline ``b`` (an intercept, zero for
    every machine bob.learn.boosting writes) and the decision rule that turns
    scores into predictions (:mod:`bob_boost.decision`) travel with it in the
    model file, so every front door predicts the same from the same file.

    Parameters
    ----------
    number_of_outputs : int, optional
        Fixed by the first weak machine added when not given.
    cost_matrix : array_like, optional
        (K, K) cost matrix. When set, :meth:`predict` returns the
        cost-sensitive decision ``argmin_k (C* S(x))_k`` (BAdaCost / CMEL)
        instead of the index of the largest score.
    number_of_features : int, optional
        Width of the feature vectors the machine was trained on; features of
        another width are rejected.
    metadata : dict, optional
        JSON-serialisable extra information (loss name, class labels, ...)
        saved with the model.
    baseline : float or array_like, optional
        The constant ``b`` added to every score, one value per output (a
        scalar is repeated); 0 by default.
    decision_rule : {"sign", "argmax", "cost_sensitive", "identity"}, optional
        How :meth:`predict` turns scores into predictions; by default
        ``"cost_sensitive"`` with a cost matrix, else ``"sign"`` for one
        output and ``"argmax"`` for several (bob.learn.boosting's rules).
    """

    def __init__(self, number_of_outputs: int | None = None, cost_matrix=None,
                 number_of_features: int | None = None, metadata: dict[str, Any] | None = None,
                 baseline=None, decision_rule: str | None = None) -> None:
        self._weak_machines: list[WeakMachine] = []
        self._weights: list[np.ndarray] = []
        self._number_of_outputs = (None if number_of_outputs is None
                                   else check_positive_int(number_of_outputs, "number_of_outputs"))
        self.cost_matrix = None
        if cost_matrix is not None:
            self.cost_matrix = check_cost_matrix(cost_matrix)
            size = self.cost_matrix.shape[0]
            if self._number_of_outputs not in (None, size):
                raise ValueError(f"cost_matrix: is {size}x{size} but number_of_outputs is {number_of_outputs}")
            self._number_of_outputs = size
        self.number_of_features = (None if number_of_features is None
                                   else check_positive_int(number_of_features, "number_of_features"))
        self.metadata: dict[str, Any] = dict(metadata or {})
        try:
            json.dumps(self.metadata)
        except (TypeError, ValueError) as error:
            raise TypeError(f"metadata: must be JSON-serialisable ({error})") from None
        self._baseline: np.ndarray | None = None
        if baseline is not None:
            self.baseline = baseline
        self._decision_rule: str | None = None
        if decision_rule is not None:
            self.decision_rule = decision_rule

    # -- meaning -----------------------------------------------------------
    @property
    def baseline(self) -> np.ndarray:
        """(#outputs,) constant added to every score (a new array; zeros unless set)."""
        if self._baseline is None:
            return np.zeros(self._number_of_outputs or 1)
        return self._baseline.copy()

    @baseline.setter
    def baseline(self, value) -> None:
        array = np.array(value, dtype=np.float64).reshape(-1)
        outputs = self._number_of_outputs
        if array.size == 1 and outputs is not None and outputs > 1:
            array = np.repeat(array, outputs)
        if outputs is not None and array.shape != (outputs,):
            raise ValueError(f"baseline: expected a scalar or {outputs} values, got shape {np.shape(value)}")
        if not np.all(np.isfinite(array)):
            raise ValueError("baseline: must be finite")
        if outputs is None:
            self._number_of_outputs = array.size
        self._baseline = array

    @property
    def decision_rule(self) -> str:
        """The rule :meth:`predict` applies (see :mod:`bob_boost.decision`)."""
        if self._decision_rule is not None:
            return self._decision_rule
        return decision.default_rule(self._number_of_outputs, self.cost_matrix is not None)

    @decision_rule.setter
    def decision_rule(self, rule: str) -> None:
        self._decision_rule = decision.check_rule(rule, self._number_of_outputs, self.cost_matrix is not None)

    @property
    def is_classifier(self) -> bool:
        """Whether the machine predicts classes (any rule but ``"identity"``)."""
        return self.decision_rule in decision.CLASSIFICATION_RULES

    # -- composition -------------------------------------------------------
    def add_weak_machine(self, machine: WeakMachine, weight) -> None:
        """Append ``machine`` with ``weight`` (a scalar, or one value per output)."""
        if not isinstance(machine, WeakMachine):
            raise TypeError(f"machine: expected a WeakMachine, got {type(machine).__name__}")
        outputs = machine.number_of_outputs
        if self._number_of_outputs is not None and outputs != self._number_of_outputs:
            raise ValueError(
                f"machine: has {outputs} output(s) but the boosted machine has {self._number_of_outputs}")
        if self._decision_rule == "sign" and outputs != 1:
            raise ValueError(f"machine: has {outputs} outputs but the decision rule 'sign' needs one")
        weight_array = np.array(weight, dtype=np.float64).reshape(-1)
        if weight_array.size == 1 and outputs > 1:
            weight_array = np.repeat(weight_array, outputs)
        if weight_array.shape != (outputs,):
            raise ValueError(f"weight: expected a scalar or {outputs} values, got shape {np.shape(weight)}")
        if not np.all(np.isfinite(weight_array)):
            raise ValueError("weight: must be finite")
        self._number_of_outputs = outputs
        self._weak_machines.append(machine)
        self._weights.append(weight_array)

    @property
    def weak_machines(self) -> list[WeakMachine]:
        """The weak machines in the order they were added (a new list)."""
        return list(self._weak_machines)

    @property
    def weights(self) -> np.ndarray:
        """(#machines, #outputs) weights (a new array)."""
        if not self._weights:
            return np.zeros((0, self._number_of_outputs or 0))
        return np.vstack(self._weights)

    @property
    def number_of_outputs(self) -> int | None:
        """Number of outputs; None for an empty machine whose width is not fixed yet."""
        return self._number_of_outputs

    def __len__(self) -> int:
        return len(self._weak_machines)

    def feature_indices(self) -> np.ndarray:
        """Sorted unique feature columns that any weak machine reads."""
        if not self._weak_machines:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate([m.feature_indices() for m in self._weak_machines]))

    # -- evaluation --------------------------------------------------------
    def _check_features(self, features) -> np.ndarray:
        array = as_feature_matrix(features, allow_1d=True)
        if self.number_of_features is not None and array.shape[1] != self.number_of_features:
            raise ValueError(
                f"features: the machine was trained on {self.number_of_features} features, got {array.shape[1]}")
        indices = self.feature_indices()
        if indices.size and indices[-1] >= array.shape[1]:
            raise ValueError(f"features: the machine reads feature {indices[-1]} but features have "
                             f"only {array.shape[1]} columns")
        for machine in self._weak_machines:
            machine.check_values(array)
        return array

    def _initial_scores(self, n_samples: int) -> np.ndarray:
        """(#samples, #outputs) scores of the empty machine: the baseline."""
        total = np.zeros((n_samples, self._number_of_outputs or 1))
        if self._baseline is not None:
            total += self._baseline
        return total

    def _forward(self, array: np.ndarray) -> np.ndarray:
        # the baseline first, then the rounds in order: staged_decision_scores adds in
        # the same order, so its last array equals these scores bit for bit
        total = self._initial_scores(array.shape[0])
        for machine, weight in zip(self._weak_machines, self._weights):
            total += weight * machine.forward(array)
        return total

    def decision_scores(self, features) -> np.ndarray:
        """(#samples, #outputs) scores including the baseline, always 2-D (a 1-D sample gives one row)."""
        return self._forward(self._check_features(features))

    def staged_decision_scores(self, features) -> Iterator[np.ndarray]:
        """Scores after each round: ``len(self)`` arrays of shape (#samples, #outputs).

        The i-th array holds the baseline plus the first ``i + 1`` weighted
        weak machines; the last one equals :meth:`decision_scores` bit for
        bit. The features are validated once, before the first array.

        Yields
        ------
        numpy.ndarray
            A new (#samples, #outputs) array per round.
        """
        array = self._check_features(features)
        return self._staged(array)

    def _staged(self, array: np.ndarray) -> Iterator[np.ndarray]:
        total = self._initial_scores(array.shape[0])
        for machine, weight in zip(self._weak_machines, self._weights):
            total += weight * machine.forward(array)
            yield total.copy()

    def __call__(self, features) -> np.ndarray | float:
        """Scores of ``features``.

        Returns
        -------
        numpy.ndarray or float
            (#samples,) for a univariate machine, (#samples, #outputs)
            otherwise; a 1-D sample gives a float or an (#outputs,) vector.
        """
        scores = self.decision_scores(features)
        if scores.shape[1] == 1:
            scores = scores[:, 0]
        return scores[0] if np.ndim(features) == 1 else scores

    def predict(self, features) -> np.ndarray | int | float:
        """Predictions of ``features`` under the machine's :attr:`decision_rule`.

        Univariate classifiers give +1 where the score is positive and -1
        elsewhere; multi-variate ones the index of the largest score, or with
        a cost matrix the index minimising ``C* S(x)`` (lowest index on ties);
        regression machines (``"identity"``) their scores.
        """
        labels = self.labels_from_scores(self.decision_scores(features))
        return labels[0] if np.ndim(features) == 1 else labels

    def class_indices_from_scores(self, scores: np.ndarray) -> np.ndarray:
        """Class index 0 .. K-1 per sample for (#samples, #outputs) ``scores``.

        The labels of :meth:`labels_from_scores`, with a univariate machine's
        -1 / +1 turned into class 0 / 1.

        Raises
        ------
        ValueError
            For a regression machine (decision rule ``"identity"``).
        """
        return decision.class_indices_from_scores(self.decision_rule, scores, self.cost_matrix)

    def labels_from_scores(self, scores: np.ndarray) -> np.ndarray:
        """The predictions :meth:`predict` gives for (#samples, #outputs) ``scores``."""
        return decision.labels_from_scores(self.decision_rule, scores, self.cost_matrix)

    # -- HDF5 --------------------------------------------------------------
    def save(self, target: str | os.PathLike | h5py.Group) -> None:
        """Write the machine in bob.learn.boosting's layout (plus our extras).

        Parameters
        ----------
        target : path or h5py.Group
            A path is written atomically (a temporary file renamed over it);
            into an open group the machine is written directly, and whatever
            was added is removed again if writing fails.
        """
        if isinstance(target, h5py.Group):
            clashes = sorted(set(target.attrs) & _ROOT_ATTRIBUTES
                             | {k for k in target.keys() if k in _ROOT_ITEMS or k.startswith("WeakMachine_")})
            if clashes:
                raise ValueError(f"target: group {target.name} already holds {clashes}; save into an empty group")
            added_keys = set(target.keys())
            added_attrs = set(target.attrs.keys())
            try:
                self._write(target)
            except BaseException:
                for key in set(target.keys()) - added_keys:
                    del target[key]
                for key in set(target.attrs.keys()) - added_attrs:
                    del target.attrs[key]
                raise
            return
        if not isinstance(target, (str, os.PathLike)):
            raise TypeError(f"target: expected a path or an h5py.Group, got {type(target).__name__}")
        with hdf5.atomic_file(target) as h5:
            self._write(h5)

    def _write(self, group: h5py.Group) -> None:
        group.attrs.create("version", np.array([FORMAT_VERSION], dtype=np.int32))
        group.attrs["bob_boost_version"] = __version__
        group.create_dataset("Weights", data=self.weights)
        for i, machine in enumerate(self._weak_machines):
            sub = group.create_group(f"WeakMachine_{i}")
            hdf5.write_string_attribute(sub, "MachineType", machine.machine_type)
            machine.save(sub)
        if self.cost_matrix is not None:
            group.create_dataset("CostMatrix", data=self.cost_matrix)
        if self.number_of_features is not None:
            group.attrs["NumberOfFeatures"] = np.int64(self.number_of_features)
        if self.metadata:
            group.attrs["Metadata"] = json.dumps(self.metadata, sort_keys=True)
        # written only where they differ from bob's implicit meaning, so that
        # classifier files stay exactly what bob.learn.boosting writes
        if self._baseline is not None and np.any(self._baseline != 0):
            group.create_dataset("Baseline", data=self._baseline)
        if self._decision_rule is not None and self._decision_rule != decision.default_rule(
                self._number_of_outputs, self.cost_matrix is not None):
            hdf5.write_string_attribute(group, "DecisionRule", self._decision_rule)

    @classmethod
    def load(cls, source: str | os.PathLike | h5py.Group) -> "BoostedMachine":
        """Read a machine written by :meth:`save` or by bob.learn.boosting.

        Raises
        ------
        bob_boost.ModelFormatError
            If the file is not HDF5, is truncated, or does not hold a valid
            machine; the message names the file, the group and the problem.
        """
        if isinstance(source, h5py.Group):
            return cls._read(source)
        if not isinstance(source, (str, os.PathLike)):
            raise TypeError(f"source: expected a path or an h5py.Group, got {type(source).__name__}")
        path = os.fspath(source)
        if not os.path.exists(path):
            raise FileNotFoundError(f"source: no such file {path!r}")
        try:
            h5 = h5py.File(path, "r")
        except OSError as error:
            raise ModelFormatError(f"{path}: not a readable HDF5 file ({error})") from None
        with h5:
            return cls._read(h5)

    @classmethod
    def _read(cls, group: h5py.Group) -> "BoostedMachine":
        try:
            return cls._read_checked(group)
        except ModelFormatError:
            raise
        except _DAMAGE as error:
            raise hdf5.fail(group, f"damaged or invalid content ({type(error).__name__}: {error})") from None

    @classmethod
    def _read_checked(cls, group: h5py.Group) -> "BoostedMachine":
        if "version" not in group.attrs:
            raise hdf5.fail(group, "no 'version' attribute: not a boosted machine")
        version = np.asarray(group.attrs["version"]).reshape(-1)
        if version.size != 1 or version.dtype.kind not in "iu" or int(version[0]) != FORMAT_VERSION:
            raise hdf5.fail(group, f"unsupported format version {version.tolist()} (expected {FORMAT_VERSION})")
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
        if "CostMatrix" in group:
            try:
                cost_matrix = check_cost_matrix(hdf5.read_array(group, "CostMatrix", "float", ndim=2), "CostMatrix")
            except ValueError as error:
                raise hdf5.fail(group, str(error)) from None
            if cost_matrix.shape[0] != weights.shape[1]:
                raise hdf5.fail(group, f"CostMatrix has shape {cost_matrix.shape} but the machine has "
                                       f"{weights.shape[1]} outputs")
        number_of_features = None
        if "NumberOfFeatures" in group.attrs:
            value = np.asarray(group.attrs["NumberOfFeatures"])
            if value.size != 1 or value.dtype.kind not in "iu" or int(value.reshape(())) < 1:
                raise hdf5.fail(group, f"attribute 'NumberOfFeatures' must be one positive integer, got {value!r}")
            number_of_features = int(value.reshape(()))
        metadata = {}
        if "Metadata" in group.attrs:
            try:
                metadata = json.loads(hdf5.read_string_attribute(group, "Metadata"))
            except json.JSONDecodeError as error:
                raise hdf5.fail(group, f"attribute 'Metadata' is not valid JSON ({error})") from None
            if not isinstance(metadata, dict):
                raise hdf5.fail(group, f"attribute 'Metadata' must be a JSON object, got {type(metadata).__name__}")
        baseline, rule = _read_meaning(group, weights.shape[1], cost_matrix is not None, metadata)
        machine = cls(number_of_outputs=weights.shape[1] or None, cost_matrix=cost_matrix,
                      number_of_features=number_of_features, metadata=metadata, baseline=baseline,
                      decision_rule=rule)
        for i, name in enumerate(expected):
            sub = group[name]
            if not isinstance(sub, h5py.Group):
                raise hdf5.fail(group, f"{name} is not a group")
            machine_type = hdf5.read_string_attribute(sub, "MachineType")
            try:
                weak_class = weak_machine_class(machine_type)
            except KeyError:
                raise hdf5.fail(sub, f"unknown MachineType {machine_type!r}") from None
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

    def __repr__(self) -> str:
        return f"BoostedMachine({len(self)} weak machines, {self._number_of_outputs} output(s))"


def _read_meaning(group: h5py.Group, number_of_outputs: int, has_cost_matrix: bool,
                  metadata: dict[str, Any]) -> tuple[np.ndarray | None, str | None]:
    """The baseline and decision rule a file states, or implies for files written before they were stored.

    bob_boost 0.1 kept a ``BoostingRegressor``'s intercept in the metadata
    only, and marked command-line regression models with ``task``; such files
    get the baseline and the ``"identity"`` rule they always meant.
    """
    baseline = None
    if "Baseline" in group:
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
