"""Gradient trees: regression trees on the loss gradient with Newton leaves, grown on the engine's codes."""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import as_feature_matrix, as_score_matrix, check_positive_int, check_scalar
from ..binning import BinnedFeatures, check_missing
from ..boosting.protocol import Proposal, RoundState
from ..engine import grown_trees, quantised, tree_batches, tree_policy
from ..engine.edges import check_max_bins
from ..engine.split_scan import allowed_columns
from ..engine.threads import check_threads, run_blocks
from ..engine.tree_kernels import row_index_type
from ..exceptions import InvalidValueError
from ..losses.base import joined_derivatives
from ..weak.tree import TreeMachine
from ..engine.categorical import CATEGORY_WORDS, category_parameters
from .tree_categories import (CategoryTable, categorical_mask, check_categorical_features, check_category_parameters,
                              feature_categories)
from .tree_constraints import check_monotonic_cst, group_matrix, interaction_groups, monotone_array
from .tree_parts import PART_ROWS, grow_alone  # noqa: F401 (PART_ROWS: importable here, as before)

#: Relative difference under which two scores of a tree's choice count as equal, so that the first wins:
#: split gains here (first feature, then bin), and the cost-sensitive trees' split scores and leaf classes
#: (:mod:`bob_boost.weak_trainers.tree_growing`). Relative to the best score, as scores equal in exact arithmetic
#: differ by the rounding of sums taken in another order.
TIE_TOLERANCE = 1e-12

MULTI_OUTPUT_MODES = ("shared", "per_output")

GROWTHS = ("levelwise", "leafwise")


class TreeTrainer:
    """Grow a regression tree on the loss gradient, with Newton leaves ``-G / (H + lambda)``.

    Each round one compiled call (:func:`bob_boost.engine.tree_kernels.grow_tree`)
    grows the tree, level by level or leaf by leaf (``growth``), on the histogram
    engine's bin codes (:class:`~bob_boost.binning.BinnedFeatures`), every split chosen by
    the Newton gain ``G_L^2/(H_L+l) + G_R^2/(H_R+l) - G^2/(H+l)`` summed over
    the outputs, from per-node gradient and hessian histograms; a node's
    larger child gets its histogram by subtraction (parent minus the smaller
    child). Leaves hold ``-G/(H + l2_regularization)`` per output, and the
    tree is proposed with weight 1 (the generic trainer's ``learning_rate``
    then shrinks it, as in scikit-learn).

    ``n_threads`` threads grow the trees of a round side by side (one per
    output). A round's lone tree of one output, from 8,192 rows (twice :data:`PART_ROWS`)
    on, shares its large nodes' histograms (by features) and partitions (by rows) out to a
    team of the threads (:mod:`~bob_boost.engine.tree_team`), which gives the bits of one
    thread; a lone tree of packed quantised gradients or of several outputs has the
    histograms of its nodes of at least 8,192 rows built in parts on the threads and added
    in order. Either way the tree is the same for any ``n_threads``.

    The defaults are those of LightGBM and scikit-learn's HistGradientBoosting:
    31 leaves grown leaf-wise, at least 20 samples a leaf, and a learning rate of
    0.1 (:attr:`default_learning_rate`, which :class:`~bob_boost.Boosting` takes
    when it is given none). A Newton leaf of a nearly pure node of a rare class
    steps about ``1 / p``; at a learning rate of 1 such steps run away on
    multi-class data, which is why every gradient-boosting library shrinks them.

    A loss without :meth:`~bob_boost.losses.base.LossFunction.loss_hessian`
    (the tangential and Jesorsky losses) gets gradient-only leaves: every
    sample counts with hessian 1, so a leaf holds the negative mean gradient
    ``-G / (n + l2_regularization)`` and splits maximise the reduction of
    squared error; the tree is then proposed without a weight and the
    trainer's step rule line-searches its weight (L-BFGS).

    Parameters
    ----------
    max_depth : int or None
        Depth of the trees (>= 1); None (the default): no limit, with ``growth="leafwise"`` and ``max_leaves``.
    max_leaves : int, optional
        At most this many leaves (>= 2); 31 by default, as LightGBM's ``num_leaves``. None: no limit
        (with a ``max_depth``).
    min_samples_leaf : int
        Fewest training samples in a leaf.
    min_hessian_leaf : float
        Smallest hessian sum of a leaf (every output); keeps Newton leaves of
        nearly pure nodes finite.
    l2_regularization : float
        ``lambda`` >= 0 of the leaves and gains.
    max_delta_step : float or None
        None (the default) or 0 (XGBoost's "no constraint"): no cap. A number > 0 caps every leaf value to
        ``[-max_delta_step, max_delta_step]`` before the learning rate shrinks it (XGBoost's
        ``max_delta_step``), a safeguard for losses whose hessian vanishes on confident samples; splits are
        still chosen by the uncapped gain.
    max_bins : int or None
        Bins per feature (see :class:`~bob_boost.StumpTrainer`); None: every distinct value (at most 65536).
    n_threads : int or None
        Threads for binning and histograms (None: every core); the tree does not depend on it.
    multi_output : {"shared", "per_output"}
        Several outputs: one tree with vector leaves for all of them, or one tree per output (the default,
        as LightGBM's multiclass; more accurate at the same leaf count, e.g. 95.5% against 93.0% held-out on
        the 26 classes of UCI letter in 50 rounds), held in one :class:`~bob_boost.weak.TreeMachine`.
    newton_leaves : bool or None
        None: Newton leaves when the loss has a hessian, else the gradient-only fallback; True: require
        the hessian (a loss without one is an error); False: always the fallback.
    missing : {None, "bin"}
        None: NaN in the features is rejected. ``"bin"``: NaN is a missing value with a bin of its own in
        every feature (the value bins then number at most ``max_bins - 1``), and every split learns where
        NaN goes, as LightGBM and XGBoost do: a node with NaN samples scores each threshold with them on
        the left and on the right and keeps the better (left on a tie); a node without sends NaN to the
        child of larger hessian sum (left on a tie). The directions are saved with the tree
        (:attr:`~bob_boost.weak.TreeMachine.missing_left`). A split always lies between two value bins,
        so a feature that is NaN for every sample of a node never splits it.
    growth : {"levelwise", "leafwise"}
        ``"levelwise"`` grows the tree level by level (with ``max_leaves``, each level splits its nodes of
        largest gain first), as XGBoost's default; ``"leafwise"`` splits the leaf of largest gain next
        (the lowest node on a tie) until ``max_leaves``, as LightGBM and scikit-learn's
        HistGradientBoosting do.
    quantized_gradients : int or None
        None (the default): histograms of the float gradients and hessians. An integer ``L`` >= 2 (as
        LightGBM's ``use_quantized_grad`` with ``num_grad_quant_bins=L``): each tree's gradients and
        hessians are rounded stochastically to ``L`` integer levels and every histogram bin adds one packed
        integer per sample (:mod:`bob_boost.engine.quantised`), a faster histogram whose splits follow the
        rounded sums (``min_hessian_leaf`` too); the leaves still take the real gradients' Newton values.
        One output a tree only (``multi_output="per_output"`` or one output); non-negative hessians;
        ``L`` up to 65,536. A row's fields share one int64 while the sums of every sample fit (up to
        1,048,575 samples at ``L = 4``, 262,143 at ``L = 32``), two or three beyond: the same sums, so the
        same trees, at any number of samples.
    monotonic_cst : sequence of int or None
        One of -1, 0, +1 per feature (scikit-learn's and LightGBM's name): the tree's value must not
        decrease (+1) or increase (-1) with the feature, 0 leaves it free; None (the default): no
        constraint. LightGBM's "basic" method: a split on a constrained feature whose children's Newton
        values go against it is refused, every node's value is clipped to bounds that a constrained split
        sets at the mean of its children's values, and the gains are those of the clipped values, so every
        tree, and a sum of them with positive weights, is monotone. One output a tree, Newton leaves, and a
        loss that keeps them (not the absolute or quantile loss, which renew leaves). NaN (``missing="bin"``)
        goes where its split learnt, outside the order.
    interaction_cst : sequence of sequences of int, "no_interactions" or None
        Interaction constraints (scikit-learn's name): groups of feature indices, each feature in one group at
        most; the features in no group form one more group together, as in scikit-learn. A branch of a tree
        splits on features of one group only: a node may use the features of the groups that hold every
        feature its ancestors split on. ``"no_interactions"``: every feature its own group (trees of one
        feature each). At most 63 groups. None (the default): no constraint.
    categorical_features : sequence of int, boolean mask or None
        Features whose values are categories (integers in ``[0, 2**31)``, NaN missing with
        ``missing="bin"``), each with at most ``max_bins`` (and 256) categories, the missing values' bin
        counting as one. A split of such a feature sends a set of its categories left and the rest right, a
        category unseen in training too (see :mod:`bob_boost.engine.categorical`, LightGBM's method): each
        category against the rest when a node holds at most ``max_cat_to_onehot`` of them, else the
        categories of at least ``min_data_per_group`` samples ordered by ``G / (H + cat_smooth)``, whose
        prefixes of at most ``max_cat_threshold`` categories, from either end, are scored with
        ``l2_regularization + cat_l2``. NaN goes left when the missing values' bin is in the set. None (the
        default): every feature is numeric.
    cat_smooth, cat_l2, max_cat_threshold, max_cat_to_onehot, min_data_per_group : number
        The categorical splits' parameters, with LightGBM's names and defaults (10, 10, 32, 4, 100).

    Attributes
    ----------
    histogram_subtraction : bool
        True (the default): a larger child's histogram is its parent's minus its sibling's; False builds
        every node's histogram from its samples (the same tree, at about twice the histogram work).
    """

    #: The generic trainer fills ``state.hessian`` for weak trainers that set this.
    uses_hessian = True

    #: Reads ``state.feature_subset``, a round's column sample (:class:`~bob_boost.Sampling`).
    samples_columns = True

    #: Reads ``state.node_columns``, the sampling of every node's columns.
    samples_node_columns = True

    #: The learning rate :class:`~bob_boost.Boosting` uses when it is given none (Newton leaves are
    #: full steps of their own; 0.1 is every gradient-boosting library's default).
    default_learning_rate = 0.1

    def __init__(self, max_depth: int | None = None, max_leaves: int | None = 31, min_samples_leaf: int = 20,
                 min_hessian_leaf: float = 1e-3, l2_regularization: float = 0.0, max_bins: int | None = 256,
                 n_threads: int | None = None, multi_output: str = "per_output",
                 newton_leaves: bool | None = None, missing: str | None = None, growth: str = "leafwise",
                 quantized_gradients: int | None = None, max_delta_step: float | None = None,
                 monotonic_cst=None, interaction_cst=None, categorical_features=None, cat_smooth: float = 10.0,
                 cat_l2: float = 10.0, max_cat_threshold: int = 32, max_cat_to_onehot: int = 4,
                 min_data_per_group: int = 100) -> None:
        self.max_depth = max_depth
        self.max_leaves = max_leaves
        self.min_samples_leaf = min_samples_leaf
        self.min_hessian_leaf = min_hessian_leaf
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.n_threads = n_threads
        self.multi_output = multi_output
        self.newton_leaves = newton_leaves
        self.missing = missing
        self.growth = growth
        self.quantized_gradients = quantized_gradients
        self.max_delta_step = max_delta_step
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.categorical_features = categorical_features
        self.cat_smooth = cat_smooth
        self.cat_l2 = cat_l2
        self.max_cat_threshold = max_cat_threshold
        self.max_cat_to_onehot = max_cat_to_onehot
        self.min_data_per_group = min_data_per_group
        self._check()
        self.histogram_subtraction = True

    def _check(self) -> None:
        if self.growth not in GROWTHS:
            raise InvalidValueError(f"growth: must be one of {GROWTHS}, got {self.growth!r}")
        if self.max_leaves is not None:
            check_positive_int(self.max_leaves, "max_leaves", 2)
        if self.max_depth is not None or self.growth == "levelwise" or self.max_leaves is None:
            if self.max_depth is None:
                raise InvalidValueError("max_depth: None (no depth limit) needs growth='leafwise' and max_leaves")
            check_positive_int(self.max_depth, "max_depth")
        check_positive_int(self.min_samples_leaf, "min_samples_leaf")
        check_scalar(self.min_hessian_leaf, "min_hessian_leaf", numbers.Real, min_val=0)
        check_scalar(self.l2_regularization, "l2_regularization", numbers.Real, min_val=0)
        check_max_bins(self.max_bins)
        check_threads(self.n_threads)
        check_missing(self.missing)
        if self.newton_leaves not in (None, True, False):
            raise InvalidValueError(f"newton_leaves: must be None, True or False, got {self.newton_leaves!r}")
        if self.multi_output not in MULTI_OUTPUT_MODES:
            raise InvalidValueError(f"multi_output: must be one of {MULTI_OUTPUT_MODES}, got {self.multi_output!r}")
        if self.quantized_gradients is not None:
            check_scalar(self.quantized_gradients, "quantized_gradients", numbers.Integral, min_val=2,
                         max_val=quantised.MAX_LEVELS)
        if self.max_delta_step is not None:
            check_scalar(self.max_delta_step, "max_delta_step", numbers.Real, min_val=0)
        if self.monotonic_cst is not None:
            check_monotonic_cst(self.monotonic_cst)
        if self.interaction_cst is not None:
            interaction_groups(self.interaction_cst, None)
        check_categorical_features(self.categorical_features)
        check_category_parameters(self.cat_smooth, self.cat_l2, self.max_cat_threshold, self.max_cat_to_onehot,
                                  self.min_data_per_group)

    def _categorical(self, n_features: int) -> tuple[np.ndarray, np.ndarray]:
        """The kernels' (#features,) categorical mask (empty without any) and categorical-split parameters."""
        indices = self._categorical_indices(n_features)
        return categorical_mask(indices, n_features), self._category_parameters()

    def _categorical_indices(self, n_features: int) -> np.ndarray | None:
        """The categorical features' sorted indices (None: none), checked against ``n_features`` and the
        monotone constraints."""
        indices = check_categorical_features(self.categorical_features, n_features)
        monotone = self._monotone(n_features)
        if indices is not None and monotone.size and np.any(monotone[indices] != 0):
            raise InvalidValueError("monotonic_cst: a categorical feature has no order to be monotone in; give it 0")
        return indices

    def _category_parameters(self) -> np.ndarray:
        return category_parameters(float(self.cat_smooth), float(self.cat_l2), int(self.max_cat_threshold),
                                   int(self.max_cat_to_onehot), int(self.min_data_per_group))

    def _groups(self, n_features: int) -> np.ndarray:
        """The kernels' (#groups, #features) interaction groups; no rows without constraints."""
        return group_matrix(self.interaction_cst, n_features)

    @property
    def constrained(self) -> bool:
        """Whether some feature has a monotone constraint."""
        return self.monotonic_cst is not None and bool(np.any(check_monotonic_cst(self.monotonic_cst)))

    def _monotone(self, n_features: int) -> np.ndarray:
        """The kernels' (#features,) int64 constraints, or an empty array without any."""
        return monotone_array(self.monotonic_cst, n_features)

    def check_loss(self, loss) -> None:
        """Refuse a loss whose trees the monotone constraints cannot keep monotone (checked once per run)."""
        if self.constrained and loss.renews_leaves:
            raise InvalidValueError(f"monotonic_cst: the {loss.name} loss renews every leaf from its residuals' "
                                    "quantiles, which the constraints' bounds do not hold")

    #: Sparse (CSR/CSC) features are binned without a dense copy (:mod:`bob_boost.sparse`).
    accepts_sparse = True

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN in the features is a missing value (``missing="bin"``) rather than an error."""
        return check_missing(self.missing) is not None

    def check_outputs(self, number_of_outputs: int) -> None:
        """Any number of outputs works, but quantised gradients need one a tree and monotone constraints one
        output (checked once per run)."""
        self._check_quantised_outputs(number_of_outputs)
        self._check_monotone_outputs(number_of_outputs)

    def _check_monotone_outputs(self, number_of_outputs: int) -> None:
        if self.constrained and number_of_outputs > 1:
            raise InvalidValueError(f"monotonic_cst: constrains trees of one output, got {number_of_outputs} "
                                    "outputs (several classes or labels)")

    def _check_quantised_outputs(self, number_of_outputs: int) -> None:
        if self.quantized_gradients is not None and self.multi_output == "shared" and number_of_outputs > 1:
            raise InvalidValueError(f"quantized_gradients: needs one output a tree (multi_output='per_output'), "
                                    f"got a shared tree of {number_of_outputs} outputs")

    def prepare(self, features) -> BinnedFeatures:
        """Validate the parameters and bin ``features`` once per training run."""
        self._check()
        if isinstance(features, BinnedFeatures):
            if features.coded is None or features.split_thresholds is None:
                raise InvalidValueError("features: not binned for trees (use TreeTrainer.prepare)")
            if features.missing != self.accepts_missing:
                raise InvalidValueError(f"features: binned with missing={'bin' if features.missing else None!r}, "
                                        f"the trainer has missing={self.missing!r}")
            indices = self._categorical_indices(features.number_of_features)
            if set(features.categories) != set(() if indices is None else indices.tolist()):
                raise InvalidValueError("features: binned with other categorical features than the trainer's "
                                        "categorical_features (use TreeTrainer.prepare)")
            return features
        array = as_feature_matrix(features, allow_nan=self.accepts_missing, accept_sparse=True)
        indices = self._categorical_indices(array.shape[1])
        categories = feature_categories(array, indices, self.max_bins, self.accepts_missing)
        binned = BinnedFeatures.from_values(array, max_bins=self.max_bins, n_threads=check_threads(self.n_threads),
                                            missing=self.accepts_missing)
        binned.categories = categories
        binned.category_table = CategoryTable(categories, array.shape[1])
        return binned

    def train(self, features, loss_gradient, loss_hessian=None) -> TreeMachine:
        """The tree for ``loss_gradient`` (and ``loss_hessian``; None: gradient-only leaves).

        Parameters
        ----------
        features : array_like or BinnedFeatures
            (#samples, #features) matrix, or the result of :meth:`prepare`.
        loss_gradient, loss_hessian : array_like
            (#samples, #outputs) first and second derivatives of the loss at the current scores.
        """
        binned = self.prepare(features)
        gradient = as_score_matrix(loss_gradient, "loss_gradient", binned.number_of_samples)
        hessian = None
        if loss_hessian is not None:
            hessian = as_score_matrix(loss_hessian, "loss_hessian", binned.number_of_samples)
            if hessian.shape != gradient.shape or np.any(hessian < 0):
                raise InvalidValueError("loss_hessian: must be non-negative and shaped like loss_gradient")
        return self._grow(binned, gradient, hessian, 0)[0]

    def joint_derivatives(self, outputs: int) -> bool:
        """Whether a round of ``outputs`` outputs reads a sample's gradient and hessian together, as the halves
        of one (#samples, 2K) array (:meth:`~bob_boost.losses.base.LossFunction.derivatives_into`): a lone tree
        of float gradients does; the trees of several outputs read each output's columns apart."""
        return self.quantized_gradients is None and (outputs == 1 or self.multi_output == "shared")

    def propose(self, prepared: BinnedFeatures, state: RoundState) -> Proposal:
        """The round's tree, with weight 1 for Newton leaves (the step rule fits it otherwise)."""
        hessian = None if self.newton_leaves is False else state.hessian
        if hessian is None and self.newton_leaves:
            raise InvalidValueError("newton_leaves: the loss defines no loss_hessian; use newton_leaves=None for "
                                    "gradient-only leaves with a line search")
        if hessian is None and self.constrained:  # a line-searched weight could turn the trees' order around
            raise InvalidValueError("monotonic_cst: needs Newton leaves, from a loss with a hessian")
        reached: list[np.ndarray] = []
        machine, outputs = self._grow(prepared, state.gradient, hessian, state.rounds_before + state.round_index,
                                      state.feature_subset, state.rows, state.node_columns, reached)
        weight = None if hessian is None else np.ones(outputs.shape[1])
        return Proposal(machine, weight=weight, outputs=outputs, leaves=reached[0] if reached else None)

    def _grow(self, binned: BinnedFeatures, gradient: np.ndarray, hessian: np.ndarray | None,
              round_index: int, columns: np.ndarray | None = None, rows: np.ndarray | None = None,
              node_columns: tuple[int, float] | None = None,
              reached: list | None = None) -> tuple[TreeMachine, np.ndarray]:
        """The tree machine and its (#samples, #outputs) outputs on the training samples.

        The trees of several outputs (``multi_output="per_output"``) grow in
        contiguous batches, one batch per thread, each in its own histogram slots.
        ``round_index``, the round's place in the whole machine, keys the rounding of quantised gradients;
        ``columns`` (None: all) are the features the trees may split on; ``rows`` (ascending) the samples they
        grow on (their counts are what ``min_samples_leaf`` limits); ``node_columns`` ``(key, fraction)`` the
        round's sampling of each node's columns among those (:func:`~bob_boost.engine.split_scan.node_columns`).
        A lone tree grown on every row appends the (#samples, 1) leaves its rows reach to ``reached`` (when given).
        """
        self._check_monotone_outputs(gradient.shape[1])
        if hessian is None:
            hessian = np.ones_like(gradient)
        samples, outputs = gradient.shape
        trees, leaf_width = (1, outputs) if self.multi_output == "shared" else (outputs, 1)
        self._check_quantised_outputs(outputs)
        if self.quantized_gradients is not None and np.any(hessian < 0):
            raise InvalidValueError("loss_hessian: quantized_gradients needs non-negative hessians")
        width = 2 * leaf_width
        # a lone float tree reads the joint derivatives only; the others read C-ordered gradients and hessians
        joint = joined_derivatives(gradient, hessian) if trees == 1 and self.quantized_gradients is None else None
        if joint is None:
            gradient = np.ascontiguousarray(gradient, dtype=np.float64)
            hessian = np.ascontiguousarray(hessian, dtype=np.float64)
        leaves, slots = self._room(samples)
        nodes = 2 * leaves - 1
        coded = binned.coded
        node_feature = np.full((trees, nodes), -1, dtype=np.int64)
        node_bin = np.zeros((trees, nodes), dtype=np.int64)
        node_nan_left = np.zeros((trees, nodes), dtype=np.bool_)
        node_left = np.full((trees, nodes), -1, dtype=np.int64)
        node_right = np.full((trees, nodes), -1, dtype=np.int64)
        node_sets = np.zeros((trees, nodes, CATEGORY_WORDS), dtype=np.uint64)
        leaf_values = np.zeros((trees, nodes, leaf_width))
        node_records = np.zeros((trees, nodes, 2))
        n_nodes = np.zeros(trees, dtype=np.int64)
        training_outputs = np.empty((samples, outputs))
        batches = min(coded.n_threads, trees)
        bounds = [trees * b // batches for b in range(batches + 1)]
        histogram_bins = int(binned.offsets[-1])  # every feature's bins, one after the other
        # a column sample's histograms read its columns only (packed ones keep their pairs of every column)
        offsets = binned.offsets
        layout = (coded.column_layout(columns, offsets) if columns is not None and self.quantized_gradients is None
                  else coded.row_layout(offsets))
        # the arguments every tree's grower takes after the codes (each batch gets its own coded.splitting())
        common = (coded.mode_bins, layout, coded.pair_layout(offsets, paired=self.quantized_gradients is not None),
                  offsets, coded.feature_of_bin(offsets),
                  (allowed_columns(binned.number_of_features, columns),
                   *((np.uint64(0), 1.0) if node_columns is None else (np.uint64(node_columns[0]), node_columns[1])),
                   0, self._monotone(binned.number_of_features), self._groups(binned.number_of_features),
                   # prepare checked the categorical features: they are the binned ones
                   (binned.category_table.categorical[:-1] if binned.categories else np.zeros(0, dtype=np.bool_)),
                   self._category_parameters()),
                  # row indices of 4 bytes while they fit: the growing's row order and its buffer are the size of
                  # the rows
                  np.arange(samples, dtype=row_index_type(samples)) if rows is None
                  else rows.astype(row_index_type(samples)), gradient, hessian)
        limits = (self.max_depth or 0, self.max_leaves or 0, int(self.min_samples_leaf), float(self.min_hessian_leaf),
                  float(self.l2_regularization), TIE_TOLERANCE, bool(binned.missing), bool(self.histogram_subtraction),
                  self.growth == "leafwise")
        nodes_out = (node_feature, node_bin, node_nan_left, node_left, node_right, node_sets, leaf_values,
                     node_records, n_nodes, training_outputs)
        work = float(coded.n_features) * coded.n_samples * (self.max_depth or 1) * trees
        if self.quantized_gradients is not None:
            levels = int(self.quantized_gradients)
            columns, *packing = quantised.packing(samples, levels)
            packed_slots = [coded.borrow((slots, histogram_bins, columns), np.int64) for _ in range(batches)]
            if trees == 1:
                packed, real, scales = (np.empty((samples, columns), dtype=np.int64), np.empty((1, samples, 2)),
                                        np.empty((1, 2)))
                quantised.quantise(gradient, hessian, 0, 1, levels, int(round_index), *packing, packed, real, scales)
                grow_alone(coded, common, limits, (packed_slots[0], np.empty((slots, 0), dtype=np.int32)),
                           nodes_out, packed, (real[0], np.array(packing), scales[0]))
            else:
                blocks = [(bounds[b], bounds[b + 1], coded.splitting()) + common +
                          (levels, int(round_index), np.array(packing)) +
                          limits + (packed_slots[b],) + nodes_out
                          for b in range(batches)]
                run_blocks(tree_batches.grow_quantised_trees, blocks, coded.n_threads, work=work)
            coded.give_back(*packed_slots)
        else:
            slots_of = [(coded.borrow((slots, histogram_bins, width), np.float64),
                         coded.borrow((slots, histogram_bins), np.int32 if samples < 2 ** 31 else np.int64))
                        for _ in range(batches)]
            if trees == 1:
                sample_node = grow_alone(coded, common, limits, slots_of[0], nodes_out,
                                         np.hstack([gradient, hessian]) if joint is None else joint,
                                         own_rows=rows is None)
                if reached is not None and (rows is None or rows.size == samples):
                    reached.append(sample_node[:, np.newaxis])
            else:
                blocks = [(bounds[b], bounds[b + 1], coded.splitting()) + common + (leaf_width,) + limits +
                          slots_of[b] + nodes_out for b in range(batches)]
                run_blocks(tree_batches.grow_trees, blocks, coded.n_threads, work=work)
            for borrowed in slots_of:
                coded.give_back(*borrowed)
        self._cap(leaf_values, training_outputs)
        if rows is not None and rows.size < samples:  # the rows the trees did not grow on, routed by their codes
            dropped = np.ones(samples, dtype=bool)
            dropped[rows] = False
            tree_batches.routed_outputs(coded.stored(), coded.mode_bins, binned.offsets, bool(binned.missing),
                                        common[5][6],
                                        node_feature, node_bin, node_nan_left, node_left, node_right, node_sets,
                                        leaf_values, leaf_width, np.flatnonzero(dropped), training_outputs)
        return self._machine(binned, n_nodes, node_feature, node_bin, node_nan_left, node_left, node_right,
                             node_sets, leaf_values, node_records, outputs), training_outputs

    def _cap(self, *values: np.ndarray) -> None:
        """Clip leaf values (and the training outputs, which are leaf values) to ``max_delta_step``, in place."""
        if self.max_delta_step:
            for array in values:
                np.clip(array, -self.max_delta_step, self.max_delta_step, out=array)

    def _room(self, samples: int) -> tuple[int, int]:
        """The most leaves a tree may get, and the most histograms its growing keeps at once."""
        leaves = tree_policy.most_leaves(samples, self.min_samples_leaf, self.max_depth, self.max_leaves)
        # levelwise, the histograms kept are those of one level below the last
        by_depth = 1 << min(self.max_depth, 62) if self.max_depth is not None else samples
        slots = leaves if self.growth == "leafwise" else min(leaves, max(1, by_depth // 2))
        return leaves, max(1, slots)

    @staticmethod
    def _machine(binned: BinnedFeatures, n_nodes, node_feature, node_bin, node_nan_left, node_left, node_right,
                 node_sets, leaf_values, node_records, outputs: int) -> TreeMachine:
        """One :class:`TreeMachine` of a round's trees (tree ``t`` predicts output ``t``, or all of them), with
        their nodes' cover and gains (``node_records``)."""
        trees, _, leaf_width = leaf_values.shape
        columns = (np.arange(outputs)[np.newaxis] if leaf_width == outputs  # one tree for every output
                   else np.arange(trees)[:, np.newaxis])
        return grown_machine(binned.split_thresholds, binned.category_table if binned.categories else None,
                             binned.missing, n_nodes, node_feature, node_bin, node_nan_left, node_left, node_right,
                             node_sets, leaf_values, node_records, columns, outputs)


def grown_machine(split_thresholds: np.ndarray, category_table: CategoryTable | None, missing: bool, n_nodes,
                  node_feature, node_bin, node_nan_left, node_left, node_right, node_sets, leaf_values, node_records,
                  columns: np.ndarray, outputs: int) -> TreeMachine:
    """The :class:`TreeMachine` of grown gradient trees (in memory or on partitions): row ``t`` of the
    ``(#trees, #capacity)`` node arrays is tree ``t``'s first ``n_nodes[t]`` nodes, its leaf value ``w`` the
    machine's output ``columns[t, w]`` (:func:`~bob_boost.engine.grown_trees.machine_arrays`); a categorical
    split's bins become its categories through ``category_table`` (None: no categorical feature)."""
    (features, thresholds, left, right, values, roots, missing_left, cover, gains, bin_sets,
     depth) = grown_trees.machine_arrays(n_nodes, node_feature, node_bin, node_nan_left, node_left, node_right,
                                         node_sets, leaf_values, node_records, columns, outputs, split_thresholds)
    categories = None if category_table is None else category_table.sets(features, bin_sets)
    if categories is not None:
        thresholds[np.diff(categories[0]) > 0] = 0.0  # unused by a categorical split
    return TreeMachine.trusted(features, thresholds, left, right, values, roots, missing_left if missing else None,
                               categories, cover, gains, depth=depth, copy=False)
