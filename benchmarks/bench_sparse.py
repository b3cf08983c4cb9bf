"""Sparse (top-k) splits and sparse leaves against the dense split, on 100 outputs.

    python benchmarks/bench_sparse.py [--rows 50000] [--rounds 10] [--top-k 4] [--threads 2]
    python benchmarks/bench_sparse.py --prediction-outputs 100,300,1000,3000

Trains dense, restricted and unrestricted sparse models on the same data
(rows x 50 features, 100 regression outputs of which each depends on a few
features) with the same parameters, and prints seconds per round as ratios to
dense; then predicts 100,000 rows with the sparse-leaf model and with the same
trees given dense leaves (the sparse values scattered into d-vectors, so the
traversal is identical and only the leaf additions differ).

--prediction-outputs instead measures only that prediction, for each number
of outputs d given (restricted models trained on 10,000 rows): every row
still receives a dense d-vector, so the output's own writes bound the ratio.
"""
import argparse
import time

import numpy as np

import gbmo
from gbmo.tree import Tree


def make_data(n_rows, n_outputs, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 50))
    owner = rng.integers(0, 50, size=(n_outputs, 3))
    Y = np.stack([np.tanh(X[:, o].sum(axis=1)) for o in owner], axis=1)
    return X, Y + 0.1 * rng.normal(size=Y.shape)


def best_time(function, repeats=3):
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def timed_prediction(model, X, threads):
    """(best seconds of 7, raw scores) of model's prediction of X on `threads`
    threads, given to both models: the trained one keeps the run's count and
    a loaded copy takes the machine's default. Best of 7: the first calls
    after training ran up to 8x slower here, while the kernel took back the
    training's memory."""
    return best_time(lambda: model.predict(X, raw_score=True, n_threads=threads), 7)


def with_dense_leaves(booster):
    """A copy of the booster whose trees hold the same values as dense vectors."""
    clone = gbmo.Booster(model_str=booster.model_to_string())
    clone.trees = [Tree(t.dense_leaf_values(booster.n_outputs), None,
                        **{name: getattr(t, name) for name in (
                            "node_feature", "node_threshold", "node_bin", "node_missing_left",
                            "node_left", "node_right", "node_value", "node_gain", "node_count")})
                   for t in booster.trees]
    return clone


def prediction_sweep(outputs, args, base):
    X_predict = np.random.default_rng(1).normal(size=(100_000, 50))
    print(f"prediction of 100,000 rows, {args.rounds} trees of 63 leaves, k = {args.top_k}, "
          f"{args.threads} threads (best of 7)")
    print(f"{'d':>6} {'sparse s':>9} {'dense s':>8} {'dense / sparse':>15}")
    for d in outputs:
        X, Y = make_data(10_000, d)
        sparse_model = gbmo.train({**base, "split": "sparse_restricted", "top_k": args.top_k},
                                  gbmo.Dataset(X, Y), args.rounds)
        dense_model = with_dense_leaves(sparse_model)
        sparse_seconds = timed_prediction(sparse_model, X_predict, args.threads)[0]
        dense_seconds = timed_prediction(dense_model, X_predict, args.threads)[0]
        print(f"{d:6d} {sparse_seconds:9.4f} {dense_seconds:8.4f} "
              f"{dense_seconds / sparse_seconds:15.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--outputs", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--top-k", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--prediction-outputs", help="comma-separated d values")
    args = parser.parse_args()
    base = {"max_leaves": 63, "max_bins": 63, "learning_rate": 0.1, "n_threads": args.threads,
            "verbosity": 0}
    if args.prediction_outputs:
        prediction_sweep([int(d) for d in args.prediction_outputs.split(",")], args, base)
        return
    X, Y = make_data(args.rows, args.outputs)
    dataset = gbmo.Dataset(X, Y)
    dataset.construct(gbmo.params.resolve_params(base))  # bin once, outside the timings
    modes = {"dense": {}, "sparse_restricted": {"split": "sparse_restricted", "top_k": args.top_k},
             "sparse": {"split": "sparse", "top_k": args.top_k}}
    print(f"{args.rows} rows x 50 features, {args.outputs} outputs, {args.rounds} rounds, "
          f"k = {args.top_k}, {args.threads} threads")
    print(f"{'split':<18} {'s/round':>8} {'vs dense':>9} {'train RMSE':>11}")
    seconds, models = {}, {}
    for name, extra in modes.items():
        seconds[name], models[name] = best_time(
            lambda: gbmo.train({**base, **extra}, dataset, args.rounds), repeats=2)
        rmse = np.sqrt(np.mean((models[name].predict(X) - Y) ** 2))
        print(f"{name:<18} {seconds[name] / args.rounds:8.3f} "
              f"{seconds[name] / seconds['dense']:9.2f} {rmse:11.4f}")

    X_predict = np.random.default_rng(1).normal(size=(100_000, 50))
    sparse_model = models["sparse_restricted"]
    dense_model = with_dense_leaves(sparse_model)
    sparse_seconds, sparse_prediction = timed_prediction(sparse_model, X_predict, args.threads)
    dense_seconds, dense_prediction = timed_prediction(dense_model, X_predict, args.threads)
    np.testing.assert_allclose(sparse_prediction, dense_prediction, rtol=1e-12, atol=1e-12)
    print(f"\nprediction of 100,000 rows, {sparse_model.num_trees} trees: sparse leaves "
          f"{sparse_seconds:.3f} s, the same trees with dense leaves {dense_seconds:.3f} s, "
          f"speed-up {dense_seconds / sparse_seconds:.1f}x")


if __name__ == "__main__":
    main()
