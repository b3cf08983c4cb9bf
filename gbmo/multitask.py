"""Gradient ensemblers: split gradients that choose a tree's structure,
update gradients that set its leaf values.

An ensembler is called every round as ``ensembler(grad, hess, context)`` with
the loss's float32 grad (n, d) and hess (n, d) or (n, 1), and returns
``(split_grad, split_hess, update_grad, update_hess)``: split arrays (n, s)
(split_hess may be (n, 1), shared by the s columns), update arrays (n, d)
(update_hess may be (n, 1)). The grower builds histograms and searches splits
on the s split columns only; each leaf's d values are then
-sum(update_grad) / (sum(update_hess) + lambda_l2) over its rows.

Built-ins (registered as entry points of gbmo itself):

* ``mtgbm``: MT-GBM (Ying et al. 2022), Algorithms 2 and 3, s = 1;
* ``sketch_topk``, ``sketch_random``, ``sketch_projection``: output sketching
  (SketchBoost, Iosipoi & Vakhrushev 2022), s = k;
* ``weighted_sum``: a fixed task-weight vector, s = 1.

An ensembler may also define ``check_outputs(d)``, which training calls once
the targets give the number of outputs d, before binning, to refuse what does
not fit d (weighted_sum's weights, mtgbm's main_task, ...); it is optional.
So is ``split_lambda_l2``: the L2 penalty of its split search, when its split
columns are not in the outputs' units (mtgbm's are standardised); lambda_l2
then regularises the leaf values only.
"""
import numbers
from dataclasses import dataclass

import numpy as np

from ._core import G_H_DTYPE
from ._core._projection import project_rows
# ObjectiveResult lived here first; plugins may still import it from here
from .objective_results import ObjectiveResult  # noqa: F401
from .parallel import threads_for


@dataclass
class EnsemblerContext:
    """What an ensembler sees besides the gradients: the round (0-based), a
    generator seeded from the training seed (so a run is reproducible), the
    prepared targets, the current raw scores (n, d), the sample weights and
    the training's thread count (for an ensembler with kernels of its own)."""

    iteration: int
    rng: np.random.Generator
    y: np.ndarray
    raw: np.ndarray
    weight: np.ndarray = None
    n_threads: int = 1


# An ensembler checks its parameters when it is built, and what needs the
# number of outputs d in check_outputs(d), which the engine calls once the
# targets give d, before binning (a plugin need not define it), and __call__
# again for an ensembler called outside training.

def _integer(value, name, label, low):
    # a bool is an int to Python, but no count or index
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"ensembler {name!r}: {label} must be an integer >= {low}, got "
                         f"{value!r}")
    return int(value)


def _positive_number(value, name, label):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) \
            or not 0 < value < np.inf:
        raise ValueError(f"ensembler {name!r}: {label} must be a finite number > 0, got "
                         f"{value!r}")
    return float(value)


def _shares(values, name, label, each):
    """values, a weight per output, as a float array: finite numbers >= 0,
    not all 0 (a column of zeros could never gain a split)."""
    try:
        array = np.asarray(values)
    except ValueError:  # a ragged list
        array = None
    if array is None or array.dtype.kind not in "biuf" or array.ndim != 1 or not array.size \
            or not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ValueError(f"ensembler {name!r}: {label} must be a 1-D list of finite numbers "
                         f">= 0, one per output, got {values!r}")
    if not np.any(array > 0):
        raise ValueError(f"ensembler {name!r}: at least one {each} must be > 0, got "
                         f"{values!r}; allowed: finite numbers >= 0, one per output, not all 0")
    return array.astype(np.float64)


def _one_per_output(array, d, name, label):
    if array is not None and array.shape != (d,):
        raise ValueError(f"ensembler {name!r}: {array.size} {label} for {d} outputs; "
                         f"allowed: {d}, one per output")


def _columns(hess, columns):
    """The hessian of the chosen output columns; a shared column serves them all."""
    return hess if hess.shape[1] == 1 else hess[:, columns]


# The number of outputs sketch_topk and sketch_random keep when k is not given
# (at most d).
DEFAULT_SKETCH_OUTPUTS = 5


class SketchTopK:
    """Splits on the k outputs whose gradient columns have the largest norm.
    k defaults to min(5, d); a k given above d is refused, since it cannot
    be kept (k = d splits on every output, the same as no sketch)."""

    name = "sketch_topk"
    builtin = True  # see objective_results.is_builtin

    def __init__(self, k=None):
        self.k = None if k is None else _integer(k, self.name, "k", 1)

    def check_outputs(self, d):
        if self.k is not None and self.k > d:
            raise ValueError(f"ensembler {self.name!r}: k = {self.k} is more than the {d} "
                             f"outputs of the target; allowed: 1 .. {d} (k = {d} keeps every "
                             "output, the same as no sketch)")

    def _kept(self, d):
        self.check_outputs(d)
        return min(DEFAULT_SKETCH_OUTPUTS, d) if self.k is None else self.k

    def _chosen(self, grad, context):
        norms = np.einsum("ij,ij->j", grad, grad, dtype=np.float64)
        k = self._kept(grad.shape[1])
        return np.sort(np.argpartition(-norms, k - 1)[:k])

    def __call__(self, grad, hess, context):
        chosen = self._chosen(grad, context)
        return grad[:, chosen], _columns(hess, chosen), grad, hess


class SketchRandom(SketchTopK):
    """Splits on k outputs drawn without replacement with probability
    proportional to their squared gradient norm (outputs with zero gradient
    only when fewer than k others have any)."""

    name = "sketch_random"
    builtin = True

    def _chosen(self, grad, context):
        weights = np.einsum("ij,ij->j", grad, grad, dtype=np.float64)
        k = self._kept(grad.shape[1])
        n_positive = int(np.count_nonzero(weights))
        if n_positive <= k:
            return np.sort(np.argsort(-weights, kind="stable")[:k])
        return np.sort(context.rng.choice(grad.shape[1], size=k, replace=False,
                                          p=weights / weights.sum()))


class SketchProjection:
    """Splits on k Gaussian random projections of the gradient rows (a new
    projection every round); the split hessian is the row's mean hessian."""

    name = "sketch_projection"
    builtin = True

    def __init__(self, k=5):
        self.k = _integer(k, self.name, "k", 1)

    def __call__(self, grad, hess, context):
        projection = context.rng.standard_normal((grad.shape[1], self.k)) / np.sqrt(self.k)
        split_grad = _projected(grad, projection.T, context.n_threads)
        split_hess = hess.mean(axis=1, keepdims=True, dtype=np.float64)
        return split_grad, split_hess, grad, hess


def _projected(values, directions, n_threads):
    """values (n, d) @ directions.T, directions (s, d), as float32 (n, s) on
    gbmo's OpenMP threads. numpy's matmul would hand it to the BLAS thread
    pool, whose threads keep spinning after the call and take the cores from
    the next kernels (the built-in ensemblers ran 2.2-2.3x slower for it on
    2 cores; see _core/_projection.pyx)."""
    values = np.ascontiguousarray(values, dtype=G_H_DTYPE)
    out = np.empty((values.shape[0], directions.shape[0]), dtype=G_H_DTYPE)
    project_rows(values, np.ascontiguousarray(directions, dtype=G_H_DTYPE), out,
                 threads_for(n_threads, values.size))
    return out


def _correlation(a, b):
    """Pearson's correlation of two vectors (NaN when either is constant),
    with numpy's own loops rather than the BLAS of np.corrcoef (see _projected)."""
    # in float64 from the start: with numpy < 2 a float32 array minus a float64
    # scalar stays float32 (value-based casting), and the sums lose digits
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    a = a - a.mean()
    b = b - b.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.einsum("i,i->", a, b) / np.sqrt(np.einsum("i,i->", a, a)
                                                  * np.einsum("i,i->", b, b))


class WeightedSum:
    """Splits on one column: the task-weighted sum of the gradients and hessians."""

    name = "weighted_sum"
    builtin = True

    def __init__(self, weights=None):
        self.weights = None if weights is None else _shares(weights, self.name, "weights",
                                                            "weight")

    def check_outputs(self, d):
        _one_per_output(self.weights, d, self.name, "weights")

    def __call__(self, grad, hess, context):
        d = grad.shape[1]
        self.check_outputs(d)
        weights = np.ones(d) if self.weights is None else self.weights
        split_grad = _projected(grad, weights[None, :], context.n_threads)
        split_hess = (hess * weights.sum() if hess.shape[1] == 1
                      else _projected(hess, weights[None, :], context.n_threads))
        return split_grad, split_hess, grad, hess


def _standardize(values, observed, mean, sd):
    """Per column: the observed entries rescaled to the given mean and
    standard deviation; unobserved entries (masked targets) stay 0."""
    out = np.zeros(values.shape, dtype=np.float64)
    for j in range(values.shape[1]):
        seen = observed[:, j]
        column = values[seen, j].astype(np.float64)
        if not column.size:
            continue
        spread = column.std()
        centred = column - column.mean()
        out[seen, j] = mean + (sd * centred / spread if spread > 0 else 0.0)
    return out


class MTGBM:
    """MT-GBM (Ying et al. 2022).

    Split gradient (Algorithm 2): each task's gradients are standardised to
    mean 0.05 and sd 0.01 and its hessians to mean 1.0 and sd 0.1 (so tasks on
    different scales count alike); each round `n_emphasized` tasks, drawn with
    probabilities `task_probabilities` (uniform by default), get a weight gamma
    drawn from [gamma_low, gamma_high], the others 1; `main_task`, when given,
    is emphasised every round. The split gradient is the weighted mean: s = 1.

    Update gradient (Algorithm 3): task t's gradients scaled by
    clip(corr(g_t, split gradient), 0.5, 1), so a task that disagrees with
    the shared structure takes smaller steps; `correlation=False` keeps the
    task's own gradients. Entries with zero hessian (masked targets) are left
    out of the statistics.

    The split search takes no L2 penalty (split_lambda_l2 = 0, the default of
    the LightGBM fork MT-GBM was built on): in these standardised units the
    mean of 0.05 cancels from a split's gain only without one, and
    lambda_l2 = 1 cost each split about 0.0025, more than most gains, so
    most trees stopped at one leaf. lambda_l2 still regularises the leaves.
    """

    name = "mtgbm"
    builtin = True
    split_lambda_l2 = 0.0

    def __init__(self, main_task=None, n_emphasized=1, gamma_low=10.0, gamma_high=100.0,
                 task_probabilities=None, correlation=True):
        self.gamma_low = _positive_number(gamma_low, self.name, "gamma_low")
        self.gamma_high = _positive_number(gamma_high, self.name, "gamma_high")
        if self.gamma_low > self.gamma_high:
            raise ValueError(f"ensembler 'mtgbm': need 0 < gamma_low <= gamma_high, got "
                             f"{gamma_low!r}, {gamma_high!r}")
        self.n_emphasized = _integer(n_emphasized, self.name, "n_emphasized", 0)
        self.main_task = None if main_task is None else _integer(main_task, self.name,
                                                                 "main_task", 0)
        self.task_probabilities = None
        if task_probabilities is not None:
            shares = _shares(task_probabilities, self.name, "task_probabilities",
                             "task probability")
            self.task_probabilities = shares / shares.sum()
            # the emphasised tasks are drawn without replacement among the likely ones
            likely = int(np.count_nonzero(shares))
            if self.n_emphasized > likely:
                raise ValueError(f"ensembler 'mtgbm': n_emphasized = {self.n_emphasized} is "
                                 f"more than the {likely} tasks of task_probabilities > 0; "
                                 f"allowed: 0 .. {likely}, or more probabilities > 0")
        if not isinstance(correlation, (bool, np.bool_)):
            raise ValueError(f"ensembler 'mtgbm': correlation must be True or False, got "
                             f"{correlation!r}")
        self.correlation = bool(correlation)

    def check_outputs(self, d):
        if self.main_task is not None and self.main_task >= d:
            raise ValueError(f"ensembler 'mtgbm': main_task must be an output index in "
                             f"[0, {d}), got {self.main_task!r}")
        if self.n_emphasized > d:
            raise ValueError(f"ensembler 'mtgbm': n_emphasized must be at most the {d} "
                             f"outputs, got {self.n_emphasized}; allowed: 0 .. {d}")
        _one_per_output(self.task_probabilities, d, self.name, "task_probabilities")

    def _task_weights(self, d, rng):
        emphasized = rng.choice(d, size=self.n_emphasized, replace=False,
                                p=self.task_probabilities)
        if self.main_task is not None:
            emphasized = np.union1d(emphasized, [self.main_task])
        weights = np.ones(d)
        weights[emphasized] = rng.uniform(self.gamma_low, self.gamma_high, size=len(emphasized))
        return weights / weights.sum()

    def __call__(self, grad, hess, context):
        n, d = grad.shape
        self.check_outputs(d)
        full_hess = np.broadcast_to(hess, (n, d))
        observed = full_hess > 0
        weights = self._task_weights(d, context.rng)
        split_grad = _projected(_standardize(grad, observed, 0.05, 0.01), weights[None, :],
                                context.n_threads)[:, 0]
        split_hess = _projected(_standardize(full_hess, observed, 1.0, 0.1), weights[None, :],
                                context.n_threads)[:, 0]
        update_grad = grad
        if self.correlation:
            scale = np.ones(d)
            for j in range(d):
                seen = observed[:, j]
                if seen.sum() > 1:
                    # A constant gradient column (e.g. a class no row has) has no
                    # correlation: its update is left as it is.
                    corr = _correlation(grad[seen, j], split_grad[seen])
                    if np.isfinite(corr):
                        scale[j] = np.clip(corr, 0.5, 1.0)
            update_grad = grad * scale.astype(G_H_DTYPE)
        return split_grad[:, None], split_hess[:, None], update_grad, hess
