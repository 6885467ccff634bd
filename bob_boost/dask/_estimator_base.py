"""What the Dask estimators add to the in-memory estimators they subclass: their ``fit`` on Dask rows
(:class:`~bob_boost.dask._fit_data.ClusterData`), prediction of Dask arrays block by block, and ``to_local()``,
``save`` and ``load`` through the in-memory twin."""
from __future__ import annotations

import copy
import inspect
from collections.abc import Callable

import numpy as np

from ..exceptions import InvalidValueError
from ..sklearn._base import ESTIMATOR_KEY
from ..sklearn._classifier import _offers_probabilities
from ..sklearn._compat import available_if, check_is_fitted
from . import _dask
from ._fit_data import ClusterData, coded_frame
from ._trainers import check_cluster_threads


def cluster_init(local_class: type, own: tuple[tuple[str, object], ...] = (), **defaults) -> Callable[..., None]:
    """The ``__init__`` of a Dask estimator: ``local_class``'s parameters in their order (``defaults`` changes some
    defaults), then the cluster's own ``(name, default)`` pairs and ``client``. scikit-learn reads an estimator's
    parameters from its constructor's signature, so the two estimators' parameters cannot drift apart."""
    local = inspect.signature(local_class.__init__)
    unknown = set(defaults) - set(local.parameters)
    if unknown:
        raise TypeError(f"defaults: {sorted(unknown)} are not parameters of {local_class.__name__}")
    extra = (*own, ("client", None))
    signature = local.replace(parameters=[
        *(parameter.replace(default=defaults.get(name, parameter.default)) for name, parameter in
          local.parameters.items()),
        *(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=value) for name, value in extra)])
    names = {name for name, _ in extra}

    def __init__(self, *args, **kwargs) -> None:
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as error:
            raise TypeError(f"{type(self).__name__}: {error}") from None
        bound.apply_defaults()
        values = {name: value for name, value in bound.arguments.items() if name != "self"}
        local_class.__init__(self, **{name: value for name, value in values.items() if name not in names})
        for name in names:
            setattr(self, name, values[name])

    __init__.__signature__ = signature
    return __init__


class _DaskEstimator:
    """What every Dask estimator adds to the in-memory estimator it subclasses (:attr:`_local_class`, whose
    parameters it takes, plus ``client``): the in-memory twin, and files through it."""

    #: The in-memory estimator this one subclasses.
    _local_class: type

    def _fit_data(self) -> ClusterData:
        """The Dask rows of ``fit``: the in-memory estimator's ``fit`` then trains on the cluster."""
        if getattr(self, "quantized_gradients", None) is not None:
            raise InvalidValueError(f"quantized_gradients: is for training in memory; {type(self).__name__} sums float "
                                    f"histograms (leave it None), got {self.quantized_gradients!r}")
        return ClusterData(self.client, getattr(self, "max_bins", 256),
                           check_cluster_threads(getattr(self, "n_threads", 1)))

    def _base_metadata(self) -> dict:
        """The in-memory twin's metadata: a model file of either class is the twin's."""
        metadata = super()._base_metadata()
        names = set(self._local_class._get_param_names())
        metadata["params"] = {name: value for name, value in metadata["params"].items() if name in names}
        metadata[ESTIMATOR_KEY] = self._local_class.__name__
        return metadata

    def to_local(self):
        """The in-memory twin (:attr:`_local_class`) with this model, its ``save`` and all: the cluster ran the
        twin's own ``fit``, so its fitted attributes are the twin's."""
        check_is_fitted(self)
        local = self._local_estimator()
        own = set(self.get_params(deep=False))
        local.__dict__.update({name: value for name, value in vars(self).items() if name not in own})
        local.machine_ = copy.deepcopy(self.machine_)
        return local

    def _local_estimator(self):
        """The unfitted in-memory twin with these parameters (without early stopping: it only predicts)."""
        params = self.get_params(deep=False)
        return self._local_class(**{name: params[name] for name in self._local_class._get_param_names()
                                    if name != "early_stopping"}, early_stopping=False)

    def _validate_features(self, X, reset: bool) -> np.ndarray:
        """The in-memory validation, which a Dask array would reach only by being computed whole: refused."""
        if _dask.is_dask(X):
            raise TypeError(f"X: {type(self).__name__} predicts Dask arrays with predict, decision_function and "
                            f"predict_proba; for the others, pass a numpy array or use to_local()")
        return super()._validate_features(X, reset)

    def save(self, path) -> None:
        """Write the model as the in-memory twin's file (see ``to_local().save``); ``load`` of either class
        reads it.

        Raises
        ------
        sklearn.exceptions.NotFittedError
            If the estimator is not fitted.
        """
        check_is_fitted(self)
        self.to_local().save(path)

    @classmethod
    def load(cls, path):
        """The fitted estimator in a file written by ``save`` (of this class or its in-memory twin), with the
        file's parameters and the default ``client``.

        Raises
        ------
        bob_boost.ModelFormatError
            If the file does not hold a fitted in-memory twin of this class.
        """
        local = cls._local_class.load(path)
        params = local.get_params(deep=False)
        estimator = cls(**{name: params[name] for name in cls._get_param_names() if name in params})
        estimator.__dict__.update({name: value for name, value in vars(local).items() if name not in params})
        return estimator

    def shap_values(self, X, background=None):
        """The in-memory estimator's Shapley values; for a Dask ``X``, a Dask array computed block by block
        (``background``, an array of rows or None, goes to every block)."""
        if not _dask.is_dask(X):
            return super().shap_values(X, background)
        check_is_fitted(self)
        features, local = self._blocks_and_twin(X)
        rows = None if background is None else local._validate_features(background, reset=False)
        probe = np.zeros((1, self.n_features_in_)) if rows is None else rows[:1]
        tail = local.shap_values(probe, None if rows is None else probe).shape[1:]  # (#features + 1[, #outputs])
        return features.map_blocks(local.shap_values, rows, chunks=(features.chunks[0],) + tuple((n,) for n in tail),
                                   new_axis=[2] if len(tail) > 1 else None, dtype=np.float64)

    def _blocks_and_twin(self, X) -> tuple:
        """The Dask array of ``X``'s rows (a dataframe's category and text columns coded as in ``fit``) and the
        in-memory twin that predicts its blocks, which reads them as unnamed arrays.

        Raises
        ------
        ValueError
            For a dataframe whose columns are not the fitted ones, in their order.
        """
        names = getattr(self, "feature_names_in_", None)
        columns = getattr(X, "columns", None)
        if names is not None and columns is not None and list(columns) != names.tolist():
            raise InvalidValueError(f"X: its columns {list(columns)} are not those seen in fit, in their order "
                                    f"({names.tolist()})")
        local = self.to_local()
        local.__dict__.pop("feature_names_in_", None)  # checked above; the blocks are arrays
        return _dask.as_row_chunked(coded_frame(self, X, reset=False), "X"), local

    def _apply(self, method: str, X, dtype, from_scores=None):
        """The in-memory ``method`` on ``X``; for a Dask array, on each of its row blocks (on the workers, by a
        copy of the in-memory twin), where ``from_scores`` (None: one value per row) gives each row's shape."""
        if not _dask.is_dask(X):
            return getattr(super(), method)(X)
        check_is_fitted(self)
        features, local = self._blocks_and_twin(X)
        row = () if from_scores is None else from_scores(
            np.zeros((1, self.machine_.number_of_outputs or len(self.classes_))))[0].shape
        function = getattr(local, method)
        if not row:
            return features.map_blocks(function, drop_axis=1, chunks=(features.chunks[0],), dtype=dtype)
        return features.map_blocks(function, chunks=(features.chunks[0], row), dtype=dtype)


class _DaskClassifier(_DaskEstimator):
    """What the Dask classifiers share: prediction of Dask arrays block by block through ``to_local()``'s
    in-memory estimator."""

    def decision_function(self, X):
        """The in-memory estimator's scores; a Dask array (chunked as ``X``'s rows) for a Dask ``X``."""
        return self._apply("decision_function", X, np.float64, self._decision_from_scores)

    def predict(self, X):
        """The in-memory estimator's labels; a Dask array for a Dask ``X``."""
        return self._apply("predict", X, self.classes_.dtype,
                           self._labels_from_scores if self.machine_.decision_rule == "multilabel" else None)

    @available_if(_offers_probabilities)
    def predict_proba(self, X):
        """The in-memory estimator's class probabilities; a Dask array for a Dask ``X``."""
        return self._apply("predict_proba", X, np.float64, self._proba_from_scores)
