"""OpenCV cascade XML files written from an :class:`~bob_boost.vision.opencv_xml.OpenCVCascade`, in OpenCV 4's
current layout, which OpenCV 4's ``CascadeClassifier`` and :func:`~bob_boost.vision.read_opencv_cascade` read
back to the same cascade.

Numbers are written in their shortest form that reads back to the same double (Python's ``repr``), so every
threshold, leaf and weight OpenCV reads is the one the cascade holds; a split's children, features and an LBP
split's eight category words are integers. The file is written to a temporary file and renamed over ``path``
only when complete, so that a failed write leaves no broken file.
"""
from __future__ import annotations

import os
from xml.sax.saxutils import escape

import numpy as np

from ..exceptions import InvalidTypeError
from ..io.hdf5 import atomic_path
from .opencv_xml import OpenCVCascade


def _number(value: float) -> str:
    return repr(float(value))


def _stages(cascade: OpenCVCascade) -> list[str]:
    lines = []
    lbp = cascade.feature_type == "LBP"
    for stage in range(cascade.number_of_stages):
        first, last = int(cascade.stage_weak[stage]), int(cascade.stage_weak[stage + 1])
        lines += ["    <_>", f"      <maxWeakCount>{last - first}</maxWeakCount>",
                  f"      <stageThreshold>{_number(cascade.stage_thresholds[stage])}</stageThreshold>",
                  "      <weakClassifiers>"]
        for weak in range(first, last):
            words = []
            for node in range(int(cascade.weak_nodes[weak]), int(cascade.weak_nodes[weak + 1])):
                words += [str(int(cascade.node_left[node])), str(int(cascade.node_right[node])),
                          str(int(cascade.node_feature[node]))]
                words += ([str(int(word)) for word in cascade.node_subset[node]] if lbp
                          else [_number(cascade.node_threshold[node])])
            leaves = cascade.leaves[int(cascade.weak_leaves[weak]):int(cascade.weak_leaves[weak + 1])]
            lines += ["        <_>", f"          <internalNodes>{' '.join(words)}</internalNodes>",
                      f"          <leafValues>{' '.join(_number(leaf) for leaf in leaves)}</leafValues></_>"]
        lines += ["      </weakClassifiers></_>"]
    return lines


def _features(cascade: OpenCVCascade) -> list[str]:
    lines = []
    for f in range(cascade.number_of_features):
        if cascade.feature_type == "LBP":
            x, y, w, h = (int(v) for v in cascade.rects[f, 0])
            lines.append(f"    <_>\n      <rect>{x} {y} {w} {h}</rect></_>")
            continue
        rects = [f"        <_>{' '.join(str(int(v)) for v in cascade.rects[f, r])} "
                 f"{_number(cascade.rect_weights[f, r])}</_>"
                 for r in range(cascade.rects.shape[1]) if r == 0 or cascade.rect_weights[f, r] != 0]
        tilted = f"\n      <tilted>{int(bool(cascade.tilted[f]))}</tilted>"
        lines.append("    <_>\n      <rects>\n" + "\n".join(rects) + "</rects>" + tilted + "</_>")
    return lines


def cascade_xml(cascade: OpenCVCascade) -> str:
    """The text of ``cascade``'s OpenCV XML file (see the module)."""
    if not isinstance(cascade, OpenCVCascade):
        raise InvalidTypeError(f"cascade: expected an OpenCVCascade, got {type(cascade).__name__}")
    categories = 256 if cascade.feature_type == "LBP" else 0
    depth = int(np.max(np.diff(cascade.weak_nodes))) if cascade.weak_nodes.size > 1 else 1
    lines = ['<?xml version="1.0"?>', "<opencv_storage>", '<cascade type_id="opencv-cascade-classifier">',
             "  <stageType>BOOST</stageType>", f"  <featureType>{escape(cascade.feature_type)}</featureType>",
             f"  <height>{cascade.height}</height>", f"  <width>{cascade.width}</width>",
             f"  <stageParams>\n    <maxDepth>{depth}</maxDepth>\n    <maxWeakCount>"
             f"{int(np.max(np.diff(cascade.stage_weak)))}</maxWeakCount></stageParams>",
             f"  <featureParams>\n    <maxCatCount>{categories}</maxCatCount></featureParams>",
             f"  <stageNum>{cascade.number_of_stages}</stageNum>", "  <stages>", *_stages(cascade), "  </stages>",
             "  <features>", *_features(cascade), "  </features></cascade>", "</opencv_storage>", ""]
    return "\n".join(lines)


def write_opencv_cascade(cascade: OpenCVCascade, path: str | os.PathLike) -> None:
    """Write ``cascade`` as an OpenCV cascade XML file at ``path`` (atomically: see the module).

    Raises
    ------
    TypeError
        For a ``cascade`` that is not an :class:`~bob_boost.vision.opencv_xml.OpenCVCascade`.
    OSError
        When the file cannot be written (naming ``path``); the file at ``path``, if any, is left as it was.
    """
    text = cascade_xml(cascade)
    with atomic_path(path, ".xml.tmp") as temporary, open(temporary, "w", encoding="ascii") as stream:
        stream.write(text)
