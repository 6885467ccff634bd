"""The inputs of OpenCV's cascade training: .vec files of samples (as opencv_traincascade reads them) and info
files of boxes, with their bad input."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from bob_boost import DataFormatError
from bob_boost.vision.opencv_samples import read_info, read_vec, write_vec


def _hand_vec(path, samples) -> None:
    """A .vec file written field by field as opencv_traincascade reads it."""
    count, height, width = samples.shape
    with open(path, "wb") as stream:
        stream.write(struct.pack("<iihh", count, width * height, 0, 0))
        for sample in samples:
            stream.write(b"\x00" + struct.pack(f"<{width * height}h", *sample.ravel().tolist()))


def test_vec_files_read_as_opencv_reads_them_and_round_trip(tmp_path):
    samples = np.random.default_rng(0).integers(0, 256, (7, 6, 5), dtype=np.uint8)
    _hand_vec(tmp_path / "hand.vec", samples)
    assert np.array_equal(read_vec(tmp_path / "hand.vec", 5, 6), samples)
    write_vec(samples, tmp_path / "written.vec")
    assert (tmp_path / "written.vec").read_bytes() == (tmp_path / "hand.vec").read_bytes()
    assert read_vec(tmp_path / "written.vec", 5, 6).shape == (7, 6, 5)


def test_bad_vec_files_and_samples(tmp_path):
    samples = np.zeros((3, 4, 4), np.uint8)
    write_vec(samples, tmp_path / "s.vec")
    with pytest.raises(DataFormatError, match=r"s.vec: samples of 16 pixels, not 5x4 = 20"):
        read_vec(tmp_path / "s.vec", 5, 4)
    data = (tmp_path / "s.vec").read_bytes()
    (tmp_path / "short.vec").write_bytes(data[:-5])
    with pytest.raises(DataFormatError, match="short.vec: its header says 3 samples of 16 pixels, but the file "
                                              "holds 2"):
        read_vec(tmp_path / "short.vec", 4, 4)
    (tmp_path / "tiny.vec").write_bytes(data[:6])
    with pytest.raises(DataFormatError, match="tiny.vec: not a .vec file"):
        read_vec(tmp_path / "tiny.vec", 4, 4)
    (tmp_path / "huge.vec").write_bytes(struct.pack("<iihh", 2 ** 31 - 1, 16, 0, 0))
    with pytest.raises(DataFormatError, match="huge.vec: its header says 2147483647 samples"):
        read_vec(tmp_path / "huge.vec", 4, 4)
    with pytest.raises(ValueError, match="samples: expected"):
        write_vec(np.full((1, 2, 2), 300), tmp_path / "bad.vec")
    assert not (tmp_path / "bad.vec").exists()


def test_info_files_and_their_bad_lines(tmp_path):
    iio = pytest.importorskip("imageio.v3", reason="reading images needs the faces extra (imageio)")
    (tmp_path / "images").mkdir()
    iio.imwrite(tmp_path / "images" / "a.png", np.zeros((40, 60), np.uint8))
    info = tmp_path / "positives.txt"
    info.write_text("images/a.png 2 1 2 20 20 30 10 24 24\n\nimages/a.png 0\n")
    entries = read_info(info)
    assert [(str(path.name), boxes.tolist()) for path, boxes in entries] == [
        ("a.png", [[1, 2, 20, 20], [30, 10, 24, 24]]), ("a.png", [])]
    bad = {"images/a.png 1 50 10 20 20": r"line 1: box \[50, 10, 20, 20\] falls outside images/a.png \(60x40\)",
           "images/b.png 1 0 0 5 5": "line 1: image images/b.png does not exist",
           "images/a.png 2 0 0 5 5": "line 1: 2 boxes announced, 1 given",
           "images/a.png one 0 0 5 5": "line 1: expected 'image count x y w h ...'",
           "images/a.png 1 0 0 0 5": "line 1: a box has a negative corner or an empty size"}
    for line, message in bad.items():
        info.write_text(line + "\n")
        with pytest.raises(DataFormatError, match=message):
            read_info(info)
