"""Cython kernels. The dtypes below mirror common.pxd so Python code allocates
arrays the kernels accept without copies."""
import numpy as np

# Binned data: 8-bit bins while the missing bin (max_bins) fits in a byte,
# 16-bit beyond; a split's threshold bin is stored 16-bit either way.
X_BINNED_DTYPE = np.uint8
X_BINNED_WIDE_DTYPE = np.uint16
BIN_INDEX_DTYPE = np.uint16
MAX_BINS = np.iinfo(X_BINNED_WIDE_DTYPE).max  # the missing bin's value takes the last
G_H_DTYPE = np.float32
HIST_DTYPE = np.float64
X_DTYPE = np.float64
ROW_DTYPE = np.uint32
NODE_DTYPE = np.int32
# _predict.pyx's WalkNode: a node of the raw-X traversal
WALK_NODE_DTYPE = np.dtype([("threshold", X_DTYPE), ("feature_and_missing", np.int32),
                            ("left", NODE_DTYPE)])


# read once: np.iinfo takes microseconds, and every tree asks (bin_flags)
_NARROW_BIN_MAX = int(np.iinfo(X_BINNED_DTYPE).max)


def binned_dtype(missing_bin):
    """The dtype of binned data whose missing values are binned as missing_bin."""
    return X_BINNED_DTYPE if missing_bin <= _NARROW_BIN_MAX else X_BINNED_WIDE_DTYPE


def bin_flags(missing_bin, histogram_bins):
    """common.pxd's bin_flags: the length of a table of one flag per bin."""
    return 256 if binned_dtype(missing_bin) == X_BINNED_DTYPE else histogram_bins


def flag_index(bin_, n_flags):
    """common.pxd's flag_index: where a table of n_flags flags keeps bin_'s."""
    return min(bin_, n_flags - 1)
