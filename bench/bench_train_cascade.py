"""The example face cascade against Haar and LBP cascades trained in OpenCV's feature values on the same data.

Three cascades, trained in the run on the training data of ``bob-boost example faces``
(:func:`bob_boost.vision.example.training_data`), measured on the same held-out data:

(a) **bob_boost's Viola-Jones cascade**, ``example.train_example_cascade()`` (a :class:`~bob_boost.vision.Cascade`:
    ``example.EXAMPLE_SETTINGS``, negatives mined at every position of every pyramid level of the face-free images
    and from the LFW non-face crops);
(b) **an OpenCV Haar cascade**, :func:`~bob_boost.vision.opencv_train.train_opencv_cascade` (Gentle AdaBoost stumps
    on OpenCV's BASIC features and feature values, as ``opencv_traincascade -bt GAB -mode BASIC`` trains), written
    by :func:`~bob_boost.vision.write_opencv_cascade` as an XML file OpenCV 4 runs. Positives: the example's
    training positives (floats in [0, 1] as ``uint8(round(255 x))``), all of them every stage (``-numPos``).
    Negatives, read in this order: the 24x24 crops of the LFW non-face windows (uint8 as above) **first**, then
    ``opencv_sources.image_windows(images, 24, 24)`` of the example's face-free images (windows cut as OpenCV's
    background reader cuts them, pass after pass; float images as uint8 as above); ``-numNeg`` twice the
    positives. Defaults: 20 stages at most, ``min_hit_rate=0.995``, ``max_false_alarm_rate=0.5``, 100 stumps a
    stage at most, 8,000 features searched a stage, ``random_state=0``;
(c) **an OpenCV LBP cascade**, the same as (b) with ``feature_type="LBP"`` (category-set stumps on OpenCV's
    multi-block LBP codes, as ``opencv_traincascade -featureType LBP`` trains; 8,000 of the 8,464 features a
    stage).

Held-out measures (the same data for both; (a) measured as ``bench/bench_faces.py`` section 2 measures it, with
its own helpers):

- detection rate on ``example.held_out_faces()`` (every 24x24 crop of the 30 held-out LFW faces): (a)
  ``cascade.passed_stages`` reaching every stage, (b) and (c) ``opencv_features.window_decisions`` on the crops
  as uint8;
- false-positive rate on every 24x24 window, ``GRASS_STEP`` pixels apart, of ``grass`` and its pyramid (factor
  ``training.PYRAMID_FACTOR``): (a) as above, (b) and (c) ``window_decisions`` on the same windows as uint8 grey;
- the astronaut photograph: boxes at ``minNeighbors=3`` and whether one has IoU >= 0.5 with
  ``data.ASTRONAUT_FACE``: (a) ``detect(rgb, cascade, scale_factor, min_size=(24, 24), max_size=image,
  min_neighbors=3)``, (b), (c) ``CascadeClassifier(xml).detectMultiScale(gray, scale_factor, 3)`` on OpenCV's grey
  conversion; scale factor 1.1 in the main table, 1.1 and 1.2 (``bench_faces.py``'s) in a second one.

With OpenCV (``opencv-python-headless`` 4.x) installed, (b)'s and (c)'s XML is also loaded by
``cv2.CascadeClassifier``: its astronaut boxes (``minNeighbors`` 3 and 0) must equal bob_boost's, and its decision
at every held-out face and grass window (``detectMultiScale`` on the single window, ``minNeighbors=0``,
``minSize=maxSize=(24, 24)``) must equal ``window_decisions``; the counts are printed.

Training seconds are printed as indications only (other work may share the machine).

Usage (from the repository root)::

    python bench/bench_train_cascade.py [--stages 20] [--features-per-stage 8000] [--num-neg N] [--threads N]
        [--out FILE]

The full run: ``python bench/bench_train_cascade.py --out bench/results/train_cascade_faces_<machine>.log``.
Needs scikit-image (``pip install ".[faces]"``); OpenCV is optional. Nothing but the report (and ``--out``) is
written: the XML file lives in a temporary folder.
"""
from __future__ import annotations

import argparse
import datetime
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's bob_boost
from _machine import cpu_model  # noqa: E402 (bench/, beside this script)
from bench_faces import GRASS_STEP, iou, load_image, passed_in_chunks, pyramid_windows  # noqa: E402

import bob_boost  # noqa: E402
from bob_boost.vision import Cascade, CascadeClassifier, OpenCVCascade, as_gray_image, data, detect  # noqa: E402
from bob_boost.vision import example, training, write_opencv_cascade  # noqa: E402
from bob_boost.vision.opencv import bgr_to_gray  # noqa: E402
from bob_boost.vision.opencv_features import window_decisions  # noqa: E402
from bob_boost.vision.opencv_sources import image_windows  # noqa: E402
from bob_boost.vision.opencv_train import train_opencv_cascade  # noqa: E402

#: The scale factors of the astronaut detections (the first is the main table's).
SCALE_FACTORS = (1.1, 1.2)

#: A detection is the face at this IoU with ``data.ASTRONAUT_FACE`` or more.
FACE_IOU = 0.5


class Log:
    """Lines printed as they come and, with a file, written to it at once (a partial run keeps its lines).

    Parameters
    ----------
    stream : file object, optional
        Where the lines are also written.
    """

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream

    def __call__(self, line: str = "") -> None:
        """Print ``line`` (and write it to the file)."""
        print(line, flush=True)
        if self.stream is not None:
            self.stream.write(line + "\n")
            self.stream.flush()

    def table(self, headers: list[str], rows: list[list[Any]]) -> None:
        """A markdown table, then an empty line."""
        self("| " + " | ".join(headers) + " |")
        self("|" + "|".join("---" if i == 0 else "---:" for i in range(len(headers))) + "|")
        for row in rows:
            self("| " + " | ".join(str(cell) for cell in row) + " |")
        self()


class _LogHandler(logging.Handler):
    """Sends ``train_opencv_cascade``'s per-stage log records (positives, negatives, features) to a :class:`Log`."""

    def __init__(self, log: Log) -> None:
        super().__init__(logging.INFO)
        self.log = log

    def emit(self, record: logging.LogRecord) -> None:
        self.log(f"    {record.getMessage()}")


def to_uint8(windows: np.ndarray) -> np.ndarray:
    """Grey levels in [0, 1] as uint8 ``round(255 x)`` (uint8 arrays are returned as they are).

    Parameters
    ----------
    windows : numpy.ndarray
        Float grey levels in [0, 1] (any shape), or uint8.

    Returns
    -------
    numpy.ndarray
        uint8, the same shape.
    """
    array = np.asarray(windows)
    if array.dtype == np.uint8:
        return array
    return np.clip(np.rint(array * 255.0), 0, 255).astype(np.uint8)


def header(args: argparse.Namespace, log: Log) -> None:
    """The command, date, CPU, cores and versions.

    Parameters
    ----------
    args : argparse.Namespace
        The parsed options (for the command line).
    log : Log
        Where the lines go.
    """
    model = cpu_model()
    if shutil.which("lscpu"):
        found = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((line.split(":", 1)[1].strip() for line in found.splitlines()
                      if line.startswith("Model name")), model)
    versions = [f"Python {platform.python_version()}", f"bob_boost {bob_boost.__version__}", f"numpy {np.__version__}"]
    for module in ("skimage", "cv2"):
        try:
            versions.append(f"{module} {__import__(module).__version__}")
        except ImportError:
            versions.append(f"{module} missing")
    log("# Training Haar and LBP cascades in OpenCV's feature values vs the example cascade (bench_train_cascade.py)")
    log()
    log(f"- Command: `python {' '.join(['bench/' + Path(sys.argv[0]).name] + sys.argv[1:])}`")
    log(f"- Date: {datetime.datetime.now().astimezone().isoformat(timespec='seconds')}")
    log(f"- CPU: {model} ({platform.machine()}), cores: {os.cpu_count()}, threads: {args.threads or 'all'}")
    log(f"- Versions: {', '.join(versions)}")
    log("- Seconds below are indications only: other work may share the machine.")
    log()


def negative_source(lfw: np.ndarray, images: list[np.ndarray]) -> Callable[[], Iterator[np.ndarray]]:
    """The negatives of cascades (b) and (c), read from the start by every stage: the LFW crops, then the image
    windows.

    Parameters
    ----------
    lfw : numpy.ndarray
        (n, 24, 24) uint8 LFW non-face crops.
    images : list of numpy.ndarray
        uint8 grey or RGB face-free images, cut by :func:`~bob_boost.vision.opencv_sources.image_windows`.

    Returns
    -------
    callable
        A new iterator over uint8 batches of (m, 24, 24) windows at each call.
    """
    windows = image_windows(images, 24, 24)

    def source() -> Iterator[np.ndarray]:
        yield lfw
        yield from windows()

    return source


def train_opencv(positives: np.ndarray, source: Callable[[], Iterator[np.ndarray]], settings: dict[str, Any],
                 log: Log) -> tuple[OpenCVCascade, float]:
    """Train cascade (b) or (c), printing every stage as it ends.

    Parameters
    ----------
    positives : numpy.ndarray
        (n, 24, 24) uint8 positives.
    source : callable
        The negatives (:func:`negative_source`).
    settings : dict
        Keyword arguments of :func:`~bob_boost.vision.opencv_train.train_opencv_cascade`.
    log : Log
        Where the progress goes.

    Returns
    -------
    tuple
        The cascade and the training's seconds.
    """
    start = time.perf_counter()

    def on_stage(cascade: OpenCVCascade) -> None:
        stumps = np.diff(cascade.stage_weak).tolist()
        log(f"  after stage {cascade.number_of_stages - 1}: {cascade.number_of_stages} stages, "
            f"{sum(stumps)} stumps {stumps}, {time.perf_counter() - start:.0f} s")

    handler = _LogHandler(log)
    logger = logging.getLogger("bob_boost.vision.opencv_train")
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.INFO)
    try:
        cascade = train_opencv_cascade(positives, source, on_stage=on_stage, **settings)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    return cascade, time.perf_counter() - start


def astronaut_boxes_bob(cascade: Cascade, rgb: np.ndarray, scale_factor: float,
                        threads: int | None) -> np.ndarray:
    """Cascade (a)'s boxes in the astronaut photograph, as ``bench_faces.py`` detects.

    Parameters
    ----------
    cascade : Cascade
        Cascade (a).
    rgb : numpy.ndarray
        The uint8 RGB photograph.
    scale_factor : float
        Ratio between scales.
    threads : int or None
        Threads of the detector.

    Returns
    -------
    numpy.ndarray
        (n, 4) boxes ``x, y, w, h``.
    """
    base_h, base_w = cascade.window_size
    found = detect(rgb, cascade, scale_factor=scale_factor, min_size=(max(24, base_w), max(24, base_h)),
                   max_size=(rgb.shape[1], rgb.shape[0]), min_neighbors=3, n_threads=threads)
    return np.asarray(found.boxes, np.int64).reshape(-1, 4)


def face_found(boxes: np.ndarray) -> tuple[bool, float]:
    """Whether a box is the astronaut's face (IoU >= :data:`FACE_IOU`), and the best IoU.

    Parameters
    ----------
    boxes : numpy.ndarray
        (n, 4) boxes ``x, y, w, h``.

    Returns
    -------
    tuple
        (found, best IoU; 0 without boxes).
    """
    best = max((iou(box, data.ASTRONAUT_FACE) for box in boxes.tolist()), default=0.0)
    return best >= FACE_IOU, best


def sorted_boxes(boxes: Any) -> np.ndarray:
    """Boxes as an (n, 4) int64 array in lexicographic order, to compare two detectors' boxes.

    Parameters
    ----------
    boxes : array_like
        Boxes ``x, y, w, h`` (cv2 returns an empty tuple for none).

    Returns
    -------
    numpy.ndarray
        (n, 4) int64.
    """
    array = np.asarray(boxes, np.int64).reshape(-1, 4)
    return array[np.lexsort(array.T[::-1])]


def cv2_checks(label: str, xml: str, cascade: OpenCVCascade, gray: np.ndarray, faces: np.ndarray,
               grass: np.ndarray, log: Log) -> None:
    """OpenCV 4 itself on a trained cascade's XML: the astronaut boxes and the per-window decisions against ours.

    Parameters
    ----------
    label : str
        The cascade's letter, ``"b"`` or ``"c"``.
    xml : str
        The XML file of the cascade.
    cascade : OpenCVCascade
        The cascade.
    gray : numpy.ndarray
        The astronaut photograph, uint8 grey.
    faces, grass : numpy.ndarray
        (n, 24, 24) uint8 held-out faces and grass windows.
    log : Log
        Where the counts go.
    """
    log(f"## OpenCV 4 on cascade ({label})'s XML")
    log()
    try:
        import cv2
    except ImportError as error:
        log(f"_Skipped: cv2 cannot be imported ({error})._")
        log()
        return
    theirs = cv2.CascadeClassifier(xml)
    if theirs.empty():
        log(f"_cv2.CascadeClassifier did not load {xml}: NOT equal._")
        log()
        return
    ours = CascadeClassifier(xml)
    rows = []
    for scale_factor in SCALE_FACTORS:
        for neighbors in (3, 0):
            a = sorted_boxes(ours.detectMultiScale(gray, scaleFactor=scale_factor, minNeighbors=neighbors))
            b = sorted_boxes(theirs.detectMultiScale(gray, scaleFactor=scale_factor, minNeighbors=neighbors))
            same = a.shape == b.shape and bool(np.array_equal(a, b))
            rows.append([f"astronaut grey, scaleFactor={scale_factor}, minNeighbors={neighbors}", len(a), len(b),
                         "yes" if same else "**NO**"])
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)  # one 24x24 window a call: threads only cost
    try:
        for name, windows in (("held-out faces", faces), ("grass windows", grass)):
            mine = window_decisions(cascade, windows)
            cv = np.array([len(theirs.detectMultiScale(window, scaleFactor=1.1, minNeighbors=0, minSize=(24, 24),
                                                       maxSize=(24, 24))) > 0 for window in windows])
            rows.append([f"{name}: {len(windows):,} single windows, accepted", int(mine.sum()), int(cv.sum()),
                         "yes" if np.array_equal(mine, cv) else f"**NO** ({int(np.sum(mine != cv))} differ)"])
    finally:
        cv2.setNumThreads(threads)
    log(f"`cv2.CascadeClassifier` (OpenCV {cv2.__version__}) against `bob_boost.vision.CascadeClassifier` "
        "(boxes) and `window_decisions` (single windows: `detectMultiScale(window, minNeighbors=0, "
        "minSize=maxSize=(24, 24))`).")
    log()
    log.table(["check", "bob_boost", "OpenCV", "equal"], rows)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """The command-line options (see the module).

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).

    Returns
    -------
    argparse.Namespace
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--stages", type=int, default=20, help="most stages of cascades (b), (c) (-numStages)")
    parser.add_argument("--features-per-stage", type=int, default=8000, help="features searched a stage of (b), (c)")
    parser.add_argument("--num-neg", type=int, default=None,
                        help="negatives a stage of (b), (c) (default 2 x positives)")
    parser.add_argument("--threads", type=int, default=None, help="threads of bob_boost (default: every core)")
    parser.add_argument("--out", help="also write the report to this file")
    args = parser.parse_args(argv)
    for name in ("stages", "features_per_stage", "num_neg", "threads"):
        value = getattr(args, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def run(args: argparse.Namespace, log: Log) -> None:
    """Train the three cascades and measure them (see the module).

    Parameters
    ----------
    args : argparse.Namespace
        The options.
    log : Log
        Where the report goes.
    """
    header(args, log)
    positives, _, lfw_negatives, images = example.training_data()
    positives_u8, lfw_u8 = to_uint8(positives), to_uint8(lfw_negatives)
    images_u8 = [to_uint8(image) if image.dtype.kind == "f" else image for image in images]
    source = negative_source(lfw_u8, images_u8)
    source_size = sum(batch.shape[0] for batch in source())
    settings = {"number_of_stages": args.stages, "min_hit_rate": 0.995, "max_false_alarm_rate": 0.5,
                "max_weak_count": 100, "mode": "BASIC", "num_pos": int(positives_u8.shape[0]),
                "num_neg": args.num_neg or 2 * int(positives_u8.shape[0]),
                "features_per_stage": args.features_per_stage, "weight_trim_rate": 0.95, "random_state": 0}

    log("## Training")
    log()
    log(f"(a) `example.train_example_cascade()`: settings `{example.EXAMPLE_SETTINGS}`.")
    start = time.perf_counter()
    ours = example.train_example_cascade(n_threads=args.threads)
    seconds_a = time.perf_counter() - start
    log(f"  {ours!r}; {seconds_a:.0f} s (indicative)")
    log()
    log(f"(b), (c) `train_opencv_cascade`: {positives_u8.shape[0]:,} positives (uint8 round(255 x) of the "
        f"example's); negatives read in order: {lfw_u8.shape[0]:,} LFW non-face crops first, then "
        f"{source_size - lfw_u8.shape[0]:,} windows of `image_windows` over the {len(images_u8)} face-free images "
        f"(`{', '.join(data.NEGATIVE_IMAGES)}`), {source_size:,} in all.")
    trained = {}
    for label, feature_type in (("b", "HAAR"), ("c", "LBP")):
        log(f"  ({label}) settings: `{settings}`, feature_type={feature_type!r}")
        cascade, seconds = train_opencv(positives_u8, source, {**settings, "feature_type": feature_type}, log)
        trained[label] = cascade
        log(f"  ({label}) {cascade.number_of_stages} stages of {np.diff(cascade.stage_weak).tolist()} stumps; "
            f"{seconds:.0f} s (indicative)")
    log()

    faces = example.held_out_faces()
    factor = float(training.PYRAMID_FACTOR)
    grass = pyramid_windows(as_gray_image(load_image("grass")), ours.window_size, GRASS_STEP, factor)
    faces_u8, grass_u8 = to_uint8(faces), to_uint8(grass)
    rgb = data.image("astronaut")
    gray = bgr_to_gray(np.ascontiguousarray(rgb[..., ::-1]))
    names = {"a": ("(a) bob_boost example cascade (`Cascade`)", "(a) example cascade, `detect`"),
             "b": ("(b) OpenCV Haar cascade (`train_opencv_cascade`)", "(b) OpenCV Haar, `detectMultiScale`"),
             "c": ("(c) OpenCV LBP cascade (`train_opencv_cascade`)", "(c) OpenCV LBP, `detectMultiScale`")}

    with tempfile.TemporaryDirectory() as folder:
        files = {label: os.path.join(folder, f"cascade_{label}.xml") for label in trained}
        detections, decisions = {}, {}
        for scale_factor in SCALE_FACTORS:
            detections["a", scale_factor] = astronaut_boxes_bob(ours, rgb, scale_factor, args.threads)
        decisions["a"] = (passed_in_chunks(ours, faces) == len(ours), passed_in_chunks(ours, grass) == len(ours),
                          len(ours), sum(len(m) for m, _ in ours.stages))
        for label, cascade in trained.items():
            write_opencv_cascade(cascade, files[label])
            theirs = CascadeClassifier(files[label])
            for scale_factor in SCALE_FACTORS:
                detections[label, scale_factor] = sorted_boxes(theirs.detectMultiScale(
                    gray, scaleFactor=scale_factor, minNeighbors=3))
            decisions[label] = (window_decisions(cascade, faces_u8), window_decisions(cascade, grass_u8),
                                cascade.number_of_stages, int(cascade.stage_weak[-1]))

        log("## Held-out results")
        log()
        log(f"Held-out faces: `example.held_out_faces()`, {len(faces):,} crops (uint8 round(255 x) for (b), (c)). "
            f"Grass: every 24x24 window, {GRASS_STEP} px apart, of `grass` and its pyramid (x1/{factor:g}), "
            f"{len(grass):,} windows (uint8 round(255 x) for (b), (c)). Astronaut: `data.image('astronaut')`, "
            f"minNeighbors=3, scale factor {SCALE_FACTORS[0]}; (a) `detect` on RGB with min_size=(24, 24), "
            f"(b), (c) `CascadeClassifier(xml).detectMultiScale` on OpenCV's grey; face found: IoU >= {FACE_IOU} "
            f"with `data.ASTRONAUT_FACE` {tuple(data.ASTRONAUT_FACE)}.")
        log()
        first = SCALE_FACTORS[0]
        rows = []
        for label, (on_faces, on_grass, stages, stumps) in decisions.items():
            found, _ = face_found(detections[label, first])
            rows.append([names[label][0], stages, stumps,
                         f"{on_faces.mean():.4f} ({int(on_faces.sum())}/{len(on_faces)})",
                         f"{on_grass.mean():.6f} ({int(on_grass.sum())}/{len(on_grass):,})",
                         len(detections[label, first]), "yes" if found else "no"])
        log.table(["cascade", "stages", "weak classifiers", "held-out face detection rate", "grass false-positive rate",
                   f"astronaut boxes (scale {first})", "face found"], rows)
        rows = []
        for label in decisions:
            for scale_factor in SCALE_FACTORS:
                found, best = face_found(detections[label, scale_factor])
                rows.append([names[label][1], scale_factor, len(detections[label, scale_factor]),
                             "yes" if found else "no", f"{best:.2f}"])
        log("Astronaut at both scale factors (1.2 is `bench_faces.py`'s default):")
        log()
        log.table(["cascade", "scale factor", "boxes", "face found", "best IoU"], rows)
        for label, cascade in trained.items():
            cv2_checks(label, files[label], cascade, gray, faces_u8, grass_u8, log)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark (see the module).

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).
    """
    args = parse_args(argv)
    stream = open(args.out, "w", encoding="utf-8") if args.out else None
    try:
        run(args, Log(stream))
    finally:
        if stream is not None:
            stream.close()


if __name__ == "__main__":
    main()
