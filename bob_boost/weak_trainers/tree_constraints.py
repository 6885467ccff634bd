"""The constraints of gradient trees as the kernels read them: monotone directions (``monotonic_cst``) and
interaction groups (``interaction_cst``), checked where a :class:`~bob_boost.TreeTrainer` gets them and turned
into arrays for :mod:`bob_boost.engine.split_scan` and :mod:`bob_boost.engine.tree_policy`."""
from __future__ import annotations

import numbers

import numpy as np

from ..exceptions import InvalidValueError


def check_monotonic_cst(values) -> np.ndarray:
    """``monotonic_cst`` as an int64 vector of -1, 0 and +1.

    Raises
    ------
    ValueError
        For another shape, or a value other than -1, 0 and +1 (the message names ``monotonic_cst``).
    """
    array = np.asarray(values)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iuf" or not np.all(np.isin(array, (-1, 0, 1))):
        raise InvalidValueError(f"monotonic_cst: expected one of -1, 0 and +1 per feature, got {values!r}")
    return array.astype(np.int64)


#: The most interaction groups (a node keeps its groups as the bits of one unsigned 64-bit integer).
MAX_INTERACTION_GROUPS = 63


def interaction_groups(constraints, n_features: int | None) -> np.ndarray:
    """``interaction_cst`` as a (#groups, ``n_features``) bool matrix, the features in no group making one more
    group; with ``n_features`` None only the groups themselves are checked.

    Raises
    ------
    ValueError
        For a group that is not a sequence of feature indices, a negative or (with ``n_features``) too large
        index, a feature in two groups, or more than :data:`MAX_INTERACTION_GROUPS` groups.
    """
    if isinstance(constraints, str):
        if constraints != "no_interactions":
            raise InvalidValueError(f"interaction_cst: expected groups of features or 'no_interactions', got "
                                    f"{constraints!r}")
        if n_features is None:
            return np.zeros((0, 0), dtype=np.bool_)
        constraints = [[f] for f in range(n_features)]
    try:
        groups = [sorted({int(f) for f in group}) if not isinstance(group, (str, bytes)) and all(
            isinstance(f, (numbers.Integral, np.integer)) and not isinstance(f, bool) for f in group) else None
            for group in constraints]
    except TypeError:
        groups = [None]
    if not groups or any(g is None or not g for g in groups):
        raise InvalidValueError(f"interaction_cst: expected non-empty groups of feature indices, got {constraints!r}")
    seen: set[int] = set()
    for group in groups:
        if group[0] < 0 or (n_features is not None and group[-1] >= n_features):
            raise InvalidValueError(f"interaction_cst: feature {group[0] if group[0] < 0 else group[-1]} is outside "
                                    f"0 .. {'#features - 1' if n_features is None else n_features - 1}")
        if seen & set(group):
            raise InvalidValueError(f"interaction_cst: feature {min(seen & set(group))} is in two groups")
        seen |= set(group)
    rest = [] if n_features is None else [f for f in range(n_features) if f not in seen]
    if len(groups) + bool(rest) > MAX_INTERACTION_GROUPS:
        raise InvalidValueError(f"interaction_cst: at most {MAX_INTERACTION_GROUPS} groups, got "
                                f"{len(groups) + bool(rest)}")
    if n_features is None:
        return np.zeros((0, 0), dtype=np.bool_)
    matrix = np.zeros((len(groups) + bool(rest), n_features), dtype=np.bool_)
    for g, group in enumerate(groups + ([rest] if rest else [])):
        matrix[g, group] = True
    return matrix


def monotone_array(constraints, n_features: int) -> np.ndarray:
    """The kernels' (#features,) int64 directions of ``monotonic_cst`` (None or all zeros: an empty array).

    Raises
    ------
    ValueError
        For bad values, or another number of entries than ``n_features``.
    """
    if constraints is None or not np.any(check_monotonic_cst(constraints)):
        return np.zeros(0, dtype=np.int64)
    directions = check_monotonic_cst(constraints)
    if directions.size != n_features:
        raise InvalidValueError(f"monotonic_cst: has {directions.size} entries but the features have "
                                f"{n_features} columns")
    return directions


def group_matrix(constraints, n_features: int) -> np.ndarray:
    """The kernels' (#groups, #features) interaction groups of ``interaction_cst`` (None: no rows)."""
    if constraints is None:
        return np.zeros((0, n_features), dtype=np.bool_)
    return interaction_groups(constraints, n_features)
