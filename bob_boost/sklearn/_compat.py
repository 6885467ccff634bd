"""scikit-learn, as the estimators use it: imported once, through :mod:`bob_boost._optional`, when
:mod:`bob_boost.sklearn` is imported (the rest of bob_boost does not need it)."""
from __future__ import annotations

from .._optional import optional_import

if not hasattr(optional_import("sklearn.utils.validation", "bob_boost.sklearn"), "validate_data"):
    import sklearn

    raise ImportError(f'bob_boost.sklearn needs scikit-learn >= 1.6, found {sklearn.__version__}: pip install '
                      f'"bob_boost[sklearn]"')

from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, clone, is_classifier  # noqa: E402
from sklearn.metrics import (accuracy_score, check_scoring, log_loss, mean_absolute_error,  # noqa: E402
                             mean_gamma_deviance, mean_poisson_deviance, mean_squared_error, r2_score, roc_auc_score)
from sklearn.model_selection import KFold, StratifiedKFold  # noqa: E402
from sklearn.utils import check_random_state  # noqa: E402
from sklearn.utils.metaestimators import available_if  # noqa: E402
from sklearn.utils.multiclass import check_classification_targets, is_multilabel  # noqa: E402
from sklearn.utils.validation import check_is_fitted, validate_data  # noqa: E402

__all__ = ["BaseEstimator", "ClassifierMixin", "KFold", "RegressorMixin", "StratifiedKFold",
           "accuracy_score",
           "available_if", "check_classification_targets", "check_is_fitted", "check_random_state", "check_scoring",
           "clone", "is_classifier", "is_multilabel", "log_loss", "mean_absolute_error", "mean_gamma_deviance",
           "mean_poisson_deviance", "mean_squared_error", "r2_score", "roc_auc_score", "validate_data"]
