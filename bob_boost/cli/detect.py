"""``bob-boost detect IMAGE --cascade FILE``: boxes of a cascade's objects, as CSV on standard output.

Standard output carries only the CSV (header ``x,y,width,height,score``, pixels, top-left origin);
messages go to standard error. Reading and drawing images needs the ``faces`` extra (imageio).
"""
from __future__ import annotations

import argparse
import csv
import io
import os
import sys

import numpy as np

from ._common import CommandError, HelpFormatter, positive_int

#: The header of the detections' CSV.
CSV_HEADER = ("x", "y", "width", "height", "score")


def add_detection_options(parser: argparse.ArgumentParser, csv_file: bool = True) -> None:
    """The detector's options, ``--draw`` and (``csv_file``) ``--out`` for the CSV; shared with the example."""
    parser.add_argument("--scale-factor", type=float,
                        help="ratio between window scales (> 1; default 1.2, and OpenCV's 1.1 for its cascades)")
    parser.add_argument("--step", type=float, default=1.0,
                        help="pixels between windows at the base scale (>= 1; scaled with the window; OpenCV "
                             "cascades take OpenCV's steps)")
    parser.add_argument("--min-size", type=positive_int, metavar="PIXELS", help="smallest window width")
    parser.add_argument("--max-size", type=positive_int, metavar="PIXELS", help="largest window width")
    parser.add_argument("--min-neighbors", type=int, default=3,
                        help="a box needs more than this many overlapping raw detections (0: raw detections)")
    if csv_file:
        parser.add_argument("--out", dest="csv_out", metavar="FILE",
                            help="write the CSV to FILE instead of standard output")
    parser.add_argument("--draw", metavar="OUT.png", help="write the image with the boxes drawn")


def add_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the ``detect`` subcommand to ``commands``."""
    parser = commands.add_parser("detect", parents=[common], formatter_class=HelpFormatter,
                                 help="find objects (faces) in an image with a cascade; boxes as CSV")
    parser.add_argument("image", help="PNG, JPEG or another image file (grey or colour)")
    parser.add_argument("--cascade", required=True,
                        help="cascade file: HDF5 (from bob-boost example faces --out) or an OpenCV Haar or LBP "
                             "cascade XML file, run as OpenCV 4's detectMultiScale runs it")
    add_detection_options(parser)
    parser.set_defaults(handler=command_detect)


def detections_csv(boxes: np.ndarray, scores: np.ndarray) -> str:
    """The boxes and scores as CSV text with :data:`CSV_HEADER`."""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    for (x, y, w, h), score in zip(boxes.tolist(), scores.tolist()):
        writer.writerow((x, y, w, h, f"{score:.6g}"))
    return text.getvalue()


def report_detections(args: argparse.Namespace, image: np.ndarray, found) -> None:
    """Print or write the CSV and draw the boxes, as ``--out`` and ``--draw`` ask."""
    from ..io.hdf5 import atomic_path
    from ..vision.data import draw_boxes, write_image
    text = detections_csv(found.boxes, found.scores)
    if getattr(args, "csv_out", None):
        with atomic_path(args.csv_out, ".csv.tmp") as temporary, open(temporary, "w") as stream:
            stream.write(text)
    else:
        sys.stdout.write(text)
    if args.draw:
        write_image(args.draw, draw_boxes(image, found.boxes))
    if not args.quiet:
        counted = f", {found.features_per_window:.1f} features per window on average" if found.features_evaluated \
            else ""
        print(f"{len(found)} boxes; {found.windows} windows scanned{counted}", file=sys.stderr)


def detect_with(args: argparse.Namespace, image: np.ndarray, cascade):
    """Run the detector with the command's options."""
    from ..vision.detector import detect
    return detect(image, cascade, scale_factor=1.2 if args.scale_factor is None else args.scale_factor,
                  step=args.step, min_size=args.min_size, max_size=args.max_size, min_neighbors=args.min_neighbors)


def command_detect(args: argparse.Namespace) -> int:
    """Run ``bob-boost detect``."""
    from ..vision.cascade import Cascade
    from ..vision.data import read_image
    from ..vision.opencv import CascadeClassifier
    classifier = CascadeClassifier(args.cascade)
    image = read_image(os.fspath(args.image))
    if isinstance(classifier.cascade, Cascade):
        found = detect_with(args, image, classifier.cascade)
    else:
        if args.step != 1.0:
            raise CommandError(f"--step: {args.cascade} is an OpenCV cascade, which runs with OpenCV's steps "
                               f"between windows (1 pixel at scales of 2 and more, 2 below)")
        found = classifier.detect(image, 1.1 if args.scale_factor is None else args.scale_factor,
                                  args.min_neighbors, min_size=args.min_size, max_size=args.max_size,
                                  channels="rgb")
    report_detections(args, image, found)
    return 0
