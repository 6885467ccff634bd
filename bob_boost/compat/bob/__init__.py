"""bob.learn.boosting 2.0's Python API on top of bob_boost.

A bob script runs after changing its imports::

    import bob_boost.compat.bob as boosting        # was: import bob.learn.boosting as boosting
    import bob_boost.compat.bob.utils              # was: import bob.learn.boosting.utils

(or, keeping ``bob.learn.boosting`` in the code, see :func:`bob_boost.compat.install_aliases`).

The same names as bob's, with bob's constructors, attributes and call forms:

- losses: :class:`LossFunction`, :class:`ExponentialLoss`, :class:`LogitLoss`, :class:`TangentialLoss`,
  :class:`JesorskyLoss` (``loss``, ``loss_gradient``, ``loss_sum``, ``loss_gradient_sum``);
- trainers: :class:`StumpTrainer` (with ``compute_threshold``), :class:`LUTTrainer`, :class:`Boosting`;
- machines: :class:`WeakMachine`, :class:`StumpMachine`, :class:`LUTMachine`, :class:`BoostedMachine`,
  called with output arrays to fill, built from and saved to HDF5 in bob's layout;
- :func:`weighted_histogram`, and :class:`utils.MNIST`.

Where these differ from bob 2.0.19 (see ``doc/bob_compat.md``): the stump trainer ranks stumps by how well
they follow the gradient, ``|sum_n g_n h(x_n)|``, where bob ranked thresholds by the gradient sum above
them alone (the same in a first round on balanced data, not later); the tangential loss's gradient has
the factor ``t`` that bob's lacked; machines accept features of any integer or float type; a call that
bob answered with the first output of a multi-output machine asks for an output array instead.
Everything else, down to the weights (bob's L-BFGS call, :func:`trainers.bob_weights`) and the scores of
bob's files, is bob's.
"""
from . import utils
from .losses import ExponentialLoss, JesorskyLoss, LogitLoss, LossFunction, TangentialLoss
from .machines import BoostedMachine, LUTMachine, StumpMachine, WeakMachine
from .trainers import Boosting, LUTTrainer, StumpTrainer, weighted_histogram

__all__ = ["LossFunction", "ExponentialLoss", "LogitLoss", "TangentialLoss", "JesorskyLoss", "StumpTrainer",
           "LUTTrainer", "Boosting", "WeakMachine", "StumpMachine", "LUTMachine", "BoostedMachine",
           "weighted_histogram", "utils"]
