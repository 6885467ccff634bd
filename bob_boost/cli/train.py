"""``bob-boost train``: train a boosted machine from a data file and write it to HDF5.

The trainer factory (:func:`train_machine` and its helpers) is the command line's own; it is kept in these
few functions so that one shared recipe module can replace it.
"""
from __future__ import annotations

import argparse
import inspect
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..io.tables import Table, read_cost_matrix, read_table
from ..losses.base import BinaryClassificationLoss, LossFunction
from ..losses.cmel import CMELoss
from ..machine import BoostedMachine
from ..progress import Progress
from ..registry import loss_class, loss_names
from ..trainers import Boosting, LUTTrainer, StumpTrainer
from ..trainers.badacost import BAdaCostTrainer, SAMMETrainer
from ..trainers.cost_sensitive import AdaBoostDBTrainer, CostSensitiveAdaBoostTrainer
from ..trainers.multiclass import CostSensitiveTreeTrainer, MultiClassLUTTrainer, MultiClassStumpTrainer
from ..weak.lut import check_discrete
from ._common import (
    CommandError,
    HelpFormatter,
    class_indices,
    class_list,
    data_options,
    fraction,
    positive_float,
    positive_int,
)

logger = logging.getLogger(__name__)

TRAINERS = ("boosting", "adaboostdb", "cost-sensitive-adaboost", "badacost", "samme")


def add_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the ``train`` subcommand to ``commands``."""
    train = commands.add_parser("train", parents=[common], formatter_class=HelpFormatter,
                                help="train a boosted machine from a data file and write it to HDF5",
                                description="Train a boosted machine. Binary labels become +1 (the larger label, or "
                                            "--positive-label) and -1; more classes become one +1/-1 output per "
                                            "class (generic boosting with LUTs) or class indices (BAdaCost, SAMME, "
                                            "the cmel loss); regression losses (squared) use the labels as numbers.")
    train.add_argument("data", help="training data file")
    train.add_argument("-o", "--output", required=True, help="model file to write (HDF5)")
    data_options(train)
    train.add_argument("--trainer", choices=TRAINERS, default="boosting",
                       help="boosting: generic loss-driven boosting; adaboostdb / cost-sensitive-adaboost: "
                            "cost-sensitive binary boosting of stumps; badacost / samme: multi-class boosting of "
                            "cost-sensitive trees, stumps or LUTs")
    train.add_argument("-l", "--loss", help="loss of the generic trainer, one of: " + ", ".join(loss_names() or [])
                       + " (default: exponential for two classes, logit for more)")
    train.add_argument("-w", "--weak-learner", choices=("stump", "lut", "tree"), default="stump",
                       help="weak learner; LUTs need integer features >= 0, trees are for badacost/samme")
    train.add_argument("-r", "--rounds", type=positive_int, default=100, metavar="N", help="number of boosting rounds")
    train.add_argument("-s", "--selection-style", choices=("independent", "shared"), default="independent",
                       help="multi-output LUTs: one feature per output, or one shared by all outputs")
    train.add_argument("--lut-entries", type=positive_int, metavar="N",
                       help="entries of each LUT (feature values 0..N-1); default: largest training value + 1")
    train.add_argument("--positive-label", help="the class that gets target +1 in binary problems")
    train.add_argument("--cost-positive", type=positive_float,
                       help="cost of a false negative (adaboostdb, cost-sensitive-adaboost, double_base loss; "
                            "default 1)")
    train.add_argument("--cost-negative", type=positive_float,
                       help="cost of a false positive (as --cost-positive)")
    train.add_argument("--selection", choices=("alpha", "loss"), default="alpha",
                       help="adaboostdb: keep the stump with the largest step (alpha, the paper's rule) or the one "
                            "that lowers the cost-sensitive bound most (loss, as cost-sensitive-adaboost does)")
    train.add_argument("--cost-matrix", metavar="FILE",
                       help="K x K cost matrix (CSV/TSV/text/NPY; rows: true class, columns: predicted class, in "
                            "sorted label order) for badacost and the cmel loss")
    train.add_argument("--tree-depth", type=positive_int, default=2, help="depth of badacost/samme trees")
    train.add_argument("--shrinkage", type=fraction, default=1.0, help="badacost/samme learning rate in (0, 1]")
    train.add_argument("--feature-fraction", type=fraction, default=1.0,
                       help="badacost/samme: fraction of the features each round may use")
    train.add_argument("--seed", type=int, default=0, help="seed of the badacost/samme feature sampling")
    train.add_argument("-F", "--force", action="store_true", help="overwrite an existing model file")
    train.set_defaults(handler=command_train)


def command_train(args: argparse.Namespace) -> int:
    """Run ``bob-boost train``."""
    if Path(args.output).exists() and not args.force:
        raise CommandError(f"{args.output}: exists; use --force to overwrite it")
    table = read_table(args.data, args.target, True, group=args.group)
    logger.debug("%s: %d samples, %d features", args.data, *table.features.shape)
    start = time.perf_counter()
    machine = train_machine(args, table)
    seconds = time.perf_counter() - start
    machine.save(args.output)
    if not args.quiet:
        print(f"trained {len(machine)} weak machines on {table.features.shape[0]} samples in {seconds:.2f} s; "
              f"wrote {args.output}")
    return 0


def build_loss(name: str, args: argparse.Namespace, cost_matrix: np.ndarray | None) -> LossFunction:
    """Instantiate the registered loss ``name``, passing the cost options its constructor takes."""
    cls = _loss_type(name)
    available = {"cost_matrix": cost_matrix, "cost_positive": args.cost_positive,
                 "cost_negative": args.cost_negative}
    kwargs = {}
    for parameter in inspect.signature(cls).parameters.values():
        if parameter.name in available and available[parameter.name] is not None:
            kwargs[parameter.name] = available[parameter.name]
        elif parameter.default is inspect.Parameter.empty and parameter.kind in (
                parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
            option = "--" + parameter.name.replace("_", "-")
            raise CommandError(f"loss {name!r} needs {option}")
    return cls(**kwargs)


def _lut_entries(features: np.ndarray, requested: int | None, source: str) -> int:
    """LUT size: ``requested`` or the largest value + 1; every value of ``source`` must index the table."""
    # a LUT needs at least two entries even when every training value is 0
    entries = max(2, int(features.max()) + 1) if requested is None else requested
    try:
        check_discrete(features, entries)
    except ValueError as error:
        raise CommandError(f"{source}: {error} (LUT weak learners; see --lut-entries)") from None
    return entries


def train_machine(args: argparse.Namespace, table: Table) -> BoostedMachine:
    """Train the machine the options of ``bob-boost train`` describe."""
    features, labels = table.features, table.labels
    cost_matrix = read_cost_matrix(args.cost_matrix) if args.cost_matrix else None
    rounds = args.rounds
    metadata: dict[str, Any] = {"trainer": args.trainer, "command": "bob-boost train"}
    if table.feature_names:
        metadata["feature_names"] = table.feature_names

    if args.trainer in ("badacost", "samme"):
        classes = class_list(labels, args.positive_label)
        indices = class_indices(labels, classes, args.data)
        if args.weak_learner == "lut":
            entries = _lut_entries(features, args.lut_entries, args.data)
            weak = MultiClassLUTTrainer(entries)
            metadata["lut_entries"] = entries
        elif args.weak_learner == "stump":
            weak = MultiClassStumpTrainer()
        else:
            weak = CostSensitiveTreeTrainer(max_depth=args.tree_depth)
        options = {"weak_learner": weak, "number_of_rounds": rounds, "shrinkage": args.shrinkage,
                   "feature_fraction": args.feature_fraction, "random_state": args.seed}
        if args.trainer == "badacost":
            if cost_matrix is None:
                raise CommandError("--trainer badacost needs --cost-matrix FILE")
            if cost_matrix.shape[0] != len(classes):
                raise CommandError(f"the cost matrix is {cost_matrix.shape[0]}x{cost_matrix.shape[0]} but the data "
                                   f"has {len(classes)} classes")
            trainer = BAdaCostTrainer(cost_matrix, **options)
        else:
            trainer = SAMMETrainer(number_of_classes=len(classes), **options)
        # the trainers minimise the CMEL of their cost matrix: progress shows it and the cost-sensitive error
        with Progress(rounds, CMELoss(trainer.cost_matrix), indices, quiet=args.quiet) as progress:
            machine = trainer.train(features, indices, callback=progress)
        task = "multiclass"
    elif args.trainer in ("adaboostdb", "cost-sensitive-adaboost"):
        classes = class_list(labels, args.positive_label)
        if len(classes) != 2:
            raise CommandError(f"--trainer {args.trainer} is binary but the data has {len(classes)} classes")
        targets = np.where(class_indices(labels, classes, args.data) == 1, 1.0, -1.0)
        costs = (1.0 if args.cost_positive is None else args.cost_positive,
                 1.0 if args.cost_negative is None else args.cost_negative)
        trainer = (AdaBoostDBTrainer(*costs, selection=args.selection) if args.trainer == "adaboostdb"
                   else CostSensitiveAdaBoostTrainer(*costs))
        with Progress(rounds, trainer.loss_function, targets, quiet=args.quiet) as progress:
            machine = trainer.train(features, targets, rounds, callback=progress)
        task = "binary"
    else:
        machine, classes, task = _train_generic(args, features, labels, cost_matrix, metadata)
    machine.metadata.update(metadata)
    machine.metadata.update({"task": task, "classes": classes})
    return machine


def _train_generic(args: argparse.Namespace, features: np.ndarray, labels: np.ndarray,
                   cost_matrix: np.ndarray | None, metadata: dict[str, Any]) -> tuple[BoostedMachine, list | None, str]:
    """Generic loss-driven boosting of stumps or LUTs: the machine, its classes (None for regression), its task."""
    regression = args.loss is not None and not issubclass(_loss_type(args.loss), BinaryClassificationLoss) \
        and "cost_matrix" not in inspect.signature(_loss_type(args.loss)).parameters
    if regression:
        if labels.dtype.kind not in "iuf":
            raise CommandError(f"loss {args.loss!r} is a regression loss but the labels are not numbers")
        classes, task = None, "regression"
        targets = labels.astype(np.float64)
        loss = build_loss(args.loss, args, cost_matrix)
    else:
        classes = class_list(labels, args.positive_label)
        indices = class_indices(labels, classes, args.data)
        name = args.loss or ("exponential" if len(classes) == 2 else "logit")
        loss = build_loss(name, args, cost_matrix)
        if getattr(loss, "cost_matrix", None) is not None:
            targets, task = indices, "multiclass"
        elif len(classes) == 2:
            targets, task = np.where(indices == 1, 1.0, -1.0), "binary"
        else:
            # bob's multi-variate convention: +1 for the true class, -1 for the others
            targets = np.full((indices.size, len(classes)), -1.0)
            targets[np.arange(indices.size), indices] = 1.0
            task = "multiclass"
    number_of_outputs = loss.check_targets(targets).shape[1]
    if args.weak_learner == "lut":
        entries = _lut_entries(features, args.lut_entries, args.data)
        weak = LUTTrainer(entries, number_of_outputs, args.selection_style)
        metadata["lut_entries"] = entries
    elif args.weak_learner == "stump":
        if number_of_outputs != 1:
            raise CommandError(f"stumps are univariate but this task has {number_of_outputs} outputs; "
                               f"use --weak-learner lut")
        weak = StumpTrainer()
    else:
        raise CommandError(f"--weak-learner {args.weak_learner} needs --trainer badacost or samme")
    metadata["weak_learner"] = args.weak_learner
    with Progress(args.rounds, loss, targets, quiet=args.quiet) as progress:
        machine = Boosting(weak, loss).train(features, targets, args.rounds, callback=progress)
    return machine, classes, task


def _loss_type(name: str) -> type:
    """The registered loss class ``name``; an unknown name is a CommandError listing the known ones."""
    try:
        return loss_class(name)
    except KeyError:
        raise CommandError(f"unknown loss {name!r}; known losses: {', '.join(loss_names())}") from None

