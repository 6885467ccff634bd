"""Readers and writers of the files bob_boost works with.

- :mod:`bob_boost.io.tables`: data files (CSV/TSV/TXT, optionally gzip-compressed, NPY, NPZ, HDF5) into
  features and labels, cost-matrix files, and predictions written back.
- :mod:`bob_boost.io.row_files`: HDF5 and NPY files checked from their headers and read by ranges of rows,
  which the eager table reader and the lazy (Dask) reader share.
- :mod:`bob_boost.io.hdf5`: the low-level HDF5 helpers every machine's ``save``/``load`` uses.
- :mod:`bob_boost.io.model`: the model format, a boosted machine in an HDF5 file or group.
"""
