"""A scikit-learn estimator's state in its model file, for the estimators'
save_model / load_model (XGBoost's and CatBoost's methods).

The file is the Booster's JSON model (gbmo.Booster loads it as it is) with
one more field, "estimator": the estimator's class, its parameters and its
fitted attributes but booster_. JSON keeps numbers, strings, lists and
dicts of string keys; numpy arrays, tuples, dtypes and dicts of other keys
are written as objects whose one key names them, so that a loaded
estimator's attributes are what fit made. Anything else (a function given
as the objective, a Loss instance) cannot be written, and save_model
refuses it by name: pickle keeps it.
"""
import json
import sys

import numpy as np

from .booster import Booster, ModelFormatError, parse_model_json

FIELD = "estimator"
_ARRAY, _TUPLE, _DTYPE, _ITEMS = "__ndarray__", "__tuple__", "__dtype__", "__items__"
_MARKERS = {_ARRAY, _TUPLE, _DTYPE, _ITEMS}
_SCALARS = (type(None), bool, int, float, str)


def _encoded(value, name):
    """value as JSON values, or a ValueError naming name (the parameter or
    attribute it belongs to) when JSON cannot hold it."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, tuple):
        return {_TUPLE: [_encoded(item, name) for item in value]}
    if isinstance(value, list):
        return [_encoded(item, name) for item in value]
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value) and not _MARKERS.intersection(value):
            return {key: _encoded(item, name) for key, item in value.items()}
        # other keys (class_weight's classes): as pairs
        return {_ITEMS: [[_encoded(key, name), _encoded(item, name)]
                         for key, item in value.items()]}
    if isinstance(value, np.ndarray) and (value.dtype.kind in "biufU" or (
            value.dtype == object and all(isinstance(v, _SCALARS[1:]) for v in value.flat))):
        return {_ARRAY: value.tolist(), "dtype": value.dtype.str if value.dtype != object
                else "object"}
    if _is_dtype(value):
        return {_DTYPE: str(value)}
    raise ValueError(f"save_model writes the estimator to JSON, which cannot hold {name!r} "
                     f"({type(value).__name__}); allowed: numbers, strings, lists, dicts and "
                     "numpy arrays. Pickle the estimator (pickle or joblib) to keep it")


def _decoded(value):
    if isinstance(value, list):
        return [_decoded(item) for item in value]
    if not isinstance(value, dict):
        return value
    if _ARRAY in value:
        return np.array(value[_ARRAY], dtype=value["dtype"])
    if _TUPLE in value:
        return tuple(_decoded(item) for item in value[_TUPLE])
    if _DTYPE in value:
        return _dtype(value[_DTYPE])
    if _ITEMS in value:
        return {_decoded(key): _decoded(item) for key, item in value[_ITEMS]}
    return {key: _decoded(item) for key, item in value.items()}


def _is_dtype(value):
    """Whether value is a numpy dtype or pandas' (a nullable target's Int64),
    without importing pandas."""
    pandas = sys.modules.get("pandas")
    return isinstance(value, np.dtype) or (
        pandas is not None and isinstance(value, pandas.api.extensions.ExtensionDtype))


def _dtype(name):
    """numpy's dtype of that name, or pandas' (a nullable target's Int64)."""
    try:
        return np.dtype(name)
    except TypeError:
        import pandas as pd

        return pd.api.types.pandas_dtype(name)


def save(estimator, filename):
    """Writes the estimator's Booster model with its state (see the module)."""
    params = estimator.get_params(deep=False)
    fitted = {key: value for key, value in vars(estimator).items()
              if key not in params and key not in ("booster_", "_other_params")}
    state = {"class": type(estimator).__name__,
             "params": {key: _encoded(value, key) for key, value in params.items()},
             "fitted": {key: _encoded(value, key) for key, value in fitted.items()}}
    model = estimator.booster_.dump_model()
    model[FIELD] = state
    with open(filename, "w", encoding="utf-8") as f:
        f.write(json.dumps(model))


def load(estimator, filename):
    """The estimator, its parameters and fitted state those of the file save
    wrote; a file of another estimator class, or of a Booster alone, is
    refused before anything changes."""
    with open(filename, encoding="utf-8") as f:
        model = parse_model_json(f.read())
    kind = type(estimator).__name__
    state = model.get(FIELD) if isinstance(model, dict) else None
    if not isinstance(state, dict) or not isinstance(state.get("params"), dict) \
            or not isinstance(state.get("fitted"), dict):
        raise ModelFormatError(f"{filename!r} holds no {kind}'s state (a Booster's model file "
                               "has none): load it with gbmo.Booster(model_file=...), or save "
                               "the estimator with its save_model")
    if state.get("class") != kind:
        raise ModelFormatError(f"{filename!r} holds a {state.get('class')}, not a {kind}: load "
                               f"it with {state.get('class')}().load_model")
    booster = Booster._from_dict(model)
    try:
        params, fitted = _decoded(state["params"]), _decoded(state["fitted"])
    except (TypeError, ValueError, KeyError) as err:
        raise ModelFormatError(f"{filename!r} has a malformed {FIELD!r} field: {err!r}") from None
    # the file's parameters only: a fresh estimator's, not the others this one had
    loaded = type(estimator)(**params)
    vars(loaded).update(fitted, booster_=booster)
    vars(estimator).clear()
    vars(estimator).update(vars(loaded))
    return estimator
