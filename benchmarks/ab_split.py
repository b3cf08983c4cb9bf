"""find_best_splits of one output: the installed build against a commit's.

    python benchmarks/ab_split.py --base 493382d [--threads 1] [--samples 15]

Compiles gbmo/_core/_split.pyx as it was at --base into a temporary
directory (its .pxd files beside it, the setup.py flags), loads it beside the
installed module, checks that both choose the same splits with the same
gains bit for bit, and times them interleaved: one node's histogram of 50
features x 255 bins, 50 calls per sample; prints the median time of each and
old / new.
"""
import argparse
import importlib.util
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

import gbmo._core._split as new_split

ROOT = pathlib.Path(__file__).resolve().parent.parent
CASES = [  # rows in the node, hessian width, lambda_l1, a missing-value bin
    (5_000, 0, 0.0, False), (5_000, 1, 0.0, False), (500, 1, 0.0, False),
    (100_000, 0, 0.0, False), (5_000, 1, 0.5, False), (5_000, 0, 0.0, True)]

SETUP = """
from setuptools import Extension, setup
from Cython.Build import cythonize
import numpy
setup(ext_modules=cythonize([Extension("gbmo._core._split", ["gbmo/_core/_split.pyx"],
      include_dirs=[numpy.get_include()], extra_compile_args=["-O3", "-fopenmp"],
      extra_link_args=["-fopenmp"])], compiler_directives={"language_level": 3,
      "boundscheck": False, "wraparound": False, "cdivision": True,
      "initializedcheck": False}), script_args=["build_ext", "--inplace"])
"""


def build_old(base, directory):
    core = pathlib.Path(directory, "gbmo", "_core")
    core.mkdir(parents=True)
    for path in ["gbmo/_core/_split.pyx", *(str(p.relative_to(ROOT))
                                             for p in (ROOT / "gbmo/_core").glob("*.pxd"))]:
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{base}:{path}"],
                              check=True, capture_output=True, text=True).stdout
        pathlib.Path(directory, path).write_text(text)
    subprocess.run([sys.executable, "-c", SETUP], cwd=directory, check=True,
                   capture_output=True)
    built = next(core.glob("_split*.so"))
    spec = importlib.util.spec_from_file_location("gbmo._core._split", built)
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


def search(module, arguments, lambda_l1, threads):
    n_features = arguments[0].shape[0]
    out = (np.empty(n_features), np.empty(n_features, np.int32),
           np.empty(n_features, np.uint8))
    best = module.find_best_splits(*arguments, *out, threads, lambda_l1=lambda_l1)
    return best, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the commit to compare with")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--samples", type=int, default=15)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as directory:
        old_split = build_old(args.base, directory)
        print(f"find_best_splits, 50 features x 255 bins, {args.threads} thread(s), "
              f"median of {args.samples} interleaved samples of 50 calls")
        print(f"{'rows':>7} {'hess':>4} {'l1':>4} {'missing':>7} {'old us':>7} {'new us':>7} "
              f"{'old / new':>9}")
        for n_rows, hess_width, lambda_l1, missing in CASES:
            arguments = node_histogram(rng, n_rows, hess_width, missing)
            old_best, old_out = search(old_split, arguments, lambda_l1, args.threads)
            new_best, new_out = search(new_split, arguments, lambda_l1, args.threads)
            assert old_best == new_best and all(
                np.array_equal(a, b) for a, b in zip(old_out, new_out)), "the splits differ"
            times = {old_split: [], new_split: []}
            for _ in range(args.samples):
                for module in times:
                    start = time.perf_counter()
                    for _ in range(50):
                        search(module, arguments, lambda_l1, args.threads)
                    times[module].append((time.perf_counter() - start) / 50 * 1e6)
            old_us, new_us = np.median(times[old_split]), np.median(times[new_split])
            print(f"{n_rows:7d} {hess_width:4d} {lambda_l1:4} {str(missing):>7} {old_us:7.1f} "
                  f"{new_us:7.1f} {old_us / new_us:9.2f}")


if __name__ == "__main__":
    main()
