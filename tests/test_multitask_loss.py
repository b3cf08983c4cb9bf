"""MultiTaskLoss: different losses for different outputs of one model, and
metrics restricted to outputs."""
import numpy as np
import pytest

import gbmo
from gbmo.losses import make_loss
from gbmo.metrics import evaluate

RNG = np.random.default_rng(11)
X = RNG.normal(size=(800, 5))
SIGNAL = X[:, 0] + X[:, 1]
Y = np.c_[SIGNAL + 0.5 * RNG.normal(size=800) > 0, SIGNAL + 0.1 * RNG.normal(size=800),
          X[:, 2] ** 2].astype(float)
TASKS = [("sigmoid", [0]), ("mse", [1, 2])]
PARAMS = {"verbosity": 0, "min_samples_leaf": 5}


def test_gradients_are_each_tasks_own_times_its_weight():
    loss = gbmo.MultiTaskLoss(TASKS, weights=[2.0, 0.5])
    y = loss.prepare_target(Y[:50])
    raw = RNG.normal(size=(50, 3))
    grad, hess = loss.gradients(y, raw, None)
    sigmoid_grad, sigmoid_hess = make_loss("sigmoid").gradients(y[:, :1].copy(), raw[:, :1].copy(),
                                                                 None)
    mse_grad, mse_hess = make_loss("mse").gradients(y[:, 1:].copy(), raw[:, 1:].copy(), None)
    np.testing.assert_allclose(grad[:, :1], 2 * sigmoid_grad, rtol=1e-6)
    np.testing.assert_allclose(hess[:, :1], 2 * sigmoid_hess, rtol=1e-6)
    np.testing.assert_allclose(grad[:, 1:], 0.5 * mse_grad, rtol=1e-6)
    np.testing.assert_allclose(hess[:, 1:], 0.5 * np.broadcast_to(mse_hess, (50, 2)))
    step, (i, j) = 1e-5, (3, 0)
    up, down = raw.copy(), raw.copy()
    up[i, j] += step
    down[i, j] -= step
    assert grad[i, j] == pytest.approx((loss.value(y, up) - loss.value(y, down)) / (2 * step),
                                       rel=1e-3)


def test_transforms_scores_and_metrics_per_task():
    loss = gbmo.MultiTaskLoss(TASKS)
    raw = np.array([[0.0, -3.0, 5.0]])
    np.testing.assert_allclose(loss.transform(raw), [[0.5, -3.0, 5.0]])
    y = loss.prepare_target(Y)
    start = loss.init_score(y, None)
    assert start[0] == pytest.approx(np.log(Y[:, 0].mean() / (1 - Y[:, 0].mean())))
    np.testing.assert_allclose(start[1:], Y[:, 1:].mean(axis=0))
    assert loss.default_metric == ["logloss[0]", "rmse[1,2]"]


def test_one_task_equals_its_loss():
    alone = gbmo.train(PARAMS, gbmo.Dataset(X, Y[:, 1:]), 10)
    wrapped = gbmo.train({**PARAMS, "objective": gbmo.MultiTaskLoss([("mse", [0, 1])])},
                         gbmo.Dataset(X, Y[:, 1:]), 10)
    np.testing.assert_allclose(wrapped.predict(X), alone.predict(X), atol=1e-9)


def test_mixed_tasks_learn_and_round_trip_through_a_model_file(tmp_path):
    data = gbmo.Dataset(X, Y)
    booster = gbmo.train({**PARAMS, "objective": gbmo.MultiTaskLoss(TASKS, weights=[1, 0.5])},
                         data, 60, valid_sets=[data])
    history = booster.evals_result["training"]
    assert set(history) == {"logloss[0]", "rmse[1,2]", "rmse[1,2]_per_output"}
    assert history["logloss[0]"][-1] < 0.5 * history["logloss[0]"][0]
    prediction = booster.predict(X)
    assert np.mean((prediction[:, 0] > 0.5) == Y[:, 0]) > 0.8
    assert np.all((prediction[:, 0] > 0) & (prediction[:, 0] < 1))
    assert np.sqrt(np.mean((prediction[:, 1:] - Y[:, 1:]) ** 2)) < 0.3 * Y[:, 1:].std()
    path = tmp_path / "model.json"
    booster.save_model(path)
    loaded = gbmo.Booster(model_file=path)
    np.testing.assert_array_equal(loaded.predict(X), prediction)
    assert loaded.loss.get_params() == {"tasks": [["sigmoid", [0], None], ["mse", [1, 2], None]],
                                        "weights": [1.0, 0.5]}


def test_reachable_by_name_with_objective_params():
    by_object = gbmo.train({**PARAMS, "objective": gbmo.MultiTaskLoss(TASKS)},
                           gbmo.Dataset(X, Y), 5)
    by_name = gbmo.train({**PARAMS, "objective": "multitask",
                          "objective_params": {"tasks": TASKS}}, gbmo.Dataset(X, Y), 5)
    np.testing.assert_array_equal(by_name.predict(X), by_object.predict(X))


def test_missing_targets_are_masked_per_task():
    y = Y.copy()
    y[:400, 0] = np.nan
    loss = gbmo.MultiTaskLoss(TASKS)
    grad, hess = loss.gradients(loss.prepare_target(y), np.zeros(y.shape), None)
    assert np.all(grad[:400, 0] == 0) and np.all(hess[:400, 0] == 0)
    assert np.all(hess[:, 1:] == 1)


@pytest.mark.parametrize("args, message", [
    (([("mse", [0]), ("mse", [0, 1])],), "an output belongs to two tasks"),
    (([("mse", [0]), ("mse", [2])],), r"cover the outputs 0 .. 1 once each, got \[0, 2\]"),
    (([("mse", [])],), "non-empty list of output indices"),
    (([("mse", [0])], [0.0]), "weights must be 1 finite numbers > 0"),
    (([(make_loss("mse"), [0])],), "must be a registered name"),
    (([("mse",)],), r"must be \(loss name, columns\)"),
    (([],), "non-empty list of tasks"),
    (([("nope", [0])],), "unknown objective|'nope'"),
])
def test_construction_errors(args, message):
    with pytest.raises((ValueError, KeyError), match=message):
        gbmo.MultiTaskLoss(*args)


def test_by_name_without_its_tasks_says_how_to_give_them():
    with pytest.raises(TypeError, match=r"objective 'multitask' needs the parameter 'tasks', "
                                        r"which was not given: give it in objective_params"):
        gbmo.train({**PARAMS, "objective": "multitask"}, gbmo.Dataset(X, Y), 1)


def test_target_errors():
    loss = gbmo.MultiTaskLoss(TASKS)
    with pytest.raises(ValueError, match=r"takes targets of shape \(n, 3\); got \(800, 2\)"):
        loss.prepare_target(Y[:, :2])
    with pytest.raises(ValueError, match="objective 'sigmoid' takes targets in"):
        loss.prepare_target(Y * 3)
    with pytest.raises(ValueError, match="'softmax' cannot be a task"):
        gbmo.MultiTaskLoss([("softmax", [0])])
    with pytest.raises(ValueError, match="'multiclassova' cannot be a task"):
        gbmo.MultiTaskLoss([("multiclassova", [0])])


def test_metric_restricted_to_outputs():
    y = np.array([[0.0, 1.0, 2.0], [1.0, 1.0, 4.0]])
    prediction = np.array([[0.0, 2.0, 2.0], [1.0, 3.0, 4.0]])
    value, per_output = evaluate("mae[1,2]", y, prediction)
    assert value == pytest.approx(0.75) and per_output.tolist() == [1.5, 0.0]
    assert evaluate("mae[0]", y, prediction) == (0.0, None)
    with pytest.raises(ValueError, match=r"selects outputs \[5\], but the model has 3 outputs"):
        evaluate("mae[5]", y, prediction)
    with pytest.raises(ValueError, match="unknown metric 'nope\\[1\\]'.*restricted to outputs"):
        gbmo.train({"metric": "nope[1]"}, gbmo.Dataset(X, Y), 1)
    booster = gbmo.train({**PARAMS, "metric": ["rmse[2]", "mae"]}, gbmo.Dataset(X, Y),
                         3, valid_sets=[gbmo.Dataset(X, Y)])
    assert set(booster.evals_result["valid_0"]) == {"rmse[2]", "mae", "mae_per_output"}
