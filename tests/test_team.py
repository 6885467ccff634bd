"""A team of threads inside one compiled call: its jobs give one thread's bits, whatever the number of shares."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from bob_boost import Boosting, LogitLoss, TreeTrainer
from bob_boost.callbacks import RecordEvaluation
from bob_boost.engine import team, tree_histograms, tree_kernels, tree_team
from bob_boost.engine.bin_quads import quad_scratch


def _coded(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    dense = np.round(rng.normal(size=(n, 9)), 2)
    dense[rng.random(dense.shape) < 0.05] = np.nan
    sparse = np.where(rng.random((n, 3)) < 0.85, 0.0, rng.integers(1, 7, size=(n, 3)))
    binned = TreeTrainer(n_threads=1, missing="bin").prepare(np.hstack([dense, sparse]))
    return binned.coded, binned.offsets, rng


def _context(coded, offsets, values, shares, rows, root_counts=None):
    layout, bins = coded.row_layout(offsets), int(offsets[-1])
    sums, counts = np.full((3, bins, 2), np.nan), np.full((3, bins), -1, dtype=np.int32)
    crew = tree_team.crew_of(shares, quad_scratch(bins), 8, 2, bins, offsets.size - 1,
                             np.empty(0, dtype=np.int32) if root_counts is None else root_counts)
    state = tree_kernels.tree_state(rows.copy(), 8, 3, 2, values)
    stored = coded.splitting()
    return tree_kernels.team_context(layout, coded.mode_bins, offsets, values, stored, state, sums, counts, crew,
                                     np.full(8, -1), np.zeros(coded.n_samples, dtype=np.int64), values)


@pytest.mark.parametrize("shares", [1, 2, 3, 4])
def test_a_shared_histogram_is_the_one_thread_histogram(shares):
    coded, offsets, rng = _coded()
    n = coded.n_samples
    # rounded gradients collide in their sums: another order of additions would show in the bits
    values = np.column_stack([np.round(rng.normal(size=n), 2) + rng.normal(size=n) * 1e-9, rng.random(n)])
    rows = np.sort(rng.choice(n, 4000, replace=False))
    context = _context(coded, offsets, values, shares, rows)
    layout, crew = context[0], context[10]
    bins = int(offsets[-1])
    for start, stop in ((0, 4000), (1000, 1700), (3990, 4000)):
        with team.helpers(tree_team.serve, context, shares, crew[0]):
            tree_team.shared_histogram(context, np.int64(start), np.int64(stop), np.int64(1), np.int64(2), False)
        sums, counts, total = np.zeros((bins, 2)), np.zeros(bins, dtype=np.int32), np.zeros(2)
        tree_histograms.build_histogram(layout, coded.mode_bins, offsets, values, rows, start,
                                        stop, total, stop - start, sums, counts, np.empty(0))
        assert np.array_equal(context[7][1], sums) and np.array_equal(context[8][1], counts)
        assert np.array_equal(context[9][2], total)


@pytest.mark.parametrize("shares", [1, 2, 3, 4])
def test_a_root_of_known_counts_is_the_counted_histogram(shares):
    """The root of every row copies its bins' counts from the binning's and adds only its gradients and hessians
    (pairs): the histogram, counts and sums of the rows counted one by one, bit for bit."""
    coded, offsets, rng = _coded(seed=3)
    n = coded.n_samples
    values = np.column_stack([np.round(rng.normal(size=n), 2) + rng.normal(size=n) * 1e-9, rng.random(n)])
    rows = np.arange(n)
    known = coded.bin_counts(offsets)
    assert known is coded.bin_counts(offsets)  # computed once
    context = _context(coded, offsets, values, shares, rows, known)
    layout, crew, bins = context[0], context[10], int(offsets[-1])
    assert tree_team.root_counted(context, n, 2)
    assert not tree_team.root_counted(context, n - 1, 2)
    with team.helpers(tree_team.serve, context, shares, crew[0]):
        tree_team.shared_histogram(context, np.int64(0), np.int64(n), np.int64(1), np.int64(2), True)
    sums, counts, total = np.zeros((bins, 2)), np.zeros(bins, dtype=np.int32), np.zeros(2)
    tree_histograms.build_histogram(layout, coded.mode_bins, offsets, values, rows, 0, n, total,
                                    n, sums, counts, np.empty(0))
    assert np.array_equal(counts, known)
    assert np.array_equal(context[7][1], sums) and np.array_equal(context[8][1], counts)
    assert np.array_equal(context[9][2], total)


@pytest.mark.parametrize("shares", [1, 2, 3, 4])
@pytest.mark.parametrize("feature, nan_left", [(0, False), (4, True), (10, False)])  # dense, dense, sparse
def test_a_shared_partition_is_the_one_stable_partition(shares, feature, nan_left):
    coded, offsets, rng = _coded(seed=1)
    n = coded.n_samples
    rows = np.sort(rng.choice(n, 5000, replace=False))
    context = _context(coded, offsets, np.zeros((n, 2)), shares, rows)
    order, stored = context[5], context[4]
    bins = int(offsets[feature + 1] - offsets[feature])
    missing_code = bins - 1 if coded.mode_bins[feature] < 0 else -1
    for start, stop, local_bin in ((0, 5000, bins // 3), (700, 4100, 0), (20, 27, bins - 2)):
        before = order.copy()
        expected = order.copy()
        column = tree_kernels.node_codes(stored, coded.mode_bins, feature, expected, start, stop).copy()
        middle_expected = tree_kernels._partition(expected, np.empty_like(expected), start, stop, column, local_bin,
                                                  missing_code, nan_left)
        with team.helpers(tree_team.serve, context, shares, context[10][0]):
            tree_kernels.node_codes(stored, coded.mode_bins, feature, order, start, stop)
            middle = tree_team.shared_partition(context, np.int64(start), np.int64(stop), np.int64(feature),
                                                np.int64(local_bin), np.int64(missing_code), nan_left)
        assert middle == middle_expected and np.array_equal(order, expected)
        # rows outside the node stay; inside, the left rows, then the right rows, each ascending
        assert np.array_equal(order[:start], before[:start]) and np.array_equal(order[stop:], before[stop:])
        assert np.all(np.diff(order[start:middle]) > 0) and np.all(np.diff(order[middle:stop]) > 0)
        assert 0 < middle - start < stop - start or stop - start < 10
        order[start:stop] = np.sort(order[start:stop])


@pytest.mark.parametrize("shares", [1, 2, 3, 4])
@pytest.mark.parametrize("sampled", [False, True])
def test_a_shared_split_scan_is_the_one_thread_scan(shares, sampled):
    from bob_boost.engine.categorical import workspace
    from bob_boost.engine.split_scan import best_split, chosen_split
    coded, offsets, rng = _coded(seed=2)
    n = coded.n_samples
    values = np.column_stack([np.round(rng.normal(size=n), 1) + 0.3, rng.random(n)])
    rows = np.sort(rng.choice(n, 3000, replace=False))
    context = _context(coded, offsets, values, shares, rows)
    crew, bins, features = context[10], int(offsets[-1]), offsets.size - 1
    allowed = np.ones(features, dtype=np.bool_)
    allowed[[1, 10]] = not sampled  # a node's sample of the columns leaves some out
    no = (np.zeros(0, dtype=np.int64), -np.inf, np.inf, np.zeros(2), np.zeros(0, dtype=np.bool_), np.zeros(4),
          np.zeros(2, dtype=np.uint64))
    for start, stop, min_samples in ((0, 3000, 20), (100, 900, 5), (0, 3000, 1501)):
        tree_histograms.build_histogram(context[0], coded.mode_bins, offsets, values, rows,
                                        start, stop, context[9][1], stop - start, context[7][2], context[8][2],
                                        np.empty(0))
        crew[7][:] = allowed
        with team.helpers(tree_team.serve, context, shares, crew[0]):
            top = tree_team.shared_scan(context, np.int64(2), np.int64(1), np.int64(stop - start), 0.5, min_samples,
                                        1e-3, True)
        work = workspace(2, features)
        shared = chosen_split(top, context[7][2], context[8][2], coded.mode_bins, offsets, context[9][1],
                              stop - start, 0.5, min_samples, 1e-3, 1e-9, True, crew[5], allowed, no[0], no[1],
                              no[2], no[3], no[4], no[5], no[6], work, crew[6])
        gains = np.full(2 * bins, np.nan)
        one = best_split(context[7][2], context[8][2], coded.mode_bins, offsets, context[9][1], stop - start, 0.5,
                         min_samples, 1e-3, 1e-9, True, gains, allowed, *no[:6], no[6], work)
        assert shared == one
        assert (one[0] >= 0) == (min_samples < 1501)  # two children of 1,501 rows: none
        scored = ~np.isnan(gains)
        assert np.array_equal(crew[5][scored], gains[scored])
        assert np.array_equal(crew[6][allowed], work[8][allowed])


@numba.njit(nogil=True)
def _failing_serve(control, helper):
    seen, kind = team.next_job(control, 0)
    if team.claim(control, seen, 2) >= 0:
        raise ValueError("a helper failed")


@numba.njit(nogil=True)
def _lead(control):
    # a leader that leaves both shares to its helper: it waits for a share the helper never reports done
    team.start_job(control, 0)
    team.finish_job(control, 2)


def test_a_helpers_failure_is_raised_and_does_not_hang_its_leader():
    control = team.control_array()
    with pytest.raises(ValueError, match="a helper failed"):
        with team.helpers(lambda context, helper: _failing_serve(control, helper), control, 2, control):
            _lead(control)


@numba.njit(nogil=True)
def _claims(control, generation, shares, out):
    count = 0
    while True:
        share = team.claim(control, generation, shares)
        if share < 0:
            return count
        out[count] = share
        count += 1


def test_every_share_of_a_job_is_claimed_once_and_a_later_job_refuses_earlier_claims():
    control = team.control_array()
    first = team.start_job(control, 0)
    out = np.full(8, -1)
    assert _claims(control, first, 5, out) == 5 and list(out[:5]) == [0, 1, 2, 3, 4]
    second = team.start_job(control, 0)
    # a late thread still holding the first job's generation claims nothing of the second
    assert _claims(control, first, 5, out) == 0
    assert team.claim(control, second, 3) == 0 and team.claim(control, second, 3) == 1


def test_a_leader_does_every_share_when_its_helper_never_starts():
    """The team's one pool thread is held up: the tree's jobs are all done by their leader, with the same
    model."""
    import threading
    from bob_boost.engine.threads import thread_pool
    rng = np.random.default_rng(1)
    x = rng.normal(size=(20_000, 16))
    y = np.where(x[:, 0] + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=20_000) > 0, 1.0, -1.0)
    alone = Boosting(TreeTrainer(n_threads=1), LogitLoss()).train(x, y, 3)(x)
    release = threading.Event()
    blocked = thread_pool(1, "team").submit(release.wait, 60)
    try:
        teamed = Boosting(TreeTrainer(n_threads=2), LogitLoss()).train(x, y, 3)(x)
        assert not blocked.done()  # no helper ran during the training
    finally:
        release.set()
    assert np.array_equal(teamed, alone)


def test_lone_trees_are_the_same_on_any_number_of_threads(monkeypatch):
    """Twice the rows a team takes on: the histograms and partitions of large nodes are shared out (the team
    taken however little the work)."""
    from bob_boost.weak_trainers import tree_parts
    monkeypatch.setattr(tree_parts, "TEAM_WORK", 0)
    assert 13 >= 3 * tree_team.SHARED_FEATURES
    rng = np.random.default_rng(5)
    n = 2 * tree_parts.PART_ROWS + 3000
    assert tree_parts.team_shares(2, n, 13) == 2 and tree_parts.team_shares(3, n, 13) == 3
    x = np.round(rng.normal(size=(n, 14)), 2)  # 13 dense features: histograms shared by up to 3 threads
    x[:, 6] = np.where(rng.random(n) < 0.8, 0.0, x[:, 6])  # mostly zero: a sparse feature
    x[rng.random(x.shape) < 0.03] = np.nan
    y = np.where(x[:, 0] + np.nan_to_num(x[:, 1]) * x[:, 2] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    scores = []
    for threads in (1, 2, 3):
        trainer = TreeTrainer(n_threads=threads, missing="bin", max_leaves=15)
        seen = []  # the training scores the trainer kept from each row's leaf
        record = RecordEvaluation(x, lambda machine, s: seen.append(s.copy()) or 0.0, training=True)
        machine = Boosting(trainer, LogitLoss(), learning_rate=0.3).train(x, y, 6, callback=record)
        scores.append(machine(x))
        # the rows' leaves and the leaves' values the team found are those the machine routes the rows to, and
        # every leaf has its rows' sums (a leaf left out would cover nothing)
        np.testing.assert_allclose(seen[-1].ravel(), scores[-1].ravel(), rtol=1e-12, atol=1e-12)
        for tree in machine.weak_machines:
            leaves = np.asarray(tree.features) < 0
            assert np.all(np.asarray(tree.cover)[leaves] > 0) and np.all(np.asarray(tree.values)[leaves] != 0)
    assert np.array_equal(scores[0], scores[1]) and np.array_equal(scores[0], scores[2])
    assert np.mean(np.sign(scores[0]) == y) > 0.7


def test_a_small_tree_grows_without_a_team():
    """A team costs more than it saves on few rows or few features (:data:`~.tree_parts.TEAM_WORK`)."""
    from bob_boost.weak_trainers.tree_parts import PART_ROWS, TEAM_FEATURES, TEAM_WORK, team_shares
    assert team_shares(2, 2 * PART_ROWS - 1, 64) == 1  # too few rows
    assert team_shares(2, 20_000, 6) == 1 and team_shares(2, 20_000, 2 * TEAM_FEATURES) == 2
    assert team_shares(2, TEAM_WORK // 6 + 1, 6) == 2  # few features, many rows
    assert team_shares(1, 100_000, 64) == 1


def test_several_calls_lead_teams_at_once():
    """Four threads each train with a team of two: the helpers share one pool, every call finishes, and each
    gets the model of a call alone."""
    import threading
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20_000, 16))
    y = np.where(x[:, 0] + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=20_000) > 0, 1.0, -1.0)

    def fit():
        return Boosting(TreeTrainer(n_threads=2), LogitLoss()).train(x, y, 5)(x)
    alone = fit()
    results = [None] * 4

    def run(k):
        results[k] = fit()
    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert all(result is not None and np.array_equal(result, alone) for result in results)
