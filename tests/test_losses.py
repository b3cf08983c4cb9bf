"""Built-in losses: kernel gradients against numpy formulas and finite differences."""
import numpy as np
import pytest
from scipy.special import expit, log_softmax, softmax

from gbmo.losses import make_loss

rng = np.random.default_rng(0)
N, D = 57, 4


def _weights(weighted):
    return rng.uniform(0.1, 2.0, size=N) if weighted else None


def _unit(weight):
    return np.ones(N) if weight is None else weight


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_squared_error(weighted, n_threads):
    loss = make_loss("mse", n_threads=n_threads)
    y = loss.prepare_target(rng.normal(size=(N, D)))
    raw = rng.normal(size=(N, D))
    weight = _weights(weighted)
    grad, hess = loss.gradients(y, raw, weight)
    w = _unit(weight)[:, None]
    np.testing.assert_allclose(grad, w * (raw - y), rtol=1e-6)
    np.testing.assert_allclose(hess, np.broadcast_to(w, (N, 1)), rtol=1e-6)
    np.testing.assert_allclose(loss.init_score(y, weight), np.average(y, axis=0, weights=weight))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_softmax(weighted, n_threads):
    loss = make_loss("softmax", n_threads=n_threads)
    y = loss.prepare_target(rng.integers(0, D, size=N))
    raw = 3 * rng.normal(size=(N, D))
    weight = _weights(weighted)
    grad, hess = loss.gradients(y, raw, weight)
    p = softmax(raw, axis=1)
    w = _unit(weight)[:, None]
    np.testing.assert_allclose(grad, w * (p - np.eye(D)[y]), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hess, w * p * (1 - p), rtol=1e-5, atol=1e-7)

    # The gradient is the derivative of the weighted negative log-likelihood.
    def row_values(r):
        return -_unit(weight) * log_softmax(r, axis=1)[np.arange(N), y]
    step = 1e-6
    for j in range(D):
        shifted = raw.copy()
        shifted[:, j] += step
        difference = (row_values(shifted) - row_values(raw)) / step
        np.testing.assert_allclose(grad[:, j], difference, rtol=1e-3, atol=1e-5)


def test_softmax_saturated_scores_stay_finite():
    loss = make_loss("softmax")
    raw = np.array([[1000.0, -1000.0, 0.0], [-800.0, 800.0, 5.0]])
    grad, hess = loss.gradients(np.array([0, 2]), raw, None)
    assert np.all(np.isfinite(grad)) and np.all(hess > 0)


@pytest.mark.parametrize("weighted", [False, True])
def test_sigmoid(weighted):
    loss = make_loss("sigmoid", n_threads=2)
    y = loss.prepare_target((rng.random(size=(N, D)) > 0.5).astype(float))
    raw = 3 * rng.normal(size=(N, D))
    weight = _weights(weighted)
    grad, hess = loss.gradients(y, raw, weight)
    p = expit(raw)
    w = _unit(weight)[:, None]
    np.testing.assert_allclose(grad, w * (p - y), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hess, w * p * (1 - p), rtol=1e-5, atol=1e-7)
    step = 1e-6

    def value(r):
        return w * (np.logaddexp(0, r) - y * r)
    np.testing.assert_allclose(grad, (value(raw + step) - value(raw)) / step, rtol=1e-3, atol=1e-5)


def test_sigmoid_accepts_fortran_ordered_targets():
    loss = make_loss("sigmoid")
    y = loss.prepare_target(np.asfortranarray((rng.random(size=(N, D)) > 0.5).astype(float)))
    grad, _ = loss.gradients(y, np.zeros((N, D)), None)
    np.testing.assert_allclose(grad, 0.5 - y)


def test_init_scores():
    softmax_loss = make_loss("softmax")
    y = np.array([0, 0, 0, 1])
    init = softmax_loss.init_score(y, None)
    np.testing.assert_allclose(softmax(init), [0.75, 0.25])
    sigmoid_loss = make_loss("sigmoid")
    np.testing.assert_allclose(expit(sigmoid_loss.init_score(np.array([[1.0], [0.0], [1.0], [1.0]]), None)), [0.75])
