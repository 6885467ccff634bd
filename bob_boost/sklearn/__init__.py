"""scikit-learn estimators around bob_boost's trainers.

The estimators follow scikit-learn's conventions (parameters stored by the
constructor, fitted attributes ending in ``_``, ``classes_`` with arbitrary
labels) so they work in pipelines, grid searches and cross validation. Every
fitted estimator exposes the trained :class:`~bob_boost.BoostedMachine` as
``machine_`` and can be written to / read from HDF5 with :meth:`save` and
:func:`load_estimator` (or the ``load`` classmethod of its class); what the
estimator needs besides the machine (class labels, feature count, ...) is
kept in the machine's ``metadata``.

scikit-learn (>= 1.6) is an optional dependency: ``pip install bob_boost[sklearn]``.
"""
from ..recipes import SELECTION_STYLES
from ._base import CLASSIFICATION_LOSSES, ESTIMATOR_KEY, WEAK_LEARNERS
from .boosting import BoostingClassifier
from .regression import BoostingRegressor
from .badacost import BAdaCostClassifier
from .cost_sensitive import AdaBoostDBClassifier
from .adamec import AdaMECClassifier
from .cost_reweighting import CostReweightingClassifier
from .multiclass_cost import MultiClassCostClassifier
from .piboost import PIBoostClassifier
from .additive_logistic import ArcGVClassifier, GentleAdaBoostClassifier, LogitBoostClassifier
from .real_adaboost import RealAdaBoostClassifier
from .cv import cv
from .persistence import estimator_from_machine, load_estimator

__all__ = ["AdaBoostDBClassifier", "AdaMECClassifier", "BAdaCostClassifier", "BoostingClassifier", "BoostingRegressor",
           "ArcGVClassifier", "CostReweightingClassifier", "GentleAdaBoostClassifier", "LogitBoostClassifier",
           "MultiClassCostClassifier", "PIBoostClassifier", "RealAdaBoostClassifier", "cv",
           "estimator_from_machine", "load_estimator", "CLASSIFICATION_LOSSES", "ESTIMATOR_KEY", "SELECTION_STYLES",
           "WEAK_LEARNERS"]
