"""A mutation harness for :meth:`bob_boost.BoostedMachine.load`: damaged and hostile model files.

It starts from valid model files of every weak-machine type (trained here in a second, plus the
files bob.learn.boosting wrote in ``tests/data/bob_models`` and the golden models in
``tests/data/golden``) and from face-detection cascade files (``cascade_*``, loaded with
:meth:`bob_boost.vision.Cascade.load`), mutates one copy per case (seeded, so a case is reproduced
by its seed name, kind and case number) and loads it in a worker process with a time limit. The
only allowed outcomes are

- a machine (``"model"``), whose ``decision_scores`` on a small matrix of the width it needs
  works, or raises ``ValueError`` (``"model, scores ValueError"``); for a cascade, its stage
  scores on random windows and a detection scan of a small image, or
- :class:`bob_boost.ModelFormatError` whose message names the file (``"ModelFormatError"``).

Anything else is a finding: another exception (``"foreign: <type>"``), a ModelFormatError that
does not name the file (``"unnamed error"``), a load that does not return within the time limit
(``"timeout"``), a worker that dies (``"crash"``), or a load that allocates more than
:data:`MEMORY_LIMIT` bytes (``"memory"``, which is how a forged 2**40-element shape that is not
refused before allocation shows up).

Used by ``tests/test_fuzz_loader.py`` (a fixed-seed few hundred cases) and
``bench/fuzz_models.py`` (tens of thousands). It imports only bob_boost's public API.
"""
from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import resource
import shutil
import tempfile
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import h5py
import numpy as np

DATA = Path(__file__).resolve().parent / "data"

#: Seconds a load (and the scoring after it) may take before the case counts as a hang.
TIME_LIMIT = 10.0

#: Growth of the worker's peak resident memory, in bytes, above which a case counts as a blow-up.
#: Legitimate seeds need a few MiB; a forged shape that is read would need GiB.
MEMORY_LIMIT = 256 << 20

#: Outcomes the loader is allowed to have.
ALLOWED = ("model", "model, scores ValueError", "ModelFormatError")

#: A case whose mutation did not apply to its seed (e.g. nothing to rename); not a loader outcome.
SKIPPED = "skipped"

HUGE = 1 << 40


# -- seeds ---------------------------------------------------------------------------------------

def _trained_seeds() -> dict[str, object]:
    """Tiny machines of every weak-machine type, trained on fixed random data (under a second)."""
    import bob_boost
    from bob_boost.trainers import multiclass

    rng = np.random.default_rng(0)
    features = rng.normal(size=(60, 4))
    binary = np.where(features[:, 0] + 0.3 * rng.normal(size=60) > 0, 1.0, -1.0)
    discrete = rng.integers(0, 5, size=(60, 4))
    noise = rng.normal(scale=0.7, size=(60, 2))  # overlapping classes: several rounds, deeper trees
    classes = (features[:, 0] + noise[:, 0] > 0).astype(int) + (features[:, 1] + noise[:, 1] > 0.5).astype(int)
    with_nan = features.copy()
    with_nan[rng.random(features.shape) < 0.2] = np.nan
    seeds = {}
    seeds["stump"] = bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.ExponentialLoss()).train(
        features, binary, 5)
    seeds["stump_missing"] = bob_boost.Boosting(bob_boost.StumpTrainer(missing="bin"),
                                                bob_boost.ExponentialLoss()).train(with_nan, binary, 5)
    seeds["lut"] = bob_boost.Boosting(bob_boost.LUTTrainer(maximum_feature_value=5),
                                      bob_boost.ExponentialLoss()).train(discrete, binary, 5)
    one_hot = -np.ones((60, 3))
    one_hot[np.arange(60), classes] = 1.0
    seeds["lut_multi"] = bob_boost.Boosting(bob_boost.LUTTrainer(maximum_feature_value=5, number_of_outputs=3),
                                            bob_boost.ExponentialLoss()).train(discrete, one_hot, 3)
    seeds["tree_softmax"] = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=2, min_samples_leaf=5),
                                               bob_boost.SoftmaxLoss()).train(features, classes, 3)
    seeds["tree_missing"] = bob_boost.Boosting(bob_boost.TreeTrainer(max_depth=2, min_samples_leaf=5,
                                                                     missing="bin"),
                                               bob_boost.SoftmaxLoss()).train(with_nan, classes, 3)
    seeds["samme_tree"] = bob_boost.SAMMETrainer(multiclass.CostSensitiveTreeTrainer(max_depth=2),
                                                 number_of_rounds=3).train(features, classes)
    seeds["samme_stump"] = bob_boost.SAMMETrainer(multiclass.MultiClassStumpTrainer(),
                                                  number_of_rounds=3).train(features, classes)
    seeds["samme_lut"] = bob_boost.SAMMETrainer(multiclass.MultiClassLUTTrainer(maximum_feature_value=5),
                                                number_of_rounds=3).train(discrete, classes)
    costs = np.array([[0.0, 1.0, 4.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    seeds["badacost"] = bob_boost.BAdaCostTrainer(costs, multiclass.CostSensitiveTreeTrainer(max_depth=2),
                                                  number_of_rounds=3).train(features, classes)
    regression = bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.SquaredLoss()).train(
        features, features[:, 0] * 2.0 + 1.0, 4, baseline=1.5)
    regression.decision_rule = "identity"
    seeds["regression_baseline"] = regression
    return seeds


#: Seed files named with this prefix hold cascades, not machines.
CASCADE_PREFIX = "cascade_"


def is_cascade(seed: str) -> bool:
    """Whether the seed file named ``seed`` holds a cascade (loaded with ``Cascade.load``)."""
    return seed.startswith(CASCADE_PREFIX)


def _cascade_seeds() -> dict[str, object]:
    """Two small cascades: one trained by ``train_cascade``, one of stages boosted on every Haar feature type."""
    import bob_boost
    from bob_boost.vision import FEATURE_TYPES, Cascade, HaarFeatures, train_cascade

    rng = np.random.default_rng(14)
    window = (12, 12)
    pattern = np.zeros(window)
    pattern[3:6, 2:10], pattern[7:9, 4:8] = -1.0, 0.5
    faces = 0.5 + 0.1 * pattern + 0.15 * rng.standard_normal((100,) + window)
    backgrounds = [0.5 + 0.15 * rng.standard_normal((36, 36)) for _ in range(3)]
    seeds = {"trained": train_cascade(faces, backgrounds, features=HaarFeatures.all(window, stride=3),
                                      max_stages=3, max_rounds=4, detection_rate=0.95, random_state=3, n_threads=1)}
    pool = HaarFeatures.all(window, types=FEATURE_TYPES, stride=2)
    kinds = pool.table[:, 0]
    features = pool.subset([int(np.flatnonzero(kinds == kind)[0]) for kind in np.unique(kinds)])
    windows = np.concatenate([faces[:40], 0.5 + 0.15 * rng.standard_normal((40,) + window)])
    targets = np.repeat([1.0, -1.0], 40)
    values = features.evaluate(windows)
    stages = [(bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.ExponentialLoss()).train(values, targets, 3),
               -0.5),
              (bob_boost.Boosting(bob_boost.StumpTrainer(), bob_boost.LogitLoss()).train(values, targets, 2,
                                                                                           baseline=0.25), 0.0)]
    seeds["every_type"] = Cascade(features, stages, metadata={"made": "for the fuzzer", "types": kinds.tolist()})
    return seeds


def write_seeds(directory: str | os.PathLike) -> list[Path]:
    """Write the trained seeds into ``directory`` and copy the shipped model files there.

    Returns
    -------
    list of Path
        Every seed file, in a fixed order (trained machines first, then ``bob_*``, then ``golden_*``,
        then the cascades ``cascade_*``).
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, machine in _trained_seeds().items():
        path = directory / f"{name}.hdf5"
        machine.save(path)
        paths.append(path)
    for prefix, folder in (("bob", DATA / "bob_models"), ("golden", DATA / "golden")):
        for source in sorted(folder.glob("*.hdf5")):
            target = directory / f"{prefix}_{source.name}"
            shutil.copyfile(source, target)
            paths.append(target)
    for name, cascade in _cascade_seeds().items():
        path = directory / f"{CASCADE_PREFIX}{name}.hdf5"
        cascade.save(path)
        paths.append(path)
    return paths


# -- what a file holds ----------------------------------------------------------------------------

def _inventory(h5: h5py.File) -> tuple[list[str], list[str], list[tuple[str, str]]]:
    """Datasets, groups (root included) and (object, attribute) pairs of an undamaged file."""
    datasets, groups = [], ["/"]

    def visit(name, item):
        (datasets if isinstance(item, h5py.Dataset) else groups).append("/" + name)

    h5.visititems(visit)
    attributes = [(name, key) for name in groups + datasets for key in h5[name].attrs]
    return datasets, groups, attributes


def _readable(h5: h5py.File) -> list[str]:
    """Datasets a mutation may read: not one an earlier (stacked) mutation forged to a huge shape."""
    return [name for name in _inventory(h5)[0] if h5[name].size <= 1 << 20 and not h5[name].external
            and not h5[name].is_virtual]


def _pick(rng: np.random.Generator, items):
    if not items:
        raise LookupError("nothing to mutate")
    return items[int(rng.integers(len(items)))]


def _parent_and_name(path: str) -> tuple[str, str]:
    parent, _, name = path.rpartition("/")
    return parent or "/", name


# -- hostile values ---------------------------------------------------------------------------------

def _cast(original: np.ndarray, dtype) -> np.ndarray:
    """``original`` cast to ``dtype`` without numpy's warning for values the dtype cannot hold (NaN, inf)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return original.astype(dtype)


def _hostile_array(rng: np.random.Generator, original: np.ndarray | None):
    """A value of another dtype or shape than a dataset should hold (name, data or h5py.Empty)."""
    choices: list[tuple[str, Callable[[], object]]] = [
        ("bytes", lambda: np.array([b"abc"])),
        ("utf-8 str", lambda: np.array(["x\u00e9"], dtype=h5py.string_dtype())),
        ("empty str", lambda: np.array([b""])),
        ("non-utf8", lambda: np.array([b"\xff\xfe"])),
        ("-1", lambda: np.array([-1], dtype=np.int32)),
        ("int32 min", lambda: np.array([np.iinfo(np.int32).min], dtype=np.int32)),
        ("int64 min", lambda: np.array([np.iinfo(np.int64).min], dtype=np.int64)),
        ("int64 max", lambda: np.array([np.iinfo(np.int64).max], dtype=np.int64)),
        ("uint64 max", lambda: np.array([np.iinfo(np.uint64).max], dtype=np.uint64)),
        ("2**31", lambda: np.array([2 ** 31], dtype=np.int64)),
        ("2**62", lambda: np.array([2 ** 62], dtype=np.int64)),
        ("nan", lambda: np.array([np.nan])),
        ("inf", lambda: np.array([np.inf])),
        ("-inf", lambda: np.array([-np.inf])),
        ("1e308", lambda: np.array([1e308])),
        ("float16", lambda: np.array([1.5], dtype=np.float16)),
        ("bool", lambda: np.array([True])),
        ("complex", lambda: np.array([1 + 2j])),
        ("compound", lambda: np.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")])),
        ("opaque", lambda: np.array([b"\x00\x01"], dtype="V2")),
        ("enum", lambda: np.array([1], dtype=h5py.enum_dtype({"A": 0, "B": 1}, basetype="i1"))),
        ("vlen int", lambda: _vlen_ints()),
        ("null dataspace", lambda: h5py.Empty("f8")),
        ("scalar 0-d", lambda: np.float64(0.5)),
        ("empty (0,)", lambda: np.zeros((0,))),
        ("empty (0, 0)", lambda: np.zeros((0, 0))),
        ("empty (0, 3)", lambda: np.zeros((0, 3))),
        ("3-d", lambda: np.zeros((2, 2, 2))),
        ("large random ints", lambda: rng.integers(-2 ** 40, 2 ** 40, size=3)),
    ]
    if original is not None and original.dtype.kind in "iuf" and original.size:
        choices += [
            ("original + nan", lambda: _with(original.astype(np.float64), rng, np.nan)),
            ("original + inf", lambda: _with(original.astype(np.float64), rng, np.inf)),
            ("original as int8", lambda: _cast(original, np.int8)),
            ("original as float32", lambda: _cast(original, np.float32)),
            ("original as uint8", lambda: _cast(original, np.uint8)),
            ("original as str", lambda: original.astype("S8")),
            ("original doubled", lambda: np.concatenate([original.reshape(-1)] * 2)),
            ("original flat", lambda: original.reshape(-1)),
            ("original as column", lambda: original.reshape(-1, 1)),
            ("original as 3-d", lambda: original.reshape((1,) + original.shape + (1,))),
            ("original first element", lambda: original.reshape(-1)[:1]),
            ("original without last", lambda: original.reshape(-1)[:-1]),
            ("original negated", lambda: -original),
            ("original x 2**40", lambda: original.astype(np.float64) * 2.0 ** 40),
        ]
    name, make = _pick(rng, choices)
    return name, make()


class _Vlen:
    """Marks a variable-length integer array for :func:`_write`."""

    def __init__(self, rows: list[np.ndarray]) -> None:
        self.data = np.empty(len(rows), dtype=object)
        self.data[:] = rows


def _vlen_ints() -> _Vlen:
    return _Vlen([np.array([1, 2]), np.array([3])])


def _with(array: np.ndarray, rng: np.random.Generator, value: float) -> np.ndarray:
    array = array.copy()
    array.reshape(-1)[int(rng.integers(array.size))] = value
    return array


def _write(group: h5py.Group, name: str, value) -> None:
    if isinstance(value, _Vlen):
        group.create_dataset(name, data=value.data, dtype=h5py.vlen_dtype(np.int64))
    else:
        group.create_dataset(name, data=value)


def _hostile_attribute(rng: np.random.Generator, key: str):
    """A value of the wrong type (or a pathological right type) for attribute ``key``."""
    choices: list[tuple[str, Callable[[], object]]] = [
        ("int", lambda: np.int64(3)),
        ("negative int", lambda: np.int32(-7)),
        ("huge int", lambda: np.uint64(np.iinfo(np.uint64).max)),
        ("float", lambda: np.float64(2.5)),
        ("nan", lambda: np.float64(np.nan)),
        ("bool", lambda: np.bool_(True)),
        ("int array", lambda: np.array([1, 2], dtype=np.int32)),
        ("empty array", lambda: np.zeros((0,), dtype=np.int32)),
        ("2-d int", lambda: np.ones((2, 2), dtype=np.int32)),
        ("two strings", lambda: np.array([b"a", b"b"])),
        ("empty bytes", lambda: np.array([b""])),
        ("non-utf8 bytes", lambda: np.array([b"\xff\xfe\x00"])),
        ("vlen str", lambda: "StumpMachine"),
        ("long str", lambda: "x" * 60000),
        ("compound", lambda: np.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")])),
        ("null dataspace", lambda: h5py.Empty("S1")),
        ("complex", lambda: np.complex128(1j)),
    ]
    if key == "MachineType":
        choices += [(f"type {t}", (lambda t=t: np.array([t.encode()])))
                    for t in ("LUTMachine", "StumpMachine", "TreeMachine", "MultiClassTreeMachine",
                              "MultiClassStumpMachine", "MultiClassLUTMachine", "NoSuchMachine",
                              "BoostedMachine", "WeakMachine", "__init__")]
    if key == "Metadata":
        choices += [(f"json {j[:30]}", (lambda j=j: j)) for j in (
            "null", "1e999", "[" * 5000 + "]" * 5000, '{"a": ' * 3000 + "1" + "}" * 3000,
            '{"task": "regression", "intercept": NaN}', '{"task": "regression", "intercept": Infinity}',
            '{"task": "regression", "intercept": 1e400}', '{"task": "regression", "intercept": ' + "9" * 5000 + "}",
            '{"sklearn_estimator": "BoostingRegressor", "intercept": "x"}',
            '{"task": "regression", "intercept": true}', '{"task": ["regression"]}',
            '{"classes": [1, 2, 3, 4, 5, 6, 7]}', '{"classes": "abc"}', '{"classes": null}',
            '{"loss": 5, "trainer": {}}', '"\\ud800"', '{"\\u0000": 1}')]
    if key == "DecisionRule":
        choices += [(f"rule {r}", (lambda r=r: np.array([r.encode()])))
                    for r in ("sign", "argmax", "cost", "identity", "cost-sensitive", "", "nonsense")]
    if key == "WindowSize":
        choices += [(f"window {w}", (lambda w=w: np.array(w, dtype=np.int64)))
                    for w in ([0, 12], [12], [12, 12, 12], [4097, 12], [1, 1], [2, 3], [64, 64], [2 ** 62, 2 ** 62])]
        choices.append(("window 12.0", lambda: np.array([12.0, 12.0])))
    if key in ("NumberOfStages", "bob_boost_cascade"):
        choices += [(f"int {v}", (lambda v=v: np.array([v], dtype=np.int64))) for v in (0, 1, 2, 4, 2 ** 62)]
    if key == "Threshold":
        choices += [(f"threshold {t}", (lambda t=t: np.float64(t))) for t in (np.inf, -np.inf, 1e308, -1e308, 0.0)]
    if key in ("version", "NumberOfFeatures"):
        choices += [(f"int {v}", (lambda v=v: np.array([v], dtype=np.int64)))
                    for v in (0, 1, 2, 3, -1, 2 ** 31, 2 ** 62, -(2 ** 63))]
        choices += [("version 2.0", lambda: np.array([2.0])), ("version '2'", lambda: "2")]
    name, make = _pick(rng, choices)
    return name, make()


# -- mutations ----------------------------------------------------------------------------------------
#
# Each takes the random generator and the path of a copy of a valid seed, damages the copy in
# place and returns a short description of what it did (raising LookupError when the seed has
# nothing the mutation applies to).

def byte_flip(rng: np.random.Generator, path: Path) -> str:
    """Flip 1 to 16 random bits of the file."""
    data = bytearray(path.read_bytes())
    flips = int(rng.integers(1, 17))
    offsets = rng.integers(len(data), size=flips)
    for offset in offsets.tolist():
        data[offset] ^= 1 << int(rng.integers(8))
    path.write_bytes(bytes(data))
    return f"{flips} bit(s) at {sorted(offsets.tolist())[:4]}..."


def truncate(rng: np.random.Generator, path: Path) -> str:
    """Cut the file at a random length (0 included)."""
    size = path.stat().st_size
    length = int(rng.integers(size))
    with open(path, "r+b") as stream:
        stream.truncate(length)
    return f"to {length} of {size} bytes"


def delete_dataset(rng: np.random.Generator, path: Path) -> str:
    """Remove one dataset."""
    with h5py.File(path, "r+") as h5:
        name = _pick(rng, _inventory(h5)[0])
        del h5[name]
    return name


def rename_node(rng: np.random.Generator, path: Path) -> str:
    """Rename a dataset or group (off by one number, changed case, a suffix, a free sibling name)."""
    with h5py.File(path, "r+") as h5:
        datasets, groups, _ = _inventory(h5)
        name = _pick(rng, datasets + groups[1:])
        parent, base = _parent_and_name(name)
        digits = "".join(c for c in base if c.isdigit())
        candidates = [base.lower(), base + "_", "x" + base, base.upper()]
        if digits:
            prefix = base[: len(base) - len(digits)]
            candidates += [prefix + str(int(digits) + k) for k in (1, 100, -1) if int(digits) + k >= 0]
            candidates += [prefix + "0" + digits, prefix + "-1"]
        free = [c for c in candidates if c != base and c not in h5[parent]]
        new = _pick(rng, free)
        h5.move(name, f"{parent.rstrip('/')}/{new}")
    return f"{name} -> {new}"


def delete_attribute(rng: np.random.Generator, path: Path) -> str:
    """Remove one attribute (MachineType, version, Metadata, ...)."""
    with h5py.File(path, "r+") as h5:
        owner, key = _pick(rng, _inventory(h5)[2])
        del h5[owner].attrs[key]
    return f"{owner}@{key}"


def rename_attribute(rng: np.random.Generator, path: Path) -> str:
    """Move one attribute's value under another name."""
    with h5py.File(path, "r+") as h5:
        owner, key = _pick(rng, _inventory(h5)[2])
        attrs = h5[owner].attrs
        value = attrs[key]
        new = _pick(rng, [key.lower(), key + "_", key.upper(), "Machine_Type", "versions"])
        if new in attrs:
            raise LookupError("name taken")
        del attrs[key]
        attrs[new] = value
    return f"{owner}@{key} -> {new}"


def replace_dataset(rng: np.random.Generator, path: Path) -> str:
    """Replace a dataset by one of another dtype or shape (strings, extreme integers, NaN, empty, ...)."""
    with h5py.File(path, "r+") as h5:
        name = _pick(rng, _readable(h5))
        original = h5[name][()]
        original = original if isinstance(original, np.ndarray) else np.asarray(original)
        kind, value = _hostile_array(rng, original if original.dtype.kind in "iuf" else None)
        parent, base = _parent_and_name(name)
        del h5[name]
        _write(h5[parent], base, value)
    return f"{name} := {kind}"


def forge_shape(rng: np.random.Generator, path: Path) -> str:
    """Replace a dataset by one declaring a huge shape in a few bytes of file (fill value, tiny chunks)."""
    shapes = [(HUGE,), (HUGE, 1), (1 << 20, 1 << 20), (1, HUGE), (1 << 32,), ((1 << 27) + 1,),
              (1 << 27,), (1 << 26, 3), (1 << 62,), (3, 1 << 61)]
    with h5py.File(path, "r+") as h5:
        name = _pick(rng, _inventory(h5)[0])
        dtype = h5[name].dtype if h5[name].dtype.kind in "iuf" else np.dtype("f8")
        shape = _pick(rng, shapes)
        style = _pick(rng, ["chunked", "fillvalue", "resizable"])
        parent, base = _parent_and_name(name)
        del h5[name]
        group = h5[parent]
        chunks = tuple(1 for _ in shape)
        try:
            if style == "chunked":
                group.create_dataset(base, shape=shape, dtype=dtype, chunks=chunks)
            elif style == "fillvalue":
                group.create_dataset(base, shape=shape, dtype=dtype, chunks=chunks, fillvalue=1)
            else:
                group.create_dataset(base, shape=(1,) * len(shape), maxshape=(None,) * len(shape), dtype=dtype,
                                     chunks=chunks).resize(shape)
        except (ValueError, OSError) as error:  # HDF5 refuses some shapes itself (more than 2**64 bytes)
            raise LookupError(f"h5py cannot write shape {shape}: {error}") from None
    return f"{name} := {style} {shape}"


def foreign_storage(rng: np.random.Generator, path: Path) -> str:
    """Replace a dataset by one whose data lives elsewhere: external raw storage or a virtual dataset."""
    with h5py.File(path, "r+") as h5:
        name = _pick(rng, [n for n in _inventory(h5)[0] if h5[n].dtype.kind in "iuf"])
        dataset = h5[name]
        shape, dtype = dataset.shape or (1,), dataset.dtype
        parent, base = _parent_and_name(name)
        style = _pick(rng, ["external /dev/zero", "external /dev/urandom", "external missing", "external self",
                            "virtual missing", "virtual huge", "virtual self"])
        del h5[name]
        group = h5[parent]
        if style.startswith("external"):
            source = {"external /dev/zero": "/dev/zero", "external /dev/urandom": "/dev/urandom",
                      "external missing": "no_such_raw_file", "external self": str(path)}[style]
            if style in ("external /dev/zero", "external /dev/urandom") and rng.random() < 0.5:
                shape = (1 << 26,)  # 512 MiB read from a device, if not refused
            group.create_dataset(base, shape=shape, dtype=dtype, external=[(source, 0, h5py.h5f.UNLIMITED)])
        else:
            if style == "virtual huge":
                shape = (HUGE,)
            layout = h5py.VirtualLayout(shape=shape, dtype=dtype)
            source_file = "no_such_file.hdf5" if style != "virtual self" else path.name
            layout[...] = h5py.VirtualSource(source_file, "/Weights" if style == "virtual self" else "/x",
                                             shape=shape)
            group.create_virtual_dataset(base, layout, fillvalue=0)
    return f"{name} := {style} {shape}"


def mistype_attribute(rng: np.random.Generator, path: Path) -> str:
    """Give MachineType, Metadata, version, NumberOfFeatures or DecisionRule (and a cascade's version,
    WindowSize, NumberOfStages or a stage's Threshold) a wrong type or value."""
    with h5py.File(path, "r+") as h5:
        groups = _inventory(h5)[1]
        keys = ["MachineType", "MachineType", "Metadata", "Metadata", "version", "NumberOfFeatures", "DecisionRule"]
        # a cascade's stages are machines in groups; its root has attributes of its own
        stages = [g for g in groups if "Threshold" in h5[g].attrs]
        if "bob_boost_cascade" in h5.attrs:
            keys += ["bob_boost_cascade", "WindowSize", "NumberOfStages", "Threshold", "Threshold"]
        key = _pick(rng, keys)
        if key == "MachineType":
            owner = _pick(rng, [g for g in groups if "MachineType" in h5[g].attrs])
        elif key in ("Threshold", "version", "NumberOfFeatures", "DecisionRule") and stages:
            owner = _pick(rng, stages)
        else:
            owner = "/"
        kind, value = _hostile_attribute(rng, key)
        if key in h5[owner].attrs:
            del h5[owner].attrs[key]
        h5[owner].attrs[key] = value
    return f"{owner}@{key} := {kind}"


def link(rng: np.random.Generator, path: Path) -> str:
    """Replace a dataset or group by a dangling, circular, misdirected, self or external link."""
    with h5py.File(path, "r+") as h5:
        datasets, groups, _ = _inventory(h5)
        name = _pick(rng, datasets + groups[1:])
        parent, base = _parent_and_name(name)
        other = _pick(rng, [n for n in datasets + groups if n != name])
        style = _pick(rng, ["dangling", "self", "circular", "other", "external missing", "external self",
                            "external dev-zero", "external directory", "hard to parent"])
        del h5[name]
        group = h5[parent]
        if style == "dangling":
            group[base] = h5py.SoftLink("/does/not/exist")
        elif style == "self":
            group[base] = h5py.SoftLink(name)
        elif style == "circular":
            group[base] = h5py.SoftLink(name + "_twin")
            group[base + "_twin"] = h5py.SoftLink(name)
        elif style == "other":
            group[base] = h5py.SoftLink(other)
        elif style == "external missing":
            group[base] = h5py.ExternalLink("no_such_file.hdf5", "/x")
        elif style == "external self":
            group[base] = h5py.ExternalLink(path.name, other)
        elif style == "external dev-zero":
            group[base] = h5py.ExternalLink("/dev/zero", "/x")
        elif style == "external directory":
            group[base] = h5py.ExternalLink("/", "/x")
        else:
            group[base] = h5[parent]
    return f"{name} := {style}" + (f" -> {other}" if style in ("other", "external self") else "")


def group_for_dataset(rng: np.random.Generator, path: Path) -> str:
    """Put a group where a dataset is expected (or a dataset where a weak machine's group is)."""
    with h5py.File(path, "r+") as h5:
        datasets, groups, _ = _inventory(h5)
        name = _pick(rng, datasets + groups[1:])
        parent, base = _parent_and_name(name)
        was_dataset = isinstance(h5[name], h5py.Dataset)
        del h5[name]
        if was_dataset:
            sub = h5[parent].create_group(base)
            if rng.random() < 0.5:
                sub.create_dataset(base, data=np.ones(2))
        else:
            h5[parent].create_dataset(base, data=np.ones(3))
    return f"{name} := {'group' if was_dataset else 'dataset'}"


def edit_value(rng: np.random.Generator, path: Path) -> str:
    """Overwrite one element of a numeric dataset with an extreme value of its own dtype."""
    with h5py.File(path, "r+") as h5:
        datasets = [n for n in _readable(h5) if h5[n].dtype.kind in "iuf" and h5[n].size]
        name = _pick(rng, datasets)
        data = h5[name][()]
        flat = data.reshape(-1)
        position = int(rng.integers(flat.size))
        if data.dtype.kind == "f":
            values = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308, 5e-324, 0.5, -1.0, 1.0,
                      float(rng.normal() * 10)]
        else:
            info = np.iinfo(data.dtype)
            values = [info.min, info.max, 0, 1, -1 if info.min < 0 else 0, 2, int(flat[position]) + 1,
                      int(flat[position]) - 1 if flat[position] > info.min else 0, int(rng.integers(-3, 40))]
        value = _pick(rng, values)
        flat[position] = value
        h5[name][...] = data
    return f"{name}[{position}] := {value}"


def add_item(rng: np.random.Generator, path: Path) -> str:
    """Add what the format reads when present: an extra weak machine, CostMatrix, Baseline, MissingLeft ...
    (into a random stage of a cascade), or a copy of a cascade's stage."""
    with h5py.File(path, "r+") as h5:
        groups = [g for g in _inventory(h5)[1] if "MachineType" in h5[g].attrs]
        stages = sorted(g for g in _inventory(h5)[1] if "Threshold" in h5[g].attrs)
        choices = ["extra machine", "CostMatrix", "Baseline", "MissingLeft", "MissingAbove", "MissingEntry",
                   "copy of a machine"]
        if stages:
            choices += ["copy of a stage", "copy of a stage, counted"]
        choice = _pick(rng, choices)
        # a cascade's machines live in its stages: an item a machine reads goes into one of them
        machine = h5[_pick(rng, stages)] if stages else h5
        if choice.startswith("copy of a stage"):
            number = len(stages) + int(rng.integers(0, 2))
            h5.copy(_pick(rng, stages), f"Stage_{number}")
            if choice.endswith("counted"):
                h5.attrs["NumberOfStages"] = np.int64(number + 1)
            detail = f"Stage_{number}"
        elif choice == "extra machine":
            number = sum(1 for key in machine if key.startswith("WeakMachine_")) + int(rng.integers(0, 2))
            sub = machine.create_group(f"WeakMachine_{number}")
            sub.attrs["MachineType"] = np.array([b"StumpMachine"])
            sub["Threshold"], sub["Polarity"], sub["Index"] = [0.0], [1.0], np.array([0], dtype=np.int32)
            detail = sub.name
        elif choice == "copy of a machine" and groups:
            source = _pick(rng, groups)
            h5.copy(source, machine, f"WeakMachine_{sum(1 for key in machine if key.startswith('WeakMachine_'))}")
            detail = source
        elif choice in ("CostMatrix", "Baseline"):
            if choice in machine:
                del machine[choice]
            kind, value = _pick(rng, [
                ("ones 3x3", np.ones((3, 3))), ("zero diag 2x2", 1 - np.eye(2)), ("zero diag 3x3", 1 - np.eye(3)),
                ("negative", -(1 - np.eye(3))), ("nan", np.full((3, 3), np.nan)), ("zeros (1,)", np.zeros(1)),
                ("ones (3,)", np.ones(3)), ("1-d", np.ones(4)), ("huge", np.full((2, 2), 1e308)),
                ("1e-300", (1 - np.eye(3)) * 1e-300)])
            machine.create_dataset(choice, data=value)
            detail = kind
        else:
            if not groups:
                raise LookupError("no weak machine")
            owner = h5[_pick(rng, groups)]
            if choice in owner:
                del owner[choice]
            kind, value = _pick(rng, [("[1]", np.array([1], dtype=np.int8)), ("[2]", np.array([2], dtype=np.int8)),
                                      ("[-1]", np.array([-1], dtype=np.int64)), ("ones (5,)", np.ones(5, np.int8)),
                                      ("float", np.array([0.5]))])
            owner.create_dataset(choice, data=value)
            detail = f"{owner.name}: {kind}"
    return f"{choice} {detail}"


def stacked(rng: np.random.Generator, path: Path) -> str:
    """Two or three structural mutations in a row."""
    done = []
    for _ in range(int(rng.integers(2, 4))):
        mutation = _pick(rng, [m for k, m in MUTATIONS.items() if k not in ("stacked", "byte flip", "truncate")])
        try:
            done.append(f"{mutation.__name__}({mutation(rng, path)})")
        except LookupError:
            continue
    if not done:
        raise LookupError("no mutation applied")
    return "; ".join(done)


MUTATIONS: dict[str, Callable[[np.random.Generator, Path], str]] = {
    "byte flip": byte_flip,
    "truncate": truncate,
    "delete dataset": delete_dataset,
    "rename dataset/group": rename_node,
    "delete attribute": delete_attribute,
    "rename attribute": rename_attribute,
    "replace dataset (dtype/shape)": replace_dataset,
    "forged huge shape": forge_shape,
    "data stored elsewhere (external/virtual)": foreign_storage,
    "mistyped attribute": mistype_attribute,
    "link (dangling/soft/external/circular)": link,
    "group for dataset": group_for_dataset,
    "extreme value": edit_value,
    "added item": add_item,
    "stacked": stacked,
}


# -- running cases ------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Case:
    """One fuzz case: mutate a copy of ``seed`` with mutation ``kind`` seeded by ``number``."""

    seed: str
    kind: str
    number: int


@dataclasses.dataclass
class Result:
    """What happened to a case."""

    case: Case
    outcome: str
    detail: str = ""
    message: str = ""
    seconds: float = 0.0

    @property
    def allowed(self) -> bool:
        """Whether the outcome is one the loader may have (skipped cases count as allowed)."""
        return self.outcome in ALLOWED or self.outcome == SKIPPED


def make_cases(seeds: list[str], count: int, seed: int) -> list[Case]:
    """``count`` cases spread evenly over the mutation kinds, on seeds drawn with ``seed``."""
    rng = np.random.default_rng(seed)
    kinds = list(MUTATIONS)
    return [Case(seeds[int(rng.integers(len(seeds)))], kinds[i % len(kinds)], int(rng.integers(2 ** 63)))
            for i in range(count)]


def mutate(case: Case, seed_directory: Path, target: Path) -> str:
    """Copy the case's seed to ``target`` and apply its mutation; returns the description.

    Raises
    ------
    LookupError
        When the mutation does not apply to that seed.
    """
    shutil.copyfile(seed_directory / case.seed, target)
    rng = np.random.default_rng(case.number)
    return MUTATIONS[case.kind](rng, target)


def _feature_matrix(machine, rng: np.random.Generator) -> np.ndarray:
    """A small matrix of the width the machine reads (at most 1024 columns: bob's MNIST models read 784), of 0/1."""
    indices = machine.feature_indices()
    width = int(indices[-1]) + 1 if indices.size else 1
    if machine.number_of_features is not None:
        width = max(width, machine.number_of_features)
    return rng.integers(0, 2, size=(4, min(width, 1024))).astype(np.float64)


def _peak_memory() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kilobytes on Linux


def _caused_by_memory(error: BaseException) -> bool:
    """Whether ``error`` hides a MemoryError (``raise ... from None`` keeps it as the context)."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, MemoryError):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


def load_and_classify(path: Path, cascade: bool = False) -> tuple[str, str]:
    """Load ``path`` with :meth:`bob_boost.BoostedMachine.load` (or, for a ``cascade``,
    :meth:`bob_boost.vision.Cascade.load`) and name the outcome (and a message)."""

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning leaking from a load is a finding too
        return _load_and_classify(path, cascade)


#: Largest window (pixels) of a loaded cascade that the harness scans; the loader allows up to 4096 x 4096,
#: whose windows alone would exceed :data:`MEMORY_LIMIT`.
CASCADE_SCAN_PIXELS = 1 << 16


def _use_cascade(cascade, rng: np.random.Generator) -> None:
    """Score random windows with every stage, then scan an image a few pixels larger than the window."""
    from bob_boost.vision import detect

    height, width = cascade.window_size
    if height * width > CASCADE_SCAN_PIXELS:
        return
    cascade.passed_stages(rng.random((3, height, width)))
    detect(rng.random((height + 5, width + 7)), cascade, min_neighbors=0, n_threads=1)


def _use_machine(machine, rng: np.random.Generator) -> None:
    features = _feature_matrix(machine, rng)
    machine.decision_scores(features)
    machine.predict(features)  # the file's decision rule and cost matrix must be usable too


def _load_and_classify(path: Path, cascade: bool) -> tuple[str, str]:
    import bob_boost
    from bob_boost.vision import Cascade

    before = _peak_memory()
    try:
        machine = Cascade.load(path) if cascade else bob_boost.BoostedMachine.load(path)
    except bob_boost.ModelFormatError as error:
        if _caused_by_memory(error) or _peak_memory() - before > MEMORY_LIMIT:
            return "memory", str(error)[:300]
        if str(path) not in str(error):
            return "unnamed error", str(error)[:300]
        return "ModelFormatError", str(error)[:300]
    except BaseException as error:  # the finding this harness is for
        return f"foreign: {type(error).__name__}", "".join(traceback.format_exception(error))[-1500:]
    try:
        (_use_cascade if cascade else _use_machine)(machine, np.random.default_rng(0))
        outcome, message = "model", ""
    except ValueError as error:
        outcome, message = "model, scores ValueError", str(error)[:300]
    except BaseException as error:
        return f"scores foreign: {type(error).__name__}", "".join(traceback.format_exception(error))[-1500:]
    if _peak_memory() - before > MEMORY_LIMIT:
        return "memory", "loading and scoring grew the peak memory by more than MEMORY_LIMIT"
    return outcome, message


def _worker(connection, seed_directory: str, scratch: str) -> None:
    """Child process: receive cases, mutate a copy, load it, send the outcome back."""
    seed_directory, scratch = Path(seed_directory), Path(scratch)
    target = scratch / "case.hdf5"
    while True:
        case = connection.recv()
        if case is None:
            return
        for leftover in scratch.iterdir():
            leftover.unlink() if not leftover.is_dir() else shutil.rmtree(leftover)
        try:
            detail = mutate(case, seed_directory, target)
        except Exception as error:  # LookupError: nothing to mutate; others: h5py refused the mutation
            connection.send(("mutated", f"{type(error).__name__}: {error}"[:300]))
            connection.send((SKIPPED, ""))
            continue
        connection.send(("mutated", detail))
        connection.send(load_and_classify(target, is_cascade(case.seed)))


class Runner:
    """A worker process that runs cases one at a time, restarted after a hang or a crash.

    Parameters
    ----------
    seed_directory : path
        Where :func:`write_seeds` put the seed files.
    time_limit : float
        Seconds a load may take.
    keep : path, optional
        Folder to copy every mutated file with a disallowed outcome to (named after its case).
    """

    def __init__(self, seed_directory: str | os.PathLike, time_limit: float = TIME_LIMIT,
                 keep: str | os.PathLike | None = None) -> None:
        self.seed_directory = Path(seed_directory)
        self.time_limit = time_limit
        self.keep = None if keep is None else Path(keep)
        self._scratch = Path(tempfile.mkdtemp(prefix="bob_boost-fuzz-"))
        self._context = multiprocessing.get_context("spawn")  # no h5py state shared with the parent
        self._process = None
        self._connection = None

    def _start(self) -> None:
        parent, child = self._context.Pipe()
        self._process = self._context.Process(target=_worker, args=(child, str(self.seed_directory),
                                                                    str(self._scratch)), daemon=True)
        self._process.start()
        child.close()
        self._connection = parent

    def _stop(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join()
            self._connection.close()
        self._process = self._connection = None

    def run(self, case: Case) -> Result:
        """Mutate and load one case in the worker; a hang or a dead worker is an outcome too."""
        if self._process is None:
            self._start()
        started = time.perf_counter()
        self._connection.send(case)
        detail = ""
        for phase, limit in (("mutating", 60.0), ("loading", self.time_limit)):
            try:
                ready = self._connection.poll(limit)
            except (EOFError, OSError):
                ready = True
            if not ready:
                self._keep(case)
                self._stop()
                outcome = "timeout" if phase == "loading" else "mutation hung"
                return Result(case, outcome, detail, f"no answer within {limit} s", time.perf_counter() - started)
            try:
                answer = self._connection.recv()
            except (EOFError, OSError):
                self._keep(case)
                code = self._process.exitcode if self._process is not None else None
                self._stop()
                return Result(case, "crash", detail, f"worker died while {phase} (exit code {code})",
                              time.perf_counter() - started)
            if phase == "mutating":
                detail = answer[1]
        outcome, message = answer
        result = Result(case, outcome, detail, message, time.perf_counter() - started)
        if not result.allowed:
            self._keep(case)
        if outcome == "memory":  # the peak is the process's: start afresh to measure the next case
            self._stop()
        return result

    def _keep(self, case: Case) -> None:
        if self.keep is None:
            return
        self.keep.mkdir(parents=True, exist_ok=True)
        source = self._scratch / "case.hdf5"
        if source.exists():
            name = f"{Path(case.seed).stem}-{case.kind.split()[0]}-{case.number}.hdf5"
            shutil.copyfile(source, self.keep / name)

    def close(self) -> None:
        """Stop the worker and remove the scratch folder."""
        if self._connection is not None:
            with contextlib.suppress(OSError, EOFError):
                self._connection.send(None)
            self._process.join(5)
        self._stop()
        shutil.rmtree(self._scratch, ignore_errors=True)

    def __enter__(self) -> Runner:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def run_cases(cases: Iterable[Case], seed_directory: str | os.PathLike, workers: int = 1,
              time_limit: float = TIME_LIMIT, keep: str | os.PathLike | None = None) -> Iterator[Result]:
    """Run ``cases`` on ``workers`` worker processes; yields results in the cases' order."""
    cases = list(cases)
    if workers <= 1:
        with Runner(seed_directory, time_limit, keep) as runner:
            for case in cases:
                yield runner.run(case)
        return
    from concurrent.futures import ThreadPoolExecutor

    # one thread per Runner keeps each worker busy; the threads only wait on pipes
    chunks = [cases[w::workers] for w in range(workers)]

    def run_chunk(chunk):
        with Runner(seed_directory, time_limit, keep) as runner:
            return [runner.run(case) for case in chunk]

    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(run_chunk, chunks))
    ordered = [None] * len(cases)
    for w, chunk_results in enumerate(results):
        ordered[w::workers] = chunk_results
    yield from ordered


def table(results: Iterable[Result]) -> str:
    """A Markdown table: cases and outcomes per mutation kind."""
    counts: dict[str, dict[str, int]] = {}
    outcomes: list[str] = list(ALLOWED) + [SKIPPED]
    for result in results:
        row = counts.setdefault(result.case.kind, {})
        row[result.outcome] = row.get(result.outcome, 0) + 1
        if result.outcome not in outcomes:
            outcomes.append(result.outcome)
    header = ["mutation", "cases", *outcomes]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    total = {o: 0 for o in outcomes}
    for kind in [k for k in MUTATIONS if k in counts]:
        row = counts[kind]
        for outcome in outcomes:
            total[outcome] += row.get(outcome, 0)
        lines.append("| " + " | ".join([kind, str(sum(row.values()))] + [str(row.get(o, 0)) for o in outcomes])
                     + " |")
    lines.append("| " + " | ".join(["**all**", str(sum(total.values()))] + [str(total[o]) for o in outcomes])
                 + " |")
    return "\n".join(lines)


def describe(result: Result) -> str:
    """One line (plus the message) telling how to reproduce a result."""
    return (f"{result.outcome}: Case({result.case.seed!r}, {result.case.kind!r}, {result.case.number}) "
            f"[{result.detail}]\n    {result.message}")


__all__ = ["ALLOWED", "CASCADE_PREFIX", "Case", "MUTATIONS", "Result", "Runner", "describe", "is_cascade",
           "load_and_classify", "make_cases", "mutate", "run_cases", "table", "write_seeds"]
