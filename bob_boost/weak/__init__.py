"""Weak machines: simple classifiers that boosting combines."""
from .base import WeakMachine
from .lut import LUTMachine
from .stump import StumpMachine

__all__ = ["WeakMachine", "StumpMachine", "LUTMachine"]
