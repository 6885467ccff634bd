"""The loss-function interface shared by every boosting loss."""
from __future__ import annotations

import weakref

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit

from .._validation import as_score_matrix
from ..exceptions import InvalidValueError

#: Class shares are clipped to [SHARE_LIMIT, 1 - SHARE_LIMIT] where a baseline takes their log: a class
#: without weight then gets a finite score (log-odds about -36, as scikit-learn's intercepts), not infinity.
SHARE_LIMIT = float(np.finfo(np.float64).eps)


#: The last halves :func:`joined_derivatives` recognised and their array (weak references): a round asks about
#: the same two halves several times, and the answer stays while they live (a view's array and place never change).
_recent: list = [None]


def joined_derivatives(gradient: np.ndarray, hessian: np.ndarray) -> np.ndarray | None:
    """The C-ordered (#samples, 2K) array whose halves ``gradient`` and ``hessian`` are
    (:meth:`LossFunction.derivatives_into`'s), or None when they are not its halves."""
    recent = _recent[0]  # read once: another thread may replace it meanwhile
    if recent is not None and recent[0]() is gradient and recent[1]() is hessian:
        return recent[2]()
    joint = _joint_of(gradient, hessian)
    if joint is not None:
        _recent[0] = (weakref.ref(gradient), weakref.ref(hessian), weakref.ref(joint))
    return joint


def _joint_of(gradient: np.ndarray, hessian: np.ndarray) -> np.ndarray | None:
    joint = gradient.base
    if not (isinstance(joint, np.ndarray) and hessian.base is joint and joint.flags.c_contiguous
            and joint.dtype == np.float64 and gradient.ndim == 2 and joint.shape == (gradient.shape[0],
                                                                                    2 * gradient.shape[1])):
        return None
    start = joint.__array_interface__["data"][0]
    halves = (gradient.__array_interface__["data"][0], hessian.__array_interface__["data"][0])
    same_layout = hessian.shape == gradient.shape and gradient.strides == hessian.strides == joint.strides
    return joint if same_layout and halves == (start, start + 8 * gradient.shape[1]) else None


def unit_weights(sample_weight: np.ndarray | None) -> bool:
    """Whether ``sample_weight`` is given and every weight is 1 (an estimator's default): weighted sums are then
    the unweighted ones, bit for bit, and the multiplication a wasted pass."""
    return sample_weight is not None and bool(np.all(np.asarray(sample_weight) == 1.0))


def weighted(values: np.ndarray, sample_weight: np.ndarray | None) -> np.ndarray:
    """``sample_weight[n] * values[n, :]``, or ``values`` itself without weights.

    Parameters
    ----------
    values : numpy.ndarray
        (#samples,) or (#samples, #outputs) per-sample losses or gradients.
    sample_weight : numpy.ndarray or None
        (#samples,) factors.
    """
    if sample_weight is None:
        return values
    weights = np.asarray(sample_weight, dtype=np.float64)
    if weights.shape != (values.shape[0],):
        raise InvalidValueError(f"sample_weight: expected shape ({values.shape[0]},), got {weights.shape}")
    return (weights if values.ndim == 1 else weights[:, np.newaxis]) * values


class LossFunction:
    """Base class of all losses.

    A subclass implements :meth:`loss` and :meth:`loss_gradient` on arrays of
    shape (#samples, #outputs); the base class derives from them the two
    functions that the boosting trainer minimises over the weight of a new
    weak machine, :meth:`loss_sum` and :meth:`loss_gradient_sum`. Every
    method takes ``sample_weight`` (per-sample factors of the loss, as in
    scikit-learn's losses); the base class's methods apply it to what the
    subclass's unweighted methods return, so a third-party loss written
    without ``sample_weight`` is weighted correctly too.

    Subclasses may override :meth:`check_targets` to reject targets the loss
    is not defined for, and say what their models mean: :meth:`decision_rule`
    (how scores become predictions) and, for classification losses with a
    probability model, :meth:`inverse_link`.
    """

    #: Short name under which the loss is registered (see :mod:`bob_boost.registry`).
    name: str = ""

    #: A (K, K) cost matrix for losses whose models predict with the
    #: cost-sensitive rule ``argmin_k (C* S(x))_k``; None for the others.
    #: :class:`~bob_boost.trainers.Boosting` gives it to the machines it creates.
    cost_matrix: np.ndarray | None = None

    #: Whether the gradient and hessian at a sample depend on that sample's targets and scores only,
    #: computed so that any slice of rows gives the same bits as the whole matrix: the training loop
    #: then evaluates them on blocks of rows in threads (:mod:`bob_boost.boosting.rows`). False, the
    #: safe default, for third-party losses, and for a subclass that defines its own derivatives
    #: without setting it again (see :meth:`__init_subclass__`).
    row_separable: bool = False

    #: Whether the loss is convex in the scores. Along a step rule's weights the loss then stays at or
    #: below its value at 0 when the weights are shrunk (any ``learning_rate`` <= 1), so the training
    #: loop's descent guarantee needs no extra evaluation. False, the safe default, for third-party losses.
    convex: bool = False

    #: Whether the loss depends on ``scores - targets`` only (squared, Huber, absolute, quantile): a machine's
    #: baseline ``b`` may then be taken out of the targets (the rounds boost ``targets - b`` from 0), as
    #: bob_boost's regressors always did. For the others the rounds start from the scores ``b``.
    shift_invariant: bool = False

    #: Whether a gradient tree's leaf values are re-estimated from the residuals of its rows
    #: (:meth:`leaf_values`) once the tree is grown, as LightGBM and scikit-learn do for the absolute and
    #: quantile losses, whose Newton leaves (with a constant hessian) only give a direction. The values must
    #: minimise the loss over each leaf's rows: for a :attr:`convex` loss the training loop then takes the
    #: round's step as a descent without evaluating the loss.
    renews_leaves: bool = False

    #: The elementary steps an entry of its gradient and hessian costs on a block of rows, which decides from how
    #: many rows the training loop computes them on threads (:data:`~bob_boost.engine.threads.MIN_PARALLEL_WORK`
    #: steps): 1 for numpy's vectorised arithmetic and exponentials, whose blocks cost little more than their
    #: Python calls; more for scalar exponentials (the logistic loss's compiled pass) or several outputs mixed
    #: per row (the softmax). A subclass that defines its own derivatives counts 1 unless it says otherwise.
    derivative_steps: int = 1

    #: A bound of the loss's curvature in the scores per unit of sample weight (the largest eigenvalue of a
    #: sample's hessian, or the Lipschitz constant of its gradient), or None without one: a step's loss is then
    #: at most its first-order change plus ``curvature / 2`` times its weighted squared length, and the
    #: training loop takes a step that this bound shows to descend without evaluating the loss. None, the safe
    #: default, for third-party losses, and for a subclass that defines its own loss or derivatives without
    #: setting it again.
    curvature: float | None = None

    def __init_subclass__(cls, **kwargs) -> None:
        """A subclass that overrides a derivative is not row-separable and costs one step an entry, one that
        overrides the loss is not convex, and one that overrides either has no curvature bound, unless it says so
        itself."""
        super().__init_subclass__(**kwargs)
        derivatives = ("loss_gradient", "loss_hessian", "gradient_and_hessian")
        if "row_separable" not in cls.__dict__ and any(name in cls.__dict__ for name in derivatives):
            cls.row_separable = False
        if "convex" not in cls.__dict__ and "loss" in cls.__dict__:
            cls.convex = False
        if "curvature" not in cls.__dict__ and any(name in cls.__dict__ for name in ("loss",) + derivatives):
            cls.curvature = None
        if "derivative_steps" not in cls.__dict__ and any(name in cls.__dict__ for name in derivatives):
            cls.derivative_steps = 1

    def decision_rule(self, number_of_outputs: int) -> str | None:
        """The decision rule of machines trained with this loss (see :mod:`bob_boost.decision`).

        None (the default, also for third-party losses) lets the machine
        decide as bob.learn.boosting does: the sign of one output, the
        largest of several, the cost rule with a :attr:`cost_matrix`.
        """
        return None

    @property
    def has_probabilities(self) -> bool:
        """Whether :meth:`inverse_link` maps scores to class probabilities."""
        return False

    def inverse_link(self, scores: np.ndarray) -> np.ndarray:
        """Class probabilities implied by (#samples, #outputs) ``scores``.

        Raises
        ------
        NotImplementedError
            For losses without a probability model (:attr:`has_probabilities` is False).
        """
        raise NotImplementedError(f"{type(self).__name__} defines no class probabilities")

    def loss(self, targets: np.ndarray, scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Per-sample loss.

        Parameters
        ----------
        targets, scores : numpy.ndarray
            Float arrays of shape (#samples, #outputs).
        sample_weight : numpy.ndarray, optional
            (#samples,) factors of every sample's loss (the built-in losses
            take it; the sums below apply it for any loss).

        Returns
        -------
        numpy.ndarray
            (#samples, #outputs) for losses that treat outputs separately, or
            (#samples, 1) for losses that couple them (e.g. Jesorsky).
        """
        raise NotImplementedError

    def loss_gradient(self, targets: np.ndarray, scores: np.ndarray,
                      sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Derivative of :meth:`loss` with respect to ``scores``, shape (#samples, #outputs)."""
        raise NotImplementedError

    def loss_hessian(self, targets: np.ndarray, scores: np.ndarray,
                     sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Second derivative of :meth:`loss` in each score, ``d^2 L / d s_k^2``, shape (#samples, #outputs).

        The diagonal of the per-sample Hessian, which Newton leaves of
        gradient trees use (:class:`~bob_boost.TreeTrainer`). A loss without
        one keeps this default, and :attr:`has_hessian` is False.

        Raises
        ------
        NotImplementedError
            For a loss that does not define its second derivative.
        """
        raise NotImplementedError(f"{type(self).__name__} defines no loss_hessian")

    @property
    def has_loss(self) -> bool:
        """Whether :meth:`loss` gives values (a :class:`~bob_boost.losses.custom.FunctionLoss` may know its
        derivatives only): the weight searches, the descent guarantee and scores need them."""
        return True

    @property
    def has_hessian(self) -> bool:
        """Whether the loss defines :meth:`loss_hessian`."""
        return type(self).loss_hessian is not LossFunction.loss_hessian

    def loss_and_gradient(self, targets: np.ndarray, scores: np.ndarray,
                          sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Both :meth:`loss` and :meth:`loss_gradient`.

        Losses whose two parts share expensive terms (e.g. an exponential)
        override this to compute them once; the weight search calls it at
        every step.
        """
        return (weighted(self.loss(targets, scores), sample_weight),
                weighted(self.loss_gradient(targets, scores), sample_weight))

    def gradient_and_hessian(self, targets: np.ndarray, scores: np.ndarray,
                             sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Both :meth:`loss_gradient` and :meth:`loss_hessian` (the rounds of gradient trees ask for both).

        Losses whose two derivatives share expensive terms (e.g. a softmax)
        override this to compute them once.
        """
        return (self.loss_gradient(targets, scores, sample_weight),
                self.loss_hessian(targets, scores, sample_weight))

    def derivatives_into(self, targets: np.ndarray, scores: np.ndarray, out: np.ndarray) -> None:
        """Fill (#samples, 2 #outputs) ``out`` with the unweighted gradient, then the hessian: the bits of
        :meth:`gradient_and_hessian`, side by side.

        Gradient trees read a sample's two derivatives together; a loss with a compiled form fills them in
        one pass over the rows instead of two arrays and a copy.
        """
        gradient, hessian = self.gradient_and_hessian(targets, scores)
        outputs = out.shape[1] // 2
        out[:, :outputs] = gradient
        out[:, outputs:] = hessian

    def loss_and_derivatives(self, targets: np.ndarray,
                             scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Unweighted :meth:`loss`, :meth:`loss_gradient` and :meth:`loss_hessian`, the same values as the
        three methods give.

        The training loop's descent check asks for all three at a round's new scores (the loss to accept
        the round, the derivatives for the next one). Losses whose parts share expensive terms (the
        softmax) override this to compute them once.
        """
        gradient, hessian = self.gradient_and_hessian(targets, scores)
        return self.loss(targets, scores), gradient, hessian

    def baseline(self, targets: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """(#outputs,) the constant scores of least weighted loss on validated ``targets`` (a machine's
        ``baseline="auto"``: LightGBM's ``boost_from_average``).

        Raises
        ------
        NotImplementedError
            For a loss that does not define its optimal constant.
        """
        raise NotImplementedError(f"{type(self).__name__} defines no optimal constant score (baseline)")

    def leaf_values(self, leaves: np.ndarray, residuals: np.ndarray, sample_weight: np.ndarray | None,
                    number_of_nodes: int) -> np.ndarray:
        """(#nodes,) the value of every leaf from the ``residuals`` ``targets - scores`` (one output) of the
        training rows in it (``leaves``: each row's node; NaN for nodes without rows), for a loss that
        :attr:`renews_leaves`.

        Raises
        ------
        NotImplementedError
            For a loss that does not renew leaves.
        """
        raise NotImplementedError(f"{type(self).__name__} does not renew leaf values")

    @property
    def has_baseline(self) -> bool:
        """Whether the loss defines :meth:`baseline`."""
        return type(self).baseline is not LossFunction.baseline

    def check_targets(self, targets) -> np.ndarray:
        """Validate training targets for this loss.

        Parameters
        ----------
        targets : array_like
            (#samples,) or (#samples, #outputs).

        Returns
        -------
        numpy.ndarray
            A float64 (#samples, #outputs) array.
        """
        return as_score_matrix(targets, "targets")

    def check_chunk_targets(self, targets) -> np.ndarray:
        """:meth:`check_targets` of one chunk of the training targets (distributed training checks each
        chunk on its own); a loss whose check needs all of them (every class present) overrides it."""
        return self.check_targets(targets)

    def loss_sum(self, alpha, targets: np.ndarray, previous_scores: np.ndarray,
                 current_scores: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
        """Total loss after adding ``alpha`` times the new weak machine's output.

        Parameters
        ----------
        alpha : float or numpy.ndarray
            The weight(s) of the new weak machine, one per output.
        targets : numpy.ndarray
            (#samples, #outputs) targets.
        previous_scores : numpy.ndarray
            (#samples, #outputs) scores of the strong machine so far.
        current_scores : numpy.ndarray
            (#samples, #outputs) outputs of the new weak machine.
        sample_weight : numpy.ndarray, optional
            (#samples,) factors of every sample's loss.

        Returns
        -------
        float
            ``sum(w * loss(targets, previous_scores + alpha * current_scores))``
            over samples and outputs. Outputs enter the sum independently, so
            minimising the total minimises each output's share.
        """
        scores = previous_scores + np.asarray(alpha) * current_scores
        return float(np.sum(weighted(self.loss(targets, scores), sample_weight)))

    def loss_gradient_sum(self, alpha, targets: np.ndarray, previous_scores: np.ndarray,
                          current_scores: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """Derivative of :meth:`loss_sum` with respect to ``alpha``.

        Returns
        -------
        numpy.ndarray
            (#outputs,) array: ``sum_n loss_gradient[n, o] * current_scores[n, o]``.
        """
        scores = previous_scores + np.asarray(alpha) * current_scores
        return np.sum(weighted(self.loss_gradient(targets, scores), sample_weight) * current_scores, axis=0)

    def loss_and_gradient_sum(self, alpha, targets: np.ndarray, previous_scores: np.ndarray,
                              current_scores: np.ndarray,
                              sample_weight: np.ndarray | None = None) -> tuple[float, np.ndarray]:
        """:meth:`loss_sum` and :meth:`loss_gradient_sum` from one evaluation of the loss.

        This is what :func:`~bob_boost.trainers.fit_weights` minimises.
        """
        scores = previous_scores + np.asarray(alpha) * current_scores
        values, gradients = self.loss_and_gradient(targets, scores)
        values, gradients = weighted(values, sample_weight), weighted(gradients, sample_weight)
        return float(np.sum(values)), np.sum(gradients * current_scores, axis=0)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class BinaryClassificationLoss(LossFunction):
    """A loss of the margin ``targets * scores`` with targets in {-1, +1}.

    Several outputs are one-vs-rest problems (+1 for the class, -1 for the
    others). A subclass whose population minimiser is
    ``s* = log(p / (1 - p)) / c`` sets :attr:`probability_scale` to ``c``,
    which defines :meth:`inverse_link`.
    """

    #: ``c`` of the inverse link ``p = sigmoid(c * s)``; None for losses without one.
    probability_scale: float | None = None

    @property
    def has_probabilities(self) -> bool:
        """True when :attr:`probability_scale` is set."""
        return self.probability_scale is not None

    def inverse_link(self, scores: np.ndarray) -> np.ndarray:
        """Class probabilities ``sigmoid(c * scores)``.

        Parameters
        ----------
        scores : numpy.ndarray
            (#samples, 1) scores of a binary machine, or (#samples, K) one-vs-rest scores.

        Returns
        -------
        numpy.ndarray
            (#samples, 2) ``[P(-1), P(+1)]`` for one output; for K outputs the
            K one-vs-rest estimates normalised to sum to 1.
        """
        if self.probability_scale is None:
            return super().inverse_link(scores)
        one_vs_rest = expit(self.probability_scale * np.asarray(scores, dtype=np.float64))
        if one_vs_rest.shape[1] == 1:
            return np.column_stack([1.0 - one_vs_rest[:, 0], one_vs_rest[:, 0]])
        return one_vs_rest / one_vs_rest.sum(axis=1, keepdims=True)

    def baseline(self, targets: np.ndarray, sample_weight: np.ndarray | None = None) -> np.ndarray:
        """(#outputs,) the constant score of least weighted loss of each column: the weighted class prior.

        A constant's loss depends on the data only through the column's share ``p`` of positive weight
        (clipped to :data:`SHARE_LIMIT`), so this is ``log(p / (1 - p)) / c`` for a loss with a
        :attr:`probability_scale` ``c``, and otherwise a bounded 1-D search over ``p`` positive and
        ``1 - p`` negative weight (:meth:`constant_of_share`).
        """
        weights = np.ones(targets.shape[0]) if sample_weight is None else np.asarray(sample_weight, np.float64)
        return self.constants_of_shares(weights @ (targets > 0) / np.sum(weights))

    def constants_of_shares(self, shares: np.ndarray) -> np.ndarray:
        """(#outputs,) :meth:`baseline` from each column's share of positive weight (what a cluster sums)."""
        share = np.clip(np.asarray(shares, dtype=np.float64), SHARE_LIMIT, 1.0 - SHARE_LIMIT)
        if self.probability_scale is not None:
            return (np.log(share) - np.log1p(-share)) / self.probability_scale
        return np.array([self.constant_of_share(float(p)) for p in share])

    def constant_of_share(self, share: float) -> float:
        """The score ``s`` minimising ``share * L(+1, s) + (1 - share) * L(-1, s)`` in [-40, 40]."""
        signs, weights = np.array([[1.0], [-1.0]]), np.array([share, 1.0 - share])

        def total(score: float) -> float:
            return float(weights @ self.loss(signs, np.full((2, 1), score))[:, 0])
        return float(minimize_scalar(total, bounds=(-40.0, 40.0), method="bounded", options={"xatol": 1e-10}).x)

    def check_targets(self, targets) -> np.ndarray:
        """Validate that every target is -1 or +1."""
        array = as_score_matrix(targets, "targets")
        if not np.all((array == 1.0) | (array == -1.0)):
            bad = np.unique(array[(array != 1.0) & (array != -1.0)])[:5]
            raise InvalidValueError(f"targets: {type(self).__name__} needs targets in {{-1, +1}}, found {bad.tolist()}")
        return array
