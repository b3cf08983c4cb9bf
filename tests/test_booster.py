"""Model files: JSON round trip, pickling, and corrupt or lying files."""
import copy
import json
import pickle

import numpy as np
import pytest

import gbmo


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


def test_pickle_round_trip(trained):
    booster, X = trained
    clone = pickle.loads(pickle.dumps(booster))
    np.testing.assert_array_equal(clone.predict(X), booster.predict(X))


def test_model_file_does_not_carry_thread_count(trained):
    booster, _ = trained
    assert "n_threads" not in json.loads(booster.model_to_string())["params"]


def _model(trained):
    return json.loads(trained[0].model_to_string())


def _load_error(data):
    text = data if isinstance(data, str) else json.dumps(data)
    with pytest.raises(gbmo.ModelFormatError) as info:
        gbmo.Booster(model_str=text)
    return str(info.value)


def test_truncated_file(trained):
    text = trained[0].model_to_string()
    assert "not valid JSON" in _load_error(text[: len(text) // 2])


def test_not_a_gbmo_model():
    assert "format" in _load_error({"hello": 1})


def test_newer_version(trained):
    data = _model(trained)
    data["version"] = 99
    assert "newer" in _load_error(data)


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


def test_unknown_objective_in_file(trained):
    data = _model(trained)
    data["objective"] = "os.system"
    message = _load_error(data)
    assert "'os.system' cannot be used" in message and "unknown loss" in message


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
