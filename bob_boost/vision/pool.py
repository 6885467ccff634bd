"""A whole Haar feature pool as uint8 codes, computed and quantised feature by feature.

A 24x24 window has 134,736 features; as float64 they would take 1 GiB per 1,000 windows. Here each
feature's values are computed from the windows' integral images, cut into at most ``max_bins`` bins at
quantiles of the fitting windows (the histogram engine's quantised coding) and stored as one byte per
window, in a compiled kernel that never holds more than one feature's values per thread. The stump
search then runs on the codes as on any integer features, and a stump on codes maps back exactly to a
stump on feature values (:meth:`QuantizedPool.value_threshold`).
"""
from __future__ import annotations

import numpy as np

from ..binning import BinnedFeatures
from ..engine.threads import check_threads, run_blocks
from ..exceptions import InvalidValueError
from ._kernels import pool_thresholds, quantize_pool
from .haar import HaarFeatures, check_windows, stack_deviations
from .integral import integral_images

#: Features per block handed to a thread.
BLOCK_FEATURES = 2048

#: At most this many fitting windows (evenly spread) place each feature's bins: sorting every window's
#: value for 134,736 features would cost more than computing them, and quantiles of 512 values place
#: 256 bins well.
THRESHOLD_SAMPLE = 512


def _integrals(stack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """((h+1)(w+1), N) flattened integral images, one window per column, and (N,) inverse deviations."""
    flat = integral_images(stack).reshape(stack.shape[0], -1)
    return np.ascontiguousarray(flat.T), 1.0 / stack_deviations(stack)


class QuantizedPool:
    """Codes of every feature of ``features`` on fitting windows (and optionally other windows).

    Parameters
    ----------
    features : HaarFeatures
        The pool.
    windows : array_like
        (N, h, w) base-size windows, coded; the values of at most :data:`THRESHOLD_SAMPLE` of them,
        evenly spread, place each feature's bins.
    other_windows : array_like, optional
        (M, h, w) windows coded with the same bins (held-out windows).
    max_bins : int
        Bins per feature, 2 .. 256.
    n_threads : int or None
        Threads (None: every core); the codes do not depend on it.

    Attributes
    ----------
    codes : numpy.ndarray
        (N, #features) uint8 codes of ``windows`` (a transposed view of a feature-major array).
    other_codes : numpy.ndarray
        (M, #features) uint8 codes of ``other_windows`` (M = 0 without them).
    thresholds_per_feature : numpy.ndarray
        (#features,) number of thresholds (bins minus one) of each feature.
    """

    def __init__(self, features: HaarFeatures, windows, other_windows=None, max_bins: int = 256,
                 n_threads: int | None = None) -> None:
        if not isinstance(features, HaarFeatures):
            raise InvalidValueError(f"features: expected HaarFeatures, got {type(features).__name__}")
        if isinstance(max_bins, bool) or not isinstance(max_bins, (int, np.integer)) or not 2 <= max_bins <= 256:
            raise InvalidValueError(f"max_bins: must be an integer in [2, 256], got {max_bins!r}")
        n_threads = check_threads(n_threads)
        stack = check_windows(windows, features.window_size)
        other = (np.empty((0,) + features.window_size) if other_windows is None
                 else check_windows(other_windows, features.window_size, "other_windows"))
        self.features = features
        self.max_bins = int(max_bins)
        self._fit = _integrals(stack)
        other_integrals = _integrals(other) if other.shape[0] else (np.empty((self._fit[0].shape[0], 0)),
                                                                   np.empty(0))
        count = stack.shape[0]
        self._sample = (np.arange(count) if count <= THRESHOLD_SAMPLE
                        else np.unique(np.linspace(0, count - 1, THRESHOLD_SAMPLE).round().astype(np.int64)))
        n = len(features)
        fit_codes = np.empty((n, stack.shape[0]), dtype=np.uint8)
        other_codes = np.empty((n, other.shape[0]), dtype=np.uint8)
        counts = np.empty(n, dtype=np.int64)
        matrix = features.corner_matrix()
        blocks = [(matrix.indptr, matrix.indices, matrix.data, self._fit[0], self._fit[1], other_integrals[0],
                   other_integrals[1], self._sample, self.max_bins, a, min(a + BLOCK_FEATURES, n), fit_codes,
                   other_codes, counts)
                  for a in range(0, n, BLOCK_FEATURES)]
        run_blocks(quantize_pool, blocks, n_threads)
        self.codes = fit_codes.T
        self.other_codes = other_codes.T
        self.thresholds_per_feature = counts
        self.n_threads = n_threads

    def binned(self) -> BinnedFeatures:
        """The fitting windows' codes as the engine's :class:`~bob_boost.binning.BinnedFeatures`, without re-binning.

        Feature ``f``'s bins are its codes ``0 .. k_f`` (``k_f`` thresholds); a split between codes ``c`` and
        ``c + 1`` has the code threshold ``c + 0.5``, which :meth:`value_threshold` maps back to values.
        """
        thresholds = [np.arange(k) + 0.5 for k in self.thresholds_per_feature]
        return BinnedFeatures.from_codes(self.codes.T, thresholds, self.n_threads)

    @property
    def nbytes(self) -> int:
        """Bytes held by the codes."""
        return self.codes.nbytes + self.other_codes.nbytes

    def thresholds(self, feature: int) -> np.ndarray:
        """Sorted value thresholds of ``feature``'s bins: code ``c`` is ``thresholds[c-1] <= value < thresholds[c]``."""
        matrix = self.features.corner_matrix()
        return pool_thresholds(matrix.indptr, matrix.indices, matrix.data, int(feature), self._fit[0], self._fit[1],
                               self._sample, self.max_bins)

    def value_threshold(self, feature: int, code_threshold: float) -> float:
        """The feature value ``t`` with ``value >= t`` exactly when ``code >= code_threshold`` on the coded windows.

        ``+inf`` when no code reaches ``code_threshold``; ``-inf`` when every code does.
        """
        needed = int(np.ceil(code_threshold))
        if needed <= 0:
            return float("-inf")
        edges = self.thresholds(feature)
        return float(edges[needed - 1]) if needed - 1 < edges.size else float("inf")
