"""Estimators from model files: the ones the estimators saved, and any other bob_boost or bob model."""
from __future__ import annotations

import inspect
import os
from typing import Any

import numpy as np

from ..exceptions import InvalidValueError, ModelFormatError
from ..labels import classes_of
from ..machine import BoostedMachine
from ..weak.lut import LUTMachine
from ._fitting import restore_state
from ._base import CLASSIFICATION_LOSSES, ESTIMATOR_KEY, _BoostedEstimator
from .boosting import BoostingClassifier
from .regression import BoostingRegressor
from .badacost import BAdaCostClassifier
from .cost_sensitive import AdaBoostDBClassifier
from .adamec import AdaMECClassifier
from ..family_recipes import REWEIGHTING_TRAINERS
from .cost_reweighting import CostReweightingClassifier
from .multiclass_cost import MultiClassCostClassifier
from .piboost import PIBoostClassifier
from .additive_logistic import ArcGVClassifier, GentleAdaBoostClassifier, LogitBoostClassifier
from .real_adaboost import RealAdaBoostClassifier

__all__ = ["estimator_from_machine", "load_estimator"]


_ESTIMATORS: dict[str, type[_BoostedEstimator]] = {
    cls.__name__: cls for cls in (BoostingClassifier, BoostingRegressor, AdaBoostDBClassifier, BAdaCostClassifier,
                                  RealAdaBoostClassifier, GentleAdaBoostClassifier, LogitBoostClassifier,
                                  ArcGVClassifier, AdaMECClassifier, CostReweightingClassifier,
                                  MultiClassCostClassifier, PIBoostClassifier)}
#: The cost-reweighting algorithms' names in a machine's metadata (the trainer's, or the command line's), and in
#: ``CostReweightingClassifier``.
_REWEIGHTING_NAMES = {**{cls.algorithm: name for name, cls in REWEIGHTING_TRAINERS.items()},
                      **{name: name for name in REWEIGHTING_TRAINERS}}
#: The multi-class cost-sensitive trainers' names in a machine's metadata, as ``MultiClassCostClassifier`` names
#: them.
_MULTICLASS_COST_NAMES = {"AdaC2M1Trainer": "adac2-m1", "MultiBoostTrainer": "multiboost", "LpCSBTrainer": "lp-csb",
                          "adac2-m1": "adac2-m1", "multiboost": "multiboost", "lp-csb": "lp-csb"}


def load_estimator(path: str | os.PathLike) -> _BoostedEstimator:
    """Read a fitted estimator from any bob_boost model file.

    A file written by an estimator's ``save`` gives back that estimator with
    its parameters. Any other model file (written by the command line, by
    :meth:`bob_boost.BoostedMachine.save` or by bob.learn.boosting) is
    adopted by :func:`estimator_from_machine`.

    Parameters
    ----------
    path : path-like
        An HDF5 model file.

    Returns
    -------
    estimator
        A fitted estimator whose ``predict`` gives the file's predictions.

    Raises
    ------
    bob_boost.ModelFormatError
        If the file holds no valid machine, or invalid estimator metadata.
    """
    machine = BoostedMachine.load(path)
    metadata = machine.metadata
    name = metadata.get(ESTIMATOR_KEY)
    try:
        if name is None:
            return estimator_from_machine(machine, source=os.fspath(path))
        if name not in _ESTIMATORS:
            raise ModelFormatError(f"{os.fspath(path)}: metadata {ESTIMATOR_KEY!r} names an unknown estimator "
                                   f"{name!r}")
        estimator = _ESTIMATORS[name](**_with_earlier_defaults(_ESTIMATORS[name], metadata["params"]))
        estimator._restore(machine, metadata)
    except ModelFormatError:
        raise
    except (KeyError, TypeError, ValueError) as error:
        raise ModelFormatError(f"{os.fspath(path)}: invalid {name or 'model'} metadata ({error!r})") from None
    return estimator


#: Parameters added with a default that trains differently from before they existed: the value that
#: reproduces what an estimator saved without them did.
EARLIER_DEFAULTS = {"boost_from_average": False, "categorical_features": None}


def _with_earlier_defaults(cls: type, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` of a saved ``cls``, completed by :data:`EARLIER_DEFAULTS` for the ones it lacks and without
    the ones it no longer takes (its ``removed_parameters``: the saved machine does not depend on them)."""
    accepted = inspect.signature(cls).parameters
    removed = getattr(cls, "removed_parameters", {})
    return {**{key: value for key, value in EARLIER_DEFAULTS.items() if key in accepted},
            **{key: value for key, value in params.items() if key not in removed}}


def estimator_from_machine(machine: BoostedMachine, source: str = "the machine") -> _BoostedEstimator:
    """Wrap a trained machine in the estimator that predicts as it does.

    A regression machine (decision rule ``"identity"`` or ``"exp"``) becomes a
    :class:`BoostingRegressor` (with the loss its metadata names, when that needs no parameter); a
    cost-sensitive multi-class machine a
    :class:`BAdaCostClassifier` (one of AdaC2.M1, MultiBoost or Lp-CSB a
    :class:`MultiClassCostClassifier`); a machine of the double-base loss an
    :class:`AdaBoostDBClassifier`; one of a cost-reweighting trainer a :class:`CostReweightingClassifier`; an
    AdaMEC machine (its metadata's calibration) an :class:`AdaMECClassifier`; any
    other classifier a
    :class:`BoostingClassifier`. Class labels come from the machine's
    metadata (:func:`bob_boost.labels.classes_of`), the parameters from what
    it records (loss, costs, number of rounds), so that refitting the
    estimator trains a similar model.

    Raises
    ------
    ValueError
        If the machine records neither its number of features nor reads any feature.
    bob_boost.ModelFormatError
        If its metadata names invalid classes.
    """
    metadata = machine.metadata
    n_features = machine.number_of_features
    if n_features is None:
        used = machine.feature_indices()
        if not used.size:
            raise InvalidValueError(f"{source}: the machine records no number of features and reads none")
        n_features = int(used[-1]) + 1
    rounds = max(len(machine), 1)
    lut = any(isinstance(weak, LUTMachine) for weak in machine.weak_machines)
    weak_learner = "lut" if lut else "stump"
    entries = max((weak.look_up_tables.shape[0] for weak in machine.weak_machines if isinstance(weak, LUTMachine)),
                  default=256)
    if not machine.is_classifier:
        if machine.number_of_outputs not in (None, 1):
            raise InvalidValueError(f"{source}: the machine predicts {machine.number_of_outputs} values per sample; "
                                    "BoostingRegressor predicts one")
        # the losses the metadata names completely (the others' parameters are not in a machine's file)
        loss = {"squared": "squared_error", "absolute_error": "absolute_error", "poisson": "poisson",
                "gamma": "gamma"}.get(metadata.get("loss"), "squared_error")
        estimator = BoostingRegressor(weak_learner=weak_learner, n_estimators=rounds, maximum_feature_value=entries,
                                      loss=loss)
        estimator.intercept_ = float(machine.baseline[0])
    elif metadata.get("trainer") in _MULTICLASS_COST_NAMES:
        estimator = _multiclass_cost_estimator(machine, rounds)
    elif metadata.get("trainer") in ("PIBoostTrainer", "piboost"):
        estimator = PIBoostClassifier(n_estimators=rounds, subset_size=int(metadata.get("subset_size", 1)))
    elif machine.cost_matrix is not None:
        estimator = BAdaCostClassifier(cost_matrix=machine.cost_matrix.tolist(), n_estimators=rounds)
    elif metadata.get("loss") == "double_base":
        estimator = AdaBoostDBClassifier(cost_positive=float(metadata.get("cost_positive", 1.0)),
                                         cost_negative=float(metadata.get("cost_negative", 1.0)),
                                         n_estimators=rounds)
    elif metadata.get("trainer") == "adamec" and "calibration" in metadata:
        calibration = dict(metadata["calibration"])
        estimator = AdaMECClassifier(cost_positive=float(metadata.get("cost_positive", 1.0)),
                                     cost_negative=float(metadata.get("cost_negative", 1.0)), n_estimators=rounds,
                                     calibration=calibration["method"])
        estimator.threshold_ = float(calibration.pop("threshold"))
        estimator.calibration_ = calibration
    elif metadata.get("trainer") in _REWEIGHTING_NAMES:
        estimator = CostReweightingClassifier(_REWEIGHTING_NAMES[metadata["trainer"]],
                                              cost_positive=float(metadata.get("cost_positive", 1.0)),
                                              cost_negative=float(metadata.get("cost_negative", 1.0)),
                                              n_estimators=rounds)
    else:
        loss = {"multilabel_logit": "logit"}.get(metadata.get("loss"), metadata.get("loss"))
        estimator = BoostingClassifier(loss=loss if loss in CLASSIFICATION_LOSSES else "exponential",
                                       weak_learner=weak_learner, n_estimators=rounds, maximum_feature_value=entries,
                                       boost_from_average=bool(np.any(machine.baseline != 0)))
    if machine.is_classifier:
        estimator.classes_ = np.array(classes_of(machine, source).classes)
    estimator.machine_ = machine
    estimator.n_features_in_ = n_features
    restore_state(estimator, machine, metadata)  # no histories in such a file: they are unknown (NaN)
    return estimator


def _multiclass_cost_estimator(machine: BoostedMachine, rounds: int) -> MultiClassCostClassifier:
    """The :class:`MultiClassCostClassifier` of an AdaC2.M1, MultiBoost or Lp-CSB machine, with the costs its
    metadata records (an AdaC2.M1 trainer records only each class's summed cost: a matrix of rows spread evenly
    gives the same)."""
    metadata = machine.metadata
    algorithm = _MULTICLASS_COST_NAMES[metadata["trainer"]]
    costs = metadata.get("costs", metadata.get("multiboost_cost_matrix", metadata.get("lp_csb_cost_matrix")))
    if costs is None and "class_costs" in metadata:
        class_costs = np.asarray(metadata["class_costs"], dtype=np.float64)
        k = class_costs.size
        costs = ((np.ones((k, k)) - np.eye(k)) * (class_costs / (k - 1))[:, np.newaxis]).tolist()
    options = {"p": float(metadata["lp_csb_p"])} if "lp_csb_p" in metadata else {}
    estimator = MultiClassCostClassifier(algorithm, cost_matrix=costs, n_estimators=rounds, **options)
    if costs is not None:
        estimator.cost_matrix_ = np.array(costs, dtype=np.float64)
    return estimator
