"""bob_boost.vision: integral images, Haar features, the quantised pool, cascades, detection and training.

Every expectation is computed independently of the code under test, by brute force on numpy slices: a
Haar feature's value is the mean of its white area minus the mean of its dark area (the table of
``bob_boost.vision.haar``), divided by the window's standard deviation clipped at MINIMUM_DEVIATION.
"""
from __future__ import annotations

import warnings

import h5py
import numpy as np
import pytest

from bob_boost.exceptions import InvalidTypeError, InvalidValueError, ModelFormatError
from bob_boost.machine import BoostedMachine
from bob_boost.vision import (CHAPTER_TYPES, FEATURE_TYPES, AdaBoostDBStage, Cascade, HaarFeatures, QuantizedPool,
                              as_gray_image, detect, group_rectangles, integral_image, integral_images,
                              train_cascade)
from bob_boost.vision.integral import MINIMUM_DEVIATION, rectangle_sums
from bob_boost.weak.lut import LUTMachine
from bob_boost.weak.stump import StumpMachine

WINDOW = (12, 12)

#: Units across and down of every feature type (the table of the haar module's docstring).
UNITS = {"two-horizontal": (2, 1), "two-vertical": (1, 2), "three-horizontal": (3, 1),
         "three-vertical": (1, 3), "four": (2, 2)}


# -- brute force ----------------------------------------------------------------------------------------------
def feature_masks(row, shape):
    """White and dark pixel masks of one feature row (type, x, y, width, height) in a window of ``shape``."""
    kind, x, y, width, height = (int(v) for v in row)
    white, dark = np.zeros(shape, dtype=bool), np.zeros(shape, dtype=bool)
    name = FEATURE_TYPES[kind]
    if name == "two-horizontal":  # left white, right dark
        half = width // 2
        white[y:y + height, x:x + half] = True
        dark[y:y + height, x + half:x + width] = True
    elif name == "two-vertical":  # top white, bottom dark
        half = height // 2
        white[y:y + half, x:x + width] = True
        dark[y + half:y + height, x:x + width] = True
    elif name == "three-horizontal":  # outer two white, middle dark
        third = width // 3
        white[y:y + height, x:x + third] = True
        dark[y:y + height, x + third:x + 2 * third] = True
        white[y:y + height, x + 2 * third:x + width] = True
    elif name == "three-vertical":
        third = height // 3
        white[y:y + third, x:x + width] = True
        dark[y + third:y + 2 * third, x:x + width] = True
        white[y + 2 * third:y + height, x:x + width] = True
    else:  # four: top-left and bottom-right white, the other two dark
        half_w, half_h = width // 2, height // 2
        white[y:y + half_h, x:x + half_w] = True
        white[y + half_h:y + height, x + half_w:x + width] = True
        dark[y:y + half_h, x + half_w:x + width] = True
        dark[y + half_h:y + height, x:x + half_w] = True
    return white, dark


def brute_value(window, row):
    white, dark = feature_masks(row, window.shape)
    deviation = max(float(window.std()), MINIMUM_DEVIATION)
    return (window[white].mean() - window[dark].mean()) / deviation


def brute_values(windows, table):
    """(N, #rows) brute-force feature values."""
    return np.array([[brute_value(window, row) for row in table] for window in windows])


def crops_of(image, size, xs, ys):
    return np.stack([image[y:y + size[0], x:x + size[1]] for x, y in zip(xs, ys)])


def count_features(window_size, types):
    """Number of features: for every unit size, every position of the box in the window."""
    height, width = window_size
    total = 0
    for name in types:
        across, down = UNITS[name]
        for unit_w in range(1, width // across + 1):
            for unit_h in range(1, height // down + 1):
                total += (width - across * unit_w + 1) * (height - down * unit_h + 1)
    return total


def gap_threshold(values, quantile):
    """A threshold near ``quantile`` of ``values``, half-way in a gap wide enough that rounding cannot cross it."""
    ordered = np.unique(values)
    gaps = np.diff(ordered)
    wide = np.flatnonzero(gaps > 1e-6)
    k = wide[np.argmin(np.abs(wide - quantile * ordered.size))]
    return 0.5 * (ordered[k] + ordered[k + 1])


def stump_stage(stumps, baseline=0.0):
    """A one-output BoostedMachine from (threshold, polarity, index, weight) tuples."""
    machine = BoostedMachine(number_of_outputs=1, baseline=baseline)
    for threshold, polarity, index, weight in stumps:
        machine.add_weak_machine(StumpMachine(float(threshold), polarity, index), weight)
    return machine


def manual_margins(values, stages):
    """(N, #stages) score minus threshold of every stage, from feature values and (stumps, baseline, threshold)."""
    columns = []
    for stumps, baseline, threshold in stages:
        score = np.full(values.shape[0], baseline)
        for t, polarity, index, weight in stumps:
            score += weight * np.where(values[:, index] >= t, polarity, -polarity)
        columns.append(score - threshold)
    return np.column_stack(columns)


def manual_passed(margins):
    rejected = margins < 0
    return np.where(rejected.any(axis=1), rejected.argmax(axis=1), margins.shape[1])


def hand_cascade(windows, seed=0):
    """A two-stage cascade over 5 features whose stump and stage thresholds fall in wide gaps of ``windows``' scores.

    Returns the cascade and its stages as (stumps, baseline, threshold) for :func:`manual_margins`.
    """
    rng = np.random.default_rng(seed)
    pool = HaarFeatures.all(WINDOW, types=FEATURE_TYPES)
    picks = np.sort(rng.choice(len(pool), size=5, replace=False))
    features = pool.subset(picks)
    values = brute_values(windows, features.table)
    thresholds = [gap_threshold(values[:, f], q) for f, q in enumerate((0.5, 0.4, 0.6, 0.5, 0.3))]
    # weights whose signed sums differ by at least 0.1, stage thresholds in between
    stage_0 = ([(thresholds[0], 1.0, 0, 1.0), (thresholds[1], -1.0, 1, 0.6), (thresholds[2], 1.0, 2, 0.35)],
               0.0, -0.3)
    stage_1 = ([(thresholds[3], -1.0, 3, 0.8), (thresholds[4], 1.0, 4, 0.45)], 0.1, 0.05)
    stages = [stage_0, stage_1]
    cascade = Cascade(features, [(stump_stage(s, b), t) for s, b, t in stages], metadata={"made": "by hand"})
    return cascade, stages


@pytest.fixture(scope="module")
def scene():
    """A random 30x34 grey image, the hand cascade tuned on its 12x12 windows, and those windows."""
    rng = np.random.default_rng(7)
    image = rng.random((30, 34))
    ys, xs = np.mgrid[0:30 - 11, 0:34 - 11]
    xs, ys = xs.ravel(), ys.ravel()
    windows = crops_of(image, WINDOW, xs, ys)
    cascade, stages = hand_cascade(windows)
    return image, xs, ys, windows, cascade, stages


# -- 1. integral images ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [(9, 13), (1, 17), (17, 1), (1, 1)])
@pytest.mark.parametrize("dtype", [np.float64, np.uint8])
def test_integral_image_and_rectangle_sums_match_brute_force(shape, dtype):
    rng = np.random.default_rng(1)
    image = (rng.random(shape) * 10 if dtype == np.float64 else rng.integers(0, 256, shape)).astype(dtype)
    integral = integral_image(image)
    assert integral.shape == (shape[0] + 1, shape[1] + 1)
    expected = np.array([[image[:y, :x].sum(dtype=np.float64) for x in range(shape[1] + 1)]
                         for y in range(shape[0] + 1)])
    np.testing.assert_allclose(integral, expected, rtol=0, atol=1e-9)

    x = rng.integers(0, shape[1], 50)
    y = rng.integers(0, shape[0], 50)
    width = rng.integers(1, shape[1] - x + 1)
    height = rng.integers(1, shape[0] - y + 1)
    sums = rectangle_sums(integral, x, y, width, height)
    brute = [image[b:b + h, a:a + w].sum(dtype=np.float64) for a, b, w, h in zip(x, y, width, height)]
    np.testing.assert_allclose(sums, brute, rtol=0, atol=1e-9)


@pytest.mark.parametrize("dtype", [np.float64, np.uint8])
def test_integral_images_of_a_stack_and_rectangle_sums_on_it(dtype):
    rng = np.random.default_rng(2)
    stack = (rng.random((6, 5, 8)) if dtype == np.float64 else rng.integers(0, 256, (6, 5, 8))).astype(dtype)
    integrals = integral_images(stack)
    assert integrals.shape == (6, 6, 9)
    for window, integral in zip(stack, integrals):
        np.testing.assert_allclose(integral, integral_image(window), rtol=0, atol=1e-9)
        assert integral[0].tolist() == [0.0] * 9 and integral[:, 0].tolist() == [0.0] * 6
        np.testing.assert_allclose(integral[-1, -1], window.sum(dtype=np.float64), rtol=1e-12)
    x, y, width, height = np.array([0, 3, 7]), np.array([1, 0, 4]), np.array([8, 2, 1]), np.array([4, 5, 1])
    sums = rectangle_sums(integrals, x, y, width, height)
    assert sums.shape == (6, 3)
    brute = [[w[b:b + h, a:a + c].sum(dtype=np.float64) for a, b, c, h in zip(x, y, width, height)] for w in stack]
    np.testing.assert_allclose(sums, brute, rtol=0, atol=1e-9)


# -- 2. as_gray_image ------------------------------------------------------------------------------------------
def test_as_gray_image_scales_integers_and_converts_colour_without_touching_the_input():
    rng = np.random.default_rng(3)
    grey = rng.integers(0, 256, (5, 7)).astype(np.uint8)
    np.testing.assert_array_equal(as_gray_image(grey), grey.astype(np.float64) / 255.0)

    colour = rng.integers(0, 256, (5, 7, 3)).astype(np.uint8)
    r, g, b = (colour[..., k].astype(np.float64) / 255.0 for k in range(3))
    np.testing.assert_allclose(as_gray_image(colour), 0.299 * r + 0.587 * g + 0.114 * b, rtol=0, atol=1e-12)

    floats = rng.random((4, 6, 3))
    before = floats.copy()
    gray = as_gray_image(floats)
    np.testing.assert_allclose(gray, floats @ [0.299, 0.587, 0.114], rtol=0, atol=1e-12)
    gray2d_input = rng.random((4, 6))
    kept = gray2d_input.copy()
    out = as_gray_image(gray2d_input)
    out[:] = -1.0  # writing the result must not reach the caller's array
    np.testing.assert_array_equal(gray2d_input, kept)
    np.testing.assert_array_equal(floats, before)
    assert out.dtype == np.float64 and not np.shares_memory(out, gray2d_input)


@pytest.mark.parametrize("image, minimum, error", [
    (np.zeros((5, 5, 4)), None, InvalidValueError),
    (np.zeros(10), None, InvalidValueError),
    (np.zeros((5, 5, 3, 1)), None, InvalidValueError),
    (np.zeros((0, 5)), None, InvalidValueError),
    (np.zeros((5, 0, 3)), None, InvalidValueError),
    (np.full((5, 5), None, dtype=object), None, InvalidTypeError),
    (np.zeros((5, 5), dtype=bool), None, InvalidTypeError),
    (np.array([["a", "b"], ["c", "d"]]), None, InvalidTypeError),
    (np.array([[0.0, np.nan], [1.0, 0.5]]), None, InvalidValueError),
    (np.array([[0.0, np.inf], [1.0, 0.5]]), None, InvalidValueError),
    (np.zeros((5, 30)), (12, 12), InvalidValueError),
    (np.zeros((30, 11)), (12, 12), InvalidValueError),
])
def test_as_gray_image_rejects_bad_images_naming_the_argument(image, minimum, error):
    assert issubclass(InvalidValueError, ValueError) and issubclass(InvalidTypeError, TypeError)
    with pytest.raises(error, match="^photo"):
        as_gray_image(image, "photo", minimum)


def test_as_gray_image_accepts_an_image_of_exactly_the_minimum_size():
    assert as_gray_image(np.ones((12, 12), dtype=np.uint8), minimum_size=(12, 12)).shape == (12, 12)


# -- 3. Haar features: counts and values -----------------------------------------------------------------------
def test_feature_counts_of_a_24x24_window():
    chapter, every = count_features((24, 24), CHAPTER_TYPES), count_features((24, 24), FEATURE_TYPES)
    assert (chapter, every) == (134736, 162336)  # the published counts follow from the formula
    assert len(HaarFeatures.all((24, 24))) == chapter
    assert len(HaarFeatures.all((24, 24), types=FEATURE_TYPES)) == every


@pytest.mark.parametrize("window_size", [(12, 12), (7, 10), (10, 5)])
@pytest.mark.parametrize("types", [FEATURE_TYPES, ("four",), ("three-vertical", "two-horizontal")])
def test_feature_table_lists_every_box_once(window_size, types):
    features = HaarFeatures.all(window_size, types=types)
    assert len(features) == count_features(window_size, types)
    table = features.table
    assert len({tuple(row) for row in table.tolist()}) == len(table)
    assert set(table[:, 0].tolist()) == {FEATURE_TYPES.index(t) for t in types}
    assert np.all(table[:, 1] + table[:, 3] <= window_size[1]) and np.all(table[:, 2] + table[:, 4] <= window_size[0])


@pytest.mark.parametrize("stride", [2, 3])
def test_stride_keeps_the_positions_that_are_multiples_of_it(stride):
    full = HaarFeatures.all(WINDOW, types=FEATURE_TYPES)
    strided = HaarFeatures.all(WINDOW, types=FEATURE_TYPES, stride=stride)
    keep = (full.table[:, 1] % stride == 0) & (full.table[:, 2] % stride == 0)
    np.testing.assert_array_equal(strided.table, full.table[keep])


def test_every_feature_type_matches_the_brute_force_definition():
    rng = np.random.default_rng(4)
    windows = rng.random((12,) + WINDOW)
    windows[1] = 0.3 + 1e-5 * rng.random(WINDOW)  # deviation below the floor: normalised by MINIMUM_DEVIATION
    windows[2] = 0.7  # flat
    windows[3] = rng.random(WINDOW) ** 4  # skewed
    features = HaarFeatures.all(WINDOW, types=FEATURE_TYPES)
    picks = []
    for kind in range(len(FEATURE_TYPES)):
        rows = np.flatnonzero(features.table[:, 0] == kind)
        picks.extend([rows[0], rows[-1]])
        picks.extend(rng.choice(rows, size=25, replace=False))
    picks = np.array(picks)
    values = features.evaluate(windows)
    assert values.shape == (12, len(features))
    expected = brute_values(windows, features.table[picks])
    np.testing.assert_allclose(values[:, picks], expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(values[2], 0.0, rtol=0, atol=1e-9)
    # integer windows are grey levels / 255, and one 2-D window is a stack of one
    as_bytes = rng.integers(0, 256, (3,) + WINDOW).astype(np.uint8)
    np.testing.assert_allclose(features.evaluate(as_bytes), features.evaluate(as_bytes / 255.0), rtol=0, atol=1e-9)
    np.testing.assert_allclose(features.evaluate(windows[0]), values[:1], rtol=0, atol=1e-12)


def test_features_are_invariant_to_the_window_mean_and_contrast():
    rng = np.random.default_rng(5)
    windows = rng.random((4,) + WINDOW)
    features = HaarFeatures.all(WINDOW, stride=3)
    np.testing.assert_allclose(features.evaluate(3.0 * windows + 7.0), features.evaluate(windows),
                               rtol=1e-8, atol=1e-8)


# -- 4. the same value from a window stack and from the whole image ---------------------------------------------
def test_evaluate_at_scale_one_equals_evaluate_on_the_crops():
    rng = np.random.default_rng(6)
    image = rng.random((23, 31))
    features = HaarFeatures.all(WINDOW, types=FEATURE_TYPES)
    features = features.subset(rng.choice(len(features), size=400, replace=False))
    xs, ys = np.array([0, 19, 5, 11, 19]), np.array([0, 11, 7, 0, 0])
    at = features.evaluate_at(image, xs, ys, 1.0)
    assert at.shape == (5, 400)
    np.testing.assert_allclose(at, features.evaluate(crops_of(image, WINDOW, xs, ys)), rtol=1e-9, atol=1e-9)
    # uint8 and RGB images go through as_gray_image
    colour = rng.integers(0, 256, (23, 31, 3)).astype(np.uint8)
    gray = colour.astype(np.float64) / 255.0 @ [0.299, 0.587, 0.114]
    np.testing.assert_allclose(features.evaluate_at(colour, xs, ys), features.evaluate(crops_of(gray, WINDOW, xs, ys)),
                               rtol=1e-9, atol=1e-9)


def test_evaluate_at_scale_two_equals_the_doubled_features_on_the_doubled_crop():
    rng = np.random.default_rng(8)
    image = rng.random((40, 35))
    features = HaarFeatures.all(WINDOW, types=FEATURE_TYPES)
    features = features.subset(rng.choice(len(features), size=300, replace=False))
    rects, base = features.rectangles(2.0), features.rectangles(1.0)
    assert (rects.window_width, rects.window_height) == (24, 24)
    for name in ("x", "y", "width", "height"):
        np.testing.assert_array_equal(getattr(rects, name), 2 * getattr(base, name))
    np.testing.assert_allclose(rects.coefficient, base.coefficient / 4, rtol=1e-15)

    xs, ys = np.array([0, 11, 3, 11]), np.array([0, 16, 9, 0])
    at = features.evaluate_at(image, xs, ys, 2.0)
    crops = crops_of(image, (24, 24), xs, ys)
    doubled = features.table.copy()
    doubled[:, 1:] *= 2
    np.testing.assert_allclose(at, HaarFeatures(doubled, (24, 24)).evaluate(crops), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(at[:, :40], brute_values(crops, doubled[:40]), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("window_size, scale", [((12, 12), 1.1), ((12, 12), 1.25), ((24, 24), 1.2), ((24, 24), 1.728)])
def test_scaled_rectangles_stay_inside_the_scaled_window(window_size, scale):
    rects = HaarFeatures.all(window_size, types=FEATURE_TYPES).rectangles(scale)
    used = rects.coefficient != 0
    inside = ((rects.x >= 0) & (rects.y >= 0) & (rects.x + rects.width <= rects.window_width)
              & (rects.y + rects.height <= rects.window_height))
    assert np.all(inside[used])


def test_a_full_window_feature_at_a_fractional_scale_sees_a_bright_left_half():
    feature = HaarFeatures([[0, 0, 0, 12, 12]], WINDOW)  # left half white, right half dark
    image = np.zeros((15, 15))
    image[:, :7] = 1.0  # the 15x15 window at scale 1.25 is bright on its left
    assert feature.evaluate_at(image, 0, 0, 1.25)[0, 0] > 0.5


def test_evaluate_at_rejects_bad_scales_and_windows_leaving_the_image():
    features = HaarFeatures.all(WINDOW, stride=4)
    image = np.random.default_rng(9).random((20, 20))
    for scale in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(InvalidValueError, match="^scale"):
            features.evaluate_at(image, 0, 0, scale)
    for x, y, scale in ((9, 0, 1.0), (0, 9, 1.0), (-1, 0, 1.0), (0, 0, 2.0)):
        with pytest.raises(InvalidValueError, match="^x, y"):
            features.evaluate_at(image, x, y, scale)


# -- 5. HaarFeatures validation and draw() ---------------------------------------------------------------------
@pytest.mark.parametrize("table, error", [
    (np.zeros((3, 4), dtype=np.int64), InvalidValueError),
    (np.zeros(5, dtype=np.int64), InvalidValueError),
    (np.array([[0, 0, 0, 2, 1]], dtype=np.float64), InvalidTypeError),
    (np.array([[True, False, False, True, True]]), InvalidTypeError),
    (np.array([[5, 0, 0, 2, 2]]), InvalidValueError),
    (np.array([[-1, 0, 0, 2, 2]]), InvalidValueError),
    (np.array([[0, 11, 0, 2, 1]]), InvalidValueError),
    (np.array([[1, 0, 11, 1, 2]]), InvalidValueError),
    (np.array([[0, -1, 0, 2, 1]]), InvalidValueError),
    (np.array([[0, 0, 0, 3, 1]]), InvalidValueError),
    (np.array([[2, 0, 0, 4, 1]]), InvalidValueError),
    (np.array([[4, 0, 0, 2, 3]]), InvalidValueError),
    (np.array([[0, 0, 0, 0, 1]]), InvalidValueError),
    # a position whose sum with the size wraps around int64 (found by the fuzzed cascade loader)
    (np.array([[0, 0, 2 ** 63 - 1, 2, 1]]), InvalidValueError),
    (np.array([[1, 2 ** 63 - 1, 0, 1, 2]]), InvalidValueError),
])
def test_feature_table_validation_names_the_table(table, error):
    with pytest.raises(error, match="^table"):
        HaarFeatures(table, WINDOW)


def test_feature_pool_validation():
    with pytest.raises(InvalidValueError, match="^window_size"):
        HaarFeatures.all((1, 1))
    with pytest.raises(InvalidValueError, match="^window_size"):
        HaarFeatures.all((1, 2), types="two-vertical")
    with pytest.raises(InvalidValueError, match="^types"):
        HaarFeatures.all(WINDOW, types=("two-horizontal", "diagonal"))
    with pytest.raises(InvalidValueError, match="^types"):
        HaarFeatures.all(WINDOW, types=())
    with pytest.raises(ValueError, match="^window_size"):
        HaarFeatures.all((12,))
    with pytest.raises(ValueError, match="stride"):
        HaarFeatures.all(WINDOW, stride=0)
    assert len(HaarFeatures.all((1, 2), types="two-horizontal")) == 1


def test_features_evaluate_rejects_windows_of_another_size():
    features = HaarFeatures.all(WINDOW, stride=4)
    with pytest.raises(InvalidValueError, match="^windows"):
        features.evaluate(np.zeros((2, 12, 13)))
    with pytest.raises(InvalidValueError, match="^windows"):
        features.evaluate(np.full((1,) + WINDOW, np.nan))
    with pytest.raises(InvalidTypeError, match="^windows"):
        features.evaluate(np.zeros((1,) + WINDOW, dtype=bool))


def test_draw_lightens_the_white_area_and_darkens_the_dark_area():
    rng = np.random.default_rng(10)
    window = rng.random(WINDOW)
    features = HaarFeatures.all(WINDOW, types=FEATURE_TYPES)
    stretched = (window - window.min()) / (window.max() - window.min())
    for index in (0, len(features) // 3, len(features) - 1):
        picture = features.draw(index, window)
        assert picture.shape == WINDOW + (3,) and picture.min() >= 0.0 and picture.max() <= 1.0
        white, dark = feature_masks(features.table[index], WINDOW)
        expected = np.where(white, 0.5 * stretched + 0.5, np.where(dark, 0.5 * stretched, stretched))
        for channel in range(3):
            np.testing.assert_allclose(picture[..., channel], expected, rtol=0, atol=1e-12)
    for bad in (len(features), -1):
        with pytest.raises(InvalidValueError, match="^index"):
            features.draw(bad, window)


# -- 6. QuantizedPool ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pool_data():
    rng = np.random.default_rng(11)
    features = HaarFeatures.all(WINDOW, types=FEATURE_TYPES, stride=2)
    fit = rng.random((300,) + WINDOW)
    fit[:100] += np.linspace(0, 1, 12)  # a gradient in a third of the windows
    other = rng.random((40,) + WINDOW)
    return features, fit, other


def assert_codes_match(codes, values, thresholds, tolerance=1e-10):
    """codes == #(thresholds <= value), wherever rounding of the value cannot cross a threshold."""
    expected = np.searchsorted(thresholds, values, side="right")
    near = (np.min(np.abs(values[:, None] - thresholds[None, :]), axis=1) < tolerance
            if thresholds.size else np.zeros(values.size, dtype=bool))
    assert near.mean() < 0.01
    np.testing.assert_array_equal(codes[~near], expected[~near])
    assert np.all(np.abs(codes.astype(np.int64) - expected) <= 1)


@pytest.mark.parametrize("max_bins", [2, 16, 256])
def test_pool_codes_count_the_thresholds_at_or_below_each_value(pool_data, max_bins):
    features, fit, other = pool_data
    pool = QuantizedPool(features, fit, other, max_bins=max_bins, n_threads=1)
    assert pool.codes.shape == (300, len(features)) and pool.codes.dtype == np.uint8
    assert pool.other_codes.shape == (40, len(features))
    values, other_values = features.evaluate(fit), features.evaluate(other)
    for f in range(0, len(features), 7):
        thresholds = pool.thresholds(f)
        assert thresholds.size == pool.thresholds_per_feature[f] <= max_bins - 1
        assert np.all(np.diff(thresholds) > 0)
        assert_codes_match(pool.codes[:, f], values[:, f], thresholds)
        assert_codes_match(pool.other_codes[:, f], other_values[:, f], thresholds)
    assert pool.codes.max() <= max_bins - 1
    # with more windows than bins, most features use every bin
    assert np.median(pool.thresholds_per_feature) >= min(max_bins - 1, 200)


def test_pool_without_other_windows_and_with_a_single_distinct_value():
    features = HaarFeatures.all(WINDOW, stride=4)
    flat = np.full((5,) + WINDOW, 0.25)
    pool = QuantizedPool(features, flat, n_threads=1)
    assert pool.other_codes.shape == (0, len(features))
    np.testing.assert_array_equal(pool.thresholds_per_feature, 0)
    np.testing.assert_array_equal(pool.codes, 0)
    assert pool.value_threshold(0, 0.5) == np.inf and pool.value_threshold(0, -0.5) == -np.inf


def test_pool_codes_do_not_depend_on_the_thread_count(pool_data):
    features, fit, other = pool_data
    one = QuantizedPool(features, fit, other, max_bins=32, n_threads=1)
    two = QuantizedPool(features, fit, other, max_bins=32, n_threads=2)
    np.testing.assert_array_equal(one.codes, two.codes)
    np.testing.assert_array_equal(one.other_codes, two.other_codes)
    np.testing.assert_array_equal(one.thresholds_per_feature, two.thresholds_per_feature)
    for f in (0, 777, len(features) - 1):
        np.testing.assert_array_equal(one.thresholds(f), two.thresholds(f))


def test_value_threshold_maps_code_splits_back_to_value_splits(pool_data):
    features, fit, _ = pool_data
    pool = QuantizedPool(features, fit, max_bins=8, n_threads=1)
    values = features.evaluate(fit)
    checked = 0
    for f in range(0, len(features), 53):
        k = int(pool.thresholds_per_feature[f])
        thresholds = pool.thresholds(f)
        for c in range(k):
            t = pool.value_threshold(f, c + 0.5)
            assert t == thresholds[c]
            near = np.abs(values[:, f] - t) < 1e-10
            assert near.sum() <= 1
            np.testing.assert_array_equal((values[:, f] >= t)[~near], (pool.codes[:, f] >= c + 1)[~near])
            checked += 1
        assert pool.value_threshold(f, -0.5) == -np.inf
        assert pool.value_threshold(f, k + 0.5) == np.inf
    assert checked > 100


@pytest.mark.parametrize("max_bins", [1, 0, 257, 2.5, True, "16"])
def test_pool_rejects_max_bins_out_of_range(pool_data, max_bins):
    features, fit, _ = pool_data
    with pytest.raises(InvalidValueError, match="^max_bins"):
        QuantizedPool(features, fit[:10], max_bins=max_bins)


def test_pool_rejects_bad_features_and_windows(pool_data):
    features, fit, _ = pool_data
    with pytest.raises(ValueError, match="^features"):
        QuantizedPool(features.table, fit)
    with pytest.raises(InvalidValueError, match="^windows"):
        QuantizedPool(features, fit[:, :11])
    with pytest.raises(InvalidValueError, match="^other_windows"):
        QuantizedPool(features, fit, fit[:, :, :11])


# -- 7. Cascade ------------------------------------------------------------------------------------------------
def test_passed_stages_and_accepts_match_a_manual_computation(scene):
    _, _, _, windows, cascade, stages = scene
    values = brute_values(windows, cascade.features.table)
    margins = manual_margins(values, stages)
    passed = manual_passed(margins)
    assert set(passed.tolist()) == {0, 1, 2}  # windows rejected by each stage, and accepted ones
    np.testing.assert_array_equal(cascade.passed_stages(windows), passed)
    np.testing.assert_array_equal(cascade.accepts(windows), passed == 2)
    np.testing.assert_allclose(cascade.stage_scores(windows), margins, rtol=0, atol=1e-9)
    assert len(cascade) == 2 and cascade.window_size == WINDOW


def cascade_state(cascade):
    stages = []
    for machine, threshold in cascade.stages:
        stumps = [(w.threshold, w.polarity, w.index) for w in machine.weak_machines]
        stages.append((threshold, stumps, machine.weights.tolist(), machine.baseline.tolist()))
    return cascade.window_size, cascade.features.table.tolist(), stages


def test_cascade_save_load_round_trip(scene, tmp_path):
    _, _, _, windows, cascade, _ = scene
    path = tmp_path / "cascade.hdf5"
    cascade.save(path)
    loaded = Cascade.load(path)
    assert loaded.features == cascade.features
    assert cascade_state(loaded) == cascade_state(cascade)
    assert loaded.metadata == {"made": "by hand"}
    np.testing.assert_array_equal(loaded.passed_stages(windows), cascade.passed_stages(windows))
    loaded_str = Cascade.load(str(path))
    assert cascade_state(loaded_str) == cascade_state(cascade)


@pytest.fixture
def saved(scene, tmp_path):
    path = tmp_path / "good.hdf5"
    scene[4].save(path)
    return path


def forge(path, edit):
    with h5py.File(path, "r+") as h5:
        edit(h5)


def replace_dataset(group, name, data):
    del group[name]
    group.create_dataset(name, data=data)


@pytest.mark.parametrize("damage", [
    lambda h5: h5.attrs.__delitem__("bob_boost_cascade"),
    lambda h5: h5.attrs.__setitem__("bob_boost_cascade", np.int32(2)),
    lambda h5: h5.attrs.__setitem__("WindowSize", np.array([12], dtype=np.int64)),
    lambda h5: h5.attrs.__setitem__("WindowSize", np.array([0, 12], dtype=np.int64)),
    lambda h5: h5.attrs.__setitem__("NumberOfStages", np.int64(3)),
    lambda h5: h5.__delitem__("Features"),
    lambda h5: replace_dataset(h5, "Features", np.array([[0, 11, 0, 2, 1]], dtype=np.int64)),
    lambda h5: replace_dataset(h5, "Features", np.array([[0, 0, 0, 2, 13]], dtype=np.int64)),
    lambda h5: replace_dataset(h5, "Features", np.array([[9, 0, 0, 2, 1]], dtype=np.int64)),
    lambda h5: replace_dataset(h5, "Features", np.zeros((2, 4), dtype=np.int64)),
    lambda h5: h5["Stage_1"].attrs.__delitem__("Threshold"),
    lambda h5: h5["Stage_0"].attrs.__setitem__("Threshold", np.float64(np.inf)),
    lambda h5: h5["Stage_0"].attrs.__setitem__("Threshold", np.array([1.0, 2.0])),
    lambda h5: h5["Stage_0"].attrs.__setitem__("Threshold", np.complex128(1 + 1j)),
    lambda h5: h5["Stage_0"].attrs.__setitem__("Threshold", "0.5"),
    lambda h5: replace_dataset(h5["Stage_0/WeakMachine_1"], "Index", np.array([5], dtype=np.int32)),
    lambda h5: replace_dataset(h5["Stage_1/WeakMachine_0"], "Index", np.array([-1], dtype=np.int32)),
    lambda h5: h5["Stage_0/WeakMachine_0"].attrs.__setitem__("MachineType", np.array([b"LUTMachine"])),
    lambda h5: h5.__delitem__("Stage_1"),
    lambda h5: h5.attrs.__setitem__("Metadata", "[1, 2]"),
    lambda h5: h5.attrs.__setitem__("Metadata", "{not json"),
], ids=["no-version", "version-2", "window-size-1", "window-size-0", "too-many-stages", "no-features",
        "feature-outside-width", "feature-outside-height", "unknown-type", "features-shape", "no-threshold",
        "infinite-threshold", "two-thresholds", "complex-threshold", "text-threshold",
        "stump-outside-table", "negative-index", "not-a-stump",
        "missing-stage", "metadata-list", "metadata-not-json"])
def test_loading_a_damaged_cascade_raises_model_format_error(saved, damage):
    forge(saved, damage)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a complex threshold once leaked numpy's ComplexWarning
        with pytest.raises(ModelFormatError):
            Cascade.load(saved)


def test_loading_files_that_are_not_cascades(saved, tmp_path):
    machine = stump_stage([(0.0, 1.0, 0, 1.0)])
    model = tmp_path / "model.hdf5"
    machine.save(str(model))
    with pytest.raises(ModelFormatError):
        Cascade.load(model)
    text = tmp_path / "text.hdf5"
    text.write_text("not an HDF5 file\n")
    with pytest.raises(ModelFormatError):
        Cascade.load(text)
    content = saved.read_bytes()
    for keep in (len(content) // 2, len(content) - 100, 64):
        truncated = tmp_path / f"truncated-{keep}.hdf5"
        truncated.write_bytes(content[:keep])
        with pytest.raises(ModelFormatError):
            Cascade.load(truncated)
    with pytest.raises(FileNotFoundError):
        Cascade.load(tmp_path / "missing.hdf5")


def test_a_failed_save_leaves_no_file(scene, tmp_path):
    cascade = scene[4]
    target = tmp_path / "missing-directory" / "cascade.hdf5"
    with pytest.raises(OSError):
        cascade.save(target)
    assert not target.exists() and not target.parent.exists()

    path = tmp_path / "cascade.hdf5"
    cascade.save(path)
    before = path.read_bytes()
    unsaveable = Cascade(cascade.features, cascade.stages, metadata={"not json": object()})
    with pytest.raises(TypeError):
        unsaveable.save(path)
    assert path.read_bytes() == before  # the old file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cascade.hdf5"]  # and no temporary is left
    with pytest.raises(InvalidTypeError, match="^path"):
        cascade.save(3)


def test_add_stage_rejects_what_is_not_a_one_output_stump_stage(scene):
    features = scene[4].features
    cascade = Cascade(features)
    lut_stage = BoostedMachine(number_of_outputs=1)
    lut_stage.add_weak_machine(LUTMachine(np.array([-1.0, 1.0]), [0]), 1.0)
    two_outputs = BoostedMachine()
    two_outputs.add_weak_machine(LUTMachine(np.zeros((2, 2)), [0, 1]), 1.0)
    good = stump_stage([(0.0, 1.0, 0, 1.0)])
    cases = [
        (lut_stage, 0.0, InvalidTypeError),
        ("not a machine", 0.0, InvalidTypeError),
        (two_outputs, 0.0, InvalidValueError),
        (BoostedMachine(number_of_outputs=1), 0.0, InvalidValueError),
        (stump_stage([(0.0, 1.0, len(features), 1.0)]), 0.0, InvalidValueError),
        (good, np.nan, InvalidValueError),
        (good, np.inf, InvalidValueError),
        (good, -np.inf, InvalidValueError),
    ]
    for machine, threshold, error in cases:
        with pytest.raises(error, match=r"^stages\[0\]"):
            cascade.add_stage(machine, threshold)
    assert len(cascade) == 0
    cascade.add_stage(good, 0.5)
    with pytest.raises(InvalidValueError, match=r"^stages\[1\]"):
        cascade.add_stage(good, np.nan)
    assert len(cascade) == 1
    with pytest.raises(InvalidTypeError, match="^features"):
        Cascade(features.table)
    with pytest.raises(InvalidTypeError, match=r"^stages\[0\]"):
        Cascade(features, [(lut_stage, 0.0)])


# -- 8. detect() -----------------------------------------------------------------------------------------------
def test_compiled_scan_at_scale_one_agrees_with_the_numpy_cascade(scene):
    image, xs, ys, windows, cascade, stages = scene
    found = detect(image, cascade, scale_factor=100.0, step=1, min_neighbors=0, n_threads=1)
    accepted = cascade.accepts(windows)
    assert 0 < accepted.sum() < accepted.size
    expected = sorted(zip(xs[accepted].tolist(), ys[accepted].tolist()))
    assert sorted(map(tuple, found.boxes[:, :2].tolist())) == expected
    assert found.boxes.dtype == np.int64 and np.all(found.boxes[:, 2:] == 12)
    assert found.windows == windows.shape[0]
    # the scores of raw detections are the last stage's margins
    margins = manual_margins(brute_values(windows, cascade.features.table), stages)
    by_position = {(x, y): m for x, y, m in zip(xs.tolist(), ys.tolist(), margins[:, -1])}
    np.testing.assert_allclose(found.scores, [by_position[tuple(b)] for b in found.boxes[:, :2].tolist()],
                               rtol=0, atol=1e-9)
    # early exit: every stump of the stages up to the rejecting one (or all) is evaluated
    passed = manual_passed(margins)
    lengths = np.array([len(machine) for machine, _ in cascade.stages])
    evaluated = np.cumsum(lengths)[np.minimum(passed, len(lengths) - 1)]
    assert found.features_evaluated == evaluated.sum()
    assert found.features_per_window == pytest.approx(evaluated.sum() / windows.shape[0])


def test_compiled_scan_at_scale_two_agrees_with_evaluate_at(scene):
    image, _, _, _, cascade, stages = scene
    found = detect(image, cascade, min_size=24, max_size=(24, 24), step=1.0, min_neighbors=0, n_threads=1)
    ys, xs = np.mgrid[0:30 - 23:2, 0:34 - 23:2]  # windows round(step * 2) = 2 pixels apart
    xs, ys = xs.ravel(), ys.ravel()
    assert found.windows == xs.size
    passed = manual_passed(manual_margins(cascade.features.evaluate_at(image, xs, ys, 2.0), stages))
    hit = passed == len(cascade)
    expected = sorted((x, y, 24, 24) for x, y in zip(xs[hit].tolist(), ys[hit].tolist()))
    assert sorted(map(tuple, found.boxes.tolist())) == expected


def test_detect_does_not_depend_on_the_thread_count(scene):
    rng = np.random.default_rng(12)
    image = rng.random((90, 80))  # more windows than one block at scale 1
    cascade = scene[4]
    for neighbors in (0, 2):
        one = detect(image, cascade, scale_factor=1.25, min_neighbors=neighbors, n_threads=1)
        two = detect(image, cascade, scale_factor=1.25, min_neighbors=neighbors, n_threads=2)
        assert len(one) > 0
        np.testing.assert_array_equal(one.boxes, two.boxes)
        np.testing.assert_array_equal(one.scores, two.scores)
        assert (one.windows, one.features_evaluated) == (two.windows, two.features_evaluated)
        assert one.features_per_window == one.features_evaluated / one.windows


def test_detect_on_a_uint8_colour_image_equals_detect_on_its_grey_levels(scene):
    rng = np.random.default_rng(13)
    colour = rng.integers(0, 256, (30, 34, 3)).astype(np.uint8)
    gray = colour.astype(np.float64) / 255.0 @ [0.299, 0.587, 0.114]
    a = detect(colour, scene[4], min_neighbors=0, n_threads=1)
    b = detect(gray, scene[4], min_neighbors=0, n_threads=1)
    np.testing.assert_array_equal(a.boxes, b.boxes)


def no_stage_cascade():
    return Cascade(HaarFeatures.all(WINDOW, stride=4))


@pytest.mark.parametrize("arguments, error, name", [
    ({"scale_factor": 1.0}, InvalidValueError, "scale_factor"),
    ({"scale_factor": 0.5}, InvalidValueError, "scale_factor"),
    ({"step": 0.5}, InvalidValueError, "step"),
    ({"step": 0}, InvalidValueError, "step"),
    ({"min_size": (30, 30), "max_size": (20, 20)}, InvalidValueError, "min_size"),
    ({"min_size": 0}, InvalidValueError, "min_size"),
    ({"max_size": (20, 20, 20)}, InvalidValueError, "max_size"),
    ({"min_neighbors": -1}, InvalidValueError, "min_neighbors"),
    ({"image": np.zeros((11, 40))}, InvalidValueError, "image"),
    ({"image": np.zeros((40, 11))}, InvalidValueError, "image"),
    ({"image": np.zeros((0, 0))}, InvalidValueError, "image"),
    ({"image": np.zeros((30, 30, 4))}, InvalidValueError, "image"),
    ({"image": np.full((30, 30), None, dtype=object)}, InvalidTypeError, "image"),
    ({"cascade": "cascade.hdf5"}, InvalidTypeError, "cascade"),
    ({"cascade": no_stage_cascade()}, InvalidValueError, "cascade"),
])
def test_detect_rejects_bad_arguments_naming_them(scene, arguments, error, name):
    call = {"image": scene[0], "cascade": scene[4], **arguments}
    with pytest.raises(error, match=f"^{name}"):
        detect(call.pop("image"), call.pop("cascade"), **call)


def test_detect_with_a_max_size_below_the_window_scans_nothing(scene):
    found = detect(scene[0], scene[4], max_size=(11, 11))
    assert (len(found), found.windows, found.features_per_window) == (0, 0, 0.0)


# -- 9. group_rectangles ---------------------------------------------------------------------------------------
def test_group_rectangles_merges_similar_boxes_into_their_average():
    near = np.array([[10, 10, 40, 40], [12, 10, 40, 40], [10, 13, 40, 40], [11, 11, 42, 41]])
    far = np.array([[200, 150, 30, 30], [201, 151, 31, 30]])
    boxes = np.concatenate([far, near])
    merged, counts = group_rectangles(boxes, 1)
    assert merged.dtype == np.int64
    np.testing.assert_array_equal(counts, [4, 2])  # by decreasing count
    np.testing.assert_array_equal(merged[0], np.rint(near.mean(axis=0)))
    np.testing.assert_array_equal(merged[1], np.rint(far.mean(axis=0)))
    identical, count = group_rectangles(np.tile([5, 6, 20, 24], (3, 1)), 0)
    np.testing.assert_array_equal(identical, [[5, 6, 20, 24]])
    np.testing.assert_array_equal(count, [3])


@pytest.mark.parametrize("min_neighbors, kept", [(0, [4, 2]), (1, [4, 2]), (2, [4]), (3, [4]), (4, [])])
def test_group_rectangles_keeps_groups_with_more_than_min_neighbors(min_neighbors, kept):
    boxes = np.array([[10, 10, 40, 40]] * 4 + [[200, 150, 30, 30]] * 2)
    merged, counts = group_rectangles(boxes, min_neighbors)
    assert counts.tolist() == kept and merged.shape == (len(kept), 4)


def test_group_rectangles_of_nothing_and_of_apart_boxes():
    merged, counts = group_rectangles(np.empty((0, 4)), 0)
    assert merged.shape == (0, 4) and counts.shape == (0,)
    # a side differing by more than eps * mean size separates boxes
    merged, counts = group_rectangles(np.array([[0, 0, 50, 50], [11, 0, 50, 50]]), 0)
    assert counts.tolist() == [1, 1] and sorted(merged[:, 0].tolist()) == [0, 11]
    merged, counts = group_rectangles(np.array([[0, 0, 50, 50], [9, 0, 50, 50]]), 0)
    assert counts.tolist() == [2]


def test_group_rectangles_drops_a_small_box_inside_a_bigger_group():
    big, small = [[0, 0, 100, 100]] * 6, [[30, 30, 40, 40]] * 3
    merged, counts = group_rectangles(np.array(big + small), 2)
    assert merged.tolist() == [[0, 0, 100, 100]] and counts.tolist() == [6]


def test_group_rectangles_never_drops_both_of_two_mutually_inside_groups():
    # not similar (x differs by 15 > 0.2 * (100 + 20) / 2), yet each lies inside the other
    a, b = [0, 0, 100, 20], [15, 0, 100, 20]
    merged, counts = group_rectangles(np.array([a] * 3 + [b] * 3), 2)
    assert sorted(merged.tolist()) == [a, b] and counts.tolist() == [3, 3]


# -- 10. train_cascade -----------------------------------------------------------------------------------------
PATTERN = np.zeros(WINDOW)
PATTERN[3:6, 2:10] = -1.0
PATTERN[7:9, 4:8] = 0.5


def synthetic_faces(rng, n):
    return 0.5 + 0.1 * PATTERN + 0.15 * rng.standard_normal((n,) + WINDOW)


@pytest.fixture(scope="module")
def training():
    rng = np.random.default_rng(14)
    faces = synthetic_faces(rng, 200)
    negative_images = [0.5 + 0.15 * rng.standard_normal((48, 48)) for _ in range(4)]
    features = HaarFeatures.all(WINDOW, stride=2)
    settings = {"features": features, "max_stages": 3, "max_rounds": 10, "detection_rate": 0.95,
                "random_state": 3}
    cascade = train_cascade(faces, negative_images, n_threads=1, **settings)
    return faces, negative_images, settings, cascade


def test_train_cascade_returns_stump_stages_over_its_own_compact_table(training):
    _, _, settings, cascade = training
    pool = settings["features"]
    assert isinstance(cascade, Cascade) and 1 <= len(cascade) <= 3 and cascade.window_size == WINDOW
    pool_rows = {tuple(row) for row in pool.table.tolist()}
    assert all(tuple(row) in pool_rows for row in cascade.features.table.tolist())
    used = set()
    for machine, threshold in cascade.stages:
        assert 1 <= len(machine) <= 10 and machine.number_of_outputs == 1 and np.isfinite(threshold)
        for weak in machine.weak_machines:
            assert type(weak) is StumpMachine and 0 <= weak.index < len(cascade.features)
            used.add(weak.index)
    assert used == set(range(len(cascade.features)))  # the table holds exactly the features the stumps use
    reports = cascade.metadata["stages"]
    assert [r["stage"] for r in reports] == list(range(1, len(cascade) + 1))
    for report, (machine, threshold) in zip(reports, cascade.stages):
        assert report["detection_rate"] >= 0.95
        assert report["rounds"] == len(machine) and report["threshold"] == threshold
        assert report["false_positive_rate"] <= 0.5 or report["rounds"] == 10
    assert cascade.metadata["pool_features"] == len(pool)


def test_trained_cascade_separates_new_faces_from_noise(training):
    rng = np.random.default_rng(15)
    cascade = training[3]
    assert len(cascade) >= 2
    assert cascade.accepts(synthetic_faces(rng, 300)).mean() >= 0.75
    assert cascade.accepts(0.5 + 0.15 * rng.standard_normal((300,) + WINDOW)).mean() <= 0.3


def test_train_cascade_is_deterministic(training, tmp_path):
    faces, negative_images, settings, cascade = training
    again = train_cascade(faces, negative_images, n_threads=1, **settings)
    threaded = train_cascade(faces, negative_images, n_threads=2, **settings)
    loaded = []
    for k, c in enumerate((cascade, again, threaded)):
        c.save(tmp_path / f"{k}.hdf5")
        loaded.append(Cascade.load(tmp_path / f"{k}.hdf5"))
    assert cascade_state(loaded[0]) == cascade_state(loaded[1]) == cascade_state(loaded[2])
    assert cascade_state(loaded[0]) == cascade_state(cascade)


def test_train_cascade_with_adaboostdb_stages_on_a_small_pool(training):
    faces, negative_images, settings, _ = training
    pool = settings["features"]
    small = pool.subset(np.linspace(0, len(pool) - 1, 300).round().astype(np.int64))
    cascade = train_cascade(faces[:120], negative_images, features=small, stage_learner=AdaBoostDBStage(2.0, 1.0),
                            max_stages=2, max_rounds=5, detection_rate=0.95, random_state=0, n_threads=1)
    assert len(cascade) >= 1
    for machine, _ in cascade.stages:
        assert 1 <= len(machine) <= 5 and all(type(w) is StumpMachine for w in machine.weak_machines)
    assert all(r["detection_rate"] >= 0.95 for r in cascade.metadata["stages"])


class NoFit:
    pass


@pytest.mark.parametrize("change, error, name", [
    ({"detection_rate": 0.0}, InvalidValueError, "detection_rate"),
    ({"detection_rate": 1.5}, InvalidValueError, "detection_rate"),
    ({"false_positive_rate": 0.0}, InvalidValueError, "false_positive_rate"),
    ({"faces": np.zeros((20, 12))}, InvalidValueError, "faces"),
    ({"faces": np.zeros((2, 5, 12, 12))}, InvalidValueError, "faces"),
    ({"features": HaarFeatures.all((10, 12), stride=2)}, InvalidValueError, "features"),
    ({"groups": np.arange(5)}, InvalidValueError, "groups"),
    ({"stage_learner": NoFit()}, InvalidTypeError, "stage_learner"),
    ({"max_stages": 0}, ValueError, "max_stages"),
    ({"validation_fraction": 1.0}, InvalidValueError, "validation_fraction"),
])
def test_train_cascade_rejects_bad_arguments_naming_them(training, change, error, name):
    faces, negative_images, settings, _ = training
    call = {"faces": faces[:40], **settings, **change}
    with pytest.raises(error, match=f"^{name}"):
        train_cascade(call.pop("faces"), negative_images, n_threads=1, **call)


# -- 11. scikit-image's bundled data (optional extra) ----------------------------------------------------------
def test_crops_gives_every_shift_and_its_mirror_image_grouped_by_source():
    from bob_boost.vision import data  # pure numpy: no scikit-image needed
    rng = np.random.default_rng(16)
    windows = rng.random((3, 25, 25))
    crops, groups = data.crops(windows)
    assert crops.shape == (3 * 4 * 2, 24, 24)
    np.testing.assert_array_equal(groups, np.repeat(np.arange(3), 8))
    for crop, group in zip(crops, groups):
        variants = [windows[group, dy:dy + 24, dx:dx + 24] for dy in (0, 1) for dx in (0, 1)]
        variants += [v[:, ::-1] for v in variants]
        assert sum(np.array_equal(crop, v) for v in variants) == 1
    plain, plain_groups = data.crops(windows, mirror=False)
    assert plain.shape == (12, 24, 24) and plain_groups.tolist() == [0] * 4 + [1] * 4 + [2] * 4
    assert data.crops(windows, size=(20, 22))[0].shape == (3 * 6 * 4 * 2, 20, 22)


def test_lfw_windows_and_negative_images():
    pytest.importorskip("skimage", reason="the face data need scikit-image (the optional faces extra)")
    from bob_boost.vision import data, example
    faces, non_faces = data.lfw_windows()
    assert faces.shape == non_faces.shape == (100, 25, 25)
    assert faces.min() >= 0.0 and faces.max() <= 1.0
    assert not np.array_equal(faces, non_faces)
    assert "astronaut" not in data.NEGATIVE_IMAGES and "grass" not in data.NEGATIVE_IMAGES
    images = data.negative_images(transposed=False)
    assert len(images) == len(data.NEGATIVE_IMAGES)
    for image in images:
        assert as_gray_image(image, minimum_size=(24, 24)).ndim == 2
    both = data.negative_images()
    assert len(both) == 2 * len(images)
    for image, turned in zip(images, both[len(images):]):
        assert np.array_equal(np.swapaxes(image, 0, 1), turned)
    training, held_out = example.face_split()
    assert np.intersect1d(training, held_out).size == 0
    assert np.union1d(training, held_out).tolist() == list(range(100))
    assert example.held_out_faces().shape == (held_out.size * 4, 24, 24)


def _brute_groups(boxes, min_neighbors, eps=0.2):
    """OpenCV's similarity partition by brute force, then the average box and count of every large group."""
    n = len(boxes)
    parent = list(range(n))

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    x, y, w, h = boxes.T.astype(float)
    for i in range(n):
        for j in range(i + 1, n):
            d = eps * 0.5 * (min(w[i], w[j]) + min(h[i], h[j]))
            if (abs(x[i] - x[j]) <= d and abs(y[i] - y[j]) <= d and abs(x[i] + w[i] - x[j] - w[j]) <= d
                    and abs(y[i] + h[i] - y[j] - h[j]) <= d):
                a, b = root(i), root(j)
                parent[max(a, b)] = min(a, b)
    labels = np.array([root(i) for i in range(n)])
    groups = {}
    for label in np.unique(labels):
        members = boxes[labels == label]
        if len(members) > min_neighbors:
            groups[tuple(np.rint(members.mean(axis=0)).astype(int))] = len(members)
    return groups


@pytest.mark.parametrize("seed", range(20))
def test_group_rectangles_partitions_as_the_brute_force_relation(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 80))
    sizes = rng.choice([10, 12, 14, 17, 20, 24], size=n)
    heights = sizes if seed % 2 else rng.choice([10, 12, 14, 17], size=n)
    boxes = np.column_stack([rng.integers(-5, 40, n), rng.integers(-5, 40, n), sizes, heights])
    merged, counts = group_rectangles(boxes, 0)
    expected = _brute_groups(boxes, 0)
    found = {tuple(b): int(c) for b, c in zip(merged.tolist(), counts.tolist())}
    # the inside-another-box rule may only remove groups, never invent or change one
    assert all(expected.get(box) == count for box, count in found.items())
    assert sum(counts) >= max(expected.values())


def test_group_rectangles_of_every_window_of_an_image_is_one_box_quickly():
    side = np.arange(0, 300)
    boxes = np.column_stack([np.repeat(side, side.size), np.tile(side, side.size), np.full(side.size ** 2, 24),
                             np.full(side.size ** 2, 24)])
    merged, counts = group_rectangles(boxes, 3)
    assert merged.tolist() == [[150, 150, 24, 24]] and counts.tolist() == [side.size ** 2]


def test_group_rectangles_rejects_non_integer_boxes():
    with pytest.raises(ValueError, match="boxes"):
        group_rectangles(np.array([[0.5, 0, 10, 10]]), 0)


@pytest.mark.long
def test_boosted_haar_stumps_tell_lfw_faces_from_non_faces_in_cross_validation():
    pytest.importorskip("skimage", reason="the LFW windows come with scikit-image (the faces extra)")
    from bob_boost import Boosting, ExponentialLoss, StumpTrainer
    from bob_boost.vision import data

    faces, non_faces = data.lfw_windows()
    values = HaarFeatures.all((25, 25), stride=3).evaluate(np.concatenate([faces, non_faces]))
    labels = np.repeat([1.0, -1.0], 100)
    folds = np.random.default_rng(0).permutation(200) % 3
    aucs = []
    for fold in range(3):
        train, test = folds != fold, folds == fold
        machine = Boosting(StumpTrainer(), ExponentialLoss()).train(values[train], labels[train], 20)
        scores = machine.decision_scores(values[test])[:, 0]
        positive, negative = scores[labels[test] > 0], scores[labels[test] < 0]
        # AUC: the fraction of (face, non-face) pairs ordered correctly, ties counting half
        aucs.append(np.mean((positive[:, None] > negative[None, :]) + 0.5 * (positive[:, None] == negative[None, :])))
    # scikit-image's gallery example reports an AUC near 1 on these windows; 20 stumps get close
    assert min(aucs) > 0.95, aucs
