"""The HDF5 model format: round trips, bob.learn.boosting compatibility, corruption and atomic saves."""
import os
import stat

import h5py
import numpy as np
import pytest

import bob_boost
from bob_boost import BoostedMachine, LUTMachine, ModelFormatError, StumpMachine, WeakMachine
from bob_boost import registry

rng = np.random.default_rng(11)


def random_machine(kind: str, count: int) -> BoostedMachine:
    outputs = 3 if kind == "lut-multi" else 1
    machine = BoostedMachine(number_of_outputs=outputs, number_of_features=20)
    for _ in range(count):
        if kind == "stump":
            weak = StumpMachine(float(rng.normal()), int(rng.choice([-1, 1])), int(rng.integers(20)))
        else:
            weak = LUTMachine(rng.choice([-1.0, 1.0], size=(8, outputs)), rng.integers(0, 20, size=outputs))
        machine.add_weak_machine(weak, rng.random(outputs))
    return machine


@pytest.mark.parametrize("kind", ["stump", "lut", "lut-multi"])
@pytest.mark.parametrize("count", [0, 5, 1000])
def test_round_trip_gives_bit_identical_scores(tmp_path, kind, count):
    machine = random_machine(kind, count)
    machine.metadata = {"loss": "logit", "classes": [0, 1]}
    path = tmp_path / "model.hdf5"
    machine.save(path)
    loaded = BoostedMachine.load(path)
    features = rng.integers(0, 8, size=(50, 20))
    assert loaded.weak_machines == machine.weak_machines
    assert np.array_equal(loaded.weights, machine.weights)
    assert np.array_equal(loaded.decision_scores(features), machine.decision_scores(features))
    assert loaded.metadata == machine.metadata and loaded.number_of_features == 20


def test_trained_machine_round_trips_with_cost_matrix(tmp_path):
    machine = random_machine("lut-multi", 4)
    machine.cost_matrix = np.array([[0, 1, 2], [1, 0, 1], [5, 1, 0]], dtype=float)
    machine.save(tmp_path / "m.hdf5")
    loaded = BoostedMachine.load(tmp_path / "m.hdf5")
    features = rng.integers(0, 8, size=(40, 20))
    np.testing.assert_array_equal(loaded.cost_matrix, machine.cost_matrix)
    np.testing.assert_array_equal(loaded.predict(features), machine.predict(features))


def test_several_machines_share_one_file_in_groups(tmp_path):
    first, second = random_machine("stump", 3), random_machine("lut", 4)
    with h5py.File(tmp_path / "pairs.hdf5", "w") as h5:
        first.save(h5.create_group("5-vs-6"))
        second.save(h5.create_group("3-vs-8"))
    with h5py.File(tmp_path / "pairs.hdf5", "r") as h5:
        assert BoostedMachine.load(h5["5-vs-6"]).weak_machines == first.weak_machines
        assert BoostedMachine.load(h5["3-vs-8"]).weak_machines == second.weak_machines


def write_bob_file(path, integer_lut=True):
    """A model laid out as bob.learn.boosting 2.x writes it, built by hand."""
    with h5py.File(path, "w") as h5:
        h5.attrs["version"] = np.array([2], dtype=np.int32)
        h5["Weights"] = np.array([[-0.5], [-2.0]])
        stump = h5.create_group("WeakMachine_0")
        stump.attrs["MachineType"] = np.array([b"StumpMachine"], dtype="S12")
        stump["Threshold"] = np.array([3.5])
        stump["Polarity"] = np.array([-1.0])
        stump["Index"] = np.array([1], dtype=np.int32)
        lut = h5.create_group("WeakMachine_1")
        lut.attrs["MachineType"] = np.array([b"LUTMachine"], dtype="S10")
        lut["LUT"] = np.array([[1], [-1], [1], [-1], [1], [-1]], dtype=np.int32 if integer_lut else np.float64)
        lut["Indices"] = np.array([0], dtype=np.int32)


def test_bob_layout_loads_and_predicts_what_a_hand_computation_says(tmp_path):
    write_bob_file(tmp_path / "bob.hdf5")
    machine = BoostedMachine.load(tmp_path / "bob.hdf5")
    features = np.array([[0, 3], [1, 4], [5, 0]])
    # stump: x1 >= 3.5 -> -1 else +1; LUT on x0: +1 for even values, -1 for odd
    expected = -0.5 * np.array([1, -1, 1]) - 2.0 * np.array([1, -1, -1])
    np.testing.assert_array_equal(machine(features), expected)
    np.testing.assert_array_equal(machine.predict(features), [-1, 1, 1])


def test_our_files_keep_bobs_layout(tmp_path):
    random_machine("stump", 2).save(tmp_path / "ours.hdf5")
    with h5py.File(tmp_path / "ours.hdf5", "r") as h5:
        assert h5.attrs["version"].tolist() == [2]
        assert h5["Weights"].shape == (2, 1) and h5["Weights"].dtype == np.float64
        group = h5["WeakMachine_1"]
        assert group.attrs["MachineType"].tolist() == [b"StumpMachine"]
        assert {k: group[k].shape for k in group} == {"Threshold": (1,), "Polarity": (1,), "Index": (1,)}


@pytest.mark.parametrize("name", ["stump", "lut", "lut_multi"])
def test_machines_saved_by_bob_give_bobs_scores(mnist_fixture_dir, name):
    machine = BoostedMachine.load(mnist_fixture_dir / f"{name}.hdf5")
    reference = np.load(mnist_fixture_dir / f"{name}.npz")
    scores = machine(reference["features"])
    np.testing.assert_allclose(scores, reference["scores"], rtol=1e-12, atol=1e-12)
    labels = reference["labels"]
    expected = labels if labels.ndim == 1 else labels.argmax(axis=1)
    np.testing.assert_array_equal(machine.predict(reference["features"]), expected)


def corrupt(path, action):
    write_bob_file(path)
    with h5py.File(path, "a") as h5:
        action(h5)


CORRUPTIONS = {
    "unknown machine type": (lambda h5: h5["WeakMachine_0"].attrs.__setitem__("MachineType", "Quantum"),
                             "WeakMachine_0.*unknown MachineType 'Quantum'"),
    "missing dataset": (lambda h5: h5["WeakMachine_0"].__delitem__("Threshold"),
                        "WeakMachine_0.*missing dataset 'Threshold'"),
    "mistyped dataset": (lambda h5: (h5["WeakMachine_1"].__delitem__("LUT"),
                                     h5["WeakMachine_1"].create_dataset("LUT", data=np.array([b"x", b"y"]))),
                         "WeakMachine_1.*'LUT' has non-numeric type"),
    "weights vs machines": (lambda h5: (h5.__delitem__("Weights"), h5.create_dataset("Weights", data=np.ones((3, 1)))),
                            "Weights has 3 rows but the file has 2"),
    "lut outputs vs weights": (lambda h5: (h5.__delitem__("Weights"),
                                           h5.create_dataset("Weights", data=np.ones((2, 2)))),
                               "WeakMachine_0.*1 output.*Weights has 2 columns"),
    "negative index": (lambda h5: h5["WeakMachine_0/Index"].__setitem__(0, -4),
                       "WeakMachine_0.*Index must be non-negative"),
    "index beyond features": (lambda h5: h5.attrs.__setitem__("NumberOfFeatures", 1),
                              "WeakMachine_0.*reads feature 1.*trained on 1 features"),
    "NaN weights": (lambda h5: h5["Weights"].__setitem__((0, 0), np.nan), "'Weights' contains NaN"),
    "no version": (lambda h5: h5.attrs.__delitem__("version"), "not a boosted machine"),
    "wrong version": (lambda h5: h5.attrs.__setitem__("version", 7), "unsupported format version"),
    "weights is a group": (lambda h5: (h5.__delitem__("Weights"), h5.create_group("Weights")),
                           "'Weights' is not a dataset"),
    "bad polarity": (lambda h5: h5["WeakMachine_0/Polarity"].__setitem__(0, 0.3), "Polarity must be"),
    "metadata not an object": (lambda h5: h5.attrs.__setitem__("Metadata", "[1, 2]"),
                               "'Metadata' must be a JSON object"),
    "metadata not JSON": (lambda h5: h5.attrs.__setitem__("Metadata", "{oops"), "'Metadata' is not valid JSON"),
    "number of features not an integer": (lambda h5: h5.attrs.__setitem__("NumberOfFeatures", 2.7),
                                          "'NumberOfFeatures' must be one positive integer"),
    "number of features as text": (lambda h5: h5.attrs.__setitem__("NumberOfFeatures", "abc"),
                                   "'NumberOfFeatures' must be one positive integer"),
    "dangling link": (lambda h5: (h5.__delitem__("WeakMachine_1"),
                                  h5.__setitem__("WeakMachine_1", h5py.SoftLink("/nowhere"))),
                      "damaged or invalid content"),
    "absurd declared size": (lambda h5: (h5["WeakMachine_1"].__delitem__("LUT"),
                                         h5["WeakMachine_1"].create_dataset("LUT", shape=(1 << 40, 1), dtype="f8",
                                                                            chunks=(1024, 1))),
                             "'LUT' declares 1099511627776 elements"),
    "negative cost matrix": (lambda h5: h5.create_dataset("CostMatrix", data=-np.ones((1, 1))),
                             "CostMatrix: needs at least 2 classes"),
    "scalar with many values": (lambda h5: (h5["WeakMachine_0"].__delitem__("Threshold"),
                                            h5["WeakMachine_0"].create_dataset("Threshold", data=[1.0, 2.0])),
                                "'Threshold' must hold one value"),
}


@pytest.mark.parametrize("case", sorted(CORRUPTIONS))
def test_corrupt_files_raise_model_format_error_naming_file_and_group(tmp_path, case):
    action, message = CORRUPTIONS[case]
    path = tmp_path / "bad.hdf5"
    corrupt(path, action)
    with pytest.raises(ModelFormatError, match=message) as info:
        BoostedMachine.load(path)
    assert str(path) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_truncated_non_hdf5_and_foreign_files_raise_model_format_error(tmp_path):
    good = tmp_path / "good.hdf5"
    random_machine("lut", 50).save(good)
    truncated = tmp_path / "truncated.hdf5"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    text = tmp_path / "notes.hdf5"
    text.write_text("this is not HDF5")
    foreign = tmp_path / "foreign.hdf5"
    with h5py.File(foreign, "w") as h5:
        h5["images"] = np.zeros((3, 3))
    for path in (truncated, text, foreign):
        with pytest.raises(ModelFormatError, match=str(path.name)):
            BoostedMachine.load(path)
    with pytest.raises(FileNotFoundError):
        BoostedMachine.load(tmp_path / "missing.hdf5")


class ExplodingStump(StumpMachine):
    """A stump whose save fails half-way, to simulate an interrupted write."""

    def save(self, group):
        group.create_dataset("Threshold", data=[self.threshold])
        raise RuntimeError("disk unplugged")


def test_interrupted_save_leaves_the_previous_file_intact(tmp_path):
    path = tmp_path / "model.hdf5"
    original = random_machine("stump", 3)
    original.save(path)
    broken = random_machine("stump", 2)
    broken.add_weak_machine(ExplodingStump(0.0, 1, 0), 1.0)
    with pytest.raises(RuntimeError, match="disk unplugged"):
        broken.save(path)
    assert BoostedMachine.load(path).weak_machines == original.weak_machines
    assert os.listdir(tmp_path) == ["model.hdf5"]


def test_failed_save_into_an_open_group_leaves_nothing_behind(tmp_path):
    broken = random_machine("stump", 2)
    broken.add_weak_machine(ExplodingStump(0.0, 1, 0), 1.0)
    with h5py.File(tmp_path / "shared.hdf5", "w") as h5:
        group = h5.create_group("model")
        group.attrs["owner"] = "caller"
        with pytest.raises(RuntimeError):
            broken.save(group)
        assert list(group.keys()) == [] and dict(group.attrs) == {"owner": "caller"}


@registry.register_weak_machine
class ParityMachine(WeakMachine):
    """Test machine: +1 for even values of one integer feature, -1 for odd ones."""

    machine_type = "tests.ParityMachine"

    def __init__(self, index: int) -> None:
        self.index = index

    @property
    def number_of_outputs(self) -> int:
        return 1

    def feature_indices(self):
        return np.array([self.index])

    def forward(self, features):
        return np.where(features[:, [self.index]] % 2 == 0, 1.0, -1.0)

    def save(self, group):
        group["Index"] = np.array([self.index])

    @classmethod
    def load(cls, group):
        return cls(bob_boost.hdf5.read_scalar(group, "Index", "int"))

    def _state(self):
        return (self.index,)


def test_registered_custom_weak_machine_round_trips(tmp_path):
    machine = BoostedMachine()
    machine.add_weak_machine(ParityMachine(2), 0.75)
    machine.add_weak_machine(StumpMachine(0.5, 1, 0), 0.25)
    machine.save(tmp_path / "custom.hdf5")
    loaded = BoostedMachine.load(tmp_path / "custom.hdf5")
    assert loaded.weak_machines == machine.weak_machines
    features = np.array([[0, 0, 3], [1, 0, 4]])
    np.testing.assert_array_equal(loaded(features), [-0.75 - 0.25, 0.75 + 0.25])


def test_registry_rejects_clashing_names_and_finds_entry_points(monkeypatch):
    class Clash(StumpMachine):
        machine_type = "StumpMachine"

    with pytest.raises(ValueError, match="already registered"):
        registry.register_weak_machine(Clash)

    class PluginMachine(ParityMachine):
        machine_type = "plugin.Machine"

    class FakeEntryPoint:
        name = "plugin.Machine"

        def load(self):
            return PluginMachine

    monkeypatch.setattr(registry, "_entry_points_loaded", set())
    monkeypatch.setattr(registry.metadata, "entry_points",
                        lambda group: [FakeEntryPoint()] if group == registry.WEAK_MACHINE_GROUP else [])
    assert registry.weak_machine_class("plugin.Machine") is PluginMachine
    assert {"StumpMachine", "LUTMachine", "plugin.Machine"} <= set(registry.weak_machine_types())
    with pytest.raises(KeyError, match="unknown weak machine type"):
        registry.weak_machine_class("nothing.Here")


def test_saved_files_get_ordinary_permissions(tmp_path):
    path = tmp_path / "model.hdf5"
    random_machine("stump", 2).save(path)
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    path.chmod(0o640)
    random_machine("stump", 3).save(path)  # overwriting keeps the file's mode
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


def test_saving_into_a_group_that_holds_a_machine_is_refused_and_changes_nothing(tmp_path):
    with h5py.File(tmp_path / "f.hdf5", "w") as h5:
        group = h5.create_group("model")
        group.attrs["version"] = 99
        group["Weights"] = np.zeros(3)
        with pytest.raises(ValueError, match="target: group /model already holds \\['Weights', 'version'\\]"):
            random_machine("stump", 2).save(group)
        assert group.attrs["version"] == 99 and list(group.keys()) == ["Weights"]
