"""gbmo's two split scores, NewtonL2 (the default) and CatBoost's L2, on
classification data sets, each trained to its best validation round.

    python benchmarks/bench_score_function.py [--data-dir ../shared/data] [--seeds 3]

- synthetic: bench_core's 10 classes (20,000 train, 10,000 validation,
  20,000 test rows; 63 leaves, 63 bins), a new draw per seed;
- mnist (with --data-dir): 5,000 training images, the official test set
  split into 3,000 validation and 7,000 test images per seed; 31 leaves, 16 bins;
- digits (scikit-learn's 8x8 digits): 1,000 / 350 / 447 rows per seed; 15 leaves;
- breast_cancer (scikit-learn's, binary): 300 / 120 / 149 rows per seed; 15 leaves.

Learning rate 0.1, lambda_l2 1, 1 thread, early stopping after 30 rounds
without a better validation logloss. Prints test accuracy, test logloss and
the rounds used, averaged over seeds, and the per-seed accuracies.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

import gbmo

sys.path.insert(0, str(Path(__file__).parent))
from bench_core import make_data  # noqa: E402
from bench_paper import load_mnist  # noqa: E402


def split_rows(X, y, rng, n_train, n_valid):
    order = rng.permutation(len(X))
    parts = order[:n_train], order[n_train:n_train + n_valid], order[n_train + n_valid:]
    return [array for part in parts for array in (X[part], y[part])]


def data_set(name, seed, data_dir):
    """(X_train, y_train, X_valid, y_valid, X_test, y_test, objective, leaves, bins);
    synthetic_regression (bench_core's 10 outputs) for bench_random_strength."""
    rng = np.random.default_rng(seed)
    if name in ("synthetic", "synthetic_regression"):
        case = "classification" if name == "synthetic" else "regression"
        X, y, X_test, y_test = make_data(case, 30_000, seed)
        return (X[:20_000], y[:20_000], X[20_000:], y[20_000:], X_test[:20_000],
                y_test[:20_000], "softmax" if name == "synthetic" else "mse", 63, 63)
    if name == "mnist":
        X, y, X_test, y_test = load_mnist(data_dir)
        order = rng.permutation(len(X_test))
        valid, test = order[:3_000], order[3_000:]
        return (X, y, X_test[valid], y_test[valid], X_test[test], y_test[test], "softmax", 31,
                16)
    from sklearn.datasets import load_breast_cancer, load_digits

    if name == "digits":
        return (*split_rows(*load_digits(return_X_y=True), rng, 1_000, 350), "softmax", 15, 16)
    return (*split_rows(*load_breast_cancer(return_X_y=True), rng, 300, 120), "sigmoid", 15,
            63)


def scores(objective, P, y):
    """(accuracy, mean logloss) of predicted probabilities P; (RMSE, NaN) of
    mse's predictions."""
    if objective == "mse":
        return np.sqrt(np.mean((P - y) ** 2)), np.nan
    if objective == "softmax":
        chosen = P[np.arange(len(y)), y]
        return np.mean(np.argmax(P, axis=1) == y), -np.mean(np.log(np.clip(chosen, 1e-15, 1)))
    P = np.clip(P.ravel(), 1e-15, 1 - 1e-15)
    return (np.mean((P > 0.5) == (y > 0.5)),
            -np.mean(y * np.log(P) + (1 - y) * np.log(1 - P)))


def run(name, options, seeds, data_dir):
    """(test accuracy or RMSE, test logloss, rounds) per seed, with the
    parameters options on top of the script's."""
    results = []
    for seed in range(seeds):
        X, y, X_valid, y_valid, X_test, y_test, objective, leaves, bins = data_set(
            name, seed, data_dir)
        params = {"objective": objective, "max_leaves": leaves, "max_bins": bins,
                  "lambda_l2": 1.0, "learning_rate": 0.1,
                  "min_samples_leaf": 20 if len(X) > 2_000 else 5, "n_threads": 1,
                  "verbosity": 0, "seed": seed, **options}
        train_set = gbmo.Dataset(X, y)
        booster = gbmo.train(params, train_set, 3_000,
                             valid_sets=[train_set.create_valid(X_valid, y_valid)],
                             callbacks=[gbmo.early_stopping(30, verbose=False)])
        results.append((*scores(objective, booster.predict(X_test), y_test),
                        booster.best_iteration))
    return np.array(results)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None, help="../shared/data, for mnist")
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    names = ["synthetic", *(["mnist"] if args.data_dir else []), "digits", "breast_cancer"]
    print(f"{'data':<14} {'score':<9} {'accuracy':>9} {'logloss':>8} {'rounds':>7}  "
          "accuracy per seed")
    for name in names:
        for score_function in ("NewtonL2", "L2"):
            r = run(name, {"score_function": score_function}, args.seeds, args.data_dir)
            print(f"{name:<14} {score_function:<9} {r[:, 0].mean():9.4f} {r[:, 1].mean():8.4f} "
                  f"{r[:, 2].mean():7.0f}  {np.round(r[:, 0], 4).tolist()}", flush=True)


if __name__ == "__main__":
    main()
