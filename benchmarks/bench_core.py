"""gbmo against LightGBM and XGBoost multi_output_tree on the core issue's two problems.

    python benchmarks/bench_core.py [--rounds 50] [--rows 200000] [--threads 2]

(a) regression: rows x 100 features, 10 outputs, y = tanh(X[:, :20] W) + noise;
    LightGBM trains one model per output, XGBoost one multi_output_tree model.
(b) classification: rows x 50 features, 10 classes; LightGBM's multiclass
    objective, XGBoost multi_output_tree with multi:softprob.
Every library gets the same rounds, 63 leaves, 63 bins, lambda 1, learning
rate 0.1, min 20 rows per leaf and the same threads. Each fit runs in its own
subprocess (so peak memory is its own): wall time of the whole fit (binning
included, as a user pays it), the peak resident memory added by the fit, and
the test metric; then the time to predict the test rows. Ratios are gbmo /
peer, from the same run.
"""
import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np

LEAVES, BINS, LAMBDA, LEARNING_RATE, MIN_LEAF = 63, 63, 1.0, 0.1, 20
N_TEST = 50_000


def make_data(case, n_rows, seed=0):
    rng = np.random.default_rng(seed)
    n = n_rows + N_TEST
    if case == "regression":
        X = rng.normal(size=(n, 100))
        W = rng.normal(size=(20, 10)) / np.sqrt(20)
        Y = np.tanh(X[:, :20] @ W) + 0.1 * rng.normal(size=(n, 10))
    else:
        X = rng.normal(size=(n, 50))
        W = rng.normal(size=(50, 10))
        logits = np.tanh(X[:, :25]) @ W[:25] + 0.5 * X[:, 25:] ** 2 @ W[25:]
        Y = np.argmax(logits + rng.gumbel(size=logits.shape), axis=1)
    return X[:n_rows], Y[:n_rows], X[n_rows:], Y[n_rows:]


def fit_gbmo(case, X, Y, rounds, threads, extra=None):
    """extra: more gbmo parameters (bench_variants')."""
    import gbmo

    params = {"objective": "mse" if case == "regression" else "softmax",
              "max_leaves": LEAVES, "max_bins": BINS, "lambda_l2": LAMBDA,
              "learning_rate": LEARNING_RATE, "min_samples_leaf": MIN_LEAF,
              "n_threads": threads, "verbosity": 0, **(extra or {})}
    booster = gbmo.train(params, gbmo.Dataset(X, Y), rounds)
    return booster.predict


def fit_lightgbm(case, X, Y, rounds, threads, extra=None):
    """extra: more LightGBM parameters (bench_variants')."""
    import lightgbm

    common = dict(n_estimators=rounds, num_leaves=LEAVES, max_bin=BINS, reg_lambda=LAMBDA,
                  learning_rate=LEARNING_RATE, min_child_samples=MIN_LEAF, n_jobs=threads,
                  verbose=-1, **(extra or {}))
    if case == "regression":
        models = [lightgbm.LGBMRegressor(**common).fit(X, Y[:, j]) for j in range(Y.shape[1])]
        return lambda X_test: np.column_stack([m.predict(X_test) for m in models])
    model = lightgbm.LGBMClassifier(**common).fit(X, Y)
    return model.predict_proba


def fit_xgboost(case, X, Y, rounds, threads):
    import xgboost

    common = dict(n_estimators=rounds, tree_method="hist", multi_strategy="multi_output_tree",
                  grow_policy="lossguide", max_leaves=LEAVES, max_depth=0, max_bin=BINS,
                  reg_lambda=LAMBDA, learning_rate=LEARNING_RATE, n_jobs=threads)
    if case == "regression":
        return xgboost.XGBRegressor(**common).fit(X, Y).predict
    return xgboost.XGBClassifier(objective="multi:softprob", **common).fit(X, Y).predict_proba


FITTERS = {"gbmo": fit_gbmo, "lightgbm": fit_lightgbm, "xgboost": fit_xgboost}


def _resident_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def run_cases(script, cases, libraries, options):
    """Yields (case, {library: result}) for the comma-separated cases and
    libraries, each result the last line of JSON a `script --worker library
    case *options` subprocess prints: each fit in its own process, so that
    its peak memory and its threads are its own."""
    for case in cases.split(","):
        results = {}
        for library in libraries.split(","):
            out = subprocess.run([sys.executable, script, "--worker", library, case, *options],
                                 capture_output=True, text=True, check=True)
            results[library] = json.loads(out.stdout.strip().splitlines()[-1])
        yield case, results


def worker(library, case, n_rows, rounds, threads):
    X, Y, X_test, Y_test = make_data(case, n_rows)
    before = _resident_kib()
    start = time.perf_counter()
    predict = FITTERS[library](case, X, Y, rounds, threads)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    predict(X_test[:1000])  # a first call may pack or load the trees
    start = time.perf_counter()
    P = predict(X_test)
    predict_seconds = time.perf_counter() - start
    if case == "regression":
        metric = float(np.sqrt(np.mean((P - Y_test) ** 2)))
    else:
        metric = float(np.mean(np.argmax(P, axis=1) == Y_test))
    print(json.dumps({"seconds": seconds, "peak_mib": (peak - before) / 1024, "metric": metric,
                      "predict_seconds": predict_seconds}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cases", default="regression,classification")
    parser.add_argument("--libraries", default="gbmo,lightgbm,xgboost")
    parser.add_argument("--worker", nargs=2, metavar=("LIBRARY", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker, args.rows, args.rounds, args.threads)
        return
    print(f"rows {args.rows} (+{N_TEST} test), rounds {args.rounds}, threads {args.threads}, "
          f"leaves {LEAVES}, bins {BINS}, lambda {LAMBDA}")
    options = ["--rows", str(args.rows), "--rounds", str(args.rounds), "--threads", str(args.threads)]
    for case, results in run_cases(__file__, args.cases, args.libraries, options):
        metric = "test RMSE" if case == "regression" else "test accuracy"
        print(f"\n({case})  {'library':<9} {'s/round':>8} {'peak MiB':>9} {metric:>14}"
              f" {'time ratio':>11} {'memory ratio':>13} {'metric ratio':>13}"
              f" {'predict s':>10} {'predict ratio':>14}")
        ours = results.get("gbmo")
        for library, r in results.items():
            ratios = ("", "", "", "") if ours is None else (
                f"{ours['seconds'] / r['seconds']:.3f}", f"{ours['peak_mib'] / max(r['peak_mib'], 1e-9):.3f}",
                f"{ours['metric'] / r['metric']:.4f}",
                f"{ours['predict_seconds'] / r['predict_seconds']:.3f}")
            print(f"{'':13}{library:<9} {r['seconds'] / args.rounds:8.4f} {r['peak_mib']:9.1f}"
                  f" {r['metric']:14.5f} {ratios[0]:>11} {ratios[1]:>13} {ratios[2]:>13}"
                  f" {r['predict_seconds']:10.3f} {ratios[3]:>14}")
        print("(ratios are gbmo / that library: time and memory below 1 mean gbmo is cheaper)")


if __name__ == "__main__":
    main()
