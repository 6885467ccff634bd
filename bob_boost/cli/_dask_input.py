"""What ``--scheduler`` takes from :mod:`bob_boost.dask`, with its errors in the command line's words.

The only module of :mod:`bob_boost.cli` that imports :mod:`bob_boost.dask` (and so Dask), imported only for
``--scheduler`` (through :func:`bob_boost.cli._common.load_dask_support`). The work is the library's: the
client comes from :func:`bob_boost.dask._dask.connected` (which checks the address first), the data from
:func:`bob_boost.dask._files.read_lazy_table` (the rules of :func:`bob_boost.io.tables.read_table`, so a file
means the same with and without ``--scheduler``). This module only says which option a problem is about.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..dask import NoClientError, _dask
from ..dask._files import LazyTable, read_lazy_table as _read_lazy_table
from ..exceptions import InvalidValueError
from ..labels import ClassEncoding
from ._common import CommandError, as_options, one_line


@contextlib.contextmanager
def connect(address: str) -> Iterator[object]:
    """A client of the scheduler at ``address``, current inside the block (Dask's own ``compute`` calls use
    it), closed afterwards.

    Raises
    ------
    CommandError
        For a malformed address, or when no scheduler answers within
        :data:`bob_boost.dask._dask.CONNECT_TIMEOUT` seconds (the library's message, naming ``--scheduler``).
    """
    with contextlib.ExitStack() as stack:
        try:
            client = stack.enter_context(_dask.connected(address))
        except NoClientError as error:  # only the connection's: errors of the block pass as they are
            raise CommandError(str(error).replace("client:", "--scheduler:", 1)) from None
        yield client


def read_lazy_table(path: str | Path, target: str | None, with_target: bool | None,
                    number_of_features: int | None = None, group: str | None = None,
                    chunk_rows: int | None = None, want_labels: bool = True,
                    categories: dict[int, list] | None = None) -> LazyTable:
    """:func:`bob_boost.dask._files.read_lazy_table`, its errors about options named as the options.

    Raises
    ------
    DataFormatError
        For every problem with the file (the library's error, shown as it is).
    CommandError
        For a text table without ``dask.dataframe`` (naming the extra), or a bad ``--chunk-rows``.
    """
    try:
        return _read_lazy_table(path, target, with_target, number_of_features, group, chunk_rows, want_labels,
                                categories)
    except ImportError as error:
        raise CommandError(one_line(error)) from None
    except InvalidValueError as error:  # chunk_rows
        raise as_options(error) from None


def class_targets(labels, encoding: ClassEncoding | None, kind: str):
    """The training targets of ``labels`` (a Dask vector), built chunk by chunk on the workers.

    Parameters
    ----------
    labels : dask.array.Array
        (#samples,) labels.
    encoding : ClassEncoding or None
        The classes; None for a regression, whose targets are the labels as float64.
    kind : str
        ``"signed"`` (#samples,) or ``"one_vs_rest"`` (#samples, K), as
        :meth:`bob_boost.labels.ClassEncoding.targets` makes them in memory.
    """
    if encoding is None:
        return labels.astype(np.float64)
    if kind == "signed":
        return labels.map_blocks(_chunk_targets, encoding, kind, dtype=np.float64)
    return labels.map_blocks(_chunk_targets, encoding, kind, dtype=np.float64, new_axis=1,
                             chunks=(labels.chunks[0], (encoding.number_of_classes,)))


def _chunk_targets(labels: np.ndarray, encoding: ClassEncoding, kind: str) -> np.ndarray:
    """One chunk's targets, on its worker; a label that is not one of the classes fails there."""
    return encoding.targets(kind, encoding.encode(np.asarray(labels), "labels"))
