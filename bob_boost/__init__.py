"""bob_boost: pluggable losses, weak machines and trainers for boosting."""
from . import costs, decision, detection, evaluation, hdf5, labels
from ._version import __version__
from .exceptions import BobBoostError, DataFormatError, ModelFormatError
from .losses import (AbsoluteErrorLoss, CMELoss, DoubleBaseLoss, ExponentialLoss, FocalLoss, FunctionLoss, GammaLoss,
                     HuberLoss,
                     JesorskyLoss, LogitLoss, LossFunction, MultiLabelLogitLoss, PoissonLoss, QuantileLoss,
                     SoftmaxLoss, SquaredLoss, TangentialLoss, TweedieLoss)
from .boosting.sampling import Sampling
from .machine import BoostedMachine
from .registry import loss_class, register_loss, register_weak_machine, weak_machine_class
from .tree_tables import trees_to_dataframe
from .trainers import (AdaBoostDBTrainer, AdaBoostM1Trainer, BAdaCostTrainer, Boosting,
                       CostSensitiveAdaBoostTrainer, CostSensitiveTreeTrainer, LUTTrainer, MultiClassLUTTrainer,
                       MultiClassStumpTrainer, ProbabilityTreeTrainer, RealAdaBoostTrainer, SAMMERTrainer,
                       SAMMETrainer, StumpTrainer, GentleAdaBoostTrainer, LogitBoostTrainer,
                       ArcGVTrainer, RUSBoostTrainer, PIBoostTrainer, AdaC1Trainer, AdaC2Trainer, AdaC3Trainer,
                       AdaCostTrainer, AsymBoostTrainer, CSB0Trainer, CSB1Trainer, CSB2Trainer, AdaC2M1Trainer,
                       MultiBoostTrainer, LpCSBTrainer, AdaMECTrainer)
from .weak import (LUTMachine, MultiClassLUTMachine, MultiClassStumpMachine, MultiClassTreeMachine,
                   RelationalTreeMachine, StumpMachine, TreeMachine, WeakMachine)
from .weak_trainers.tree import TreeTrainer

__all__ = [
    "__version__", "BobBoostError", "DataFormatError", "ModelFormatError", "LossFunction", "ExponentialLoss",
    "LogitLoss", "TangentialLoss",
    "JesorskyLoss", "SquaredLoss", "DoubleBaseLoss", "CMELoss", "BoostedMachine", "Boosting",
    "StumpTrainer", "LUTTrainer", "AdaBoostDBTrainer", "CostSensitiveAdaBoostTrainer", "BAdaCostTrainer",
    "SAMMETrainer", "AdaBoostM1Trainer", "CostSensitiveTreeTrainer", "MultiClassStumpTrainer",
    "MultiClassLUTTrainer", "WeakMachine", "StumpMachine", "LUTMachine", "MultiClassTreeMachine",
    "MultiClassStumpMachine", "MultiClassLUTMachine", "register_loss", "register_weak_machine",
    "loss_class", "weak_machine_class", "costs", "decision", "detection", "evaluation", "hdf5", "labels",
    "SoftmaxLoss", "TreeMachine", "TreeTrainer", "HuberLoss", "AbsoluteErrorLoss", "QuantileLoss", "PoissonLoss",
    "GammaLoss", "TweedieLoss", "FocalLoss", "Sampling", "FunctionLoss", "MultiLabelLogitLoss",
    "trees_to_dataframe", "ProbabilityTreeTrainer", "RealAdaBoostTrainer", "SAMMERTrainer",
    "GentleAdaBoostTrainer", "LogitBoostTrainer", "ArcGVTrainer", "RUSBoostTrainer", "PIBoostTrainer",
    "AdaC1Trainer", "AdaC2Trainer", "AdaC3Trainer", "AdaCostTrainer", "AsymBoostTrainer", "CSB0Trainer",
    "CSB1Trainer", "CSB2Trainer", "AdaC2M1Trainer", "MultiBoostTrainer", "LpCSBTrainer", "RelationalTreeMachine",
    "AdaMECTrainer",
]


def __getattr__(name: str):
    """``bob_boost.cv`` (:func:`bob_boost.sklearn.cv`), imported on first use: it needs scikit-learn, which
    ``import bob_boost`` does not import."""
    if name == "cv":
        from .sklearn import cv
        return cv
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
