"""Quantile and L1 regression against LightGBM: held-out pinball loss after a
number of rounds, and the time of the whole fit as a ratio to LightGBM's.

    python benchmarks/bench_quantile.py [--rows 20000] [--threads 2] [--rounds 50,200,800]
                                        [--repeats 3]

A target on a scale of tens (10 x0 + 5 sin x1, with noise whose spread grows
with |x2|), 75% of the rows to train and 25% to score; both libraries with
their defaults but the threads (gbmo-losses installed for gbmo's quantile
and l1), and squared error (`regression`, scored by its pinball loss at
0.5) as the reference for the time. gbmo's leaves are the quantiles of their rows' residuals, as
LightGBM's are; before, they were the gradients' mean, which moves a leaf
by at most 1 a round.
"""
import argparse
import time

import numpy as np


def make_data(n_rows, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 5))
    noise = (1 + np.abs(X[:, 2])) * rng.normal(size=n_rows) * 3
    return X, 10 * X[:, 0] + 5 * np.sin(X[:, 1]) + noise


def pinball(y, prediction, alpha):
    residual = y - prediction
    return float(np.mean(np.maximum(alpha * residual, (alpha - 1) * residual)))


def best_fit(library, objective, alpha, X, y, rounds, threads, repeats):
    """(model, the best of repeats fits' seconds): the machine is shared."""
    fits = [fit(library, objective, alpha, X, y, rounds, threads) for _ in range(repeats)]
    return fits[0][0], min(seconds for _, seconds in fits)


def fit(library, objective, alpha, X, y, rounds, threads):
    level = {"alpha": alpha} if objective == "quantile" else {}
    start = time.perf_counter()
    if library == "gbmo":
        import gbmo

        model = gbmo.train({"objective": objective, **level, "verbosity": 0,
                            "n_threads": threads}, gbmo.Dataset(X, y), rounds)
    else:
        import lightgbm

        model = lightgbm.train({"objective": objective, **level, "verbose": -1,
                                "num_threads": threads}, lightgbm.Dataset(X, y), rounds)
    return model, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--rounds", default="50,200,800")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = make_data(args.rows)
    cut = 3 * args.rows // 4
    for library in ("gbmo", "lightgbm"):  # first-call costs (imports, thread pools) out
        fit(library, "quantile", 0.5, X[:1000], y[:1000], 1, args.threads)
    print(f"{args.rows} rows x 5 features, {args.threads} threads; held-out pinball loss")
    print(f"{'objective':<14} {'rounds':>6} {'gbmo':>8} {'LightGBM':>9} {'time ratio':>11}")
    # regression (squared error) times the same shape without any leaf renewal
    for objective, alpha in [("quantile", 0.9), ("quantile", 0.5), ("regression_l1", 0.5),
                             ("regression", 0.5)]:
        for rounds in map(int, args.rounds.split(",")):
            scores, seconds = {}, {}
            for library in ("gbmo", "lightgbm"):
                model, seconds[library] = best_fit(library, objective, alpha, X[:cut], y[:cut],
                                                   rounds, args.threads, args.repeats)
                scores[library] = pinball(y[cut:], model.predict(X[cut:]), alpha)
            label = objective if objective != "quantile" else f"quantile {alpha}"
            print(f"{label:<14} {rounds:6d} {scores['gbmo']:8.4f} {scores['lightgbm']:9.4f} "
                  f"{seconds['gbmo'] / seconds['lightgbm']:11.2f}")
    print("\nthree levels (0.1, 0.5, 0.9): one gbmo model with three outputs against three "
          "LightGBM models; mean pinball loss")
    levels = [0.1, 0.5, 0.9]
    for rounds in map(int, args.rounds.split(",")):
        model, gbmo_seconds = best_fit("gbmo", "quantile", levels, X[:cut], y[:cut], rounds,
                                       args.threads, args.repeats)
        gbmo_score = np.mean([pinball(y[cut:], column, level)
                              for column, level in zip(model.predict(X[cut:]).T, levels)])
        lightgbm_seconds, lightgbm_scores = 0.0, []
        for level in levels:
            model, seconds = best_fit("lightgbm", "quantile", level, X[:cut], y[:cut], rounds,
                                      args.threads, args.repeats)
            lightgbm_seconds += seconds
            lightgbm_scores.append(pinball(y[cut:], model.predict(X[cut:]), level))
        print(f"{'quantile x3':<14} {rounds:6d} {gbmo_score:8.4f} {np.mean(lightgbm_scores):9.4f} "
              f"{gbmo_seconds / lightgbm_seconds:11.2f}")


if __name__ == "__main__":
    main()
