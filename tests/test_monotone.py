"""Monotone constraints: the bounded split search against a brute force over
the rows, and trained models that are monotone where asked."""
import numpy as np
import pytest
import scipy.sparse as sp

# the shared reference helpers (tests/split_reference.py)
pytest.register_assert_rewrite("split_reference")
from split_reference import (  # noqa: E402
    HESS_WIDTHS, LAMBDA, child_stats, hess_width_of, make_node, node_histogram, rows_left,
    unset_outputs)

import gbmo  # noqa: E402
from gbmo._core._split import find_best_splits  # noqa: E402


# -- the kernel -------------------------------------------------------------------
def bounded_score(G, H, lower, upper, smoothing=None, count=None):
    """(twice the objective decrease, the values) of a leaf whose values
    -G / (H + lambda) are clipped to [lower, upper]; with smoothing =
    (anchor, path_smooth, max_output), first cut to +-max_output and pulled
    toward anchor as LightGBM smooths a leaf of count rows."""
    h = H + LAMBDA
    values = -G / h
    if smoothing is not None:
        anchor, path_smooth, max_output = smoothing
        ratio = count / path_smooth
        values = (np.clip(values, -max_output, max_output) * ratio / (ratio + 1)
                  + anchor / (ratio + 1))
    values = np.clip(values, lower, upper)
    return float(-(2 * G * values + h * values ** 2).sum()), values


def brute_force_bounded(bins, n_bins, missing_bin, grad, hess, hess_width, lower, upper,
                        direction, min_samples_leaf, smoothing=None):
    """(gain, bin, missing_left) of the best split of one feature whose outputs
    are constrained by direction (per output), in the kernel's scan order;
    smoothing as bounded_score's, for the parent and both children."""
    everything = np.ones(len(bins), dtype=bool)
    G, H, _ = child_stats(grad, hess, everything, hess_width, 1.0)
    parent, _ = bounded_score(G, H, lower, upper, smoothing, len(bins))
    has_missing = bool((bins == missing_bin).any())
    best = (-1.0, -1, False)
    for missing_left in ((False, True) if has_missing else (False,)):
        for t in range(n_bins):
            left = rows_left(bins, t, missing_left, missing_bin)
            if not min_samples_leaf <= left.sum() <= len(bins) - min_samples_leaf:
                continue
            GL, HL, nL = child_stats(grad, hess, left, hess_width, 1.0)
            GR, HR, nR = child_stats(grad, hess, ~left, hess_width, 1.0)
            score_left, values_left = bounded_score(GL, HL, lower, upper, smoothing, nL)
            score_right, values_right = bounded_score(GR, HR, lower, upper, smoothing, nR)
            if np.any(direction * (values_right - values_left) < 0):
                continue
            gain = 0.5 * (score_left + score_right - parent)
            if gain > best[0]:
                best = (gain, t, missing_left if has_missing else nL >= nR)
    return best


@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_bounded_split_search_matches_the_brute_force(hess_kind, d, seed):
    """Random bounds that clip some values, constraints of every sign per
    (feature, output), missing values in some features, 1 and 2 threads."""
    rng = np.random.default_rng(seed)
    hess_width = hess_width_of(hess_kind, d)
    n_bins = [6, 9, 4, 7]
    X_binned, grad, hess = make_node(rng, 120, n_bins, {1, 3}, 15, d, hess_width)
    hist, parent = node_histogram(X_binned, grad, hess, 15)
    monotone = rng.integers(-1, 2, size=(4, d)).astype(np.int8)
    values = -grad.sum(axis=0) / (120 + LAMBDA)
    lower = np.where(rng.random(d) < 0.5, values - rng.uniform(0, 0.05, d), -np.inf)
    upper = np.where(rng.random(d) < 0.5, values + rng.uniform(0, 0.05, d), np.inf)
    features = np.arange(4, dtype=np.int32)
    for n_threads in (1, 2):
        gain, bin_, missing_left = unset_outputs(4)
        find_best_splits(hist, features, np.array(n_bins, dtype=np.int32), parent, d,
                         hess_width, 1.0, LAMBDA, 3, 0.0, gain, bin_, missing_left, n_threads,
                         monotone, lower, upper)
        for f in range(4):
            expected = brute_force_bounded(X_binned[f], n_bins[f], 15, grad, hess, hess_width,
                                           lower, upper, monotone[f], 3)
            assert (bin_[f], bool(missing_left[f])) == expected[1:], (f, monotone[f])
            np.testing.assert_allclose(gain[f], expected[0], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("hess_kind", HESS_WIDTHS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_path_smoothed_search_matches_the_brute_force(hess_kind, seed):
    """path_smooth scores every child and the parent with values cut to
    +-max_output and pulled toward the node's own values (the anchor), then
    bounded; with constraints of every sign and missing values."""
    rng = np.random.default_rng(40 + seed)
    d = 3
    hess_width = hess_width_of(hess_kind, d)
    n_bins = [6, 9, 4, 7]
    X_binned, grad, hess = make_node(rng, 120, n_bins, {1, 3}, 15, d, hess_width)
    hist, parent = node_histogram(X_binned, grad, hess, 15)
    monotone = rng.integers(-1, 2, size=(4, d)).astype(np.int8)
    anchor = rng.normal(0, 0.05, d)
    lower, upper = np.full(d, -np.inf), np.full(d, np.inf)
    lower[0], upper[1] = anchor[0] - 0.01, anchor[1] + 0.02
    features = np.arange(4, dtype=np.int32)
    for path_smooth, max_output in ((5.0, np.inf), (40.0, 0.03)):
        smoothing = (anchor, path_smooth, max_output)
        for n_threads in (1, 2):
            gain, bin_, missing_left = unset_outputs(4)
            find_best_splits(hist, features, np.array(n_bins, dtype=np.int32), parent, d,
                             hess_width, 1.0, LAMBDA, 3, 0.0, gain, bin_, missing_left,
                             n_threads, monotone, lower, upper, anchor=anchor,
                             path_smooth=path_smooth, max_output=max_output)
            for f in range(4):
                expected = brute_force_bounded(X_binned[f], n_bins[f], 15, grad, hess,
                                               hess_width, lower, upper, monotone[f], 3,
                                               smoothing)
                assert (bin_[f], bool(missing_left[f])) == expected[1:], (f, path_smooth)
                np.testing.assert_allclose(gain[f], expected[0], rtol=1e-8, atol=1e-10)


def test_the_kernel_refuses_path_smooth_without_bounds_or_anchor():
    rng = np.random.default_rng(0)
    X_binned, grad, hess = make_node(rng, 50, [4, 4], set(), 15, 2, 2)
    hist, parent = node_histogram(X_binned, grad, hess, 15)
    common = (hist, np.arange(2, dtype=np.int32), np.full(2, 4, np.int32), parent, 2, 2, 1.0,
              LAMBDA, 3, 0.0, *unset_outputs(2), 1)
    bounds = (np.zeros((2, 2), np.int8), np.full(2, -np.inf), np.full(2, np.inf))
    with pytest.raises(ValueError, match="path_smooth searches with bounds"):
        find_best_splits(*common, path_smooth=1.0)
    with pytest.raises(ValueError, match=r"an anchor value per output \(2,\)"):
        find_best_splits(*common, *bounds, path_smooth=1.0, anchor=np.zeros(3))
    with pytest.raises(ValueError, match="path_smooth must be >= 0 and max_output > 0"):
        find_best_splits(*common, *bounds, path_smooth=-1.0, anchor=np.zeros(2))


def test_unbounded_search_without_constraints_finds_the_unconstrained_split():
    rng = np.random.default_rng(4)
    X_binned, grad, hess = make_node(rng, 200, [8, 8, 8], {2}, 15, 3, 3)
    hist, parent = node_histogram(X_binned, grad, hess, 15)
    features, n_bins = np.arange(3, dtype=np.int32), np.full(3, 8, dtype=np.int32)
    plain, bounded = unset_outputs(3), unset_outputs(3)
    find_best_splits(hist, features, n_bins, parent, 3, 3, 1.0, LAMBDA, 3, 0.0, *plain, 1)
    find_best_splits(hist, features, n_bins, parent, 3, 3, 1.0, LAMBDA, 3, 0.0, *bounded, 1,
                     np.zeros((3, 3), np.int8), np.full(3, -np.inf), np.full(3, np.inf))
    np.testing.assert_array_equal(bounded[1:], plain[1:])
    np.testing.assert_allclose(bounded[0], plain[0], rtol=1e-10)


def test_the_kernel_refuses_constraints_of_the_wrong_shape():
    rng = np.random.default_rng(0)
    X_binned, grad, hess = make_node(rng, 50, [4, 4], set(), 15, 2, 2)
    hist, parent = node_histogram(X_binned, grad, hess, 15)
    with pytest.raises(ValueError, match=r"monotone must be \(2, 2\)"):
        find_best_splits(hist, np.arange(2, dtype=np.int32), np.full(2, 4, np.int32), parent, 2,
                         2, 1.0, LAMBDA, 3, 0.0, *unset_outputs(2), 1,
                         np.zeros((2, 1), np.int8), np.zeros(2), np.zeros(2))


# -- trained models -----------------------------------------------------------------
def problem(rng, n=1500):
    X = rng.uniform(-2, 2, size=(n, 3))
    Y = np.column_stack([X[:, 0] + np.sin(3 * X[:, 0]) + X[:, 1],
                         -X[:, 0] ** 3 + 0.5 * np.sin(4 * X[:, 0]) + X[:, 2]])
    X[rng.random(X.shape) < 0.05] = np.nan
    return X, Y + 0.3 * rng.normal(size=Y.shape)


def violations(booster, X, feature, direction, n_rows=60):
    """Per output, how many rows' predictions move against direction (per
    output) along a grid of the feature, the other features held."""
    grid = np.linspace(-2.5, 2.5, 41)
    counts = 0
    for row in X[:n_rows]:
        Z = np.repeat(row[None], len(grid), axis=0)
        Z[:, feature] = grid
        steps = np.diff(booster.predict(Z, raw_score=True).reshape(len(grid), -1), axis=0)
        counts = counts + np.any(direction * steps < 0, axis=0)
    return counts


@pytest.mark.parametrize("params", [
    {}, {"tree_mode": "single_output"}, {"growth": "depthwise", "max_depth": 4},
    {"subsample": 0.7, "colsample_bynode": 0.7},
])
@pytest.mark.parametrize("constraints, direction", [
    ([1, 0, 0], np.array([1, 1])),
    ([[1, -1], [0, 0], [0, 0]], np.array([1, -1])),
])
def test_trained_models_are_monotone_where_asked(params, constraints, direction):
    rng = np.random.default_rng(5)
    X, Y = problem(rng)
    base = {"verbosity": 0, "max_leaves": 15, "min_samples_leaf": 5}
    free = gbmo.train(dict(base, **params), gbmo.Dataset(X, Y), 30)
    assert np.all(violations(free, X, 0, direction) > 0)  # the data alone would break it
    constrained = gbmo.train(dict(base, monotone_constraints=constraints, **params),
                             gbmo.Dataset(X, Y), 30)
    np.testing.assert_array_equal(violations(constrained, X, 0, direction), [0, 0])
    # the unconstrained features still shape the fit
    assert constrained.feature_importance("split")[1:].min() > 0


def test_one_output_constrained_leaves_the_others_free():
    rng = np.random.default_rng(6)
    X, Y = problem(rng)
    booster = gbmo.train({"verbosity": 0, "monotone_constraints": [[0, -1], [0, 0], [0, 0]]},
                         gbmo.Dataset(X, Y), 30)
    counts = violations(booster, X, 0, np.array([1, -1]))
    assert counts[0] > 0 and counts[1] == 0


def test_sparse_x_grows_the_trees_of_its_dense_copy():
    X = sp.random(800, 4, density=0.4, random_state=7, format="csr")
    D = X.toarray()
    Y = np.column_stack([np.sin(3 * D[:, 0]) + D[:, 0], D[:, 1] - D[:, 0]])
    params = {"verbosity": 0, "monotone_constraints": [1, 0, 0, 0], "max_leaves": 8}
    from_sparse = gbmo.train(params, gbmo.Dataset(X, Y), 10)
    from_dense = gbmo.train(params, gbmo.Dataset(D, Y), 10)
    np.testing.assert_allclose(from_sparse.predict(D), from_dense.predict(D), atol=1e-12)


def test_per_output_importance_sums_to_the_bounded_gains():
    rng = np.random.default_rng(8)
    X, Y = problem(rng)
    booster = gbmo.train({"verbosity": 0, "monotone_constraints": [1, 0, -1]},
                         gbmo.Dataset(X, Y), 10)
    np.testing.assert_allclose(booster.feature_importance("gain", per_output=True).sum(axis=1),
                               booster.feature_importance("gain"), rtol=1e-9, atol=1e-12)


def test_all_zero_constraints_grow_the_unconstrained_model():
    rng = np.random.default_rng(9)
    X, Y = problem(rng, 500)
    free = gbmo.train({"verbosity": 0}, gbmo.Dataset(X, Y), 5)
    zeros = gbmo.train({"verbosity": 0, "monotone_constraints": [0, 0, 0]}, gbmo.Dataset(X, Y), 5)
    np.testing.assert_array_equal(zeros.predict(X), free.predict(X))


@pytest.mark.parametrize("bounding", [{"monotone_constraints": [1, 0, 0]},
                                      {"path_smooth": 5.0}])
def test_an_objective_that_sets_the_leaves_itself_is_refused_with_constraints(bounding):
    from gbmo.multitask import ObjectiveResult

    rng = np.random.default_rng(0)
    X, Y = problem(rng, 200)

    def objective(y, raw):
        grad = raw - y
        return ObjectiveResult(grad, np.ones_like(grad), grad, np.ones_like(grad))

    with pytest.raises(ValueError, match="monotone_constraints, max_delta_step and path_smooth "
                                         "bound the leaf"):
        gbmo.train({"verbosity": 0, "objective": objective, **bounding}, gbmo.Dataset(X, Y), 1)


@pytest.mark.parametrize("params, message", [
    ({"monotone_constraints": [1, 0]}, "monotone_constraints must give one value per feature "
                                       r"\(3\) or one row of 2 per feature"),
    ({"monotone_constraints": [[1, 0, 0]] * 3}, "one row of 2 per feature"),
    ({"monotone_constraints": 1}, "must be a list with one value per feature"),
    ({"monotone_constraints": [2, 0, 0]}, r"'monotone_constraints' = 2 is out of range"),
    ({"monotone_constraints": [1, 0, 0], "split": "sparse", "top_k": 1},
     "'monotone_constraints' needs split='dense'"),
    ({"monotone_constraints": [1, 0, 0], "growth": "symmetric"}, "growth 'bestfirst' or"),
    ({"mc": [1, 0, 0], "ensembler": "weighted_sum"}, "no ensembler and score_function"),
])
def test_bad_constraints_are_refused_by_name_before_training(params, message):
    rng = np.random.default_rng(0)
    X, Y = problem(rng, 100)
    with pytest.raises(ValueError, match=message):
        gbmo.train(dict(params, verbosity=0), gbmo.Dataset(X, Y), 1)


def test_the_estimators_take_constraints_as_a_list_or_an_array():
    from gbmo.sklearn import GBMORegressor

    rng = np.random.default_rng(10)
    X, Y = problem(rng, 800)
    as_list = GBMORegressor(n_estimators=20, monotone_constraints=[[1, -1], [0, 0], [0, 0]],
                            random_state=0).fit(X, Y)
    as_array = GBMORegressor(n_estimators=20, random_state=0,
                             monotone_constraints=np.array([[1, -1], [0, 0], [0, 0]])).fit(X, Y)
    np.testing.assert_array_equal(as_list.predict(X), as_array.predict(X))
    np.testing.assert_array_equal(violations(as_list.booster_, X, 0, np.array([1, -1])), [0, 0])


def test_a_dict_of_features_names_or_indices_grows_the_list_s_model():
    """XGBoost's and scikit-learn's form: {feature: value}, the features it
    leaves out free; saved as given, the model loads and predicts the same."""
    import pandas as pd

    from gbmo.sklearn import GBMORegressor

    rng = np.random.default_rng(11)
    X, Y = problem(rng, 600)
    frame = pd.DataFrame(X, columns=["dose", "age", "weight"])
    listed = gbmo.train({"verbosity": 0, "monotone_constraints": [[1, -1], [0, 0], [0, 0]]},
                        gbmo.Dataset(frame, Y), 10).predict(frame)
    for given in ({"dose": [1, -1]}, {0: [1, -1]}, {"dose": [1, -1], "age": [0, 0]}):
        booster = gbmo.train({"verbosity": 0, "monotone_constraints": given},
                             gbmo.Dataset(frame, Y), 10)
        np.testing.assert_array_equal(booster.predict(frame), listed)
        loaded = gbmo.Booster(model_str=booster.model_to_string())
        np.testing.assert_array_equal(loaded.predict(frame), listed)
    one_value = gbmo.train({"verbosity": 0, "monotone_constraints": [1, 0, 0]},
                           gbmo.Dataset(frame, Y), 10).predict(frame)
    model = GBMORegressor(n_estimators=10, monotonic_cst={"dose": 1}).fit(frame, Y)
    np.testing.assert_array_equal(model.predict(frame), one_value)


@pytest.mark.parametrize("given, named, error, message", [
    ({"height": 1}, True, ValueError, r"monotone_constraints names 'height', which is not a "
                                      r"feature name; the names are \['dose', 'age', 'weight'\]"),
    ({"dose": 1}, False, ValueError, "monotone_constraints names the feature 'dose', but X has "
                                     "no feature names"),
    ({5: 1}, True, ValueError, r"monotone_constraints constrains feature 5, out of range; X "
                               r"has 3 features \(indices 0 \.\. 2\)"),
    ({1.5: 1}, True, TypeError, "as a dict maps features .names or indices. to values; got "
                                "the key 1.5"),
    ({"dose": 2}, True, ValueError, r"'monotone_constraints' = 2 is out of range"),
    ({"dose": 1, "age": [0, 1]}, True, ValueError, r"monotone_constraints as a dict gives every "
                                                   r"feature one value, or every feature a list"),
])
def test_a_dict_naming_what_x_lacks_is_refused_by_name(given, named, error, message):
    import pandas as pd

    rng = np.random.default_rng(0)
    X, Y = problem(rng, 100)
    data = pd.DataFrame(X, columns=["dose", "age", "weight"]) if named else X
    with pytest.raises(error, match=message):
        gbmo.train({"verbosity": 0, "monotone_constraints": given}, gbmo.Dataset(data, Y), 1)


# -- max_delta_step: the same bounds, set at the root -------------------------------
def test_max_delta_step_bounds_every_leaf_and_scores_the_clipped_values():
    rng = np.random.default_rng(20)
    X = rng.normal(size=(2000, 4))
    Y = np.column_stack([5 * np.sign(X[:, 0]), X[:, 1]]) + 0.1 * rng.normal(size=(2000, 2))
    params = {"verbosity": 0, "learning_rate": 0.2, "max_delta_step": 0.5}
    for mode in ({}, {"tree_mode": "single_output"}, {"growth": "depthwise"}):
        model = gbmo.train({**params, **mode}, gbmo.Dataset(X, Y), 30)
        largest = max(np.abs(t.dense_leaf_values(2)).max() for t in model.trees)
        assert largest <= 0.2 * 0.5 + 1e-12
        assert largest == pytest.approx(0.1)  # the first output's leaves hit the bound


def test_max_delta_step_on_a_single_leaf_is_the_clipped_newton_step():
    """No split (min_samples_leaf above n): the leaf is clip(-G / (H + lambda),
    -m, m) times the learning rate, per output."""
    rng = np.random.default_rng(21)
    X = rng.normal(size=(300, 2))
    Y = np.column_stack([rng.normal(3.0, 1.0, 300), rng.normal(0.1, 1.0, 300)])
    params = {"verbosity": 0, "max_delta_step": 0.4, "min_samples_leaf": 10**6,
              "learning_rate": 0.5, "lambda_l2": 2.0}
    model = gbmo.train(params, gbmo.Dataset(X, Y), 2)
    raw = Y.mean(axis=0)
    for _ in range(2):
        step = np.clip(-(raw - Y).sum(axis=0) / (300 + 2.0), -0.4, 0.4)
        raw = raw + 0.5 * step
    # float32 gradients: agreement to their precision
    np.testing.assert_allclose(model.predict(X[:2]), np.tile(raw, (2, 1)), rtol=1e-6)


@pytest.mark.parametrize("name", ["max_delta_step", "path_smooth"])
def test_max_delta_step_and_path_smooth_need_the_dense_bounded_search(name):
    X = np.random.default_rng(22).normal(size=(40, 2))
    for params in ({"split": "sparse", "top_k": 1}, {"growth": "symmetric"},
                   {"ensembler": "mtgbm"}):
        with pytest.raises(ValueError, match=f"parameter '{name}' needs split='dense'"):
            gbmo.train({"verbosity": 0, name: 1.0, **params},
                       gbmo.Dataset(X, np.column_stack([X[:, 0], X[:, 1]])), 1)
    if name == "path_smooth":  # max_delta_step <= 0 means none
        with pytest.raises(ValueError, match="parameter 'path_smooth'.*-1"):
            gbmo.train({"verbosity": 0, name: -1.0}, gbmo.Dataset(X, X[:, 0]), 1)


def test_goss_renews_the_leaves_within_max_delta_step():
    """GOSS sets a tree's leaves again from every row; max_delta_step bounds
    them, and a bound that never binds leaves the renewed model as it was."""
    rng = np.random.default_rng(23)
    X = rng.normal(size=(3000, 4))
    Y = np.column_stack([5 * np.sign(X[:, 0]), X[:, 1]]) + 0.1 * rng.normal(size=(3000, 2))
    params = {"verbosity": 0, "data_sample_strategy": "goss", "learning_rate": 0.2}
    free = gbmo.train(params, gbmo.Dataset(X, Y), 20)
    loose = gbmo.train({**params, "max_delta_step": 1e9}, gbmo.Dataset(X, Y), 20)
    np.testing.assert_allclose(loose.predict(X), free.predict(X), rtol=1e-9)
    tight = gbmo.train({**params, "max_delta_step": 0.5}, gbmo.Dataset(X, Y), 20)
    assert max(np.abs(t.dense_leaf_values(2)).max() for t in tight.trees) <= 0.1 + 1e-12


# -- path_smooth: the bounded search with values pulled toward the parent's ----------
def first_tree_reference_values(X, Y, model, path_smooth, tree=0, output=None):
    """The leaf values (before the learning rate) of an MSE model's first tree
    (or, with output, the first tree of that output in single-output mode) as
    LightGBM's path smoothing sets them, from the rows of each node: the root
    keeps -G / (H + lambda), every other node that value pulled toward its
    parent's by path_smooth / (n + path_smooth). Keyed by leaf index."""
    frame = model.trees_to_dataframe()
    frame = frame[frame.tree_index == tree].set_index("node_index")
    leaf_of_row = model.predict(X, pred_leaf=True).reshape(len(X), -1)[:, tree]
    target = Y if output is None else Y[:, output:output + 1]
    residual = target.mean(axis=0) - target
    rows = {node: np.zeros(len(X), dtype=bool) for node in frame.index}
    for node, leaf in frame.leaf_index.dropna().items():
        climbing = node
        while climbing != -1:  # every node above the leaf holds its rows
            rows[climbing] |= leaf_of_row == leaf
            climbing = frame.parent_index[climbing]
    value = {}
    for node in frame.index:  # parents come before their children
        count = rows[node].sum()
        newton = -residual[rows[node]].sum(axis=0) / (count + LAMBDA)
        parent = frame.parent_index[node]
        if parent == -1:
            value[node] = newton
        else:
            ratio = count / path_smooth
            value[node] = newton * ratio / (ratio + 1) + value[parent] / (ratio + 1)
    return {int(frame.leaf_index[node]): value[node] for node in frame.index
            if frame.is_leaf[node]}


@pytest.mark.parametrize("params", [{}, {"tree_mode": "single_output"},
                                    {"growth": "depthwise", "max_depth": 4}])
@pytest.mark.parametrize("path_smooth", [3.0, 200.0])
def test_path_smooth_pulls_every_leaf_toward_its_parent_s_value(params, path_smooth):
    pytest.importorskip("pandas")  # trees_to_dataframe
    rng = np.random.default_rng(30)
    X = rng.normal(size=(1500, 4))
    Y = np.column_stack([np.sign(X[:, 0]) + X[:, 1], X[:, 0] * X[:, 2]])
    Y = Y + 0.3 * rng.normal(size=Y.shape)
    model = gbmo.train({"verbosity": 0, "max_leaves": 12, "min_samples_leaf": 10,
                        "learning_rate": 0.5, "path_smooth": path_smooth, **params},
                       gbmo.Dataset(X, Y), 1)
    single = params.get("tree_mode") == "single_output"
    for tree, output in ((0, 0), (1, 1)) if single else ((0, None),):
        expected = first_tree_reference_values(X, Y, model, path_smooth, tree, output)
        leaves = model.trees[tree].leaf_values
        for leaf, value in expected.items():
            # float32 gradients: agreement to their precision
            np.testing.assert_allclose(leaves[leaf], 0.5 * value, rtol=1e-5, atol=1e-7)
    unsmoothed = gbmo.train({"verbosity": 0, "max_leaves": 12, "min_samples_leaf": 10,
                             "learning_rate": 0.5, **params}, gbmo.Dataset(X, Y), 1)
    # smoothing moves values toward the root's: the leaves spread less
    assert np.ptp(model.predict(X), axis=0).max() < np.ptp(unsmoothed.predict(X), axis=0).max()


@pytest.mark.parametrize("params", [{"path_smooth": 5.0}, {"path_smooth": 80.0},
                                    {"path_smooth": 20.0, "lambda_l1": 3.0},
                                    {"path_smooth": 20.0, "min_data_in_leaf": 50}])
def test_path_smooth_grows_lightgbm_s_trees(params):
    """Integer features of 8 values, which both libraries bin one value a bin:
    the same splits and the same smoothed leaves, round after round."""
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(31)
    X = rng.integers(0, 8, size=(3000, 4)).astype(float)
    y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * (X[:, 2] > 3) + 0.3 * rng.normal(size=3000)
    common = {"learning_rate": 0.1, "num_leaves": 12, "lambda_l2": 1.0, "verbose": -1,
              **params}
    ours = gbmo.train(common, gbmo.Dataset(X, y), 8)
    theirs = lightgbm.train({**common, "objective": "regression"}, lightgbm.Dataset(X, y), 8)
    # float32 gradients in both: agreement to their precision
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0, atol=1e-6)
    smoothless = gbmo.train({**common, "path_smooth": 0.0}, gbmo.Dataset(X, y), 8)
    assert np.abs(smoothless.predict(X) - ours.predict(X)).max() > 1e-3


@pytest.mark.parametrize("objective", ["quantile", "l1"])
def test_a_negligible_path_smooth_changes_neither_residual_leaves_nor_plain_ones(objective):
    """A pull of 1e-310 (where count / path_smooth overflows) or 1e-9 leaves
    every value as it was: quantile and L1 leaves are still set from their
    residuals after the split, as LightGBM sets them."""
    rng = np.random.default_rng(32)
    X = rng.normal(size=(1500, 4))
    y = 10 * (np.sin(X[:, 0]) + X[:, 1]) + rng.standard_t(3, size=1500)
    params = {"verbosity": 0, "objective": objective, "max_leaves": 12}
    unsmoothed = gbmo.train(params, gbmo.Dataset(X, y), 30).predict(X)
    for path_smooth in (1e-310, 1e-9):
        smoothed = gbmo.train({**params, "path_smooth": path_smooth}, gbmo.Dataset(X, y),
                              30).predict(X)
        np.testing.assert_allclose(smoothed, unsmoothed, rtol=1e-6, atol=1e-6)


def test_lightgbm_s_monotone_method_names_take_the_basic_method_alone():
    """LightGBM users' monotone_constraints_method='basic' and
    monotone_penalty=0 (its defaults) run; the methods and the penalty gbmo
    has not are refused by name."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=300)
    base = {"monotone_constraints": [1, 0], "verbosity": -1}
    plain = gbmo.train(base, gbmo.Dataset(X, y), 5)
    named = gbmo.train({**base, "mc_method": "basic", "monotone_penalty": 0},
                       gbmo.Dataset(X, y), 5)
    np.testing.assert_array_equal(named.predict(X), plain.predict(X))
    with pytest.raises(ValueError, match=r"'intermediate' is not allowed; allowed: basic "
                                         r"\(gbmo bounds leaves by LightGBM's basic method"):
        gbmo.train({**base, "monotone_constraints_method": "intermediate"}, gbmo.Dataset(X, y), 1)
    with pytest.raises(ValueError, match=r"'monotone_penalty' = 2.0 is out of range; allowed: "
                                         r"\[0.0, 0.0\] \(gbmo does not penalise"):
        gbmo.train({**base, "monotone_penalty": 2.0}, gbmo.Dataset(X, y), 1)
