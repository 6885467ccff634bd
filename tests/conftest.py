"""Shared fixtures: locations of the shared data and small real data sets."""
from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def load_uci(name: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and raw labels of a UCI set from ``shared/data/uci``."""
    path = SHARED / "data" / "uci" / name / f"{name}.tsv.gz"
    if not path.exists():
        pytest.skip(f"shared data set {path} is not present beside the checkout")
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
    path = SHARED / "fixtures" / "bob_models"
    if not path.exists():
        pytest.skip(f"{path} is not present beside the checkout")
    return path
