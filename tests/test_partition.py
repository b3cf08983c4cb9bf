"""split_rows against a stable numpy partition."""
import numpy as np
import pytest

from gbmo._core import ROW_DTYPE, X_BINNED_DTYPE, X_BINNED_WIDE_DTYPE, bin_flags, flag_index
from gbmo._core._histogram import PREFETCH_GAP, PREFETCH_MIN_TOTAL, PREFETCH_ROWS
from gbmo._core._partition import split_rows

MISSING_BIN = 255
# 16-bit bins (max_bins above 255): values from WIDE_SHIFT up, a missing bin above
WIDE_SHIFT, WIDE_MISSING_BIN = 300, 1000
BIN_WIDTHS = [pytest.param(False, id="8-bit"), pytest.param(True, id="16-bit")]


def widened(column, wide):
    """column's bins moved above 255 into 16-bit bins, the missing ones to
    WIDE_MISSING_BIN, when wide; else column as it is."""
    if not wide:
        return column
    out = column.astype(X_BINNED_WIDE_DTYPE) + WIDE_SHIFT
    out[column == MISSING_BIN] = WIDE_MISSING_BIN
    return out


def widened_threshold(threshold_bin, wide):
    return threshold_bin + WIDE_SHIFT if wide else threshold_bin


def reference_split(rows, column, threshold_bin, missing_left, missing_bin):
    """Left rows in their order, then right rows in their order; and the left count."""
    left, right = [], []
    for r in rows:
        b = column[r]
        if b == missing_bin:
            goes_left = missing_left
        else:
            goes_left = b <= threshold_bin
        (left if goes_left else right).append(r)
    return np.array(left + right, dtype=ROW_DTYPE), len(left)


def run_split(rows, column, threshold_bin, missing_left, n_threads, missing_bin=MISSING_BIN,
              buffer_size=None):
    rows = np.array(rows, dtype=ROW_DTYPE)
    size = len(rows) if buffer_size is None else buffer_size
    left_buffer = np.full(size, 4242, dtype=ROW_DTYPE)
    right_buffer = np.full(size, 4242, dtype=ROW_DTYPE)
    n_left = split_rows(rows, column, threshold_bin, missing_left, missing_bin,
                        left_buffer, right_buffer, n_threads)
    return rows, n_left


def make_column(rng, n_rows, n_bins, missing_fraction):
    column = rng.integers(0, n_bins, size=n_rows).astype(X_BINNED_DTYPE)
    column[rng.random(n_rows) < missing_fraction] = MISSING_BIN
    return column


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("missing_left", [False, True])
@pytest.mark.parametrize("n_rows", [0, 1, 2, 3, 5, 17, 64, 1000])
@pytest.mark.parametrize("wide", BIN_WIDTHS)
def test_matches_stable_partition(n_threads, missing_left, n_rows, wide):
    rng = np.random.default_rng(n_rows * 4 + n_threads * 2 + missing_left)
    column = widened(make_column(rng, max(n_rows, 1) + 10, 12, 0.25), wide)
    missing_bin = WIDE_MISSING_BIN if wide else MISSING_BIN
    rows = rng.permutation(len(column))[:n_rows]
    for threshold_bin in (-1, 0, 5, 11, 254):
        threshold_bin = widened_threshold(threshold_bin, wide)
        got, n_left = run_split(rows, column, threshold_bin, missing_left, n_threads,
                                missing_bin)
        expected, expected_left = reference_split(rows, column, threshold_bin, missing_left,
                                                  missing_bin)
        assert n_left == expected_left, (threshold_bin, n_left, expected_left)
        np.testing.assert_array_equal(got, expected, err_msg=f"threshold {threshold_bin}")
        # the same as numpy's stable partition
        goes_left = np.where(column[rows] == missing_bin, missing_left,
                             column[rows].astype(int) <= threshold_bin)
        np.testing.assert_array_equal(
            got, np.concatenate([rows[goes_left], rows[~goes_left]]).astype(ROW_DTYPE))


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("n_rows", [1, 2, PREFETCH_ROWS - 1, PREFETCH_ROWS, PREFETCH_ROWS + 1,
                                    (PREFETCH_MIN_TOTAL + 7) // PREFETCH_GAP])
@pytest.mark.parametrize("wide", BIN_WIDTHS)
def test_a_node_scattered_over_a_long_column(n_threads, n_rows, wide):
    """A node of at most 1 / PREFETCH_GAP of a column of PREFETCH_MIN_TOTAL
    rows or more has its bins prefetched PREFETCH_ROWS rows ahead, clamped to
    its last row (prefetch.h): the same partition."""
    rng = np.random.default_rng(n_rows + n_threads)
    column = widened(make_column(rng, PREFETCH_MIN_TOTAL + 7, 12, 0.1), wide)
    missing_bin = WIDE_MISSING_BIN if wide else MISSING_BIN
    rows = np.sort(rng.permutation(len(column))[:n_rows])
    for threshold_bin in (-1, 4, 11):
        threshold_bin = widened_threshold(threshold_bin, wide)
        got, n_left = run_split(rows, column, threshold_bin, True, n_threads, missing_bin)
        expected, expected_left = reference_split(rows, column, threshold_bin, True, missing_bin)
        assert n_left == expected_left
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n_rows", [0, 1, 2])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
def test_tiny_inputs_every_case(n_rows, n_threads):
    """Every combination of bins (value left / value right / missing) for 0, 1, 2 rows."""
    bins_choices = [0, 3, MISSING_BIN]
    for bins in np.array(np.meshgrid(*[bins_choices] * n_rows)).reshape(n_rows, -1).T \
            if n_rows else [np.array([], dtype=int)]:
        column = np.array(list(bins) + [1], dtype=X_BINNED_DTYPE)
        rows = np.arange(n_rows)[::-1]
        for missing_left in (False, True):
            got, n_left = run_split(rows, column, 1, missing_left, n_threads)
            expected, expected_left = reference_split(rows, column, 1, missing_left, MISSING_BIN)
            assert n_left == expected_left
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n_threads", [1, 2, 3, 7, 70])
def test_slice_of_larger_array_and_larger_buffers(n_threads):
    """The grower partitions a node's slice of the full row array with full-size buffers."""
    rng = np.random.default_rng(n_threads)
    n_total = 500
    column = make_column(rng, n_total, 30, 0.1)
    all_rows = rng.permutation(n_total).astype(ROW_DTYPE)
    before = all_rows.copy()
    start, stop = 123, 401
    node_rows = all_rows[start:stop]
    left_buffer = np.empty(n_total, dtype=ROW_DTYPE)
    right_buffer = np.empty(n_total, dtype=ROW_DTYPE)
    n_left = split_rows(node_rows, column, 14, True, MISSING_BIN, left_buffer, right_buffer,
                        n_threads)
    expected, expected_left = reference_split(before[start:stop], column, 14, True, MISSING_BIN)
    assert n_left == expected_left
    np.testing.assert_array_equal(all_rows[start:stop], expected)
    np.testing.assert_array_equal(all_rows[:start], before[:start])
    np.testing.assert_array_equal(all_rows[stop:], before[stop:])


def test_all_left_all_right_and_only_missing():
    rng = np.random.default_rng(9)
    column = make_column(rng, 100, 5, 0.0)
    rows = rng.permutation(100)
    for n_threads in (1, 2, 3):
        got, n_left = run_split(rows, column, 4, False, n_threads)
        assert n_left == 100
        np.testing.assert_array_equal(got, rows)
        got, n_left = run_split(rows, column, -1, True, n_threads)
        assert n_left == 0
        np.testing.assert_array_equal(got, rows)
    missing = np.full(50, MISSING_BIN, dtype=X_BINNED_DTYPE)
    rows = rng.permutation(50)
    for missing_left, expected_left in ((True, 50), (False, 0)):
        got, n_left = run_split(rows, missing, 200, missing_left, 2)
        assert n_left == expected_left
        np.testing.assert_array_equal(got, rows)


def test_other_missing_bin_value():
    """missing_bin is max_bins, not always 255: a smaller one must still be special."""
    rng = np.random.default_rng(10)
    missing_bin = 16
    column = rng.integers(0, 17, size=300).astype(X_BINNED_DTYPE)
    rows = rng.permutation(300)
    for missing_left in (False, True):
        for threshold_bin in (3, 15, 16):
            for n_threads in (1, 2, 3):
                got, n_left = run_split(rows, column, threshold_bin, missing_left, n_threads,
                                        missing_bin=missing_bin)
                expected, expected_left = reference_split(rows, column, threshold_bin,
                                                          missing_left, missing_bin)
                assert n_left == expected_left
                np.testing.assert_array_equal(got, expected)


def test_threads_agree_on_large_input():
    rng = np.random.default_rng(11)
    column = make_column(rng, 20_000, 255, 0.05)
    rows = rng.permutation(20_000)[:15_001]
    results = [run_split(rows, column, 100, True, n) for n in (1, 2, 3, 4)]
    for got, n_left in results[1:]:
        assert n_left == results[0][1]
        np.testing.assert_array_equal(got, results[0][0])
    expected, expected_left = reference_split(rows, column, 100, True, MISSING_BIN)
    assert results[0][1] == expected_left
    np.testing.assert_array_equal(results[0][0], expected)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("wide", BIN_WIDTHS)
def test_a_table_of_left_bins_sends_exactly_those_bins_left(n_threads, seed, wide):
    """A categorical split's set (and the missing bin's flag): each side keeps
    its rows' order, the threshold is ignored. A table has 256 flags for
    8-bit bins; for 16-bit one per histogram row, the missing bin's last."""
    rng = np.random.default_rng(seed)
    column = rng.integers(0, 12, size=500).astype(X_BINNED_DTYPE)
    column[rng.random(500) < 0.1] = MISSING_BIN
    column = widened(column, wide)
    missing_bin = WIDE_MISSING_BIN if wide else MISSING_BIN
    rows = np.sort(rng.choice(500, size=300, replace=False)).astype(ROW_DTYPE)
    n_flags = bin_flags(missing_bin, widened_threshold(12, wide) + 1)
    table = np.zeros(n_flags, dtype=np.uint8)
    table[widened_threshold(rng.choice(12, size=5, replace=False), wide)] = 1
    table[flag_index(missing_bin, n_flags)] = seed % 2
    flags = table[np.minimum(column[rows], n_flags - 1)]
    expected_left = rows[flags == 1]
    expected = np.concatenate([expected_left, rows[flags == 0]])
    buffers = np.empty(300, ROW_DTYPE), np.empty(300, ROW_DTYPE)
    n_left = split_rows(rows, column, 99, 0, missing_bin, *buffers, n_threads, table)
    assert n_left == len(expected_left)
    np.testing.assert_array_equal(rows, expected)
    too_short = table[:10] if not wide else table[:1]
    with pytest.raises(ValueError, match="left_bins must have 256 flags for 8-bit bins, 2 to "
                                         f"the missing bin's {missing_bin + 1}"):
        split_rows(rows, column, 0, 0, missing_bin, *buffers, 1, too_short)


def test_16_bit_bins_beyond_the_table_read_its_last_flag():
    """A table of flags for 16-bit bins ends at the missing bin's: a bin above
    it (which binning never makes) reads the missing bin's flag, not memory
    past the table."""
    column = np.array([3, WIDE_MISSING_BIN, 65535, 2000, 5], dtype=X_BINNED_WIDE_DTYPE)
    rows = np.arange(5, dtype=ROW_DTYPE)
    buffers = np.empty(5, ROW_DTYPE), np.empty(5, ROW_DTYPE)
    for missing_left in (False, True):
        got, n_left = run_split(rows, column, 4, missing_left, 1, WIDE_MISSING_BIN)
        expected_left = [0] + ([1, 2, 3] if missing_left else [])
        assert n_left == len(expected_left)
        np.testing.assert_array_equal(got[:n_left], expected_left)
    for n_flags in (WIDE_MISSING_BIN + 1, 6):  # as long as the missing bin, or shorter
        table = np.zeros(n_flags, dtype=np.uint8)
        table[[5, n_flags - 1]] = 1
        n_left = split_rows(rows.copy(), column, 0, 0, WIDE_MISSING_BIN, *buffers, 1, table)
        assert n_left == 4  # rows 1, 2, 3 read the last flag, row 4 its own


def test_a_missing_bin_beyond_the_column_s_dtype_is_refused():
    rows = np.arange(3, dtype=ROW_DTYPE)
    buffers = np.empty(3, ROW_DTYPE), np.empty(3, ROW_DTYPE)
    with pytest.raises(ValueError, match="missing_bin 300 is not a bin of the column's dtype"):
        split_rows(rows, np.zeros(3, X_BINNED_DTYPE), 0, 0, 300, *buffers, 1)
