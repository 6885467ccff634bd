"""bob_boost: pluggable losses, weak machines and trainers for boosting."""
__version__ = "0.1.0"

from .exceptions import ModelFormatError
from .losses import (ExponentialLoss, JesorskyLoss, LogitLoss, LossFunction, SquaredLoss,
                     TangentialLoss)
from .machine import BoostedMachine
from .registry import loss_class, register_loss, register_weak_machine, weak_machine_class
from .trainers import Boosting, LUTTrainer, StumpTrainer
from .weak import LUTMachine, StumpMachine, WeakMachine

__all__ = [
    "__version__", "ModelFormatError", "LossFunction", "ExponentialLoss", "LogitLoss", "TangentialLoss",
    "JesorskyLoss", "SquaredLoss", "BoostedMachine", "Boosting", "StumpTrainer", "LUTTrainer",
    "WeakMachine", "StumpMachine", "LUTMachine", "register_loss", "register_weak_machine",
    "loss_class", "weak_machine_class",
]
