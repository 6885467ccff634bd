"""The public trainers (data -> boosted machine), one module per algorithm, and the weak trainers' old paths.

The weak trainers (stumps, look-up tables, multi-class stumps, tables and cost-sensitive trees, and their tree
growing) are in :mod:`bob_boost.weak_trainers`; ``bob_boost.trainers.stump``, ``.lut``, ``.multiclass`` and
``.tree_growing`` still import, as the same modules.
"""
import sys
import warnings

from .badacost import AdaBoostM1Trainer, AdaC2M1Trainer, BAdaCostTrainer, SAMMETrainer, optimal_step
from ..binning import BinnedFeatures
from .boosting import Boosting, fit_weights
from .cost_sensitive import AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer
from .adamec import AdaMECTrainer
from .additive_logistic import GentleAdaBoostTrainer, LogitBoostTrainer
from .arc_gv import ArcGVTrainer
from .cost_reweighting import (AdaC1Trainer, AdaC2Trainer, AdaC3Trainer, AdaCostTrainer, AsymBoostTrainer,
                               CSB0Trainer, CSB1Trainer, CSB2Trainer)
from .lp_csb import LpCSBTrainer
from .multiboost import MultiBoostTrainer
from .piboost import PIBoostTrainer
from .real_adaboost import RealAdaBoostTrainer, SAMMERTrainer
from .rusboost import RUSBoostTrainer
from ..weak_trainers import lut, multiclass, stump, tree_growing
from ..weak_trainers.lut import LUTTrainer
from ..weak_trainers.multiclass import CostSensitiveTreeTrainer, MultiClassLUTTrainer, MultiClassStumpTrainer
from ..weak_trainers.probability_trees import ProbabilityTreeTrainer
from ..weak_trainers.stump import StumpTrainer

# users' imports and pickles name these modules by their old paths: the same module objects
for _module in (lut, multiclass, stump, tree_growing):
    sys.modules[f"{__name__}.{_module.__name__.rsplit('.', 1)[1]}"] = _module
del _module

__all__ = ["BinnedFeatures", "Boosting", "fit_weights", "LUTTrainer", "StumpTrainer",
           "AdaBoostDBTrainer", "CostSensitiveAdaBoostTrainer", "BAdaCostTrainer", "SAMMETrainer",
           "AdaBoostM1Trainer", "optimal_step", "CostSensitiveTreeTrainer", "MultiClassStumpTrainer",
           "MultiClassLUTTrainer", "ProbabilityTreeTrainer", "RealAdaBoostTrainer", "SAMMERTrainer",
           "GentleAdaBoostTrainer", "LogitBoostTrainer", "ArcGVTrainer", "RUSBoostTrainer",
           "PIBoostTrainer", "AdaC1Trainer", "AdaC2Trainer", "AdaC3Trainer", "AdaCostTrainer", "AsymBoostTrainer",
           "CSB0Trainer", "CSB1Trainer", "CSB2Trainer", "AdaC2M1Trainer", "MultiBoostTrainer", "LpCSBTrainer",
           "AdaMECTrainer"]


def __getattr__(name: str):
    if name == "SplitFeatures":  # an old name of the one binned representation
        warnings.warn(f"{name} is bob_boost.binning.BinnedFeatures; use that name", DeprecationWarning, stacklevel=2)
        return BinnedFeatures
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
