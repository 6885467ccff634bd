"""The histogram engine: compact bin codes, compiled multi-threaded kernels, fast steps and prediction.

- :mod:`.edges`: where each feature's bins end (distinct values, or quantiles of a sample);
- :mod:`.codes`: (#features, #samples) uint8/uint16 codes and their histograms;
- :mod:`.kernels`: the numba kernels (``nogil``, cached, no fastmath);
- :mod:`.threads`: ``n_threads`` and the worker threads, with results independent of the thread count.

The binned representation every weak trainer uses, :class:`bob_boost.binning.BinnedFeatures`, is built on
these; nothing here knows of losses, machines or the boosting loop.
"""
