"""Gradient ensemblers: split and update gradients, the built-in ensemblers,
ObjectiveResult, and the per-leaf update pass."""
import numpy as np
import pytest

import gbmo
from gbmo._core import G_H_DTYPE, ROW_DTYPE
from gbmo._core._leaf_values import leaf_gradient_sums
from gbmo.multitask import (MTGBM, EnsemblerContext, ObjectiveResult, SketchProjection,
                            SketchRandom, SketchTopK, WeightedSum)

RNG = np.random.default_rng(7)
X = RNG.normal(size=(600, 6))
Y = np.c_[X[:, 0] + X[:, 1], X[:, 0] - X[:, 2], np.sin(X[:, 3]), 0.5 * X[:, 4]] \
    + 0.1 * RNG.normal(size=(600, 4))
PARAMS = {"verbosity": 0, "max_leaves": 8, "min_samples_leaf": 5}


def _train(params=None, y=Y, rounds=5, X=X):
    return gbmo.train({**PARAMS, **(params or {})}, gbmo.Dataset(X, y), rounds)


def _same_structure(a, b):
    for tree_a, tree_b in zip(a.trees, b.trees, strict=True):
        np.testing.assert_array_equal(tree_a.node_feature, tree_b.node_feature)
        np.testing.assert_array_equal(tree_a.node_bin, tree_b.node_bin)
        np.testing.assert_array_equal(tree_a.node_left, tree_b.node_left)


def _identity(grad, hess, context):
    return grad, hess, grad, hess


def _context(grad, seed=0):
    return EnsemblerContext(0, np.random.default_rng(seed), None, np.zeros(grad.shape))


def test_leaf_gradient_sums_match_numpy():
    rng = np.random.default_rng(1)
    rows = rng.permutation(50).astype(ROW_DTYPE)
    bounds = np.array([0, 7, 7, 30, 50])
    start, stop = bounds[:-1].astype(np.intp), bounds[1:].astype(np.intp)
    grad = rng.normal(size=(50, 3)).astype(G_H_DTYPE)
    for hess in (rng.random((50, 3)).astype(G_H_DTYPE), rng.random((50, 1)).astype(G_H_DTYPE)):
        grad_sums = np.full((4, 3), np.nan)
        hess_sums = np.full((4, hess.shape[1]), np.nan)
        leaf_gradient_sums(rows, start, stop, grad, hess, grad_sums, hess_sums, 2)
        for leaf, (a, b) in enumerate(zip(start, stop)):
            np.testing.assert_allclose(grad_sums[leaf], grad[rows[a:b]].sum(axis=0), atol=1e-5)
            np.testing.assert_allclose(hess_sums[leaf], hess[rows[a:b]].sum(axis=0), atol=1e-5)
        assert np.all(grad_sums[1] == 0) and np.all(hess_sums[1] == 0)


def test_identity_ensembler_equals_no_ensembler():
    plain, identity = _train(), _train({"ensembler": _identity})
    _same_structure(plain, identity)
    np.testing.assert_allclose(identity.predict(X), plain.predict(X), atol=1e-6)


def test_objective_result_with_equal_split_and_update_equals_gbdt_mo():
    def split_equals_update(y, raw):
        grad = raw - y
        hess = np.ones((len(y), 1))
        return ObjectiveResult(grad, hess, grad, hess)

    def squared_error(y, raw):
        return raw - y, np.ones((len(y), 1))

    plain = _train({"objective": squared_error})
    separated = _train({"objective": split_equals_update})
    _same_structure(plain, separated)
    np.testing.assert_allclose(separated.predict(X), plain.predict(X), atol=1e-6)


def test_sketch_topk_with_k_equal_d_equals_identity():
    plain = _train()
    sketch = _train({"ensembler": "sketch_topk", "ensembler_params": {"k": Y.shape[1]}})
    _same_structure(plain, sketch)
    np.testing.assert_allclose(sketch.predict(X), plain.predict(X), atol=1e-6)


def test_sketch_k_defaults_to_five_outputs_at_most():
    """Y has 4 outputs: the default k (5) keeps all 4, as k = 4 does; on 6
    outputs it keeps 5."""
    plain = _train()
    default = _train({"ensembler": "sketch_topk"})
    _same_structure(plain, default)
    np.testing.assert_allclose(default.predict(X), plain.predict(X), atol=1e-6)
    grad = RNG.normal(size=(30, 6)).astype(G_H_DTYPE)
    hess = np.ones((30, 1), dtype=G_H_DTYPE)
    for sketch in (SketchTopK(), SketchRandom()):
        split_grad, split_hess, _, _ = sketch(grad, hess, _context(grad))
        assert split_grad.shape == (30, 5) and split_hess.shape == (30, 1)


def test_split_columns_choose_the_structure_and_update_gradients_set_the_leaves():
    """sketch_topk with k = 1 picks the output with the largest gradient norm:
    the tree's structure is that of a one-output model on that column, its leaves
    are -G / (H + lambda) of every output's gradient over the leaf's rows."""
    y = Y.copy()
    y[:, 2] *= 10  # the largest gradients at the start
    sketch = _train({"ensembler": "sketch_topk", "ensembler_params": {"k": 1}}, y=y, rounds=1)
    alone = _train({}, y=y[:, 2], rounds=1)
    _same_structure(sketch, alone)
    leaves = sketch.predict_leaf(X)[:, 0]
    grad = sketch.init_score - y
    for leaf in np.unique(leaves):
        members = leaves == leaf
        expected = -0.1 * grad[members].sum(axis=0) / (members.sum() + 1.0)
        np.testing.assert_allclose(sketch.trees[0].leaf_values[leaf], expected, rtol=1e-5,
                                   atol=1e-7)


def test_sketch_topk_picks_the_largest_gradient_norms():
    grad = np.array([[1, 5, 0, 2], [1, -5, 0, 2]], dtype=G_H_DTYPE)
    hess = np.arange(8, dtype=G_H_DTYPE).reshape(2, 4)
    split_grad, split_hess, update_grad, update_hess = SketchTopK(k=2)(grad, hess, _context(grad))
    np.testing.assert_array_equal(split_grad, grad[:, [1, 3]])
    np.testing.assert_array_equal(split_hess, hess[:, [1, 3]])
    assert update_grad is grad and update_hess is hess


def test_sketch_random_samples_by_squared_norm_and_is_seeded():
    grad = np.zeros((10, 6), dtype=G_H_DTYPE)
    grad[:, [0, 2, 5]] = RNG.normal(size=(10, 3))
    chosen = [np.sort(SketchRandom(k=2)._chosen(grad, _context(grad, seed))) for seed in range(40)]
    assert all(set(c) <= {0, 2, 5} for c in chosen)  # zero-gradient outputs never drawn
    assert len({tuple(c) for c in chosen}) > 1
    np.testing.assert_array_equal(SketchRandom(k=2)._chosen(grad, _context(grad, 3)),
                                  SketchRandom(k=2)._chosen(grad, _context(grad, 3)))
    # fewer outputs with any gradient than k: those, then zero-gradient ones
    assert set(SketchRandom(k=4)._chosen(grad, _context(grad))) >= {0, 2, 5}


def test_sketch_projection_projects_the_gradient_rows():
    grad = RNG.normal(size=(20, 5)).astype(G_H_DTYPE)
    hess = RNG.random((20, 5)).astype(G_H_DTYPE)
    split_grad, split_hess, _, _ = SketchProjection(k=3)(grad, hess, _context(grad, 4))
    projection = np.random.default_rng(4).standard_normal((5, 3)) / np.sqrt(3)
    np.testing.assert_allclose(split_grad, grad @ projection, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(split_hess[:, 0], hess.mean(axis=1), rtol=1e-6)


def test_weighted_sum():
    grad = RNG.normal(size=(20, 3)).astype(G_H_DTYPE)
    hess = RNG.random((20, 3)).astype(G_H_DTYPE)
    weights = [1.0, 0.0, 2.0]
    split_grad, split_hess, _, _ = WeightedSum(weights)(grad, hess, _context(grad))
    np.testing.assert_allclose(split_grad[:, 0], grad[:, 0] + 2 * grad[:, 2], rtol=1e-5)
    np.testing.assert_allclose(split_hess[:, 0], hess[:, 0] + 2 * hess[:, 2], rtol=1e-5)
    # every split column 0: no split could ever gain
    with pytest.raises(ValueError, match=r"ensembler 'weighted_sum': at least one weight must "
                                         r"be > 0, got \[0, 0.0, 0\]"):
        WeightedSum([0, 0.0, 0])


def test_mtgbm_split_gradient_is_a_weighted_mean_of_standardized_tasks():
    grad = (RNG.normal(size=(500, 3)) * [1, 100, 0.01]).astype(G_H_DTYPE)
    hess = (RNG.random((500, 3)) + 0.5).astype(G_H_DTYPE)
    split_grad, split_hess, update_grad, update_hess = MTGBM(main_task=1)(
        grad, hess, _context(grad, 5))
    assert split_grad.shape == split_hess.shape == (500, 1)
    # every task standardised to mean 0.05, sd 0.01 (hessians 1.0, 0.1): so is any mean of them
    assert split_grad.mean() == pytest.approx(0.05, abs=1e-6)
    assert split_hess.mean() == pytest.approx(1.0, abs=1e-6)
    standardized = (grad - grad.mean(axis=0)) / grad.std(axis=0) * 0.01 + 0.05
    weights = np.linalg.lstsq(standardized, split_grad[:, 0], rcond=None)[0]
    assert weights.sum() == pytest.approx(1.0, abs=1e-4)
    assert np.argmax(weights) == 1 and weights[1] > 10 * min(weights[0], weights[2]) / 1.01
    # the update: each task's own gradient scaled by a factor in [0.5, 1]
    scale = update_grad / grad
    assert np.allclose(scale, scale[0], rtol=1e-5)
    assert np.all((scale[0] >= 0.5 - 1e-6) & (scale[0] <= 1 + 1e-6))
    assert update_hess is hess
    _, _, unscaled, _ = MTGBM(correlation=False)(grad, hess, _context(grad))
    assert unscaled is grad


def test_mtgbm_correlation_is_pearsons():
    from gbmo.multitask import _correlation

    a = RNG.normal(size=300).astype(G_H_DTYPE)
    b = 0.3 * a + RNG.normal(size=300)
    assert _correlation(a, b) == pytest.approx(np.corrcoef(a, b)[0, 1], rel=1e-9)
    assert np.isnan(_correlation(np.full(300, 2.0, dtype=G_H_DTYPE), b))


def test_mtgbm_ignores_masked_entries():
    grad = RNG.normal(size=(100, 2)).astype(G_H_DTYPE)
    hess = np.ones((100, 2), dtype=G_H_DTYPE)
    grad[:50, 1] = hess[:50, 1] = 0  # task 1's label is missing on the first half
    split_grad, _, _, _ = MTGBM(main_task=0, n_emphasized=0)(grad, hess, _context(grad))
    expected = ((grad[:, 0] - grad[:, 0].mean()) / grad[:, 0].std() * 0.01 + 0.05)
    # on the first half only task 0 contributes, with its weight (task 1 adds 0)
    ratio = split_grad[:50, 0] / expected[:50]
    assert np.allclose(ratio, ratio[0], rtol=1e-5) and 0.5 < ratio[0] < 1


def test_mtgbm_helps_a_noisy_data_poor_main_task():
    """Auxiliary tasks observed everywhere share the structure of a main task
    labelled on 15% of the rows with heavy noise: MT-GBM's main-task test error
    beats training the main task alone, on average over seeds."""
    gains = []
    for seed in range(4):
        rng = np.random.default_rng(seed)
        X_all = rng.uniform(-1, 1, size=(3000, 8))
        signal = 2 * np.sin(2 * X_all[:, 0]) + X_all[:, 1] * X_all[:, 2] + X_all[:, 3]
        y = np.c_[signal + rng.normal(scale=1.0, size=3000),
                  signal + 0.1 * X_all[:, 4] + rng.normal(scale=0.2, size=3000),
                  signal - 0.1 * X_all[:, 5] + rng.normal(scale=0.2, size=3000)]
        X_train, X_test, y_train, truth = X_all[:2000], X_all[2000:], y[:2000], signal[2000:]
        y_train = y_train.copy()
        y_train[rng.random(2000) > 0.15, 0] = np.nan
        params = {"verbosity": 0, "max_leaves": 8, "min_samples_leaf": 10, "seed": seed}
        labelled = ~np.isnan(y_train[:, 0])
        alone = gbmo.train(params, gbmo.Dataset(X_train[labelled], y_train[labelled, 0]), 60)
        multi = gbmo.train({**params, "ensembler": "mtgbm",
                            "ensembler_params": {"main_task": 0}},
                           gbmo.Dataset(X_train, y_train), 60)
        rmse = lambda p: np.sqrt(np.mean((p - truth) ** 2))
        gains.append(rmse(alone.predict(X_test)) - rmse(multi.predict(X_test)[:, 0]))
    assert np.mean(gains) > 0.05, gains


def test_mtgbm_searches_splits_without_the_l2_penalty_which_sets_the_leaves_only():
    """In MT-GBM's standardised split units (mean 0.05) lambda_l2 = 1 cost each
    split more than most gains: 176 of 300 trees stayed one leaf in a user's
    run, and the model fell far behind. The split search now takes no
    penalty, so the trees are those of lambda_l2 = 0 and only the leaves
    shrink with it."""
    rng = np.random.default_rng(3)
    X_all = rng.normal(size=(3000, 10))
    hidden = np.c_[np.sin(X_all[:, 0]), X_all[:, 1] * X_all[:, 2], np.abs(X_all[:, 3])]
    y = hidden @ rng.normal(size=(3, 20)) + 0.5 * rng.normal(size=(3000, 20))
    fit = lambda l2, rounds: gbmo.train({"verbosity": -1, "ensembler": "mtgbm",
                                         "lambda_l2": l2},
                                        gbmo.Dataset(X_all[:2000], y[:2000]), rounds)
    first, first_free = fit(1.0, 1), fit(0.0, 1)
    _same_structure(first, first_free)  # the same gradients choose the same splits
    assert not np.allclose(first.trees[0].leaf_values, first_free.trees[0].leaf_values)
    penalised = fit(1.0, 60)
    assert all(tree.n_leaves > 1 for tree in penalised.trees)
    test_rmse = np.sqrt(np.mean((penalised.predict(X_all[2000:]) - y[2000:]) ** 2))
    constant_rmse = np.sqrt(np.mean((y[:2000].mean(axis=0) - y[2000:]) ** 2))
    assert test_rmse < 0.85 * constant_rmse


def test_a_split_lambda_l2_that_is_no_penalty_is_refused():
    class Broken(MTGBM):
        split_lambda_l2 = -1.0

    with pytest.raises(ValueError, match="split_lambda_l2 must be a finite number >= 0, "
                                         "got -1.0"):
        _train({"ensembler": Broken()}, rounds=1)


@pytest.mark.parametrize("returned, message", [
    (lambda g, h, c: (g, h), r"must return \(split_grad, split_hess, update_grad"),
    (lambda g, h, c: (g[:5], h, g, h), r"split_grad of shape \(5, 4\)"),
    (lambda g, h, c: (g, np.ones((600, 2)), g, h), r"split_hess of shape \(600, 2\), expected"),
    (lambda g, h, c: (g, h, g[:, :2], h), r"update_grad of shape \(600, 2\), expected \(600, 4\)"),
    (lambda g, h, c: (g, h, g, h * np.nan), "update_hess that is not all finite"),
    (lambda g, h, c: (g.astype(str), h, g, h), "dtype <U"),
])
def test_ensembler_output_errors(returned, message):
    with pytest.raises(ValueError, match=message):
        _train({"ensembler": returned}, rounds=1)


@pytest.mark.parametrize("params, error, message", [
    ({"ensembler": "nope"}, ValueError, "unknown ensembler 'nope'; known ensemblers: mtgbm"),
    ({"ensembler": "sketch_topk", "split": "sparse", "top_k": 2}, ValueError,
     "needs split='dense'"),
    ({"ensembler": "mtgbm", "tree_mode": "single_output"}, ValueError, "tree_mode='multi_output'"),
    ({"ensembler_params": {"k": 2}}, ValueError, "without an 'ensembler'"),
    ({"ensembler": 3}, TypeError, "'ensembler' must be a registered name or a function \\(grad, hess, context\\)"),
    ({"ensembler": "sketch_topk", "ensembler_params": {"k": 0}}, ValueError,
     "k must be an integer >= 1"),
    ({"ensembler": "sketch_topk", "ensembler_params": {"q": 2}}, TypeError,
     "takes no parameter.*'q'.*it takes: k"),
    ({"ensembler": "mtgbm", "ensembler_params": {"main_task": 9}}, ValueError,
     r"main_task must be an output index in \[0, 4\)"),
    ({"ensembler": "mtgbm", "ensembler_params": {"gamma_low": 5, "gamma_high": 1}}, ValueError,
     "gamma_low <= gamma_high"),
    # the types, and what needs the outputs d: refused before binning, as the rest
    ({"ensembler": "mtgbm", "ensembler_params": {"gamma_low": "a"}}, ValueError,
     "ensembler 'mtgbm': gamma_low must be a finite number > 0, got 'a'"),
    ({"ensembler": "mtgbm", "ensembler_params": {"gamma_high": float("inf")}}, ValueError,
     "gamma_high must be a finite number > 0, got inf"),
    ({"ensembler": "mtgbm", "ensembler_params": {"main_task": -1}}, ValueError,
     "main_task must be an integer >= 0, got -1"),
    ({"ensembler": "mtgbm", "ensembler_params": {"main_task": True}}, ValueError,
     "main_task must be an integer >= 0, got True"),
    ({"ensembler": "mtgbm", "ensembler_params": {"n_emphasized": 5}}, ValueError,
     r"n_emphasized must be at most the 4 outputs, got 5; allowed: 0 \.\. 4"),
    ({"ensembler": "mtgbm", "ensembler_params": {"correlation": "yes"}}, ValueError,
     "correlation must be True or False, got 'yes'"),
    ({"ensembler": "mtgbm", "ensembler_params": {"task_probabilities": [1, 1, 1]}}, ValueError,
     "ensembler 'mtgbm': 3 task_probabilities for 4 outputs; allowed: 4, one per output"),
    ({"ensembler": "mtgbm", "ensembler_params": {"task_probabilities": [1, -1, 1, 1]}},
     ValueError, "task_probabilities must be a 1-D list of finite numbers >= 0"),
    ({"ensembler": "mtgbm", "ensembler_params": {"task_probabilities": [0, 0, 0, 0]}},
     ValueError, "at least one task probability must be > 0"),
    ({"ensembler": "weighted_sum", "ensembler_params": {"weights": [1, 2, 3]}}, ValueError,
     "ensembler 'weighted_sum': 3 weights for 4 outputs; allowed: 4, one per output"),
    ({"ensembler": "weighted_sum", "ensembler_params": {"weights": "abcd"}}, ValueError,
     "weights must be a 1-D list of finite numbers >= 0, one per output, got 'abcd'"),
    ({"ensembler": "weighted_sum", "ensembler_params": {"weights": [[1, 2], [3]]}}, ValueError,
     "weights must be a 1-D list of finite numbers >= 0"),
    # an ensembler given as an instance is checked against d as well
    ({"ensembler": WeightedSum([1, 2])}, ValueError, "2 weights for 4 outputs"),
    # k outputs of d cannot be kept when k > d (the default, 5, is min(5, d))
    ({"ensembler": "sketch_topk", "ensembler_params": {"k": 5}}, ValueError,
     r"ensembler 'sketch_topk': k = 5 is more than the 4 outputs of the target; allowed: "
     r"1 \.\. 4"),
    ({"ensembler": SketchRandom(k=7)}, ValueError,
     "ensembler 'sketch_random': k = 7 is more than the 4 outputs"),
])
def test_ensembler_parameter_errors(params, error, message):
    data = gbmo.Dataset(X, Y)
    with pytest.raises(error, match=message):
        gbmo.train({**PARAMS, **params}, data, 1)
    assert data.bin_mapper is None


@pytest.mark.parametrize("make, message", [
    (lambda: MTGBM(gamma_low="a"), "gamma_low must be a finite number > 0"),
    (lambda: MTGBM(main_task=1.5), "main_task must be an integer >= 0"),
    (lambda: MTGBM(task_probabilities=[np.nan]), "task_probabilities must be a 1-D list"),
    (lambda: WeightedSum(["1", "2"]), "weights must be a 1-D list of finite numbers"),
    # drawn without replacement: numpy refused it at the first round
    (lambda: MTGBM(n_emphasized=2, task_probabilities=[1, 0, 0]),
     r"n_emphasized = 2 is more than the 1 tasks of task_probabilities > 0; allowed: 0 \.\. 1"),
])
def test_ensembler_parameters_are_checked_when_it_is_built(make, message):
    with pytest.raises(ValueError, match=message):
        make()


def test_an_ensembler_without_check_outputs_still_trains():
    """check_outputs is optional: a plugin's class need not define it."""
    class Halved:
        def __call__(self, grad, hess, context):
            return grad / 2, hess, grad, hess

    assert not hasattr(Halved(), "check_outputs")
    assert _train({"ensembler": Halved()}, rounds=2).num_trees == 2


def test_objective_result_and_ensembler_together_is_an_error():
    def objective(y, raw):
        return ObjectiveResult(raw - y, np.ones_like(raw), raw - y, np.ones_like(raw))

    with pytest.raises(ValueError, match="use one or the other"):
        _train({"objective": objective, "ensembler": _identity}, rounds=1)


def test_ensembled_models_are_reproducible_and_save_by_name(tmp_path):
    params = {"ensembler": "sketch_random", "ensembler_params": {"k": 2}, "seed": 3}
    a, b = _train(params), _train(params)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    c = _train({**params, "seed": 4})
    assert not np.array_equal(a.predict(X), c.predict(X))
    path = tmp_path / "model.json"
    _train({"ensembler": _identity}).save_model(path)
    loaded = gbmo.Booster(model_file=path)
    assert loaded.params["ensembler"] == "custom"
    a.save_model(path)
    np.testing.assert_array_equal(gbmo.Booster(model_file=path).predict(X), a.predict(X))


def test_an_ensembler_given_as_an_instance_saves_its_parameters():
    """Found by a plugin author's audit: SketchTopK(k=1) saved no parameters,
    so training on from the loaded model's params took k's default in
    silence; a function, saved as 'custom', was refused as unknown."""
    params = {"ensembler": SketchTopK(k=1)}
    trained = _train(params)
    loaded = gbmo.Booster(model_str=trained.model_to_string())
    assert loaded.params["ensembler"] == "sketch_topk"
    assert loaded.params["ensembler_params"] == {"k": 1}
    by_instance = gbmo.train({**PARAMS, **params}, gbmo.Dataset(X, Y), 3, init_model=trained)
    by_file = gbmo.train(loaded.params, gbmo.Dataset(X, Y), 3, init_model=loaded)
    np.testing.assert_array_equal(by_file.predict(X), by_instance.predict(X))
    by_function = gbmo.Booster(model_str=_train({"ensembler": _identity}).model_to_string())
    assert by_function.params["ensembler"] == "custom"
    with pytest.raises(ValueError, match="ensembler 'custom' is how a model file records an "
                                         "ensembler given as a function or an instance"):
        gbmo.train(by_function.params, gbmo.Dataset(X, Y), 1, init_model=by_function)


def test_mtgbm_with_a_constant_gradient_column_trains():
    """Found by the long training fuzz: with num_class=3 but no row of class 2,
    that class's gradient column is constant, its correlation 0/0, and MT-GBM
    returned NaN update gradients (a ValueError out of train)."""
    rng = np.random.default_rng(3)
    X = rng.integers(-5, 6, size=(19, 1)).astype(np.float64)
    y = rng.integers(0, 2, size=19)
    params = {"objective": "softmax", "num_class": 3, "verbosity": 0, "max_leaves": 2,
              "min_samples_leaf": 1, "max_bins": 2, "lambda_l2": 0.0, "ensembler": "mtgbm"}
    booster = gbmo.train(params, gbmo.Dataset(X, y), 3)
    assert np.all(np.isfinite(booster.predict(X, raw_score=True)))
