"""The option tables of ``bob-boost train`` that the in-memory and the distributed paths share: which options
each configuration reads, with their defaults, and whether a run's labels are regression targets."""
from __future__ import annotations

import argparse

import numpy as np

from ..boosting.sampling import Sampling, sampling_from
from ..recipes import BINARY_COST_TRAINERS, is_regression_loss, make_loss
from ..weak_trainers.tree_categories import check_categorical_features
from ..weak_trainers.tree_constraints import group_matrix, monotone_array
from ._common import CommandError, as_options

#: Options of in-memory training only, with their defaults (the parser's): any other value is an error
#: with --scheduler, rather than silently ignored.
IN_MEMORY_ONLY = {"threads": None, "tree_quantized_gradients": None}

#: Options that only -w lut reads, only --trainer adaboostdb, only -w tree, only --trainer badacost and only
#: the multi-class trainers (badacost, samme, adaboost-m1), with their defaults: with --scheduler another value
#: is an error for the other configurations (in memory they are ignored there).
LUT_ONLY = {"lut_entries": None, "selection_style": "independent"}
ADABOOSTDB_ONLY = {"selection": "alpha"}
TREE_ONLY = {"tree_depth": None}
#: Options of the generic trainer's gradient trees only (-w tree with --trainer boosting).
GRADIENT_TREE_ONLY = {"tree_leaves": 31, "tree_outputs": "per_output", "tree_growth": "leafwise",
                      "monotonic_cst": None, "interaction_cst": None}
#: Options of the generic trainer's stumps and gradient trees (--trainer boosting, -w stump or tree).
SPLIT_ONLY = {"categorical": None}
BADACOST_ONLY = {"cost_matrix": None}
MULTICLASS_ONLY = {"shrinkage": None, "feature_fraction": 1.0, "min_weight_fraction_leaf": 0.0}
#: Options of the generic trainer's classifiers only (--trainer boosting with a classification loss).
BOOSTING_CLASSIFIER_ONLY = {"boost_from_average": False}


#: The binary costs, read by adaboostdb, cost-sensitive-adaboost, the cost-reweighting trainers and the double_base
#: loss only (the multi-class trainers take a cost matrix instead).
BINARY_COSTS = {"cost_positive": None, "cost_negative": None}

#: The default --max-bins: the stump search's bins. The multi-class trainers do not read it (their trees
#: quantise every feature's range), so with --scheduler only this value goes with them.
DEFAULT_MAX_BINS = 256

#: The largest --max-bins of distributed training (its codes are one byte per value).
CLUSTER_MAX_BINS = 256


def is_regression(args: argparse.Namespace, cost_matrix: np.ndarray | None) -> bool:
    """Whether the generic trainer's ``--loss`` fits real targets (the other trainers classify)."""
    if args.trainer != "boosting" or args.loss is None:
        return False
    try:
        return is_regression_loss(make_loss(args.loss, cost_matrix, args.cost_positive, args.cost_negative))
    except ValueError as error:
        raise as_options(error) from None


def check_constraints(args: argparse.Namespace, n_features: int) -> None:
    """The gradient trees' ``--monotonic-cst``, ``--interaction-cst`` and ``--categorical`` against the data's
    ``n_features`` columns (a ValueError naming the parameter, before any training)."""
    monotone_array(args.monotonic_cst, n_features)
    group_matrix(args.interaction_cst, n_features)
    check_categorical_features(args.categorical, n_features)


def sampling_of(args: argparse.Namespace) -> Sampling | None:
    """The :class:`~bob_boost.Sampling` of ``--subsample``, ``--subsample-freq``, ``--sampling``, ``--top-rate``,
    ``--other-rate``, ``--colsample-bytree`` and ``--colsample-bynode``, seeded by ``--seed``; None when they
    sample nothing (errors name the library's parameters, which :func:`~bob_boost.cli._common.as_options`
    turns into the options)."""
    return sampling_from(args, lambda: args.seed)


def file_categorical(args: argparse.Namespace, categories: dict[int, list]) -> list[int] | None:
    """``--categorical`` with a Parquet or Arrow file's category and text columns (``categories``: their
    positions), which the reader coded: the columns the weak learners split by sets (a look-up table reads the
    codes as its entries).

    Raises
    ------
    CommandError
        For a trainer and weak learner that do not split categories.
    """
    if args.trainer in BINARY_COST_TRAINERS or (args.trainer != "boosting" and args.weak_learner == "stump"):
        raise CommandError(f"{args.data}: columns {sorted(categories)} hold categories, which --trainer "
                           f"{args.trainer} does not split with -w {args.weak_learner}; use -w tree (trees split "
                           f"sets of categories), --trainer boosting or -w lut (a value per category)")
    if args.weak_learner == "lut":
        return args.categorical
    return sorted(set(args.categorical or ()) | set(categories))
