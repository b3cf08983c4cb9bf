"""Built-in losses: kernel gradients against numpy formulas and finite differences."""
import numpy as np
import pytest
from scipy.special import expit, log_softmax, softmax

import gbmo
from gbmo.losses import make_loss

rng = np.random.default_rng(0)
N, D = 57, 4


def _weights(weighted):
    return rng.uniform(0.1, 2.0, size=N) if weighted else None


def _unit(weight):
    return np.ones(N) if weight is None else weight


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_squared_error(weighted, n_threads):
    loss = make_loss("mse", n_threads=n_threads)
    y = loss.prepare_target(rng.normal(size=(N, D)))
    raw = rng.normal(size=(N, D))
    weight = _weights(weighted)
    grad, hess = loss.gradients(y, raw, weight)
    w = _unit(weight)[:, None]
    np.testing.assert_allclose(grad, w * (raw - y), rtol=1e-6)
    assert hess.shape == (N, 1) and hess.dtype == np.float32  # as the histograms read it
    np.testing.assert_array_equal(hess, w.astype(np.float32))
    np.testing.assert_allclose(loss.init_score(y, weight), np.average(y, axis=0, weights=weight))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_softmax(weighted, n_threads):
    loss = make_loss("softmax", n_threads=n_threads)
    y = loss.prepare_target(rng.integers(0, D, size=N))
    raw = 3 * rng.normal(size=(N, D))
    weight = _weights(weighted)
    grad, hess = loss.gradients(y, raw, weight)
    p = softmax(raw, axis=1)
    w = _unit(weight)[:, None]
    np.testing.assert_allclose(grad, w * (p - np.eye(D)[y]), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hess, w * p * (1 - p), rtol=1e-5, atol=1e-7)

    # The gradient is the derivative of the weighted negative log-likelihood.
    def row_values(r):
        return -_unit(weight) * log_softmax(r, axis=1)[np.arange(N), y]
    step = 1e-6
    for j in range(D):
        shifted = raw.copy()
        shifted[:, j] += step
        difference = (row_values(shifted) - row_values(raw)) / step
        np.testing.assert_allclose(grad[:, j], difference, rtol=1e-3, atol=1e-5)


@pytest.mark.parametrize("d", [3, 10])
def test_softmax_gradients_on_threads_equal_one_thread(d):
    """Each thread keeps its row of exps in its own scratch row: rows that
    shared one would mix threads' values."""
    from gbmo._core._losses import softmax_gradients

    n = 20_000  # enough rows that threads sharing one row would collide (at 3,000 they did not)
    raw = 3 * rng.normal(size=(n, d))
    y = rng.integers(0, d, size=n).astype(np.int64)
    results = []
    for n_threads in (1, 2, 3):
        grad, hess = np.empty((n, d), np.float32), np.empty((n, d), np.float32)
        softmax_gradients(y, raw, np.zeros(0), grad, hess, n_threads)
        results.append(grad.tobytes() + hess.tobytes())
    assert results[1] == results[0] and results[2] == results[0]
    p = softmax(raw, axis=1)
    np.testing.assert_allclose(grad, p - np.eye(d)[y], rtol=1e-5, atol=1e-7)


def test_softmax_saturated_scores_stay_finite():
    loss = make_loss("softmax")
    raw = np.array([[1000.0, -1000.0, 0.0], [-800.0, 800.0, 5.0]])
    grad, hess = loss.gradients(np.array([0, 2]), raw, None)
    assert np.all(np.isfinite(grad)) and np.all(hess > 0)


@pytest.mark.parametrize("weighted", [False, True])
def test_sigmoid(weighted):
    loss = make_loss("sigmoid", n_threads=2)
    y = loss.prepare_target((rng.random(size=(N, D)) > 0.5).astype(float))
    raw = 3 * rng.normal(size=(N, D))
    weight = _weights(weighted)
    grad, hess = loss.gradients(y, raw, weight)
    p = expit(raw)
    w = _unit(weight)[:, None]
    np.testing.assert_allclose(grad, w * (p - y), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hess, w * p * (1 - p), rtol=1e-5, atol=1e-7)
    step = 1e-6

    def value(r):
        return w * (np.logaddexp(0, r) - y * r)
    np.testing.assert_allclose(grad, (value(raw + step) - value(raw)) / step, rtol=1e-3, atol=1e-5)


def test_sigmoid_accepts_fortran_ordered_targets():
    loss = make_loss("sigmoid")
    y = loss.prepare_target(np.asfortranarray((rng.random(size=(N, D)) > 0.5).astype(float)))
    grad, _ = loss.gradients(y, np.zeros((N, D)), None)
    np.testing.assert_allclose(grad, 0.5 - y)


def test_init_scores():
    softmax_loss = make_loss("softmax")
    y = np.array([0, 0, 0, 1])
    init = softmax_loss.init_score(y, None)
    np.testing.assert_allclose(softmax(init), [0.75, 0.25])
    sigmoid_loss = make_loss("sigmoid")
    np.testing.assert_allclose(expit(sigmoid_loss.init_score(np.array([[1.0], [0.0], [1.0], [1.0]]), None)), [0.75])


def _finite_difference_check(loss, y, raw, check_hessian=True, step=1e-5):
    """grad = d value / d raw and hess = d grad / d raw (diagonal), entry by entry."""
    grad, hess = loss.gradients(y, raw, None)
    hess = np.broadcast_to(hess, raw.shape)
    for i, j in np.ndindex(raw.shape):
        up, down = raw.copy(), raw.copy()
        up[i, j] += step
        down[i, j] -= step
        numeric_grad = (loss.value(y, up) - loss.value(y, down)) / (2 * step)
        assert grad[i, j] == pytest.approx(numeric_grad, rel=1e-3, abs=1e-4)
        if check_hessian:
            numeric_hess = (loss.gradients(y, up, None)[0][i, j].astype(np.float64)
                            - loss.gradients(y, down, None)[0][i, j]) / (2 * step)
            assert hess[i, j] == pytest.approx(numeric_hess, rel=2e-2, abs=2e-2)


@pytest.mark.parametrize("name", ["mse", "softmax", "sigmoid", "multiclassova"])
def test_gradients_and_hessians_are_derivatives_of_the_value(name):
    rng = np.random.default_rng(3)
    raw = rng.normal(size=(6, 3))
    y = {"mse": rng.normal(size=(6, 3)), "softmax": rng.integers(0, 3, 6),
         "sigmoid": rng.integers(0, 2, (6, 3)).astype(float),
         "multiclassova": rng.integers(0, 3, 6)}[name]
    loss = make_loss(name)
    _finite_difference_check(loss, loss.prepare_target(y), raw)


@pytest.mark.parametrize("name", ["mse", "sigmoid"])
def test_missing_targets_get_zero_gradient_and_hessian(name):
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, (30, 3)).astype(float)
    missing = rng.random(y.shape) < 0.3
    y[missing] = np.nan
    loss = make_loss(name)
    grad, hess = loss.gradients(loss.prepare_target(y), rng.normal(size=y.shape), None)
    hess = np.broadcast_to(hess, y.shape)
    assert np.all(grad[missing] == 0) and np.all(hess[missing] == 0)
    assert np.all(hess[~missing] > 0) and np.count_nonzero(grad[~missing]) > 0
    start = loss.init_score(loss.prepare_target(y), None)
    expected = np.nanmean(y, axis=0)
    np.testing.assert_allclose(loss.transform(start[None])[0], expected, rtol=1e-9)


@pytest.mark.parametrize("name", ["mse", "sigmoid"])
def test_missing_targets_train_like_zero_weight_rows(name):
    """With one output, a missing label is exactly a row of weight 0."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(float) if name == "sigmoid" else X[:, 0] + X[:, 1]
    missing = rng.random(300) < 0.4
    params = {"objective": name, "verbosity": 0, "min_samples_leaf": 5}
    masked = gbmo.train(params, gbmo.Dataset(X, np.where(missing, np.nan, y)), 10)
    weighted = gbmo.train(params, gbmo.Dataset(X, y, weight=(~missing).astype(float)), 10)
    np.testing.assert_allclose(masked.predict(X), weighted.predict(X), rtol=1e-6, atol=1e-9)


def test_missing_targets_leave_the_observed_entries_trained_and_the_rest_ignored():
    """A model with NaN labels equals the one a custom objective trains with
    zero gradient and hessian at those entries, and still learns every output."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(500, 4))
    truth = np.c_[X[:, 0] + X[:, 1], X[:, 0] - X[:, 2]]
    y = truth.copy()
    missing = rng.random(y.shape) < 0.5
    y[missing] = np.nan
    params = {"verbosity": 0, "min_samples_leaf": 5, "learning_rate": 0.3}
    masked = gbmo.train(params, gbmo.Dataset(X, y), 40)

    def masked_squared_error(y_true, raw):
        observed = ~np.isnan(y_true)
        return np.where(observed, raw - y_true, 0.0), observed.astype(float)

    # A custom objective starts from 0: shifting its target by mse's start
    # score gives it the same gradients every round.
    reference = gbmo.train({**params, "objective": masked_squared_error},
                           gbmo.Dataset(X, y - masked.init_score), 40)
    np.testing.assert_allclose(masked.predict(X), reference.predict(X) + masked.init_score,
                               atol=1e-5)
    error_on_missing = np.abs(masked.predict(X) - truth)[missing]
    assert error_on_missing.mean() < 0.3 * np.abs(truth - truth.mean(axis=0))[missing].mean()


def test_metrics_leave_missing_targets_out():
    from gbmo.metrics import evaluate

    y = np.array([[1.0, np.nan], [3.0, 2.0], [np.nan, 4.0]])
    prediction = np.array([[2.0, 100.0], [3.0, 1.0], [100.0, 4.0]])
    value, per_output = evaluate("rmse", y, prediction)
    np.testing.assert_allclose(per_output, [np.sqrt(0.5), np.sqrt(0.5)])
    _, per_output = evaluate("error", np.array([[1.0, np.nan]]), np.array([[0.2, 0.9]]))
    np.testing.assert_array_equal(per_output[0], 1.0)
    assert np.isnan(per_output[1])


def test_a_region_without_labels_of_one_output_still_splits_at_lambda_zero():
    """Where output 1 has no label, its hessian sums are 0; with lambda_l2 = 0
    every gain there was 0/0 and output 0 went unlearned in that region."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    y = np.c_[np.sin(3 * X[:, 0]), X[:, 1]]
    unlabelled = X[:, 0] > 0.5
    y[unlabelled, 1] = np.nan
    params = {"verbosity": 0, "lambda_l2": 0.0, "min_samples_leaf": 5, "max_leaves": 8}
    booster = gbmo.train(params, gbmo.Dataset(X, y), 30)
    error = booster.predict(X)[:, 0] - y[:, 0]
    in_region = np.sqrt(np.mean(error[unlabelled] ** 2))
    elsewhere = np.sqrt(np.mean(error[~unlabelled] ** 2))
    assert in_region < 1.5 * elsewhere, (in_region, elsewhere)


@pytest.mark.parametrize("alias, name, target", [
    ("regression", "mse", "values"), ("l2", "mse", "values"), ("reg:squarederror", "mse", "values"),
    ("multiclass", "softmax", "classes"), ("multi:softprob", "softmax", "classes"),
    ("binary", "sigmoid", "binary"), ("binary:logistic", "sigmoid", "binary"),
    ("multilabel", "sigmoid", "binary"), ("cross_entropy", "sigmoid", "probabilities"),
    ("xentropy", "sigmoid", "probabilities"), ("reg:logistic", "sigmoid", "probabilities"),
    ("rmse", "mse", "values"), ("RMSE", "mse", "values"), ("MultiRMSE", "mse", "values"),
    ("Logloss", "sigmoid", "binary"), ("MultiClass", "softmax", "classes"),
    ("ova", "multiclassova", "classes"), ("ovr", "multiclassova", "classes"),
    ("multiclass_ova", "multiclassova", "classes"),
])
def test_lightgbm_and_xgboost_objective_names_train_gbmo_objectives(alias, name, target):
    """The same trees as under gbmo's own name, and the model file (so a
    loaded model) carries gbmo's name."""
    X = rng.normal(size=(200, 3))
    y = {"values": X[:, 0] + 0.1 * rng.normal(size=200),
         "classes": np.digitize(X[:, 0], [-0.5, 0.5]),
         "binary": (X[:, :2] > 0).astype(float),
         "probabilities": 1 / (1 + np.exp(-X[:, :2]))}[target]
    params = {"max_leaves": 4, "verbosity": 0}
    aliased = gbmo.train(dict(params, objective=alias), gbmo.Dataset(X, y), 3)
    named = gbmo.train(dict(params, objective=name), gbmo.Dataset(X, y), 3)
    np.testing.assert_array_equal(aliased.predict(X), named.predict(X))
    assert gbmo.Booster(model_str=aliased.model_to_string()).params["objective"] == name


# -- positive-label weights of the sigmoid (LightGBM's scale_pos_weight, is_unbalance) --
@pytest.mark.parametrize("labels", ["binary", "soft"])
@pytest.mark.parametrize("objective_params", [{"scale_pos_weight": 3.0},
                                              {"is_unbalance": True}])
def test_weighted_sigmoid_gradients_are_derivatives_of_its_value(labels, objective_params):
    rng = np.random.default_rng(5)
    raw = rng.normal(size=(8, 3))
    y = (rng.integers(0, 2, (8, 3)).astype(float) if labels == "binary"
         else rng.uniform(0, 1, (8, 3)))
    loss = make_loss("sigmoid", objective_params=objective_params)
    _finite_difference_check(loss, loss.prepare_target(y), raw)


def test_scale_pos_weight_weighs_the_positive_rows_and_is_unbalance_picks_the_ratio():
    rng = np.random.default_rng(6)
    raw = rng.normal(size=(40, 2))
    y = (rng.random((40, 2)) < [0.2, 0.6]).astype(float)
    y[3, 1] = np.nan  # a missing label keeps zero gradient and hessian
    weight = rng.uniform(0.5, 2.0, 40)
    plain = make_loss("sigmoid")
    g, h = plain.gradients(y, raw, weight)
    g3, h3 = make_loss("sigmoid", objective_params={"scale_pos_weight": 3.0}).gradients(
        y, raw, weight)
    factor = np.where(y == 1, 3.0, 1.0)
    np.testing.assert_allclose(g3, g * factor, rtol=1e-6)
    np.testing.assert_allclose(h3, h * factor, rtol=1e-6)
    assert g3[3, 1] == 0 and h3[3, 1] == 0
    # is_unbalance, as LightGBM: the minority class of each output weighs the
    # majority's count over its own (output 0: positives; output 1: negatives)
    positives, negatives = np.nansum(y, axis=0), np.nansum(1 - y, axis=0)
    assert positives[0] < negatives[0] and positives[1] > negatives[1]
    gu, hu = make_loss("sigmoid", objective_params={"is_unbalance": True}).gradients(
        y, raw, weight)
    factor = np.where(y == 1, np.maximum(negatives / positives, 1.0),
                      np.maximum(positives / negatives, 1.0))
    np.testing.assert_allclose(gu, np.nan_to_num(g * factor), rtol=1e-6)
    np.testing.assert_allclose(hu, np.nan_to_num(h * factor), rtol=1e-6)


def test_top_level_names_reach_the_sigmoid_and_its_model_file():
    """A stump-free round from the unweighted start: its leaf is -G / (H +
    lambda) of the weighted gradients, computed by hand."""
    import gbmo
    from scipy.special import expit, logit

    rng = np.random.default_rng(7)
    X = rng.normal(size=(600, 3))
    y = (X[:, 0] + rng.normal(size=600) > 1.5).astype(float)
    params = {"verbosity": 0, "objective": "binary", "scale_pos_weight": 4.0,
              "min_samples_leaf": 10**6, "learning_rate": 0.5, "lambda_l2": 2.0}
    model = gbmo.train(params, gbmo.Dataset(X, y), 1)
    start = logit(y.mean())
    p = expit(start)
    factor = np.where(y == 1, 4.0, 1.0)
    leaf = -np.sum(factor * (p - y)) / (np.sum(factor * p * (1 - p)) + 2.0)
    np.testing.assert_allclose(model.predict(X[:3], raw_score=True), start + 0.5 * leaf,
                               rtol=1e-6)
    loaded = gbmo.Booster(model_str=model.model_to_string())
    assert loaded.loss.scale_pos_weight == 4.0 and model.init_score[0] == pytest.approx(start)


@pytest.mark.parametrize("params, error, message", [
    ({"scale_pos_weight": 2.0}, ValueError, "weigh the positive labels of objectives 'sigmoid'"),
    ({"objective": "sigmoid", "scale_pos_weight": 2.0, "is_unbalance": True}, ValueError,
     "give is_unbalance or scale_pos_weight, not both"),
    ({"objective": "sigmoid", "scale_pos_weight": 0.0}, ValueError, r"out of range"),
    ({"objective": "sigmoid", "scale_pos_weight": 2.0,
      "objective_params": {"scale_pos_weight": 3.0}}, ValueError, "differ; give it once"),
    ({"objective": "sigmoid", "objective_params": {"scale_pos_weight": -1.0}}, ValueError,
     "scale_pos_weight must be a finite number > 0"),
    ({"objective": "sigmoid", "is_unbalance": True, "objective_params": {"scale_pos_weight": 3.0}},
     ValueError, "give is_unbalance or scale_pos_weight, not both"),
])
def test_bad_positive_weights_are_refused(params, error, message):
    import gbmo

    X = np.random.default_rng(8).normal(size=(40, 2))
    with pytest.raises(error, match=message):
        gbmo.train({"verbosity": 0, **params}, gbmo.Dataset(X, (X[:, 0] > 0).astype(float)), 1)


def test_a_sparse_y_and_the_estimators_own_objectives_refuse_positive_weights_by_name():
    import scipy.sparse as sp

    import gbmo
    from gbmo.sklearn import GBMOClassifier, GBMORegressor

    X = np.random.default_rng(9).normal(size=(60, 3))
    with pytest.raises(ValueError, match="a sparse Y does not take scale_pos_weight"):
        gbmo.train({"verbosity": 0, "objective": "sigmoid", "scale_pos_weight": 2.0,
                    "split": "sparse", "top_k": 1},
                   gbmo.Dataset(X, sp.csr_matrix((X > 0).astype(float))), 1)
    with pytest.raises(ValueError, match="the objective is 'mse'"):
        GBMORegressor(n_estimators=2, scale_pos_weight=2.0).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="the objective is 'softmax'"):
        GBMOClassifier(n_estimators=2, is_unbalance=True).fit(X, np.digitize(X[:, 0], [-1, 1]))
    model = GBMOClassifier(n_estimators=2, is_unbalance=True).fit(X, (X[:, 0] > 1).astype(int))
    assert model.booster_.loss.is_unbalance


@pytest.mark.parametrize("n_threads", [1, 3])
def test_probability_transforms_match_scipy(n_threads):
    """The kernels' softmax and sigmoid against scipy's, on scores far enough
    out that a naive exp would overflow, a strided view, and a 1-D column."""
    raw = rng.normal(scale=300.0, size=(N, 2 * D))
    raw[0] = [800.0, -800.0] * D
    softmax_loss = make_loss("softmax", num_class=D, n_threads=n_threads)
    sigmoid_loss = make_loss("sigmoid", n_threads=n_threads)
    np.testing.assert_allclose(softmax_loss.transform(raw[:, ::2]), softmax(raw[:, ::2], axis=1),
                               rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(sigmoid_loss.transform(raw[:, ::2]), expit(raw[:, ::2]),
                               rtol=1e-12, atol=1e-300)
    assert sigmoid_loss.transform(raw[:, 0]).shape == (N,)
    np.testing.assert_allclose(sigmoid_loss.transform(raw[:, 0]), expit(raw[:, 0]), rtol=1e-12)


def test_probability_transforms_of_no_rows_and_of_wrong_shapes():
    assert make_loss("softmax", num_class=3).transform(np.empty((0, 3))).shape == (0, 3)
    assert make_loss("sigmoid").transform(np.empty(0)).shape == (0,)
    assert make_loss("sigmoid").transform([[0.0, 1.0]]).shape == (1, 2)
    with pytest.raises(ValueError, match=r"raw scores must be \(n, d\), got shape \(3,\)"):
        make_loss("softmax", num_class=3).transform(np.zeros(3))
    with pytest.raises(ValueError, match=r"must be \(n,\) or \(n, d\), got shape \(1, 2, 2\)"):
        make_loss("sigmoid").transform(np.zeros((1, 2, 2)))


def test_probability_transform_kernels_refuse_an_out_of_another_shape():
    from gbmo._core._losses import sigmoid_transform, softmax_transform

    for kernel in (softmax_transform, sigmoid_transform):
        with pytest.raises(ValueError, match=r"out must have raw's shape \(3, 2\), got \(3, 1\)"):
            kernel(np.zeros((3, 2)), np.empty((3, 1)), 1)
