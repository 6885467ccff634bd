"""Constants that numba types by their dtype rather than their value.

A jitted caller that passes a literal (``0``, ``1``, ``True``, ``False``) to a jitted function makes numba
compile that function once for each distinct literal, and each of those compilations links and optimises
again everything the function calls. The tree kernels' team and histogram functions were compiled up to five
times each that way. A numpy scalar held in a global is typed as its dtype, so callers pass these instead
and each function is compiled once.
"""
from __future__ import annotations

import numpy as np

ZERO = np.int64(0)
ONE = np.int64(1)
TRUE = np.bool_(True)
FALSE = np.bool_(False)
