"""auc, average_precision, rmsle and r2 against scikit-learn's, and as training metrics."""
import re

import numpy as np
import pytest
from sklearn.metrics import (average_precision_score, mean_squared_log_error, r2_score,
                             roc_auc_score)

import gbmo
from gbmo.metrics import auc, average_precision, evaluate, r2, rmsle


@pytest.mark.parametrize("seed", range(4))
def test_auc_of_0_1_columns_matches_scikit_learn_with_ties_and_weights(seed):
    rng = np.random.default_rng(seed)
    y = (rng.random((150, 3)) < [0.1, 0.5, 0.8]).astype(float)
    scores = np.round(rng.random((150, 3)) + 0.3 * y, 1)  # rounding makes ties
    weight = rng.uniform(0.1, 2.0, 150)
    for w in (None, weight):
        expected = [roc_auc_score(y[:, j], scores[:, j], sample_weight=w) for j in range(3)]
        np.testing.assert_allclose(auc(y, scores, w), expected, rtol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_average_precision_matches_scikit_learn_with_ties_weights_and_classes(seed):
    rng = np.random.default_rng(seed)
    y = (rng.random((150, 3)) < [0.1, 0.5, 0.8]).astype(float)
    scores = np.round(rng.random((150, 3)) + 0.3 * y, 1)
    weight = rng.uniform(0.1, 2.0, 150)
    for w in (None, weight):
        expected = [average_precision_score(y[:, j], scores[:, j], sample_weight=w)
                    for j in range(3)]
        np.testing.assert_allclose(average_precision(y, scores, w), expected, rtol=1e-12)
    classes = rng.integers(0, 4, 150)
    proba = rng.dirichlet(np.ones(4), 150)
    np.testing.assert_allclose(average_precision(classes, proba), [
        average_precision_score(classes == c, proba[:, c]) for c in range(4)], rtol=1e-12)


def test_rmsle_matches_scikit_learn_and_scores_predictions_below_minus_one_badly():
    rng = np.random.default_rng(0)
    y = rng.exponential(size=(80, 2))
    prediction = y * rng.uniform(0.5, 1.5, size=(80, 2))
    weight = rng.random(80)
    np.testing.assert_allclose(rmsle(y, prediction, weight), np.sqrt(
        mean_squared_log_error(y, prediction, sample_weight=weight, multioutput="raw_values")),
        rtol=1e-12)
    below = prediction.copy()
    below[0, 0] = -3.0
    worse = rmsle(y, below)
    assert np.isfinite(worse).all() and worse[0] > 10 * rmsle(y, prediction)[0]


def test_error_at_a_threshold_is_xgboost_s_error_at_t():
    from gbmo.metrics import get_metric, is_known

    rng = np.random.default_rng(5)
    y = (rng.random((200, 2)) < 0.3).astype(float)
    y[::7, 1] = np.nan
    proba = rng.random((200, 2))
    weight = rng.random(200)
    value, per_output = evaluate("error@0.7", y, proba, weight)
    expected = [np.average((proba[:, j] > 0.7) != (y[:, j] > 0.5), weights=weight)
                for j in (0,)] + [np.average(((proba[:, 1] > 0.7) != (y[:, 1] > 0.5))[
                    ~np.isnan(y[:, 1])], weights=weight[~np.isnan(y[:, 1])])]
    np.testing.assert_allclose(per_output, expected, rtol=1e-12)
    assert value == pytest.approx(np.mean(expected))
    # at 0.5 it is error
    np.testing.assert_allclose(evaluate("error@0.5", y, proba)[1], evaluate("error", y, proba)[1])
    assert evaluate("error@0.7[1]", y, proba, weight)[0] == pytest.approx(expected[1])
    assert is_known("error@.25") and not is_known("error@") and not is_known("error@x")
    assert get_metric("error@0.25").__name__ == "error@0.25"


def test_error_at_a_threshold_records_and_stops_training():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(600, 3))
    Y = (X[:, :2] + rng.normal(size=(600, 2)) > 1).astype(float)
    data = gbmo.Dataset(X[:400], Y[:400])
    valid = data.create_valid(X[400:], Y[400:])
    booster = gbmo.train({"objective": "sigmoid", "metric": ["error@0.3", "logloss"],
                          "verbosity": 0}, data, 40, valid_sets=[valid],
                         callbacks=[gbmo.early_stopping(5, first_metric_only=True,
                                                        verbose=False)])
    history = booster.evals_result["valid_0"]["error@0.3"]
    assert history[booster.best_iteration - 1] == min(history)
    predicted = booster.predict(X[400:]) > 0.3
    assert booster.best_score["valid_0"]["error@0.3"] == pytest.approx(
        np.mean(predicted != (Y[400:] > 0.5)))


def test_per_column_metrics_keep_their_names():
    assert (auc.__name__, average_precision.__name__) == ("auc", "average_precision")
    assert "NaN for an output without a positive" in average_precision.__doc__


def test_xgboost_s_and_catboost_s_precision_recall_names_are_average_precision():
    from gbmo.metrics import canonical_metric, higher_is_better

    assert canonical_metric("aucpr") == canonical_metric("PRAUC") == "average_precision"
    assert higher_is_better("average_precision") and not higher_is_better("rmsle")
    rng = np.random.default_rng(2)
    X = rng.normal(size=(600, 3))
    Y = (X[:, :2] + rng.normal(size=(600, 2)) > 1).astype(float)
    data = gbmo.Dataset(X[:400], Y[:400])
    valid = data.create_valid(X[400:], Y[400:])
    booster = gbmo.train({"objective": "sigmoid", "metric": "aucpr", "verbosity": 0}, data, 60,
                         valid_sets=[valid], callbacks=[gbmo.early_stopping(5, verbose=False)])
    history = booster.evals_result["valid_0"]["average_precision"]
    assert history[booster.best_iteration - 1] == max(history)
    expected = np.mean([average_precision_score(Y[400:, j], booster.predict(X[400:])[:, j])
                        for j in range(2)])
    assert booster.best_score["valid_0"]["aucpr"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("metric, reference, one_label", [
    (auc, roc_auc_score, 1.0),  # no negative: no ROC curve
    (average_precision, average_precision_score, 0.0),  # no positive: no recall
])
def test_auc_and_average_precision_leave_out_missing_labels_and_need_both_classes(
        metric, reference, one_label):
    y = np.array([[1.0, one_label], [0.0, one_label], [np.nan, one_label], [1.0, one_label]])
    scores = np.array([[0.9, 0.1], [0.2, 0.2], [0.0, 0.3], [0.1, 0.4]])
    values = metric(y, scores)
    assert values[0] == reference([1, 0, 1], [0.9, 0.2, 0.1])
    assert np.isnan(values[1])


def test_auc_of_classes_is_one_against_the_rest():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 300)
    proba = rng.dirichlet(np.ones(4), 300)
    np.testing.assert_allclose(auc(y, proba),
                               roc_auc_score(y, proba, multi_class="ovr", average=None))


def test_r2_matches_scikit_learn():
    rng = np.random.default_rng(1)
    y = rng.normal(size=(80, 3))
    prediction = y + rng.normal(scale=[0.1, 1.0, 3.0], size=(80, 3))
    weight = rng.random(80)
    for w in (None, weight):
        np.testing.assert_allclose(r2(y, prediction, w), r2_score(
            y, prediction, sample_weight=w, multioutput="raw_values"), rtol=1e-12)
    value, per_output = evaluate("r2[0,2]", y, prediction)
    np.testing.assert_allclose(per_output, r2_score(y[:, [0, 2]], prediction[:, [0, 2]],
                                                     multioutput="raw_values"))


def test_auc_and_r2_rise_during_training_and_stop_early_on_their_best():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 5))
    Y = (X[:, :2] + 0.5 * rng.normal(size=(1500, 2)) > 0).astype(float)
    train, valid = gbmo.Dataset(X[:1000], Y[:1000]), None
    valid = train.create_valid(X[1000:], Y[1000:])
    booster = gbmo.train({"objective": "sigmoid", "metric": ["auc", "logloss"], "verbosity": 0},
                         train, 200, valid_sets=[valid],
                         callbacks=[gbmo.early_stopping(10, first_metric_only=True,
                                                        verbose=False)])
    history = booster.evals_result["valid_0"]["auc"]
    assert history[booster.best_iteration - 1] == max(history)  # higher is better
    assert max(history) > history[0] and max(history) > 0.8
    regression = gbmo.train({"metric": "r2", "verbosity": 0}, gbmo.Dataset(X, X[:, 0] * 2), 20,
                            valid_sets=[gbmo.Dataset(X, X[:, 0] * 2)])
    r2_history = regression.evals_result["valid_0"]["r2"]
    assert r2_history[-1] > r2_history[0] and r2_history[-1] > 0.8


def test_lightgbm_metric_names_are_gbmo_s():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    Y = np.column_stack([X[:, 0], X[:, 1]])
    data = gbmo.Dataset(X, Y)
    booster = gbmo.train({"metric": ["l2", "mse", "l1[1]", "l2_root"], "verbosity": 0}, data, 3,
                         valid_sets=[data])
    history = booster.evals_result["training"]
    assert [name for name in history if not name.endswith("_per_output")] == [
        "mse", "mae[1]", "rmse"]
    np.testing.assert_allclose(history["mse_per_output"],
                               np.array(history["rmse_per_output"]) ** 2)
    labels = (X[:, 0] > 0).astype(int)
    labelled = gbmo.Dataset(X, labels)
    classes = gbmo.train({"objective": "binary", "metric": ["binary_logloss", "binary_error"],
                          "verbosity": 0}, labelled, 2, valid_sets=[labelled])
    assert set(classes.evals_result["training"]) == {"logloss", "error"}


def test_outputs_without_a_value_are_left_out_and_early_stopping_goes_on():
    """A validation set without one class (or with a constant 0/1 column)
    gives that output no auc: the mean is over the others, and early stopping
    stops on their best round, not at round 1."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1200, 4))
    y = np.argmax(X[:, :3] + 0.3 * rng.normal(size=(1200, 3)), axis=1)
    valid_rows = np.flatnonzero(y[800:] != 2) + 800  # no class 2
    train = gbmo.Dataset(X[:800], y[:800])
    valid = train.create_valid(X[valid_rows], y[valid_rows])
    booster = gbmo.train({"objective": "softmax", "metric": "auc", "verbosity": 0}, train, 60,
                         valid_sets=[valid],
                         callbacks=[gbmo.early_stopping(5, verbose=False)])
    history = booster.evals_result["valid_0"]
    per_output = np.array(history["auc_per_output"])
    assert np.all(np.isnan(per_output[:, 2])) and not np.any(np.isnan(per_output[:, :2]))
    np.testing.assert_allclose(history["auc"], per_output[:, :2].mean(axis=1))
    assert booster.best_iteration > 1
    assert history["auc"][booster.best_iteration - 1] == max(history["auc"])


def test_r2_of_a_constant_output_is_finite_as_in_scikit_learn():
    y = np.column_stack([np.ones(10), np.arange(10.0)])
    prediction = np.column_stack([np.full(10, 1.0), np.arange(10.0) + 1])
    exact, off = r2(y, prediction), r2(y, prediction + [0.5, 0.0])
    np.testing.assert_allclose(exact, r2_score(y, prediction, multioutput="raw_values"))
    np.testing.assert_allclose(off, r2_score(y, prediction + [0.5, 0.0],
                                             multioutput="raw_values"))
    assert exact[0] == 1.0 and off[0] == 0.0


@pytest.mark.parametrize("objective, metric, target, message", [
    ("softmax", "r2", "classes", "'r2' compares values with targets, but this objective's "
                                 "targets are class indices"),
    ("softmax", "rmse", "classes", "'rmse' compares values"),
    ("mse", "auc", "values", "'auc' needs 0/1 labels"),
    ("mse", "aucpr", "values", "'average_precision' needs 0/1 labels"),
    ("softmax", "rmsle", "classes", "'rmsle' compares values"),
    ("softmax", "error@0.7", "classes", "'error@0.7' reads each 0/1 label's probability against "
                                        "a threshold, but this objective's targets are class "
                                        "indices"),
    ("mse", "error@0.7", "values", "'error@0.7' scores probabilities against labels in"),
    ("mse", "rmsle", "below -1", "'rmsle' compares log\\(1 \\+ value\\), but the targets "
                                 "hold values of -1 or below; allowed: targets above -1"),
])
def test_a_metric_that_cannot_score_the_target_is_refused_before_training(
        objective, metric, target, message):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 3, 60) if target == "classes" else rng.normal(size=60)
    if target == "below -1":
        y[0] = -1.0
    data = gbmo.Dataset(X, y)
    with pytest.raises(ValueError, match=message):
        gbmo.train({"objective": objective, "metric": metric, "verbosity": 0}, data, 1,
                   valid_sets=[data])


def test_a_selected_output_is_checked_alone_and_a_selection_must_exist():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1], X[:, 2]]).astype(float)
    loss = gbmo.MultiTaskLoss([("sigmoid", [0]), ("mse", [1, 2])])
    data = gbmo.Dataset(X, Y)
    booster = gbmo.train({"objective": loss, "metric": ["logloss[0]", "auc[0]", "r2[1, 2]"],
                          "verbosity": 0}, data, 3, valid_sets=[data])
    assert set(booster.evals_result["training"]) >= {"logloss[0]", "auc[0]", "r2[1,2]"}
    for metric in ("rmse[3]", "auc[1]"):
        with pytest.raises(ValueError, match=rf"metric '{re.escape(metric)}'"):
            gbmo.train({"objective": loss, "metric": metric, "verbosity": 0}, data, 1,
                       valid_sets=[data])
    classes = gbmo.Dataset(X, rng.integers(0, 3, 200))
    with pytest.raises(ValueError, match=r"selects outputs \[0\].*class indices have none"):
        gbmo.train({"objective": "softmax", "metric": "logloss[0]", "verbosity": 0}, classes,
                   1, valid_sets=[classes])


@pytest.mark.parametrize("metric", ["logloss", "binary_logloss", "error", "accuracy"])
def test_class_metrics_on_a_regression_target_are_refused(metric):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    data = gbmo.Dataset(X, 50 * X[:, 0])
    with pytest.raises(ValueError, match="labels in \\[0, 1\\]"):
        gbmo.train({"metric": metric, "verbosity": 0}, data, 1, valid_sets=[data])


def test_one_metric_spelt_two_ways_is_evaluated_once():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    data = gbmo.Dataset(X, X[:, :2])
    booster = gbmo.train({"metric": ["mse[0,1]", "l2[0, 1]", "rmse[1]"], "verbosity": 0}, data,
                         2, valid_sets=[data])
    names = [name for name in booster.evals_result["training"]
             if not name.endswith("_per_output")]
    assert names == ["mse[0,1]", "rmse[1]"]


def test_an_empty_metric_list_is_the_objective_s_metric():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    data = gbmo.Dataset(X, X[:, :2])
    booster = gbmo.train({"metric": [], "verbosity": 0}, data, 2, valid_sets=[data])
    assert "rmse" in booster.evals_result["training"]


def test_mape_is_lightgbm_s_percentage_error_per_output_with_weights_and_missing_labels():
    """|p - y| / max(1, |y|): a target near 0 counts as an absolute error."""
    from gbmo.metrics import canonical_metric, mape

    rng = np.random.default_rng(5)
    y = np.column_stack([rng.normal(scale=10.0, size=200), rng.uniform(-0.5, 0.5, 200)])
    y[::7, 0] = np.nan
    prediction = y + rng.normal(size=y.shape)
    weight = rng.uniform(0.1, 2.0, 200)
    error = np.abs(prediction - y) / np.maximum(1.0, np.abs(y))
    for w in (None, weight):
        w_full = np.ones(200) if w is None else w
        expected = [np.nansum(error[:, j] * w_full) / w_full[~np.isnan(y[:, j])].sum()
                    for j in range(2)]
        np.testing.assert_allclose(mape(y, np.nan_to_num(prediction), w), expected, rtol=1e-12)
    assert canonical_metric("mean_absolute_percentage_error") == "mape"
    value, per_output = evaluate("mape", y, np.nan_to_num(prediction))
    assert value == pytest.approx(np.mean(per_output))


def test_quantile_is_lightgbm_s_pinball_loss_per_output_level_with_weights_and_missing_labels():
    from gbmo.metrics import canonical_metric, mae, quantile

    rng = np.random.default_rng(6)
    y = rng.normal(size=(300, 3))
    y[::5, 1] = np.nan
    prediction = rng.normal(size=(300, 3))
    levels = np.array([0.1, 0.5, 0.9])
    weight = rng.uniform(0.1, 2.0, 300)
    for w in (None, weight):
        w_full = np.ones(300) if w is None else w
        expected = []
        for j, level in enumerate(levels):
            kept = ~np.isnan(y[:, j])
            residual = y[kept, j] - prediction[kept, j]
            loss = np.where(residual >= 0, level * residual, (level - 1) * residual)
            expected.append(np.sum(loss * w_full[kept]) / np.sum(w_full[kept]))
        np.testing.assert_allclose(quantile(y, prediction, w, levels=levels), expected,
                                   rtol=1e-12)
    np.testing.assert_allclose(quantile(y, prediction, levels=0.5),
                               mae(y, prediction) / 2, rtol=1e-12)
    assert canonical_metric("pinball") == canonical_metric("mean_pinball_loss") == "quantile"


def test_a_one_column_target_serves_every_selected_output_and_quantile_takes_their_levels():
    rng = np.random.default_rng(7)
    y = rng.normal(size=(100, 1))
    prediction = rng.normal(size=(100, 3))
    levels = np.array([0.2, 0.5, 0.8])
    value, per_output = evaluate("quantile", y, prediction, quantile_levels=levels)
    selected, selected_per_output = evaluate("quantile[2,0]", y, prediction,
                                             quantile_levels=levels)
    np.testing.assert_allclose(selected_per_output, per_output[[2, 0]], rtol=1e-12)
    assert selected == pytest.approx(per_output[[2, 0]].mean(), rel=1e-12)
    assert evaluate("mae[1]", y, prediction)[0] == pytest.approx(
        np.mean(np.abs(y[:, 0] - prediction[:, 1])), rel=1e-12)
    with pytest.raises(ValueError, match=r"selects outputs \[3\], but the model has 3 outputs"):
        evaluate("mae[3]", y, prediction)


def test_the_quantile_metric_needs_an_objective_that_predicts_quantiles():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    data = gbmo.Dataset(X, X[:, :2])
    with pytest.raises(ValueError, match="metric 'quantile' scores each output at the quantile "
                                         "level .* this objective predicts none"):
        gbmo.train({"metric": "pinball", "verbosity": 0}, data, 1, valid_sets=[data])


def test_a_metric_selecting_an_output_twice_is_refused_before_training():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    data = gbmo.Dataset(X, X[:, :2])
    with pytest.raises(ValueError, match=r"metric 'rmse\[1,1\]' selects an output twice"):
        gbmo.train({"metric": "rmse[1, 1]", "verbosity": 0}, data, 1, valid_sets=[data])


def _ranking_reference(y, prediction, k, weight):
    """precision@k and ndcg@k row by row: sort each row's observed labels by
    prediction, best first, and score its first k (all, when it has fewer);
    a row without an observed label is left out."""
    precision, ndcg, weights = [], [], []
    for i, (labels, scores) in enumerate(zip(y, prediction)):
        observed = np.flatnonzero(~np.isnan(labels))
        if not len(observed):
            continue
        ranked = observed[np.argsort(-scores[observed], kind="stable")][:k]
        hits = labels[ranked] == 1
        discount = 1 / np.log2(np.arange(2, len(ranked) + 2))
        ideal = discount[:min(int(np.nansum(labels)), len(ranked))].sum()
        precision.append(hits.sum() / len(ranked))
        ndcg.append((hits * discount).sum() / ideal if ideal else 0.0)
        weights.append(1.0 if weight is None else weight[i])
    return np.average(precision, weights=weights), np.average(ndcg, weights=weights)


@pytest.mark.parametrize("k", [1, 3, 5])
def test_precision_and_ndcg_at_k_of_a_dense_multi_label_target_against_a_row_by_row_reference(k):
    rng = np.random.default_rng(k)
    y = (rng.uniform(size=(200, 4)) < 0.3).astype(float)
    y[rng.uniform(size=y.shape) < 0.1] = np.nan
    y[:5] = np.nan  # rows with no label to rank, left out
    y[5:10, 1:] = np.nan  # rows with one label to rank: precision@k of that one
    prediction = rng.uniform(size=y.shape)
    weight = rng.uniform(0.1, 2.0, 200)
    for w in (None, weight):
        precision, ndcg = _ranking_reference(y, prediction, k, w)
        assert evaluate(f"precision@{k}", y, prediction, w) == (pytest.approx(precision), None)
        assert evaluate(f"ndcg@{k}", y, prediction, w) == (pytest.approx(ndcg), None)


def test_a_multi_label_model_stops_early_on_its_best_precision_at_k():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(1500, 5))
    Y = (X[:, :4] + rng.normal(scale=1.5, size=(1500, 4)) > 0.5).astype(float)
    train = gbmo.Dataset(X[:1000], Y[:1000])
    valid = train.create_valid(X[1000:], Y[1000:])
    booster = gbmo.train({"objective": "sigmoid", "metric": ["ndcg@3", "precision@1"],
                          "learning_rate": 0.3, "verbosity": 0}, train, 300,
                         valid_sets=[valid], callbacks=[gbmo.early_stopping(10, verbose=False)])
    history = booster.evals_result["valid_0"]
    prediction = booster.predict(X[1000:])
    precision = _ranking_reference(Y[1000:], prediction, 1, None)[0]
    ndcg = _ranking_reference(Y[1000:], prediction, 3, None)[1]
    assert history["precision@1"][booster.best_iteration - 1] == pytest.approx(precision)
    assert history["ndcg@3"][booster.best_iteration - 1] == pytest.approx(ndcg)
    # higher is better: the first metric's best round is its maximum
    assert booster.best_iteration == int(np.argmax(history["ndcg@3"])) + 1
    assert booster.current_iteration() < 300


@pytest.mark.parametrize("objective, target", [("softmax", "classes"), ("mse", "values")])
def test_ranking_metrics_need_a_multi_label_target(objective, target):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 3, 60) if target == "classes" else rng.normal(size=(60, 2))
    data = gbmo.Dataset(X, y)
    with pytest.raises(ValueError, match="'precision@3' ranks each row's outputs against its "
                                         "0/1 labels"):
        gbmo.train({"objective": objective, "metric": "precision@3", "verbosity": 0}, data, 1,
                   valid_sets=[data])


def test_catboost_s_metric_names_are_gbmo_s_where_they_mean_the_same():
    from gbmo.metrics import canonical_metric, is_known

    for catboost, gbmo_name in [("RMSE", "rmse"), ("MAE", "mae"), ("Logloss", "logloss"),
                                ("MultiClass", "logloss"), ("MultiLogloss", "logloss"),
                                ("AUC", "auc"), ("HammingLoss", "error"), ("R2", "r2"),
                                ("Quantile", "quantile"), ("Accuracy", "accuracy")]:
        assert canonical_metric(catboost) == gbmo_name
        assert is_known(catboost)  # an alias is known, as training takes it
    assert is_known("l2") and is_known("binary_logloss[0]")
    # MultiRMSE pools every output's squared errors: not gbmo's rmse, so not taken
    assert not is_known("MultiRMSE")
    rng = np.random.default_rng(1)
    X = rng.normal(size=(100, 3))
    Y = (X[:, :2] > 0).astype(float)
    data = gbmo.Dataset(X, Y)
    booster = gbmo.train({"objective": "sigmoid", "metric": ["MultiLogloss", "HammingLoss"],
                          "verbosity": 0}, data, 3, valid_sets=[data])
    probability = booster.predict(X)
    history = booster.evals_result["training"]
    assert history["logloss"][-1] == pytest.approx(np.mean(
        -(Y * np.log(probability) + (1 - Y) * np.log(1 - probability))))
    assert history["error"][-1] == pytest.approx(np.mean((probability > 0.5) != Y))


# -- deviance metrics of count and positive targets ---------------------------
def _deviance_data(seed=0):
    rng = np.random.default_rng(seed)
    mean = rng.uniform(0.2, 5.0, size=(200, 3))
    y = rng.poisson(mean).astype(float) + 0.5 * (rng.random((200, 3)) < 0.3)  # some non-integers
    y[5, 1] = np.nan  # a missing label
    weight = rng.uniform(0.1, 2.0, 200)
    return y, mean * rng.uniform(0.7, 1.3, size=mean.shape), weight


def _weighted_columns(values, weight):
    """A row-by-row reference: each column's weighted mean over its observed rows."""
    out = []
    for j in range(values.shape[1]):
        seen = ~np.isnan(values[:, j])
        w = np.ones(len(values)) if weight is None else weight
        out.append(np.sum(w[seen] * values[seen, j]) / np.sum(w[seen]))
    return np.array(out)


@pytest.mark.parametrize("name, element", [
    ("poisson", lambda y, p: p - y * np.log(p)),
    ("gamma", lambda y, p: y / p + np.log(p)),
    ("gamma_deviance", lambda y, p: 2 * (y / p - np.log(y / p) - 1)),
    ("tweedie@1.3", lambda y, p: -y * p ** -0.3 / -0.3 + p ** 0.7 / 0.7),
    ("tweedie-nloglik@1.3", lambda y, p: -y * p ** -0.3 / -0.3 + p ** 0.7 / 0.7),
])
def test_deviance_metrics_are_lightgbm_s_per_output_with_weights_and_missing_labels(name,
                                                                                     element):
    y, prediction, weight = _deviance_data()
    if name.startswith("gamma"):
        y = y + 0.1  # positive targets
    for w in (None, weight):
        value, per_output = evaluate(gbmo.metrics.canonical_metric(name), y, prediction, w)
        expected = _weighted_columns(element(y, prediction), w)
        np.testing.assert_allclose(per_output, expected, rtol=1e-12)
        assert value == pytest.approx(expected.mean(), rel=1e-12)


def test_scikit_learn_s_mean_gamma_deviance_is_gamma_deviance():
    from sklearn.metrics import mean_gamma_deviance

    rng = np.random.default_rng(3)
    y, prediction = rng.uniform(0.1, 4, 300), rng.uniform(0.1, 4, 300)
    value, _ = evaluate("gamma_deviance", y[:, None], prediction[:, None])
    assert value == pytest.approx(mean_gamma_deviance(y, prediction), rel=1e-12)


def test_deviance_metrics_train_and_stop_early_under_lightgbm_s_and_xgboost_s_names():
    """LightGBM's poisson, gamma and tweedie objectives default to these
    metrics (gbmo-losses' did to rmse), and 'tweedie' scores at the
    objective's variance power."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(1500, 4))
    mean = np.exp(0.5 * X[:, 0])
    counts, amounts = rng.poisson(mean).astype(float), mean * rng.gamma(2.0, 0.5, size=1500)
    for objective, y, metric in (("poisson", counts, "poisson"), ("gamma", amounts, "gamma"),
                                 ("tweedie", counts, "tweedie@1.2")):
        train = gbmo.Dataset(X[:1000], y[:1000])
        params = {"objective": objective, "verbosity": -1}
        if objective == "tweedie":
            params["tweedie_variance_power"] = 1.2
        booster = gbmo.train(params, train, 200, valid_sets=[train.create_valid(X[1000:],
                                                                                 y[1000:])],
                             callbacks=[gbmo.early_stopping(5, verbose=False)])
        history = booster.evals_result["valid_0"]
        assert list(history) == [metric]
        assert history[metric][booster.best_iteration - 1] < history[metric][0]
        assert booster.best_iteration < booster.current_iteration()
    positive = counts + 1.0  # the gamma metrics take values > 0
    for name, canonical in (("Poisson", "poisson"), ("gamma-nloglik", "gamma"),
                            ("gamma-deviance", "gamma_deviance"),
                            ("tweedie-nloglik@1.5", "tweedie@1.5"), ("Tweedie", "tweedie@1.5")):
        train = gbmo.Dataset(X, positive)
        booster = gbmo.train({"objective": "poisson", "metric": name, "verbosity": -1}, train,
                             2, valid_sets=[train])
        assert list(booster.evals_result["training"]) == [canonical]


@pytest.mark.parametrize("metric, y_kind, message", [
    ("poisson", "negative", r"metric 'poisson' scores predicted means of counts >= 0, but the "
                            r"targets hold others"),
    ("gamma", "zero", "metric 'gamma' scores predicted means of values > 0"),
    ("tweedie@2.5", "counts", r"the variance power must be in \(1, 2\)"),
    ("gamma_deviance", "classes", "compares values with targets, but this objective's targets "
                                  "are class indices"),
])
def test_deviance_metrics_refuse_targets_they_cannot_score_before_training(metric, y_kind,
                                                                             message):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(100, 3))
    y = {"negative": X[:, 0], "zero": np.abs(np.round(X[:, 0])),
         "counts": np.abs(np.round(X[:, 0])), "classes": (X[:, 0] > 0).astype(int)}[y_kind]
    data = gbmo.Dataset(X, y)
    with pytest.raises(ValueError, match=message):
        gbmo.train({"metric": metric, "objective": "softmax" if y_kind == "classes" else "mse"},
                   data, 1)
    assert data.bin_mapper is None


def test_a_multi_task_loss_s_tweedie_task_scores_at_its_own_power():
    loss = gbmo.MultiTaskLoss([("tweedie", [0], {"tweedie_variance_power": 1.2}), ("mse", [1]),
                               ("tweedie", [2], {"tweedie_variance_power": 1.0})])
    assert loss.default_metric == ["tweedie@1.2[0]", "rmse[1]", "poisson[2]"]
