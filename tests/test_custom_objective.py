"""objective=callable(y_true, raw_pred) -> (grad, hess)."""
import numpy as np
import pytest

import gbmo

rng = np.random.default_rng(0)
X = rng.normal(size=(800, 4))
Y = np.column_stack([X[:, 0] + 0.1 * rng.normal(size=800), np.abs(X[:, 1])])


def squared_error(y_true, raw_pred):
    return raw_pred - y_true, np.ones((len(y_true), 1))


def test_custom_objective_reproducing_mse_equals_mse():
    """The only difference is the start: mse starts from the target mean, a custom
    objective from 0, so compare after giving mse a zero start via init."""
    params = {"verbosity": 0, "max_leaves": 8, "learning_rate": 0.3}
    centred = Y - Y.mean(axis=0)
    builtin = gbmo.train(params, gbmo.Dataset(X, centred), 10)
    custom = gbmo.train({**params, "objective": squared_error}, gbmo.Dataset(X, centred), 10)
    np.testing.assert_allclose(builtin.init_score, 0.0, atol=1e-12)
    np.testing.assert_allclose(custom.predict(X), builtin.predict(X), rtol=1e-6, atol=1e-9)


def test_custom_objective_with_metric_and_save(tmp_path):
    train = gbmo.Dataset(X[:600], Y[:600])
    valid = train.create_valid(X[600:], Y[600:])
    booster = gbmo.train({"objective": squared_error, "metric": "rmse", "verbosity": 0},
                         train, 30, valid_sets=[valid])
    history = booster.evals_result["valid_0"]["rmse"]
    assert history[-1] < 0.5 * history[0]
    booster.save_model(tmp_path / "custom.json")
    loaded = gbmo.Booster(model_file=tmp_path / "custom.json")
    assert loaded.params["objective"] == "custom"
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


@pytest.mark.parametrize("returned, message", [
    (lambda y, raw: (raw[:, :1], np.ones_like(raw)), r"grad of shape \(800, 1\), expected \(800, 2\)"),
    (lambda y, raw: (raw - y, np.ones((len(y), 3))), r"hess of shape \(800, 3\)"),
    (lambda y, raw: (np.full_like(raw, np.nan), np.ones_like(raw)), "grad that is not all finite"),
])
def test_custom_objective_shape_errors(returned, message):
    with pytest.raises(ValueError, match=message):
        gbmo.train({"objective": returned, "verbosity": 0}, gbmo.Dataset(X, Y), 2)
