"""Saving and loading a model of many small trees, against LightGBM.

    python benchmarks/bench_load.py [--trees 5000] [--leaves 4] [--outputs 5] [--repeats 7]

Trains, in one process, a one-output gbmo model, a multi-output gbmo model
(--outputs, one tree a round whose leaves hold the vector) and a LightGBM
model, each of --trees trees of --leaves leaves on 3,000 rows x 10 features,
then times for each (median of --repeats): save_model to a file, loading the
file (Booster(model_file=...)), the first one-row prediction after loading
(gbmo packs its trees then), a pickle's round trip (pickle.loads of
pickle.dumps, as joblib and multiprocessing copy a model; LightGBM's
pickles its model's text), and for gbmo the JSON parse of the file's text
alone (json.loads, the floor of loading a JSON model). The ratios are
gbmo / LightGBM for the same number of trees and leaves; the multi-output
model's trees hold --outputs values a leaf where LightGBM's hold one.
"""
import argparse
import json
import os
import pickle
import statistics
import tempfile
import time

import lightgbm
import numpy as np

import gbmo


def median_seconds(run, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def first_prediction(load, row):
    """Seconds of the first prediction of one row by a freshly loaded model."""
    model = load()
    start = time.perf_counter()
    model.predict(row)
    return time.perf_counter() - start


def timings(model, load, path, row, repeats):
    result = {"save": median_seconds(lambda: model.save_model(path), repeats),
              "load": median_seconds(load, repeats),
              "pickle": median_seconds(lambda: pickle.loads(pickle.dumps(model)), repeats),
              "first predict": statistics.median(first_prediction(load, row)
                                                 for _ in range(repeats))}
    result["MB"] = os.path.getsize(path) / 1e6
    result["trees"] = load().num_trees()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", type=int, default=5000)
    parser.add_argument("--leaves", type=int, default=4)
    parser.add_argument("--outputs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 10))
    Y = X[:, :args.outputs] + np.sin(X[:, 1:args.outputs + 1]) \
        + rng.normal(size=(3000, args.outputs))
    params = {"verbosity": -1, "num_leaves": args.leaves, "num_threads": 2}
    models = {
        "gbmo, 1 output": gbmo.train(params, gbmo.Dataset(X, Y[:, 0]), args.trees),
        f"gbmo, {args.outputs} outputs": gbmo.train(params, gbmo.Dataset(X, Y), args.trees),
        "lightgbm": lightgbm.train(params, lightgbm.Dataset(X, Y[:, 0]), args.trees),
    }
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, model in models.items():
            path = os.path.join(folder, name.replace(" ", "").replace(",", "_"))
            model.save_model(path)
            if name == "lightgbm":
                load = lambda path=path: lightgbm.Booster(model_file=path)  # noqa: E731
            else:
                load = lambda path=path: gbmo.Booster(model_file=path)  # noqa: E731
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                results[name] = {"json parse": median_seconds(lambda: json.loads(text),
                                                              args.repeats)}
            results.setdefault(name, {}).update(timings(model, load, path, X[:1], args.repeats))
    print(f"{args.trees} trees of {args.leaves} leaves, 3,000 x 10, median of {args.repeats}; "
          f"load average {os.getloadavg()[0]:.1f}")
    columns = ("save", "load", "pickle", "json parse", "first predict", "MB", "trees")
    print(f"{'':16}" + "".join(f"{c:>15}" for c in columns))
    for name, values in results.items():
        print(f"{name:16}" + "".join(f"{values[c]:15.4g}" if c in values else f"{'':15}"
                                     for c in columns))
    for name, values in results.items():
        if name != "lightgbm":
            print(f"{name + ' / lgbm':16}" + "".join(
                f"{values[c] / results['lightgbm'][c]:15.2f}" if c in results["lightgbm"]
                else f"{'':15}" for c in columns))


if __name__ == "__main__":
    main()
