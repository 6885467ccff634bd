"""``bob-boost plot errors|margins|confusion|features|cost-curves``: PNG figures of a model (needs matplotlib)."""
from __future__ import annotations

import argparse
import contextlib
import types
from collections.abc import Iterator
from pathlib import Path

from .._optional import optional_import
from ..io.tables import read_table
from ._common import (
    CommandError,
    HelpFormatter,
    Parser,
    data_options,
    load_model,
    model_classes,
    positive_int,
    predicted_indices,
)
from .evaluate import evaluate


def add_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the ``plot`` subcommand, with one sub-subcommand per figure, to ``commands``."""
    plot = commands.add_parser("plot", help='write PNG figures (needs matplotlib: pip install "bob_boost[plot]")')
    kinds = plot.add_subparsers(dest="plot", metavar="KIND", parser_class=Parser, help="the figure to draw")
    kinds.required = True
    errors = kinds.add_parser("errors", parents=[common], formatter_class=HelpFormatter,
                              help="training (and test) error after every round")
    errors.add_argument("model", help="model file (HDF5)")
    errors.add_argument("data", help="labelled training data")
    errors.add_argument("--test", metavar="DATA", help="labelled test data for a second curve")
    margins = kinds.add_parser("margins", parents=[common], formatter_class=HelpFormatter,
                               help="cumulative distributions of the normalised margins after chosen rounds")
    margins.add_argument("model", help="model file (HDF5)")
    margins.add_argument("data", help="labelled data (usually the training data)")
    margins.add_argument("--rounds", type=positive_int, nargs="+", metavar="N",
                         help="numbers of rounds to draw a curve for, each in 1 .. the model's rounds (default: "
                              "a few log-spaced rounds and the last)")
    confusion = kinds.add_parser("confusion", parents=[common], formatter_class=HelpFormatter,
                                 help="confusion matrix of a model on labelled data")
    confusion.add_argument("model", help="model file (HDF5)")
    confusion.add_argument("data", help="labelled data")
    features = kinds.add_parser("features", parents=[common], formatter_class=HelpFormatter,
                                help="where the selected features lie in the image, weighted by |weight|")
    features.add_argument("model", help="model file (HDF5)")
    features.add_argument("--image-shape", type=positive_int, nargs=2, metavar=("HEIGHT", "WIDTH"),
                          help="image height and width (default: square images)")
    features.add_argument("--top", type=positive_int, metavar="N",
                          help="instead of an image, bars of the N features of largest summed |weight|, "
                               "labelled with the model's feature names when it has them")
    curves = kinds.add_parser("cost-curves", parents=[common], formatter_class=HelpFormatter,
                              help="Drummond-Holte cost lines of binary models and their lower envelope")
    curves.add_argument("models", nargs="+", help="binary model files (HDF5)")
    curves.add_argument("--data", required=True, help="labelled data the models are evaluated on")
    for sub in (errors, margins, confusion, features, curves):
        sub.add_argument("-o", "--output", required=True, help="PNG file to write")
        if sub is not features:
            data_options(sub)
        sub.set_defaults(handler=command_plot)


def _plots() -> types.ModuleType:
    """:mod:`bob_boost.plots`, once matplotlib (an optional extra) is known to be importable."""
    # plots imports matplotlib only when it draws; checking first fails before any data is read
    optional_import("matplotlib.figure", "plotting", CommandError)
    from .. import plots

    return plots


@contextlib.contextmanager
def _option_errors(parameter: str, option: str, advice: str = "") -> Iterator[None]:
    """Re-raise a library error about ``parameter`` as one about the ``option`` the user typed."""
    try:
        yield
    except ValueError as error:
        message = str(error)
        if not message.startswith(parameter + ":"):
            raise
        raise CommandError(option + message[len(parameter):] + advice) from None


def command_plot(args: argparse.Namespace) -> int:
    """Run ``bob-boost plot errors|margins|confusion|features|cost-curves``."""
    plots = _plots()
    if args.plot == "cost-curves":
        fn_rates, fp_rates, names = [], [], []
        for model in args.models:
            machine = load_model(model)
            result = evaluate(machine, read_table(args.data, args.target, True, machine.number_of_features,
                                                  args.group), args.data, None, 1.0, 1.0, 0.5)
            if "false_negative_rate" not in result:
                raise CommandError(f"{model}: cost curves need binary models")
            fn_rates.append(result["false_negative_rate"])
            fp_rates.append(result["false_positive_rate"])
            names.append(Path(model).stem)
        plots.plot_cost_curves(fn_rates, fp_rates, names, path=args.output)
    else:
        machine = load_model(args.model)
        if args.plot == "features":
            if args.top is not None:
                if args.image_shape:
                    raise CommandError("--top draws bars, not an image: give --top or --image-shape, not both")
                plots.plot_feature_weights(machine, args.top, path=args.output)
            else:
                shape = tuple(args.image_shape) if args.image_shape else None
                with _option_errors("image_shape", "--image-shape", " (or draw bars with --top N)"):
                    plots.plot_feature_map(machine, shape, path=args.output)
        else:
            table = read_table(args.data, args.target, True, machine.number_of_features, args.group)
            encoding = model_classes(machine, args.model)
            if encoding is None:
                raise CommandError(f"{args.model}: is a regression model; {args.plot} plots need a classifier")
            truth = encoding.encode(table.labels, args.data)
            if args.plot == "margins":
                if len(machine) == 0:
                    raise CommandError(f"{args.model}: has no rounds, so no margins")
                with _option_errors("rounds", "--rounds"):
                    margins = plots.margin_distribution(machine, table.features, truth, args.rounds)
                plots.plot_margins(margins, path=args.output, title=f"{Path(args.model).name} on "
                                                                    f"{Path(args.data).name}")
            elif args.plot == "confusion":
                predicted = predicted_indices(machine, table.features)
                plots.plot_confusion_matrix(truth, predicted, [str(c) for c in encoding.classes.tolist()],
                                            path=args.output)
            else:
                curves = {"training": plots.errors_per_round(machine, table.features, truth)}
                if args.test:
                    test = read_table(args.test, args.target, True, machine.number_of_features, args.group)
                    curves["test"] = plots.errors_per_round(machine, test.features,
                                                            encoding.encode(test.labels, args.test))
                plots.plot_error_curves(curves, path=args.output)
    if not args.quiet:
        print(f"wrote {args.output}")
    return 0
