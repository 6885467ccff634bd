"""The pool of every decision stump, and how AdaBoostDB and Cost-Sensitive AdaBoost choose from it.

One concept a module, each depending only on those listed before it:

* :mod:`.pool`: :class:`~.pool.StumpPool`, every stump of a feature matrix and the exact class-wise errors of
  all of them, one histogram per round;
* :mod:`bob_boost.boosting.roots` (with the other step rules): the step equations (AdaBoostDB's double-base
  polynomial, Cost-Sensitive AdaBoost's hyperbolic equation), their root finders and the
  :class:`~bob_boost.boosting.roots.RootCounter` that counts the searches;
* :mod:`.bounds`: the bound after a step as an affine function of a stump's class errors, and the lower
  bounds the bound search screens with;
* :mod:`.selectors`: the per-round selection rules (largest step, smallest bound), the Contribution and
  Improvement Conditions and the tie rule;
* :mod:`.searches`: AdaBoostDB's search strategies (Conditional, bound, exhaustive, Pareto), each built for
  a selection rule it serves.

The trainers that use them are in :mod:`bob_boost.trainers.cost_sensitive`. ``stump_pool.roots``, where the
step equations were before, is still :mod:`bob_boost.boosting.roots` itself.
"""
import sys

from ...boosting import roots

# the old path of the step equations names the same module (imports and pickles of its RootCounter)
sys.modules[f"{__name__}.roots"] = roots
