"""Retrain every golden configuration and compare it with the model file stored in tests/data/golden.

The stored files were written by the code before the refactor (see
``tests/golden_models.py``). A refactor that keeps the trained models
unchanged passes; one that moves a threshold, a table entry, a label or the
last bit of a weight fails, naming the configuration and the HDF5 item.

What is compared, per configuration:

* ``Weights`` and every dataset and attribute inside every
  ``WeakMachine_<i>`` group (the same groups, the same names in each);
* the root ``CostMatrix`` dataset and ``NumberOfFeatures`` attribute (present
  in both files or in neither, and equal);
* ``decision_scores`` of the probe matrix, from the stored file against the
  retrained machine;
* for scikit-learn estimators, ``predict`` (and ``decision_function``) of the
  estimator loaded from the stored file against the retrained one, since
  some of their meaning (class labels, the regressor's intercept) lives
  outside the machine.

Other root attributes (``version``, ``bob_boost_version``, ``Metadata``) and
any new root items are not compared: the refactor is expected to add
metadata to the file. Nor are a tree's training records (:data:`RECORDS`:
its nodes' cover and split gains), which the stored files predate; they do
not change a prediction and are checked by the explanation tests. Values are compared exactly (integers against floats
by value): the structure (features, thresholds, tables, tree shapes, labels,
integer codes) always, and the weights of closed forms, root searches and
Newton steps. The weights L-BFGS-B fitted (the configurations of
:data:`LBFGS_CONFIGURATIONS`) may differ between machines within how far
L-BFGS-B's own stopping rule lets a run stop from the minimiser
(:func:`lbfgs_allowance`), and the scores by what those weights can move;
:data:`RELATIVE_TOLERANCE` allows a configuration more, with a reason. Where
numpy's float64 ``exp`` and ``log`` are not the kind the stored files were
written with (numpy's own AVX-512 kernels, or the C library's elsewhere),
which round some results otherwise in the last bit, the other floats may
differ by :data:`ELEMENTARY_TOLERANCE`; the structure is still compared exactly.
"""
from __future__ import annotations

import functools
import math
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import h5py
import numpy as np
import pytest
import scipy.optimize

# golden_models sits beside this file; import it whatever pytest's import mode
sys.path.insert(0, str(Path(__file__).resolve().parent))
import golden_models  # noqa: E402

from bob_boost import BoostedMachine  # noqa: E402

#: Configuration name -> (relative tolerance, reason). A configuration without an entry is compared
#: exactly. Add an entry only when a change of the last bits is understood and accepted, e.g.
#: ``"cost_sensitive_adaboost_scalar": (1e-12, "Brent replaced by ...; same stumps")``; integers
#: and strings (indices, labels, LUT entries, machine types) are always compared exactly.
RELATIVE_TOLERANCE: dict[str, tuple[float, str]] = {}

#: Whether the stored files were written where numpy's float64 exp and log are its own SIMD kernels (they
#: were: on an Intel Xeon with AVX-512, where numpy uses its AVX-512 ones; elsewhere it calls the C library).
STORED_WITH_NUMPY_KERNELS = True

#: The relative difference allowed to the floats of a configuration whose weights L-BFGS-B does not fit, where
#: numpy's exp and log here are not the kind the stored files were written with. The closed-form weights,
#: their sample weights and the scores then differ in the last bits: on an AMD EPYC with AVX2 against the
#: stored files, weights by at most 2.4e-15 relative and scores by 1e-14 of the largest score, with the same
#: weak machines in every configuration.
ELEMENTARY_TOLERANCE = 1e-12

#: Root-level items compared besides the WeakMachine_<i> groups: (name, "dataset" | "attribute").
ROOT_ITEMS = (("Weights", "dataset"), ("CostMatrix", "dataset"), ("NumberOfFeatures", "attribute"))

NAMES = sorted(golden_models.CONFIGURATIONS)
ESTIMATOR_NAMES = [name for name in NAMES if name.startswith("sklearn_")]


def _stored_path(name: str) -> Path:
    path = golden_models.GOLDEN_DIRECTORY / f"{name}.hdf5"
    if not path.exists():
        pytest.fail(f"{path} is missing; write it with the code to pin down: python tests/golden_models.py {name}")
    return path


def _value(raw: Any) -> np.ndarray:
    """An HDF5 dataset's or attribute's value as an array, strings decoded.

    bob's layout stores strings as fixed-length byte arrays; a writer that
    stores the same text as ``str`` must compare equal, so text is compared
    as text.
    """
    array = np.asarray(raw)
    if array.dtype.kind == "S":
        return np.vectorize(lambda item: item.decode("utf-8"), otypes=[object])(array)
    if array.dtype.kind in "OU":
        return np.vectorize(lambda item: item.decode("utf-8") if isinstance(item, bytes) else str(item),
                            otypes=[object])(array)
    return array


def _items(group: h5py.Group, prefix: str = "") -> dict[str, np.ndarray]:
    """Every attribute and dataset below ``group``, keyed ``path`` (datasets) or ``path@name`` (attributes)."""
    items: dict[str, np.ndarray] = {}
    for name, value in group.attrs.items():
        items[f"{prefix}@{name}"] = _value(value)
    for name, child in group.items():
        path = f"{prefix}/{name}"
        if isinstance(child, h5py.Group):
            items[f"{path}/"] = np.asarray("<group>", dtype=object)  # an empty group is an item too
            items.update(_items(child, path))
        else:
            items[path] = _value(child[()])
    return items


#: Datasets of a tree's group that record its training (cover, gains) rather than what it predicts.
RECORDS = frozenset({"Cover", "Gains"})


def compared_items(path: Path) -> dict[str, np.ndarray]:
    """What this test compares in a model file: the root items of ROOT_ITEMS and all WeakMachine_<i> content."""
    with h5py.File(path, "r") as h5:
        items: dict[str, np.ndarray] = {}
        for name, kind in ROOT_ITEMS:
            if kind == "dataset" and name in h5:
                items[f"/{name}"] = _value(h5[name][()])
            elif kind == "attribute" and name in h5.attrs:
                items[f"/@{name}"] = _value(h5.attrs[name])
        for name, child in h5.items():
            if name.startswith("WeakMachine_"):
                if not isinstance(child, h5py.Group):
                    items[f"/{name}"] = np.asarray("<not a group>", dtype=object)
                    continue
                items[f"/{name}/"] = np.asarray("<group>", dtype=object)
                items.update({key: value for key, value in _items(child, f"/{name}").items()
                              if key.rsplit("/", 1)[-1] not in RECORDS})
    return items


def assert_same_values(expected: np.ndarray, actual: np.ndarray, what: str, relative_tolerance: float = 0.0,
                       scores: bool = False, allowed: np.ndarray | None = None) -> None:
    """Raise AssertionError unless the arrays have the same shape and values.

    Numbers compare by value whatever their dtype (an int32 index equals an
    int64 one); floats exactly unless ``relative_tolerance`` > 0, which
    applies to floating-point data only (for ``scores``, relative to the
    largest stored score: a score near 0 is a difference of large terms), or
    ``allowed`` gives each float an absolute difference it may have (an array
    of the same shape: what L-BFGS-B's stopping rule allows, see
    :func:`lbfgs_allowance`).
    """
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.shape != actual.shape:
        raise AssertionError(f"{what}: shape {actual.shape}, stored {expected.shape}")
    numeric = expected.dtype.kind in "biuf" and actual.dtype.kind in "biuf"
    if not numeric:
        if expected.dtype.kind != actual.dtype.kind or not np.array_equal(expected, actual):
            raise AssertionError(f"{what}: {actual.tolist()!r}, stored {expected.tolist()!r}")
        return
    floating = expected.dtype.kind == "f" or actual.dtype.kind == "f"
    if floating and (relative_tolerance > 0 or allowed is not None):
        scale = float(np.max(np.abs(expected), initial=0.0)) if scores else 0.0
        equal = np.isclose(actual.astype(np.float64), expected.astype(np.float64), rtol=relative_tolerance,
                           atol=relative_tolerance * scale)
        if allowed is not None:
            assert np.shape(allowed) == expected.shape, (what, np.shape(allowed), expected.shape)
            equal |= np.abs(actual.astype(np.float64) - expected.astype(np.float64)) <= allowed
    else:
        # exact: no dtype conversion for two integer arrays, float64 otherwise (exact for the values stored)
        equal = (actual == expected) if not floating else (actual.astype(np.float64) == expected.astype(np.float64))
    if not np.all(equal):
        position = np.unravel_index(int(np.argmin(equal)), equal.shape) if equal.ndim else ()
        old, new = expected[position], actual[position]
        scale = np.maximum(np.abs(expected.astype(np.float64)), np.finfo(np.float64).tiny)
        worst = float(np.max(np.abs(actual.astype(np.float64) - expected.astype(np.float64)) / scale))
        raise AssertionError(f"{what}: {int(np.size(equal) - np.count_nonzero(equal))} of {np.size(equal)} values "
                             f"differ; first at {tuple(int(i) for i in position)}: {new!r}, stored {old!r} "
                             f"(largest relative difference {worst:.3g}, tolerance {relative_tolerance:g}"
                             f"{'' if allowed is None else ', or the L-BFGS allowance'})")


def assert_same_model_files(stored: Path, retrained: Path, relative_tolerance: float = 0.0,
                            weight_allowance: np.ndarray | None = None) -> None:
    """Raise AssertionError unless the compared items of the two files agree (see the module docstring);
    ``weight_allowance`` is what each of the ``Weights`` may differ by (None: they are compared as the rest)."""
    expected, actual = compared_items(stored), compared_items(retrained)
    missing, extra = sorted(set(expected) - set(actual)), sorted(set(actual) - set(expected))
    if missing or extra:
        raise AssertionError(f"{retrained.name}: items differ from the stored file; missing {missing[:10]}, "
                             f"new {extra[:10]}")
    for key in expected:
        assert_same_values(expected[key], actual[key], f"{stored.name}:{key}", relative_tolerance,
                           allowed=weight_allowance if key == "/Weights" else None)


#: The configurations whose weights L-BFGS-B fits, one run per round (every other configuration's weights come
#: from closed forms, root searches or Newton steps, and are compared exactly): checked against the runs seen.
LBFGS_CONFIGURATIONS = frozenset({
    "boosting_stump_exponential", "boosting_stump_logit", "boosting_stump_logit_continued", "boosting_stump_tangential",
    "boosting_stump_squared", "boosting_stump_double_base", "boosting_lut_univariate_exponential",
    "boosting_lut_multivariate_independent_logit", "boosting_lut_multivariate_shared_logit", "boosting_lut_jesorsky",
    "boosting_lut_cmel", "sklearn_boosting_classifier_stump_strings", "sklearn_boosting_classifier_lut_multiclass",
    "sklearn_boosting_regressor_stump", "sklearn_boosting_regressor_stump_weighted"})

#: SciPy's L-BFGS-B defaults, for a run that does not set them.
SCIPY_FTOL, SCIPY_GTOL = 2.220446049250313e-09, 1e-05


@dataclass
class LBFGSRun:
    """One L-BFGS-B run seen while retraining: its objective, stopping tolerances and stop."""

    objective: Any
    ftol: float
    gtol: float
    x: np.ndarray


def lbfgs_allowance(run: LBFGSRun) -> float:
    """How far apart two L-BFGS-B runs on ``run``'s objective may stop, per weight (absolute).

    bob_boost fits a round's weights ``a`` (one per output, K of them) by minimising the per-sample
    objective ``f(a) = sum(loss) / n`` (:mod:`bob_boost.boosting.steps` divides the summed loss by the
    number of samples) with SciPy's L-BFGS-B at ``ftol=1e-15``, ``gtol=1e-12`` (read here from the run's
    options). L-BFGS-B stops when

    (a) every projected gradient component is at most ``gtol``, or
    (b) an iteration lowered f by at most ``ftol * max(|f_k|, |f_k+1|, 1)``.

    Near the minimiser ``a*``, ``f(a) - f(a*) = (a - a*)' H (a - a*) / 2 >= lam |a - a*|^2 / 2``, ``lam``
    the smallest eigenvalue of the Hessian H. Under (a) the gradient, of norm at most ``sqrt(K) gtol``,
    is ``H (a - a*)``, so ``|a - a*| <= sqrt(K) gtol / lam``. Under (b): in its last iterations L-BFGS
    converges superlinearly, so what is left of ``f(a) - f(a*)`` after the last iteration is no more than
    that iteration's decrease, at most ``ftol max(|f|, 1)``, and ``|a - a*| <= sqrt(2 ftol max(|f|, 1) /
    lam)``. Either way a run stops within

        b = sqrt(2 ftol max(|f|, 1) / lam) + sqrt(K) gtol / lam

    of ``a*``. Another OpenBLAS kernel (another CPU's, or one the environment selects) rounds the objective's dot
    products otherwise and moves where the run stops within that: two runs stop at most ``2 b`` apart,
    which this returns, with f and H (central differences of the gradient) at ``run.x``. As a relative
    tolerance: ``2 b / |a|``, which is ``2 sqrt(2e-15) = 8.9e-8`` when ``max(|f|, 1) = lam a^2`` and
    ranges from 7.6e-9 (the squared loss's weights near 100) to 1.2e-5 (the Jesorsky loss's small
    weights) over the golden rounds.

    A weight of round t that moved by ``d`` moves the scores the later rounds start from by ``d`` times
    a weak output (+-1 for stumps and tables), and their minimisers by about as much (the curvature along
    the scores over the curvature along the weight: 1 for +-1 outputs and the exponential loss), so the
    later rounds stay within their own ``2 b`` plus a few such ``d``. Measured with OpenBLAS's Haswell
    kernels (selected for the whole shell, outside the suite) against the stored SkylakeX files: the
    weights of 6 of the 15 configurations differ, two by up to 1.1e-8 relative (under 2 % of the
    allowance), four by at most 1.5e-14; every stump and table is the same.
    """
    x = np.asarray(run.x, dtype=np.float64)
    k = x.size
    value, _ = run.objective(x)
    hessian = np.empty((k, k))
    for j in range(k):
        step = np.zeros(k)
        step[j] = 1e-4 * max(abs(x[j]), 1.0)
        above, below = run.objective(x + step)[1], run.objective(x - step)[1]
        hessian[:, j] = (np.asarray(above) - np.asarray(below)) / (2 * step[j])
    smallest = float(np.linalg.eigvalsh((hessian + hessian.T) / 2).min())
    assert smallest > 0, f"the objective's Hessian at the stop is not positive definite ({smallest:g})"
    bound = np.sqrt(2 * run.ftol * max(abs(float(value)), 1.0) / smallest) + np.sqrt(k) * run.gtol / smallest
    return 2 * float(bound)


@functools.cache
def retrained(name: str) -> tuple[object, tuple[LBFGSRun, ...]]:
    """Configuration ``name`` trained afresh, and the L-BFGS-B runs it made (in order)."""
    runs: list[LBFGSRun] = []
    minimize = scipy.optimize.minimize

    def recording(fun, x0, *args, **kwargs):
        result = minimize(fun, x0, *args, **kwargs)
        if str(kwargs.get("method", "")).upper() == "L-BFGS-B":
            assert kwargs.get("jac") is True, "the golden comparison expects L-BFGS-B with jac=True"
            options = kwargs.get("options") or {}
            runs.append(LBFGSRun(fun, float(options.get("ftol", SCIPY_FTOL)), float(options.get("gtol", SCIPY_GTOL)),
                                 np.array(result.x, dtype=np.float64)))
        return result

    with mock.patch.object(scipy.optimize, "minimize", recording):
        trained = golden_models.CONFIGURATIONS[name]()
    return trained, tuple(runs)


def weight_allowance(name: str, machine) -> np.ndarray | None:
    """(#rounds, #outputs) absolute differences allowed to the weights of configuration ``name``'s machine (None:
    exact); checks that its weights are the L-BFGS runs' stops, one run per round, when it is an L-BFGS one."""
    _, runs = retrained(name)
    if name not in LBFGS_CONFIGURATIONS:
        assert not runs, f"{name}: {len(runs)} L-BFGS-B runs, but LBFGS_CONFIGURATIONS does not name it"
        return None
    weights = np.asarray(machine.weights)
    assert len(runs) == weights.shape[0], f"{name}: {len(runs)} L-BFGS-B runs for {weights.shape[0]} rounds"
    assert np.array_equal(np.array([run.x for run in runs]), weights), f"{name}: the weights are not the runs' stops"
    allowance = np.array([lbfgs_allowance(run) for run in runs])
    # the allowance stays far below any change of the model worth seeing
    assert np.all(allowance <= 1e-6 * np.maximum(np.abs(weights).max(axis=1), 1.0)), (name, allowance)
    return np.repeat(allowance[:, np.newaxis], weights.shape[1], axis=1)


def score_allowance(machine, allowance: np.ndarray, probe: np.ndarray) -> np.ndarray:
    """What weights within ``allowance`` of the machine's can change its scores of ``probe`` by: the sum over the
    rounds of the allowance times the weak machine's absolute outputs, plus the rounding of that many terms."""
    total, magnitude = np.zeros((probe.shape[0], allowance.shape[1])), np.zeros((probe.shape[0], allowance.shape[1]))
    for weak, weights, allowed in zip(machine.weak_machines, np.asarray(machine.weights), allowance):
        alone = BoostedMachine(number_of_outputs=allowance.shape[1])
        alone.add_weak_machine(weak, np.ones(allowance.shape[1]))
        outputs = np.abs(alone.decision_scores(probe, include_baseline=False))
        total += allowed * outputs
        magnitude += np.abs(weights) * outputs
    return total + 4 * len(machine.weak_machines) * np.finfo(np.float64).eps * magnitude


@functools.cache
def numpy_kernels() -> bool:
    """Whether numpy's float64 exp and log give other bits than the C library's (``math.exp``, ``math.log``)
    here on some of 40,000 arguments: whether numpy uses its own kernels for them."""
    probe = np.linspace(1e-3, 50.0, 20001)
    return not (np.array_equal(np.exp(-probe), [math.exp(-value) for value in probe])
                and np.array_equal(np.log(probe), [math.log(value) for value in probe]))


def _tolerance(name: str) -> float:
    tolerance, reason = RELATIVE_TOLERANCE.get(name, (0.0, ""))
    assert tolerance == 0.0 or reason.strip(), f"RELATIVE_TOLERANCE[{name!r}] needs a reason"
    if name not in LBFGS_CONFIGURATIONS and numpy_kernels() != STORED_WITH_NUMPY_KERNELS:
        tolerance = max(tolerance, ELEMENTARY_TOLERANCE)
    return tolerance


def _needs_sklearn(name: str) -> None:
    if name.startswith("sklearn_"):
        pytest.importorskip("sklearn", reason="scikit-learn is an optional extra (pip install bob_boost[sklearn])")


@pytest.mark.parametrize("name", NAMES)
def test_retrained_model_equals_stored(name: str, tmp_path: Path) -> None:
    _needs_sklearn(name)
    stored = _stored_path(name)
    tolerance = _tolerance(name)
    trained, _ = retrained(name)
    machine = golden_models.machine_of(trained)
    allowance = weight_allowance(name, machine)
    retrained_file = tmp_path / f"{name}.hdf5"
    golden_models.save(trained, retrained_file)
    assert_same_model_files(stored, retrained_file, tolerance, allowance)

    probe = golden_models.probe_for(name)
    expected = golden_models.load_machine(stored).decision_scores(probe)
    assert_same_values(expected, machine.decision_scores(probe), f"{name}: decision_scores(probe)", tolerance,
                       scores=True, allowed=None if allowance is None else score_allowance(machine, allowance, probe))
    # and the retrained file reads back to the same scores as the machine in memory
    assert_same_values(machine.decision_scores(probe),
                       golden_models.load_machine(retrained_file).decision_scores(probe),
                       f"{name}: decision_scores(probe) after save/load")


@pytest.mark.parametrize("name", ESTIMATOR_NAMES)
def test_retrained_estimator_predicts_as_stored(name: str) -> None:
    _needs_sklearn(name)
    from bob_boost.sklearn import load_estimator

    stored = load_estimator(_stored_path(name))
    trained, _ = retrained(name)
    tolerance = _tolerance(name)
    probe = golden_models.probe_for(name)
    assert type(stored) is type(trained)
    machine = golden_models.machine_of(trained)
    allowance = weight_allowance(name, machine)
    scores = None if allowance is None else score_allowance(machine, allowance, probe)

    def allowed(values):  # the scores' allowance in the shape of what is compared (labels exactly)
        values = np.asarray(values)
        return None if scores is None or values.dtype.kind != "f" else scores.reshape(values.shape)
    predicted = trained.predict(probe)
    assert_same_values(stored.predict(probe), predicted, f"{name}: predict(probe)", tolerance,
                       allowed=allowed(predicted))
    if hasattr(trained, "classes_"):
        assert_same_values(stored.classes_, trained.classes_, f"{name}: classes_")
        decision = trained.decision_function(probe)
        assert_same_values(stored.decision_function(probe), decision, f"{name}: decision_function(probe)", tolerance,
                           scores=True, allowed=allowed(decision))
    if hasattr(trained, "intercept_"):
        assert_same_values(stored.intercept_, trained.intercept_, f"{name}: intercept_", tolerance)


def test_every_configuration_has_a_stored_file_and_no_other() -> None:
    stored = {path.stem for path in golden_models.GOLDEN_DIRECTORY.glob("*.hdf5")}
    assert stored == set(golden_models.CONFIGURATIONS), (
        f"without a configuration: {sorted(stored - set(golden_models.CONFIGURATIONS))}; "
        f"without a stored file: {sorted(set(golden_models.CONFIGURATIONS) - stored)}")
    unknown = sorted(set(RELATIVE_TOLERANCE) - set(golden_models.CONFIGURATIONS))
    assert not unknown, f"RELATIVE_TOLERANCE names unknown configurations {unknown}"


def test_comparison_detects_a_one_ulp_change_of_a_weight(tmp_path: Path) -> None:
    # the test above is only worth something if it can fail: nudge one stored weight by one ulp
    stored = _stored_path("boosting_stump_logit")
    changed = tmp_path / "changed.hdf5"
    shutil.copyfile(stored, changed)
    with h5py.File(changed, "r+") as h5:
        weights = h5["Weights"][()]
        weights.flat[3] = np.nextafter(weights.flat[3], np.inf)
        h5["Weights"][...] = weights
    assert_same_model_files(stored, stored)
    with pytest.raises(AssertionError, match="Weights"):
        assert_same_model_files(stored, changed)
    # a tolerance lets exactly such a change through
    assert_same_model_files(stored, changed, relative_tolerance=1e-12)


def test_comparison_detects_a_changed_weak_machine_item(tmp_path: Path) -> None:
    stored = _stored_path("badacost_tree")
    changed = tmp_path / "changed.hdf5"
    shutil.copyfile(stored, changed)
    with h5py.File(changed, "r+") as h5:
        labels = h5["WeakMachine_1/Labels"][()]
        labels[0] = (labels[0] + 1) % golden_models.NUMBER_OF_CLASSES
        h5["WeakMachine_1/Labels"][...] = labels
    with pytest.raises(AssertionError, match="WeakMachine_1/Labels"):
        assert_same_model_files(stored, changed, relative_tolerance=1e-12)
