"""Compatibility layers that let code written for other boosting packages run on bob_boost.

:mod:`bob_boost.compat.bob` is bob.learn.boosting 2.0's Python API (its classes, constructors, attributes,
call forms and HDF5 files) on top of bob_boost, so that a bob script runs after changing its imports::

    import bob_boost.compat.bob as boosting          # was: import bob.learn.boosting as boosting

Scripts that spell out ``bob.learn.boosting.X`` (and use ``bob.io.base.HDF5File`` and ``bob.core.log``)
keep every line but one with :func:`install_aliases`, which makes ``import bob.learn.boosting`` find this
package; importing :mod:`bob_boost.compat.alias` calls it, so the one changed line can be an import::

    import bob_boost.compat.alias  # noqa: F401  (bob.learn.boosting -> bob_boost.compat.bob)
    import bob.learn.boosting

Nothing in the rest of bob_boost imports this package.
"""
from __future__ import annotations

import importlib
import sys
import types

#: Module names a bob script imports -> the bob_boost module that stands in for each.
ALIASES = {
    "bob.learn.boosting": "bob_boost.compat.bob",
    "bob.learn.boosting.utils": "bob_boost.compat.bob.utils",
    "bob.io.base": "bob_boost.compat.io_base",
    "bob.core.log": "bob_boost.compat.core_log",
}

#: Parent packages of the aliases; empty stand-ins are created for those not imported already.
PARENT_PACKAGES = ("bob", "bob.learn", "bob.io", "bob.core")

# name -> module this process put into sys.modules, so that remove_aliases() takes out only those
_installed: dict[str, types.ModuleType] = {}


def install_aliases() -> None:
    """Make ``import bob.learn.boosting`` (and ``bob.io.base``, ``bob.core.log``) import bob_boost's stand-ins.

    Registers :data:`ALIASES` in :data:`sys.modules`, with empty parent packages (``bob``, ``bob.learn``,
    ``bob.io``, ``bob.core``) where none is imported yet. Until :func:`remove_aliases` the stand-ins shadow
    any bob package installed in the environment, which is the point: the script runs on bob_boost.
    Calling it again changes nothing.
    """
    for name in PARENT_PACKAGES:
        if name not in sys.modules:
            stub = types.ModuleType(name, f"Stand-in package for {name!r} (bob_boost.compat.install_aliases).")
            stub.__path__ = []  # a package, so that its submodules can be imported
            sys.modules[name] = _installed[name] = stub
    for name, target in ALIASES.items():
        module = importlib.import_module(target)
        if sys.modules.get(name) is not module:
            sys.modules[name] = _installed[name] = module
    # `import bob.learn.boosting` binds `bob`; the attribute chain must lead to the aliases
    for name in (*PARENT_PACKAGES, *ALIASES):
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, sys.modules[name])


def remove_aliases() -> None:
    """Undo :func:`install_aliases`: remove the modules it registered (and only those) from :data:`sys.modules`."""
    for name, module in reversed(list(_installed.items())):
        if sys.modules.get(name) is module:
            del sys.modules[name]
        parent, _, child = name.rpartition(".")
        parent_module = sys.modules.get(parent)
        # only the stand-in packages lose the attribute; bob_boost.compat.bob keeps its `utils`
        if parent in PARENT_PACKAGES and parent_module is not None and getattr(parent_module, child, None) is module:
            delattr(parent_module, child)
    _installed.clear()


__all__ = ["ALIASES", "PARENT_PACKAGES", "install_aliases", "remove_aliases"]
