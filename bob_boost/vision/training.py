"""Training an attentional cascade (Viola and Jones, 2001, section 4).

Stage after stage:

1. the training faces (and held-out faces) that every earlier stage accepts are kept;
2. negatives are *bootstrapped*: windows of the face-free images (at every position, ``mining_step``
   pixels apart, on a pyramid of each image) and the given non-face windows that the cascade so far still
   accepts, drawn at random; the fraction of scanned windows it accepts is the cascade's false-positive
   rate on those images;
3. every feature of the pool is computed and quantised on the stage's windows
   (:class:`~bob_boost.vision.pool.QuantizedPool`), and the stage learner boosts stumps on the codes;
   after each round the stage threshold is moved down until the held-out faces reach
   ``detection_rate``, and the stage stops once the held-out negatives' false-positive rate at that
   threshold is at most ``false_positive_rate``;
4. training stops when the product of the stages' false-positive rates reaches
   ``target_false_positive_rate``, after ``max_stages``, or when no negative window is left.
"""
from __future__ import annotations

import logging
import math
import numbers
import time

import numpy as np
from scipy import ndimage

from .._validation import check_positive_int, check_scalar
from ..engine.threads import check_threads
from ..exceptions import InvalidTypeError, InvalidValueError
from ..machine import BoostedMachine
from ..weak.stump import StumpMachine
from .cascade import Cascade
from .detector import scan_positions, window_grid
from .haar import HaarFeatures, check_windows
from .integral import as_gray_image, integral_image
from .pool import QuantizedPool
from .stages import AdaBoostStage, StageLearner

logger = logging.getLogger(__name__)

#: Ratio between the levels of the pyramid negatives are mined from.
PYRAMID_FACTOR = 1.25

#: A stage needs at least this many held-out negatives to measure its false-positive rate.
MIN_NEGATIVES = 10


class _NegativeSource:
    """Windows of face-free images (on a pyramid) and given non-face windows, mined for hard negatives.

    Every window starts alive; after each stage, :meth:`keep_accepted` runs that stage alone on the windows
    still alive, so mining costs one stage per stage rather than the whole cascade.
    """

    def __init__(self, images, windows, window_size: tuple[int, int], step: int) -> None:
        self.window_size = window_size
        self.levels, self.alive = [], []
        for i, image in enumerate(images):
            gray = as_gray_image(image, f"negative_images[{i}]", window_size)
            while gray.shape[0] >= window_size[0] and gray.shape[1] >= window_size[1]:
                self.levels.append((gray, integral_image(gray), integral_image(gray * gray)))
                self.alive.append(window_grid(gray.shape, 1.0, window_size, float(step)))
                gray = ndimage.zoom(gray, 1.0 / PYRAMID_FACTOR, order=1)
        self.windows = (np.empty((0,) + window_size) if windows is None
                        else check_windows(windows, window_size, "negative_windows"))
        self.alive_given = np.arange(self.windows.shape[0])
        self.scanned = sum(tops.size for tops, _ in self.alive) + self.windows.shape[0]

    @property
    def found(self) -> int:
        """Windows every stage so far accepts."""
        return sum(tops.size for tops, _ in self.alive) + self.alive_given.size

    def keep_accepted(self, stage: Cascade, n_threads: int) -> None:
        """Keep only the alive windows that ``stage`` (a one-stage cascade) accepts."""
        flat = stage.flat()
        for k, (_, integral, squared) in enumerate(self.levels):
            tops, lefts = self.alive[k]
            passed, _, _ = scan_positions(stage, integral, squared, 1.0, tops, lefts, n_threads, flat)
            self.alive[k] = (tops[passed == 1], lefts[passed == 1])
        if self.alive_given.size:
            self.alive_given = self.alive_given[stage.accepts(self.windows[self.alive_given])]

    def draw(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` alive windows (or all there are) drawn without replacement, in random order."""
        sizes = np.array([tops.size for tops, _ in self.alive] + [self.alive_given.size], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)])
        picks = np.sort(rng.choice(int(starts[-1]), size=min(count, int(starts[-1])), replace=False))
        height, width = self.window_size
        out = np.empty((picks.size, height, width))
        for k, pick in enumerate(picks):
            level = int(np.searchsorted(starts, pick, side="right") - 1)
            offset = int(pick - starts[level])
            if level == len(self.alive):
                out[k] = self.windows[self.alive_given[offset]]
                continue
            top, left = self.alive[level][0][offset], self.alive[level][1][offset]
            out[k] = self.levels[level][0][top:top + height, left:left + width]
        return out[rng.permutation(picks.size)]


def _stage_threshold(scores: np.ndarray, detection_rate: float) -> float:
    """The largest threshold that keeps at least ``detection_rate`` of the held-out faces' ``scores``."""
    ordered = np.sort(scores)
    misses = int(math.floor((1.0 - detection_rate) * ordered.size + 1e-9))
    return float(ordered[misses])


def _to_values(machine: BoostedMachine, pool: QuantizedPool, drawn: np.ndarray,
               table: dict[int, int]) -> BoostedMachine:
    """The stage over feature values: each code-threshold stump as the equivalent value-threshold stump.

    ``pool`` holds the features ``drawn`` from the whole pool; ``table`` maps whole-pool features to the
    cascade's compact feature indices and grows with new features.
    """
    if machine.number_of_outputs not in (None, 1):
        raise InvalidValueError(f"stage_learner: returned a machine with {machine.number_of_outputs} outputs")
    out = BoostedMachine(number_of_outputs=1, baseline=machine.baseline, metadata=dict(machine.metadata))
    for weak, weight in zip(machine.weak_machines, machine.weights):
        if type(weak) is not StumpMachine:
            raise InvalidTypeError(f"stage_learner: stages are decision stumps, got a {type(weak).__name__}")
        index = table.setdefault(int(drawn[weak.index]), len(table))
        out.add_weak_machine(StumpMachine(pool.value_threshold(weak.index, weak.threshold), weak.polarity, index),
                             weight)
    return out


def _grow_stage(stage_learner: StageLearner, pool: QuantizedPool, labels: np.ndarray, n_val_faces: int,
                max_rounds: int, detection_rate: float, false_positive_rate: float) -> tuple[BoostedMachine, dict]:
    """Boost one stage until its held-out false-positive rate at the detection-rate threshold is low enough.

    ``pool.other_codes`` holds the held-out faces (first ``n_val_faces`` rows), then the held-out negatives.
    Returns the stage in code space and its last threshold and rates (empty if no round ran).
    """
    progress: dict[str, float] = {}

    def reached(round_index: int, machine: BoostedMachine, scores: np.ndarray) -> bool:
        held_out = machine.decision_scores(pool.other_codes)[:, 0]
        threshold = _stage_threshold(held_out[:n_val_faces], detection_rate)
        progress.update(threshold=threshold, rounds=len(machine),
                        detection=float(np.mean(held_out[:n_val_faces] >= threshold)),
                        false_positives=float(np.mean(held_out[n_val_faces:] >= threshold)))
        return progress["false_positives"] <= false_positive_rate

    return stage_learner.fit(pool, labels, max_rounds, reached), progress


def _check_rate(value, name: str, low_open: bool = True) -> float:
    return float(check_scalar(value, name, numbers.Real, min_val=0, max_val=1,
                              include_boundaries="right" if low_open else "both"))


def train_cascade(faces, negative_images=(), negative_windows=None, *, features: HaarFeatures | None = None,
                  stage_learner: StageLearner | None = None, groups=None, detection_rate: float = 0.995,
                  false_positive_rate: float = 0.5, target_false_positive_rate: float = 1e-3,
                  max_stages: int = 20, max_rounds: int = 100, negatives: int | None = None,
                  validation_fraction: float = 0.3, mining_step: int = 2, max_bins: int = 256,
                  features_per_stage: int | None = None, random_state: int | None = 0,
                  n_threads: int | None = None) -> Cascade:
    """Train a cascade of boosted stump stages on face windows and face-free images.

    Parameters
    ----------
    faces : array_like
        (N, h, w) face windows of the base window size (grey; augment them beforehand).
    negative_images : sequence of array_like
        Face-free grey or RGB images, mined for negatives at every position and pyramid level.
    negative_windows : array_like, optional
        (M, h, w) non-face windows, mined with the images.
    features : HaarFeatures, optional
        The feature pool (default: :meth:`HaarFeatures.all` of the faces' window size).
    stage_learner : StageLearner, optional
        Grows each stage (default :class:`~bob_boost.vision.stages.AdaBoostStage`).
    groups : array_like, optional
        (N,) group of each face (the augmented copies of one photograph): a group is held out whole.
    detection_rate, false_positive_rate : float
        Each stage's targets on the held-out windows, in (0, 1].
    target_false_positive_rate : float
        Training stops when the product of the stages' false-positive rates reaches it.
    max_stages, max_rounds : int
        At most this many stages, and stumps per stage.
    negatives : int, optional
        Training negatives per stage (default: as many as training faces).
    validation_fraction : float
        Fraction of the faces (of the groups) held out to place the stage thresholds, in (0, 1); as many
        negatives are drawn in the same proportion.
    mining_step : int
        Pixels between the windows mined from the images.
    max_bins : int
        Bins per feature of the quantised pool (2 .. 256).
    features_per_stage : int, optional
        Each stage searches this many features drawn at random from the pool (default: the whole pool);
        training time falls in proportion, and different stages see different features.
    random_state : int or None
        Seed of the held-out split and of the negatives drawn.
    n_threads : int or None
        Threads (None: every core); the cascade does not depend on it.

    Returns
    -------
    Cascade
        The cascade; ``cascade.metadata["stages"]`` reports each stage (rounds, threshold, held-out
        detection and false-positive rates, the false-positive rate of the cascade before it on the
        mined windows, the features searched and the bytes of their codes, seconds).
    """
    stage_learner = AdaBoostStage(n_threads) if stage_learner is None else stage_learner
    if not callable(getattr(stage_learner, "fit", None)):
        raise InvalidTypeError(f"stage_learner: needs a fit(pool, labels, max_rounds, callback) method, got "
                               f"{type(stage_learner).__name__}")
    positives = np.asarray(faces)
    if positives.ndim != 3:
        raise InvalidValueError(f"faces: expected (N, height, width) windows, got shape {positives.shape}")
    window_size = positives.shape[1:]
    features = HaarFeatures.all(window_size) if features is None else features
    if not isinstance(features, HaarFeatures) or features.window_size != window_size:
        raise InvalidValueError(f"features: expected HaarFeatures of the faces' {window_size[0]}x{window_size[1]} "
                                f"window")
    positives = check_windows(positives, window_size, "faces")
    detection_rate = _check_rate(detection_rate, "detection_rate")
    false_positive_rate = _check_rate(false_positive_rate, "false_positive_rate")
    target = _check_rate(target_false_positive_rate, "target_false_positive_rate")
    max_stages = check_positive_int(max_stages, "max_stages")
    max_rounds = check_positive_int(max_rounds, "max_rounds")
    fraction = float(check_scalar(validation_fraction, "validation_fraction", numbers.Real, min_val=0, max_val=1,
                                  include_boundaries="neither"))
    mining_step = check_positive_int(mining_step, "mining_step")
    per_stage = len(features) if features_per_stage is None else min(
        check_positive_int(features_per_stage, "features_per_stage"), len(features))
    n_threads = check_threads(n_threads)
    groups = np.arange(positives.shape[0]) if groups is None else np.asarray(groups)
    if groups.shape != (positives.shape[0],):
        raise InvalidValueError(f"groups: expected one group per face ({positives.shape[0]}), got shape {groups.shape}")
    rng = np.random.default_rng(random_state)
    names = np.unique(groups)
    held = rng.permutation(names)[:max(1, int(round(fraction * names.size)))]
    validation = np.isin(groups, held)
    if validation.all():
        raise InvalidValueError("validation_fraction: leaves no face for training")
    train_faces, val_faces = positives[~validation], positives[validation]
    n_negatives = train_faces.shape[0] if negatives is None else check_positive_int(negatives, "negatives")
    n_val_negatives = max(MIN_NEGATIVES, int(round(n_negatives * val_faces.shape[0] / train_faces.shape[0])))
    source = _NegativeSource(negative_images, negative_windows, window_size, mining_step)
    cascade = Cascade(HaarFeatures(np.empty((0, 5), dtype=np.int64), window_size))
    chosen: dict[int, int] = {}
    report, overall = [], 1.0
    for stage in range(max_stages):
        started = time.perf_counter()
        if len(cascade):
            train_faces = train_faces[cascade.accepts(train_faces)]
            val_faces = val_faces[cascade.accepts(val_faces)]
        found = source.found
        if found < n_val_negatives + MIN_NEGATIVES or train_faces.shape[0] == 0 or val_faces.shape[0] == 0:
            logger.info("stage %d: %d negative windows left, %d training and %d held-out faces; stopping",
                        stage + 1, found, train_faces.shape[0], val_faces.shape[0])
            break
        mined = source.draw(n_negatives + n_val_negatives, rng)
        val_negatives, train_negatives = mined[:n_val_negatives], mined[n_val_negatives:]
        drawn = (np.arange(len(features)) if per_stage == len(features)
                 else np.sort(rng.choice(len(features), size=per_stage, replace=False)))
        pool = QuantizedPool(features.subset(drawn), np.concatenate([train_faces, train_negatives]),
                             np.concatenate([val_faces, val_negatives]), max_bins, n_threads)
        labels = np.concatenate([np.ones(train_faces.shape[0]), -np.ones(train_negatives.shape[0])])
        machine, progress = _grow_stage(stage_learner, pool, labels, val_faces.shape[0], max_rounds,
                                        detection_rate, false_positive_rate)
        if not progress:  # the learner added nothing
            logger.info("stage %d: the stage learner added no weak machine; stopping", stage + 1)
            break
        values = _to_values(machine, pool, drawn, chosen)
        cascade.features = features.subset(sorted(chosen, key=chosen.get))
        cascade.add_stage(values, progress["threshold"])
        source.keep_accepted(Cascade(cascade.features, [cascade.stages[-1]]), n_threads)
        overall *= progress["false_positives"]
        report.append({"stage": stage + 1, "rounds": int(progress["rounds"]), "threshold": progress["threshold"],
                       "detection_rate": progress["detection"], "false_positive_rate": progress["false_positives"],
                       "training_faces": int(train_faces.shape[0]), "training_negatives": int(train_negatives.shape[0]),
                       "features_searched": len(drawn), "pool_bytes": int(pool.nbytes),
                       "cascade_false_positive_rate": found / source.scanned, "windows_mined": source.scanned,
                       "seconds": time.perf_counter() - started})
        logger.info("stage %d: %d stumps, held-out detection %.4f, false positives %.4f (cascade so far accepted "
                    "%d of %d mined windows), %.1f s", stage + 1, progress["rounds"], progress["detection"],
                    progress["false_positives"], found, source.scanned, report[-1]["seconds"])
        if overall <= target:
            break
    cascade.metadata = {"stages": report, "detection_rate": detection_rate,
                        "false_positive_rate": false_positive_rate,
                        "target_false_positive_rate": target, "estimated_false_positive_rate": overall,
                        "pool_features": len(features), "random_state": random_state}
    return cascade
