"""feval: custom metrics evaluated every round, in train and cv, with
early stopping, and their errors."""
import numpy as np
import pytest

import gbmo


def _data(n=600, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    Y = np.column_stack([X[:, 0], X[:, 1] ** 2]) + 0.1 * rng.normal(size=(n, 2))
    return X, Y


def worst_output_mae(preds, eval_data):
    return "worst_mae", float(np.abs(preds - eval_data.get_label()).mean(axis=0).max()), False


def test_custom_metric_is_recorded_with_the_prediction_and_the_dataset():
    X, Y = _data()
    train = gbmo.Dataset(X[:400], Y[:400])
    valid = train.create_valid(X[400:], Y[400:])
    seen = []

    def both(preds, eval_data):
        seen.append((preds.shape, eval_data))
        return [worst_output_mae(preds, eval_data), ("one", 1, True)]

    booster = gbmo.train({"verbosity": 0}, train, 5, valid_sets=[train, valid], feval=both)
    assert seen[0] == ((400, 2), train) and seen[1] == ((200, 2), valid)
    for k, name in ((0, "training"), (1, "valid_1")):
        expected = [np.abs(booster.predict(X[400 * k:400 + 200 * k] if k else X[:400],
                                           num_iteration=r) - (Y[400:] if k else Y[:400]))
                    .mean(axis=0).max() for r in range(1, 6)]
        np.testing.assert_allclose(booster.evals_result[name]["worst_mae"], expected, rtol=1e-12)
        assert booster.evals_result[name]["one"] == [1.0] * 5
    assert "rmse" in booster.evals_result["valid_1"]  # beside the built-in metric


def test_a_one_dimensional_target_gets_one_dimensional_predictions():
    X, Y = _data()
    shapes = []

    def spy(preds, eval_data):
        shapes.append((preds.shape, eval_data.get_label().shape))
        return "mean_prediction", float(preds.mean()), False

    data = gbmo.Dataset(X, Y[:, 0])
    gbmo.train({"verbosity": 0}, data, 2, valid_sets=[data], feval=spy)
    assert shapes == [((600,), (600,))] * 2


def test_early_stopping_watches_a_custom_metric():
    X, Y = _data(1200)
    train = gbmo.Dataset(X[:800], Y[:800])
    valid = train.create_valid(X[800:], Y[800:])
    booster = gbmo.train({"verbosity": 0, "metric": "rmse", "learning_rate": 0.3}, train, 300,
                         valid_sets=[valid], feval=worst_output_mae,
                         callbacks=[gbmo.early_stopping(5, verbose=False)])
    history = booster.evals_result["valid_0"]["worst_mae"]
    assert len(history) < 300
    # stopped when one watched metric had not improved for 5 rounds
    rmse = booster.evals_result["valid_0"]["rmse"]
    stalled = [len(h) - 1 - int(np.argmin(h)) for h in (history, rmse)]
    assert max(stalled) == 5


def test_higher_is_better_custom_metric_in_cv():
    X, Y = _data()

    def negative_mse(preds, eval_data):
        return "neg_mse", -float(np.mean((preds - eval_data.get_label()) ** 2)), True

    results = gbmo.cv({"verbosity": 0}, gbmo.Dataset(X, Y), 30, nfold=3, feval=negative_mse,
                      callbacks=[gbmo.early_stopping(3, first_metric_only=False,
                                                     verbose=False)])
    means = results["valid neg_mse-mean"]
    assert means[-1] > means[0]
    np.testing.assert_allclose(-np.array(means), np.array(results["valid rmse-mean"]) ** 2,
                               rtol=0.5)  # the same errors, seen from two sides


@pytest.mark.parametrize("feval, error, message", [
    (lambda preds, data: 0.5, TypeError, "must return"),
    (lambda preds, data: ("x", "high", True), TypeError, "a real value"),
    (lambda preds, data: ("rmse", 1.0, False), ValueError, "'rmse'"),
    ([worst_output_mae, worst_output_mae], ValueError, "'worst_mae'"),
    (lambda preds, data: ("rmse_per_output", 1.0, False), ValueError, "'rmse_per_output'"),
    ("rmse", TypeError, "feval must be a function"),
])
def test_malformed_custom_metrics_are_refused_by_name(feval, error, message):
    X, Y = _data(100)
    data = gbmo.Dataset(X, Y)
    with pytest.raises(error, match=message):
        gbmo.train({"verbosity": 0}, data, 2, valid_sets=[data], feval=feval)


def test_cv_refuses_folds_whose_custom_metrics_differ():
    X, Y = _data(300)
    calls = []

    def changing(preds, eval_data):
        calls.append(1)
        return f"metric_{len(calls) % 2}", 1.0, False

    with pytest.raises(ValueError, match="the folds' metrics differ in round 1"):
        gbmo.cv({"verbosity": 0}, gbmo.Dataset(X, Y), 2, nfold=2, feval=changing)


def test_rounds_without_a_value_do_not_end_early_stopping():
    """A metric that has no value (NaN) in its first rounds: early stopping
    waits for its first value instead of keeping NaN as the best forever."""
    X, Y = _data()
    data = gbmo.Dataset(X, Y)
    rounds = []

    def late(preds, eval_data):
        rounds.append(len(rounds))
        return "late", (np.nan if len(rounds) <= 6 else float(len(rounds))), True

    with pytest.warns(UserWarning, match="early stopping: valid_0's late is NaN in round 1"):
        booster = gbmo.train({"verbosity": 0, "metric": "rmse"}, data, 30,
                             valid_sets=[data.create_valid(X, Y)], feval=late,
                             callbacks=[gbmo.early_stopping(5, first_metric_only=False,
                                                            verbose=False)])
    late_values = booster.evals_result["valid_0"]["late"]
    assert np.isnan(late_values[:6]).all() and len(late_values) > 6 + 5


@pytest.mark.parametrize("none", ["None", "na", "custom"])
def test_metric_none_leaves_only_the_custom_metrics(none):
    X, Y = _data()
    data = gbmo.Dataset(X, Y)
    booster = gbmo.train({"verbosity": 0, "metric": none}, data, 40,
                         valid_sets=[data.create_valid(X, Y)], feval=worst_output_mae,
                         callbacks=[gbmo.early_stopping(3, first_metric_only=True,
                                                        verbose=False)])
    assert list(booster.evals_result["valid_0"]) == ["worst_mae"]
    history = booster.evals_result["valid_0"]["worst_mae"]
    assert booster.best_iteration > 0 and history[booster.best_iteration - 1] == min(history)
