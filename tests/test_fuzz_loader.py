"""The fuzzed loader: damaged and hostile model files give a machine or a ModelFormatError, nothing else.

A fixed-seed run of the harness in :mod:`fuzzing` (100 and 50 cases; 300 and 150 with ``--run-long``;
``bench/fuzz_models.py`` runs tens of thousands),
then one regression test per bug the harness found, each building its hostile file by hand. Files
that made the loader hang are loaded in a child process with a time limit, so that a regression
fails the test instead of stalling the suite.
"""
from __future__ import annotations

import json
import struct
import subprocess
import sys
import time
import warnings
from pathlib import Path

import h5py
import numpy as np
import pytest

import bob_boost
from bob_boost import BoostedMachine, ModelFormatError, StumpMachine
from bob_boost.vision import FEATURE_TYPES, Cascade

sys.path.insert(0, str(Path(__file__).resolve().parent))
import fuzzing  # noqa: E402  (the harness lives next to the tests, importable by bench scripts too)

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def seed_directory(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("fuzz-seeds")
    fuzzing.write_seeds(directory)
    return directory


@pytest.mark.long
def test_seeds_cover_every_weak_machine_type_and_cascades_and_load(seed_directory):
    kinds = set()
    cascades = []
    for path in sorted(seed_directory.glob("*.hdf5")):
        if fuzzing.is_cascade(path.name):
            cascades.append(Cascade.load(path))
            continue
        machine = BoostedMachine.load(path)
        kinds |= {type(weak).__name__ for weak in machine.weak_machines}
    assert kinds == {"StumpMachine", "LUTMachine", "TreeMachine", "MultiClassTreeMachine",
                     "MultiClassStumpMachine", "MultiClassLUTMachine"}
    assert len(cascades) == 2 and all(len(cascade) >= 2 for cascade in cascades)
    # between them the cascades use every Haar feature type and a stage with a baseline
    assert {int(t) for cascade in cascades for t in cascade.features.table[:, 0]} == set(range(len(FEATURE_TYPES)))
    assert any(machine.baseline[0] != 0 for cascade in cascades for machine, _ in cascade.stages)


@pytest.mark.parametrize("count", [100, pytest.param(300, marks=pytest.mark.long)])
def test_fixed_seed_fuzz_run_has_only_allowed_outcomes(seed_directory, count):
    seeds = sorted(p.name for p in seed_directory.glob("*.hdf5") if not fuzzing.is_cascade(p.name))
    cases = fuzzing.make_cases(seeds, count, seed=19)
    started = time.perf_counter()
    results = list(fuzzing.run_cases(cases, seed_directory, workers=2, time_limit=10.0))
    elapsed = time.perf_counter() - started
    bad = [fuzzing.describe(r) for r in results if not r.allowed]
    assert not bad, "\n".join(bad)
    assert {r.case.kind for r in results} == set(fuzzing.MUTATIONS)
    assert sum(r.outcome == "ModelFormatError" for r in results) > count // 2  # most mutations do break the file
    assert sum(r.outcome.startswith("model") for r in results) > count // 30  # and some leave a valid machine
    assert elapsed < 30


@pytest.mark.parametrize("count", [50, pytest.param(150, marks=pytest.mark.long)])
def test_fixed_seed_fuzz_run_of_cascades_has_only_allowed_outcomes(seed_directory, count):
    seeds = sorted(p.name for p in seed_directory.glob("*.hdf5") if fuzzing.is_cascade(p.name))
    results = list(fuzzing.run_cases(fuzzing.make_cases(seeds, count, seed=23), seed_directory, workers=2,
                                     time_limit=10.0))
    bad = [fuzzing.describe(r) for r in results if not r.allowed]
    assert not bad, "\n".join(bad)
    assert {r.case.kind for r in results} == set(fuzzing.MUTATIONS)
    assert sum(r.outcome == "ModelFormatError" for r in results) > count // 2
    assert sum(r.outcome == "model" for r in results) > count // 30  # loaded, scored and scanned


# -- regressions: one per bug the harness found -----------------------------------------------------

def saved(tmp_path: Path, metadata=None) -> Path:
    machine = BoostedMachine(number_of_features=3, metadata=metadata or {"loss": "exponential"})
    machine.add_weak_machine(StumpMachine(0.5, 1, 0), 1.0)
    machine.add_weak_machine(StumpMachine(-0.5, -1, 2), 0.5)
    path = tmp_path / "model.hdf5"
    machine.save(path)
    return path


def load_error(path: Path) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning leaking from the loader is a bug too
        with pytest.raises(ModelFormatError) as info:
            BoostedMachine.load(path)
    message = str(info.value)
    assert message.count(str(path)) == 1, message
    return message


def outcome_in_child(path: Path, seconds: float = 20.0) -> str:
    """The harness's outcome for ``path``, loaded in a child process (``"timeout"`` if it hangs)."""
    code = ("import sys; sys.path[:0] = [sys.argv[1], sys.argv[1] + '/tests']; from pathlib import Path; "
            "import fuzzing; print(fuzzing.load_and_classify(Path(sys.argv[2]))[0])")
    try:
        done = subprocess.run([sys.executable, "-c", code, str(ROOT), str(path)], capture_output=True, text=True,
                              timeout=seconds, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return "timeout"
    return done.stdout.strip() or done.stderr[-500:]


def replace(path: Path, name: str, **create) -> None:
    with h5py.File(path, "r+") as h5:
        del h5[name]
        h5.create_dataset(name, **create)


def test_forged_shape_over_one_element_chunks_is_refused_at_once(tmp_path):
    # was: 2**27 declared elements (exactly MAX_ELEMENTS, so allowed) read chunk by chunk from 1-element
    # chunks never written, taking minutes (case golden_samme_tree / forged huge shape / 5758213513032803036)
    path = saved(tmp_path)
    replace(path, "WeakMachine_0/Threshold", shape=(1 << 27,), dtype="f8", chunks=(1,), fillvalue=1.0)
    started = time.perf_counter()
    assert "declares 134217728 elements of which only part was written" in load_error(path)
    assert time.perf_counter() - started < 2


def test_shape_never_written_is_refused(tmp_path):
    path = saved(tmp_path)
    replace(path, "Weights", shape=(2, 1), dtype="f8")  # contiguous, no data: reads as the fill value
    assert "'Weights' declares 2 elements of which only part was written" in load_error(path)


def test_forged_2_to_the_40_shape_is_refused_before_allocation(tmp_path):
    path = saved(tmp_path)
    replace(path, "WeakMachine_1/Index", shape=(1 << 40,), dtype="i4", chunks=(1,), fillvalue=1)
    assert "declares 1099511627776 elements" in load_error(path)


@pytest.mark.parametrize("source", ["/dev/zero", "/dev/urandom"])
def test_data_stored_in_another_file_is_refused(tmp_path, source):
    # was: a (2**26,) Threshold with external storage on /dev/zero read 512 MiB before the shape check
    path = saved(tmp_path)
    replace(path, "WeakMachine_0/Threshold", shape=(1 << 26,), dtype="f8",
            external=[(source, 0, h5py.h5f.UNLIMITED)])
    assert "'Threshold' keeps its data in other files" in load_error(path)


def test_compressed_dataset_expanding_far_beyond_its_bytes_is_refused_before_reading(tmp_path):
    # was: a few kilobytes of deflated zeros declaring a 32 MiB Threshold were inflated before any shape check
    path = saved(tmp_path)
    replace(path, "WeakMachine_0/Threshold", data=np.zeros(1 << 22), chunks=(1 << 18,), compression="gzip",
            compression_opts=9)
    with h5py.File(path, "r") as h5:
        stored = h5["WeakMachine_0/Threshold"].id.get_storage_size()
    assert stored * 100 < 8 << 22  # the bomb: 32 MiB from well under 1%
    assert "'Threshold' would expand from" in load_error(path) and "a decompression bomb" in load_error(path)


def test_a_compressed_copy_of_a_model_still_loads(tmp_path):
    """Compression of ordinary model data stays far below the limit: a model repacked with gzip loads the same."""
    path = saved(tmp_path)
    original = BoostedMachine.load(path)
    with h5py.File(path, "r+") as h5:
        for name in ("Weights", "WeakMachine_0/Threshold", "WeakMachine_1/Index"):
            data = h5[name][()]
            del h5[name]
            h5.create_dataset(name, data=data, chunks=data.shape or None, compression="gzip")
    assert BoostedMachine.load(path).weights.tolist() == original.weights.tolist()


def test_virtual_dataset_is_refused(tmp_path):
    path = saved(tmp_path)
    with h5py.File(path, "r+") as h5:
        layout = h5py.VirtualLayout(shape=(2, 1), dtype="f8")
        layout[...] = h5py.VirtualSource("elsewhere.hdf5", "/x", shape=(2, 1))
        del h5["Weights"]
        h5.create_virtual_dataset("Weights", layout, fillvalue=1.0)
    assert "'Weights' keeps its data in other files" in load_error(path)


def test_external_link_to_another_model_is_refused(tmp_path):
    # was: followed, so loading one file read (and depended on) another one named by the file
    other = tmp_path / "other"
    other.mkdir()
    saved(other)
    path = saved(tmp_path)
    with h5py.File(path, "r+") as h5:
        del h5["WeakMachine_1"]
        h5["WeakMachine_1"] = h5py.ExternalLink(str(other / "model.hdf5"), "/WeakMachine_1")
    message = load_error(path)
    assert "'WeakMachine_1' is an external link to" in message and "keeps all its data in its own file" in message


def test_circular_soft_links_are_named(tmp_path):
    path = saved(tmp_path)
    with h5py.File(path, "r+") as h5:
        del h5["WeakMachine_0/Index"]
        h5["WeakMachine_0/Index"] = h5py.SoftLink("/WeakMachine_0/Loop")
        h5["WeakMachine_0/Loop"] = h5py.SoftLink("/WeakMachine_0/Index")
    assert "'Index' is a link that cannot be followed" in load_error(path)


def test_soft_links_within_the_file_are_followed_and_other_objects_named(tmp_path):
    """A soft link to a dataset of the same file reads as that dataset; one that leads nowhere, a group where a
    dataset belongs and a named datatype are errors naming the dataset."""
    path = saved(tmp_path)
    expected = BoostedMachine.load(path)
    with h5py.File(path, "r+") as h5:
        h5["Kept"] = h5["WeakMachine_0/Index"][()]
        del h5["WeakMachine_0/Index"]
        h5["WeakMachine_0/Index"] = h5py.SoftLink("/Kept")
    assert BoostedMachine.load(path).weak_machines == expected.weak_machines
    with h5py.File(path, "r+") as h5:
        del h5["Kept"]
    assert "'Index' is a link to '/Kept' that leads nowhere" in load_error(path)
    for replace, message in ((lambda h5: h5.create_group("WeakMachine_0/Index"), "'Index' is not a dataset"),
                             (lambda h5: h5.__setitem__("WeakMachine_0/Index", np.dtype("f8")),
                              "'Index' is a Datatype, not a dataset or a group")):
        with h5py.File(path, "r+") as h5:
            if "WeakMachine_0/Index" in h5:
                del h5["WeakMachine_0/Index"]
            replace(h5)
        assert message in load_error(path)


@pytest.mark.parametrize("name, value, message", [
    # was: uint64 2**64 - 1 wrapped to -1 (a leaf in a tree, "Index must be non-negative, got -1" here)
    ("Index", np.array([np.iinfo(np.uint64).max], dtype=np.uint64), "'Index' holds integers beyond the 64-bit"),
    # was: 1e300 passed the whole-number test, then cast to int64's minimum with a RuntimeWarning
    ("Index", np.array([1e300]), "'Index' holds integers beyond the 64-bit range"),
    ("Index", np.array([np.inf]), "'Index' must hold integers"),
], ids=["uint64 max", "1e300", "inf"])
def test_integers_outside_int64_are_refused_without_warnings(tmp_path, name, value, message):
    path = saved(tmp_path)
    replace(path, f"WeakMachine_0/{name}", data=value)
    assert message in load_error(path)


@pytest.mark.parametrize("text, message", [
    # was: RecursionError, reported as "damaged or invalid content (RecursionError: ...)"
    ("[" * 5000 + "]" * 5000, "'Metadata' is not valid JSON (nests too deeply)"),
    # was: ValueError of int(), reported as "damaged or invalid content (ValueError: Exceeds the limit ...)"
    ('{"intercept": ' + "9" * 5000 + "}", "'Metadata' is not valid JSON (Exceeds the limit"),
], ids=["nested 5000 deep", "5000-digit integer"])
def test_metadata_json_the_parser_refuses_is_named(tmp_path, text, message):
    path = saved(tmp_path)
    with h5py.File(path, "r+") as h5:
        h5.attrs["Metadata"] = text
    assert message in load_error(path)


def test_cost_matrix_errors_name_the_file_once(tmp_path):
    # was: "<file>:/: <file>:/: dataset 'CostMatrix' ..." (the reader's error wrapped again)
    path = saved(tmp_path)
    with h5py.File(path, "r+") as h5:
        h5["CostMatrix"] = np.array([b"a", b"b"])
    assert "'CostMatrix' has non-numeric type" in load_error(path)


def test_huge_values_quoted_in_messages_are_shortened(tmp_path):
    path = saved(tmp_path)
    with h5py.File(path, "r+") as h5:
        h5["WeakMachine_0"].attrs["MachineType"] = "X" * 60000
        h5.attrs["version"] = "Y" * 60000
    message = load_error(path)
    assert "unsupported format version" in message and len(message) < 400


def damage_global_heap(path: Path) -> None:
    """Set the size of the free-space object of the file's global heap collection to 0."""
    data = bytearray(path.read_bytes())
    start = data.find(b"GCOL\x01\x00\x00\x00")
    assert start >= 0, "the file has no global heap (no variable-length strings)"
    position = start + 16
    while struct.unpack_from("<H", data, position)[0] != 0:
        (size,) = struct.unpack_from("<Q", data, position + 8)
        position += 16 + (size + 7) // 8 * 8
    struct.pack_into("<Q", data, position + 8, 0)
    path.write_bytes(bytes(data))


def test_global_heap_that_makes_hdf5_loop_is_refused(tmp_path):
    # was: a hang in HDF5 itself while reading the Metadata string: an object of size 0 in a global heap
    # collection is stepped over by 0 bytes forever (case golden_boosting_lut_multivariate_shared_logit /
    # byte flip / 2352860492761172723, a bit flipped in the size of the bob_boost_version string)
    path = saved(tmp_path)
    damage_global_heap(path)
    assert outcome_in_child(path) == "ModelFormatError"
    assert "damaged global heap at byte" in load_error(path)


def test_global_heap_check_accepts_every_valid_file(seed_directory):
    for path in sorted(seed_directory.glob("*.hdf5")):
        assert bob_boost.io.hdf5.damaged_global_heap(path) is None


def test_metadata_of_valid_files_still_reads(tmp_path):
    path = saved(tmp_path, {"loss": "exponential", "nested": [[1, 2], {"a": None}]})
    assert BoostedMachine.load(path).metadata["nested"] == [[1, 2], {"a": None}]
    assert json.loads(json.dumps(BoostedMachine.load(path).metadata))


@pytest.mark.parametrize("text, message", [("[" * 5000 + "]" * 5000, "nests too deeply"),
                                           ('{"a": ' + "9" * 5000 + "}", "not valid JSON"),
                                           ("[1, 2]", "must be a JSON object")])
def test_cascade_metadata_the_parser_refuses_is_named(tmp_path, text, message):
    """Cascades read their Metadata as models do (it once leaked a RecursionError)."""
    from bob_boost.vision import HaarFeatures

    machine = BoostedMachine()
    machine.add_weak_machine(StumpMachine(0.5, 1, 0), 1.0)
    path = tmp_path / "cascade.hdf5"
    Cascade(HaarFeatures([[0, 0, 0, 2, 1]], (4, 4)), [(machine, 0.0)]).save(path)
    with h5py.File(path, "r+") as h5:
        h5.attrs["Metadata"] = text
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ModelFormatError, match=message) as info:
            Cascade.load(path)
    assert str(path) in str(info.value)
