"""One output on many rows: gbmo against LightGBM at its defaults, in this
process, interleaved, the best of --repeats fits each.

    python benchmarks/bench_large.py [--rows 1000000] [--features 28]
        [--leaves 255 31] [--rounds 30] [--threads 1 2] [--repeats 3]

The common case of a user with one target and a large table (HIGGS has
11 million rows of 28 features). Below the root a node's rows lie far apart
in each column, so reading their bins waits for memory: the case the
prefetching of session 24 serves (benchmarks/README.md, "Prefetching a
node's rows"). X is Gaussian, y = tanh(X w / 5) + noise (bench_single_output's
data with one output); both libraries get the leaves, 255 bins, 20 rows a
leaf, learning rate 0.1 and the threads, LightGBM its own choice of
histogram layout. Binning (gbmo.Dataset, lightgbm.Dataset.construct) is not
timed; gbmo's thread count is fixed (adaptive_threads off), as LightGBM's is.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_single_output import make_data  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=28)
    parser.add_argument("--leaves", type=int, nargs="+", default=[255, 31])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import gbmo
    import lightgbm

    X, Y = make_data(args.rows, args.features, 1)
    y = Y[:, 0]
    print(f"{args.rows} rows x {args.features} features, one output, {args.rounds} rounds, "
          f"best of {args.repeats}")
    print("| leaves | threads | gbmo s | LightGBM s | gbmo / LightGBM |")
    print("|---|---|---|---|---|")
    for leaves in args.leaves:
        for threads in args.threads:
            gbmo_params = {"max_leaves": leaves, "max_bins": 255, "min_samples_leaf": 20,
                           "learning_rate": 0.1, "n_threads": threads,
                           "adaptive_threads": False, "verbosity": 0}
            lightgbm_params = {"num_leaves": leaves, "max_bin": 255, "min_data_in_leaf": 20,
                               "learning_rate": 0.1, "num_threads": threads, "verbose": -1}
            gbmo_data = gbmo.Dataset(X, y)
            gbmo.train(gbmo_params, gbmo_data, 1)  # bins it
            lightgbm_data = lightgbm.Dataset(X, y, params=lightgbm_params).construct()
            seconds = {"gbmo": [], "lightgbm": []}
            for _ in range(args.repeats):
                start = time.perf_counter()
                gbmo.train(gbmo_params, gbmo_data, args.rounds)
                seconds["gbmo"].append(time.perf_counter() - start)
                start = time.perf_counter()
                lightgbm.train(lightgbm_params, lightgbm_data, args.rounds)
                seconds["lightgbm"].append(time.perf_counter() - start)
            ours, theirs = min(seconds["gbmo"]), min(seconds["lightgbm"])
            print(f"| {leaves} | {threads} | {ours:.2f} | {theirs:.2f} | {ours / theirs:.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
