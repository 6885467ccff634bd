"""Gradient trees: regression trees on the loss gradient with Newton leaves, grown on the engine's codes."""
from __future__ import annotations

import numbers

import numpy as np

from .._validation import as_feature_matrix, as_score_matrix, check_positive_int, check_scalar
from ..binning import BinnedFeatures, check_missing
from ..boosting.protocol import Proposal, RoundState
from ..engine import tree_kernels
from ..engine.edges import check_max_bins
from ..engine.threads import balanced_ranges, check_threads, run_blocks
from ..exceptions import InvalidValueError
from ..weak.tree import TreeMachine

#: Relative difference under which two split gains count as equal (the first feature and bin win).
TIE_TOLERANCE = 1e-12

MULTI_OUTPUT_MODES = ("shared", "per_output")


class TreeTrainer:
    """Grow a regression tree on the loss gradient, with Newton leaves ``-G / (H + lambda)``.

    Each round the tree is grown level by level on the histogram engine's bin
    codes (:class:`~bob_boost.binning.BinnedFeatures`), every split chosen by
    the Newton gain ``G_L^2/(H_L+l) + G_R^2/(H_R+l) - G^2/(H+l)`` summed over
    the outputs, from per-node gradient and hessian histograms; a node's
    larger child gets its histogram by subtraction (parent minus the smaller
    child). Leaves hold ``-G/(H + l2_regularization)`` per output, and the
    tree is proposed with weight 1 (the generic trainer's ``learning_rate``
    then shrinks it, as in scikit-learn).

    A loss without :meth:`~bob_boost.losses.base.LossFunction.loss_hessian`
    (the tangential and Jesorsky losses) gets gradient-only leaves: every
    sample counts with hessian 1, so a leaf holds the negative mean gradient
    ``-G / (n + l2_regularization)`` and splits maximise the reduction of
    squared error; the tree is then proposed without a weight and the
    trainer's step rule line-searches its weight (L-BFGS).

    Parameters
    ----------
    max_depth : int
        Depth of the trees (>= 1).
    max_leaves : int, optional
        At most this many leaves (>= 2): each level splits its nodes of
        largest gain first.
    min_samples_leaf : int
        Fewest training samples in a leaf.
    min_hessian_leaf : float
        Smallest hessian sum of a leaf (every output); keeps Newton leaves of
        nearly pure nodes finite.
    l2_regularization : float
        ``lambda`` >= 0 of the leaves and gains.
    max_bins : int or None
        Bins per feature (see :class:`~bob_boost.StumpTrainer`); None: every distinct value (at most 65536).
    n_threads : int or None
        Threads for binning and histograms (None: every core); the tree does not depend on it.
    multi_output : {"shared", "per_output"}
        Several outputs: one tree with vector leaves for all of them, or one tree per output (as LightGBM's
        multiclass), held in one :class:`~bob_boost.weak.TreeMachine`.
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

    Attributes
    ----------
    histogram_subtraction : bool
        True (the default): a larger child's histogram is its parent's minus its sibling's; False builds
        every node's histogram from its samples (the same tree, at about twice the histogram work).
    """

    #: The generic trainer fills ``state.hessian`` for weak trainers that set this.
    uses_hessian = True

    def __init__(self, max_depth: int = 3, max_leaves: int | None = None, min_samples_leaf: int = 20,
                 min_hessian_leaf: float = 1e-3, l2_regularization: float = 0.0, max_bins: int | None = 256,
                 n_threads: int | None = None, multi_output: str = "shared",
                 newton_leaves: bool | None = None, missing: str | None = None) -> None:
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
        self._check()
        self.histogram_subtraction = True

    def _check(self) -> None:
        check_positive_int(self.max_depth, "max_depth")
        if self.max_leaves is not None:
            check_positive_int(self.max_leaves, "max_leaves", 2)
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

    @property
    def accepts_missing(self) -> bool:
        """Whether NaN in the features is a missing value (``missing="bin"``) rather than an error."""
        return check_missing(self.missing) is not None

    def check_outputs(self, number_of_outputs: int) -> None:
        """Any number of outputs works (checked once per run by the loop)."""

    def prepare(self, features) -> BinnedFeatures:
        """Validate the parameters and bin ``features`` once per training run."""
        self._check()
        if isinstance(features, BinnedFeatures):
            if features.coded is None or features.split_thresholds is None:
                raise InvalidValueError("features: not binned for trees (use TreeTrainer.prepare)")
            if features.missing != self.accepts_missing:
                raise InvalidValueError(f"features: binned with missing={'bin' if features.missing else None!r}, "
                                        f"the trainer has missing={self.missing!r}")
            return features
        return BinnedFeatures.from_values(as_feature_matrix(features, allow_nan=self.accepts_missing),
                                          max_bins=self.max_bins, n_threads=check_threads(self.n_threads),
                                          missing=self.accepts_missing)

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
        return self._grow(binned, gradient, hessian)[0]

    def propose(self, prepared: BinnedFeatures, state: RoundState) -> Proposal:
        """The round's tree, with weight 1 for Newton leaves (the step rule fits it otherwise)."""
        hessian = None if self.newton_leaves is False else state.hessian
        if hessian is None and self.newton_leaves:
            raise InvalidValueError("newton_leaves: the loss defines no loss_hessian; use newton_leaves=None for "
                                    "gradient-only leaves with a line search")
        machine, outputs = self._grow(prepared, state.gradient, hessian)
        weight = None if hessian is None else np.ones(outputs.shape[1])
        return Proposal(machine, weight=weight, outputs=outputs)

    def _grow(self, binned: BinnedFeatures, gradient: np.ndarray,
              hessian: np.ndarray | None) -> tuple[TreeMachine, np.ndarray]:
        """The tree machine and its (#samples, #outputs) outputs on the training samples."""
        if hessian is None:
            hessian = np.ones_like(gradient)
        outputs = gradient.shape[1]
        groups = [np.arange(outputs)] if self.multi_output == "shared" else [np.array([k]) for k in range(outputs)]
        trees, training_outputs = [], np.zeros(gradient.shape)
        for columns in groups:
            values = np.ascontiguousarray(np.hstack([gradient[:, columns], hessian[:, columns]]))
            tree = _Grower(self, binned, values).grow()
            leaf_values = np.zeros((len(tree.features), outputs))
            leaf_values[:, columns] = tree.leaf_values
            trees.append((tree, leaf_values))
            training_outputs[:, columns] += tree.leaf_values[tree.sample_node]
        offset = 0
        arrays = {"features": [], "thresholds": [], "left": [], "right": [], "values": [], "roots": [],
                  "missing_left": []}
        for tree, leaf_values in trees:
            shift = np.where(np.array(tree.left) >= 0, offset, 0)
            arrays["features"] += tree.features
            arrays["thresholds"] += tree.thresholds
            arrays["left"] += (np.array(tree.left) + shift).tolist()
            arrays["right"] += (np.array(tree.right) + shift).tolist()
            arrays["values"].append(leaf_values)
            arrays["roots"].append(offset)
            arrays["missing_left"] += tree.missing_left
            offset += len(tree.features)
        machine = TreeMachine(arrays["features"], arrays["thresholds"], arrays["left"], arrays["right"],
                              np.vstack(arrays["values"]), arrays["roots"],
                              arrays["missing_left"] if binned.missing else None)
        return machine, training_outputs


class _Grower:
    """One tree grown level by level; ``values`` holds K gradient then K hessian columns per sample."""

    def __init__(self, trainer: TreeTrainer, binned: BinnedFeatures, values: np.ndarray) -> None:
        self.trainer = trainer
        self.binned = binned
        self.values = values
        self.outputs = values.shape[1] // 2
        self.feature_of_bin = np.repeat(np.arange(binned.number_of_features), np.diff(binned.offsets))
        self.features: list[int] = [-1]
        self.thresholds: list[float] = [0.0]
        self.left: list[int] = [-1]
        self.right: list[int] = [-1]
        self.missing_left: list[bool] = [False]
        self.sample_node = np.zeros(binned.number_of_samples, dtype=np.int64)
        self.leaf_values = np.zeros((1, self.outputs))

    def grow(self) -> "_Grower":
        trainer, binned = self.trainer, self.binned
        frontier = [0]
        histograms = self._direct([0])
        for depth in range(trainer.max_depth):
            sums, counts, totals, node_counts = histograms
            best = np.empty(len(frontier), dtype=np.int64)
            gain = np.empty(len(frontier))
            nan_left = np.empty(len(frontier), dtype=np.bool_)
            tree_kernels.best_newton_splits(sums, counts, binned.padded_positions(), binned.offsets, totals,
                                            node_counts, float(trainer.l2_regularization),
                                            int(trainer.min_samples_leaf), float(trainer.min_hessian_leaf),
                                            TIE_TOLERANCE, bool(binned.missing), best, gain, nan_left)
            chosen = [i for i in np.argsort(-gain, kind="stable") if best[i] >= 0]
            if trainer.max_leaves is not None:
                leaves = sum(1 for f in self.features if f < 0)
                chosen = chosen[:max(0, trainer.max_leaves - leaves)]
            if not chosen:
                break
            chosen.sort()
            pairs = [self._split(frontier[i], int(best[i]), bool(nan_left[i])) for i in chosen]
            if depth + 1 == trainer.max_depth:
                break
            histograms = self._children_histograms(pairs, [i for i in chosen], histograms)
            frontier = [child for pair in pairs for child in pair]
        self._set_leaves()
        return self

    def _split(self, node: int, bin_index: int, nan_left: bool) -> tuple[int, int]:
        """Split ``node`` after global ``bin_index`` and move its samples to the two new children.

        Samples in the feature's missing-value bin (with ``missing="bin"``) go left if ``nan_left``.
        """
        feature = int(self.feature_of_bin[bin_index])
        local = bin_index - int(self.binned.offsets[feature])
        left, right = len(self.features), len(self.features) + 1
        self.features[node] = feature
        self.thresholds[node] = float(self.binned.split_thresholds[bin_index])
        self.left[node], self.right[node] = left, right
        self.missing_left[node] = nan_left
        self.features += [-1, -1]
        self.thresholds += [0.0, 0.0]
        self.left += [-1, -1]
        self.right += [-1, -1]
        self.missing_left += [False, False]
        # the missing-value bin (with missing="bin") is the feature's last
        missing_code = (int(self.binned.offsets[feature + 1] - self.binned.offsets[feature]) - 1
                        if self.binned.missing else -1)
        tree_kernels.split_samples(self.sample_node, node, self.binned.coded.codes[feature], local, missing_code,
                                   nan_left, left, right)
        return left, right

    def _totals(self, nodes: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(#nodes, 2K) value sums and (#nodes,) sample counts of ``nodes``, added in row order."""
        local = np.full(len(self.features), -1, dtype=np.int64)
        local[nodes] = np.arange(len(nodes))
        totals = np.zeros((len(nodes), self.values.shape[1]))
        counts = np.zeros(len(nodes), dtype=np.int64)
        tree_kernels.node_totals(local[self.sample_node], self.values, totals, counts)
        return totals, counts

    def _direct(self, nodes: list[int]):
        """Histograms of ``nodes`` from one pass of the kernel: (sums, counts, totals, node counts)."""
        coded = self.binned.coded
        totals, node_counts = self._totals(nodes)
        local = np.full(len(self.features), -1, dtype=np.int64)
        local[nodes] = np.arange(len(nodes))
        sample_node = local[self.sample_node]
        n_features = coded.codes.shape[0]
        shape = (len(nodes), n_features, coded.number_of_bins)
        sums = np.zeros(shape + (self.values.shape[1],))
        counts = np.zeros(shape, dtype=np.int64)
        costs = np.where(coded.mode_bins < 0, coded.codes.shape[1], np.diff(coded.row_starts)) + 1
        blocks = [(coded.codes, sample_node, self.values, totals, node_counts, coded.mode_bins, coded.row_starts,
                   coded.rows, a, b, sums, counts) for a, b in balanced_ranges(costs, 4 * coded.n_threads)]
        run_blocks(tree_kernels.node_value_histograms, blocks, coded.n_threads, work=float(costs.sum()))
        flat = (len(nodes), n_features * coded.number_of_bins)
        return sums.reshape(flat + (self.values.shape[1],)), counts.reshape(flat), totals, node_counts

    def _children_histograms(self, pairs: list[tuple[int, int]], parents: list[int], histograms):
        """Histograms of every child: the smaller child of each pair directly, its sibling by subtraction."""
        children = [child for pair in pairs for child in pair]
        if not self.trainer.histogram_subtraction:
            return self._direct(children)
        sizes = np.bincount(self.sample_node, minlength=len(self.features))
        smaller = [min(pair, key=lambda node: (sizes[node], node)) for pair in pairs]
        sums, counts, totals, node_counts = self._direct(smaller)
        parent_sums, parent_counts, parent_totals, parent_node_counts = histograms
        out_sums = np.empty((len(children),) + sums.shape[1:])
        out_counts = np.empty((len(children),) + counts.shape[1:], dtype=np.int64)
        out_totals = np.empty((len(children), totals.shape[1]))
        out_node_counts = np.empty(len(children), dtype=np.int64)
        for j, (pair, parent) in enumerate(zip(pairs, parents)):
            for position, child in enumerate(pair):
                slot = 2 * j + position
                if child == smaller[j]:
                    out_sums[slot], out_counts[slot] = sums[j], counts[j]
                    out_totals[slot], out_node_counts[slot] = totals[j], node_counts[j]
                else:
                    out_sums[slot] = parent_sums[parent] - sums[j]
                    out_counts[slot] = parent_counts[parent] - counts[j]
                    out_totals[slot] = parent_totals[parent] - totals[j]
                    out_node_counts[slot] = parent_node_counts[parent] - node_counts[j]
        return out_sums, out_counts, out_totals, out_node_counts

    def _set_leaves(self) -> None:
        """Newton leaves ``-G / (H + lambda)`` from each leaf's samples (sums in row order)."""
        nodes = len(self.features)
        totals, _ = self._totals(list(range(nodes)))
        gradient, hessian = totals[:, :self.outputs], totals[:, self.outputs:]
        denominator = hessian + float(self.trainer.l2_regularization)
        with np.errstate(divide="ignore", invalid="ignore"):
            leaf_values = np.where(denominator > 0, -gradient / denominator, 0.0)
        leaf_values[np.array(self.features) >= 0] = 0.0
        self.leaf_values = leaf_values
