"""``bob-boost explain``: write every row's Shapley values of a model's scores (interventional SHAP)."""
from __future__ import annotations

import argparse
import csv
import gzip
import io
import sys
from pathlib import Path

import numpy as np

from ..analysis import feature_names
from ..explanation_plots import plot_shap_summary
from ..explanations import has_cover
from ..io.hdf5 import atomic_path
from ..io.tables import TABLE_SUFFIXES, format_suffix, read_table
from ._common import CommandError, HelpFormatter, data_options, load_model, model_categories, model_classes

#: Background rows taken from the explained data when no --background file is given.
DEFAULT_BACKGROUND_ROWS = 100


def add_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the ``explain`` subcommand to ``commands``."""
    explain = commands.add_parser("explain", parents=[common], formatter_class=HelpFormatter,
                                  help="write each feature's Shapley value of every row's scores")
    explain.add_argument("model", help="model file (HDF5)")
    explain.add_argument("data", help="data file whose rows are explained (a target column, if present, is ignored)")
    explain.add_argument("-o", "--output", default="-",
                         help="output file: .csv/.tsv (optionally .gz; one column per feature, then "
                              "expected_value; with several outputs a block of them per output, named "
                              "OUTPUT/FEATURE) or .npy (the (#rows, #features + 1[, #outputs]) array); '-' writes "
                              "CSV to stdout")
    explain.add_argument("--background", metavar="FILE",
                         help="data file of the background rows the values are computed against (interventional "
                              "SHAP; default: path-dependent SHAP from the trees' training cover when every weak "
                              f"machine records it, else {DEFAULT_BACKGROUND_ROWS} rows of DATA spread evenly "
                              "over it)")
    explain.add_argument("--background-rows", type=int, default=None, metavar="N",
                         help="without --background: N rows of DATA, spread evenly over it, are the background; "
                              "more rows cost proportionally more time")
    explain.add_argument("--plot", metavar="FILE.png",
                         help="also draw the values as a summary (beeswarm) plot: the features of largest mean "
                              "absolute value, one dot per row coloured by its feature value")
    explain.add_argument("--plot-output", type=int, default=0, metavar="K",
                         help="with several outputs, the one --plot shows (default 0)")
    data_options(explain, labels="optional")
    explain.set_defaults(handler=command_explain)


def command_explain(args: argparse.Namespace) -> int:
    """Run ``bob-boost explain``."""
    if args.background_rows is not None and args.background_rows < 1:
        raise CommandError(f"--background-rows: must be a positive integer, got {args.background_rows}")
    output = str(args.output)
    suffix = ".csv" if output == "-" else format_suffix(Path(output))
    if suffix not in TABLE_SUFFIXES + (".npy",):
        raise CommandError(f"--output: {output}: write .csv, .tsv, .txt (optionally .gz) or .npy")
    if args.plot is not None and not str(args.plot).lower().endswith(".png"):
        raise CommandError(f"--plot: {args.plot}: write a .png file")
    machine = load_model(args.model)
    categories = model_categories(machine)
    table = read_table(args.data, args.target, None, machine.number_of_features, args.group, categories)
    background = None
    if args.background is not None:
        background = read_table(args.background, args.target, None, machine.number_of_features, args.group,
                                categories).features
    elif args.background_rows is not None or not has_cover(machine.weak_machines):
        rows, wanted = table.features.shape[0], args.background_rows or DEFAULT_BACKGROUND_ROWS
        background = table.features[np.unique(np.linspace(0, rows - 1, min(wanted, rows)).astype(int))]
    try:
        values = machine.shap_values(table.features, background)
    except ValueError as error:
        raise CommandError(str(error)) from None
    if args.plot is not None:
        _plot(args, machine, values, table.features)
    if suffix == ".npy":
        with atomic_path(output, ".npy") as temporary:
            np.save(temporary, values)
        return 0
    names = _column_names(machine, table.features.shape[1], values)
    _write_table(output, suffix, values.reshape(values.shape[0], -1, order="F"), names)
    return 0


def _plot(args: argparse.Namespace, machine, values: np.ndarray, features: np.ndarray) -> None:
    """The summary plot of ``values`` into ``--plot``, written whole or not at all."""
    outputs = 1 if values.ndim == 2 else values.shape[2]
    if not 0 <= args.plot_output < outputs:
        raise CommandError(f"--plot-output: the model has {outputs} outputs, got {args.plot_output}")
    try:
        figure = plot_shap_summary(values, features, feature_names(machine), output=args.plot_output)
    except ImportError as error:
        raise CommandError(f"--plot: {error}") from None
    with atomic_path(args.plot, ".png") as temporary:
        figure.savefig(temporary, format="png", dpi=100)


def _column_names(machine, width: int, values: np.ndarray) -> list[str]:
    """The feature names (the model's, else f0, f1, ...) and expected_value, per output block."""
    columns = (feature_names(machine) or [f"f{j}" for j in range(width)]) + ["expected_value"]
    if values.ndim == 2:
        return columns
    encoding = model_classes(machine)
    outputs = (encoding.classes.tolist() if encoding is not None and encoding.number_of_classes == values.shape[2]
               else list(range(values.shape[2])))
    return [f"{output}/{column}" for output in outputs for column in columns]


def _write_table(output: str, suffix: str, values: np.ndarray, names: list[str]) -> None:
    """A header of ``names`` and one row of ``values`` per explained row; the file appears only once whole."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t" if suffix == ".tsv" else ",", lineterminator="\n")
    writer.writerow(names)
    for row in values.tolist():
        writer.writerow([repr(float(v)) for v in row])
    if output == "-":
        sys.stdout.write(buffer.getvalue())
        return
    with atomic_path(output, ".partial") as temporary:
        if output.lower().endswith(".gz"):
            with gzip.open(temporary, "wt") as handle:
                handle.write(buffer.getvalue())
        else:
            Path(temporary).write_text(buffer.getvalue())
