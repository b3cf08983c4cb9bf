"""Monotone constraints against LightGBM's, on noisy outputs that truly are monotone.

    python benchmarks/bench_monotone.py [--rows 5000] [--outputs 4] [--threads 2]

Each output is a monotone function of x0 (increasing for even outputs,
decreasing for odd ones) plus a shared non-monotone effect of x1 and x2, with
heavy noise. gbmo (one vector-leaf tree a round, constraints per feature and
output) and LightGBM (one model per output, its constraint for that output)
train with and without the constraints until the validation RMSE stops
improving (20 rounds of patience); the table gives the test RMSE against the
noiseless truth, the rounds, the share of test rows whose prediction moves
against a constraint along x0, and the fit time as a ratio to unconstrained
gbmo in the same run.
"""
import argparse
import time

import numpy as np

import gbmo


def make_data(n_rows, n_outputs, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n_rows, 6))
    shared = np.sin(2 * X[:, 1]) * X[:, 2]
    truth = np.column_stack([
        (1 if j % 2 == 0 else -1) * (np.tanh((j + 1) * X[:, 0]) + 0.3 * X[:, 0]) + shared
        for j in range(n_outputs)])
    return X, truth, truth + rng.normal(scale=1.0, size=truth.shape)


def directions(n_outputs):
    return np.array([1 if j % 2 == 0 else -1 for j in range(n_outputs)])


def against_constraint(predict, X, n_outputs):
    """Share of rows whose prediction, swept along x0, moves against its
    output's direction somewhere."""
    grid = np.linspace(-2, 2, 33)
    bad = 0
    for row in X[:200]:
        sweep = np.repeat(row[None], len(grid), axis=0)
        sweep[:, 0] = grid
        steps = np.diff(predict(sweep), axis=0) * directions(n_outputs)
        bad += np.any(steps < -1e-12)
    return bad / 200


def fit_gbmo(X, Y, X_valid, Y_valid, constrained, args):
    params = {"max_leaves": 15, "learning_rate": 0.05, "n_threads": args.threads,
              "verbosity": 0}
    if constrained:
        params["monotone_constraints"] = [list(directions(args.outputs))] + [[0] * args.outputs] * 5
    train_set = gbmo.Dataset(X, Y)
    booster = gbmo.train(params, train_set, 2000,
                         valid_sets=[train_set.create_valid(X_valid, Y_valid)],
                         callbacks=[gbmo.early_stopping(20, verbose=False)])
    return booster.predict, booster.best_iteration


def fit_lightgbm(X, Y, X_valid, Y_valid, constrained, args):
    import lightgbm

    models = []
    for j in range(args.outputs):
        params = {"num_leaves": 15, "learning_rate": 0.05, "num_threads": args.threads,
                  "verbose": -1}
        if constrained:
            params["monotone_constraints"] = [int(directions(args.outputs)[j])] + [0] * 5
        train_set = lightgbm.Dataset(X, Y[:, j])
        models.append(lightgbm.train(params, train_set, 2000, valid_sets=[
            lightgbm.Dataset(X_valid, Y_valid[:, j], reference=train_set)],
            callbacks=[lightgbm.early_stopping(20, verbose=False)]))
    return (lambda X_test: np.column_stack([m.predict(X_test) for m in models]),
            sum(m.best_iteration for m in models))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=5_000)
    parser.add_argument("--outputs", type=int, default=4)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    X, _, Y = make_data(args.rows, args.outputs, 0)
    X_valid, _, Y_valid = make_data(args.rows // 4, args.outputs, 1)
    X_test, truth, _ = make_data(20_000, args.outputs, 2)
    print(f"{args.rows} training rows, {args.outputs} outputs, noise sd 1, {args.threads} threads")
    print(f"{'library':<10} {'constraints':<12} {'RMSE vs truth':>14} {'rounds (trees)':>15} "
          f"{'against':>8} {'time / gbmo free':>17}")
    base = None
    for name, fit in (("gbmo", fit_gbmo), ("lightgbm", fit_lightgbm)):
        for constrained in (False, True):
            start = time.perf_counter()
            predict, rounds = fit(X, Y, X_valid, Y_valid, constrained, args)
            seconds = time.perf_counter() - start
            base = base or seconds
            rmse = np.sqrt(np.mean((predict(X_test) - truth) ** 2))
            print(f"{name:<10} {'yes' if constrained else 'no':<12} {rmse:14.4f} {rounds:15d} "
                  f"{against_constraint(predict, X_test, args.outputs):8.2f} "
                  f"{seconds / base:17.2f}")


if __name__ == "__main__":
    main()
