"""The gbmo-losses plugin distribution (losses/): its objectives and ensembler
are found through entry points, their gradients are the derivatives of their
losses, they train through gbmo.train, survive a save/load round trip and
refuse bad parameters and targets with clear messages.

Assumes gbmo-losses is installed (the test command installs ./losses)."""
import ast
import importlib.metadata
import json
import pathlib
import re

import numpy as np
import pytest
from scipy.special import expit, logit

import gbmo
import gbmo_losses
from gbmo.metrics import logloss
from gbmo.multitask import EnsemblerContext
from gbmo.params import GBMO_LOSSES_OBJECTIVES
from gbmo.registry import ENSEMBLERS, LOSSES, create_ensembler, create_loss

PLUGIN_LOSSES = ["fair", "focal", "gamma", "huber", "l1", "mape", "poisson", "quantile",
                 "tweedie"]
PLUGIN_ENSEMBLERS = ["sketch_svd"]
DISTRIBUTION = "gbmo-losses"
# Small trees, two threads and no per-round log keep every training test fast.
FAST = {"verbosity": 0, "max_leaves": 8, "n_threads": 2, "learning_rate": 0.3}


def _normalized(dist_name):
    return re.sub(r"[-_.]+", "-", dist_name).lower()


# --------------------------------------------------------------------- discovery

@pytest.mark.parametrize("group, names", [("gbmo.losses", PLUGIN_LOSSES),
                                          ("gbmo.ensemblers", PLUGIN_ENSEMBLERS)])
def test_installed_metadata_declares_the_entry_points(group, names):
    declared = {ep.name: _normalized(ep.dist.name)
                for ep in importlib.metadata.entry_points(group=group)}
    assert {name: declared.get(name) for name in names} == dict.fromkeys(names, DISTRIBUTION)


@pytest.mark.parametrize("registry, names", [(LOSSES, PLUGIN_LOSSES),
                                             (ENSEMBLERS, PLUGIN_ENSEMBLERS)])
def test_registry_finds_each_plugin_in_gbmo_losses(registry, names):
    # gbmo names them to a user who installed it alone
    if registry is LOSSES:
        assert sorted(GBMO_LOSSES_OBJECTIVES) == sorted(names)
    sources = registry.sources()
    for name in names:
        assert f"distribution '{DISTRIBUTION}'" in sources[name]
        plugin = registry.get(name)
        assert plugin.__module__.startswith("gbmo_losses.")
        assert plugin.name == name


def test_plugin_imports_nothing_of_gbmo_but_the_loss_base_class():
    imported = set()
    for path in pathlib.Path(gbmo_losses.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {(alias.name, None) for alias in node.names
                             if alias.name.split(".")[0] == "gbmo"}
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "gbmo":
                imported |= {(node.module, alias.name) for alias in node.names}
    assert imported == {("gbmo.losses", "Loss")}


# --------------------------------------------------------------------- derivatives

def _cases(rng, n):
    """objective -> (parameters, unprepared target) of n rows."""
    return {
        "huber": ({"delta": 0.7}, rng.normal(size=(n, 3))),
        "fair": ({"fair_c": 0.5}, rng.normal(scale=2.0, size=(n, 2))),
        "quantile": ({"alpha": [0.1, 0.5, 0.9]}, rng.normal(size=n)),
        "l1": ({}, rng.normal(size=(n, 2))),
        "mape": ({}, rng.normal(scale=5.0, size=(n, 2))),  # |y| on both sides of 1
        "poisson": ({}, rng.poisson(2.0, size=(n, 3)).astype(float)),
        "tweedie": ({"tweedie_variance_power": 1.3}, _compound_poisson_gamma(rng, (n, 3))),
        "gamma": ({}, rng.gamma(2.0, 1.5, size=(n, 2))),
        "focal": ({"gamma": 2.0}, (rng.random((n, 3)) < 0.4).astype(float)),
    }


def _compound_poisson_gamma(rng, shape, mean=None):
    """Tweedie-like targets: a Poisson number of gamma-sized claims (often 0)."""
    mean = np.ones(shape) if mean is None else mean
    claims = rng.poisson(0.8 * mean)
    return np.where(claims > 0, rng.gamma(np.maximum(claims, 1) * 2.0, 0.625), 0.0)


def _entry_differences(loss, y, raw, step):
    """First and second central differences of value() in each entry raw[i, j]."""
    first, second = np.empty(raw.shape), np.empty(raw.shape)
    for i in range(raw.shape[0]):
        row_y = y[i:i + 1]
        centre = loss.value(row_y, raw[i:i + 1])
        for j in range(raw.shape[1]):
            up, down = raw[i:i + 1].copy(), raw[i:i + 1].copy()
            up[0, j] += step
            down[0, j] -= step
            plus, minus = loss.value(row_y, up), loss.value(row_y, down)
            first[i, j] = (plus - minus) / (2 * step)
            second[i, j] = (plus - 2 * centre + minus) / step ** 2
    return first, second


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("name", PLUGIN_LOSSES)
def test_gradients_are_the_derivatives_of_the_loss(name, weighted):
    rng = np.random.default_rng(7)
    n = 25
    params, target = _cases(rng, n)[name]
    loss = create_loss(name, **params)
    y = loss.prepare_target(target)
    d = loss.n_outputs(y)
    # Scores drawn around the start lie (almost surely) off the kinks of huber
    # and quantile, where finite differences hold.
    raw = loss.init_score(y, None) + rng.normal(size=(n, d))
    weight = rng.uniform(0.2, 3.0, size=n) if weighted else None
    grad, hess = loss.gradients(y, raw, weight)

    assert grad.dtype == hess.dtype == np.float32
    assert grad.flags.c_contiguous and hess.flags.c_contiguous
    assert grad.shape == (n, d) and hess.shape in ((n, d), (n, 1))
    w = np.ones((n, 1)) if weight is None else weight[:, None]
    first, second = _entry_differences(loss, y, raw, step=1e-4)
    np.testing.assert_allclose(grad, w * first, rtol=1e-4, atol=1e-5)
    if loss.exact_hessian:
        np.testing.assert_allclose(np.broadcast_to(hess, (n, d)), w * second,
                                   rtol=1e-3, atol=1e-4)
    if weighted:  # weights multiply the unweighted arrays, nothing else
        plain_grad, plain_hess = loss.gradients(y, raw, None)
        np.testing.assert_allclose(grad, w * plain_grad, rtol=1e-6)
        np.testing.assert_allclose(hess, w * plain_hess, rtol=1e-6)


def test_huber_and_quantile_hessians_are_one_per_row():
    rng = np.random.default_rng(0)
    for name, params, target in [("huber", {"delta": 0.1}, 10 * rng.normal(size=(30, 2))),
                                 ("quantile", {"alpha": 0.3}, rng.normal(size=30))]:
        loss = create_loss(name, **params)
        y = loss.prepare_target(target)
        _, hess = loss.gradients(y, rng.normal(size=(30, loss.n_outputs(y))), None)
        assert hess.shape == (30, 1) and np.all(hess == 1), name


def test_huber_gradient_is_the_residual_clipped_at_delta():
    loss = create_loss("huber", delta=2.0)
    y = loss.prepare_target(np.zeros((5, 1)))
    raw = np.array([[-10.0], [-1.5], [0.0], [0.5], [7.0]])
    grad, _ = loss.gradients(y, raw, None)
    np.testing.assert_array_equal(grad[:, 0], [-2.0, -1.5, 0.0, 0.5, 2.0])


def test_quantile_gradient_per_output_level():
    loss = create_loss("quantile", alpha=[0.1, 0.9])
    y = loss.prepare_target(np.array([0.0, 0.0]))
    raw = np.array([[1.0, 1.0], [-1.0, -1.0]])  # above, then below the target
    grad, _ = loss.gradients(y, raw, None)
    np.testing.assert_allclose(grad, [[0.9, 0.1], [-0.1, -0.9]])


def test_quantile_levels_of_several_targets_are_each_target_s_levels_in_turn():
    """Output j L + l is level l of target j: gradients, start scores and the
    quantile metric's levels (several levels took one target column only)."""
    rng = np.random.default_rng(5)
    loss = create_loss("quantile", alpha=[0.1, 0.5, 0.9])
    target = rng.normal(size=(40, 2))
    y = loss.prepare_target(target)
    assert loss.n_outputs(y) == 6
    raw = rng.normal(size=(40, 6))
    grad, _ = loss.gradients(y, raw, None)
    for j in range(2):
        for level_index, level in enumerate([0.1, 0.5, 0.9]):
            output = 3 * j + level_index
            expected = np.where(raw[:, output] > target[:, j], 1 - level, -level)
            np.testing.assert_allclose(grad[:, output], expected)
            assert loss.init_score(y, None)[output] == np.quantile(
                target[:, j], level, method="inverted_cdf")
    np.testing.assert_array_equal(gbmo.losses.quantile_levels(loss, 6),
                                  [0.1, 0.5, 0.9, 0.1, 0.5, 0.9])


def test_intervals_of_several_targets_train_in_one_model():
    """A second target of the first's values plus 100 gets the same
    gradients, so its outputs are the first's plus 100; non_crossing sorts
    each target's levels, not the row."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(1500, 3))
    first = 3 * X[:, 0] + rng.normal(size=1500) * (1 + np.abs(X[:, 1]))
    Y = np.column_stack([first, first + 100.0])
    params = {"objective": "quantile", "alpha": [0.9, 0.1, 0.5], "verbosity": -1}
    valid = gbmo.Dataset(X[1000:], Y[1000:])
    booster = gbmo.train(params, gbmo.Dataset(X[:1000], Y[:1000]), 40, valid_sets=[valid])
    raw = booster.predict(X[1000:], raw_score=True).reshape(-1, 2, 3)
    np.testing.assert_allclose(raw[:, 1], raw[:, 0] + 100.0, atol=1e-9)
    levels = np.array([0.9, 0.1, 0.5])
    residual = np.repeat(Y[1000:], 3, axis=1) - raw.reshape(-1, 6)
    pinball = np.mean(np.maximum(np.tile(levels, 2) * residual,
                                 (np.tile(levels, 2) - 1) * residual), axis=0)
    np.testing.assert_allclose(booster.evals_result["valid_0"]["quantile_per_output"][-1],
                               pinball, rtol=1e-9)
    ordered = gbmo.train({**params, "non_crossing": True}, gbmo.Dataset(X[:1000], Y[:1000]), 40)
    sorted_raw = np.sort(ordered.predict(X[1000:], raw_score=True).reshape(-1, 2, 3), axis=2)
    np.testing.assert_array_equal(ordered.predict(X[1000:]).reshape(-1, 2, 3),
                                  sorted_raw[:, :, [2, 0, 1]])  # levels 0.9, 0.1, 0.5


@pytest.mark.parametrize("objective, params", [
    ("quantile", {"alpha": [0.2, 0.8]}), ("quantile", {"alpha": 0.7}), ("l1", {}),
    ("mape", {}), ("huber", {"delta": 2.0})])
def test_a_missing_target_weighs_nothing_as_in_mse(objective, params):
    """NaN marks a missing label (a horizon past a series' end), as in mse:
    one tree per output, output 1's trees are those of a model of its column
    alone whose missing rows weigh 0 (start scores and quantile leaves over
    the observed values). They were refused."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(600, 3))
    Y = np.column_stack([5 * X[:, 0], 3 * X[:, 1]]) + rng.normal(size=(600, 2))
    observed = rng.random(600) > 0.3
    Y[~observed, 1] = np.nan
    settings = {"objective": objective, **params, "tree_mode": "single_output",
                "verbosity": -1}
    both = gbmo.train(settings, gbmo.Dataset(X, Y), 15)
    alone = gbmo.train(settings, gbmo.Dataset(X, np.where(observed, Y[:, 1], 0.0),
                                              weight=observed.astype(float)), 15)
    levels = both.n_outputs // 2
    np.testing.assert_array_equal(both.predict(X, raw_score=True)[:, levels:],
                                  alone.predict(X, raw_score=True).reshape(600, levels))
    loss = create_loss(objective, **params)
    y = loss.prepare_target(Y)
    grad, hess = loss.gradients(y, np.zeros((600, 2 * levels)), None)
    assert np.all(grad[~observed, levels:] == 0) and np.all(hess[~observed, levels:] == 0)


def test_focal_hessian_is_the_analytic_second_derivative_floored():
    loss = create_loss("focal", gamma=2.0)
    y = loss.prepare_target(np.ones((1, 41)))
    # Positive labels from confidently wrong (raw = -8, negative curvature)
    # to confidently right (raw = 8).
    raw = np.linspace(-8.0, 8.0, 41)[None, :]
    _, hess = loss.gradients(y, raw, None)
    _, second = _entry_differences(loss, y, raw, step=1e-4)
    curved = second > 1e-5
    assert curved.any() and (second < 0).any()
    np.testing.assert_allclose(hess[curved], second[curved], rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(hess[second < 0], 1e-6, rtol=1e-6)


def test_focal_with_gamma_zero_is_the_logistic_loss():
    rng = np.random.default_rng(1)
    loss = create_loss("focal", gamma=0.0)
    y = loss.prepare_target((rng.random((40, 3)) < 0.3).astype(float))
    raw = 2 * rng.normal(size=(40, 3))
    grad, hess = loss.gradients(y, raw, None)
    p = expit(raw)
    np.testing.assert_allclose(grad, p - y, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hess, p * (1 - p), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(loss.init_score(y, None), logit(y.mean(axis=0)), rtol=1e-8)


# --------------------------------------------------------------------- start scores

def test_start_scores_are_weighted_quantiles_like_repeated_rows():
    # Integer weights must act as repeated rows.
    rng = np.random.default_rng(2)
    target = rng.normal(size=(31, 2))
    weight = rng.integers(1, 4, size=31).astype(float)
    repeated = np.repeat(target, weight.astype(int), axis=0)
    huber = create_loss("huber")
    np.testing.assert_array_equal(
        huber.init_score(huber.prepare_target(target), weight),
        np.quantile(repeated, 0.5, axis=0, method="inverted_cdf"))
    quantile = create_loss("quantile", alpha=[0.1, 0.5, 0.9])
    np.testing.assert_array_equal(
        quantile.init_score(quantile.prepare_target(target[:, 0]), weight),
        np.quantile(repeated[:, 0], [0.1, 0.5, 0.9], method="inverted_cdf"))


def test_an_unweighted_quantile_is_numpy_s_inverted_cdf():
    from gbmo_losses._common import weighted_quantile

    rng = np.random.default_rng(9)
    for _ in range(2000):
        values = rng.normal(size=rng.integers(1, 40))
        level = rng.choice([rng.random(), 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1 / 3])
        assert weighted_quantile(values, None, level) == np.quantile(values, level,
                                                                     method="inverted_cdf")


@pytest.mark.parametrize("name", ["poisson", "tweedie", "gamma", "focal"])
def test_smooth_losses_start_at_the_best_constant(name):
    # The gradients of the weighted loss sum to 0 at the start score.
    rng = np.random.default_rng(3)
    params, target = _cases(rng, 200)[name]
    loss = create_loss(name, **params)
    y = loss.prepare_target(target)
    weight = rng.uniform(0.5, 2.0, size=200)
    start = np.tile(loss.init_score(y, weight), (200, 1))
    grad, _ = loss.gradients(y, start, weight)
    np.testing.assert_allclose(grad.sum(axis=0, dtype=np.float64), 0.0, atol=1e-3)


@pytest.mark.parametrize("name, target", [("poisson", np.zeros((10, 2))),
                                          ("tweedie", np.zeros((10, 2))),
                                          ("focal", np.c_[np.zeros(10), np.ones(10)])])
def test_start_scores_stay_finite_for_constant_targets(name, target):
    loss = create_loss(name)
    y = loss.prepare_target(target)
    start = loss.init_score(y, None)
    assert np.all(np.isfinite(start))
    grad, hess = loss.gradients(y, np.tile(start, (10, 1)), None)
    assert np.all(np.isfinite(grad)) and np.all(np.isfinite(hess)) and np.all(hess > 0)


def test_poisson_scores_far_out_of_range_keep_finite_gradients():
    loss = create_loss("poisson")
    y = loss.prepare_target(np.array([[0.0, 3.0]]))
    grad, hess = loss.gradients(y, np.array([[1000.0, -1000.0]]), np.array([1e6]))
    assert np.all(np.isfinite(grad)) and np.all(hess > 0)


# --------------------------------------------------------------------- training

def test_huber_is_robust_to_outliers_where_mse_is_not():
    rng = np.random.default_rng(1)

    def truth(X):
        return np.c_[np.sin(X[:, 0]) + X[:, 1], X[:, 2] - 0.5 * X[:, 3]]

    X, X_test = rng.normal(size=(600, 4)), rng.normal(size=(400, 4))
    Y = truth(X) + 0.1 * rng.normal(size=(600, 2))
    outliers = rng.choice(600, size=30, replace=False)
    Y[outliers] += 50 * rng.choice([-1.0, 1.0], size=(30, 1))
    errors = {}
    for objective in ("mse", "huber"):
        booster = gbmo.train({**FAST, "objective": objective}, gbmo.Dataset(X, Y), 30)
        errors[objective] = np.sqrt(np.mean((booster.predict(X_test) - truth(X_test)) ** 2))
    assert errors["huber"] < 0.4 < 2.0 < errors["mse"], errors


def test_quantile_outputs_cover_their_levels_on_held_out_data():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(4000, 3))
    noise_scale = 0.2 + 0.4 * (X[:, 1] + 1)
    y = X[:, 0] + noise_scale * rng.normal(size=4000)
    alphas = [0.1, 0.5, 0.9]
    train = gbmo.Dataset(X[:2000], y[:2000])
    valid = train.create_valid(X[2000:], y[2000:])
    booster = gbmo.train({**FAST, "objective": "quantile", "objective_params": {"alpha": alphas},
                          "min_samples_leaf": 100}, train, 60, valid_sets=[valid])
    prediction = booster.predict(X[2000:])

    assert prediction.shape == (2000, 3)
    coverage = (y[2000:, None] <= prediction).mean(axis=0)
    np.testing.assert_allclose(coverage, alphas, atol=0.05)
    ordered = (prediction[:, 0] <= prediction[:, 1]) & (prediction[:, 1] <= prediction[:, 2])
    assert ordered.mean() > 0.95
    # The interval follows the noise: the data is heteroscedastic.
    width = prediction[:, 2] - prediction[:, 0]
    assert np.corrcoef(width, noise_scale[2000:])[0, 1] > 0.8
    # The (n, 1) target broadcasts against the 3 outputs in the default metric.
    assert len(booster.evals_result["valid_0"]["quantile_per_output"][-1]) == 3


def _pinball(y, prediction, levels):
    residual = y - prediction
    return np.mean(np.maximum(levels * residual, (levels - 1) * residual), axis=0)


def test_quantile_models_score_and_stop_early_on_the_pinball_loss_at_their_levels():
    """The default metric is LightGBM's quantile metric at each output's alpha:
    mae (the default before) kept a 0.1-0.9 interval model training long
    after its pinball loss was best."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(3000, 4))
    y = X[:, 0] + rng.standard_exponential(3000) * (1 + np.abs(X[:, 1]))
    levels = np.array([0.1, 0.5, 0.9])
    train = gbmo.Dataset(X[:2000], y[:2000])
    valid = train.create_valid(X[2000:], y[2000:])
    booster = gbmo.train({**FAST, "objective": "quantile", "alpha": levels.tolist(),
                          "learning_rate": 0.1, "max_leaves": 31}, train, 500,
                         valid_sets=[valid], callbacks=[gbmo.early_stopping(10, verbose=False)])
    history = booster.evals_result["valid_0"]
    for i in (1, booster.best_iteration, booster.current_iteration()):
        expected = _pinball(y[2000:, None], booster.predict(X[2000:], num_iteration=i), levels)
        np.testing.assert_allclose(history["quantile_per_output"][i - 1], expected, rtol=1e-10)
        assert history["quantile"][i - 1] == pytest.approx(expected.mean(), rel=1e-10)
    assert booster.best_iteration == int(np.argmin(history["quantile"])) + 1
    assert booster.current_iteration() == booster.best_iteration + 10 < 500
    # mae (twice the pinball loss at 0.5 of the outputs' mean) falls much longer
    booster_mae = gbmo.train({**FAST, "objective": "quantile", "alpha": levels.tolist(),
                              "learning_rate": 0.1, "max_leaves": 31, "metric": "mae"}, train,
                             500, valid_sets=[valid],
                             callbacks=[gbmo.early_stopping(10, verbose=False)])
    assert booster_mae.best_iteration > 3 * booster.best_iteration


def test_non_crossing_quantiles_are_each_row_s_raw_scores_sorted_in_the_levels_order():
    """Rearrangement (Chernozhukov et al. 2010): the levels' predictions
    sorted per row, levels given in any order; the raw scores and the trees
    stay the plain model's, and on skewed noise with seven levels many rows
    cross without it."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(3000, 6))
    y = X[:, 0] + rng.standard_exponential(3000) * (0.3 + np.abs(X[:, 1]))
    levels = [0.9, 0.05, 0.5, 0.1, 0.25, 0.75, 0.95]
    train = gbmo.Dataset(X[:2000], y[:2000])
    params = {**FAST, "objective": "quantile", "alpha": levels, "learning_rate": 0.1,
              "max_leaves": 31}
    plain = gbmo.train(params, train, 60)
    ordered = gbmo.train({**params, "non_crossing": True}, train, 60)
    raw = plain.predict(X[2000:], raw_score=True)
    np.testing.assert_array_equal(ordered.predict(X[2000:], raw_score=True), raw)
    by_level = np.argsort(levels)
    assert (np.diff(raw[:, by_level], axis=1) < 0).any(axis=1).mean() > 0.02
    prediction = ordered.predict(X[2000:])
    np.testing.assert_array_equal(prediction[:, by_level], np.sort(raw, axis=1))
    pinball = _pinball(y[2000:, None], prediction, np.array(levels)).mean()
    assert pinball <= _pinball(y[2000:, None], raw, np.array(levels)).mean()
    loaded = gbmo.Booster(model_str=ordered.model_to_string())
    np.testing.assert_array_equal(loaded.predict(X[2000:]), prediction)


def test_a_multitask_quantile_task_is_scored_at_its_own_level():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 3))
    Y = np.column_stack([X[:, 0] + rng.normal(size=400), X[:, 1]])
    loss = gbmo.MultiTaskLoss([("quantile", [0], {"alpha": 0.8}), ("mse", [1])])
    data = gbmo.Dataset(X, Y)
    booster = gbmo.train({**FAST, "objective": loss}, data, 3, valid_sets=[data])
    history = booster.evals_result["training"]
    assert set(history) >= {"quantile[0]", "rmse[1]"}
    expected = _pinball(Y[:, 0], booster.predict(X)[:, 0], 0.8)
    assert history["quantile[0]"][-1] == pytest.approx(expected, rel=1e-10)
    with pytest.raises(ValueError, match="'quantile' covers outputs that predict no quantile"):
        gbmo.train({**FAST, "objective": loss, "metric": "quantile"}, data, 1,
                   valid_sets=[data])


def _poisson_deviance(y, mean):
    return 2 * np.mean(y * np.log(np.where(y > 0, y, 1.0) / mean) - (y - mean))


def test_poisson_recovers_the_mean_of_counts():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 3))
    log_mean = np.c_[0.5 * X[:, 0] + 0.3 * X[:, 1], -0.5 + 0.4 * X[:, 2]]
    Y = rng.poisson(np.exp(log_mean)).astype(float)
    booster = gbmo.train({**FAST, "objective": "poisson"}, gbmo.Dataset(X[:1000], Y[:1000]), 20)
    prediction = booster.predict(X[1000:])

    assert np.all(prediction > 0)
    model = _poisson_deviance(Y[1000:], prediction)
    start = _poisson_deviance(Y[1000:], np.exp(booster.init_score) + 0 * prediction)
    best = _poisson_deviance(Y[1000:], np.exp(log_mean[1000:]))
    # At least half of the gap between the constant start and the truth is closed.
    assert model - best < 0.5 * (start - best), (model, start, best)
    for j in range(2):
        assert np.corrcoef(np.log(prediction[:, j]), log_mean[1000:, j])[0, 1] > 0.7


def test_tweedie_at_power_one_is_the_poisson_loss():
    rng = np.random.default_rng(5)
    y = rng.poisson(2.0, size=(30, 2)).astype(float)
    raw = rng.normal(size=(30, 2))
    tweedie, poisson = create_loss("tweedie", tweedie_variance_power=1.0), create_loss("poisson")
    for got, expected in zip(tweedie.gradients(y, raw, None), poisson.gradients(y, raw, None)):
        np.testing.assert_allclose(got, expected, rtol=1e-6)
    assert tweedie.value(y, raw) == pytest.approx(poisson.value(y, raw), rel=1e-12)


@pytest.mark.parametrize("name, draw", [
    ("tweedie", lambda rng, mean: _compound_poisson_gamma(rng, mean.shape, mean)),
    ("gamma", lambda rng, mean: rng.gamma(2.0, mean / 2.0)),
])
def test_log_link_losses_recover_the_mean(name, draw):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(3000, 3))
    log_mean = np.c_[0.6 * X[:, 0], 0.5 - 0.4 * X[:, 1]]
    Y = draw(rng, np.exp(log_mean))
    booster = gbmo.train({**FAST, "objective": name, "learning_rate": 0.1, "min_samples_leaf": 50},
                         gbmo.Dataset(X[:2000], Y[:2000]), 60)
    prediction = booster.predict(X[2000:])

    assert np.all(prediction > 0)
    for j in range(2):
        assert np.corrcoef(np.log(prediction[:, j]), log_mean[2000:, j])[0, 1] > 0.9
        # calibrated: the mean prediction matches the mean target on held-out rows
        assert prediction[:, j].mean() == pytest.approx(Y[2000:, j].mean(), rel=0.1)


def test_huber_takes_lightgbm_s_alpha_for_delta():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + rng.standard_t(2, size=300)
    lightgbm_style = gbmo.train({**FAST, "objective": "huber", "alpha": 0.4},
                                gbmo.Dataset(X, y), 10)
    gbmo_style = gbmo.train({**FAST, "objective": "huber", "objective_params": {"delta": 0.4}},
                            gbmo.Dataset(X, y), 10)
    np.testing.assert_array_equal(lightgbm_style.predict(X), gbmo_style.predict(X))
    assert lightgbm_style.loss.get_params() == {"delta": 0.4}


@pytest.mark.parametrize("params", [
    {}, {"tree_mode": "single_output"}, {"split": "sparse_restricted", "top_k": 1},
    {"data_sample_strategy": "goss", "top_rate": 0.3, "other_rate": 0.3, "learning_rate": 2.0},
])
def test_quantile_leaves_are_the_quantiles_of_their_rows_residuals(params):
    """As LightGBM renews them: the gradients' mean, with a hessian of 1, moved a
    leaf by at most 1 a round, so a target on a scale of 100 took hundreds of
    rounds (pinball loss 1.7 against LightGBM's 1.04 after 200 rounds). With
    GOSS the leaves take every row's residuals, not only the sample's."""
    rng = np.random.default_rng(11)
    X = rng.normal(size=(400, 3))
    y = 100 * X[:, 0] + 30 * rng.normal(size=400)
    weight = rng.integers(1, 4, size=400)  # integer weights act as repeated rows
    repeated = np.repeat(np.arange(400), weight)
    levels = [0.2, 0.7]
    booster = gbmo.train({**FAST, "objective": "quantile", "alpha": levels, "max_leaves": 6,
                          "learning_rate": 0.5, **params},
                         gbmo.Dataset(X, y, weight=weight.astype(float)), 2)
    rate, leaves = booster.params["learning_rate"], booster.predict_leaf(X)
    for t, tree in enumerate(booster.trees):
        # the residuals from the raw scores before the tree's round
        done = t // booster.trees_per_round
        raw = (np.tile(booster.init_score, (len(X), 1)) if done == 0
               else booster.predict(X, raw_score=True, num_iteration=done))
        for leaf in range(tree.n_leaves):
            rows = repeated[leaves[repeated, t] == leaf]
            for position, value in enumerate(tree.leaf_values[leaf]):
                j = position if tree.leaf_outputs is None else tree.leaf_outputs[leaf, position]
                expected = np.quantile(y[rows] - raw[rows, j], levels[j], method="inverted_cdf")
                assert value / rate == pytest.approx(expected, rel=1e-12, abs=1e-9)


def test_a_quantile_task_of_a_multitask_loss_renews_its_leaves_and_the_others_keep_theirs():
    rng = np.random.default_rng(14)
    X = rng.normal(size=(500, 3))
    Y = np.column_stack([100 * X[:, 0] + 10 * rng.normal(size=500), X[:, 1]])
    multi = gbmo.train({**FAST, "learning_rate": 1.0, "max_leaves": 4, "objective":
                        gbmo.MultiTaskLoss([("quantile", [0], {"alpha": 0.8}), ("mse", [1])])},
                       gbmo.Dataset(X, Y), 1)
    tree, leaves = multi.trees[0], multi.predict_leaf(X)[:, 0]
    for leaf in range(tree.n_leaves):
        rows = leaves == leaf
        residual = Y[rows] - multi.init_score
        assert tree.leaf_values[leaf, 0] == pytest.approx(
            np.quantile(residual[:, 0], 0.8, method="inverted_cdf"), rel=1e-12)
        # the mse task keeps its gradients' value, -G / (H + lambda_l2 = 1)
        assert tree.leaf_values[leaf, 1] == pytest.approx(
            residual[:, 1].sum() / (rows.sum() + 1.0), rel=1e-6)


@pytest.mark.parametrize("levels", [0.5, [0.1, 0.5, 0.9]])
def test_quantile_leaves_under_monotone_constraints_are_renewed_within_their_bounds(levels):
    """The residual quantiles, clipped to each leaf's bounds, keep the
    constraint; the gradients' values they replace moved a leaf by at most
    1 a round, so on a target of scale 100 the constrained model stayed near
    its start (a researcher's pinball losses: 18.3 / 48.1 / 17.9 against
    6.3 / 12.7 / 5.7 unconstrained)."""
    rng = np.random.default_rng(12)
    X = rng.uniform(-2, 2, size=(1500, 2))
    y = 50 * X[:, 0] + 10 * rng.normal(size=1500)
    fit = lambda extra: gbmo.train({**FAST, "objective": "quantile", "alpha": levels, **extra},
                                   gbmo.Dataset(X[:1000], y[:1000]), 40)
    alphas = np.atleast_1d(levels)

    def pinball(booster):
        residual = y[1000:, None] - booster.predict(X[1000:]).reshape(500, -1)
        return np.mean(np.maximum(alphas * residual, (alphas - 1) * residual), axis=0)

    free = pinball(fit({}))
    start = pinball(fit({"learning_rate": 1e-12}))  # the start quantiles, about
    grid = np.column_stack([np.linspace(-2, 2, 200), np.zeros(200)])
    for bounds in ({"monotone_constraints": [1, 0]},
                   {"monotone_constraints": [1, 0], "max_delta_step": 60.0}):
        constrained = fit(bounds)
        predictions = constrained.predict(grid).reshape(200, -1)
        assert np.all(np.diff(predictions, axis=0) >= -1e-12)
        # several levels share the bounds of their summed search, which
        # clip more: 6.2 / 8.1 / 5.9 against 2.1 / 4.4 / 2.0 free and 8.8 /
        # 25.7 / 9.5 at the start (8.5 / 23.3 / 9.0 before)
        assert np.all(pinball(constrained) < (1.3 * free if len(alphas) == 1 else 0.75 * start))
    # a max_delta_step that never binds renews as freely, GOSS's renewed trees
    # too (they kept the gradients' values: 89 against 17 in a review)
    for sampling in ({}, {"data_sample_strategy": "goss"}):
        assert np.all(pinball(fit({"max_delta_step": 1e4, **sampling}))
                      < 1.3 * pinball(fit(sampling)))
    # max_delta_step alone: no leaf moves more than it a round
    capped = fit({"max_delta_step": 2.0})
    assert np.abs(np.concatenate([t.leaf_values.ravel() for t in capped.trees])).max() \
        <= 2.0 * FAST.get("learning_rate", 0.1) + 1e-12


def test_l1_is_lightgbm_s_regression_l1_the_median_regression():
    rng = np.random.default_rng(13)
    X = rng.normal(size=(2000, 3))
    y = 10 * X[:, 0] + 3 * rng.standard_t(2, size=2000)
    models = {name: gbmo.train({**FAST, "objective": name, "learning_rate": 0.1},
                               gbmo.Dataset(X[:1500], y[:1500]), 40)
              for name in ("l1", "regression_l1", "mae", "mean_absolute_error")}
    assert {model.loss.name for model in models.values()} == {"l1"}
    reference = models["l1"].predict(X[1500:])
    for model in models.values():
        np.testing.assert_array_equal(model.predict(X[1500:]), reference)
    assert models["l1"].loss.default_metric == "mae"
    mae = np.mean(np.abs(reference - y[1500:]))
    assert mae < 0.6 * np.mean(np.abs(np.median(y[:1500]) - y[1500:]))
    quantile = gbmo.train({**FAST, "objective": "quantile", "alpha": 0.5, "learning_rate": 0.1},
                          gbmo.Dataset(X[:1500], y[:1500]), 40)
    # twice the gradients, the same splits and the same residual medians as leaves
    np.testing.assert_allclose(quantile.predict(X[1500:]), reference, rtol=1e-10)


def test_mape_leaves_are_medians_weighed_by_the_targets_scale():
    """LightGBM's mape: each row's residual weighs 1 / max(1, |y|) times its
    sample weight, in the start score and in every leaf; the trained model
    predicts the constant of least percentage error where l1 predicts the
    median, and the alias and metric are LightGBM's."""
    rng = np.random.default_rng(15)
    X = rng.normal(size=(3000, 3))
    y = np.exp(1.5 * X[:, 0]) * (1 + 0.3 * rng.normal(size=3000)) + 0.3 * X[:, 1]
    weight = rng.uniform(0.5, 2.0, size=3000)
    booster = gbmo.train({**FAST, "objective": "mean_absolute_percentage_error",
                          "learning_rate": 1.0, "max_leaves": 8},
                         gbmo.Dataset(X, y, weight=weight), 1)
    assert booster.loss.name == "mape" and booster.loss.default_metric == "mape"
    scale = weight / np.maximum(1.0, np.abs(y))

    def weighted_median(values, weights):
        order = np.argsort(values, kind="stable")
        cumulative = np.cumsum(weights[order])
        return values[order][np.searchsorted(cumulative, 0.5 * cumulative[-1])]

    assert booster.init_score[0] == weighted_median(y, scale)
    leaves = booster.predict_leaf(X)[:, 0]
    for leaf in range(booster.trees[0].n_leaves):
        rows = leaves == leaf
        assert booster.trees[0].leaf_values[leaf, 0] == pytest.approx(
            weighted_median(y[rows] - booster.init_score[0], scale[rows]), rel=1e-12)

    # 40% of the targets near 1, 60% near 10, whatever X: the median is 10, but
    # the mape of predicting 1 is 0.6 x 0.9 = 0.54 against 0.4 x 9 = 3.6
    two_scales = np.where(rng.random(3000) < 0.4, 1.0, 10.0) * (1 + 0.01 * rng.normal(size=3000))
    constant = {name: gbmo.train({**FAST, "objective": name, "min_samples_leaf": 3000},
                                 gbmo.Dataset(X, two_scales), 3).predict(X[:1])[0]
                for name in ("mape", "l1")}
    assert constant["mape"] == pytest.approx(1.0, abs=0.05)
    assert constant["l1"] == pytest.approx(10.0, abs=0.5)
    history = gbmo.train({**FAST, "objective": "mape"}, gbmo.Dataset(X[:2000], y[:2000]), 5,
                         valid_sets=[gbmo.Dataset(X[2000:], y[2000:])]).evals_result
    assert list(next(iter(history.values()))) == ["mape"]


@pytest.mark.parametrize("objective, params", [
    ("fair", {"fair_c": 1.0}), ("fair", {"fair_c": 3.0}),
    ("poisson", {"poisson_max_delta_step": 0.7}),
])
def test_fair_and_poisson_s_safeguard_grow_lightgbm_s_trees(objective, params):
    """Integer features of 8 values, which both libraries bin one value a bin,
    and LightGBM's top-level names of the objectives' parameters: the same
    raw scores, round after round (fair starts from the mean, poisson from
    the log of it, in both)."""
    lightgbm = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(3)
    X = rng.integers(0, 8, size=(3000, 4)).astype(float)
    if objective == "fair":
        y = np.sin(X[:, 0]) + 0.5 * X[:, 1] * (X[:, 2] > 3) + rng.standard_t(2, size=3000)
    else:
        y = rng.poisson(np.exp(0.3 * X[:, 0] - 0.2 * X[:, 1])).astype(float)
    common = {"objective": objective, "learning_rate": 0.1, "num_leaves": 12,
              "lambda_l2": 1.0, "verbose": -1, **params}
    ours = gbmo.train(common, gbmo.Dataset(X, y), 10)
    assert ours.loss.get_params() == params
    theirs = lightgbm.train(common, lightgbm.Dataset(X, y), 10)
    # float32 gradients in both: agreement to their precision
    np.testing.assert_allclose(ours.predict(X, raw_score=True),
                               theirs.predict(X, raw_score=True), rtol=0, atol=1e-6)


@pytest.mark.parametrize("alias, name, params", [
    ("reg:absoluteerror", "l1", {}), ("reg:quantileerror", "quantile", {"quantile_alpha": 0.7}),
    ("absolute_error", "l1", {}),  # scikit-learn's HistGradientBoostingRegressor's loss
    ("count:poisson", "poisson", {}), ("reg:tweedie", "tweedie", {}), ("reg:gamma", "gamma", {}),
])
def test_xgboost_s_objective_names_train_the_plugins(alias, name, params):
    rng = np.random.default_rng(15)
    X = rng.normal(size=(300, 3))
    y = np.exp(0.5 * X[:, 0]) + rng.uniform(0.1, 1.0, size=300)
    aliased = gbmo.train({**FAST, "objective": alias, **params}, gbmo.Dataset(X, y), 3)
    gbmo_named = {"alpha": params["quantile_alpha"]} if params else {}
    named = gbmo.train({**FAST, "objective": name, **gbmo_named}, gbmo.Dataset(X, y), 3)
    assert aliased.loss.name == name
    np.testing.assert_array_equal(aliased.predict(X), named.predict(X))


def test_xgboost_s_quantile_alpha_as_a_numpy_array_trains_its_quantiles():
    """XGBoost documents quantile_alpha=np.array([...]); compared as a list."""
    rng = np.random.default_rng(16)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + rng.normal(size=300)
    listed = gbmo.train({**FAST, "objective": "quantile", "alpha": [0.1, 0.9]},
                        gbmo.Dataset(X, y), 3).predict(X)
    for given in ({"quantile_alpha": np.array([0.1, 0.9])},
                  {"alpha": np.array([0.1, 0.9]), "objective_params": {"alpha": [0.1, 0.9]}}):
        booster = gbmo.train({**FAST, "objective": "reg:quantileerror", **given},
                             gbmo.Dataset(X, y), 3)
        np.testing.assert_array_equal(booster.predict(X), listed)
    with pytest.raises(ValueError, match=r"parameter 'alpha' = \[0.1, 0.9\] and objective_params' "
                                         r"\[0.2, 0.9\] differ; give it once"):
        gbmo.train({**FAST, "objective": "quantile", "alpha": np.array([0.1, 0.9]),
                    "objective_params": {"alpha": [0.2, 0.9]}}, gbmo.Dataset(X, y), 1)


@pytest.mark.parametrize("catboost, name, params", [
    ("Quantile:alpha=0.9", "quantile", {"alpha": 0.9}),
    ("MultiQuantile:alpha=0.1,0.5,0.9", "quantile", {"alpha": [0.1, 0.5, 0.9]}),
    ("Huber:delta=1.5", "huber", {"delta": 1.5}),
    ("Tweedie:variance_power=1.3", "tweedie", {"tweedie_variance_power": 1.3}),
    ("MAE", "l1", {}), ("Poisson", "poisson", {}),
])
def test_catboost_s_objective_strings_train_the_plugins_with_their_written_parameters(
        catboost, name, params):
    rng = np.random.default_rng(16)
    X = rng.normal(size=(300, 3))
    y = np.exp(0.5 * X[:, 0]) + rng.uniform(0.1, 1.0, size=300)
    written = gbmo.train({**FAST, "objective": catboost}, gbmo.Dataset(X, y), 3)
    named = gbmo.train({**FAST, "objective": name, "objective_params": params or None},
                       gbmo.Dataset(X, y), 3)
    assert written.params["objective"] == name
    assert written.params["objective_params"] == named.params["objective_params"]
    np.testing.assert_array_equal(written.predict(X), named.predict(X))


@pytest.mark.parametrize("params, message", [
    ({"objective": "Quantile:alpha=0.9;delta"}, "parameters are written key=value, separated "
                                                "by ';'"),
    ({"objective": "Quantile:alpha=0.9", "objective_params": {"alpha": 0.5}},
     "'alpha' are written in the objective's name and given in objective_params"),
])
def test_catboost_s_written_parameters_are_checked(params, message):
    data = gbmo.Dataset(np.ones((10, 1)), np.arange(10.0))
    with pytest.raises(ValueError, match=message):
        gbmo.train({**FAST, **params}, data, 1)


def test_focal_learns_multi_label_data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(1500, 4))
    logits = np.c_[2 * X[:, 0], 2 * X[:, 1] - 1.5, X[:, 2] + X[:, 3] - 2]
    Y = (rng.random(logits.shape) < expit(logits)).astype(float)
    booster = gbmo.train({**FAST, "objective": "focal"}, gbmo.Dataset(X[:1000], Y[:1000]), 40)
    prediction = booster.predict(X[1000:])

    assert prediction.shape == (500, 3) and np.all((prediction > 0) & (prediction < 1))
    trained = logloss(Y[1000:], prediction).mean()
    start = logloss(Y[1000:], np.broadcast_to(expit(booster.init_score), prediction.shape))
    # The label frequencies are the best constant for logloss (focal's start
    # score leans toward 0.5): beating them clearly takes the features.
    base_rate = logloss(Y[1000:], np.broadcast_to(Y[:1000].mean(axis=0), prediction.shape))
    assert trained < start.mean() and trained < base_rate.mean() - 0.05


@pytest.mark.parametrize("name, params", [("huber", {"delta": 0.25}),
                                          ("quantile", {"alpha": [0.2, 0.8]}),
                                          ("poisson", {"poisson_max_delta_step": 0.5}),
                                          ("fair", {"fair_c": 2.0}), ("mape", {}),
                                          ("tweedie", {"tweedie_variance_power": 1.7}),
                                          ("gamma", {}),
                                          ("focal", {"gamma": 1.5})])
def test_save_and_load_keep_objective_parameters_and_predictions(name, params):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    _, target = _cases(rng, 200)[name]
    booster = gbmo.train({**FAST, "objective": name, "objective_params": params},
                         gbmo.Dataset(X, target), 5)
    text = booster.model_to_string()
    loaded = gbmo.Booster(model_str=text)

    assert json.loads(text)["params"]["objective_params"] == params
    assert loaded.loss.name == name and loaded.loss.get_params() == params
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


# --------------------------------------------------------------------- ensembler

def _context(rng, n, d):
    return EnsemblerContext(0, rng, np.zeros((n, d)), np.zeros((n, d)))


@pytest.mark.parametrize("k, split_columns", [(2, 2), (5, 5), (9, 5)])
def test_sketch_svd_projects_onto_orthonormal_leading_directions(k, split_columns):
    rng = np.random.default_rng(5)
    grad = (rng.normal(size=(60, 5)) * [5.0, 3.0, 1.0, 0.5, 0.1]).astype(np.float32)
    hess = rng.uniform(0.5, 1.5, size=(60, 5)).astype(np.float32)
    ensembler = create_ensembler("sketch_svd", k=k)
    split_grad, split_hess, update_grad, update_hess = ensembler(grad, hess, _context(rng, 60, 5))
    directions = ensembler.directions(grad)

    assert directions.shape == (5, split_columns)
    np.testing.assert_allclose(directions.T @ directions, np.eye(split_columns), atol=1e-10)
    assert split_grad.shape == (60, split_columns) and split_hess.shape == (60, 1)
    np.testing.assert_allclose(split_hess[:, 0], hess.mean(axis=1), rtol=1e-6)
    assert update_grad is grad and update_hess is hess
    # Each direction keeps at least as much of the gradients' norm as the next.
    kept = np.sum(split_grad.astype(np.float64) ** 2, axis=0)
    assert np.all(np.diff(kept) <= 1e-6 * kept[0])
    if split_columns == 5:  # a rotation: the split columns span the gradients' space
        np.testing.assert_allclose(split_grad @ directions.T, grad, atol=1e-4)


def test_sketch_svd_trains_multi_output_regression():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 5))
    Y = np.tanh(X @ rng.normal(size=(5, 2))) @ rng.normal(size=(2, 6)) \
        + 0.1 * rng.normal(size=(800, 6))
    full = gbmo.train(FAST, gbmo.Dataset(X, Y), 20)
    sketched = gbmo.train({**FAST, "ensembler": "sketch_svd", "ensembler_params": {"k": 2}},
                          gbmo.Dataset(X, Y), 20)
    spread = np.sqrt(np.mean((Y - Y.mean(axis=0)) ** 2))
    assert np.sqrt(np.mean((sketched.predict(X) - Y) ** 2)) < 0.3 * spread
    # With k = d the projection is a rotation: with one hessian per row the
    # split gains, hence the trees, are those of the full gradients.
    rotated = gbmo.train({**FAST, "ensembler": "sketch_svd", "ensembler_params": {"k": 6}},
                         gbmo.Dataset(X, Y), 20)
    np.testing.assert_allclose(rotated.predict(X), full.predict(X), rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------- errors

def _train(objective, params, target):
    X = np.arange(2 * len(target), dtype=float).reshape(len(target), 2)
    return gbmo.train({"verbosity": 0, "objective": objective, "objective_params": params},
                      gbmo.Dataset(X, target), 1)


@pytest.mark.parametrize("objective, params, message", [
    ("quantile", {"alpha": 1.5}, r"alpha must be strictly between 0 and 1, got \[1.5\]"),
    ("quantile", {"alpha": [0.2, 0.0]}, r"strictly between 0 and 1, got \[0.0\]"),
    ("quantile", {"alpha": []}, "'alpha' is an empty list"),
    ("quantile", {"alpha": "0.5"}, "'alpha' must be a finite number"),
    ("huber", {"delta": 0}, "'delta' must be > 0"),
    ("fair", {"fair_c": 0.0}, "'fair_c' must be > 0"),
    ("poisson", {"poisson_max_delta_step": -0.1}, "'poisson_max_delta_step' must be >= 0"),
    ("huber", {"delta": float("nan")}, "'delta' must be a finite number"),
    ("focal", {"gamma": -1}, "'gamma' must be >= 0"),
    ("tweedie", {"tweedie_variance_power": 2.0}, r"must be in \[1, 2\), got 2.0"),
    ("tweedie", {"tweedie_variance_power": 0.5}, r"must be in \[1, 2\), got 0.5"),
    ("huber", {"delta": 0.5, "alpha": 0.5}, "give delta once, as delta or as alpha"),
    ("quantile", {"alpha": 0.5, "quantile_alpha": 0.5},
     "give alpha once, as alpha or as quantile_alpha.*XGBoost's alpha, its L1 penalty, is gbmo's "
     "lambda_l1"),
    ("quantile", {"alpha": 0.5, "non_crossing": True}, "orders the predictions of several levels"),
    ("quantile", {"alpha": [0.2, 0.8], "non_crossing": "yes"},
     "'non_crossing' must be True or False"),
])
def test_bad_parameters_are_refused(objective, params, message):
    with pytest.raises(ValueError, match=message):
        _train(objective, params, np.ones(4))


@pytest.mark.parametrize("objective, params, target, message", [
    ("poisson", {}, [1.0, -2.0, 3.0, 0.0], r"'poisson' takes non-negative targets, .* -2"),
    ("tweedie", {}, [1.0, 0.0, -0.5, 2.0], r"'tweedie' takes non-negative targets, .* -0.5"),
    ("gamma", {}, [1.0, 0.0, 3.0, 2.0], r"'gamma' takes positive targets, .* 0.0"),
    ("focal", {}, [0.0, 1.0, 0.5, 1.0], r"'focal' takes labels 0 and 1 only, .*\[0.5\]"),
    ("fair", {}, [1.0, np.nan, 3.0, 0.0], "'fair': the target contains NaN or infinite"),
    ("huber", {}, [1.0, np.inf, 3.0, 0.0], "'huber': the target contains infinite values; NaN "
                                           "marks a missing label"),
    ("quantile", {}, np.column_stack([np.ones(4), np.full(4, np.nan)]),
     r"'quantile': output\(s\) \[1\] have no observed target"),
])
def test_bad_targets_are_refused(objective, params, target, message):
    with pytest.raises(ValueError, match=message):
        _train(objective, params, np.asarray(target))


def test_sketch_svd_refuses_a_bad_k():
    with pytest.raises(ValueError, match="k must be an integer >= 1, got 0"):
        create_ensembler("sketch_svd", k=0)


def test_an_objective_s_keywords_are_taken_at_the_top_level_as_lightgbm_s_alpha():
    """LightGBM users give quantile's alpha beside the other parameters; it
    was refused with a hint towards reg_alpha, whose model is another."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    y = X[:, 0] + rng.normal(size=600)
    top = gbmo.train({"objective": "quantile", "alpha": 0.9, "verbosity": 0},
                     gbmo.Dataset(X, y), 30)
    nested = gbmo.train({"objective": "quantile", "objective_params": {"alpha": 0.9},
                         "verbosity": 0}, gbmo.Dataset(X, y), 30)
    np.testing.assert_array_equal(top.predict(X), nested.predict(X))
    assert top.params["objective_params"] == {"alpha": 0.9}
    with pytest.raises(ValueError, match="'alpha' = 0.9 and objective_params' 0.5 differ"):
        gbmo.train({"objective": "quantile", "alpha": 0.9, "objective_params": {"alpha": 0.5}},
                   gbmo.Dataset(X, y), 2)
    with pytest.raises(ValueError, match="unknown parameter 'bogus'.*objective 'quantile' takes"):
        gbmo.train({"objective": "quantile", "bogus": 1}, gbmo.Dataset(X, y), 2)
    # beside another objective, the ones that take it are named, and XGBoost's
    # alpha (the L1 penalty) is among the close names, with what it stands for
    with pytest.raises(ValueError, match=r"unknown parameter 'alpha'; it is a keyword of "
                                         r"objective 'huber', 'quantile', not of 'mse'; or did "
                                         r"you mean reg_alpha \(lambda_l1\)\?"):
        gbmo.train({"objective": "mse", "alpha": 0.3}, gbmo.Dataset(X, y), 2)
    with pytest.raises(ValueError, match=r"unknown parameter 'fair_c'; it is a keyword of "
                                         r"objective 'fair', not of 'mse'\. Known parameters"):
        gbmo.train({"fair_c": 0.3}, gbmo.Dataset(X, y), 2)


def test_a_user_without_gbmo_losses_is_told_where_its_objectives_are(monkeypatch):
    from gbmo import params

    monkeypatch.setattr(params, "GBMO_LOSSES_OBJECTIVES", ("not_installed_loss",))
    X = np.zeros((10, 2))
    with pytest.raises(ValueError, match="objective 'not_installed_loss' is in gbmo-losses, "
                                         r"gbmo's plugin .*pip install \./losses"):
        gbmo.train({"objective": "not_installed_loss"}, gbmo.Dataset(X, np.ones(10)), 1)
    with pytest.raises(ValueError, match="unknown objective 'neither_loss'; known"):
        gbmo.train({"objective": "neither_loss"}, gbmo.Dataset(X, np.ones(10)), 1)


def test_loading_a_model_of_gbmo_losses_without_it_names_the_package(monkeypatch):
    """A serving image without gbmo-losses was told 'unknown loss'."""
    from gbmo import registry

    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2))
    text = gbmo.train({**FAST, "objective": "poisson"}, gbmo.Dataset(X, rng.poisson(2.0, 200)),
                      2).model_to_string()
    monkeypatch.setattr(registry, "LOSSES", registry.Registry("gbmo.losses.none", "loss"))
    with pytest.raises(gbmo.ModelFormatError,
                       match=r"this model's objective 'poisson' is in gbmo-losses, gbmo's "
                             r"plugin distribution, which is not installed: install it .*pip "
                             r"install \./losses.*; the model needs it to predict"):
        gbmo.Booster(model_str=text)
