"""Class labels, the indices the machines predict, and the targets the trainers take.

:class:`ClassEncoding` is the one codec every front door uses, and its
:meth:`~ClassEncoding.to_metadata` is the one place the class part of a
model file's metadata is written:

``task``
    ``"binary"``, ``"multiclass"`` or ``"regression"``.
``classes``
    The class labels as a JSON list, in index order: class ``i`` is what a
    machine's class index ``i`` means (for a ``"sign"`` machine, index 0 is
    -1 and index 1 is +1).
``classes_dtype``
    The NumPy dtype string of the labels, so that ``classes`` come back with
    the type they were trained with (``"<U3"``, ``"<i8"``, ...).

Files without ``classes`` (bob.learn.boosting's, or machines trained in
Python) read as classes ``[-1, 1]`` for one output and ``0 .. K-1`` otherwise.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Sequence

import numpy as np

from .costs import margin_vectors
from .exceptions import InvalidValueError, ModelFormatError

#: Metadata of a regression model.
REGRESSION_METADATA = {"task": "regression"}

#: The forms of training targets a trainer may take (see :meth:`ClassEncoding.targets`).
TARGET_KINDS = ("signed", "one_vs_rest", "indices", "margin")


class ClassEncoding:
    """Class labels in index order, and the conversions between labels, indices and targets.

    Parameters
    ----------
    classes : array_like
        At least two distinct labels (numbers or text); ``classes[i]`` is the
        label of class index ``i``.

    Raises
    ------
    ValueError
        For fewer than two classes or repeated labels.
    """

    def __init__(self, classes) -> None:
        array = np.asarray(classes)
        if array.ndim != 1 or array.size < 2:
            raise InvalidValueError(f"classes: need at least 2 class labels, got {array.tolist()!r}")
        if len({_key(value) for value in array.tolist()}) != array.size:
            raise InvalidValueError(f"classes: labels must be distinct, got {array.tolist()!r}")
        array = array.copy()
        array.setflags(write=False)
        self.classes = array

    @classmethod
    def fit(cls, labels, positive_label=None, name: str = "labels") -> "ClassEncoding":
        """The sorted distinct labels of ``labels``; ``positive_label`` (two classes only) goes last.

        The last class of a binary problem is the one that gets target +1.

        Raises
        ------
        ValueError
            For a single class, an unknown ``positive_label``, or a
            ``positive_label`` with more than two classes.
        """
        classes = np.unique(np.asarray(labels))
        if classes.size < 2:
            shown = classes.tolist()[0] if classes.size else "none"
            raise InvalidValueError(f"{name}: a classifier needs at least 2 classes, got 1 class ({shown!r})")
        if positive_label is not None:
            match = [i for i, c in enumerate(classes.tolist()) if str(c) == str(positive_label)]
            if not match:
                raise InvalidValueError(f"positive_label: {positive_label!r} is not one of the classes "
                                        f"{[str(c) for c in classes.tolist()]}")
            if classes.size != 2:
                raise InvalidValueError("positive_label: needs exactly two classes")
            classes = classes[[1 - match[0], match[0]]]
        return cls(classes)

    @property
    def number_of_classes(self) -> int:
        """K."""
        return int(self.classes.size)

    @property
    def task(self) -> str:
        """``"binary"`` for two classes, else ``"multiclass"``."""
        return "binary" if self.classes.size == 2 else "multiclass"

    def encode(self, labels, name: str = "labels") -> np.ndarray:
        """Class index (int64) of every label.

        Numeric labels match numeric classes by value (``1`` matches ``1.0``);
        anything else matches by its text.

        Raises
        ------
        ValueError
            If a label is not one of the classes (naming up to five of them).
        """
        values = np.asarray(labels)
        if values.ndim != 1:
            raise InvalidValueError(f"{name}: expected one label per sample (1-D), got shape {values.shape}")
        keys, wanted = _comparable(self.classes, values)
        order = np.argsort(keys, kind="stable")
        if wanted.size == 0:
            return np.zeros(0, dtype=np.int64)
        position = np.clip(np.searchsorted(keys[order], wanted), 0, keys.size - 1)
        found = keys[order][position] == wanted
        if not np.all(found):
            unknown = np.unique(np.asarray([str(v) for v in values[~found].tolist()]))[:5].tolist()
            raise InvalidValueError(f"{name}: labels {unknown} were not seen in training (classes: "
                                    f"{[str(c) for c in self.classes.tolist()]})")
        return order[position].astype(np.int64)

    def decode(self, indices) -> np.ndarray:
        """The labels of class ``indices``."""
        return self.classes[np.asarray(indices, dtype=np.int64)]

    def targets(self, kind: str, indices: np.ndarray) -> np.ndarray:
        """Training targets of class ``indices`` in one of :data:`TARGET_KINDS`.

        ``"signed"``
            (#samples,) +1 for class 1 and -1 for class 0 (two classes only).
        ``"one_vs_rest"``
            (#samples, K) +1 at the class and -1 elsewhere (bob's multi-variate targets).
        ``"indices"``
            The class indices themselves (BAdaCost, SAMME, the CMEL loss).
        ``"margin"``
            (#samples, K) margin vectors: 1 at the class and ``-1/(K-1)`` elsewhere.
        """
        indices = np.asarray(indices, dtype=np.int64)
        if kind == "signed":
            if self.classes.size != 2:
                raise InvalidValueError(f"kind: 'signed' targets need two classes, there are {self.classes.size}")
            return np.where(indices == 1, 1.0, -1.0)
        if kind == "one_vs_rest":
            targets = np.full((indices.size, self.classes.size), -1.0)
            targets[np.arange(indices.size), indices] = 1.0
            return targets
        if kind == "indices":
            return indices.copy()
        if kind == "margin":
            return margin_vectors(self.classes.size)[indices]
        raise InvalidValueError(f"kind: must be one of {TARGET_KINDS}, got {kind!r}")

    @staticmethod
    def classes_of(kind: str, targets: np.ndarray) -> np.ndarray:
        """(#samples,) the class indices of training ``targets`` of ``kind``: :meth:`targets` inverted."""
        targets = np.asarray(targets)
        if kind == "signed":
            return (targets.reshape(targets.shape[0]) > 0).astype(np.int64)
        if kind in ("one_vs_rest", "margin"):
            return np.argmax(targets, axis=1).astype(np.int64)
        if kind == "indices":
            return targets.astype(np.int64)
        raise InvalidValueError(f"kind: must be one of {TARGET_KINDS}, got {kind!r}")

    def to_metadata(self) -> dict[str, Any]:
        """``task``, ``classes`` and ``classes_dtype`` for a model's metadata (JSON types only)."""
        return {"task": self.task, "classes": self.classes.tolist(), "classes_dtype": self.classes.dtype.str}

    @classmethod
    def from_metadata(cls, metadata: dict[str, Any], number_of_outputs: int,
                      source: str = "the model") -> "ClassEncoding | None":
        """The encoding a model's metadata states, or None when it names no classes.

        Parameters
        ----------
        metadata : dict
            The model's metadata.
        number_of_outputs : int
            The machine's outputs: one output means two classes.
        source : str
            What to name in error messages (the model file).

        Raises
        ------
        bob_boost.ModelFormatError
            If ``classes`` is not a list of distinct single values of the
            right length, or ``classes_dtype`` is not a dtype they fit.
        """
        classes = metadata.get("classes")
        if classes is None:
            return None
        count = 2 if number_of_outputs == 1 else number_of_outputs
        problem = None
        if not isinstance(classes, list) or len(classes) != count:
            problem = f"expected a list of {count} class labels for {number_of_outputs} output(s)"
        elif not all(isinstance(c, (str, int, float)) for c in classes):  # bool is an int
            problem = "class labels must be single values (text or numbers)"
        elif len({_key(c) for c in classes}) != count:
            problem = "class labels must be distinct"
        if problem:
            shown = repr(classes)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise ModelFormatError(f"{source}: metadata 'classes': {problem}, got {shown}")
        return cls(_typed(classes, metadata.get("classes_dtype"), source))

    @classmethod
    def default(cls, number_of_outputs: int) -> "ClassEncoding":
        """Classes of a model that names none: ``[-1, 1]`` for one output, else ``0 .. K-1``."""
        return cls([-1, 1] if number_of_outputs == 1 else list(range(number_of_outputs)))

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, ClassEncoding) and self.classes.dtype == other.classes.dtype
                and np.array_equal(self.classes, other.classes))

    def __hash__(self) -> int:
        return hash(tuple(_key(c) for c in self.classes.tolist()))

    def __repr__(self) -> str:
        return f"ClassEncoding({self.classes.tolist()!r})"


def classes_of(machine, source: str = "the model") -> ClassEncoding:
    """The class encoding of a classifier ``machine``: its metadata's, else the default one.

    Raises
    ------
    ValueError
        For a regression machine.
    bob_boost.ModelFormatError
        If its metadata names invalid classes.
    """
    if not machine.is_classifier:
        raise InvalidValueError(f"{source}: is a regression model; it has no classes")
    outputs = machine.number_of_outputs or 1
    encoding = ClassEncoding.from_metadata(machine.metadata, outputs, source)
    return encoding if encoding is not None else ClassEncoding.default(outputs)


def _comparable(classes: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``classes`` and ``values`` in one sortable type: integers as integers (exact beyond 2**53), other
    numbers as floats, anything else as text."""
    if classes.dtype.kind in "iub" and values.dtype.kind in "iub":
        common = np.result_type(classes.dtype, values.dtype)
        if common.kind in "iub":
            return classes.astype(common), values.astype(common)
        return classes.astype(object), values.astype(object)  # uint64 with negative int64: Python ints
    if classes.dtype.kind in "iufb" and values.dtype.kind in "iufb":
        return classes.astype(np.float64), values.astype(np.float64)
    return np.array([str(c) for c in classes.tolist()]), np.array([str(v) for v in values.tolist()], dtype=str)


def _key(value) -> str:
    """What makes two labels the same class: their text (1 and 1.0 differ only in type)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _typed(classes: Sequence, dtype, source: str) -> np.ndarray:
    """``classes`` as an array of the stored dtype (bob_boost 0.1 CLI files have none: inferred)."""
    if dtype is None:
        return np.asarray(classes)
    try:
        array = np.empty(len(classes), dtype=np.dtype(dtype))
        array[:] = classes
    except (TypeError, ValueError) as error:
        raise ModelFormatError(f"{source}: metadata 'classes_dtype' {dtype!r} does not fit the classes "
                               f"({error})") from None
    return array
