"""Feature importance: split counts, gains, per-output gains, the estimators'
feature_importances_, and their place in the model file."""
import numpy as np
import pytest

import gbmo

RNG = np.random.default_rng(21)
X = RNG.normal(size=(1500, 5))
# feature 0 drives outputs 0 and 1, feature 3 only output 2; 1, 2, 4 are noise
Y = np.c_[2 * X[:, 0], np.sin(2 * X[:, 0]), X[:, 3] ** 2] + 0.05 * RNG.normal(size=(1500, 3))
PARAMS = {"verbosity": 0, "min_samples_leaf": 10}


def _train(params=None, rounds=20):
    return gbmo.train({**PARAMS, **(params or {})}, gbmo.Dataset(X, Y), rounds)


def _reference(booster, n_trees):
    splits, gain = np.zeros(X.shape[1]), np.zeros(X.shape[1])
    for tree in booster.trees[:n_trees]:
        for node in range(tree.n_nodes):
            if tree.node_left[node] >= 0:
                splits[tree.node_feature[node]] += 1
                gain[tree.node_feature[node]] += tree.node_gain[node]
    return splits, gain


def test_split_and_gain_count_the_trees_splits():
    booster = _train()
    for iteration in (None, 5):
        splits, gain = _reference(booster, 20 if iteration is None else 5)
        np.testing.assert_array_equal(booster.feature_importance("split", iteration=iteration),
                                      splits)
        np.testing.assert_allclose(booster.feature_importance("gain", iteration=iteration), gain)
        np.testing.assert_allclose(
            booster.feature_importance("average_gain", iteration=iteration),
            gain / np.maximum(splits, 1))


def test_noise_features_get_near_zero_gain():
    gain = _train().feature_importance("gain")
    assert gain[[1, 2, 4]].sum() < 0.01 * gain.sum()


@pytest.mark.parametrize("params", [
    {}, {"split": "sparse", "top_k": 1}, {"split": "sparse_restricted", "top_k": 2},
    {"tree_mode": "single_output"}, {"growth": "depthwise", "max_depth": 3},
])
def test_per_output_gain_sums_to_the_total_and_finds_each_outputs_driver(params):
    booster = _train(params)
    per_output = booster.feature_importance("gain", per_output=True)
    assert per_output.shape == (5, 3)
    np.testing.assert_allclose(per_output.sum(axis=1), booster.feature_importance("gain"),
                               rtol=1e-9, atol=1e-6)
    assert np.argmax(per_output[:, 0]) == 0 and np.argmax(per_output[:, 1]) == 0
    assert np.argmax(per_output[:, 2]) == 3
    # feature 3 only drives output 2: the others take almost none of its gain
    assert per_output[3, :2].sum() < 0.02 * per_output[3, 2]


def test_per_output_split_counts():
    dense = _train()
    counts = dense.feature_importance("split", per_output=True)
    splits = dense.feature_importance("split")
    np.testing.assert_array_equal(counts, np.repeat(splits[:, None], 3, axis=1))
    single = _train({"tree_mode": "single_output"})
    counts = single.feature_importance("split", per_output=True)
    np.testing.assert_array_equal(counts.sum(axis=1), single.feature_importance("split"))
    sparse = _train({"split": "sparse", "top_k": 1})
    counts = sparse.feature_importance("split", per_output=True)
    assert np.all(counts <= sparse.feature_importance("split")[:, None])
    assert np.any(counts < sparse.feature_importance("split")[:, None])


def test_per_output_importance_round_trips_and_its_limits(tmp_path):
    booster = _train()
    path = tmp_path / "model.json"
    booster.save_model(path)
    loaded = gbmo.Booster(model_file=path)
    for kind in ("split", "gain", "average_gain"):
        np.testing.assert_array_equal(loaded.feature_importance(kind, per_output=True),
                                      booster.feature_importance(kind, per_output=True))
    with pytest.raises(ValueError, match="iteration must be None"):
        booster.feature_importance("gain", per_output=True, iteration=3)
    # XGBoost's names of the same kinds; its cover is not recorded
    np.testing.assert_array_equal(booster.feature_importance("weight"),
                                  booster.feature_importance("split"))
    np.testing.assert_array_equal(booster.feature_importance("total_gain", per_output=True),
                                  booster.feature_importance("gain", per_output=True))
    with pytest.raises(ValueError, match="importance_type 'cover' is not allowed; .* XGBoost's "
                                         "cover and total_cover, hessian sums, are not recorded"):
        booster.feature_importance("cover")
    sketched = _train({"ensembler": "sketch_topk", "ensembler_params": {"k": 1}})
    assert sketched.feature_importance("gain").sum() > 0
    with pytest.raises(ValueError, match="trained with an ensembler"):
        sketched.feature_importance("gain", per_output=True)
    # a part of the rounds keeps the trees' own importance, not the per-output sums
    part = gbmo.Booster(model_str=booster.model_to_string(num_iteration=2))
    np.testing.assert_array_equal(part.feature_importance("split"),
                                  booster.feature_importance("split", iteration=2))
    with pytest.raises(ValueError, match=r"is a part of its rounds \(booster\[a:b\], or "
                                         "num_iteration or start_iteration"):
        part.feature_importance("gain", per_output=True)


def test_model_file_with_a_bad_importance_field_is_refused():
    data = _train(rounds=2).dump_model()
    data["output_importance"]["features"] = [99]
    import json

    with pytest.raises(gbmo.ModelFormatError, match="output_importance.features"):
        gbmo.Booster(model_str=json.dumps(data))


def test_loading_sizes_importance_by_the_features_used_not_by_n_features():
    """Found by the loader fuzz: a file claiming 2^31 - 1 features made the
    loader allocate a 48 GiB (n_features x n_outputs) importance table."""
    import json
    import tracemalloc

    data = _train(rounds=2).dump_model()
    data["n_features"] = 2**31 - 1
    tracemalloc.start()
    loaded = gbmo.Booster(model_str=json.dumps(data))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 10 * 2**20
    assert loaded.output_importance.to_dict() == data["output_importance"]


def test_estimator_feature_importances():
    from gbmo.sklearn import GBMORegressor

    model = GBMORegressor(n_estimators=10, min_samples_leaf=10).fit(X, Y)
    importances = model.feature_importances_
    assert importances.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(importances, model.booster_.feature_importance("gain")
                               / model.booster_.feature_importance("gain").sum())
    split_model = GBMORegressor(n_estimators=10, importance_type="split").fit(X, Y)
    splits = split_model.booster_.feature_importance("split")
    np.testing.assert_allclose(split_model.feature_importances_, splits / splits.sum())
    with pytest.raises(ValueError, match="parameter 'importance_type' = 'cover' is not allowed"):
        GBMORegressor(importance_type="cover").fit(X, Y)


@pytest.mark.parametrize("split", ["dense", "sparse"])
def test_outputs_without_hessian_keep_importance_finite_and_the_model_loadable(split):
    """Found by the long training fuzz: an output with no hessian in a child
    (all its labels missing there) at lambda_l2 = 0 gave that output a 0/0
    per-output gain, and the saved model was refused at load."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(600, 3))
    y = np.c_[np.sin(3 * X[:, 0]), X[:, 1], X[:, 2]]
    y[X[:, 0] > 0.3, 1:] = np.nan
    params = {"verbosity": 0, "lambda_l2": 0.0, "min_samples_leaf": 5, "split": split}
    if split == "sparse":
        params["top_k"] = 1
    booster = gbmo.train(params, gbmo.Dataset(X, y), 10)
    assert np.all(np.isfinite(booster.feature_importance("gain", per_output=True)))
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


@pytest.mark.parametrize("fold_every", [1, 3, 256])
def test_per_output_sums_do_not_depend_on_when_trees_fold(monkeypatch, fold_every):
    """Trees' splits are kept and folded into the sums in batches, every
    output's trees apart from one output's: the sums equal adding each split
    in order, across a change of kind, a pickle and a read mid-way."""
    import copy
    import pickle

    from gbmo import importance

    monkeypatch.setattr(importance, "FOLD_EVERY", fold_every)
    rng = np.random.default_rng(3)
    n_features, d = 6, 3
    kept = importance.OutputImportance(n_features, d)
    gain, splits = np.zeros((n_features, d)), np.zeros((n_features, d), dtype=np.int64)
    for step in range(40):
        n_splits = int(rng.integers(0, 5))
        features = rng.integers(0, n_features, size=n_splits).astype(np.int32)
        output = None if step < 15 or step >= 30 else int(rng.integers(0, d))
        width = d if output is None else 1
        gains = rng.normal(size=(n_splits, width))
        involved = rng.random((n_splits, width)) < 0.7
        kept.add(features, gains, involved, output)
        columns = slice(None) if output is None else slice(output, output + 1)
        for f, g, i in zip(features, gains, involved):
            gain[f, columns] += g
            splits[f, columns] += i
        if step == 20:
            kept = pickle.loads(pickle.dumps(kept))
        if step == 22:
            copy.copy(kept).dense()  # a copy folds its own pending trees
        if step == 25:
            np.testing.assert_array_equal(kept.dense()[1], splits)
    total_gain, total_splits = kept.dense()
    np.testing.assert_allclose(total_gain, gain, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(total_splits, splits)


@pytest.mark.parametrize("params", [
    {}, {"lambda_l1": 0.5, "lambda_l2": 2.0}, {"monotone_constraints": [1, 0, 0, 0]},
    {"categorical_feature": [3]}, {"growth": "symmetric", "max_depth": 3}])
def test_one_output_takes_each_splits_whole_gain(params):
    """With one output the per-output gains are the splits' gains from the
    search; with two equal outputs (the same trees, each split's gain shared
    evenly) they come from scoring the splits' sums again: the two agree."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(2000, 4))
    X[:, 3] = rng.integers(0, 6, 2000)
    y = X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * X[:, 3] + 0.1 * rng.normal(size=2000)
    params = {"verbosity": 0, "max_leaves": 8, **params}
    if "monotone_constraints" in params:
        twice = {**params, "monotone_constraints": [[1, 1], [0, 0], [0, 0], [0, 0]]}
    else:
        twice = params
    one = gbmo.train(params, gbmo.Dataset(X, y), 5)
    two = gbmo.train(twice, gbmo.Dataset(X, np.c_[y, y]), 5)
    for tree_one, tree_two in zip(one.trees, two.trees):
        np.testing.assert_array_equal(tree_one.node_feature, tree_two.node_feature)
    gain_one = one.feature_importance("gain", per_output=True)[:, 0]
    np.testing.assert_allclose(gain_one, one.feature_importance("gain"), rtol=1e-12)
    np.testing.assert_allclose(two.feature_importance("gain", per_output=True),
                               np.c_[gain_one, gain_one], rtol=1e-9)


def test_per_output_gain_covers_every_round_as_the_readme_says_after_early_stopping():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 4))
    Y = np.c_[X[:, 0] + 0.5 * rng.normal(size=600), 2 * X[:, 1] + rng.normal(size=600)]
    train = gbmo.Dataset(X[:400], Y[:400])
    booster = gbmo.train({"verbosity": -1}, train, 200,
                         valid_sets=[train.create_valid(X[400:], Y[400:])],
                         callbacks=[gbmo.early_stopping(5, verbose=False)])
    assert 0 < booster.best_iteration < booster.current_iteration()
    per_output = booster.feature_importance("gain", per_output=True)
    np.testing.assert_allclose(per_output.sum(axis=1), booster.feature_importance(
        "gain", iteration=booster.current_iteration()), rtol=1e-9)
    assert not np.allclose(per_output.sum(axis=1), booster.feature_importance("gain"))
