"""The model file format as README's "Model files" describes it: a reader
written from that description alone, in plain Python, predicts what gbmo
predicts, for every kind of tree and every way a model reads X. (A
deployment audit ported the format from gbmo's source; this keeps README
enough to port it from.)"""
import json
import math

import numpy as np
import pandas as pd
import pytest

import gbmo

ZERO = 1e-35  # README: zero_as_missing's zero


def _read_x(model, row):
    """The row's values as the model reads them: missing values, categories
    as ranks."""
    params = model["params"]
    categorical = model["categorical"] or {"features": [], "categories": [], "ranks": []}
    values = list(row)
    for feature, value in enumerate(values):
        if feature in categorical["features"]:
            continue
        if not params.get("use_missing", True) and math.isnan(value):
            values[feature] = 0.0
        elif params.get("use_missing", True) and params.get("zero_as_missing") \
                and abs(value) <= ZERO:
            values[feature] = math.nan
    for feature, categories, ranks in zip(categorical["features"], categorical["categories"],
                                          categorical["ranks"]):
        rank_of = dict(zip(categories, ranks))
        value = values[feature]
        values[feature] = rank_of.get(value, math.nan) if value >= 0 else math.nan
    return values


def _pandas_codes(model, frame):
    """A DataFrame's category columns as their codes: a category's position in
    the model's pandas_categories of its column."""
    rows = []
    for _, row in frame.iterrows():
        values = []
        for column, value in enumerate(row):
            categories = model["pandas_categories"].get(str(column))
            if categories is None:
                values.append(float(value))
            else:
                values.append(float(categories.index(value)) if value in categories
                              else math.nan)
        rows.append(values)
    return rows


def _raw_scores(model, rows):
    forest = model["forest"]
    n_outputs, per_round = model["n_outputs"], model["trees_per_round"]
    n_trees = len(forest["tree_nodes"])
    if model["best_iteration"] is not None:
        n_trees = model["best_iteration"] * per_round
    sparse = set(forest["sparse_trees"])
    linear = set(forest.get("linear_trees", []))
    scores = []
    for row in rows:
        x = _read_x(model, row)
        sums = [0.0] * n_outputs
        node_start = value_start = output_start = 0
        # where the next linear tree's leaves, features, coefficients, intercepts start
        count_start = feature_start = coefficient_start = intercept_start = 0
        for tree in range(n_trees):
            sets = forest.get("categories_left", {}).get(str(tree), {})
            node = 0
            while forest["node_left"][node_start + node] >= 0:
                at = node_start + node
                value = x[forest["node_feature"][at]]
                if math.isnan(value):
                    left = forest["node_missing_left"][at] == 1
                elif str(node) in sets:
                    left = value in sets[str(node)]
                else:
                    left = value <= forest["node_threshold"][at]
                node = forest["node_left"][at] if left else forest["node_right"][at]
            leaf = forest["node_value"][node_start + node]
            width = forest["leaf_widths"][tree]
            first = value_start + leaf * width
            values = forest["leaf_values"][first:first + width]
            if tree in sparse:
                outputs = forest["leaf_outputs"][output_start + leaf * width:
                                                 output_start + (leaf + 1) * width]
            else:
                outputs = range(n_outputs)
            if tree in linear:
                counts = forest["leaf_feature_counts"][count_start:
                                                      count_start + forest["tree_leaves"][tree]]
                first_feature = feature_start + sum(counts[:leaf])
                features = forest["leaf_features"][first_feature:first_feature + counts[leaf]]
                first_coefficient = coefficient_start + sum(counts[:leaf]) * width
                if features and all(math.isfinite(x[f]) for f in features):
                    values = forest["leaf_intercepts"][intercept_start + leaf * width:
                                                       intercept_start + (leaf + 1) * width]
                    values = [value + sum(
                        forest["leaf_coefficients"][first_coefficient + a * width + k] * x[f]
                        for a, f in enumerate(features)) for k, value in enumerate(values)]
                count_start += len(counts)
                feature_start += sum(counts)
                coefficient_start += sum(counts) * width
                intercept_start += len(counts) * width
            for output, value in zip(outputs, values):
                sums[output] += value
            node_start += forest["tree_nodes"][tree]
            value_start += forest["tree_leaves"][tree] * width
            if tree in sparse:
                output_start += forest["tree_leaves"][tree] * width
        # a random forest's raw score is the mean of its rounds
        share = per_round / n_trees if model["params"].get("boosting") == "rf" and n_trees \
            else 1.0
        scores.append([init + share * total for init, total in zip(model["init_score"], sums)])
    return np.array(scores)


def _transform(model, raw, objective=None):
    objective = objective or model["objective"]
    if objective == "multitask":
        out = np.empty_like(raw)
        for task, outputs, _ in model["params"]["objective_params"]["tasks"]:
            out[:, outputs] = _transform(model, raw[:, outputs], task)
        return out
    if objective == "softmax":
        exps = np.exp(raw - raw.max(axis=1, keepdims=True))
        return exps / exps.sum(axis=1, keepdims=True)
    if objective in ("sigmoid", "multiclassova"):
        return 1.0 / (1.0 + np.exp(-raw))
    return raw


def _problem():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(400, 4))
    X[::7, 1] = np.nan
    X[::5, 2] = 0.0
    X[:, 3] = rng.integers(0, 8, size=400)
    Y = np.c_[X[:, 0] + (X[:, 3] % 3 == 0), np.nan_to_num(X[:, 1]) - X[:, 2], X[:, 0] * X[:, 3]]
    return X, Y


KINDS = {
    "dense leaves": ({}, "mse"),
    "sparse leaves": ({"split": "sparse", "top_k": 2}, "mse"),
    "one tree per output": ({"tree_mode": "single_output"}, "mse"),
    "categorical": ({"categorical_feature": [3]}, "mse"),
    "symmetric, categorical": ({"growth": "symmetric", "categorical_feature": [3]}, "mse"),
    "random forest": ({"boosting": "rf", "bagging_fraction": 0.7, "bagging_freq": 1}, "mse"),
    "dart": ({"boosting": "dart", "drop_rate": 0.5}, "mse"),
    "use_missing=False": ({"use_missing": False}, "mse"),
    "zero_as_missing": ({"zero_as_missing": True}, "mse"),
    "softmax": ({}, "softmax"),
    "multiclassova": ({"categorical_feature": [3]}, "multiclassova"),
    "sigmoid, 3 labels": ({}, "sigmoid"),
    "multitask": ({"objective_params": {"tasks": [("mse", [0, 2]), ("sigmoid", [1])]}},
                  "multitask"),
    "linear leaves": ({"linear_tree": True}, "mse"),
    "linear, one tree per output, categorical, zero_as_missing": (
        {"linear_tree": True, "tree_mode": "single_output", "categorical_feature": [3],
         "zero_as_missing": True}, "mse"),
    "linear softmax": ({"linear_tree": True, "linear_lambda": 0.5}, "softmax"),
}


@pytest.mark.parametrize("kind", KINDS)
def test_a_reader_of_readme_s_description_predicts_as_gbmo(kind):
    X, Y = _problem()
    params, objective = KINDS[kind]
    target = {"mse": Y, "softmax": np.digitize(Y[:, 0], [0.0, 1.0]),
              "multiclassova": np.digitize(Y[:, 0], [0.0, 1.0]),
              "sigmoid": (Y > 0).astype(float),
              "multitask": np.c_[Y[:, 0], Y[:, 1] > 0, Y[:, 2]]}[objective]
    booster = gbmo.train({"verbosity": -1, "objective": objective, "max_leaves": 6, **params},
                         gbmo.Dataset(X, target), 6)
    model = json.loads(booster.model_to_string())
    rows = X[:60].tolist()
    expected = booster.predict(X[:60], raw_score=True).reshape(60, -1)
    np.testing.assert_allclose(_raw_scores(model, rows), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(_transform(model, _raw_scores(model, rows)),
                               booster.predict(X[:60]).reshape(60, -1), rtol=0, atol=1e-12)


@pytest.mark.parametrize("boosting", ["gbdt", "rf"])
def test_a_reader_stops_at_the_best_round_as_predict_does(boosting):
    """Found by review: README's reader added every tree, where predict stops
    at best_iteration's."""
    X, Y = _problem()
    params = {"verbosity": -1, "max_leaves": 6, "learning_rate": 0.5, "boosting": boosting,
              "tree_mode": "single_output", "bagging_fraction": 0.7, "bagging_freq": 1}
    booster = gbmo.train(params, gbmo.Dataset(X[:300], Y[:300]), 60,
                         valid_sets=[gbmo.Dataset(X[300:], Y[300:])],
                         callbacks=[gbmo.early_stopping(2, verbose=False)])
    model = json.loads(booster.model_to_string())
    assert 0 < model["best_iteration"] * 3 < len(model["forest"]["tree_nodes"])
    np.testing.assert_allclose(_raw_scores(model, X[:60].tolist()),
                               booster.predict(X[:60], raw_score=True), rtol=0, atol=1e-12)


def test_a_reader_takes_pandas_categories_by_their_position_in_the_file():
    X, Y = _problem()
    shops = np.array(["north", "south", "east", "west", "a", "b", "c", "d"])
    frame = pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "x2": X[:, 2],
                          "shop": pd.Categorical(shops[X[:, 3].astype(int)])})
    booster = gbmo.train({"verbosity": -1, "max_leaves": 6}, gbmo.Dataset(frame, Y), 6)
    model = json.loads(booster.model_to_string())
    assert model["categorical"]["features"] == [3]
    served = frame[:60].copy()
    served.loc[served.index[:3], "shop"] = np.nan
    np.testing.assert_allclose(_raw_scores(model, _pandas_codes(model, served)),
                               booster.predict(served, raw_score=True), rtol=0, atol=1e-12)
