"""Predictions that change their range of rounds from call to call, against LightGBM.

    python benchmarks/bench_predict_ranges.py [--rounds 2000] [--threads 2]

A server that answers with several num_iteration values, or staged
predictions (round 20, 40, ..., as staged_predict and learning curves ask
for), predict with a different range of rounds each call. Trains one output
on 5,000 rows x 10 features (31 leaves) in both libraries and times:
one-row predictions alternating num_iteration between half and all the
rounds (ms a call), 100 staged predictions of 100 rows at 1/100, 2/100, ...
of the rounds (s in all), and predictions of all 5,000 rows with every
round (ms a call, for reference).
"""
import argparse
import time

import lightgbm
import numpy as np

import gbmo


def timings(predict, X, rounds):
    predict(X[:1], rounds)  # any packing or setup of the model's first call
    start = time.perf_counter()
    for i in range(50):
        predict(X[:1], rounds // 2 if i % 2 else rounds)
    alternating = (time.perf_counter() - start) / 50 * 1e3
    start = time.perf_counter()
    for i in range(1, 101):
        predict(X[:100], max(1, rounds * i // 100))
    staged = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(5):
        predict(X, rounds)
    return alternating, staged, (time.perf_counter() - start) / 5 * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(5000, 10))
    y = X[:, 0] + np.sin(X[:, 1]) + rng.normal(size=5000)
    params = {"verbosity": -1, "num_leaves": 31, "num_threads": args.threads}
    ours = gbmo.train(params, gbmo.Dataset(X, y), args.rounds)
    theirs = lightgbm.train(params, lightgbm.Dataset(X, y), args.rounds)
    results = {
        "gbmo": timings(lambda rows, n: ours.predict(rows, num_iteration=n), X, args.rounds),
        "lightgbm": timings(lambda rows, n: theirs.predict(rows, num_iteration=n), X,
                            args.rounds)}
    print(f"{args.rounds} rounds of 31 leaves, one output, {args.threads} threads")
    print(f"{'':10} {'alternating ms':>15} {'staged s':>9} {'all rows ms':>12}")
    for name, values in results.items():
        print(f"{name:10} {values[0]:15.3f} {values[1]:9.3f} {values[2]:12.1f}")
    print(f"{'gbmo/lgbm':10} " + " ".join(
        f"{ours_value / theirs_value:{width}.2f}" for ours_value, theirs_value, width in zip(
            results["gbmo"], results["lightgbm"], (15, 9, 12))))


if __name__ == "__main__":
    main()
