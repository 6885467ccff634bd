"""The strong machine: a baseline plus a weighted sum of weak machines, and what its scores mean."""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from typing import Any

import h5py
import numpy as np

from . import decision, ensemble_scores, explanations, importances
from ._validation import as_feature_matrix, check_positive_int
from .costs import check_cost_matrix, cost_star, margin_vectors  # noqa: F401  (cost_star, margin_vectors: old import path)
from .exceptions import InvalidTypeError, InvalidValueError
from .io import model
from .exceptions import ModelFormatError  # noqa: F401  (re-exported, old import path)
from .io.model import FORMAT_VERSION  # noqa: F401  (re-exported, old import path)
from .registry import weak_machine_class  # noqa: F401  (re-exported, old import path)
from .sparse import by_row_blocks, is_sparse
from .engine.threads import check_threads
from .weak.base import WeakMachine
from .weak.lut import LUTMachine  # noqa: F401  (re-exported, old import path)
from .weak.multiclass import MultiClassTreeMachine  # noqa: F401  (re-exported, old import path)
from .weak.stump import StumpMachine  # noqa: F401  (re-exported, old import path)
from .weak.tree import TreeMachine  # noqa: F401  (re-exported, old import path)


class BoostedMachine:
    """Strong machine ``S(x) = b + sum_i w_i * W_i(x)``.

    The machine owns its meaning: the baseline ``b`` (an intercept, zero for
    every machine bob.learn.boosting writes) and the decision rule that turns
    scores into predictions (:mod:`bob_boost.decision`) travel with it in the
    model file, so every front door predicts the same from the same file.

    Weak machines are values: once added, a weak machine is not changed (its arrays are read-only). The compiled
    evaluation's tables of every round are made at the first prediction and kept until
    :meth:`add_weak_machine`, :meth:`truncate` or a new :attr:`baseline` changes the machine.

    Parameters
    ----------
    number_of_outputs : int, optional
        Fixed by the first weak machine added when not given.
    cost_matrix : array_like, optional
        (K, K) cost matrix. When set, :meth:`predict` returns the
        cost-sensitive decision ``argmin_k (C* S(x))_k`` (BAdaCost / CMEL)
        instead of the index of the largest score.
    number_of_features : int, optional
        Width of the feature vectors the machine was trained on; features of
        another width are rejected.
    metadata : dict, optional
        JSON-serialisable extra information (loss name, class labels, ...)
        saved with the model.
    baseline : float or array_like, optional
        The constant ``b`` added to every score, one value per output (a
        scalar is repeated); 0 by default.
    decision_rule : {"sign", "argmax", "cost_sensitive", "identity"}, optional
        How :meth:`predict` turns scores into predictions; by default
        ``"cost_sensitive"`` with a cost matrix, else ``"sign"`` for one
        output and ``"argmax"`` for several (bob.learn.boosting's rules).

    Attributes
    ----------
    n_threads : int or None
        Threads of the compiled evaluation of all-stump, all-LUT and all-tree machines
        (None, the default: every core); not saved. Scores do not depend on it.
    """

    def __init__(self, number_of_outputs: int | None = None, cost_matrix=None,
                 number_of_features: int | None = None, metadata: dict[str, Any] | None = None,
                 baseline=None, decision_rule: str | None = None) -> None:
        self._weak_machines: list[WeakMachine] = []
        self._weights: list[np.ndarray] = []
        self._number_of_outputs = (None if number_of_outputs is None
                                   else check_positive_int(number_of_outputs, "number_of_outputs"))
        self.cost_matrix = None
        if cost_matrix is not None:
            self.cost_matrix = check_cost_matrix(cost_matrix)
            size = self.cost_matrix.shape[0]
            if self._number_of_outputs not in (None, size):
                raise InvalidValueError(f"cost_matrix: is {size}x{size} but number_of_outputs is {number_of_outputs}")
            self._number_of_outputs = size
        self.number_of_features = (None if number_of_features is None
                                   else check_positive_int(number_of_features, "number_of_features"))
        self.metadata: dict[str, Any] = dict(metadata or {})
        try:
            json.dumps(self.metadata)
        except (TypeError, ValueError) as error:
            raise InvalidTypeError(f"metadata: must be JSON-serialisable ({error})") from None
        self._baseline: np.ndarray | None = None
        if baseline is not None:
            self.baseline = baseline
        self._decision_rule: str | None = None
        if decision_rule is not None:
            self.decision_rule = decision_rule
        self.n_threads: int | None = None

    # -- meaning -----------------------------------------------------------
    @property
    def baseline(self) -> np.ndarray:
        """(#outputs,) constant added to every score (a new array; zeros unless set)."""
        if self._baseline is None:
            return np.zeros(self._number_of_outputs or 1)
        return self._baseline.copy()

    @baseline.setter
    def baseline(self, value) -> None:
        array = np.array(value, dtype=np.float64).reshape(-1)
        outputs = self._number_of_outputs
        if array.size == 1 and outputs is not None and outputs > 1:
            array = np.repeat(array, outputs)
        if outputs is not None and array.shape != (outputs,):
            raise InvalidValueError(f"baseline: expected a scalar or {outputs} values, got shape {np.shape(value)}")
        if not np.all(np.isfinite(array)):
            raise InvalidValueError("baseline: must be finite")
        if outputs is None:
            self._number_of_outputs = array.size
        self._baseline = array
        self._changed()

    @property
    def decision_rule(self) -> str:
        """The rule :meth:`predict` applies (see :mod:`bob_boost.decision`)."""
        if self._decision_rule is not None:
            return self._decision_rule
        return decision.default_rule(self._number_of_outputs, self.cost_matrix is not None)

    @decision_rule.setter
    def decision_rule(self, rule: str) -> None:
        self._decision_rule = decision.check_rule(rule, self._number_of_outputs, self.cost_matrix is not None)

    @property
    def is_classifier(self) -> bool:
        """Whether the machine predicts classes (any rule but ``"identity"``)."""
        return self.decision_rule in decision.CLASSIFICATION_RULES

    # -- composition -------------------------------------------------------
    def add_weak_machine(self, machine: WeakMachine, weight) -> None:
        """Append ``machine`` with ``weight`` (a scalar, or one value per output)."""
        if not isinstance(machine, WeakMachine):
            raise InvalidTypeError(f"machine: expected a WeakMachine, got {type(machine).__name__}")
        outputs = machine.number_of_outputs
        if self._number_of_outputs is not None and outputs != self._number_of_outputs:
            raise InvalidValueError(
                f"machine: has {outputs} output(s) but the boosted machine has {self._number_of_outputs}")
        if self._decision_rule == "sign" and outputs != 1:
            raise InvalidValueError(f"machine: has {outputs} outputs but the decision rule 'sign' needs one")
        weight_array = np.array(weight, dtype=np.float64).reshape(-1)
        if weight_array.size == 1 and outputs > 1:
            weight_array = np.repeat(weight_array, outputs)
        if weight_array.shape != (outputs,):
            raise InvalidValueError(f"weight: expected a scalar or {outputs} values, got shape {np.shape(weight)}")
        if not np.all(np.isfinite(weight_array)):
            raise InvalidValueError("weight: must be finite")
        self._number_of_outputs = outputs
        self._weak_machines.append(machine)
        self._weights.append(weight_array)
        self._changed()

    @property
    def weak_machines(self) -> list[WeakMachine]:
        """The weak machines in the order they were added (a new list)."""
        return list(self._weak_machines)

    @property
    def weights(self) -> np.ndarray:
        """(#machines, #outputs) weights (a new array)."""
        if not self._weights:
            return np.zeros((0, self._number_of_outputs or 0))
        return np.vstack(self._weights)

    @property
    def number_of_outputs(self) -> int | None:
        """Number of outputs; None for an empty machine whose width is not fixed yet."""
        return self._number_of_outputs

    def __len__(self) -> int:
        return len(self._weak_machines)

    def truncate(self, number_of_rounds: int) -> None:
        """Keep only the first ``number_of_rounds`` weak machines (in place), as early stopping does.

        Raises
        ------
        ValueError
            If ``number_of_rounds`` is negative or larger than ``len(self)``.
        """
        if (isinstance(number_of_rounds, bool) or not isinstance(number_of_rounds, (int, np.integer))
                or not 0 <= number_of_rounds <= len(self)):
            raise InvalidValueError(f"number_of_rounds: expected an integer in [0, {len(self)}], "
                                    f"got {number_of_rounds!r}")
        del self._weak_machines[number_of_rounds:]
        del self._weights[number_of_rounds:]
        self._changed()

    def _prepared(self, key: tuple, make: Callable[[], Any]) -> Any:
        """``make()``, kept for ``key`` until the rounds or the baseline change: the stacked tables of the compiled
        ensemble and the features it reads are made once, not at each prediction (a weak machine's arrays are
        read-only, and the rounds change only through this class's methods)."""
        cache = self.__dict__.setdefault("_prepared_cache", {})
        if key not in cache:
            cache[key] = make()
        return cache[key]

    def _changed(self) -> None:
        """Forget what :meth:`_prepared` kept."""
        self.__dict__.pop("_prepared_cache", None)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_prepared_cache", None)  # functions of the compiled kernels: remade when needed
        return state

    def feature_indices(self) -> np.ndarray:
        """Sorted unique feature columns that any weak machine reads."""
        if not self._weak_machines:
            return np.zeros(0, dtype=np.int64)
        return self._prepared(("features",), lambda: np.unique(np.concatenate(
            [m.feature_indices() for m in self._weak_machines]))).copy()

    # -- evaluation --------------------------------------------------------
    def _check_features(self, features) -> np.ndarray:
        handles_missing = self._handles_missing()
        array = as_feature_matrix(features, allow_1d=True, allow_nan=handles_missing)
        self._check_columns(array, handles_missing)
        return array

    def _handles_missing(self) -> bool:
        """Whether any weak machine takes NaN as a missing value."""
        return self._prepared(("missing",), lambda: any(machine.accepts_missing for machine in self._weak_machines))

    def _check_columns(self, array, handles_missing: bool) -> None:
        """The width, missing values and values the weak machines read of a 2-D array or canonical CSR matrix."""
        if self.number_of_features is not None and array.shape[1] != self.number_of_features:
            raise InvalidValueError(
                f"features: the machine was trained on {self.number_of_features} features, got {array.shape[1]}")
        indices = self.feature_indices()
        if indices.size and indices[-1] >= array.shape[1]:
            raise InvalidValueError(f"features: the machine reads feature {indices[-1]} but features have "
                                    f"only {array.shape[1]} columns")
        if handles_missing and array.dtype.kind == "f":
            missing_columns = (np.unique(array.indices[np.isnan(array.data)]) if is_sparse(array)
                               else np.flatnonzero(np.isnan(array).any(axis=0)))
            for machine in self._weak_machines:
                read = np.intersect1d(machine.feature_indices(), missing_columns)
                if read.size and not machine.accepts_missing:
                    raise InvalidValueError(f"features: NaN in feature {read[0]}, which {machine!r} reads without "
                                            f"missing-value handling")
        for check in self._prepared(("value checks",), lambda: ensemble_scores.value_checks(self._weak_machines)):
            check(array)

    def _checked_rows(self, features):
        """:meth:`_check_features` of ``features``; a scipy sparse matrix as canonical CSR with the same checks,
        made on its stored values (its implicit zeros are finite and not missing)."""
        if not is_sparse(features):
            return self._check_features(features)
        handles_missing = self._handles_missing()
        rows = as_feature_matrix(features, allow_nan=handles_missing, accept_sparse=True)
        self._check_columns(rows, handles_missing)
        return rows

    def _by_checked_blocks(self, function, features) -> np.ndarray:
        """``function`` of the checked ``features``; of a sparse matrix, of each dense row block (in the
        machine's threads)."""
        return by_row_blocks(function, self._checked_rows(features), check_threads(self.n_threads, "n_threads"))

    def _initial_scores(self, n_samples: int, include_baseline: bool = True) -> np.ndarray:
        """(#samples, #outputs) scores of the empty machine: the baseline (or zeros)."""
        total = np.zeros((n_samples, self._number_of_outputs or 1))
        if self._baseline is not None and include_baseline:
            total += self._baseline
        return total

    def _forward(self, array: np.ndarray, include_baseline: bool = True) -> np.ndarray:
        # the baseline first, then the rounds in order: staged_decision_scores and the compiled
        # ensembles add in the same order, so all three give these scores bit for bit
        compiled = self._compiled_forward(array, include_baseline)
        if compiled is not None:
            return compiled
        total = self._initial_scores(array.shape[0], include_baseline)
        for machine, weight in zip(self._weak_machines, self._weights):
            total += weight * machine.forward(array)
        return total

    def _compiled_forward(self, array: np.ndarray, include_baseline: bool = True) -> np.ndarray | None:
        """Scores of an all-stump or all-LUT ensemble from the compiled kernels; None for other machines."""
        scores = self._compiled_scores(include_baseline)
        return None if scores is None else scores(array)

    def _compiled_scores(self, include_baseline: bool = True,
                         columns: np.ndarray | None = None) -> Callable[[np.ndarray], np.ndarray] | None:
        """:func:`bob_boost.ensemble_scores.compiled_scores` of this machine's rounds (None: no rounds, or kinds
        without a compiled ensemble)."""
        if not self._weak_machines:
            return None
        threads = check_threads(self.n_threads, "n_threads")
        return self._prepared(
            ("scores", include_baseline, threads, None if columns is None else columns.tobytes()),
            lambda: ensemble_scores.compiled_scores(self._weak_machines, np.vstack(self._weights),
                                                    self._initial_scores(1, include_baseline)[0], threads, columns))

    def decision_scores(self, features, include_baseline: bool = True) -> np.ndarray:
        """(#samples, #outputs) scores, always 2-D (a 1-D sample gives one row).

        Parameters
        ----------
        features : array_like or scipy sparse matrix
            (#samples, #features) or one (#features,) sample; a sparse matrix is scored a block of rows at a
            time (the scores of its dense form, bit for bit).
        include_baseline : bool
            False gives the rounds' sum alone, as a trainer that boosts
            residuals from 0 accumulates it (to continue such a machine).
        """
        rows = self._checked_rows(features)
        if not is_sparse(rows):
            return self._forward(rows, include_baseline)
        threads = check_threads(self.n_threads, "n_threads")
        columns = self.feature_indices()
        scores = self._compiled_scores(include_baseline, columns)
        if scores is not None:  # the columns the machine reads, dense a block of rows at a time
            return by_row_blocks(scores, rows[:, columns], threads)
        return by_row_blocks(lambda block: self._forward(block, include_baseline), rows, threads)

    def shap_values(self, features, background=None) -> np.ndarray:
        """Each feature's exact Shapley value of every row's scores (:mod:`bob_boost.explanations`):
        (#samples, #features + 1), the last column the expected value, as LightGBM's ``pred_contrib``;
        (#samples, #features + 1, #outputs) for several outputs. The values and the expected value add up
        to the score.

        Parameters
        ----------
        features : array_like
            (#samples, #features) rows to explain.
        background : array_like, optional
            Rows the features outside a coalition are taken from (interventional SHAP; the expected value is
            their mean score), for every kind of weak machine. None (the default): path-dependent Tree SHAP,
            whose expected value is the trees' cover-weighted mean; only trees that record their training
            cover (those trained by this version) have it.

        Raises
        ------
        ValueError
            For rows of another width than the machine reads, NaN a weak machine cannot route, or, naming
            ``background``, no background for a weak machine without training cover.
        """
        baseline = self._initial_scores(1)[0]
        n_threads = check_threads(self.n_threads, "n_threads")
        if background is None:
            values = self._by_checked_blocks(lambda block: explanations.path_dependent_shap(
                baseline, self._weak_machines, self.weights, block, n_threads), features)
            return values[:, :, 0] if values.shape[2] == 1 else values
        array = self._checked_rows(features)
        try:
            rows = self._checked_rows(background)
        except (InvalidTypeError, InvalidValueError) as error:  # the same checks, naming the argument
            raise type(error)(str(error).replace("features:", "background:", 1)) from None
        if rows.shape[1] != array.shape[1]:
            raise InvalidValueError(f"background: has {rows.shape[1]} columns but features have {array.shape[1]}")
        if is_sparse(rows):  # a background is a sample of rows, small by nature
            rows = rows.toarray()
        def explained(block: np.ndarray) -> np.ndarray:
            return explanations.interventional_shap(baseline, self._weak_machines, self.weights, block, rows,
                                                    n_threads)

        values = by_row_blocks(explained, array, n_threads)
        return values[:, :, 0] if values.shape[2] == 1 else values

    def feature_importances(self, kind: str = "split", features=None, background=None) -> np.ndarray:
        """(#features,) each feature's global importance of ``kind`` (``"split"``, ``"weight"``, ``"gain"``,
        ``"cover"``, or ``"shap"`` over the rows ``features``): :func:`bob_boost.importances.of_machine`."""
        return importances.of_machine(self, kind, features, background)

    def staged_decision_scores(self, features) -> Iterator[np.ndarray]:
        """Scores after each round: ``len(self)`` arrays of shape (#samples, #outputs).

        The i-th array holds the baseline plus the first ``i + 1`` weighted
        weak machines; the last one equals :meth:`decision_scores` bit for
        bit. The features are validated once, before the first array.

        Yields
        ------
        numpy.ndarray
            A new (#samples, #outputs) array per round.
        """
        array = self._checked_rows(features)
        return self._staged(array)

    def _staged(self, array) -> Iterator[np.ndarray]:
        total = self._initial_scores(array.shape[0])
        for machine, weight in zip(self._weak_machines, self._weights):
            total += weight * by_row_blocks(machine.forward, array)
            yield total.copy()

    def __call__(self, features) -> np.ndarray | float:
        """Scores of ``features``.

        Returns
        -------
        numpy.ndarray or float
            (#samples,) for a univariate machine, (#samples, #outputs)
            otherwise; a 1-D sample gives a float or an (#outputs,) vector.
        """
        scores = self.decision_scores(features)
        if scores.shape[1] == 1:
            scores = scores[:, 0]
        return scores[0] if np.ndim(features) == 1 else scores

    def predict(self, features) -> np.ndarray | int | float:
        """Predictions of ``features`` under the machine's :attr:`decision_rule`.

        Univariate classifiers give +1 where the score is positive and -1
        elsewhere; multi-variate ones the index of the largest score, or with
        a cost matrix the index minimising ``C* S(x)`` (lowest index on ties);
        regression machines (``"identity"``) their scores.
        """
        labels = self.labels_from_scores(self.decision_scores(features))
        return labels[0] if np.ndim(features) == 1 else labels

    def class_indices_from_scores(self, scores: np.ndarray) -> np.ndarray:
        """Class index 0 .. K-1 per sample for (#samples, #outputs) ``scores``.

        The labels of :meth:`labels_from_scores`, with a univariate machine's
        -1 / +1 turned into class 0 / 1.

        Raises
        ------
        ValueError
            For a regression machine (decision rule ``"identity"``).
        """
        return decision.class_indices_from_scores(self.decision_rule, scores, self.cost_matrix)

    def labels_from_scores(self, scores: np.ndarray) -> np.ndarray:
        """The predictions :meth:`predict` gives for (#samples, #outputs) ``scores``."""
        return decision.labels_from_scores(self.decision_rule, scores, self.cost_matrix)

    # -- HDF5 (the format itself is bob_boost.io.model) ----------------------
    def save(self, target: str | os.PathLike | h5py.Group) -> None:
        """Write the machine in bob.learn.boosting's layout (plus our extras).

        Parameters
        ----------
        target : path or h5py.Group
            A path is written atomically (a temporary file renamed over it);
            into an open group the machine is written directly, and whatever
            was added is removed again if writing fails.
        """
        model.save_machine(self, target)

    @classmethod
    def load(cls, source: str | os.PathLike | h5py.Group) -> BoostedMachine:
        """Read a machine written by :meth:`save` or by bob.learn.boosting.

        Raises
        ------
        bob_boost.ModelFormatError
            If the file is not HDF5, is truncated, or does not hold a valid
            machine; the message names the file, the group and the problem.
        """
        return model.load_machine(source, cls)

    def __repr__(self) -> str:
        return f"BoostedMachine({len(self)} weak machines, {self._number_of_outputs} output(s))"
