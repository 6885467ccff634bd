"""The one training loop and what plugs into it.

- :mod:`~bob_boost.boosting.protocol`: the weak-trainer protocol (``prepare`` once, ``propose`` every
  round) and the round state the loop keeps;
- :mod:`~bob_boost.boosting.steps`: the step rules (L-BFGS on the loss, BAdaCost's and AdaBoost.M1's closed
  forms, shrinkage);
- :mod:`~bob_boost.boosting.loop`: the loop itself;
- :mod:`~bob_boost.boosting.algorithms`: the published algorithms as configurations of the loop.

The public trainers (:class:`~bob_boost.Boosting`, :class:`~bob_boost.BAdaCostTrainer`, ...) stay where they
are, in :mod:`bob_boost.trainers`; they validate their arguments and run this loop.
"""
