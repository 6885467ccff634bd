"""scikit-learn, imported in this one place: bob_boost's estimators need it, the rest of bob_boost does not."""
from __future__ import annotations

try:
    from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
    from sklearn.metrics import check_scoring, r2_score
    from sklearn.model_selection import train_test_split
    from sklearn.utils import check_random_state
    from sklearn.utils.class_weight import compute_sample_weight
    from sklearn.utils.metaestimators import available_if
    from sklearn.utils.multiclass import check_classification_targets, is_multilabel
    from sklearn.utils.validation import check_is_fitted, validate_data
except ImportError as _error:  # pragma: no cover - exercised in a subprocess by the tests
    raise ImportError(
        "bob_boost.sklearn needs scikit-learn >= 1.6 (not installed or too old: "
        f"{_error}); install it with: pip install bob_boost[sklearn]") from _error

__all__ = ["BaseEstimator", "ClassifierMixin", "RegressorMixin", "available_if", "check_classification_targets",
           "check_is_fitted", "check_random_state", "check_scoring", "compute_sample_weight", "is_multilabel",
           "r2_score", "train_test_split", "validate_data"]
