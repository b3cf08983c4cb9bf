"""What objectives and ensemblers read and return, around each call.

A loss (built-in, plugin or custom function) returns (grad, hess) or an
ObjectiveResult every round, an ensembler an ObjectiveResult; the kernels
take float32 arrays of fixed shapes and read them without checks, so a
wrong shape, a list or a NaN must be refused here, naming who returned it:
past this point a NaN trains a model of NaN and a missing column trains an
output that never moves. What they read, the run's targets, raw scores and
weights, they get as HandedArrays gives them, so that no write of theirs
reaches the run's own arrays.
"""
from typing import NamedTuple

import numpy as np

from ._core import G_H_DTYPE


class ObjectiveResult(NamedTuple):
    """What a custom objective or an ensembler may return to separate the
    gradients that choose the splits (n, s) from those that set the leaves (n, d)."""

    split_grad: np.ndarray
    split_hess: np.ndarray
    update_grad: np.ndarray
    update_hess: np.ndarray


class NonFiniteGradients(ValueError):
    """A loss's gradients or hessians hold inf or NaN (loss_gradients names
    the cause for gbmo's own losses: an overflow)."""


# Values a block of _all_finite checks at once (its mask, 1 MB, no more than a
# core's L2 here; smaller arrays at once, a block's Python costing ~10 us)
_FINITE_BLOCK_VALUES = 2**20


def _all_finite(array):
    """Whether every value of array (n, w) is finite; a large one a block of
    rows at a time: one mask of every value took 200 MB at 200,000 x 1,000."""
    if array.size <= _FINITE_BLOCK_VALUES:
        return bool(np.isfinite(array).all())
    rows = max(1, _FINITE_BLOCK_VALUES // max(1, array.shape[1]))
    return all(np.isfinite(array[start:start + rows]).all()
               for start in range(0, array.shape[0], rows))


def _checked_form(array, label, who, n_rows, widths):
    """array, refused unless (n_rows, w) for a w of widths, of numbers, all
    finite in its own precision."""
    array = np.asarray(array)
    if array.ndim != 2 or array.shape[0] != n_rows or array.shape[1] not in widths:
        allowed = " or ".join(f"({n_rows}, {w})" for w in widths)
        raise ValueError(f"{who} returned {label} of shape {array.shape}, expected {allowed}")
    if array.dtype.kind not in "biuf":
        raise ValueError(f"{who} returned {label} of dtype {array.dtype}, expected numbers")
    if not _all_finite(array):
        raise NonFiniteGradients(f"{who} returned a {label} that is not all finite numbers "
                                 "(inf or NaN)")
    return array


def _as_gradient(array, label, who, n_rows, widths):
    """_checked_form's array as contiguous float32, refused when narrowing it
    overflows."""
    array = _checked_form(array, label, who, n_rows, widths)
    with np.errstate(over="ignore"):  # an overflow is refused below, by name
        narrowed = np.ascontiguousarray(array, dtype=G_H_DTYPE)
    if array.dtype != G_H_DTYPE and not _all_finite(narrowed):
        raise NonFiniteGradients(f"{who} returned values beyond float32's range (the "
                                 "gradients are float32)")
    return narrowed


def check_objective_result(result, n_rows, n_outputs, who):
    """The four arrays of an ensembler or objective, validated and as float32."""
    if not isinstance(result, tuple) or len(result) != 4:
        raise ValueError(f"{who} must return (split_grad, split_hess, update_grad, "
                         f"update_hess), got {type(result).__name__}")
    split_grad = np.asarray(result[0])
    if split_grad.ndim != 2 or split_grad.shape[0] != n_rows or split_grad.shape[1] < 1:
        raise ValueError(f"{who} returned split_grad of shape {split_grad.shape}, "
                         f"expected ({n_rows}, s) with s >= 1")
    n_split = split_grad.shape[1]
    return ObjectiveResult(
        _as_gradient(split_grad, "split_grad", who, n_rows, (n_split,)),
        _as_gradient(result[1], "split_hess", who, n_rows, sorted({n_split, 1})),
        _as_gradient(result[2], "update_grad", who, n_rows, (n_outputs,)),
        _as_gradient(result[3], "update_hess", who, n_rows, sorted({n_outputs, 1})),
    )


def check_gradient_pair(result, n_rows, n_outputs, who, weight=None):
    """A loss's (grad, hess) as contiguous float32 arrays: grad (n, d), hess
    (n, d) or (n, 1), each (n,) allowed when d is 1 (LightGBM's objectives
    return one output's so), of finite numbers; times weight (n,) when given,
    in the arrays' own precision before float32, as LightGBM weighs a custom
    objective's."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise ValueError(f"{who} must return (grad, hess) or an ObjectiveResult, got "
                         f"{_described(result)}")
    grad, hess = (np.asarray(array) for array in result)
    if n_outputs == 1:
        grad, hess = (array.reshape(n_rows, 1) if array.shape == (n_rows,) else array
                      for array in (grad, hess))
    forms = (("grad", (n_outputs,)), ("hess", tuple(dict.fromkeys((n_outputs, 1)))))
    if weight is not None:
        grad, hess = (_checked_form(array, label, who, n_rows, widths) * weight[:, None]
                      for array, (label, widths) in zip((grad, hess), forms))
    return tuple(_as_gradient(array, label, who, n_rows, widths)
                 for array, (label, widths) in zip((grad, hess), forms))


def loss_gradients(loss, y, raw, weight):
    """loss's gradients at raw, checked: (grad, hess), or an ObjectiveResult.
    y, raw and weight as HandedArrays gives them to the loss."""
    who = f"objective {getattr(loss, 'name', None) or type(loss).__name__!r}"
    result = loss.gradients(y, raw, weight)
    if isinstance(result, ObjectiveResult):
        checked = check_objective_result(result, *raw.shape, who)
        if not is_builtin(loss):
            _check_hessians(checked.split_grad, checked.split_hess, who, "split_hess")
            _check_hessians(checked.update_grad, checked.update_hess, who, "update_hess")
        return checked
    try:
        pair = check_gradient_pair(result, *raw.shape, who)
    except NonFiniteGradients:
        if not is_builtin(loss):
            raise
        # the bounds on targets and weights (validation.MAX_GRADIENT_INPUT)
        # hold each alone, not their product, whose overflow trained a model
        # of NaN in silence
        largest = "" if weight is None else f" (weights up to {np.max(weight):.3g})"
        raise ValueError(f"{who}: this round's gradients or hessians overflowed float32 (inf "
                         f"or NaN): the weights times the targets are too large{largest}; "
                         "rescale the weights or the target") from None
    if not is_builtin(loss):
        _check_hessians(*pair, who)
    return pair


def _check_hessians(grad, hess, who, label="hessians"):
    """Refuses hessians (n, d) or (n, 1), float32, a Newton step cannot take:
    a negative one (a sign slipped: every tree came out one constant), or
    an output's all 0 under gradients that are not (its leaf values
    -G / lambda_l2 ran off to 1e31 in 20 rounds), found by an audit of
    custom objectives and a review; both 0 is a loss at its minimum (a
    hinge whose margins are all met). gbmo's own losses are left unchecked:
    theirs are >= 0 by construction."""
    if not hess.size:
        return
    if hess.min() < 0:
        raise ValueError(f"{who} returned {label} with {int(np.count_nonzero(hess < 0)):,} "
                         f"negative values (the least {float(hess.min()):.3g}); a leaf's "
                         "Newton step -G / (H + lambda_l2) needs hessians >= 0: return the "
                         "loss's second derivative, or clip it (np.maximum(hess, 1e-6))")
    # a column of one hessian for every output stands for all of them
    zero = np.broadcast_to(~hess.any(axis=0), grad.shape[1:])
    stalled = np.flatnonzero(zero & grad.any(axis=0))
    if stalled.size:
        raise ValueError(f"{who} returned {label} that are all 0 (as float32) for output "
                         f"{int(stalled[0])}, whose gradients are not; a leaf's Newton step "
                         "-G / (H + lambda_l2) needs some > 0: return the loss's second "
                         "derivative, or ones for plain gradient steps")


def _described(result):
    """A wrong return value, briefly: its type, and a tuple's length."""
    if isinstance(result, (tuple, list)):
        return f"a {type(result).__name__} of {len(result)} values"
    return type(result).__name__


def check_transformed(prediction, raw_shape, who):
    """A loss's transform of raw scores of raw_shape: an array of numbers of
    the same shape (the predictions, probabilities or means of each output),
    refused otherwise before a metric or predict's caller reads it."""
    if not isinstance(prediction, np.ndarray) or prediction.dtype.kind not in "biuf" \
            or prediction.shape != raw_shape:
        kind = (f"an array of shape {prediction.shape} and dtype {prediction.dtype}"
                if isinstance(prediction, np.ndarray) else f"a {type(prediction).__name__}")
        raise ValueError(f"{who}'s transform returned {kind} for raw scores of shape "
                         f"{raw_shape}; it must return a numeric numpy array of the raw "
                         "scores' shape")
    return prediction


def is_builtin(code):
    """Whether code (a loss or an ensembler) is gbmo's own kernels: its own
    class, not a subclass, says builtin = True. They write nothing they read
    and make float32 gradients of float64 targets and weights, so that a
    non-finite one is an overflow."""
    return bool(vars(type(code)).get("builtin", False))


def read_only(array):
    """A view of array that its reader cannot write into (None stays None)."""
    if array is None:
        return None
    view = array.view()
    view.flags.writeable = False
    return view


class HandedArrays:
    """A run's targets y and weights, and any raw scores, as a loss, an
    ensembler or a transform reads them. gbmo's own code (is_builtin) reads
    read-only views, at no cost. Other code (a plugin, a function) reads
    copies: y and weight copied once a run, raw scores into one buffer per
    kind reused every round. A write of theirs
    (raw -= y moved every later round's scores: 277 from mse's after 20
    rounds) then reaches no array of the run, and a Cython kernel of
    theirs whose memoryviews are not const takes them as before."""

    def __init__(self, y, weight):
        self.y, self.weight = y, weight
        self._copies = None  # (y, weight), on first need
        self._buffers = {}  # raw scores' copies, by kind
        self._stamps = {}  # what each buffer was last filled for

    def for_code(self, code, raw, kind="training", stamp=None):
        """(y, raw, weight) for code (stamp: see raw_for)."""
        if is_builtin(code):
            return read_only(self.y), read_only(raw), read_only(self.weight)
        if self._copies is None:
            self._copies = (self.y.copy(), None if self.weight is None else self.weight.copy())
        return self._copies[0], self.raw_for(code, raw, kind, stamp), self._copies[1]

    def raw_for(self, code, raw, kind, stamp=None):
        """raw scores for code: a read-only view, or the copy of kind's buffer;
        copied again unless stamp (not None) is the one it was filled with:
        the trees of one round renew their leaves at the same scores, which
        one copy a tree made O(n d) work d times a round in single_output."""
        if is_builtin(code):
            return read_only(raw)
        buffer = self._buffers.get(kind)
        if buffer is None or buffer.shape != raw.shape:
            buffer = self._buffers[kind] = np.empty_like(raw)
        elif stamp is not None and self._stamps.get(kind) == stamp:
            return buffer
        np.copyto(buffer, raw)
        self._stamps[kind] = stamp
        return buffer
