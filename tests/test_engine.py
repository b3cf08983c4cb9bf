"""Learning on data where the answer is known, determinism and thread independence."""
import pickle
import warnings

import numpy as np
import pytest

import gbmo


def _friedman1_copies(n, noise, seed):
    """The paper's synthetic problem: friedman1 with five noisy copies of one target."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 10))
    target = (10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2
              + 10 * X[:, 3] + 5 * X[:, 4])
    Y = target[:, None] + noise * rng.normal(size=(n, 5))
    return X, Y


def test_friedman1_reaches_the_noise_floor():
    noise = 1.0
    X, Y = _friedman1_copies(6000, noise, seed=0)
    X_test, Y_test = _friedman1_copies(2000, noise, seed=1)
    booster = gbmo.train({"learning_rate": 0.1, "max_leaves": 15, "verbosity": 0},
                         gbmo.Dataset(X, Y), num_boost_round=300)
    rmse = np.sqrt(np.mean((booster.predict(X_test) - Y_test) ** 2))
    # The best possible RMSE is the noise sd; a constant predictor gets about 5.
    assert rmse < 1.15 * noise


def test_validation_metric_recorded_each_round_and_decreasing():
    X, Y = _friedman1_copies(2000, 0.5, seed=2)
    train = gbmo.Dataset(X[:1500], Y[:1500])
    valid = train.create_valid(X[1500:], Y[1500:])
    booster = gbmo.train({"verbosity": 0}, train, 40, valid_sets=[valid], valid_names=["test"])
    history = booster.evals_result["test"]["rmse"]
    assert len(history) == 40
    assert history[-1] < 0.5 * history[0]
    per_output = np.sqrt(np.mean((booster.predict(X[1500:]) - Y[1500:]) ** 2, axis=0))
    np.testing.assert_allclose(booster.evals_result["test"]["rmse_per_output"][-1], per_output)
    # The logged metric is the per-output metric averaged over outputs.
    assert history[-1] == pytest.approx(per_output.mean(), rel=1e-9)


def test_softmax_on_digits_matches_lightgbm_accuracy():
    datasets = pytest.importorskip("sklearn.datasets")
    lightgbm = pytest.importorskip("lightgbm")
    X, y = datasets.load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(y))
    train_idx, test_idx = order[:1200], order[1200:]
    rounds, leaves = 100, 15
    booster = gbmo.train(
        {"objective": "softmax", "max_leaves": leaves, "learning_rate": 0.1, "verbosity": 0},
        gbmo.Dataset(X[train_idx], y[train_idx]), rounds)
    proba = booster.predict(X[test_idx])
    assert proba.shape == (len(test_idx), 10)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    ours = np.mean(proba.argmax(axis=1) == y[test_idx])
    peer = lightgbm.LGBMClassifier(n_estimators=rounds, num_leaves=leaves, learning_rate=0.1,
                                   verbose=-1).fit(X[train_idx], y[train_idx])
    theirs = np.mean(peer.predict(X[test_idx]) == y[test_idx])
    assert ours >= theirs - 0.01


def test_sigmoid_multilabel_beats_all_negative_baseline():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 8))
    logits = np.stack([X[:, 0] + X[:, 1], X[:, 2] - X[:, 0], 2 * X[:, 3], X[:, 4] * X[:, 5]], axis=1)
    Y = (logits + 0.3 * rng.normal(size=logits.shape) > 0.5).astype(float)
    booster = gbmo.train({"objective": "sigmoid", "verbosity": 0},
                         gbmo.Dataset(X[:2000], Y[:2000]), 100)
    proba = booster.predict(X[2000:])
    assert proba.shape == (1000, 4) and np.all((proba > 0) & (proba < 1))
    ours = np.mean((proba > 0.5) != Y[2000:])
    baseline = np.mean(Y[2000:] != 0)
    assert ours < 0.5 * baseline


def test_binary_sigmoid_with_1d_labels():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1000, 3))
    y = (X[:, 0] > 0).astype(int)
    booster = gbmo.train({"objective": "sigmoid", "verbosity": 0}, gbmo.Dataset(X, y), 30)
    assert np.mean((booster.predict(X) > 0.5) == y) > 0.97


def test_sample_weights_shift_the_fit():
    """With weight 0 on one half, the model fits only the other half's target."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(2000, 2))
    y = np.where(np.arange(2000) < 1000, 1.0, -1.0)
    weight = np.where(np.arange(2000) < 1000, 1.0, 0.0)
    booster = gbmo.train({"verbosity": 0, "learning_rate": 0.5}, gbmo.Dataset(X, y, weight), 20)
    np.testing.assert_allclose(booster.predict(X), 1.0, atol=1e-3)


def test_leaf_count_and_depth_limits():
    X, Y = _friedman1_copies(3000, 0.5, seed=6)
    booster = gbmo.train({"max_leaves": 7, "verbosity": 0}, gbmo.Dataset(X, Y), 5)
    assert all(tree.n_leaves == 7 for tree in booster.trees)
    booster = gbmo.train({"max_leaves": 64, "max_depth": 3, "verbosity": 0}, gbmo.Dataset(X, Y), 5)
    for tree in booster.trees:
        assert tree.n_leaves <= 8
        assert np.max(booster.predict_leaf(X)) < 8


def test_min_samples_leaf_is_respected():
    X, Y = _friedman1_copies(2000, 0.5, seed=7)
    booster = gbmo.train({"min_samples_leaf": 150, "max_leaves": 63, "verbosity": 0},
                         gbmo.Dataset(X, Y), 3)
    for t, tree in enumerate(booster.trees):
        leaves = booster.predict_leaf(X)[:, t]
        assert np.bincount(leaves).min() >= 150


def _same_model(a, b):
    assert len(a.trees) == len(b.trees)
    for ta, tb in zip(a.trees, b.trees):
        np.testing.assert_array_equal(ta.node_feature, tb.node_feature)
        np.testing.assert_array_equal(ta.node_bin, tb.node_bin)


def test_same_seed_same_model_and_threads_do_not_matter():
    X, Y = _friedman1_copies(4000, 0.5, seed=8)
    X[::7, 2] = np.nan
    params = {"max_leaves": 31, "verbosity": 0, "bin_subsample": 1000, "seed": 3}
    one = gbmo.train({**params, "n_threads": 1}, gbmo.Dataset(X, Y), 10)
    two = gbmo.train({**params, "n_threads": 2}, gbmo.Dataset(X, Y), 10)
    again = gbmo.train({**params, "n_threads": 2}, gbmo.Dataset(X, Y), 10)
    _same_model(one, two)
    _same_model(two, again)
    np.testing.assert_array_equal(two.predict(X), again.predict(X))
    np.testing.assert_allclose(one.predict(X), two.predict(X), rtol=1e-9, atol=1e-9)
    np.testing.assert_array_equal(two.predict(X, n_threads=1), two.predict(X, n_threads=2))


def test_missing_values_learned_direction():
    """The target depends only on whether feature 0 is missing."""
    rng = np.random.default_rng(9)
    X = rng.normal(size=(2000, 2))
    missing = rng.random(2000) < 0.3
    X[missing, 0] = np.nan
    y = np.where(missing, 5.0, 0.0)
    booster = gbmo.train({"verbosity": 0, "learning_rate": 1.0, "lambda_l2": 0.0},
                         gbmo.Dataset(X, y), 1)
    np.testing.assert_allclose(booster.predict(X), y, atol=1e-6)


def test_num_iteration_uses_a_prefix_of_the_trees():
    X, Y = _friedman1_copies(1000, 0.5, seed=10)
    booster = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, Y), 10)
    short = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, Y), 4)
    np.testing.assert_array_equal(booster.predict(X, num_iteration=4), short.predict(X))


def test_pandas_feature_names_are_kept():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(11)
    frame = pd.DataFrame({"age": rng.normal(size=200), "height": rng.normal(size=200)})
    booster = gbmo.train({"verbosity": 0}, gbmo.Dataset(frame, frame["age"] * 2), 3)
    assert booster.feature_names == ["age", "height"]
    np.testing.assert_array_equal(booster.predict(frame), booster.predict(frame.to_numpy()))


def test_feature_names_given_as_numbers_are_kept_as_text_and_the_model_loads():
    """Found by a data scientist's audit: Dataset(feature_name=[1, 2, 3]) kept
    ints, which the model file refuses: save, load and pickle failed."""
    import pickle

    pd = pytest.importorskip("pandas")
    X = np.random.default_rng(13).normal(size=(200, 3))
    booster = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, X[:, 0], feature_name=[1, 2, 3]), 3)
    assert booster.feature_name() == ["1", "2", "3"]
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(booster)).predict(X),
                                  booster.predict(X))
    np.testing.assert_array_equal(loaded.predict(pd.DataFrame(X, columns=[1, 2, 3]),
                                                 validate_features=True), booster.predict(X))
    with pytest.raises(ValueError, match="another order"):
        loaded.predict(pd.DataFrame(X[:, [1, 0, 2]], columns=[2, 1, 3]))


def test_pandas_nullable_columns_are_numbers_with_na_missing():
    """Int64 / Float64 / boolean columns with pandas.NA were refused as
    non-numeric; they are numbers, and NA is a missing value."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(12)
    values = rng.integers(0, 5, size=(300, 3)).astype(float)
    values[rng.random(values.shape) < 0.2] = np.nan
    frame = pd.DataFrame({"count": pd.array(values[:, 0], dtype="Float64").astype("Int64"),
                          "ratio": pd.array(values[:, 1], dtype="Float64"),
                          "flag": pd.array(values[:, 2] > 2, dtype="boolean")})
    frame.loc[np.isnan(values[:, 2]), "flag"] = pd.NA
    y = np.nan_to_num(values[:, 0]) + rng.normal(size=300)
    booster = gbmo.train({"verbosity": 0}, gbmo.Dataset(frame, y), 5)
    plain = frame.to_numpy(dtype=np.float64, na_value=np.nan)
    assert np.isnan(plain).any()
    np.testing.assert_array_equal(booster.predict(frame), booster.predict(plain))
    reference = gbmo.train({"verbosity": 0}, gbmo.Dataset(plain, y), 5)
    np.testing.assert_array_equal(booster.predict(plain), reference.predict(plain))


def test_bounded_histogram_cache_grows_the_same_trees():
    """Evicted histograms are rebuilt instead of subtracted: same splits, same leaves."""
    X, Y = _friedman1_copies(3000, 0.5, seed=12)
    params = {"max_leaves": 31, "verbosity": 0}
    unbounded = gbmo.train(params, gbmo.Dataset(X, Y), 5)
    for cache in (1, 2, 5):
        bounded = gbmo.train({**params, "hist_cache": cache}, gbmo.Dataset(X, Y), 5)
        _same_model(unbounded, bounded)
        np.testing.assert_allclose(bounded.predict(X), unbounded.predict(X), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("native", [True, False])
@pytest.mark.parametrize("cache, bound", [(1, 2), (3, 3), (8, 8)])
def test_histogram_pool_never_exceeds_its_bound(monkeypatch, cache, bound, native):
    """At most hist_cache histograms are alive, and never fewer than the two a
    split needs (the parent's, reused by the larger child, and the smaller
    child's), in the loop in Cython and in the Python one."""
    from gbmo import grower

    monkeypatch.setattr(grower, "NATIVE_GROWTH", native)
    peak = {"alive": 0}
    take = grower._HistogramPool.take
    grow_best_first = grower.grow_best_first

    def counting_take(pool):
        histogram = take(pool)
        peak["alive"] = max(peak["alive"], pool.n_alive)
        return histogram

    def counting_growth(*args, **options):
        n_nodes = grow_best_first(*args, **options)
        peak["alive"] = max(peak["alive"], args[-1].peak_histograms)
        return n_nodes

    monkeypatch.setattr(grower._HistogramPool, "take", counting_take)
    monkeypatch.setattr(grower, "grow_best_first", counting_growth)
    X, Y = _friedman1_copies(3000, 0.5, seed=13)
    gbmo.train({"max_leaves": 63, "hist_cache": cache, "verbosity": 0}, gbmo.Dataset(X, Y), 2)
    assert peak["alive"] == bound


def record_histogram_pools(monkeypatch):
    """(shapes, capacities): appended to at every tree's histogram pool (the
    Python loop) or call of the loop in Cython, with the histograms' shape and
    the cache's bound."""
    from gbmo import grower

    shapes, capacities = [], []
    pool = grower.GrowerWorkspace.histogram_pool
    grow_best_first = grower.grow_best_first

    def recording_pool(workspace, shape, capacity):
        shapes.append(shape)
        capacities.append(capacity)
        return pool(workspace, shape, capacity)

    def recording_growth(*args, **options):
        histograms, capacity = args[9:11]
        shapes.append(histograms.shape[1:])
        capacities.append(capacity)
        return grow_best_first(*args, **options)

    monkeypatch.setattr(grower.GrowerWorkspace, "histogram_pool", recording_pool)
    monkeypatch.setattr(grower, "grow_best_first", recording_growth)
    return shapes, capacities


def test_histograms_are_as_tall_as_the_most_bins_a_feature_has(monkeypatch):
    """Binary features (bibtex, one-hot) get histograms of 2 value bins plus the
    missing one, not max_bins + 1, and missing values still split: the model
    fits Y exactly, also where feature 1 is missing."""
    rng = np.random.default_rng(3)
    X = rng.integers(0, 2, size=(600, 6)).astype(float)
    X[::9, 1] = np.nan
    Y = np.column_stack([X[:, 0] + np.nan_to_num(X[:, 1], nan=3.0), X[:, 2] - X[:, 3]])
    shapes, _ = record_histogram_pools(monkeypatch)
    booster = gbmo.train({"verbosity": 0, "learning_rate": 1.0, "min_samples_leaf": 1,
                          "lambda_l2": 0.0, "min_child_weight": 0.0},
                         gbmo.Dataset(X, Y), 1)
    assert shapes[0] == (6, 3, 2 + 1)  # 2 gradient sums and the count (MSE: constant hessian)
    np.testing.assert_allclose(booster.predict(X), Y, atol=1e-6)  # float32 gradients
    X[0, 0] = 0.5  # a third value: histograms of 3 value bins plus missing
    shapes.clear()
    gbmo.train({"verbosity": 0}, gbmo.Dataset(X, Y), 1)
    assert shapes[0][1] == 4


def test_common_bins_and_their_shares_of_the_rows():
    from gbmo.grower import common_bins

    rng = np.random.default_rng(5)
    X_binned = rng.integers(0, 4, size=(4, 1000)).astype(np.uint8)
    X_binned[0, :700] = 3
    X_binned[1, 100:700] = 255  # missing: the histogram's last bin
    X_binned[2, :499] = 1
    X_binned[2, 499:] = rng.integers(2, 4, size=501)
    common, share = common_bins(X_binned, 5)
    for f, values in enumerate(np.minimum(X_binned, 4)):
        counts = np.bincount(values, minlength=5)
        assert common[f] == np.argmax(counts) and share[f] == counts.max() / 1000
    np.testing.assert_array_equal(common[:3], [3, 4, 1])
    np.testing.assert_allclose(share[:3], [0.7 + 0.3 * np.mean(X_binned[0, 700:] == 3), 0.6,
                                           0.499])


def test_histograms_by_row_keep_one_chunk_when_their_scratch_is_large(monkeypatch,
                                                                      chunk_scratch_requests):
    """Chunks of rows need ROW_CHUNKS - 1 scratch histograms; where those would
    take more than a quarter of the histogram cache's bound a build by row
    keeps one chunk, and grows the same trees."""
    from gbmo import grower

    rng = np.random.default_rng(12)
    X = (rng.random((20000, 20)) < 0.05).astype(float)  # every feature built by row
    y = X @ rng.normal(size=20) + 0.1 * rng.normal(size=20000)
    asked = chunk_scratch_requests
    params = {"max_leaves": 15, "verbosity": -1, "n_threads": 2}
    chunked = gbmo.train(params, gbmo.Dataset(X, y), 3)
    assert asked
    asked.clear()
    one_histogram = 20 * 3 * 2 * grower.HIST_ITEM_BYTES  # features x bins x [g, count]
    monkeypatch.setattr(grower, "DENSE_HIST_CACHE_BYTES", 4 * one_histogram)
    one_chunk = gbmo.train(params, gbmo.Dataset(X, y), 3)
    assert not asked
    for a, b in zip(chunked.trees, one_chunk.trees):
        np.testing.assert_array_equal(a.node_feature, b.node_feature)
        np.testing.assert_array_equal(a.node_bin, b.node_bin)
    np.testing.assert_allclose(one_chunk.predict(X), chunked.predict(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("params", [{}, {"growth": "depthwise", "max_depth": 4},
                                    {"objective": "softmax", "num_class": 3},
                                    {"tree_mode": "single_output"}])
def test_skipping_common_bins_grows_the_same_trees(monkeypatch, params):
    """Histograms that skip each feature's most common bin (mostly-zero
    features, a mostly-missing one), built row by row or column by column,
    give the trees of histograms that add every row; leaf values agree to
    rounding."""
    from gbmo import grower

    rng = np.random.default_rng(8)
    n = 3000
    X = rng.normal(size=(n, 8)) * (rng.random((n, 8)) < 0.2)
    X[rng.random(n) < 0.8, 1] = np.nan  # well above SKIP_BIN_SHARE
    Y = np.column_stack([X[:, 0] + np.nan_to_num(X[:, 1]), X[:, 2] * X[:, 3], X[:, 4]])
    y = Y if "num_class" not in params else np.digitize(Y[:, 0], [-0.1, 0.1])
    common = dict(verbosity=0, max_leaves=15, learning_rate=0.3, **params)
    skipping = gbmo.train(common, gbmo.Dataset(X, y), 5)
    # skipping column by column, as where the entries' slots pass 32 bits
    monkeypatch.setattr(grower, "MAX_ROW_WISE_SLOTS", 0)
    by_column = gbmo.train(common, gbmo.Dataset(X, y), 5)
    monkeypatch.setattr(grower, "SKIP_BIN_SHARE", 2.0)  # no bin holds twice the rows
    adding = gbmo.train(common, gbmo.Dataset(X, y), 5)
    for other in (by_column, adding):
        for a, b in zip(skipping.trees, other.trees):
            np.testing.assert_array_equal(a.node_feature, b.node_feature)
            np.testing.assert_array_equal(a.node_bin, b.node_bin)
            np.testing.assert_array_equal(a.node_left, b.node_left)
        np.testing.assert_allclose(skipping.predict(X), other.predict(X), rtol=1e-9, atol=1e-9)


def test_the_histogram_layout_is_worked_out_once_for_a_dataset_s_binned_data(monkeypatch):
    """Each training on a Dataset worked out again which bins to skip and
    each row's entries (0.2 s a run on 100,000 x 1,000 one-hot columns); the
    Dataset keeps them now, for its binned data under the module's bounds."""
    from gbmo import grower

    made = []
    real = grower.RowEntries
    monkeypatch.setattr(grower, "RowEntries", lambda *args: made.append(1) or real(*args))
    rng = np.random.default_rng(9)
    X = rng.normal(size=(2000, 6)) * (rng.random((2000, 6)) < 0.2)
    y = X[:, 0] + X[:, 1]
    data = gbmo.Dataset(X, y)
    params = {"verbosity": 0, "max_leaves": 7}
    first = gbmo.train(params, data, 3)
    second = gbmo.train({**params, "learning_rate": 0.3}, data, 3)
    assert len(made) == 1 and len(data.dense_layouts) == 1
    fresh = gbmo.train({**params, "learning_rate": 0.3}, gbmo.Dataset(X, y), 3)
    np.testing.assert_array_equal(second.predict(X), fresh.predict(X))
    assert not np.array_equal(first.predict(X), second.predict(X))
    gbmo.train({**params, "max_bins": 31}, data, 1)  # binned again
    assert len(made) == 3 and len(data.dense_layouts) == 1
    monkeypatch.setattr(grower, "SKIP_BIN_SHARE", 2.0)
    gbmo.train({**params, "max_bins": 31}, data, 1)  # another bound: nothing skipped
    assert len(made) == 3 and len(data.dense_layouts) == 2


def test_runs_that_bin_alike_keep_the_dataset_s_bins():
    """A seed draws the binning's rows only when there are more than
    bin_subsample, and a categorical order equal to the last one encodes
    alike: seed averaging and searches kept binning again before."""
    import pandas as pd

    rng = np.random.default_rng(10)
    X = rng.normal(size=(600, 4))
    y = X[:, 0] + (X[:, 1] > 0)
    params = {"verbosity": 0, "max_leaves": 7, "subsample": 0.7}
    data = gbmo.Dataset(X, y)
    gbmo.train({**params, "seed": 1}, data, 2)
    binned = data.X_binned
    by_seed = gbmo.train({**params, "seed": 2}, data, 3)
    assert data.X_binned is binned  # 600 rows, all of them read for the edges
    np.testing.assert_array_equal(by_seed.predict(X), gbmo.train(
        {**params, "seed": 2}, gbmo.Dataset(X, y), 3).predict(X))
    sampled = {**params, "bin_subsample": 300}
    gbmo.train({**sampled, "seed": 1}, data, 1)
    binned = data.X_binned
    gbmo.train({**sampled, "seed": 2}, data, 1)
    assert data.X_binned is not binned  # other rows drawn for the edges
    codes = rng.integers(0, 5, 600)
    frame = pd.DataFrame({"c": pd.Categorical(codes), "x": X[:, 1]})
    categorical = gbmo.Dataset(frame, codes + X[:, 1])
    gbmo.train(params, categorical, 2)
    binned = categorical.X_binned
    gbmo.train({**params, "learning_rate": 0.2}, categorical, 2)  # the same start: one order
    assert categorical.X_binned is binned

    def ascent(y_true, raw):  # the gradients reversed: the categories in reverse order
        return y_true - raw, np.ones_like(raw)

    gbmo.train({**params, "objective": ascent}, categorical, 1)
    assert categorical.X_binned is not binned


def test_a_run_reads_its_own_features_when_another_run_caches_others():
    """Found by the review: runs on one Dataset share its RowEntries, whose
    cache of a tree's features split() read twice; another thread's run
    storing its own features between the reads handed this run theirs. The
    store of the other run is made to happen at once here."""
    from gbmo import grower

    rng = np.random.default_rng(10)
    X = rng.normal(size=(400, 6)) * (rng.random((400, 6)) < 0.2)
    data = gbmo.Dataset(X, X[:, 0])
    gbmo.train({"verbosity": 0}, data, 1)
    (_, _, entries), = data.dense_layouts.values()

    class OthersStoreAtOnce(grower.RowEntries):
        @property
        def _split_of(self):
            return self.__dict__["kept"]

        @_split_of.setter
        def _split_of(self, value):
            self.__dict__["kept"] = (b"another run", ("its wanted", "its features"))

    entries.__dict__["kept"] = entries.__dict__.pop("_split_of")
    entries.__class__ = OthersStoreAtOnce
    features = np.array([0, 2, 3], dtype=np.int32)
    wanted, column_features = entries.split(features)
    np.testing.assert_array_equal(wanted, np.isin(np.arange(6), features) & entries.by_row)
    np.testing.assert_array_equal(column_features, features[~entries.by_row[features]])


def test_histogram_cache_is_bounded_in_bytes_too(monkeypatch):
    """With many outputs one histogram is large: the cache keeps at most
    DENSE_HIST_CACHE_BYTES of them (but the two a split needs), and the trees
    do not change."""
    from gbmo import grower

    X, Y = _friedman1_copies(2000, 0.5, seed=14)
    params = {"max_leaves": 31, "verbosity": 0}
    unbounded = gbmo.train(params, gbmo.Dataset(X, Y), 3)
    shapes, capacities = record_histogram_pools(monkeypatch)
    gbmo.train(params, gbmo.Dataset(X, Y), 1)
    assert set(capacities) == {64}  # the default hist_cache: 64 small histograms fit
    histogram_bytes = int(np.prod(shapes[0])) * 8
    for budget, expected in ((3 * histogram_bytes + 1, 3), (histogram_bytes, 2)):
        monkeypatch.setattr(grower, "DENSE_HIST_CACHE_BYTES", budget)
        capacities.clear()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            bounded = gbmo.train(params, gbmo.Dataset(X, Y), 3)
        # below the two histograms a split needs, the run says so (once)
        assert len([w for w in caught if "histograms take" in str(w.message)]) == (
            expected == 2)
        assert set(capacities) == {expected}
        _same_model(unbounded, bounded)


def test_extra_trees_split_at_the_drawn_thresholds_and_still_learn(monkeypatch):
    """Every search gets one drawn threshold per feature, within the feature's
    bins, from the run's seed; the model still fits a smooth function. (The
    Python loop's searches are recorded; test_native_grower checks that the
    loop in Cython draws the same.)"""
    import gbmo.grower as grower_module

    monkeypatch.setattr(grower_module, "NATIVE_GROWTH", False)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4))
    Y = np.column_stack([np.sin(X[:, 0]) + X[:, 1], X[:, 2] - X[:, 0]])
    drawn = []
    search = grower_module.find_best_splits

    def recording(*args, random_bins=None, **kwargs):
        drawn.append(random_bins)
        return search(*args, random_bins=random_bins, **kwargs)

    monkeypatch.setattr(grower_module, "find_best_splits", recording)
    params = {"verbosity": 0, "extra_trees": True, "max_bins": 63}
    model = gbmo.train(params, gbmo.Dataset(X[:2000], Y[:2000]), 200)
    assert drawn and all(b is not None and b.min() >= 0 and b.max() <= 61 for b in drawn)
    assert len({b.tobytes() for b in drawn}) > len(drawn) // 2  # drawn again at each node
    rmse = np.sqrt(np.mean((model.predict(X[2000:]) - Y[2000:]) ** 2))
    assert rmse < 0.2
    monkeypatch.undo()
    again = gbmo.train(params, gbmo.Dataset(X[:2000], Y[:2000]), 200)
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    other_seed = gbmo.train({**params, "seed": 1}, gbmo.Dataset(X[:2000], Y[:2000]), 200)
    assert not np.array_equal(other_seed.predict(X), model.predict(X))


def test_extra_trees_with_symmetric_growth_is_refused():
    X = np.random.default_rng(0).normal(size=(50, 3))
    with pytest.raises(ValueError, match="extra_trees=True is not taken with growth='symmetric'"):
        gbmo.train({"verbosity": 0, "extra_trees": True, "growth": "symmetric"},
                   gbmo.Dataset(X, X[:, 0]), 1)


def test_lightgbm_s_switches_that_never_change_a_model_are_taken_and_change_nothing():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 4))
    Y = np.column_stack([np.sin(X[:, 0]), X[:, 1] * X[:, 2]])
    params = {"verbosity": 0, "subsample": 0.7, "subsample_freq": 1}
    plain = gbmo.train(params, gbmo.Dataset(X, Y), 5)
    switched = gbmo.train({**params, "force_col_wise": True, "deterministic": True,
                           "device": "cpu"}, gbmo.Dataset(X, Y), 5)
    np.testing.assert_array_equal(plain.predict(X), switched.predict(X))
    with pytest.raises(ValueError, match="'device_type' = 'gpu' is not allowed; allowed: cpu"):
        gbmo.train({"device_type": "gpu"}, gbmo.Dataset(X, Y), 5)
    # optuna's LightGBM tuner sets feature_pre_filter; DART's variants at gbmo's own
    dart = {**params, "boosting": "dart", "seed": 2}
    np.testing.assert_array_equal(
        gbmo.train({**dart, "feature_pre_filter": False, "uniform_drop": True,
                    "xgboost_dart_mode": "false"}, gbmo.Dataset(X, Y), 5).predict(X),
        gbmo.train(dart, gbmo.Dataset(X, Y), 5).predict(X))
    for name, value, reason in (("uniform_drop", False, "drops every earlier round with the "
                                                        "same chance"),
                                ("xgboost_dart_mode", True, "k / \\(k \\+ 1\\)")):
        with pytest.raises(ValueError, match=f"'{name}' = {value} is not taken: .*{reason}"):
            gbmo.train({**dart, name: value}, gbmo.Dataset(X, Y), 5)


def test_dataset_takes_lightgbm_s_keywords():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=300)
    ours = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, y, feature_names=["a", "b", "c"]), 5)
    train = gbmo.Dataset(X, label=y, feature_name=["a", "b", "c"], free_raw_data=False)
    theirs = gbmo.train({"verbosity": 0}, train, 5, valid_sets=[train.create_valid(X, label=y)])
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))
    assert theirs.feature_names == ["a", "b", "c"]
    with pytest.raises(ValueError, match="give Y once: as Y or as label"):
        gbmo.Dataset(X, y, label=y)
    with pytest.raises(ValueError, match="give feature_names once"):
        gbmo.Dataset(X, y, feature_names=["a", "b", "c"], feature_name=["a", "b", "c"])
    with pytest.raises(ValueError, match="Dataset needs the target: Y \\(or label"):
        gbmo.Dataset(X)


def test_lightgbm_s_positional_reference_is_refused_by_name():
    X = np.random.default_rng(0).normal(size=(50, 2))
    train = gbmo.Dataset(X, X[:, 0])
    with pytest.raises(TypeError, match="weight is a Dataset: gbmo's third argument is weight, "
                                        "where LightGBM's is reference"):
        gbmo.Dataset(X, X[:, 0], train)


def test_lightgbm_s_save_binary_is_refused_with_what_keeps_the_bins(tmp_path):
    import pickle

    X = np.random.default_rng(3).normal(size=(300, 4))
    data = gbmo.Dataset(X, X[:, 0]).construct()
    with pytest.raises(NotImplementedError, match=r"gbmo writes no binary Dataset file "
                                                  r"\(LightGBM's save_binary\).* or pickle the "
                                                  "Dataset, which keeps its bins"):
        data.save_binary(tmp_path / "train.bin")
    assert not (tmp_path / "train.bin").exists()
    kept = pickle.loads(pickle.dumps(data))
    binned = kept.X_binned
    np.testing.assert_array_equal(binned, data.X_binned)
    gbmo.train({"verbosity": -1}, kept, 2)
    assert kept.X_binned is binned  # trained on the pickled bins, not binned again


def test_a_lightgbm_model_file_is_refused_by_name(tmp_path):
    path = tmp_path / "model.txt"
    path.write_text("tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\n")
    with pytest.raises(gbmo.ModelFormatError, match="a LightGBM model file"):
        gbmo.Booster(model_file=path)
    xgboost_file = tmp_path / "model.json"
    xgboost_file.write_text('{"learner": {"gradient_booster": {}}, "version": [3, 2, 0]}')
    with pytest.raises(gbmo.ModelFormatError, match="an XGBoost model file"):
        gbmo.Booster(model_file=xgboost_file)


def test_a_missing_class_label_is_named_as_nan():
    X = np.random.default_rng(0).normal(size=(6, 2))
    with pytest.raises(ValueError, match=r"objective 'softmax' takes a class index for every "
                                         r"row, and y holds NaN at 1 row\(s\)"):
        gbmo.train({"objective": "softmax", "verbosity": 0},
                   gbmo.Dataset(X, [0, 1, 2, np.nan, 1, 0]), 1)


def test_lightgbm_s_booster_methods_for_features_and_the_sklearn_best_score():
    from gbmo.sklearn import GBMORegressor

    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=300)
    named = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, y, feature_names=["a", "b", "c"]), 2)
    assert named.feature_name() == ["a", "b", "c"] and named.num_feature() == 3
    assert gbmo.train({"verbosity": 0}, gbmo.Dataset(X, y), 2).feature_name() == ["f0", "f1", "f2"]
    # LightGBM's num_trees() is a method, gbmo's a property: both forms count
    single = gbmo.train({"verbosity": 0, "tree_mode": "single_output"},
                        gbmo.Dataset(X, np.c_[y, -y]), 3)
    assert single.num_trees == single.num_trees() == 6 and type(single.num_trees()) is int
    model = GBMORegressor(n_estimators=50, early_stopping_rounds=5).fit(X, y)
    assert model.best_score_ == model.booster_.best_score
    assert model.best_score_["validation"]["rmse"] == min(model.evals_result_["validation"]["rmse"])


def test_the_estimators_and_plots_are_top_level_names_as_in_lightgbm():
    import gbmo.plotting
    import gbmo.sklearn

    assert gbmo.GBMORegressor is gbmo.sklearn.GBMORegressor
    assert gbmo.GBMOClassifier is gbmo.sklearn.GBMOClassifier
    assert gbmo.plot_importance is gbmo.plotting.plot_importance
    with pytest.raises(AttributeError, match="no attribute 'LGBMRegressor'"):
        gbmo.LGBMRegressor


def _last_recorded_rmse_and_the_predictions_rmse(train, valid, X_valid, y_valid):
    booster = gbmo.train({"verbosity": 0, "max_bins": 16}, train, 15, valid_sets=valid)
    prediction_rmse = np.sqrt(np.mean((booster.predict(X_valid) - y_valid) ** 2))
    return booster.evals_result["valid_0"]["rmse"][-1], prediction_rmse


def test_a_validation_set_made_without_the_training_set_is_scored_on_its_bins():
    # Its own bin edges (few bins, a shifted range) would put rows in other
    # bins than the trees' thresholds read: the recorded metric was wrong.
    rng = np.random.default_rng(5)
    X = rng.normal(size=(900, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=900)
    X_valid, y_valid = X[600:] + 0.7, y[600:] + 0.7
    train = gbmo.Dataset(X[:600], y[:600])
    for valid in (gbmo.Dataset(X_valid, y_valid),
                  gbmo.Dataset(X[:300], y[:300]).create_valid(X_valid, y_valid)):
        recorded, predicted = _last_recorded_rmse_and_the_predictions_rmse(
            train, valid, X_valid, y_valid)
        assert recorded == pytest.approx(predicted, rel=1e-9)
        assert valid.bin_mapper is None or valid.reference is not train  # left as it was


def test_a_validation_frame_without_the_training_set_is_scored_in_its_categories():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    shops = np.array(["a", "b", "c", "d"])
    effect = {"a": 0.0, "b": 3.0, "c": -2.0, "d": 1.0}
    codes = rng.integers(0, 4, size=800)
    y = np.array([effect[s] for s in shops[codes]]) + 0.1 * rng.normal(size=800)
    frame = pd.DataFrame({"shop": pd.Categorical(shops[codes]), "x": rng.normal(size=800)})
    # the validation rows lack "a", so its own category codes are shifted by one
    valid_rows = np.flatnonzero(codes[:] != 0)[-200:]
    valid_frame = frame.iloc[valid_rows].copy()
    valid_frame["shop"] = valid_frame["shop"].cat.remove_unused_categories()
    train = gbmo.Dataset(frame.iloc[:500], y[:500])
    recorded, predicted = _last_recorded_rmse_and_the_predictions_rmse(
        train, gbmo.Dataset(valid_frame, y[valid_rows]), valid_frame, y[valid_rows])
    assert recorded == pytest.approx(predicted, rel=1e-9)
    assert predicted < 0.5


def test_lightgbm_s_metric_names_read_the_records():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(400, 3))
    y = (X[:, 0] > 0).astype(float)
    train = gbmo.Dataset(X[:300], y[:300])
    recorded = {}
    booster = gbmo.train({"objective": "binary", "metric": ["binary_logloss", "l2"],
                          "verbosity": 0}, train, 5,
                         valid_sets=train.create_valid(X[300:], y[300:]),
                         callbacks=[gbmo.record_evaluation(recorded)])
    history = booster.evals_result["valid_0"]
    assert list(history) == ["logloss", "mse"]  # gbmo's names are the keys
    assert history["binary_logloss"] is history["logloss"]
    assert history["l2"] is history["mse"] and "l2" in history and "auc" not in history
    assert history.get("mean_squared_error") is history["mse"]
    assert recorded["valid_0"]["l2"] == history["mse"]
    assert booster.best_score["valid_0"]["binary_logloss"] == history["logloss"][-1]
    with pytest.raises(KeyError, match=r"metric 'l1' \(gbmo's name: 'mae'\) was not recorded; "
                                       r"recorded: 'logloss', 'mse'"):
        history["l1"]
    results = gbmo.cv({"objective": "binary", "metric": "l2", "verbosity": 0}, train, 3,
                      nfold=3)
    assert results["valid l2-mean"] is results["valid mse-mean"]
    assert results["valid l2-stdv"] is results["valid mse-stdv"]
    with pytest.raises(KeyError, match="'valid l1-mean'"):
        results["valid l1-mean"]


def test_cv_returns_lightgbm_s_cvbooster():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 3))
    results = gbmo.cv({"verbosity": 0}, gbmo.Dataset(X, X[:, 0]), 4, nfold=3,
                      return_cvbooster=True, return_boosters=True)
    cvbooster = results["cvbooster"]
    assert cvbooster.boosters is results["boosters"] and len(cvbooster.boosters) == 3
    assert cvbooster.best_iteration == 0  # no early stopping, as LightGBM's
    predictions = cvbooster.predict(X[:5], num_iteration=2)
    for prediction, booster in zip(predictions, cvbooster.boosters, strict=True):
        np.testing.assert_array_equal(prediction, booster.predict(X[:5], num_iteration=2))
    with pytest.raises(AttributeError, match="CVBooster has no attribute 'trees'"):
        cvbooster.trees


def test_boost_from_average_false_starts_every_row_from_zero():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + 5.0
    from_zero = gbmo.train({"verbosity": 0, "boost_from_average": False},
                           gbmo.Dataset(X, y), 5)
    zero_offsets = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, y, init_score=np.zeros(300)), 5)
    default = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, y), 5)
    np.testing.assert_array_equal(from_zero.init_score, [0.0])
    np.testing.assert_array_equal(from_zero.predict(X), zero_offsets.predict(X))
    assert default.init_score[0] == pytest.approx(y.mean())
    # five rounds of 0.1 from 0 stay far below the targets, the default does not
    assert np.mean(from_zero.predict(X)) < 3 < np.mean(default.predict(X))


@pytest.mark.parametrize("name, whose, reason", [
    ("bagging_seed", "LightGBM", "one seed: give seed"),
    ("group", "LightGBM", "no ranking objectives"),
    ("gamma", "XGBoost", "XGBoost's min_split_loss, which gbmo takes under that name"),
    ("colsample_bylevel", "XGBoost", "per tree .* and per node"),
    ("base_score", "XGBoost", "boost_from_average.*init_score"),
    ("bootstrap_type", "CatBoost", "no Bayesian bootstrap"),
    ("one_hot_max_size", "CatBoost", "give max_cat_to_onehot"),
    ("od_type", "CatBoost", "early_stopping_round"),
])
def test_other_libraries_parameters_gbmo_does_not_take_are_refused_with_the_reason(
        name, whose, reason):
    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(ValueError, match=f"parameter '{name}' is {whose}'s, and gbmo does not "
                                         f"take it: .*{reason}"):
        gbmo.train({"verbosity": 0, name: 1}, gbmo.Dataset(X, X[:, 0]), 1)


@pytest.mark.parametrize("objective, whose, way", [
    ("multi:softmax", "XGBoost", "predicts probabilities, whose argmax is the class"),
    ("binary:logitraw", "XGBoost", "give objective 'sigmoid' and predict\\(raw_score=True\\)"),
    ("reg:pseudohubererror", "XGBoost", "the Huber loss, not pseudo-Huber"),
    ("binary:hinge", "XGBoost", "no hinge objective for dense labels"),
    ("none", "LightGBM", r"give the function itself as params\['objective'\], or a Booster's "
                         r"update\(fobj=f\)"),
    ("custom", "LightGBM", "give the function itself"),
    ("xentlambda", "LightGBM", "no such objective; 'cross_entropy'"),
])
def test_other_libraries_objectives_gbmo_does_not_take_name_its_way(objective, whose, way):
    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(ValueError, match=f"objective '{objective}' is {whose}'s, and gbmo does "
                                         f"not take it: .*{way}"):
        gbmo.train({"verbosity": 0, "objective": objective}, gbmo.Dataset(X, X[:, 0] > 0), 1)


def test_objective_and_metric_names_are_read_in_any_case_as_lightgbm_reads_them():
    X = np.random.default_rng(0).normal(size=(80, 2))
    labels = (X[:, 0] > 0).astype(float)
    train = gbmo.Dataset(X, labels)
    valid = [train.create_valid(X, labels)]
    upper = gbmo.train({"verbosity": 0, "objective": "Binary", "metric": ["AUC", "L2"]},
                       train, 3, valid_sets=valid)
    lower = gbmo.train({"verbosity": 0, "objective": "binary", "metric": ["auc", "l2"]},
                       train, 3, valid_sets=valid)
    np.testing.assert_array_equal(upper.predict(X), lower.predict(X))
    assert upper.evals_result == lower.evals_result
    assert list(upper.evals_result["valid_0"]) == ["auc", "mse"]
    with pytest.raises(ValueError, match="unknown objective 'Binaryy'"):
        gbmo.train({"verbosity": 0, "objective": "Binaryy"}, train, 1)
    with pytest.raises(ValueError, match="unknown metric 'AUCC'"):
        gbmo.train({"verbosity": 0, "metric": "AUCC"}, train, 1, valid_sets=valid)


def test_lightgbm_messages_for_its_labels_init_scores_and_names():
    """Found by a LightGBM user's audit: labels of -1 / 1, a flat multiclass
    init_score and metric="" (LightGBM's default) met errors that did not
    say LightGBM's way; an unknown parameter's message lacked a stop."""
    X = np.random.default_rng(0).normal(size=(60, 2))
    with pytest.raises(ValueError, match=r"got values in \[-1.0, 1.0\] \(LightGBM's binary "
                                         r"reads a label above 0 as 1: give y > 0 for that\)"):
        gbmo.train({"verbosity": 0, "objective": "binary"},
                   gbmo.Dataset(X, np.where(X[:, 0] > 0, 1, -1)), 1)
    with pytest.raises(ValueError, match=r"got values in \[0.0, 100.0\]$"):  # no -1 / 1 there
        gbmo.train({"verbosity": 0, "objective": "cross_entropy"},
                   gbmo.Dataset(X, np.linspace(0, 100, 60)), 1)
    classes = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    with pytest.raises(ValueError, match=r"got \(180,\); LightGBM's flat layout, output by "
                                         r"output, is init_score.reshape\(3, 60\).T, XGBoost's "
                                         r"flat base_margin, row by row, "
                                         r"base_margin.reshape\(60, 3\)$"):
        gbmo.Dataset(X, classes, init_score=np.zeros(180))
    with pytest.raises(ValueError, match=r"got \(90,\)$"):  # no whole number of outputs
        gbmo.Dataset(X, classes, init_score=np.zeros(90))
    train = gbmo.Dataset(X, X[:, 0])
    default = gbmo.train({"verbosity": 0}, train, 2, valid_sets=[train.create_valid(X, X[:, 0])],
                         valid_names=["v"])
    empty = gbmo.train({"verbosity": 0, "metric": ""}, train, 2,
                       valid_sets=[train.create_valid(X, X[:, 0])], valid_names=["v"])
    assert list(empty.evals_result["v"]) == list(default.evals_result["v"]) == ["rmse"]
    with pytest.raises(ValueError, match=r"^unknown parameter 'qqq'\. Known parameters: "):
        gbmo.train({"verbosity": 0, "qqq": 1}, train, 1)


@pytest.mark.parametrize("name, value, meaning", [
    ("device_type", "gpu", "GPU training is not built"),
    ("tree_method", "gpu_hist", "XGBoost's exact, approx and GPU methods are not built"),
    ("verbose", 100, r"verbose=N, a log every N rounds, is callbacks=\[gbmo.log_evaluation"),
    ("max_leaves", 0, "XGBoost's 0, no cap, is max_leaves left out with growth='depthwise'"),
    ("max_bin", 65536, "16-bit bins hold 65,535 besides the bin of missing values"),
])
def test_a_value_not_taken_says_why_or_what_it_means_in_another_library(name, value, meaning):
    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(ValueError, match=f"(out of range|is not allowed); allowed: .*{meaning}"):
        gbmo.train({name: value}, gbmo.Dataset(X, X[:, 0]), 1)


@pytest.mark.parametrize("name", ["min_split_gain", "min_gain_to_split", "min_split_loss"])
def test_lightgbm_s_and_xgboost_s_gain_thresholds_prune_as_there(name):
    """Their split gain leaves out the 1/2 of gbmo's loss reduction: a
    threshold under their names is halved, so a split whose LightGBM gain
    (twice gbmo's) exceeds it is kept, as LightGBM keeps it."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 3))
    y = (X[:, 0] > 0) + 0.1 * rng.normal(size=1000)
    params = {"verbosity": 0, "max_leaves": 2, "lambda_l2": 0.0, "learning_rate": 1.0}
    stump = gbmo.train(params, gbmo.Dataset(X, y), 1)
    peer_gain = 2 * stump.trees[0].node_gain[0]
    for threshold, splits in [(0.75 * peer_gain, 1), (1.25 * peer_gain, 0)]:
        pruned = gbmo.train({**params, name: threshold}, gbmo.Dataset(X, y), 1)
        assert pruned.feature_importance("split").sum() == splits
    assert gbmo.params.resolve_params({name: 3.0})["min_gain"] == 1.5
    assert gbmo.params.resolve_params({"min_gain": 3.0})["min_gain"] == 3.0


def test_lightgbm_s_bagging_freq_zero_turns_bagging_off():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(300, 3))
    data = gbmo.Dataset(X, X[:, 0] + 0.1 * rng.normal(size=300))
    off = gbmo.train({"verbosity": 0, "bagging_fraction": 0.5, "bagging_freq": 0}, data, 5)
    plain = gbmo.train({"verbosity": 0}, data, 5)
    bagged = gbmo.train({"verbosity": 0, "bagging_fraction": 0.5}, data, 5)
    np.testing.assert_array_equal(off.predict(X), plain.predict(X))
    assert not np.array_equal(bagged.predict(X), plain.predict(X))


def test_lightgbm_s_dataset_and_booster_forms():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(200, 3))
    data = gbmo.Dataset(X, X[:, 0])
    assert data.construct() is data and data.X_binned is not None  # LightGBM's construct()
    booster = gbmo.train({"verbosity": 0, "max_bins": 15}, data, 3)
    assert booster.best_iteration == 0  # no early stopping: 0, as LightGBM's
    assert int(data.X_binned.max()) <= 15  # train binned again with its own max_bins
    np.testing.assert_array_equal(booster.predict(X), booster.predict(X, num_iteration=3))
    with pytest.raises(TypeError, match="predict takes the rows' features .*not a Dataset"):
        booster.predict(data)
    # a dict of some parameters bins with them over the Dataset's own (it raised KeyError)
    data = gbmo.Dataset(X, X[:, 0], params={"max_bins": 40, "min_data_in_bin": 1})
    assert data.construct({"max_bin": 7}) is data
    np.testing.assert_array_equal(data.bin_mapper.n_bins_non_missing_, [7, 7, 7])
    with pytest.raises(ValueError, match="parameter 'max_bins' = 1 is out of range"):
        data.construct({"max_bins": 1})
    with pytest.raises(ValueError, match="unknown parameter 'max_bn'; did you mean max_bin"):
        data.construct({"max_bn": 7})  # binned at 255 without a word, a review found


def test_lightgbm_s_dataset_getters_and_setters():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(100, 3))
    data = gbmo.Dataset(X, X[:, 0], feature_names=["a", "b", "c"])
    assert data.num_data() == 100 and data.num_feature() == 3
    assert data.get_feature_name() == ["a", "b", "c"]
    assert gbmo.Dataset(X, X[:, 0]).get_feature_name() == ["f0", "f1", "f2"]
    weight, offsets = rng.uniform(0.5, 2.0, 100), rng.normal(size=100)
    assert data.set_label(X[:, 1]).set_weight(weight).set_init_score(offsets) is data
    np.testing.assert_array_equal(data.get_field("label"), X[:, 1])
    np.testing.assert_array_equal(data.get_field("weight"), weight)
    np.testing.assert_array_equal(data.get_field("init_score").ravel(), offsets)
    with pytest.raises(ValueError, match=r"weight must have shape \(100,\)"):
        data.set_weight(weight[:5])
    with pytest.raises(KeyError, match="unknown field 'group'"):
        data.get_field("group")
    set_later = gbmo.Dataset(X, np.zeros(100)).set_label(X[:, 0])
    np.testing.assert_array_equal(gbmo.train({"verbosity": 0}, set_later, 3).predict(X),
                                  gbmo.train({"verbosity": 0}, gbmo.Dataset(X, X[:, 0]), 3)
                                  .predict(X))


def test_lightgbm_s_dataset_field_data_name_and_bin_methods():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(200, 3))
    X[:, 2] = rng.integers(0, 4, 200)
    data = gbmo.Dataset(X, X[:, 0])
    weight = rng.uniform(0.5, 2.0, 200)
    assert data.set_field("weight", weight) is data
    np.testing.assert_array_equal(data.get_weight(), weight)
    assert data.set_field("weight", None).get_weight() is None
    with pytest.raises(KeyError, match="unknown field 'group'; allowed: label, weight"):
        data.set_field("group", np.zeros(200))
    assert data.get_data() is data.X and data.get_data().shape == (200, 3)
    assert data.set_feature_name(["a", "b", "c"]).get_feature_name() == ["a", "b", "c"]
    assert data.set_feature_name("auto").get_feature_name() == ["a", "b", "c"]
    with pytest.raises(ValueError, match="2 feature names for 3 features"):
        data.set_feature_name(["a", "b"])
    with pytest.raises(ValueError, match="feature names must differ; repeated: a"):
        data.set_feature_name(["a", "b", "a"])
    for bad in ("abc", None):
        with pytest.raises(TypeError, match="feature_name must be a list of 3 names or 'auto'"):
            data.set_feature_name(bad)
    assert data.get_feature_name() == ["a", "b", "c"]
    with pytest.raises(ValueError, match="needs the binned Dataset: call construct"):
        data.feature_num_bin(0)
    data.construct(gbmo.params.resolve_params({"max_bins": 15}))
    assert data.feature_num_bin("a") == 15  # 200 distinct values, 15 bins
    assert data.feature_num_bin(2) == 4  # 4 distinct values
    with_missing = X.copy()
    with_missing[::7, 2] = np.nan
    data_with_missing = gbmo.Dataset(with_missing, X[:, 0]).construct()
    assert data_with_missing.feature_num_bin(2) == 5  # and the missing values' bin
    with pytest.raises(ValueError, match=r"an index in \[0, 2\], got 3"):
        data.feature_num_bin(3)
    assert data.set_categorical_feature(["c"]) is data and data.X_binned is None
    model = gbmo.train({"verbosity": 0, "max_leaves": 4}, data, 2)
    assert model.category_order.features == [2]
    with pytest.raises(ValueError, match="'z'"):
        data.set_categorical_feature(["z"])


def test_subsample_without_bagging_frequency_is_taken_where_bagging_is_not():
    """subsample_freq = 0 (LightGBM's estimators' default) means no bagging,
    so a subsample below 1 beside GOSS means nothing, as in LightGBM."""
    X = np.random.default_rng(13).normal(size=(200, 3))
    data = gbmo.Dataset(X, X[:, 0])
    goss = {"verbosity": 0, "data_sample_strategy": "goss"}
    np.testing.assert_array_equal(
        gbmo.train({**goss, "subsample": 0.8, "subsample_freq": 0}, data, 3).predict(X),
        gbmo.train(goss, data, 3).predict(X))
    with pytest.raises(ValueError, match="takes no bagging"):
        gbmo.train({**goss, "subsample": 0.8}, data, 3)


def test_the_cvbooster_saves_every_fold_in_one_file(tmp_path):
    X = np.random.default_rng(14).normal(size=(200, 3))
    cvbooster = gbmo.cv({"verbosity": 0}, gbmo.Dataset(X, X[:, 0]), 4, nfold=3,
                        return_cvbooster=True)["cvbooster"]
    assert cvbooster.num_trees() == [4, 4, 4]
    cvbooster.save_model(tmp_path / "folds.json", num_iteration=2)
    loaded = gbmo.CVBooster(model_file=tmp_path / "folds.json")
    assert len(loaded.boosters) == 3
    for got, expected in zip(loaded.predict(X), cvbooster.predict(X, num_iteration=2)):
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(gbmo.ModelFormatError, match="not a gbmo CVBooster"):
        gbmo.CVBooster(model_str='{"trees": []}')
    with pytest.raises(gbmo.ModelFormatError, match="not valid JSON"):
        gbmo.CVBooster(model_str='{"boosters": [')
    with pytest.raises(gbmo.ModelFormatError, match="not a gbmo model"):
        gbmo.CVBooster(model_str='{"boosters": [[]]}')


def test_the_cvbooster_loads_another_document_in_place():
    X = np.random.default_rng(15).normal(size=(200, 3))
    run = gbmo.cv({"verbosity": 0}, gbmo.Dataset(X, X[:, 0]), 3, nfold=3,
                  return_cvbooster=True)["cvbooster"]
    other = gbmo.cv({"verbosity": 0}, gbmo.Dataset(X, X[:, 1]), 5, nfold=2,
                    return_cvbooster=True)["cvbooster"]
    assert run.model_from_string(other.model_to_string()) is run
    assert run.num_trees() == [5, 5]
    for got, expected in zip(run.predict(X), other.predict(X)):
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(gbmo.ModelFormatError, match="not a gbmo CVBooster"):
        run.model_from_string('{"boosters": []}')
    with pytest.raises(TypeError, match="model_str must be a model's text"):
        run.model_from_string(other.model_to_string().encode())
    assert run.num_trees() == [5, 5]
    # LightGBM's idiom, which gbmo refused (found by a deployment audit): an
    # empty CVBooster, then the folds
    empty = gbmo.CVBooster()
    assert empty.boosters == [] and empty.best_iteration == 0 and empty.predict(X) == []
    assert empty.model_from_string(other.model_to_string()).num_trees() == [5, 5]
    with pytest.raises(gbmo.ModelFormatError, match=r"not a gbmo CVBooster: it needs a "
                                                    r"'boosters' list of models \(this is one "
                                                    r"Booster's model: load it with "
                                                    r"gbmo.Booster\(model_file=...\)"):
        gbmo.CVBooster(model_str=other.boosters[0].model_to_string())


def test_lightgbm_s_data_keyword_for_the_features():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(16)
    X = pd.DataFrame(rng.normal(size=(200, 3)), columns=["a", "b", "c"])
    y = X["a"].to_numpy()
    data = gbmo.Dataset(data=X, label=y)
    valid = data.create_valid(data=X[:50], label=y[:50])
    model = gbmo.train({"verbosity": 0}, data, 3, valid_sets=[valid])
    np.testing.assert_array_equal(model.predict(data=X), model.predict(X))
    with pytest.raises(ValueError, match="give X once: as X or as data"):
        gbmo.Dataset(X, y, data=X)
    with pytest.raises(ValueError, match="Dataset needs the features: X"):
        gbmo.Dataset(label=y)
    with pytest.raises(ValueError, match="predict needs the features"):
        model.predict()
    with pytest.raises(ValueError, match="give X once"):
        model.predict(X, data=X)


def test_a_validation_target_of_the_training_s_columns_in_another_order_is_refused():
    """Found by a user review: a validation Y of the same named targets in
    another order was read by position, and early stopping watched each
    output's predictions against another's targets. As X's, a target's
    columns in another order are refused; other names are read by position."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(19)
    X = rng.normal(size=(300, 3))
    Y = pd.DataFrame({"p": X[:, 0], "q": 10 + X[:, 1]})
    train = gbmo.Dataset(X[:200], Y[:200])
    swapped = Y[200:][["q", "p"]]
    message = r"Y's columns are the model's targets in another order \(q, p\); give them in " \
              r"the model's order: p, q"
    with pytest.raises(ValueError, match=r"validation set 'valid_0': " + message):
        gbmo.train({"verbosity": -1}, train, 3, valid_sets=[train.create_valid(X[200:], swapped)])
    with pytest.raises(ValueError, match=r"eval_set\[0\] y's columns are the model's targets"):
        gbmo.GBMORegressor(n_estimators=3).fit(X[:200], Y[:200], eval_set=[(X[200:], swapped)])
    renamed = Y[200:].rename(columns={"p": "a", "q": "b"})
    by_position = gbmo.train({"verbosity": -1}, train, 3,
                             valid_sets=[train.create_valid(X[200:], renamed)])
    same = gbmo.train({"verbosity": -1}, train, 3,
                      valid_sets=[train.create_valid(X[200:], Y[200:].to_numpy())])
    assert by_position.evals_result == same.evals_result


def test_validate_features_checks_a_dataframe_s_columns_by_name():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.random.default_rng(17).normal(size=(100, 3)), columns=["a", "b", "c"])
    model = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, X["a"].to_numpy()), 2)
    np.testing.assert_array_equal(model.predict(X, validate_features=True), model.predict(X))
    with pytest.raises(ValueError, match="not the model's features in order; the model's: a, b"):
        model.predict(X[["b", "a", "c"]], validate_features=True)
    with pytest.raises(ValueError, match="missing: c; not the model's: z"):
        model.predict(X.rename(columns={"c": "z"}), validate_features=True)
    # other names are read by position without it, as LightGBM reads them
    renamed = X.rename(columns={"c": "z"})
    np.testing.assert_array_equal(model.predict(renamed), model.predict(renamed.to_numpy()))
    # but the model's own names in another order would swap features: refused for every
    # kind of prediction (LightGBM and gbmo before read them by position), as XGBoost does
    for kind in ({}, {"pred_leaf": True}, {"pred_contrib": True}, {"raw_score": True}):
        with pytest.raises(ValueError, match=r"X's columns are the model's features in another "
                                             r"order \(b, a, c\); give them in the model's "
                                             r"order: a, b, c"):
            model.predict(X[["b", "a", "c"]], **kind)
    # and so are they where another column is renamed too (found by a deployment
    # audit: read by position, 1.9 off, as LightGBM reads them; XGBoost refuses)
    swapped_and_renamed = X[["b", "a", "c"]].rename(columns={"c": "z"})
    with pytest.raises(ValueError, match=r"X's columns hold the model's features at other "
                                         r"positions: 'b' at 0 \(the model's 1\), 'a' at 1 "
                                         r"\(the model's 0\); columns are read by position, "
                                         r"so give the model's features in its order: a, b, c"):
        model.predict(swapped_and_renamed)
    with pytest.raises(ValueError, match="'c' at 1 \\(the model's 2\\)"):
        model.predict(X[["a", "c"]].assign(d=1.0))
    # names a library made (a frame of an array's integer labels) say nothing of the
    # features: read by position, as before (found by review: a frame of other columns
    # shares them by chance), and so is a frame of another width, which the width
    # error names
    picked = pd.DataFrame(np.c_[X.to_numpy(), X.to_numpy()[:, :2]])[[4, 0, 1]]
    by_labels = gbmo.train({"verbosity": 0}, gbmo.Dataset(picked, X["a"].to_numpy()), 2)
    np.testing.assert_array_equal(by_labels.predict(pd.DataFrame(picked.to_numpy())),
                                  by_labels.predict(picked.to_numpy()))
    with pytest.raises(ValueError, match="X has 4 features, but the model was trained on 3; "
                                         "not the model's: id$"):
        model.predict(X.assign(id=1.0)[["id", "a", "b", "c"]])


def test_a_validation_set_with_the_model_s_columns_in_another_order_is_refused():
    """Built without reference=, it was read by position: its metric, and so
    early stopping, watched swapped features (found by review)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(19)
    X = pd.DataFrame(rng.normal(size=(100, 3)), columns=["a", "b", "c"])
    y = X["a"].to_numpy()
    with pytest.raises(ValueError, match=r"validation set 'swapped': X's columns are the "
                                         r"model's features in another order \(c, a, b\)"):
        gbmo.train({"verbosity": 0}, gbmo.Dataset(X, y), 2,
                   valid_sets=[gbmo.Dataset(X[["c", "a", "b"]], y)], valid_names=["swapped"])
    # other names are read by position, as LightGBM reads them
    scores = [gbmo.train({"verbosity": 0}, gbmo.Dataset(X, y), 2, valid_sets=[
        gbmo.Dataset(valid, y)]).evals_result["valid_0"]["rmse"]
        for valid in (X.rename(columns={"c": "z"}), X.to_numpy())]
    assert scores[0] == scores[1]


def _cv_problem():
    rng = np.random.default_rng(18)
    X = rng.normal(size=(240, 3))
    y = X[:, 0] + 0.3 * rng.normal(size=240)
    folds = [(np.arange(80, 240), np.arange(80)), (np.arange(160), np.arange(160, 240))]
    return X, y, folds


def test_cv_eval_train_metric_records_each_fold_s_training_rows_unwatched():
    X, y, folds = _cv_problem()
    history = gbmo.cv({"verbosity": 0, "learning_rate": 0.5}, gbmo.Dataset(X, y), 40,
                      folds=folds, eval_train_metric=True, return_boosters=True,
                      callbacks=[gbmo.early_stopping(3, verbose=False)])
    rounds = len(history["valid rmse-mean"])
    assert len(history["train rmse-mean"]) == rounds < 40
    # early stopping watched the validation rows only: their best round is the last kept
    assert int(np.argmin(history["valid rmse-mean"])) == rounds - 1
    train_rmse = [np.sqrt(np.mean((b.predict(X[rows]) - y[rows]) ** 2))
                  for b, (rows, _) in zip(history["boosters"], folds)]
    assert history["train rmse-mean"][-1] == pytest.approx(np.mean(train_rmse))
    assert history["train rmse-stdv"][-1] == pytest.approx(np.std(train_rmse))


def test_cv_init_model_and_fpreproc_are_each_fold_s_start_and_preparation():
    X, y, folds = _cv_problem()
    params = {"verbosity": 0}
    start = gbmo.train(params, gbmo.Dataset(X, y), 3)
    weights = np.linspace(0.5, 2.0, len(y))

    def prepare(fold_train, fold_valid, fold_params):
        fold_params["learning_rate"] = 0.3
        return fold_train.set_weight(weights[:fold_train.num_data()]), fold_valid, fold_params

    boosters = gbmo.cv(params, gbmo.Dataset(X, y), 2, folds=folds, init_model=start,
                       fpreproc=prepare, return_boosters=True)["boosters"]
    whole = gbmo.Dataset(X, y)  # whose bin edges the folds take
    for booster, (rows, _) in zip(boosters, folds):
        alone = gbmo.train({**params, "learning_rate": 0.3},
                           gbmo.Dataset(X[rows], y[rows], weight=weights[:len(rows)],
                                        reference=whole), 2,
                           init_model=start)
        assert booster.num_trees == 5
        np.testing.assert_array_equal(booster.predict(X), alone.predict(X))
    with pytest.raises(TypeError, match="fpreproc must be a function"):
        gbmo.cv(params, gbmo.Dataset(X, y), 1, folds=folds, fpreproc="scale")


def test_cv_of_a_sparse_y_refuses_init_model_by_name():
    import scipy.sparse as sp

    X = np.random.default_rng(19).normal(size=(120, 3))
    Y = sp.csr_matrix((X[:, :2] > 0).astype(float))
    start = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, Y.toarray()), 1)
    with pytest.raises(ValueError, match="a sparse Y does not take init_model yet"):
        gbmo.cv({"verbosity": 0, "top_k": 1}, gbmo.Dataset(X, Y), 1, nfold=2, init_model=start)


def test_cv_refuses_what_fpreproc_should_not_return():
    X, y, folds = _cv_problem()
    data = gbmo.Dataset(X, y)
    narrower = gbmo.Dataset(X[:10, :2], y[:10])
    cases = [
        (lambda tr, va, p: tr, TypeError, "fpreproc must return \\(fold_train, fold_valid, "),
        (lambda tr, va, p: (tr, va.X, p), TypeError, "fold_valid must be a gbmo.Dataset"),
        (lambda tr, va, p: (tr, narrower, p), ValueError,
         "a validation set has 2 features, the training set 3"),
        (lambda tr, va, p: (tr, va, None), TypeError, "fpreproc's params must be a dict"),
        (lambda tr, va, p: (tr, va, {**p, "num_iterations": 5}), ValueError,
         "fpreproc's params may not set 'num_iterations'"),
        (lambda tr, va, p: (tr, va, {**p, "boosting": "dart"}), ValueError,
         "boosting='dart' takes no early stopping"),
    ]
    for fpreproc, error, message in cases:
        with pytest.raises(error, match=message):
            gbmo.cv({"verbosity": 0}, data, 2, folds=folds, fpreproc=fpreproc,
                    callbacks=[gbmo.early_stopping(2, verbose=False)])


def test_cv_keeps_each_fold_s_parameters_under_an_unrelated_reset():
    """A callback that resets one parameter changes that one only, not what
    fpreproc set per fold (as LightGBM)."""
    X, y, folds = _cv_problem()

    def slow(fold_train, fold_valid, params):
        return fold_train, fold_valid, {**params, "learning_rate": 0.01}

    kept = gbmo.cv({"verbosity": 0}, gbmo.Dataset(X, y), 3, folds=folds, fpreproc=slow)
    reset = gbmo.cv({"verbosity": 0}, gbmo.Dataset(X, y), 3, folds=folds, fpreproc=slow,
                    callbacks=[gbmo.reset_parameter(lambda_l2=lambda i: 1.0)])
    assert reset["valid rmse-mean"] == kept["valid rmse-mean"]


def test_cv_continuing_a_model_counts_its_rounds_as_train_does():
    X, y, folds = _cv_problem()
    params = {"verbosity": 0, "learning_rate": 0.5}
    start = gbmo.train(params, gbmo.Dataset(X, y), 4)
    seen = []
    history = gbmo.cv(params, gbmo.Dataset(X, y), 30, folds=folds, init_model=start,
                      return_cvbooster=True,
                      callbacks=[lambda env: seen.append((env.iteration, env.begin_iteration)),
                                 gbmo.early_stopping(2, verbose=False)])
    cvbooster = history["cvbooster"]
    kept = len(history["valid rmse-mean"])
    assert seen[0] == (4, 4)
    assert cvbooster.best_iteration == 4 + kept
    for booster in cvbooster.boosters:
        np.testing.assert_array_equal(booster.predict(X),
                                      booster.predict(X, num_iteration=4 + kept))
        assert booster.predict(X, num_iteration=4 + kept).shape == (len(y),)


def test_cv_continues_a_model_of_more_classes_than_the_data_hold():
    X, _, folds = _cv_problem()
    labels = np.digitize(X[:, 0], [-1.0, 0.0, 1.5])
    start = gbmo.train({"verbosity": 0, "objective": "softmax"}, gbmo.Dataset(X, labels), 2)
    common = labels < 3
    history = gbmo.cv({"verbosity": 0, "objective": "softmax"},
                      gbmo.Dataset(X[common], labels[common]), 2, nfold=2,
                      init_model=start, return_boosters=True)
    assert [b.n_outputs for b in history["boosters"]] == [4, 4]


def test_cv_records_and_results_as_lightgbm_s():
    """record_evaluation keeps "<metric>-mean" and "-stdv" (answering to
    LightGBM's names), and callbacks see EvalResults."""
    X, y, folds = _cv_problem()
    recorded, seen = {}, []
    history = gbmo.cv({"verbosity": 0, "metric": "l2"}, gbmo.Dataset(X, y), 3, folds=folds,
                      eval_train_metric=True,
                      callbacks=[gbmo.record_evaluation(recorded),
                                 lambda env: seen.extend(env.evaluation_result_list)])
    assert recorded["valid"]["l2-mean"] == history["valid l2-mean"] == \
        recorded["valid"]["mse-mean"]
    assert recorded["train"]["l2-stdv"] == history["train mse-stdv"]
    result = seen[-1]
    assert (result.dataset_name, result.metric_name, result.is_cv_result()) == \
        ("valid", "mse", True)
    assert result.metric_value == history["valid mse-mean"][-1]
    assert result.metric_std_dev == history["valid mse-stdv"][-1]
    train_results = []
    gbmo.train({"verbosity": 0}, gbmo.Dataset(X, y), 1,
               valid_sets=[gbmo.Dataset(X[:50], y[:50])],
               callbacks=[lambda env: train_results.extend(env.evaluation_result_list)])
    assert not train_results[0].is_cv_result() and len(train_results[0]) == 4
    name, metric, value, higher = train_results[0]
    assert (name, metric, higher) == ("valid_0", "rmse", False)


def test_lightgbm_s_spellings_of_several_metrics():
    """A set (sorted) or a comma-separated string, as LightGBM takes them;
    an output selection keeps its commas."""
    resolve = gbmo.params.resolve_params
    assert resolve({"metric": {"l2", "l1"}})["metric"] == ["mae", "mse"]
    assert resolve({"metric": "l2,l1"})["metric"] == ["mse", "mae"]
    assert resolve({"metric": "rmse[0,1], mae"})["metric"] == ["rmse[0,1]", "mae"]
    assert resolve({"metric": "rmse[0,1]"})["metric"] == "rmse[0,1]"
    # the names of no metric are left out beside others, as LightGBM does
    assert resolve({"metric": "l2,None"})["metric"] == ["mse"]
    assert resolve({"metric": ["None", "na"]})["metric"] == []
    import scipy.sparse as sp

    X = np.random.default_rng(23).normal(size=(120, 3))
    Y = sp.csr_matrix((X[:, :2] > 0).astype(float))
    recorded = {}
    gbmo.train({"metric": "precision@1,ndcg@3", "top_k": 1, "verbosity": 0}, gbmo.Dataset(X, Y),
               1, valid_sets=[gbmo.Dataset(X, Y)], callbacks=[gbmo.record_evaluation(recorded)])
    assert list(recorded["valid_0"]) == ["precision@1", "ndcg@3"]


def test_callbacks_may_use_the_training_run_while_train_runs():
    """As in LightGBM, env.model.add_valid during train evaluates the new set
    from the next round; the run is not kept after train returns."""
    X = np.random.default_rng(20).normal(size=(300, 3))
    train_set, extra = gbmo.Dataset(X[:200], X[:200, 0]), gbmo.Dataset(X[200:], X[200:, 0])

    def add_at_round_3(env):
        if env.iteration == 2:
            env.model.add_valid(extra, "extra")

    add_at_round_3.before_iteration = True
    recorded = {}
    model = gbmo.train({"verbosity": 0}, train_set, 5,
                       callbacks=[add_at_round_3, gbmo.record_evaluation(recorded)])
    assert len(recorded["extra"]["rmse"]) == 3
    with pytest.raises(ValueError, match="needs the training run"):
        model.update()
    # the rounds are train's: a callback may not step, take back or drop them
    for method in ("update", "rollback_one_iter", "free_dataset"):
        def step(env, method=method):
            getattr(env.model, method)()

        with pytest.raises(ValueError, match=f"{method}\\(\\) is not taken inside train"):
            gbmo.train({"verbosity": 0}, train_set, 2, callbacks=[step])


def test_early_stopping_says_when_it_starts_and_where_the_best_round_was(capsys):
    X = np.random.default_rng(21).normal(size=(300, 3))
    train_set = gbmo.Dataset(X[:200], X[:200, 0])
    recorded = {}
    gbmo.train({"verbosity": 0, "metric": ["rmse", "mae"]}, train_set, 3,
               valid_sets=[train_set.create_valid(X[200:], X[200:, 0])],
               callbacks=[gbmo.early_stopping(10), gbmo.record_evaluation(recorded)])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "Training until validation scores don't improve for 10 rounds"
    assert lines[-2] == "Did not meet early stopping, best iteration is:"
    history = recorded["valid_0"]
    assert lines[-1] == (f"[3]\tvalid_0's rmse: {history['rmse'][2]:g}\t"
                         f"valid_0's mae: {history['mae'][2]:g}")
    # with the training set alone nothing is watched: a warning, no such lines
    with pytest.warns(UserWarning, match="early stopping is off"):
        gbmo.train({"verbosity": 0}, train_set, 2, valid_sets=[train_set],
                   callbacks=[gbmo.early_stopping(10)])
    assert capsys.readouterr().out == ""


def test_gbmo_s_optional_modules_are_its_attributes(tmp_path):
    """As lightgbm.sklearn after `import lightgbm`. Run outside the source
    tree, so that the installed (compiled) package is imported."""
    import subprocess
    import sys

    code = ("import gbmo\n"
            "print(gbmo.sklearn.GBMORegressor.__name__, gbmo.plotting.plot_tree.__name__, "
            "gbmo.Dataset([[0.0], [1.0]], [0.0, 1.0]).feature_name)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=tmp_path)
    assert result.stdout.split() == ["GBMORegressor", "plot_tree", "['f0']"]
    without = ("import sys\nsys.modules['sklearn'] = None\nimport gbmo\n"
               "print(hasattr(gbmo, 'sklearn'))\n")
    result = subprocess.run([sys.executable, "-c", without], capture_output=True, text=True,
                            check=True, cwd=tmp_path)
    assert result.stdout.strip() == "False"


def test_cv_callbacks_see_the_folds_as_a_cvbooster():
    """As LightGBM's cv: env.model is the CVBooster (returned with
    return_cvbooster), which also iterates as the list of fold boosters."""
    X, y, folds = _cv_problem()
    seen = []
    history = gbmo.cv({"verbosity": 0, "learning_rate": 0.5}, gbmo.Dataset(X, y), 30,
                      folds=folds, return_cvbooster=True,
                      callbacks=[lambda env: seen.append(env.model),
                                 gbmo.early_stopping(2, verbose=False)])
    cvbooster = history["cvbooster"]
    assert all(model is cvbooster for model in seen)
    assert isinstance(cvbooster, gbmo.CVBooster) and len(cvbooster) == 2
    assert [b.num_trees for b in cvbooster] == [b.num_trees for b in cvbooster.boosters]
    assert cvbooster[0] is cvbooster.boosters[0]
    assert cvbooster.best_iteration == len(history["valid rmse-mean"]) < 30


def test_review_mends_of_the_run_held_during_train():
    """A set a callback adds has records from then on: best_score leaves it
    out before them; model_from_string and set_train_data_name are not taken
    inside train; cv gives its folds a reset value even when it equals what
    a fold had."""
    X, y, folds = _cv_problem()
    train_set = gbmo.Dataset(X[:160], y[:160])
    valid = train_set.create_valid(X[160:], y[160:])

    def add_late(env):
        if env.iteration == 2:
            env.model.add_valid(valid, "late")

    add_late.before_iteration = True
    model = gbmo.train({"verbosity": 0, "learning_rate": 0.5}, train_set, 40, valid_sets=[valid],
                       callbacks=[add_late, gbmo.early_stopping(3, verbose=False)])
    best = model.best_iteration
    assert model.best_score["valid_0"]["rmse"] == model.evals_result["valid_0"]["rmse"][best - 1]
    assert model.best_score["late"]["rmse"] == model.evals_result["late"]["rmse"][best - 3]
    for call in (lambda m: m.model_from_string(m.model_to_string()),
                 lambda m: m.set_train_data_name("fit")):
        with pytest.raises(ValueError, match="is not taken inside train"):
            gbmo.train({"verbosity": 0}, train_set, 2, callbacks=[lambda env: call(env.model)])

    def faster(fold_train, fold_valid, params):
        return fold_train, fold_valid, {**params, "learning_rate": 0.3}

    data = gbmo.Dataset(X, y)
    plain = gbmo.cv({"verbosity": 0}, data, 3, folds=folds)
    reset = gbmo.cv({"verbosity": 0}, data, 3, folds=folds, fpreproc=faster,
                    callbacks=[gbmo.reset_parameter(learning_rate=[0.1, 0.1, 0.1])])
    assert reset["valid rmse-mean"] == plain["valid rmse-mean"]


def test_a_function_s_model_continues_with_a_function_only():
    X, y, _ = _cv_problem()

    def squared(y_true, raw):
        return raw - y_true, np.ones_like(raw)

    model = gbmo.train({"objective": squared, "verbosity": 0}, gbmo.Dataset(X, y), 2)
    with pytest.raises(ValueError, match="objective: <function .*squared.* in init_model, 'mse'"):
        gbmo.train({"verbosity": 0}, gbmo.Dataset(X, y), 1, init_model=model)
    assert gbmo.train({"objective": squared, "verbosity": 0}, gbmo.Dataset(X, y), 1,
                      init_model=model).num_trees == 3


def test_a_constant_hessian_column_becomes_a_count_of_rows():
    """A hessian column of one number (in any dtype an objective returns, as
    float32, what the histograms read) is passed as that constant with no
    column; any other hessian as float32 columns with the constant 1."""
    for hess, constant in (([[2], [2]], 2.0), (np.full((3000, 1), 0.5, np.float32), 0.5),
                           (np.full((3000, 1), 0.25)[::-1], 0.25)):
        columns, value = gbmo.engine._split_hessian(np.asarray(hess))
        assert columns.shape == (len(hess), 0) and value == constant
    for hess in ([[2], [3]], [[1.0], [np.nan]], np.ones((4, 2)),
                 np.r_[np.ones(2999), 2.0][:, None]):
        columns, value = gbmo.engine._split_hessian(np.asarray(hess))
        assert value == 1.0 and columns.dtype == np.float32
        np.testing.assert_array_equal(columns, np.asarray(hess, dtype=np.float32))


def test_a_subset_is_binned_with_its_source_s_edges_as_lightgbm_s():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(400, 4))
    y = X[:, 0] + 0.1 * rng.normal(size=400)
    whole = gbmo.Dataset(X, y, weight=np.linspace(1, 2, 400))
    rows = np.flatnonzero(X[:, 1] > 0)
    params = {"verbosity": 0, "max_leaves": 7, "max_bins": 31}
    binned_first = whole.construct(params).subset(rows)  # takes whole's binned rows
    by_mask = whole.subset(X[:, 1] > 0)
    alone = gbmo.Dataset(X[rows], y[rows], weight=whole.get_weight()[rows], reference=whole)
    expected = gbmo.train(params, alone, 5).predict(X)
    # another reference's edges: the rows' own X binned by them
    other = gbmo.Dataset(X[:100], y[:100])
    by_other = whole.subset(rows, reference=other)
    other_alone = gbmo.Dataset(X[rows], y[rows], weight=whole.get_weight()[rows],
                               reference=other)
    np.testing.assert_array_equal(gbmo.train(params, by_other, 5).predict(X),
                                  gbmo.train(params, other_alone, 5).predict(X))
    assert not np.array_equal(gbmo.train(params, other_alone, 5).predict(X), expected)
    for part in (binned_first, by_mask):
        np.testing.assert_array_equal(gbmo.train(params, part, 5).predict(X), expected)
        np.testing.assert_array_equal(part.get_data(), X[rows])
        np.testing.assert_array_equal(part.get_label(), y[rows])
        assert part.num_data() == len(rows) and part.num_feature() == 4
    with pytest.raises(ValueError, match="the training set has 1 row; training needs at least 2"):
        gbmo.train(params, whole.subset([5]), 1)
    with pytest.raises(ValueError, match="the training set has 1 row"):
        gbmo.cv(params, whole.subset([5, 6]), 1, nfold=2)
    # a subset's X given anew is what it trains on; the one it hands out is read-only
    assigned = whole.subset(rows)
    assigned.X = np.zeros_like(X[rows])
    assert gbmo.train(params, assigned, 5).feature_importance().sum() == 0
    with pytest.raises(ValueError, match="read-only"):
        whole.subset(rows).get_data()[0, 0] = 1.0
    with pytest.raises(IndexError, match="used_indices must index the Dataset's 400 rows"):
        whole.subset([400])
    with pytest.raises(ValueError, match="used_indices selects no row; a subset needs rows"):
        whole.subset([])
    with pytest.raises(ValueError, match="used_indices must be a 1-D array of row indices or a "
                                         "boolean mask of the 400 rows, got shape \\(2, 2\\)"):
        whole.subset(np.zeros((2, 2), dtype=int))


def test_dataset_params_train_beneath_train_s_as_lightgbm_s():
    """Dataset(params=) is checked as train's params are; of it, the binned
    data's parameters (what LightGBM's Dataset keeps, get_params) are what
    train, cv and Booster(params, train_set) take beneath their own (a
    parameter given to both, under any name, is train's). Its training
    parameters are not taken, as in LightGBM, and warn when train's params
    do not give them: LightGBM's code often hands a Dataset the whole dict."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=500)
    expected = gbmo.train({"verbosity": 0, "max_bins": 15, "max_leaves": 5},
                          gbmo.Dataset(X, y), 5).predict(X)
    given = {"max_bin": 15, "verbose": -1, "min_data_in_bin": 3, "two_round": True,
             "num_leaves": 5}
    data = gbmo.Dataset(X, y, params=given)
    assert data.get_params() == {"max_bin": 15, "verbose": -1, "min_data_in_bin": 3}
    np.testing.assert_array_equal(gbmo.train({"max_leaves": 5}, data, 5).predict(X), expected)
    manual = gbmo.Booster({"num_leaves": 5}, data)
    for _ in range(5):
        manual.update()
    np.testing.assert_array_equal(manual.predict(X), expected)
    with pytest.warns(UserWarning, match=r"the Dataset's params 'num_leaves' are training "
                                         r"parameters.*they are not given there") as caught:
        unused = gbmo.train({}, data, 5)
    assert caught[0].filename == __file__ and unused.params["max_leaves"] is None
    assert gbmo.Dataset(X, y, params={"max_bin": 15, "num_iterations": 2}).construct() \
        .feature_num_bin(0) == 15
    assert data.subset(np.arange(100)).get_params() == data.get_params()
    # LightGBM's keywords: subset(used_indices, params), create_valid(params=)
    part = data.subset(used_indices=np.arange(100), params={"max_bin": 7})
    assert part.num_data() == 100 and part.construct().feature_num_bin(0) == 7
    assert data.create_valid(X[:50], y[:50], params={"max_bin": 15}).get_params() == {
        "max_bin": 15}
    with pytest.raises(ValueError, match="gives LightGBM's query groups"):
        data.create_valid(X[:50], y[:50], group=[25, 25])
    folds = gbmo.cv({"max_leaves": 5, "num_iterations": 3}, data, nfold=2,
                    return_cvbooster=True)["cvbooster"]
    assert all(booster.params["max_bins"] == 15 for booster in folds.boosters)
    assert gbmo.train({"max_bins": 63, "num_leaves": 5}, data, 1).params["max_bins"] == 63
    with pytest.raises(TypeError, match="Dataset's params must be a dict of parameters, got int"):
        gbmo.Dataset(X, y, params=3)
    with pytest.raises(ValueError, match="'max_bin' \\(gbmo's 'max_bins'\\) = 1 is out of range"):
        gbmo.Dataset(X, y, params={"max_bin": 1})
    # LightGBM keeps a Dataset's raw values for linear_tree, set among its params
    linear = gbmo.Dataset(X, y, params={"linear_tree": True})
    assert gbmo.train({"num_leaves": 5}, linear, 2).trees[-1].linear_leaves is not None
    assert gbmo.train({"num_leaves": 5, "linear_tree": False}, linear,
                      2).trees[-1].linear_leaves is None


def test_xgboost_s_train_and_cv_keywords_name_gbmo_s_way():
    rng = np.random.default_rng(3)
    data = gbmo.Dataset(rng.normal(size=(60, 2)), rng.normal(size=60))
    with pytest.raises(TypeError, match=r"train\(\) takes no 'evals': give valid_sets=.*"
                                        r"valid_names=.*; takes no 'early_stopping_rounds': "
                                        r"give callbacks=\[gbmo.early_stopping"):
        gbmo.train({"verbosity": 0}, data, 2, evals=[(data, "train")],
                   early_stopping_rounds=5)
    with pytest.raises(TypeError, match=r"train\(\) got an unexpected keyword argument "
                                        r"'num_round'"):
        gbmo.train({"verbosity": 0}, data, 2, num_round=3)
    with pytest.raises(TypeError, match=r"cv\(\) takes no 'as_pandas': give "
                                        r"pandas.DataFrame\(gbmo.cv"):
        gbmo.cv({"verbosity": 0}, data, 2, nfold=2, as_pandas=True)


def test_a_float32_dataframe_is_read_as_float32_as_a_float32_array_is():
    """It was copied to float64, twice the frame's memory in predict; the
    bins and predictions are the same."""
    pd = pytest.importorskip("pandas")
    from gbmo.validation import check_features

    rng = np.random.default_rng(21)
    values = rng.normal(size=(500, 3)).astype(np.float32)
    single = pd.DataFrame(values, columns=["a", "b", "c"])
    mixed = single.assign(c=single["c"].astype(np.float64))
    assert check_features(single)[0].dtype == np.float32
    assert check_features(mixed)[0].dtype == np.float64
    y = values[:, 0].astype(np.float64)
    from_frame = gbmo.train({"verbosity": 0}, gbmo.Dataset(single, y), 5)
    from_doubles = gbmo.train({"verbosity": 0}, gbmo.Dataset(values.astype(np.float64), y), 5)
    np.testing.assert_array_equal(from_frame.predict(single), from_doubles.predict(values))


def _single_leaf_warnings(params, X, y, rounds=5):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        booster = gbmo.train(params, gbmo.Dataset(X, y), rounds)
    return booster, [str(w.message) for w in caught if "trees of one leaf" in str(w.message)]


@pytest.mark.parametrize("params, X_kind, reason", [
    ({"min_samples_leaf": 5000}, "normal",
     "min_samples_leaf=5000 needs 10000 rows for a split, and the trees had 3000"),
    ({"min_samples_leaf": 5000, "subsample": 0.5, "subsample_freq": 1}, "normal",
     "min_samples_leaf=5000 needs 10000 rows for a split, and the trees had 1500"),
    ({"min_child_weight": 1e9}, "normal",
     "no split kept min_samples_leaf=20 rows and min_child_weight=1000000000.0 in each child "
     "with a gain above min_gain=0.0 after the penalties lambda_l1=0.0 and lambda_l2=1.0"),
    ({"lambda_l1": 1e9}, "normal",
     "no split kept min_samples_leaf=20 rows and min_child_weight=0.001 in each child with a "
     "gain above min_gain=0.0 after the penalties lambda_l1=1000000000.0 and lambda_l2=1.0"),
    ({}, "constant", "no feature takes two values (after binning)"),
])
def test_a_run_that_cannot_split_says_why_once(params, X_kind, reason):
    """LightGBM warns and stops there; gbmo warned of nothing."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 4)) if X_kind == "normal" else np.ones((3000, 4))
    booster, messages = _single_leaf_warnings({"verbosity": 0, **params}, X, X[:, 0] + 1)
    assert messages == [f"round 1 grew only trees of one leaf: {reason}. Such a round adds one "
                        "value to every row, and so may the rounds after it (LightGBM stops "
                        "training there)"]
    assert booster.num_trees() == 5 and all(t.n_leaves == 1 for t in booster.trees)


def test_cv_warns_of_one_leaf_rounds_once_for_its_folds():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 3))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gbmo.cv({"verbosity": 0, "min_samples_leaf": 1000}, gbmo.Dataset(X, X[:, 0]), 3,
                nfold=3)
    assert len([w for w in caught if "trees of one leaf" in str(w.message)]) == 1


def test_single_leaves_are_not_warned_of_at_verbosity_minus_one_or_when_trees_split():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(3000, 4))
    _, silenced = _single_leaf_warnings({"verbosity": -1, "min_samples_leaf": 5000}, X, X[:, 0])
    _, splitting = _single_leaf_warnings({"verbosity": 0}, X, X[:, 0] + rng.normal(size=3000))
    assert silenced == splitting == []


def test_a_dataset_pickled_before_lazy_subsets_loads():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(100, 3))
    data = gbmo.Dataset(X, X[:, 0])
    state = dict(data.__dict__)  # what an earlier gbmo pickled: X as an attribute
    state["X"] = state.pop("_X")
    del state["_rows_of"]
    restored = gbmo.Dataset.__new__(gbmo.Dataset)
    restored.__setstate__(state)
    assert restored.num_data() == 100 and restored.get_data() is X
    np.testing.assert_array_equal(gbmo.train({"verbosity": 0}, restored, 3).predict(X),
                                  gbmo.train({"verbosity": 0}, data, 3).predict(X))
    part = pickle.loads(pickle.dumps(data.subset(np.arange(10))))
    np.testing.assert_array_equal(part.get_data(), X[:10])


def test_a_dataset_pickled_before_target_names_validates():
    """Found by a review: a Dataset pickled by the gbmo before label_names
    broke as a validation set (AttributeError)."""
    rng = np.random.default_rng(9)
    X = rng.normal(size=(100, 3))
    train, valid = gbmo.Dataset(X[:80], X[:80, 0]), gbmo.Dataset(X[80:], X[80:, 0])
    for data in (train, valid):
        state = dict(data.__dict__)
        del state["label_names"]
        data.__dict__.clear()
        data.__setstate__(state)
        assert data.label_names is None
    booster = gbmo.train({"verbosity": -1}, train, 3, valid_sets=[valid])
    assert len(booster.evals_result["valid_0"]["rmse"]) == 3
