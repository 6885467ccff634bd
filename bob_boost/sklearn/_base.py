"""What every estimator shares: feature and weight checks, fitting through the recipes, importances, Shapley
values and persistence (the classifiers' decisions are in :mod:`._classifier`)."""
from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from ..exceptions import InvalidTypeError, InvalidValueError, ModelFormatError
from ..losses import LossFunction
from ..machine import BoostedMachine
from .. import importances, recipes
from ..recipes import WEAK_LEARNERS  # noqa: F401 (the estimators' choices, re-exported)
from ..registry import loss_class
from ..binning import check_missing
from ..weak.lut import check_discrete
from . import _categories, _fitting
from ._eval_sets import check_eval_sets
from ._fit_data import MemoryData
from ._compat import BaseEstimator, check_is_fitted, validate_data

#: Key of the machine's metadata that names the estimator class.
ESTIMATOR_KEY = "sklearn_estimator"

#: The ``loss`` choices of :class:`BoostingClassifier` (:data:`bob_boost.recipes.CLASSIFICATION_LOSSES`).
CLASSIFICATION_LOSSES: dict[str, type[LossFunction]] = {
    name: loss_class(name) for name in recipes.CLASSIFICATION_LOSSES}


def _json_value(value: Any) -> Any:
    """A JSON-serialisable version of a constructor parameter."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (np.random.RandomState, np.random.Generator)):
        # a generator's state is not a parameter worth restoring: only refitting uses it
        return None
    return value


class _BoostedEstimator(BaseEstimator):
    """Input validation, sample weights and HDF5 persistence shared by all estimators."""

    #: Parameters the estimator no longer takes, each with what replaces it: passing one is a TypeError
    #: that says so (instead of Python's "unexpected keyword argument").
    removed_parameters: dict[str, str] = {}

    def __new__(cls, *args, **kwargs):
        for name in kwargs.keys() & cls.removed_parameters.keys():
            raise InvalidTypeError(f"{cls.__name__}: {name} is not a parameter: {cls.removed_parameters[name]}")
        return super().__new__(cls)

    def _validate_features(self, X, reset: bool) -> np.ndarray:
        X = validate_data(self, _categories.coded_frame(self, X, reset), reset=reset,
                          ensure_all_finite=self._finite_rule(), accept_sparse=self._sparse_formats())
        if getattr(self, "weak_learner", None) == "lut":
            _check_lut_features(X, self.maximum_feature_value)
        return X

    def _finite_rule(self) -> bool | str:
        """scikit-learn's ``ensure_all_finite``: NaN is accepted only with ``missing="bin"``."""
        return "allow-nan" if check_missing(getattr(self, "missing", None)) == "bin" else True

    def _sparse_formats(self) -> tuple[str, ...] | bool:
        """scikit-learn's ``accept_sparse``: the scipy sparse formats ``X`` may come in (others are converted to
        the first), or False where the estimator's trainer reads dense features only."""
        return False

    def __sklearn_tags__(self):
        """scikit-learn tags: NaN input only with ``missing="bin"``; sparse input where it is read."""
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = getattr(self, "missing", None) == "bin"
        tags.input_tags.sparse = bool(self._sparse_formats())
        return tags

    def _fit_data(self):
        """Where this estimator's ``fit`` finds its rows (:mod:`bob_boost.sklearn._fit_data`): in memory."""
        return MemoryData()

    def _base_metadata(self) -> dict[str, Any]:
        metadata: dict[str, Any] = {
            ESTIMATOR_KEY: type(self).__name__,
            "params": {key: _json_value(value) for key, value in self.get_params(deep=False).items()},
            "n_features_in": int(self.n_features_in_),
        }
        if hasattr(self, "feature_names_in_"):
            names = [str(name) for name in self.feature_names_in_]
            # "feature_names" is what bob-boost inspect and the plots read, as for a table's header line
            metadata["feature_names_in"] = metadata["feature_names"] = names
        if hasattr(self, "n_iter_"):
            metadata.update(_fitting.fitted_state(self))
        metadata.update(_categories.metadata_of(self))
        return metadata

    def _restore(self, machine: BoostedMachine, metadata: dict[str, Any]) -> None:
        """Set the fitted attributes from a loaded machine (overridden by classifiers)."""
        self.machine_ = machine
        self.n_features_in_ = int(metadata["n_features_in"])
        if "feature_names_in" in metadata:
            self.feature_names_in_ = np.asarray(metadata["feature_names_in"], dtype=object)
        _categories.restore(self, metadata)
        _fitting.restore_state(self, machine, metadata)

    def _boost(self, data, recipe, X, targets, weights, y, rounds: int, groups=None, index=None,
               split_weights=None, eval_set=None, baseline=None) -> BoostedMachine:
        """Train (or with ``warm_start`` continue) the machine; see :func:`bob_boost.sklearn._fitting.boost`.
        ``eval_set`` is ``fit``'s (:func:`~bob_boost.sklearn._eval_sets.check_eval_sets`)."""
        eval_sets = check_eval_sets(self, eval_set, self._eval_targets(recipe),
                                    multilabel=recipe.loss.decision_rule(2) == "multilabel")
        return _fitting.boost(self, data, recipe, X, targets, weights, y, rounds, groups, index, split_weights,
                              eval_sets, baseline)

    def _eval_targets(self, recipe):
        """``targets_of(y, name)``: the targets ``recipe`` trains on of an evaluation set's ``y``."""
        raise NotImplementedError

    def _fit_features(self, data, X, y, **options) -> tuple:
        """Validate ``X`` and ``y`` as ``data``'s rows; a warm start keeps the fitted feature count (checks the
        parameters too)."""
        _fitting.check_fit_parameters(self)
        continuing = self.warm_start and hasattr(self, "machine_")
        return data.validated(self, X, y, reset=not continuing, **options)

    def _categorical_features(self) -> np.ndarray | None:
        """The fitted features' categorical ones (:mod:`bob_boost.sklearn._categories`).

        Raises
        ------
        ValueError
            For names or indices that are not features of ``X``.
        """
        return _categories.categorical_indices(self)

    def _monotone_constraints(self):
        """``monotonic_cst`` as the tree trainer takes it: a dict ``{feature name: -1, 0 or +1}`` (scikit-learn's
        form for named columns; features it does not name are free) becomes one entry per feature.

        Raises
        ------
        ValueError
            For a dict without named columns in ``X``, or naming a column ``X`` does not have.
        """
        constraints = getattr(self, "monotonic_cst", None)
        if not isinstance(constraints, dict):
            return constraints
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            raise InvalidValueError("monotonic_cst: a dict names features, but X has no column names; give one "
                                    "entry per feature instead")
        unknown = [key for key in constraints if key not in set(names.tolist())]
        if unknown:
            raise InvalidValueError(f"monotonic_cst: names {unknown[0]!r}, which is not a column of X")
        return [constraints.get(name, 0) for name in names.tolist()]

    @property
    def feature_importances_(self) -> np.ndarray:
        """(#features,) each feature's importance of kind ``importance_type``, summing to 1 (all zeros when
        there is none: a machine without rounds, say).

        ``"loss"`` (the default): every round lowers the training loss (the
        loss the trainer minimises, weighted by the sample weights, on the
        samples it trained on) by some amount; that decrease (0 if the loss
        rose) is shared equally by the features the round's weak machine
        reads (the one feature of a stump or a univariate LUT; the split
        features of a tree; the per-output features of a multi-output LUT),
        and a feature's importance is its total over the rounds. ``"split"``
        (or ``"weight"``), ``"gain"`` and ``"cover"``: the machine's
        :meth:`~bob_boost.BoostedMachine.feature_importances` of that kind
        (how often the weak machines read each feature; the trees' split
        gains or training cover on it), normalised.

        Raises
        ------
        ValueError
            For an unknown ``importance_type``, gains and covers of weak machines that record none (stumps,
            tables), or ``"loss"`` for a model trained on a cluster (its training losses stay on the workers).
        """
        check_is_fitted(self)
        kind = importances.check_kind(getattr(self, "importance_type", "loss"), "importance_type",
                                      ("loss", "split", "weight", "gain", "cover"))
        if kind == "loss":
            if len(self.machine_) and _fitting.IMPORTANCE_KEY not in self.machine_.metadata:
                raise InvalidValueError("importance_type: 'loss' needs the training losses of every round, which "
                                        "a fit on a cluster leaves on the workers; use 'split', 'gain' or 'cover'")
            return _fitting.importances(self.machine_, self.n_features_in_)
        try:
            totals = importances.tree_importances(self.machine_.weak_machines, kind, self.n_features_in_)
        except InvalidValueError as error:
            raise InvalidValueError(str(error).replace("kind:", "importance_type:", 1)) from None
        total = totals.sum()
        return totals / total if total > 0 else totals

    def shap_values(self, X, background=None) -> np.ndarray:
        """:meth:`bob_boost.BoostedMachine.shap_values` of ``X``'s rows, path-dependent from the trees' training
        cover or against the ``background`` rows: the Shapley values of the machine's scores (a log-link
        regressor's: of the log of its mean), the expected value in the last column."""
        check_is_fitted(self)
        return self.machine_.shap_values(self._validate_features(X, reset=False),
                                         None if background is None else self._validate_features(background,
                                                                                                 reset=False))

    def save(self, path: str | os.PathLike) -> None:
        """Write the fitted estimator to an HDF5 file.

        The file holds ``machine_`` in bob_boost's format (readable by
        :meth:`bob_boost.BoostedMachine.load` and the command line) with the
        estimator's parameters and fitted attributes in its metadata.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        TypeError
            If a parameter or a class label cannot be stored as JSON.
        """
        check_is_fitted(self)
        try:
            json.dumps(self.machine_.metadata)
        except TypeError as error:
            raise InvalidTypeError(f"{type(self).__name__}.save: a parameter or class label cannot be stored "
                                   f"as JSON ({error})") from None
        self.machine_.save(path)

    @classmethod
    def load(cls, path: str | os.PathLike):
        """Read an estimator of this class written by :meth:`save`.

        Raises
        ------
        bob_boost.ModelFormatError
            If the file does not hold a fitted estimator of this class.
        """
        from .persistence import load_estimator  # the estimator classes live below this module

        estimator = load_estimator(path)
        if not isinstance(estimator, cls):
            raise ModelFormatError(f"{os.fspath(path)}: holds a {type(estimator).__name__}, not a {cls.__name__}")
        return estimator


def _check_lut_features(X: np.ndarray, maximum_feature_value: int) -> None:
    """Raise a ValueError unless every value is an integer in ``[0, maximum_feature_value)``."""
    try:  # NaN (accepted only with missing="bin") has its own table entry; check_discrete reads sparse X too
        check_discrete(X, maximum_feature_value, "X", allow_nan=True)
    except ValueError as error:
        raise InvalidValueError(f"{error}; weak_learner='lut' needs integer features in [0, maximum_feature_value="
                                f"{maximum_feature_value}). Quantise the features first, e.g. with "
                         "sklearn.preprocessing.KBinsDiscretizer(n_bins=..., encode='ordinal') in a pipeline."
                         ) from None
