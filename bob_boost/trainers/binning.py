"""Old import path of :mod:`bob_boost.binning` (the one binned representation), kept for users' scripts."""
from ..binning import (MAX_HISTOGRAM_SIZE, QUANTIZATION_BINS, BinnedFeatures, check_histogram_size,
                       distinct_value_bins, midpoints)

__all__ = ["MAX_HISTOGRAM_SIZE", "QUANTIZATION_BINS", "BinnedFeatures", "check_histogram_size",
           "distinct_value_bins", "midpoints"]
