"""Viola–Jones face detection: Haar features on integral images, cascade training, a sliding-window detector.

- :mod:`.integral`: grey images and their integral images;
- :mod:`.haar`: :class:`HaarFeatures`, the two-, three- and four-rectangle masks of a base window;
- :mod:`.pool`: :class:`QuantizedPool`, a whole feature pool as uint8 codes for the stump search;
- :mod:`.stages`: the stage learners (discrete AdaBoost, AdaBoostDB, Cost-Sensitive AdaBoost);
- :mod:`.training`: :func:`train_cascade`, with hard negatives bootstrapped from face-free images;
- :mod:`.cascade`: :class:`Cascade` and its HDF5 file;
- :mod:`.detector`: :func:`detect`, every position and scale with early exit, grouped boxes;
- :mod:`.data`: scikit-image's bundled faces and photographs (the optional ``faces`` extra);
- :mod:`.example`: the small example cascade of ``bob-boost example faces``;
- :mod:`.opencv_xml`, :mod:`.opencv`, :mod:`.opencv_write`: OpenCV's Haar and LBP cascade files, read, run as
  OpenCV 4 runs them (:class:`CascadeClassifier`) and written; :mod:`.opencv_samples`: the ``.vec`` and info
  files of OpenCV's cascade training.
"""
from .cascade import Cascade
from .detector import Detections, detect, group_rectangles
from .haar import CHAPTER_TYPES, FEATURE_TYPES, HaarFeatures
from .integral import as_gray_image, integral_image, integral_images
from .opencv import CascadeClassifier
from .opencv_samples import read_info, read_vec, write_vec
from .opencv_write import write_opencv_cascade
from .opencv_xml import OpenCVCascade, read_opencv_cascade
from .pool import QuantizedPool
from .stages import AdaBoostDBStage, AdaBoostStage, CostSensitiveAdaBoostStage, StageLearner
from .training import train_cascade

__all__ = ["AdaBoostDBStage", "AdaBoostStage", "CHAPTER_TYPES", "Cascade", "CascadeClassifier",
           "CostSensitiveAdaBoostStage",
           "Detections", "FEATURE_TYPES", "HaarFeatures", "QuantizedPool", "StageLearner", "as_gray_image",
           "detect", "group_rectangles", "integral_image", "integral_images", "OpenCVCascade", "read_opencv_cascade",
           "read_info", "read_vec", "train_cascade", "write_opencv_cascade", "write_vec"]
