"""Feature contributions (SHAP values) against LightGBM's and XGBoost's, same data, same process.

    python benchmarks/bench_contrib.py [--rows 5000] [--outputs 10] [--rounds 50] [--threads 2]

Trains gbmo, LightGBM and XGBoost on one synthetic problem (20,000 rows x 30
features, --outputs regression targets driven by shared features; LightGBM
and XGBoost grow one tree per output a round), then times
predict(pred_contrib=True) / pred_contribs on --rows test rows, best of 3,
and checks that every library's contributions sum to its raw prediction.
Each library's own trees are explained, so the ratio compares the whole cost
of explaining an equally long fit (the same rounds and leaves per tree).
"""
import argparse
import time

import numpy as np

import gbmo


def make_data(n_rows, n_outputs, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_rows, 30))
    mixing = rng.normal(size=(5, n_outputs))
    Y = np.tanh(X[:, :5]) @ mixing + 0.3 * X[:, 5:10] @ rng.normal(size=(5, n_outputs))
    return X, Y + 0.1 * rng.normal(size=Y.shape)


def best_time(function, repeats=3):
    best, result = np.inf, None
    for _ in range(repeats):
        start = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - start)
    return best, result


def gbmo_explainer(X, Y, args):
    booster = gbmo.train({"max_leaves": 31, "n_threads": args.threads, "verbosity": 0},
                         gbmo.Dataset(X, Y), args.rounds)
    return (lambda X_test: booster.predict(X_test, pred_contrib=True),
            lambda X_test: booster.predict(X_test, raw_score=True),
            lambda contributions: contributions.sum(axis=1))


def lightgbm_explainer(X, Y, args):
    import lightgbm

    models = [lightgbm.train({"num_leaves": 31, "num_threads": args.threads, "verbose": -1},
                             lightgbm.Dataset(X, Y[:, j]), args.rounds)
              for j in range(Y.shape[1])]
    return (lambda X_test: np.stack([m.predict(X_test, pred_contrib=True) for m in models], -1),
            lambda X_test: np.column_stack([m.predict(X_test) for m in models]),
            lambda contributions: contributions.sum(axis=1))


def xgboost_explainer(X, Y, args):
    import xgboost

    # one tree per output a round: XGBoost has no SHAP values for its vector-leaf trees
    # gbmo's and LightGBM's learning rate and smallest leaf (20 rows, a row's
    # squared-error hessian being 1), not XGBoost's 0.3 and 1: trees of another shape
    model = xgboost.train({"max_leaves": 31, "grow_policy": "lossguide", "max_depth": 0,
                           "nthread": args.threads, "tree_method": "hist", "eta": 0.1,
                           "min_child_weight": 20},
                          xgboost.DMatrix(X, Y), args.rounds)
    return (lambda X_test: model.predict(xgboost.DMatrix(X_test), pred_contribs=True),
            lambda X_test: model.predict(xgboost.DMatrix(X_test), output_margin=True),
            lambda contributions: contributions.sum(axis=-1))


LIBRARIES = {"gbmo": gbmo_explainer, "lightgbm": lightgbm_explainer,
             "xgboost": xgboost_explainer}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=5_000)
    parser.add_argument("--outputs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    X, Y = make_data(20_000, args.outputs)
    X_test = make_data(args.rows, args.outputs, seed=1)[0]
    print(f"{args.rows} rows explained, {args.outputs} outputs, {args.rounds} rounds of "
          f"31-leaf trees, {args.threads} threads (best of 3)")
    print(f"{'library':<10} {'trees':>6} {'contrib s':>10} {'vs gbmo':>8} {'max |sum - raw|':>16}")
    seconds = {}
    for name, explainer in LIBRARIES.items():
        explain, raw, total = explainer(X, Y, args)
        seconds[name], contributions = best_time(lambda: explain(X_test))
        error = np.abs(total(contributions) - raw(X_test)).max()
        trees = args.rounds * (1 if name == "gbmo" else args.outputs)
        print(f"{name:<10} {trees:6d} {seconds[name]:10.3f} "
              f"{seconds[name] / seconds['gbmo']:8.2f} {error:16.2e}")


if __name__ == "__main__":
    main()
