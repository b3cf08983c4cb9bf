"""Histograms that skip each feature's most common bin, on MNIST (784 pixel
features, 81% of the values 0): gbmo with the skipping on and off, and
LightGBM, interleaved in one process so the machine's noise hits all alike.

    python benchmarks/bench_skipped_bins.py [--data-dir ../shared/data] [--rounds 30]

Off means grower.SKIP_BIN_SHARE = 2 (no bin holds twice the rows). Settings
are bench_paper.py's for mnist: 31 leaves, 8 bins, learning rate 0.1.
"""
import argparse
import os
import time

import numpy as np

import bench_paper
from gbmo import grower


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.path.join(os.path.dirname(__file__), "..",
                                                           "..", "shared", "data"))
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    X, Y, X_test, Y_test = bench_paper.load_mnist(args.data_dir)
    setting = (10, X, Y, args.rounds, 31, 0.1, 8, 16, args.threads, 0)
    runs = {("multi_output", grower.SKIP_BIN_SHARE): "MO, skipping",
            ("multi_output", 2.0): "MO, adding every row",
            ("single_output", grower.SKIP_BIN_SHARE): "SO, skipping",
            ("single_output", 2.0): "SO, adding every row"}
    seconds = {name: [] for name in list(runs.values()) + ["LightGBM"]}
    accuracy = {}
    for _ in range(args.repeats):
        for (mode, share), name in runs.items():
            grower.SKIP_BIN_SHARE = share
            start = time.perf_counter()
            predict = bench_paper.fit_gbmo({"tree_mode": mode}, "class", *setting)
            seconds[name].append((time.perf_counter() - start) / args.rounds)
            accuracy[name] = np.mean(predict(X_test).argmax(axis=1) == Y_test)
        start = time.perf_counter()
        predict = bench_paper.fit_lightgbm("class", *setting)
        seconds["LightGBM"].append((time.perf_counter() - start) / args.rounds)
        accuracy["LightGBM"] = np.mean(predict(X_test).argmax(axis=1) == Y_test)
    lightgbm = min(seconds["LightGBM"])
    print(f"| model | s/round, best of {args.repeats} | / LightGBM | test accuracy |")
    print("|---|---|---|---|")
    for name, values in seconds.items():
        print(f"| {name} | {min(values):.4f} | {min(values) / lightgbm:.2f} | "
              f"{accuracy[name]:.4f} |")


if __name__ == "__main__":
    main()
