"""Robustness (issue 7): edge-case inputs (part 2), each with a clear outcome
— a model whose predictions are checked, or a clear error whose message is
checked — and the growth invariants (part 1) checked from the outside on
several parameter combinations."""
import contextlib
import json
import subprocess
import tempfile
import sys
import textwrap

import numpy as np
import pytest

import gbmo
from gbmo import metrics as _metrics

QUIET = {"verbosity": 0, "n_threads": 2}
# One tree reproduces the targets exactly: no shrinkage, no L2, one row per leaf allowed.
EXACT = {**QUIET, "learning_rate": 1.0, "lambda_l2": 0.0, "min_samples_leaf": 1,
         "min_child_weight": 0.0, "max_leaves": 1024}


def _train(X, y, params=None, rounds=5, **dataset_kwargs):
    return gbmo.train({**QUIET, **(params or {})}, gbmo.Dataset(X, y, **dataset_kwargs), rounds)


def _assert_sensible(prediction, shape):
    assert prediction.shape == shape
    assert np.all(np.isfinite(prediction)), "predictions contain NaN or inf"


# --------------------------------------------------------------------------
# Capturing the raw scores kept by the training loop
# --------------------------------------------------------------------------
class _Capture:
    prediction = None

    def __call__(self, y, prediction, weight=None, n_threads=None):
        self.prediction = np.array(prediction, copy=True)
        return 0.0


@contextlib.contextmanager
def _capturing_metric(name="_robustness_capture"):
    """A metric that records what the training loop evaluates on the training
    set: the transform of the raw scores the loop itself kept up to date."""
    capture = _Capture()
    _metrics.METRICS[name] = capture
    try:
        yield name, capture
    finally:
        _metrics.METRICS.pop(name, None)


def _train_capturing(X, y, params, rounds):
    dataset = gbmo.Dataset(X, y)
    with _capturing_metric() as (name, capture):
        booster = gbmo.train({**QUIET, **params, "metric": name}, dataset, rounds,
                             valid_sets=[dataset])
    return booster, capture.prediction


# ==========================================================================
# Part 2: edge cases
# ==========================================================================
def test_one_row_does_not_train_but_validates():
    """A Dataset of one row trains nothing; as a validation set it works with
    or without reference= (an audit found it refused without one, where the
    README says such a set takes the training set's bin edges)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2))
    y = X[:, 0]
    with pytest.raises(ValueError, match="the training set has 1 row; training needs at least 2"):
        gbmo.train({"verbosity": -1}, gbmo.Dataset(X[:1], y[:1]), 1)
    train = gbmo.Dataset(X, y)
    alone = gbmo.train({"verbosity": -1}, train, 3, valid_sets=[gbmo.Dataset(X[:1], y[:1])])
    referenced = gbmo.train({"verbosity": -1}, train, 3, valid_sets=[train.create_valid(X[:1],
                                                                                        y[:1])])
    assert alone.evals_result == referenced.evals_result
    assert len(alone.evals_result["valid_0"]["rmse"]) == 3


def test_two_rows():
    X = np.array([[0.0], [1.0]])
    y = np.array([-1.0, 3.0])
    # Default min_samples_leaf (20) cannot split two rows: the mean.
    booster = _train(X, y)
    np.testing.assert_allclose(booster.predict(X), [1.0, 1.0])
    # One row per leaf allowed: one tree fits both rows exactly.
    booster = _train(X, y, EXACT, rounds=1)
    np.testing.assert_allclose(booster.predict(X), y, rtol=1e-6)
    assert booster.trees[0].n_leaves == 2


@pytest.mark.parametrize("d", [1, 3])
def test_every_feature_constant_gives_the_target_mean(d):
    rng = np.random.default_rng(0)
    X = np.full((40, 4), 2.5)
    y = rng.normal(size=(40, d)) * 3 + 7
    booster = _train(X, y if d > 1 else y[:, 0], {"min_samples_leaf": 1}, rounds=4)
    assert all(tree.n_leaves == 1 for tree in booster.trees)
    np.testing.assert_allclose(booster.init_score, y.mean(axis=0))
    X_new = rng.normal(size=(5, 4))
    prediction = booster.predict(X_new)
    _assert_sensible(prediction, (5, d) if d > 1 else (5,))
    expected = np.tile(y.mean(axis=0), (5, 1))
    np.testing.assert_allclose(prediction, expected if d > 1 else expected[:, 0], rtol=1e-6)


def test_every_feature_constant_classification_gives_class_frequencies():
    X = np.ones((30, 2))
    y = np.array([0] * 10 + [1] * 5 + [2] * 15)
    booster = _train(X, y, {"objective": "softmax", "min_samples_leaf": 1}, rounds=3)
    prediction = booster.predict(X[:2])
    _assert_sensible(prediction, (2, 3))
    np.testing.assert_allclose(prediction[0], [10 / 30, 5 / 30, 15 / 30], atol=1e-6)


def test_one_feature_learns_a_step():
    x = np.linspace(-1, 1, 200)[:, None]
    y = np.where(x[:, 0] > 0.1, 5.0, -2.0)
    booster = _train(x, y, {**EXACT, "max_leaves": 2}, rounds=1)
    assert booster.trees[0].n_leaves == 2
    np.testing.assert_allclose(booster.predict(x), y, atol=1e-6)
    np.testing.assert_allclose(booster.predict(np.array([[-5.0], [5.0]])), [-2.0, 5.0],
                               atol=1e-6)


@pytest.mark.parametrize("num_class, present, n_outputs", [
    (3, 0, 3),      # num_class given, only class 0 in y
    (None, 0, 2),   # no num_class: at least two outputs
    (None, 2, 3),   # no num_class: max label + 1 outputs
    (4, 2, 4),
])
def test_softmax_with_a_single_class_present(num_class, present, n_outputs):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    y = np.full(30, present)
    params = {"objective": "softmax"}
    if num_class is not None:
        params["num_class"] = num_class
    booster = _train(X, y, params, rounds=3)
    prediction = booster.predict(rng.normal(size=(7, 2)))
    _assert_sensible(prediction, (7, n_outputs))
    np.testing.assert_allclose(prediction.sum(axis=1), 1.0)
    assert np.all(prediction[:, present] > 0.99)
    # Its model survives a save / load round trip (finite raw scores).
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


@pytest.mark.parametrize("label", [0.0, 1.0])
def test_sigmoid_with_a_single_label_present(label):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(25, 2))
    booster = _train(X, np.full(25, label), {"objective": "sigmoid"}, rounds=3)
    prediction = booster.predict(X)
    _assert_sensible(prediction, (25,))
    np.testing.assert_allclose(prediction, label, atol=1e-6)


@pytest.mark.parametrize("d, params", [
    (1, {}),
    (1000, {}),
    (1000, {"split": "sparse", "top_k": 10}),
    (1000, {"tree_mode": "single_output", "max_leaves": 4}),
])
def test_one_and_a_thousand_outputs(d, params):
    rng = np.random.default_rng(3)
    n = 60
    X = rng.normal(size=(n, 3))
    W = rng.normal(size=(3, d))
    Y = np.tanh(X @ W) + 0.01 * rng.normal(size=(n, d))
    rounds = 2 if params.get("tree_mode") == "single_output" else 5
    dataset = gbmo.Dataset(X, Y)
    booster = gbmo.train({**QUIET, "min_samples_leaf": 5, "learning_rate": 0.5, **params},
                         dataset, rounds, valid_sets=[dataset])
    prediction = booster.predict(X[:9])
    _assert_sensible(prediction, (9, d))
    assert booster.n_outputs == d
    assert booster.predict_leaf(X).shape == (n, booster.num_trees)
    rmse = booster.evals_result["training"]["rmse"]
    baseline = np.sqrt(((Y - Y.mean(axis=0)) ** 2).mean(axis=0)).mean()
    assert rmse[-1] < rmse[0] < baseline, (rmse, baseline)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


def test_n_below_twice_min_samples_leaf_gives_a_single_leaf_and_the_mean():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(39, 3))
    y = rng.normal(size=(39, 2))
    booster = _train(X, y, {"min_samples_leaf": 20}, rounds=5)
    assert all(tree.n_leaves == 1 and tree.n_nodes == 1 for tree in booster.trees)
    prediction = booster.predict(rng.normal(size=(4, 3)))
    np.testing.assert_allclose(prediction, np.tile(y.mean(axis=0), (4, 1)), atol=1e-6)


def test_feature_with_a_single_non_nan_row():
    rng = np.random.default_rng(5)
    n = 50
    X = np.full((n, 2), np.nan)
    X[17, 0] = 4.0
    X[:, 1] = rng.normal(size=n)
    y = np.where(X[:, 1] > 0, 1.0, -1.0)
    booster = _train(X, y, {**EXACT, "max_leaves": 2}, rounds=1)
    prediction = booster.predict(X)
    _assert_sensible(prediction, (n,))
    np.testing.assert_allclose(prediction, y, atol=1e-6)
    # Only that row has a value in the first feature: alone, it is a constant model.
    booster = _train(X[:, :1], y, {"min_samples_leaf": 1}, rounds=3)
    _assert_sensible(booster.predict(X[:, :1]), (n,))


def test_feature_with_one_distinct_value_and_nans_can_split_on_missingness():
    """A feature holding one value and NaN carries the information 'missing or
    not': y equal to that indicator must be learned (two bins are observed:
    the value's and the missing one)."""
    x = np.where(np.arange(100) % 2 == 0, 1.0, np.nan)[:, None]
    y = np.isnan(x[:, 0]) * 10.0
    booster = _train(x, y, EXACT, rounds=1)
    _assert_sensible(booster.predict(x), (100,))
    assert booster.trees[0].n_leaves == 2, "the value-vs-missing split was not considered"
    np.testing.assert_allclose(booster.predict(x), y, atol=1e-6)


def test_all_nan_columns():
    rng = np.random.default_rng(6)
    n = 60
    X = np.full((n, 3), np.nan)
    X[:, 1] = rng.normal(size=n)
    y = 2 * X[:, 1]
    booster = _train(X, y, {"min_samples_leaf": 2}, rounds=5)
    _assert_sensible(booster.predict(X), (n,))
    for tree in booster.trees:
        assert set(tree.node_feature[tree.node_left >= 0]) <= {1}
    # Every column NaN: the constant model.
    booster = _train(np.full((n, 2), np.nan), y, {"min_samples_leaf": 1}, rounds=3)
    prediction = booster.predict(np.full((3, 2), np.nan))
    np.testing.assert_allclose(prediction, y.mean(), rtol=1e-6)


@pytest.mark.parametrize("n_distinct", [20, 600])  # distinct-value edges, quantile edges
def test_infinite_values_act_as_the_extreme_values(n_distinct):
    """+inf is treated as the largest value and -inf as the smallest: on a step
    function, the inf rows are predicted like the extreme finite rows."""
    finite = np.linspace(-10, 10, n_distinct)
    x = np.concatenate([finite, [np.inf, -np.inf, np.inf, -np.inf]])
    y = np.where(x > 0, 3.0, -3.0)
    X = x[:, None]
    booster = _train(X, y, {**EXACT, "max_leaves": 2, "max_bins": 255}, rounds=1)
    prediction = booster.predict(X)
    _assert_sensible(prediction, (len(x),))
    if n_distinct <= 255:
        np.testing.assert_allclose(prediction, y, atol=1e-6)
    else:  # quantile bins: the bin holding the step may mix both sides
        away_from_step = np.abs(x) > 0.1
        np.testing.assert_array_equal(np.sign(prediction[away_from_step]),
                                      np.sign(y[away_from_step]))
    largest, smallest = prediction[n_distinct - 1], prediction[0]
    np.testing.assert_array_equal(prediction[np.isposinf(x)], largest)
    np.testing.assert_array_equal(prediction[np.isneginf(x)], smallest)
    probe = booster.predict(np.array([[np.inf], [-np.inf], [1e308], [-1e308]]))
    np.testing.assert_array_equal(probe, [largest, smallest, largest, smallest])
    np.testing.assert_allclose([largest, smallest], [3.0, -3.0], atol=0.05)
    # inf at prediction time only, on a model trained without it.
    booster = _train(finite[:, None], y[:n_distinct], {**EXACT, "max_leaves": 2}, rounds=1)
    probe = booster.predict(np.array([[np.inf], [-np.inf], [10.0], [-10.0]]))
    np.testing.assert_array_equal(probe[:2], probe[2:])
    np.testing.assert_allclose(probe[:2], [3.0, -3.0], atol=0.05)


def test_infinite_values_in_float32():
    x = np.array([-np.inf, -2, -1, 1, 2, np.inf] * 5, dtype=np.float32)[:, None]
    y = np.where(x[:, 0] > 0, 1.0, 0.0)
    booster = _train(x, y, {**EXACT, "max_leaves": 2}, rounds=1)
    np.testing.assert_allclose(booster.predict(x), y, atol=1e-6)


@pytest.mark.parametrize("values", [
    [1e300, 2e300, 3e300, 4e300],
    [-1.7976931348623157e308, -1e308, 1e308, 1.7976931348623157e308],
    [1e-300, 2e-300, 3e-300, 4e-300],
    [5e-324, 1e-323, 1.5e-323, 2e-323],          # subnormals, adjacent
    [-1e-300, -0.0, 1e-300, 1e300],
])
def test_huge_and_tiny_feature_magnitudes_stay_distinct(values):
    x = np.repeat(np.array(values), 3)[:, None]
    y = np.repeat(np.arange(4.0), 3)
    booster = _train(x, y, EXACT, rounds=1)
    assert booster.trees[0].n_leaves == 4
    prediction = booster.predict(x)
    _assert_sensible(prediction, (12,))
    np.testing.assert_allclose(prediction, y, atol=1e-6)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(loaded.predict(x), prediction)


@pytest.mark.parametrize("scale", [1e20, 1e30])
def test_large_targets_within_float32_range_train(scale):
    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] > 0) * scale
    booster = _train(X, y, {"min_samples_leaf": 5, "learning_rate": 1.0}, rounds=2)
    prediction = booster.predict(X)
    assert np.all(np.isfinite(prediction))
    np.testing.assert_allclose(prediction, y, atol=1e-3 * scale)


@pytest.mark.parametrize("scale", [1e39, 1e150])
def test_targets_beyond_float32_range_give_an_error_or_finite_predictions(scale):
    """Gradients are float32: targets of magnitude 1e39 .. 1e150 overflow them.
    Acceptable outcomes are a clear ValueError naming the target, or a model with
    finite predictions (e.g. by scaling); today training silently produces NaN
    leaf values, NaN predictions and a model file that does not load."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(50, 2))
    y = rng.normal(size=50) * scale
    try:
        booster = _train(X, y, {"min_samples_leaf": 5}, rounds=3)
    except ValueError as err:
        assert "target" in str(err)
        return
    prediction = booster.predict(X)
    assert np.all(np.isfinite(prediction)), "NaN/inf predictions for large targets"
    gbmo.Booster(model_str=booster.model_to_string())


def test_duplicated_rows_give_the_same_model_as_the_original():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(50, 3))
    y = X[:, 0] - X[:, 1] ** 2
    params = {"lambda_l2": 0.0, "min_child_weight": 0.0, "max_leaves": 8}
    once = _train(X, y, {**params, "min_samples_leaf": 2}, rounds=4)
    twice = _train(np.r_[X, X], np.r_[y, y], {**params, "min_samples_leaf": 4}, rounds=4)
    assert [t.n_leaves for t in once.trees] == [t.n_leaves for t in twice.trees]
    np.testing.assert_allclose(twice.predict(X), once.predict(X), rtol=1e-6, atol=1e-9)
    # Identical rows with different targets: nothing to split, the mean.
    booster = _train(np.ones((20, 2)), np.arange(20.0), {"min_samples_leaf": 1}, rounds=2)
    np.testing.assert_allclose(booster.predict(np.ones((1, 2))), 9.5)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8, np.uint64,
                                   bool, np.float16])
def test_integer_bool_and_float16_inputs_match_float64(dtype):
    rng = np.random.default_rng(10)
    X = rng.integers(0, 2 if dtype is bool else 100, size=(80, 3)).astype(dtype)
    y = X[:, 0].astype(np.float64) * 0.5 + X[:, 2].astype(np.float64)
    params = {"min_samples_leaf": 2}
    booster = _train(X, y, params, rounds=5)
    reference = _train(X.astype(np.float64), y, params, rounds=5)
    prediction = booster.predict(X)
    _assert_sensible(prediction, (80,))
    np.testing.assert_array_equal(prediction, reference.predict(X.astype(np.float64)))
    assert booster.model_to_string() == reference.model_to_string()


def test_float16_with_nan_and_inf():
    X = np.array([[np.nan], [np.inf], [-np.inf], [1.0], [2.0], [3.0]] * 4, dtype=np.float16)
    y = np.tile([0.0, 5.0, -5.0, 1.0, 2.0, 3.0], 4)
    booster = _train(X, y, EXACT, rounds=1)
    np.testing.assert_allclose(booster.predict(X), y, atol=1e-6)


@pytest.fixture(scope="module")
def layout_data():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(120, 4))
    X[::9, 2] = np.nan
    Y = np.c_[X[:, 0] * 2, np.sin(X[:, 1])]
    return X, Y


def _layouts(X):
    fortran = np.asfortranarray(X)
    big = np.zeros((3 * X.shape[0], 2 * X.shape[1]))
    big[::3, ::2] = X
    strided = big[::3, ::2]
    reversed_view = X[::-1][::-1]
    column_reversed = np.ascontiguousarray(X[:, ::-1])[:, ::-1]
    read_only = X.copy()
    read_only.flags.writeable = False
    read_only_fortran = np.asfortranarray(X)
    read_only_fortran.flags.writeable = False
    float32_strided = np.zeros((X.shape[0], 2 * X.shape[1]), dtype=np.float32)[:, ::2]
    float32_strided[...] = X
    return {"fortran": fortran, "strided": strided, "reversed": reversed_view,
            "column_reversed": column_reversed, "read_only": read_only,
            "read_only_fortran": read_only_fortran, "float32_strided": float32_strided}


@pytest.mark.parametrize("layout", ["fortran", "strided", "reversed", "column_reversed",
                                    "read_only", "read_only_fortran", "float32_strided"])
def test_memory_layouts_give_the_same_model_and_predictions(layout_data, layout):
    X, Y = layout_data
    view = _layouts(X)[layout]
    if layout != "float32_strided":
        assert np.array_equal(view, X, equal_nan=True)
        assert layout not in ("strided", "column_reversed") or not view.flags.c_contiguous
    params = {"min_samples_leaf": 3, "max_leaves": 8}
    reference_X = X if layout != "float32_strided" else np.ascontiguousarray(view)
    reference = _train(reference_X, Y, params, rounds=4)
    booster = _train(view, Y, params, rounds=4)
    assert booster.model_to_string() == reference.model_to_string()
    np.testing.assert_array_equal(reference.predict(view), reference.predict(reference_X))
    np.testing.assert_array_equal(reference.predict_leaf(view), reference.predict_leaf(reference_X))
    if layout.startswith("read_only"):
        assert not view.flags.writeable  # untouched


def test_read_only_targets_and_weights():
    rng = np.random.default_rng(12)
    X = rng.normal(size=(40, 2))
    y = X[:, 0].copy()
    w = np.ones(40)
    for a in (X, y, w):
        a.flags.writeable = False
    booster = _train(X, y, {"min_samples_leaf": 2}, rounds=3, weight=w)
    _assert_sensible(booster.predict(X), (40,))


@pytest.mark.parametrize("n_distinct, with_nan", [(255, False), (256, False), (255, True),
                                                   (256, True)])
def test_255_and_256_distinct_values_with_max_bins_255(n_distinct, with_nan):
    x = np.arange(n_distinct, dtype=np.float64)
    y = np.sin(x / 7.0) * 10
    if with_nan:
        x = np.r_[x, np.nan, np.nan]
        y = np.r_[y, 100.0, 100.0]
    X = x[:, None]
    booster, kept = _train_capturing(X, y, {**EXACT, "max_bins": 255}, rounds=1)
    prediction = booster.predict(X)
    _assert_sensible(prediction, (len(x),))
    np.testing.assert_array_equal(prediction, kept.ravel())
    finite = ~np.isnan(x)
    distinct_predictions = len(np.unique(prediction[finite]))
    if n_distinct == 255:
        # Every value has its own bin: one tree fits exactly.
        assert distinct_predictions == 255
        np.testing.assert_allclose(prediction, y, atol=1e-4)
    else:
        # 256 values in 255 bins: exactly one pair of values shares a bin.
        assert distinct_predictions == 255
        assert np.sum(np.abs(prediction - y) > 1e-3) == 2
    if with_nan:
        np.testing.assert_allclose(prediction[~finite], 100.0, atol=1e-4)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    np.testing.assert_array_equal(loaded.predict(X), prediction)


# --------------------------------------------------------------------------
# predict's thread count (run in a subprocess: a crash must not kill pytest)
# --------------------------------------------------------------------------
_PREDICT_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import gbmo
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 3))
    booster = gbmo.train({"verbosity": 0, "n_threads": 1}, gbmo.Dataset(X, X[:, 0]), 5)
    mode, value = sys.argv[1], json.loads(sys.argv[2])
    X_big = rng.normal(size=(20000, 3))  # enough work for a parallel region
    try:
        if mode == "argument":
            prediction = booster.predict(X_big, n_threads=value)
        else:
            data = json.loads(booster.model_to_string())
            data["params"]["n_threads"] = value
            try:
                loaded = gbmo.Booster(model_str=json.dumps(data))
            except gbmo.ModelFormatError as err:
                print("REJECTED", err)
                sys.exit(0)
            prediction = loaded.predict(X_big)
    except (ValueError, TypeError) as err:
        print("ERROR", type(err).__name__, err)
        sys.exit(0)
    assert np.all(np.isfinite(prediction))
    print("OK")
""")


def _run_predict_script(mode, value):
    # Run outside the source tree so the installed (compiled) package is imported.
    return subprocess.run([sys.executable, "-c", _PREDICT_SCRIPT, mode, json.dumps(value)],
                          capture_output=True, text=True, timeout=300, cwd=tempfile.gettempdir())


@pytest.mark.parametrize("value", [-1, 0, 1, 2])
def test_predict_n_threads_all_cores_conventions_work(value):
    """-1 and 0 mean all cores, as for the training parameter."""
    result = _run_predict_script("argument", value)
    assert result.returncode == 0 and result.stdout.startswith("OK"), (
        f"predict(n_threads={value}) died with code {result.returncode}: "
        f"{result.stdout[-300:]} {result.stderr[-300:]}")


@pytest.mark.parametrize("mode, value", [
    ("argument", -5), ("argument", 100_000), ("argument", "a"), ("argument", 2.5),
    ("model_file", -5), ("model_file", 100_000), ("model_file", "a"),
])
def test_bad_n_threads_is_a_clear_error_never_a_crash(mode, value):
    """A bad thread count (as predict's argument, or in a model file's params)
    is refused with an error naming n_threads, or replaced by a sane count —
    the process must not abort or segfault."""
    result = _run_predict_script(mode, value)
    assert result.returncode == 0, (
        f"{mode} n_threads={value!r}: the process died with code {result.returncode}: "
        f"{result.stderr[-300:]}")
    if mode == "argument":
        assert result.stdout.startswith("OK") or (
            result.stdout.startswith("ERROR") and "n_threads" in result.stdout), result.stdout
    else:
        # The thread count belongs to the machine that predicts, not to the file:
        # a file's value is ignored or the file is rejected, never an error at predict.
        assert result.stdout.startswith(("OK", "REJECTED")), result.stdout


# ==========================================================================
# Part 1: growth invariants, checked from the outside
# ==========================================================================
GROWTH_CASES = {
    "default": {},
    "max_leaves_2": {"max_leaves": 2},
    "max_leaves_3": {"max_leaves": 3, "min_samples_leaf": 1},
    "max_leaves_large": {"max_leaves": 500, "min_samples_leaf": 1},
    "max_depth_1": {"max_depth": 1},
    "max_depth_3": {"max_depth": 3, "min_samples_leaf": 2},
    "min_samples_leaf_large": {"min_samples_leaf": 90},
    "hist_cache_1": {"hist_cache": 1, "max_leaves": 40, "min_samples_leaf": 2},
    "hist_cache_1_depthwise": {"hist_cache": 1, "growth": "depthwise", "max_depth": 4,
                               "min_samples_leaf": 2},
    "depthwise": {"growth": "depthwise", "max_leaves": 7},
    "depthwise_unbounded": {"growth": "depthwise", "max_leaves": 300, "min_samples_leaf": 1},
    "sparse_top_1": {"split": "sparse", "top_k": 1},
    "sparse_top_2_hist_cache_1": {"split": "sparse", "top_k": 2, "hist_cache": 1,
                                  "min_samples_leaf": 3},
    "sparse_restricted_top_2": {"split": "sparse_restricted", "top_k": 2},
    "sparse_restricted_depthwise": {"split": "sparse_restricted", "top_k": 1,
                                    "growth": "depthwise", "max_depth": 3},
    "single_output": {"tree_mode": "single_output"},
    "single_output_max_leaves_2": {"tree_mode": "single_output", "max_leaves": 2},
    "min_gain": {"min_gain": 0.05, "min_samples_leaf": 1},
    "softmax": {"objective": "softmax", "max_leaves": 16, "min_samples_leaf": 3},
    "softmax_sparse": {"objective": "softmax", "split": "sparse", "top_k": 1},
    "sigmoid_hist_cache_1": {"objective": "sigmoid", "hist_cache": 1, "max_leaves": 20,
                             "min_samples_leaf": 2},
}


@pytest.fixture(scope="module")
def growth_data():
    rng = np.random.default_rng(13)
    n, p = 300, 5
    X = rng.normal(size=(n, p))
    X[rng.random((n, p)) < 0.1] = np.nan
    X[:, 4] = np.round(X[:, 4])  # few distinct values
    Z = np.nan_to_num(X)
    Y = np.c_[np.sin(2 * Z[:, 0]), Z[:, 1] ** 2 - Z[:, 2], rng.normal(size=n)]
    classes = (Z[:, 0] > 0).astype(int) + (Z[:, 1] > 0.5) + (Z[:, 3] > 1)
    return X, Y, classes


def _targets_for(params, Y, classes):
    objective = params.get("objective", "mse")
    if objective == "softmax":
        return classes
    if objective == "sigmoid":
        return (Y > 0).astype(float)
    return Y


@pytest.mark.parametrize("name", list(GROWTH_CASES))
def test_growth_invariants(growth_data, name):
    params = GROWTH_CASES[name]
    X, Y, classes = growth_data
    y = _targets_for(params, Y, classes)
    n, p = X.shape
    booster, kept = _train_capturing(X, y, params, rounds=6)
    leaves = booster.predict_leaf(X)
    assert leaves.shape == (n, booster.num_trees)
    max_leaves = params.get("max_leaves", 31)
    for t, tree in enumerate(booster.trees):
        tree.validate(p, booster.n_outputs)
        internal = tree.node_left >= 0
        is_leaf = ~internal
        # Every node is a leaf or has two children.
        assert np.all((tree.node_right >= 0) == internal), f"tree {t}: a node with one child"
        assert is_leaf.sum() == tree.n_leaves <= max_leaves
        # Every leaf holds rows; every row is in exactly one leaf.
        assert np.all(tree.node_count[is_leaf] > 0), f"tree {t}: an empty leaf"
        assert tree.node_count[is_leaf].sum() == n
        assert np.all(tree.node_count[is_leaf] >= params.get("min_samples_leaf", 20)) \
            or tree.n_leaves == 1
        for node in np.flatnonzero(internal):
            assert tree.node_count[tree.node_left[node]] + tree.node_count[tree.node_right[node]] \
                == tree.node_count[node]
        if params.get("max_depth", -1) > 0:
            depth = np.zeros(tree.n_nodes, dtype=int)
            for node in np.flatnonzero(internal):
                depth[tree.node_left[node]] = depth[tree.node_right[node]] = depth[node] + 1
            assert depth.max() <= params["max_depth"]
        # A fresh traversal of X puts as many rows in each leaf as the grower did.
        per_leaf = np.zeros(tree.n_leaves, dtype=np.int64)
        per_leaf[tree.node_value[is_leaf]] = tree.node_count[is_leaf]
        np.testing.assert_array_equal(np.bincount(leaves[:, t], minlength=tree.n_leaves),
                                      per_leaf, err_msg=f"tree {t}")
    # The raw scores the training loop updated equal a fresh traversal of X.
    np.testing.assert_array_equal(kept, booster.predict(X))
    assert np.all(np.isfinite(kept))


@pytest.mark.parametrize("name", ["default", "max_leaves_2", "max_leaves_3", "max_depth_1",
                                  "max_depth_3", "min_samples_leaf_large", "hist_cache_1",
                                  "hist_cache_1_depthwise", "depthwise", "single_output",
                                  "single_output_max_leaves_2", "min_gain"])
def test_every_leaf_of_the_first_round_has_its_own_newton_value(growth_data, name):
    """When growth stops (max_leaves, max_depth, min_samples_leaf, cache), the
    open nodes are leaves with their own values: in the first MSE round a leaf
    holding rows I has value lr * sum_I(y - mean) / (|I| + lambda), never 0
    for a non-zero sum nor the value of another node."""
    params = {**GROWTH_CASES[name], "learning_rate": 0.7, "lambda_l2": 0.5}
    X, Y, _ = growth_data
    booster = _train(X, Y, params, rounds=1)
    leaves = booster.predict_leaf(X)
    residual = Y - Y.mean(axis=0)
    for t, tree in enumerate(booster.trees):
        outputs = [t] if params.get("tree_mode") == "single_output" else list(range(3))
        values = tree.dense_leaf_values(3)[:, outputs]
        for leaf in range(tree.n_leaves):
            rows = leaves[:, t] == leaf
            expected = 0.7 * residual[rows][:, outputs].sum(axis=0) / (rows.sum() + 0.5)
            np.testing.assert_allclose(values[leaf], expected, rtol=1e-5, atol=1e-7,
                                       err_msg=f"tree {t} leaf {leaf}")


def test_hist_cache_does_not_change_the_trees(growth_data):
    X, Y, _ = growth_data
    for growth in ("bestfirst", "depthwise"):
        params = {"max_leaves": 40, "min_samples_leaf": 2, "growth": growth}
        small = _train(X, Y, {**params, "hist_cache": 1}, rounds=3)
        large = _train(X, Y, {**params, "hist_cache": 1024}, rounds=3)
        assert [t.n_leaves for t in small.trees] == [t.n_leaves for t in large.trees]
        for a, b in zip(small.trees, large.trees):
            np.testing.assert_array_equal(a.node_feature, b.node_feature)
            np.testing.assert_array_equal(a.node_bin, b.node_bin)
        np.testing.assert_allclose(small.predict(X), large.predict(X), rtol=1e-9, atol=1e-12)
