"""Training beside busy processes: gbmo's thread governor against a fixed
thread count, and LightGBM, on cores that other processes hold.

    python benchmarks/bench_contention.py [--busy 0 2] [--repeats 5] [--fixed]

For each --busy count, that many processes spin (`while True: pass`) for the
whole measurement, then each repeat trains in turn, in this process: gbmo
on 2 threads (its governor may drop threads for a round, thread_governor.py),
gbmo on 1 thread, LightGBM on 2 threads and on 1, and with --fixed gbmo on 2
threads with adaptive_threads=False (the behaviour before the governor). Prints the median and the worst seconds over the repeats, and the
median's ratio to LightGBM's on 2 threads. A busy machine is noisy: the
medians move by tens of percent from run to run; the worst runs are the
point.
"""
import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_grower import make_data, time_lightgbm  # noqa: E402

SHAPES = [  # rows, features, outputs, rounds
    (100_000, 7, 1, 100),
    (20_000, 20, 5, 50),
]


def time_gbmo(X, Y, rounds, threads, adaptive=True):
    import gbmo

    params = {"verbosity": 0, "n_threads": threads, "max_leaves": 31, "max_bins": 255,
              "min_samples_leaf": 20, "learning_rate": 0.1, "adaptive_threads": adaptive}
    start = time.perf_counter()
    gbmo.train(params, gbmo.Dataset(X, Y), rounds)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--busy", type=int, nargs="+", default=[0, 2])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--fixed", action="store_true",
                        help="also gbmo on 2 fixed threads (slow when busy: seconds a round)")
    args = parser.parse_args()
    runs = {"gbmo 2 threads": lambda X, Y, r: time_gbmo(X, Y, r, 2),
            "gbmo 1 thread": lambda X, Y, r: time_gbmo(X, Y, r, 1),
            "lightgbm 2 threads": lambda X, Y, r: time_lightgbm(X, Y, r, 2, "bestfirst"),
            "lightgbm 1 thread": lambda X, Y, r: time_lightgbm(X, Y, r, 1, "bestfirst")}
    if args.fixed:
        runs["gbmo 2 fixed threads"] = lambda X, Y, r: time_gbmo(X, Y, r, 2, adaptive=False)
    for busy in args.busy:
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in range(busy)]
        try:
            time.sleep(0.5)
            for n_rows, n_features, n_outputs, rounds in SHAPES:
                X, Y = make_data(n_rows, n_features, n_outputs)
                seconds = {name: [] for name in runs}
                for _ in range(args.repeats):
                    for name, run in runs.items():
                        seconds[name].append(run(X, Y, rounds))
                reference = np.median(seconds["lightgbm 2 threads"])
                print(f"\n{busy} busy processes; {n_rows:,} x {n_features}, d = {n_outputs}, "
                      f"{rounds} rounds, {args.repeats} repeats")
                print(f"  {'':22s} {'median s':>9s} {'worst s':>9s} {'median / LightGBM 2':>20s}")
                for name, values in seconds.items():
                    print(f"  {name:22s} {np.median(values):9.3f} {np.max(values):9.3f} "
                          f"{np.median(values) / reference:20.2f}", flush=True)
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()


if __name__ == "__main__":
    main()
