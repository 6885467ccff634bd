"""bob's call forms for machines: output arrays that the call fills, and a number for one sample.

bob.learn.boosting's machines are called as

- ``machine(sample)`` with a 1-D sample: the score, a float (uni-variate machines);
- ``machine(sample, scores)``: fills the (#outputs,) ``scores``;
- ``machine(features, scores)`` with a (#samples, #features) array: fills ``scores``, of shape
  (#samples,) for a uni-variate machine or (#samples, #outputs);
- ``machine(features, scores, labels)`` (strong machines): fills ``labels`` too, of ``scores``' shape:
  +1 / -1 by the sign of a uni-variate score; for several outputs +1 at the largest score, -1 elsewhere.

Here ``machine(features)`` without an output array also works and returns a new array. The output
arrays must be float64 NumPy arrays of the right shape: bob wrote into them, so anything else is an error.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...exceptions import InvalidTypeError, InvalidValueError

#: Computes (#samples, #outputs) float64 scores of a (#samples, #features) array (validating it).
ScoreFunction = Callable[[np.ndarray], np.ndarray]


def check_output(array, name: str, shapes: list[tuple[int, ...]]) -> np.ndarray:
    """Raise unless ``array`` is a writeable float64 NumPy array of one of ``shapes``."""
    if not isinstance(array, np.ndarray):
        raise InvalidTypeError(f"{name}: expected a numpy.ndarray to fill, got {type(array).__name__}")
    if array.dtype != np.float64:
        raise InvalidTypeError(f"{name}: must be a float64 array (the machine fills it), got dtype {array.dtype}")
    if array.shape not in shapes:
        expected = " or ".join(str(shape) for shape in shapes)
        raise InvalidValueError(f"{name}: expected shape {expected}, got {array.shape}")
    if not array.flags.writeable:
        raise InvalidValueError(f"{name}: the array is read-only, the machine cannot fill it")
    return array


def labels_of(scores: np.ndarray) -> np.ndarray:
    """bob's labels for (#samples, #outputs) scores: the sign (+1 only above 0), or +1 at the largest score."""
    if scores.shape[1] == 1:
        return np.where(scores > 0, 1.0, -1.0)
    labels = -np.ones_like(scores)
    labels[np.arange(scores.shape[0]), np.argmax(scores, axis=1)] = 1.0  # the first of equal maxima, as bob
    return labels


def bob_call(score: ScoreFunction, outputs: int, features, predictions=None, labels=None):
    """Evaluate a machine of ``outputs`` outputs in one of bob's call forms (see the module docstring).

    Parameters
    ----------
    score : callable
        The machine's (#samples, #features) -> (#samples, #outputs) scores, validating the features.
    outputs : int
        The machine's number of outputs.
    features : array_like
        One 1-D sample or a (#samples, #features) array.
    predictions, labels : numpy.ndarray, optional
        Output arrays to fill.

    Returns
    -------
    float, numpy.ndarray or None
        A float for one sample of a uni-variate machine without ``predictions``; a new array for several
        samples without ``predictions``; None when the output arrays were filled.
    """
    array = np.asarray(features)
    if labels is not None and predictions is None:
        raise InvalidValueError("labels: can only be filled together with predictions")
    if array.ndim == 1:
        if predictions is None:
            if outputs != 1:
                raise InvalidValueError(f"predictions: the machine has {outputs} outputs; pass a float64 array of "
                                        f"shape ({outputs},) to fill (bob.learn.boosting returned the first output)")
            return float(score(array[np.newaxis])[0, 0])
        shapes = [(outputs,)]
    elif array.ndim == 2:
        shapes = [(array.shape[0],)] if outputs == 1 else []
        shapes.append((array.shape[0], outputs))
        if predictions is None:
            scores = score(array)
            return scores[:, 0] if outputs == 1 else scores
    else:
        raise InvalidValueError(f"features: expected one sample (1-D) or a (#samples, #features) array, "
                                f"got shape {array.shape}")
    check_output(predictions, "predictions", shapes)
    if labels is not None:
        check_output(labels, "labels", [predictions.shape])
    scores = score(array[np.newaxis] if array.ndim == 1 else array)
    predictions[...] = scores.reshape(predictions.shape)
    if labels is not None:
        labels[...] = labels_of(scores).reshape(labels.shape)
    return None


__all__ = ["ScoreFunction", "bob_call", "check_output", "labels_of"]
