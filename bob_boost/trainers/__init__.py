"""Weak trainers (loss gradient -> weak machine) and strong trainers (data -> boosted machine)."""
from .badacost import AdaBoostM1Trainer, BAdaCostTrainer, SAMMETrainer, optimal_step
from ..binning import BinnedFeatures
from .boosting import Boosting, fit_weights
from .cost_sensitive import AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer
from .lut import LUTTrainer
from .multiclass import CostSensitiveTreeTrainer, MultiClassLUTTrainer, MultiClassStumpTrainer, SplitFeatures
from .stump import StumpTrainer

__all__ = ["BinnedFeatures", "Boosting", "fit_weights", "LUTTrainer", "StumpTrainer",
           "AdaBoostDBTrainer", "CostSensitiveAdaBoostTrainer", "BAdaCostTrainer", "SAMMETrainer",
           "AdaBoostM1Trainer", "optimal_step", "CostSensitiveTreeTrainer", "MultiClassStumpTrainer",
           "MultiClassLUTTrainer", "SplitFeatures"]
