"""A scikit-learn estimator's state in its model file, for the estimators'
save_model / load_model (XGBoost's and CatBoost's methods).

The file is the Booster's JSON model (gbmo.Booster loads it as it is) with
one more field, "estimator": the estimator's class, its parameters, its
fitted attributes but booster_, and the booster's metric records, which the
estimator shares as evals_result_ and best_score_ (a model file leaves them
out, as LightGBM's does). JSON keeps numbers, strings, lists and dicts of
string keys; numpy arrays, tuples, sets, dtypes and dicts of other keys are
written as objects whose one key names them, so that a loaded estimator's
attributes are what fit made (a numpy scalar comes back as Python's number
of the same value). Anything else (a function given as the objective, a
Loss instance) cannot be written, and save_model refuses it by name: pickle
keeps it.
"""
import json

import numpy as np

from .booster import (Booster, ModelFormatError, checked_path, json_value, parse_model_json,
                      read_model_file)
from .metric_history import MetricHistory

FIELD = "estimator"
_ARRAY, _TUPLE, _SET, _DTYPE, _ITEMS = ("__ndarray__", "__tuple__", "__set__", "__dtype__",
                                        "__items__")
_MARKERS = {_ARRAY, _TUPLE, _SET, _DTYPE, _ITEMS}
_NUMBERS_AND_TEXT = (bool, int, float, str)  # what an object array may hold
# the estimator's names of its booster's records
_RECORDS = {"evals_result_": "evals_result", "best_score_": "best_score"}


def _encoded(value, name):
    """value as JSON values, or a ValueError naming name (the parameter or
    attribute it belongs to) when JSON cannot hold it."""
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, _NUMBERS_AND_TEXT):
        return value
    if isinstance(value, (tuple, set, frozenset)):
        return {_TUPLE if isinstance(value, tuple) else _SET:
                [_encoded(item, name) for item in value]}
    if isinstance(value, list):
        return [_encoded(item, name) for item in value]
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value) and not _MARKERS.intersection(value):
            return {key: _encoded(item, name) for key, item in value.items()}
        # other keys (class_weight's classes): as pairs
        return {_ITEMS: [[_encoded(key, name), _encoded(item, name)]
                         for key, item in value.items()]}
    if isinstance(value, np.ndarray) and (value.dtype.kind in "biufU" or (
            value.dtype == object
            and all(isinstance(v, _NUMBERS_AND_TEXT) for v in value.flat))):
        return {_ARRAY: value.tolist(), "dtype": value.dtype.str if value.dtype != object
                else "object"}
    if isinstance(value, np.dtype):
        return {_DTYPE: value.str}
    raise ValueError(f"save_model writes the estimator to JSON, which cannot hold {name!r} "
                     f"({type(value).__name__}); allowed: numbers, strings, lists, dicts and "
                     "numpy arrays. Pickle the estimator (pickle or joblib) to keep it; "
                     "pickle keeps a function defined at a module's top level, not a lambda "
                     "or a function defined inside another")


def _decoded(value):
    if isinstance(value, list):
        return [_decoded(item) for item in value]
    if not isinstance(value, dict):
        return value
    if _ARRAY in value:
        return np.array(value[_ARRAY], dtype=value["dtype"])
    if _TUPLE in value:
        return tuple(_decoded(item) for item in value[_TUPLE])
    if _SET in value:
        return set(_decoded(item) for item in value[_SET])
    if _DTYPE in value:
        return np.dtype(value[_DTYPE])
    if _ITEMS in value:
        return {_decoded(key): _decoded(item) for key, item in value[_ITEMS]}
    return {key: _decoded(item) for key, item in value.items()}


def save(estimator, filename):
    """Writes the estimator's Booster model with its state (see the module)."""
    params = estimator.get_params(deep=False)
    fitted = {key: value for key, value in vars(estimator).items()
              if key not in params and key not in ("booster_", "_other_names", *_RECORDS)}
    booster = estimator.booster_
    state = {"class": type(estimator).__name__,
             "params": {key: _encoded(value, key) for key, value in params.items()},
             "fitted": {key: _encoded(value, key) for key, value in fitted.items()},
             "records": {name: _encoded(getattr(booster, name), name)
                         for name in _RECORDS.values()}}
    model = booster._model_record()
    model[FIELD] = state
    text = json.dumps(model, default=json_value)
    with open(checked_path(filename, "fname"), "w", encoding="utf-8") as f:
        f.write(text)


def _state(model, filename, kind):
    """The estimator field of a parsed model file, refused unless it is a
    kind's (the estimator class's name)."""
    state = model.get(FIELD) if isinstance(model, dict) else None
    if not isinstance(state, dict) or not all(
            isinstance(state.get(part), dict) for part in ("params", "fitted", "records")):
        raise ModelFormatError(f"{filename!r} holds no {kind}'s state (a Booster's model file "
                               "has none): load it with gbmo.Booster(model_file=...), or save "
                               "the estimator with its save_model")
    saved_kind = state.get("class")
    if saved_kind != kind:
        saved = (f"a {saved_kind}" if isinstance(saved_kind, str)
                 else "an estimator whose class is not named")
        raise ModelFormatError(f"{filename!r} holds {saved}, not a {kind}: load it with the "
                               "estimator class that saved it")
    return state


def load(estimator, filename):
    """The estimator, its parameters and fitted state those of the file save
    wrote; a file of another estimator class, of a Booster alone, or missing
    an attribute fit always makes, is refused before anything changes."""
    model = parse_model_json(read_model_file(filename, "fname", text_way=None))
    booster = Booster._from_dict(model)  # another library's file is named as one
    kind = type(estimator).__name__
    state = _state(model, filename, kind)
    try:
        params, fitted = _decoded(state["params"]), _decoded(state["fitted"])
        records = {name: {set_name: MetricHistory(history)
                          for set_name, history in _decoded(state["records"][name]).items()}
                   for name in _RECORDS.values()}
    except (TypeError, ValueError, KeyError, AttributeError) as err:
        raise ModelFormatError(f"{filename!r} has a malformed {FIELD!r} field: {err!r}") from None
    missing = [name for name in estimator.FITTED_ATTRIBUTES if name not in fitted]
    if missing:
        raise ModelFormatError(f"{filename!r} lacks the fitted attribute(s) "
                               f"{', '.join(missing)} that every fitted {kind} has")
    vars(booster).update(records)
    # the file's parameters only: a fresh estimator's, not the others this one had
    loaded = type(estimator)(**params)
    vars(loaded).update(fitted, booster_=booster,
                        **{attribute: records[name] for attribute, name in _RECORDS.items()})
    vars(estimator).clear()
    vars(estimator).update(vars(loaded))
    return estimator
