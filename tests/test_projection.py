"""project_rows (the sketch_projection kernel) against numpy's product."""
import numpy as np
import pytest

from gbmo._core import G_H_DTYPE
from gbmo._core._projection import project_rows


@pytest.mark.parametrize("d", [1, 3, 4, 7, 100])
@pytest.mark.parametrize("k", [1, 5])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_project_rows_matches_matmul(d, k, n_threads):
    rng = np.random.default_rng(d * 10 + k)
    grad = rng.standard_normal((301, d)).astype(G_H_DTYPE)
    directions = rng.standard_normal((k, d)).astype(G_H_DTYPE)
    out = np.full((301, k), np.nan, dtype=G_H_DTYPE)
    project_rows(grad, directions, out, n_threads)
    expected = grad.astype(np.float64) @ directions.T.astype(np.float64)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5 * np.sqrt(d))


def test_project_rows_results_do_not_depend_on_threads():
    rng = np.random.default_rng(1)
    grad = rng.standard_normal((1000, 37)).astype(G_H_DTYPE)
    directions = rng.standard_normal((4, 37)).astype(G_H_DTYPE)
    one, two = (np.empty((1000, 4), dtype=G_H_DTYPE) for _ in range(2))
    project_rows(grad, directions, one, 1)
    project_rows(grad, directions, two, 2)
    np.testing.assert_array_equal(one, two)
