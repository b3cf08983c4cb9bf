"""A search over seeds on one Dataset: gbmo and LightGBM each train --seeds
models that differ only in their seed (bagged rows and columns), on a
Dataset built and used once beforehand, as a seed-averaged ensemble or a
search over seeds does; with --cv K, each of the --seeds is a K-fold cv
call instead (gbmo.cv, lightgbm.cv), as a hyperparameter search by
cross-validation makes. Both interleaved in one process, so the machine's
noise hits both alike.

    python benchmarks/bench_seed_search.py [--rows 100000] [--features 300]
        [--density 0.03] [--seeds 5] [--rounds 5] [--cv 0] [--categories 0] [--threads 1]
        [--repeats 3]

X: --density of the values normal, the rest 0; y: the sum of the first five
columns plus noise; with --categories K, the last column is a categorical
feature of K categories, which adds sin(category) to y. subsample 0.8
(every round), colsample_bytree 0.8,
31 leaves, 255 bins. Prints the seconds of the --seeds trainings, best of
--repeats each.
"""
import argparse
import time

import numpy as np


def make_data(n_rows, n_features, density, categories=0, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n_rows, n_features)) < density) * rng.standard_normal((n_rows, n_features))
    y = X[:, :5].sum(axis=1) + 0.1 * rng.standard_normal(n_rows)
    if categories:  # the last column a category of its own effect
        X[:, -1] = rng.integers(0, categories, n_rows)
        y += np.sin(X[:, -1])
    return X, y


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=300)
    parser.add_argument("--density", type=float, default=0.03)
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cv", type=int, default=0, help="folds of a cv call a seed (0: train)")
    parser.add_argument("--categories", type=int, default=0,
                        help="the last feature a categorical one of so many categories")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import gbmo
    import lightgbm

    X, y = make_data(args.rows, args.features, args.density, args.categories)
    common = {"subsample": 0.8, "colsample_bytree": 0.8, "verbosity": -1,
              "n_threads": args.threads}
    categorical = [args.features - 1] if args.categories else "auto"
    gbmo_data = gbmo.Dataset(X, y, categorical_feature=categorical)
    lightgbm_data = lightgbm.Dataset(X, y, categorical_feature=categorical, free_raw_data=False)
    gbmo.train({**common, "seed": 0}, gbmo_data, 1)
    lightgbm.train({**common, "bagging_freq": 1, "seed": 0}, lightgbm_data, 1)
    if args.cv:
        fits = {
            "gbmo": lambda seed: gbmo.cv({**common, "seed": seed}, gbmo_data, args.rounds,
                                         nfold=args.cv, seed=seed),
            "lightgbm": lambda seed: lightgbm.cv(
                {**common, "bagging_freq": 1, "seed": seed}, lightgbm_data, args.rounds,
                nfold=args.cv, stratified=False, seed=seed),
        }
    else:
        fits = {
            "gbmo": lambda seed: gbmo.train({**common, "seed": seed}, gbmo_data, args.rounds),
            "lightgbm": lambda seed: lightgbm.train({**common, "bagging_freq": 1, "seed": seed},
                                                    lightgbm_data, args.rounds),
        }
    seconds = {name: [] for name in fits}
    for _ in range(args.repeats):
        for name, fit in fits.items():
            start = time.perf_counter()
            for seed in range(1, args.seeds + 1):
                fit(seed)
            seconds[name].append(time.perf_counter() - start)
    best = {name: min(values) for name, values in seconds.items()}
    print(f"{args.seeds} seeds x {f'{args.cv}-fold cv x ' if args.cv else ''}{args.rounds} "
          f"rounds, {args.rows:,} x {args.features} "
          f"{f'(the last of {args.categories} categories) ' if args.categories else ''}"
          f"({args.density:.0%} nonzero), {args.threads} thread(s), best of {args.repeats}:")
    for name, value in best.items():
        print(f"  {name:9s} {value:7.3f} s   {value / best['lightgbm']:.2f}x LightGBM")


if __name__ == "__main__":
    main()
