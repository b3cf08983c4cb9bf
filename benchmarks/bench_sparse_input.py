"""Training and prediction on scipy sparse X without densifying it.

Synthetic CSR X (default 100,000 x 10,000 at 1% density: 5 informative
columns at 30% density, the rest random), 3 regression outputs depending on
the informative columns. Reports the binning time (Dataset.construct), the
seconds per boosting round, the prediction time on the CSR, the size of the
binned data, and the peak memory: tracemalloc's peak (every numpy buffer is
traced) and the process's max RSS (resource.getrusage), both against the
n x p bytes a dense uint8 binned matrix alone would take. Optionally the same
for LightGBM on the same CSR (in a separate process, so that each max RSS
is its own).

    python benchmarks/bench_sparse_input.py                       # gbmo
    python benchmarks/bench_sparse_input.py --library lightgbm    # LightGBM
    python benchmarks/bench_sparse_input.py --rows 20000 --cols 2000  # quick
"""
import argparse
import resource
import sys
import time
import tracemalloc

import numpy as np
import scipy.sparse as sp


def make_data(n_rows, n_cols, density, n_outputs, seed=0):
    """CSR float64 X and Y (n_rows, n_outputs), built row-wise without any dense
    (n_rows, n_cols) intermediate."""
    rng = np.random.default_rng(seed)
    n_informative = 5
    per_row = max(1, int(round(density * n_cols)) - int(0.3 * n_informative))
    cols = rng.integers(n_informative, n_cols, size=(n_rows, per_row), dtype=np.int32)
    informative = rng.random((n_rows, n_informative)) < 0.3
    cols = np.concatenate([np.where(informative, np.arange(n_informative, dtype=np.int32), -1),
                           cols], axis=1)
    cols.sort(axis=1)
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum((cols >= 0).sum(axis=1), out=indptr[1:])
    indices = cols[cols >= 0]
    del cols
    data = rng.normal(size=len(indices))
    X = sp.csr_matrix((data, indices, indptr.astype(np.int32)), shape=(n_rows, n_cols))
    X.sum_duplicates()
    Z = X[:, :n_informative].toarray()
    Y = np.column_stack([
        Z[:, 0] + 2 * Z[:, 1],
        np.where(Z[:, 2] > 0, Z[:, 3], -1.0),
        Z[:, 4] ** 2 - Z[:, 0],
    ][:n_outputs]) + 0.1 * rng.normal(size=(n_rows, n_outputs))
    return X, Y


def max_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def run_gbmo(X, Y, args):
    import gbmo

    params = dict(objective="mse", max_leaves=args.leaves, learning_rate=0.1,
                  n_threads=args.threads, verbosity=-1, hist_cache=args.hist_cache)
    start = time.perf_counter()
    train_set = gbmo.Dataset(X, Y).construct(gbmo.params.resolve_params(params))
    bin_seconds = time.perf_counter() - start
    binned = train_set.X_binned
    print(f"binned: {binned.nnz:,} sparse entries, {int(binned.is_sparse.sum()):,} sparse / "
          f"{int((binned.is_sparse == 0).sum()):,} dense features, {binned.nbytes / 1e6:.1f} MB "
          f"(dense uint8 would be {X.shape[0] * X.shape[1] / 1e6:.0f} MB)")
    start = time.perf_counter()
    booster = gbmo.train(params, train_set, args.rounds)
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    prediction = booster.predict(X)
    predict_seconds = time.perf_counter() - start
    return bin_seconds, train_seconds, predict_seconds, prediction


def run_lightgbm(X, Y, args):
    import lightgbm as lgb

    params = dict(objective="regression", num_leaves=args.leaves, learning_rate=0.1,
                  num_threads=args.threads, verbose=-1, max_bin=255)
    bin_seconds = train_seconds = predict_seconds = 0.0
    predictions = []
    for j in range(Y.shape[1]):  # LightGBM: one single-output model per output
        start = time.perf_counter()
        train_set = lgb.Dataset(X, Y[:, j], params=params).construct()
        bin_seconds += time.perf_counter() - start
        start = time.perf_counter()
        booster = lgb.train(params, train_set, args.rounds)
        train_seconds += time.perf_counter() - start
        start = time.perf_counter()
        predictions.append(booster.predict(X))
        predict_seconds += time.perf_counter() - start
    return bin_seconds, train_seconds, predict_seconds, np.column_stack(predictions)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--cols", type=int, default=10_000)
    parser.add_argument("--density", type=float, default=0.01)
    parser.add_argument("--outputs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--hist-cache", type=int, default=64)
    parser.add_argument("--library", choices=["gbmo", "lightgbm"], default="gbmo")
    parser.add_argument("--no-tracemalloc", action="store_true",
                        help="max RSS only (tracemalloc slows allocation-heavy code)")
    args = parser.parse_args()

    if not args.no_tracemalloc:
        tracemalloc.start()
    start = time.perf_counter()
    X, Y = make_data(args.rows, args.cols, args.density, args.outputs)
    data_bytes = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    print(f"X: {X.shape[0]:,} x {X.shape[1]:,} CSR, {X.nnz:,} non-zeros "
          f"({X.nnz / X.shape[0] / X.shape[1]:.2%}), {data_bytes / 1e6:.0f} MB; made in "
          f"{time.perf_counter() - start:.1f} s")
    rss_before = max_rss_bytes()
    if not args.no_tracemalloc:
        traced_before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
    run = run_gbmo if args.library == "gbmo" else run_lightgbm
    bin_seconds, train_seconds, predict_seconds, prediction = run(X, Y, args)
    dense_bytes = X.shape[0] * X.shape[1]
    mse = float(np.mean((prediction - Y) ** 2))
    print(f"{args.library}: {args.rounds} rounds, {args.leaves} leaves, {args.outputs} outputs, "
          f"{args.threads} threads")
    print(f"  binning {bin_seconds:.2f} s, training {train_seconds:.2f} s "
          f"({train_seconds / args.rounds:.2f} s per round), predict on CSR "
          f"{predict_seconds:.2f} s, training mse {mse:.4f} (var(Y) {Y.var():.4f})")
    if not args.no_tracemalloc:
        peak = tracemalloc.get_traced_memory()[1]
        print(f"  tracemalloc peak during binning + training + predict: {peak / 1e6:.0f} MB "
              f"({(peak - traced_before) / 1e6:.0f} MB above X and Y) = "
              f"{peak / dense_bytes:.2f} x n*p bytes")
    rss = max_rss_bytes()
    print(f"  max RSS: {rss / 1e6:.0f} MB ({rss_before / 1e6:.0f} MB after making X) = "
          f"{rss / dense_bytes:.2f} x n*p bytes (n*p = {dense_bytes / 1e6:.0f} MB)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
