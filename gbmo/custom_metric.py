"""Custom evaluation metrics (train's and cv's feval), as in LightGBM.

A custom metric is a function feval(preds, eval_data) of the predictions of
a data set (as Booster.predict gives them: probabilities for softmax,
sigmoid and multiclassova, (n,) for a model of a 1-D target with one output, else (n, d); but,
as in LightGBM, from raw scores that include the Dataset's init_score) and
the Dataset itself (eval_data.get_label(), eval_data.get_weight()). It
returns (name, value, is_higher_better) or a list of such tuples, evaluated
every round beside the built-in metrics and watched by early stopping alike.
"""
import numbers

import numpy as np

_FORM = "(name, value, is_higher_better) or a list of such tuples"


def check_fevals(feval):
    """feval (None, a function or a list of functions) as a list of functions."""
    if feval is None:
        return []
    fevals = list(feval) if isinstance(feval, (list, tuple)) else [feval]
    for f in fevals:
        if not callable(f):
            raise TypeError(f"feval must be a function (preds, eval_data) -> {_FORM}, or a "
                            f"list of such functions; got {f!r}")
    return fevals


def _describe(f):
    return getattr(f, "__qualname__", repr(f))


def custom_results(fevals, preds, eval_data, builtin_names):
    """[(name, value, is_higher_better)] of every custom metric on one data set;
    a malformed return, or a name the built-in metrics use, is refused by the
    function's name."""
    results = []
    taken = [*builtin_names, *(f"{m}_per_output" for m in builtin_names)]
    for f in fevals:
        returned = f(preds, eval_data)
        entries = returned if isinstance(returned, list) else [returned]
        for entry in entries:
            if (not isinstance(entry, tuple) or len(entry) != 3 or not isinstance(entry[0], str)
                    or isinstance(entry[1], bool) or not isinstance(entry[1], numbers.Real)
                    or not isinstance(entry[2], (bool, np.bool_))):
                raise TypeError(f"feval {_describe(f)} returned {returned!r}; it must return "
                                f"{_FORM}, with a str name, a real value and a bool")
            name, value, higher_is_better = entry
            if name in taken:
                raise ValueError(f"feval {_describe(f)} names its metric {name!r}, which another "
                                 "metric of the run uses; give it a name of its own")
            results.append((name, float(value), bool(higher_is_better)))
            taken.append(name)
    return results
