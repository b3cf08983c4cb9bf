"""Callbacks: early stopping, evaluation logging and recording."""
import copy

import numpy as np
import pytest

import gbmo


def _noisy_regression(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(800, 5))
    y = X[:, 0] + rng.normal(scale=2.0, size=800)  # mostly noise: overfits quickly
    train = gbmo.Dataset(X[:400], y[:400])
    return train, train.create_valid(X[400:], y[400:]), X[400:], y[400:]


PARAMS = {"max_leaves": 31, "min_samples_leaf": 2, "learning_rate": 0.3, "verbosity": 0}


def test_early_stopping_stops_at_the_best_round_and_predicts_with_it():
    train, valid, X_valid, y_valid = _noisy_regression()
    booster = gbmo.train(PARAMS, train, 500, valid_sets=[valid],
                         callbacks=[gbmo.early_stopping(10, verbose=False)])
    history = booster.evals_result["valid_0"]["rmse"]
    best = int(np.argmin(history)) + 1
    assert booster.best_iteration == best
    assert len(history) == best + 10 < 500
    assert booster.best_score == {"valid_0": {"rmse": pytest.approx(min(history))}}
    np.testing.assert_array_equal(booster.predict(X_valid),
                                  booster.predict(X_valid, num_iteration=best))
    rmse = np.sqrt(np.mean((booster.predict(X_valid) - y_valid) ** 2))
    assert rmse == pytest.approx(min(history), rel=1e-9)


def test_early_stopping_survives_save_and_load(tmp_path):
    train, valid, X_valid, _ = _noisy_regression(1)
    booster = gbmo.train(PARAMS, train, 500, valid_sets=[valid],
                         callbacks=[gbmo.early_stopping(5, verbose=False)])
    booster.save_model(tmp_path / "m.json")
    loaded = gbmo.Booster(model_file=tmp_path / "m.json")
    assert loaded.best_iteration == booster.best_iteration
    np.testing.assert_array_equal(loaded.predict(X_valid), booster.predict(X_valid))


def test_min_delta_stops_earlier():
    train, valid, _, _ = _noisy_regression(2)
    plain = gbmo.train(PARAMS, train, 300, valid_sets=[valid],
                       callbacks=[gbmo.early_stopping(10, verbose=False)])
    strict = gbmo.train(PARAMS, train, 300, valid_sets=[valid],
                        callbacks=[gbmo.early_stopping(10, min_delta=0.05, verbose=False)])
    assert strict.num_trees <= plain.num_trees


def test_early_stopping_watches_the_last_validation_set():
    train, valid, _, _ = _noisy_regression(3)
    booster = gbmo.train(PARAMS, train, 300, valid_sets=[train, valid],
                         callbacks=[gbmo.early_stopping(10, verbose=False)])
    training = booster.evals_result["training"]["rmse"]
    assert training[-1] < training[0]  # the training error kept falling
    assert booster.num_trees < 300


def test_early_stopping_needs_a_validation_set():
    train, _, _, _ = _noisy_regression()
    with pytest.raises(ValueError, match="validation set"):
        gbmo.train(PARAMS, train, 5, callbacks=[gbmo.early_stopping(3)])


def test_higher_is_better_metric():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(600, 4))
    y = (X[:, 0] + rng.normal(scale=1.5, size=600) > 0).astype(int)
    train = gbmo.Dataset(X[:300], y[:300])
    valid = train.create_valid(X[300:], y[300:])
    booster = gbmo.train({**PARAMS, "objective": "softmax", "metric": "accuracy"}, train, 300,
                         valid_sets=[valid], callbacks=[gbmo.early_stopping(15, verbose=False)])
    history = booster.evals_result["valid_0"]["accuracy"]
    assert booster.best_iteration == int(np.argmax(history)) + 1


def test_record_and_log_evaluation(capsys):
    train, valid, _, _ = _noisy_regression()
    recorded = {}
    gbmo.train({**PARAMS, "metric": ["rmse", "mae"]}, train, 6, valid_sets=[valid],
               valid_names=["holdout"],
               callbacks=[gbmo.record_evaluation(recorded), gbmo.log_evaluation(3)])
    assert set(recorded["holdout"]) == {"rmse", "mae"}
    assert len(recorded["holdout"]["mae"]) == 6
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split("]")[0] for line in lines] == ["[3", "[6"]
    assert "holdout's rmse" in lines[0] and "holdout's mae" in lines[0]


def test_cv_results_carry_the_folds_spread_and_the_log_shows_it(capsys):
    """As LightGBM's cv: each result is (data, metric, mean, higher is better,
    standard deviation), and log_evaluation prints "mean + stdv" unless
    show_stdv=False."""
    train, _, _, _ = _noisy_regression()
    seen = []
    history = gbmo.cv(PARAMS, train, 3, nfold=3,
                      callbacks=[lambda env: seen.append(env.evaluation_result_list),
                                 gbmo.log_evaluation(1)])
    assert [len(entry) for results in seen for entry in results] == [5, 5, 5]
    assert [results[0][4] for results in seen] == pytest.approx(history["valid rmse-stdv"])
    lines = capsys.readouterr().out.strip().splitlines()
    means, stdvs = history["valid rmse-mean"], history["valid rmse-stdv"]
    assert lines == [f"[{i + 1}]\tvalid's rmse: {m:g} + {s:g}"
                     for i, (m, s) in enumerate(zip(means, stdvs))]
    gbmo.cv(PARAMS, train, 1, nfold=3, callbacks=[gbmo.log_evaluation(1, show_stdv=False)])
    assert capsys.readouterr().out.strip() == f"[1]\tvalid's rmse: {means[0]:g}"


def test_verbosity_logs_every_round_without_log_callback(capsys):
    train, valid, _, _ = _noisy_regression()
    gbmo.train({**PARAMS, "verbosity": 1}, train, 4, valid_sets=[valid])
    assert len(capsys.readouterr().out.strip().splitlines()) == 4


def test_bad_early_stopping_arguments():
    with pytest.raises(ValueError, match="stopping_rounds must be an integer"):
        gbmo.early_stopping(2.5)
    with pytest.raises(ValueError, match="min_delta must be a number >= 0"):
        gbmo.early_stopping(5, min_delta=-1)
    with pytest.raises(ValueError, match="min_delta must be a number >= 0"):
        gbmo.early_stopping(5, min_delta=[0.1, -1])


@pytest.mark.parametrize("stopping_rounds", [0, -1])
def test_early_stopping_without_rounds_is_off_as_in_lightgbm(stopping_rounds):
    train, valid, X_valid, _ = _noisy_regression(4)
    booster = gbmo.train(PARAMS, train, 40, valid_sets=[valid],
                         callbacks=[gbmo.early_stopping(stopping_rounds, verbose=False)])
    assert booster.num_trees == 40 and booster.best_iteration == 0


def test_min_delta_per_metric_applies_each_to_its_metric():
    """A list gives each metric its own margin (mae's alone stops sooner than
    rmse's alone on this data); one value in a list serves every metric."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 5))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(scale=0.5, size=1000)
    train = gbmo.Dataset(X[:500], y[:500])
    valid = train.create_valid(X[500:], y[500:])
    params = {"verbosity": 0, "metric": ["rmse", "mae"], "max_leaves": 7}

    def rounds(min_delta):
        return gbmo.train(params, train, 300, valid_sets=[valid], callbacks=[
            gbmo.early_stopping(10, verbose=False, min_delta=min_delta)]).num_trees

    rmse_only, mae_only, both = rounds([0.01, 0.0]), rounds([0.0, 0.01]), rounds(0.01)
    assert both == min(rmse_only, mae_only) and rmse_only != mae_only
    assert rounds([0.01]) == both and rounds([0.0, 0.0]) == rounds(0.0) > max(rmse_only,
                                                                              mae_only)
    assert rounds([]) == rounds(0.0)  # LightGBM's empty list: no margin
    with pytest.raises(ValueError, match=r"min_delta has 3 values, but 2 metrics are evaluated "
                                         r"\(rmse, mae\): give one value, or one per metric"):
        rounds([0.1, 0.1, 0.1])


def test_early_stopping_that_never_triggers_keeps_the_best_round():
    train, valid, X_valid, _ = _noisy_regression(5)
    booster = gbmo.train(PARAMS, train, 25, valid_sets=[valid],
                         callbacks=[gbmo.early_stopping(1000, verbose=False)])
    history = booster.evals_result["valid_0"]["rmse"]
    assert len(history) == 25
    assert booster.best_iteration == int(np.argmin(history)) + 1
    np.testing.assert_array_equal(booster.predict(X_valid),
                                  booster.predict(X_valid, num_iteration=booster.best_iteration))


def test_early_stopping_accepts_numpy_integers():
    train, valid, _, _ = _noisy_regression(6)
    booster = gbmo.train(PARAMS, train, 300, valid_sets=[valid],
                         callbacks=[gbmo.early_stopping(np.int64(5), verbose=False)])
    assert booster.num_trees < 300


def _progress_data():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    data = gbmo.Dataset(X, X[:, 0])
    return data


def test_plain_progress_line_counts_rounds_and_shows_metrics():
    import io

    stream = io.StringIO()
    data = _progress_data()
    gbmo.train({"verbosity": 0}, data, 3, valid_sets=[data],
               callbacks=[gbmo.progress_bar(stream=stream, use_tqdm=False)])
    lines = stream.getvalue().split("\r")[1:]
    assert [line.split("]")[0] for line in lines] == ["[1/3", "[2/3", "[3/3"]
    assert "training rmse" in lines[-1] and stream.getvalue().endswith("\n")


def test_tqdm_progress_bar_is_closed_when_early_stopping_ends_training():
    import io

    pytest.importorskip("tqdm")  # in the test extra
    stream = io.StringIO()
    data = _progress_data()
    booster = gbmo.train({"verbosity": 0, "learning_rate": 1.0, "min_samples_leaf": 1}, data,
                         200, valid_sets=[data.create_valid(data.X, data.Y)],
                         callbacks=[gbmo.progress_bar(stream=stream),
                                    gbmo.early_stopping(1, verbose=False)])
    rounds = booster.current_iteration()
    assert rounds < 200
    # tqdm's bar ("| 17/200 [00:00<...]"), not the plain line ("[17/200] ...") that
    # stands in when tqdm cannot be imported (as tqdm.auto, which tqdm < 4.27 lacks)
    assert f"| {rounds}/200 [" in stream.getvalue()
    assert stream.getvalue().endswith("\n")  # tqdm.close() ends the line


def test_progress_bar_is_closed_when_a_callback_interrupts_training():
    import io

    stream = io.StringIO()

    def interrupt(env):
        if env.iteration == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        gbmo.train({"verbosity": 0}, _progress_data(), 10,
                   callbacks=[gbmo.progress_bar(stream=stream, use_tqdm=False), interrupt])
    # a plain callback (order 0) runs before the bar's update of the same round
    assert stream.getvalue().endswith("[1/10] \n")


def test_cv_closes_the_progress_bar():
    import io

    stream = io.StringIO()
    gbmo.cv({"verbosity": 0}, _progress_data(), 4, nfold=2,
            callbacks=[gbmo.progress_bar(stream=stream, use_tqdm=False)])
    assert "[4/4] valid rmse" in stream.getvalue() and stream.getvalue().endswith("\n")


# -- LightGBM's training controls in params ------------------------------------------
@pytest.mark.parametrize("name", ["num_iterations", "n_estimators", "num_boost_round"])
def test_num_iterations_in_params_replaces_num_boost_round(name):
    train, _, _, _ = _noisy_regression()
    assert gbmo.train({**PARAMS, name: 7}, train, 100).num_trees == 7
    assert len(gbmo.cv({**PARAMS, name: 4}, train, 100, nfold=2)["valid rmse-mean"]) == 4


def test_early_stopping_round_in_params_is_the_early_stopping_callback():
    train, valid, _, _ = _noisy_regression(4)
    by_callback = gbmo.train(PARAMS, train, 500, valid_sets=[valid],
                             callbacks=[gbmo.early_stopping(10, min_delta=0.01, verbose=False)])
    by_params = gbmo.train({**PARAMS, "early_stopping_rounds": 10,
                            "early_stopping_min_delta": 0.01}, train, 500, valid_sets=[valid])
    assert by_params.num_trees == by_callback.num_trees < 500
    assert by_params.best_iteration == by_callback.best_iteration
    unstopped = gbmo.train({**PARAMS, "early_stopping_round": 0}, train, 60, valid_sets=[valid])
    assert unstopped.num_trees == 60
    history = gbmo.cv({**PARAMS, "early_stopping": 5}, train, 500, nfold=2)["valid rmse-mean"]
    assert len(history) < 500 and int(np.argmin(history)) == len(history) - 1


def test_first_metric_only_in_params_watches_the_first_metric():
    train, valid, _, _ = _noisy_regression(5)
    params = {**PARAMS, "metric": ["rmse", "mae"], "early_stopping_round": 5}
    first = gbmo.train({**params, "first_metric_only": True}, train, 500, valid_sets=[valid])
    history = first.evals_result["valid_0"]["rmse"]
    assert first.best_iteration == int(np.argmin(history)) + 1
    assert len(history) == first.best_iteration + 5


@pytest.mark.parametrize("params, message", [
    ({"num_iterations": 5, "n_estimators": 6}, "'num_iterations' is given twice"),
    ({"num_iterations": -1}, "num_boost_round must be"),
    ({"early_stopping_round": 2.5}, "early_stopping_round must be an integer"),
    ({"first_metric_only": True}, r"first_metric_only=True in params acts only beside "
                                   r"early_stopping_round in params, .* give it there: "
                                   r"early_stopping\(rounds, first_metric_only=True\)"),
    ({"early_stopping_min_delta": 0.1}, r"early_stopping_min_delta=0.1 in params acts only"),
    ({"early_stopping_round": 3}, "no score to watch: it needs a validation set"),
])
def test_bad_training_controls_are_refused(params, message):
    train, _, _, _ = _noisy_regression()
    with pytest.raises(ValueError, match=message):
        gbmo.train({**PARAMS, **params}, train, 10)


def test_training_controls_given_as_text_are_read_as_the_command_line_gives_them():
    """Found by a LightGBM user's audit: gbmo train --param first_metric_only=false
    acted as true (the text 'false' is truthy) and was refused without
    early_stopping_round."""
    train, valid, _, _ = _noisy_regression(5)
    params = {**PARAMS, "metric": ["rmse", "mae"]}
    for first_only in (False, True):
        as_bool = gbmo.train({**params, "early_stopping_round": 5,
                              "first_metric_only": first_only}, train, 500, valid_sets=[valid])
        as_text = gbmo.train({**params, "early_stopping_round": "5",
                              "first_metric_only": str(first_only).lower(),
                              "early_stopping_min_delta": "0"}, train, 500, valid_sets=[valid])
        assert as_text.best_iteration == as_bool.best_iteration
        assert as_text.current_iteration() == as_bool.current_iteration()
    assert gbmo.train({**PARAMS, "first_metric_only": "false", "num_iterations": "3",
                       "early_stopping_min_delta": "0.0"}, train, 10).current_iteration() == 3
    with pytest.raises(ValueError, match=r"early_stopping_min_delta=0.5 in params acts only .* "
                                         r"early_stopping\(rounds, min_delta=0.5\)"):
        gbmo.train({**PARAMS, "early_stopping_min_delta": "0.5"}, train, 10)
    with pytest.raises(ValueError, match="first_metric_only must be True or False "
                                         r"\('true' / 'false' as text\), got 'yes'"):
        gbmo.train({**params, "early_stopping_round": 5, "first_metric_only": "yes"}, train, 10,
                   valid_sets=[valid])


def test_defaults_of_the_early_stopping_controls_pass_without_early_stopping_round():
    """A LightGBM params dict may hold them; LightGBM's train ignores them."""
    train, _, _, _ = _noisy_regression()
    booster = gbmo.train({**PARAMS, "first_metric_only": False,
                          "early_stopping_min_delta": 0.0}, train, 3)
    assert booster.current_iteration() == 3


def test_early_stopping_never_watches_the_training_set_wherever_it_is_listed():
    """Found by a LightGBM user's code: valid_sets=[valid, train] watched the
    training set, last, whose error keeps falling, so it never stopped."""
    train, valid, _, _ = _noisy_regression(6)
    stopping = [gbmo.early_stopping(10, verbose=False)]
    valid_first = gbmo.train(PARAMS, train, 500, valid_sets=[valid, train], callbacks=stopping)
    valid_only = gbmo.train(PARAMS, train, 500, valid_sets=[valid], callbacks=stopping)
    assert valid_first.num_trees == valid_only.num_trees < 500
    assert valid_first.best_iteration == valid_only.best_iteration
    named = gbmo.train(PARAMS, train, 500, valid_sets=[valid, train],
                       valid_names=["holdout", "fit"], callbacks=stopping)
    assert named.best_iteration == valid_only.best_iteration
    with pytest.warns(UserWarning, match="early stopping is off") as record:
        alone = gbmo.train(PARAMS, train, 40, valid_sets=[train], callbacks=stopping)
    assert record[0].filename == __file__  # the caller's line, not gbmo's
    assert alone.num_trees == 40


def test_one_validation_set_and_name_as_lightgbm_takes_them():
    train, valid, _, _ = _noisy_regression(7)
    booster = gbmo.train(PARAMS, train, 5, valid_sets=valid, valid_names="holdout")
    assert list(booster.evals_result) == ["holdout"]


def test_best_score_holds_every_set_and_metric_at_the_best_round_as_lightgbm_s():
    train, valid, _, _ = _noisy_regression(8)
    booster = gbmo.train({**PARAMS, "metric": ["rmse", "mae"]}, train, 500,
                         valid_sets=[train, valid],
                         callbacks=[gbmo.early_stopping(10, first_metric_only=True,
                                                        verbose=False)])
    best = booster.best_iteration - 1
    assert booster.best_score == {
        name: {metric: booster.evals_result[name][metric][best] for metric in ("rmse", "mae")}
        for name in ("training", "valid_1")}
    last = gbmo.train(PARAMS, train, 7, valid_sets=[valid])
    assert last.best_score == {"valid_0": {"rmse": last.evals_result["valid_0"]["rmse"][-1]}}
    continued = gbmo.train(PARAMS, train, 30, valid_sets=[valid], init_model=last,
                           callbacks=[gbmo.early_stopping(5, verbose=False)])
    assert continued.best_score["valid_0"]["rmse"] == min(
        continued.evals_result["valid_0"]["rmse"])


def test_lightgbm_s_cv_metrics_train_keep_training_booster_and_boosting_goss():
    train, valid, X_valid, _ = _noisy_regression(9)
    history = gbmo.cv({**PARAMS, "metric": "rmse"}, train, 3, nfold=2, metrics=["mae"])
    assert list(history) == ["valid mae-mean", "valid mae-stdv"]
    kept = gbmo.train(PARAMS, train, 3, keep_training_booster=True)
    np.testing.assert_array_equal(kept.predict(X_valid),
                                  gbmo.train(PARAMS, train, 3).predict(X_valid))
    old_name = gbmo.train({**PARAMS, "boosting": "goss"}, train, 5)
    new_name = gbmo.train({**PARAMS, "data_sample_strategy": "goss"}, train, 5)
    assert old_name.params["data_sample_strategy"] == "goss"
    np.testing.assert_array_equal(old_name.predict(X_valid), new_name.predict(X_valid))


def test_early_stopping_takes_lightgbm_s_positional_order():
    """(stopping_rounds, first_metric_only, verbose, min_delta): a positional
    verbose=False was taken as min_delta=0 (and True as min_delta=1, which
    stopped at round 1)."""
    import inspect

    assert list(inspect.signature(gbmo.early_stopping).parameters) == [
        "stopping_rounds", "first_metric_only", "verbose", "min_delta"]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=600)
    train = gbmo.Dataset(X[:400], y[:400])
    valid = train.create_valid(X[400:], y[400:])
    positional = gbmo.train({"verbosity": 0}, train, 60, valid_sets=valid,
                            callbacks=[gbmo.early_stopping(3, False, True)])
    assert positional.best_iteration > 30  # min_delta 1.0 would stop at round 1


@pytest.mark.parametrize("runner", ["train", "cv"])
def test_a_callback_s_early_stop_names_its_best_round_from_zero_as_lightgbm(runner):
    """EarlyStopException carries env.iteration of the best round (0-based),
    and the model keeps that round: LightGBM code raising it at
    env.iteration == 9 keeps 10 rounds."""
    def stop_after_ten(env):
        if env.iteration == 9:
            raise gbmo.EarlyStopException(env.iteration, env.evaluation_result_list)

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    data = gbmo.Dataset(X, X[:, 0])
    if runner == "train":
        booster = gbmo.train({"verbosity": 0}, data, 50, valid_sets=data.create_valid(X, X[:, 0]),
                             callbacks=[stop_after_ten])
        assert booster.best_iteration == 10 and booster.current_iteration() == 10
    else:
        results = gbmo.cv({"verbosity": 0}, data, 50, nfold=3, callbacks=[stop_after_ten],
                          return_boosters=True)
        assert len(results["valid rmse-mean"]) == 10
        assert {booster.best_iteration for booster in results["boosters"]} == {10}


def _first_stall(values, patience):
    """(stopping round, best round), 0-based, of one record under early
    stopping with this patience, or None when it never stalls."""
    best = 0
    for round_, value in enumerate(values):
        if value < values[best]:
            best = round_
        if round_ - best >= patience:
            return round_, best
    return None


def test_early_stopping_watches_every_validation_set_and_the_first_to_stall_decides():
    """As LightGBM: it watched only the last validation set, so a set that
    had stopped improving long before was ignored."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(1400, 4))
    y = X[:, 0] + np.sin(3 * X[:, 1])
    train = gbmo.Dataset(X[:800], y[:800] + 0.3 * rng.normal(size=800))
    noisy = train.create_valid(X[800:1100], y[800:1100] + 2.0 * rng.normal(size=300))
    clean = train.create_valid(X[1100:], y[1100:])
    booster = gbmo.train({"verbosity": 0, "learning_rate": 0.3}, train, 300,
                         valid_sets=[noisy, train, clean], valid_names=["noisy", "train", "clean"],
                         callbacks=[gbmo.early_stopping(5, verbose=False)])
    stalls = {name: _first_stall(booster.evals_result[name]["rmse"], 5)
              for name in ("noisy", "clean")}
    first = min((s for s in stalls.values() if s), key=lambda s: s[0])
    assert stalls["noisy"] == first  # the noisy set stalls first, and decides
    assert stalls["clean"] is None or stalls["clean"][0] > first[0]
    assert booster.current_iteration() == first[0] + 1
    assert booster.best_iteration == first[1] + 1


def _learning_rate_schedule():
    """(X, its Dataset, a rate per round of a 4-round run)."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 3))
    return X, gbmo.Dataset(X, X[:, 0] + 0.1 * rng.normal(size=400)), [0.5, 0.3, 0.1, 0.05]


def test_reset_parameter_changes_the_learning_rate_every_round_as_lightgbm():
    """A learning-rate schedule: each round's trees are those of a run at
    that round's rate (a constant rate's first tree, then the next ...)."""
    X, data, rates = _learning_rate_schedule()
    scheduled = gbmo.train({"verbosity": 0}, data, 4,
                           callbacks=[gbmo.reset_parameter(learning_rate=rates)])
    by_function = gbmo.train({"verbosity": 0}, data, 4, callbacks=[
        gbmo.reset_parameter(eta=lambda round_: rates[round_])])  # an alias, a function
    np.testing.assert_array_equal(scheduled.predict(X), by_function.predict(X))
    step_by_step = None
    for rate in rates:  # the same rounds as continued training, one rate at a time
        step_by_step = gbmo.train({"verbosity": 0, "learning_rate": rate}, data, 1,
                                  init_model=step_by_step)
    np.testing.assert_allclose(scheduled.predict(X), step_by_step.predict(X), rtol=1e-12)
    constant = gbmo.train({"verbosity": 0, "learning_rate": 0.5}, data, 4)
    assert not np.allclose(scheduled.predict(X), constant.predict(X))
    folds = gbmo.cv({"verbosity": 0}, data, 4, nfold=3, return_boosters=True,
                    callbacks=[gbmo.reset_parameter(learning_rate=rates)])
    for booster in folds["boosters"]:
        first_leaves = booster.trees[0].leaf_values
        assert np.abs(first_leaves).max() > 5 * np.abs(booster.trees[3].leaf_values).max()


def test_lightgbm_s_own_reset_parameter_and_log_evaluation_run_as_gbmo_s(capsys):
    """LightGBM's reset_parameter calls env.model.reset_parameter on its own
    Booster, else on a CVBooster's boosters: AttributeError on gbmo's; its
    log_evaluation beside the default logging printed every round twice."""
    import lightgbm

    X, data, rates = _learning_rate_schedule()
    ours = gbmo.train({"verbosity": 0}, data, 4,
                      callbacks=[gbmo.reset_parameter(learning_rate=rates)])
    theirs = gbmo.train({"verbosity": 0}, data, 4,
                        callbacks=[lightgbm.reset_parameter(learning_rate=rates)])
    np.testing.assert_array_equal(theirs.predict(X), ours.predict(X))
    folds = gbmo.cv({"verbosity": 0}, data, 4, nfold=3, return_boosters=True,
                    callbacks=[lightgbm.reset_parameter(learning_rate=lambda i: rates[i])])
    assert all(np.abs(b.trees[0].leaf_values).max() > 5 * np.abs(b.trees[3].leaf_values).max()
               for b in folds["boosters"])
    capsys.readouterr()
    gbmo.train({"verbosity": 1}, data, 2, valid_sets=[data],
               callbacks=[lightgbm.log_evaluation(1)])
    assert capsys.readouterr().out.count("[2]\t") == 1


@pytest.mark.parametrize("growth", ["bestfirst", "depthwise"])
def test_reset_parameter_changes_the_tree_size_every_round_as_lightgbm(growth):
    """num_leaves and max_depth, which LightGBM's reset_parameter changes
    too: each tree grows to its round's bound (the data have splits to spare)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5))
    Y = np.sin(2 * X[:, :2]) + 0.1 * rng.normal(size=(2000, 2))
    booster = gbmo.train({"verbosity": 0, "growth": growth, "max_depth": 6},
                         gbmo.Dataset(X, Y), 4, callbacks=[gbmo.reset_parameter(
                             num_leaves=[2, 3, 5, 16], max_depth=[6, 6, 2, 3])])
    # round 3: five leaves, but two levels hold four; round 4: three levels, eight
    assert [tree.n_leaves for tree in booster.trees] == [2, 3, 4, 8]


@pytest.mark.parametrize("kwargs, message", [
    ({"max_bins": [63]}, "reset_parameter cannot change max_bins"),
    ({"no_such": [1]}, r"cannot change no_such \(unknown\)"),
    ({"learning_rate": 0.1}, "must be a list .* or a function of the round, got float"),
])
def test_reset_parameter_refuses_what_it_cannot_change(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gbmo.reset_parameter(**kwargs)


def test_reset_parameter_checks_the_list_length_and_the_values():
    X = np.random.default_rng(0).normal(size=(100, 2))
    data = gbmo.Dataset(X, X[:, 0])
    with pytest.raises(ValueError, match="lists 2 values for 3 rounds"):
        gbmo.train({"verbosity": 0}, data, 3, callbacks=[gbmo.reset_parameter(
            learning_rate=[0.1, 0.2])])
    with pytest.raises(ValueError, match="'subsample'"):
        gbmo.train({"verbosity": 0}, data, 3, callbacks=[gbmo.reset_parameter(
            bagging_fraction=lambda i: 1.5)])


def test_reset_parameter_can_start_bagging_and_is_refused_where_no_bagging_is_taken():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 3))
    data = gbmo.Dataset(X, X[:, 0] + 0.1 * rng.normal(size=300))
    reset = gbmo.train({"verbosity": 0}, data, 5,
                       callbacks=[gbmo.reset_parameter(bagging_fraction=[0.5] * 5)])
    from_start = gbmo.train({"verbosity": 0, "subsample": 0.5}, data, 5)
    np.testing.assert_array_equal(reset.predict(X), from_start.predict(X))
    with pytest.raises(ValueError, match="takes no bagging"):
        gbmo.train({"verbosity": 0, "data_sample_strategy": "goss"}, data, 3,
                   callbacks=[gbmo.reset_parameter(subsample=[0.5] * 3)])


def test_early_stopping_is_off_when_the_training_set_is_the_only_one():
    """As LightGBM: it watched the training error then, which always improves
    or stalls by chance, not the model's error on new rows."""
    X = np.random.default_rng(6).normal(size=(200, 3))
    data = gbmo.Dataset(X, X[:, 0])
    with pytest.warns(UserWarning, match="early stopping is off: the training set is the only"):
        booster = gbmo.train({"verbosity": 0, "learning_rate": 1.0, "min_gain": 50.0}, data, 30,
                             valid_sets=[data], callbacks=[gbmo.early_stopping(3, verbose=False)])
    assert booster.current_iteration() == 30 and booster.best_iteration == 0


def test_record_evaluation_keeps_the_per_output_values_as_evals_result():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    Y = X[:, :2] * [1.0, 3.0] + 0.1 * rng.normal(size=(300, 2))
    train = gbmo.Dataset(X[:200], Y[:200])
    recorded = {}
    booster = gbmo.train({"verbosity": 0, "metric": ["rmse", "mae"]}, train, 3,
                         valid_sets=[train, train.create_valid(X[200:], Y[200:])],
                         callbacks=[gbmo.record_evaluation(recorded)])
    assert recorded == booster.evals_result
    per_output = np.array(recorded["valid_1"]["rmse_per_output"])
    assert per_output.shape == (3, 2) and np.all(per_output[:, 1] > per_output[:, 0])
    # cv's records are the folds' means and deviations, as LightGBM's
    gbmo.cv({"verbosity": 0}, train, 2, nfold=2, callbacks=[gbmo.record_evaluation(recorded)])
    assert set(recorded["valid"]) == {"rmse-mean", "rmse-stdv"}


def test_a_reused_record_evaluation_starts_again_with_each_run():
    """One callback list serving several runs (a search's fit parameter)
    records each run alone, as LightGBM's: not the last run's values with
    this one's after them, nor its sets' names."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=300)
    train = gbmo.Dataset(X[:200], y[:200])
    valid = train.create_valid(X[200:], y[200:])
    recorded = {}
    callbacks = [gbmo.record_evaluation(recorded)]
    gbmo.train({"verbosity": 0}, train, 5, valid_sets=[train], callbacks=callbacks)
    booster = gbmo.train({"verbosity": 0}, train, 7, valid_sets=[valid], callbacks=callbacks)
    assert recorded == booster.evals_result and len(recorded["valid_0"]["rmse"]) == 7
    for _ in range(2):
        results = gbmo.cv({"verbosity": 0}, train, 4, nfold=2, callbacks=callbacks)
    assert recorded["valid"]["rmse-mean"] == results["valid rmse-mean"]
    assert len(recorded["valid"]["rmse-mean"]) == 4


def _lightgbm_style_early_stopping(patience):
    """A stand-in for lightgbm.early_stopping (LightGBM is not a test
    dependency): an _EarlyStoppingCallback of a module 'lightgbm.callback'
    that raises its own EarlyStopException(best_iteration, best_score)."""
    class EarlyStopException(Exception):
        def __init__(self, best_iteration, best_score):
            super().__init__()
            self.best_iteration = best_iteration
            self.best_score = best_score

    class _EarlyStoppingCallback:
        order = 30

        def __init__(self):
            self.best, self.best_iteration = np.inf, 0

        def __call__(self, env):
            score = env.evaluation_result_list[0][2]
            if score < self.best:
                self.best, self.best_iteration = score, env.iteration
            elif env.iteration - self.best_iteration >= patience:
                raise EarlyStopException(self.best_iteration, env.evaluation_result_list)

    _EarlyStoppingCallback.__module__ = EarlyStopException.__module__ = "lightgbm.callback"
    return _EarlyStoppingCallback()


def test_another_librarys_early_stop_ends_training_as_gbmos_does():
    """LightGBM's early_stopping runs on gbmo's CallbackEnv; its exception
    escaped train and lost the model."""
    train, valid, X_valid, _ = _noisy_regression()
    ours = gbmo.train(PARAMS, train, 500, valid_sets=[valid],
                      callbacks=[gbmo.early_stopping(10, verbose=False)])
    theirs = gbmo.train(PARAMS, train, 500, valid_sets=[valid],
                        callbacks=[_lightgbm_style_early_stopping(10)])
    assert 1 < theirs.best_iteration == ours.best_iteration < theirs.current_iteration() < 500
    np.testing.assert_array_equal(theirs.predict(X_valid), ours.predict(X_valid))
    model = gbmo.GBMORegressor(**PARAMS, n_estimators=500).fit(
        train.get_data(), train.get_label(), eval_set=[(X_valid, valid.get_label())],
        callbacks=[_lightgbm_style_early_stopping(10)])
    assert model.best_iteration_ == ours.best_iteration


def test_another_librarys_early_stopping_is_refused_with_dart():
    train, valid, _, _ = _noisy_regression()
    with pytest.raises(ValueError, match="boosting='dart' takes no early stopping"):
        gbmo.train({**PARAMS, "boosting": "dart"}, train, 20, valid_sets=[valid],
                   callbacks=[_lightgbm_style_early_stopping(5)])


def test_other_exceptions_of_a_callback_are_raised():
    class EarlyStopException(Exception):  # the name, but no best_iteration
        pass

    def callback(env):
        raise EarlyStopException("not a stop")

    train, valid, _, _ = _noisy_regression()
    with pytest.raises(EarlyStopException, match="not a stop"):
        gbmo.train(PARAMS, train, 5, valid_sets=[valid], callbacks=[callback])


class _TrainingCallback:
    """An XGBoost TrainingCallback written as one (xgboost is not needed):
    records its calls, ends training after round stop_after (epoch) or
    before round stop_before, and sets the learning rate after each round."""

    def __init__(self, stop_after=None, stop_before=None, rates=None):
        self.calls, self.logs = [], []
        self.stop_after, self.stop_before, self.rates = stop_after, stop_before, rates

    def before_training(self, model):
        self.calls.append(("before_training", model.num_boosted_rounds()))
        self.model = model
        return model

    def before_iteration(self, model, epoch, evals_log):
        self.calls.append(("before", epoch))
        return epoch == self.stop_before

    def after_iteration(self, model, epoch, evals_log):
        self.calls.append(("after", epoch))
        self.logs.append({data: {metric: list(values) for metric, values in metrics.items()}
                          for data, metrics in evals_log.items()})
        if self.rates is not None:
            model.set_param("learning_rate", self.rates[epoch])
        return epoch == self.stop_after

    def after_training(self, model):
        self.calls.append(("after_training", model.num_boosted_rounds()))
        return model


def test_an_xgboost_training_callback_runs_its_hooks_around_the_rounds():
    train, valid, X_valid, _ = _noisy_regression()
    callback = _TrainingCallback(stop_after=3)
    booster = gbmo.train(PARAMS, train, 50, valid_sets=[valid], callbacks=[callback])
    assert callback.calls == [("before_training", 0), ("before", 0), ("after", 0),
                              ("before", 1), ("after", 1), ("before", 2), ("after", 2),
                              ("before", 3), ("after", 3), ("after_training", 4)]
    # evals_log: XGBoost's {data: {metric: [a value a round]}}, the run's so far
    rmse = booster.evals_result["valid_0"]["rmse"]
    assert [log["valid_0"]["rmse"] for log in callback.logs] == [rmse[:k] for k in range(1, 5)]
    # ending training keeps every round done, as XGBoost's
    assert booster.current_iteration() == 4
    np.testing.assert_array_equal(booster.predict(X_valid),
                                  gbmo.train(PARAMS, train, 4).predict(X_valid))
    before = _TrainingCallback(stop_before=2)
    assert gbmo.train(PARAMS, train, 50, callbacks=[before]).current_iteration() == 2
    assert before.calls[-2:] == [("before", 2), ("after_training", 2)]
    # epochs count this run's rounds, as XGBoost's, after a continued model's
    continued = _TrainingCallback(stop_after=1)
    start = gbmo.train(PARAMS, train, 3)
    assert gbmo.train(PARAMS, train, 50, init_model=start,
                      callbacks=[continued]).current_iteration() == 5
    assert continued.calls[0] == ("before_training", 3) and continued.calls[-1] == (
        "after_training", 5)


def test_an_xgboost_training_callback_s_set_param_schedules_the_rounds_as_reset_parameter():
    train, valid, X_valid, _ = _noisy_regression()
    rates = [0.5, 0.2, 0.1, 0.05, 0.05]
    scheduled = gbmo.train(PARAMS, train, 5, callbacks=[_TrainingCallback(rates=rates)])
    # set after round e, the rate is round e + 1's (XGBoost's LearningRateScheduler)
    expected = gbmo.train(PARAMS, train, 5, callbacks=[gbmo.reset_parameter(
        learning_rate=[PARAMS["learning_rate"]] + rates[:4])])
    np.testing.assert_array_equal(scheduled.predict(X_valid), expected.predict(X_valid))


def test_an_xgboost_training_callback_in_cv_sees_the_folds_means_and_stops_them():
    train = _noisy_regression()[0]
    callback = _TrainingCallback(stop_after=2)
    result = gbmo.cv(PARAMS, train, 30, nfold=3, callbacks=[callback], return_cvbooster=True)
    assert len(result["valid rmse-mean"]) == 3
    assert result["cvbooster"].best_iteration == 3
    assert callback.calls[0] == ("before_training", 0)
    assert callback.calls[-1] == ("after_training", 3)
    assert callback.logs[-1]["valid"]["rmse"] == list(zip(result["valid rmse-mean"],
                                                          result["valid rmse-stdv"]))
    assert copy.copy(callback.model).num_boosted_rounds() == 3  # the folds as one, copied
    with pytest.raises(TypeError, match="callbacks must be callables taking a CallbackEnv .*or "
                                        "XGBoost TrainingCallback objects, got builtins.int"):
        gbmo.train(PARAMS, train, 1, callbacks=[3])


def test_an_xgboost_training_callback_s_set_param_reaches_every_fold_in_cv():
    train = _noisy_regression()[0]
    rates = [0.5, 0.2, 0.1, 0.05, 0.05]
    scheduled = gbmo.cv(PARAMS, train, 5, nfold=3, callbacks=[_TrainingCallback(rates=rates)])
    expected = gbmo.cv(PARAMS, train, 5, nfold=3, callbacks=[gbmo.reset_parameter(
        learning_rate=[PARAMS["learning_rate"]] + rates[:4])])
    assert scheduled == expected


class _Failing(_TrainingCallback):
    def after_iteration(self, model, epoch, evals_log):
        super().after_iteration(model, epoch, evals_log)
        raise RuntimeError("the callback's own error")


def test_after_training_runs_when_training_ends_without_an_error_as_xgboost_s():
    train, valid, _, _ = _noisy_regression()
    failing = _Failing()
    with pytest.raises(RuntimeError, match="the callback's own error"):
        gbmo.train(PARAMS, train, 5, callbacks=[failing])
    assert failing.calls == [("before_training", 0), ("before", 0), ("after", 0)]
    idle = _TrainingCallback()
    gbmo.train(PARAMS, train, 0, callbacks=[idle])
    assert idle.calls == [("before_training", 0), ("after_training", 0)]
    # the round early stopping ends is seen too
    watching = _TrainingCallback()
    booster = gbmo.train(PARAMS, train, 500, valid_sets=[valid], callbacks=[
        watching, gbmo.early_stopping(3, verbose=False)])
    assert watching.calls[-2:] == [("after", booster.current_iteration() - 1),
                                   ("after_training", booster.current_iteration())]
    assert booster.best_iteration == booster.current_iteration() - 3


def test_an_early_stopping_that_hands_back_its_best_model_is_refused_by_name():
    class SaveBest(_TrainingCallback):
        save_best = True

    with pytest.raises(ValueError, match="XGBoost's EarlyStopping\\(save_best=True\\) hands back "
                                         "a model cut at its best round, which gbmo does not "
                                         "take; give save_best=False, or gbmo.early_stopping"):
        gbmo.train(PARAMS, _noisy_regression()[0], 5, callbacks=[SaveBest()])


def test_early_stopping_with_nothing_evaluated_says_what_to_give():
    """Found by an audit: cv with an objective function (no default metric)
    was told to give valid_sets, which cv does not take."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    y = X[:, 0]
    with pytest.raises(ValueError, match=r"early stopping has no score to watch: .*an objective "
                                         r"function has no default metric: give metric= or "
                                         r"feval="):
        gbmo.cv({"verbosity": -1, "objective": lambda y_true, raw: (raw - y_true,
                                                                     np.ones_like(raw))},
                gbmo.Dataset(X, y), 5, nfold=2, callbacks=[gbmo.early_stopping(2)])
