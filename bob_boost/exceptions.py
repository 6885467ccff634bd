"""Exception types raised by bob_boost."""


class ModelFormatError(ValueError):
    """A model file or HDF5 group does not hold a valid bob_boost machine.

    The message names the file, the group and what is wrong with it.
    """
