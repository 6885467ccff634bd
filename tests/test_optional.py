"""Imports: optional dependencies only when used (a missing one is an error naming its pip extra), and old
import paths that still resolve."""
import builtins
import io
import subprocess
import sys

import numpy as np
import pytest

from bob_boost import Boosting, BoostedMachine, BobBoostError, ExponentialLoss, StumpTrainer
from bob_boost._optional import EXTRAS, import_or_none, optional_import
from bob_boost.cli import main
from bob_boost.io import _delimited
from bob_boost.io.tables import read_table
from bob_boost.progress import Progress


@pytest.fixture
def block(monkeypatch):
    """``block(name)`` makes importing the top-level package ``name`` (and its modules) fail, as when it is
    not installed, even if the test process imported it before."""
    real_import = builtins.__import__
    blocked = set()

    def guarded(name, *args, **kwargs):
        if name.partition(".")[0] in blocked:
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", guarded)
    return blocked.add


def _advice(extra):
    return f'pip install "bob_boost[{extra}]"'


@pytest.mark.parametrize("module", sorted(EXTRAS))
def test_blocked_import_names_the_distribution_and_the_extra(block, module):
    distribution, extra = EXTRAS[module]
    block(module)
    with pytest.raises(ImportError, match=f"^reading Parquet needs {distribution}: ") as caught:
        optional_import(module, "reading Parquet")
    assert str(caught.value).endswith(_advice(extra))
    assert isinstance(caught.value.__cause__, ImportError)  # what failed stays in the traceback
    assert import_or_none(module) is None


def test_optional_import_gives_the_module_and_raises_the_type_asked_for(block):
    pytest.importorskip("matplotlib")
    assert optional_import("matplotlib.figure", "plotting").__name__ == "matplotlib.figure"
    block("matplotlib")
    with pytest.raises(BobBoostError, match="plotting needs matplotlib"):
        optional_import("matplotlib.figure", "plotting", BobBoostError)


def test_a_module_without_an_extra_is_a_bug_not_a_missing_package():
    with pytest.raises(KeyError):
        optional_import("numpy", "arrays")


def test_import_bob_boost_imports_no_optional_package():
    code = ("import bob_boost, sys; print(sorted(m for m in ('matplotlib', 'tqdm', 'onnx', 'onnxruntime', 'skimage', "
            "'imageio', 'pandas', 'sklearn', 'dask', 'distributed') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.strip() == "[]"


def test_plots_without_matplotlib(block):
    from bob_boost.plots import plot_error_curves

    block("matplotlib")
    with pytest.raises(ImportError, match="plotting needs matplotlib") as caught:
        plot_error_curves({"training": [0.1]})
    assert str(caught.value).endswith(_advice("plot"))


def test_progress_without_tqdm(block):
    targets = np.array([1.0, -1.0])
    block("tqdm")
    with pytest.raises(ImportError, match="bar=True needs tqdm") as caught:
        Progress(2, ExponentialLoss(), targets, bar=True)
    assert str(caught.value).endswith(_advice("progress"))

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    # on a terminal a bar is only preferred: without tqdm, plain lines
    stream = Terminal()
    with Progress(1, ExponentialLoss(), targets, stream=stream) as progress:
        progress(0, BoostedMachine(number_of_outputs=1), np.zeros(2))
    assert stream.getvalue().startswith("round 1/1: loss 1")


def test_onnx_export_without_onnx(block):
    from bob_boost.onnx import to_onnx

    block("onnx")
    with pytest.raises(ImportError, match="ONNX export needs onnx") as caught:
        to_onnx(BoostedMachine(number_of_outputs=1))
    assert str(caught.value).endswith(_advice("onnx"))


def test_face_data_and_images_without_scikit_image_or_imageio(block, tmp_path):
    from bob_boost.vision.data import MissingExtraError, lfw_windows, read_image, write_image

    block("skimage")
    block("imageio")
    with pytest.raises(MissingExtraError, match="the face data needs scikit-image") as caught:
        lfw_windows()
    assert str(caught.value).endswith(_advice("faces"))
    with pytest.raises(MissingExtraError, match="reading and writing images needs imageio") as caught:
        write_image(tmp_path / "image.png", np.zeros((2, 2), dtype=np.uint8))
    assert str(caught.value).endswith(_advice("faces"))
    assert isinstance(caught.value, ImportError) and isinstance(caught.value, BobBoostError)
    (tmp_path / "file.png").write_bytes(b"not read")
    with pytest.raises(ValueError, match="reading and writing images needs imageio"):
        read_image(tmp_path / "file.png")  # a reader's failure is reported as a file that cannot be read


def test_tables_without_pandas_are_read_by_numpy(block, monkeypatch, tmp_path):
    monkeypatch.setattr(_delimited, "PANDAS_MIN_CHARS", 0)  # pandas' reader for every table, when it is there
    block("pandas")
    assert _delimited._pandas_numbers("1,2\n3,4\n", ",") is None
    (tmp_path / "table.csv").write_text("1,2,0\n3,4,1\n")
    table = read_table(tmp_path / "table.csv")
    assert table.features.tolist() == [[1, 2], [3, 4]] and table.labels.tolist() == [0, 1]


def _saved_machine(path):
    features = np.array([[0.0], [1.0], [2.0], [3.0]])
    targets = np.array([-1.0, -1.0, 1.0, 1.0])
    Boosting(StumpTrainer(), ExponentialLoss()).train(features, targets, 1).save(path)
    return path


@pytest.mark.parametrize("argv, package, extra", [
    (["export", "{model}", "-o", "{tmp}/model.onnx"], "onnx", "onnx"),
    (["plot", "features", "{model}", "-o", "{tmp}/features.png"], "matplotlib", "plot"),
])
def test_command_line_without_the_extra_is_a_one_line_error(block, tmp_path, capsys, argv, package, extra):
    model = _saved_machine(tmp_path / "model.hdf5")
    block(package)
    code = main([a.format(model=model, tmp=tmp_path) for a in argv])
    err = capsys.readouterr().err
    assert code == 1 and len(err.splitlines()) == 1
    assert f"needs {package}: " in err and err.rstrip().endswith(_advice(extra))


def test_old_binning_path_warns_and_resolves_to_bob_boost_binning(monkeypatch):
    import bob_boost.binning

    monkeypatch.delitem(sys.modules, "bob_boost.trainers.binning", raising=False)  # imported afresh, so it warns
    with pytest.warns(DeprecationWarning, match=r"import from bob_boost\.binning instead") as caught:
        import bob_boost.trainers.binning as old
    assert caught[0].filename == __file__  # the warning points at the line that imports the old path
    assert old.__all__ and all(getattr(old, name) is getattr(bob_boost.binning, name) for name in old.__all__)


def test_shared_constants_resolve_where_they_did():
    from bob_boost import recipes
    from bob_boost.trainers import lut, multiclass, tree_growing
    from bob_boost.weak_trainers import tree

    assert recipes.SELECTION_STYLES is lut.SELECTION_STYLES
    assert multiclass.TIE_TOLERANCE is tree_growing.TIE_TOLERANCE is tree.TIE_TOLERANCE
    pytest.importorskip("sklearn")
    from bob_boost.sklearn import _base

    assert _base.WEAK_LEARNERS is recipes.WEAK_LEARNERS


def test_weak_trainers_moved_to_weak_trainers_keep_their_old_module_paths():
    """bob_boost.trainers.{stump, lut, multiclass, tree_growing} are the modules now under bob_boost.weak_trainers,
    for imports and for pickles written before they moved (which name the old module)."""
    import importlib
    import pickle

    for name in ("stump", "lut", "multiclass", "tree_growing"):
        assert importlib.import_module(f"bob_boost.trainers.{name}") is importlib.import_module(
            f"bob_boost.weak_trainers.{name}")
    # and the step equations, now with the other step rules
    assert importlib.import_module("bob_boost.weak_trainers.stump_pool.roots") is importlib.import_module(
        "bob_boost.boosting.roots")
    old = pickle.dumps(StumpTrainer(max_bins=64), protocol=0).replace(b"bob_boost.weak_trainers.stump",
                                                                      b"bob_boost.trainers.stump")
    assert b"bob_boost.trainers.stump\n" in old
    script = "import pickle, sys; trainer = pickle.loads(sys.stdin.buffer.read()); print(type(trainer).__name__, " \
             "trainer.max_bins)"
    done = subprocess.run([sys.executable, "-c", script], input=old, capture_output=True, check=True)
    assert done.stdout.split() == [b"StumpTrainer", b"64"]


@pytest.mark.parametrize("package, module, extra", [("dask", "bob_boost.dask", "dask"),
                                                     ("distributed", "bob_boost.dask", "dask"),
                                                     ("sklearn", "bob_boost.sklearn", "sklearn")])
@pytest.mark.long
def test_the_packages_of_the_subpackages_come_through_the_one_home(package, module, extra):
    """scikit-learn and Dask are imported through bob_boost._optional too: the same message, naming the extra."""
    missing = subprocess.run([sys.executable, "-c", f"import sys; sys.modules[{package!r}] = None; import {module}"],
                             capture_output=True, text=True)
    assert missing.returncode != 0
    assert f"ImportError: {module} needs {EXTRAS[package][0]}: {_advice(extra)}" in missing.stderr
