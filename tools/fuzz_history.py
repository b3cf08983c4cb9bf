#!/usr/bin/env python
"""Stateful fuzz of Dataset reuse: a train or cv result must not depend on
what the same gbmo.Dataset objects were used for before.

    python tools/fuzz_history.py                          # 200 sequences of 14 events
    python tools/fuzz_history.py --minutes 60 --random    # a long run of new sequences
    python tools/fuzz_history.py --seed 0 --replay 17     # sequence 17 of seed 0, event by event

Each sequence draws a random problem (numeric and categorical features, NaNs,
numpy or pandas with categorical columns, one of mse / 2-output mse / sigmoid /
softmax) and a list of events on shared Datasets:

  make       a root Dataset (all rows or some), a subset of one (indices or a
             mask, with or without params), a subset with a reference, a
             Dataset with a reference, or create_valid of one
  setcat     set_categorical_feature
  construct  construct(), with or without params (history only)
  train      gbmo.train with validation sets, sometimes from an init_model
  cv         gbmo.cv, sometimes with an fpreproc that changes the folds'
             categorical features, eval_train_metric or an init_model

Each train / cv call runs on the live Datasets, which carry everything done
to them so far, and again on Datasets rebuilt from the make / setcat events
before it. The two results must be equal: bit-identical raw predictions of
the whole problem (every fold's booster for cv), the same evals_result / cv
history and number of trees, or the same exception type and message. A
train / cv call refused with ValueError / TypeError the same way both times
is a refusal, counted. set_categorical_feature and construct may refuse
too, and a rebuilt make or set_categorical_feature must do what the live one
did. Everything else is a failure: a difference, a make that raises, or
another exception type (in construct, train, cv or the tool itself). A
sequence stops at its first failure. Needs pandas.

A failure is printed and written to --out as seed<S>-seq<K>.json: the seed
and sequence number, the command that replays it, the problem's shape, the
events, the failing event's index, the kind of failure, the difference (or
the exception) and its traceback. `--seed S --replay K` (with the run's
--events) runs that one sequence again and prints each event's outcome.

Runs in-process with faulthandler enabled: a segfault kills the run and
prints the Python stack of the event being run. The exit status is 1 when any
sequence failed. By default the sequences are derandomized (seed 0, the same
run each time); --random draws a new seed, printed (pass it as --seed N to
repeat the run).
"""
import argparse
import collections
import faulthandler
import itertools
import json
import os
import secrets
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np
import pandas as pd

import gbmo

OBJECTIVE_KINDS = ["mse1", "mse2", "sigmoid", "softmax"]
STRUCTURAL_OPS = ("make", "setcat")
REFUSALS = (ValueError, TypeError)
REFUSAL_NAMES = {error.__name__ for error in REFUSALS}
# In a drawn event's params: take the categorical features (and the missing
# value and tree settings) of the init_model, which gbmo requires to continue it.
FROM_INIT_MODEL = "from init_model"


# ---------------------------------------------------------------- the problem
def make_problem(rng):
    """A random data set as a dict: X (numpy or a DataFrame), y,
    objective, kind, n_rows, n_features, categorical (column indices) and
    pandas_categorical (the columns that are pandas categoricals)."""
    n_rows = int(rng.integers(150, 1000))
    n_numeric = int(rng.integers(2, 5))
    n_features = n_numeric + int(rng.integers(1, 3))
    categorical = sorted(int(c) for c in
                         rng.choice(n_features, n_features - n_numeric, replace=False))
    X = np.empty((n_rows, n_features))
    signal = np.zeros((n_rows, 2))
    codes_of = {}
    for j in range(n_features):
        if j in categorical:
            n_codes = int(rng.integers(5, 41))
            # sometimes sparse codes out of 0..99, not 0..K-1
            pool = 100 if rng.random() < 0.3 else n_codes
            codes = np.sort(rng.choice(pool, n_codes, replace=False)).astype(float)
            which = rng.choice(n_codes, n_rows, p=rng.dirichlet(np.full(n_codes, 0.7)))
            X[:, j] = codes[which]
            signal += rng.normal(size=(n_codes, 2))[which]
            codes_of[j] = codes
        else:
            column = rng.normal(size=n_rows)
            r = rng.random()
            if r < 0.3:
                column = np.round(column * 2) / 2  # few distinct values, many zeros
            elif r < 0.4:
                column[rng.random(n_rows) < 0.3] = 0.0
            X[:, j] = column
            signal += np.outer(np.sin(column * rng.normal()), rng.normal(size=2))
    if rng.random() < 0.5:
        for j in range(n_features):
            if rng.random() < 0.5:
                X[rng.random(n_rows) < rng.uniform(0.01, 0.15), j] = np.nan
    z = signal + 0.3 * rng.normal(size=(n_rows, 2))
    kind = OBJECTIVE_KINDS[int(rng.integers(0, 4))]
    if kind == "mse1":
        y, objective = z[:, 0], "mse"
    elif kind == "mse2":
        y, objective = z, "mse"
    elif kind == "sigmoid":
        y, objective = (z[:, 0] > np.median(z[:, 0])).astype(float), "sigmoid"
    else:
        thirds = np.quantile(z[:, 0], [1 / 3, 2 / 3])
        y, objective = np.digitize(z[:, 0], thirds).astype(float), "softmax"
    problem = dict(X=X, y=y, objective=objective, kind=kind, n_rows=n_rows,
                   n_features=n_features, categorical=categorical, pandas_categorical=[])
    if rng.random() < 0.4:
        problem["pandas_categorical"] = ([c for c in categorical if rng.random() < 0.7]
                                         or [categorical[0]])
        problem["X"] = as_dataframe(rng, X, codes_of, problem["pandas_categorical"])
    return problem


def as_dataframe(rng, X, codes_of, pandas_categorical):
    """X as a DataFrame whose pandas_categorical columns are categoricals (of
    ints or strings), listing their categories in a random order and some
    that no row has."""
    string_categories = rng.random() < 0.5

    def category(code):
        return f"k{int(code)}" if string_categories else int(code)

    columns = {}
    for j in range(X.shape[1]):
        if j not in pandas_categorical:
            columns[f"c{j}"] = X[:, j]
            continue
        values = [None if np.isnan(v) else category(v) for v in X[:, j]]
        categories = ([category(c) for c in codes_of[j]]
                      + [category(1000 + i) for i in range(int(rng.integers(0, 3)))])
        categories = [categories[i] for i in rng.permutation(len(categories))]
        columns[f"c{j}"] = pd.Categorical(values, categories=categories)
    return pd.DataFrame(columns)


def is_pandas(problem):
    return bool(problem["pandas_categorical"])


def rows_of(problem, rows):
    if is_pandas(problem):
        return problem["X"].iloc[rows].reset_index(drop=True)
    return problem["X"][rows]


def with_categories_reordered(problem, X_part, seed):
    """X_part whose categorical columns list their categories in another order
    (the same data: gbmo matches categories by value, not by code)."""
    rng = np.random.default_rng(seed)
    X_part = X_part.copy()
    for j in problem["pandas_categorical"]:
        column = X_part[f"c{j}"]
        categories = list(column.cat.categories)
        X_part[f"c{j}"] = column.cat.reorder_categories(
            [categories[i] for i in rng.permutation(len(categories))])
    return X_part


# ---------------------------------------------------------------- drawing events
def draw_categorical_spec(rng, problem, allow_none=True):
    categorical = problem["categorical"]
    r = rng.random()
    if is_pandas(problem):
        # a DataFrame's categorical columns are always categorical: "auto" or a superset
        if r < 0.3:
            return "auto"
        forced = problem["pandas_categorical"]
        extra = [c for c in categorical if c not in forced and rng.random() < 0.5]
        return sorted(forced + extra)
    if allow_none and r < 0.2:
        return None
    if r < 0.3:
        return []
    chosen = [c for c in categorical if rng.random() < 0.6]
    if not chosen and rng.random() < 0.7:
        chosen = [categorical[int(rng.integers(0, len(categorical)))]]
    return chosen


def draw_rows(rng, n_rows, low=0.3, high=0.9):
    count = min(n_rows, max(30, int(n_rows * rng.uniform(low, high))))
    rows = rng.choice(n_rows, count, replace=False)
    if rng.random() < 0.7:
        rows = np.sort(rows)
    return [int(r) for r in rows]


def draw_dataset_params(rng):
    if rng.random() < 0.7:
        return None
    params = {}
    if rng.random() < 0.5:
        params["max_bins"] = int(rng.choice([4, 8, 255]))
    if rng.random() < 0.3:
        params["min_data_in_bin"] = int(rng.choice([1, 3, 20]))
    if rng.random() < 0.3:
        params["bin_subsample"] = int(rng.choice([40, 100, 200000]))
    if rng.random() < 0.2:
        params["use_missing"] = bool(rng.random() < 0.5)
    return params or None


def draw_binning_params(rng, problem):
    params = {}
    if rng.random() < 0.8:
        params["max_bins"] = int(rng.choice([4, 8, 255]))
    if rng.random() < 0.2:
        params["max_bins_by_feature"] = [int(rng.choice([2, 3, 5, 8, 255]))
                                         for _ in range(problem["n_features"])]
    if rng.random() < 0.4:
        params["min_data_in_bin"] = int(rng.choice([1, 3, 20]))
    if rng.random() < 0.35:
        params["bin_subsample"] = int(rng.choice([30, 60, 150, 400]))
        params["seed"] = int(rng.integers(0, 3))
    elif rng.random() < 0.3:
        params["seed"] = int(rng.integers(0, 3))
    r = rng.random()
    if r < 0.15:
        params["use_missing"] = False
    elif r < 0.3:
        params["zero_as_missing"] = True
    return params


def draw_pools(rng, problem):
    """A sequence's few binning settings and categorical specs, which most of
    its events pick from: repeated settings are what let a Dataset's cached
    bins be reused (or wrongly kept) from one call to the next."""
    return {"binning": [draw_binning_params(rng, problem) for _ in range(int(rng.integers(1, 3)))],
            "categorical": [draw_categorical_spec(rng, problem, allow_none=False)
                            for _ in range(int(rng.integers(2, 4)))]}


def pick(rng, pool):
    return pool[int(rng.integers(0, len(pool)))]


def pick_categorical_spec(rng, problem, pools, allow_none=True):
    if rng.random() < 0.8:
        return pick(rng, pools["categorical"])
    return draw_categorical_spec(rng, problem, allow_none=allow_none)


def pick_dataset_categorical_spec(rng, problem, pools):
    spec = pick_categorical_spec(rng, problem, pools)
    return "auto" if spec is None else spec


def draw_training_params(rng, problem, pools, from_init_model=False):
    params = {"objective": problem["objective"], "verbosity": -1}
    if problem["objective"] == "softmax":
        params["num_class"] = 3
    if from_init_model:
        params["categorical_feature"] = FROM_INIT_MODEL
    elif rng.random() < 0.8:  # else the Dataset's categorical_feature
        params["categorical_feature"] = pick_categorical_spec(rng, problem, pools, allow_none=False)
    if rng.random() < 0.85:
        params.update(pick(rng, pools["binning"]))
        if rng.random() < 0.2:
            params["seed"] = int(rng.integers(0, 3))
    else:
        params.update(draw_binning_params(rng, problem))
    if rng.random() < 0.5:
        params["cat_smooth"] = float(rng.choice([0.0, 1.0, 10.0, 50.0]))
    params["growth"] = str(rng.choice(["bestfirst", "depthwise", "symmetric"]))
    if params["growth"] != "bestfirst" and rng.random() < 0.5:
        params["max_depth"] = int(rng.integers(2, 5))
    if problem["kind"] in ("mse2", "softmax") and rng.random() < 0.4:
        params["tree_mode"] = "single_output"
    params["max_leaves"] = int(rng.choice([4, 8, 15]))
    params["min_samples_leaf"] = int(rng.choice([3, 10, 20]))
    params["learning_rate"] = float(rng.choice([0.1, 0.3]))
    if rng.random() < 0.15:
        params["max_cat_to_onehot"] = int(rng.choice([0, 8, 64]))
    if rng.random() < 0.15:
        params["min_data_per_group"] = int(rng.choice([0, 5, 30]))
    if rng.random() < 0.5:
        params["n_threads"] = int(rng.choice([1, 2]))
    return params


def draw_make(rng, problem, pools, names, first):
    # subset twice: it has the most variants
    kind = "root" if first else str(rng.choice(["root", "subset", "ref", "valid",
                                                "subset_ref", "subset"]))
    event = {"op": "make", "name": f"d{len(names)}", "kind": kind}
    if kind == "root":
        event["rows"] = (None if first or rng.random() < 0.5
                         else draw_rows(rng, problem["n_rows"], 0.6, 0.95))
        event["params"] = draw_dataset_params(rng)
        if rng.random() < 0.2:
            event["params"] = dict(pools["binning"][0])
        event["cat"] = (pick_dataset_categorical_spec(rng, problem, pools)
                        if rng.random() < 0.6 else "auto")
    else:
        event["src"] = str(rng.choice(names))
        event["rows"] = draw_rows(rng, problem["n_rows"])
        if kind == "subset":
            if rng.random() < 0.15:
                event["mask"] = True
            event["params"] = draw_dataset_params(rng) if rng.random() < 0.3 else None
        elif kind == "subset_ref":
            event["ref"] = str(rng.choice(names))
        elif kind == "ref":
            event["cat"] = (pick_dataset_categorical_spec(rng, problem, pools)
                            if rng.random() < 0.5 else "auto")
        if kind in ("ref", "valid") and is_pandas(problem) and rng.random() < 0.3:
            event["reorder_categories"] = int(rng.integers(0, 1000))
    names.append(event["name"])
    return event


def draw_train(rng, problem, pools, names, trained):
    init = int(rng.choice(trained)) if trained and rng.random() < 0.25 else None
    n_valid = int(rng.integers(0, min(3, len(names)) + 1))
    event = {"op": "train", "name": str(rng.choice(names)),
             "valids": [str(v) for v in rng.choice(names, n_valid, replace=False)],
             "params": draw_training_params(rng, problem, pools, from_init_model=init is not None),
             "rounds": int(rng.integers(1, 5)), "init": init}
    if rng.random() < 0.2:
        event["valid_names"] = True
    return event


def draw_cv(rng, problem, pools, names, trained):
    event = {"op": "cv", "name": str(rng.choice(names)),
             "params": draw_training_params(rng, problem, pools),
             "rounds": int(rng.integers(1, 4)), "seed": int(rng.integers(0, 3))}
    if rng.random() < 0.35:
        event["fpreproc"] = pick_categorical_spec(rng, problem, pools)
        event["fpreproc_mode"] = str(rng.choice(["setcat", "params", "both"]))
    if rng.random() < 0.25:
        event["eval_train"] = True
    if trained and rng.random() < 0.15:
        event["init"] = int(rng.choice(trained))
        event["params"]["categorical_feature"] = FROM_INIT_MODEL
    return event


def draw_events(rng, problem, n_events):
    pools = draw_pools(rng, problem)
    names = []  # of the Datasets made so far
    trained = []  # indices of the train events, whose models later events continue
    events = [draw_make(rng, problem, pools, names, first=True)]
    events += [draw_make(rng, problem, pools, names, first=False)
               for _ in range(int(rng.integers(1, 4)))]
    while len(events) < n_events:
        r = rng.random()
        if r < 0.12:
            events.append(draw_make(rng, problem, pools, names, first=False))
        elif r < 0.22:
            events.append({"op": "setcat", "name": str(rng.choice(names)),
                           "spec": pick_dataset_categorical_spec(rng, problem, pools)})
        elif r < 0.32:
            events.append({"op": "construct", "name": str(rng.choice(names)),
                           "params": (draw_training_params(rng, problem, pools)
                                      if rng.random() < 0.7 else None)})
        elif r < 0.80:
            events.append(draw_train(rng, problem, pools, names, trained))
            trained.append(len(events) - 1)
        else:
            events.append(draw_cv(rng, problem, pools, names, trained))
    return events


def draw_sequence(seed, number, n_events):
    rng = np.random.default_rng([seed, number])
    problem = make_problem(rng)
    return problem, draw_events(rng, problem, n_events)


# ---------------------------------------------------------------- running events
class Failure(Exception):
    """A sequence's first failure: its kind, the event it happened at, what
    differed (or the exception) and the traceback if there was one."""

    def __init__(self, kind, event_index, detail, trace=None):
        super().__init__(f"{kind} at event {event_index}: {detail}")
        self.kind, self.event_index, self.detail, self.trace = kind, event_index, detail, trace


Result = collections.namedtuple("Result", "error summary booster trace")
# error: None, or the exception's (type name, message); summary: the
# predictions (a list: one array for train, one per fold for cv), the
# evals_result / cv history and, for train, the number of trees


def rows_within(rows, n_rows):
    # rows are drawn over the whole problem; a source Dataset may hold fewer
    return [r for r in rows if r < n_rows]


def build_dataset(problem, event, datasets):
    kind, rows, y = event["kind"], event["rows"], problem["y"]
    if kind == "root":
        X, Y = (problem["X"], y) if rows is None else (rows_of(problem, rows), y[rows])
        return gbmo.Dataset(X, Y, params=event["params"], categorical_feature=event["cat"])
    source = datasets[event["src"]]
    if kind == "subset":
        used = rows_within(rows, source.n_rows)
        if event.get("mask"):
            mask = np.zeros(source.n_rows, bool)
            mask[used] = True
            used = mask
        return source.subset(used, params=event.get("params"))
    if kind == "subset_ref":
        return source.subset(rows_within(rows, source.n_rows), reference=datasets[event["ref"]])
    X_part = rows_of(problem, rows)
    if "reorder_categories" in event:
        X_part = with_categories_reordered(problem, X_part, event["reorder_categories"])
    if kind == "ref":
        return gbmo.Dataset(X_part, y[rows], reference=source, categorical_feature=event["cat"])
    return source.create_valid(X_part, y[rows])


def apply_structural(problem, event, datasets):
    """Applies a make or setcat event; returns None, or the (type name,
    message) of a set_categorical_feature refused with ValueError / TypeError."""
    if event["op"] == "make":
        datasets[event["name"]] = build_dataset(problem, event, datasets)
        return None
    try:
        datasets[event["name"]].set_categorical_feature(event["spec"])
    except REFUSALS as error:
        return (type(error).__name__, str(error))
    return None


def rebuild(problem, structural):
    """Fresh Datasets from the (index, event, live outcome) of the make /
    setcat events so far; each must do what it did on the live Datasets."""
    datasets = {}
    for index, event, live_outcome in structural:
        try:
            outcome = apply_structural(problem, event, datasets)
        except Exception as error:
            raise Failure("rebuild-differs", index,
                          f"rebuilt {event['op']} raised {type(error).__name__}: {error} "
                          f"(live: {live_outcome or 'done'})", traceback.format_exc())
        if outcome != live_outcome:
            raise Failure("rebuild-differs", index, f"rebuilt {event['op']}: "
                          f"{outcome or 'done'}; live: {live_outcome or 'done'}")
    return datasets


def resolve_params(event, models):
    params = dict(event["params"])
    if params.get("categorical_feature") == FROM_INIT_MODEL:
        model = models[event["init"]]
        order = model.category_order
        params["categorical_feature"] = [] if order is None else list(order.features)
        for key in ("use_missing", "zero_as_missing", "tree_mode"):
            if key in model.params:
                params[key] = model.params[key]
            else:
                params.pop(key, None)
    return params


def fpreproc_setting(spec, mode):
    def fpreproc(train_fold, valid_fold, params):
        if mode in ("setcat", "both"):
            train_fold.set_categorical_feature(spec)
            valid_fold.set_categorical_feature(spec)
        if mode in ("params", "both"):
            params = dict(params, categorical_feature=spec)
        return train_fold, valid_fold, params
    return fpreproc


def plain_history(history):
    """evals_result or a cv result as nested dicts of lists of floats (without cv's boosters)."""
    plain = {}
    for key, value in history.items():
        if key in ("boosters", "cvbooster"):
            continue
        if hasattr(value, "items"):
            plain[key] = plain_history(value)
        else:
            plain[key] = np.asarray(list(value), dtype=float).tolist()
    return plain


def equal_histories(a, b):
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(
            equal_histories(a[k], b[k]) for k in a)
    return np.array_equal(np.asarray(a, float), np.asarray(b, float), equal_nan=True)


def run_checked(problem, event, datasets, models):
    """The Result of a train / cv event on datasets."""
    init_model = models[event["init"]] if event.get("init") is not None else None
    try:
        params = resolve_params(event, models)
        if event["op"] == "train":
            valid_sets = [datasets[name] for name in event["valids"]]
            valid_names = ([f"v{i}" for i in range(len(valid_sets))]
                           if event.get("valid_names") else None)
            booster = gbmo.train(params, datasets[event["name"]], event["rounds"],
                                 valid_sets=valid_sets, valid_names=valid_names,
                                 init_model=init_model)
            summary = {"predictions": [booster.predict(problem["X"], raw_score=True)],
                       "history": plain_history(booster.evals_result),
                       "trees": booster.num_trees()}
            return Result(None, summary, booster, None)
        fpreproc = (fpreproc_setting(event["fpreproc"], event["fpreproc_mode"])
                    if "fpreproc" in event else None)
        history = gbmo.cv(params, datasets[event["name"]], event["rounds"], nfold=3,
                          seed=event["seed"], fpreproc=fpreproc, return_boosters=True,
                          init_model=init_model,
                          eval_train_metric=bool(event.get("eval_train")))
        summary = {"predictions": [booster.predict(problem["X"], raw_score=True)
                                   for booster in history["boosters"]],
                   "history": plain_history(history)}
        return Result(None, summary, None, None)
    except Exception as error:
        return Result((type(error).__name__, str(error)), None, None, traceback.format_exc())


def differences(live, rebuilt):
    """What differs between the live and rebuilt Results, as a list of phrases."""
    if live.error or rebuilt.error:
        if live.error == rebuilt.error:
            return []
        return [f"live {live.error or 'ok'}; rebuilt {rebuilt.error or 'ok'}"]
    a, b = live.summary, rebuilt.summary
    found = []
    if not equal_histories(a["history"], b["history"]):
        found.append(f"history: live {a['history']}; rebuilt {b['history']}")
    if a.get("trees") != b.get("trees"):
        found.append(f"trees: live {a['trees']}; rebuilt {b['trees']}")
    if len(a["predictions"]) != len(b["predictions"]):
        found.append(f"boosters: live {len(a['predictions'])}; rebuilt {len(b['predictions'])}")
    for i, (x, z) in enumerate(zip(a["predictions"], b["predictions"])):
        if not np.array_equal(x, z, equal_nan=True):
            gap = (np.nanmax(np.abs(np.asarray(x) - np.asarray(z)))
                   if np.shape(x) == np.shape(z) else "shapes differ")
            found.append(f"predictions of booster {i} (max abs difference {gap})")
    return found


def describe_event(event):
    """The event for a log line: row lists by their length."""
    return json.dumps({k: (f"<{len(v)} rows>" if k == "rows" and v is not None else v)
                       for k, v in event.items()})


def run_sequence(problem, events, tally, log=None):
    """Runs events on live Datasets and checks each train / cv against rebuilt
    ones, counting the checked calls and refusals in tally; raises Failure."""
    datasets, models = {}, {}
    structural = []  # (index, event, live outcome) of the make / setcat events so far
    for index, event in enumerate(events):
        op = event["op"]
        try:
            if op in STRUCTURAL_OPS:
                outcome = apply_structural(problem, event, datasets)
                structural.append((index, event, outcome))
                note = f"refused {outcome}" if outcome else "done"
            elif op == "construct":
                try:
                    datasets[event["name"]].construct(event["params"])
                    note = "done"
                except REFUSALS as error:  # refused params leave history all the same
                    note = f"refused {type(error).__name__}: {error}"
            elif event.get("init") is not None and event["init"] not in models:
                note = "skipped: its init_model's train was refused"
            else:
                live = run_checked(problem, event, datasets, models)
                rebuilt = run_checked(problem, event, rebuild(problem, structural), models)
                tally["checked"] += 1
                if op == "train" and live.error is None:
                    models[index] = live.booster
                found = differences(live, rebuilt)
                if found:
                    raise Failure("differs", index, "; ".join(found), live.trace or rebuilt.trace)
                if live.error and live.error[0] not in REFUSAL_NAMES:
                    raise Failure("unexpected-error", index, ": ".join(live.error), live.trace)
                tally["refused"] += live.error is not None
                note = f"same refusal {live.error}" if live.error else "same result"
        except Failure:
            raise
        except Exception as error:
            raise Failure(f"{op}-error", index, f"{type(error).__name__}: {error}",
                          traceback.format_exc())
        if log:
            log(f"{index:3d} {describe_event(event)}\n    -> {note}")


# ---------------------------------------------------------------- the run
def replay_command(seed, number, n_events):
    return f"python tools/fuzz_history.py --seed {seed} --events {n_events} --replay {number}"


def write_report(out_dir, seed, number, n_events, problem, events, failure):
    path = os.path.join(out_dir, f"seed{seed}-seq{number}.json")
    report = {
        "seed": seed, "sequence": number, "replay": replay_command(seed, number, n_events),
        "problem": {key: problem[key] for key in ("n_rows", "n_features", "categorical",
                                                  "pandas_categorical", "objective", "kind")},
        "events": events, "failing_event": failure.event_index, "kind": failure.kind,
        "detail": failure.detail, "traceback": failure.trace,
    }
    with open(path, "w") as handle:
        json.dump(report, handle, indent=1)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sequences", type=int, default=None,
                        help="sequences to run (default 200, or no limit with --minutes)")
    parser.add_argument("--minutes", type=float, default=None,
                        help="time budget: start no sequence after it")
    parser.add_argument("--events", type=int, default=14,
                        help="events per sequence (default 14)")
    parser.add_argument("--random", action="store_true",
                        help="a new random seed (printed) instead of seed 0")
    parser.add_argument("--seed", type=int, default=None,
                        help="the seed of the sequences (repeats a --random run)")
    parser.add_argument("--replay", type=int, default=None, metavar="K",
                        help="run only sequence K of --seed, printing each event's outcome")
    parser.add_argument("--out", default=None,
                        help="directory for failure reports (default: a new temporary one)")
    args = parser.parse_args(argv)

    faulthandler.enable()
    # gbmo warns about parameters that the drawn events combine on purpose
    warnings.filterwarnings("ignore")
    if args.seed is not None:
        seed = args.seed
    else:
        seed = secrets.randbelow(2**31) if args.random else 0
    out_dir = args.out or tempfile.mkdtemp(prefix="gbmo-fuzz-history-")
    os.makedirs(out_dir, exist_ok=True)
    if args.replay is not None:
        numbers, limit = [args.replay], 1
    else:
        numbers = itertools.count()
        limit = args.sequences if args.sequences is not None else (
            None if args.minutes is not None else 200)
    deadline = None if args.minutes is None else time.monotonic() + 60 * args.minutes
    print(f"seed {seed}, {args.events} events per sequence, failure reports in {out_dir}",
          flush=True)

    start = time.monotonic()
    ran = 0
    tally = collections.Counter()
    failed = []
    for number in numbers:
        if (limit is not None and ran >= limit) or (deadline and time.monotonic() >= deadline):
            break
        problem, events = draw_sequence(seed, number, args.events)
        try:
            run_sequence(problem, events, tally, log=print if args.replay is not None else None)
        except Failure as failure:
            failed.append(number)
            path = write_report(out_dir, seed, number, args.events, problem, events, failure)
            print(f"sequence {number} FAILED: {failure}\n  report: {path}\n"
                  f"  replay: {replay_command(seed, number, args.events)}", flush=True)
            if args.replay is not None and failure.trace:
                print(failure.trace)
        ran += 1
        if ran % 50 == 0:
            print(f"... {ran} sequences, {tally['checked']} checked calls, {len(failed)} failed, "
                  f"{time.monotonic() - start:.0f} s", flush=True)
    print(f"{ran} sequences, {tally['checked']} checked calls "
          f"({tally['refused']} refused the same way twice), "
          f"{len(failed)} failed, {time.monotonic() - start:.1f} s")
    if failed:
        print(f"failed sequences of seed {seed}: {', '.join(map(str, failed))}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
