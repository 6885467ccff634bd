"""An attentional cascade of boosted Haar-feature stages, and its HDF5 file.

A window is accepted by stage ``s`` when the stage's boosted score reaches the stage's threshold; the
cascade accepts a window that every stage accepts, and evaluates stage ``s + 1`` only on the windows that
stage ``s`` accepted (Viola and Jones, 2001). Every stage is a univariate
:class:`~bob_boost.BoostedMachine` of decision stumps whose feature indices refer to the cascade's own
feature table, so a file holds only the features its stages use.

File layout (version 1)::

    /                attrs: bob_boost_cascade = 1, WindowSize = (h, w), NumberOfStages
    /Features        (#features, 5) int64 rows (type, x, y, width, height)
    /Stage_<s>/      attrs: Threshold; the stage's machine in the model format
"""
from __future__ import annotations

import json
import os

import h5py
import numpy as np

from ..exceptions import InvalidTypeError, InvalidValueError, ModelFormatError
from ..io import hdf5
from ..io.model import DAMAGE, read_machine, read_metadata, write_machine
from ..machine import BoostedMachine
from ..weak.stump import StumpMachine
from .haar import HaarFeatures

#: Version of the cascade file layout.
CASCADE_FORMAT_VERSION = 1


class Cascade:
    """Stages of stump machines over a Haar feature table, each with its rejection threshold.

    Parameters
    ----------
    features : HaarFeatures
        The features the stages' stumps index.
    stages : sequence of (BoostedMachine, float)
        Each stage's machine (one output, weak machines :class:`~bob_boost.weak.StumpMachine` over
        ``features``) and its threshold: the stage accepts windows whose score is at least the threshold.
    metadata : dict, optional
        JSON-serialisable facts kept with the cascade (training report, parameters).

    Raises
    ------
    TypeError
        For stages that are not boosted machines of stumps.
    ValueError
        For a stage with other than one output, a stump on a feature outside the table, or a
        non-finite threshold.
    """

    def __init__(self, features: HaarFeatures, stages=(), metadata: dict | None = None) -> None:
        if not isinstance(features, HaarFeatures):
            raise InvalidTypeError(f"features: expected HaarFeatures, got {type(features).__name__}")
        self.features = features
        self.stages: list[tuple[BoostedMachine, float]] = []
        self.metadata = dict(metadata or {})
        for machine, threshold in stages:
            self.add_stage(machine, threshold)

    @property
    def window_size(self) -> tuple[int, int]:
        """(height, width) of the base window."""
        return self.features.window_size

    def __len__(self) -> int:
        return len(self.stages)

    def __repr__(self) -> str:
        sizes = [len(machine) for machine, _ in self.stages]
        return f"Cascade({len(self)} stages of {sizes} stumps, window {self.window_size[0]}x{self.window_size[1]})"

    def add_stage(self, machine: BoostedMachine, threshold: float) -> None:
        """Append a stage (validated as the constructor's ``stages``)."""
        name = f"stages[{len(self.stages)}]"
        if not isinstance(machine, BoostedMachine):
            raise InvalidTypeError(f"{name}: expected a BoostedMachine, got {type(machine).__name__}")
        if len(machine) == 0:
            raise InvalidValueError(f"{name}: has no weak machine")
        if machine.number_of_outputs not in (None, 1) or machine.weights.shape[1:] not in ((), (1,)):
            raise InvalidValueError(f"{name}: a stage has one output, got {machine.number_of_outputs}")
        for weak in machine.weak_machines:
            if type(weak) is not StumpMachine:
                raise InvalidTypeError(f"{name}: stages are decision stumps, got a {type(weak).__name__}")
            if weak.index >= len(self.features):
                raise InvalidValueError(f"{name}: a stump uses feature {weak.index}, but the table has "
                                        f"{len(self.features)} features")
        threshold = float(threshold)
        if not np.isfinite(threshold):
            raise InvalidValueError(f"{name}: the threshold must be finite, got {threshold}")
        self.stages.append((machine, threshold))

    def stage_scores(self, windows) -> np.ndarray:
        """(N, #stages) every stage's score minus its threshold on base-size windows (all stages, no early exit)."""
        values = self.features.evaluate(windows)
        return np.column_stack([machine.decision_scores(values)[:, 0] - threshold
                                for machine, threshold in self.stages]) if self.stages else np.empty((len(values), 0))

    def passed_stages(self, windows) -> np.ndarray:
        """(N,) number of stages each base-size window passes before the first that rejects it."""
        margins = self.stage_scores(windows)
        rejected = margins < 0
        return np.where(rejected.any(axis=1), rejected.argmax(axis=1), len(self)).astype(np.int64)

    def accepts(self, windows) -> np.ndarray:
        """(N,) whether every stage accepts each base-size window."""
        return self.passed_stages(windows) == len(self)

    def flat(self) -> dict[str, np.ndarray]:
        """The stages as flat arrays for the compiled scan: per stump its feature, threshold and two outputs.

        Weights are folded into the outputs and each stage's baseline into its threshold.
        """
        feature, threshold, above, below, ends, bounds = [], [], [], [], [], []
        for machine, stage_threshold in self.stages:
            weights = machine.weights.reshape(-1)
            for weak, weight in zip(machine.weak_machines, weights):
                feature.append(weak.index)
                threshold.append(weak.threshold)
                above.append(weight * weak.polarity)
                below.append(-weight * weak.polarity)
            ends.append(len(feature))
            bounds.append(stage_threshold - float(machine.baseline[0]))
        return {"weak_feature": np.array(feature, dtype=np.int64), "weak_threshold": np.array(threshold),
                "weak_above": np.array(above), "weak_below": np.array(below),
                "stage_ends": np.array(ends, dtype=np.int64), "stage_thresholds": np.array(bounds)}

    def save(self, path: str | os.PathLike) -> None:
        """Write the cascade to ``path`` atomically (a failed save leaves no file and no partial file)."""
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidTypeError(f"path: expected a path, got {type(path).__name__}")
        with hdf5.atomic_file(path) as h5:
            h5.attrs["bob_boost_cascade"] = np.int32(CASCADE_FORMAT_VERSION)
            h5.attrs["WindowSize"] = np.array(self.window_size, dtype=np.int64)
            h5.attrs["NumberOfStages"] = np.int64(len(self))
            if self.metadata:
                h5.attrs["Metadata"] = json.dumps(self.metadata, sort_keys=True)
            hdf5.write_array(h5, "Features", self.features.table)
            for s, (machine, threshold) in enumerate(self.stages):
                group = h5.create_group(f"Stage_{s}")
                group.attrs["Threshold"] = np.float64(threshold)
                write_machine(machine, group)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Cascade":
        """Read a cascade written by :meth:`save`.

        Raises
        ------
        FileNotFoundError
            When there is no file at ``path``.
        ModelFormatError
            For a file that is not a cascade, or one damaged in any way (a feature outside its window,
            a stage that is not a stump machine, a missing threshold, ...).
        """
        with hdf5.open_for_reading(path, "path") as h5:
            try:
                return cls._read(h5)
            except ModelFormatError:
                raise
            except DAMAGE as error:
                raise ModelFormatError(f"path: {os.fspath(path)} is not a valid cascade ({error})") from None

    @classmethod
    def _read(cls, h5: h5py.File) -> "Cascade":
        version = np.asarray(h5.attrs.get("bob_boost_cascade", -1)).reshape(-1)
        if version.size != 1 or version.dtype.kind not in "iu" or int(version[0]) != CASCADE_FORMAT_VERSION:
            raise hdf5.fail(h5, f"not a bob_boost cascade of format {CASCADE_FORMAT_VERSION}")
        size = np.asarray(h5.attrs.get("WindowSize", [])).reshape(-1)
        if size.size != 2 or size.dtype.kind not in "iu" or np.any(size < 1) or np.any(size > 4096):
            raise hdf5.fail(h5, f"attribute 'WindowSize' must be two positive sizes, got {hdf5.shorten(size.tolist())}")
        count = np.asarray(h5.attrs.get("NumberOfStages", -1)).reshape(-1)
        if count.size != 1 or count.dtype.kind not in "iu" or count[0] < 0:
            raise hdf5.fail(h5, "attribute 'NumberOfStages' must be a non-negative integer")
        features = HaarFeatures(hdf5.read_array(h5, "Features", "int", ndim=2), (int(size[0]), int(size[1])))
        cascade = cls(features, metadata=read_metadata(h5))
        for s in range(int(count[0])):
            group = hdf5.get_item(h5, f"Stage_{s}")
            if not isinstance(group, h5py.Group):
                raise hdf5.fail(h5, f"'Stage_{s}' is not a group")
            threshold = np.asarray(group.attrs.get("Threshold", np.nan)).reshape(-1)
            if threshold.size != 1 or threshold.dtype.kind not in "iuf":  # complex would lose its imaginary part
                raise hdf5.fail(group, f"attribute 'Threshold' must hold one real number, got "
                                       f"{hdf5.shorten(threshold.tolist())}")
            cascade.add_stage(read_machine(group, BoostedMachine), float(threshold[0]))
        return cascade

