"""``bob-boost example mnist|digits|faces``: bob.learn.boosting's MNIST example, and a face detector.

The training itself is :mod:`bob_boost.examples.mnist` and :mod:`bob_boost.vision.example`; this module
reads the options, loads the data, reuses or writes the ``--classifier-file`` and prints the accuracies
(``mnist``, ``digits``), or trains the example cascade and prints the boxes it finds in scikit-image's
astronaut photograph as CSV, and nothing else, on standard output (``faces``).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from .. import datasets
from ..examples.mnist import EXAMPLE_LOSSES, TRAINER_TYPES, check_example_options, example_accuracy, train_example
from ._common import CommandError, HelpFormatter, Parser, load_model, positive_int
from .detect import add_detection_options, detect_with, report_detections


def add_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the ``example`` subcommand, with one sub-subcommand per data set, to ``commands``."""
    example = commands.add_parser("example", formatter_class=HelpFormatter,
                                  help="bob.learn.boosting's MNIST example (mnist), the same on generated "
                                       "8x8 digits that need no download (digits), or a face detector (faces)")
    datasets_parsers = example.add_subparsers(dest="dataset", metavar="DATASET", parser_class=Parser,
                                              help="the data set")
    datasets_parsers.required = True
    for name, text in (("mnist", ("MNIST: --data PATH, else the cache (~/.cache/bob_boost or $BOB_BOOST_DATA), "
                                  "else a verified download")),
                       ("digits", "generated 8x8 digits with values 0..16 (offline)")):
        sub = datasets_parsers.add_parser(name, parents=[common], formatter_class=HelpFormatter, help=text,
                                          description=text)
        if name == "mnist":
            sub.add_argument("--data", metavar="PATH",
                             help="MNIST in bob's HDF5 layout, or a folder of the four original IDX files")
            sub.add_argument("--no-download", action="store_true", help="fail instead of downloading MNIST")
        else:
            sub.add_argument("--samples", type=positive_int, default=3000,
                             help="number of generated training images (half as many test images)")
            sub.add_argument("--seed", type=int, default=0, help="seed of the generated training images")
        sub.add_argument("-t", "--trainer-type", choices=TRAINER_TYPES, default="stump",
                         help="the weak trainer")
        sub.add_argument("-l", "--loss-type", choices=tuple(EXAMPLE_LOSSES), default="exp",
                         help="the loss: exponential, logit or tangential")
        sub.add_argument("-r", "--number-of-boosting-rounds", type=positive_int, default=100, metavar="N",
                         help="number of boosting rounds (weak machines)")
        sub.add_argument("-m", "--multi-variate", action="store_true",
                         help="one output per digit (+1 for the true digit, -1 for the others; needs -t lut)")
        sub.add_argument("-s", "--feature-selection-style", choices=("independent", "shared"),
                         default="independent", help="multi-variate LUTs: a feature per output or one shared")
        sub.add_argument("-d", "--digits", type=int, nargs="+", choices=range(10), default=[5, 6], metavar="DIGIT",
                         help="the digits to classify (univariate: exactly two; the first one gets +1)")
        sub.add_argument("-a", "--all-digits", action="store_true", help="use all ten digits (overrides -d)")
        sub.add_argument("-n", "--number-of-elements", type=int, metavar="N",
                         help="use only the first N training and N test images of each digit")
        sub.add_argument("-c", "--classifier-file", metavar="FILE",
                         help="store the trained classifier here, or load it from here if the file exists")
        sub.add_argument("-F", "--force", action="store_true",
                         help="train again even if the --classifier-file exists")
        sub.set_defaults(handler=command_example)
    text = ("train a small face-detection cascade on scikit-image's bundled faces (offline, needs "
            "pip install bob_boost[faces]) and print the faces it finds in the astronaut photograph as CSV")
    faces = datasets_parsers.add_parser("faces", parents=[common], formatter_class=HelpFormatter, help=text,
                                        description=text)
    faces.add_argument("--out", dest="cascade_out", metavar="CASCADE.hdf5",
                       help="also write the trained cascade here (for bob-boost detect --cascade)")
    add_detection_options(faces, csv_file=False)
    faces.set_defaults(handler=command_faces)


def command_faces(args: argparse.Namespace) -> int:
    """Run ``bob-boost example faces``: train, optionally save, detect in ``astronaut()``, print the CSV."""
    from ..vision import data
    from ..vision.example import train_example_cascade
    start = time.perf_counter()
    image = data.image("astronaut")
    cascade = train_example_cascade()
    if not args.quiet:
        print(f"trained {len(cascade)} stages ({sum(len(m) for m, _ in cascade.stages)} stumps) in "
              f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    if args.cascade_out:
        cascade.save(args.cascade_out)
    report_detections(args, image, detect_with(args, image, cascade))
    return 0


def command_example(args: argparse.Namespace) -> int:
    """Run ``bob-boost example mnist|digits``."""
    def say(line: str) -> None:
        if not args.quiet:
            print(line)

    if args.number_of_elements is not None and args.number_of_elements < 1:
        raise CommandError("-n/--number-of-elements must be at least 1")
    digits = list(range(10)) if args.all_digits else list(dict.fromkeys(args.digits))
    check_example_options(digits, args.trainer_type, args.multi_variate, args.loss_type)
    if args.dataset == "mnist":
        data = datasets.load_mnist(args.data, download=not args.no_download)
        entries = 256
    else:
        train_x, train_y = datasets.make_digits(args.samples, random_state=args.seed)
        test_x, test_y = datasets.make_digits(max(args.samples // 2, 1), random_state=args.seed + 1)
        data = datasets.MNIST(train_x, train_y, test_x, test_y)
        entries = 17
    data = data.subset(digits, args.number_of_elements)

    classifier = Path(args.classifier_file) if args.classifier_file else None
    settings = {"dataset": args.dataset, "digits": digits, "multi_variate": bool(args.multi_variate)}
    if classifier is not None and classifier.exists() and not args.force:
        machine = load_model(str(classifier))
        stored = machine.metadata.get("example")
        if stored != settings:
            raise CommandError(f"{classifier}: was trained for {stored or 'something else than this example'}, "
                               f"not for {settings}; use -F/--force to train again")
        say(f"loaded the classifier from {classifier} (use -F/--force to train again)")
    else:
        say(f"training on {data.train_labels.size} {args.dataset} images of digits {digits}: "
            f"{args.trainer_type} weak machines, {EXAMPLE_LOSSES[args.loss_type]} loss, "
            f"{args.number_of_boosting_rounds} rounds"
            + (f", {args.feature_selection_style} feature selection" if args.multi_variate else ""))
        start = time.perf_counter()
        machine = train_example(data, digits, args.trainer_type, args.loss_type, args.number_of_boosting_rounds,
                                args.multi_variate, args.feature_selection_style, entries, args.quiet)
        machine.metadata["command"] = f"bob-boost example {args.dataset}"
        machine.metadata["example"] = settings
        say(f"trained {len(machine)} weak machines in {time.perf_counter() - start:.2f} s")
        if classifier is not None:
            machine.save(classifier)
            say(f"wrote the classifier to {classifier}")
    for split, features, labels in (("training", data.train_data, data.train_labels),
                                    ("test", data.test_data, data.test_labels)):
        accuracy = example_accuracy(machine, features, labels, digits, args.multi_variate)
        print(f"classification performance on the {split} set: {accuracy:.2%}")
    return 0

