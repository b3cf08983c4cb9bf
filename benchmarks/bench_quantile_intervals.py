"""Several quantile levels in one gbmo model against one LightGBM model per
level, each stopped early on its held-out pinball loss.

    python benchmarks/bench_quantile_intervals.py [--rows 20000] [--threads 2]
                                                  [--levels 0.05,0.1,0.25,0.5,0.75,0.9,0.95]
                                                  [--rounds N]

A skewed target (x0 plus exponential noise whose scale grows with |x1|) on
6 features; 60% of the rows train, 20% stop early (20 rounds without a
better pinball loss, at most 2,000; --rounds N trains N rounds instead), 20%
score. gbmo (gbmo-losses' quantile,
its default metric `quantile`) grows one tree a round for all levels, plain
and with `non_crossing=True`; LightGBM one model per level (its `quantile`
objective and metric). Both take learning rate 0.1, 31 leaves and 20 rows a
leaf. Printed: rounds, test pinball loss per level and averaged, the share
of test rows whose predictions cross (a lower level above a higher one), and
the whole fit's seconds as a ratio to LightGBM's (all its models).
"""
import argparse
import time

import lightgbm
import numpy as np

import gbmo

SETTINGS = {"learning_rate": 0.1, "num_leaves": 31, "min_data_in_leaf": 20, "verbosity": -1}
STOPPING_ROUNDS = 20
MAX_ROUNDS = 2000


def make_data(n_rows, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 6))
    return X, X[:, 0] + rng.standard_exponential(n_rows) * (0.3 + np.abs(X[:, 1]))


def pinball(y, prediction, levels):
    residual = y[:, None] - prediction
    return np.mean(np.maximum(levels * residual, (levels - 1) * residual), axis=0)


def fit_gbmo(X, y, X_stop, y_stop, levels, threads, rounds, non_crossing):
    train = gbmo.Dataset(X, y)
    stopping = [] if rounds else [gbmo.early_stopping(STOPPING_ROUNDS, verbose=False)]
    booster = gbmo.train({**SETTINGS, "objective": "quantile", "alpha": levels.tolist(),
                          "non_crossing": non_crossing, "num_threads": threads}, train,
                         rounds or MAX_ROUNDS, valid_sets=[train.create_valid(X_stop, y_stop)],
                         callbacks=stopping)
    return booster.predict, str(booster.best_iteration or booster.current_iteration())


def fit_lightgbm(X, y, X_stop, y_stop, levels, threads, rounds):
    models = []
    for level in levels:
        train = lightgbm.Dataset(X, y)
        stopping = [] if rounds else [lightgbm.early_stopping(STOPPING_ROUNDS, verbose=False)]
        models.append(lightgbm.train(
            {**SETTINGS, "objective": "quantile", "alpha": level, "num_threads": threads},
            train, rounds or MAX_ROUNDS, valid_sets=[train.create_valid(X_stop, y_stop)],
            callbacks=stopping))
    return (lambda X_test: np.column_stack([m.predict(X_test) for m in models]),
            "-".join(str(m.best_iteration or m.current_iteration()) for m in models))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--levels", default="0.05,0.1,0.25,0.5,0.75,0.9,0.95")
    parser.add_argument("--rounds", type=int, default=0, help="fixed rounds, no early stopping")
    args = parser.parse_args()
    levels = np.array([float(level) for level in args.levels.split(",")])
    X, y = make_data(args.rows)
    train, stop = int(0.6 * args.rows), int(0.8 * args.rows)
    parts = (X[:train], y[:train], X[train:stop], y[train:stop], levels, args.threads,
             args.rounds)
    runs = {"gbmo": lambda: fit_gbmo(*parts, non_crossing=False),
            "gbmo non_crossing": lambda: fit_gbmo(*parts, non_crossing=True),
            "lightgbm": lambda: fit_lightgbm(*parts)}
    results = {}
    for name, run in runs.items():
        start = time.perf_counter()
        predict, rounds = run()
        seconds = time.perf_counter() - start
        results[name] = (predict(X[stop:]), rounds, seconds)
    print(f"{args.rows} rows, levels {levels.tolist()}, {args.threads} threads")
    print(f"{'library':18} {'rounds':>22} {'mean pinball':>13} {'crossing rows':>14} "
          f"{'time / lightgbm':>16}  pinball per level")
    for name, (prediction, rounds, seconds) in results.items():
        by_level = prediction[:, np.argsort(levels)]
        crossing = np.mean((np.diff(by_level, axis=1) < 0).any(axis=1))
        loss = pinball(y[stop:], prediction, levels)
        print(f"{name:18} {rounds:>22} {loss.mean():13.5f} {crossing:14.3f} "
              f"{seconds / results['lightgbm'][2]:16.2f}  "
              + " ".join(f"{value:.4f}" for value in loss))


if __name__ == "__main__":
    main()
