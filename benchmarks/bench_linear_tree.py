"""Linear leaves (linear_tree=True) against constant leaves, gbmo and LightGBM.

    python benchmarks/bench_linear_tree.py [--seeds 3] [--threads 2]
                                           [--datasets friedman1,randproj,student,enb,piecewise]
    python benchmarks/bench_linear_tree.py --timing 200000 [--outputs 10] [--rounds 30]

Each model is trained with early stopping (patience 30, at most 2,000
rounds, learning rate 0.1, 255 bins, 20 rows a leaf) on 80% of a data set's
training part, stopped on the other 20%, and scored on its test part (RMSE,
averaged over the outputs). gbmo grows one vector-leaf tree a round for all
outputs, LightGBM one model per output. friedman1 and randproj are
bench_paper.py's (5 noisy copies of friedman #1; 4 inputs projected to 8
outputs), student and enb the shipped sets (70/30 splits), piecewise a
synthetic 20,000 x 10 set whose 6 outputs are different lines of the same
features on each side of two thresholds. Seconds are the whole fit's
(binning and validation included), in one process, so that the ratios to
LightGBM's linear trees of the same run are the figures to read.

--timing ROWS times a round instead: `rounds` rounds of 31 leaves on
piecewise's kind of data with ROWS rows, 20 features and `outputs` outputs,
no early stopping, each method timed once after a warm-up fit of 2 rounds;
then the prediction of the training rows by the fitted model(s), the second
of two calls.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_paper import make_data, split_70_30  # noqa: E402

import gbmo  # noqa: E402

LEAVES = {"friedman1": 15, "randproj": 15, "student": 15, "enb": 15, "piecewise": 31}
COMMON = {"learning_rate": 0.1, "max_bins": 255, "min_samples_leaf": 20}
MAX_ROUNDS, PATIENCE = 2000, 30
METHODS = ("gbmo", "gbmo linear", "lightgbm", "lightgbm linear")


def piecewise(seed, n_rows=20_000, n_features=10, n_outputs=6):
    rng = np.random.default_rng(2000 + seed)
    X = rng.normal(size=(n_rows, n_features))
    slopes = rng.normal(size=(3, 4, n_outputs))
    region = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    Y = np.einsum("nf,nfo->no", X[:, 2:6], slopes[region])
    return split_70_30(X, Y + 0.2 * rng.normal(size=Y.shape), seed)


def load(name, seed):
    if name == "enb":
        X, Y = gbmo.datasets.load_enb(return_X_y=True)
        return split_70_30(X, Y, seed)
    if name == "piecewise":
        return piecewise(seed)
    return make_data(name, seed, None)


def fit_gbmo(linear, X, Y, X_stop, Y_stop, leaves, threads):
    train = gbmo.Dataset(X, Y)
    return gbmo.train({**COMMON, "linear_tree": linear, "max_leaves": leaves,
                       "n_threads": threads, "verbosity": -1}, train, MAX_ROUNDS,
                      valid_sets=[train.create_valid(X_stop, Y_stop)],
                      callbacks=[gbmo.early_stopping(PATIENCE, verbose=False)])


def fit_lightgbm(linear, X, Y, X_stop, Y_stop, leaves, threads):
    import lightgbm

    models = []
    for j in range(Y.shape[1]):
        train = lightgbm.Dataset(X, Y[:, j], params={"linear_tree": linear, "verbose": -1})
        models.append(lightgbm.train(
            {"learning_rate": COMMON["learning_rate"], "max_bin": COMMON["max_bins"],
             "min_data_in_leaf": COMMON["min_samples_leaf"], "num_leaves": leaves,
             "linear_tree": linear, "num_threads": threads, "verbose": -1},
            train, MAX_ROUNDS, valid_sets=[train.create_valid(X_stop, Y_stop[:, j])],
            callbacks=[lightgbm.early_stopping(PATIENCE, verbose=False)]))
    return models


def run(method, data, leaves, threads):
    """(test RMSE, rounds used, seconds of the fit)."""
    X_train, Y_train, X_test, Y_test = data
    Y_train = Y_train.reshape(len(Y_train), -1)
    Y_test = Y_test.reshape(len(Y_test), -1)
    cut = int(0.8 * len(X_train))
    linear = method.endswith("linear")
    start = time.perf_counter()
    if method.startswith("gbmo"):
        booster = fit_gbmo(linear, X_train[:cut], Y_train[:cut], X_train[cut:], Y_train[cut:],
                           leaves, threads)
        seconds = time.perf_counter() - start
        predicted, rounds = booster.predict(X_test).reshape(Y_test.shape), booster.best_iteration
    else:
        models = fit_lightgbm(linear, X_train[:cut], Y_train[:cut], X_train[cut:],
                              Y_train[cut:], leaves, threads)
        seconds = time.perf_counter() - start
        predicted = np.column_stack([m.predict(X_test) for m in models])
        rounds = "-".join(str(r) for r in sorted({min(m.best_iteration for m in models),
                                                   max(m.best_iteration for m in models)}))
    rmse = float(np.mean(np.sqrt(np.mean((predicted - Y_test) ** 2, axis=0))))
    return rmse, rounds, seconds


def timing(args):
    import lightgbm

    X, Y, _, _ = piecewise(0, int(args.timing / 0.7) + 1, 20, args.outputs)
    print(f"{len(X)} rows x 20 features x {args.outputs} outputs, {args.rounds} rounds of 31 "
          "leaves")
    print(f"{'method':<17}{'s / round':>10}{'/ lightgbm linear':>19}"
          f"{'predict s':>11}{'/ lightgbm linear':>19}")
    seconds, predict_seconds = {}, {}
    for method in METHODS:
        linear = method.endswith("linear")
        if method.startswith("gbmo"):
            def fit(rounds):
                booster = gbmo.train({**COMMON, "linear_tree": linear, "max_leaves": 31,
                                      "n_threads": args.threads, "verbosity": -1},
                                     gbmo.Dataset(X, Y), rounds)
                return lambda: booster.predict(X)
        else:
            def fit(rounds):
                models = [lightgbm.train(
                    {"learning_rate": 0.1, "max_bin": 255, "num_leaves": 31,
                     "min_data_in_leaf": 20, "linear_tree": linear,
                     "num_threads": args.threads, "verbose": -1},
                    lightgbm.Dataset(X, Y[:, j], params={"linear_tree": linear, "verbose": -1}),
                    rounds) for j in range(Y.shape[1])]
                return lambda: [model.predict(X) for model in models]
        fit(2)
        start = time.perf_counter()
        predict = fit(args.rounds)
        seconds[method] = (time.perf_counter() - start) / args.rounds
        predict()
        start = time.perf_counter()
        predict()
        predict_seconds[method] = time.perf_counter() - start
    for method in METHODS:
        print(f"{method:<17}{seconds[method]:>10.4f}"
              f"{seconds[method] / seconds['lightgbm linear']:>19.2f}"
              f"{predict_seconds[method]:>11.3f}"
              f"{predict_seconds[method] / predict_seconds['lightgbm linear']:>19.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--datasets", default="friedman1,randproj,student,enb,piecewise")
    parser.add_argument("--timing", type=int, default=None, metavar="ROWS")
    parser.add_argument("--outputs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    print(f"gbmo {gbmo.__version__}, lightgbm {__import__('lightgbm').__version__}, "
          f"{args.threads} threads" + ("" if args.timing else f", {args.seeds} seeds"))
    if args.timing:
        timing(args)
        return
    for name in args.datasets.split(","):
        results = {method: [] for method in METHODS}
        for seed in range(args.seeds):
            data = load(name, seed)
            for method in METHODS:
                results[method].append(run(method, data, LEAVES[name], args.threads))
        d = np.reshape(load(name, 0)[1], (len(load(name, 0)[1]), -1)).shape[1]
        print(f"\n{name}: d = {d}, {LEAVES[name]} leaves")
        print(f"{'method':<17}{'test RMSE':>18}{'rounds (seed 0)':>17}{'seconds':>9}"
              f"{'time / lightgbm linear':>24}")
        reference = np.mean([s for _, _, s in results["lightgbm linear"]])
        for method, runs in results.items():
            rmse = np.array([r for r, _, _ in runs])
            seconds = np.mean([s for _, _, s in runs])
            print(f"{method:<17}{rmse.mean():>11.4f} ± {rmse.std():.4f}{str(runs[0][1]):>17}"
                  f"{seconds:>9.2f}{seconds / reference:>24.2f}")


if __name__ == "__main__":
    main()
