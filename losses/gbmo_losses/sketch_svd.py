"""An ensembler that splits on the leading singular directions of the gradients."""
import numbers

import numpy as np


class SketchSVD:
    """Output sketching with the k leading right-singular directions of the
    gradient matrix G (n, d): V_k (d, k) holds the eigenvectors of G^T G with
    the k largest eigenvalues, recomputed every round. Trees split on the
    projected gradients G V_k (n, k) with the row's mean hessian over outputs
    (n, 1); the leaves take all d outputs' own gradients and hessians.

    Among all k-dimensional projections, V_k keeps the most of the gradients'
    squared norm (the best rank-k approximation of G), so the split gains
    approximate the full ones; with k >= d it keeps all of it. Cost per round:
    O(n d^2 + d^3) on top of the gradients.
    """

    name = "sketch_svd"

    def __init__(self, k=5):
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise ValueError(f"ensembler 'sketch_svd': k must be an integer >= 1, got {k!r}")
        self.k = int(k)

    def directions(self, grad):
        """V_k: (d, min(k, d)) orthonormal columns, the leading direction first."""
        grad = np.asarray(grad, dtype=np.float64)
        # einsum, not matmul: this runs every round, and matmul's BLAS threads keep
        # spinning after the call and take the cores from gbmo's kernels
        _, eigenvectors = np.linalg.eigh(np.einsum("ij,ik->jk", grad, grad))  # ascending
        return np.ascontiguousarray(eigenvectors[:, ::-1][:, :min(self.k, grad.shape[1])])

    def __call__(self, grad, hess, context):
        split_grad = np.einsum("ij,jk->ik", np.asarray(grad, dtype=np.float64),
                               self.directions(grad))
        split_hess = np.mean(hess, axis=1, keepdims=True, dtype=np.float64)
        return (split_grad.astype(np.float32), split_hess.astype(np.float32), grad, hess)
