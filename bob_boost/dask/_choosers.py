"""The weak machine of a round on a cluster, chosen from histograms summed over the chunks by the in-memory
rules: the engine's stump split search, or :meth:`bob_boost.LUTTrainer.from_histograms`; and the look-up
tables' coded chunks (the integer values are their own codes, NaN a code of its own with ``missing="bin"``).

Each chooser returns the weak machine with the task and arguments that give its outputs on a chunk's codes
(:mod:`bob_boost.dask._tasks`), so the scores are moved, and rebuilt at checkpoints, from the codes alone.
"""
from __future__ import annotations

import numpy as np

from ..boosting.partitions import in_order
from ..weak_trainers.lut import LUTTrainer
from ..weak_trainers.stump import best_stump
from . import _tasks as tasks
from ._dask import per_chunk


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
    """

    def __init__(self, offsets: np.ndarray, split_values: np.ndarray, missing: bool) -> None:
        self.offsets, self.split_values, self.missing = offsets, split_values, missing

    def choose(self, histograms: np.ndarray, absolute: np.ndarray, gradient_sum: np.ndarray):
        """``(stump, output task, its arguments)``, or None when no stump follows the gradient."""
        stump, best, gain, tolerance = best_stump(np.ascontiguousarray(histograms[:, 0]), self.offsets,
                                                  self.split_values, -float(gradient_sum[0]), float(absolute[0]),
                                                  self.missing)
        if stump is None or abs(gain) <= tolerance:
            return None
        index = stump.index
        # with missing values, every feature's last bin holds its NaN
        missing_code = int(self.offsets[index + 1] - self.offsets[index]) - 1 if self.missing else -1
        return stump, tasks.stump_outputs, (index, best - int(self.offsets[index]) + 1, stump.polarity,
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

    def choose(self, histograms: np.ndarray, absolute: np.ndarray, gradient_sum: np.ndarray):
        """``(table, output task, its arguments)``."""
        lut = self.trainer.from_histograms(histograms, absolute, self.all_missing)
        return lut, tasks.lut_outputs, (lut.look_up_tables, lut.indices)


def lut_chunks(client, array, entries: int | None, trainer_options: dict,
               n_threads: int | None) -> tuple[list, np.ndarray, LUTChooser]:
    """Futures of every chunk's codes for look-up tables, the bins' ``offsets`` and the chooser.

    ``entries`` (None: the largest value + 1, at least 2) value rows per table; with
    ``trainer_options["missing"] == "bin"`` NaN is code ``entries`` of its feature, the tables' last row,
    as :meth:`bob_boost.binning.BinnedFeatures.from_integers` codes it in memory. ``trainer_options`` are
    :class:`~bob_boost.LUTTrainer`'s other arguments (``number_of_outputs``, ``selection_style``,
    ``missing``).
    """
    missing = trainer_options.get("missing") is not None
    if entries is None:
        largest = max(client.gather(per_chunk(client, tasks.finite_max, array, missing)))
        entries = max(2, int(largest) + 1) if np.isfinite(largest) else 2  # every value NaN: the smallest table
    coded = per_chunk(client, tasks.coded_values, array, entries, n_threads, missing)
    offsets = np.arange(array.shape[1] + 1, dtype=np.int64) * (entries + missing)
    all_missing = None
    if missing:  # counted on the codes: the raw blocks are not read again
        counts = client.submit(in_order, *[client.submit(tasks.code_counts, part, entries) for part in coded])
        all_missing = counts.result() == array.shape[0]
    return coded, offsets, LUTChooser(LUTTrainer(entries, **trainer_options), all_missing)
