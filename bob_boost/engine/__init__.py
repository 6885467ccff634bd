"""The histogram engine: compact bin codes, compiled multi-threaded kernels, fast steps and prediction.

- :mod:`.edges`: where each feature's bins end (distinct values, or quantiles of a sample);
- :mod:`.codes`: (#features, #samples) uint8/uint16 codes and their histograms;
- :mod:`.listed`: the codes of a feature mostly in one bin kept for its other rows only (a sparse matrix's
  codes never make a (#features, #samples) array);
- :mod:`.values`: the exact distinct-value coding of the sparse-product path;
- :mod:`.kernels`: the numba kernels of stumps, tables and the multi-class trees (``nogil``, cached, no
  fastmath);
- :mod:`.tree_kernels`, :mod:`.tree_histograms`, :mod:`.split_scan`, :mod:`.tree_policy`: gradient trees,
  grown whole in one compiled call from node histograms, the Newton split scan and the growth policy
  (which the distributed trees share);
- :mod:`.quantised`: gradient trees' gradients rounded to a few levels and packed with their hessian and
  count in one int64 (one add per row and bin);
- :mod:`.newton`: the compiled one-dimensional Newton step of separable losses;
- :mod:`.line_objective`: the L-BFGS step's objective of the exponential and logit losses, compiled with
  the generic path's bits;
- :mod:`.prediction`: compiled evaluation of stump, LUT and tree ensembles;
- :mod:`.threads`: ``n_threads`` and the worker threads, with results independent of the thread count.

The binned representation every weak trainer uses, :class:`bob_boost.binning.BinnedFeatures`, is built on
these; nothing here knows of losses, machines or the boosting loop.
"""
