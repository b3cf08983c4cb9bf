"""gbmo against LightGBM on many sparse binary features (one-hot columns,
bag-of-words flags), whose histograms gbmo builds row by row from each
row's few ones; both interleaved in one process, so the machine's noise
hits both alike.

    python benchmarks/bench_onehot.py [--rows 100000] [--features 1000]
        [--density 0.02] [--outputs 1] [--rounds 200] [--threads 1 2] [--repeats 3]
        [--csr]

X: --density of the values 1, the rest 0; Y = tanh(X W / sqrt(ones a row)) +
noise, one column per output (LightGBM: one model per output). Each library
fits 1 round and 1 + --rounds rounds on a Dataset built beforehand: the
first is its setup (LightGBM's feature bundling and more; gbmo's Dataset
keeps its row entries from the warm-up's training, so its setup is what a
further training on the Dataset costs), the difference / --rounds its
seconds a later round; best of --repeats each. 31 leaves, 255 bins, 20 rows a leaf, learning rate 0.1.
--csr hands both libraries X as a scipy CSR matrix instead of a numpy array.
"""
import argparse
import time

import numpy as np


def make_data(n_rows, n_features, density, n_outputs, seed=0):
    rng = np.random.default_rng(seed)
    X = (rng.random((n_rows, n_features)) < density).astype(np.float64)
    W = rng.standard_normal((n_features, n_outputs))
    Y = np.tanh(X @ W / np.sqrt(max(1.0, n_features * density)))
    return X, Y + 0.1 * rng.standard_normal(Y.shape)


def gbmo_fitter(X, Y, threads):
    import gbmo

    params = {"verbosity": -1, "n_threads": threads, "max_leaves": 31, "max_bins": 255,
              "min_samples_leaf": 20, "learning_rate": 0.1, "adaptive_threads": False}
    data = gbmo.Dataset(X, Y)
    gbmo.train(params, data, 1)  # bins the Dataset

    def fit(rounds):
        booster = gbmo.train(params, data, rounds)
        return lambda X_test: booster.predict(X_test).reshape(X_test.shape[0], -1)
    return fit


def lightgbm_fitter(X, Y, threads):
    import lightgbm

    params = {"verbose": -1, "num_threads": threads, "num_leaves": 31, "max_bin": 255,
              "min_data_in_leaf": 20, "learning_rate": 0.1}
    datasets = [lightgbm.Dataset(X, Y[:, j], params=params).construct()
                for j in range(Y.shape[1])]

    def fit(rounds):
        boosters = [lightgbm.train(params, data, rounds) for data in datasets]
        return lambda X_test: np.column_stack([b.predict(X_test) for b in boosters])
    return fit


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--features", type=int, default=1000)
    parser.add_argument("--density", type=float, default=0.02)
    parser.add_argument("--outputs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--csr", action="store_true", help="X as scipy CSR")
    args = parser.parse_args()
    if not 0 < args.density < 1 or min(args.rows, args.features, args.outputs, args.rounds,
                                       args.repeats, *args.threads) < 1:
        parser.error("--density is a share between 0 and 1; the counts must be positive")
    X, Y = make_data(args.rows + args.rows // 4, args.features, args.density, args.outputs)
    if args.csr:
        from scipy import sparse

        X = sparse.csr_matrix(X)
    X, X_test, Y, Y_test = X[:args.rows], X[args.rows:], Y[:args.rows], Y[args.rows:]
    print(f"{args.rows:,} rows x {args.features:,} binary features ({args.density:.1%} ones"
          f"{', CSR' if args.csr else ''}), {args.outputs} output(s), {args.rounds} rounds, "
          f"best of {args.repeats}")
    print("| threads | library | setup + 1 round, s | s a later round | / LightGBM | "
          "test RMSE |")
    print("|---|---|---|---|---|---|")
    for threads in args.threads:
        fitters = {"gbmo": gbmo_fitter(X, Y, threads),
                   "LightGBM": lightgbm_fitter(X, Y, threads)}
        first = {name: np.inf for name in fitters}
        whole = {name: np.inf for name in fitters}
        rmse = {}
        for _ in range(args.repeats):
            for name, fit in fitters.items():
                start = time.perf_counter()
                fit(1)
                first[name] = min(first[name], time.perf_counter() - start)
                start = time.perf_counter()
                predict = fit(1 + args.rounds)
                whole[name] = min(whole[name], time.perf_counter() - start)
                rmse[name] = float(np.sqrt(np.mean((predict(X_test) - Y_test) ** 2)))
        later = {name: (whole[name] - first[name]) / args.rounds for name in fitters}
        for name in fitters:
            print(f"| {threads} | {name} | {first[name]:.3f} | {later[name]:.4f} | "
                  f"{later[name] / later['LightGBM']:.2f} | {rmse[name]:.4f} |")


if __name__ == "__main__":
    main()
