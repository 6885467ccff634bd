"""``bob-boost predict``: write a model's predicted labels and scores for a data file."""
from __future__ import annotations

import argparse

from ..io.tables import read_table, write_predictions
from ._common import HelpFormatter, data_options, load_model, model_classes


def add_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the ``predict`` subcommand to ``commands``."""
    predict = commands.add_parser("predict", parents=[common], formatter_class=HelpFormatter,
                                  help="write predicted labels and scores")
    predict.add_argument("model", help="model file (HDF5)")
    predict.add_argument("data", help="data file (a target column, if present, is ignored)")
    predict.add_argument("-o", "--output", default="-",
                         help="output file: .csv/.tsv (optionally .gz; columns label, score...), .npz (labels, "
                              "scores), .npy (scores) or .hdf5 (labels, scores); '-' writes CSV to stdout")
    data_options(predict, labels="optional")
    predict.set_defaults(handler=command_predict)


def command_predict(args: argparse.Namespace) -> int:
    """Run ``bob-boost predict``."""
    machine = load_model(args.model)
    table = read_table(args.data, args.target, None, machine.number_of_features, args.group)
    scores = machine.decision_scores(table.features)  # the baseline included
    encoding = model_classes(machine)
    if encoding is None:
        labels = machine.labels_from_scores(scores)
    else:
        labels = encoding.decode(machine.class_indices_from_scores(scores))
    if scores.shape[1] == 1:
        names = ["score"]
    elif encoding is not None and encoding.number_of_classes == scores.shape[1]:
        names = [f"score_{c}" for c in encoding.classes.tolist()]
    else:
        names = [f"score_{i}" for i in range(scores.shape[1])]
    write_predictions(args.output, labels, scores, names)
    return 0

