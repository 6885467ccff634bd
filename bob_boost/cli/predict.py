"""``bob-boost predict``: write a model's predicted labels and scores for a data file."""
from __future__ import annotations

import argparse
import collections
import contextlib
import csv
import gzip
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import h5py
import numpy as np

from ..io.tables import HDF5_SUFFIXES, TABLE_SUFFIXES, format_suffix, read_table, write_predictions
from ..labels import ClassEncoding
from ..machine import BoostedMachine
from ._common import (HelpFormatter, check_chunk_rows, check_one_label, data_options, load_dask_support, load_model,
                      model_categories, model_classes, scheduler_options)

#: Score chunks computed ahead of the one being written, per worker: enough to keep the workers busy while
#: the client writes, few enough that the cluster never holds every chunk's scores at once.
CHUNKS_AHEAD_PER_WORKER = 2


def add_parser(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    """Add the ``predict`` subcommand to ``commands``."""
    predict = commands.add_parser("predict", parents=[common], formatter_class=HelpFormatter,
                                  help="write predicted labels and scores")
    predict.add_argument("model", help="model file (HDF5)")
    predict.add_argument("data", help="data file (a target column, if present, is ignored)")
    predict.add_argument("-o", "--output", default="-",
                         help="output file: .csv/.tsv (optionally .gz; columns label, score...), .npz (labels, "
                              "scores), .npy (scores) or .hdf5 (labels, scores); '-' writes CSV to stdout")
    data_options(predict, labels="optional")
    scheduler_options(predict, "compute the scores",
                      "the output is the file written without it; CSV/TSV, NPY and HDF5 outputs are written "
                      "chunk by chunk as the scores arrive, in order, and NPZ once every score has arrived")
    predict.set_defaults(handler=command_predict)


def command_predict(args: argparse.Namespace) -> int:
    """Run ``bob-boost predict``."""
    check_chunk_rows(args)
    machine = load_model(args.model)
    check_one_label(machine, args.model)
    encoding = model_classes(machine)
    if args.scheduler is not None:
        return _predict_on_cluster(args, machine, encoding)
    table = read_table(args.data, args.target, None, machine.number_of_features, args.group,
                       model_categories(machine))
    scores = machine.decision_scores(table.features)  # the baseline included
    write_predictions(args.output, _labels(machine, encoding, scores), scores, _score_names(encoding, scores.shape[1]))
    return 0


def _labels(machine: BoostedMachine, encoding: ClassEncoding | None, scores: np.ndarray) -> np.ndarray:
    """The predicted labels of ``scores``: the model's classes, or the values of a regression."""
    if encoding is None:
        return machine.labels_from_scores(scores)
    return encoding.decode(machine.class_indices_from_scores(scores))


def _score_names(encoding: ClassEncoding | None, outputs: int) -> list[str]:
    if outputs == 1:
        return ["score"]
    if encoding is not None and encoding.number_of_classes == outputs:
        return [f"score_{c}" for c in encoding.classes.tolist()]
    return [f"score_{i}" for i in range(outputs)]


# -- on a Dask cluster (--scheduler) -------------------------------------------------------------------

def _predict_on_cluster(args: argparse.Namespace, machine: BoostedMachine, encoding: ClassEncoding | None) -> int:
    """Scores from :func:`bob_boost.dask.decision_scores`, gathered chunk after chunk and written in order."""
    support = load_dask_support()
    from ..dask import decision_scores  # after load_dask_support, which reports a missing Dask

    outputs = machine.number_of_outputs or 1
    names = _score_names(encoding, outputs)
    output = str(args.output)
    suffix = ".csv" if output == "-" else format_suffix(Path(output))
    if suffix not in TABLE_SUFFIXES + HDF5_SUFFIXES + (".npy", ".npz"):
        # the one writer words the error (it writes nothing for an unknown format)
        write_predictions(output, np.empty(0), np.empty((0, outputs)), names)
    with support.connect(args.scheduler) as client:
        table = support.read_lazy_table(args.data, args.target, None, machine.number_of_features, args.group,
                                        args.chunk_rows, want_labels=False, categories=model_categories(machine))
        scores = decision_scores(machine, table.features)
        ahead = CHUNKS_AHEAD_PER_WORKER * max(1, len(client.scheduler_info()["workers"]))
        chunks = ((_labels(machine, encoding, block), block) for block in _in_order(client, scores, ahead))
        rows = int(scores.shape[0])
        with _replaced_when_complete(output) as destination:
            if suffix in TABLE_SUFFIXES:
                _write_text(destination, suffix, output.lower().endswith(".gz"), chunks, names)
            elif suffix == ".npy":
                _write_npy(destination, chunks, rows, outputs)
            elif suffix in HDF5_SUFFIXES:
                _write_hdf5(destination, chunks, rows, outputs)
            else:  # NPZ: one zip member per array, written whole
                parts = list(chunks)
                write_predictions(destination, np.concatenate([p[0] for p in parts]),
                                  np.concatenate([p[1] for p in parts]), names)
    return 0


def _in_order(client, scores, ahead: int) -> Iterator[np.ndarray]:
    """The row chunks of the Dask array ``scores``, in order, with at most ``ahead`` computed in advance."""
    pending: collections.deque = collections.deque()
    for block in scores.to_delayed().ravel().tolist():
        pending.append(client.compute(block))
        if len(pending) > ahead:
            yield pending.popleft().result()  # dropping the future frees the chunk on the cluster
    while pending:
        yield pending.popleft().result()


@contextlib.contextmanager
def _replaced_when_complete(output: str) -> Iterator[Path | None]:
    """A file beside ``output`` (with its suffix) that becomes ``output`` only once it is written whole, so
    that an error on the way (a bad chunk, a lost scheduler) leaves no partial predictions; None for stdout."""
    if output == "-":
        yield None
        return
    path = Path(output)
    partial = path.with_name(f".{path.name}.partial{path.suffix}")
    try:
        yield partial
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def _write_text(destination: Path | None, suffix: str, compressed: bool, chunks, names: list[str]) -> None:
    """The table :func:`~bob_boost.io.tables.write_predictions` writes, one chunk of rows at a time."""
    delimiter = "\t" if suffix == ".tsv" else ","
    with contextlib.ExitStack() as stack:
        if destination is None:
            stream = sys.stdout
        elif compressed:
            stream = stack.enter_context(gzip.open(destination, "wt"))
        else:
            stream = stack.enter_context(open(destination, "w"))
        stream.write(_text_rows([["label", *names]], delimiter))
        for labels, scores in chunks:
            stream.write(_text_rows(([label, *(repr(float(v)) for v in row)]
                                     for label, row in zip(labels.tolist(), scores.tolist())), delimiter))


def _text_rows(rows, delimiter: str) -> str:
    # csv's quoting and line ends, as write_predictions writes them
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=delimiter, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def _write_npy(path: Path, chunks, rows: int, outputs: int) -> None:
    """The scores as ``numpy.save`` writes them, filled chunk by chunk through a memory map."""
    array = np.lib.format.open_memmap(path, mode="w+", dtype=np.float64, shape=(rows, outputs))
    start = 0
    for _, scores in chunks:
        array[start:start + scores.shape[0]] = scores
        start += scores.shape[0]
    array.flush()
    del array


def _write_hdf5(path: Path, chunks, rows: int, outputs: int) -> None:
    """Datasets ``labels`` and ``scores`` as write_predictions writes them, filled chunk by chunk."""
    with h5py.File(path, "w") as handle:
        scores_set = labels_set = None
        start = 0
        for labels, scores in chunks:
            if labels_set is None:  # the labels' type is known from the first chunk
                text = labels.dtype.kind == "U"
                labels_set = handle.create_dataset("labels", shape=(rows,),
                                                   dtype=h5py.string_dtype() if text else labels.dtype)
                scores_set = handle.create_dataset("scores", shape=(rows, outputs), dtype=np.float64)
            stop = start + scores.shape[0]
            labels_set[start:stop] = labels.astype(object) if labels.dtype.kind == "U" else labels
            scores_set[start:stop] = scores
            start = stop
