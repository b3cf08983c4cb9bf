"""max_bins above 255: 16-bit bins through training, validation and prediction."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import gbmo

BASE = {"verbosity": 0, "n_threads": 1, "max_leaves": 15, "learning_rate": 0.3,
        "min_samples_leaf": 5}


def few_valued_data(seed=0, n_rows=3000):
    """Features of at most 150 values each (NaN among them), five of which
    are mostly 0 (their histograms are built row by row), and a categorical
    one: binned with max_bins = 255 or 1,000, every value is its own bin."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 150, size=(n_rows, 12)) / 7.0
    X[:, 6:11] *= rng.random((n_rows, 5)) < 0.05
    X[:, 11] = rng.integers(0, 40, size=n_rows)
    X[:, :6][rng.random((n_rows, 6)) < 0.05] = np.nan
    clean = np.nan_to_num(X)
    Y = np.stack([np.sin(clean[:, 0]) + clean[:, 1] / 10 + clean[:, 6],
                  np.cos(clean[:, 2]) - (clean[:, 11] % 3), clean[:, 3] * clean[:, 4] / 200],
                 axis=1)
    return X, Y + 0.1 * rng.normal(size=Y.shape)


CONFIGS = [
    {},
    {"n_threads": 2},
    {"growth": "depthwise", "max_depth": 4},
    {"growth": "symmetric", "max_depth": 4},
    {"tree_mode": "single_output"},
    {"split": "sparse", "top_k": 2},
    {"categorical_feature": [11]},
    {"categorical_feature": [11], "growth": "depthwise", "max_depth": 5},
    {"extra_trees": True, "random_strength": 0.5, "colsample_bynode": 0.7},
    {"monotone_constraints": [1] + [0] * 11, "path_smooth": 1.0},
    {"sparse_x": True},
]


@pytest.mark.parametrize("config", CONFIGS, ids=[str(c) for c in CONFIGS])
def test_16_bit_bins_grow_the_8_bit_bins_trees(config):
    """On features of at most 150 values, max_bins = 1,000 makes the same bins
    as 255, only 16-bit and with another missing bin: the same trees, the same
    validation records (the binned walk) and the same predictions."""
    config = dict(config)
    sparse_x = config.pop("sparse_x", False)
    X, Y = few_valued_data()
    X_train, Y_train, X_valid, Y_valid = X[:2400], Y[:2400], X[2400:], Y[2400:]
    if sparse_x:
        X_train, X_valid = sp.csr_matrix(np.nan_to_num(X_train)), sp.csr_matrix(X_valid)
    results = []
    for max_bins in (255, 1000):
        params = {**BASE, **config, "max_bins": max_bins, "metric": "l2"}
        train = gbmo.Dataset(X_train, Y_train)
        records = {}
        booster = gbmo.train(params, train, 12, valid_sets=[gbmo.Dataset(X_valid, Y_valid)],
                             callbacks=[gbmo.record_evaluation(records)])
        binned = train.X_binned.dense if sparse_x else train.X_binned
        assert binned.dtype == (np.uint8 if max_bins == 255 else np.uint16)
        results.append((booster.predict(X_valid, raw_score=True), records,
                        booster.dump_model()["trees"]))
    (narrow, narrow_records, narrow_trees), (wide, wide_records, wide_trees) = results
    np.testing.assert_array_equal(wide, narrow)
    assert wide_records == narrow_records
    assert wide_trees == narrow_trees


def test_more_than_255_bins_resolve_what_255_cannot():
    """x takes 1,200 values, y alternates between 0 and 1 every two of them:
    255 bins hold four or five values each and cannot tell the steps apart;
    with 2,047 every value is a bin and the model fits y exactly."""
    rng = np.random.default_rng(1)
    x = rng.integers(0, 1200, size=30_000)
    y = (x // 2) % 2
    accuracy = {}
    for max_bins in (255, 2047):
        booster = gbmo.train({**BASE, "max_bins": max_bins, "max_leaves": 1024,
                              "learning_rate": 1.0, "min_samples_leaf": 1,
                              "objective": "l2"}, gbmo.Dataset(x[:, None] / 1200.0, y), 3)
        accuracy[max_bins] = np.mean((booster.predict(x[:, None] / 1200.0) > 0.5) == y)
    assert accuracy[255] < 0.75
    assert accuracy[2047] == 1.0


def test_categories_past_255_each_get_a_bin():
    """400 categories, each its own value of y: with max_bins = 1,000 every
    category is a bin and the model fits each one's value; with 255 some
    share a bin, and their values are averaged."""
    rng = np.random.default_rng(2)
    values = rng.normal(size=400)
    category = np.repeat(np.arange(400), 20)
    y = values[category]
    X = category[:, None].astype(float)
    errors = {}
    for max_bins in (255, 1000):
        booster = gbmo.train({**BASE, "max_bins": max_bins, "max_leaves": 64,
                              "learning_rate": 1.0, "min_samples_leaf": 1, "cat_smooth": 0,
                              "min_data_per_group": 1, "max_cat_threshold": 1000,
                              "categorical_feature": [0]}, gbmo.Dataset(X, y), 30)
        errors[max_bins] = np.sqrt(np.mean((booster.predict(X) - y) ** 2))
    assert errors[1000] < 1e-3
    assert errors[255] > 10 * errors[1000]


def test_a_model_of_16_bit_bins_saves_loads_and_trains_on():
    """Threshold bins above 255 survive the model file, and training goes on
    from the loaded model as from the original."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(4000, 3))
    y = np.sin(4 * X[:, 0]) + X[:, 1]
    data = gbmo.Dataset(X, y, params={"max_bins": 1000})
    booster = gbmo.train({**BASE, "max_bins": 1000}, data, 5)
    assert max(int(tree.node_bin.max()) for tree in booster.trees) > 255
    # dumped as version 4, which a gbmo reading up to 3 refuses as newer, not
    # as broken (save_model writes version 5)
    assert booster.dump_model()["version"] == 4
    # 16-bit bins whose splits all fall at bins up to 255 keep version 1
    few_values = gbmo.train({**BASE, "max_bins": 1000}, gbmo.Dataset(np.round(X, 1), y), 2)
    assert max(int(tree.node_bin.max()) for tree in few_values.trees) <= 255
    assert few_values.dump_model()["version"] == 1
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    assert all(np.array_equal(a.node_bin, b.node_bin)
               for a, b in zip(loaded.trees, booster.trees))
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    on_loaded = gbmo.train({**BASE, "max_bins": 1000}, data, 3, init_model=loaded)
    on_original = gbmo.train({**BASE, "max_bins": 1000}, data, 3, init_model=booster)
    np.testing.assert_array_equal(on_loaded.predict(X), on_original.predict(X))


def test_histograms_past_the_cache_are_warned_of_once(monkeypatch):
    """A node's histograms larger than half the cache (here made 64 KB) are
    named with what makes them so, once for the run; smaller ones are not."""
    from gbmo import grower

    X, Y = few_valued_data(n_rows=500)
    data = gbmo.Dataset(X, Y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gbmo.train({**BASE, "max_bins": 1000}, data, 2)
    monkeypatch.setattr(grower, "DENSE_HIST_CACHE_BYTES", 2**16)
    with pytest.warns(UserWarning, match=r"histograms take 0 MiB \(12 features x up to \d+ "
                                         r"bins x 4 sums\).* max_bins") as caught:
        gbmo.train({**BASE, "max_bins": 1000}, data, 3)
    assert len(caught) == 1


@pytest.mark.parametrize("native", [True, False])
def test_a_categorical_split_s_flags_follow_the_categorical_features_bins(monkeypatch,
                                                                           native):
    """Beside a feature of 3,000 bins, a categorical split on 300 categories
    keeps 301 flags (the last the missing bin's), not 3,001; the validation
    set's binned walk reads them as the raw prediction does. They serve the
    run only: a booster that keeps no run keeps none."""
    from gbmo import grower

    monkeypatch.setattr(grower, "NATIVE_GROWTH", native)
    rng = np.random.default_rng(4)
    n = 6000
    category = rng.integers(0, 300, size=n).astype(float)
    category[rng.random(n) < 0.05] = np.nan
    X = np.c_[rng.normal(size=n), category]
    y = X[:, 0] + rng.normal(size=300)[np.nan_to_num(category, nan=0).astype(int)]
    records = {}
    valid = gbmo.Dataset(X[5000:], y[5000:])
    params = {**BASE, "max_bins": 4000, "categorical_feature": [1], "metric": "l2"}
    booster = gbmo.train(params, gbmo.Dataset(X[:5000], y[:5000]), 5, valid_sets=[valid],
                         callbacks=[gbmo.record_evaluation(records)], keep_training_booster=True)
    widths = {tree.binned_sets["set_left_flags"].shape[1]
              for tree in booster.trees if tree.binned_sets}
    assert widths == {301}
    done = gbmo.train(params, gbmo.Dataset(X[:5000], y[:5000]), 5)
    assert all(tree.binned_sets == {} for tree in done.trees)
    np.testing.assert_array_equal(done.predict(X), booster.predict(X))
    raw = booster.predict(X[5000:])
    np.testing.assert_allclose(records["valid_0"]["l2"][-1], np.mean((raw - y[5000:]) ** 2),
                               rtol=1e-12)
