"""Optional dependencies, imported in one way: an error that names the pip extra when one is missing.

``import bob_boost`` imports none of them; each is imported when the feature that needs it first runs:
scikit-learn and Dask when :mod:`bob_boost.sklearn` and :mod:`bob_boost.dask` are imported (their
``_compat.py`` and ``_dask.py`` take the names they use from here), the others when a function needs them.
"""
from __future__ import annotations

import importlib
import types
from collections.abc import Callable

#: For each optional top-level module: the distribution that provides it and the extra that installs it.
EXTRAS = {
    "matplotlib": ("matplotlib", "plot"),
    "tqdm": ("tqdm", "progress"),
    "onnx": ("onnx", "onnx"),
    "skimage": ("scikit-image", "faces"),
    "imageio": ("imageio", "faces"),
    "pandas": ("pandas", "pandas"),
    "pyarrow": ("pyarrow", "arrow"),
    "sklearn": ("scikit-learn", "sklearn"),
    "dask": ("dask", "dask"),
    "distributed": ("distributed", "dask"),
}


def optional_import(module: str, purpose: str,
                    error: Callable[[str], Exception] = ImportError) -> types.ModuleType:
    """Import the optional ``module`` (dotted names allowed), or say which extra installs it.

    Parameters
    ----------
    module : str
        The module to import, e.g. ``"matplotlib.figure"``; its top-level package must be in :data:`EXTRAS`.
    purpose : str
        What needs it, the subject of the message, e.g. ``"ONNX export"``.
    error : callable, optional
        The exception type raised (called with the message) when the import fails; default ``ImportError``.

    Returns
    -------
    types.ModuleType
        The imported module.

    Raises
    ------
    Exception
        ``error(message)``, chained to the import's own error, when ``module`` cannot be imported; the message
        names the distribution and the command that installs it.
    """
    distribution, extra = EXTRAS[module.partition(".")[0]]  # an unknown module fails here, installed or not
    try:
        return _import(module)
    except ImportError as cause:
        raise error(f'{purpose} needs {distribution}: pip install "bob_boost[{extra}]"') from cause


def import_or_none(module: str) -> types.ModuleType | None:
    """The optional ``module``, or None when it cannot be imported (for features that work without it)."""
    try:
        return _import(module)
    except ImportError:
        return None


def _import(module: str) -> types.ModuleType:
    # through builtins.__import__ (importlib.import_module bypasses it), so that import hooks that replace
    # it, as tests do to simulate a missing package, see this import too
    __import__(module)
    return importlib.import_module(module)
