"""GBDT-sparse (gbmo.sparse_output, issue 6) against dense GBDT-MO and
LightGBM one-model-per-label on bibtex, and time / memory on a synthetic
extreme set.

    python benchmarks/bench_sparse_output.py bibtex --rounds 100
    python benchmarks/bench_sparse_output.py synthetic --rows 50000 --rounds 3
    python benchmarks/bench_sparse_output.py bibtex --rounds 100 --extra-trees
    python benchmarks/bench_sparse_output.py bibtex --rounds 20 --sparse-x

--extra-trees trains gbmo's models with extra_trees=True (one drawn threshold
per feature and node). --sparse-x (bibtex only) gives every model bibtex's X
as a scipy CSR matrix (gbmo keeps its sparse columns sparse when binned)
instead of a dense array; gbmo's models are the same.

Peak memory is the process's maximum resident set size (ru_maxrss), which
includes what the Cython kernels allocate outside Python's tracemalloc.
"""
import argparse
import os
import resource
import time
import xml.etree.ElementTree as ElementTree

import numpy as np
import scipy.sparse as sp

import gbmo
from gbmo.metrics import precision_at_k

BIBTEX = os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "bibtex")


def read_sparse_arff(path, n_features, n_labels):
    """(X dense float, Y CSR) of a MULAN sparse ARFF whose last n_labels attributes are labels."""
    rows, cols, values = [], [], []
    n_rows = 0
    with open(path) as f:
        for line in f:
            if line.strip().lower() == "@data":
                break
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            for pair in line[1:-1].split(","):
                if pair.strip():
                    index, value = pair.split()
                    rows.append(n_rows)
                    cols.append(int(index))
                    values.append(float(value))
            n_rows += 1
    M = sp.csr_matrix((values, (rows, cols)), shape=(n_rows, n_features + n_labels))
    return M[:, :n_features].toarray(), M[:, n_features:].tocsr()


def load_bibtex():
    n_labels = len(ElementTree.parse(os.path.join(BIBTEX, "bibtex.xml")).getroot())
    n_features = 1836
    train = read_sparse_arff(os.path.join(BIBTEX, "bibtex-train.arff"), n_features, n_labels)
    test = read_sparse_arff(os.path.join(BIBTEX, "bibtex-test.arff"), n_features, n_labels)
    return train, test


def report(name, seconds, Y_test, top_labels):
    scores = [precision_at_k(Y_test, top_labels[:, :k]) for k in (1, 3, 5)]
    print(f"{name:<32} train {seconds:7.1f} s   P@1 {scores[0]:.3f}  P@3 {scores[1]:.3f}  "
          f"P@5 {scores[2]:.3f}", flush=True)


def top5_dense(P):
    return np.argsort(-P, axis=1, kind="stable")[:, :5]


def bench_bibtex(args):
    (X, Y), (X_test, Y_test) = load_bibtex()
    if args.sparse_x:
        X, X_test = sp.csr_matrix(X), sp.csr_matrix(X_test)
    common = dict(learning_rate=args.learning_rate, max_leaves=args.max_leaves,
                  min_samples_leaf=5, min_child_weight=0.0, verbosity=0,
                  n_threads=args.threads, extra_trees=args.extra_trees)
    start = time.perf_counter()
    booster = gbmo.train(dict(common, objective=args.objective, top_k=args.top_k),
                         gbmo.Dataset(X, Y), args.rounds)
    seconds = time.perf_counter() - start
    labels, _ = booster.predict_topk(X_test, 5)
    report(f"gbmo sparse-output {args.objective} k={args.top_k}"
           f"{', CSR X' if args.sparse_x else ''}", seconds, Y_test, labels)

    start = time.perf_counter()
    dense = gbmo.train(dict(common, objective="sigmoid"), gbmo.Dataset(X, Y.toarray()),
                       args.rounds)
    report(f"gbmo dense GBDT-MO sigmoid{', CSR X' if args.sparse_x else ''}",
           time.perf_counter() - start, Y_test,
           top5_dense(dense.predict(X_test)))

    if args.lightgbm_rounds:
        import lightgbm

        start = time.perf_counter()
        P = np.zeros((X_test.shape[0], Y.shape[1]))
        Y_dense = Y.toarray()
        for j in range(Y.shape[1]):
            model = lightgbm.train(dict(objective="binary", learning_rate=args.learning_rate,
                                        num_leaves=args.max_leaves, min_data_in_leaf=5,
                                        verbosity=-1, num_threads=args.threads),
                                   lightgbm.Dataset(X, Y_dense[:, j]), args.lightgbm_rounds)
            P[:, j] = model.predict(X_test)
        report(f"LightGBM {Y.shape[1]} models x {args.lightgbm_rounds}",
               time.perf_counter() - start, Y_test, top5_dense(P))


def synthetic(n_rows, n_features, n_labels, positives, seed=0):
    """Labels from feature clusters: each row's cluster (the signs of 8
    features) owns a pool of labels; a row draws `positives` of its pool."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, n_features)).astype(np.float64)
    cluster = (X[:, :8] > 0) @ (1 << np.arange(8))
    pool = 40
    pools = rng.integers(0, n_labels, size=(256, pool))
    picks = rng.integers(0, pool, size=(n_rows, positives))
    labels = pools[cluster[:, None], picks]
    Y = sp.csr_matrix((np.ones(labels.size), (np.repeat(np.arange(n_rows), positives),
                                              labels.ravel())), shape=(n_rows, n_labels))
    Y.data[:] = 1.0
    return X, Y


def bench_synthetic(args):
    X, Y = synthetic(args.rows, args.features, args.labels, 5)
    n_test = args.rows // 10
    data = gbmo.Dataset(X[n_test:], Y[n_test:])
    params = dict(objective=args.objective, top_k=args.top_k, max_leaves=args.max_leaves,
                  learning_rate=args.learning_rate, max_bins=args.max_bins,
                  min_samples_leaf=20, min_child_weight=0.0, verbosity=0,
                  n_threads=args.threads, extra_trees=args.extra_trees)
    start = time.perf_counter()
    booster = gbmo.train(params, data, args.rounds)
    seconds = time.perf_counter() - start
    labels, _ = booster.predict_topk(X[:n_test], 5)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"synthetic {args.rows} x {args.features} x {args.labels} labels, nnz(Y) {Y.nnz}: "
          f"{seconds / args.rounds:.2f} s per round ({args.rounds} rounds, max_bins "
          f"{args.max_bins}), peak RSS {peak:.2f} GB (dense float64 Y would be "
          f"{args.rows * args.labels * 8 / 2**30:.1f} GB)")
    report("  test", seconds, Y[:n_test], labels)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", choices=["bibtex", "synthetic"])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--objective", default="squared_hinge")
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--max-leaves", type=int, default=31)
    parser.add_argument("--max-bins", type=int, default=255)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--lightgbm-rounds", type=int, default=0)
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--features", type=int, default=500)
    parser.add_argument("--labels", type=int, default=20_000)
    parser.add_argument("--extra-trees", action="store_true")
    parser.add_argument("--sparse-x", action="store_true")
    args = parser.parse_args()
    if args.sparse_x and args.data != "bibtex":
        parser.error("--sparse-x is for bibtex (the synthetic X is dense)")
    (bench_bibtex if args.data == "bibtex" else bench_synthetic)(args)


if __name__ == "__main__":
    main()
