"""Haar and LBP cascades trained in OpenCV's feature values: OpenCV 4 makes the trainer's decisions, window for
window."""
from __future__ import annotations

import numpy as np
import pytest

from bob_boost.vision.opencv_features import haar_features, haar_values, lbp_codes, lbp_features, window_decisions
from bob_boost.vision.opencv_train import train_opencv_cascade

SIZE = 16


def _windows(seed: int, count: int) -> np.ndarray:
    """Textured windows: smooth blobs plus noise, so that few are flat."""
    rng = np.random.default_rng(seed)
    grid = np.linspace(-1.0, 1.0, SIZE)
    centres = rng.uniform(-1.0, 1.0, (count, 2, 1, 1))
    blobs = np.exp(-((grid[None, None, :] - centres[:, 0]) ** 2 + (grid[None, :, None] - centres[:, 1]) ** 2) * 4)
    return np.clip(blobs * 200 + rng.normal(0, 25, (count, SIZE, SIZE)) + 30, 0, 255).astype(np.uint8)


def _faces_like(seed: int, count: int, contrast: tuple[float, float] = (0.4, 1.0)) -> np.ndarray:
    """A fixed pattern (dark eyes and mouth on a bright face) of random contrast, shifted by up to two pixels,
    under heavy noise."""
    rng = np.random.default_rng(seed)
    pattern = np.zeros((SIZE + 4, SIZE + 4))
    pattern[6:9, 5:8] = pattern[6:9, 12:15] = -1.0
    pattern[12:14, 7:13] = -0.7
    shifts = rng.integers(0, 5, (count, 2))
    shifted = np.stack([pattern[dy:dy + SIZE, dx:dx + SIZE] for dy, dx in shifts])
    gain = rng.uniform(*contrast, (count, 1, 1)) * 110
    return np.clip(140 + shifted * gain + rng.normal(0, 35, (count, SIZE, SIZE)), 0, 255).astype(np.uint8)


def _training_windows() -> tuple[np.ndarray, np.ndarray]:
    """Positives, and negatives: textures and the pattern at contrasts below the positives'."""
    return _faces_like(0, 600), np.concatenate([_windows(1, 1500), _faces_like(2, 1500, (0.0, 0.35))])[
        np.random.default_rng(4).permutation(3000)]


@pytest.fixture(scope="module", params=["HAAR", "LBP"])
def trained(request):
    positives, negatives = _training_windows()
    cascade = train_opencv_cascade(positives, negatives, number_of_stages=3, num_neg=600, features_per_stage=600,
                                   max_weak_count=8, random_state=3, feature_type=request.param)
    return positives, negatives, cascade


def test_features_are_opencv_traincascades():
    counts = {mode: haar_features(24, 24, mode)[0].shape[0] for mode in ("BASIC", "CORE", "ALL")}
    assert counts == {"BASIC": 162336, "CORE": 210400, "ALL": 261600}  # opencv_traincascade's counts
    rects, weights, tilted = haar_features(24, 24, "CORE")
    # the first position's kinds in OpenCV's order: x2, y2, x3, y3, x4, y4, x2y2, the 3x3 centre
    np.testing.assert_array_equal(rects[:8, 0, 2:], [[2, 1], [1, 2], [3, 1], [1, 3], [4, 1], [1, 4], [2, 2], [3, 3]])
    np.testing.assert_array_equal(weights[7], [-1, 9, 0])
    assert not tilted.any() and haar_features(24, 24, "ALL")[2].sum() == 51200
    with pytest.raises(ValueError, match="mode"):
        haar_features(24, 24, "FANCY")


def test_values_are_the_detectors_arithmetic():
    windows = _windows(5, 40)
    windows[0] = 77  # flat: the detector rejects it, every value 0
    rects, weights, tilted = haar_features(SIZE, SIZE, "ALL")
    chosen = np.random.default_rng(0).choice(rects.shape[0], 300, replace=False)
    values, factors = haar_values(windows, rects[chosen], weights[chosen], tilted[chosen])
    assert factors[0] == 0 and not values[:, 0].any()
    pixels = windows.astype(np.int64)
    for n in range(1, 40):
        inner = pixels[n, 1:-1, 1:-1]
        spread = inner.size * float(np.sum(inner ** 2)) - float(inner.sum()) ** 2
        factor = np.float32(1.0 / np.sqrt(spread))
        assert factors[n] == factor
        for row, feature in enumerate(chosen[:60]):
            if tilted[feature]:
                continue
            total = np.float32(0.0)
            for (x, y, w, h), weight in zip(rects[feature], weights[feature]):
                if weight:
                    total = total + np.float32(weight) * np.float32(pixels[n, y:y + h, x:x + w].sum())
            assert values[row, n] == np.float32(total * factor)


def test_lbp_features_and_codes_are_opencv_traincascades():
    rects = lbp_features(24, 24)[0]
    # opencv_traincascade's loops: x, then y, then the block's width and height, every 3x3 grid that fits
    expected = [(x, y, w, h) for x in range(24) for y in range(24) for w in range(1, 9) for h in range(1, 9)
                if x + 3 * w <= 24 and y + 3 * h <= 24]
    assert len(expected) == 8464
    np.testing.assert_array_equal(rects[:, 0], expected)
    assert not rects[:, 1:].any()
    windows, rects = _windows(5, 30), lbp_features(SIZE, SIZE)[0]
    chosen = np.random.default_rng(1).choice(rects.shape[0], 200, replace=False)
    codes = lbp_codes(windows, rects[chosen])
    pixels = windows.astype(np.int64)
    for row, (x, y, w, h) in enumerate(rects[chosen, 0]):
        blocks = pixels[:, y:y + 3 * h, x:x + 3 * w].reshape(30, 3, h, 3, w).sum(axis=(2, 4))
        # the eight neighbours clockwise from the top-left (bit 7) to the left (bit 0)
        neighbours = blocks[:, [0, 0, 0, 1, 2, 2, 2, 1], [0, 1, 2, 2, 2, 1, 0, 0]]
        expected_codes = (neighbours >= blocks[:, 1:2, 1]) @ (1 << np.arange(7, -1, -1))
        np.testing.assert_array_equal(codes[row], expected_codes)


def test_lbp_stumps_cut_the_codes_by_their_mean_label():
    """The first stump of an LBP cascade, fitted with equal weights: its set is a cut of the codes ordered by mean
    label, and its leaves are the two sides' mean labels."""
    positives, negatives = _training_windows()
    cascade = train_opencv_cascade(positives, negatives, number_of_stages=1, num_neg=600, features_per_stage=300,
                                   max_weak_count=1, random_state=3, feature_type="LBP")
    windows = np.concatenate([positives, negatives[:600]])
    labels = np.repeat([1.0, -1.0], 600)
    codes = lbp_codes(windows, cascade.rects[cascade.node_feature[:1]])[0]
    words = cascade.node_subset.reshape(-1, 8)[0].view(np.uint32)
    left = (words[codes >> 5] >> (codes & 31).astype(np.uint32) & 1).astype(bool)
    assert 0 < left.sum() < windows.shape[0]
    means = {code: labels[codes == code].mean() for code in np.unique(codes)}
    assert max(means[c] for c in np.unique(codes[left])) <= min(means[c] for c in np.unique(codes[~left]))
    np.testing.assert_allclose(cascade.leaves[:2], [labels[left].mean(), labels[~left].mean()], rtol=1e-6)


@pytest.mark.long
def test_training_is_deterministic_and_meets_the_hit_rate(trained):
    positives, negatives, cascade = trained
    again = train_opencv_cascade(positives, negatives, number_of_stages=3, num_neg=600, features_per_stage=600,
                                 max_weak_count=8, random_state=3, feature_type=cascade.feature_type)
    for name in ("stage_thresholds", "node_threshold", "node_subset", "leaves", "rects", "node_feature"):
        np.testing.assert_array_equal(getattr(again, name), getattr(cascade, name))
    assert cascade.number_of_stages == 3
    # the cascade keeps at least 0.995^3 of the positives; each stage passed at most half of its negatives
    assert np.mean(window_decisions(cascade, positives)) >= 0.995 ** 3
    assert np.mean(window_decisions(cascade, negatives[:600])) <= 0.5


@pytest.mark.long
def test_opencv_makes_the_trainers_decisions_on_100000_windows(trained, tmp_path):
    cv2 = pytest.importorskip("cv2", reason="OpenCV 4 (opencv-python-headless<5, the test extra) is the reference")
    from bob_boost.vision.opencv_write import cascade_xml, write_opencv_cascade
    from bob_boost.vision.opencv_xml import read_opencv_cascade
    positives, negatives, cascade = trained
    path = tmp_path / "trained.xml"
    write_opencv_cascade(cascade, path)
    resumed = train_opencv_cascade(positives, negatives, number_of_stages=3, num_neg=600, features_per_stage=600,
                                   max_weak_count=8, random_state=3, feature_type=cascade.feature_type,
                                   initial=_first_stages(read_opencv_cascade(str(path)), 2))
    assert cascade_xml(resumed) == cascade_xml(cascade)
    windows = np.concatenate([positives, negatives, _windows(9, 48000), _faces_like(10, 48400)])
    assert windows.shape[0] == 100000
    ours = window_decisions(cascade, windows)
    np.testing.assert_array_equal(window_decisions(read_opencv_cascade(str(path)), windows), ours)
    reference = cv2.CascadeClassifier(str(path))
    theirs = np.array([len(reference.detectMultiScale(window, scaleFactor=1.1, minNeighbors=0,
                                                      minSize=(SIZE, SIZE), maxSize=(SIZE, SIZE))) > 0
                       for window in windows])
    assert 1000 < theirs.sum() < 99000  # both kinds of decision occur
    np.testing.assert_array_equal(ours, theirs)


def _first_stages(cascade, count: int):
    """``cascade`` cut after its first ``count`` stages (its features kept whole)."""
    import dataclasses
    weak, nodes = int(cascade.stage_weak[count]), int(cascade.weak_nodes[int(cascade.stage_weak[count])])
    subset = cascade.node_subset.reshape(-1, 8)
    return dataclasses.replace(
        cascade, stage_thresholds=cascade.stage_thresholds[:count], stage_weak=cascade.stage_weak[:count + 1],
        weak_nodes=cascade.weak_nodes[:weak + 1], weak_leaves=cascade.weak_leaves[:weak + 1],
        node_left=cascade.node_left[:nodes], node_right=cascade.node_right[:nodes],
        node_feature=cascade.node_feature[:nodes], node_threshold=cascade.node_threshold[:nodes],
        node_subset=subset[:nodes] if subset.size else subset, leaves=cascade.leaves[:int(cascade.weak_leaves[weak])])


@pytest.mark.parametrize("feature_type, learner", [("HAAR", "AdaBoostStage"), ("LBP", "AdaBoostStage"),
                                                   ("HAAR", "AdaBoostDBStage"), ("LBP", "CostSensitiveAdaBoostStage")])
@pytest.mark.long
def test_stage_learners_train_cascades_that_opencv_decides_alike(feature_type, learner):
    """bob_boost's stage learners boost on the values' ranks; their stumps, turned into value splits, make the
    decisions OpenCV 4 makes with the written cascade."""
    from bob_boost.vision import stages
    from bob_boost.vision.opencv_write import cascade_xml, write_opencv_cascade
    positives, negatives = _training_windows()
    options = dict(number_of_stages=2, num_neg=600, features_per_stage=400, max_weak_count=6, random_state=3,
                   feature_type=feature_type)
    cascade = train_opencv_cascade(positives, negatives, stage_learner=getattr(stages, learner)(), **options)
    again = train_opencv_cascade(positives, negatives, stage_learner=getattr(stages, learner)(), **options)
    assert cascade_xml(again) == cascade_xml(cascade)
    assert cascade.number_of_stages == 2 and cascade.feature_type == feature_type
    leaves = cascade.leaves.reshape(-1, 2)
    np.testing.assert_array_equal(leaves[:, 0], -leaves[:, 1])  # each stump outputs -+ its weight
    assert np.mean(window_decisions(cascade, positives)) >= 0.995 ** 2
    cv2 = pytest.importorskip("cv2", reason="OpenCV 4 (opencv-python-headless<5, the test extra) is the reference")
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        path = f"{folder}/learned.xml"
        write_opencv_cascade(cascade, path)
        reference = cv2.CascadeClassifier(path)
        windows = np.concatenate([positives, negatives, _windows(9, 3000), _faces_like(10, 3000)])
        theirs = np.array([len(reference.detectMultiScale(window, scaleFactor=1.1, minNeighbors=0,
                                                          minSize=(SIZE, SIZE), maxSize=(SIZE, SIZE))) > 0
                           for window in windows])
    ours = window_decisions(cascade, windows)
    assert 500 < ours.sum() < windows.shape[0] - 500
    np.testing.assert_array_equal(ours, theirs)


def _diagonals(seed: int, count: int, contrast: tuple[float, float]) -> np.ndarray:
    """A dark band along a diagonal (either one, shifted by up to two pixels) of random contrast, under noise:
    what the 45-degree (tilted) features see best."""
    rng = np.random.default_rng(seed)
    rows, columns = np.mgrid[0:SIZE, 0:SIZE]
    shifts, flips = rng.integers(-2, 3, count), rng.integers(0, 2, count)
    distance = np.where(flips[:, None, None] == 1, rows + columns - (SIZE - 1), rows - columns) - shifts[:, None, None]
    gain = rng.uniform(*contrast, (count, 1, 1)) * 110
    band = (np.abs(distance) <= 1.5).astype(float)
    return np.clip(150 - band * gain + rng.normal(0, 30, (count, SIZE, SIZE)), 0, 255).astype(np.uint8)


def test_tilted_features_are_trained_and_opencv_makes_their_decisions(tmp_path):
    """mode='ALL': the trainer's tilted features (values from the tilted integral image) are written so that
    OpenCV 4's detector decides every window as the trainer's own decision function."""
    positives = _diagonals(20, 500, (0.5, 1.0))
    negatives = np.concatenate([_windows(21, 700), _faces_like(22, 700), _diagonals(23, 600, (0.0, 0.3))])[
        np.random.default_rng(4).permutation(2000)]
    cascade = train_opencv_cascade(positives, negatives, number_of_stages=2, num_neg=500, mode="ALL",
                                   features_per_stage=1500, max_weak_count=6, random_state=5)
    used = np.unique(cascade.node_feature)
    assert cascade.tilted[used].any()  # the data make some tilted feature the best of a round
    from bob_boost.vision.opencv_write import write_opencv_cascade
    from bob_boost.vision.opencv_xml import read_opencv_cascade
    path = tmp_path / "tilted.xml"
    write_opencv_cascade(cascade, path)
    windows = np.concatenate([positives, negatives, _diagonals(24, 3000, (0.0, 1.0)), _windows(25, 3000)])
    ours = window_decisions(cascade, windows)
    np.testing.assert_array_equal(window_decisions(read_opencv_cascade(str(path)), windows), ours)
    cv2 = pytest.importorskip("cv2", reason="OpenCV 4 (opencv-python-headless<5, the test extra) is the reference")
    reference = cv2.CascadeClassifier(str(path))
    theirs = np.array([len(reference.detectMultiScale(window, scaleFactor=1.1, minNeighbors=0,
                                                      minSize=(SIZE, SIZE), maxSize=(SIZE, SIZE))) > 0
                       for window in windows])
    assert 300 < theirs.sum() < windows.shape[0] - 300  # both kinds of decision occur
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("options, message", [
    (dict(positives=np.zeros((5, 16)), negatives=None), "positives"),
    (dict(negatives=np.zeros((5, 12, 12), np.uint8)), "negatives"),
    (dict(min_hit_rate=0.0), "min_hit_rate"),
    (dict(max_false_alarm_rate=1.5), "max_false_alarm_rate"),
    (dict(number_of_stages=0), "number_of_stages"),
    (dict(mode="HOG"), "mode"),
    (dict(mode="HOG", feature_type="LBP"), "mode"),
    (dict(feature_type="HOG"), "feature_type"),
])
def test_bad_input_names_the_argument(options, message):
    arguments = dict(positives=_faces_like(0, 20), negatives=_windows(1, 20))
    arguments.update({key: value for key, value in options.items() if value is not None or key != "negatives"})
    with pytest.raises(ValueError, match=message):
        train_opencv_cascade(**arguments)


def test_a_stage_learner_needs_a_fit_method():
    with pytest.raises(TypeError, match="stage_learner"):
        train_opencv_cascade(_faces_like(0, 20), _windows(1, 20), stage_learner="GAB")


def _training_files(folder) -> tuple[str, str]:
    """A .vec file of pattern positives and a background list of two textured images (PNG)."""
    pytest.importorskip("imageio", reason="the faces extra (imageio) reads background images")
    from bob_boost.vision.data import write_image
    from bob_boost.vision.opencv_samples import write_vec
    vec = folder / "positives.vec"
    write_vec(_faces_like(0, 400), vec)
    rng = np.random.default_rng(7)
    names = []
    for index in range(2):
        texture = np.kron(rng.integers(40, 220, (12, 16)), np.ones((8, 8))) + rng.normal(0, 30, (96, 128))
        write_image(folder / f"bg{index}.png", np.repeat(np.clip(texture, 0, 255).astype(np.uint8)[..., None], 3, 2))
        names.append(f"bg{index}.png")
    (folder / "bg.txt").write_text("# textures\n" + "\n".join(names) + "\n", encoding="utf-8")
    return str(vec), str(folder / "bg.txt")


@pytest.mark.parametrize("feature_type, boost_type", [("HAAR", "GAB"), ("LBP", "GAB"), ("LBP", "AdaBoostDB")])
@pytest.mark.long
def test_train_cascade_command_resumes_to_the_uninterrupted_cascade(tmp_path, feature_type, boost_type):
    from bob_boost.cli import main
    vec, background = _training_files(tmp_path)
    common = ["-vec", vec, "-bg", background, "-w", str(SIZE), "-h", str(SIZE), "-numPos", "300", "-numNeg", "300",
              "-maxWeakCount", "6", "--features-per-stage", "400", "-featureType", feature_type, "-bt", boost_type,
              "-q"]
    assert main(["train-cascade", "-data", str(tmp_path / "whole"), "-numStages", "3", *common]) == 0
    assert main(["train-cascade", "-data", str(tmp_path / "parts"), "-numStages", "2", *common]) == 0
    assert main(["train-cascade", "-data", str(tmp_path / "parts"), "-numStages", "3", *common]) == 0
    whole = (tmp_path / "whole" / "cascade.xml").read_bytes()
    assert whole == (tmp_path / "parts" / "cascade.xml").read_bytes()
    from bob_boost.vision.opencv_xml import read_opencv_cascade
    whole = read_opencv_cascade(str(tmp_path / "whole" / "cascade.xml"))
    assert (whole.number_of_stages, whole.feature_type) == (3, feature_type)
    # resuming with other training options is refused, naming them
    assert main(["train-cascade", "-data", str(tmp_path / "parts"), "-numStages", "4", *common[:-1],
                 "-minHitRate", "0.99", "-q"]) != 0


def test_train_cascade_command_bad_input(tmp_path, capsys):
    from bob_boost.cli import main
    vec, background = _training_files(tmp_path)
    (tmp_path / "missing.txt").write_text("nowhere.png\n", encoding="utf-8")
    cases = [(["-vec", vec, "-bg", background, "-w", "24", "-h", "24"], "positives.vec"),
             (["-vec", vec, "-bg", str(tmp_path / "missing.txt"), "-w", str(SIZE), "-h", str(SIZE)], "nowhere.png"),
             (["-vec", vec, "-bg", background, "-featureType", "HOG"], "-featureType"),
             (["-vec", vec, "-bg", background, "-bt", "RAB"], "-bt"),
             (["-vec", vec, "-bg", background, "-bt", "AdaBoostDB", "--costs", "0", "1"], "--costs")]
    for index, (arguments, message) in enumerate(cases):
        assert main(["train-cascade", "-data", str(tmp_path / f"out{index}"), *arguments]) != 0
        assert message in capsys.readouterr().err
