"""A round's stump or look-up table chosen from gradient histograms summed over row partitions
(:mod:`bob_boost.boosting.partitions`) by the in-memory rules: the engine's stump split search
(:func:`bob_boost.weak_trainers.stump.best_stump`), or :meth:`bob_boost.LUTTrainer.from_histograms`; and
:func:`routed`, how the partitioned tree growers move a partition's rows through a tree's splits.

Each chooser returns the weak machine with the function and arguments that give its outputs on a
partition's codes (:func:`stump_outputs`, :func:`lut_outputs`), so that the scores are moved, and rebuilt
at checkpoints, from the codes alone.
"""
from __future__ import annotations

import numpy as np

from ..engine.codes import CodedFeatures
from .lut import LUTTrainer
from .stump import best_stump, category_bins, set_outputs


class StumpChooser:
    """The in-memory stump rule on summed histograms (:func:`bob_boost.weak_trainers.stump.best_stump`).

    Parameters
    ----------
    offsets : numpy.ndarray
        (#features + 1,) each feature's first bin.
    split_values : numpy.ndarray
        Each bin's upper threshold (NaN for a feature's last bins).
    missing : bool
        Whether every feature's last bin holds its NaN (``missing="bin"``): each stump learns NaN's side.
    categories : dict, optional
        The categorical features' categories (their stumps split sets of them).
    """

    def __init__(self, offsets: np.ndarray, split_values: np.ndarray, missing: bool,
                 categories: dict[int, np.ndarray] | None = None) -> None:
        self.offsets, self.split_values, self.missing = offsets, split_values, missing
        self.categories = categories or {}

    def choose(self, histograms: np.ndarray, absolute: np.ndarray, gradient_sum: np.ndarray,
               columns: np.ndarray | None = None):
        """``(stump, output task, its arguments)`` on ``columns`` (None: all), or None when no stump follows the
        gradient."""
        stump, best, gain, tolerance = best_stump(np.ascontiguousarray(histograms[:, 0]), self.offsets,
                                                  self.split_values, -float(gradient_sum[0]), float(absolute[0]),
                                                  self.missing, columns, self.categories)
        if stump is None or abs(gain) <= tolerance:
            return None
        index = stump.index
        # with missing values, every feature's last bin holds its NaN
        missing_code = int(self.offsets[index + 1] - self.offsets[index]) - 1 if self.missing else -1
        if stump.categories is not None:
            return stump, set_outputs, (index, category_bins(stump, self.categories[index], missing_code),
                                        stump.polarity)
        return stump, stump_outputs, (index, best - int(self.offsets[index]) + 1, stump.polarity,
                                      missing_code, bool(stump.missing_above))


class LUTChooser:
    """The in-memory look-up-table rule on summed histograms (:meth:`LUTTrainer.from_histograms`).

    Parameters
    ----------
    trainer : LUTTrainer
        The in-memory trainer whose rule (entries, outputs, selection style, ``missing``) is applied.
    all_missing : numpy.ndarray, optional
        With ``missing="bin"``: (#features,) whether a feature is NaN in every row (never selected, as in
        memory).
    """

    def __init__(self, trainer: LUTTrainer, all_missing: np.ndarray | None = None) -> None:
        self.trainer, self.all_missing = trainer, all_missing

    def choose(self, histograms: np.ndarray, absolute: np.ndarray, gradient_sum: np.ndarray, columns: None = None):
        """``(table, output task, its arguments)`` (tables take no column sample: ``columns`` is None)."""
        lut = self.trainer.from_histograms(histograms, absolute, self.all_missing)
        return lut, lut_outputs, (lut.look_up_tables, lut.indices)


def stump_outputs(coded: CodedFeatures, feature: int, code_threshold: int, polarity: float, missing_code: int = -1,
                  missing_above: bool = False) -> np.ndarray:
    """(#rows, 1) outputs of a stump given by its feature and its first code above the threshold; rows of code
    ``missing_code`` (NaN, with ``missing="bin"``) are above the threshold when ``missing_above``."""
    codes = coded.column(feature)
    above = codes >= code_threshold
    if missing_code >= 0:
        above = np.where(codes == missing_code, missing_above, above)
    return np.where(above, polarity, -polarity)[:, np.newaxis]


def lut_outputs(coded: CodedFeatures, table: np.ndarray, indices: np.ndarray) -> np.ndarray:
    """(#rows, #outputs) outputs of a look-up table: ``table[x[indices[k]], k]``."""
    columns = [table[coded.column(feature), k] for k, feature in enumerate(indices)]
    return np.stack(columns, axis=1)


def routed(coded: CodedFeatures, sample_node: np.ndarray, split: np.ndarray) -> np.ndarray:
    """Rows of split nodes moved to a child: right where their code is above the split's bin.

    ``split`` is a (#nodes, 6) table of each node's feature, bin within the feature, left and right child,
    the feature's NaN code (-1 without missing values) and whether NaN goes left (feature -1: not split this
    level). The node's rows hold codes at most that bin or at least the next occupied one, so this is the raw
    rule ``x >= threshold`` of the tree (threshold between the two); a NaN row goes to the split's NaN side.
    A table of more columns marks categorical splits in its column 6 (1), whose rows go left when their code is
    in the bin set of the columns after it (:data:`~bob_boost.engine.categorical.CATEGORY_WORDS` words).
    """
    # rows at -1 (outside a sampled round's trees) never move
    feature = np.where(sample_node >= 0, split[sample_node, 0], -1)
    moving = np.flatnonzero(feature >= 0)
    if moving.size == 0:
        return sample_node
    node = sample_node[moving]
    above = goes_right(coded.codes_at(feature[moving], moving), split[node])
    moved = sample_node.copy()
    moved[moving] = np.where(above, split[node, 3], split[node, 2])
    return moved


def goes_right(codes: np.ndarray, splits: np.ndarray) -> np.ndarray:
    """Whether each code goes right at the split in its row of ``splits`` (rows of a :func:`routed` table)."""
    above = codes > splits[:, 1]
    above = np.where(codes == splits[:, 4], splits[:, 5] == 0, above)
    if splits.shape[1] > 6:
        codes = codes.astype(np.int64)
        words = splits[np.arange(codes.size), 7 + codes // 64].view(np.uint64)
        in_set = (words >> (codes % 64).astype(np.uint64)) & np.uint64(1) == 1
        above = np.where(splits[:, 6] == 1, ~in_set, above)
    return above
