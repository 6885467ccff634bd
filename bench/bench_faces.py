"""Viola-Jones face detection with ``bob_boost.vision`` against scikit-image's and OpenCV's cascades.

Every number is computed in the run from the library as it is (nothing is hard-coded):

1. **Detection** on evaluation images never used in training: ``skimage.data.astronaut()`` (one face,
   ``bob_boost.vision.data.ASTRONAUT_FACE``), the face-free ``grass()`` and the face-free images of
   ``--extra-images`` (default ``stereo_motorcycle``; names in ``data.NEGATIVE_IMAGES`` or showing faces are
   refused). Detectors, with OpenCV's parameters made as equal as the libraries allow (scale factor
   ``--scale-factor`` 1.2, smallest window 24x24 or the detector's base window, largest the image, OpenCV's
   ``minNeighbors=3``, i.e. a box needs at least 4 raw detections):

   - bob_boost: ``bob_boost.vision.detect(image, cascade, scale_factor, min_size, max_size, min_neighbors=3)``
     with the cascade of ``--cascade FILE`` or, by default, ``example.train_example_cascade()`` trained in the
     run (its training time is reported);
   - scikit-image's MB-LBP cascade ``skimage.feature.Cascade(data.lbp_frontal_face_cascade_filename())``,
     ``detect_multi_scale(step_ratio=1, min_neighbor_number=4)`` (it keeps clusters of at least that many);
   - OpenCV's ``haarcascade_frontalface_default.xml`` ``detectMultiScale(gray, scaleFactor, minNeighbors=3,
     minSize)`` (skipped, with the reason, when ``cv2`` is missing);
   - the same XML file run by bob_boost, ``bob_boost.vision.CascadeClassifier(path).detect(gray, scaleFactor,
     3, minSize)``, which gives OpenCV's boxes (its windows are those it scans; ``bench/bench_opencv_cascades.py``
     compares the two on every shipped cascade and times them with 1 and 2 threads).

   bob_boost reports the windows it scans and the features it evaluates. scikit-image and OpenCV do not:
   their windows are counted on the grid their sources scan (see :func:`skimage_windows` and
   :func:`opencv_windows`), and their features per window are "n/a". Times are the fastest of ``--repeats``.
   A detection is the face when its IoU with the true box is >= 0.5; every other box is a false positive.
2. **The bob_boost cascade on held-out windows**: detection rate on ``example.held_out_faces()``, false-positive
   rate on every 24x24 window, 4 pixels apart, of ``grass`` and its pyramid (``cascade.passed_stages``), the
   same through ``detect(step=4, min_neighbors=0)``, and the per-stage report of ``cascade.metadata["stages"]``.
3. **LFW faces vs non-faces** (``data.lfw_windows()``, 100 + 100 windows of 25x25), 5-fold stratified cross
   validation (shuffled, ``random_state=0``, the same folds for both): bob_boost's ``HaarFeatures.all((25, 25))``
   values and ``--cv-rounds`` rounds of boosted stumps (``Boosting(StumpTrainer(), ExponentialLoss())``) against
   scikit-image's gallery example (``haar_like_feature`` on ``integral_image`` of each window, gallery feature
   types ``type-2-x``/``type-2-y`` unless ``--skimage-types``, then ``RandomForestClassifier(n_estimators=1000,
   max_depth=None, max_features=100, n_jobs=-1, random_state=0)``): AUC, accuracy, features used, seconds.
4. **Training cost**: the example cascade's training time (from 1.) and one stage on the full 24x24 pool
   (``HaarFeatures.all((24, 24))``, ``train_cascade(..., max_stages=1)`` with the example's positives, negatives
   and settings) in a fresh process (``--stage-worker``): its time, its peak resident memory
   (``ru_maxrss``) and the bytes of the ``QuantizedPool`` it builds.

Usage (from the repository root; a stale bob_boost may be installed in site-packages)::

    PYTHONPATH=. python bench/bench_faces.py [--cascade FILE] [--repeats 3] [--quick] [--skip-cv]
        [--skip-stage] [--threads N] [--extra-images stereo_motorcycle,retina] [--out FILE]

``--quick`` (development): one repeat, every 20th feature in the cross validation, no full-pool stage.
The full run: ``PYTHONPATH=. python bench/bench_faces.py --out bench/results/faces_<machine>.md``.

Needs scikit-image (``pip install ".[faces]"``) and scikit-learn; OpenCV (``opencv-python-headless``) is optional.
The script writes nothing but its output (and the ``--out`` copy of it).
"""
from __future__ import annotations

import argparse
import inspect
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from _timing import fastest  # bench/, beside this script

#: Images of skimage.data that show faces (never an evaluation image for false positives).
FACE_IMAGES = ("astronaut", "camera", "chelsea", "cat")

#: Pixels between the held-out grass windows of section 2.
GRASS_STEP = 4

#: Fraction of the cross-validation features kept by ``--quick``.
QUICK_FEATURE_STRIDE = 20

#: scikit-image feature types of ``--skimage-types``.
SKIMAGE_TYPES = {"gallery": ("type-2-x", "type-2-y"),
                 "chapter": ("type-2-x", "type-2-y", "type-3-x", "type-4"),
                 "all": ("type-2-x", "type-2-y", "type-3-x", "type-3-y", "type-4")}


# -- output --------------------------------------------------------------------------------------

class Report:
    """Markdown lines printed as they come and kept for ``--out``."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, line: str = "") -> None:
        print(line, flush=True)
        self.lines.append(line)

    def table(self, headers, rows) -> None:
        self("| " + " | ".join(headers) + " |")
        self("|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|")
        for row in rows:
            self("| " + " | ".join(str(cell) for cell in row) + " |")
        self()


def fmt(value, digits: int = 3) -> str:
    """A number for a table (n/a for None)."""
    if value is None:
        return "n/a"
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    if not np.isfinite(value):
        return "inf"
    return f"{value:.{digits}f}"


def rate(count: float, windows: float) -> float | None:
    """Per million windows."""
    return 1e6 * count / windows if windows else None


def iou(a, b) -> float:
    """Intersection over union of two (x, y, w, h) boxes."""
    ax, ay, aw, ah = (float(v) for v in a)
    bx, by, bw, bh = (float(v) for v in b)
    w = max(0.0, min(ax + aw, bx + bw) - max(ax, bx))
    h = max(0.0, min(ay + ah, by + bh) - max(ay, by))
    inter = w * h
    union = aw * ah + bw * bh - inter
    return inter / union if union > 0 else 0.0


# -- images --------------------------------------------------------------------------------------

def load_image(name: str) -> np.ndarray:
    """``skimage.data.<name>()`` as uint8 grey or RGB (first of a tuple, alpha dropped, booleans as 0/255)."""
    from skimage import data as skdata
    pixels = getattr(skdata, name)()
    if isinstance(pixels, tuple):  # stereo_motorcycle: (left, right, disparity)
        pixels = pixels[0]
    pixels = np.asarray(pixels)
    if pixels.ndim == 3 and pixels.shape[2] == 4:
        pixels = pixels[:, :, :3]
    if pixels.dtype == bool:
        pixels = pixels.astype(np.uint8) * 255
    elif pixels.dtype != np.uint8:
        pixels = np.clip(np.rint(255 * (pixels - pixels.min()) / max(np.ptp(pixels), 1e-12)), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(pixels)


def evaluation_images(extra: list[str], report: Report) -> list[tuple[str, np.ndarray, tuple | None]]:
    """(name, uint8 image, true face box or None) of the evaluation images."""
    from bob_boost.vision import data
    out = [("astronaut", load_image("astronaut"), tuple(data.ASTRONAUT_FACE))]
    names = ["grass"] + [n for n in extra if n and n != "grass"]
    for name in names:
        if name in data.NEGATIVE_IMAGES:
            report(f"_Skipped evaluation image `{name}`: it is in `data.NEGATIVE_IMAGES` (used in training)._")
            continue
        if name in FACE_IMAGES:
            report(f"_Skipped evaluation image `{name}`: it shows a face._")
            continue
        try:
            out.append((name, load_image(name), None))
        except Exception as error:  # a name skimage.data does not have, or needs a download
            report(f"_Skipped evaluation image `{name}`: {type(error).__name__}: {error}_")
    return out


# -- window counts of the other libraries ----------------------------------------------------------

def skimage_windows(detector, shape: tuple[int, int], scale_factor: float, min_size, max_size,
                    step_ratio: float = 1.0) -> int:
    """Windows ``skimage.feature.Cascade.detect_multi_scale`` classifies (skimage/feature/_cascade.pyx).

    Its scales are the cascade's own ``_get_valid_scale_factors(min_size, max_size, scale_factor)`` (float32
    powers); at scale ``s`` the window is ``int(base * s)`` pixels, the step ``round(s * step_ratio)``, and rows
    and columns run from 0 while ``< image size - window size`` (the integral image has the image's size).
    """
    height, width = shape
    factors = detector._get_valid_scale_factors(min_size, max_size, float(np.float32(scale_factor)))
    total = 0
    for s in np.asarray(factors, dtype=np.float32):
        step = int(math.floor(float(np.float32(s * np.float32(step_ratio))) + 0.5))
        win_h = int(np.float32(detector.window_height) * s)
        win_w = int(np.float32(detector.window_width) * s)
        max_row, max_col = height - win_h, width - win_w
        if max_row < 0 or max_col < 0 or step < 1:
            continue
        total += math.ceil(max_row / step) * math.ceil(max_col / step)
    return total


def opencv_windows(shape: tuple[int, int], window: tuple[int, int], scale_factor: float, min_size) -> int:
    """Grid positions OpenCV's ``CascadeClassifier::detectMultiScale`` visits (modules/objdetect/src/cascadedetect.cpp).

    Scales ``factor = scale_factor**k`` (from 1) whose window ``cvRound(base * factor)`` is at least ``min_size``
    and fits the image; at each the image is resized to ``cvRound(size / factor)`` and windows lie ``ystep``
    pixels apart there (``ystep = 1`` when ``factor >= 2``, else 2) on the working size ``resized + 1 - base``,
    rows split in stripes as ``detectMultiScaleNoGrouping`` does. This is an upper bound: after a window the
    first stage rejects, OpenCV skips the next position of the row, which depends on the pixels.
    """
    height, width = shape
    base_w, base_h = window
    factors, factor = [], 1.0
    while True:
        win_w, win_h = int(np.rint(base_w * factor)), int(np.rint(base_h * factor))
        if win_w > width or win_h > height:
            break
        if win_w >= min_size[0] and win_h >= min_size[1]:
            factors.append(np.float32(factor))
        factor *= scale_factor
    if not factors:
        return 0
    working = []
    for sc in factors:
        resized_w = int(np.rint(np.float32(width) / sc))
        resized_h = int(np.rint(np.float32(height) / sc))
        working.append((max(resized_w + 1 - base_w, 0), max(resized_h + 1 - base_h, 0), 1 if sc >= 2 else 2))
    stripes = math.ceil(working[0][0] / 32.0)
    total = 0
    for szw_w, szw_h, ystep in working:
        stripe = max((szw_h // ystep + stripes - 1) // stripes, 1) * ystep
        rows_end = min(stripes * stripe, szw_h)
        total += math.ceil(rows_end / ystep) * math.ceil(szw_w / ystep)
    return total


# -- section 1: detection ----------------------------------------------------------------------------

def make_detectors(cascade, args, report: Report) -> list[tuple[str, object]]:
    """(name, detect(image) -> (boxes (n, 4) x, y, w, h, windows, features per window or None)) per detector."""
    from skimage import data as skdata
    from skimage.feature import Cascade as SkimageCascade

    from bob_boost.vision import detect

    detectors = []
    base_h, base_w = cascade.window_size
    bob_min = (max(24, base_w), max(24, base_h))

    def bob(image):
        found = detect(image, cascade, scale_factor=args.scale_factor, min_size=bob_min,
                       max_size=(image.shape[1], image.shape[0]), min_neighbors=3, n_threads=args.threads)
        return np.asarray(found.boxes).reshape(-1, 4), found.windows, found.features_per_window

    detectors.append(("bob_boost", bob))

    lbp = SkimageCascade(skdata.lbp_frontal_face_cascade_filename())
    sk_min = (max(24, lbp.window_height), max(24, lbp.window_width))  # (rows, cols)

    def skimage_lbp(image):
        limits = _openmp_limits(args.threads)
        with limits:
            found = lbp.detect_multi_scale(img=image, scale_factor=args.scale_factor, step_ratio=1,
                                           min_size=sk_min, max_size=image.shape[:2], min_neighbor_number=4)
        boxes = np.array([[d["c"], d["r"], d["width"], d["height"]] for d in found], dtype=np.int64).reshape(-1, 4)
        return boxes, skimage_windows(lbp, image.shape[:2], args.scale_factor, sk_min, image.shape[:2]), None

    detectors.append(("scikit-image LBP", skimage_lbp))

    try:
        import cv2
    except ImportError as error:
        report(f"_OpenCV skipped: cv2 cannot be imported ({error})._")
        report()
        return detectors
    if args.threads is not None:
        cv2.setNumThreads(args.threads)
    haar = cv2.CascadeClassifier(cv2.data.haarcascades + "haarcascade_frontalface_default.xml")
    if haar.empty():
        report("_OpenCV skipped: haarcascade_frontalface_default.xml did not load._")
        report()
        return detectors
    cv_window = tuple(int(v) for v in haar.getOriginalWindowSize())  # (width, height)
    cv_min = (max(24, cv_window[0]), max(24, cv_window[1]))

    def opencv(image):
        gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY) if image.ndim == 3 else image
        found = haar.detectMultiScale(gray, scaleFactor=args.scale_factor, minNeighbors=3, minSize=cv_min)
        boxes = np.asarray(found, dtype=np.int64).reshape(-1, 4)
        return boxes, opencv_windows(gray.shape, cv_window, args.scale_factor, cv_min), None

    detectors.append((f"OpenCV {cv2.__version__} Haar", opencv))

    from bob_boost.vision import CascadeClassifier
    ported = CascadeClassifier(cv2.data.haarcascades + "haarcascade_frontalface_default.xml")

    def bob_opencv(image):
        gray = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY) if image.ndim == 3 else image
        found = ported.detect(gray, scale_factor=args.scale_factor, min_neighbors=3, min_size=cv_min,
                              n_threads=args.threads)
        return np.asarray(found.boxes, dtype=np.int64).reshape(-1, 4), found.windows, None

    detectors.append(("bob_boost running OpenCV's Haar XML", bob_opencv))
    return detectors


class _NoLimit:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def _openmp_limits(threads):
    """A context limiting OpenMP threads (scikit-image's cascade) to ``threads``, if given."""
    if threads is None:
        return _NoLimit()
    from threadpoolctl import threadpool_limits
    return threadpool_limits(limits=threads, user_api="openmp")


def progress(message: str) -> None:
    """A progress note on stderr (not part of the markdown)."""
    print(f"[bench_faces {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def detection_section(cascade, images, args, report: Report, example_seconds: float | None = None) -> dict:
    """Section 1's table and summary; returns the per-detector totals."""
    detectors = make_detectors(cascade, args, report)
    warm = load_image("astronaut")[:96, :96]
    for _, run in detectors:  # loads compiled kernels / caches before timing
        run(warm)
    rows, totals = [], {}
    for name, run in detectors:
        progress(f"detection: {name}")
        total = totals.setdefault(name, {"fp": 0, "windows": 0, "seconds": 0.0, "found": None,
                                         "features": 0.0, "features_known": True})
        for image_name, image, face in images:
            seconds, (boxes, windows, per_window) = fastest(lambda: run(image), args.repeats)
            overlaps = [iou(box, face) for box in boxes] if face is not None else []
            matched = sum(o >= 0.5 for o in overlaps)
            fp = len(boxes) - matched if face is not None else len(boxes)
            found = ("yes" if matched else "no") if face is not None else "-"
            if face is not None:
                total["found"] = bool(matched)
            total["fp"] += fp
            total["windows"] += windows
            total["seconds"] += seconds
            if per_window is None:
                total["features_known"] = False
            else:
                total["features"] += per_window * windows
            rows.append([name, image_name, "x".join(str(v) for v in image.shape[:2]), len(boxes), found, fp,
                         fmt(int(windows)), fmt(rate(fp, windows), 2), fmt(windows / seconds / 1e6, 2),
                         fmt(per_window, 2), fmt(1e3 * seconds, 1)])
    report("## 1. Detection on the evaluation images")
    report()
    report(f"Scale factor {args.scale_factor}, smallest window 24x24 (or the detector's base window), largest the "
           f"image; OpenCV's minNeighbors=3 (bob_boost `min_neighbors=3`, scikit-image `min_neighbor_number=4`). "
           f"Time: fastest of {args.repeats}. `face` is a box with IoU >= 0.5 with `data.ASTRONAUT_FACE`; every "
           f"other box is a false positive (FP).")
    report()
    report.table(["detector", "image", "size", "detections", "face", "FP", "windows", "FP / M windows",
                  "M windows/s", "features/window", "ms"], rows)
    report("Windows: bob_boost's `Detections.windows` (scanned); scikit-image's counted on the grid of its scan "
           "loop (`_get_valid_scale_factors` scales, step `round(scale)`, positions `< image - window`); OpenCV's "
           "on the grid of `detectMultiScale` (image resized per scale, step 2 below scale 2, else 1): an upper "
           "bound, as OpenCV skips the position after each window its first stage rejects. Features per window "
           "are not reported by scikit-image or OpenCV (n/a).")
    report()
    summary = []
    for name, total in totals.items():
        per_window = total["features"] / total["windows"] if total["features_known"] and total["windows"] else None
        summary.append([name, total["fp"], fmt(int(total["windows"])), fmt(rate(total["fp"], total["windows"]), 2),
                        fmt(total["windows"] / total["seconds"] / 1e6, 2) if total["seconds"] else "n/a",
                        fmt(per_window, 2), fmt(total["seconds"], 3),
                        "yes" if total["found"] else "no"])
    report("### Summary over all evaluation images")
    report()
    report.table(["detector", "FP", "windows", "FP / M windows", "M windows/s", "features/window", "seconds",
                  "astronaut's face found"], summary)
    ours, theirs = totals["bob_boost"], totals["scikit-image LBP"]
    ours_fp, theirs_fp = rate(ours["fp"], ours["windows"]), rate(theirs["fp"], theirs["windows"])
    if theirs_fp:
        ratio = ours_fp / theirs_fp
        verdict = f"{ratio:.2f}x scikit-image's ({'met' if ratio <= 10 else 'NOT met'}: target <= 10x)"
    elif ours_fp:
        verdict = "scikit-image has no false positive, bob_boost has some (target <= 10x NOT met)"
    else:
        verdict = "neither has a false positive (target met)"
    speed = (ours["windows"] / ours["seconds"]) / (theirs["windows"] / theirs["seconds"])
    report(f"- bob_boost false positives per million windows: {fmt(ours_fp, 2)} vs scikit-image's "
           f"{fmt(theirs_fp, 2)}: {verdict}")
    report(f"- bob_boost windows/s: {speed:.2f}x scikit-image's ({'met' if speed >= 1 else 'NOT met'}: target >= 1x)")
    report(f"- bob_boost finds the astronaut's face: {'yes' if ours['found'] else 'no'}")
    report("- training time of the example cascade: " + (f"{example_seconds:.2f} s (`example.train_example_cascade()`, "
                                                          "one run)" if example_seconds is not None
                                                          else "n/a (`--cascade` given)"))
    report()
    return totals


# -- section 2: held-out windows ---------------------------------------------------------------------

def face_sizes_section(cascade, args, report: Report) -> None:
    """The astronaut photograph resized so that its face spans about 40 to 200 pixels: found at each size?"""
    from scipy import ndimage

    from bob_boost.vision import data, detect

    report("### Face sizes (default parameters)")
    report()
    report("`detect(image, cascade)` with its defaults on `astronaut()` resized by bilinear zoom (the true box "
           "scaled with it).")
    report()
    rows = []
    for zoom in (0.45, 0.6, 1.0, 1.6, 2.2):
        image = ndimage.zoom(data.image("astronaut"), (zoom, zoom, 1), order=1)
        truth = tuple(v * zoom for v in data.ASTRONAUT_FACE)
        found = detect(image, cascade, n_threads=args.threads)
        best = max((iou(box, truth) for box in found.boxes.tolist()), default=0.0)
        rows.append([f"{zoom:g}", f"{image.shape[1]}x{image.shape[0]}", f"{truth[2]:.0f}", len(found),
                     "yes" if best >= 0.5 else "no", fmt(best, 2)])
    report.table(["zoom", "image", "face width px", "boxes", "face found", "best IoU"], rows)


def pyramid_windows(image, window_size, step: int, factor: float) -> np.ndarray:
    """Every ``window_size`` window, ``step`` pixels apart, of a grey image and its pyramid (``factor`` apart)."""
    from numpy.lib.stride_tricks import sliding_window_view
    from scipy import ndimage
    gray, out = image, []
    while gray.shape[0] >= window_size[0] and gray.shape[1] >= window_size[1]:
        views = sliding_window_view(gray, window_size)[::step, ::step]
        out.append(views.reshape(-1, *window_size))
        gray = ndimage.zoom(gray, 1.0 / factor, order=1)
    return np.concatenate(out)


def passed_in_chunks(cascade, windows: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """``cascade.passed_stages`` over a large stack, in chunks."""
    return np.concatenate([cascade.passed_stages(windows[a:a + chunk]) for a in range(0, len(windows), chunk)])


def held_out_section(cascade, trained_here: bool, args, report: Report) -> None:
    """Section 2: held-out faces, grass windows, per-stage report."""
    from bob_boost.vision import as_gray_image, detect, example, training
    report("## 2. The bob_boost cascade on held-out windows")
    report()
    report(f"Cascade: {cascade!r}.")
    if not trained_here:
        report("The held-out faces are those of `example.face_split`: meaningful only if the cascade was trained "
               "on the example's training faces.")
    report()
    faces = example.held_out_faces()
    if faces.shape[1:] == tuple(cascade.window_size):
        passed = passed_in_chunks(cascade, faces)
        face_row = ["held-out LFW faces (`example.held_out_faces()`)", fmt(len(faces)),
                    int(np.sum(passed == len(cascade))), fmt(float(np.mean(passed == len(cascade))), 4), "-",
                    fmt(float(np.mean(passed)), 2)]
    else:
        face_row = [f"held-out LFW faces: n/a, they are {faces.shape[1]}x{faces.shape[2]}, not the cascade's window",
                    fmt(len(faces)), "n/a", "n/a", "-", "n/a"]
    factor = float(getattr(training, "PYRAMID_FACTOR", 1.25))
    grass = as_gray_image(load_image("grass"))
    windows = pyramid_windows(grass, cascade.window_size, GRASS_STEP, factor)
    grass_passed = passed_in_chunks(cascade, windows)
    accepted = int(np.sum(grass_passed == len(cascade)))
    raw = detect(grass, cascade, scale_factor=factor, step=GRASS_STEP, min_neighbors=0, n_threads=args.threads)
    rows = [face_row,
            [f"grass + pyramid (x1/{factor:g}), every window {GRASS_STEP} px apart (`cascade.passed_stages`)",
             fmt(len(windows)), accepted, "-", fmt(accepted / len(windows), 6), fmt(float(np.mean(grass_passed)), 2)],
            [f"grass, `detect(scale_factor={factor:g}, step={GRASS_STEP}, min_neighbors=0)` raw detections",
             fmt(int(raw.windows)), len(raw), "-", fmt(len(raw) / raw.windows if raw.windows else None, 6), "-"]]
    report.table(["windows", "count", "accepted", "detection rate", "false-positive rate", "mean stages passed"],
                 rows)
    stages = cascade.metadata.get("stages") if isinstance(cascade.metadata, dict) else None
    if not stages:
        report("_The cascade's metadata has no per-stage report._")
        report()
        return
    preferred = ["stage", "rounds", "threshold", "detection_rate", "false_positive_rate",
                 "cascade_false_positive_rate", "training_faces", "training_negatives", "features_searched", "seconds"]
    keys = [k for k in preferred if any(k in s for s in stages)]
    # the same for every stage: said once below the table
    keys += sorted({k for s in stages for k in s} - set(keys) - {"windows_mined", "pool_bytes"})
    report("Per-stage report (`cascade.metadata[\"stages\"]`; rates on the stage's held-out windows, "
           "`cascade_false_positive_rate` on the mined windows before the stage):")
    report()
    report.table(keys, [[_cell(s.get(k)) for k in keys] for s in stages])
    if "windows_mined" in stages[0]:
        report(f"Negatives were mined from {stages[0]['windows_mined']:,} windows (every position of every pyramid "
               f"level of the training images, and the LFW non-face windows).")
        report()
    extras = {k: v for k, v in cascade.metadata.items() if k != "stages"}
    if extras:
        report("Cascade metadata: " + ", ".join(f"`{k}` = {_cell(v)}" for k, v in sorted(extras.items())))
        report()


def _cell(value) -> str:
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return fmt(int(value))
    if isinstance(value, float):
        return f"{value:.4g}" if (value != 0 and abs(value) < 1e-3) else fmt(value, 4)
    return str(value)


# -- section 3: LFW cross validation ---------------------------------------------------------------------

def cv_section(args, report: Report) -> None:
    """Section 3: bob_boost boosted stumps vs scikit-image's gallery random forest, same folds."""
    try:
        from sklearn.ensemble import RandomForestClassifier
        from sklearn.metrics import roc_auc_score
        from sklearn.model_selection import StratifiedKFold
    except ImportError as error:
        report(f"_Section 3 skipped: scikit-learn is missing ({error})._")
        return
    from skimage.feature import haar_like_feature, haar_like_feature_coord
    from skimage.transform import integral_image

    import bob_boost
    from bob_boost.vision import HaarFeatures, data

    faces, non_faces = data.lfw_windows()
    windows = np.concatenate([faces, non_faces])
    labels = np.concatenate([np.ones(len(faces), dtype=np.int64), np.zeros(len(non_faces), dtype=np.int64)])
    size = windows.shape[1:]
    stride = QUICK_FEATURE_STRIDE if args.quick else 1

    pool = HaarFeatures.all(size)
    if stride > 1:
        pool = pool.subset(np.arange(0, len(pool), stride))
    start = time.perf_counter()
    bob_x = pool.evaluate(windows)
    bob_features_s = time.perf_counter() - start

    types = list(SKIMAGE_TYPES[args.skimage_types])
    coords, kinds = haar_like_feature_coord(size[1], size[0], types)
    subset = np.arange(0, len(coords), stride)
    start = time.perf_counter()
    if stride > 1:
        sk_x = np.stack([haar_like_feature(integral_image(w), 0, 0, size[0], size[1], feature_type=kinds[subset],
                                           feature_coord=coords[subset]) for w in windows])
    else:
        sk_x = np.stack([haar_like_feature(integral_image(w), 0, 0, size[0], size[1], feature_type=types)
                         for w in windows])
    sk_features_s = time.perf_counter() - start

    folds = list(StratifiedKFold(n_splits=5, shuffle=True, random_state=0).split(windows, labels))
    results = {"bob": {"auc": [], "acc": [], "used": [], "s": 0.0}, "sk": {"auc": [], "acc": [], "used": [], "s": 0.0}}
    for train, test in folds:
        trainer = bob_boost.Boosting(bob_boost.StumpTrainer(n_threads=args.threads), bob_boost.ExponentialLoss())
        start = time.perf_counter()
        machine = trainer.train(bob_x[train], np.where(labels[train] == 1, 1.0, -1.0), args.cv_rounds)
        results["bob"]["s"] += time.perf_counter() - start
        scores = np.asarray(machine.decision_scores(bob_x[test])).reshape(len(test), -1)[:, 0]
        results["bob"]["auc"].append(roc_auc_score(labels[test], scores))
        results["bob"]["acc"].append(float(np.mean((scores > 0) == (labels[test] == 1))))
        results["bob"]["used"].append(len({int(w.index) for w in machine.weak_machines}))

        forest = RandomForestClassifier(n_estimators=1000, max_depth=None, max_features=100,
                                        n_jobs=-1 if args.threads is None else args.threads, random_state=0)
        start = time.perf_counter()
        forest.fit(sk_x[train], labels[train])
        results["sk"]["s"] += time.perf_counter() - start
        proba = forest.predict_proba(sk_x[test])[:, 1]
        results["sk"]["auc"].append(roc_auc_score(labels[test], proba))
        results["sk"]["acc"].append(float(np.mean(forest.predict(sk_x[test]) == labels[test])))
        results["sk"]["used"].append(int(np.count_nonzero(forest.feature_importances_)))

    def mean_std(values, digits=3):
        return f"{np.mean(values):.{digits}f} ± {np.std(values):.{digits}f}"

    report("## 3. LFW faces vs non-faces, 5-fold cross validation")
    report()
    report(f"`data.lfw_windows()`: {len(faces)} faces and {len(non_faces)} non-faces of {size[0]}x{size[1]}; "
           f"`StratifiedKFold(5, shuffle=True, random_state=0)`, the same folds for both; mean ± std over folds."
           + (f" **--quick: every {stride}th feature only.**" if stride > 1 else ""))
    report()
    rows = [[f"bob_boost: `HaarFeatures.all({size})` (normalised), {args.cv_rounds} rounds of stumps "
             f"(`Boosting(StumpTrainer(), ExponentialLoss())`)", fmt(len(pool)), mean_std(results["bob"]["auc"]),
             mean_std(results["bob"]["acc"]), mean_std(results["bob"]["used"], 1), fmt(bob_features_s, 2),
             fmt(results["bob"]["s"], 2)],
            [f"scikit-image gallery: `haar_like_feature` {'/'.join(types)}, RandomForest(1000 trees, "
             f"max_features=100)", fmt(int(sk_x.shape[1])), mean_std(results["sk"]["auc"]),
             mean_std(results["sk"]["acc"]), mean_std(results["sk"]["used"], 1), fmt(sk_features_s, 2),
             fmt(results["sk"]["s"], 2)]]
    report.table(["method", "features", "AUC", "accuracy", "distinct features used", "feature extraction s",
                  "training s (5 folds)"], rows)
    report("Features used: distinct stump features of the boosted machine; for the forest, features with non-zero "
           "importance. bob_boost's accuracy thresholds the score at 0. scikit-image's features are computed one "
           "window at a time in this process (the gallery's single-threaded loop).")
    report()


# -- section 4: training cost ----------------------------------------------------------------------------

def stage_worker(threads) -> None:
    """``--stage-worker``: one stage of 100 stumps on the full pool; prints one JSON line (time, memory, report).

    The example's data and settings, except that the stage searches every feature of the 24x24 pool and its
    false-positive target is out of reach, so that it grows all ``max_rounds`` stumps.
    """
    from bob_boost.vision import HaarFeatures, example, train_cascade

    positives, groups, negatives, images = example.training_data()
    accepted = set(inspect.signature(train_cascade).parameters)
    options = {k: v for k, v in example.EXAMPLE_SETTINGS.items() if k in accepted}
    options.update(max_stages=1, features_per_stage=None, false_positive_rate=1e-9)
    # warm-up: load the compiled kernels (numba cache) before the timer on a tiny pool
    train_cascade(positives[:64], (), negatives[:400], features=HaarFeatures.all(positives.shape[1:], stride=8),
                  groups=groups[:64], max_stages=1, max_rounds=2, n_threads=threads)
    features = HaarFeatures.all(positives.shape[1:])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    cascade = train_cascade(positives, images, negatives, features=features, groups=groups, n_threads=threads,
                            **options)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "rss_before_kib": before, "peak_kib": peak, "features": len(features),
                      "positives": int(len(positives)), "angles": [float(a) for a in example.ANGLES],
                      "negative_windows": int(len(negatives)), "negative_images": len(images), "options": options,
                      "stages": cascade.metadata.get("stages", [])}, default=float))


def run_stage(args) -> dict:
    """Run :func:`stage_worker` in a fresh process; adds the wall time and the parent's view of its peak RSS."""
    import bob_boost
    env = dict(os.environ)
    root = str(Path(bob_boost.__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    command = [sys.executable, str(Path(__file__).resolve()), "--stage-worker"]
    if args.threads is not None:
        command += ["--threads", str(args.threads)]
    children_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    children_after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode != 0:
        return {"error": f"the stage worker failed (exit {done.returncode}): {done.stderr.strip()[-2000:]}"}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall"] = wall
    # RUSAGE_CHILDREN holds the largest peak of any child waited for: the worker's own only if no earlier child
    # had a larger one (the stage runs first, before scikit-learn's worker processes exist)
    result["children_peak_kib"] = children_after if children_after > children_before else None
    return result


def cost_section(example_seconds, stage: dict | None, args, report: Report) -> None:
    """Section 4: the example cascade's training time and the full-pool stage's cost."""
    report("## 4. Training cost")
    report()
    rows = [["example cascade (`example.train_example_cascade()`, one run)",
             fmt(example_seconds, 2) if example_seconds is not None else "n/a (`--cascade` given)"]]
    report.table(["training", "seconds"], rows)
    if stage is None:
        report("_Full-pool stage skipped (`--skip-stage` or `--quick`)._")
        report()
        return
    if "error" in stage:
        report(f"_Full-pool stage failed: {stage['error']}_")
        report()
        return
    mib = 1024.0
    report(f"One stage on the full 24x24 pool ({stage['features']:,} features of `HaarFeatures.all((24, 24))`), "
           f"`train_cascade(max_stages=1)` with the example's {stage['positives']:,} positives (rotations "
           f"{stage.get('angles')} degrees, crops, mirror images), "
           f"{stage['negative_windows']:,} LFW non-face windows and {stage['negative_images']} negative images, "
           f"options {stage['options']} (an unreachable false-positive target, so that the stage grows all its "
           f"stumps), in a fresh process after a tiny warm-up stage (compiled kernels loaded).")
    report()
    rows = [["`train_cascade` call, seconds", fmt(stage["seconds"], 2)],
            ["worker process wall time (imports, data, warm-up, stage), seconds", fmt(stage["wall"], 2)],
            ["peak RSS of the worker (its `ru_maxrss`), MiB", fmt(stage["peak_kib"] / mib, 1)],
            ["peak RSS seen by the parent (`RUSAGE_CHILDREN`), MiB",
             fmt(stage["children_peak_kib"] / mib, 1) if stage.get("children_peak_kib") else "n/a (an earlier "
             "child had a larger peak)"],
            ["RSS peak before the stage (imports, data, warm-up), MiB", fmt(stage["rss_before_kib"] / mib, 1)]]
    for s in stage["stages"]:
        rows.append(["features searched; bytes of their codes (`QuantizedPool.nbytes`), MiB",
                     f"{s.get('features_searched', 0):,}; {fmt(s.get('pool_bytes', 0) / 2**20, 1)}"])
        rows.append([f"stage {s.get('stage', '?')}: rounds, held-out detection / false-positive rate, seconds",
                     f"{s.get('rounds')}, {_cell(s.get('detection_rate'))} / {_cell(s.get('false_positive_rate'))}, "
                     f"{_cell(s.get('seconds'))}"])
    report.table(["full-pool stage", "value"], rows)


# -- main ------------------------------------------------------------------------------------------------

def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cascade", help="a bob_boost cascade file (default: train the example cascade in the run)")
    parser.add_argument("--repeats", type=int, default=None, help="timed detections per image, fastest kept "
                                                                   "(default 3, 1 with --quick)")
    parser.add_argument("--quick", action="store_true",
                        help=f"development: 1 repeat, every {QUICK_FEATURE_STRIDE}th CV feature, no full-pool stage")
    parser.add_argument("--skip-cv", action="store_true", help="skip section 3")
    parser.add_argument("--skip-stage", action="store_true", help="skip the full-pool stage of section 4")
    parser.add_argument("--threads", type=int, default=None, help="threads of every library (default: all cores)")
    parser.add_argument("--scale-factor", type=float, default=1.2)
    parser.add_argument("--extra-images", default="stereo_motorcycle",
                        help="comma-separated face-free skimage.data images besides grass (e.g. retina)")
    parser.add_argument("--skimage-types", choices=sorted(SKIMAGE_TYPES), default="gallery",
                        help="scikit-image Haar types of section 3 (gallery: the gallery's type-2-x, type-2-y)")
    parser.add_argument("--cv-rounds", type=int, default=50, help="boosting rounds of section 3")
    parser.add_argument("--out", help="also write the markdown to this file")
    parser.add_argument("--stage-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    return args


def main(argv=None) -> None:
    args = parse_args(argv)
    try:
        import skimage
    except ImportError:
        sys.exit("bench_faces.py needs scikit-image (pip install \".[faces]\" or pip install scikit-image)")
    if args.stage_worker:
        stage_worker(args.threads)
        return
    import bob_boost
    from bob_boost.vision import Cascade, example

    report = Report()
    versions = [f"bob_boost {bob_boost.__version__} ({Path(bob_boost.__file__).resolve().parent})",
                f"numpy {np.__version__}", f"scikit-image {skimage.__version__}"]
    for module in ("sklearn", "cv2"):
        try:
            versions.append(f"{module} {__import__(module).__version__}")
        except ImportError:
            versions.append(f"{module} missing")
    report("# Face detection benchmark (bench/bench_faces.py)")
    report()
    report(f"{platform.python_implementation()} {platform.python_version()}, {platform.machine()}, "
           f"{os.cpu_count()} cores, threads: {args.threads or 'all'}; " + ", ".join(versions) + ".")
    report(f"Command: `{' '.join([Path(sys.argv[0]).name] + sys.argv[1:])}`")
    report()

    # the full-pool stage runs first, in its own process, so that RUSAGE_CHILDREN sees it alone
    stage = None
    if not (args.quick or args.skip_stage):
        progress("full-pool stage in a worker process")
        stage = run_stage(args)

    example_seconds = None
    if args.cascade:
        cascade = Cascade.load(args.cascade)
    else:
        progress("training the example cascade")
        start = time.perf_counter()
        cascade = example.train_example_cascade(n_threads=args.threads)
        example_seconds = time.perf_counter() - start
    report(f"bob_boost cascade: {cascade!r}" + (f" from {args.cascade}" if args.cascade else
                                                f", trained in the run in {example_seconds:.1f} s"))
    report()

    images = evaluation_images([n.strip() for n in args.extra_images.split(",")], report)
    detection_section(cascade, images, args, report, example_seconds)
    progress("face sizes")
    face_sizes_section(cascade, args, report)
    progress("held-out windows")
    held_out_section(cascade, not args.cascade, args, report)
    if args.skip_cv:
        report("_Section 3 skipped (`--skip-cv`)._")
        report()
    else:
        progress("cross validation")
        cv_section(args, report)
    cost_section(example_seconds, stage, args, report)
    if args.out:
        Path(args.out).write_text("\n".join(report.lines) + "\n")


if __name__ == "__main__":
    main()
