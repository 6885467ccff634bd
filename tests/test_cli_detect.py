"""``bob-boost detect`` and ``bob-boost example faces``: CSV on stdout only, files, errors in one line."""
from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from bob_boost import BoostedMachine
from bob_boost.cli import main
from bob_boost.vision import Cascade, HaarFeatures, detect
from bob_boost.weak import StumpMachine

iio = pytest.importorskip("imageio.v3", reason="reading and writing images needs the faces extra (imageio)")


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _cascade() -> Cascade:
    """One stage, one stump: a window whose left half is brighter than its right half."""
    features = HaarFeatures([[0, 0, 0, 12, 12]], (12, 12))
    machine = BoostedMachine(number_of_outputs=1)
    machine.add_weak_machine(StumpMachine(0.5, 1.0, 0), 1.0)
    return Cascade(features, [(machine, 0.0)])


def _image() -> np.ndarray:
    """Grey noise with two bright-left squares, as uint8 RGB."""
    rng = np.random.default_rng(3)
    gray = rng.integers(90, 110, size=(60, 80)).astype(np.uint8)
    for top, left in ((5, 5), (30, 50)):
        gray[top:top + 20, left:left + 10] = 220
        gray[top:top + 20, left + 10:left + 20] = 30
    return np.repeat(gray[..., np.newaxis], 3, axis=2)


def _rows(text: str) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


@pytest.fixture
def files(tmp_path):
    image, cascade = tmp_path / "image.png", tmp_path / "cascade.hdf5"
    iio.imwrite(image, _image())
    _cascade().save(cascade)
    return image, cascade


def test_detect_prints_exactly_the_csv_of_detect(files, capsys):
    image, cascade = files
    code, out, err = _run(capsys, "detect", image, "--cascade", cascade, "--min-neighbors", 1)
    assert code == 0
    header, rows = _rows(out)
    assert header == ["x", "y", "width", "height", "score"]
    expected = detect(_image(), _cascade(), min_neighbors=1)
    assert len(expected) >= 2  # both squares are found
    assert [[int(v) for v in row[:4]] for row in rows] == expected.boxes.tolist()
    assert [float(row[4]) for row in rows] == pytest.approx(expected.scores.tolist())
    assert "windows scanned" in err  # the summary goes to stderr


def test_detect_out_and_draw_write_files_and_leave_stdout_empty(files, tmp_path, capsys):
    image, cascade = files
    out_csv, drawn = tmp_path / "boxes.csv", tmp_path / "drawn.png"
    code, out, _ = _run(capsys, "detect", image, "--cascade", cascade, "--min-neighbors", 1, "--out", out_csv,
                        "--draw", drawn, "--quiet")
    assert code == 0 and out == ""
    header, rows = _rows(out_csv.read_text())
    assert header == ["x", "y", "width", "height", "score"] and rows
    pixels = iio.imread(drawn)
    assert pixels.shape == _image().shape
    x, y = int(rows[0][0]), int(rows[0][1])
    assert tuple(pixels[y, x]) == (255, 0, 0)  # the box's corner is drawn in red


@pytest.mark.parametrize("option, value, name", [("--scale-factor", 1.0, "scale_factor"), ("--step", 0.5, "step"),
                                                 ("--min-neighbors", -1, "min_neighbors")])
def test_detect_bad_options_fail_in_one_line(files, capsys, option, value, name):
    image, cascade = files
    code, out, err = _run(capsys, "detect", image, "--cascade", cascade, option, value)
    assert code == 1 and out == ""
    assert name in err and len(err.strip().splitlines()) == 1


def test_detect_bad_files_fail_in_one_line(files, tmp_path, capsys):
    image, cascade = files
    text = tmp_path / "not_an_image.png"
    text.write_text("hello")
    for argv in (("detect", tmp_path / "missing.png", "--cascade", cascade),
                 ("detect", text, "--cascade", cascade),
                 ("detect", image, "--cascade", text),
                 ("detect", image, "--cascade", tmp_path / "missing.hdf5")):
        code, out, err = _run(capsys, *argv)
        assert code == 1 and out == "", argv
        assert err.startswith("bob-boost detect: error:") and len(err.strip().splitlines()) == 1, err


def test_detect_rejects_an_image_smaller_than_the_window(files, tmp_path, capsys):
    _, cascade = files
    small = tmp_path / "small.png"
    iio.imwrite(small, np.zeros((8, 8), dtype=np.uint8))
    code, out, err = _run(capsys, "detect", small, "--cascade", cascade)
    assert code == 1 and out == "" and "image" in err and "smaller" in err


def test_example_faces_prints_only_the_csv_and_saves_the_cascade(tmp_path, capsys, monkeypatch):
    pytest.importorskip("skimage", reason="the example's data come with scikit-image (the faces extra)")
    from bob_boost.vision import data, example

    # the real example trains for most of a minute; its training is tested in test_vision.py, here the
    # command's plumbing is: a tiny cascade stands in
    monkeypatch.setattr(example, "train_example_cascade", lambda n_threads=None: _cascade())
    saved = tmp_path / "example.hdf5"
    code, out, err = _run(capsys, "example", "faces", "--out", saved, "--min-neighbors", 2)
    assert code == 0
    header, rows = _rows(out)
    assert header == ["x", "y", "width", "height", "score"]
    found = detect(data.image("astronaut"), _cascade(), min_neighbors=2)
    assert [[int(v) for v in row[:4]] for row in rows] == found.boxes.tolist()
    loaded = Cascade.load(saved)
    assert loaded.features == _cascade().features and len(loaded) == 1
    assert "trained" in err
