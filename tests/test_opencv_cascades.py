"""OpenCV's cascade files: read in both layouts, run box for box as OpenCV 4's detectMultiScale (compared with
OpenCV itself, the test extra's opencv-python-headless<5), every step of its pipeline checked on its own, and
damaged or hostile files refused with a ModelFormatError."""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from bob_boost import ModelFormatError
from bob_boost.vision import opencv_xml
from bob_boost.vision.opencv import CascadeClassifier, bgr_to_gray, opencv_resize
from bob_boost.vision.opencv_xml import read_opencv_cascade

cv2 = pytest.importorskip("cv2", reason="OpenCV 4 (the test extra's opencv-python-headless<5) is the reference")
skimage_data = pytest.importorskip("skimage.data", reason="scikit-image ships the LBP cascade and the photographs")

HAAR_FILES = sorted(Path(cv2.data.haarcascades).glob("*.xml")) if hasattr(cv2, "data") else []


def _sorted_boxes(boxes) -> list[tuple[int, ...]]:
    return sorted(map(tuple, np.asarray(boxes).reshape(-1, 4).tolist()))


@pytest.fixture(scope="module")
def lbp_files(tmp_path_factory) -> tuple[str, str]:
    """scikit-image's LBP face cascade, and a copy OpenCV can load (the shipped file misspells featureParams,
    which OpenCV requires and bob_boost does not read)."""
    original = skimage_data.lbp_frontal_face_cascade_filename()
    fixed = tmp_path_factory.mktemp("lbp") / "lbpcascade_frontalface.xml"
    fixed.write_text(Path(original).read_text().replace("featuhreParams", "featureParams"))
    return original, str(fixed)


@pytest.fixture(scope="module")
def images() -> dict[str, np.ndarray]:
    """A colour (BGR) and a grey photograph of scikit-image, at half size."""
    return {"astronaut": np.ascontiguousarray(skimage_data.astronaut()[::2, ::2, ::-1]),
            "camera": np.ascontiguousarray(skimage_data.camera()[::2, ::2])}


@pytest.mark.skipif(not HAAR_FILES, reason="this OpenCV ships no Haar cascade files (OpenCV 5 dropped them)")
@pytest.mark.parametrize("path", HAAR_FILES, ids=lambda path: path.stem)
@pytest.mark.long
def test_every_shipped_haar_cascade_finds_opencvs_boxes(path, images):
    ours, theirs = CascadeClassifier(path), cv2.CascadeClassifier(str(path))
    for image in images.values():
        for neighbours in (0, 3):
            expected = theirs.detectMultiScale(image, 1.1, neighbours)
            assert _sorted_boxes(ours.detectMultiScale(image, 1.1, neighbours)) == _sorted_boxes(expected)


def test_the_lbp_cascade_finds_opencvs_boxes(lbp_files, images):
    ours, theirs = CascadeClassifier(lbp_files[0]), cv2.CascadeClassifier(lbp_files[1])
    assert not theirs.empty()
    for image in images.values():
        for neighbours, scale_factor, sizes in ((0, 1.1, {}), (3, 1.1, {}), (2, 1.25, {"minSize": (40, 40),
                                                                                         "maxSize": (120, 120)})):
            expected = theirs.detectMultiScale(image, scale_factor, neighbours, **sizes)
            found = ours.detectMultiScale(image, scale_factor, neighbours, **sizes)
            assert _sorted_boxes(found) == _sorted_boxes(expected)


def test_sizes_threads_and_channel_orders(images):
    path = cv2.data.haarcascades + "haarcascade_frontalface_alt2.xml"
    ours, theirs = CascadeClassifier(path), cv2.CascadeClassifier(path)
    image = images["astronaut"]
    # OpenCV falls back to the scale closest to minSize when none lies between the sizes
    for options in ({"minSize": (30, 30)}, {"maxSize": (60, 60)}, {"minSize": (111, 111), "maxSize": (111, 111)}):
        assert _sorted_boxes(ours.detectMultiScale(image, 1.05, 1, **options)) == _sorted_boxes(
            theirs.detectMultiScale(image, 1.05, 1, **options))
    one = ours.detect_multi_scale(image, 1.05, 0, n_threads=1)
    assert np.array_equal(one, ours.detect_multi_scale(image, 1.05, 0, n_threads=2))
    rgb = np.ascontiguousarray(image[..., ::-1])
    assert np.array_equal(ours.detect_multi_scale(rgb, 1.05, 0, channels="rgb"), one)


def test_the_pipelines_steps_are_opencvs():
    rng = np.random.default_rng(0)
    for _ in range(100):
        h, w = rng.integers(1, 50, 2)
        image = rng.integers(0, 256, (h, w), dtype=np.uint8)
        th, tw = (int(v) for v in rng.integers(1, 70, 2))
        assert np.array_equal(opencv_resize(image, tw, th),
                              cv2.resize(image, (tw, th), interpolation=cv2.INTER_LINEAR_EXACT))
    colour = rng.integers(0, 256, (17, 23, 3), dtype=np.uint8)
    assert np.array_equal(bgr_to_gray(colour), cv2.cvtColor(colour, cv2.COLOR_BGR2GRAY))
    from bob_boost.vision._opencv_kernels import integrals
    image = rng.integers(0, 256, (19, 27), dtype=np.uint8)
    total, squares, tilted = (np.zeros((20, 28), np.int32) for _ in range(3))
    integrals(image, True, total, squares, tilted)
    expected = cv2.integral3(image, sdepth=cv2.CV_32S, sqdepth=cv2.CV_64F)
    assert np.array_equal(total, expected[0]) and np.array_equal(squares, expected[1])
    assert np.array_equal(tilted, expected[2])


OLD_LAYOUT = """<?xml version="1.0"?>
<opencv_storage>
<test_cascade type_id="opencv-haar-classifier">
  <size>6 6</size>
  <stages>
    <_>
      <trees>
        <_>
          <_>
            <feature><rects><_>0 0 6 3 -1.</_><_>0 3 6 3 1.</_></rects><tilted>0</tilted></feature>
            <threshold>0.1</threshold>
            <left_val>-1.</left_val>
            <right_node>1</right_node></_>
          <_>
            <feature><rects><_>3 0 2 2 -1.</_><_>3 2 2 2 2.</_></rects><tilted>1</tilted></feature>
            <threshold>-0.05</threshold>
            <left_val>0.5</left_val>
            <right_val>1.5</right_val></_></_></trees>
      <stage_threshold>0.</stage_threshold>
      <parent>-1</parent>
      <next>-1</next></_></stages></test_cascade>
</opencv_storage>
"""


def test_the_older_layout_is_read_as_opencv_converts_it(tmp_path):
    path = tmp_path / "old.xml"
    path.write_text(OLD_LAYOUT)
    cascade = read_opencv_cascade(path)
    assert (cascade.width, cascade.height, cascade.number_of_stages) == (6, 6, 1)
    # leaves numbered as they appear, left before right: the root's left leaf 0, its right child split 1
    assert cascade.node_left.tolist() == [0, -1] and cascade.node_right.tolist() == [1, -2]
    assert cascade.leaves.tolist() == [-1.0, 0.5, 1.5] and cascade.tilted.tolist() == [False, True]
    rng = np.random.default_rng(1)
    scene = rng.integers(0, 256, (40, 50), dtype=np.uint8)
    scene[10:22, 10:22] = np.repeat(np.linspace(0, 255, 12), 12).reshape(12, 12)
    ours, theirs = CascadeClassifier(path), cv2.CascadeClassifier(str(path))
    found = ours.detectMultiScale(scene, 1.1, 0)
    assert len(found) and _sorted_boxes(found) == _sorted_boxes(theirs.detectMultiScale(scene, 1.1, 0))


def test_a_bob_boost_cascade_runs_through_the_same_front_door(tmp_path):
    from bob_boost import BoostedMachine, StumpMachine
    from bob_boost.vision import Cascade, HaarFeatures, detect
    machine = BoostedMachine(number_of_outputs=1)
    machine.add_weak_machine(StumpMachine(0.5, 1.0, 0), 1.0)  # a window brighter on its left half
    cascade = Cascade(HaarFeatures([[0, 0, 0, 12, 12]], (12, 12)), [(machine, 0.0)])
    path = tmp_path / "bright_left.hdf5"
    cascade.save(path)
    image = skimage_data.astronaut()[::4, ::4]
    boxes = CascadeClassifier(path).detect_multi_scale(image, 1.2, 3, channels="rgb")
    assert len(boxes) and np.array_equal(boxes, detect(image, cascade, scale_factor=1.2).boxes)
    assert CascadeClassifier(path).getOriginalWindowSize() == (12, 12)


def _file(tmp_path, text: str) -> Path:
    path = tmp_path / "cascade.xml"
    path.write_text(text)
    return path


def test_damaged_and_hostile_files_are_model_format_errors(tmp_path, monkeypatch):
    good = (Path(cv2.data.haarcascades) / "haarcascade_lefteye_2splits.xml").read_text()
    cases = {
        "not XML": "this is not a cascade",
        "XML without a cascade": "<?xml version='1.0'?><opencv_storage><x>1</x></opencv_storage>",
        "HOG": good.replace("<featureType>HAAR</featureType>", "<featureType>HOG</featureType>"),
        "stage type": good.replace("<stageType>BOOST</stageType>", "<stageType>TREE</stageType>"),
        "outside": good.replace("8 12 3 8 -1.", "8 12 30 8 -1.", 1),
        "backwards child": good.replace("0 1 0 2.7325989678502083e-02 -1 -2 1", "0 1 0 2.7325989678502083e-02 -1 1 1"),
        "missing leaf": good.replace("-4.5859959721565247e-01</leafValues>", "</leafValues>", 1),
        "feature index": good.replace("-1 -2 1 -7.0568458177149296e-03", "-1 -2 99999 -7.0568458177149296e-03", 1),
        "entities": "<?xml version='1.0'?><!DOCTYPE a [<!ENTITY b 'cc'>]><opencv_storage>&b;</opencv_storage>",
        "window": good.replace("<width>20</width>", "<width>100000</width>"),
        "not a number": good.replace("2.7325989678502083e-02", "nan", 1),
        "truncated": good[:len(good) // 2],
    }
    for name, text in cases.items():
        with pytest.raises(ModelFormatError, match="cascade.xml: not a readable OpenCV cascade"):
            read_opencv_cascade(_file(tmp_path, text))
            pytest.fail(f"the {name} file was read")
    monkeypatch.setattr(opencv_xml, "MAX_FILE_BYTES", 1000)
    with pytest.raises(ModelFormatError, match="more than the 1000 read"):
        read_opencv_cascade(_file(tmp_path, good))


SMALL = """<?xml version="1.0"?>
<opencv_storage>
<cascade>
  <stageType>BOOST</stageType>
  <featureType>HAAR</featureType>
  <height>12</height>
  <width>12</width>
  <stageParams><maxWeakCount>2</maxWeakCount></stageParams>
  <featureParams><maxCatCount>0</maxCatCount></featureParams>
  <stageNum>2</stageNum>
  <stages>
    <_>
      <maxWeakCount>2</maxWeakCount>
      <stageThreshold>-0.5</stageThreshold>
      <weakClassifiers>
        <_><internalNodes>0 -1 0 0.01</internalNodes><leafValues>-1. 1.</leafValues></_>
        <_><internalNodes>0 1 1 -0.02 -1 -2 2 0.03</internalNodes><leafValues>-0.5 0.7 0.4</leafValues></_>
      </weakClassifiers></_>
    <_>
      <maxWeakCount>1</maxWeakCount>
      <stageThreshold>0.</stageThreshold>
      <weakClassifiers>
        <_><internalNodes>0 -1 2 0.</internalNodes><leafValues>-1. 1.</leafValues></_>
      </weakClassifiers></_></stages>
  <features>
    <_><rects><_>0 0 12 6 -1.</_><_>0 6 12 6 1.</_></rects></_>
    <_><rects><_>0 0 12 12 -1.</_><_>4 4 4 4 9.</_></rects></_>
    <_><rects><_>6 1 5 5 -1.</_><_>6 3 2 2 4.</_></rects><tilted>1</tilted></_></features></cascade>
</opencv_storage>
"""


def test_a_small_tree_cascade_with_a_tilted_feature_finds_opencvs_boxes(tmp_path):
    path = _file(tmp_path, SMALL)
    scene = np.random.default_rng(3).integers(0, 256, (50, 70), dtype=np.uint8)
    found = CascadeClassifier(path).detectMultiScale(scene, 1.15, 0)
    assert len(found) and _sorted_boxes(found) == _sorted_boxes(cv2.CascadeClassifier(str(path)).detectMultiScale(
        scene, 1.15, 0))


def test_fuzzed_files_give_a_cascade_or_a_model_format_error(tmp_path):
    """Random damage to a small tree cascade (truncation, numbers replaced by extreme ones, pieces dropped or
    repeated): every file reads as a cascade that then runs, or is refused."""
    rng = np.random.default_rng(2)
    words = ["-1", "0", "1", "2", "99999", "-99999", "1e308", "-1e308", "2147483648", "nan", "", "x", "<_>", "</_>"]
    scene = rng.integers(0, 256, (48, 48), dtype=np.uint8)
    read = 0
    for case in range(300):
        text = SMALL
        kind = case % 3
        if kind == 0:
            text = text[:int(rng.integers(0, len(text)))]
        elif kind == 1:
            tokens = text.split(" ")
            for _ in range(int(rng.integers(1, 3))):
                tokens[int(rng.integers(0, len(tokens)))] = str(rng.choice(words))
            text = " ".join(tokens)
        else:
            start = int(rng.integers(0, len(text) - 40))
            piece = text[start:start + int(rng.integers(1, 40))]
            text = text.replace(piece, "" if rng.random() < 0.5 else piece + piece, 1)
        try:
            cascade = CascadeClassifier(_file(tmp_path, text))
        except ModelFormatError:
            continue
        read += 1
        if cascade.cascade.width > scene.shape[1] or cascade.cascade.height > scene.shape[0]:
            with pytest.raises(ValueError, match="is smaller than the cascade's"):
                cascade.detect_multi_scale(scene, 1.2, 0)
            continue
        assert cascade.detect_multi_scale(scene, 1.2, 0).shape[1] == 4
    assert read > 20  # some damage leaves a valid cascade, which runs


def test_bad_arguments_name_the_argument(tmp_path, images):
    path = cv2.data.haarcascades + "haarcascade_frontalface_default.xml"
    ours = CascadeClassifier(path)
    image = images["camera"]
    with pytest.raises(TypeError, match="image: OpenCV's cascades run on 8-bit images"):
        ours.detect_multi_scale(image / 255.0)
    with pytest.raises(ValueError, match="image: expected"):
        ours.detect_multi_scale(np.zeros((30, 30, 5), np.uint8))
    with pytest.raises(ValueError, match="image: 8-bit values"):
        ours.detect_multi_scale(np.full((30, 30), 300, np.int64))
    with pytest.raises(ValueError, match=r"image: 20x22 is smaller than the cascade's 24x24 window"):
        ours.detect_multi_scale(np.zeros((22, 20), np.uint8))
    with pytest.raises(ValueError, match="scale_factor"):
        ours.detect_multi_scale(image, 1.0)
    with pytest.raises(ValueError, match="min_neighbors"):
        ours.detect_multi_scale(image, 1.1, -1)
    with pytest.raises(ValueError, match="channels"):
        ours.detect_multi_scale(images["astronaut"], channels="hsv")
    with pytest.raises(ValueError, match="cascade: none loaded"):
        CascadeClassifier().detect_multi_scale(image)
    with pytest.raises(FileNotFoundError):
        CascadeClassifier(tmp_path / "missing.xml")
    before = image.copy()
    ours.detect_multi_scale(image)
    assert np.array_equal(image, before)
    assert os.path.exists(path)


def test_the_command_line_runs_an_opencv_cascade(tmp_path, capsys):
    iio = pytest.importorskip("imageio.v3", reason="reading images needs the faces extra (imageio)")
    from bob_boost.cli import main
    image = skimage_data.astronaut()[::2, ::2]
    path = tmp_path / "astronaut.png"
    iio.imwrite(path, image)
    cascade = cv2.data.haarcascades + "haarcascade_frontalface_alt2.xml"
    assert main(["detect", str(path), "--cascade", cascade, "--min-neighbors", "1", "-q"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    assert rows[0] == "x,y,width,height,score"
    boxes = [tuple(int(v) for v in row.split(",")[:4]) for row in rows[1:]]
    bgr = cv2.imread(str(path))
    assert sorted(boxes) == _sorted_boxes(cv2.CascadeClassifier(cascade).detectMultiScale(bgr, 1.1, 1))
    assert main(["detect", str(path), "--cascade", cascade, "--step", "2"]) == 1
    assert "--step" in capsys.readouterr().err


@pytest.mark.long
def test_a_written_cascade_reads_back_the_same_and_opencv_finds_the_same_boxes(tmp_path, lbp_files, images):
    from dataclasses import fields

    from bob_boost.vision import write_opencv_cascade
    for source in [*HAAR_FILES[::4], Path(lbp_files[0])]:
        cascade = read_opencv_cascade(source)
        path = tmp_path / source.name
        write_opencv_cascade(cascade, path)
        again = read_opencv_cascade(path)
        for field in fields(cascade):
            if field.name != "source":
                assert np.array_equal(getattr(again, field.name), getattr(cascade, field.name)), field.name
        reference = lbp_files[1] if source.name.startswith("lbp") else str(source)
        written, original = cv2.CascadeClassifier(str(path)), cv2.CascadeClassifier(reference)
        assert not written.empty()
        for image in images.values():
            assert _sorted_boxes(written.detectMultiScale(image, 1.1, 0)) == _sorted_boxes(
                original.detectMultiScale(image, 1.1, 0))
    with pytest.raises(OSError, match="missing"):
        write_opencv_cascade(cascade, tmp_path / "missing" / "cascade.xml")
    before = path.read_bytes()
    with pytest.raises(TypeError, match="cascade: expected an OpenCVCascade"):
        write_opencv_cascade("not a cascade", path)
    assert path.read_bytes() == before
