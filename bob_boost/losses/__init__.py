"""Loss functions: each turns targets and scores into a loss and its gradient."""
from ..registry import register_loss
from .base import BinaryClassificationLoss, LossFunction
from .cmel import CMELoss, SampleCostCMELoss
from .custom import FunctionLoss
from .double_base import DoubleBaseLoss
from .exponential import ExponentialLoss
from .focal import FocalLoss
from .jesorsky import JesorskyLoss
from .log_link import GammaLoss, PoissonLoss, TweedieLoss
from .logit import LogitLoss, MultiLabelLogitLoss
from .robust import AbsoluteErrorLoss, HuberLoss, QuantileLoss
from .softmax import SoftmaxLoss
from .squared import SquaredLoss
from .tangential import TangentialLoss

for _cls in (ExponentialLoss, LogitLoss, TangentialLoss, JesorskyLoss, SquaredLoss, SoftmaxLoss, HuberLoss,
             AbsoluteErrorLoss, QuantileLoss, PoissonLoss, GammaLoss, TweedieLoss, FocalLoss, MultiLabelLogitLoss):
    register_loss(_cls)
del _cls

__all__ = ["LossFunction", "BinaryClassificationLoss", "ExponentialLoss", "LogitLoss",
           "TangentialLoss", "JesorskyLoss", "SquaredLoss", "DoubleBaseLoss", "CMELoss", "SoftmaxLoss", "HuberLoss",
           "AbsoluteErrorLoss", "QuantileLoss", "PoissonLoss", "GammaLoss", "TweedieLoss", "FocalLoss", "FunctionLoss",
           "MultiLabelLogitLoss", "SampleCostCMELoss"]
