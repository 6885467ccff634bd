"""Gradient trees (TreeTrainer, TreeMachine), loss hessians and the softmax loss."""
from __future__ import annotations

import h5py
import numpy as np
import pytest

from bob_boost import (BoostedMachine, Boosting, CMELoss, DoubleBaseLoss, ExponentialLoss, LogitLoss, SoftmaxLoss,
                       SquaredLoss, TangentialLoss, TreeMachine, TreeTrainer)
from bob_boost.boosting.protocol import RoundState
from bob_boost.exceptions import ModelFormatError


def _classes(n: int = 1500, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 5))
    y = (x[:, 0] > 0).astype(int) + (x[:, 1] + 0.3 * rng.normal(size=n) > 0.5)
    return x, y


# -- hessians -----------------------------------------------------------------------------------

@pytest.mark.parametrize("loss, targets", [
    (ExponentialLoss(), np.array([[1.0], [-1.0], [1.0]])),
    (LogitLoss(), np.array([[1.0], [-1.0], [1.0]])),
    (SquaredLoss(), np.array([[0.3], [-2.0], [5.0]])),
    (DoubleBaseLoss(2.0, 0.5), np.array([[1.0], [-1.0], [1.0]])),
    (CMELoss(1 - np.eye(3)), CMELoss(1 - np.eye(3)).check_targets(np.array([0, 2, 1]))),
    (SoftmaxLoss(3), SoftmaxLoss(3).check_targets(np.array([0, 2, 1]))),
])
def test_loss_hessian_matches_finite_differences(loss, targets):
    rng = np.random.default_rng(1)
    scores = rng.normal(size=targets.shape)
    step = 1e-5
    for k in range(targets.shape[1]):
        shifted = [scores.copy(), scores.copy()]
        shifted[0][:, k] += step
        shifted[1][:, k] -= step
        numeric = (loss.loss_gradient(targets, shifted[0])[:, k] - loss.loss_gradient(targets, shifted[1])[:, k]) / (
            2 * step)
        assert np.allclose(loss.loss_hessian(targets, scores)[:, k], numeric, rtol=1e-6, atol=1e-8)
    assert loss.has_hessian


def test_losses_without_hessian_say_so():
    assert not TangentialLoss().has_hessian
    with pytest.raises(NotImplementedError, match="TangentialLoss defines no loss_hessian"):
        TangentialLoss().loss_hessian(np.ones((2, 1)), np.zeros((2, 1)))


def test_softmax_gradient_matches_finite_differences_and_stays_finite():
    loss = SoftmaxLoss()
    targets = loss.check_targets(np.array([0, 1, 2, 1]))
    scores = np.random.default_rng(2).normal(size=(4, 3))
    step = 1e-6
    for k in range(3):
        up, down = scores.copy(), scores.copy()
        up[:, k] += step
        down[:, k] -= step
        numeric = (loss.loss(targets, up) - loss.loss(targets, down))[:, 0] / (2 * step)
        assert np.allclose(loss.loss_gradient(targets, scores)[:, k], numeric, rtol=1e-6, atol=1e-9)
    extreme = np.array([[1e4, -1e4, 0.0], [-1e4, 1e4, 1e4], [0.0, 0.0, -1e4], [1e4, 1e4, 1e4]])
    for values in (loss.loss(targets, extreme), loss.loss_gradient(targets, extreme),
                   loss.loss_hessian(targets, extreme), loss.inverse_link(extreme)):
        assert np.all(np.isfinite(values))
    assert loss.loss(targets, extreme)[0, 0] == pytest.approx(0.0)  # class 0 alone at 1e4: no loss
    assert loss.loss(targets, extreme)[1, 0] == pytest.approx(np.log(2))  # classes 1 and 2 tie at 1e4


@pytest.mark.parametrize("labels, message", [
    (np.array([0, 1, 3]), "class 2 has no sample"),
    (np.array([0, 1, -1]), "integers 0 .. K-1"),
    (np.array([0.5, 1, 0]), "integers 0 .. K-1"),
    (np.array([0, 0, 0]), "at least two classes"),
])
def test_softmax_rejects_bad_labels(labels, message):
    with pytest.raises(ValueError, match=message):
        SoftmaxLoss().check_targets(labels)
    with pytest.raises(ValueError, match="outside 0 .. 1"):
        SoftmaxLoss(2).check_targets(np.array([0, 1, 2]))


def test_softmax_chunks_of_the_labels_need_not_hold_every_class():
    chunk = SoftmaxLoss(3).check_chunk_targets(np.array([0, 0, 2]))
    assert chunk.tolist() == [[1, 0, 0], [1, 0, 0], [0, 0, 1]]
    with pytest.raises(ValueError, match="class 1 has no sample"):
        SoftmaxLoss(3).check_targets(np.array([0, 0, 2]))
    with pytest.raises(ValueError, match=r"give SoftmaxLoss\(number_of_classes\)"):
        SoftmaxLoss().check_chunk_targets(np.array([0, 1]))
    with pytest.raises(ValueError, match="2 one-hot columns, for 3 classes"):
        SoftmaxLoss(3).check_chunk_targets(np.eye(2))
    with pytest.raises(ValueError, match="outside 0 .. 2"):
        SoftmaxLoss(3).check_chunk_targets(np.array([0, 3]))


# -- trees --------------------------------------------------------------------------------------

def test_squared_loss_tree_of_depth_one_by_hand():
    x = np.array([[1.0], [2.0], [3.0], [4.0], [5.0], [6.0]])
    y = np.array([1.0, 1.0, 1.0, 5.0, 5.0, 7.0])
    # scores 0: gradient s - y = -y, hessian 1; the best split separates {1,2,3} from {4,5,6};
    # leaves -G/H are the means 1 and 17/3
    tree = TreeTrainer(max_depth=1, min_samples_leaf=1, max_bins=None).train(x, -y[:, None], np.ones((6, 1)))
    assert tree.features.tolist() == [0, -1, -1]
    assert tree.thresholds[0] == 3.5
    assert tree.values[1:, 0].tolist() == pytest.approx([1.0, 17 / 3])


def _reference_tree(x, g, h, depth, min_samples, candidates=None):
    """Brute-force Newton tree (one output): every split at ``candidates[f]`` (default: between distinct values)."""
    if candidates is None:
        candidates = [np.unique(x[:, f])[:-1] / 2 + np.unique(x[:, f])[1:] / 2 for f in range(x.shape[1])]

    def grow(rows, level):
        G, H = g[rows].sum(), h[rows].sum()
        best = None
        if level < depth:
            for f in range(x.shape[1]):
                cuts = candidates[f]
                for t in cuts:
                    left = rows[x[rows, f] < t]
                    right = rows[x[rows, f] >= t]
                    if left.size < min_samples or right.size < min_samples:
                        continue
                    gain = g[left].sum() ** 2 / h[left].sum() + g[right].sum() ** 2 / h[right].sum() - G ** 2 / H
                    if gain > 1e-12 and (best is None or gain > best[0] * (1 + 1e-12)):
                        best = (gain, f, t, left, right)
        if best is None:
            return ("leaf", -G / H)
        return ("node", best[1], best[2], grow(best[3], level + 1), grow(best[4], level + 1))
    return grow(np.arange(x.shape[0]), 0)


def _as_nested(machine: TreeMachine, node: int = 0):
    if machine.features[node] < 0:
        return ("leaf", machine.values[node, 0])
    left, right = int(machine.left_children[node]), int(machine.right_children[node])
    return ("node", int(machine.features[node]), float(machine.thresholds[node]), _as_nested(machine, left),
            _as_nested(machine, right))


def _same_nested(a, b):
    assert a[0] == b[0]
    if a[0] == "leaf":
        assert a[1] == pytest.approx(b[1], rel=1e-10, abs=1e-12)
    else:
        assert a[1:3] == b[1:3]
        _same_nested(a[3], b[3])
        _same_nested(a[4], b[4])


@pytest.mark.parametrize("max_bins, sparse", [(None, False), (8, False), (None, True)])
def test_tree_equals_a_brute_force_newton_tree(max_bins, sparse):
    rng = np.random.default_rng(3)
    x = np.round(rng.normal(size=(120, 3)), 1)
    if sparse:  # mostly zeros: the histograms visit only the other rows and recover the zero bin from totals
        x = np.where(rng.random((120, 3)) < 0.7, 0.0, np.abs(x))
    t = np.where(x[:, 0] + 0.5 * x[:, 1] > 0, 1.0, -1.0)
    scores = 0.3 * rng.normal(size=(120, 1))
    loss = LogitLoss()
    g, h = loss.loss_gradient(t[:, None], scores), loss.loss_hessian(t[:, None], scores)
    trainer = TreeTrainer(max_depth=3, min_samples_leaf=5, min_hessian_leaf=0.0, max_bins=max_bins)
    binned = trainer.prepare(x)
    candidates = None
    if max_bins is not None:  # quantised: the bin boundaries are the only candidates
        candidates = [binned.split_thresholds[binned.offsets[f]:binned.offsets[f + 1] - 1] for f in range(3)]
        assert all(c.size < 8 for c in candidates)
    if sparse:
        assert np.all(binned.coded.mode_bins >= 0)
    tree = trainer.train(binned, g, h)
    _same_nested(_as_nested(tree), _reference_tree(x, g[:, 0], h[:, 0], 3, 5, candidates))


def _reference_leafwise_tree(x, g, h, max_leaves, min_samples):
    """Brute-force best-first Newton tree (one output, exact bins): the open leaf of largest gain splits next."""
    candidates = [np.unique(x[:, f])[:-1] / 2 + np.unique(x[:, f])[1:] / 2 for f in range(x.shape[1])]

    def best_split(rows):
        G, H = g[rows].sum(), h[rows].sum()
        best = None
        for f in range(x.shape[1]):
            for t in candidates[f]:
                left, right = rows[x[rows, f] < t], rows[x[rows, f] >= t]
                if left.size < min_samples or right.size < min_samples:
                    continue
                gain = g[left].sum() ** 2 / h[left].sum() + g[right].sum() ** 2 / h[right].sum() - G ** 2 / H
                if gain > 1e-9 and (best is None or gain > best[0] * (1 + 1e-12)):
                    best = (gain, f, t, left, right)
        return best

    leaves = {(): (np.arange(x.shape[0]), best_split(np.arange(x.shape[0])))}  # path -> (rows, best split)
    splits = {}
    while len(leaves) < max_leaves:
        open_leaves = [(value[1][0], path) for path, value in leaves.items() if value[1] is not None]
        if not open_leaves:
            break
        path = max(open_leaves)[1]
        _, (gain, f, t, left, right) = leaves.pop(path)
        splits[path] = (f, t)
        leaves[path + (0,)] = (left, best_split(left))
        leaves[path + (1,)] = (right, best_split(right))

    def nested(path):
        if path in splits:
            return ("node",) + splits[path] + (nested(path + (0,)), nested(path + (1,)))
        rows = leaves[path][0]
        return ("leaf", -g[rows].sum() / h[rows].sum())
    return nested(())


def test_leafwise_growth_splits_the_leaf_of_largest_gain_first():
    rng = np.random.default_rng(5)
    x = np.round(rng.normal(size=(300, 3)), 1)
    t = np.where(x[:, 0] * x[:, 1] + 0.3 * x[:, 2] > 0, 1.0, -1.0)
    loss = LogitLoss()
    scores = 0.2 * rng.normal(size=(300, 1))
    g, h = loss.loss_gradient(t[:, None], scores), loss.loss_hessian(t[:, None], scores)
    for max_leaves in (2, 5, 9):
        trainer = TreeTrainer(max_depth=None, max_leaves=max_leaves, min_samples_leaf=8, min_hessian_leaf=0.0,
                              max_bins=None, growth="leafwise")
        tree = trainer.train(x, g, h)
        assert np.sum(tree.features < 0) == max_leaves
        _same_nested(_as_nested(tree), _reference_leafwise_tree(x, g[:, 0], h[:, 0], max_leaves, 8))
    # with room for every split, leafwise and levelwise make the same splits (numbered differently)
    levelwise = TreeTrainer(max_depth=3, min_samples_leaf=8, max_bins=None).train(x, g, h)
    leafwise = TreeTrainer(max_depth=3, min_samples_leaf=8, max_bins=None, growth="leafwise").train(x, g, h)
    _same_nested(_as_nested(leafwise), _as_nested(levelwise))


@pytest.mark.parametrize("multi_output", ["shared", "per_output"])
def test_histogram_subtraction_gives_the_same_tree(multi_output):
    x, y = _classes(3000)
    loss = SoftmaxLoss()
    targets = loss.check_targets(y)
    scores = np.zeros(targets.shape)
    g, h = loss.loss_gradient(targets, scores), loss.loss_hessian(targets, scores)
    trainer = TreeTrainer(max_depth=4, max_bins=32, multi_output=multi_output)
    with_subtraction = trainer.train(x, g, h)
    trainer.histogram_subtraction = False
    direct = trainer.train(x, g, h)
    assert with_subtraction.features.tolist() == direct.features.tolist()
    assert with_subtraction.thresholds.tolist() == direct.thresholds.tolist()
    assert np.allclose(with_subtraction.values, direct.values, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("count_type", [np.int32, np.int64])
def test_histograms_added_in_quads_equal_row_by_row_ones(count_type):
    """One output's histograms of nodes with rows enough are added in quads: the same sums, counts and totals,
    bit for bit, as one add per row and bin in row order, wherever the scratch starts; smaller nodes leave the
    scratch alone."""
    from bob_boost.engine import bin_quads, tree_histograms
    rng = np.random.default_rng(11)
    n = 5000
    dense = rng.normal(size=(n, 12))
    sparse = np.where(rng.random((n, 4)) < 0.8, 0.0, rng.integers(1, 6, size=(n, 4)))
    binned = TreeTrainer(n_threads=1).prepare(np.hstack([dense, sparse]))
    coded, offsets = binned.coded, binned.offsets
    layout = coded.row_layout(offsets)
    assert np.count_nonzero(coded.mode_bins >= 0) == 4
    bins = int(offsets[-1])
    # rounded gradients collide in their sums: a different order of additions would show in the bits
    values = np.column_stack([np.round(rng.normal(size=n), 3) * 1e-3 + rng.normal(size=n) * 1e-9, rng.random(n)])
    large = np.sort(rng.choice(n, 3000, replace=False))
    small = large[:40]
    assert large.size * layout[1].size >= bin_quads.QUAD_ROWS_PER_BIN * bins > small.size * layout[1].size
    for order, shift in ((large, 0), (large, 1), (large, 2), (large, 3), (small, 0)):
        scratch = np.full(4 * bins + 8, np.nan)[shift:]
        sums, counts, total = np.full((bins, 2), np.nan), np.full(bins, -1, dtype=count_type), np.full(2, np.nan)
        tree_histograms.build_histogram(layout, coded.mode_bins, offsets, values, order, 0,
                                        order.size, total, order.size, sums, counts, scratch)
        row_sums, row_counts, row_total = np.zeros((bins, 2)), np.zeros(bins, dtype=count_type), np.zeros(2)
        bin_quads.add_share(layout, offsets, values, order, 0, order.size, 0, layout[1].size, True,
                            False, np.empty((0, 4)), row_sums, row_counts, row_total)
        tree_histograms._recover_frequent_bins(coded.mode_bins, offsets, row_total, order.size, row_sums, row_counts)
        assert np.array_equal(sums, row_sums) and np.array_equal(counts, row_counts)
        assert np.array_equal(total, row_total)
        quads = bin_quads.quads_of(scratch, bins)
        assert quads.ctypes.data % 32 == 0
        assert np.isnan(scratch).all() == (order is small)
        if order is large:
            assert np.array_equal(quads[:, 3], np.zeros(bins))
        # both are the rows added one at a time in row order (np.add.at), the exact reference
        total_expected = np.zeros(2)
        for i in order:
            total_expected += values[i]
        assert np.array_equal(total, total_expected)
        for f in range(12):  # the dense features
            part = slice(offsets[f], offsets[f + 1])
            expected = np.zeros((offsets[f + 1] - offsets[f], 2))
            np.add.at(expected, coded.codes[f, order], values[order])
            assert np.array_equal(sums[part], expected)
            assert np.array_equal(counts[part], np.bincount(coded.codes[f, order], minlength=expected.shape[0]))


@pytest.mark.parametrize("width", [2, 6])
def test_a_large_nodes_histogram_of_wide_data_is_the_brute_force_histogram(width):
    """Many dense features (their bins far beyond a core's level-2 cache) and sparse ones, one output or three."""
    from bob_boost.engine import tree_histograms
    rng = np.random.default_rng(3)
    n = 5600
    dense = rng.normal(size=(n, 70))
    sparse = np.where(rng.random((n, 20)) < 0.85, 0.0, rng.integers(1, 9, size=(n, 20)))
    binned = TreeTrainer(n_threads=1).prepare(np.hstack([dense, sparse]))
    coded, offsets = binned.coded, binned.offsets
    layout = coded.row_layout(offsets)
    assert layout[1].size == 70 and np.count_nonzero(coded.mode_bins >= 0) == 20
    values = np.ascontiguousarray(np.column_stack([rng.normal(size=(n, width // 2)), rng.random((n, width // 2))]))
    order = np.sort(rng.choice(n, 4800, replace=False))
    expected_total = np.zeros(width)
    tree_histograms.node_total(values, order, 0, order.size, expected_total)
    bins = int(offsets[-1])
    sums, counts, total = np.full((bins, width), np.nan), np.full(bins, -1, dtype=np.int32), np.full(width, np.nan)
    tree_histograms.build_histogram(layout, coded.mode_bins, offsets, values, order, 0, order.size, total,
                                    order.size, sums, counts, np.empty(0))
    # the sums of the rows, added with their histogram, are node_total's bits
    assert np.array_equal(total, expected_total)
    codes = coded.codes
    for f in (0, 69, 75):  # dense, dense, sparse (its frequent bin recovered from the total)
        part = slice(offsets[f], offsets[f + 1])
        expected = np.zeros((offsets[f + 1] - offsets[f], width))
        np.add.at(expected, codes[f, order], values[order])
        assert np.allclose(sums[part], expected, atol=1e-9)
        assert np.array_equal(counts[part], np.bincount(codes[f, order], minlength=offsets[f + 1] - offsets[f]))


def test_leaves_stay_finite_on_pure_nodes_and_trees_do_not_depend_on_threads():
    x, y = _classes(2000)
    separable = np.where(x[:, 0] > 0, 1.0, -1.0)
    for options in ({"min_hessian_leaf": 1e-3}, {"l2_regularization": 1.0, "min_hessian_leaf": 0.0},
                    {"min_samples_leaf": 50, "min_hessian_leaf": 0.0}):
        machine = Boosting(TreeTrainer(max_depth=3, **options), LogitLoss(), learning_rate=1.0).train(x, separable, 15)
        assert all(np.all(np.isfinite(m.values)) for m in machine.weak_machines)
        assert np.mean(machine.predict(x) == separable) == 1.0
    machines = [Boosting(TreeTrainer(max_depth=3, max_bins=64, n_threads=t), SoftmaxLoss(),
                         learning_rate=0.3).train(x, y, 8) for t in (1, 2, 4)]
    for other in machines[1:]:
        assert np.array_equal(other.weights, machines[0].weights)
        assert all(a == b for a, b in zip(other.weak_machines, machines[0].weak_machines))


@pytest.mark.parametrize("multi_output", ["shared", "per_output"])
def test_a_lone_tree_whose_histograms_are_built_in_parts_does_not_depend_on_threads(multi_output):
    from bob_boost.weak_trainers import tree as tree_module
    from bob_boost.weak_trainers import tree_parts
    rng = np.random.default_rng(7)
    x = np.round(rng.normal(size=(8 * tree_module.PART_ROWS + 500, 3)), 2)  # the root and large nodes in parts
    x[:, 2] = np.where(rng.random(x.shape[0]) < 0.8, 0.0, x[:, 2])  # sparse: its frequent bin is recovered
    y = np.where(x[:, 0] + x[:, 2] * x[:, 1] > 0, 1.0, -1.0)  # one output: one tree a round
    machines = [Boosting(TreeTrainer(max_depth=3, max_bins=64, n_threads=t, multi_output=multi_output), LogitLoss(),
                         learning_rate=0.5).train(x, y, 3) for t in (1, 2, 3)]
    for other in machines[1:]:
        assert all(a == b for a, b in zip(other.weak_machines, machines[0].weak_machines))
    # the root in parts is the histogram of every row: its split is the brute-force best
    loss = LogitLoss()
    scores = np.zeros((y.size, 1))
    g, h = loss.loss_gradient(y[:, None], scores), loss.loss_hessian(y[:, None], scores)
    trainer = TreeTrainer(max_depth=1, max_bins=64, n_threads=2, multi_output=multi_output)
    binned = trainer.prepare(x)
    candidates = [binned.split_thresholds[binned.offsets[f]:binned.offsets[f + 1] - 1] for f in range(3)]
    _same_nested(_as_nested(trainer.train(binned, g, h)), _reference_tree(x, g[:, 0], h[:, 0], 1, 20, candidates))
    # and bin by bin, the counts and sums of every row, and of a node's rows
    coded, offsets = binned.coded, binned.offsets
    cells = int(offsets[-1])
    values = np.ascontiguousarray(np.hstack([g, h]))
    sums, counts = np.empty((1, cells, 2)), np.empty((1, cells), dtype=np.int64)
    parts = tree_parts.Parts(coded, offsets, coded.row_layout(offsets), coded.pair_layout(offsets, paired=False),
                             values, sums, counts)
    for order in (np.arange(y.size), np.flatnonzero(rng.random(y.size) < 0.5)):
        total = np.zeros(2)
        assert tree_parts._part_bounds(0, order.size, cells * 2).size - 1 >= 3
        parts.build(order, 0, order.size, total, sums[0], counts[0])
        bins = (coded.codes[:, order] + offsets[:-1, np.newaxis]).ravel()
        assert counts[0].tolist() == np.bincount(bins, minlength=cells).tolist()
        for column, column_values in enumerate((g[order, 0], h[order, 0])):
            np.testing.assert_allclose(sums[0, :, column],
                                       np.bincount(bins, weights=np.tile(column_values, 3), minlength=cells),
                                       rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(total, [g[order].sum(), h[order].sum()], rtol=1e-12)


@pytest.mark.parametrize("growth", ["levelwise", "leafwise"])
@pytest.mark.parametrize("subtraction", [True, False])
def test_a_grower_that_stops_for_its_large_histograms_grows_the_same_tree(monkeypatch, growth, subtraction):
    """With parts of one, histograms built outside the compiled grower (which stops and goes on again for
    every node of at least 2 x PART_ROWS rows) are the ones it builds itself: the same trees bit for bit.
    (A lone tree of several outputs: one output's trees share their large nodes out to a team instead.)"""
    from bob_boost.weak_trainers import tree as tree_module
    from bob_boost.weak_trainers import tree_parts
    rng = np.random.default_rng(11)
    x = np.round(rng.normal(size=(3000, 4)), 2)
    x[rng.random(x.shape) < 0.05] = np.nan
    y = (x[:, 0] + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=3000) > 0).astype(int) + (x[:, 3] > 0.5)

    def train():
        tree = TreeTrainer(max_depth=None if growth == "leafwise" else 5, max_leaves=20, growth=growth,
                           missing="bin", min_samples_leaf=5, multi_output="shared")
        tree.histogram_subtraction = subtraction  # an attribute, not a parameter
        return Boosting(tree, SoftmaxLoss(), learning_rate=0.3).train(x, y, 5)
    inline = train()
    assert 2 * tree_module.PART_ROWS > x.shape[0]  # by default every histogram is the grower's
    monkeypatch.setattr(tree_module, "PART_ROWS", 8)
    monkeypatch.setattr(tree_parts, "PART_ROWS", 8)
    monkeypatch.setattr(tree_parts, "MOST_PARTS", 1)
    requests = []
    build = tree_parts.Parts.build
    monkeypatch.setattr(tree_parts.Parts, "build", lambda self, order, start, stop, *rest: (
        requests.append(stop - start), build(self, order, start, stop, *rest)))
    stopped = train()
    assert len(requests) > 5 * 10 and min(requests) >= 16
    assert stopped.weak_machines == inline.weak_machines and np.array_equal(stopped.weights, inline.weights)


def test_softmax_trees_learn_and_predict_classes_and_probabilities(tmp_path):
    x, y = _classes()
    probe, truth = _classes(1500, seed=4)
    machine = Boosting(TreeTrainer(max_depth=3), SoftmaxLoss(), learning_rate=0.3).train(x, y, 30)
    assert machine.decision_rule == "argmax" and machine.number_of_outputs == 3
    assert np.mean(machine.predict(probe) == truth) > 0.85
    path = tmp_path / "trees.hdf5"
    machine.save(path)
    loaded = BoostedMachine.load(path)
    assert np.array_equal(loaded.decision_scores(probe), machine.decision_scores(probe))
    staged = list(machine.staged_decision_scores(probe))[-1]
    assert np.array_equal(staged, machine.decision_scores(probe))


def test_learning_rate_scales_the_proposed_weight():
    x, y = _classes(500)
    full = Boosting(TreeTrainer(max_depth=2), SoftmaxLoss(), learning_rate=1.0).train(x, y, 1)
    shrunk = Boosting(TreeTrainer(max_depth=2), SoftmaxLoss(), learning_rate=0.25).train(x, y, 1)
    assert full.weights.tolist() == [[1.0] * 3]
    assert shrunk.weights.tolist() == [[0.25] * 3]
    assert full.weak_machines[0] == shrunk.weak_machines[0]


def test_hessian_free_loss_falls_back_to_gradient_leaves_with_a_line_search():
    x, _ = _classes(800)
    t = np.where(x[:, 0] > 0.2, 1.0, -1.0)
    machine = Boosting(TreeTrainer(max_depth=2), TangentialLoss()).train(x, t, 5)
    assert np.all(machine.weights > 0) and not np.all(machine.weights == 1.0)  # fitted, not proposed
    assert np.mean(machine.predict(x) == t) > 0.9
    with pytest.raises(ValueError, match="newton_leaves: the loss defines no loss_hessian"):
        Boosting(TreeTrainer(newton_leaves=True), TangentialLoss()).train(x, t, 2)


def test_squared_loss_regression_trees_fit_a_smooth_function():
    rng = np.random.default_rng(5)
    x = rng.uniform(-2, 2, size=(3000, 3))
    y = np.sin(x[:, 0]) * 2 + x[:, 1] ** 2
    machine = Boosting(TreeTrainer(max_depth=4), SquaredLoss(), learning_rate=0.3).train(x, y, 60, baseline=y.mean())
    assert np.sqrt(np.mean((machine(x) - y) ** 2)) < 0.2 * y.std()


@pytest.mark.parametrize("options, message", [
    ({"max_depth": 0}, "max_depth"), ({"max_leaves": 1}, "max_leaves"), ({"l2_regularization": -1.0}, "l2_reg"),
    ({"min_hessian_leaf": -0.1}, "min_hessian_leaf"), ({"min_samples_leaf": 0}, "min_samples_leaf"),
    ({"multi_output": "both"}, "multi_output"), ({"max_bins": 1}, "max_bins"), ({"n_threads": 0}, "n_threads"),
    ({"growth": "lossguide"}, "growth"), ({"max_depth": None, "growth": "levelwise"}, "max_depth: None"),
    ({"max_depth": None, "max_leaves": None}, "max_depth: None"),
])
def test_bad_tree_options(options, message):
    with pytest.raises(ValueError, match=message):
        TreeTrainer(**options)


def test_tree_files_are_validated(tmp_path):
    x, y = _classes(400)
    machine = Boosting(TreeTrainer(max_depth=2, min_samples_leaf=5), SoftmaxLoss()).train(x, y, 2)
    path = tmp_path / "tree.hdf5"
    machine.save(path)
    with h5py.File(path, "r+") as h5:
        group = next(h5[name] for name in h5 if name.startswith("WeakMachine"))
        left = group["LeftChildren"][()]
        left[0] = 0  # a node that is its own child
        del group["LeftChildren"]
        group.create_dataset("LeftChildren", data=left)
    with pytest.raises(ModelFormatError, match="larger than its parent"):
        BoostedMachine.load(path)


# -- front doors --------------------------------------------------------------------------------

def test_estimators_train_gradient_trees():
    pytest.importorskip("sklearn")
    from bob_boost.sklearn import BoostingClassifier, BoostingRegressor
    x, y = _classes(1200)
    labels = np.array(["a", "b", "c"])[y]
    model = BoostingClassifier(weak_learner="tree", loss="softmax", max_depth=3, learning_rate=0.3,
                               n_estimators=20).fit(x, labels)
    probabilities = model.predict_proba(x)
    assert probabilities.shape == (1200, 3) and np.allclose(probabilities.sum(axis=1), 1.0)
    assert np.array_equal(model.classes_[np.argmax(probabilities, axis=1)], model.predict(x))
    assert np.mean(model.predict(x) == labels) > 0.9
    target = np.sin(x[:, 0]) + x[:, 1]
    regressor = BoostingRegressor(weak_learner="tree", max_depth=3, learning_rate=0.3, n_estimators=40).fit(x, target)
    assert np.sqrt(np.mean((regressor.predict(x) - target) ** 2)) < 0.3 * target.std()
    with pytest.raises(ValueError, match="max_depth"):
        BoostingClassifier(weak_learner="tree", max_depth=0).fit(x, labels)
    # LightGBM's shape: one leafwise tree of at most 6 leaves per class and round
    leafwise = BoostingClassifier(weak_learner="tree", loss="softmax", max_depth=None, max_leaves=6, growth="leafwise",
                                  multi_output="per_output", learning_rate=0.3, n_estimators=5).fit(x, labels)
    for machine in leafwise.machine_.weak_machines:
        assert machine.roots.size == 3
        assert np.sum(machine.features < 0) <= 3 * 6
    expected = Boosting(TreeTrainer(max_depth=None, max_leaves=6, growth="leafwise", multi_output="per_output"),
                        SoftmaxLoss(), learning_rate=0.3).train(x, y, 5, baseline="auto")  # the class prior
    assert all(a == b for a, b in zip(leafwise.machine_.weak_machines, expected.weak_machines))
    leafwise_regressor = BoostingRegressor(weak_learner="tree", max_depth=None, max_leaves=4, growth="leafwise",
                                           n_estimators=3).fit(x, target)
    assert all(np.sum(m.features < 0) == 4 for m in leafwise_regressor.machine_.weak_machines)
    with pytest.raises(ValueError, match="growth"):
        BoostingRegressor(weak_learner="tree", growth="depthwise").fit(x, target)


def test_command_line_trains_softmax_trees(tmp_path, capsys):
    from bob_boost.cli import main
    x, y = _classes(600)
    table = tmp_path / "train.csv"
    np.savetxt(table, np.column_stack([x, y]), delimiter=",", header=",".join([f"f{i}" for i in range(5)] + ["y"]),
               comments="")
    model = tmp_path / "trees.hdf5"
    assert main(["train", str(table), "-o", str(model), "-w", "tree", "-l", "softmax", "--tree-depth", "3",
                 "--shrinkage", "0.3", "-r", "10", "--quiet"]) == 0
    machine = BoostedMachine.load(model)
    assert isinstance(machine.weak_machines[0], TreeMachine) and machine.weak_machines[0].depth == 3
    assert machine.weights[0].tolist() == [0.3] * 3
    assert main(["train", str(table), "-o", str(model), "-F", "-w", "tree", "-l", "softmax", "--tree-depth", "8",
                 "--tree-leaves", "5", "--tree-growth", "leafwise", "--tree-outputs", "per_output", "-r", "4",
                 "--quiet"]) == 0
    machine = BoostedMachine.load(model)
    assert all(m.roots.size == 3 and np.sum(m.features < 0) <= 15 for m in machine.weak_machines)
    capsys.readouterr()


@pytest.mark.parametrize("options", [{}, {"multi_output": "shared"}, {"growth": "levelwise", "max_depth": 3},
                                     {"categorical_features": [0], "missing": "bin"}])
def test_a_grown_round_is_the_machine_the_checked_constructor_makes(options):
    """The compiled assembly of a round's trees (thresholds, children in the stored order, each tree's outputs,
    category values, NaN sides, depth) gives the machine the checking constructor makes of the same arrays,
    and that machine scores the training rows as the grower's own outputs do."""
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.integers(0, 6, 600), rng.normal(size=600), rng.normal(size=600)]).astype(float)
    labels = (X[:, 0] % 3 + (X[:, 1] > 0)).astype(int) % 3
    if "missing" in options:
        X[rng.random(600) < 0.1, 0] = np.nan
        X[rng.random(600) < 0.1, 1] = np.nan
    targets = np.eye(3)[labels]
    trainer = TreeTrainer(max_leaves=8, **options)
    machine = Boosting(trainer, SoftmaxLoss()).train(X, targets, 3)
    categorical = 0
    for weak in machine.weak_machines:
        checked = TreeMachine(weak.features, weak.thresholds, weak.left_children, weak.right_children, weak.values,
                              weak.roots, weak.missing_left, weak.categories, weak.cover, weak.gains)
        assert checked == weak and checked.depth == weak.depth >= 1
        np.testing.assert_array_equal(checked.cover, weak.cover)
        np.testing.assert_array_equal(checked.gains, weak.gains)
        assert weak.roots.size == (1 if "multi_output" in options else 3)
        inner = weak.features >= 0
        np.testing.assert_allclose(weak.cover[inner], weak.cover[weak.left_children[inner]]
                                   + weak.cover[weak.right_children[inner]], rtol=1e-12)
        assert np.all(weak.gains[inner] > 0) and np.all(weak.gains[~inner] == 0)
        split_sets = [i for i, sets in enumerate(weak.categories or []) if sets is not None]
        assert np.all(weak.thresholds[split_sets] == 0) and np.all(weak.thresholds[~inner] == 0)
        categorical += len(split_sets)
    assert categorical > 0 or "categorical_features" not in options
    scores = np.zeros(targets.shape)
    gradient, hessian = SoftmaxLoss().gradient_and_hessian(targets, scores)
    proposal = trainer.propose(trainer.prepare(X), RoundState(features=X, scores=scores, gradient=gradient,
                                                              hessian=hessian))
    np.testing.assert_array_equal(proposal.machine.forward(X), proposal.outputs)


@pytest.mark.parametrize("missing", [False, True])
def test_split_gains_are_the_newton_gains_of_the_running_sums(missing):
    """Every split's gain is ``G_L^2/(H_L+l) + G_R^2/(H_R+l) - G^2/(H+l)`` of the running sums over the bins in
    order, bit for bit as numpy computes it; splits after an empty bin, with a child under ``min_samples`` rows
    or under ``min_hessian``, are not scored (-1 or left alone)."""
    from bob_boost.engine.split_scan import scan_single
    rng = np.random.default_rng(11)
    bins, features = 40, 3
    offsets = np.arange(features + 1) * bins
    counts = rng.integers(0, 6, size=features * bins).astype(np.int32)
    counts[[5, 6, 7, 50]] = 0
    sums = np.column_stack([np.round(rng.normal(size=counts.size), 1) * counts, 0.25 * counts + 0.01 * counts ** 2])
    sums[counts == 0] = 0.0
    if missing:  # feature 1 holds NaN rows in its last bin
        counts[2 * bins - 1], sums[2 * bins - 1] = 4, (0.7, 1.1)
    count = int(counts[:bins].sum())
    total = sums[:bins].sum(axis=0)
    for f in range(1, features):  # every feature sums to the same node
        part = slice(offsets[f], offsets[f + 1])
        counts[part][0] += count - counts[part].sum()
        sums[part][0] += total - sums[part].sum(axis=0)
    regularization, min_samples = 0.5, 3
    gains, top = np.full(2 * counts.size, np.nan), np.zeros(features)
    best = scan_single(sums, counts, np.full(features, -1), offsets, total, count, regularization, min_samples, 0.05,
                       missing, gains, np.ones(features, dtype=np.bool_), np.zeros(0, dtype=np.int64), -np.inf,
                       np.inf, top, 0, features)
    parent = 0.0 + total[0] * total[0] / (total[1] + regularization)
    for f in range(features):
        last = offsets[f + 1] - (2 if missing else 1)
        scored = [g for g in range(offsets[f], last) if counts[g] > 0 or g == offsets[f]]
        kept = np.zeros(counts.size, dtype=bool)
        kept[scored] = True
        has_nan = missing and counts[offsets[f + 1] - 1] > 0
        at = np.array(scored) - offsets[f]
        left_sums = np.cumsum(np.where(kept[:, None], sums, 0.0)[offsets[f]:last], axis=0)[at]
        left_counts = np.cumsum(counts[offsets[f]:last])[at]
        for side in ([0, 1] if has_nan else [0]):
            moved = counts[offsets[f + 1] - 1] if side == 0 and has_nan else 0
            left = left_sums + (sums[offsets[f + 1] - 1] if moved else 0.0)
            right = total - left
            children = (0.0 + left[:, 0] * left[:, 0] / (left[:, 1] + regularization)) + \
                (0.0 + right[:, 0] * right[:, 0] / (right[:, 1] + regularization))
            ok = ((left_counts + moved >= min_samples) & (count - left_counts - moved >= min_samples)
                  & (left[:, 1] >= 0.05) & (right[:, 1] >= 0.05) & (children - parent > 1e-10 * children))
            expected = np.where(ok, children - parent, -1.0)
            got = gains[2 * np.array(scored) + (side if has_nan else 0)]
            assert np.array_equal(got.view(np.uint64), expected.view(np.uint64))
        assert np.isnan(gains[2 * np.flatnonzero(~kept[offsets[f]:last]) + 2 * offsets[f]]).all()
        assert top[f] == max(-1.0, max(gains[2 * g + s] for g in scored for s in ((0, 1) if has_nan else (0,))))
    assert best == max(0.0, top.max())


@pytest.mark.parametrize("outputs, levels", [(1, None), (3, None), (1, 16), (3, 16)])
def test_histogram_slots_given_back_hold_nothing_the_next_trees_read(outputs, levels):
    """A round's slots are borrowed from the coded features and given back: filled with NaN (and -1 counts,
    or -1 packed sums of quantised gradients) in between, the next round's trees and outputs are the same, bit
    for bit, and grow in the same arrays."""
    rng = np.random.default_rng(5)
    x = np.hstack([rng.normal(size=(3000, 6)), np.where(rng.random((3000, 3)) < 0.8, 0.0, rng.normal(size=(3000, 3)))])
    gradient, hessian = rng.normal(size=(3000, outputs)), rng.random((3000, outputs)) + 0.1
    trainer = TreeTrainer(max_leaves=15, n_threads=2, quantized_gradients=levels)
    binned = trainer.prepare(x)
    first, first_outputs = trainer._grow(binned, gradient, hessian, 0)
    spare = [array for arrays in binned.coded._spare.values() for array in arrays]
    assert spare and all(array.size > 0 for array in spare)
    for array in spare:
        array.fill(np.nan if array.dtype.kind == "f" else -1)
    second, second_outputs = trainer._grow(binned, gradient, hessian, 0)
    assert np.array_equal(first_outputs, second_outputs)
    assert np.array_equal(first.forward(x), second.forward(x))
    again = [array for arrays in binned.coded._spare.values() for array in arrays]
    assert sorted(map(id, again)) == sorted(map(id, spare))


def test_borrowed_arrays_are_each_borrowers_own():
    coded = TreeTrainer(n_threads=1).prepare(np.random.default_rng(0).normal(size=(50, 3))).coded
    first, second = coded.borrow((4, 5), np.float64), coded.borrow((4, 5), np.float64)
    assert first is not second and first.shape == (4, 5) and first.dtype == np.float64
    coded.give_back(first)
    assert coded.borrow((4, 5), np.int32) is not first  # another type: a new array
    assert coded.borrow((4, 5), np.float64) is first
    assert coded.borrow((4, 5), np.float64) is not first  # given back once, lent once
