"""The stages of OpenCV cascades: stumps boosted on OpenCV's feature values at the stage's windows, each a
``(feature, split, left leaf, right leaf)`` that the detector decides as the stage did.

- :func:`gentle_stage`: Gentle AdaBoost as ``opencv_traincascade -bt GAB`` runs it (see
  :mod:`bob_boost.vision.opencv_train`): a Haar split between two values, an LBP split a set of codes.
- :func:`learned_stage`: any bob_boost stage learner (:mod:`bob_boost.vision.stages`: discrete AdaBoost,
  AdaBoostDB, Cost-Sensitive AdaBoost) boosting stumps on the values' ranks, each stump then the value split
  that sends the stage's windows as the stump sent their ranks; leaves the stump's two weighted outputs.

Both place the stage threshold at OpenCV's index ``int((1 - minHitRate) numPos)`` of the positives' float32
scores and stop once the negatives' false-alarm rate is at most the most allowed.
"""
from __future__ import annotations

import numpy as np

from ..binning import BinnedFeatures
from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..weak import StumpMachine
from ._opencv_kernels import category_split, category_split_gains
from .opencv_features import passes, stump_sides
from .opencv_xml import LBP_SUBSET_WORDS

__all__ = ["RankedValues", "gentle_stage", "learned_stage"]

#: Features whose ranks are computed at once (bounds the sort's memory).
_RANK_CHUNK = 1024


def _split_thresholds(low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """float32 thresholds ``t`` with ``low < t <= high`` (the midpoint, or ``high`` where the midpoint rounds to
    ``low``): ``value < t`` then sends ``low`` left and ``high`` right."""
    middle = ((low.astype(np.float64) + high) / 2).astype(np.float32)
    return np.where((middle > low) & (middle <= high), middle, high)


def _sorted_features(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each feature's window order by value (int32) and its sorted values: the stage's stumps reuse them."""
    order = np.argsort(values, axis=1, kind="stable").astype(np.int32)
    return order, np.take_along_axis(values, order, axis=1)


def _best_stump(order: np.ndarray, ordered: np.ndarray, labels: np.ndarray, weights: np.ndarray,
                chunk: int) -> tuple | None:
    """Gentle AdaBoost's stump: the feature and split of largest ``S_L^2 / W_L + S_R^2 / W_R`` (``S`` the weighted
    label sums, ``W`` the weights, over the rows of positive weight), between two distinct values; ``order`` and
    ``ordered`` are :func:`_sorted_features`'.

    Returns ``(feature row, threshold, left leaf, right leaf)`` (leaves as doubles), or None without a split."""
    best = (-np.inf, None)
    signed = weights * labels
    total_w, total_s = weights.sum(), signed.sum()
    for start in range(0, order.shape[0], chunk):
        rows, sorted_values = order[start:start + chunk], ordered[start:start + chunk]
        left_w = np.cumsum(weights[rows], axis=1)[:, :-1]
        left_s = np.cumsum(signed[rows], axis=1)[:, :-1]
        right_w, right_s = total_w - left_w, total_s - left_s
        with np.errstate(divide="ignore", invalid="ignore"):
            gain = np.where(left_w > 0, left_s ** 2 / left_w, 0.0) + np.where(right_w > 0, right_s ** 2 / right_w, 0.0)
        gain[sorted_values[:, 1:] <= sorted_values[:, :-1]] = -np.inf  # no split between equal values
        row, position = np.unravel_index(int(np.argmax(gain)), gain.shape)
        if gain[row, position] > best[0]:
            low, high = sorted_values[row, position], sorted_values[row, position + 1]
            leaves = (left_s[row, position] / left_w[row, position] if left_w[row, position] > 0 else 0.0,
                      right_s[row, position] / right_w[row, position] if right_w[row, position] > 0 else 0.0)
            best = (gain[row, position], (start + row, _split_thresholds(np.array([low]), np.array([high]))[0],
                                          *leaves))
    return best[1]


class _HaarStumps:
    """Gentle AdaBoost's stump search on Haar values: :func:`_best_stump` over each feature's sorted values."""

    def __init__(self, values: np.ndarray) -> None:
        self.order, self.ordered = _sorted_features(values)

    def best(self, labels: np.ndarray, weights: np.ndarray) -> tuple | None:
        return _best_stump(self.order, self.ordered, labels, weights, chunk=max(1, 4_000_000 // labels.size))


class _LBPStumps:
    """Gentle AdaBoost's stump search on LBP codes: the best category split of every feature
    (:func:`~bob_boost.vision._opencv_kernels.category_split_gains`), its set as OpenCV's eight int32 words."""

    def __init__(self, codes: np.ndarray) -> None:
        self.codes = codes

    def best(self, labels: np.ndarray, weights: np.ndarray) -> tuple | None:
        """``(feature row, category words, left leaf, right leaf)``, or None without a split."""
        signed = weights * labels
        gains, positions = np.empty(self.codes.shape[0]), np.empty(self.codes.shape[0], np.int64)
        category_split_gains(self.codes, weights, signed, gains, positions)
        row = int(np.argmax(gains))
        if not np.isfinite(gains[row]):
            return None
        left, left_leaf, right_leaf = category_split(self.codes[row], weights, signed, positions[row])
        return row, _words(left), left_leaf, right_leaf


def _trimmed(weights: np.ndarray, trim_rate: float) -> np.ndarray:
    """The rows the next stump fits: all but the lightest, whose summed weight first reaches ``1 - trim_rate`` of
    the total (OpenCV's weight trimming; ties with the first kept weight are kept)."""
    ordered = np.sort(weights)
    dropped = int(np.searchsorted(np.cumsum(ordered), (1.0 - trim_rate) * weights.sum(), side="left")) + 1
    if dropped >= weights.size:
        return np.ones(weights.size, bool)
    return weights >= ordered[dropped]


def _words(left: np.ndarray) -> np.ndarray:
    """The 256 booleans ``left`` (codes sent left) as OpenCV's eight int32 words (bit ``c & 31`` of word ``c >> 5``)."""
    bits = left.reshape(LBP_SUBSET_WORDS, 32).astype(np.uint64) << np.arange(32, dtype=np.uint64)
    return bits.sum(axis=1).astype(np.uint32).view(np.int32)


class _StageScores:
    """A stage's stumps and the float32-leaf scores of its windows, summed in double in order as the detector
    sums them; its threshold and whether it has reached the false-alarm target after each stump."""

    def __init__(self, labels: np.ndarray, rates: dict) -> None:
        self.positive = labels > 0
        self.count = int(np.float32(np.float32(1.0) - np.float32(rates["min_hit_rate"]))
                         * np.float32(self.positive.sum()))
        self.most = rates["max_false_alarm_rate"]
        self.score, self.stumps, self.threshold = np.zeros(labels.size), [], np.float32(0.0)

    def add(self, feature: int, split, left: float, right: float, goes_left: np.ndarray) -> bool:
        """Add a stump (``goes_left``: the windows it sends to ``left``); True once the stage's false-alarm rate
        at its threshold is at most the target."""
        stump = (int(feature), split if np.ndim(split) else np.float32(split), np.float32(left), np.float32(right))
        self.stumps.append(stump)
        self.score += np.where(goes_left, np.float64(stump[2]), np.float64(stump[3]))
        self.threshold = np.sort(self.score[self.positive].astype(np.float32))[self.count]
        return bool(np.mean(passes(self.score[~self.positive], self.threshold)) <= self.most)


def gentle_stage(values: np.ndarray, lbp: bool, labels: np.ndarray, chosen: np.ndarray, rates: dict,
                 weak_count: int) -> tuple[list[tuple], np.float32]:
    """One stage boosted by Gentle AdaBoost until its false-alarm rate is at most the most allowed.

    Parameters
    ----------
    values : numpy.ndarray
        (#chosen, #windows) float32 Haar values, or uint8 LBP codes for ``lbp``.
    lbp : bool
        Whether ``values`` are LBP codes (split by sets) rather than Haar values (split by thresholds).
    labels : numpy.ndarray
        (#windows,) +1 for the positives, -1 for the negatives.
    chosen : numpy.ndarray
        Each row's feature in the run's pool.
    rates : dict
        ``min_hit_rate``, ``max_false_alarm_rate`` and ``weight_trim_rate``.
    weak_count : int
        The most stumps.

    Returns
    -------
    tuple
        The stumps ``(feature, split, left, right)`` (pool index; a float32 Haar threshold or LBP's eight int32
        category words; float32 leaves) and the float32 stage threshold.
    """
    search = _LBPStumps(values) if lbp else _HaarStumps(values)
    weights = np.full(labels.size, 1.0 / labels.size)
    active = np.ones(labels.size, bool)
    stage = _StageScores(labels, rates)
    for _ in range(weak_count):
        found = search.best(labels, np.where(active, weights, 0.0))
        if found is None:
            break
        row, split, left, right = found
        goes_left = stump_sides(values[row], split)
        weights = weights * np.exp(-labels * np.where(goes_left, left, right))
        weights /= weights.sum()
        active = _trimmed(weights, rates["weight_trim_rate"])
        if stage.add(chosen[row], split, left, right, goes_left):
            break
    return stage.stumps, stage.threshold


class RankedValues:
    """The stage's feature values as uint8 ranks, the pool a :class:`~bob_boost.vision.stages.StageLearner` boosts
    on: each feature's distinct values in order, cut into at most 256 runs of about equal numbers of distinct
    values (equal values always share a rank).

    Attributes
    ----------
    codes : numpy.ndarray
        (#windows, #features) uint8 ranks (a transposed view of a feature-major array).
    """

    def __init__(self, values: np.ndarray) -> None:
        ranks = np.empty(values.shape, np.uint8)
        self._top = np.empty(values.shape[0], np.int64)
        for start in range(0, values.shape[0], _RANK_CHUNK):
            part = values[start:start + _RANK_CHUNK]
            order = np.argsort(part, axis=1, kind="stable")
            ordered = np.take_along_axis(part, order, axis=1)
            dense = np.zeros(ordered.shape, np.int64)
            dense[:, 1:] = np.cumsum(ordered[:, 1:] != ordered[:, :-1], axis=1)
            distinct = dense[:, -1:] + 1
            coded = np.where(distinct > 256, dense * 256 // np.maximum(distinct, 1), dense)
            np.put_along_axis(ranks[start:start + _RANK_CHUNK], order, coded.astype(np.uint8), axis=1)
            self._top[start:start + _RANK_CHUNK] = coded[:, -1]
        self.codes = ranks.T

    def binned(self) -> BinnedFeatures:
        """The ranks as the engine's bins (each rank its own bin), as :meth:`QuantizedPool.binned
        <bob_boost.vision.pool.QuantizedPool.binned>` gives a quantised pool's."""
        return BinnedFeatures.from_codes(self.codes.T, [np.arange(k) + 0.5 for k in self._top], None)


def _value_split(values: np.ndarray, above: np.ndarray, lbp: bool):
    """The split that sends the windows ``~above`` left and ``above`` right by their values (a row of the stage's
    values): a float32 threshold between the two sides, or (LBP) the words of the codes up to the left side's
    largest."""
    if lbp:
        largest = int(values[~above].max()) if (~above).any() else -1
        return _words(np.arange(256) <= largest)
    if not above.any():
        return np.nextafter(values.max(), np.float32(np.inf))
    if above.all():
        return values.min()
    return _split_thresholds(np.array([values[~above].max()]), np.array([values[above].min()]))[0]


def learned_stage(values: np.ndarray, lbp: bool, labels: np.ndarray, chosen: np.ndarray, rates: dict,
                  weak_count: int, learner) -> tuple[list[tuple], np.float32]:
    """One stage as :func:`gentle_stage` returns it, boosted by the stage learner ``learner`` on the values' ranks
    (:class:`RankedValues`): each of its stumps becomes the value split that sends the stage's windows as the stump
    sends their ranks, with the stump's weighted outputs below and above its threshold as the leaves.

    Parameters
    ----------
    values, lbp, labels, chosen, rates, weak_count
        As :func:`gentle_stage`'s (``weight_trim_rate`` unused).
    learner : StageLearner
        Its ``fit(pool, labels, max_rounds, callback)`` boosts the stumps (:mod:`bob_boost.vision.stages`).

    Returns
    -------
    tuple
        As :func:`gentle_stage`'s.

    Raises
    ------
    TypeError
        When the learner's weak machines are not threshold stumps.
    """
    ranked = RankedValues(values)
    stage = _StageScores(labels, rates)

    def reached(round_index: int, machine: BoostedMachine, scores: np.ndarray) -> bool:
        weak, weight = machine.weak_machines[-1], float(np.ravel(machine.weights[-1])[0])
        if type(weak) is not StumpMachine or weak.categories is not None:
            raise InvalidTypeError(f"stage_learner: stages are threshold stumps, got a {type(weak).__name__}")
        above = ranked.codes[:, weak.index] >= weak.threshold
        split = _value_split(values[weak.index], above, lbp)
        return stage.add(chosen[weak.index], split, -weak.polarity * weight, weak.polarity * weight,
                         stump_sides(values[weak.index], split))

    machine = learner.fit(ranked, labels, weak_count, reached)
    if machine.number_of_outputs not in (None, 1):
        raise InvalidValueError(f"stage_learner: returned a machine with {machine.number_of_outputs} outputs")
    return stage.stumps, stage.threshold
