"""LibSVM (SVMlight) files: sparse rows ``label index:value ...``, read into a CSR matrix without a dense copy.

The indices are one-based, as the LibSVM format defines them (a file with index 0 is refused: write it with
``sklearn.datasets.dump_svmlight_file(..., zero_based=False)``), so a training file and a file to predict
always mean the same columns. Reading uses scikit-learn's parser (the ``sklearn`` extra); ``.gz`` and
``.bz2`` files are decompressed on the fly.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .._optional import optional_import
from ..exceptions import DataFormatError

#: The suffixes of LibSVM files.
SVMLIGHT_SUFFIXES = (".svm", ".libsvm", ".svmlight")


def read_svmlight(path: Path, number_of_features: int | None = None) -> tuple:
    """``(features, labels)`` of a LibSVM file: a (#samples, #features) CSR matrix (float64) and (#samples,)
    float64 labels (the table reader makes whole-number labels integers, as for a CSV file's).

    Parameters
    ----------
    path : Path
        The file.
    number_of_features : int, optional
        The width of the matrix (a trained model's): a file whose largest index is smaller still has it.

    Raises
    ------
    DataFormatError
        For a file that is not LibSVM, an index 0 or beyond ``number_of_features``, or non-finite values.
    ImportError
        Without scikit-learn, naming the extra that installs it.
    """
    datasets = optional_import("sklearn.datasets", "reading LibSVM files")
    try:
        features, labels = datasets.load_svmlight_file(str(path), n_features=number_of_features, zero_based=False,
                                                       dtype=np.float64)
    except ValueError as error:
        message = " ".join(str(error).split())
        hint = " (the indices are one-based)" if "index" in message.lower() else ""
        raise DataFormatError(f"{path}: not a LibSVM file: {message}{hint}") from None
    if not np.all(np.isfinite(features.data)):
        raise DataFormatError(f"{path}: features contain NaN or infinite values")
    return features, labels
