"""Linear leaves (linear_tree=True): the kernels against numpy references, the
fit against the normal equations solved row by row, learning a piecewise
linear target, the training scores against predict in every mode that takes
linear leaves, files, and the refusals."""
import json
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import gbmo
from gbmo._core._linear import add_linear_parts, leaf_normal_equations
from gbmo.linear_leaves import _solved

rng = np.random.default_rng(7)
N = 1200
X = rng.normal(size=(N, 5))
# a different line on each side of x0 = 0, and a third output of x3 alone
Y = np.column_stack([np.where(X[:, 0] > 0, 3 * X[:, 1], -2 * X[:, 1]) + X[:, 2],
                     np.where(X[:, 0] > 0, X[:, 1], 2.0) + 0.5 * X[:, 4],
                     1.5 * X[:, 3]])
Y += 0.05 * rng.normal(size=Y.shape)
PARAMS = {"linear_tree": True, "verbosity": -1, "max_leaves": 8, "min_samples_leaf": 10}


# -- kernels ---------------------------------------------------------------------------
def _leaves_and_features(rng, n_rows, n_features, n_leaves, p_max):
    rows = rng.permutation(n_rows).astype(np.uint32)
    cuts = np.sort(rng.choice(np.arange(1, n_rows), n_leaves - 1, replace=False))
    leaf_start = np.concatenate([[0], cuts]).astype(np.intp)
    leaf_stop = np.concatenate([cuts, [n_rows]]).astype(np.intp)
    by_leaf = [np.sort(rng.choice(n_features, rng.integers(0, p_max + 1), replace=False))
               for _ in range(n_leaves)]
    feature_start = np.concatenate([[0], np.cumsum([len(f) for f in by_leaf])]).astype(np.int64)
    features = np.concatenate(by_leaf + [np.zeros(0)]).astype(np.int32)
    return rows, leaf_start, leaf_stop, by_leaf, feature_start, features


@pytest.mark.parametrize("hess_kind", ["per output", "shared", "constant", "one output"])
@pytest.mark.parametrize("dtype,order", [(np.float64, "C"), (np.float32, "F")])
def test_leaf_normal_equations_match_numpy_sums(hess_kind, dtype, order):
    rng = np.random.default_rng(hash((hess_kind, order)) % 2**32)
    n, n_features, n_leaves, p_max = 300, 6, 5, 4
    width = 1 if hess_kind == "one output" else 3
    X = rng.normal(size=(n, n_features))
    X[rng.random(X.shape) < 0.05] = np.nan
    X[rng.random(X.shape) < 0.02] = -np.inf
    X = np.asarray(X, dtype=dtype, order=order)
    rows, leaf_start, leaf_stop, by_leaf, feature_start, features = _leaves_and_features(
        rng, n, n_features, n_leaves, p_max)
    grad = rng.normal(size=(n, width)).astype(np.float32)
    hess_width = {"per output": width, "shared": 1, "constant": 0, "one output": 1}[hess_kind]
    hess = rng.uniform(0.1, 2.0, size=(n, hess_width)).astype(np.float32)
    matrices = width if hess_width == width and width > 1 else 1
    size = p_max + 1
    ZHZ = np.zeros((n_leaves, matrices, size, size))
    Zg = np.zeros((n_leaves, width, size))
    n_used = np.zeros(n_leaves, dtype=np.int64)
    origins = np.zeros((n_leaves, size))
    leaf_normal_equations(X, rows, leaf_start, leaf_stop, feature_start, features, grad, hess,
                          ZHZ, Zg, np.zeros((n_leaves, size)), origins, n_used, 2)
    for leaf in range(n_leaves):
        p = len(by_leaf[leaf])
        in_leaf = rows[leaf_start[leaf]:leaf_stop[leaf]]
        Z = np.column_stack([X[in_leaf][:, by_leaf[leaf]].astype(np.float64),
                             np.ones(len(in_leaf))])
        complete = np.isfinite(Z).all(axis=1)
        Z, used = Z[complete], in_leaf[complete]
        assert n_used[leaf] == len(used)
        # the sums are about the leaf's first whole row, in its order
        origin = Z[0, :p] if len(Z) else np.zeros(p)
        np.testing.assert_array_equal(origins[leaf, :p], origin)
        Z[:, :p] -= origin
        # the features' entries first, the intercept's last, zeros between
        padded = np.zeros((len(Z), size))
        padded[:, :p], padded[:, -1] = Z[:, :p], 1.0
        np.testing.assert_allclose(Zg[leaf], grad[used].T.astype(float) @ padded,
                                   rtol=1e-10, atol=1e-10)
        for m in range(matrices):
            h = np.ones(len(used)) if hess_width == 0 else hess[used, m].astype(float)
            expected = np.triu((padded * h[:, None]).T @ padded)
            np.testing.assert_allclose(ZHZ[leaf, m], expected, rtol=1e-10, atol=1e-10)


def test_leaf_normal_equations_refuse_arrays_that_do_not_fit():
    X = np.zeros((4, 2))
    rows = np.arange(4, dtype=np.uint32)
    start, stop = np.array([0], dtype=np.intp), np.array([4], dtype=np.intp)
    grad = np.zeros((4, 1), dtype=np.float32)
    args = dict(ZHZ=np.zeros((1, 1, 2, 2)), Zg=np.zeros((1, 1, 2)), row_scratch=np.zeros((1, 2)),
                origins=np.zeros((1, 2)), n_used=np.zeros(1, dtype=np.int64), n_threads=1)
    with pytest.raises(ValueError, match="feature 2 is not one of X's 2"):
        leaf_normal_equations(X, rows, start, stop, np.array([0, 1]), np.array([2], np.int32),
                              grad, grad, **args)
    with pytest.raises(ValueError, match="leaf 0's features do not fit"):
        leaf_normal_equations(X, rows, start, stop, np.array([0, 2]), np.array([0, 1], np.int32),
                              grad, grad, **args)
    with pytest.raises(ValueError, match="row 9 is not one of X's 4"):
        leaf_normal_equations(X, np.array([0, 1, 2, 9], dtype=np.uint32), start, stop,
                              np.array([0, 1]), np.array([0], np.int32), grad, grad, **args)


def test_add_linear_parts_matches_a_row_by_row_sum():
    """Dense leaves of d values and sparse ones of k named outputs: every row
    adds its leaf's values, then, with none of the leaf's features missing,
    its shift plus coefficients times the values; a leaf of no features adds
    its values alone."""
    rng = np.random.default_rng(3)
    n, n_features, d = 60, 80, 4
    widths = [d, 2, d, 1, d, 2]
    listed = [None, [0, 3], None, [2], None, [1, 2]]
    # the last leaves read more features than linear.pxd gathers (64)
    counts = [2, 1, 0, 3, 70, 66]
    X = rng.normal(size=(n, n_features))
    X[:, :5][rng.random((n, 5)) < 0.1] = np.nan  # the wide leaves' rows are mostly whole
    X[:, :5][rng.random((n, 5)) < 0.05] = np.inf
    value_start = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    output_start = np.full(len(widths), -1, dtype=np.int64)
    outputs = []
    for leaf, names in enumerate(listed):
        if names is not None:
            output_start[leaf] = len(outputs)
            outputs += names
    features = [rng.choice(n_features, c, replace=False).astype(np.int32) for c in counts]
    coefficients = [rng.normal(size=(c, w)) for c, w in zip(counts, widths)]
    values, shift = rng.normal(size=value_start[-1]), rng.normal(size=value_start[-1])
    coefficient_start = np.concatenate([[0], np.cumsum([c * w for c, w in zip(counts, widths)])
                                        [:-1]]).astype(np.int64)
    leaf = rng.integers(0, len(widths), size=n).astype(np.int32)
    out = rng.normal(size=(n, d))
    expected = out.copy()
    for i, leaf_index in enumerate(leaf):
        span = slice(value_start[leaf_index], value_start[leaf_index + 1])
        part = values[span]
        row_values = X[i, features[leaf_index]]
        if counts[leaf_index] and np.isfinite(row_values).all():
            part = part + shift[span] + row_values @ coefficients[leaf_index]
        columns = listed[leaf_index] if listed[leaf_index] is not None else range(d)
        expected[i, list(columns)] += 0.5 * part
    add_linear_parts(X, leaf, value_start, output_start, values, np.array(outputs, np.int32),
                     np.concatenate([[0], np.cumsum(counts)]).astype(np.int64),
                     np.concatenate(features), coefficient_start,
                     np.concatenate([c.ravel() for c in coefficients]), shift, 0.5, out, 2)
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


def test_add_linear_parts_refuses_indices_outside_its_arrays():
    X, out = np.zeros((2, 2)), np.zeros((2, 1))
    base = dict(value_start=np.array([0, 1]), output_start=np.array([-1]), values=np.zeros(1),
                outputs=np.zeros(1, np.int32), feature_start=np.array([0, 1]),
                features=np.array([0], np.int32), coefficient_start=np.array([0]),
                coefficients=np.zeros(1), shift=np.zeros(1), scale=1.0, out=out, n_threads=1)
    with pytest.raises(ValueError, match="leaf 1 is not one of the 1"):
        add_linear_parts(X, np.array([0, 1], np.int32), **base)
    with pytest.raises(ValueError, match="feature 5 is not one of X's 2"):
        add_linear_parts(X, np.zeros(2, np.int32),
                         **{**base, "features": np.array([5], np.int32)})
    with pytest.raises(ValueError, match="leaf 0's features, coefficients or outputs fall"):
        add_linear_parts(X, np.zeros(2, np.int32), **{**base, "coefficients": np.zeros(0)})
    with pytest.raises(ValueError, match="values must hold the leaves' 1 values"):
        add_linear_parts(X, np.zeros(2, np.int32), **{**base, "values": np.zeros(2)})
    with pytest.raises(ValueError, match="value_start must not decrease from 0"):
        add_linear_parts(X, np.zeros(2, np.int32), **{**base, "value_start": np.array([-1, 0])})
    with pytest.raises(TypeError):  # found by review: None crashed the interpreter
        add_linear_parts(X, np.zeros(2, np.int32), **{**base, "feature_start": None})


# -- the fit ------------------------------------------------------------------------------
def _path_features(tree, numeric):
    """Each leaf's numeric path features, found from the root down."""
    found = {}

    def walk(node, path):
        if tree.node_left[node] < 0:
            found[int(tree.node_value[node])] = sorted(path)
            return
        feature = int(tree.node_feature[node])
        below = path | ({feature} if numeric[feature] else set())
        walk(tree.node_left[node], below)
        walk(tree.node_right[node], below)

    walk(0, set())
    return [found[leaf] for leaf in range(tree.n_leaves)]


@pytest.mark.parametrize("objective,linear_lambda,weighted", [
    ("mse", 0.0, False), ("mse", 3.0, False), ("mse", 0.0, True), ("sigmoid", 0.5, False),
    ("sigmoid", 0.0, True)])
def test_a_round_s_leaves_solve_the_newton_normal_equations(objective, linear_lambda, weighted):
    """Round 2's linear leaves against each leaf's system built from the rows
    of its leaf, the gradients at round 1's scores, and solved by numpy."""
    target = Y if objective == "mse" else (Y > np.median(Y, axis=0)).astype(float)
    Xm = X.copy()
    Xm[::13, 1] = np.nan
    Xm[5::17, 2] = np.inf  # out of the fit, as NaN
    # a fifth of the rows of weight 0: no part in the sums
    weight = (np.random.default_rng(2).uniform(0.2, 3.0, size=N)
              * (np.arange(N) % 5 > 0)) if weighted else None
    learning_rate = 0.3
    booster = gbmo.train({**PARAMS, "objective": objective, "linear_lambda": linear_lambda,
                          "learning_rate": learning_rate},
                         gbmo.Dataset(Xm, target, weight=weight), 2)
    assert booster.trees[0].linear_leaves is None  # the first round stays constant
    tree = booster.trees[1]
    raw = booster.predict(Xm, num_iteration=1, raw_score=True)
    grad, hess = (np.asarray(a, dtype=np.float64) for a in booster.loss.gradients(
        target, raw, weight))
    hess = np.broadcast_to(hess, grad.shape)
    leaf_of_row = booster.predict_leaf(Xm)[:, 1]
    linear = tree.linear_leaves
    starts = np.concatenate([[0], np.cumsum(linear.feature_counts)])
    fitted = 0
    for leaf, path in enumerate(_path_features(tree, np.ones(X.shape[1], dtype=bool))):
        features = linear.features[starts[leaf]:starts[leaf + 1]]
        if len(features) == 0:
            np.testing.assert_array_equal(linear.intercepts[leaf], tree.leaf_values[leaf])
            continue
        assert features.tolist() == path
        rows = np.flatnonzero(leaf_of_row == leaf)
        Z = np.column_stack([Xm[rows][:, path], np.ones(len(rows))])
        complete = np.isfinite(Z).all(axis=1)
        Z, rows = Z[complete], rows[complete]
        for j in range(grad.shape[1]):
            penalty = linear_lambda * np.diag([1.0] * len(path) + [0.0])
            beta = np.linalg.solve(Z.T @ (Z * hess[rows, j:j + 1]) + penalty,
                                   -Z.T @ grad[rows, j])
            np.testing.assert_allclose(linear.coefficients[starts[leaf]:starts[leaf + 1], j],
                                       learning_rate * beta[:-1], rtol=1e-6, atol=1e-9)
            np.testing.assert_allclose(linear.intercepts[leaf, j], learning_rate * beta[-1],
                                       rtol=1e-6, atol=1e-9)
        fitted += 1
    assert fitted >= 3


def test_the_lines_take_the_gradients_that_set_the_leaves():
    """Found by review: an objective's own update gradients set the leaves,
    and the lines were fit to its split gradients (twice the step here)."""
    def plain(y, raw):
        return raw - y, 2.0 * np.ones_like(raw)

    def apart(y, raw):
        return gbmo.ObjectiveResult(raw - y, np.ones_like(raw), raw - y, 2.0 * np.ones_like(raw))

    # without lambda_l2 the split gains scale alike, so both grow the same trees
    params = {**PARAMS, "lambda_l2": 0.0}
    same = [gbmo.train({**params, "objective": objective}, gbmo.Dataset(X, Y), 4)
            for objective in (plain, apart)]
    np.testing.assert_array_equal(same[0].predict_leaf(X), same[1].predict_leaf(X))
    np.testing.assert_allclose(same[1].predict(X), same[0].predict(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("per_output", [False, True])
def test_a_constant_feature_gets_no_slope_and_other_scales_stay_exact(per_output):
    """Found by review: a feature constant on a leaf's rows left a system that
    rounding kept from being singular, and np.linalg.solve gave it a slope
    set by the rounding (16x the least-norm one). Now it gets none, and
    features of far other scales keep the slopes numpy's solve finds."""
    rng = np.random.default_rng(5)
    n = 1000
    z = np.column_stack([np.full(n, 0.1), rng.normal(size=n) * 1e6 + 3e6,
                         rng.normal(size=n) * 1e-3, np.ones(n)])
    g = rng.normal(size=(n, 2))
    h = rng.uniform(0.5, 2.0, size=(n, 2)) if per_output else np.ones((n, 1))
    upper = np.stack([np.triu((z * h[:, [j]]).T @ z) for j in range(h.shape[1])], axis=0)
    upper = upper[None] if per_output else upper
    beta = _solved(upper, (g.T @ z)[None], 0.0)[0]
    for j in range(2):
        hj = h[:, j if per_output else 0]
        kept = z[:, 1:]  # the constant feature left out: its slope is 0
        expected = np.linalg.solve((kept * hj[:, None]).T @ kept, -kept.T @ g[:, j])
        assert beta[0, j] == 0.0
        np.testing.assert_allclose(beta[1:, j], expected, rtol=1e-7)
    if per_output:
        return
    # end to end: a leaf whose path splits x0 on both sides of 0.2 holds x0 = 0.2 alone
    Xs = np.column_stack([rng.choice([0.1, 0.2, 0.3], size=N), rng.normal(size=N)])
    ys = 3 * np.sin(8 * Xs[:, 0]) + Xs[:, 1] + 0.01 * rng.normal(size=N)
    booster = gbmo.train({**PARAMS, "max_leaves": 8}, gbmo.Dataset(Xs, ys), 4)
    leaves, checked = booster.predict_leaf(Xs), 0
    for t, tree in enumerate(booster.trees[1:], start=1):
        linear = tree.linear_leaves
        starts = np.cumsum(linear.feature_counts) - linear.feature_counts
        for leaf in range(tree.n_leaves):
            rows = Xs[leaves[:, t] == leaf]
            features = list(linear.features[starts[leaf]:starts[leaf]
                                            + linear.feature_counts[leaf]])
            if len(rows) and np.ptp(rows[:, 0]) == 0 and 0 in features:
                assert linear.coefficients[starts[leaf] + features.index(0), 0] == 0.0
                checked += 1
    assert checked > 0


def test_rows_of_weight_0_take_no_part_and_trees_without_lines_stay_constant():
    weight = np.where(X[:, 1] > 0.5, 1.0, 0.0)  # most leaves' rows weigh nothing
    booster = gbmo.train({**PARAMS, "min_samples_leaf": 5}, gbmo.Dataset(X, Y, weight=weight),
                         5)
    assert np.all(np.isfinite(booster.predict(X)))
    assert any(tree.linear_leaves is not None for tree in booster.trees)
    # a tree of one leaf has no line: the model stays a constant one
    stump = gbmo.train({**PARAMS, "min_samples_leaf": N}, gbmo.Dataset(X, Y), 3)
    assert all(tree.linear_leaves is None for tree in stump.trees)
    assert json.loads(stump.model_to_string())["version"] == 5
    assert stump.predict(X[:3], pred_contrib=True).shape == (3, 6, 3)


def test_bounds_are_infinite_in_the_outputs_a_line_moves():
    """Found by review: lower_bound and upper_bound took the constants alone."""
    target = np.column_stack([Y[:, 0], np.ones(N)])
    for mode in ("multi_output", "single_output"):
        booster = gbmo.train({**PARAMS, "tree_mode": mode}, gbmo.Dataset(X, target), 4)
        np.testing.assert_array_equal(booster.lower_bound(), [-np.inf, 1.0])
        np.testing.assert_array_equal(booster.upper_bound(), [np.inf, 1.0])
        assert np.all(booster.predict(X * 50)[:, 0] <= booster.upper_bound()[0])
    constant = gbmo.train({**PARAMS, "linear_tree": False}, gbmo.Dataset(X, target), 4)
    assert np.all(np.isfinite(constant.lower_bound()))
    # found by the second review: a leaf's intercepts are among its predictions
    # too, in an output no line moves
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, Y[:, :2]), 3)
    for tree in booster.trees[1:]:
        tree.linear_leaves.coefficients[:, 1] = 0.0
        tree.linear_leaves.intercepts[:, 1] += 10.0
    booster._forget_packing()
    assert np.isfinite(booster.upper_bound()[1])
    assert booster.predict(X)[:, 1].max() <= booster.upper_bound()[1]


def test_sums_of_large_values_keep_their_spread_and_overflow_makes_no_line():
    """Found by the second review: raw sums of timestamps (1.7e9 apart by
    hours) rounded their spread away, so no leaf kept a slope; values whose
    squares overflow crashed the fit (numpy's eigh of NaN)."""
    t = np.random.default_rng(9).uniform(0, 86400, size=2000)
    target = np.sin(t / 86400 * 6)
    fits = {}
    for offset in (0.0, 1.7e9):
        booster = gbmo.train({**PARAMS, "learning_rate": 0.3}, gbmo.Dataset(
            (t + offset)[:, None], target), 20)
        lines = sum(int((tree.linear_leaves.feature_counts > 0).sum())
                    for tree in booster.trees[1:] if tree.linear_leaves is not None)
        fits[offset] = lines, np.sqrt(np.mean((booster.predict((t + offset)[:, None])
                                               - target) ** 2))
    assert fits[1.7e9][0] >= 0.9 * fits[0.0][0] > 0, fits
    assert fits[1.7e9][1] <= 1.05 * fits[0.0][1], fits
    huge = X.copy()
    huge[:, 1] *= 1e200
    booster = gbmo.train(PARAMS, gbmo.Dataset(huge, Y), 4)
    assert np.all(np.isfinite(booster.predict(huge)))


def test_a_leaf_whose_slopes_are_all_0_keeps_its_constant_values():
    """Found by the second review: a binary feature is constant within each
    leaf, so every slope is 0, and the intercepts (no lambda_l2) replaced
    the leaves' values: linear_tree moved predictions by 0.18."""
    binary = np.random.default_rng(0).integers(0, 2, size=(1000, 1)).astype(float)
    target = 5 * binary[:, 0] + 0.1 * np.random.default_rng(1).normal(size=1000)
    params = {"verbosity": -1, "lambda_l2": 100.0}
    linear = gbmo.train({**params, "linear_tree": True}, gbmo.Dataset(binary, target), 10)
    constant = gbmo.train(params, gbmo.Dataset(binary, target), 10)
    assert all(tree.linear_leaves is None for tree in linear.trees)
    np.testing.assert_array_equal(linear.predict(binary), constant.predict(binary))


def test_categorical_features_stay_out_of_the_leaves_models():
    Xc = X.copy()
    Xc[:, 0] = (X[:, 0] > 0).astype(float) + 2 * (X[:, 2] > 1)
    booster = gbmo.train({**PARAMS, "categorical_feature": [0]}, gbmo.Dataset(Xc, Y), 5)
    assert any(0 in tree.node_feature[tree.node_left >= 0] for tree in booster.trees)
    for tree in booster.trees[1:]:
        assert 0 not in tree.linear_leaves.features
        assert tree.linear_leaves.features.size > 0


# -- learning and predicting ------------------------------------------------------------
def test_linear_leaves_learn_a_piecewise_linear_target_that_constants_need_many_leaves_for():
    train, test = slice(0, 900), slice(900, None)
    errors = {}
    for linear in (False, True):
        booster = gbmo.train({**PARAMS, "linear_tree": linear}, gbmo.Dataset(X[train], Y[train]),
                             60)
        errors[linear] = np.sqrt(np.mean((booster.predict(X[test]) - Y[test]) ** 2, axis=0))
    # 0.25 / 0.74, 0.14 / 0.29 and 0.09 / 0.15 when written
    assert np.all(errors[True] < 0.7 * errors[False]), errors
    assert errors[True][0] < 0.4 * errors[False][0], errors


def _predicted_by_hand(booster, X, first=0, stop=None):
    """init_score + each tree's leaf (trees first..stop): its constant values
    where the row misses a feature of the leaf's model (or the leaf has
    none), else intercept + coefficients times the values."""
    trees = booster.trees[first:stop]
    leaves = booster.predict_leaf(X)[:, first:first + len(trees)]
    out = np.tile(booster.init_score, (len(X), 1))
    for t, tree in enumerate(trees):
        dense = tree.dense_leaf_values(booster.n_outputs)
        for i, leaf in enumerate(leaves[:, t]):
            linear = tree.linear_leaves
            if linear is not None and linear.feature_counts[leaf] > 0:
                start = linear.feature_counts[:leaf].sum()
                features = linear.features[start:start + linear.feature_counts[leaf]]
                if np.isfinite(X[i, features]).all():
                    part = linear.intercepts[leaf] + X[i, features] @ linear.coefficients[
                        start:start + len(features)]
                    if tree.leaf_outputs is None:
                        out[i] += part
                    else:
                        out[i, tree.leaf_outputs[leaf]] += part
                    continue
            out[i] += dense[leaf]
    return out


@pytest.mark.parametrize("mode", ["multi_output", "single_output"])
def test_predict_adds_each_leaf_s_model_and_a_missing_feature_falls_back_to_the_constant(mode):
    """A missing or infinite value of a leaf's feature: the leaf's constant."""
    booster = gbmo.train({**PARAMS, "tree_mode": mode}, gbmo.Dataset(X, Y), 6)
    probe = X[:200].copy()
    probe[rng.random(probe.shape) < 0.15] = np.nan
    probe[rng.random(probe.shape) < 0.05] = np.inf
    np.testing.assert_allclose(booster.predict(probe), _predicted_by_hand(booster, probe),
                               rtol=1e-10, atol=1e-10)
    per_round = booster.trees_per_round
    np.testing.assert_allclose(booster.predict(probe, start_iteration=2, num_iteration=3),
                               _predicted_by_hand(booster, probe, 2 * per_round, 5 * per_round),
                               rtol=1e-10, atol=1e-10)
    # CSR X: its absent entries are zeros, as its dense form
    sparse = sp.random(100, X.shape[1], density=0.5, random_state=1, format="csr")
    np.testing.assert_allclose(booster.predict(sparse), booster.predict(sparse.toarray()),
                               rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(booster.predict(np.asarray(probe, dtype=np.float32)),
                                  booster.predict(probe.astype(np.float32).astype(np.float64)))


def test_set_leaf_output_sets_the_constant_that_rows_missing_a_feature_get():
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 3)
    tree = booster.trees[2]
    linear = tree.linear_leaves
    # a leaf of the tree's missing side for one of its features (NaN rows walk there)
    found = [(leaf, feature)
             for leaf, start in enumerate(np.cumsum(linear.feature_counts) - linear.feature_counts)
             for feature in linear.features[start:start + linear.feature_counts[leaf]]
             if np.any(booster.predict_leaf(np.where(np.arange(5) == feature, np.nan, X))[:, 2]
                       == leaf)]
    leaf, feature = found[0]
    missing = np.where(np.arange(5) == feature, np.nan, X)
    missing = missing[booster.predict_leaf(missing)[:, 2] == leaf]
    rows = X[booster.predict_leaf(X)[:, 2] == leaf]
    before, before_missing = booster.predict(rows), booster.predict(missing)
    booster.set_leaf_output(2, leaf, tree.leaf_values[leaf] + 1.0)
    # the lines stand (up to rounding: the walk adds the new value, then the line less it)
    np.testing.assert_allclose(booster.predict(rows), before, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(booster.predict(missing), before_missing + 1.0, rtol=1e-12)


def test_single_output_trees_equal_separate_linear_models_per_column():
    so = gbmo.train({**PARAMS, "tree_mode": "single_output"}, gbmo.Dataset(X, Y), 5)
    for j in range(Y.shape[1]):
        alone = gbmo.train(PARAMS, gbmo.Dataset(X, Y[:, j]), 5)
        np.testing.assert_allclose(so.predict(X)[:, j], alone.predict(X), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("extra", [
    {}, {"subsample": 0.6, "subsample_freq": 1}, {"boosting": "dart", "drop_rate": 0.5},
    {"boosting": "rf", "subsample": 0.7, "subsample_freq": 1}, {"growth": "depthwise"},
    {"growth": "symmetric", "max_depth": 3}, {"tree_mode": "single_output"},
    {"objective": "softmax"}, {"use_missing": False}, {"zero_as_missing": True},
    {"weights": True}],
    ids=lambda extra: ",".join(f"{k}={v}" for k, v in extra.items()) or "gbdt")
def test_the_scores_training_keeps_are_what_predict_gives(extra):
    """Every path that adds a linear tree to the training or a validation
    set's raw scores (bagging's walk, DART's rescaling, a forest's mean,
    the read of missing values) agrees with predict."""
    params = {**PARAMS, **extra}
    weights = params.pop("weights", False)
    Xm = X.copy()
    Xm[::7, 2] = np.nan
    Xm[::11, 1] = 0.0
    target = np.argmax(Y, axis=1) if params.get("objective") == "softmax" else Y
    weight = rng.uniform(0.5, 2.0, size=N) if weights else None
    train = gbmo.Dataset(Xm[:900], target[:900], weight=None if weight is None else weight[:900])
    valid = train.create_valid(Xm[900:], target[900:])
    metric = "multi_logloss" if params.get("objective") == "softmax" else "rmse"
    booster = gbmo.train({**params, "metric": metric}, train, 8,
                         valid_sets=[train, valid], valid_names=["train", "valid"])
    assert any(tree.linear_leaves is not None for tree in booster.trees)
    for name, rows in (("train", slice(0, 900)), ("valid", slice(900, None))):
        recorded = booster.evals_result[name][metric if metric == "rmse" else "logloss"][-1]
        predicted = booster.predict(Xm[rows])
        if metric == "rmse":
            w = weight[:900] if name == "train" and weights else np.ones(len(predicted))
            value = np.mean(np.sqrt(np.average((predicted - target[rows]) ** 2, axis=0,
                                               weights=w)))
        else:
            value = -np.mean(np.log(predicted[np.arange(len(predicted)), target[rows]]))
        assert recorded == pytest.approx(value, rel=1e-9)


@pytest.mark.parametrize("extra", [{}, {"subsample": 0.5, "subsample_freq": 1},
                                   {"tree_mode": "single_output"}, {"weights": True}])
def test_the_training_scores_are_predict_s_to_the_last_bit(extra):
    """The training loop adds a linear tree's values and then its lines in
    the order predict's walk adds them, as it does constant leaves."""
    params = dict(extra)
    weights = params.pop("weights", False)
    Xm = X.copy()
    Xm[::7, 2] = np.nan
    captured = []

    def capture(predictions, dataset):
        captured.append(np.array(predictions))
        return "none", 0.0, False

    train = gbmo.Dataset(Xm, Y, weight=rng.uniform(0.5, 2, size=N) if weights else None)
    booster = gbmo.train({**PARAMS, **params, "metric": "None"}, train, 6, valid_sets=[train],
                         feval=capture)
    assert any(tree.linear_leaves is not None for tree in booster.trees)
    np.testing.assert_array_equal(captured[-1], booster.predict(Xm))


def test_continued_training_and_rollback_keep_the_scores_predict_gives():
    valid = gbmo.Dataset(X[900:], Y[900:])
    for first_linear in (True, False):  # linear into linear, constant into linear
        first = gbmo.train({**PARAMS, "linear_tree": first_linear},
                           gbmo.Dataset(X[:900], Y[:900]), 4)
        booster = gbmo.train(PARAMS, gbmo.Dataset(X[:900], Y[:900]), 3, init_model=first,
                             valid_sets=[valid], keep_training_booster=True)
        # the continued rounds are not the model's first: all linear
        assert all(tree.linear_leaves is not None for tree in booster.trees[4:])
        booster.update()
        booster.rollback_one_iter()
        rmse = np.mean(np.sqrt(np.mean((booster.predict(X[900:]) - Y[900:]) ** 2, axis=0)))
        assert booster.eval_valid()[0][2] == pytest.approx(rmse, rel=1e-9)


def test_cv_folds_train_linear_leaves_on_their_own_rows():
    results = {linear: gbmo.cv({**PARAMS, "linear_tree": linear}, gbmo.Dataset(X, Y), 30,
                               nfold=3, return_cvbooster=True)
               for linear in (False, True)}
    folds = results[True]["cvbooster"].boosters
    assert all(tree.linear_leaves is not None for booster in folds for tree in booster.trees[1:])
    assert results[True]["valid rmse-mean"][-1] < 0.7 * results[False]["valid rmse-mean"][-1]


# -- refit ---------------------------------------------------------------------------
def test_refit_keeps_the_model_at_decay_1_and_fits_new_lines_at_decay_0():
    """As values: decay_rate of each old line kept; at 0, each leaf's line is
    the one the new rows' gradients fit, its features kept (round 2's
    against numpy's solve, the refit model's round 1 setting the scores)."""
    booster = gbmo.train({**PARAMS, "learning_rate": 0.3}, gbmo.Dataset(X[:900], Y[:900]), 3)
    np.testing.assert_array_equal(booster.refit(X[900:], Y[900:], decay_rate=1.0).predict(X),
                                  booster.predict(X))
    new_X, new_Y = X[900:], 2.0 * Y[900:]
    refitted = booster.refit(sp.csr_matrix(new_X), new_Y, decay_rate=0.0)
    tree, old = refitted.trees[1], booster.trees[1].linear_leaves
    np.testing.assert_array_equal(tree.linear_leaves.features, old.features)
    raw = refitted.predict(new_X, num_iteration=1, raw_score=True)
    grad = raw - new_Y  # mse: hessian 1
    leaf_of_row = booster.predict_leaf(new_X)[:, 1]
    starts = np.cumsum(old.feature_counts) - old.feature_counts
    checked = 0
    for leaf in range(tree.n_leaves):
        features = old.features[starts[leaf]:starts[leaf] + old.feature_counts[leaf]]
        rows = np.flatnonzero(leaf_of_row == leaf)
        if len(features) == 0 or len(rows) <= len(features) + 5:
            continue
        Z = np.column_stack([new_X[rows][:, features], np.ones(len(rows))])
        beta = np.linalg.solve(Z.T @ Z, -Z.T @ grad[rows]) * 0.3
        np.testing.assert_allclose(tree.linear_leaves.coefficients[
            starts[leaf]:starts[leaf] + len(features)], beta[:-1], rtol=1e-5, atol=1e-8)
        np.testing.assert_allclose(tree.linear_leaves.intercepts[leaf], beta[-1], rtol=1e-5,
                                   atol=1e-8)
        checked += 1
    assert checked >= 2


def test_refit_blends_a_line_its_new_rows_cannot_fit_toward_their_constant():
    """Found by review: a leaf no new row reached kept its whole line at
    decay 0 while its value went to 0 (LightGBM sets such slopes to 0)."""
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 3)
    some = X[:, 0] > 0.3  # leaves of the other side get no row
    refitted = booster.refit(X[some], Y[some], decay_rate=0.0)
    unreached = ~np.isin(booster.predict_leaf(X)[:, 1], booster.predict_leaf(X[some])[:, 1])
    assert unreached.any()
    tree_1 = (refitted.predict(X[unreached], start_iteration=1, num_iteration=1, raw_score=True)
              - refitted.init_score)
    np.testing.assert_allclose(tree_1, 0.0, atol=1e-12)
    half = booster.refit(X[some], Y[some], decay_rate=0.5).trees[1].linear_leaves
    old = booster.trees[1].linear_leaves
    leaf = int(np.flatnonzero(np.isin(np.arange(booster.trees[1].n_leaves),
                                      booster.predict_leaf(X[unreached])[:, 1])
                              & (old.feature_counts > 0))[0])
    rows = slice(old.feature_counts[:leaf].sum(), old.feature_counts[:leaf + 1].sum())
    np.testing.assert_allclose(half.coefficients[rows], 0.5 * old.coefficients[rows])
    np.testing.assert_allclose(half.intercepts[leaf], 0.5 * old.intercepts[leaf])


def test_refit_follows_a_drifted_target():
    booster = gbmo.train(PARAMS, gbmo.Dataset(X[:600], Y[:600]), 30)
    drifted = 1.5 * Y

    def error(model):
        return np.sqrt(np.mean((model.predict(X[900:]) - drifted[900:]) ** 2))

    refitted = booster.refit(X[600:900], drifted[600:900], decay_rate=0.5)
    assert error(refitted) < 0.8 * error(booster)


# -- files ------------------------------------------------------------------------------
def test_linear_models_round_trip_through_every_file_form(tmp_path):
    booster = gbmo.train({**PARAMS, "tree_mode": "single_output"}, gbmo.Dataset(X, Y), 4)
    probe = X[:300].copy()
    probe[::5, 1] = np.nan
    expected = booster.predict(probe)
    booster.save_model(tmp_path / "m.json")
    saved = json.loads((tmp_path / "m.json").read_text())
    assert saved["version"] == 6 and saved["forest"]["linear_trees"] == list(range(3, 12))
    dumped = booster.dump_model()
    assert dumped["version"] == 6 and "leaf_intercepts" in dumped["trees"][3]
    assert "leaf_intercepts" not in dumped["trees"][0]
    for loaded in (gbmo.Booster(model_file=tmp_path / "m.json"),
                   gbmo.Booster(model_str=json.dumps(dumped)),
                   pickle.loads(pickle.dumps(booster))):
        np.testing.assert_array_equal(loaded.predict(probe), expected)
    # a model without linear leaves keeps its version
    plain = gbmo.train({**PARAMS, "linear_tree": False}, gbmo.Dataset(X, Y), 2)
    assert json.loads(plain.model_to_string())["version"] == 5
    assert plain.dump_model()["version"] == 1


@pytest.mark.parametrize("edit,message", [
    (lambda f: f.update(linear_trees=[1, 9]), "field 'linear_trees' must list trees in"),
    (lambda f: f.update(linear_trees=[2, 1]), "field 'linear_trees' must list trees in"),
    (lambda f: f.pop("leaf_intercepts"), "lists linear_trees but is missing \\['leaf_intercepts'"),
    (lambda f: f.pop("linear_trees"), "holds the linear leaves' .* but no 'linear_trees'"),
    (lambda f: [f[name].append(0) for name in ("tree_nodes", "tree_leaves", "leaf_widths")]
     + [f["linear_trees"].append(3)], "tree 3: a tree with linear leaves needs leaves of at least one"),
    (lambda f: f["leaf_feature_counts"].pop(), "field 'leaf_feature_counts' must hold a count"),
    (lambda f: f["leaf_feature_counts"].__setitem__(0, -1),
     "field 'leaf_feature_counts' must hold a count"),
    (lambda f: f["leaf_features"].append(0), "field 'leaf_features' has .* entries, where"),
    (lambda f: f["leaf_coefficients"].pop(), "field 'leaf_coefficients' has .* entries, where"),
    (lambda f: f["leaf_features"].__setitem__(0, 5),
     "tree 1: field 'leaf_features' has an index outside \\[0, 5\\)"),
    (lambda f: f["leaf_intercepts"].__setitem__(0, None), "field 'leaf_intercepts' must be a list"),
    (lambda f: f["leaf_coefficients"].__setitem__(0, 1e400),
     "tree 1: field 'leaf_coefficients' contains NaN or infinite values"),
])
def test_a_broken_linear_field_is_refused_by_name(edit, message):
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 3)
    model = json.loads(booster.model_to_string())
    edit(model["forest"])
    with pytest.raises(gbmo.ModelFormatError, match=message):
        gbmo.Booster(model_str=json.dumps(model))


def test_a_broken_linear_tree_of_a_list_is_refused_by_name():
    model = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 3).dump_model()
    model["trees"][2]["leaf_coefficients"] = model["trees"][2]["leaf_coefficients"][1:]
    with pytest.raises(gbmo.ModelFormatError, match="tree 2: field 'leaf_coefficients' has shape"):
        gbmo.Booster(model_str=json.dumps(model))
    del model["trees"][2]["leaf_features"]
    with pytest.raises(gbmo.ModelFormatError, match="tree 2: tree is missing the field "
                                                    "'leaf_features'"):
        gbmo.Booster(model_str=json.dumps(model))


def test_leaf_arrays_of_a_loaded_forest_are_those_of_its_trees():
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 3)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    for mine, theirs in zip(booster.trees, loaded.trees):
        assert (mine.linear_leaves is None) == (theirs.linear_leaves is None)
        if mine.linear_leaves is not None:
            for name in ("feature_counts", "features", "coefficients", "intercepts"):
                np.testing.assert_array_equal(getattr(mine.linear_leaves, name),
                                              getattr(theirs.linear_leaves, name))
    # and so are the kernels' flat arrays of them
    for mine, theirs in zip(booster._forest(0, 3).linear_arguments,
                            loaded._forest(0, 3).linear_arguments):
        np.testing.assert_array_equal(mine, theirs)


# -- refusals ---------------------------------------------------------------------------
@pytest.mark.parametrize("extra,named", [
    ({"split": "sparse", "top_k": 1}, "split='sparse'"),
    ({"ensembler": "mtgbm"}, "ensembler='mtgbm'"),
    ({"score_function": "L2"}, "score_function='L2'"),
    ({"monotone_constraints": [1, 0, 0, 0, 0]}, "monotone_constraints=\\[1, 0, 0, 0, 0\\]"),
    ({"max_delta_step": 1.0}, "max_delta_step=1.0"),
    ({"path_smooth": 1.0}, "path_smooth=1.0"),
    ({"data_sample_strategy": "goss"}, "data_sample_strategy='goss'"),
])
def test_parameters_linear_leaves_cannot_keep_are_refused(extra, named):
    with pytest.raises(ValueError, match=f"linear_tree=True is not taken with {named}"):
        gbmo.train({**PARAMS, **extra}, gbmo.Dataset(X, Y), 2)


def test_the_l1_objective_is_refused_as_lightgbm_refuses_it():
    with pytest.raises(ValueError, match="linear_tree=True is not taken with objective 'l1'"):
        gbmo.train({**PARAMS, "objective": "regression_l1"}, gbmo.Dataset(X, Y[:, 0]), 2)


def test_linear_leaves_need_a_dense_X_and_refuse_contributions():
    sparse = sp.csr_matrix(X)
    with pytest.raises(ValueError, match="linear_tree=True needs a dense X"):
        gbmo.train(PARAMS, gbmo.Dataset(sparse, Y), 2)
    with pytest.raises(ValueError, match="linear_tree=True needs a dense X"):
        gbmo.train(PARAMS, gbmo.Dataset(X, Y), 2, valid_sets=[gbmo.Dataset(sparse, Y)])
    with pytest.raises(TypeError, match="parameter 'linear_tree' must be True or False"):
        gbmo.Dataset(X, Y, params={"linear_tree": "yes"})
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 3)
    with pytest.raises(ValueError, match="pred_contrib does not explain linear leaves"):
        booster.predict(X, pred_contrib=True)
    # the first round's constant leaves are explained
    assert booster.predict(X[:5], pred_contrib=True, num_iteration=1).shape == (5, 6, 3)


def test_the_estimators_take_linear_tree():
    model = gbmo.GBMORegressor(linear_tree=True, n_estimators=30, num_leaves=8,
                               linear_lambda=0.1).fit(X, Y)
    assert model.booster_.trees[-1].linear_leaves is not None
    assert model.score(X, Y) > 0.95


def test_a_feature_too_small_to_scale_loses_its_slope_alone():
    """Found by an audit: a feature of values near 1e-160 overflowed the
    unit-diagonal scaling of every leaf it was on, and those leaves lost the
    other features' slopes too (numpy's overflow warnings leaking out)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3))
    y = 2 * X[:, 0] + X[:, 1] + 0.1 * rng.normal(size=400)
    tiny = np.column_stack([X[:, 0] * 1e-160, X[:, 1:]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        model = gbmo.train({"verbosity": -1, "linear_tree": True}, gbmo.Dataset(tiny, y), 10)
    sloped = [tree.linear_leaves for tree in model.trees if tree.linear_leaves is not None]
    features = np.concatenate([leaves.features for leaves in sloped])
    coefficients = np.concatenate([leaves.coefficients[:, 0] for leaves in sloped])
    assert np.all(coefficients[features == 0] == 0.0)
    assert np.any(coefficients[features > 0] != 0.0)
    constant = gbmo.train({"verbosity": -1}, gbmo.Dataset(tiny, y), 10)
    rmse = [np.sqrt(np.mean((m.predict(tiny) - y) ** 2)) for m in (model, constant)]
    assert rmse[0] < rmse[1] - 0.03
