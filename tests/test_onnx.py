"""Booster.to_onnx: the exported graph, run by onnxruntime, predicts what
predict does (to float32's precision, the ONNX operator's output type) for
every tree shape, objective and way of reading X; rows on a split's
threshold take the same side (the thresholds stay doubles); what it cannot
export is refused by name."""
import json
import sys

import numpy as np
import onnx
import onnxruntime
import pandas as pd
import pytest
import scipy.sparse
from sklearn.exceptions import NotFittedError

import gbmo
from gbmo.losses import SquaredError
from gbmo.onnx_export import declared_transform

FAST = {"verbosity": -1, "max_leaves": 8, "learning_rate": 0.3, "n_threads": 2}
CATEGORICAL = 5


def _data(rng, n):
    """Five numeric features with missing values and exact zeros, then a
    categorical one of codes 0 .. 11, and missing."""
    X = rng.normal(size=(n, 6))
    X[:, CATEGORICAL] = rng.integers(0, 12, n)
    X[rng.random(X.shape) < 0.08] = np.nan
    X[rng.random(X.shape) < 0.05] = 0.0
    return X


def _targets(X):
    x = np.nan_to_num(X, nan=1.0)  # a missing category goes with category 1
    return np.column_stack([x[:, 0] + (x[:, CATEGORICAL] % 3), 2 * x[:, 1] - x[:, 4],
                            np.sin(x[:, 2]) + np.isnan(X[:, 3])])


def _test_rows(rng):
    """Rows the model never saw: more missing values, categories negative,
    unseen (12 .. 14) and missing."""
    X = _data(rng, 400)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:, CATEGORICAL] = rng.integers(-2, 15, len(X))
    X[:10, CATEGORICAL] = np.nan
    return X


def _run(model, X):
    session = onnxruntime.InferenceSession(model.SerializeToString())
    return session.run(None, {"X": X})[0]


def _assert_like_predict(booster, X, **keywords):
    model = booster.to_onnx(**keywords)
    onnx.checker.check_model(model, full_check=True)
    got = _run(model, X)
    want = booster.predict(X, raw_score=keywords.get("raw_score", False),
                           num_iteration=keywords.get("num_iteration"),
                           start_iteration=keywords.get("start_iteration", 0))
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def _train(params, Y, rounds=15, seed=0):
    """A model of params on _data's rows and Y(X), its last feature
    categorical but with a sparse Y (which takes none)."""
    rng = np.random.default_rng(seed)
    X = _data(rng, 2000)
    Y = Y(X)
    categorical = [] if scipy.sparse.issparse(Y) else [CATEGORICAL]
    return gbmo.train({**FAST, **params}, gbmo.Dataset(X, Y, categorical_feature=categorical),
                      rounds)


@pytest.mark.parametrize("params, Y", [
    ({"objective": "mse"}, _targets),
    ({"objective": "mse"}, lambda X: _targets(X)[:, 0]),
    ({"objective": "softmax"}, lambda X: (_targets(X)[:, :2] > 0) @ [1, 2]),
    ({"objective": "multiclassova"}, lambda X: (_targets(X)[:, :2] > 0) @ [1, 2]),
    ({"objective": "sigmoid"}, lambda X: (_targets(X) > 0).astype(float)),
    ({"objective": "sigmoid"}, lambda X: (_targets(X)[:, 0] > 0).astype(float)),
    ({"objective": "mse", "tree_mode": "single_output"}, _targets),
    ({"objective": "mse", "split": "sparse", "top_k": 2}, _targets),
    ({"objective": "mse", "split": "sparse_restricted", "top_k": 1}, _targets),
    ({"objective": "mse", "growth": "depthwise", "max_depth": 3}, _targets),
    ({"objective": "mse", "growth": "symmetric", "max_depth": 3}, _targets),
    ({"objective": "mse", "boosting": "rf", "subsample": 0.5, "subsample_freq": 1}, _targets),
    ({"objective": "mse", "boosting": "dart", "drop_rate": 0.5}, _targets),
    ({"objective": "mse", "zero_as_missing": True}, _targets),
    ({"objective": "mse", "use_missing": False}, _targets),
    ({"objective": "multitask", "objective_params": {
        "tasks": [["sigmoid", [1]], ["mse", [0, 2]]]}},
     lambda X: np.column_stack([_targets(X)[:, 0], _targets(X)[:, 1] > 0, _targets(X)[:, 2]])),
    ({"objective": "poisson"}, lambda X: np.exp(np.clip(_targets(X), -3, 3)).round()),
    ({"objective": "focal"}, lambda X: (_targets(X) > 0).astype(float)),
    ({"objective": "quantile", "objective_params": {"alpha": [0.2, 0.8]}},
     lambda X: _targets(X)[:, 0]),
    ({"objective": "squared_hinge", "top_k": 2},
     lambda X: scipy.sparse.csr_matrix(np.column_stack([_targets(X) > 0.5] * 4))),
    ({"objective": "sigmoid", "top_k": 2},
     lambda X: scipy.sparse.csr_matrix(np.column_stack([_targets(X) > 0.5] * 4))),
])
def test_onnx_predicts_as_predict(params, Y):
    booster = _train(params, Y)
    X = _test_rows(np.random.default_rng(1))
    _assert_like_predict(booster, X)
    _assert_like_predict(booster, X, raw_score=True)


def test_categorical_splits_of_either_missing_side_and_either_kind():
    """A categorical split's chain of equality tests has two orientations, by
    the side missing values take; symmetric trees split a categorical
    feature's ranks at a threshold instead of by a set. These models have
    all four, and ONNX predicts as predict does on them."""
    kinds = set()
    for params, rounds in (({}, 30), ({"growth": "symmetric", "max_depth": 3}, 15)):
        booster = _train(params, _targets, rounds=rounds)
        _assert_like_predict(booster, _test_rows(np.random.default_rng(2)), raw_score=True)
        kinds |= {(node in tree.categories_left, bool(tree.node_missing_left[node]))
                  for tree in booster.trees for node in np.flatnonzero(tree.node_left >= 0)
                  if tree.node_feature[node] == CATEGORICAL}
    assert kinds == {(True, False), (True, True), (False, False), (False, True)}


def test_a_categorical_split_that_sends_every_category_to_its_missing_side():
    """No category leads away from the missing side: the ONNX test must then
    send every value there (a set edited so, as a file may hold it)."""
    booster = _train({}, _targets)
    tree, node = next((tree, node) for tree in booster.trees for node in tree.categories_left)
    tree.categories_left[node] = np.arange(12)
    tree.node_missing_left[node] = 1
    booster._forget_packing()
    _assert_like_predict(booster, _test_rows(np.random.default_rng(8)), raw_score=True)


def test_a_row_on_a_threshold_takes_predict_s_side():
    """Rows at a split's threshold and one double above it: a float32
    comparison would send both the same way."""
    rng = np.random.default_rng(3)
    X = rng.uniform(0, 1, size=(1000, 1)) / 3.0  # thresholds that float32 rounds
    booster = gbmo.train({**FAST, "max_leaves": 4}, gbmo.Dataset(X, (X[:, 0] > 0.17) * 10.0), 1)
    thresholds = booster.trees[0].node_threshold[booster.trees[0].node_left >= 0]
    assert np.all(thresholds.astype(np.float32) != thresholds)
    rows = np.concatenate([thresholds, np.nextafter(thresholds, np.inf)])[:, None]
    predicted = booster.predict(rows)
    assert len(set(predicted.tolist())) > 1  # the two sides differ
    np.testing.assert_allclose(_run(booster.to_onnx(), rows), predicted, rtol=1e-6, atol=1e-6)


def test_metadata_names_the_codes_of_an_integer_coded_feature():
    """X holds an integer-coded feature's codes themselves (a pandas
    column's: a category's position in category_names)."""
    booster = _train({}, _targets)
    metadata = {prop.key: json.loads(prop.value) for prop in booster.to_onnx().metadata_props}
    assert metadata == {"feature_names": [f"f{i}" for i in range(6)], "category_names": {},
                        "category_codes": {"f5": list(range(12))}}


def test_rounds_are_predict_s():
    booster = _train({"objective": "mse"}, _targets, rounds=10)
    X = _test_rows(np.random.default_rng(4))
    _assert_like_predict(booster, X, num_iteration=4)
    _assert_like_predict(booster, X, start_iteration=3, num_iteration=5)
    _assert_like_predict(booster, X, start_iteration=10)  # no tree: the start score alone
    assert not np.allclose(_run(booster.to_onnx(num_iteration=4), X), booster.predict(X),
                           atol=1e-3)


def test_best_iteration_is_the_default_as_in_predict():
    rng = np.random.default_rng(5)
    X = _data(rng, 2000)
    Y = _targets(X) + rng.normal(scale=2.0, size=(2000, 3))
    train = gbmo.Dataset(X[:1500], Y[:1500], categorical_feature=[CATEGORICAL])
    booster = gbmo.train({**FAST, "learning_rate": 1.0}, train, 200,
                         valid_sets=[train.create_valid(X[1500:], Y[1500:])],
                         callbacks=[gbmo.early_stopping(3, verbose=False)])
    assert booster.best_iteration < booster.current_iteration()
    X_test = _test_rows(rng)
    np.testing.assert_allclose(_run(booster.to_onnx(), X_test), booster.predict(X_test),
                               rtol=1e-6, atol=1e-6)


def test_a_loaded_model_and_a_pandas_category_column(tmp_path):
    """A model read from its file keeps how it reads X (zero_as_missing
    here); a DataFrame's category column is given to ONNX as its codes."""
    rng = np.random.default_rng(6)
    X = _data(rng, 1500)
    frame = pd.DataFrame(X[:, :CATEGORICAL], columns=[f"x{i}" for i in range(CATEGORICAL)])
    frame["shop"] = pd.Categorical.from_codes(np.nan_to_num(X[:, CATEGORICAL], nan=-1).astype(int),
                                              [f"shop{i}" for i in range(12)])
    booster = gbmo.train({**FAST, "zero_as_missing": True}, gbmo.Dataset(frame, _targets(X)), 10)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    path = tmp_path / "model.onnx"
    graph = loaded.to_onnx(path)
    # what a server needs to make X: its columns' names, the codes' categories
    metadata = {prop.key: json.loads(prop.value) for prop in graph.metadata_props}
    assert metadata == {"feature_names": list(frame.columns), "category_codes": {},
                        "category_names": {"shop": [f"shop{i}" for i in range(12)]}}
    session = onnxruntime.InferenceSession(str(path))
    test = frame.iloc[:300]
    codes = np.column_stack([test.iloc[:, :CATEGORICAL].to_numpy(),
                             test["shop"].cat.codes.to_numpy()]).astype(np.float64)
    np.testing.assert_allclose(session.run(None, {"X": codes})[0], booster.predict(test),
                               rtol=1e-6, atol=1e-6)


class _Cubed(SquaredError):
    """A loss of its own transform that says nothing of ONNX."""

    name = "mse"

    def transform(self, raw):
        return raw ** 3


class _Declared(_Cubed):
    onnx_transform = "identity"  # wrong, but said below the transform's class: believed


def test_declared_transform_believes_only_a_declaration_below_the_transform():
    assert declared_transform(SquaredError()) == "identity"
    assert declared_transform(_Cubed()) is None
    assert declared_transform(_Declared()) == "identity"
    loss = _Cubed()
    loss.onnx_transform = "exp"  # an instance's own says it too
    assert declared_transform(loss) == "exp"


def test_refusals():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(500, 3))
    Y = X @ rng.normal(size=(3, 2))
    linear = gbmo.train({**FAST, "linear_tree": True}, gbmo.Dataset(X, Y), 3)
    with pytest.raises(ValueError, match="does not export linear leaves"):
        linear.to_onnx()
    own = gbmo.train({**FAST, "objective": _Cubed()}, gbmo.Dataset(X, Y), 3)
    with pytest.raises(ValueError, match=r"objective 'mse' does not say how its predictions "
                                         r"transform.*raw_score=True"):
        own.to_onnx()
    np.testing.assert_allclose(_run(own.to_onnx(raw_score=True), X),
                               own.predict(X, raw_score=True), rtol=1e-6, atol=1e-6)
    crossing = gbmo.train({**FAST, "objective": "quantile",
                           "objective_params": {"alpha": [0.2, 0.8], "non_crossing": True}},
                          gbmo.Dataset(X, Y[:, 0]), 3)
    with pytest.raises(ValueError, match="objective 'quantile' does not say"):
        crossing.to_onnx()
    plain = gbmo.train(FAST, gbmo.Dataset(X, Y), 3)
    with pytest.raises(TypeError, match="path must be a file's path"):
        plain.to_onnx(3)
    with pytest.raises(ValueError, match="start_iteration = 9 is beyond"):
        plain.to_onnx(start_iteration=9)
    with pytest.raises(ValueError, match="this Booster holds no model"):
        gbmo.Booster().to_onnx()


def test_without_onnx_the_export_names_the_package(monkeypatch):
    booster = gbmo.train(FAST, gbmo.Dataset(np.eye(4), np.arange(4.0)), 1)
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match=r"to_onnx needs the onnx package.*pip install onnx"):
        booster.to_onnx()


@pytest.mark.parametrize("labels", [
    np.array(["no", "yes"]), np.array(["a", "b", "c"]), np.array([3, 7, 9]),
    np.array([2**63 + 5, 2**63 + 9], dtype=np.uint64), np.array([False, True]), None])
def test_estimators_export_predict_and_predict_proba(labels):
    """A classifier's graph gives predict's labels and predict_proba (two
    columns for two classes), a regressor's predict."""
    rng = np.random.default_rng(9)
    X = _data(rng, 1500)
    X_test = _test_rows(rng)
    if labels is None:
        model = gbmo.GBMORegressor(n_estimators=10, verbosity=-1).fit(X, _targets(X))
        np.testing.assert_allclose(_run(model.to_onnx(), X_test), model.predict(X_test),
                                   rtol=1e-6, atol=1e-6)
        return
    y = labels[((_targets(X)[:, :2] > 0) @ [1, 1]) % len(labels)]
    model = gbmo.GBMOClassifier(n_estimators=10, verbosity=-1).fit(X, y)
    onnx_model = model.to_onnx()
    assert [output.name for output in onnx_model.graph.output] == ["label", "probabilities"]
    session = onnxruntime.InferenceSession(onnx_model.SerializeToString())
    predicted, probabilities = session.run(None, {"X": X_test})
    np.testing.assert_allclose(probabilities, model.predict_proba(X_test), rtol=1e-6, atol=1e-6)
    top_two = np.sort(probabilities, axis=1)[:, -2:]
    clear = top_two[:, 1] - top_two[:, 0] > 1e-5  # float32 may break a near tie
    assert clear.mean() > 0.9
    np.testing.assert_array_equal(predicted[clear], model.predict(X_test)[clear])
    np.testing.assert_allclose(_run(model.to_onnx(raw_score=True), X_test),
                               model.predict(X_test, raw_score=True), rtol=1e-6, atol=1e-6)


def test_a_multi_label_classifier_exports_its_probabilities_alone():
    rng = np.random.default_rng(10)
    X = _data(rng, 1000)
    model = gbmo.GBMOClassifier(n_estimators=5, verbosity=-1).fit(X, (_targets(X) > 0) * 1)
    onnx_model = model.to_onnx()
    assert [output.name for output in onnx_model.graph.output] == ["probabilities"]
    X_test = _test_rows(rng)
    np.testing.assert_allclose(_run(onnx_model, X_test), model.predict_proba(X_test), rtol=1e-6,
                               atol=1e-6)


def test_an_unfitted_estimator_is_refused():
    with pytest.raises(NotFittedError):
        gbmo.GBMORegressor().to_onnx()


# the fuzz's case (tests/test_fuzz.py, seed 331): 20 rows, a categorical
# feature of 6 categories, 4 outputs, symmetric trees
_FUZZ_CATEGORIES = [-1, np.nan, np.nan, 7, 5, 1, 4, -2, np.nan, np.nan, np.nan, 5, 1, np.nan,
                    np.nan, -1, 7, 3, 4, 6]
_FUZZ_TARGETS = np.array([
    [-1.16997316, 1.48426327, -0.53292197, 0.70462331],
    [-0.08021689, -1.36529911, 0.03543625, -1.50949727],
    [0.63945730, 0.52995152, 1.15723967, -0.17957641],
    [1.83158799, -1.15856515, -0.29817682, -0.86453384],
    [-1.57942900, -0.08544536, 1.47408218, -0.08058335],
    [0.49618341, -1.54841036, 2.10850172, -0.45368254],
    [0.71897672, 1.78238636, 0.56158566, 0.15621014],
    [0.76700986, -0.53592167, -0.78220167, -1.03986623],
    [0.37313605, -0.28710767, 1.54739580, -0.45768937],
    [0.30692486, 1.09640428, 1.07243980, -0.38387382],
    [1.56767020, -1.81023333, 0.93962960, -0.22925831],
    [-0.41030393, -0.55167234, 0.36451231, 0.16866038],
    [1.10918863, -0.14425135, -0.85488114, 1.01484456],
    [1.01092767, 1.55986913, -0.99737141, -1.05694091],
    [0.98146988, -1.16426393, -0.05926654, 0.01495960],
    [0.85396998, -0.47423847, -1.28814227, -1.31237146],
    [-1.06086133, 0.76297095, 0.68318163, 0.08086218],
    [-1.53387341, -0.24804435, -0.48025719, 0.02064909],
    [0.30595508, -0.64914231, -1.97429079, 0.92858704],
    [0.32767547, 0.52624629, -0.42051921, -2.02756388]])


def test_leaves_of_equal_first_weights_in_categorical_chains_keep_their_own_values():
    """Found by the fuzz: onnxruntime (1.32) took two leaves reached through
    one feature's chains of equality tests for one when their first weights
    were equal ((0, 0, 0, 0) and (0, 0.004, -0.006, 0.006) here), and gave
    rows of the second the first's values. Every leaf's first weight is now
    a marker of its own, in a column the graph drops (without it, this test
    fails)."""
    X = np.column_stack([np.full(20, np.nan), _FUZZ_CATEGORIES])
    params = {"verbosity": -1, "n_threads": 1, "max_leaves": 16, "min_samples_leaf": 1,
              "max_bins": 3, "lambda_l2": 0.0, "lambda_l1": 0.5, "learning_rate": 0.01,
              "min_child_weight": 0.0, "growth": "symmetric", "subsample": 0.5,
              "subsample_freq": 1, "ensembler": "sketch_topk", "ensembler_params": {"k": 3},
              "cat_smooth": 0.0, "cat_l2": 0.0, "min_data_per_group": 0,
              "max_cat_threshold": 1, "max_cat_to_onehot": 0}
    booster = gbmo.train(params, gbmo.Dataset(X, _FUZZ_TARGETS, categorical_feature=[1]), 1)
    rows = np.column_stack([np.full(9, np.nan), [-1, 1, 3, 4, 5, 6, 7, 9, np.nan]])
    _assert_like_predict(booster, rows, raw_score=True)


def test_confident_probabilities_keep_their_relative_precision():
    """Found by a review: onnxruntime's float32 Sigmoid approximates the
    tail (17% off at a raw score of -15, 0 from -18 on); the graph computes
    1 / (1 + exp(-x)) instead."""
    rng = np.random.default_rng(12)
    X = rng.normal(size=(2000, 4))
    booster = gbmo.train({"objective": "sigmoid", "learning_rate": 1.0, "verbosity": -1},
                         gbmo.Dataset(X, (X[:, 0] > 0).astype(float)), 300)
    predicted = booster.predict(X)
    assert booster.predict(X, raw_score=True).min() < -12
    # float32 raw scores: a relative 6e-8 of a raw score, times |raw| after exp
    np.testing.assert_allclose(_run(booster.to_onnx(), X), predicted, rtol=2e-6, atol=0)


def test_a_sparse_label_classifier_of_margins_names_them_predictions():
    """Found by a review: a squared hinge's margins were named
    "probabilities", which predict_proba refuses to call them."""
    rng = np.random.default_rng(13)
    X = _data(rng, 600)
    labels = scipy.sparse.csr_matrix(np.column_stack([_targets(X) > 0.5] * 2))
    model = gbmo.GBMOClassifier(n_estimators=5, objective="squared_hinge", top_k=2,
                                verbosity=-1).fit(X[:, :CATEGORICAL], labels)
    graph = model.to_onnx()
    assert [output.name for output in graph.graph.output] == ["predictions"]
    X_test = _test_rows(rng)[:, :CATEGORICAL]
    np.testing.assert_allclose(_run(graph, X_test), model.booster_.predict(X_test), rtol=1e-6,
                               atol=1e-6)
