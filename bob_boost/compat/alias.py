"""Importing this module runs :func:`bob_boost.compat.install_aliases`.

It exists so that porting a bob script can be a change of imports only::

    import bob_boost.compat.alias  # noqa: F401  (bob.learn.boosting -> bob_boost.compat.bob)
    import bob.io.base
    import bob.learn.boosting
    import bob.learn.boosting.utils
    import bob.core

:func:`bob_boost.compat.remove_aliases` undoes it.
"""
from . import install_aliases

install_aliases()
