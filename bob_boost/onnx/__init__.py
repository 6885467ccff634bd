"""ONNX export of boosted machines and estimators: ``to_onnx(model)`` gives an ``onnx.ModelProto``.

The graph has one float32 input ``features`` of shape (N, #features). It computes in double
precision, as bob_boost does (float32 features compared with float64 thresholds), with standard
operators (default domain, opset :data:`OPSET`) and the ONNX-ML ``TreeEnsemble`` (``ai.onnx.ml``
opset :data:`ML_OPSET`, whose splits, leaves and sums are double), and has the outputs

``labels``
    what ``predict`` gives: for a machine +-1 (rule ``sign``), the class index (``argmax``,
    ``cost_sensitive``), the value (``identity``) or its exponential (``exp``, the log-link losses), or
    the labels given as ``classes``; for an estimator its class labels;
``scores``
    float32: the machine's (N, #outputs) scores, baseline included, or an estimator's
    ``decision_function`` (a regressor's predictions, ``exp`` of the scores for the log-link losses);
``probabilities``
    float32 (N, #classes), for classifiers whose ``predict_proba`` exists.

Every built-in weak machine converts: stumps and trees (gradient trees, multi-class trees and
stumps) become one ``TreeEnsemble`` (a tree with several outputs, one copy per output); LUTs (uni-
and multi-variate, multi-class) become look-up columns read with ``Gather``, which hold an
(N, #columns) array: evaluate long LUT ensembles in batches of rows. A plugin weak machine
needs a converter (:func:`register_converter`); without one, export raises a ``TypeError`` naming
the type.

Inputs the model cannot evaluate give, in the graph, what a graph can give: a LUT feature outside
its table (or NaN in a LUT without a NaN entry) makes the row's scores NaN, and NaN in a
split feature whose split learnt no direction goes left, where bob_boost raises a ``ValueError``.
float32 represents every integer up to 2**24 exactly, so LUT indices (at most 65536 entries) are
read exactly.

onnx is optional: ``pip install "bob_boost[onnx]"`` (onnx >= 1.17; onnxruntime >= 1.21, which runs
``TreeEnsemble``, comes with it).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..costs import cost_star
from ..exceptions import InvalidTypeError, InvalidValueError
from ..io.hdf5 import atomic_path
from ..machine import BoostedMachine
from .._optional import optional_import
from ._parts import Columns, Trees, add_machine, converter_of, ensemble_attributes, register_converter

__all__ = ["ML_OPSET", "OPSET", "Graph", "register_converter", "save_onnx", "to_onnx"]

#: The opsets of the default and the ``ai.onnx.ml`` domain (``TreeEnsemble``, which computes in double).
OPSET = 17
ML_OPSET = 5


def _onnx():
    return optional_import("onnx", "ONNX export")


class Graph:
    """The nodes and constants of a graph being written; converters add to it.

    Parameters
    ----------
    onnx : module
        The imported ``onnx`` package.
    """

    def __init__(self, onnx) -> None:
        self.onnx = onnx
        self.nodes: list = []
        self.initializers: list = []
        self._names = 0

    def name(self, hint: str) -> str:
        """A fresh tensor name."""
        self._names += 1
        return f"{hint}_{self._names}"

    def constant(self, array, hint: str = "constant") -> str:
        """Add ``array`` as an initializer; returns its name."""
        name = self.name(hint)
        array = np.asarray(array)
        if array.dtype.kind in "US":
            tensor = self.onnx.helper.make_tensor(name, self.onnx.TensorProto.STRING, array.shape,
                                                  [str(v).encode() for v in array.ravel()])
        else:
            tensor = self.onnx.numpy_helper.from_array(array, name)
        self.initializers.append(tensor)
        return name

    def node(self, op: str, inputs: list[str], output: str | None = None, domain: str | None = None,
             **attributes: Any) -> str:
        """Add an ``op`` node (of ``domain``, default ONNX's) with one output; returns the output's name."""
        output = output or self.name(op.lower())
        self.nodes.append(self.onnx.helper.make_node(op, inputs, [output], domain=domain, **attributes))
        return output


def _column(graph: Graph, matrix: str, index: int) -> str:
    """Column ``index`` of an (N, K) tensor as an (N,) tensor."""
    return graph.node("Gather", [matrix, graph.constant(np.array(index, dtype=np.int64), "column")], axis=1)


def _tree_outputs(graph: Graph, trees: Trees, x: str, outputs: int) -> str | None:
    """(N, K) sums of the trees' leaf values: one ONNX-ML ``TreeEnsemble``, in double precision."""
    attributes, constant = ensemble_attributes(trees)
    parts = []
    if attributes["tree_roots"]:
        tensor = graph.onnx.numpy_helper.from_array
        modes = np.array(attributes.pop("nodes_modes"), dtype=np.uint8)
        members = attributes.pop("membership_values")
        if members:
            attributes["membership_values"] = tensor(np.array(members, dtype=np.float64))
        parts.append(graph.node(
            "TreeEnsemble", [x], domain="ai.onnx.ml", n_targets=outputs, aggregate_function=1, post_transform=0,
            nodes_modes=tensor(modes), nodes_splits=tensor(np.array(attributes.pop("nodes_splits"))),
            leaf_weights=tensor(np.array(attributes.pop("leaf_weights"), dtype=np.float64)), **attributes))
    if np.any(constant != 0):
        parts.append(graph.constant(constant[np.newaxis, :], "leaf_only_trees"))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else graph.node("Add", parts)


def _column_outputs(graph: Graph, columns: Columns, x: str, outputs: int) -> str:
    """(N, K) sums of the look-up columns; NaN where a feature value is outside its column's table."""
    sizes = np.array([t.size for t in columns.tables]) - (np.array(columns.missing_rows) >= 0)
    value = graph.node("Gather", [x, graph.constant(np.array(columns.features, dtype=np.int64), "lut_feature")],
                       axis=1)
    missing_rows = np.array(columns.missing_rows, dtype=np.float64)
    valid = graph.node("And", [graph.node("GreaterOrEqual", [value, graph.constant(np.zeros(1))]),
                               graph.node("LessOrEqual", [value, graph.constant((sizes - 1).astype(np.float64))])])
    if np.any(missing_rows >= 0):  # NaN reads the column's NaN row where it has one; elsewhere it is invalid
        nan_row = graph.node("And", [graph.node("IsNaN", [value]), graph.constant(missing_rows >= 0)])
        valid = graph.node("Or", [valid, nan_row])
        value = graph.node("Where", [nan_row, graph.constant(missing_rows), value])
    safe = graph.node("Where", [valid, value, graph.constant(np.zeros(1))])  # invalid rows read row 0, then NaN
    index = graph.node("Add", [graph.node("Cast", [safe], to=_onnx().TensorProto.INT64),
                               graph.constant(np.array(columns.offsets, dtype=np.int64), "offsets")])
    read = graph.node("Gather", [graph.constant(np.concatenate(columns.tables).astype(np.float64), "tables"), index])
    read = graph.node("Where", [valid, read, graph.constant(np.array([np.nan]))])
    sums = np.zeros((len(columns.outputs), outputs))
    sums[np.arange(len(columns.outputs)), columns.outputs] = 1.0
    return graph.node("MatMul", [read, graph.constant(sums, "column_outputs")])


def machine_scores(graph: Graph, machine: BoostedMachine, x: str) -> str:
    """(N, #outputs) double scores of ``machine`` from the double features ``x``, baseline included."""
    outputs = machine.number_of_outputs or 1
    trees, columns, others = Trees(), Columns(), []
    for weak_machine, weight in zip(machine.weak_machines, machine.weights):
        if not add_machine(weak_machine, weight, trees, columns):
            converter = converter_of(weak_machine)
            if converter is None:
                raise InvalidTypeError(f"model: no ONNX converter for weak machines of type "
                                       f"{type(weak_machine).__name__} ({weak_machine.machine_type!r}); register "
                                       f"one with bob_boost.onnx.register_converter")
            others.append((converter, weak_machine, weight))
    rows = graph.node("Slice", [graph.node("Shape", [x]), graph.constant(np.array([0])), graph.constant(np.array([1]))])
    shape = graph.node("Concat", [rows, graph.constant(np.array([outputs]))], axis=0)
    scores = graph.node("Expand", [graph.constant(machine.baseline[np.newaxis, :], "baseline"), shape])
    parts = []
    if trees.size:
        tree_part = _tree_outputs(graph, trees, x, outputs)
        if tree_part is not None:
            parts.append(tree_part)
    if columns.size:
        parts.append(_column_outputs(graph, columns, x, outputs))
    for converter, weak_machine, weight in others:
        parts.append(graph.node("Mul", [converter(weak_machine, graph, x), graph.constant(weight[np.newaxis, :])]))
    for part in parts:
        scores = graph.node("Add", [scores, part])
    return scores


def _class_indices(graph: Graph, machine: BoostedMachine, scores: str) -> str:
    """(N,) int64 class index of the machine's decision rule; a multi-label machine's (N, K) 0 / 1 indicator."""
    rule = machine.decision_rule
    if rule == "multilabel":
        return graph.node("Cast", [graph.node("Greater", [scores, graph.constant(np.zeros(1))])],
                          to=_onnx().TensorProto.INT64)
    if rule == "sign":
        positive = graph.node("Greater", [_column(graph, scores, 0), graph.constant(np.zeros(1))])
        return graph.node("Cast", [positive], to=_onnx().TensorProto.INT64)
    if rule == "cost_sensitive":
        costs = graph.node("MatMul", [scores, graph.constant(cost_star(machine.cost_matrix).T.copy(), "cost_star")])
        return graph.node("ArgMin", [costs], axis=1, keepdims=0)
    return graph.node("ArgMax", [scores], axis=1, keepdims=0)


def _class_labels(graph: Graph, classes, indices: str) -> str:
    """(N,) labels: ``classes[indices]`` (strings, numbers or booleans)."""
    classes = np.asarray(classes)
    if classes.dtype.kind == "O":
        classes = classes.astype(str)
    return graph.node("Gather", [graph.constant(classes, "classes"), indices])


def _machine_outputs(graph: Graph, machine: BoostedMachine, scores: str, classes) -> tuple[str, str, str | None]:
    # a multi-label machine's labels are +-1 per label whatever the labels are called
    if classes is not None and machine.decision_rule != "multilabel":
        if not machine.is_classifier:
            raise InvalidValueError("classes: a regression machine (decision rule 'identity') has no classes")
        if len(classes) != max(machine.number_of_outputs or 1, 2):
            raise InvalidValueError(f"classes: expected {max(machine.number_of_outputs or 1, 2)} labels, "
                                    f"got {len(classes)}")
        return _class_labels(graph, classes, _class_indices(graph, machine, scores)), scores, None
    if machine.decision_rule in ("identity", "exp"):
        values = graph.node("Exp", [scores]) if machine.decision_rule == "exp" else scores
        labels = _column(graph, values, 0) if (machine.number_of_outputs or 1) == 1 else values
    elif machine.decision_rule in ("sign", "multilabel"):  # +-1: of one output, or of every label
        source = scores if machine.decision_rule == "multilabel" else _column(graph, scores, 0)
        positive = graph.node("Greater", [source, graph.constant(np.zeros(1))])
        labels = graph.node("Where", [positive, graph.constant(np.array([1])), graph.constant(np.array([-1]))])
    else:
        labels = _class_indices(graph, machine, scores)
    return labels, scores, None


def _estimator_outputs(graph: Graph, estimator, scores: str) -> tuple[str, str, str | None]:
    machine = estimator.machine_
    if not hasattr(estimator, "classes_"):  # a regressor: its prediction is the machine's only score (its exp)
        prediction = _column(graph, scores, 0)
        if machine.decision_rule == "exp":
            prediction = graph.node("Exp", [prediction])
        return prediction, prediction, None
    classes = np.asarray(estimator.classes_)
    labels = _class_indices(graph, machine, scores)
    if machine.decision_rule != "multilabel":  # a multi-label prediction is the indicator itself
        labels = _class_labels(graph, classes, labels)
    decision = scores
    if machine.cost_matrix is not None:
        decision = graph.node("Neg", [graph.node("MatMul", [scores, graph.constant(
            cost_star(machine.cost_matrix).T.copy(), "cost_star")])])
    link = estimator._probability_link() if estimator._has_probabilities() else None
    probabilities = None if link is None else _probabilities(graph, link, scores, decision)
    if machine.cost_matrix is not None and classes.size == 2:
        decision = graph.node("Sub", [_column(graph, decision, 1), _column(graph, decision, 0)])
    elif (machine.number_of_outputs or 1) == 1:
        decision = _column(graph, decision, 0)
    return labels, decision, probabilities


def _probabilities(graph: Graph, link: tuple, scores: str, decision: str) -> str:
    """The estimator's ``predict_proba`` (see ``_probability_link`` of the estimators)."""
    if link[0] == "softmax":  # of the scores, times a factor where the link has one
        scaled = scores if len(link) == 1 else graph.node("Mul", [scores, graph.constant(np.array([float(link[1])]))])
        return graph.node("Softmax", [scaled], axis=1)
    if link[0] == "softmax_decision":
        return graph.node("Softmax", [decision], axis=1)
    if link[0] == "sigmoid_each":  # independent labels
        return graph.node("Sigmoid", [graph.node("Mul", [scores, graph.constant(np.array([float(link[1])]))])])
    scaled = graph.node("Mul", [scores, graph.constant(np.array([float(link[1])]))])
    if len(link) > 3:  # an offset: sigmoid(c * scores + d)
        scaled = graph.node("Add", [scaled, graph.constant(np.array([float(link[3])]))])
    one_vs_rest = graph.node("Sigmoid", [scaled])
    if link[2] == 1:
        return graph.node("Concat", [graph.node("Sub", [graph.constant(np.ones((1, 1))), one_vs_rest]),
                                     one_vs_rest], axis=1)
    total = graph.node("ReduceSum", [one_vs_rest, graph.constant(np.array([1]))], keepdims=1)
    return graph.node("Div", [one_vs_rest, total])


def to_onnx(model, n_features: int | None = None, classes=None):
    """The ONNX graph of a :class:`~bob_boost.BoostedMachine` or a fitted :mod:`bob_boost.sklearn` estimator.

    Parameters
    ----------
    model : BoostedMachine or estimator
        The machine, or an estimator (anything with ``machine_``; classifiers also ``classes_``).
    n_features : int, optional
        The input width, for a machine that does not record ``number_of_features``; by default the
        recorded width, or one more than the largest feature read.
    classes : sequence, optional
        For a classifier machine: the labels its class indices stand for (index order), so that the
        ``labels`` output gives them instead of +-1 or the index, as ``bob-boost predict`` does with
        the labels a model file records. Estimators use their ``classes_``.

    Returns
    -------
    onnx.ModelProto
        A checked model (``onnx.checker.check_model``) with the outputs described in the module
        documentation.

    Raises
    ------
    TypeError
        For a model that is neither, or a weak machine type without converter.
    ValueError
        For an ``n_features`` smaller than the features the machine reads, or not a positive integer;
        ``classes`` of the wrong length or for a regression machine.
    ImportError
        If onnx is not installed.
    """
    onnx = _onnx()
    estimator = None if isinstance(model, BoostedMachine) else model
    machine = model if estimator is None else getattr(model, "machine_", None)
    if not isinstance(machine, BoostedMachine):
        raise InvalidTypeError(f"model: expected a BoostedMachine or a fitted bob_boost estimator, "
                               f"got {type(model).__name__}")
    width = _width(machine, estimator, n_features)
    graph = Graph(onnx)
    x = graph.node("Cast", ["features"], "features_double", to=onnx.TensorProto.DOUBLE)
    scores = machine_scores(graph, machine, x)
    labels, decision, probabilities = (_machine_outputs(graph, machine, scores, classes) if estimator is None
                                       else _estimator_outputs(graph, estimator, scores))
    outputs = [graph.node("Identity", [labels], "labels"),
               graph.node("Cast", [decision], "scores", to=onnx.TensorProto.FLOAT)]
    if probabilities is not None:
        outputs.append(graph.node("Cast", [probabilities], "probabilities", to=onnx.TensorProto.FLOAT))
    inputs = [onnx.helper.make_tensor_value_info("features", onnx.TensorProto.FLOAT, ["N", width])]
    results = [onnx.helper.make_value_info(name, onnx.TypeProto()) for name in outputs]
    onnx_graph = onnx.helper.make_graph(graph.nodes, "bob_boost", inputs, results, graph.initializers)
    result = onnx.helper.make_model(onnx_graph, opset_imports=[onnx.helper.make_opsetid("", OPSET),
                                                               onnx.helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
                                    producer_name="bob_boost")
    result.ir_version = 8  # what onnxruntime releases of the last years all read
    result = onnx.shape_inference.infer_shapes(result)
    _typed_outputs(onnx, result)
    onnx.checker.check_model(result, full_check=True)
    return result


def _typed_outputs(onnx, model) -> None:
    """Give the graph outputs the types shape inference found for them."""
    inferred = {value.name: value for value in model.graph.value_info}
    for output in model.graph.output:
        if output.name in inferred:
            output.type.CopyFrom(inferred[output.name].type)


def _width(machine: BoostedMachine, estimator, n_features: int | None) -> int:
    read = machine.feature_indices()
    needed = int(read[-1]) + 1 if read.size else 1
    if n_features is None:
        n_features = getattr(estimator, "n_features_in_", None) or machine.number_of_features or needed
    elif isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) or n_features < 1:
        raise InvalidValueError(f"n_features: expected a positive integer, got {n_features!r}")
    if n_features < needed:
        raise InvalidValueError(f"n_features: the machine reads feature {needed - 1}, so it needs at least "
                                f"{needed} features, got {n_features}")
    return int(n_features)


def save_onnx(model, path, **options) -> None:
    """Write :func:`to_onnx` of ``model`` (with ``options``) to ``path``; a failed write leaves ``path`` as it was."""
    exported = to_onnx(model, **options)
    with atomic_path(path, ".onnx.tmp") as temporary:
        _onnx().save(exported, temporary)
