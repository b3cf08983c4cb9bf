"""From a numpy X to a first round's model: a Dataset made from X and one
round trained on it (the binning, and gbmo's histogram layout or LightGBM's
feature bundling, are most of it), gbmo against LightGBM, interleaved in one
process so the machine's noise hits both alike; each repeat makes a new
Dataset.

    python benchmarks/bench_setup.py [--threads 1 2] [--repeats 3]

Data: 100,000 rows of 50 normal features; 100,000 x 300 of which 3% are
normal values, the rest 0; 100,000 x 1,000 binary at 2% ones. One output,
31 leaves, 255 bins.
"""
import argparse
import time

import numpy as np


def data_sets(rng):
    n = 100_000
    yield "100,000 x 50 normal", rng.standard_normal((n, 50))
    yield "100,000 x 300, 3% nonzero", \
        (rng.random((n, 300)) < 0.03) * rng.standard_normal((n, 300))
    yield "100,000 x 1,000 binary, 2% ones", (rng.random((n, 1000)) < 0.02).astype(np.float64)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import gbmo
    import lightgbm

    rng = np.random.default_rng(0)
    print("| data | threads | gbmo s | LightGBM s | gbmo / LightGBM |")
    print("|---|---|---|---|---|")
    for name, X in data_sets(rng):
        y = X[:, :5].sum(axis=1) + 0.1 * rng.standard_normal(len(X))
        for threads in args.threads:
            params = {"verbosity": -1, "n_threads": threads}
            fits = {"gbmo": lambda: gbmo.train(params, gbmo.Dataset(X, y), 1),
                    "lightgbm": lambda: lightgbm.train(params, lightgbm.Dataset(X, y), 1)}
            best = {}
            for _ in range(args.repeats):
                for library, fit in fits.items():
                    start = time.perf_counter()
                    fit()
                    best[library] = min(best.get(library, np.inf), time.perf_counter() - start)
            print(f"| {name} | {threads} | {best['gbmo']:.3f} | {best['lightgbm']:.3f} | "
                  f"{best['gbmo'] / best['lightgbm']:.2f} |")


if __name__ == "__main__":
    main()
