"""A gbmo model exported to ONNX (Booster.to_onnx) and run by onnxruntime,
against gbmo's own predict, in one process.

    python benchmarks/bench_onnx.py [--outputs 1 10] [--rounds 200] [--rows 100000] [--threads 2]
                                    [--categories 0]

For each output count, gbmo trains --rounds rounds of 31-leaf trees on
20,000 x 20 Gaussian rows (Y = tanh(X W / 3) + noise, as bench_predict.py),
exports the model (seconds, file size), then predicts --rows new rows and one
row at a time (a served request, median of 200) with gbmo and with
onnxruntime on --threads threads, best of 5. Prints seconds and onnxruntime's
time over gbmo's, and the largest difference of the predictions (onnxruntime's
output is float32). --categories C > 0 makes the last 2 features categorical
with C categories each, which y depends on (their splits become chains of
equality tests, and several outputs' leaves take markers).
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_predict import best_time  # noqa: E402


def median_call(function, calls=200):
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    import onnxruntime

    import gbmo

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--outputs", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--categories", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{args.rounds} rounds of 31 leaves, {args.rows} rows to predict, "
          f"{args.threads} threads, onnxruntime {onnxruntime.__version__}")
    print(f"{'outputs':>7} {'export s':>9} {'MB':>6} {'gbmo s':>8} {'onnx s':>8} {'onnx/gbmo':>9}"
          f" {'1 row gbmo us':>13} {'1 row onnx us':>13} {'onnx/gbmo':>9} {'max |diff|':>10}")
    categorical = [18, 19] if args.categories else []

    def rows(n):
        X = rng.normal(size=(n, 20))
        if categorical:
            X[:, categorical] = rng.integers(0, args.categories, size=(n, 2))
        return X
    for d in args.outputs:
        X = rows(20_000)
        Y = np.tanh(X @ rng.normal(size=(20, d)) / 3) + 0.1 * rng.normal(size=(20_000, d))
        if categorical:  # each category its own effect
            Y += rng.normal(size=(args.categories, d))[X[:, 18].astype(int)]
        booster = gbmo.train({"max_leaves": 31, "learning_rate": 0.1, "verbosity": -1,
                              "n_threads": args.threads},
                             gbmo.Dataset(X, Y, categorical_feature=categorical), args.rounds)
        start = time.perf_counter()
        model = booster.to_onnx()
        export = time.perf_counter() - start
        text = model.SerializeToString()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = args.threads
        session = onnxruntime.InferenceSession(text, options)
        X_new = rows(args.rows)
        ours = best_time(lambda: booster.predict(X_new, n_threads=args.threads))
        theirs = best_time(lambda: session.run(None, {"X": X_new}))
        row = X_new[:1]
        ours_row = median_call(lambda: booster.predict(row, n_threads=args.threads))
        theirs_row = median_call(lambda: session.run(None, {"X": row}))
        difference = np.max(np.abs(session.run(None, {"X": X_new})[0].reshape(args.rows, -1)
                                   - booster.predict(X_new).reshape(args.rows, -1)))
        print(f"{d:>7} {export:>9.2f} {len(text) / 1e6:>6.1f} {ours:>8.3f} {theirs:>8.3f} "
              f"{theirs / ours:>9.2f} {ours_row * 1e6:>13.0f} {theirs_row * 1e6:>13.0f} "
              f"{theirs_row / ours_row:>9.2f} {difference:>10.2e}")


if __name__ == "__main__":
    main()
