"""_core._metrics.column_means against a plain loop, and the metrics built on it
against scikit-learn's."""
import numpy as np
import pytest
from sklearn.metrics import log_loss, mean_absolute_error, mean_squared_error

from gbmo import metrics
from gbmo._core._metrics import Element, column_means

EPS = 1e-15


def reference_element(kind, y, p):
    if kind == Element.SQUARED_ERROR:
        return (p - y) ** 2
    if kind == Element.ABSOLUTE_ERROR:
        return abs(p - y)
    if kind == Element.LOG_LOSS:
        p = min(max(p, EPS), 1 - EPS)
        return -(y * np.log(p) + (1 - y) * np.log(1 - p))
    if kind == Element.MISCLASSIFIED:
        return np.nan if np.isnan(y) else float((p > 0.5) != (y > 0.5))
    if kind == Element.PERCENTAGE_ERROR:
        return abs(p - y) / max(1.0, abs(y))
    return y


def reference_means(kind, y, prediction, weight):
    n, d = y.shape
    weight = np.ones(n) if weight is None else weight
    means = []
    for j in range(d):
        total = total_weight = 0.0
        for i in range(n):
            value = reference_element(kind, y[i, j], prediction[i, j])
            if not np.isnan(value):
                total += weight[i] * value
                total_weight += weight[i]
        means.append(total / total_weight if total_weight else np.nan)
    return np.array(means)


def problem(rng, kind, n, d):
    """Targets with NaN (and a column without any observed target when d > 1);
    0/1 labels for the classification kinds, soft labels in one column."""
    if kind in (Element.LOG_LOSS, Element.MISCLASSIFIED):
        y = (rng.random((n, d)) < 0.4).astype(float)
        y[:, 0] = rng.random(n)
        prediction = rng.random((n, d))
        prediction[rng.random((n, d)) < 0.05] = 0.0  # clipped to EPS
    else:
        y = rng.normal(size=(n, d))
        prediction = rng.normal(size=(n, d))
    y[rng.random((n, d)) < 0.1] = np.nan
    if d > 1:
        y[:, -1] = np.nan
    return y, prediction


@pytest.mark.parametrize("kind", list(Element))
@pytest.mark.parametrize("n, d", [(1, 1), (37, 3), (2500, 2)])
@pytest.mark.parametrize("n_threads", [1, 3])
def test_column_means_match_a_plain_loop(kind, n, d, n_threads):
    rng = np.random.default_rng(n * 10 + d)
    y, prediction = problem(rng, kind, n, d)
    for weight in (None, rng.uniform(0.1, 3.0, n)):
        got = column_means(kind, y, prediction, weight, n_threads, EPS)
        expected = reference_means(kind, y, prediction, weight)
        np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_means_do_not_depend_on_the_thread_count():
    rng = np.random.default_rng(3)
    y, prediction = problem(rng, Element.SQUARED_ERROR, 10_000, 3)
    weight = rng.uniform(0.1, 3.0, 10_000)
    one = column_means(Element.SQUARED_ERROR, y, prediction, weight, 1, EPS)
    for n_threads in (2, 3, 5):
        assert column_means(Element.SQUARED_ERROR, y, prediction, weight, n_threads,
                            EPS).tobytes() == one.tobytes()


def test_strided_and_broadcast_arrays_are_read_in_place():
    rng = np.random.default_rng(4)
    wide = rng.normal(size=(300, 6))
    center = np.broadcast_to(rng.normal(size=3), (300, 3))  # stride 0 down the rows
    got = column_means(Element.ABSOLUTE_ERROR, wide[:, ::2], center, None, 2, EPS)
    np.testing.assert_allclose(got, np.abs(center - wide[:, ::2]).mean(axis=0), rtol=1e-12)


def test_shapes_that_do_not_fit_are_refused():
    y = np.zeros((4, 2))
    with pytest.raises(ValueError, match=r"prediction must have y's shape \(4, 2\), got \(4, 3\)"):
        column_means(Element.SQUARED_ERROR, y, np.zeros((4, 3)), None, 1, EPS)
    with pytest.raises(ValueError, match=r"weight must have one value per row \(4\), got 3"):
        column_means(Element.SQUARED_ERROR, y, y, np.ones(3), 1, EPS)
    with pytest.raises(ValueError, match="y and prediction must be 1-D or 2-D"):
        metrics.mse(np.zeros((2, 2, 2)), np.zeros((2, 2, 2)))


@pytest.mark.parametrize("weighted", [False, True])
def test_metrics_match_scikit_learn_per_output(weighted):
    rng = np.random.default_rng(5)
    y = rng.normal(size=(400, 3))
    prediction = y + rng.normal(size=(400, 3))
    labels = (rng.random((400, 3)) < 0.3).astype(float)
    proba = np.clip(0.3 * labels + 0.7 * rng.random((400, 3)), 0.01, 0.99)
    weight = rng.uniform(0.1, 2.0, 400) if weighted else None
    np.testing.assert_allclose(metrics.mse(y, prediction, weight, n_threads=2), mean_squared_error(
        y, prediction, sample_weight=weight, multioutput="raw_values"), rtol=1e-12)
    np.testing.assert_allclose(metrics.mae(y, prediction, weight, n_threads=2), mean_absolute_error(
        y, prediction, sample_weight=weight, multioutput="raw_values"), rtol=1e-12)
    np.testing.assert_allclose(
        metrics.logloss(labels, proba, weight, n_threads=2),
        [log_loss(labels[:, j], proba[:, j], sample_weight=weight) for j in range(3)], rtol=1e-12)
    # a 1-D target gives a scalar; an (n, 1) target broadcasts against every output
    assert np.ndim(metrics.rmse(y[:, 0], prediction[:, 0])) == 0
    np.testing.assert_allclose(metrics.mae(y[:, :1], prediction, weight),
                               metrics.mae(np.repeat(y[:, :1], 3, axis=1), prediction, weight))


def test_metrics_of_no_rows_are_nan():
    assert np.isnan(metrics.rmse(np.empty((0, 3)), np.empty((0, 3)))).all()
    assert np.isnan(metrics.rmse(np.empty(0), np.empty(0)))
    assert np.isnan(metrics.evaluate("logloss", np.empty(0, dtype=int), np.empty((0, 3)))[0])


def test_auc_on_several_threads_equals_one_thread():
    rng = np.random.default_rng(6)
    labels = (rng.random((500, 5)) < 0.3).astype(float)
    scores = np.round(rng.random((500, 5)) + 0.2 * labels, 2)
    assert metrics.auc(labels, scores, n_threads=3).tobytes() == metrics.auc(
        labels, scores, n_threads=1).tobytes()
