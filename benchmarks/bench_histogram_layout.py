"""Feature-major vs row-major histogram building, on 10 and 100 outputs.

    python benchmarks/bench_histogram_layout.py

Compiles benchmarks/layout/layouts.pyx (Cython, -O3) into a temporary folder
and times both layouts single-threaded on a node holding half of 200,000 rows
with 100 features and 63 bins; hessian width 0 (MSE: the count stands in) and
d (softmax-like). Prints the best of 5 in ns per (row, feature) and the ratio.
"""
import importlib.util
import os
import sys
import tempfile
import time

import numpy as np
from Cython.Build import cythonize
from setuptools import Distribution, Extension
from setuptools.command.build_ext import build_ext


def compile_layouts():
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "layout")
    build_dir = tempfile.mkdtemp()
    extension = Extension("layouts", [os.path.join(here, "layouts.pyx")],
                          extra_compile_args=["-O3"])
    distribution = Distribution({"ext_modules": cythonize([extension], quiet=True,
                                                          build_dir=build_dir)})
    command = build_ext(distribution)
    command.build_lib = build_dir
    command.build_temp = build_dir
    command.ensure_finalized()
    command.run()
    path = command.get_ext_fullpath("layouts")
    spec = importlib.util.spec_from_file_location("layouts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def best_of(function, *args, repeats=5):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        function(*args)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    layouts = compile_layouts()
    rng = np.random.default_rng(0)
    n, p, n_bins = 200_000, 100, 64
    X_binned = rng.integers(0, n_bins - 1, size=(p, n), dtype=np.uint8)
    X_binned_rows = np.ascontiguousarray(X_binned.T)
    rows = np.sort(rng.choice(n, n // 2, replace=False)).astype(np.uint32)
    print(f"{'outputs':>7} {'hess':>5} {'width':>5} {'feature-major':>14} {'row-major':>10} {'row/feature':>12}")
    for d in (10, 100):
        for hess_width in (0, d):
            width = d + hess_width + 1
            ordered = rng.normal(size=(len(rows), width)).astype(np.float32)
            hist = np.empty((p, n_bins, width))
            per_update = len(rows) * p * 1e-9
            feature = best_of(layouts.feature_major, X_binned, rows, ordered, hist) / per_update
            row = best_of(layouts.row_major, X_binned_rows, rows, ordered, hist) / per_update
            print(f"{d:7d} {hess_width:5d} {width:5d} {feature:11.2f} ns {row:7.2f} ns {row / feature:12.2f}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
