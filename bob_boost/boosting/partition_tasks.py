"""What each row partition computes for the partitioned algorithms (:mod:`bob_boost.boosting.partitioned`):
plain numpy functions of one partition's arrays (coded features, targets, current scores, sample weights,
log weights), which return a few numbers, a histogram, or the partition's next arrays. The partitions add
what they return in partition order (:mod:`bob_boost.boosting.partitions`).
"""
from __future__ import annotations

import numpy as np

from ..costs import predicted_exponents, sample_cost_exponents
from ..engine.codes import CodedFeatures
from ..exceptions import InvalidValueError
from ..losses import LossFunction
from ..losses.exponential import EXPONENT_LIMIT
from .sampling import goss_magnitudes
from .steps import exponential_derivative


def checked_weights(weights: np.ndarray) -> np.ndarray:
    """The partition's sample weights; NaN, infinite or negative ones are errors."""
    if not (np.isfinite(weights).all() and np.all(weights >= 0)):
        raise InvalidValueError("sample_weight: must be finite and non-negative")
    return weights


# -- generic boosting: stumps, look-up tables, gradient trees ------------------------------------------------

def gradient_histogram(coded: CodedFeatures, targets: np.ndarray, scores: np.ndarray, weights,
                       loss: LossFunction, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(#bins, #outputs) histogram of the partition's weighted loss gradient, its column sums and absolute sums."""
    gradient = loss.loss_gradient(targets, scores)
    if weights is not None:
        gradient = gradient * weights[:, np.newaxis]
    gradient = np.ascontiguousarray(gradient)
    return coded.histograms(gradient, offsets), gradient.sum(axis=0), np.abs(gradient).sum(axis=0)


def gradient_magnitudes(targets: np.ndarray, scores: np.ndarray, weights, loss: LossFunction) -> np.ndarray:
    """The partition's keys of GOSS (:func:`bob_boost.boosting.sampling.goss_magnitudes`)."""
    return goss_magnitudes(loss.loss_gradient(targets, scores), weights)


def weight_magnitudes(weights: np.ndarray) -> np.ndarray:
    """The partition's GOSS keys of the multi-class algorithms: their sample weights, the exponential loss's
    gradient magnitudes."""
    return goss_magnitudes(weights[:, np.newaxis], None)


def times(weights, factors: np.ndarray) -> np.ndarray:
    """The partition's sample weights (None: ones) times the round's factors."""
    return factors if weights is None else weights * factors


def newton_derivatives(targets: np.ndarray, scores: np.ndarray, outputs: np.ndarray, weights, loss: LossFunction,
                       alpha: np.ndarray) -> np.ndarray:
    """(2, #outputs): the partition's derivative and second derivative of the loss along ``outputs`` at ``alpha``."""
    moved = scores + alpha * outputs
    first = loss.loss_gradient(targets, moved) * outputs
    second = loss.loss_hessian(targets, moved) * outputs * outputs
    if weights is not None:
        first, second = first * weights[:, np.newaxis], second * weights[:, np.newaxis]
    return np.stack([first.sum(axis=0), second.sum(axis=0)])


def loss_and_gradient(targets: np.ndarray, scores: np.ndarray, outputs: np.ndarray, weights, loss: LossFunction,
                      alpha: np.ndarray) -> np.ndarray:
    """``[loss, gradient in alpha...]``: the partition's summed loss at ``scores + alpha * outputs`` and its
    derivative in each output's weight (the L-BFGS objective's part of this partition)."""
    value, gradient = loss.loss_and_gradient_sum(alpha, targets, scores, outputs, weights)
    return np.concatenate([[value], gradient])


def exponential_sums(targets: np.ndarray, scores: np.ndarray, outputs: np.ndarray, weights) -> np.ndarray:
    """The exponential loss's weight on the samples the stump gets right and wrong, the largest exponent,
    and whether every target is +-1: ``phi(alpha) = right * exp(-alpha) + wrong * exp(alpha)`` then."""
    exponent = -targets * scores
    values = np.exp(np.minimum(exponent, EXPONENT_LIMIT))[:, 0]
    if weights is not None:
        values = values * weights
    right = (targets * outputs)[:, 0] > 0
    return np.array([values[right].sum(), values[~right].sum(), exponent.max(),
                     float(np.all(np.abs(targets) == 1.0))])


def moved(scores: np.ndarray, outputs: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """The partition's scores after the round's weak machine."""
    return scores + alpha * outputs


def constant_scores(scores: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    """The partition's scores all set to ``baseline`` (one value per output)."""
    return np.zeros_like(scores) + baseline


def training_loss(targets: np.ndarray, scores: np.ndarray, weights, loss: LossFunction) -> float:
    """The partition's (weighted) training loss."""
    values = loss.loss(targets, scores)
    return float(np.sum(values if weights is None else weights[:, np.newaxis] * values))


def moved_loss(targets: np.ndarray, scores: np.ndarray, outputs: np.ndarray, weights, loss: LossFunction,
               alpha: np.ndarray) -> float:
    """The partition's (weighted) training loss at its scores moved by ``alpha`` times the round's weak outputs."""
    return training_loss(targets, scores + alpha * outputs, weights, loss)


def machine_scores(rows: np.ndarray, machine, include_baseline: bool) -> np.ndarray:
    """(#rows, #outputs) scores of a machine being continued on the partition's raw rows: its rounds added in
    order from the baseline (or from 0, for residuals), as training added them, so bit for bit the scores
    one longer run would have reached."""
    return machine.decision_scores(rows, include_baseline=include_baseline)


def rebuilt_scores(coded: CodedFeatures, start, outputs: int, history: tuple) -> np.ndarray:
    """The partition's scores rebuilt from its codes and the weak machines so far.

    ``start`` holds the scores before the run (None: zeros); ``history`` holds each round's ``(output
    task, its arguments, weights)``; the rounds are added in their order, as :func:`moved` added them, so
    the scores are the same bit for bit. This cuts the chain of each round's scores depending on the last
    (see :attr:`bob_boost.boosting.partitions.Partitions.checkpoint_rounds`).
    """
    scores = np.zeros((coded.n_samples, outputs)) if start is None else start
    for task, arguments, alpha in history:
        scores = scores + alpha * task(coded, *arguments)
    return scores


def column_sums(values: np.ndarray) -> np.ndarray:
    """The partition's column sums (a one-hot target matrix: its class counts)."""
    return values.sum(axis=0)


# -- cost-sensitive binary boosting (AdaBoostDB, Cost-Sensitive AdaBoost) -------------------------------

def weak_outputs(rows: np.ndarray, weak) -> np.ndarray:
    """(#rows, #outputs) a weak machine's outputs on the partition's raw rows."""
    return weak.forward(rows)


def classifies_all(outputs: np.ndarray, labels: np.ndarray, log_initial: np.ndarray) -> bool:
    """Whether the outputs' sign is every weighted row's label (a stump without training error)."""
    weighted = np.isfinite(log_initial)
    return bool(np.all(np.sign(outputs[weighted, 0]) == labels[weighted]))


def class_sums(labels: np.ndarray, weights) -> np.ndarray:
    """(2,) the partition's positive and negative sample counts (or weights)."""
    values = np.ones(labels.size) if weights is None else weights
    positive = labels > 0
    return np.array([values[positive].sum(), values[~positive].sum()])


def log_weight_peak(weights) -> float:
    """The largest logarithm of the partition's sample weights (for a global log-sum-exp)."""
    with np.errstate(divide="ignore"):
        return float(np.log(weights).max())


def scaled_weight_sum(weights, peak: float) -> float:
    """``sum exp(log w - peak)`` over the partition."""
    with np.errstate(divide="ignore"):
        return float(np.exp(np.log(weights) - peak).sum())


def log_initial(labels: np.ndarray, weights, shifts: np.ndarray) -> np.ndarray:
    """The partition's ``log D_1``: ``log w + shift`` (``shifts``: (2,) per class, or the same for both)."""
    shift = np.where(labels > 0, shifts[0], shifts[1])
    if weights is None:
        return shift
    with np.errstate(divide="ignore"):  # a zero weight is -inf: the sample never counts
        return np.log(weights) + shift


def _log_weights(labels, scores, initial, costs):
    return initial - np.where(labels > 0, costs[0], costs[1]) * labels * scores[:, 0]


def class_peaks(labels: np.ndarray, scores: np.ndarray, initial: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """(2,) the largest current log weight of each class in the partition (-inf for a class it lacks)."""
    log_weights = _log_weights(labels, scores, initial, costs)
    positive = labels > 0
    return np.array([log_weights[positive].max(initial=-np.inf), log_weights[~positive].max(initial=-np.inf)])


def class_histogram(coded: CodedFeatures, labels: np.ndarray, scores: np.ndarray, initial: np.ndarray,
                    costs: np.ndarray, references: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(#bins, 2) per-bin sums of each class's ``exp(log weight - reference)``, and their (2,) totals."""
    log_weights = _log_weights(labels, scores, initial, costs)
    positive = labels > 0
    weights = np.zeros((labels.size, 2))
    weights[positive, 0] = np.exp(log_weights[positive] - references[0])
    weights[~positive, 1] = np.exp(log_weights[~positive] - references[1])
    return coded.histograms(weights, offsets), weights.sum(axis=0)


# -- multi-class boosting (BAdaCost, SAMME, AdaBoost.M1) ------------------------------------------------------

def initial_log_weights(labels: np.ndarray, weights, mean: float) -> np.ndarray:
    """``log(w / mean)`` (0 without weights): the in-memory trainers' mean-1 initial weights, in logs."""
    if weights is None:
        return np.zeros(labels.size)
    with np.errstate(divide="ignore"):  # a zero weight stays zero
        return np.log(weights / mean)


def replayed_log_weights(rows: np.ndarray, labels: np.ndarray, initial: np.ndarray, row_exponents: np.ndarray | None,
                         exponents: np.ndarray, machine) -> np.ndarray:
    """The partition's log weights after a continued machine's rounds, replayed on its raw rows in their order, as
    the in-memory loop replays them (:meth:`bob_boost.boosting.closed_form.MulticlassCostBoosting.start`)."""
    log_weights = initial
    for weak, weight in zip(machine.weak_machines, machine.weights[:, 0]):
        log_weights = log_weights + weight * predicted_exponents(labels, weak.forward_labels(rows), exponents,
                                                                 row_exponents)
    return log_weights


def raw_confusion(rows: np.ndarray, labels: np.ndarray, weights: np.ndarray, weak, k: int) -> np.ndarray:
    """(K, K) weighted confusion matrix of a weak machine's labels on the partition's raw rows."""
    return np.bincount(labels * k + weak.forward_labels(rows), weights=weights, minlength=k * k).reshape(k, k)


# -- example-dependent costs: per-row exponents, losses and the step on their sums ------------------------------

def cost_exponents(costs: np.ndarray, labels: np.ndarray, first: int, number_of_classes: int) -> np.ndarray:
    """The partition's (#rows, K) BAdaCost exponents of its block of example-dependent costs (checked, the
    samples named by their place in the whole array: the block's first is sample ``first``)."""
    return sample_cost_exponents(costs, labels, number_of_classes, first=first)


def exponent_losses(row_exponents: np.ndarray, shift: float) -> np.ndarray:
    """The weak learner's per-row losses ``exp(row exponents - shift)``."""
    return np.exp(row_exponents - shift)


def exponent_range(row_exponents: np.ndarray) -> np.ndarray:
    """The partition's largest exponent and largest magnitude of one (-inf and 0 without rows)."""
    return np.array([row_exponents.max(initial=-np.inf), np.abs(row_exponents).max(initial=0.0)])


def step_terms(weights: np.ndarray, sample_node: np.ndarray, row_exponents: np.ndarray,
               node_labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The partition's terms ``(s, u)`` of BAdaCost's step with example-dependent costs: the weights of its rows
    of positive weight and their exponents for the tree's prediction (the labels of their leaves), made once a
    round for every point of the root search (:func:`term_sums`, :func:`term_derivative`)."""
    return _terms(weights, row_exponents, node_labels[sample_node])


def raw_step_terms(rows: np.ndarray, weights: np.ndarray, row_exponents: np.ndarray, weak) -> tuple:
    """:func:`step_terms` of a weak machine's labels on the partition's raw rows."""
    return _terms(weights, row_exponents, weak.forward_labels(rows))


def _terms(weights: np.ndarray, row_exponents: np.ndarray, predicted: np.ndarray) -> tuple:
    active = weights > 0
    return weights[active], row_exponents[np.flatnonzero(active), predicted[active]]


def term_sums(terms: tuple) -> np.ndarray:
    """``(sum s u, min u, max u)`` of the partition's step terms (no terms: ``(0, inf, -inf)``), for
    :func:`~bob_boost.boosting.steps.exponential_root`."""
    s, u = terms
    return np.array([np.sum(s * u), u.min(initial=np.inf), u.max(initial=-np.inf)])


def term_derivative(terms: tuple, beta: float, shift: float) -> float:
    """The partition's ``sum s u exp(beta u - shift)`` over its step terms."""
    return exponential_derivative(*terms, beta, shift)


def largest(values: np.ndarray) -> float:
    """The partition's largest value (-inf for an empty partition)."""
    return float(values.max(initial=-np.inf))


def exp_sum(log_weights: np.ndarray, peak: float) -> float:
    """``sum exp(log w - peak)``."""
    return float(np.exp(log_weights - peak).sum())


def normalised(log_weights: np.ndarray, log_total: float) -> np.ndarray:
    """The partition's share of the normalised weights ``exp(log w - log total)``."""
    return np.exp(log_weights - log_total)


def confusion(labels: np.ndarray, sample_node: np.ndarray, weights: np.ndarray, node_labels: np.ndarray,
              k: int) -> np.ndarray:
    """(K, K) weighted confusion matrix of the tree's predictions (the labels of the rows' leaves)."""
    predicted = node_labels[sample_node]
    return np.bincount(labels * k + predicted, weights=weights, minlength=k * k).reshape(k, k)


def updated_log_weights(log_weights: np.ndarray, labels: np.ndarray, sample_node: np.ndarray,
                        row_exponents: np.ndarray | None, node_labels: np.ndarray, exponents: np.ndarray,
                        weight: float) -> np.ndarray:
    """The multi-class weight update ``log w + weight * exponents[label, predicted]`` (a row's own exponents with
    example-dependent costs)."""
    return log_weights + weight * predicted_exponents(labels, node_labels[sample_node], exponents, row_exponents)


def rebuilt_log_weights(coded: CodedFeatures, labels: np.ndarray, initial: np.ndarray,
                        row_exponents: np.ndarray | None, exponents: np.ndarray, history: tuple) -> np.ndarray:
    """The partition's log weights rebuilt from its codes and the trees so far, as the rounds updated them.

    ``history`` holds each round's ``(leaves, its arguments, node labels, weight)``: ``leaves(coded,
    *arguments)`` gives every row's leaf, routed from the root as growing moved it.
    """
    log_weights = initial
    for leaves, arguments, node_labels, weight in history:
        log_weights = updated_log_weights(log_weights, labels, leaves(coded, *arguments), row_exponents, node_labels,
                                          exponents, weight)
    return log_weights
