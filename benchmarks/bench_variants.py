"""A boosting variant against plain boosting, in gbmo and in LightGBM, at a fixed number of rounds.

    python benchmarks/bench_variants.py [--variant dart] [--rows 20000] [--rounds 300]
                                        [--threads 2] [--outputs 1 --seed 0]

--variant dart: DART takes no early stopping (each round rescales earlier
ones), so every fit runs the same rounds; DART's defaults of both libraries
(drop_rate 0.1, max_drop 50, skip_drop 0.5; LightGBM with uniform_drop, as
gbmo draws). --variant extra_trees: one random threshold per feature at each
node, in both libraries.

bench_core's two problems (10 outputs or classes), 63 leaves, 63 bins,
learning rate 0.1. Each fit runs in its own subprocess; time is the whole
fit. Ratios are to gbmo's plain boosting in the same run. --outputs 1 keeps
the regression's first output only (the classes are left whole), where both
libraries grow the same trees; --seed sets both libraries' seed for the
variant's draws.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_core import fit_gbmo, fit_lightgbm, run_cases  # noqa: E402

DART = {"boosting": "dart", "drop_rate": 0.1, "max_drop": 50, "skip_drop": 0.5}
# per variant: (gbmo's parameters, LightGBM's, the name of LightGBM's seed for it)
VARIANTS = {
    "dart": (DART, {"boosting_type": "dart", "uniform_drop": True,
                    **{key: value for key, value in DART.items() if key != "boosting"}},
             "drop_seed"),
    "extra_trees": ({"extra_trees": True}, {"extra_trees": True}, "extra_seed"),
}
VARIANT, SEED = "dart", 0  # set from --variant and --seed in each worker
# VARIANT and SEED are read when a fit runs, after the worker set them
FITTERS = {
    "gbmo": lambda *a: fit_gbmo(*a, {"seed": SEED}),
    "gbmo_variant": lambda *a: fit_gbmo(*a, {**VARIANTS[VARIANT][0], "seed": SEED}),
    "lightgbm": lambda *a: fit_lightgbm(*a, {VARIANTS[VARIANT][2]: SEED}),
    "lightgbm_variant": lambda *a: fit_lightgbm(*a, {**VARIANTS[VARIANT][1],
                                                    VARIANTS[VARIANT][2]: SEED}),
}


def worker(library, case, n_rows, rounds, threads, outputs, seed, variant):
    global SEED, VARIANT
    import bench_core

    SEED, VARIANT = seed, variant
    all_outputs = bench_core.make_data

    def first_outputs(case, n_rows, seed=0):
        X, Y, X_test, Y_test = all_outputs(case, n_rows, seed)
        if case != "regression":  # class indices have no output columns to keep
            return X, Y, X_test, Y_test
        return X, Y[:, :outputs], X_test, Y_test[:, :outputs]

    # bench_core's worker times and scores whatever data and fitters it is given
    bench_core.FITTERS = FITTERS
    if outputs:
        bench_core.make_data = first_outputs
    bench_core.worker(library, case, n_rows, rounds, threads)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--variant", choices=list(VARIANTS), default="dart")
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--outputs", type=int, default=0, help="regression outputs kept (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cases", default="regression,classification")
    parser.add_argument("--libraries", default=",".join(FITTERS))
    parser.add_argument("--worker", nargs=2, metavar=("LIBRARY", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.outputs < 0:
        parser.error(f"--outputs must be >= 0 (0: all), got {args.outputs}")
    if args.worker:
        worker(*args.worker, args.rows, args.rounds, args.threads, args.outputs, args.seed,
               args.variant)
        return
    print(f"{args.variant}: {args.rows} training rows, {args.rounds} rounds, "
          f"{args.threads} threads")
    options = ["--variant", args.variant, "--rows", str(args.rows), "--rounds", str(args.rounds),
               "--threads", str(args.threads), "--outputs", str(args.outputs),
               "--seed", str(args.seed)]
    for case, results in run_cases(__file__, args.cases, args.libraries, options):
        metric = "test RMSE" if case == "regression" else "test accuracy"
        print(f"\n({case})  {'library':<16} {'seconds':>8} {metric:>14} {'time / gbmo':>12}")
        ours = results["gbmo"]["seconds"] if "gbmo" in results else None
        for library, r in results.items():
            ratio = f"{r['seconds'] / ours:.2f}" if ours else ""
            print(f"{'':13}{library:<16} {r['seconds']:8.1f} {r['metric']:14.5f} {ratio:>12}")


if __name__ == "__main__":
    main()
