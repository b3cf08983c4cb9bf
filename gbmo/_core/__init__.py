"""Cython kernels. The dtypes below mirror common.pxd so Python code allocates
arrays the kernels accept without copies."""
import numpy as np

X_BINNED_DTYPE = np.uint8
G_H_DTYPE = np.float32
HIST_DTYPE = np.float64
X_DTYPE = np.float64
ROW_DTYPE = np.uint32
NODE_DTYPE = np.int32
# _predict.pyx's WalkNode: a node of the raw-X traversal
WALK_NODE_DTYPE = np.dtype([("threshold", X_DTYPE), ("feature_and_missing", np.int32),
                            ("left", NODE_DTYPE)])
