"""The time of one prediction call on a few rows (a served request),
against LightGBM, through the Booster and the scikit-learn estimators, on
a numpy array and on a pandas DataFrame of the training's columns.

    python benchmarks/bench_request.py [--rows 1 10 100] [--features 30] [--calls 2000]

Both libraries train 200 rounds of 31-leaf trees on 5,000 x --features
Gaussian rows (one output, y = x0 + sin(x1)), then predict the first --rows
rows again and again, all in this process; prints microseconds a call (best
of 5 runs of --calls calls) and gbmo's over LightGBM's. The estimators are
fitted on the DataFrame ("estimator*": on the array, and asked with arrays).
A call on a few rows costs mostly its input's checks and conversions, not
the trees.
"""
import argparse
import time
import warnings

import numpy as np
import pandas as pd


def microseconds_a_call(call, calls, repeats=5):
    call()
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 10, 100])
    parser.add_argument("--features", type=int, default=30)
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()

    import lightgbm

    import gbmo

    rng = np.random.default_rng(0)
    X = rng.standard_normal((5000, args.features))
    y = X[:, 0] + np.sin(X[:, 1])
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(args.features)])
    models = {
        "Booster": (gbmo.train({"verbosity": -1, "max_leaves": 31}, gbmo.Dataset(frame, y), 200),
                    lightgbm.train({"verbose": -1, "num_leaves": 31},
                                   lightgbm.Dataset(frame, y), 200)),
        "estimator": (gbmo.GBMORegressor(n_estimators=200, verbosity=-1).fit(frame, y),
                      lightgbm.LGBMRegressor(n_estimators=200, verbose=-1).fit(frame, y)),
        # fitted on an array, asked with arrays only
        "estimator*": (gbmo.GBMORegressor(n_estimators=200, verbosity=-1).fit(X, y),
                       lightgbm.LGBMRegressor(n_estimators=200, verbose=-1).fit(X, y)),
    }
    print(f"{args.features} features, 200 trees of 31 leaves; us a call, best of 5 x {args.calls}")
    print(f"{'model':10s} {'input':10s} {'rows':>5s} {'gbmo':>9s} {'LightGBM':>9s} {'gbmo/LGBM':>9s}")
    for kind, (ours, theirs) in models.items():
        for n_rows in args.rows:
            inputs = [("array", X[:n_rows].copy()), ("DataFrame", frame.iloc[:n_rows].copy())]
            for input_name, rows in inputs[:1] if kind == "estimator*" else inputs:
                with warnings.catch_warnings():
                    # an estimator fitted on a frame warns of an array's missing names
                    warnings.simplefilter("ignore", UserWarning)
                    ours_us = microseconds_a_call(lambda: ours.predict(rows), args.calls)
                    theirs_us = microseconds_a_call(lambda: theirs.predict(rows), args.calls)
                print(f"{kind:10s} {input_name:10s} {n_rows:5d} {ours_us:9.1f} {theirs_us:9.1f} "
                      f"{ours_us / theirs_us:9.2f}")


if __name__ == "__main__":
    main()
