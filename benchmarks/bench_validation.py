"""What a validation set costs a round, in gbmo and in LightGBM.

    python benchmarks/bench_validation.py [--rounds 50] [--threads 2] [--repeats 3]

Early stopping evaluates a validation set every round: the new tree walks its
rows, the loss turns raw scores into predictions (probabilities), and the
metric scores them. Each shape trains, in this process and in
turn, gbmo and LightGBM (one model per output when there are several, as its
users do) on n rows, without and with a validation set of another n rows
(binned once beforehand in both libraries, so only the rounds are timed), 31
leaves, the objective's default metric (rmse / l2; multi-class: logloss, one
LightGBM model with num_class). Prints ms per round and the validation set's
share of a round, best of --repeats.
"""
import argparse
import time

import numpy as np

SHAPES = [  # training rows (the validation set has as many), features, outputs, task
    (20_000, 20, 1, "regression"),
    (200_000, 20, 1, "regression"),
    (200_000, 20, 10, "regression"),
    (200_000, 20, 10, "multiclass"),
]


def make_data(n_rows, n_features, n_outputs, task, seed=0):
    """Y (n, outputs) for regression; class indices (n, 1) for multiclass."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, n_features))
    W = rng.standard_normal((n_features, n_outputs))
    if task == "multiclass":
        return X, (X @ W + rng.gumbel(size=(n_rows, n_outputs))).argmax(axis=1)[:, None]
    return X, np.tanh(X @ W / 3) + 0.1 * rng.standard_normal((n_rows, n_outputs))


def gbmo_rounds(X, Y, X_valid, Y_valid, rounds, threads, n_classes):
    import gbmo

    params = {"verbosity": 0, "n_threads": threads, "max_leaves": 31, "min_samples_leaf": 20}
    if n_classes:
        params.update(objective="softmax", num_class=n_classes)
    train_set = gbmo.Dataset(X, Y[:, 0] if Y.shape[1] == 1 else Y)
    valid_set = train_set.create_valid(X_valid, Y_valid[:, 0] if Y.shape[1] == 1 else Y_valid)
    gbmo.train(params, train_set, 1, valid_sets=[valid_set])  # bins both

    def run(validate):
        start = time.perf_counter()
        gbmo.train(params, train_set, rounds, valid_sets=[valid_set] if validate else None)
        return time.perf_counter() - start
    return run


def lightgbm_rounds(X, Y, X_valid, Y_valid, rounds, threads, n_classes):
    import lightgbm

    params = {"verbosity": -1, "num_threads": threads, "num_leaves": 31, "min_data_in_leaf": 20}
    if n_classes:
        params.update(objective="multiclass", num_class=n_classes)
    pairs = []
    for j in range(Y.shape[1]):
        train_set = lightgbm.Dataset(X, Y[:, j], free_raw_data=False).construct()
        pairs.append((train_set, lightgbm.Dataset(X_valid, Y_valid[:, j],
                                                  reference=train_set).construct()))

    def run(validate):
        start = time.perf_counter()
        for train_set, valid_set in pairs:
            lightgbm.train(params, train_set, rounds, valid_sets=[valid_set] if validate else None)
        return time.perf_counter() - start
    return run


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(f"{args.rounds} rounds, {args.threads} threads, best of {args.repeats}; ms per round")
    print(f"{'rows':>8} {'out':>4} {'task':>10} {'library':>9} {'alone':>8} {'validated':>10} "
          f"{'share':>6}")
    for n_rows, n_features, n_outputs, task in SHAPES:
        X, Y = make_data(2 * n_rows, n_features, n_outputs, task)
        data = (X[:n_rows], Y[:n_rows], X[n_rows:], Y[n_rows:], args.rounds, args.threads,
                n_outputs if task == "multiclass" else None)
        runs = {"gbmo": gbmo_rounds(*data), "LightGBM": lightgbm_rounds(*data)}
        best = {(name, validate): np.inf for name in runs for validate in (False, True)}
        for _ in range(args.repeats):
            for name, run in runs.items():
                for validate in (False, True):
                    best[name, validate] = min(best[name, validate], run(validate))
        for name in runs:
            alone, validated = (best[name, v] / args.rounds * 1e3 for v in (False, True))
            print(f"{n_rows:8d} {n_outputs:4d} {task:>10} {name:>9} {alone:8.2f} {validated:10.2f} "
                  f"{(validated - alone) / validated:6.0%}")


if __name__ == "__main__":
    main()
