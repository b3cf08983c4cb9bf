"""A kernel of the installed build against the same kernel at a commit.

    python benchmarks/ab_kernel.py --kernel split --base 493382d [--threads 1]
    python benchmarks/ab_kernel.py --kernel partition --base ea981a7
    python benchmarks/ab_kernel.py --kernel categorical --base COMMIT
    python benchmarks/ab_kernel.py --kernel histogram --base COMMIT [--in-runs]

Compiles the kernel's .pyx as it was at --base into a temporary directory
(the .pxd files beside it, the setup.py flags), loads it beside the
installed module, checks that both give the same results bit for bit, and
times them interleaved; prints the median time of each and old / new.

- split: find_best_splits of one output on one node's histogram of 50
  features x 255 bins, 50 calls per sample.
- partition: split_rows of a node's rows (sorted, drawn from 200,000) on a
  random column, at several shares going left; each sample partitions
  fresh copies of different row sets (at least 20 and 1,000,000 rows),
  since a branch predictor learns a few sets' pattern when they are
  partitioned again and again.
- categorical: find_best_splits on one node's histogram of 10 categorical
  features (every bin a category, ordered at the node), of 1 and 5
  outputs, 50 calls per sample; COMMIT must choose the same sets as the
  build (the script checks it), so it times a change of speed only.
- histogram: build_histograms of one node of 20,000 rows (sorted, drawn from
  100,000) over 50 features x 255 bins, for gathered rows of 2 to 41 values
  (one output's [g, 1] to softmax's 20 classes' [g, h, 1]); with and
  without a skipped bin, 10 calls per sample; --in-runs sorts each
  feature's bins, so that a node's rows come in runs of one bin. The sums
  are checked equal to rounding (since 49126bc one output's may be added
  in another order).
"""
import argparse
import importlib.util
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

import gbmo._core._histogram as new_histogram
import gbmo._core._partition as new_partition
import gbmo._core._split as new_split

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPLIT_CASES = [  # rows in the node, hessian width, lambda_l1, a missing-value bin
    (5_000, 0, 0.0, False), (5_000, 1, 0.0, False), (500, 1, 0.0, False),
    (200, 0, 0.0, False), (100_000, 0, 0.0, False), (5_000, 1, 0.5, False),
    (5_000, 0, 0.0, True)]
PARTITION_CASES = [  # rows in the node, share of the bins going left
    (1_000, 0.5), (3_000, 0.5), (3_000, 0.9), (50_000, 0.5), (200_000, 0.5), (200_000, 0.97)]

SETUP = """
from setuptools import Extension, setup
from Cython.Build import cythonize
import numpy
setup(ext_modules=cythonize([Extension("gbmo._core.{name}", ["gbmo/_core/{name}.pyx"],
      include_dirs=[numpy.get_include()], extra_compile_args=["-O3", "-fopenmp"],
      extra_link_args=["-fopenmp"])], compiler_directives={{"language_level": 3,
      "boundscheck": False, "wraparound": False, "cdivision": True,
      "initializedcheck": False}}), script_args=["build_ext", "--inplace"])
"""


def build_old(name, base, directory):
    """The kernel module gbmo._core.<name> as it was at commit base."""
    core = pathlib.Path(directory, "gbmo", "_core")
    core.mkdir(parents=True)
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", base,
                             "gbmo/_core/"], check=True, capture_output=True, text=True).stdout
    for path in [f"gbmo/_core/{name}.pyx",
                 *(path for path in listed.split() if path.endswith((".pxd", ".h")))]:
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{base}:{path}"],
                              check=True, capture_output=True, text=True).stdout
        pathlib.Path(directory, path).write_text(text)
    subprocess.run([sys.executable, "-c", SETUP.format(name=name)], cwd=directory, check=True,
                   capture_output=True)
    built = next(core.glob(f"{name}*.so"))
    spec = importlib.util.spec_from_file_location(f"gbmo._core.{name}", built)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def node_histogram(rng, n_rows, hess_width, missing, n_features=50, n_bins=255):
    width = hess_width + 2
    X = rng.integers(0, n_bins, size=(n_features, n_rows))
    g, h = rng.normal(size=n_rows), rng.uniform(0.1, 0.3, size=n_rows)
    hist = np.zeros((n_features, n_bins + 1, width))
    for f in range(n_features):
        hist[f, :n_bins, 0] = np.bincount(X[f], g, n_bins)
        if hess_width:
            hist[f, :n_bins, 1] = np.bincount(X[f], h, n_bins)
        hist[f, :n_bins, -1] = np.bincount(X[f], None, n_bins)
    if missing:
        hist[:, -1], hist[:, 3] = hist[:, 3].copy(), 0
    features = np.arange(n_features, dtype=np.int32)
    return (hist, features, np.full(n_features, n_bins, np.int32), hist[0].sum(axis=0), 1,
            hess_width, 1.0, 1.0, 20.0, 1e-3)


def categorical_histogram(rng, n_rows, n_categories, n_outputs, n_features=10):
    """node_histogram's arguments for categorical features of n_categories
    each, whose categories' gradients have means in no order of their bins."""
    width = n_outputs + 1
    X = rng.integers(0, n_categories, size=(n_features, n_rows))
    G = rng.normal(size=(n_categories, n_outputs))[X[0]] + rng.normal(size=(n_rows, n_outputs))
    hist = np.zeros((n_features, n_categories + 1, width))
    for f in range(n_features):
        for j in range(n_outputs):
            hist[f, :n_categories, j] = np.bincount(X[f], G[:, j], n_categories)
        hist[f, :n_categories, -1] = np.bincount(X[f], None, n_categories)
    features = np.arange(n_features, dtype=np.int32)
    return (hist, features, np.full(n_features, n_categories, np.int32), hist[0].sum(axis=0),
            n_outputs, 0, 1.0, 1.0, 20.0, 1e-3)


def search(module, arguments, lambda_l1, threads, **options):
    n_features = arguments[0].shape[0]
    out = (np.empty(n_features), np.empty(n_features, np.int32),
           np.empty(n_features, np.uint8))
    best = module.find_best_splits(*arguments, *out, threads, lambda_l1=lambda_l1, **options)
    return best, out


def median_times(calls, samples):
    """Median microseconds per call of each of calls (name -> (function that
    times its calls in seconds, calls per sample)), sampled in turn."""
    times = {name: [] for name in calls}
    for _ in range(samples):
        for name, (function, repeats) in calls.items():
            times[name].append(function() / repeats * 1e6)
    return [np.median(times[name]) for name in calls]


def compare_split(old_split, threads, samples, rng):
    print(f"find_best_splits, 50 features x 255 bins, {threads} thread(s), "
          f"median of {samples} interleaved samples of 50 calls")
    print(f"{'rows':>7} {'hess':>4} {'l1':>4} {'missing':>7} {'old us':>7} {'new us':>7} "
          f"{'old / new':>9}")
    for n_rows, hess_width, lambda_l1, missing in SPLIT_CASES:
        arguments = node_histogram(rng, n_rows, hess_width, missing)
        old_best, old_out = search(old_split, arguments, lambda_l1, threads)
        new_best, new_out = search(new_split, arguments, lambda_l1, threads)
        assert old_best == new_best and all(
            np.array_equal(a, b) for a, b in zip(old_out, new_out)), "the splits differ"

        def calls(module):
            start = time.perf_counter()
            for _ in range(50):
                search(module, arguments, lambda_l1, threads)
            return time.perf_counter() - start
        old_us, new_us = median_times({"old": (lambda: calls(old_split), 50),
                                       "new": (lambda: calls(new_split), 50)}, samples)
        print(f"{n_rows:7d} {hess_width:4d} {lambda_l1:4} {str(missing):>7} {old_us:7.1f} "
              f"{new_us:7.1f} {old_us / new_us:9.2f}")


def compare_categorical(old_split, threads, samples, rng):
    print(f"find_best_splits, 10 categorical features, {threads} thread(s), "
          f"median of {samples} interleaved samples of 50 calls")
    print(f"{'categories':>10} {'outputs':>7} {'old us':>7} {'new us':>7} {'old / new':>9}")
    for n_categories in (10, 50, 200):
        for n_outputs in (1, 5):
            arguments = categorical_histogram(rng, 20 * n_categories, n_categories, n_outputs)
            hist = arguments[0]
            orders = []
            results = []
            for module in (old_split, new_split):
                orders.append(np.full(hist.shape[:2], -1, dtype=np.int32))
                results.append(search(module, arguments, 0.0, threads,
                                      categorical=np.ones(hist.shape[0], np.uint8),
                                      category_order=orders[-1]))
            (old_best, old_out), (new_best, new_out) = results
            assert old_best == new_best and all(
                np.array_equal(a, b) for a, b in zip(old_out, new_out)), "the splits differ"
            assert np.array_equal(orders[0][:, :n_categories], orders[1][:, :n_categories]), \
                "the orders differ"

            def calls(module, order):
                start = time.perf_counter()
                for _ in range(50):
                    search(module, arguments, 0.0, threads,
                           categorical=np.ones(hist.shape[0], np.uint8), category_order=order)
                return time.perf_counter() - start
            old_us, new_us = median_times({"old": (lambda: calls(old_split, orders[0]), 50),
                                           "new": (lambda: calls(new_split, orders[1]), 50)},
                                          samples)
            print(f"{n_categories:10d} {n_outputs:7d} {old_us:7.1f} {new_us:7.1f} "
                  f"{old_us / new_us:9.2f}")


def compare_partition(old_partition, threads, samples, rng, n_total=200_000):
    print(f"split_rows, {threads} thread(s), median of {samples} interleaved samples of "
          "at least 20 row sets and 1,000,000 rows")
    print(f"{'rows':>7} {'left':>5} {'old us':>7} {'new us':>7} {'old / new':>9}")
    column = rng.integers(0, 255, size=n_total).astype(np.uint8)
    left, right = np.empty(n_total, np.uint32), np.empty(n_total, np.uint32)
    for n_rows, share_left in PARTITION_CASES:
        threshold = int(share_left * 254)
        n_sets = max(20, 1_000_000 // n_rows)
        row_sets = [np.sort(rng.choice(n_total, n_rows, replace=False)).astype(np.uint32)
                    for _ in range(n_sets)]
        results = []
        for module in (old_partition, new_partition):
            rows = row_sets[0].copy()
            results.append((module.split_rows(rows, column, threshold, False, 255, left, right,
                                              threads), rows))
        assert results[0][0] == results[1][0] and np.array_equal(results[0][1], results[1][1]), \
            "the partitions differ"

        def calls(module):
            copies = [rows.copy() for rows in row_sets]
            start = time.perf_counter()
            for rows in copies:
                module.split_rows(rows, column, threshold, False, 255, left, right, threads)
            return time.perf_counter() - start

        old_us, new_us = median_times({"old": (lambda: calls(old_partition), n_sets),
                                       "new": (lambda: calls(new_partition), n_sets)}, samples)
        print(f"{n_rows:7d} {share_left:5} {old_us:7.2f} {new_us:7.2f} {old_us / new_us:9.2f}")


def compare_histogram(old_histogram, threads, samples, rng, in_runs, n_total=100_000,
                      n_rows=20_000):
    print(f"build_histograms of {n_rows} rows x 50 features x 255 bins"
          f"{' in runs' if in_runs else ''}, {threads} thread(s), "
          f"median of {samples} interleaved samples of 10 calls")
    print(f"{'width':>5} {'skipped':>7} {'old us':>8} {'new us':>8} {'old / new':>9}")
    X_binned = rng.integers(0, 255, size=(50, n_total)).astype(np.uint8)
    if in_runs:  # each column sorted: its rows come in runs of one bin
        X_binned.sort(axis=1)
    rows = np.sort(rng.choice(n_total, n_rows, replace=False)).astype(np.uint32)
    features = np.arange(50, dtype=np.int32)
    for width in (2, 3, 4, 5, 6, 7, 8, 9, 11, 13, 15, 16, 21, 31, 41):
        ordered = rng.normal(size=(n_rows, width)).astype(np.float32)
        totals = ordered.sum(axis=0, dtype=np.float64)[None, :]
        for skipped in (False, True):
            options = (dict(skipped_bins=np.full(50, 7, dtype=np.int32), totals=totals)
                       if skipped else {})
            hists = [np.empty((50, 256, width)) for _ in range(2)]
            for module, hist in zip((old_histogram, new_histogram), hists):
                module.build_histograms(X_binned, rows, ordered, features, hist, threads,
                                        **options)
            # the same sums, but maybe added in another order (49126bc)
            np.testing.assert_allclose(*hists, rtol=1e-12, atol=1e-9)

            def calls(module, hist=hists[0], options=options):
                start = time.perf_counter()
                for _ in range(10):
                    module.build_histograms(X_binned, rows, ordered, features, hist, threads,
                                            **options)
                return time.perf_counter() - start

            old_us, new_us = median_times({"old": (lambda: calls(old_histogram), 10),
                                           "new": (lambda: calls(new_histogram), 10)},
                                          samples)
            print(f"{width:5d} {str(skipped):>7} {old_us:8.1f} {new_us:8.1f} "
                  f"{old_us / new_us:9.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kernel", choices=["split", "categorical", "partition", "histogram"],
                        required=True)
    parser.add_argument("--base", required=True, help="the commit to compare with")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--samples", type=int, default=15)
    parser.add_argument("--in-runs", action="store_true",
                        help="histogram: each feature's bins sorted, so rows come in runs")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as directory:
        if args.kernel in ("split", "categorical"):
            compare = compare_split if args.kernel == "split" else compare_categorical
            compare(build_old("_split", args.base, directory), args.threads, args.samples, rng)
        elif args.kernel == "histogram":
            compare_histogram(build_old("_histogram", args.base, directory), args.threads,
                              args.samples, rng, args.in_runs)
        else:
            compare_partition(build_old("_partition", args.base, directory), args.threads,
                              args.samples, rng)


if __name__ == "__main__":
    main()
