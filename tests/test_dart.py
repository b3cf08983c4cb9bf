"""DART boosting: the drop schedule, the rescaling of dropped rounds, the
trees fitted without them, raw scores kept in step, and the errors."""
import numpy as np
import pytest
import scipy.sparse as sp

import gbmo
import gbmo.engine
from gbmo.dart import rounds_to_drop

QUIET = {"verbosity": 0}


def _data(n=800, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]]) + 0.1 * rng.normal(size=(n, 2))
    return X, Y


def test_the_schedule():
    rng = np.random.default_rng(0)
    draws = [rounds_to_drop(rng, 40, 0.25, 0, 0.0) for _ in range(400)]
    assert np.mean([len(d) for d in draws]) == pytest.approx(10, rel=0.1)
    assert all(d == sorted(set(d)) and all(0 <= r < 40 for r in d) for d in draws)
    capped = [rounds_to_drop(rng, 40, 0.25, 2, 0.0) for _ in range(400)]
    # a rate of 2 / 40 on average, then cut to 2 when more were drawn
    assert 1.2 < np.mean([len(d) for d in capped]) < 2 and max(len(d) for d in capped) == 2
    assert all(d == sorted(set(d)) for d in capped)
    skipped = [rounds_to_drop(rng, 40, 0.25, 0, 0.7) for _ in range(400)]
    assert np.mean([d == [] for d in skipped]) == pytest.approx(0.7, abs=0.08)
    assert rounds_to_drop(rng, 0, 1.0, 0, 0.0) == []


@pytest.mark.parametrize("settings", [{"skip_drop": 1.0}, {"drop_rate": 0.0}])
def test_dropping_nothing_is_gbdt(settings):
    X, Y = _data()
    gbdt = gbmo.train(QUIET, gbmo.Dataset(X, Y), 8)
    dart = gbmo.train({**QUIET, "boosting": "dart", **settings}, gbmo.Dataset(X, Y), 8)
    np.testing.assert_array_equal(dart.predict(X), gbdt.predict(X))


@pytest.mark.parametrize("tree_mode", ["multi_output", "single_output"])
def test_a_dropping_round_fits_the_model_without_the_dropped_and_rescales_them(
        monkeypatch, tree_mode):
    X, Y = _data()
    schedule = iter([[], [], [], [0, 2]])
    monkeypatch.setattr(gbmo.engine, "rounds_to_drop", lambda *args: next(schedule))
    rate = 0.3
    params = {**QUIET, "learning_rate": rate, "max_leaves": 8, "tree_mode": tree_mode}
    dart = gbmo.train({**params, "boosting": "dart"}, gbmo.Dataset(X, Y), 4)
    reference = gbmo.train(params, gbmo.Dataset(X, Y), 3)
    per_round = reference.trees_per_round
    for r, scale in ((0, 2 / 3), (1, 1.0), (2, 2 / 3)):
        for t in range(r * per_round, (r + 1) * per_round):
            np.testing.assert_allclose(dart.trees[t].leaf_values,
                                       scale * reference.trees[t].leaf_values, rtol=1e-12)
    # round 4 is round 1 of a model started from the raw scores without rounds 1 and 3,
    # shrunk by learning_rate / (k + 1)
    raw = lambda k: reference.predict(X, raw_score=True, num_iteration=k)  # noqa: E731
    without = raw(2) - raw(1) + reference.init_score
    fresh = gbmo.train({**params, "learning_rate": rate / 3},
                       gbmo.Dataset(X, Y, init_score=without), 1)
    for t in range(per_round):
        new, expected = dart.trees[3 * per_round + t], fresh.trees[t]
        np.testing.assert_array_equal(new.node_feature, expected.node_feature)
        np.testing.assert_array_equal(new.node_bin, expected.node_bin)
        np.testing.assert_allclose(new.leaf_values, expected.leaf_values, rtol=1e-6, atol=1e-12)


def test_raw_scores_follow_the_rescaled_trees():
    X, Y = _data(1200)
    train = gbmo.Dataset(X[:800], Y[:800])
    valid = train.create_valid(X[800:], Y[800:])
    seen = []
    booster = gbmo.train({**QUIET, "boosting": "dart", "drop_rate": 0.5, "skip_drop": 0.0,
                          "seed": 2}, train, 15, valid_sets=[train, valid],
                         callbacks=[lambda env: seen.append(env.model.predict(X[800:]))])
    for name, rows in (("training", slice(0, 800)), ("valid_1", slice(800, None))):
        recorded = booster.evals_result[name]["rmse"][-1]
        error = np.sqrt(np.mean((booster.predict(X[rows]) - Y[rows]) ** 2, axis=0)).mean()
        assert recorded == pytest.approx(error, rel=1e-12)
    # predictions made during training saw the trees as they were then
    assert not np.allclose(seen[5], booster.predict(X[800:], num_iteration=6))
    assert booster.evals_result["valid_1"]["rmse"][-1] < booster.evals_result["valid_1"]["rmse"][0]


def test_same_seed_same_model_and_the_estimators():
    X, Y = _data()
    params = {**QUIET, "boosting": "dart", "skip_drop": 0.0}
    a = gbmo.train({**params, "seed": 1}, gbmo.Dataset(X, Y), 10)
    b = gbmo.train({**params, "seed": 1}, gbmo.Dataset(X, Y), 10)
    c = gbmo.train({**params, "seed": 2}, gbmo.Dataset(X, Y), 10)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert not np.array_equal(a.predict(X), c.predict(X))
    loaded = gbmo.Booster(model_str=a.model_to_string())
    np.testing.assert_array_equal(loaded.predict(X), a.predict(X))
    from gbmo.sklearn import GBMORegressor
    model = GBMORegressor(n_estimators=10, boosting="dart", skip_drop=0.0, random_state=1).fit(X, Y)
    np.testing.assert_allclose(model.predict(X), a.predict(X))
    with pytest.raises(ValueError, match="early_stopping_rounds=3 is not taken"):
        GBMORegressor(boosting="dart", early_stopping_rounds=3).fit(X, Y)


@pytest.mark.parametrize("params, message", [
    ({"boosting": "rf"}, "boosting"),
    ({"boosting": "dart", "drop_rate": 1.5}, "drop_rate"),
    ({"boosting": "dart", "skip_drop": -0.1}, "skip_drop"),
])
def test_bad_settings_are_refused_by_name(params, message):
    X, Y = _data(100)
    with pytest.raises(ValueError, match=message):
        gbmo.train({**QUIET, **params}, gbmo.Dataset(X, Y), 1)


def test_early_stopping_is_refused_with_a_dense_or_sparse_y():
    X, Y = _data(200)
    data = gbmo.Dataset(X, Y)
    with pytest.raises(ValueError, match="no early stopping"):
        gbmo.train({**QUIET, "boosting": "dart"}, data, 5, valid_sets=[data],
                   callbacks=[gbmo.early_stopping(2)])
    with pytest.raises(ValueError, match="no early stopping"):
        gbmo.cv({**QUIET, "boosting": "dart"}, data, 5, nfold=2,
                callbacks=[gbmo.early_stopping(2)])
    labels = sp.csr_matrix((np.random.default_rng(0).random((200, 20)) < 0.1).astype(float))
    sparse_data = gbmo.Dataset(X, labels)
    with pytest.raises(ValueError, match="no early stopping"):
        gbmo.train({**QUIET, "boosting": "dart", "split": "sparse", "top_k": 2}, sparse_data, 5,
                   valid_sets=[sparse_data], callbacks=[gbmo.early_stopping(2)])


def test_predictions_during_training_see_the_rescaled_trees(monkeypatch):
    """A callback's prediction with the first round only, every round: after
    round 1 is dropped and rescaled it must change, as a reloaded copy of
    the model says (the packed forest of the old values must not serve it)."""
    X, Y = _data()
    schedule = iter([[], [], [0], [], [0]])
    monkeypatch.setattr(gbmo.engine, "rounds_to_drop", lambda *args: next(schedule))
    checked = []

    def first_round(env):
        seen = env.model.predict(X, num_iteration=1)
        fresh = gbmo.Booster(model_str=env.model.model_to_string()).predict(X, num_iteration=1)
        np.testing.assert_array_equal(seen, fresh)
        checked.append(seen)

    gbmo.train({**QUIET, "boosting": "dart"}, gbmo.Dataset(X, Y), 5, callbacks=[first_round])
    assert not np.array_equal(checked[1], checked[2])  # rescaled in round 3
    assert not np.array_equal(checked[3], checked[4])  # and again in round 5


def test_the_model_continued_is_left_as_it_was():
    X, Y = _data()
    start = gbmo.train(QUIET, gbmo.Dataset(X, Y), 5)
    before = [tree.leaf_values.copy() for tree in start.trees]
    predicted = start.predict(X)
    more = gbmo.train({**QUIET, "boosting": "dart", "drop_rate": 1.0, "skip_drop": 0.0,
                       "max_drop": 0}, gbmo.Dataset(X, Y), 4, init_model=start)
    for tree, values in zip(start.trees, before):
        np.testing.assert_array_equal(tree.leaf_values, values)
    np.testing.assert_array_equal(start.predict(X), predicted)
    # only this run's rounds were dropped and rescaled
    for tree, values in zip(more.trees[:5], before):
        np.testing.assert_array_equal(tree.leaf_values, values)
    assert not np.array_equal(more.trees[5].leaf_values, gbmo.train(
        QUIET, gbmo.Dataset(X, Y), 1, init_model=start).trees[5].leaf_values)
