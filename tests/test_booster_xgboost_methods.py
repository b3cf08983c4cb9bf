"""XGBoost's Booster names: predict's iteration_range and output_margin,
get_score, num_boosted_rounds, inplace_predict, copy, load_model, set_param
and the rest."""
import numpy as np
import pytest

import gbmo

RNG = np.random.default_rng(29)
X = RNG.normal(size=(300, 5))
Y = np.c_[X[:, 0] + X[:, 1], X[:, 1] - X[:, 2]]


@pytest.fixture(scope="module")
def booster():
    return gbmo.train({"verbosity": 0, "max_leaves": 6, "objective": "mse"},
                      gbmo.Dataset(X, Y, feature_name=list("abcde")), 6)


def test_iteration_range_is_the_rounds_begin_to_end_and_output_margin_the_raw_scores(booster):
    np.testing.assert_array_equal(booster.predict(X, iteration_range=(0, 3)),
                                  booster.predict(X, num_iteration=3))
    np.testing.assert_array_equal(booster.predict(X, iteration_range=(2, 5)),
                                  booster.predict(X, start_iteration=2, num_iteration=3))
    np.testing.assert_array_equal(booster.predict(X, iteration_range=(0, 0)), booster.predict(X))
    np.testing.assert_array_equal(booster.predict(X, output_margin=True),
                                  booster.predict(X, raw_score=True))
    with pytest.raises(ValueError, match="give the rounds once"):
        booster.predict(X, iteration_range=(0, 3), num_iteration=2)
    for bad in ((3, 1), (1.5, 3)):
        with pytest.raises(ValueError, match="iteration_range must be \\(begin, end\\), "
                                             "integers"):
            booster.predict(X, iteration_range=bad)


def test_get_score_is_xgboost_s_importance_of_the_features_splits_use(booster):
    splits = booster.feature_importance("split")
    total = booster.feature_importance("gain")
    used = [name for name, count in zip("abcde", splits) if count > 0]
    assert 0 < len(used) < 5  # e and others unused: left out, as XGBoost leaves them
    weight = booster.get_score()
    assert list(weight) == used
    assert weight == {name: float(splits["abcde".index(name)]) for name in used}
    gain, total_gain = booster.get_score("gain"), booster.get_score("total_gain")
    for name in used:
        j = "abcde".index(name)
        assert total_gain[name] == pytest.approx(total[j])
        assert gain[name] == pytest.approx(total[j] / splits[j])  # XGBoost's gain: the average
    with pytest.raises(ValueError, match="importance_type 'cover' is not allowed"):
        booster.get_score("cover")


def test_num_boosted_rounds_counts_the_rounds(booster):
    assert booster.num_boosted_rounds() == booster.current_iteration() == 6


def test_inplace_predict_is_predict_with_xgboost_s_keywords(booster):
    np.testing.assert_array_equal(booster.inplace_predict(X), booster.predict(X))
    np.testing.assert_array_equal(booster.inplace_predict(X, iteration_range=(1, 4),
                                                          predict_type="margin"),
                                  booster.predict(X, start_iteration=1, num_iteration=3,
                                                  raw_score=True))
    one = gbmo.train({"verbosity": 0, "max_leaves": 4}, gbmo.Dataset(X, Y[:, 0]), 3)
    assert one.inplace_predict(X).shape == (300,)
    np.testing.assert_array_equal(one.inplace_predict(X, strict_shape=True),
                                  one.predict(X)[:, None])
    for missing in (np.nan, np.float32("nan"), None):
        np.testing.assert_array_equal(booster.inplace_predict(X, missing=missing),
                                      booster.predict(X))
    for keywords, message in [({"predict_type": "leaf"}, "predict_type 'leaf' is not allowed"),
                              ({"missing": -999.0}, "missing=-999.0 is not taken: gbmo reads "
                                                    "NaN as the missing value"),
                              ({"base_margin": np.zeros(300)}, "base_margin is not taken")]:
        with pytest.raises(ValueError, match=message):
            booster.inplace_predict(X, **keywords)


def test_copy_is_independent_and_load_model_reads_a_saved_file(tmp_path):
    booster = gbmo.train({"verbosity": 0, "max_leaves": 6, "n_threads": 1}, gbmo.Dataset(X, Y), 3)
    booster.set_attr(owner="me")
    twin = booster.copy()
    assert twin is not booster and twin.attributes() == {"owner": "me"}
    assert twin.params == booster.params and twin.params["n_threads"] == 1
    twin.set_leaf_output(0, 0, np.array([5.0, 5.0]))
    assert not np.array_equal(twin.predict(X), booster.predict(X))
    booster.save_model(tmp_path / "model.json")
    loaded = gbmo.Booster(model_str=twin.model_to_string()).load_model(tmp_path / "model.json")
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    assert booster.num_features() == 5 and booster.get_fscore() == booster.get_score("weight")
    with pytest.raises(ValueError, match="fmap"):
        booster.get_fscore("features.txt")


def test_a_model_with_numpy_numbers_in_its_parameters_saves_them_as_numbers(tmp_path):
    booster = gbmo.train({"verbosity": 0, "max_leaves": np.int64(6),
                          "learning_rate": np.float32(0.25)}, gbmo.Dataset(X, Y), 2)
    booster.save_model(tmp_path / "model.json")
    loaded = gbmo.Booster(model_file=tmp_path / "model.json")
    assert loaded.params["max_leaves"] == 6 and loaded.params["learning_rate"] == 0.25
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


def test_set_param_resets_the_rounds_to_come_as_reset_parameter():
    data = gbmo.Dataset(X, Y)
    run = gbmo.Booster({"verbosity": 0, "max_leaves": 4, "learning_rate": 0.1}, data)
    twin = gbmo.Booster({"verbosity": 0, "max_leaves": 4, "learning_rate": 0.1}, data)
    run.set_param("learning_rate", 0.5)
    twin.reset_parameter({"learning_rate": 0.5})
    run.update()
    twin.update()
    np.testing.assert_array_equal(run.predict(X), twin.predict(X))
    for form in ({"eta": 0.05}, [("learning_rate", 0.2)]):
        run.set_param(form)
        twin.reset_parameter({"learning_rate": dict(form).popitem()[1]})
        run.update()
        twin.update()
        np.testing.assert_array_equal(run.predict(X), twin.predict(X))
    with pytest.raises(ValueError, match="max_bins"):
        run.set_param("max_bins", 63)


def test_set_param_sets_predict_s_threads_on_any_booster_and_names_itself_otherwise(booster):
    model = gbmo.Booster(model_str=booster.model_to_string())
    assert "n_threads" not in model.params
    model.set_param({"nthread": 1})
    assert model.params["n_threads"] == 1
    np.testing.assert_array_equal(model.predict(X), booster.predict(X))
    with pytest.raises(ValueError, match=r"set_param\(\) needs the training run"):
        model.set_param({"nthread": 2, "eta": 0.3})
    assert model.params["n_threads"] == 1  # nothing set when a value is refused
    with pytest.raises(ValueError, match="thread count is given more than once"):
        model.set_param({"nthread": 1, "n_jobs": 2})


def test_xgboost_s_contribution_keywords_name_gbmo_s_layout(booster):
    with pytest.raises(TypeError, match=r"predict\(\) takes no 'pred_contribs': give "
                                        r"pred_contrib=True, whose array for several outputs is "
                                        r"\(n, features \+ 1, outputs\): XGBoost's .* is its "
                                        r"\.transpose\(0, 2, 1\)"):
        booster.predict(X, pred_contribs=True)
    with pytest.raises(TypeError, match="takes no 'pred_interactions': give pred_contrib=True"):
        booster.predict(X, pred_interactions=True)


def test_xgboost_s_dump_model_to_a_file_and_rounds_that_are_no_integers_are_named(booster,
                                                                                tmp_path):
    for fout in ("dump.txt", tmp_path / "dump.txt"):
        with pytest.raises(TypeError, match="dump_model returns the model as a dict, as "
                                            "LightGBM's; it takes no file .*give "
                                            r"save_model\(path\)"):
            booster.dump_model(fout)
    for rounds in ("2", 2.0, True):
        with pytest.raises(ValueError, match=f"num_iteration must be an integer or None, got "
                                             f"{rounds!r}"):
            booster.predict(X, num_iteration=rounds)
    np.testing.assert_array_equal(booster.predict(X, num_iteration=np.int64(2)),
                                  booster.predict(X, num_iteration=2))


def _round_contributions(model):
    """Each round's addition to the raw scores of X, from predict's prefixes."""
    prefixes = [np.broadcast_to(model.init_score, (len(X), model.n_outputs))]
    prefixes += [model.predict(X, num_iteration=k, raw_score=True).reshape(len(X), -1)
                 for k in range(1, model.current_iteration() + 1)]
    return np.diff(np.stack(prefixes), axis=0)


@pytest.mark.parametrize("params", [{}, {"tree_mode": "single_output"},
                                    {"boosting": "rf", "subsample": 0.7}])
def test_a_slice_is_a_booster_of_those_rounds_as_xgboost_s(params):
    model = gbmo.train({"verbosity": 0, "max_leaves": 6, **params}, gbmo.Dataset(X, Y), 8)
    part = model[2:6]
    assert part.current_iteration() == 4 and part.num_trees() == 4 * model.trees_per_round
    np.testing.assert_allclose(part.predict(X, raw_score=True),
                               model.predict(X, start_iteration=2, num_iteration=4,
                                             raw_score=True), rtol=1e-12, atol=1e-12)
    rounds = list(model)  # iterating gives the rounds, as XGBoost's
    assert len(rounds) == 8 and all(r.current_iteration() == 1 for r in rounds)
    if params.get("boosting") != "rf":  # a forest's rounds are averaged, not added
        contributions = _round_contributions(model)
        np.testing.assert_allclose(model[1::3].predict(X, raw_score=True),
                                   model.init_score + contributions[[1, 4, 7]].sum(axis=0),
                                   rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(model[-1].predict(X, raw_score=True),
                                   model.init_score + contributions[7], rtol=1e-10, atol=1e-10)


def test_a_slice_keeps_no_best_round_and_refuses_what_holds_no_round(booster):
    stopped = gbmo.train({"verbosity": 0, "max_leaves": 6}, gbmo.Dataset(X, Y), 6)
    stopped.best_iteration = 3
    stopped.set_attr(best_iteration="2", best_score="0.5", mine="kept")
    part = stopped[0:5]
    assert part.best_iteration == 0 and part.evals_result == {}
    assert part.attributes() == {"mine": "kept"}  # as XGBoost's slices
    np.testing.assert_array_equal(part.predict(X), stopped.predict(X, num_iteration=5))
    reloaded = gbmo.Booster(model_str=part.model_to_string())
    np.testing.assert_array_equal(reloaded.predict(X), part.predict(X))
    assert stopped.current_iteration() == 6  # the sliced model is untouched
    part.set_leaf_output(0, 0, [9.0, 9.0])  # the part's trees are its own to change
    assert stopped.get_leaf_output(0, 0).tolist() != [9.0, 9.0]
    cases = [(slice(4, 2), ValueError, "the slice 4:2 holds none of the model's 6 rounds"),
             (slice(0, 4, 0), ValueError, "a Booster's slice takes a step of 1 or more, got 0"),
             (slice(0, 4, -1), ValueError, "step of 1 or more, got -1"),
             (6, IndexError, "round 6 is not one of the model's 6; allowed: -6 to 5"),
             ("1", TypeError, "indexed by its rounds: an integer or a slice, got str"),
             (True, TypeError, "an integer or a slice, got bool")]
    for rounds, error, message in cases:
        with pytest.raises(error, match=message):
            booster[rounds]
