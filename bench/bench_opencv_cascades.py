"""OpenCV's cascade files run by bob_boost against OpenCV 4 itself: the same boxes, and the time.

1. **Boxes.** For every cascade XML of ``cv2.data.haarcascades`` and scikit-image's LBP face cascade (loaded into
   OpenCV from a copy whose misspelt ``featuhreParams`` is corrected: OpenCV refuses the file as shipped), on the
   photographs scikit-image ships (colour as BGR, grey, at full size and at 0.5 and 0.75 of it, resized by
   OpenCV's ``INTER_AREA``) and on synthetic scenes (uniform noise with the astronaut's face pasted at three
   sizes): ``bob_boost.vision.CascadeClassifier(path).detectMultiScale(image, 1.1, n)`` against
   ``cv2.CascadeClassifier(path).detectMultiScale(image, 1.1, n)`` for ``minNeighbors`` n = 0 (every raw window)
   and 3. A box counts as matched when the other side has a box of IoU >= 0.9; the table gives the boxes on each
   side, the matched share and the images whose counts differ, and lists every box that differs.
2. **Time.** ``haarcascade_frontalface_default.xml`` on the colour photographs (astronaut, coffee, chelsea,
   rocket, hubble_deep_field) at full size, ``scaleFactor=1.1, minNeighbors=3``: bob_boost with ``n_threads`` 1
   and 2 against OpenCV with ``cv2.setNumThreads`` 1 and 2, each the fastest of ``--repeats`` (3) runs, measured
   one after the other in this process, after one warm-up call each (bob_boost's compiled kernels load from
   numba's cache).

Usage (from the repository root)::

    python bench/bench_opencv_cascades.py [--repeats 3] [--skip-boxes] [--skip-time]

Needs OpenCV 4 (``opencv-python-headless<5``) and scikit-image. The output is the report; nothing is written.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _machine import cpu_model  # noqa: E402 (bench/, beside this script)

import bob_boost  # noqa: E402
from bob_boost.vision import CascadeClassifier  # noqa: E402

PHOTOGRAPHS = ("astronaut", "camera", "coffee", "chelsea", "rocket", "hubble_deep_field", "immunohistochemistry",
               "coins", "page", "text", "moon", "grass", "brick", "gravel")
TIMED = ("astronaut", "coffee", "chelsea", "rocket", "hubble_deep_field")


def _images(cv2, data) -> list[tuple[str, np.ndarray]]:
    """The photographs (BGR or grey) at three sizes, and the synthetic scenes."""
    out = []
    for name in PHOTOGRAPHS:
        image = getattr(data, name)()
        if image.ndim == 3:
            image = np.ascontiguousarray(image[..., :3][..., ::-1])
        if image.dtype != np.uint8:
            image = (255 * (image - image.min()) / max(np.ptp(image), 1)).astype(np.uint8)
        for factor in (1.0, 0.75, 0.5):
            size = (max(1, round(image.shape[1] * factor)), max(1, round(image.shape[0] * factor)))
            scaled = image if factor == 1.0 else cv2.resize(image, size, interpolation=cv2.INTER_AREA)
            out.append((f"{name} {scaled.shape[1]}x{scaled.shape[0]}{' grey' if scaled.ndim == 2 else ''}", scaled))
    face = np.ascontiguousarray(data.astronaut()[20:200, 150:300][..., ::-1])
    rng = np.random.default_rng(0)
    for n, side in enumerate((60, 110, 170)):
        scene = rng.integers(0, 256, (400, 500, 3), dtype=np.uint8)
        patch = cv2.resize(face, (side, round(side * face.shape[0] / face.shape[1])), interpolation=cv2.INTER_AREA)
        top, left = 40 + 30 * n, 60 + 50 * n
        scene[top:top + patch.shape[0], left:left + patch.shape[1]] = patch
        out.append((f"synthetic scene {n + 1} (face {side} px wide)", scene))
    return out


def _iou(a, b) -> float:
    x0, y0 = max(a[0], b[0]), max(a[1], b[1])
    x1, y1 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    inter = max(0, x1 - x0) * max(0, y1 - y0)
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


def _matched(boxes, others) -> int:
    return sum(any(_iou(box, other) >= 0.9 for other in others) for box in boxes)


def boxes_section(cv2, data) -> None:
    lbp = data.lbp_frontal_face_cascade_filename()
    fixed = Path(tempfile.mkdtemp()) / "lbpcascade_frontalface.xml"
    fixed.write_text(Path(lbp).read_text().replace("featuhreParams", "featureParams"))
    cascades = [(path, path) for path in sorted(Path(cv2.data.haarcascades).glob("*.xml"))] + [(Path(lbp), fixed)]
    images = _images(cv2, data)
    print(f"\n## 1. Boxes: {len(cascades)} cascades x {len(images)} images, scaleFactor 1.1\n")
    print("| cascade | minNeighbors | boxes (bob_boost / OpenCV) | matched at IoU >= 0.9 | images with other counts |")
    print("|---|---:|---:|---:|---:|")
    differences = []
    totals = np.zeros(3, np.int64)
    for path, reference in cascades:
        ours, theirs = CascadeClassifier(path), cv2.CascadeClassifier(str(reference))
        for neighbours in (0, 3):
            counts = np.zeros(3, np.int64)
            other_counts = 0
            for name, image in images:
                a = [tuple(box) for box in ours.detectMultiScale(image, 1.1, neighbours).tolist()]
                b = [tuple(box) for box in np.asarray(theirs.detectMultiScale(image, 1.1, neighbours)).reshape(-1, 4)
                     .tolist()]
                counts += (len(a), len(b), _matched(a, b))
                other_counts += len(a) != len(b)
                if sorted(a) != sorted(b):
                    differences.append((path.name, neighbours, name, sorted(set(a) - set(b)), sorted(set(b) - set(a))))
            totals += counts
            share = f"{100 * counts[2] / counts[0]:.2f}%" if counts[0] else ("-" if not counts[1] else "0%")
            print(f"| {path.name} | {neighbours} | {counts[0]} / {counts[1]} | {share} | {other_counts} |")
    print(f"\nAll: {totals[0]} / {totals[1]} boxes, {100 * totals[2] / max(totals[0], 1):.2f}% matched.")
    print(f"Images whose boxes differ in any way: {len(differences)}")
    for name, neighbours, image, only_ours, only_theirs in differences:
        print(f"- {name}, minNeighbors {neighbours}, {image}: bob_boost only {only_ours}, OpenCV only {only_theirs}")


def time_section(cv2, data, repeats: int) -> None:
    path = cv2.data.haarcascades + "haarcascade_frontalface_default.xml"
    ours, theirs = CascadeClassifier(path), cv2.CascadeClassifier(path)
    print(f"\n## 2. Time: haarcascade_frontalface_default.xml, scaleFactor 1.1, minNeighbors 3, fastest of {repeats}\n")
    print("| image | threads | bob_boost | OpenCV | bob_boost / OpenCV | same boxes |")
    print("|---|---:|---:|---:|---:|---|")
    ratios = {1: [], 2: []}
    for name in TIMED:
        image = np.ascontiguousarray(getattr(data, name)()[..., ::-1])
        for threads in (1, 2):
            cv2.setNumThreads(threads)
            ours.detect_multi_scale(image, 1.1, 3, n_threads=threads)
            theirs.detectMultiScale(image, 1.1, 3)
            best = [np.inf, np.inf]
            for _ in range(repeats):
                start = time.perf_counter()
                a = ours.detect_multi_scale(image, 1.1, 3, n_threads=threads)
                best[0] = min(best[0], time.perf_counter() - start)
                start = time.perf_counter()
                b = theirs.detectMultiScale(image, 1.1, 3)
                best[1] = min(best[1], time.perf_counter() - start)
            same = sorted(map(tuple, a.tolist())) == sorted(map(tuple, np.asarray(b).reshape(-1, 4).tolist()))
            ratios[threads].append(best[0] / best[1])
            print(f"| {name} {image.shape[1]}x{image.shape[0]} | {threads} | {best[0] * 1e3:.1f} ms | "
                  f"{best[1] * 1e3:.1f} ms | {best[0] / best[1]:.2f} | {'yes' if same else 'no'} |")
    for threads, values in ratios.items():
        print(f"\n{threads} thread(s): bob_boost / OpenCV, geometric mean {np.exp(np.mean(np.log(values))):.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-boxes", action="store_true")
    parser.add_argument("--skip-time", action="store_true")
    args = parser.parse_args()
    import cv2
    import skimage.data as data
    print(f"# bench_opencv_cascades: {datetime.date.today()}, {cpu_model()} ({os.cpu_count()} cores), Python "
          f"{platform.python_version()}, bob_boost {bob_boost.__version__}, OpenCV {cv2.__version__}")
    if not args.skip_boxes:
        cv2.setNumThreads(1)
        boxes_section(cv2, data)
    if not args.skip_time:
        time_section(cv2, data, args.repeats)


if __name__ == "__main__":
    main()
