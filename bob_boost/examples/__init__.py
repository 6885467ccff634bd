"""Worked examples as library code, so that scripts, benchmarks and the command line share them.

- :mod:`bob_boost.examples.mnist`: bob.learn.boosting's MNIST example (``bob-boost example mnist|digits``).
"""
