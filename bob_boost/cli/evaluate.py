"""``bob-boost evaluate``: accuracy, confusion matrix, costs and FN/FP/NEC of a model on labelled data."""
from __future__ import annotations

import argparse
import json
from typing import Any

import numpy as np

from .. import evaluation
from ..io.cost_files import read_cost_matrix
from ..io.tables import Table, read_table
from ._common import model_categories
from ..machine import BoostedMachine
from ._common import (
    CommandError,
    check_one_label,
    HelpFormatter,
    data_options,
    fraction,
    load_model,
    model_classes,
    positive_float,
    predicted_indices,
)


def add_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the ``evaluate`` subcommand to ``commands``."""
    parser = commands.add_parser("evaluate", parents=[common], formatter_class=HelpFormatter,
                                 help="accuracy, confusion matrix, costs and FN/FP/NEC of a model on data")
    parser.add_argument("model", help="model file (HDF5)")
    parser.add_argument("data", help="labelled data file")
    data_options(parser)
    parser.add_argument("--cost-matrix", metavar="FILE",
                        help="K x K cost matrix; prints the average cost 1/N sum C[true, predicted]")
    parser.add_argument("--cost-positive", type=positive_float, default=1.0,
                        help="binary: cost of a false negative, for the PCF and NEC")
    parser.add_argument("--cost-negative", type=positive_float, default=1.0,
                        help="binary: cost of a false positive, for the PCF and NEC")
    parser.add_argument("--prior-positive", type=fraction, default=0.5,
                        help="binary: prior p(+) in the PCF (0.5 as in the AdaBoostDB paper)")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.set_defaults(handler=command_evaluate)


def command_evaluate(args: argparse.Namespace) -> int:
    """Run ``bob-boost evaluate``."""
    machine = load_model(args.model)
    check_one_label(machine, args.model)
    table = read_table(args.data, args.target, True, machine.number_of_features, args.group,
                       model_categories(machine))
    cost_matrix = read_cost_matrix(args.cost_matrix) if args.cost_matrix else None
    result = evaluate(machine, table, args.data, cost_matrix, args.cost_positive, args.cost_negative,
                      args.prior_positive)
    print(json.dumps(result, indent=2) if args.json else _format_evaluation(result))
    return 0


def evaluate(machine: BoostedMachine, table: Table, source: str, cost_matrix: np.ndarray | None,
             cost_positive: float, cost_negative: float, prior_positive: float) -> dict[str, Any]:
    """Accuracy, confusion matrix, average cost and (binary) FN/FP/NEC of ``machine`` on ``table``."""
    encoding = model_classes(machine)
    if encoding is None:
        if table.labels.dtype.kind not in "iufb":
            raise CommandError(f"{source}: the model is a regression model but the labels are not numbers")
        scores = np.asarray(machine(table.features), dtype=np.float64)
        errors = scores - table.labels.astype(np.float64)
        return {"samples": int(errors.size), "mean_squared_error": float(np.mean(errors ** 2)),
                "mean_absolute_error": float(np.mean(np.abs(errors)))}
    classes = encoding.classes.tolist()
    truth = encoding.encode(table.labels, source)
    predicted = predicted_indices(machine, table.features)
    k = len(classes)
    confusion = evaluation.confusion_matrix(truth, predicted, k)
    result: dict[str, Any] = {"samples": int(truth.size), "classes": classes,
                              "accuracy": evaluation.accuracy(truth, predicted), "confusion_matrix": confusion.tolist()}
    if cost_matrix is not None:
        if cost_matrix.shape[0] != k:
            raise CommandError(f"the cost matrix is {cost_matrix.shape[0]}x{cost_matrix.shape[0]} but the model has "
                               f"{k} classes")
        result["average_cost"] = float(np.mean(cost_matrix[truth, predicted]))
    if k == 2:
        targets, predictions = np.where(truth == 1, 1, -1), np.where(predicted == 1, 1, -1)
        fn = evaluation.false_negative_rate(targets, predictions) if np.any(truth == 1) else float("nan")
        fp = evaluation.false_positive_rate(targets, predictions) if np.any(truth == 0) else float("nan")
        pcf = evaluation.probability_cost_function(cost_positive, cost_negative, prior_positive)
        # a rate is undefined (NaN) when the data lacks one class, and so is the NEC
        nec = evaluation.normalized_expected_cost(fn, fp, pcf) if np.isfinite(fn + fp) else float("nan")
        result.update({"positive_class": classes[1], "false_negative_rate": fn, "false_positive_rate": fp,
                       "pcf": pcf, "normalized_expected_cost": nec})
    return result


def _format_evaluation(result: dict[str, Any]) -> str:
    """The text report of an :func:`evaluate` result."""
    if "mean_squared_error" in result:
        return (f"samples: {result['samples']}\nmean squared error: {result['mean_squared_error']:.6g}\n"
                f"mean absolute error: {result['mean_absolute_error']:.6g}")
    names = [str(c) for c in result["classes"]]
    width = max(6, *(len(n) for n in names), *(len(str(v)) for row in result["confusion_matrix"] for v in row))
    lines = [f"samples: {result['samples']}", f"accuracy: {result['accuracy']:.2%}",
             "confusion matrix (rows: true class, columns: predicted class):",
             " " * width + " " + " ".join(n.rjust(width) for n in names)]
    for name, row in zip(names, result["confusion_matrix"]):
        lines.append(name.rjust(width) + " " + " ".join(str(v).rjust(width) for v in row))
    if "average_cost" in result:
        lines.append(f"average cost: {result['average_cost']:.6g}")
    if "false_negative_rate" in result:
        lines += [f"positive class: {result['positive_class']}",
                  f"false-negative rate: {result['false_negative_rate']:.2%}",
                  f"false-positive rate: {result['false_positive_rate']:.2%}",
                  f"normalized expected cost: {result['normalized_expected_cost']:.4f} (PCF {result['pcf']:.3f})"]
    return "\n".join(lines)

