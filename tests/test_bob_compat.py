"""bob_boost.compat.bob beyond bob's own suite (tests/bob_suite): bob's files, signs, call forms, bad input."""
from __future__ import annotations

import argparse
import gc
import logging
import io
import sys
import weakref
from pathlib import Path

import h5py
import numpy as np
import pytest

import bob_boost
import bob_boost.compat
import bob_boost.compat.bob as boosting
from bob_boost.compat.bob import utils
from bob_boost.compat.io_base import HDF5File
from bob_boost.exceptions import InvalidTypeError, InvalidValueError, ModelFormatError

DATA = Path(__file__).resolve().parent / "data"
SMALL_MNIST = DATA / "mnist_small.hdf5"
FIXTURES = ("stump", "lut", "lut_multi")


def small_digits(digits=(5, 6), count=20):
    """Images of ``digits`` (the first ``count`` training images each) and +1 / -1 or one-vs-rest targets."""
    with h5py.File(SMALL_MNIST, "r") as h5:
        data, labels = h5["train/data"][()], h5["train/labels"][()]
    rows = np.concatenate([np.flatnonzero(labels == d)[:count] for d in digits])
    features, labels = data[rows].astype(np.uint16), labels[rows]
    if len(digits) == 2:
        return features, np.where(labels == digits[0], 1.0, -1.0)
    return features, np.where(labels[:, np.newaxis] == np.array(digits), 1.0, -1.0)


# -- bob's own files --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", FIXTURES)
def test_machines_bob_saved_score_exactly_as_bob_scored_them(name):
    machine = boosting.BoostedMachine(str(DATA / "bob_models" / f"{name}.hdf5"))
    reference = np.load(DATA / "bob_models" / f"{name}.npz")
    scores = np.zeros(reference["scores"].shape)
    labels = np.zeros(reference["labels"].shape)
    machine(reference["features"], scores, labels)
    np.testing.assert_array_equal(scores, reference["scores"])  # bit for bit: bob's order of additions
    np.testing.assert_array_equal(labels, reference["labels"])
    single = reference["features"][0]
    if machine.outputs == 1:
        assert machine(single) == reference["scores"][0]
    else:
        vector = np.zeros(machine.outputs)
        machine(single, vector)
        np.testing.assert_array_equal(vector, reference["scores"][0])


@pytest.mark.parametrize("name", FIXTURES)
def test_bob_files_keep_their_weights_and_go_back_unchanged(name, tmp_path):
    source = DATA / "bob_models" / f"{name}.hdf5"
    def items(group):
        """Every dataset and attribute of ``group`` (bob's: the root and a weak machine's group)."""
        found = {key: group[key][()] for key in group if isinstance(group[key], h5py.Dataset)}
        found.update({f"@{key}": np.asarray(value) for key, value in group.attrs.items()})
        return found

    with h5py.File(source, "r") as h5:
        machine = boosting.BoostedMachine(h5)
        stored = h5["Weights"][()]
        bobs = {"/": items(h5), "WeakMachine_0": items(h5["WeakMachine_0"])}
    np.testing.assert_array_equal(machine.weights, stored)  # bob's signs, as bob wrote them
    machine.save(tmp_path / "again.hdf5")
    with h5py.File(tmp_path / "again.hdf5", "r") as h5:
        for where, expected in bobs.items():
            written = items(h5[where])
            for key, value in expected.items():  # everything bob wrote, with its type and shape (extras aside)
                assert written[key].dtype == value.dtype and written[key].shape == value.shape, (where, key)
                np.testing.assert_array_equal(written[key], value)
        assert sorted(k for k in h5 if k.startswith("WeakMachine_")) == \
            sorted(f"WeakMachine_{i}" for i in range(stored.shape[0]))


def test_bob_boost_reads_compat_files_and_compat_reads_bob_boost_files(tmp_path):
    features, targets = small_digits()
    machine = boosting.Boosting(boosting.LUTTrainer(256), boosting.LogitLoss()).train(features, targets, 3)
    machine.save(str(tmp_path / "compat.hdf5"))
    with h5py.File(tmp_path / "compat.hdf5", "r") as ours, h5py.File(DATA / "bob_models" / "lut.hdf5", "r") as bobs:
        for key in ("LUT", "Indices"):  # a weak machine as bob writes one
            mine, theirs = ours["WeakMachine_0"][key], bobs["WeakMachine_0"][key]
            assert (mine.dtype, mine.shape) == (theirs.dtype, theirs.shape)
        assert ours["WeakMachine_0"].attrs["MachineType"].dtype == bobs["WeakMachine_0"].attrs["MachineType"].dtype
    core = bob_boost.BoostedMachine.load(tmp_path / "compat.hdf5")
    np.testing.assert_allclose(core(features), machine(features), rtol=1e-14, atol=1e-14)
    trained = bob_boost.Boosting(bob_boost.StumpTrainer(max_bins=None), bob_boost.ExponentialLoss()).train(
        features.astype(float), targets, 3)
    trained.save(tmp_path / "core.hdf5")
    view = boosting.BoostedMachine(tmp_path / "core.hdf5")
    assert all(isinstance(w, boosting.StumpMachine) for w in view.weak_machines)
    np.testing.assert_allclose(view(features), trained(features), rtol=1e-14, atol=1e-14)


def test_save_into_an_open_file_flushes_and_keeps_no_reference(tmp_path):
    machine = boosting.BoostedMachine(DATA / "bob_models" / "lut.hdf5")
    path = tmp_path / "open.hdf5"
    handle = h5py.File(path, "w")
    group = handle.create_group("digits")
    machine.save(group)
    # the bytes on disk already hold the machine while the file is still open
    on_disk = h5py.File(io.BytesIO(path.read_bytes()), "r")
    assert boosting.BoostedMachine(on_disk["digits"]).weights.shape == machine.weights.shape
    reference = weakref.ref(handle)
    del handle, group
    gc.collect()
    assert reference() is None
    np.testing.assert_array_equal(boosting.BoostedMachine(h5py.File(path, "r")["digits"]).weights, machine.weights)


def test_weak_machines_round_trip_through_hdf5file_groups(tmp_path):
    stump = boosting.StumpMachine(2.5, -1.0, 3)
    table = boosting.LUTMachine(np.array([[1.0, -1.0], [-1.0, 1.0], [1.0, 1.0]]), np.array([0, 2], np.int32))
    with HDF5File(tmp_path / "weak.hdf5", "w") as hdf5:
        for key, machine in (("stump", stump), ("lut", table)):
            hdf5.create_group(key)
            hdf5.cd(key)
            machine.save(hdf5)
            hdf5.cd("..")
        assert hdf5.sub_groups(relative=True, recursive=False) == ["lut", "stump"]
    with HDF5File(tmp_path / "weak.hdf5") as hdf5:
        hdf5.cd("/stump")
        again = boosting.StumpMachine(hdf5)
        assert (again.threshold, again.polarity, again.index) == (2.5, -1.0, 3)
        hdf5.cd("../lut")
        np.testing.assert_array_equal(boosting.LUTMachine(hdf5).lut, table.lut)
        with pytest.raises(ModelFormatError, match="hdf5: .*holds a LUTMachine, not a StumpMachine"):
            boosting.StumpMachine(hdf5)


# -- training in bob's sign convention -----------------------------------------------------------------------------
def test_weak_trainers_give_bob_boosts_machines_with_bobs_signs():
    features, targets = small_digits()
    gradient = -targets  # the exponential loss's gradient at zero scores
    stump = boosting.StumpTrainer().train(features.astype(float), gradient)
    core_stump = bob_boost.StumpTrainer(max_bins=None).train(features.astype(float), gradient)
    assert (stump.threshold, stump.index, stump.polarity) == (core_stump.threshold, core_stump.index,
                                                              -core_stump.polarity)
    multi_features, multi_targets = small_digits((1, 4, 7, 9))
    for style in ("shared", "independent"):
        table = boosting.LUTTrainer(256, 4, style).train(multi_features, -multi_targets)
        core_table = bob_boost.LUTTrainer(256, 4, style).train(multi_features, -multi_targets)
        np.testing.assert_array_equal(table.lut, -core_table.look_up_tables)
        np.testing.assert_array_equal(table.feature_indices(), core_table.feature_indices())


def test_lut_tables_are_summed_in_bobs_order():
    # the gradient of value 0 cancels: its sum is a rounding error whose sign depends on the order of additions
    gradient = np.array([0.4, -0.1, -0.3, 1.0, 1.0, 1.0, 1.0])
    features = np.array([[0]] * 3 + [[1]] * 4, dtype=np.uint16)
    backwards = 0.0
    for value in gradient[2::-1]:  # bob adds from the last sample to the first
        backwards += value
    assert backwards == 0.0 and (gradient[0] + gradient[1]) + gradient[2] > 0
    assert boosting.weighted_histogram(features[:, 0], gradient, 2)[0] == 0.0
    lut = boosting.LUTTrainer(2).train(features, gradient[:, np.newaxis]).lut
    np.testing.assert_array_equal(lut[:, 0], [-1.0, 1.0])  # bob: +1 only where the sum is positive


def test_boosting_gives_negative_weights_and_bob_boosts_products():
    features, targets = small_digits()
    machine = boosting.Boosting(boosting.LUTTrainer(256), boosting.LogitLoss()).train(features, targets, 4)
    assert machine.weights.shape == (4, 1) and np.all(machine.weights < 0)
    core = bob_boost.Boosting(bob_boost.LUTTrainer(256), bob_boost.LogitLoss(), step_rule="lbfgs").train(
        features, targets, 1)
    # round 1 is the same weak machine with the opposite sign; bob's L-BFGS stops earlier than bob_boost's
    np.testing.assert_array_equal(machine.weak_machines[0].lut, -core.weak_machines[0].look_up_tables)
    assert 0 < -machine.weights[0, 0] <= core.weights[0, 0]


def test_bobs_multi_shared_weights_lie_within_lbfgs_tolerance_of_the_minimiser():
    # bob's test03_multi_shared under every OpenBLAS kernel (tests/conftest.py expects it to miss bob's printed
    # weights under kernels other than SkylakeX's): the fitted weights and bob's printed ones are both L-BFGS-B
    # stops at SciPy's default tolerance, near each output's own minimiser (the logit loss is separable per output)
    import scipy.optimize
    digits = (1, 4, 7, 9)
    features, targets = small_digits(digits)
    machine = boosting.Boosting(boosting.LUTTrainer(256, len(digits), "shared"), boosting.LogitLoss()).train(
        features, targets, 1)
    outputs = np.empty(targets.shape)
    machine.weak_machines[0](features, outputs)
    loss = boosting.LogitLoss()

    def slope(a, j):
        alpha = np.zeros(len(digits))
        alpha[j] = a
        return loss.loss_gradient_sum(alpha, targets, np.zeros(targets.shape), outputs)[j]
    minimiser = np.array([scipy.optimize.brentq(slope, -10, 10, args=(j,), xtol=1e-15) for j in range(4)])
    bobs = -np.array([2.5123104, 2.19725677, 2.34455412, 1.94584326])
    assert np.all(np.abs(bobs - minimiser) <= 5e-5 * np.abs(minimiser))
    assert np.all(np.abs(machine.weights[0] - minimiser) <= 5e-5 * np.abs(minimiser))
    assert np.all(np.abs(machine.weights[0] - bobs) <= 1e-4 * np.abs(bobs))


def test_continuing_a_machine_extends_it_in_place_as_training_at_once():
    features, targets = small_digits()
    booster = boosting.Boosting(boosting.StumpTrainer(), boosting.ExponentialLoss())
    at_once = booster.train(features.astype(float), targets, 3)
    machine = booster.train(features.astype(float), targets, 1)
    assert booster.train(features.astype(float), targets, 2, boosted_machine=machine) is machine
    np.testing.assert_array_equal(machine.weights, at_once.weights)
    assert [m.core for m in machine.weak_machines] == [m.core for m in at_once.weak_machines]


def test_a_round_without_gain_keeps_its_zero_weight_as_bob_did():
    # every sample twice, once per class: no table gains anything, L-BFGS converges at 0, bob added it anyway
    features = np.tile(np.arange(4, dtype=np.uint16)[:, np.newaxis], (2, 3))
    targets = np.repeat([1.0, -1.0], 4)
    machine = boosting.Boosting(boosting.LUTTrainer(4), boosting.LogitLoss()).train(features, targets, 3)
    np.testing.assert_array_equal(machine.weights, np.zeros((3, 1)))
    scores, labels = np.ones(8), np.zeros(8)
    machine(features, scores, labels)
    np.testing.assert_array_equal(scores, np.zeros(8))
    np.testing.assert_array_equal(labels, -np.ones(8))  # +1 only above 0


def test_an_empty_machine_scores_zero_as_bobs():
    machine = boosting.BoostedMachine()
    scores, labels = np.ones((2, 3)), np.zeros((2, 3))
    machine(np.zeros((2, 5), np.uint16), scores, labels)
    np.testing.assert_array_equal(scores, np.zeros((2, 3)))
    np.testing.assert_array_equal(labels, [[1, -1, -1], [1, -1, -1]])  # the first of equal maxima
    assert machine(np.zeros(5, np.uint16)) == 0.0 and machine.outputs == 0


def test_boosting_drives_any_weak_trainer_with_bobs_train():
    class Wrapped:
        """A bob-style weak trainer of the user's: train(features, loss_gradient) -> WeakMachine."""

        def __init__(self):
            self.inner, self.calls = boosting.StumpTrainer(), 0

        def train(self, features, loss_gradient):
            self.calls += 1
            return self.inner.train(features, loss_gradient)

    features, targets = small_digits()
    custom = Wrapped()
    machine = boosting.Boosting(custom, boosting.ExponentialLoss()).train(features.astype(float), targets, 3)
    direct = boosting.Boosting(boosting.StumpTrainer(), boosting.ExponentialLoss()).train(
        features.astype(float), targets, 3)
    assert custom.calls == 3
    np.testing.assert_array_equal(machine.weights, direct.weights)
    with pytest.raises(InvalidTypeError, match="weak_trainer: needs a train"):
        boosting.Boosting(object(), boosting.ExponentialLoss())


def test_compute_threshold_of_a_constant_feature_is_bobs_nothing():
    assert boosting.StumpTrainer().compute_threshold(np.full(6, 3.0), np.arange(6.0) - 2) == (1.0, 0.0, 0.0)


def test_weighted_histogram_equals_numpys_in_both_forms():
    rng = np.random.default_rng(3)
    values, weights = rng.integers(0, 20, 300).astype(np.uint16), rng.normal(size=300)
    expected = np.histogram(values, bins=20, range=(0, 20), weights=weights)[0]
    np.testing.assert_allclose(boosting.weighted_histogram(values, weights, 20), expected, rtol=1e-12)
    filled = np.zeros(20)
    assert boosting.weighted_histogram(values, weights, filled) is filled
    np.testing.assert_allclose(filled, expected, rtol=1e-12)


# -- losses -------------------------------------------------------------------------------------------------------
def test_logit_loss_is_bobs_formula_and_finite_where_bobs_overflowed():
    loss = boosting.LogitLoss()
    targets, scores = np.array([[1.0], [-1.0], [1.0]]), np.array([[0.3], [0.7], [-1000.0]])
    values, gradient = loss.loss(targets, scores), loss.loss_gradient(targets, scores)
    e = np.exp(-targets[:2] * scores[:2])
    np.testing.assert_array_equal(values[:2], np.log(1 + e))
    assert values[2, 0] == pytest.approx(1000.0) and gradient[2, 0] == pytest.approx(-1.0)
    np.testing.assert_array_equal(loss.loss_and_gradient(targets, scores)[1], gradient)


def test_jesorsky_loss_is_bobs_distance_over_the_eye_distance():
    targets = np.array([[10.0, 10.0, 10.0, 30.0, 20.0, 20.0]])  # eyes at (10, 10) and (10, 30): 20 apart
    scores = targets + np.array([[3.0, 4.0, 0.0, 0.0, 0.0, 1.0]])  # the points are off by 5, 0 and 1
    assert boosting.JesorskyLoss().loss(targets, scores)[0, 0] == pytest.approx(6.0 / 20.0)
    assert boosting.JesorskyLoss().loss_sum(0.0, targets, scores, scores).shape == (1,)


# -- bob's example with its -c option (HDF5File) ----------------------------------------------------------------------
def test_bobs_example_saves_and_reloads_its_classifiers(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MNIST_HDF5", str(SMALL_MNIST))
    from bob_suite.examples import mnist

    options = ["-t", "lut", "-r", "3", "-n", "30", "-d", "1", "4", "7", "-c", str(tmp_path / "classifiers.hdf5")]
    mnist.main(options)
    trained = capsys.readouterr().out.splitlines()
    mnist.main(options)  # the file exists now: the classifiers are read from it
    loaded = capsys.readouterr().out.splitlines()
    # two lines (count and accuracy) per classifier: training then test performance, then the test alone
    assert len(trained) == 12 and loaded == trained[6:]
    with h5py.File(tmp_path / "classifiers.hdf5", "r") as h5:
        assert sorted(h5) == ["1-vs-4", "1-vs-7", "4-vs-7"]
        assert h5["1-vs-4/Weights"].shape == (3, 1)


# -- bad input ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stump_machine():
    return boosting.BoostedMachine(DATA / "bob_models" / "stump.hdf5")


@pytest.mark.parametrize("predictions, error, message", [
    (np.zeros(3, dtype=np.int64), InvalidTypeError, "predictions: must be a float64 array"),
    (np.zeros((3, 2)), InvalidValueError, r"predictions: expected shape \(3,\) or \(3, 1\), got \(3, 2\)"),
    ([0.0, 0.0, 0.0], InvalidTypeError, "predictions: expected a numpy.ndarray to fill"),
])
def test_wrong_output_arrays_are_named(stump_machine, predictions, error, message):
    features = np.zeros((3, 784), np.uint16)
    with pytest.raises(error, match=message):
        stump_machine(features, predictions)


def test_wrong_labels_and_a_vector_for_a_multi_output_sample_are_named(stump_machine):
    features = np.zeros((3, 784), np.uint16)
    with pytest.raises(InvalidValueError, match=r"labels: expected shape \(3,\)"):
        stump_machine(features, np.zeros(3), np.zeros((3, 1)))
    with pytest.raises(InvalidTypeError, match="labels: must be a float64 array"):
        stump_machine(features, np.zeros(3), np.zeros(3, np.float32))
    multi = boosting.BoostedMachine(DATA / "bob_models" / "lut_multi.hdf5")
    with pytest.raises(InvalidValueError, match=r"predictions: the machine has 10 outputs; pass .* \(10,\)"):
        multi(features[0])


def test_a_file_or_group_without_a_machine_is_named(tmp_path):
    with h5py.File(tmp_path / "data.hdf5", "w") as h5:
        h5.create_dataset("array", data=np.zeros(3))
        h5.create_group("empty")
    with pytest.raises(ModelFormatError, match="hdf5: .*data.hdf5.*not a boosted machine"):
        boosting.BoostedMachine(tmp_path / "data.hdf5")
    with h5py.File(tmp_path / "data.hdf5", "r") as h5, pytest.raises(ValueError, match="hdf5: .*/empty"):
        boosting.BoostedMachine(h5["empty"])
    with pytest.raises(InvalidTypeError, match="hdf5: expected a path, an h5py.File"):
        boosting.BoostedMachine(42)
    with pytest.raises(FileNotFoundError, match="hdf5: no such file"):
        boosting.BoostedMachine(tmp_path / "missing.hdf5")


def test_mnist_without_data_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.delenv("MNIST_HDF5", raising=False)
    monkeypatch.setenv("BOB_BOOST_DATA", str(tmp_path / "cache"))
    monkeypatch.setattr(utils, "shared_mnist_file", lambda: tmp_path / "shared" / "mnist_data.hdf5")
    with pytest.raises(FileNotFoundError) as raised:
        utils.MNIST()
    message = str(raised.value)
    for place in ("$MNIST_HDF5 (not set)", str(tmp_path / "shared" / "mnist_data.hdf5"), str(tmp_path / "cache")):
        assert place in message
    monkeypatch.setenv("MNIST_HDF5", str(tmp_path / "nowhere.hdf5"))
    with pytest.raises(FileNotFoundError, match="MNIST_HDF5: names .*nowhere.hdf5"):
        utils.MNIST()


def test_mnist_looks_beside_the_checkout_then_in_the_download_cache(tmp_path, monkeypatch):
    checkout = Path(__file__).resolve().parents[1]
    assert utils.shared_mnist_file() == checkout.parent / "shared" / "data" / "mnist" / "mnist_data.hdf5"
    monkeypatch.delenv("MNIST_HDF5", raising=False)
    monkeypatch.setattr(utils, "shared_mnist_file", lambda: SMALL_MNIST)
    assert utils.MNIST().data("train")[0].shape == (400, 784)
    monkeypatch.setattr(utils, "shared_mnist_file", lambda: tmp_path / "missing.hdf5")
    monkeypatch.setenv("BOB_BOOST_DATA", str(tmp_path))
    (tmp_path / "mnist").mkdir()
    images = np.arange(6 * 784, dtype=np.uint8).reshape(6, 28, 28)
    digits = np.array([3, 1, 3, 0, 1, 3], np.uint8)
    for key, array in (("train_data", images), ("train_labels", digits), ("test_data", images[:2]),
                       ("test_labels", digits[:2])):
        bob_boost.datasets.write_idx(tmp_path / "mnist" / bob_boost.datasets.MNIST_FILES[key][0], array)
    data, labels = utils.MNIST().data(labels=3)
    assert labels.tolist() == [3, 3, 3, 3]  # train's three, then test's one
    np.testing.assert_array_equal(data[:3], images[[0, 2, 5]].reshape(3, 784))


def test_mnist_serves_bobs_groups_and_labels(monkeypatch):
    monkeypatch.setenv("MNIST_HDF5", str(SMALL_MNIST))
    database = utils.MNIST()
    images, labels = database.data("test", labels=[3, 0])
    assert images.shape == (80, 784) and images.dtype == np.uint8 and set(labels.tolist()) == {0, 3}
    both, _ = database.data(labels=7)
    assert both.shape == (80, 784)
    with pytest.raises(InvalidValueError, match="groups: must name 'train' or 'test'"):
        database.data("dev")


# -- the aliases --------------------------------------------------------------------------------------------------
def test_aliases_install_and_remove_only_their_modules(monkeypatch):
    for name in ("bob", "bob.learn", "bob.io", "bob.core", *bob_boost.compat.ALIASES):
        monkeypatch.delitem(sys.modules, name, raising=False)  # restored after the test, as they were
    bob_boost.compat.install_aliases()
    import bob.core
    import bob.io.base
    import bob.learn.boosting.utils

    assert bob.learn.boosting is boosting and bob.learn.boosting.utils is utils
    assert bob.io.base.HDF5File is HDF5File and callable(bob.core.log.setup)
    bob_boost.compat.remove_aliases()
    assert not any(name == "bob" or name.startswith("bob.") for name in sys.modules)


def test_hdf5file_stand_in_reads_writes_and_moves_between_groups(tmp_path):
    with HDF5File(tmp_path / "file.hdf5", "w") as hdf5:
        hdf5.create_group("a/b")
        hdf5.cd("a")
        hdf5.set("x", 2.5)
        hdf5.set("y", np.arange(3))
        hdf5.set("y", np.arange(4))  # replaced
        assert hdf5.keys(relative=True) == ["x", "y"] and hdf5.has_key("/a/x") and hdf5.has_group("b")
        assert hdf5.sub_groups() == ["/a/b"]
        with pytest.raises(InvalidValueError, match="path: .*has no group '/a/c'"):
            hdf5.cd("c")
        with pytest.raises(InvalidValueError, match="already holds '/a/b'"):
            hdf5.create_group("b")
    with HDF5File(tmp_path / "file.hdf5") as hdf5:
        hdf5.cd("/a/b")
        hdf5.cd("..")
        assert hdf5.cwd == "/a" and hdf5.read("x").tolist() == [2.5] and hdf5.read("y").tolist() == [0, 1, 2, 3]
    with pytest.raises(InvalidValueError, match="mode: must be one of"):
        HDF5File(tmp_path / "file.hdf5", "rw")


def test_core_log_stand_in_sets_bobs_verbosity_levels():
    from bob_boost.compat import core_log

    logger = core_log.setup("bob_boost.tests.compat_log")
    assert core_log.setup("bob_boost.tests.compat_log") is logger and len(logger.handlers) == 1
    parser = argparse.ArgumentParser()
    core_log.add_command_line_option(parser)
    for flags, level in (([], "ERROR"), (["-v"], "WARNING"), (["-vv"], "INFO"), (["-vvvv"], "DEBUG")):
        core_log.set_verbosity_level(logger, parser.parse_args(flags).verbose)
        assert logger.getEffectiveLevel() == getattr(logging, level)
    with pytest.raises(InvalidValueError, match="level: must be 0 or more"):
        core_log.set_verbosity_level(logger, -1)
    logger.handlers.clear()
