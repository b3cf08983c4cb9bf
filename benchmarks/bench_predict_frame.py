"""Predicting a large pandas DataFrame with category columns: gbmo against
LightGBM, seconds and the peak of Python's traced allocations during the
call (tracemalloc: numpy's arrays, not LightGBM's C++ buffers), interleaved
in one process.

    python benchmarks/bench_predict_frame.py [--rows 200000] [--repeats 3]

The frame: 180 float32 columns and 20 category columns of 1,000 categories;
both models are 20 rounds on its first 20,000 rows, one output.
"""
import argparse
import time
import tracemalloc

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import gbmo
    import lightgbm
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.standard_normal((args.rows, 180)).astype(np.float32),
                         columns=[f"x{i}" for i in range(180)])
    for j in range(20):
        frame[f"c{j}"] = pd.Categorical(rng.integers(0, 1000, args.rows))
    y = frame["x0"].to_numpy() + frame["c0"].cat.codes.to_numpy() / 1000
    train = slice(0, 20_000)
    models = {
        "gbmo": gbmo.train({"verbosity": -1}, gbmo.Dataset(frame[train], y[train]), 20),
        "lightgbm": lightgbm.train({"verbosity": -1}, lightgbm.Dataset(frame[train], y[train]),
                                   20),
    }
    seconds = {name: np.inf for name in models}
    peak = {}
    for _ in range(args.repeats):
        for name, model in models.items():
            tracemalloc.start()
            start = time.perf_counter()
            model.predict(frame)
            seconds[name] = min(seconds[name], time.perf_counter() - start)
            peak[name] = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
    size = frame.memory_usage().sum() / 2**20
    print(f"{args.rows:,} rows x 200 columns ({size:.0f} MiB), best of {args.repeats}:")
    print("| library | predict s | traced peak MiB | s / LightGBM's |")
    print("|---|---|---|---|")
    for name in models:
        print(f"| {name} | {seconds[name]:.3f} | {peak[name]:.0f} | "
              f"{seconds[name] / seconds['lightgbm']:.2f} |")


if __name__ == "__main__":
    main()
