"""OpenCV's boosted cascade files (XML), read into :class:`OpenCVCascade`.

Two layouts are read:

- the current one (``<cascade>`` with ``stageType`` BOOST, ``featureType`` HAAR or LBP, ``height``, ``width``,
  ``stages`` of ``weakClassifiers`` whose ``internalNodes`` hold, per split, the left and right child, the
  feature and the threshold (a child ``<= 0`` is the leaf ``-child``; LBP splits hold eight 32-bit words of
  category subset instead of a threshold), ``leafValues`` and ``features``: Haar rectangles ``x y w h weight``
  with an optional ``tilted`` flag, or the LBP block ``x y w h``);
- the older one (an element of ``type_id="opencv-haar-classifier"``, e.g. the cascades of OpenCV 1.x and 2.x):
  ``size``, ``stages`` of ``trees`` whose nodes hold their own feature, threshold and ``left_val`` /
  ``right_val`` leaves or ``left_node`` / ``right_node`` children (leaves numbered as they appear, left before
  right). OpenCV 4 runs the stages in file order whatever their ``parent`` and ``next`` (a tree of stages, as
  OpenCV 1.x could run, becomes a chain); so does this reader, for the same detections.

Loading is safe for damaged or hostile files: a file over :data:`MAX_FILE_BYTES`, a document type declaration
(entity expansion), a rectangle outside the window, a child that does not point forward in its tree, a tree
whose leaves are not one more than its splits, a non-finite number: each is a
:class:`~bob_boost.exceptions.ModelFormatError` naming the file and the problem, found before any array is
sized from the file.
"""
from __future__ import annotations

import os
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass

import numpy as np

from ..exceptions import ModelFormatError

#: Files larger than this are refused (OpenCV's largest shipped cascade is under 3 MB).
MAX_FILE_BYTES = 256 << 20

#: The largest window side read (OpenCV's cascades are at most a few dozen pixels).
MAX_WINDOW = 4096

#: The words of an LBP split's category subset (256 categories of 32 bits).
LBP_SUBSET_WORDS = 8

#: At most this many rectangles in a Haar feature.
MAX_RECTANGLES = 3


@dataclass(frozen=True)
class OpenCVCascade:
    """A boosted cascade as an OpenCV XML file states it, in flat arrays.

    Stage ``s`` holds the weak classifiers ``stage_weak[s]:stage_weak[s + 1]``; weak classifier ``w`` holds the
    splits ``weak_nodes[w]:weak_nodes[w + 1]`` and the leaves ``weak_leaves[w]:weak_leaves[w + 1]``; a split's
    children index its own tree's splits (``> 0``) or leaves (``-child``, ``<= 0``).

    Attributes
    ----------
    feature_type : {"HAAR", "LBP"}
        The features.
    width, height : int
        The window.
    stage_thresholds : numpy.ndarray
        (#stages,) float64, as written.
    stage_weak, weak_nodes, weak_leaves : numpy.ndarray
        int64 offsets, as above.
    node_left, node_right, node_feature : numpy.ndarray
        (#splits,) int32.
    node_threshold : numpy.ndarray
        (#splits,) float64 (Haar; zeros for LBP).
    node_subset : numpy.ndarray
        (#splits, 8) int32 category subsets (LBP; empty for Haar).
    leaves : numpy.ndarray
        (#leaves,) float64.
    rects : numpy.ndarray
        (#features, 3, 4) int32 ``x, y, w, h`` (Haar: unused slots zero; LBP: the block in slot 0).
    rect_weights : numpy.ndarray
        (#features, 3) float64 (Haar).
    tilted : numpy.ndarray
        (#features,) bool: 45-degree rectangles (Haar).
    source : str
        The file read, for messages.
    """

    feature_type: str
    width: int
    height: int
    stage_thresholds: np.ndarray
    stage_weak: np.ndarray
    weak_nodes: np.ndarray
    weak_leaves: np.ndarray
    node_left: np.ndarray
    node_right: np.ndarray
    node_feature: np.ndarray
    node_threshold: np.ndarray
    node_subset: np.ndarray
    leaves: np.ndarray
    rects: np.ndarray
    rect_weights: np.ndarray
    tilted: np.ndarray
    source: str = ""

    @property
    def number_of_stages(self) -> int:
        """The stages."""
        return int(self.stage_thresholds.size)

    @property
    def number_of_features(self) -> int:
        """The features the splits index."""
        return int(self.rects.shape[0])


class _Reader:
    """What reading one file accumulates: the splits, leaves and stages, checked as they come."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.stage_thresholds: list[float] = []
        self.stage_weak = [0]
        self.weak_nodes = [0]
        self.weak_leaves = [0]
        self.left: list[int] = []
        self.right: list[int] = []
        self.feature: list[int] = []
        self.threshold: list[float] = []
        self.subset: list[list[int]] = []
        self.leaves: list[float] = []

    def fail(self, problem: str) -> ModelFormatError:
        return ModelFormatError(f"{self.source}: not a readable OpenCV cascade: {problem}")

    def numbers(self, element, what: str) -> list[str]:
        if element is None or element.text is None:
            raise self.fail(f"{what} is missing")
        return element.text.split()

    def integer(self, element, what: str) -> int:
        words = self.numbers(element, what)
        if len(words) != 1:
            raise self.fail(f"{what} must be one integer, got {' '.join(words[:3])!r}")
        return self.as_int(words[0], what)

    def as_int(self, word: str, what: str) -> int:
        try:
            return int(word)
        except ValueError:
            raise self.fail(f"{what} must be an integer, got {word[:20]!r}") from None

    def as_float(self, word: str, what: str) -> float:
        try:
            value = float(word)
        except ValueError:
            raise self.fail(f"{what} must be a number, got {word[:20]!r}") from None
        if not np.isfinite(value):
            raise self.fail(f"{what} is not finite")
        return value

    def add_tree(self, splits: list[tuple[int, int, int, float, list[int] | None]], leaves: list[float],
                 where: str) -> None:
        """One weak classifier: its splits ``(left, right, feature, threshold, subset)`` and leaves."""
        if not splits:
            raise self.fail(f"{where} has no split")
        if len(leaves) != len(splits) + 1:
            raise self.fail(f"{where} has {len(splits)} splits but {len(leaves)} leaves (expected {len(splits) + 1})")
        for index, (left, right, feature, threshold, subset) in enumerate(splits):
            for child in (left, right):
                # forward children only: walking a tree then always ends
                if child > 0 and not index < child < len(splits):
                    raise self.fail(f"{where}, split {index}: child {child} is not a later split of its tree")
                if child <= 0 and -child >= len(leaves):
                    raise self.fail(f"{where}, split {index}: leaf {-child} does not exist")
            self.left.append(left)
            self.right.append(right)
            self.feature.append(feature)
            self.threshold.append(threshold)
            if subset is not None:
                self.subset.append(subset)
        self.leaves.extend(leaves)
        self.weak_nodes.append(len(self.left))
        self.weak_leaves.append(len(self.leaves))

    def end_stage(self, threshold: float, where: str) -> None:
        if len(self.weak_nodes) - 1 == self.stage_weak[-1]:
            raise self.fail(f"{where} has no weak classifier")
        self.stage_thresholds.append(threshold)
        self.stage_weak.append(len(self.weak_nodes) - 1)


def _check_rectangle(reader: _Reader, x: int, y: int, w: int, h: int, tilted: bool, width: int, height: int,
                     where: str) -> None:
    """A rectangle must lie in the window (a tilted one spans ``x - h .. x + w`` across, ``y .. y + w + h``
    down)."""
    if w <= 0 or h <= 0:
        raise reader.fail(f"{where}: rectangle {x} {y} {w} {h} is empty")
    left, right, bottom = (x - h, x + w, y + w + h) if tilted else (x, x + w, y + h)
    if x < 0 or y < 0 or left < 0 or right > width or bottom > height:
        kind = "tilted rectangle" if tilted else "rectangle"
        raise reader.fail(f"{where}: {kind} {x} {y} {w} {h} is outside the {width}x{height} window")


def read_opencv_cascade(path: str | os.PathLike) -> OpenCVCascade:
    """Read an OpenCV cascade XML file (either layout; see the module's description).

    Parameters
    ----------
    path : str or os.PathLike
        The XML file.

    Returns
    -------
    OpenCVCascade
        Its stages, trees and features.

    Raises
    ------
    bob_boost.ModelFormatError
        For a file that is not a readable OpenCV Haar or LBP boosted cascade (the message names the file and
        the problem).
    FileNotFoundError
        For a missing file.
    """
    source = os.fspath(path)
    reader = _Reader(source)
    size = os.path.getsize(source)
    if size > MAX_FILE_BYTES:
        raise reader.fail(f"{size} bytes, more than the {MAX_FILE_BYTES} read")
    with open(source, "rb") as stream:
        text = stream.read()
    if b"<!DOCTYPE" in text or b"<!ENTITY" in text:
        raise reader.fail("it declares a document type (entities are not read)")
    try:
        root = ElementTree.fromstring(text)
    except ElementTree.ParseError as error:
        raise reader.fail(f"XML error: {error}") from None
    cascade = root.find("cascade") if root.tag == "opencv_storage" else None
    if cascade is not None and cascade.find("stages") is not None and cascade.find("features") is not None:
        return _read_current(reader, cascade)
    candidates = [root] + list(root)
    old = next((element for element in candidates if element.get("type_id") == "opencv-haar-classifier"), None)
    if old is not None:
        return _read_old(reader, old)
    raise reader.fail("no <cascade> with stages and features, nor an opencv-haar-classifier element")


def _read_current(reader: _Reader, cascade) -> OpenCVCascade:
    stage_type = (cascade.findtext("stageType") or "BOOST").strip()
    if stage_type != "BOOST":
        raise reader.fail(f"stage type {stage_type!r} (only BOOST is read)")
    feature_type = (cascade.findtext("featureType") or "HAAR").strip().upper()
    if feature_type not in ("HAAR", "LBP"):
        raise reader.fail(f"feature type {feature_type!r} (HAAR and LBP are read)")
    width, height = reader.integer(cascade.find("width"), "width"), reader.integer(cascade.find("height"), "height")
    if not (0 < width <= MAX_WINDOW and 0 < height <= MAX_WINDOW):
        raise reader.fail(f"window {width}x{height} (each side 1 to {MAX_WINDOW})")
    # as OpenCV, the stages and weak classifiers are counted from the elements (stageNum and maxWeakCount are
    # not read)
    stages = list(cascade.find("stages"))
    lbp = feature_type == "LBP"
    per_split = 3 + (LBP_SUBSET_WORDS if lbp else 1)
    for s, stage in enumerate(stages):
        where = f"stage {s}"
        classifiers = stage.find("weakClassifiers")
        if classifiers is None:
            raise reader.fail(f"{where} has no weakClassifiers")
        threshold = reader.as_float(" ".join(reader.numbers(stage.find("stageThreshold"), f"{where} stageThreshold")),
                                    f"{where} stageThreshold")
        for w, weak in enumerate(classifiers):
            at = f"{where}, weak classifier {w}"
            words = reader.numbers(weak.find("internalNodes"), f"{at} internalNodes")
            if len(words) % per_split:
                raise reader.fail(f"{at}: {len(words)} internalNodes numbers, not a multiple of {per_split}")
            splits = []
            for start in range(0, len(words), per_split):
                left, right, feature = (reader.as_int(word, f"{at} internalNodes") for word in words[start:start + 3])
                if lbp:
                    subset = [reader.as_int(word, f"{at} subset") for word in words[start + 3:start + per_split]]
                    if any(not -2 ** 31 <= word < 2 ** 31 for word in subset):
                        raise reader.fail(f"{at}: a subset word is outside 32 bits")
                    splits.append((left, right, feature, 0.0, subset))
                else:
                    splits.append((left, right, feature, reader.as_float(words[start + 3], f"{at} threshold"), None))
            leaves = [reader.as_float(word, f"{at} leafValues")
                      for word in reader.numbers(weak.find("leafValues"), f"{at} leafValues")]
            reader.add_tree(splits, leaves, at)
        reader.end_stage(threshold, where)
    if not stages:
        raise reader.fail("it has no stage")
    features = list(cascade.find("features"))
    rects = np.zeros((len(features), MAX_RECTANGLES, 4), np.int32)
    weights = np.zeros((len(features), MAX_RECTANGLES))
    tilted = np.zeros(len(features), bool)
    for f, feature in enumerate(features):
        where = f"feature {f}"
        if lbp:
            words = [reader.as_int(word, f"{where} rect")
                     for word in reader.numbers(feature.find("rect"), f"{where} rect")]
            if len(words) != 4:
                raise reader.fail(f"{where}: an LBP rect has 4 numbers, got {len(words)}")
            x, y, w, h = words
            if w <= 0 or h <= 0 or x < 0 or y < 0 or x + 3 * w > width or y + 3 * h > height:
                raise reader.fail(f"{where}: LBP block {x} {y} {w} {h} (3x3 cells) is outside the {width}x{height} "
                                  f"window")
            rects[f, 0] = words
            continue
        tilted[f] = (feature.findtext("tilted") or "0").strip() not in ("0", "")
        _read_rectangles(reader, feature.find("rects"), rects[f], weights[f], bool(tilted[f]), width, height, where)
    return _finish(reader, feature_type, width, height, rects, weights, tilted)


def _read_rectangles(reader: _Reader, element, rects: np.ndarray, weights: np.ndarray, tilted: bool, width: int,
                     height: int, where: str) -> None:
    items = [] if element is None else list(element)
    if not 1 <= len(items) <= MAX_RECTANGLES:
        raise reader.fail(f"{where} has {len(items)} rectangles (1 to {MAX_RECTANGLES})")
    for r, item in enumerate(items):
        words = reader.numbers(item, f"{where} rectangle")
        if len(words) != 5:
            raise reader.fail(f"{where}: a rectangle is 'x y w h weight', got {len(words)} numbers")
        x, y, w, h = (reader.as_int(word.rstrip("."), f"{where} rectangle") for word in words[:4])
        _check_rectangle(reader, x, y, w, h, tilted, width, height, where)
        rects[r] = (x, y, w, h)
        weights[r] = reader.as_float(words[4], f"{where} weight")


def _read_old(reader: _Reader, cascade) -> OpenCVCascade:
    words = reader.numbers(cascade.find("size"), "size")
    if len(words) != 2:
        raise reader.fail("size must be 'width height'")
    width, height = (reader.as_int(word, "size") for word in words)
    if not (0 < width <= MAX_WINDOW and 0 < height <= MAX_WINDOW):
        raise reader.fail(f"window {width}x{height} (each side 1 to {MAX_WINDOW})")
    stages = cascade.find("stages")
    if stages is None or not len(stages):
        raise reader.fail("it has no stage")
    rect_rows, weight_rows, tilted_rows = [], [], []
    for s, stage in enumerate(stages):
        where = f"stage {s}"
        trees = stage.find("trees")
        if trees is None or not len(trees):
            raise reader.fail(f"{where} has no trees")
        for t, tree in enumerate(trees):
            at = f"{where}, tree {t}"
            nodes = list(tree)
            splits, leaves = [], []
            children = []
            for n, node in enumerate(nodes):
                feature = node.find("feature")
                if feature is None:
                    raise reader.fail(f"{at}, node {n} has no feature")
                rects = np.zeros((MAX_RECTANGLES, 4), np.int32)
                weights = np.zeros(MAX_RECTANGLES)
                tilted = (feature.findtext("tilted") or "0").strip() not in ("0", "")
                _read_rectangles(reader, feature.find("rects"), rects, weights, tilted, width, height,
                                 f"{at}, node {n}")
                rect_rows.append(rects)
                weight_rows.append(weights)
                tilted_rows.append(tilted)
                threshold = reader.as_float((node.findtext("threshold") or "").strip(), f"{at}, node {n} threshold")
                sides = []
                for side in ("left", "right"):
                    value, child = node.findtext(f"{side}_val"), node.findtext(f"{side}_node")
                    if (value is None) == (child is None):
                        raise reader.fail(f"{at}, node {n} needs one of {side}_val and {side}_node")
                    if value is not None:
                        leaves.append(reader.as_float(value.strip(), f"{at}, node {n} {side}_val"))
                        sides.append(("leaf", len(leaves) - 1))
                    else:
                        sides.append(("node", reader.as_int(child.strip(), f"{at}, node {n} {side}_node")))
                children.append(sides)
                splits.append([0, 0, len(rect_rows) - 1, threshold, None])
            for n, sides in enumerate(children):
                for column, (kind, index) in enumerate(sides):
                    splits[n][column] = -index if kind == "leaf" else index
                    if kind == "node" and index == 0:
                        raise reader.fail(f"{at}, node {n}: a child cannot be the root")
            reader.add_tree([tuple(split) for split in splits], leaves, at)
        threshold = reader.as_float((stage.findtext("stage_threshold") or "").strip(), f"{where} stage_threshold")
        reader.end_stage(threshold, where)
    return _finish(reader, "HAAR", width, height, np.array(rect_rows, np.int32).reshape(-1, MAX_RECTANGLES, 4),
                   np.array(weight_rows).reshape(-1, MAX_RECTANGLES), np.array(tilted_rows, bool))


def _finish(reader: _Reader, feature_type: str, width: int, height: int, rects: np.ndarray, weights: np.ndarray,
            tilted: np.ndarray) -> OpenCVCascade:
    feature = np.array(reader.feature, np.int64)
    if feature.size and (feature.min() < 0 or feature.max() >= rects.shape[0]):
        raise reader.fail(f"a split reads feature {int(feature.min() if feature.min() < 0 else feature.max())} of "
                          f"{rects.shape[0]}")
    lbp = feature_type == "LBP"
    return OpenCVCascade(
        feature_type=feature_type, width=width, height=height,
        stage_thresholds=np.array(reader.stage_thresholds), stage_weak=np.array(reader.stage_weak, np.int64),
        weak_nodes=np.array(reader.weak_nodes, np.int64), weak_leaves=np.array(reader.weak_leaves, np.int64),
        node_left=np.array(reader.left, np.int32), node_right=np.array(reader.right, np.int32),
        node_feature=feature.astype(np.int32), node_threshold=np.array(reader.threshold),
        node_subset=(np.array(reader.subset, np.int64).astype(np.int32) if lbp else np.zeros((0, LBP_SUBSET_WORDS),
                                                                                              np.int32)),
        leaves=np.array(reader.leaves), rects=rects, rect_weights=weights, tilted=tilted, source=reader.source)
