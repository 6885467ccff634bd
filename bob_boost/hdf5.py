"""Old import path of :mod:`bob_boost.io.hdf5` (the HDF5 helpers), kept for users' scripts."""
from .io.hdf5 import (MAX_ELEMENTS, atomic_file, fail, read_array, read_scalar, read_string_attribute, where,
                      write_array, write_scalar, write_string_attribute)

__all__ = ["MAX_ELEMENTS", "atomic_file", "fail", "read_array", "read_scalar", "read_string_attribute", "where",
           "write_array", "write_scalar", "write_string_attribute"]
