"""Weak trainers: from a round's sample weights to the next weak machine.

:mod:`~bob_boost.weak_trainers.stump_pool` evaluates the pool of every decision stump at once and chooses a
round's stump together with its step, for AdaBoostDB and Cost-Sensitive AdaBoost. The generic stump, LUT and
multi-class trainers are still in :mod:`bob_boost.trainers`.
"""
