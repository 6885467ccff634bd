"""bob.learn.boosting's ``utils``: the :class:`MNIST` reader its tests and its example use.

bob shipped MNIST inside the package; here the data are looked for, in order,

1. in the HDF5 file the environment variable ``MNIST_HDF5`` names (bob's layout: ``train/data``,
   ``train/labels``, ``test/data``, ``test/labels``);
2. in ``../shared/data/mnist/mnist_data.hdf5`` beside the bob_boost checkout;
3. in bob_boost's download cache (the four original IDX files in ``bob_boost.datasets.data_home() / "mnist"``,
   which :func:`bob_boost.datasets.download_mnist` fills).

Nothing is downloaded on the way: with no data found, one error lists where it looked.
"""
from __future__ import annotations

import numbers
import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from ... import datasets
from ...exceptions import InvalidTypeError, InvalidValueError

#: The environment variable naming bob's MNIST HDF5 file.
ENVIRONMENT_VARIABLE = "MNIST_HDF5"

#: The groups (splits) of the data.
GROUPS = ("train", "test")


def shared_mnist_file() -> Path:
    """``../shared/data/mnist/mnist_data.hdf5`` beside the checkout this package lies in."""
    checkout = Path(__file__).resolve().parents[3]  # .../bob_boost/compat/bob/utils.py -> the checkout
    return checkout.parent / "shared" / "data" / "mnist" / "mnist_data.hdf5"


def find_mnist() -> datasets.MNIST:
    """Load MNIST from the first place of the module's list that holds it.

    Raises
    ------
    FileNotFoundError
        If ``MNIST_HDF5`` names a file that does not exist, or if no place holds the data (the message
        lists every place looked at).
    ValueError
        If the file found is not MNIST in bob's layout.
    """
    looked: list[str] = []
    named = os.environ.get(ENVIRONMENT_VARIABLE)
    if named:
        # a file the user named is the file the user wants: no silent fallback to other data
        if not Path(named).is_file():
            raise FileNotFoundError(f"{ENVIRONMENT_VARIABLE}: names {named!r}, which is not a file")
        return datasets.load_mnist_hdf5(named)
    looked.append(f"${ENVIRONMENT_VARIABLE} (not set)")
    shared = shared_mnist_file()
    if shared.is_file():
        return datasets.load_mnist_hdf5(shared)
    looked.append(f"{shared} (no such file)")
    cache = datasets.data_home() / "mnist"
    if all((cache / name).is_file() for name, _ in datasets.MNIST_FILES.values()):
        return datasets.load_mnist_idx(cache)
    looked.append(f"{cache} (no complete set of the four MNIST IDX files)")
    raise FileNotFoundError("no MNIST data found; looked at " + "; ".join(looked)
                            + f". Set {ENVIRONMENT_VARIABLE} to bob's mnist_data.hdf5, or download MNIST into the "
                              f"cache with `python -c 'import bob_boost.datasets as d; d.download_mnist()'`")


class MNIST:
    """The MNIST digits, as bob.learn.boosting's ``utils.MNIST`` serves them (see the module for the source)."""

    def __init__(self) -> None:
        data = find_mnist()
        self._data = {"train": data.train_data, "test": data.test_data}
        self._labels = {"train": data.train_labels, "test": data.test_labels}

    def data(self, groups: str | Iterable[str] = GROUPS,
             labels: int | Iterable[int] = range(10)) -> tuple[np.ndarray, np.ndarray]:
        """The images and labels of the digits ``labels`` in the groups ``groups``.

        Parameters
        ----------
        groups : str or iterable of str
            ``"train"``, ``"test"`` or both, in the order given.
        labels : int or iterable of int
            The digits wanted.

        Returns
        -------
        data : numpy.ndarray
            (#images, 784) uint8 pixel values, in file order within each group.
        labels : numpy.ndarray
            (#images,) uint8 digits.
        """
        if isinstance(groups, str):
            groups = (groups,)
        if isinstance(labels, numbers.Integral):
            labels = (labels,)
        groups, wanted = tuple(groups), np.asarray(list(labels))
        for group in groups:
            if group not in GROUPS:
                raise InvalidValueError(f"groups: must name {GROUPS[0]!r} or {GROUPS[1]!r}, got {group!r}")
        if wanted.size and not np.issubdtype(wanted.dtype, np.integer):
            raise InvalidTypeError(f"labels: expected digits (integers), got {wanted.dtype}")
        images, digits = [], []
        for group in groups:
            keep = np.isin(self._labels[group], wanted)
            images.append(self._data[group][keep])
            digits.append(self._labels[group][keep])
        width = self._data[GROUPS[0]].shape[1]
        if not images:
            return np.zeros((0, width), np.uint8), np.zeros(0, np.uint8)
        return np.concatenate(images).astype(np.uint8), np.concatenate(digits).astype(np.uint8)


__all__ = ["ENVIRONMENT_VARIABLE", "GROUPS", "MNIST", "find_mnist", "shared_mnist_file"]
