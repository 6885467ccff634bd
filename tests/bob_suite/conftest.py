"""bob.learn.boosting's own tests, run against bob_boost.compat.bob, read the small MNIST subset."""
from pathlib import Path

import pytest

#: The first 40 training and 40 test images of each digit, in bob's layout (tests/data/README.md).
SMALL_MNIST = Path(__file__).resolve().parents[1] / "data" / "mnist_small.hdf5"


@pytest.fixture(autouse=True)
def small_mnist(monkeypatch):
    """Point ``bob_boost.compat.bob.utils.MNIST`` at the subset: bob's tests use its first images only."""
    monkeypatch.setenv("MNIST_HDF5", str(SMALL_MNIST))
