"""Exception types raised by bob_boost.

Every error the library raises on purpose derives from :class:`BobBoostError`,
so a front door (the command line) can tell a user's mistake, reported in one
line, from a bug, which deserves a traceback. The concrete types also derive
from the built-in type a caller would expect (``ValueError`` for bad values,
``TypeError`` for bad types), so ``except ValueError`` keeps working:

- :class:`InvalidValueError`, :class:`InvalidTypeError`: an argument of a
  public function (its message starts with the argument's name);
- :class:`ModelFormatError`: a model file;
- :class:`DataFormatError`: a data file.

Training that cannot go on warns with :class:`ConvergenceWarning`.
"""


class BobBoostError(Exception):
    """Base class of the errors bob_boost raises on purpose."""


class ModelFormatError(BobBoostError, ValueError):
    """A model file or HDF5 group does not hold a valid bob_boost machine.

    The message names the file, the group and what is wrong with it.
    """


class DataFormatError(BobBoostError, ValueError):
    """A data file (table, array archive, cost matrix) cannot be read as data.

    The message names the file and what is wrong with it.
    """


class InvalidValueError(BobBoostError, ValueError):
    """An argument has a value the function does not accept; the message names the argument."""


class InvalidTypeError(BobBoostError, TypeError):
    """An argument has a type the function does not accept; the message names the argument."""


class ConvergenceWarning(UserWarning):
    """Training stopped early because no step decreased the training loss (e.g. a custom loss whose
    gradient is not the derivative of its loss); the message names the loss and the round."""
