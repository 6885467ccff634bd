"""Weak trainers (loss gradient -> weak machine) and strong trainers (data -> boosted machine)."""
from .binning import BinnedFeatures
from .boosting import Boosting, fit_weights
from .lut import LUTTrainer
from .stump import StumpTrainer

__all__ = ["BinnedFeatures", "Boosting", "fit_weights", "LUTTrainer", "StumpTrainer"]
