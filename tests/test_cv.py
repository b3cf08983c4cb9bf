"""cv(): folds, per-round mean and standard deviation, stratification, early
stopping on the fold mean."""
import numpy as np
import pytest

import gbmo
from gbmo.cv import _fold_indices

RNG = np.random.default_rng(41)
X = RNG.normal(size=(600, 5))
Y = np.c_[X[:, 0] + X[:, 1], X[:, 2]] + 0.3 * RNG.normal(size=(600, 2))
LABELS = (X[:, 0] + 0.5 * RNG.normal(size=600) > 0.8).astype(int) + (X[:, 1] > 1).astype(int)
PARAMS = {"verbosity": 0, "min_samples_leaf": 5, "max_leaves": 8}


def test_folds_partition_the_rows():
    for stratified in (False, True):
        pairs = _fold_indices(LABELS, 4, stratified, True, 0)
        valid = np.concatenate([v for _, v in pairs])
        assert np.array_equal(np.sort(valid), np.arange(600))
        for train_rows, valid_rows in pairs:
            assert len(np.intersect1d(train_rows, valid_rows)) == 0
            assert len(train_rows) + len(valid_rows) == 600


def test_stratified_folds_keep_the_class_mix():
    counts = np.bincount(LABELS)
    for _, valid_rows in _fold_indices(LABELS, 5, True, True, 3):
        fold_counts = np.bincount(LABELS[valid_rows], minlength=len(counts))
        assert np.all(np.abs(fold_counts - counts / 5) <= 1)


def _fold_curves(folds, features, params, categorical_feature="auto"):
    """Each fold trained alone on the whole X's bin edges (its training
    set made with the whole set as reference), its validation curve."""
    whole = gbmo.Dataset(features, Y, categorical_feature=categorical_feature)
    curves = []
    for train_rows, valid_rows in folds:
        train = gbmo.Dataset(features[train_rows], Y[train_rows], reference=whole,
                             categorical_feature=categorical_feature)
        valid = train.create_valid(features[valid_rows], Y[valid_rows])
        booster = gbmo.train(params, train, 12, valid_sets=[valid])
        curves.append(booster.evals_result["valid_0"]["rmse"])
    return np.array(curves)


@pytest.mark.parametrize("kind", ["dense", "categorical", "csr"])
def test_mean_and_stdv_equal_training_each_fold_alone_on_the_whole_sets_bins(kind):
    # as LightGBM's cv: the folds take the rows of the Dataset binned once
    # (dense X: its binned rows; CSR X: binned again by its edges); a
    # categorical feature, ranked by each fold's training rows, is binned by
    # the fold, as a training set made with a reference bins it
    import scipy.sparse

    features, params, categorical = X, PARAMS, "auto"
    if kind == "categorical":
        features = np.c_[X, RNG.integers(0, 6, size=600)]
        params, categorical = {**PARAMS, "min_data_per_group": 5}, [5]
    elif kind == "csr":
        features = scipy.sparse.csr_matrix(np.where(np.abs(X) > 1, X, 0))
    folds = _fold_indices(Y[:, 0], 3, False, True, 7)
    result = gbmo.cv(params, gbmo.Dataset(features, Y, categorical_feature=categorical), 12,
                     folds=folds)
    assert set(result) == {"valid rmse-mean", "valid rmse-stdv"}
    curves = _fold_curves(folds, features, params, categorical)
    np.testing.assert_allclose(result["valid rmse-mean"], curves.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(result["valid rmse-stdv"], curves.std(axis=0), rtol=1e-9)


def test_cv_fits_the_bin_edges_once_for_every_fold_and_call(monkeypatch):
    from gbmo.binning import BinMapper

    fits, transforms = [], []  # fits: the width of X each fitted
    fit, transform = BinMapper.fit, BinMapper.transform
    monkeypatch.setattr(BinMapper, "fit",
                        lambda self, X, *args: fits.append(X.shape[1]) or fit(self, X, *args))
    monkeypatch.setattr(BinMapper, "transform",
                        lambda self, *args: transforms.append(1) or transform(self, *args))
    data = gbmo.Dataset(X, Y)
    gbmo.cv(PARAMS, data, 3, nfold=5)
    assert len(fits) == 1 and len(transforms) == 1
    start = gbmo.train(PARAMS, data, 3)
    # a continued model predicts the folds' X, which binning still does not read again
    gbmo.cv({**PARAMS, "learning_rate": 0.3}, data, 3, nfold=4, seed=5, init_model=start)
    assert len(fits) == 1 and len(transforms) == 1
    gbmo.cv({**PARAMS, "max_bins": 31}, data, 3, nfold=5)  # other edges: binned again, once
    assert len(fits) == 2
    # categorical features: the whole set once, and each fold its own ranks'
    # column, again each call (their ranks come from the fold's targets);
    # given by fpreproc, the same
    features = np.c_[X, RNG.integers(0, 4, size=600)]
    categorical = gbmo.Dataset(features, Y, categorical_feature=[5])
    del fits[:]
    gbmo.cv(PARAMS, categorical, 3, nfold=4)
    gbmo.cv({**PARAMS, "learning_rate": 0.2}, categorical, 3, nfold=4)
    assert fits == [6] + [1] * 8
    del fits[:]
    gbmo.cv(PARAMS, gbmo.Dataset(features, Y), 3, nfold=4,
            fpreproc=lambda train, valid, params: (train.set_categorical_feature([5]), valid,
                                                   params))
    assert fits == [6] + [1] * 4


def test_seeded_nfold_is_reproducible_and_takes_scikit_learn_splitters():
    from sklearn.model_selection import KFold

    a = gbmo.cv(PARAMS, gbmo.Dataset(X, Y), 5, nfold=3, seed=1)
    b = gbmo.cv(PARAMS, gbmo.Dataset(X, Y), 5, nfold=3, seed=1)
    assert a == b
    c = gbmo.cv(PARAMS, gbmo.Dataset(X, Y), 5, nfold=3, seed=2)
    assert a != c
    splitter = KFold(3, shuffle=True, random_state=0)
    by_splitter = gbmo.cv(PARAMS, gbmo.Dataset(X, Y), 5, folds=splitter)
    by_pairs = gbmo.cv(PARAMS, gbmo.Dataset(X, Y), 5, folds=list(splitter.split(X)))
    assert by_splitter == by_pairs


def test_early_stopping_on_the_fold_mean():
    params = {**PARAMS, "learning_rate": 0.5, "max_leaves": 31, "min_samples_leaf": 2}
    full = gbmo.cv(params, gbmo.Dataset(X, Y), 80, nfold=3, seed=0)
    mean = np.array(full["valid rmse-mean"])
    stopped = gbmo.cv(params, gbmo.Dataset(X, Y), 80, nfold=3, seed=0,
                      callbacks=[gbmo.early_stopping(5, verbose=False)], return_boosters=True)
    best = len(stopped["valid rmse-mean"])
    assert best < 80
    # the best round is the minimum of the mean curve up to where the run stopped
    assert mean[best - 1] == pytest.approx(mean[:best + 5].min())
    np.testing.assert_allclose(stopped["valid rmse-mean"], mean[:best])
    assert all(booster.best_iteration == best for booster in stopped["boosters"])
    assert all(booster.current_iteration() == best + 5 for booster in stopped["boosters"])


def test_classification_is_stratified_by_default():
    result = gbmo.cv({**PARAMS, "objective": "softmax", "metric": ["logloss", "accuracy"]},
                     gbmo.Dataset(X, LABELS), 5, nfold=4, return_boosters=True)
    assert result["valid accuracy-mean"][-1] > 0.6
    assert len(result["boosters"]) == 4


@pytest.mark.parametrize("kwargs, error, message", [
    ({"nfold": 1}, ValueError, r"nfold must be an integer in \[2, 600\]"),
    ({"nfold": 3, "stratified": True}, ValueError, "stratified folds need 1-D class labels"),
    ({"folds": [(np.arange(10), np.arange(700, 710))]}, ValueError,
     r"folds\[0\] validation rows must be .* in \[0, 600\)"),
    ({"folds": [np.arange(10)]}, ValueError, r"folds\[0\] must be a \(train rows"),
    ({"folds": []}, ValueError, "folds is empty"),
    ({"num_boost_round": 0}, ValueError, "num_boost_round must be an integer >= 1"),
])
def test_argument_errors(kwargs, error, message):
    kwargs = {"num_boost_round": 3, **kwargs}
    with pytest.raises(error, match=message):
        gbmo.cv(PARAMS, gbmo.Dataset(X, Y), **kwargs)


def test_train_set_must_be_a_dataset():
    with pytest.raises(TypeError, match="train_set must be a gbmo.Dataset"):
        gbmo.cv(PARAMS, X, 3)


def test_cv_metrics_replace_the_metric_under_any_of_its_names():
    X = np.random.default_rng(3).normal(size=(150, 3))
    data = gbmo.Dataset(X, X[:, 0])
    for params in ({"metric": "mae"}, {"eval_metric": "mae"}):
        results = gbmo.cv({**params, "verbosity": 0}, data, 2, nfold=3, metrics="rmse")
        assert [key for key in results if key.endswith("-mean")] == ["valid rmse-mean"]


def test_a_metric_of_no_value_on_some_folds_is_named_with_them():
    rng = np.random.default_rng(44)
    features = rng.normal(size=(300, 3))
    labels = (np.arange(300) < 40).astype(float)  # the positives in the first fold only
    third = np.arange(300) // 100
    folds = [(np.flatnonzero(third != k), np.flatnonzero(third == k)) for k in range(3)]
    with pytest.warns(UserWarning) as caught:
        result = gbmo.cv({"objective": "binary", "metric": "auc", "verbosity": 0}, gbmo.Dataset(
            features, labels), 3, folds=folds, callbacks=[gbmo.early_stopping(2, verbose=False)])
    messages = [str(w.message) for w in caught]
    assert any("cv: valid auc is NaN in round 1 on fold(s) [1, 2] of 0 to 2" in m
               for m in messages)
    assert any("early stopping: valid's auc is NaN in round 1" in m for m in messages)
    assert caught[0].filename == __file__
    assert np.isnan(result["valid auc-mean"]).all()


def test_a_fold_s_refusal_names_the_fold_and_a_splitter_s_groups_are_asked_for():
    from sklearn.model_selection import GroupKFold

    folds = [(np.arange(10, 600), np.arange(10)), (np.array([3]), np.arange(300, 600))]
    with pytest.raises(ValueError, match="cv fold 1 \\(of folds 0 to 1\\): the training set "
                                         "has 1 row; training needs at least 2 rows"):
        gbmo.cv(PARAMS, gbmo.Dataset(X, Y), 2, folds=folds)
    with pytest.raises(TypeError, match="cv fold 0 \\(of folds 0 to 2\\): fpreproc must return "
                                        "\\(fold_train, fold_valid, params\\), got a tuple of 2"):
        gbmo.cv(PARAMS, gbmo.Dataset(X, Y), 2, nfold=3,
                fpreproc=lambda train, valid, params: (train, valid))
    with pytest.raises(ValueError, match="cv calls folds.split\\(X, y\\), without groups\\): "
                                         "give folds=list\\(splitter.split\\(X, y, groups\\)\\)"):
        gbmo.cv(PARAMS, gbmo.Dataset(X, Y), 2, folds=GroupKFold(3))
