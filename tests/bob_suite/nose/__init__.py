"""A stand-in for the part of nose that bob's ``test_machines.py`` uses: ``nose.tools.eq_``.

nose itself no longer imports on Python 3.10 and later; pytest runs the tests.
"""
from . import tools

__all__ = ["tools"]
