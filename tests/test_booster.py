"""Model files: JSON round trip, pickling, and corrupt or lying files."""
import copy
import json
import pickle
import warnings

import numpy as np
import pytest

import gbmo

pytest.register_assert_rewrite("model_layout")
from model_layout import as_forest, in_layout, listed  # noqa: E402

@pytest.fixture(scope="module")
def trained():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 5))
    X[::5, 1] = np.nan
    y = rng.integers(0, 3, size=600)
    booster = gbmo.train({"objective": "softmax", "verbosity": 0, "max_leaves": 8},
                         gbmo.Dataset(X, y), 12)
    return booster, X


def test_json_round_trip_is_bit_identical(trained, tmp_path):
    booster, X = trained
    path = tmp_path / "model.json"
    booster.save_model(path)
    loaded = gbmo.Booster(model_file=path)
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    np.testing.assert_array_equal(loaded.predict(X, raw_score=True), booster.predict(X, raw_score=True))
    np.testing.assert_array_equal(loaded.predict_leaf(X), booster.predict_leaf(X))
    assert loaded.num_trees == booster.num_trees == 12
    assert loaded.params["max_leaves"] == 8
    assert loaded.model_to_string() == booster.model_to_string()


def test_params_beside_a_model_file_give_it_the_thread_count_and_warn_of_the_rest(trained,
                                                                                 tmp_path):
    """Found by a deployment audit: Booster(params, model_file) dropped params,
    the thread count too, without a word (LightGBM warns it ignores them)."""
    booster, X = trained
    booster.save_model(tmp_path / "model.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        served = gbmo.Booster(params={"num_threads": 1, "verbose": -1},
                              model_file=tmp_path / "model.json")
    assert served.params["n_threads"] == 1
    np.testing.assert_array_equal(served.predict(X), booster.predict(X))
    with pytest.warns(UserWarning, match=r"takes only the thread count \(n_threads or an alias\) "
                                         r"from params; the model's own parameters stand, so "
                                         r"learning_rate, max_leaves are ignored"):
        loaded = gbmo.Booster(params={"max_leaves": 3, "n_jobs": 2, "learning_rate": 0.5},
                              model_str=booster.model_to_string())
    assert loaded.params["n_threads"] == 2 and loaded.params["max_leaves"] == 8
    with pytest.raises(TypeError, match="parameter 'n_threads' must be a number, got 'many'"):
        gbmo.Booster(params={"n_threads": "many"}, model_str=booster.model_to_string())


def test_pickle_round_trip(trained):
    booster, X = trained
    clone = pickle.loads(pickle.dumps(booster))
    np.testing.assert_array_equal(clone.predict(X), booster.predict(X))


def test_a_tree_changed_after_a_load_is_what_predict_and_save_read(trained):
    """Found by review: the load packed the trees for prediction as read, and
    saving wrote that packing's arrays, so a tree's values assigned after
    the load were neither predicted nor saved."""
    booster, X = trained
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    loaded.trees[0].leaf_values = loaded.trees[0].leaf_values + 1.0
    truth = gbmo.Booster(model_str=json.dumps(loaded.dump_model())).predict(X, raw_score=True)
    assert not np.allclose(truth, booster.predict(X, raw_score=True))
    np.testing.assert_array_equal(loaded.predict(X, raw_score=True), truth)
    predicted = gbmo.Booster(model_str=booster.model_to_string())
    predicted.predict(X)
    predicted.trees[0].leaf_values = predicted.trees[0].leaf_values + 1.0
    for again in (gbmo.Booster(model_str=predicted.model_to_string()),
                  pickle.loads(pickle.dumps(predicted))):
        np.testing.assert_array_equal(again.predict(X, raw_score=True), truth)


def test_a_shallow_copy_shares_no_list_with_the_original():
    """Found by review: copy.copy handed the original's record to the copy,
    whose feature names and parameters' lists were then the original's."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    booster = gbmo.train({"verbosity": -1, "monotone_constraints": [1, 0, 0]},
                         gbmo.Dataset(X, X[:, 0], feature_names=["a", "b", "c"]), 2)
    twin = copy.copy(booster)
    twin.feature_names[0] = "z"
    twin.params["monotone_constraints"][1] = -1
    assert booster.feature_names == ["a", "b", "c"]
    assert booster.params["monotone_constraints"] == [1, 0, 0]


def test_a_pickle_holds_the_trees_arrays_and_one_of_an_earlier_gbmo_loads(trained):
    """A pickle keeps the forest's columns as numpy arrays (no JSON text to
    write and parse); an earlier gbmo's pickle, which held the model's text,
    loads as it did."""
    booster, X = trained
    state = booster.__getstate__()
    forest = state["model"]["forest"]
    assert all(isinstance(forest[name], np.ndarray) for name in _TREE_FIELDS)
    assert forest["node_left"].dtype == np.int32 and forest["node_threshold"].dtype == np.float64
    earlier = gbmo.Booster.__new__(gbmo.Booster)
    earlier.__setstate__({**state, "model": json.dumps(booster.dump_model())})
    np.testing.assert_array_equal(earlier.predict(X), booster.predict(X))
    assert earlier.model_to_string() == booster.model_to_string()


def test_pickle_keeps_the_records_and_the_best_score():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 3))
    train = gbmo.Dataset(X, X[:, 0])
    booster = gbmo.train({"verbosity": 0}, train, 4, valid_sets=train.create_valid(X, X[:, 0]))
    clone = pickle.loads(pickle.dumps(booster))
    assert clone.best_score == booster.best_score and clone.best_score["valid_0"]["l2_root"]
    assert clone.evals_result == booster.evals_result
    state = booster.__getstate__()
    del state["best_score"]  # as pickled by an earlier gbmo, with plain dicts
    state["evals_result"] = {name: dict(history) for name, history in
                             state["evals_result"].items()}
    old = gbmo.Booster.__new__(gbmo.Booster)
    old.__setstate__(state)
    assert old.best_score == {}
    assert old.evals_result["valid_0"]["l2_root"] == booster.evals_result["valid_0"]["rmse"]


def test_model_file_does_not_carry_thread_count(trained):
    booster, _ = trained
    assert "n_threads" not in json.loads(booster.model_to_string())["params"]


def _model(trained):
    """The model's JSON with a list of trees (dump_model's)."""
    return listed(trained[0])


def _load_error(data):
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises(gbmo.ModelFormatError) as info:
        gbmo.Booster(model_str=text)
    return str(info.value)


def test_a_model_file_and_a_model_str_at_once_are_refused(trained, tmp_path):
    """Found by an audit: the file was loaded and model_str ignored."""
    booster, _ = trained
    path = tmp_path / "model.json"
    booster.save_model(path)
    with pytest.raises(ValueError, match="a model_file or a model_str to load, not both"):
        gbmo.Booster(model_file=path, model_str=booster.model_to_string())


def test_truncated_file(trained):
    text = trained[0].model_to_string()
    assert "not valid JSON" in _load_error(text[: len(text) // 2])


def test_trees_cut_below_the_best_round_or_mid_round_are_refused(trained):
    data = _model(trained)
    data["best_iteration"] = 10
    gbmo.Booster(model_str=json.dumps(data))  # 12 trees hold round 10
    data["trees"] = data["trees"][:9]
    assert "holds 9 trees, which is not whole rounds of 1 trees up to its best_iteration 10" \
        in _load_error(data)
    rounds = listed(gbmo.train({"verbosity": 0, "tree_mode": "single_output"},
                               gbmo.Dataset(trained[1], trained[1][:, :2]), 3))
    rounds["trees"] = rounds["trees"][:5]
    assert "holds 5 trees, which is not whole rounds of 2 trees" in _load_error(rounds)


def test_not_a_gbmo_model():
    assert "format" in _load_error({"hello": 1})


def test_newer_version(trained):
    data = _model(trained)
    data["version"] = 99
    assert "newer" in _load_error(data)


@pytest.mark.parametrize("names, shown", [
    (["a"], "['a']"), ("abc", "'abc'"), ([1] * 5, "[1, 1, 1, 1, 1]"),
    (["a", "b", "a", "c", "d"], "['a', 'b', 'a', 'c', 'd']")])
def test_feature_names_of_another_count_or_kind_are_refused(trained, names, shown):
    """One name for five features loaded, and trees_to_dataframe then failed
    with an IndexError (a production audit); a name twice loaded too (a
    deployment audit), where a DataFrame's columns must differ."""
    data = _model(trained)
    data["feature_names"] = names
    message = _load_error(data)
    assert f"model field 'feature_names' must be null or a list of {data['n_features']} " \
           f"distinct names (n_features), got {shown}" in message


def test_a_binary_file_is_not_a_gbmo_model(tmp_path):
    path = tmp_path / "model.bin"
    path.write_bytes(bytes(range(256)))
    for load in (lambda: gbmo.Booster(model_file=path), lambda: gbmo.CVBooster(model_file=path)):
        with pytest.raises(gbmo.ModelFormatError, match="is not a gbmo model: not UTF-8 text"):
            load()


def test_a_pickle_or_a_compressed_file_is_named_and_a_byte_order_mark_is_read(trained,
                                                                            tmp_path):
    """Found by a deployment audit: a pickle, a joblib or gzip file given as a
    model file were only "not UTF-8 text"; a file an editor saved with a byte
    order mark was refused; a path given as model_str was "not valid JSON"."""
    import gzip

    joblib = pytest.importorskip("joblib")
    booster, X = trained
    files = {"pickle": tmp_path / "model.pkl", "joblib": tmp_path / "model.joblib",
             "gzip": tmp_path / "model.json.gz"}
    files["pickle"].write_bytes(pickle.dumps(booster))
    joblib.dump(booster, files["joblib"], compress=3)
    files["gzip"].write_bytes(gzip.compress(booster.model_to_string().encode()))
    for kind, message in (("pickle", "it is a pickle .*: read it with pickle.load or joblib.load"),
                          ("joblib", r"it is zlib-compressed \(joblib's compress=\): read it "
                                     "with joblib.load"),
                          ("gzip", "it is gzip-compressed: decompress it")):
        with pytest.raises(gbmo.ModelFormatError, match="not UTF-8 text, where a saved model is "
                                                         f"JSON; {message}"):
            gbmo.Booster(model_file=files[kind])
    marked = tmp_path / "model.json"
    marked.write_bytes(b"\xef\xbb\xbf" + booster.model_to_string().encode())
    np.testing.assert_array_equal(gbmo.Booster(model_file=marked).predict(X), booster.predict(X))
    with pytest.raises(gbmo.ModelFormatError, match="is a file's path: give it as model_file="):
        gbmo.Booster(model_str=str(marked))
    with pytest.raises(TypeError, match=r"model_str is a path \(.*\): give it as model_file="):
        gbmo.Booster(model_str=marked)
    # a byte order mark read into the text (open() without utf-8-sig keeps it)
    with open(marked, encoding="utf-8") as f:
        np.testing.assert_array_equal(gbmo.Booster(model_str=f.read()).predict(X),
                                      booster.predict(X))


def test_a_frame_of_another_width_is_told_its_missing_and_unknown_columns():
    """Found by a deployment audit: "X has 2 features, but the model was
    trained on 3" without the names the model knows."""
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame(np.random.default_rng(17).normal(size=(100, 3)), columns=["a", "b", "c"])
    model = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, X["a"].to_numpy()), 2)
    with pytest.raises(ValueError, match="X has 2 features, but the model was trained on 3; "
                                         "missing: c$"):
        model.predict(X[["a", "b"]])
    with pytest.raises(ValueError, match="X has 4 features, but the model was trained on 3; "
                                         "not the model's: d$"):
        model.predict(X.assign(d=1.0))


def test_a_missing_column_is_named_before_a_text_column_is_read():
    """Found by a user review: with a text categorical column, a frame
    lacking another column was refused for its text column ("non-numeric
    column 's' ... name it in categorical_feature"), which was named
    already; the booster and the estimator now name the missing one."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(18)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200),
                      "s": rng.choice(list("xyz"), 200)})
    y = X["a"].to_numpy() + (X["s"] == "x")
    model = gbmo.train({"verbosity": -1}, gbmo.Dataset(X, y, categorical_feature=["s"]), 2)
    estimator = gbmo.GBMORegressor(n_estimators=2, cat_features=["s"]).fit(X, y)
    for predict in (model.predict, estimator.predict):
        with pytest.raises(ValueError, match="X has 2 features, but the model was trained on "
                                             "3; missing: b$"):
            predict(X.drop(columns="b"))


def test_a_path_is_a_string_or_path_like_never_a_file_descriptor(trained, tmp_path):
    """open() writes to and closes an integer's file descriptor: a model id
    given by mistake wrote the model into another open file."""
    from gbmo.sklearn import GBMORegressor

    booster, X = trained
    log = tmp_path / "app.log"
    with open(log, "w") as f:
        for call in (lambda: booster.save_model(f.fileno()),
                     lambda: gbmo.Booster(model_file=f.fileno())):
            with pytest.raises(TypeError, match=r"must be a file's path \(str or os.PathLike\), "
                                                "got int"):
                call()
        f.write("still open")
    assert log.read_text() == "still open"
    with pytest.raises(TypeError, match="model_file is bytearray: give a file's path"):
        gbmo.Booster(model_file=bytearray(booster.model_to_string(), "utf-8"))
    with pytest.raises(TypeError, match="fname must be a file's path .* got bytes"):
        booster.load_model(b"model.json")
    with pytest.raises(TypeError, match="filename must be a file's path .* got bytes"):
        booster.save_model(b"model.json")
    binary = tmp_path / "model.bin"
    binary.write_bytes(bytes(range(256)))
    with pytest.raises(gbmo.ModelFormatError, match="is not a gbmo model: not UTF-8 text"):
        booster.load_model(binary)  # XGBoost's method
    estimator = GBMORegressor(n_estimators=2).fit(X, X[:, 0])
    with pytest.raises(TypeError, match="fname must be a file's path"):
        estimator.save_model(3)


def test_the_estimators_name_a_binary_or_another_library_s_file(tmp_path):
    from gbmo.sklearn import GBMORegressor

    binary, xgboost = tmp_path / "model.ubj", tmp_path / "xgb.json"
    binary.write_bytes(bytes(range(256)))
    xgboost.write_text(json.dumps({"learner": {}, "version": [2, 1, 0]}))
    with pytest.raises(gbmo.ModelFormatError, match="is not a gbmo model: not UTF-8 text"):
        GBMORegressor().load_model(binary)
    with pytest.raises(gbmo.ModelFormatError, match="this is an XGBoost model file"):
        GBMORegressor().load_model(xgboost)


def test_the_format_version_is_the_highest_a_model_needs_and_the_writer_is_named():
    """A reader of version 1 predated random forests and categorical splits:
    such models are version 2 so that it refuses them rather than adding a
    forest's trees or reading a set as a threshold."""
    import pandas as pd

    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + (X[:, 1] > 0)
    frame = pd.DataFrame({"c": pd.Categorical(rng.integers(0, 4, 300)), "x": X[:, 1]})
    cases = [({}, X, 1), ({"boosting": "rf", "subsample": 0.6}, X, 2), ({}, frame, 2),
             ({"max_bins": 1000}, X, 4), ({"max_bins": 1000, "zero_as_missing": True}, X, 4)]
    for params, data, version in cases:
        saved = gbmo.train({"verbosity": -1, **params}, gbmo.Dataset(data, y), 3).dump_model()
        assert saved["version"] == version, params
        assert saved["written_by"] == f"gbmo {gbmo.__version__}"


def test_a_plugin_objective_s_distribution_is_recorded_and_named_when_missing(trained):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    quantile = gbmo.train({"verbosity": -1, "objective": "quantile"},
                          gbmo.Dataset(X, X[:, 0]), 2).dump_model()
    assert quantile["objective_distribution"]["name"] == "gbmo-losses"
    assert _model(trained)["objective_distribution"] is None  # gbmo's own softmax
    quantile["objective"] = "my_quantile"
    quantile["objective_distribution"] = {"name": "my-losses", "version": "1.2"}
    assert "the model was saved with it from the distribution 'my-losses' 1.2: pip install " \
           "my-losses" in _load_error(quantile)
    quantile["objective_distribution"] = "not the note"  # ignored, as before the note
    assert _load_error(quantile).endswith("the model needs its transform to predict")


def test_an_edited_output_count_names_the_outputs(trained):
    data = _model(trained)
    data["n_outputs"] += 2
    assert f"one per output (n_outputs = {data['n_outputs']})" in _load_error(data)


def test_missing_field(trained):
    data = _model(trained)
    del data["trees"][3]["node_left"]
    assert "node_left" in _load_error(data)


@pytest.mark.parametrize("field, change, message", [
    ("node_left", lambda t: t["node_left"].__setitem__(0, 0), "node_left"),
    ("node_right", lambda t: t["node_right"].__setitem__(0, len(t["node_right"]) + 5), "node_right"),
    ("node_feature", lambda t: t["node_feature"].__setitem__(0, 999), "node_feature"),
    ("node_value", lambda t: t["node_value"].__setitem__(len(t["node_value"]) - 1, 10**6), "node_value"),
    ("node_threshold", lambda t: t["node_threshold"].__setitem__(0, float("nan")), "node_threshold"),
    ("node_bin", lambda t: t["node_bin"].append(3), "node_bin"),
    ("leaf_values", lambda t: t["leaf_values"][0].append(1.0), "leaf_values"),
])
def test_lying_tree_is_rejected_naming_the_field(trained, field, change, message):
    data = _model(trained)
    change(data["trees"][0])
    assert message in _load_error(data)


def test_child_pointing_to_an_ancestor_is_rejected(trained):
    data = _model(trained)
    tree = data["trees"][0]
    internal = [i for i, left in enumerate(tree["node_left"]) if left >= 0]
    tree["node_right"][internal[-1]] = internal[0]
    assert "node_right" in _load_error(data)


def test_wrong_init_score_length(trained):
    data = _model(trained)
    data["init_score"] = data["init_score"][:-1]
    assert "init_score" in _load_error(data)


@pytest.mark.parametrize("value", [["0.5", 0.1], [True, 0.1], 0.5])
def test_init_score_of_text_or_true_is_refused(trained, value):
    """Found by an audit: numpy read "0.5" and true as numbers, and the
    edited file loaded."""
    data = _model(trained)
    data["init_score"] = value[:len(data["init_score"])] if isinstance(value, list) else value
    assert "model field 'init_score' must be" in _load_error(data)


@pytest.mark.parametrize("value", [7, [9], {"features": [0]}])
def test_a_malformed_categorical_field_is_named(trained, value):
    """Found by an audit: "'int' object is not subscriptable"."""
    data = _model(trained)
    data["categorical"] = value
    assert ("'categorical' must be an object of 'features', 'categories' and 'ranks'"
            in _load_error(data))


@pytest.mark.parametrize("field", ["n_features", "n_outputs", "trees_per_round"])
@pytest.mark.parametrize("value", [0, 10**12])
def test_a_count_beyond_int32_or_below_one_is_refused(trained, field, value):
    """Found by an audit: n_features = 10**12 loaded, and failed at predict."""
    data = _model(trained)
    data[field] = value
    assert f"model field {field!r} = {value} is out of range; allowed: 1 .. 2147483647" \
        in _load_error(data)


def test_unknown_objective_in_file(trained):
    data = _model(trained)
    data["objective"] = "os.system"
    message = _load_error(data)
    assert ("objective 'os.system' is not registered here: it is neither one of gbmo's nor "
            "of an installed plugin's; install the package that provided it" in message)


def test_string_where_numbers_belong(trained):
    data = _model(trained)
    data["trees"][0]["node_feature"] = ["a"] * len(data["trees"][0]["node_feature"])
    assert "node_feature" in _load_error(data)


def test_predict_checks_feature_count(trained):
    booster, X = trained
    with pytest.raises(ValueError, match="4 features, but the model was trained on 5"):
        booster.predict(X[:, :4])


def test_loaded_model_predicts_same_as_unmodified_copy(trained):
    """Loading must not depend on mutable state of the JSON dict."""
    data = _model(trained)
    before = copy.deepcopy(data)
    gbmo.Booster(model_str=json.dumps(data))
    assert data == before


# -- prediction shape follows the training target ------------------------------
@pytest.mark.parametrize("objective", ["mse", "sigmoid"])
def test_a_one_dimensional_target_predicts_one_dimensional(objective, tmp_path):
    """As in LightGBM, XGBoost and scikit-learn, so that prediction - y is (n,)
    and not an (n, n) broadcast."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = (X[:, 0] > 0).astype(np.float64)
    booster = gbmo.train({"objective": objective, "verbosity": 0}, gbmo.Dataset(X, y), 5)
    column = gbmo.train({"objective": objective, "verbosity": 0}, gbmo.Dataset(X, y[:, None]), 5)
    for raw_score in (False, True):
        prediction = booster.predict(X, raw_score=raw_score)
        assert prediction.shape == (300,)
        assert column.predict(X, raw_score=raw_score).shape == (300, 1)
        np.testing.assert_array_equal(prediction, column.predict(X, raw_score=raw_score)[:, 0])
    booster.save_model(tmp_path / "model.json")
    loaded = gbmo.Booster(model_file=tmp_path / "model.json")
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    assert pickle.loads(pickle.dumps(booster)).predict(X).shape == (300,)


def test_class_labels_predict_one_column_per_class(trained):
    booster, X = trained
    assert booster.predict(X).shape == (600, 3)


def test_a_model_file_without_the_target_shape_predicts_two_dimensional():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    booster = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, X[:, 0]), 3)
    data = booster.dump_model()
    del data["one_dimensional_target"]  # files written before the field existed
    loaded = gbmo.Booster(model_str=json.dumps(data))
    assert loaded.predict(X).shape == (200, 1)
    np.testing.assert_array_equal(loaded.predict(X)[:, 0], booster.predict(X))


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_a_target_shape_that_is_not_a_boolean_is_rejected(value):
    X = np.random.default_rng(3).normal(size=(100, 2))
    data = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, X[:, 0]), 2).dump_model()
    data["one_dimensional_target"] = value
    with pytest.raises(gbmo.ModelFormatError, match="one_dimensional_target"):
        gbmo.Booster(model_str=json.dumps(data))


def test_a_one_dimensional_target_with_several_outputs_is_rejected(trained):
    data = trained[0].dump_model()
    data["one_dimensional_target"] = True
    with pytest.raises(gbmo.ModelFormatError, match="one output"):
        gbmo.Booster(model_str=json.dumps(data))


def test_a_loaded_model_transforms_on_the_default_threads():
    """A model file holds no thread count: the loaded loss's transform (its
    probabilities) runs on the machine's default, as the walk does."""
    from gbmo.parallel import thread_count

    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 4))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    model = gbmo.train({"objective": "softmax", "num_class": 3, "verbosity": 0, "n_threads": 1},
                       gbmo.Dataset(X, y), 5)
    loaded = gbmo.Booster(model_str=model.model_to_string())
    assert loaded.loss.n_threads == thread_count(None)
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))


@pytest.mark.parametrize("objective, kernel", [("softmax", "softmax_transform"),
                                               ("sigmoid", "sigmoid_transform")])
def test_predict_transforms_on_its_own_thread_count(monkeypatch, objective, kernel):
    """predict(n_threads=...) reaches the loss's transform, which takes no
    count (transform(raw)): the kernel gets the prediction's count, and the
    loss's own again outside predict."""
    import gbmo.losses

    rng = np.random.default_rng(4)
    X = rng.normal(size=(2000, 4))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0, X[:, 0] + X[:, 1] > 0]).astype(int)
    target = Y.argmax(axis=1) if objective == "softmax" else Y
    params = {"objective": objective, "verbosity": 0, "n_threads": 2}
    if objective == "softmax":
        params["num_class"] = 3
    model = gbmo.train(params, gbmo.Dataset(X, target), 3)
    counts = []
    real_kernel = getattr(gbmo.losses, kernel)

    def counting(raw, out, n_threads):
        counts.append(n_threads)
        real_kernel(raw, out, n_threads)

    monkeypatch.setattr(gbmo.losses, kernel, counting)
    expected = model.predict(X, n_threads=2)
    np.testing.assert_array_equal(model.predict(X, n_threads=1), expected)
    np.testing.assert_array_equal(model.predict(X, n_threads=3), expected)
    model.loss.n_threads = 4
    model.loss.transform(model.predict(X, raw_score=True))
    assert counts == [2, 1, 3, 4]


def test_predict_takes_lightgbm_s_num_threads_and_refuses_other_keywords(trained):
    booster, X = trained
    np.testing.assert_array_equal(booster.predict(X, num_threads=1), booster.predict(X))
    np.testing.assert_array_equal(booster.predict(X, nthread=2), booster.predict(X))
    with pytest.raises(TypeError, match=r"thread count is given more than once \(n_threads, "
                                        r"num_threads\): give it once"):
        booster.predict(X, n_threads=1, num_threads=2)
    with pytest.raises(TypeError, match="unexpected keyword arguments pred_early_stop; it takes"):
        booster.predict(X, pred_early_stop=True)
    with pytest.raises(ValueError, match="n_threads = 'many' is out of range"):
        booster.predict(X, num_threads="many")


def test_saving_takes_lightgbm_s_importance_type_which_changes_nothing(trained, tmp_path):
    booster, _ = trained
    text = booster.model_to_string()
    assert booster.model_to_string(importance_type="gain") == text
    booster.save_model(tmp_path / "m.json", importance_type="gain")
    assert (tmp_path / "m.json").read_text() == text
    assert as_forest(json.loads(json.dumps(booster.dump_model(importance_type="split")))) \
        == json.loads(text)
    with pytest.raises(ValueError, match="importance_type 'cover' is not allowed; allowed: "
                                         "split, gain, average_gain"):
        booster.save_model(tmp_path / "other.json", importance_type="cover")
    assert not (tmp_path / "other.json").exists()


def test_attributes_as_lightgbm_s_live_in_memory_and_pickles(trained):
    booster = pickle.loads(pickle.dumps(trained[0]))  # the module's model stays as it was
    assert booster.attr("note") is None
    booster.set_attr(note="first run", owner="me")
    assert booster.attr("note") == "first run"
    clone = pickle.loads(pickle.dumps(booster))
    assert (clone.attr("note"), clone.attr("owner")) == ("first run", "me")
    booster.set_attr(note=None)
    assert booster.attr("note") is None and clone.attr("note") == "first run"
    assert gbmo.Booster(model_str=booster.model_to_string()).attr("owner") is None
    with pytest.raises(ValueError, match=r"set_attr's values must be strings \(None removes "
                                         r"the key\), got \{'count': 3\}"):
        booster.set_attr(count=3, label="kept only when all are strings")
    assert booster.attr("label") is None


# -- a model's trees read and checked all at once --------------------------------
MODEL_KINDS = {
    "dense leaves": {},
    "sparse leaves": {"split": "sparse", "top_k": 2},
    "categorical splits": {"categorical_feature": [3]},
    "single_output trees": {"tree_mode": "single_output"},
}
_TREE_FIELDS = ("node_feature", "node_threshold", "node_bin", "node_missing_left", "node_left",
                "node_right", "node_value", "node_gain", "node_count", "leaf_values")


@pytest.fixture(scope="module")
def three_outputs():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 4))
    X[::9, 1] = np.nan
    X[:, 3] = rng.integers(0, 6, size=400)
    Y = np.c_[X[:, 0] + (X[:, 3] == 2), np.nan_to_num(X[:, 1]), X[:, 2] ** 2]
    return X, Y


def _trained_kind(kind, three_outputs, rounds):
    X, Y = three_outputs
    return gbmo.train({"verbosity": 0, "max_leaves": 6, **MODEL_KINDS[kind]},
                      gbmo.Dataset(X, Y), rounds)


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_each_kind_of_model_loads_bit_identical(kind, three_outputs):
    X, _ = three_outputs
    booster = _trained_kind(kind, three_outputs, 20)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    is_of_its_kind = {
        "dense leaves": lambda: all(t.leaf_outputs is None for t in loaded.trees),
        "sparse leaves": lambda: all(t.leaf_outputs.shape[1] == 2 for t in loaded.trees),
        "categorical splits": lambda: any(t.categories_left for t in loaded.trees),
        "single_output trees": lambda: loaded.num_trees == 60}
    assert is_of_its_kind[kind]()
    for raw_score in (False, True):
        np.testing.assert_array_equal(loaded.predict(X, raw_score=raw_score),
                                      booster.predict(X, raw_score=raw_score))
    np.testing.assert_array_equal(loaded.predict_leaf(X), booster.predict_leaf(X))
    for mine, theirs in zip(loaded.trees, booster.trees, strict=True):
        for name in _TREE_FIELDS + ("leaf_outputs",):
            if getattr(theirs, name) is None:
                assert getattr(mine, name) is None
            else:
                assert getattr(mine, name).dtype == getattr(theirs, name).dtype, name
                np.testing.assert_array_equal(getattr(mine, name), getattr(theirs, name))
        assert mine.categories_left.keys() == theirs.categories_left.keys()
        for node, ranks in theirs.categories_left.items():
            np.testing.assert_array_equal(mine.categories_left[node], ranks)
    assert loaded.model_to_string() == booster.model_to_string()


@pytest.fixture(scope="module")
def five_trees(three_outputs):
    """The JSON of 5-tree models with a list of trees (dump_model's): dense
    leaves, and sparse leaves (2 of 3 outputs)."""
    return {kind: listed(_trained_kind(kind, three_outputs, 5))
            for kind in ("dense leaves", "sparse leaves")}


def _internal(tree):
    return [node for node, left in enumerate(tree["node_left"]) if left >= 0]


def _leaves(tree):
    return [node for node, left in enumerate(tree["node_left"]) if left < 0]


def _cycle(tree):
    tree["node_left"][_internal(tree)[-1]] = _internal(tree)[0]


def _two_parents(tree):
    first, second = _internal(tree)[:2]
    tree["node_right"][first] = tree["node_left"][second]


def _leaf_named_twice(tree):
    first, second = _leaves(tree)[:2]
    tree["node_value"][first] = tree["node_value"][second]


def _no_nodes(tree):
    for name in _TREE_FIELDS:
        tree[name] = []


def _set(name, where, value):
    """A change that sets field name's entry where(tree) to value."""
    def change(tree):
        tree[name][where(tree)] = value
    return change


_CORRUPTIONS = [
    ("dense leaves", 3, _cycle, "tree 3: field 'node_left' has a child index that is not after "
                                "its parent or not below"),
    ("dense leaves", 4, _set("node_feature", lambda t: _internal(t)[0], 4),
     "tree 4: field 'node_feature' has an index outside [0, 4)"),
    ("dense leaves", 2, lambda t: t["leaf_values"][1].__setitem__(2, float("nan")),
     "tree 2: field 'leaf_values' contains NaN or infinite values"),
    ("dense leaves", 1, _two_parents, "tree 1: fields 'node_left'/'node_right' do not give every "
                                      "node but the root exactly one parent"),
    ("dense leaves", 0, _set("node_right", lambda t: _leaves(t)[0], 1),
     "tree 0: field 'node_right' names a child of a leaf"),
    ("dense leaves", 3, _set("node_threshold", lambda t: _internal(t)[-1], float("nan")),
     "tree 3: field 'node_threshold' contains NaN"),
    ("dense leaves", 2, _set("node_value", lambda t: _leaves(t)[-1], 6),
     "tree 2: field 'node_value' has a leaf index outside [0, 6)"),
    ("dense leaves", 4, _leaf_named_twice,
     "tree 4: field 'node_value' does not name every leaf exactly once ('leaf_values' has 6 "
     "rows, the tree 6 leaf nodes)"),
    ("dense leaves", 2, lambda t: t["leaf_values"].append([0.5] * 3),
     "tree 2: field 'node_value' does not name every leaf exactly once ('leaf_values' has 7 "
     "rows, the tree 6 leaf nodes)"),
    ("dense leaves", 1, lambda t: t["leaf_values"][2].append(0.5),
     "tree 1: field 'leaf_values' has rows of lengths [3, 4], where every row (one a leaf) "
     "has the same length"),
    ("dense leaves", 0, _set("node_left", lambda t: 0, -5),
     "tree 0: field 'node_right' names a child of a leaf (a node whose node_left is negative)"),
    ("dense leaves", 1, lambda t: t["node_gain"].append(0.0),
     "tree 1: field 'node_gain' has 12 entries, expected 11"),
    ("dense leaves", 3, lambda t: t.__setitem__("leaf_values", [r[:2] for r in t["leaf_values"]]),
     "tree 3: field 'leaf_values' has shape (6, 2), expected (n_leaves, 3)"),
    ("dense leaves", 2, _no_nodes, "tree 2: tree has no nodes"),
    ("dense leaves", 3, _set("node_left", lambda t: 0, 1.5),
     "tree 3: field 'node_left' must hold integers in"),
    ("dense leaves", 4, lambda t: t.pop("node_bin"), "tree 4: tree is missing the field 'node_bin'"),
    ("dense leaves", 1, lambda t: t.__setitem__("categories_left", {"0": [2, 1]}),
     "tree 1: field 'categories_left' of node 0 must be an internal node's increasing ranks"),
    ("dense leaves", 2, lambda t: t.__setitem__("categories_left", {"0": [-1, 2]}),
     "tree 2: field 'categories_left' of node 0 must be"),
    ("dense leaves", 3, lambda t: t.__setitem__("categories_left", {str(_leaves(t)[0]): [0]}),
     "tree 3: field 'categories_left' of node"),
    ("dense leaves", 4, lambda t: t.__setitem__("categories_left", {str(10**30): [0]}),
     f"tree 4: field 'categories_left' of node {10**30} must be"),
    ("sparse leaves", 2, lambda t: t.__setitem__("leaf_outputs", [r[::-1] for r in t["leaf_outputs"]]),
     "tree 2: field 'leaf_outputs' must list distinct outputs in [0, 3) in increasing order"),
    ("sparse leaves", 4, lambda t: t["leaf_outputs"][-1].__setitem__(-1, 3),
     "tree 4: field 'leaf_outputs' must list distinct outputs in [0, 3)"),
    ("sparse leaves", 1, lambda t: t["leaf_outputs"].pop(),
     "tree 1: fields 'leaf_outputs' (5, 2) and 'leaf_values' (6, 2) must have one shape"),
]


_COUNTS_ADD_UP = ("where the trees' counts ('tree_nodes', 'tree_leaves', 'leaf_widths', "
                  "'sparse_trees') add up to")
# a saved file's forest says so where a tree's fields do not add up to its counts
_FOREST_MESSAGES = {
    "tree 1: field 'leaf_values' has rows of lengths [3, 4], where every row (one a leaf) "
    "has the same length": f"field 'leaf_values' has 91 entries, {_COUNTS_ADD_UP} 90",
    "tree 1: field 'node_gain' has 12 entries, expected 11":
        f"field 'node_gain' has 56 entries, {_COUNTS_ADD_UP} 55",
    "tree 3: field 'node_left' must hold integers in": "field 'node_left' must hold integers in",
    "tree 4: tree is missing the field 'node_bin'":
        f"field 'node_bin' has 44 entries, {_COUNTS_ADD_UP} 55",
    "tree 1: fields 'leaf_outputs' (5, 2) and 'leaf_values' (6, 2) must have one shape":
        f"field 'leaf_outputs' has 58 entries, {_COUNTS_ADD_UP} 60",
}


@pytest.mark.parametrize("layout", ["list of trees", "forest"])
@pytest.mark.parametrize("kind, tree, change, message", _CORRUPTIONS,
                         ids=[message.split(": ", 1)[1][:50] for *_, message in _CORRUPTIONS])
def test_a_corrupt_tree_among_five_is_named(five_trees, layout, kind, tree, change, message):
    """The same broken tree in a list of trees and in a saved file's forest:
    the forest names the tree too, but where its fields do not add up."""
    data = copy.deepcopy(five_trees[kind])
    assert len(data["trees"]) == 5 and len(data["trees"][tree]["node_left"]) == 11
    change(data["trees"][tree])
    if layout == "forest":
        data = as_forest(data)
        message = _FOREST_MESSAGES.get(message, message)
    assert f"model has an invalid tree: {message}" in _load_error(data)


@pytest.mark.parametrize("kind", MODEL_KINDS)
def test_a_saved_forest_is_the_list_of_trees_laid_out_in_columns(kind, three_outputs):
    """save_model's file against the same model's dump_model laid out by hand:
    every field but the trees the same, the forest the hand-made one; both
    load to the same predictions."""
    X, _ = three_outputs
    booster = _trained_kind(kind, three_outputs, 4)
    saved = json.loads(booster.model_to_string())
    as_listed = listed(booster)
    assert saved["version"] == 5 and as_listed["version"] < 5
    assert saved == as_forest(as_listed)
    for text in (booster.model_to_string(), json.dumps(as_listed)):
        np.testing.assert_array_equal(gbmo.Booster(model_str=text).predict(X, raw_score=True),
                                      booster.predict(X, raw_score=True))


def _forest_file(five_trees, change):
    data = as_forest(five_trees["sparse leaves"])
    change(data["forest"])
    return data


@pytest.mark.parametrize("change, message", [
    (lambda forest: forest.pop("tree_leaves"), "field 'forest' is missing ['tree_leaves']"),
    (lambda forest: forest["tree_nodes"].pop(),
     "field 'tree_leaves' must hold 4 counts (one a tree, as 'tree_nodes') in [0, 55]"),
    (lambda forest: forest["leaf_widths"].append(2),
     "field 'leaf_widths' must hold 5 counts (one a tree, as 'tree_nodes') in [0, 60]"),
    (lambda forest: forest["tree_leaves"].__setitem__(0, -1),
     "field 'tree_leaves' must hold 5 counts (one a tree, as 'tree_nodes') in [0, 55]"),
    # counts that would overflow int64 when summed
    (lambda forest: forest.__setitem__("tree_nodes", [2**62] * 4 + [11]),
     "field 'tree_nodes' must hold 5 counts (one a tree, as 'tree_nodes') in [0, 55]"),
    (lambda forest: forest["tree_nodes"].__setitem__(0, 12),
     f"field 'node_feature' has 55 entries, {_COUNTS_ADD_UP} 56"),
    (lambda forest: forest.__setitem__("sparse_trees", [0, 2, 1, 3, 4]),
     "field 'sparse_trees' must list trees in [0, 5) in increasing order"),
    (lambda forest: forest.__setitem__("sparse_trees", [0, 1, 2, 3, 5]),
     "field 'sparse_trees' must list trees in [0, 5) in increasing order"),
    (lambda forest: forest.__setitem__("sparse_trees", [0, 1, 2, 3]),
     f"field 'leaf_outputs' has 60 entries, {_COUNTS_ADD_UP} 48"),
    (lambda forest: forest.__setitem__("categories_left", {"5": {"0": [1]}}),
     "field 'categories_left' must map tree numbers in [0, 5) to their category sets"),
    (lambda forest: forest.__setitem__("categories_left", {"01": {"0": [1]}}),
     "field 'categories_left' must map tree numbers in [0, 5) to their category sets"),
    (lambda forest: forest.__setitem__("categories_left", [1]),
     "field 'categories_left' must map tree numbers in [0, 5) to their category sets"),
    (lambda forest: forest["leaf_outputs"].__setitem__(0, "a"),
     "field 'leaf_outputs' must be a list of numbers"),
    # more leaves than nodes, or leaves of no values, which a list of trees
    # cannot hold either (found by review: such counts summed past int64 made
    # numpy write past its buffer, and 786 KB of them took 5.5 GB to refuse)
    (lambda forest: forest["tree_leaves"].__setitem__(3, 12),
     "tree 3: fields 'tree_leaves' and 'leaf_widths' give 12 leaves of 2 values to a tree of "
     "11 nodes: at most one a node, of at least one value"),
    (lambda forest: forest["leaf_widths"].__setitem__(1, 0),
     "tree 1: fields 'tree_leaves' and 'leaf_widths' give 6 leaves of 0 values"),
], ids=lambda value: value.split(" must")[0] if isinstance(value, str) else None)
def test_a_forest_whose_fields_do_not_add_up_to_its_trees_is_refused(five_trees, change, message):
    assert f"model has an invalid tree: {message}" in _load_error(_forest_file(five_trees, change))


def test_a_forest_that_is_no_object_or_beside_a_list_of_trees_is_refused(five_trees):
    data = as_forest(five_trees["dense leaves"])
    assert "field 'forest' must be an object, got list" in _load_error({**data, "forest": []})
    data["trees"] = five_trees["dense leaves"]["trees"]
    assert "a model holds its trees in 'forest' or in 'trees', not both" in _load_error(data)


@pytest.mark.parametrize("layout", ["forest", "list of trees"])
def test_an_integer_one_above_int64_is_refused_not_wrapped(five_trees, layout):
    """Found by the loader fuzz: 2**63 read as a float equals int64's maximum
    as a float, passed the range check and was cast to -2**63 (with numpy's
    RuntimeWarning)."""
    data = copy.deepcopy(five_trees["dense leaves"])
    data["trees"][2]["node_count"][0] = 2**63
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert "field 'node_count' must hold integers in [-9223372036854775808, " \
            "9223372036854775807]" in _load_error(in_layout(data, layout))


@pytest.mark.parametrize("layout", ["forest", "list of trees"])
@pytest.mark.parametrize("field, value, message", [
    ("node_threshold", "0.5", "field 'node_threshold' must be a list of numbers"),
    ("leaf_values", "1e-3", "field 'leaf_values' must be a list of numbers"),
    ("node_missing_left", 2, "tree 2: field 'node_missing_left' holds a value other than 0 and 1"),
])
def test_hand_edits_that_numpy_would_read_are_refused(five_trees, layout, field, value,
                                                      message):
    """Found by a deployment audit: text where numbers belong loaded as
    numbers, and a missing-value direction of 2 went right. (true among
    numbers still loads as 1: telling it apart would cost a look at every
    entry.)"""
    data = copy.deepcopy(five_trees["dense leaves"])
    tree = data["trees"][2]
    if field == "leaf_values":
        tree["leaf_values"] = [[value] * len(row) for row in tree["leaf_values"]]
    else:
        tree[field] = [value] * len(tree[field])
    assert message in _load_error(in_layout(data, layout))


def test_the_first_tree_that_breaks_a_rule_is_named(five_trees):
    data = copy.deepcopy(five_trees["dense leaves"])
    for tree in (4, 1):
        data["trees"][tree]["leaf_values"][0][0] = float("inf")
    assert "tree 1: field 'leaf_values' contains NaN or infinite values" in _load_error(data)


def test_a_tree_that_is_no_object_is_named(five_trees):
    data = copy.deepcopy(five_trees["dense leaves"])
    data["trees"][3] = [1, 2]
    assert "tree 3: a tree must be a JSON object, got list" in _load_error(data)


def test_trees_whose_leaves_hold_different_numbers_of_outputs_load_as_written(
        five_trees, three_outputs):
    """The trees' leaves read as one array only when they are of one width;
    these load tree by tree, as before."""
    X, _ = three_outputs
    data = copy.deepcopy(five_trees["sparse leaves"])
    for name in ("leaf_values", "leaf_outputs"):
        data["trees"][1][name] = [row[:1] for row in data["trees"][1][name]]
    loaded = gbmo.Booster(model_str=json.dumps(data))
    assert [tree.leaf_values.shape[1] for tree in loaded.trees] == [2, 1, 2, 2, 2]
    for saved, tree in zip(data["trees"], loaded.trees, strict=True):
        np.testing.assert_array_equal(tree.leaf_values, saved["leaf_values"])
        np.testing.assert_array_equal(tree.leaf_outputs, saved["leaf_outputs"])
    leaves = loaded.predict_leaf(X)
    added = sum(tree.dense_leaf_values(3)[leaves[:, t]] for t, tree in enumerate(loaded.trees))
    np.testing.assert_allclose(loaded.predict(X, raw_score=True), loaded.init_score + added,
                               rtol=0, atol=1e-12)
