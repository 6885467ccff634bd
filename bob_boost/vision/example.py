"""The example cascade of ``bob-boost example faces``: trained in seconds on scikit-image's bundled data.

70 of the 100 LFW faces (every 24x24 crop of the 25x25 windows turned by -8, 0 and 8 degrees, and their
mirror images) are the positives; the other 30 are held out for evaluation. Negatives are mined from the
100 non-face LFW windows and the face-free images of :data:`bob_boost.vision.data.NEGATIVE_IMAGES`;
``astronaut`` and ``grass`` are never seen in training. The pool is every feature of the chapter's four
masks (134,736); each stage searches 10,000 of them drawn at random, which keeps training within a
minute on two cores. Negatives are mined at every position (``mining_step=1``) of every pyramid level.
"""
from __future__ import annotations

import numpy as np

from . import data
from .cascade import Cascade
from .haar import HaarFeatures
from .training import train_cascade

#: LFW faces used for training (the others are held out).
TRAINING_FACES = 70

#: Rotations (degrees) of the training faces, before their crops and mirror images.
ANGLES = (-8.0, 0.0, 8.0)

#: The example's training settings (the rest are :func:`train_cascade`'s defaults).
EXAMPLE_SETTINGS = {"stride": 1, "features_per_stage": 10000, "max_bins": 64, "max_rounds": 100,
                    "max_stages": 25, "detection_rate": 0.99, "target_false_positive_rate": 1e-6, "mining_step": 1,
                    "random_state": 0}


def face_split(random_state: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the LFW faces for training and of those held out."""
    order = np.random.default_rng(random_state).permutation(100)
    return np.sort(order[:TRAINING_FACES]), np.sort(order[TRAINING_FACES:])


def training_data() -> tuple[np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """The example's training faces (augmented), their groups, the non-face windows and the face-free images."""
    faces, non_faces = data.lfw_windows()
    training, _ = face_split(EXAMPLE_SETTINGS["random_state"])
    positives, groups = data.augment(faces[training], angles=ANGLES)
    negatives, _ = data.crops(non_faces, mirror=False)
    return positives, groups, negatives, data.negative_images(transposed=False)


def train_example_cascade(n_threads: int | None = None) -> Cascade:
    """Train the example cascade (deterministic: the same cascade for every thread count)."""
    positives, groups, negatives, images = training_data()
    settings = dict(EXAMPLE_SETTINGS)
    features = HaarFeatures.all((24, 24), stride=settings.pop("stride"))
    cascade = train_cascade(positives, images, negatives, features=features, groups=groups, n_threads=n_threads,
                            **settings)
    cascade.metadata["example"] = "bob-boost example faces"
    return cascade


def held_out_faces() -> np.ndarray:
    """Every 24x24 crop of the 30 held-out LFW faces (no mirror images)."""
    faces, _ = data.lfw_windows()
    _, held_out = face_split(EXAMPLE_SETTINGS["random_state"])
    return data.crops(faces[held_out], mirror=False)[0]
