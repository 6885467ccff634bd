"""Training Haar and LBP cascades in OpenCV's own feature values, so that OpenCV 4 runs them as bob_boost does.

The features are those ``opencv_traincascade`` enumerates, and every value is computed as OpenCV's CPU detector
computes it at a window (:mod:`bob_boost.vision.opencv_features`); Haar windows the detector rejects as flat are
never samples. Each stage boosts stumps by Gentle AdaBoost, as
``opencv_traincascade -bt GAB`` does (leaves the weighted means of the +-1 labels, weights times
``exp(-y f)``, the lightest 5% of the weight trimmed from each fit), its threshold is the positive score at
OpenCV's index ``int((1 - minHitRate) numPos)``, and it stops adding stumps at a false-alarm rate of at most
``max_false_alarm_rate`` (or ``max_weak_count`` stumps). A Haar split's threshold lies strictly between the
values it separates and is compared as the detector compares it (``value < threshold`` goes left). An LBP split
sends a set of the 256 codes left, as OpenCV's boosted trees split a category: the codes ordered by their
weighted mean label (a code no window holds counts as mean 0), the best cut of that order by the same score
``S_L^2 / W_L + S_R^2 / W_R``, the codes before it in the set (the detector's set bit). The leaves are float32,
the stage scores their double sums in order, and a window passes a stage at a score of at least
``float32(threshold - 1e-5)``: the training's decisions are the detector's, window for window. The next stage
trains on the negatives and positives that every stage so far accepts. Instead of Gentle AdaBoost, any bob_boost
stage learner (discrete AdaBoost, AdaBoostDB, Cost-Sensitive AdaBoost) can boost the stages
(:func:`~bob_boost.vision.opencv_stages.learned_stage`), with the same thresholds and decisions.

Differences from ``opencv_traincascade``: each stage searches a random sample of ``features_per_stage``
features (OpenCV searches all of them, 162,336 for a 24 x 24 BASIC window, through a value cache), drawn from
``random_state`` and the stage's number; every stage takes the first negatives that the stages so far accept,
as if it read the source from the start (OpenCV's reader goes on where the last stage stopped), so that a stage
depends only on the stages before it and a resumed run gives the uninterrupted run's cascade (OpenCV's does
not).
"""
from __future__ import annotations

import logging
import numbers
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np

from .._validation import check_positive_int, check_scalar
from ..exceptions import InvalidTypeError, InvalidValueError
from .opencv_features import (MODES, check_windows, haar_features, haar_values, lbp_codes, lbp_features,
                              window_decisions)
from .opencv_stages import gentle_stage, learned_stage
from .opencv_xml import LBP_SUBSET_WORDS, OpenCVCascade

__all__ = ["train_opencv_cascade"]

logger = logging.getLogger(__name__)

#: Background windows judged at once when picking a stage's negatives.
_BATCH = 4096

#: The features trained (``-featureType``).
FEATURE_TYPES = ("HAAR", "LBP")


@dataclass(frozen=True)
class _Pool:
    """The features a run draws from: their type, and their ``rects``, ``weights`` and ``tilted`` as
    :class:`~bob_boost.vision.opencv_xml.OpenCVCascade` holds them."""

    kind: str
    rects: np.ndarray
    weights: np.ndarray
    tilted: np.ndarray

    @classmethod
    def of(cls, kind: str, width: int, height: int, mode: str) -> "_Pool":
        return cls(kind, *(lbp_features(width, height) if kind == "LBP" else haar_features(width, height, mode)))

    @property
    def size(self) -> int:
        return int(self.rects.shape[0])

    def values(self, windows: np.ndarray, chosen: np.ndarray) -> np.ndarray:
        """The ``chosen`` features' values at the windows: (#chosen, #windows) float32 Haar values or uint8 LBP
        codes."""
        if self.kind == "LBP":
            return lbp_codes(windows, self.rects[chosen])
        return haar_values(windows, self.rects[chosen], self.weights[chosen], self.tilted[chosen])[0]


def _cascade_decisions(windows: np.ndarray, pool: _Pool, stages: list[tuple]) -> np.ndarray:
    """Whether every stage accepts each window, as the detector decides (:func:`window_decisions`): flat Haar
    windows never pass, before the first stage either, so that they are never samples."""
    if windows.shape[0] == 0:
        return np.zeros(0, bool)
    return window_decisions(_cascade(pool, stages, windows.shape[2], windows.shape[1]), windows)


def train_opencv_cascade(positives, negatives, number_of_stages: int = 20, min_hit_rate: float = 0.995,
                         max_false_alarm_rate: float = 0.5, max_weak_count: int = 100, mode: str = "BASIC",
                         num_pos: int | None = None, num_neg: int | None = None, features_per_stage: int = 8000,
                         weight_trim_rate: float = 0.95, random_state: int = 0, initial: OpenCVCascade | None = None,
                         on_stage: Callable[[OpenCVCascade], None] | None = None,
                         feature_type: str = "HAAR", stage_learner=None) -> OpenCVCascade:
    """Train a Haar or LBP cascade of stumps stage by stage (see the module's description).

    Parameters
    ----------
    positives : array_like
        (#positives, h, w) uint8 object windows; the window is ``w`` x ``h``.
    negatives : array_like or callable
        Background windows: every stage takes the first ``num_neg``, in the source's order, that the stages so
        far accept (so that a stage depends only on the ones before it). A (#negatives, h, w) uint8 array, or a
        callable returning an iterator over such windows or batches of them, e.g.
        :func:`~bob_boost.vision.opencv_sources.background_windows`.
    number_of_stages : int
        The most stages (``-numStages``); training ends earlier when too few negatives pass.
    min_hit_rate, max_false_alarm_rate : float
        Each stage's least share of positives kept and most share of negatives passed (``-minHitRate``,
        ``-maxFalseAlarmRate``), in (0, 1].
    max_weak_count : int
        The most stumps a stage (``-maxWeakCount``).
    mode : {"BASIC", "CORE", "ALL"}
        The Haar feature set (``-mode``); LBP features have one set.
    num_pos, num_neg : int, optional
        Positives and negatives per stage (``-numPos``, ``-numNeg``); default all positives and as many
        negatives as positives.
    features_per_stage : int
        Features drawn (without replacement) for each stage's search, from ``random_state`` and the stage's
        number.
    weight_trim_rate : float
        In (0, 1]: the share of the weight the stumps are fitted to (``-weightTrimRate``).
    random_state : int
        Seed of the feature draws (a non-negative int).
    initial : OpenCVCascade, optional
        Stages already trained with these settings (a resumed run): training continues after them, and gives
        the cascade an uninterrupted run gives.
    on_stage : callable, optional
        ``on_stage(cascade)`` after every stage with the cascade so far (e.g. to save it).
    feature_type : {"HAAR", "LBP"}
        Haar features (values normalised by the window's spread) or multi-block LBP codes (``-featureType``).
    stage_learner : StageLearner, optional
        None: Gentle AdaBoost as OpenCV's (above). Else a :class:`~bob_boost.vision.stages.StageLearner`
        (:class:`~bob_boost.vision.stages.AdaBoostStage`, :class:`~bob_boost.vision.stages.AdaBoostDBStage`,
        :class:`~bob_boost.vision.stages.CostSensitiveAdaBoostStage`) that boosts each stage's stumps on the
        values' ranks (:func:`~bob_boost.vision.opencv_stages.learned_stage`; ``weight_trim_rate`` unused),
        with the same stage thresholds and stopping rule.

    Returns
    -------
    OpenCVCascade
        The cascade, for :func:`~bob_boost.vision.opencv_write.write_opencv_cascade` and
        :class:`~bob_boost.vision.opencv.CascadeClassifier`.

    Raises
    ------
    ValueError
        For windows of the wrong shape or type, rates outside (0, 1], counts below 1, an unknown feature type or
        mode, and an ``initial`` cascade of other features or window, naming the argument.
    TypeError
        For a ``stage_learner`` without a ``fit`` method.
    """
    positives = check_windows(positives, "positives", None)
    height, width = positives.shape[1:]
    source = negatives if callable(negatives) else _array_source(check_windows(negatives, "negatives",
                                                                                (height, width)))
    rates = {name: float(check_scalar(value, name, numbers.Real, min_val=0, max_val=1, include_boundaries="right"))
             for name, value in (("min_hit_rate", min_hit_rate), ("max_false_alarm_rate", max_false_alarm_rate),
                                 ("weight_trim_rate", weight_trim_rate))}
    stages_wanted = check_positive_int(number_of_stages, "number_of_stages")
    weak_count = check_positive_int(max_weak_count, "max_weak_count")
    pos_count = positives.shape[0] if num_pos is None else check_positive_int(num_pos, "num_pos")
    neg_count = pos_count if num_neg is None else check_positive_int(num_neg, "num_neg")
    draws = check_positive_int(features_per_stage, "features_per_stage")
    seed = int(check_scalar(random_state, "random_state", numbers.Integral, min_val=0))
    if feature_type not in FEATURE_TYPES:
        raise InvalidValueError(f"feature_type: must be one of {FEATURE_TYPES}, got {feature_type!r}")
    if mode not in MODES:
        raise InvalidValueError(f"mode: must be one of {MODES}, got {mode!r}")
    if stage_learner is not None and not callable(getattr(stage_learner, "fit", None)):
        raise InvalidTypeError(f"stage_learner: needs a fit(pool, labels, max_rounds, callback) method, got "
                               f"{type(stage_learner).__name__}")
    pool = _Pool.of(feature_type, width, height, mode)
    stages = [] if initial is None else _stages_of(initial, pool, width, height)
    background = _Negatives(source, (height, width))
    for stage in range(len(stages), stages_wanted):
        kept_pos = positives[_cascade_decisions(positives, pool, stages)][:pos_count]
        kept_neg = background.passing(pool, stages, neg_count)
        if kept_pos.shape[0] == 0 or kept_neg.shape[0] == 0:
            logger.info("stage %d: %d positives and %d negatives pass; stopping", stage, kept_pos.shape[0],
                        kept_neg.shape[0])
            break
        rng = np.random.default_rng([seed, stage])
        chosen = np.sort(rng.choice(pool.size, min(draws, pool.size), replace=False))
        windows = np.concatenate([kept_pos, kept_neg])
        values = pool.values(windows, chosen)  # no flat Haar window: see above
        labels = np.where(np.arange(windows.shape[0]) < kept_pos.shape[0], 1.0, -1.0)
        lbp = pool.kind == "LBP"
        stage_stumps, threshold = (gentle_stage(values, lbp, labels, chosen, rates, weak_count)
                                   if stage_learner is None else
                                   learned_stage(values, lbp, labels, chosen, rates, weak_count, stage_learner))
        if not stage_stumps:
            logger.info("stage %d: no stump separates the windows; stopping", stage)
            break
        stages.append((threshold, stage_stumps))
        logger.info("stage %d: %d stumps on %d positives and %d negatives (%d features searched)", stage,
                    len(stage_stumps), int(np.sum(labels > 0)), int(np.sum(labels < 0)), chosen.size)
        if on_stage is not None:
            on_stage(_cascade(pool, stages, width, height))
    return _cascade(pool, stages, width, height)


def _array_source(windows: np.ndarray) -> Callable[[], Iterator[np.ndarray]]:
    """An array of windows as a source of batches read from the start."""
    return lambda: (windows[start:start + _BATCH] for start in range(0, windows.shape[0], _BATCH))


class _Negatives:
    """A run's background windows: the source read once, keeping every window all stages so far accept.

    The first ``count`` windows of the source that the cascade accepts are the first ``count`` of these
    survivors (each stage only removes some), read further when too few are left: the same windows as reading
    the source from the start at every stage, with each window judged by each stage once.
    """

    def __init__(self, source: Callable[[], Iterator], size: tuple[int, int]) -> None:
        self._batches = iter(source())
        self._size = size
        self._survivors = np.empty((0, *size), np.uint8)
        self._judged = 0  # the stages the survivors passed

    def passing(self, pool: _Pool, stages: list[tuple], count: int) -> np.ndarray:
        """The first ``count`` windows of the source that every stage accepts (fewer when it runs out)."""
        self._survivors = self._survivors[_cascade_decisions(self._survivors, pool, stages[self._judged:])]
        self._judged = len(stages)
        pending: list[np.ndarray] = []
        while self._survivors.shape[0] < count:
            for item in self._batches:
                pending.append(check_windows(item if np.ndim(item) == 3 else np.asarray(item)[np.newaxis],
                                             "negatives", self._size))
                if sum(part.shape[0] for part in pending) >= _BATCH:
                    break
            if not pending:
                break
            batch = np.concatenate(pending)
            pending = []
            self._survivors = np.concatenate([self._survivors, batch[_cascade_decisions(batch, pool, stages)]])
        return self._survivors[:count]


def _stages_of(cascade: OpenCVCascade, pool: _Pool, width: int, height: int) -> list[tuple]:
    """A trained cascade's stages as :func:`train_opencv_cascade` keeps them (its features' indices in the
    pool)."""
    if cascade.feature_type != pool.kind or (cascade.width, cascade.height) != (width, height) or \
            not np.all(np.diff(cascade.weak_nodes) == 1):
        raise InvalidValueError(f"initial: a {width}x{height} {pool.kind} cascade of stumps resumes this training, "
                                f"got a {cascade.width}x{cascade.height} {cascade.feature_type} cascade")
    rects, weights, tilted = pool.rects, pool.weights, pool.tilted
    key = {(r.tobytes(), w.tobytes(), bool(t)): index
           for index, (r, w, t) in enumerate(zip(rects, weights.astype(np.float64), tilted))}
    try:
        table = [key[(r.astype(np.int32).tobytes(), w.astype(np.float64).tobytes(), bool(t))]
                 for r, w, t in zip(cascade.rects, cascade.rect_weights, cascade.tilted)]
    except KeyError:
        raise InvalidValueError("initial: the cascade has features outside this mode's set") from None
    subsets = cascade.node_subset.reshape(-1, LBP_SUBSET_WORDS).astype(np.int32)
    stages = []
    for stage in range(cascade.number_of_stages):
        first, last = int(cascade.stage_weak[stage]), int(cascade.stage_weak[stage + 1])
        stumps = [(table[int(cascade.node_feature[w])],
                   subsets[w] if pool.kind == "LBP" else np.float32(cascade.node_threshold[w]),
                   np.float32(cascade.leaves[cascade.weak_leaves[w]]),
                   np.float32(cascade.leaves[cascade.weak_leaves[w] + 1])) for w in range(first, last)]
        stages.append((np.float32(cascade.stage_thresholds[stage]), stumps))
    return stages


def _cascade(pool: _Pool, stages: list[tuple], width: int, height: int) -> OpenCVCascade:
    """The :class:`OpenCVCascade` of the trained stages, its features the used ones in ascending order (as
    ``opencv_traincascade`` numbers them in ``cascade.xml``)."""
    rects, weights, tilted = pool.rects, pool.weights, pool.tilted
    lbp = pool.kind == "LBP"
    used = sorted({stump[0] for _, stumps in stages for stump in stumps})
    index = {feature: position for position, feature in enumerate(used)}
    stumps = [stump for _, stage_stumps in stages for stump in stage_stumps]
    counts = [len(stage_stumps) for _, stage_stumps in stages]
    n = len(stumps)
    return OpenCVCascade(
        feature_type=pool.kind, width=width, height=height,
        stage_thresholds=np.array([float(threshold) for threshold, _ in stages]),
        stage_weak=np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
        weak_nodes=np.arange(n + 1, dtype=np.int64), weak_leaves=np.arange(0, 2 * n + 1, 2, dtype=np.int64),
        node_left=np.zeros(n, np.int32), node_right=np.full(n, -1, np.int32),
        node_feature=np.array([index[stump[0]] for stump in stumps], np.int32),
        node_threshold=np.zeros(n) if lbp else np.array([float(stump[1]) for stump in stumps]),
        node_subset=(np.array([stump[1] for stump in stumps], np.int32).reshape(n, LBP_SUBSET_WORDS) if lbp
                     else np.zeros((0, LBP_SUBSET_WORDS), np.int32)),
        leaves=np.array([float(leaf) for stump in stumps for leaf in stump[2:]]),
        rects=rects[used].astype(np.int32), rect_weights=weights[used].astype(np.float64),
        tilted=tilted[used].astype(bool))


