"""multiclassova (LightGBM's one-vs-all multi-class): one sigmoid per class on
class-index targets."""
import numpy as np
import pytest
from scipy.special import expit, logit

import gbmo
from gbmo.sklearn import GBMOClassifier

rng = np.random.default_rng(11)
X = rng.normal(size=(400, 5))
y = np.digitize(X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=400), [-0.7, 0.0, 0.7])
PARAMS = {"objective": "multiclassova", "max_leaves": 7, "verbosity": 0, "n_threads": 2}


@pytest.mark.parametrize("extra", [{}, {"is_unbalance": True}, {"scale_pos_weight": 2.5}])
@pytest.mark.parametrize("weighted", [False, True])
def test_each_class_is_the_sigmoid_model_of_its_indicator(extra, weighted):
    """With a tree per output, class j's scores are those of a sigmoid model
    trained on y == j alone: the same init score, gradients and trees (to the
    last bits of the weighted class rate, summed over 4 columns or 1)."""
    weight = rng.uniform(0.5, 2.0, len(y)) if weighted else None
    params = {**PARAMS, **extra, "tree_mode": "single_output"}
    one_vs_all = gbmo.train(params, gbmo.Dataset(X, y, weight=weight), 8)
    raw = one_vs_all.predict(X, raw_score=True)
    assert raw.shape == (len(y), 4)
    for j in range(4):
        alone = gbmo.train({**params, "objective": "sigmoid"},
                           gbmo.Dataset(X, (y == j).astype(float), weight=weight), 8)
        np.testing.assert_allclose(raw[:, j], alone.predict(X, raw_score=True), rtol=1e-12,
                                   atol=1e-12)


def test_starts_from_each_class_log_odds_and_predicts_independent_sigmoids():
    model = gbmo.train(PARAMS, gbmo.Dataset(X, y), 30)
    rates = np.bincount(y, minlength=4) / len(y)
    np.testing.assert_allclose(model.init_score, logit(rates))
    probabilities = model.predict(X)
    np.testing.assert_allclose(probabilities, expit(model.predict(X, raw_score=True)))
    assert not np.allclose(probabilities.sum(axis=1), 1.0)  # no softmax: each class alone
    assert np.mean(probabilities.argmax(axis=1) == y) > 0.9


def test_num_class_adds_classes_absent_from_the_labels():
    model = gbmo.train({**PARAMS, "num_class": 6}, gbmo.Dataset(X, y), 3)
    assert model.n_outputs == 6
    assert np.all(model.predict(X)[:, 4:] < 1e-6)


def test_logloss_and_error_score_the_true_class_probability():
    """As LightGBM's multi_logloss on multiclassova: -log of the true class's
    own sigmoid, unnormalised."""
    history = {}
    valid = gbmo.Dataset(X[:100], y[:100])
    model = gbmo.train({**PARAMS, "metric": ["logloss", "error"]}, gbmo.Dataset(X, y), 5,
                       valid_sets=[valid], callbacks=[gbmo.record_evaluation(history)])
    p = model.predict(X[:100])
    assert history["valid_0"]["logloss"][-1] == pytest.approx(
        -np.mean(np.log(p[np.arange(100), y[:100]])))
    assert history["valid_0"]["error"][-1] == pytest.approx(np.mean(p.argmax(axis=1) != y[:100]))


def test_a_saved_model_keeps_the_objective_and_its_class_weights():
    model = gbmo.train({**PARAMS, "is_unbalance": True}, gbmo.Dataset(X, y), 4)
    loaded = gbmo.Booster(model_str=model.model_to_string())
    assert loaded.params["objective"] == "multiclassova"
    assert loaded.loss.is_unbalance
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


def test_cv_stratifies_its_folds_by_default():
    """Every fold keeps the class mix, as for softmax."""
    stratified = gbmo.cv(PARAMS, gbmo.Dataset(X, y), 2, nfold=4, return_cvbooster=True)
    by_hand = gbmo.cv(PARAMS, gbmo.Dataset(X, y), 2, nfold=4, stratified=True,
                      return_cvbooster=True)
    np.testing.assert_array_equal(stratified["valid logloss-mean"],
                                  by_hand["valid logloss-mean"])


@pytest.mark.parametrize("target, message", [
    (np.column_stack([y, y]), "takes a 1-D array of class indices"),
    (y + 0.5, "integer class indices"),
    (y - 1, "class indices must be >= 0"),
])
def test_targets_that_are_no_class_indices_are_refused(target, message):
    with pytest.raises(ValueError, match=message):
        gbmo.train(PARAMS, gbmo.Dataset(X, target), 1)


def test_labels_beyond_num_class_are_refused():
    with pytest.raises(ValueError, match="out of range for num_class=3"):
        gbmo.train({**PARAMS, "num_class": 3}, gbmo.Dataset(X, y), 1)


def test_positive_weights_name_the_objectives_that_take_them():
    with pytest.raises(ValueError, match="'sigmoid'.*'multiclassova'; the objective is 'mse'"):
        gbmo.train({"objective": "mse", "scale_pos_weight": 2.0, "verbosity": 0},
                   gbmo.Dataset(X, X[:, 0]), 1)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_classifier_fits_a_sigmoid_per_class(n_classes):
    """Two classes too keep two outputs; predict_proba is the sigmoids as
    LightGBM's classifier gives them, predict their argmax."""
    labels = np.array(["low", "mid", "high"])[np.minimum(y, n_classes - 1)]
    model = GBMOClassifier(objective="ova", n_estimators=10, max_leaves=7).fit(X, labels)
    raw = model.predict(X, raw_score=True)
    assert model.booster_.params["objective"] == "multiclassova"
    assert raw.shape == (len(y), n_classes)
    np.testing.assert_allclose(model.predict_proba(X), expit(raw))
    np.testing.assert_array_equal(model.predict(X), model.classes_[raw.argmax(axis=1)])
    assert model.score(X, labels) > 0.85


def test_the_command_line_trains_it_and_names_the_class_columns(tmp_path):
    from gbmo.cli import main

    data = tmp_path / "train.csv"
    np.savetxt(data, np.column_stack([X[:, :2], y]), delimiter=",", header="x0,x1,label",
               comments="")
    model, predictions = tmp_path / "model.json", tmp_path / "p.csv"
    assert main(["train", "--data", str(data), "--target", "label", "--objective", "ova",
                 "--rounds", "3", "--output", str(model)]) == 0
    assert main(["predict", "--model", str(model), "--data", str(data),
                 "--output", str(predictions)]) == 0
    with open(predictions) as f:
        assert f.readline().strip().split(",") == [f"class_{j}" for j in range(4)]
    booster = gbmo.Booster(model_file=str(model))
    assert booster.loss.name == "multiclassova"
    np.testing.assert_allclose(np.loadtxt(predictions, delimiter=",", skiprows=1),
                               booster.predict(X[:, :2]))


@pytest.mark.parametrize("objective", ["softmax", "multiclassova"])
def test_rows_without_the_last_class_refit_continue_and_fold_with_every_class(objective):
    """Without num_class, the model's classes are the training labels' (saved
    with it): a refit, a continued run or a cv fold on rows that lack the last
    class still trains every class's output."""
    labels = np.digitize(X[:, 0], [-1.0, 0.0, 1.5])
    params = {**PARAMS, "objective": objective}
    model = gbmo.train(params, gbmo.Dataset(X, labels), 3)
    assert gbmo.Booster(model_str=model.model_to_string()).loss.num_class == 4
    common = labels < 3
    assert model.refit(X[common], labels[common]).n_outputs == 4
    continued = gbmo.train(params, gbmo.Dataset(X[common], labels[common]), 2, init_model=model)
    assert (continued.n_outputs, continued.num_trees) == (4, 5)
    folds = [(np.flatnonzero(common), np.flatnonzero(~common)),
             (np.flatnonzero(labels != 0), np.flatnonzero(labels == 0))]
    boosters = gbmo.cv(params, gbmo.Dataset(X, labels), 2, folds=folds,
                       return_boosters=True)["boosters"]
    assert [b.n_outputs for b in boosters] == [4, 4]


def test_num_class_in_objective_params_is_refused_by_name():
    with pytest.raises(ValueError, match="objective_params may not give 'num_class'"):
        gbmo.train({**PARAMS, "objective_params": {"num_class": 4}}, gbmo.Dataset(X, y), 1)


@pytest.mark.parametrize("objective_params, error, message", [
    ({"is_unbalance": True, "scale_pos_weight": 2.0}, ValueError, "give is_unbalance or"),
    ({"scale_pos_weight": -1.0}, ValueError, "scale_pos_weight must be a finite number"),
    ({"is_unbalance": "yes"}, TypeError, "is_unbalance must be True or False"),
])
def test_bad_positive_weights_name_the_objective(objective_params, error, message):
    with pytest.raises(error, match=f"objective 'multiclassova': {message}"):
        gbmo.train({**PARAMS, "objective_params": objective_params}, gbmo.Dataset(X, y), 1)


def test_the_classifier_on_a_multi_label_y_fits_its_sigmoid_per_column():
    """One-vs-all on an indicator matrix is the sigmoid per column that such a
    y trains anyway."""
    indicator = (X[:, :3] > 0).astype(int)
    one_vs_all = GBMOClassifier(objective="ova", n_estimators=5).fit(X, indicator)
    default = GBMOClassifier(n_estimators=5).fit(X, indicator)
    assert one_vs_all.booster_.loss.name == "sigmoid"
    np.testing.assert_array_equal(one_vs_all.predict_proba(X), default.predict_proba(X))


@pytest.mark.parametrize("make", [gbmo.losses.SoftmaxCrossEntropy,
                                  gbmo.losses.OneVsAllCrossEntropy])
def test_a_loss_instance_keeps_its_class_count_too_and_is_left_alone(make):
    """As by name: a copy of the given loss learns the count, the given one
    does not change."""
    labels = np.digitize(X[:, 0], [-1.0, 0.0, 1.5])
    common = labels < 3
    loss = make()
    params = {**PARAMS, "objective": loss}
    model = gbmo.train(params, gbmo.Dataset(X, labels), 2)
    assert loss.num_class is None and model.loss.num_class == 4
    assert model.refit(X[common], labels[common]).n_outputs == 4
    assert gbmo.train(params, gbmo.Dataset(X[common], labels[common]), 1,
                      init_model=model).n_outputs == 4
    boosters = gbmo.cv(params, gbmo.Dataset(X, labels), 1,
                       folds=[(np.flatnonzero(common), np.flatnonzero(~common))],
                       return_boosters=True)["boosters"]
    assert boosters[0].n_outputs == 4


def test_a_model_saved_without_its_class_count_learns_it_on_loading():
    """Files of earlier versions hold num_class null for counted classes."""
    import json

    labels = np.digitize(X[:, 0], [-1.0, 0.0, 1.5])
    document = json.loads(gbmo.train({**PARAMS, "objective": "softmax"},
                                     gbmo.Dataset(X, labels), 2).model_to_string())
    document["num_class"] = None
    loaded = gbmo.Booster(model_str=json.dumps(document))
    common = labels < 3
    assert loaded.refit(X[common], labels[common]).n_outputs == 4
