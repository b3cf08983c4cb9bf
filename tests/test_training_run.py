"""LightGBM's manual training loop: Booster(params, train_set), update(),
add_valid(), eval(), eval_train(), eval_valid(), and keep_training_booster."""
import pickle

import numpy as np
import pytest
from scipy import sparse

import gbmo

RNG = np.random.default_rng(12)
X = RNG.normal(size=(1200, 5))
Y = np.c_[X[:, 0] + np.sin(X[:, 1]), X[:, 2] ** 2] + 0.1 * RNG.normal(size=(1200, 2))
# bagging every second round draws from the run's random state: the rounds
# must follow on from each other exactly for the models to agree
PARAMS = {"verbosity": -1, "seed": 5, "subsample": 0.7, "subsample_freq": 2, "max_leaves": 8}


def _sets():
    return gbmo.Dataset(X[:900], Y[:900]), gbmo.Dataset(X[900:], Y[900:])


def _rmse(booster, rows):
    return float(np.mean(np.sqrt(np.mean((booster.predict(X[rows]) - Y[rows]) ** 2, axis=0))))


def test_updates_grow_the_model_train_grows():
    train_set, valid_set = _sets()
    booster = gbmo.Booster(PARAMS, train_set)  # LightGBM's positional order
    booster.add_valid(valid_set, "valid")
    for _ in range(12):
        assert booster.update() is False
    trained = gbmo.train(PARAMS, train_set, 12, valid_sets=[valid_set], valid_names=["valid"])
    np.testing.assert_array_equal(booster.predict(X), trained.predict(X))
    assert booster.current_iteration() == 12
    assert booster.evals_result["valid"]["rmse"] == trained.evals_result["valid"]["rmse"]


def test_keep_training_booster_continues_the_same_run():
    train_set, _ = _sets()
    kept = gbmo.train(PARAMS, train_set, 7, keep_training_booster=True)
    for _ in range(5):
        kept.update()
    np.testing.assert_array_equal(kept.predict(X),
                                  gbmo.train(PARAMS, train_set, 12).predict(X))
    with pytest.raises(ValueError, match="keep_training_booster=True"):
        gbmo.train(PARAMS, train_set, 2).update()


def test_evaluations_score_the_model_now():
    train_set, valid_set = _sets()
    booster = gbmo.Booster({**PARAMS, "metric": ["rmse", "mae"]}, train_set)
    booster.add_valid(valid_set, "valid")
    for _ in range(6):
        booster.update()
    (name, metric, value, higher), _ = booster.eval_train()
    assert (name, metric, higher) == ("training", "rmse", False)
    assert value == pytest.approx(_rmse(booster, slice(0, 900)))
    assert booster.eval_valid()[0][2] == pytest.approx(_rmse(booster, slice(900, None)))
    assert booster.eval_valid()[0][:2] == ("valid", "rmse")
    # the same set under another name; the training set under the name given
    assert booster.eval(valid_set, "again")[0] == ("again", *booster.eval_valid()[0][1:])
    assert booster.eval(train_set, "mine")[0] == ("mine", *booster.eval_train()[0][1:])
    assert booster.set_train_data_name("fit") is booster
    assert booster.eval_train()[0] == ("fit", "rmse", value, False)
    with pytest.raises(ValueError, match="must be a non-empty string"):
        booster.set_train_data_name("")

    def worst(preds, data):
        return "worst", float(np.max(np.abs(preds - data.get_label()))), False

    scored = booster.eval_valid(feval=worst)
    assert scored[-1][:2] == ("valid", "worst")
    assert scored[-1][2] == pytest.approx(np.max(np.abs(booster.predict(X[900:]) - Y[900:])))


def test_data_evaluated_late_starts_from_the_model_so_far():
    """eval() of new data after some rounds adds it as a validation set whose
    scores include every tree already grown, and keeps it up to date."""
    train_set, _ = _sets()
    booster = gbmo.Booster(PARAMS, train_set)
    for _ in range(5):
        booster.update()
    late = gbmo.Dataset(X[1000:], Y[1000:])
    assert booster.eval(late, "late")[0][2] == pytest.approx(_rmse(booster, slice(1000, None)))
    booster.update()
    assert [v[0] for v in booster.eval_valid()] == ["late"]
    assert booster.eval_valid()[0][2] == pytest.approx(_rmse(booster, slice(1000, None)))
    assert len(booster.evals_result["late"]["rmse"]) == 1  # recorded from its first round


def test_update_says_when_the_trees_cannot_split():
    booster = gbmo.Booster({"verbosity": -1}, gbmo.Dataset(X, np.ones(len(X))))
    assert booster.update() is True
    assert booster.trees[-1].n_leaves == 1


def test_a_booster_without_its_run_refuses_the_loop():
    train_set, valid_set = _sets()
    booster = gbmo.Booster(PARAMS, train_set)
    booster.update()
    for lost in (pickle.loads(pickle.dumps(booster)),
                 gbmo.Booster(model_str=booster.model_to_string())):
        with pytest.raises(ValueError, match="holds none; continue it with gbmo.train"):
            lost.update()
        with pytest.raises(ValueError, match="eval_valid\\(\\) needs the training run"):
            lost.eval_valid()
    booster.free_dataset()
    with pytest.raises(ValueError, match="update\\(\\) needs the training run"):
        booster.update()
    assert booster.current_iteration() == 1  # the model stays


def test_update_with_fobj_takes_that_round_s_gradients_from_it_as_lightgbm():
    """LightGBM's update(fobj=): the function's gradients grow the round, the
    objective still scores it. Half mse's gradients with a hessian of 1 are
    the mse model's of half the learning rate; update refused fobj."""
    train_set, valid_set = _sets()
    booster = gbmo.Booster(PARAMS, train_set)
    booster.add_valid(valid_set, "valid")
    for _ in range(3):
        booster.update(fobj=lambda preds, train_data: (0.5 * (preds - train_data.get_label()),
                                                       np.ones_like(preds)))
    halved = gbmo.train({**PARAMS, "learning_rate": 0.05}, _sets()[0], 3,
                        valid_sets=[_sets()[1]], valid_names=["valid"])
    np.testing.assert_allclose(booster.predict(X), halved.predict(X), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(booster.evals_result["valid"]["rmse"],
                               halved.evals_result["valid"]["rmse"], rtol=1e-6)
    booster.update()  # the objective's own gradients again
    assert booster.current_iteration() == 4


def test_the_loop_refuses_what_it_cannot_do():
    train_set, valid_set = _sets()
    booster = gbmo.Booster(PARAMS, train_set)
    with pytest.raises(ValueError, match="trains on the Booster's own train_set"):
        booster.update(train_set=valid_set)
    with pytest.raises(ValueError, match=r"update\(\)'s fobj must be a function"):
        booster.update(fobj="mse")
    with pytest.raises(TypeError, match="add_valid takes a gbmo.Dataset, got ndarray"):
        booster.add_valid(X, "valid")
    with pytest.raises(ValueError, match="has 3 features, the training set 5"):
        booster.add_valid(gbmo.Dataset(X[:, :3], Y), "valid")
    booster.add_valid(valid_set, "valid")
    with pytest.raises(ValueError, match="already evaluated as 'valid'"):
        booster.add_valid(valid_set, "valid")
    with pytest.raises(ValueError, match="not both"):
        gbmo.Booster(PARAMS, train_set, model_str=booster.model_to_string())
    with pytest.raises(TypeError, match="train_set must be a gbmo.Dataset"):
        gbmo.Booster(PARAMS, X)
    labels = sparse.csr_matrix((Y > 0.5).astype(np.float64))
    with pytest.raises(ValueError, match="a sparse Y trains with gbmo.train or gbmo.cv"):
        gbmo.Booster({"verbosity": -1}, gbmo.Dataset(X, labels))
    assert booster.current_iteration() == 0


def test_a_kept_run_keeps_its_binning_when_another_run_bins_the_data_again():
    train_set, _ = _sets()
    kept = gbmo.train(PARAMS, train_set, 3, keep_training_booster=True)
    gbmo.train({**PARAMS, "max_bins": 7}, train_set, 2)  # bins train_set again, coarser
    for _ in range(3):
        kept.update()
    fresh = gbmo.train(PARAMS, gbmo.Dataset(X[:900], Y[:900]), 6)
    np.testing.assert_array_equal(kept.predict(X), fresh.predict(X))
    assert kept.eval_train()[0][2] == pytest.approx(_rmse(kept, slice(0, 900)))


def test_the_training_set_keeps_the_name_train_gave_it():
    train_set, valid_set = _sets()
    booster = gbmo.train(PARAMS, train_set, 2, valid_sets=[train_set, valid_set],
                         valid_names=["mytrain", "myvalid"], keep_training_booster=True)
    assert booster.eval_train()[0][0] == "mytrain"
    assert [score[0] for score in booster.eval_valid()] == ["myvalid"]


def test_reset_parameter_changes_the_rounds_to_come():
    train_set, _ = _sets()
    booster = gbmo.Booster(PARAMS, train_set)
    booster.update()
    booster.reset_parameter({"eta": 0.5, "lambda_l2": 3.0})
    booster.update()
    scheduled = gbmo.train(PARAMS, train_set, 2, callbacks=[gbmo.reset_parameter(
        learning_rate=[0.1, 0.5], lambda_l2=[1.0, 3.0])])
    np.testing.assert_array_equal(booster.predict(X), scheduled.predict(X))
    with pytest.raises(ValueError, match="Booster.reset_parameter cannot change max_bins"):
        booster.reset_parameter({"max_bins": 7})


def test_constructor_mistakes_are_named():
    with pytest.raises(TypeError, match="second argument is train_set.*model_file=path"):
        gbmo.Booster(None, "model.json")
    with pytest.raises(ValueError, match="holds no model"):
        gbmo.Booster({"verbosity": -1}).predict(X)
    labels = sparse.csr_matrix((Y > 0.5).astype(np.float64))
    with pytest.raises(ValueError, match="sparse Y does not take keep_training_booster"):
        gbmo.train({"verbosity": -1, "top_k": 1}, gbmo.Dataset(X, labels), 2,
                   keep_training_booster=True)


def test_rollback_takes_the_last_round_back():
    train_set, valid_set = _sets()
    booster = gbmo.Booster(PARAMS, train_set)
    booster.add_valid(valid_set, "valid")
    for _ in range(5):
        booster.update()
    four = gbmo.train(PARAMS, train_set, 4)
    assert booster.rollback_one_iter() is booster
    assert booster.current_iteration() == 4
    np.testing.assert_array_equal(booster.predict(X), four.predict(X))
    assert len(booster.evals_result["valid"]["rmse"]) == 4
    # the raw scores went back too: the evaluations score the 4-round model
    assert booster.eval_train()[0][2] == pytest.approx(_rmse(four, slice(0, 900)), rel=1e-12)
    assert booster.eval_valid()[0][2] == pytest.approx(_rmse(four, slice(900, None)), rel=1e-12)
    with pytest.raises(ValueError, match="had a round taken back"):
        booster.feature_importance("gain", per_output=True)
    booster.update()
    assert booster.current_iteration() == 5
    assert len(booster.evals_result["valid"]["rmse"]) == 5
    for _ in range(5):
        booster.rollback_one_iter()
    with pytest.raises(ValueError, match="this run's rounds only"):
        booster.rollback_one_iter()
    dart = gbmo.Booster({**PARAMS, "boosting": "dart"}, train_set)
    dart.update()
    with pytest.raises(ValueError, match="cannot take back a DART or random forest round"):
        dart.rollback_one_iter()


def test_rollback_past_the_best_round_leaves_a_model_that_saves_and_pickles():
    train_set, valid_set = _sets()
    booster = gbmo.train(PARAMS, train_set, 200, valid_sets=[valid_set],
                         callbacks=[gbmo.early_stopping(3, verbose=False)],
                         keep_training_booster=True)
    best = booster.best_iteration
    assert 0 < best < booster.current_iteration()
    while booster.current_iteration() > best:
        booster.rollback_one_iter()
    assert booster.best_iteration == best  # the best round is still there
    booster.rollback_one_iter()
    assert (booster.best_iteration, booster.best_score) == (0, {})
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(booster)).predict(X),
                                  booster.predict(X))
    booster.best_iteration = 99  # set by hand beyond the trees: saved without it
    assert gbmo.Booster(model_str=booster.model_to_string()).best_iteration == 0


def test_rollback_takes_back_every_tree_of_a_single_output_round():
    train_set, _ = _sets()
    params = {**PARAMS, "tree_mode": "single_output"}
    booster = gbmo.Booster(params, train_set)
    for _ in range(3):
        booster.update()
    booster.rollback_one_iter()
    assert len(booster.trees) == 4  # two outputs, two rounds
    np.testing.assert_array_equal(booster.predict(X),
                                  gbmo.train(params, train_set, 2).predict(X))


@pytest.mark.parametrize("which", ["train", "valid"])
@pytest.mark.parametrize("setter, value", [("set_label", lambda y: y * 100),
                                           ("set_weight", lambda y: np.ones(len(y))),
                                           ("set_init_score", lambda y: np.ones(len(y)))])
def test_a_dataset_field_set_again_during_a_run_is_refused(which, setter, value):
    """Found by an audit: relabelling a Booster's train_set between update()
    calls left the run on the old labels, and eval_train scored against
    them, without a word."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0]
    train = gbmo.Dataset(X[:200], y[:200])
    valid = train.create_valid(X[200:], y[200:])
    booster = gbmo.Booster({"verbosity": -1}, train)
    booster.add_valid(valid, "valid")
    booster.update()
    dataset, name = (train, "the training set") if which == "train" else (valid, "validation "
                                                                                  "set 'valid'")
    getattr(dataset, setter)(value(dataset.get_label()))
    field = setter[len("set_"):]
    message = f"{name}'s {field} was set after this run started"
    with pytest.raises(ValueError, match=message):
        booster.update()
    with pytest.raises(ValueError, match=message):
        booster.eval_valid()
