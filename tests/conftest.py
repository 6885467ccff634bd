"""Shared fixtures: small real data sets and bob's own model files, shipped in tests/data."""
from __future__ import annotations

import builtins
import gzip
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parent / "data"


def load_uci(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and raw labels of a UCI set shipped in ``tests/data/uci``."""
    path = DATA / "uci" / f"{name}.tsv.gz"
    with gzip.open(path, "rt") as stream:
        table = np.loadtxt(stream, delimiter="\t", skiprows=1)
    return table[:, :-1], table[:, -1]


@pytest.fixture(scope="session")
def ionosphere() -> tuple[np.ndarray, np.ndarray]:
    """Ionosphere: 351 samples, 34 float features, targets -1/+1."""
    features, labels = load_uci("ionosphere")
    return features, np.where(labels == labels.max(), 1.0, -1.0)


@pytest.fixture(scope="session")
def mnist_fixture_dir() -> Path:
    """Folder of machines saved by bob.learn.boosting itself."""
    return DATA / "bob_models"


@pytest.fixture
def no_matplotlib(monkeypatch):
    """Make ``import matplotlib`` fail, as on a machine without the plot extra."""
    real_import = builtins.__import__

    def blocked(name, *args, **kwargs):
        if name.startswith("matplotlib"):
            raise ImportError("No module named 'matplotlib'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", blocked)


@pytest.fixture
def read_on_workers_only(monkeypatch):
    """``read_on_workers_only(name)`` makes the lazy file reader's task ``name`` fail when it runs in the test's
    own process (the Dask client), so that a test shows the workers read the data file themselves."""
    import os

    from bob_boost.dask import _files

    client_pid = os.getpid()

    def patch(name: str) -> None:
        real = getattr(_files, name)

        def read(*args):  # a closure: pickled by value, so the workers run it too
            if os.getpid() == client_pid:
                raise AssertionError("the client process read rows of the data file")
            return real(*args)

        monkeypatch.setattr(_files, name, read)
    return patch
