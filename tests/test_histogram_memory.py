"""Histogram memory: the rows the kernels never write stay unmapped."""
import mmap
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from gbmo._core import HIST_DTYPE
from gbmo.grower import _HistogramPool
from gbmo.histogram_memory import PAGE_BYTES, owns_memory, written_bytes, zeroed_histograms


def test_written_bytes_counts_the_pages_of_each_feature_s_value_rows_and_last_row():
    # rows of 4 float64 (32 bytes), 1,000 rows a feature: 32,000 bytes each
    shape = (3, 1000, 4)
    # value pages (one more for the page they start in) + the last row's two
    pages = [1 + 1 + 2, -(-999 * 32 // PAGE_BYTES) + 1 + 2, 0 + 1 + 2]
    expected = sum(min(n * PAGE_BYTES, 1000 * 32) for n in pages)
    assert written_bytes(shape, np.array([10, 999, 0], dtype=np.int32)) == expected
    # value_bins above the rows (a shorter histogram than the feature's bins) count n_bins - 1
    assert written_bytes(shape, np.array([5000, 999, 999])) == 3 * 1000 * 32


@pytest.mark.skipif(not hasattr(mmap, "MADV_NOHUGEPAGE"),
                    reason="small pages are asked for where the system has madvise")
def test_mostly_unwritten_histograms_get_small_pages_and_others_numpy_s_memory():
    sparse = zeroed_histograms((2, 4, 3000, 3), np.array([2, 2, 2, 2]))
    assert isinstance(sparse.base, mmap.mmap) and owns_memory(sparse)
    assert sparse.shape == (2, 4, 3000, 3) and sparse.dtype == HIST_DTYPE
    assert not sparse.any()
    sparse[1, 3, 2999, 0] = 5.0  # writable
    assert sparse.sum() == 5.0
    assert not owns_memory(sparse[1])  # a view into the block
    dense = zeroed_histograms((4, 3000, 3), np.array([2999] * 4))
    assert dense.base is None and owns_memory(dense) and not dense.any()


@pytest.mark.skipif(not hasattr(os, "fork") or not hasattr(mmap, "MADV_NOHUGEPAGE"),
                    reason="forks a process where the system has madvise")
def test_small_page_histograms_are_private_to_a_forked_child():
    """mmap's default, MAP_SHARED, let a forked child's writes into the
    parent's histograms, as numpy's memory never does."""
    histograms = zeroed_histograms((4, 3000, 3), np.array([2, 2, 2, 2]))
    assert isinstance(histograms.base, mmap.mmap)
    child = os.fork()
    if child == 0:
        histograms[0, 0, 0] = 42.0
        os._exit(0)
    os.waitpid(child, 0)
    assert histograms[0, 0, 0] == 0.0


@pytest.mark.skipif(not hasattr(mmap, "MADV_NOHUGEPAGE"), reason="asks madvise")
def test_a_kernel_that_refuses_the_small_pages_advice_still_gets_zeroed_histograms(
        monkeypatch):
    """madvise fails with EINVAL on kernels without transparent huge pages;
    training died of it."""
    class NoAdvice(mmap.mmap):
        def madvise(self, *args):
            raise OSError(22, "Invalid argument")

    monkeypatch.setattr(mmap, "mmap", NoAdvice)
    histograms = zeroed_histograms((4, 3000, 3), np.array([2, 2, 2, 2]))
    assert histograms.shape == (4, 3000, 3) and not histograms.any()


def test_the_pool_reuses_its_small_page_buffers():
    pool = _HistogramPool((4, 3000, 3), capacity=2, value_bins=np.array([2, 2, 2, 2]))
    first = pool.take()
    pool.give_back(first)
    assert pool.take() is first


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_tall_feature_beside_short_ones_keeps_the_run_s_memory_small(tmp_path):
    """One feature of 20,000 bins beside 49 of 16 values: every histogram is
    20,001 rows tall (16 MB), but the short features write 17 rows each. With
    numpy's huge pages every written row mapped 2 MB, and the run's 32 cached
    histograms took about 512 MB; now the written pages, a few tens of MB."""
    script = textwrap.dedent("""
        import numpy as np, gbmo, warnings
        warnings.simplefilter("ignore")
        def peak_mb():
            for line in open("/proc/self/status"):
                if line.startswith("VmHWM"):
                    return int(line.split()[1]) / 1024
        rng = np.random.default_rng(0)
        X = rng.integers(0, 16, size=(20000, 50)).astype(float)
        X[:, 0] = rng.normal(size=20000)
        y = X[:, 1] + X[:, 0] + rng.normal(size=20000)
        data = gbmo.Dataset(X, y, params={"max_bins": 65535})
        data.construct()
        before = peak_mb()
        gbmo.train({"max_bins": 65535, "max_leaves": 31, "verbosity": -1, "n_threads": 1},
                   data, 3)
        print(peak_mb() - before)
    """)
    # run elsewhere than the repository, whose gbmo/ (uncompiled) would shadow
    # the installed package on the -c script's path
    grown = float(subprocess.run([sys.executable, "-c", script], capture_output=True,
                                 text=True, check=True, cwd=tmp_path).stdout)
    assert grown < 150
