"""Deprecated import path of :mod:`bob_boost.binning` (the one binned representation), kept for users' scripts."""
import warnings

from ..binning import (MAX_HISTOGRAM_SIZE, QUANTIZATION_BINS, BinnedFeatures, check_histogram_size,
                       distinct_value_bins, midpoints)

__all__ = ["MAX_HISTOGRAM_SIZE", "QUANTIZATION_BINS", "BinnedFeatures", "check_histogram_size",
           "distinct_value_bins", "midpoints"]

# stacklevel 2 names the importing line: the warnings module skips importlib's own frames
warnings.warn("bob_boost.trainers.binning is deprecated: import from bob_boost.binning instead", DeprecationWarning,
              stacklevel=2)
