"""Tree growth modes on real and synthetic data: best-first, depth-wise and symmetric.

    python benchmarks/bench_growth.py [--data-dir ../shared/data] [--seeds 3]
                                      [--datasets yeast,student,mnist,mnist_reg,friedman1,randproj]

bench_peers found gbmo's symmetric trees (growth="symmetric", CatBoost's
shape) far more accurate than best-first on two smooth synthetic problems.
This asks whether that holds on the paper comparison's data sets (see
bench_paper.py for their sources and splits): each growth mode trained with
early stopping (patience 30, at most 2,000 rounds, learning rate 0.1) on 80%
of the training part, stopped on the other 20%, then scored on the test part.
bench_paper's bins and rows per leaf; best-first gets bench_paper's leaves
(15, or 31 for the MNIST sets), depth-wise and symmetric the depth of as many
leaves (4, or 5). Reports the mean test metric over seeds (MNIST: one split),
its standard deviation, the rounds used and the seconds of the whole fit.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_paper import SETTINGS, make_data  # noqa: E402

import gbmo  # noqa: E402

GROWTHS = ("bestfirst", "depthwise", "symmetric")


def fit(name, growth, data, threads):
    task, _, leaves, learning_rate, bins, min_leaf = SETTINGS[name]
    X_train, Y_train, X_test, Y_test = data
    order = np.random.default_rng(0).permutation(len(X_train))  # the MNIST file is sorted by class
    X_train, Y_train = X_train[order], Y_train[order]
    cut = int(0.8 * len(X_train))
    shape = ({"max_leaves": leaves} if growth == "bestfirst"
             else {"max_depth": int(np.log2(leaves + 1)), "max_leaves": leaves + 1})
    params = {"objective": "softmax" if task == "class" else "mse", "growth": growth,
              "learning_rate": learning_rate, "max_bins": bins, "min_samples_leaf": min_leaf,
              "n_threads": threads, "verbosity": 0, **shape}
    train_set = gbmo.Dataset(X_train[:cut], Y_train[:cut])
    start = time.perf_counter()
    booster = gbmo.train(params, train_set, 2000,
                         valid_sets=[train_set.create_valid(X_train[cut:], Y_train[cut:])],
                         callbacks=[gbmo.early_stopping(30, verbose=False)])
    seconds = time.perf_counter() - start
    P = booster.predict(X_test)
    if task == "class":
        return float(np.mean(np.argmax(P, axis=1) == Y_test)), booster.best_iteration, seconds
    return float(np.sqrt(np.mean((P - Y_test) ** 2))), booster.best_iteration, seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", default=str(Path(__file__).parents[2] / "shared" / "data"))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--datasets", default="yeast,student,mnist,mnist_reg,friedman1,randproj")
    args = parser.parse_args()
    print(f"{'data set':<10} {'growth':<10} {'test metric':>18} {'rounds':>7} {'seconds':>8}")
    for name in args.datasets.split(","):
        seeds = [0] if name.startswith("mnist") else range(args.seeds)
        metric = "accuracy" if SETTINGS[name][0] == "class" else "RMSE"
        for growth in GROWTHS:
            runs = np.array([fit(name, growth, make_data(name, seed, args.data_dir), args.threads)
                             for seed in seeds])
            print(f"{name:<10} {growth:<10} {metric:>8} {runs[:, 0].mean():.4f}"
                  f"±{runs[:, 0].std():.4f} {runs[:, 1].mean():7.0f} {runs[:, 2].mean():8.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
