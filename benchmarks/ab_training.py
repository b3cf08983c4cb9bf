"""Whole training runs of this checkout against the same runs at a commit.

    python benchmarks/ab_training.py --base 61919ca [--threads 1] [--repeats 5]
    python benchmarks/ab_training.py --base C --shape 20000 20 5 300 multi_output \
        --params '{"boosting": "dart", "skip_drop": 0.5, "max_leaves": 63}'
    python benchmarks/ab_training.py --base C --dataset student 300 single_output \
        --params '{"max_leaves": 15}'
    python benchmarks/ab_training.py --base C --shape 20000 220 10 30 multi_output \
        --binary 200
    python benchmarks/ab_training.py --base C --shape 100000 1000 1 100 multi_output \
        --binary 1000 --binary-share 0.02

Clones the repository at --base into a temporary directory and builds it in
place, then times gbmo.train on each shape with one build and then the
other, --repeats times, each run in a fresh process (the two builds cannot
share one); each run reports its best of 3 fits. Prints the best and median
milliseconds a round of each build and old / new. Where the per-round
Python matters: small data, one output, and single-output mode's tree per
output. X is Gaussian, Y = tanh(X W / 5) + noise, 31 leaves, 255 bins; the
thread count is fixed (adaptive_threads off) so both builds get the same.
--shape times one shape of your own instead, --dataset one of the data
sets gbmo.datasets ships (its X and target as they load), and --params
(JSON) adds gbmo parameters to every run. --binary N makes the last N
features of the synthetic X 0 or 1 (30% ones, or --binary-share of them),
one-hot-like columns beside continuous ones.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHAPES = [  # rows, features, outputs, rounds, tree_mode
    (20_000, 7, 1, 200, "multi_output"),
    (2_000, 20, 1, 300, "multi_output"),
    (100_000, 7, 1, 100, "multi_output"),
    (5_000, 20, 5, 50, "single_output"),
]


def synthetic(n_rows, n_features, n_outputs, n_binary=0, binary_share=None):
    """Gaussian X and tanh(X W / 5) + noise, one column per output; the last
    n_binary features 0 or 1, 1 for values above 0.5 (30.9%) or, given
    binary_share, for that share of them."""
    import numpy as np
    from scipy.stats import norm

    rng = np.random.default_rng(0)
    X = rng.standard_normal((n_rows, n_features))
    if n_binary:
        above = 0.5 if binary_share is None else norm.isf(binary_share)
        X[:, n_features - n_binary:] = X[:, n_features - n_binary:] > above
    Y = np.tanh(X @ rng.standard_normal((n_features, n_outputs)) / 5)
    Y = Y + 0.1 * rng.standard_normal(Y.shape)
    return X, Y[:, 0] if n_outputs == 1 else Y


def shipped(name):
    """X and target of gbmo.datasets.load_<name>()."""
    from gbmo import datasets

    data = getattr(datasets, f"load_{name}")()
    return data.data, data.target


def time_training(data, rounds, tree_mode, threads, extra):
    """The best of 3 fits' milliseconds a round (the build on sys.path) on
    data: (rows, features, outputs) of synthetic data or a shipped set's name."""
    import numpy as np

    import gbmo

    X, y = shipped(data) if isinstance(data, str) else synthetic(*data)
    dataset = gbmo.Dataset(X, y)
    params = {"verbosity": -1, "n_threads": threads, "max_leaves": 31, "max_bins": 255,
              "tree_mode": tree_mode, "adaptive_threads": False, **extra}
    gbmo.train(params, dataset, 3)  # bins the Dataset
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        gbmo.train(params, dataset, rounds)
        best = min(best, time.perf_counter() - start)
    return best / rounds * 1e3


def run(build, shape, threads, extra):
    output = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(shape), str(threads), extra],
        cwd=build, env={**os.environ, "PYTHONPATH": str(build)},
        capture_output=True, text=True, check=True)
    return float(output.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", help="the commit to compare with (required)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--shape", nargs=5, metavar=("ROWS", "FEATURES", "OUTPUTS", "ROUNDS",
                                                      "TREE_MODE"))
    parser.add_argument("--dataset", nargs=3, metavar=("NAME", "ROUNDS", "TREE_MODE"))
    parser.add_argument("--params", default="{}", help="more gbmo parameters, as JSON")
    parser.add_argument("--binary", type=int, default=0,
                        help="make the last N features of the synthetic X binary")
    parser.add_argument("--binary-share", type=float,
                        help="the share of ones in the --binary features (default 0.309)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        shape, threads, extra = args.child
        *data, rounds, tree_mode = json.loads(shape)
        print(time_training(data[0] if len(data) == 1 else data, rounds, tree_mode,
                            int(threads), json.loads(extra)))
        return
    if not isinstance(json.loads(args.params), dict):  # here rather than in every child
        parser.error("--params must be a JSON object of gbmo parameters")
    if not args.base:
        parser.error("--base is required")
    if args.binary and (args.dataset or args.binary > int((args.shape or [0, 7])[1])):
        parser.error("--binary makes features of the synthetic X binary: at most its "
                     "features, and not with --dataset")
    if args.binary_share is not None and not (args.binary and 0 < args.binary_share < 1):
        parser.error("--binary-share is the share of ones in the --binary features: "
                     "between 0 and 1, with --binary")
    if args.dataset:
        from gbmo import datasets

        if not hasattr(datasets, f"load_{args.dataset[0]}"):
            parser.error(f"--dataset: gbmo.datasets has no load_{args.dataset[0]}")
    with tempfile.TemporaryDirectory() as directory:
        old = pathlib.Path(directory, "base")
        subprocess.run(["git", "clone", "-q", str(ROOT), str(old)], check=True)
        subprocess.run(["git", "checkout", "-q", args.base], cwd=old, check=True)
        subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace", "-j", "2"],
                       cwd=old, check=True, capture_output=True)
        print(f"{args.threads} thread(s), {args.repeats} runs a build, ms a round")
        print(f"{'data':>16} {'mode':>13} {'old best':>9} "
              f"{'new best':>9} {'old/new best':>12} {'old/new median':>14}")
        shapes = SHAPES
        if args.shape:
            shapes = [(*map(int, args.shape[:4]), args.shape[4])]
        elif args.dataset:
            shapes = [(args.dataset[0], int(args.dataset[1]), args.dataset[2])]
        if args.binary:
            shares = () if args.binary_share is None else (args.binary_share,)
            shapes = [(*shape[:3], args.binary, *shares, *shape[3:]) for shape in shapes]
        for shape in shapes:
            times = {"old": [], "new": []}
            for _ in range(args.repeats):
                times["old"].append(run(old, shape, args.threads, args.params))
                times["new"].append(run(ROOT, shape, args.threads, args.params))
            old_best, new_best = min(times["old"]), min(times["new"])
            median = statistics.median(times["old"]) / statistics.median(times["new"])
            data = shape[0] if len(shape) == 3 else "{} x {} x {}".format(*shape[:3])
            print(f"{data:>16} {shape[-1]:>13} {old_best:9.3f} "
                  f"{new_best:9.3f} {old_best / new_best:12.2f} {median:14.2f}")


if __name__ == "__main__":
    main()
