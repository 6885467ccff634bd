"""``bob-boost train``: train a boosted machine from a data file and write it to HDF5.

The options name a recipe (:mod:`bob_boost.recipes`, shared with the scikit-learn estimators) and the labels
go through :class:`bob_boost.labels.ClassEncoding`, which also writes the class part of the model's metadata.
"""
from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..costs import check_sample_costs, class_mean_costs
from ..io.cost_files import read_cost_matrix, read_sample_costs
from ..io.tables import Table, read_table
from ..labels import REGRESSION_METADATA, ClassEncoding
from ..machine import BoostedMachine
from ..progress import Progress
from ..boosting.sampling import SAMPLING_METHODS, SAMPLING_OPTIONS
from ..family_recipes import MULTICLASS_COST_TRAINERS
from ..recipes import SELECTION_STYLES, TRAINERS, WEAK_LEARNERS, make_recipe
from ..registry import loss_names
from ..sparse import is_sparse
from ..weak.lut import check_discrete
from ._common import (CommandError, HelpFormatter, as_options, bin_count, check_chunk_rows, data_options, fraction,
                      integer_groups, integer_list, positive_float, positive_int, scheduler_options)
from ._options import (ADABOOSTDB_ONLY, BADACOST_ONLY, BINARY_COSTS, CLUSTER_MAX_BINS,  # noqa: F401 (re-exported)
                       DEFAULT_MAX_BINS, GRADIENT_TREE_ONLY, IN_MEMORY_ONLY, LUT_ONLY, MULTICLASS_ONLY, SPLIT_ONLY,
                       TREE_ONLY, check_constraints, file_categorical, is_regression, sampling_of)

logger = logging.getLogger(__name__)

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
                            "cost-sensitive binary boosting of stumps; badacost / samme / adaboost-m1: multi-class "
                            "boosting of cost-sensitive trees, stumps or LUTs; adac1-3, adacost, csb0-2, asymboost: "
                            "binary cost-reweighting boosting of stumps; adamec: AdaBoost's stumps calibrated on "
                            "held-out rows, deciding by least expected cost; adac2-m1 / multiboost / lp-csb: the "
                            "multi-class cost-sensitive methods BAdaCost's paper compares with (-w tree, "
                            "--cost-matrix)")
    train.add_argument("-l", "--loss", help="loss of the generic trainer, one of: " + ", ".join(loss_names() or [])
                       + " (default: exponential for two classes, logit for more)")
    train.add_argument("-w", "--weak-learner", choices=WEAK_LEARNERS,
                       help="weak learner; LUTs need integer features >= 0, trees are for badacost/samme and the "
                            "generic trainer; default stump, and tree for adac2-m1, multiboost and lp-csb, which "
                            "boost trees, and for badacost with --sample-costs")
    train.add_argument("-r", "--rounds", type=positive_int, default=100, metavar="N", help="number of boosting rounds")
    train.add_argument("-s", "--selection-style", choices=SELECTION_STYLES,
                       default=LUT_ONLY["selection_style"],
                       help="multi-output LUTs: one feature per output, or one shared by all outputs")
    train.add_argument("--lut-entries", type=positive_int, metavar="N",
                       help="entries of each LUT (feature values 0..N-1); default: largest training value + 1")
    train.add_argument("--positive-label", help="the class that gets target +1 in binary problems")
    train.add_argument("--cost-positive", type=positive_float,
                       help="cost of a false negative (adaboostdb, cost-sensitive-adaboost, the cost-reweighting "
                            "trainers, adamec, double_base loss; default 1)")
    train.add_argument("--cost-negative", type=positive_float,
                       help="cost of a false positive (as --cost-positive)")
    train.add_argument("--selection", choices=("alpha", "loss"), default=ADABOOSTDB_ONLY["selection"],
                       help="adaboostdb: keep the stump with the largest step (alpha, the paper's rule) or the one "
                            "that lowers the cost-sensitive bound most (loss, as cost-sensitive-adaboost does)")
    train.add_argument("--cost-matrix", metavar="FILE",
                       help="K x K cost matrix (CSV/TSV/text/NPY; rows: true class, columns: predicted class, in "
                            "sorted label order) for badacost, adac2-m1, multiboost, lp-csb and the cmel loss")
    train.add_argument("--calibration", choices=("platt", "isotonic", "none"), default="platt",
                       help="adamec: how the probability of the positive class is fitted to the scores of the "
                            "held-out rows (none: the exponential loss's own link, every row trains)")
    train.add_argument("--calibration-fraction", type=fraction, default=0.5, metavar="F",
                       help="adamec: the share of each class held out to calibrate (chosen from --seed)")
    train.add_argument("--sample-costs", metavar="FILE",
                       help="badacost (with trees, -w's default then): example-dependent costs, a row per training "
                            "sample with the cost of predicting each class (sorted label order; zero at its own "
                            "class), as CSV/TSV/text/NPY; the machine predicts with --cost-matrix, by default these "
                            "rows' class means")
    train.add_argument("--lp-norm", type=float, default=2.0, metavar="P",
                       help="lp-csb: the norm p (>= 1) of its loss (default 2)")
    train.add_argument("--pool-size", type=positive_int, default=6000, metavar="N",
                       help="multiboost: trees in its pool, grown on 30%%, 45%% and 60%% samples (default 6000)")
    train.add_argument("--tree-depth", type=positive_int, default=TREE_ONLY["tree_depth"],
                       help="depth of the trees (badacost/samme: default 2; the generic trainer's gradient trees: "
                            "default no limit, with --tree-leaves)")
    train.add_argument("--tree-leaves", type=positive_int, default=GRADIENT_TREE_ONLY["tree_leaves"], metavar="N",
                       help="the generic trainer's gradient trees: at most N leaves (default 31, as LightGBM)")
    train.add_argument("--tree-growth", choices=("levelwise", "leafwise"), default=GRADIENT_TREE_ONLY["tree_growth"],
                       help="the generic trainer's gradient trees: level by level, or the leaf of largest gain "
                            "first (the default, as LightGBM; with --tree-leaves)")
    train.add_argument("--tree-outputs", choices=("shared", "per_output"), default=GRADIENT_TREE_ONLY["tree_outputs"],
                       help="the generic trainer's gradient trees of several outputs (softmax): one tree with a "
                            "value per class in each leaf, or one tree per class each round (the default, as LightGBM)")
    train.add_argument("--tree-quantized-gradients", type=positive_int, metavar="L",
                       default=IN_MEMORY_ONLY["tree_quantized_gradients"],
                       help="the generic trainer's gradient trees (one output a tree): histograms of gradients "
                            "rounded to L levels, faster (as LightGBM's use_quantized_grad)")
    train.add_argument("--monotonic-cst", type=integer_list, metavar="D,D,...",
                       default=GRADIENT_TREE_ONLY["monotonic_cst"],
                       help="gradient trees: -1, 0 or +1 per feature, the score must not increase, is free, or must "
                            "not decrease along it")
    train.add_argument("--interaction-cst", type=integer_groups, metavar="F,F;F,F",
                       default=GRADIENT_TREE_ONLY["interaction_cst"],
                       help="gradient trees: groups of feature indices that may interact (the others one more "
                            "group), or no_interactions")
    train.add_argument("--categorical", type=integer_list, metavar="F,F,...",
                       default=SPLIT_ONLY["categorical"],
                       help="stumps (adaboostdb's and cost-sensitive-adaboost's too), gradient trees and the "
                            "multi-class trainers' trees: the feature columns (from 0) that hold category codes, "
                            "non-negative integers split by sets of categories")
    train.add_argument("--shrinkage", type=fraction, default=MULTICLASS_ONLY["shrinkage"],
                       help="learning rate in (0, 1] (badacost/samme, and the generic trainer); default 0.1 for "
                            "gradient trees (-w tree with --trainer boosting), 1 otherwise")
    train.add_argument("--feature-fraction", type=fraction, default=MULTICLASS_ONLY["feature_fraction"],
                       help="badacost/samme: fraction of the features each round may use")
    train.add_argument("--min-weight-fraction-leaf", type=float, metavar="F",
                       default=MULTICLASS_ONLY["min_weight_fraction_leaf"],
                       help="badacost/samme trees and stumps: each leaf holds at least this share (0 .. 0.5) of the "
                            "round's sample weight (default 0)")
    train.add_argument("--boost-from-average", action="store_true",
                       help="--trainer boosting classifiers: start from the class prior (the loss's optimal "
                            "constant, stored as the model's baseline, which bob.learn.boosting does not read); "
                            "by default bob's model without intercept")
    train.add_argument("--subsample", type=fraction, default=SAMPLING_OPTIONS["subsample"],
                       help="stochastic boosting (the generic and multi-class trainers): fit each round to this "
                            "share of the rows (default 1: every row)")
    train.add_argument("--subsample-freq", type=positive_int, default=SAMPLING_OPTIONS["subsample_freq"],
                       metavar="K", help="draw new rows every K rounds (default 1)")
    train.add_argument("--sampling", choices=SAMPLING_METHODS, default=SAMPLING_OPTIONS["sampling"],
                       help="how rows are drawn: independently, exactly --subsample of each class, or GOSS "
                            "(--top-rate, --other-rate); default uniform")
    train.add_argument("--top-rate", type=fraction, default=SAMPLING_OPTIONS["top_rate"],
                       help="GOSS: share of the rows of largest gradient kept (default 0.2)")
    train.add_argument("--other-rate", type=fraction, default=SAMPLING_OPTIONS["other_rate"],
                       help="GOSS: share of the other rows drawn, re-weighted (default 0.1)")
    train.add_argument("--colsample-bytree", type=fraction, default=SAMPLING_OPTIONS["colsample_bytree"],
                       help="stumps and gradient trees of the generic trainer: share of the features each round "
                            "may use (default 1)")
    train.add_argument("--colsample-bynode", type=fraction, default=SAMPLING_OPTIONS["colsample_bynode"],
                       help="gradient trees: share of the round's features each node may split on (default 1)")
    train.add_argument("--seed", type=int, default=0,
                       help="seed of the sampling of rows (--subsample, --sampling) and of features "
                            "(--colsample-bytree, --feature-fraction); default 0")
    train.add_argument("--max-bins", type=bin_count, default=DEFAULT_MAX_BINS, metavar="N",
                       help="stumps: at most N candidate bins per feature (features with fewer distinct values keep "
                            "one per value), or 'exact' for every distinct value (bob's search); default 256")
    train.add_argument("--threads", type=positive_int, metavar="N",
                       help="threads for binning and histograms (default: every core); the model does not depend "
                            "on it")
    train.add_argument("-F", "--force", action="store_true", help="overwrite an existing model file")
    scheduler_options(train, "train",
                      "--trainer boosting with stumps or LUTs (-w lut: one output per class for more than two) and "
                      "a loss with one term per output (exponential, logit, tangential, double_base or squared), "
                      "or with gradient trees (-w tree; also the softmax loss), "
                      "or --trainer adaboostdb or cost-sensitive-adaboost, these with --max-bins at most "
                      f"{CLUSTER_MAX_BINS}; and --trainer badacost, samme or adaboost-m1 with -w tree or stump")
    train.set_defaults(handler=command_train)


def resolve_weak_learner(args: argparse.Namespace) -> None:
    """Fill in ``-w``'s default for the trainer: trees for the ones that boost trees only and for BAdaCost's
    example-dependent costs (which only its trees read), stumps otherwise."""
    if args.weak_learner is None:
        trees = args.trainer in MULTICLASS_COST_TRAINERS or (args.trainer == "badacost" and args.sample_costs)
        args.weak_learner = "tree" if trees else "stump"


def command_train(args: argparse.Namespace) -> int:
    """Run ``bob-boost train``."""
    resolve_weak_learner(args)
    if Path(args.output).exists() and not args.force:
        raise CommandError(f"{args.output}: exists; use --force to overwrite it")
    check_chunk_rows(args)
    if args.scheduler is not None:
        from . import _train_cluster  # the distributed path, loaded only for it

        return _train_cluster.command_train_on_cluster(args)
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


def _lut_entries(features: np.ndarray, requested: int | None, source: str) -> int:
    """LUT size: ``requested`` or the largest value + 1; every value of ``source`` must index the table."""
    # a LUT needs at least two entries even when every training value is 0
    entries = max(2, int(features.max()) + 1) if requested is None else requested
    try:
        check_discrete(features, entries)
    except ValueError as error:
        raise CommandError(f"{source}: {error} (LUT weak learners; see --lut-entries)") from None
    return entries


def sample_costs_and_matrix(args: argparse.Namespace, encoding: ClassEncoding | None, labels: np.ndarray,
                            cost_matrix: np.ndarray | None) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The checked (#samples, K) rows of ``--sample-costs`` (None without it) for the training ``labels``, and the
    cost matrix: ``cost_matrix`` (``--cost-matrix``), else with sample costs their class means."""
    if not args.sample_costs:
        return None, cost_matrix
    rows = _sample_costs(args, encoding, labels)
    if cost_matrix is None:
        cost_matrix = class_mean_costs(encoding.encode(labels, args.data), rows, encoding.number_of_classes)
    return rows, cost_matrix


def _sample_costs(args: argparse.Namespace, encoding: ClassEncoding | None, labels: np.ndarray) -> np.ndarray:
    """The checked (#samples, K) rows of ``--sample-costs`` for the training labels."""
    if encoding is None:
        raise CommandError("--sample-costs: example-dependent costs are BAdaCost's (--trainer badacost), a "
                           "classifier's")
    rows = read_sample_costs(args.sample_costs)
    if rows.shape[0] != labels.shape[0]:
        raise CommandError(f"{args.sample_costs}: has {rows.shape[0]} rows but {args.data} has {labels.shape[0]} "
                           f"samples (one row of costs per sample)")
    try:
        return check_sample_costs(rows, encoding.encode(labels, args.data), encoding.number_of_classes)
    except ValueError as error:
        raise CommandError(f"{args.sample_costs}: {str(error).removeprefix('sample_costs: ')}") from None


def train_machine(args: argparse.Namespace, table: Table) -> BoostedMachine:
    """Train the machine the options of ``bob-boost train`` describe (through :func:`bob_boost.recipes.make_recipe`)."""
    resolve_weak_learner(args)
    features, labels = table.features, table.labels
    if is_sparse(features) and args.trainer != "boosting":
        raise CommandError(f"{args.data}: sparse rows (a LibSVM file) train --trainer boosting (-w stump, lut or "
                           f"tree); convert the file to CSV, NPY or HDF5 for --trainer {args.trainer}")
    cost_matrix = read_cost_matrix(args.cost_matrix) if args.cost_matrix else None
    metadata: dict[str, Any] = {"trainer": args.trainer, "weak_learner": args.weak_learner,
                                "command": "bob-boost train"}
    if table.feature_names:
        metadata["feature_names"] = table.feature_names
    categorical = args.categorical
    if table.categories:  # a Parquet or Arrow file's category and text columns, coded at reading
        categorical = file_categorical(args, table.categories)
        metadata["categories"] = {str(j): values for j, values in table.categories.items()}
    try:
        encoding = None if is_regression(args, cost_matrix) else ClassEncoding.fit(labels, args.positive_label)
        if encoding is None and labels.dtype.kind not in "iuf":
            raise CommandError(f"loss {args.loss!r} is a regression loss but the labels are not numbers")
        sample_costs, cost_matrix = sample_costs_and_matrix(args, encoding, labels, cost_matrix)
        entries = 256
        if args.weak_learner == "lut":
            entries = _lut_entries(features, args.lut_entries, args.data)
            metadata["lut_entries"] = entries
        recipe = make_recipe(args.trainer, number_of_classes=None if encoding is None else encoding.number_of_classes,
                             loss=args.loss, weak_learner=args.weak_learner, lut_entries=entries,
                             selection_style=args.selection_style, cost_positive=args.cost_positive,
                             cost_negative=args.cost_negative, cost_matrix=cost_matrix, selection=args.selection,
                             tree_depth=args.tree_depth, shrinkage=args.shrinkage,
                             feature_fraction=args.feature_fraction, random_state=args.seed,
                             number_of_rounds=args.rounds, max_bins=args.max_bins, n_threads=args.threads,
                             tree_leaves=args.tree_leaves, tree_growth=args.tree_growth,
                             tree_outputs=args.tree_outputs, tree_quantized_gradients=args.tree_quantized_gradients,
                             sampling=sampling_of(args), tree_min_weight_fraction_leaf=args.min_weight_fraction_leaf,
                             tree_monotonic_cst=args.monotonic_cst, tree_interaction_cst=args.interaction_cst,
                             categorical_features=categorical, lp_norm=args.lp_norm, pool_size=args.pool_size,
                             calibration=None if args.calibration == "none" else args.calibration,
                             calibration_fraction=args.calibration_fraction, sample_costs=sample_costs)
        check_constraints(args, features.shape[1])
    except CommandError:
        raise
    except ValueError as error:
        raise as_options(error) from None
    baseline = None
    if encoding is None:
        targets = labels.astype(np.float64)
    else:
        indices = encoding.encode(labels, args.data)
        targets = encoding.targets(recipe.target_kind, indices)
        if args.boost_from_average and args.trainer == "boosting":
            baseline = recipe.prior_baseline(np.bincount(indices, minlength=encoding.number_of_classes))
    # progress shows the loss the trainer minimises (BAdaCost and SAMME: the CMEL of their cost matrix)
    with Progress(args.rounds, recipe.loss, targets, quiet=args.quiet) as progress:
        machine = recipe.train(features, targets, args.rounds, callback=progress, baseline=baseline)
    machine.metadata.update(metadata)
    machine.metadata.update(REGRESSION_METADATA if encoding is None else encoding.to_metadata())
    return machine
