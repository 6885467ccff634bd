"""Weak machines: simple classifiers that boosting combines.

Importing this package registers every built-in machine type for HDF5 loading.
"""
from .base import WeakMachine
from .lut import LUTMachine
from .multiclass import MultiClassLUTMachine, MultiClassStumpMachine, MultiClassTreeMachine, MultiClassWeakMachine
from .relational import RelationalTreeMachine
from .stump import StumpMachine
from .tree import TreeMachine

__all__ = ["WeakMachine", "StumpMachine", "LUTMachine", "MultiClassWeakMachine", "MultiClassTreeMachine",
           "MultiClassStumpMachine", "MultiClassLUTMachine", "RelationalTreeMachine", "TreeMachine"]
