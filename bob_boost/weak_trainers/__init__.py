"""Weak trainers: from a round's sample weights to the next weak machine.

- :mod:`~bob_boost.weak_trainers.stump`, :mod:`~bob_boost.weak_trainers.lut`: decision stumps and look-up
  tables for a loss gradient;
- :mod:`~bob_boost.weak_trainers.tree`: gradient trees (the compiled grower of :mod:`bob_boost.engine`);
- :mod:`~bob_boost.weak_trainers.multiclass`, :mod:`~bob_boost.weak_trainers.tree_growing`: multi-class
  stumps, tables and cost-sensitive trees for sample weights and a loss matrix, and the trees' level-wise growth;
- :mod:`~bob_boost.weak_trainers.stump_pool`: the pool of every decision stump at once, choosing a round's
  stump together with its step, for AdaBoostDB and Cost-Sensitive AdaBoost.
"""
