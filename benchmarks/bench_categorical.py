"""Categorical features: gbmo's and LightGBM's, against the codes read as numbers.

    python benchmarks/bench_categorical.py [--outputs 5] [--rows 20000] [--rounds 300]
                                           [--threads 2] [--seed 0] [--ablation]

Data (rows for training, as many for the test): a "shop" feature of 200
categories whose effect on the d outputs is one shared effect plus a smaller
one per output (correlated outputs), a "region" feature of 10 categories whose
effect is its slope on x0 (an interaction, which one order of the categories
learnt at the root cannot express and LightGBM's order per node can), five
numeric features of which x1 enters through tanh, and noise of 0.3.

gbmo trains one multi-output model, LightGBM one model per output; both get
the same rounds, 31 leaves, learning rate 0.05, 20 rows per leaf, and the
same threads, and their own defaults of the categorical rules (cat_smooth,
cat_l2, min_data_per_group, max_cat_threshold, max_cat_to_onehot; the same
values but min_data_per_group, 0 in gbmo and 100 in LightGBM); "gbmo, no
rules" turns them all off. --ablation instead trains gbmo with each rule
alone at LightGBM's default. Prints the test RMSE and the seconds of the fit, each as a
ratio to LightGBM's categorical model from the same run.
"""
import argparse
import time

import numpy as np

N_SHOPS, N_REGIONS = 200, 10
PARAMS = {"leaves": 31, "learning_rate": 0.05, "min_leaf": 20}


def make_data(n_rows, n_outputs, seed):
    rng = np.random.default_rng(seed)
    shop = rng.integers(0, N_SHOPS, n_rows)
    region = rng.integers(0, N_REGIONS, n_rows)
    numeric = rng.normal(size=(n_rows, 5))
    shop_effect = (rng.normal(size=(N_SHOPS, 1)) + 0.3 * rng.normal(size=(N_SHOPS, n_outputs)))
    region_slope = rng.normal(size=(N_REGIONS, 1)) * rng.uniform(0.5, 1.5, size=n_outputs)
    Y = (shop_effect[shop] + region_slope[region] * numeric[:, :1]
         + np.tanh(2 * numeric[:, 1:2]) + 0.3 * rng.normal(size=(n_rows, n_outputs)))
    X = np.column_stack([shop, region, numeric]).astype(np.float64)
    return X, Y


# LightGBM's rules for categorical sets at LightGBM's defaults (gbmo's since
# session 13, but min_data_per_group 0), and all off
CATEGORY_RULES = {"cat_smooth": 10.0, "cat_l2": 10.0, "min_data_per_group": 100,
                  "max_cat_threshold": 32, "max_cat_to_onehot": 4}
NO_CATEGORY_RULES = {"cat_smooth": 0.0, "cat_l2": 0.0, "min_data_per_group": 0,
                     "max_cat_threshold": 256, "max_cat_to_onehot": 0}


def fit_gbmo(X, Y, categorical, rounds, threads, extra=None):
    import gbmo

    params = {"max_leaves": PARAMS["leaves"], "learning_rate": PARAMS["learning_rate"],
              "min_samples_leaf": PARAMS["min_leaf"], "n_threads": threads, "verbosity": 0,
              "categorical_feature": [0, 1] if categorical else None, **(extra or {})}
    return gbmo.train(params, gbmo.Dataset(X, Y), rounds).predict


def fit_gbmo_without_rules(X, Y, categorical, rounds, threads):
    """gbmo's categorical sets without LightGBM's rules."""
    return fit_gbmo(X, Y, categorical, rounds, threads, NO_CATEGORY_RULES)


def ablation(X_train, Y_train, X_test, Y_test, args):
    """gbmo's test RMSE with each rule alone at LightGBM's default, the others off."""
    variants = {"all off": NO_CATEGORY_RULES, "all at LightGBM's": CATEGORY_RULES,
                "gbmo's defaults": {}}
    variants.update({f"{name} alone": {**NO_CATEGORY_RULES, name: value}
                     for name, value in CATEGORY_RULES.items()})
    print(f"{args.rows} training rows, {args.outputs} outputs, {args.rounds} rounds, "
          f"seed {args.seed}: gbmo's test RMSE by rules")
    for name, rules in variants.items():
        predict = fit_gbmo(X_train, Y_train, True, args.rounds, args.threads, rules)
        print(f"{name:<28} {np.sqrt(np.mean((predict(X_test) - Y_test) ** 2)):.4f}")


def fit_lightgbm(X, Y, categorical, rounds, threads):
    import lightgbm

    models = []
    for j in range(Y.shape[1]):
        model = lightgbm.LGBMRegressor(
            n_estimators=rounds, num_leaves=PARAMS["leaves"],
            learning_rate=PARAMS["learning_rate"], min_child_samples=PARAMS["min_leaf"],
            n_jobs=threads, verbose=-1)
        models.append(model.fit(X, Y[:, j], categorical_feature=[0, 1] if categorical else []))
    return lambda X_test: np.column_stack([m.predict(X_test) for m in models])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--outputs", type=int, default=5)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ablation", action="store_true",
                        help="instead, gbmo with each categorical rule alone")
    args = parser.parse_args()
    X, Y = make_data(2 * args.rows, args.outputs, args.seed)
    X_train, Y_train, X_test, Y_test = X[:args.rows], Y[:args.rows], X[args.rows:], Y[args.rows:]
    if args.ablation:
        ablation(X_train, Y_train, X_test, Y_test, args)
        return
    runs = {("gbmo", True): fit_gbmo, ("gbmo, no rules", True): fit_gbmo_without_rules,
            ("gbmo", False): fit_gbmo, ("lightgbm", True): fit_lightgbm,
            ("lightgbm", False): fit_lightgbm}
    results = {}
    for (library, categorical), fit in runs.items():
        start = time.perf_counter()
        predict = fit(X_train, Y_train, categorical, args.rounds, args.threads)
        seconds = time.perf_counter() - start
        rmse = float(np.sqrt(np.mean((predict(X_test) - Y_test) ** 2)))
        results[library, categorical] = (rmse, seconds)
    reference_rmse, reference_seconds = results["lightgbm", True]
    print(f"{args.rows} training rows, {args.outputs} outputs, {args.rounds} rounds, "
          f"{args.threads} threads, seed {args.seed}; ratios to LightGBM categorical")
    print(f"{'library':<14} {'features':<12} {'test RMSE':>10} {'RMSE ratio':>11} "
          f"{'fit s':>7} {'time ratio':>11}")
    for (library, categorical), (rmse, seconds) in results.items():
        kind = "categorical" if categorical else "codes"
        print(f"{library:<14} {kind:<12} {rmse:10.4f} {rmse / reference_rmse:11.3f} "
              f"{seconds:7.2f} {seconds / reference_seconds:11.2f}")


if __name__ == "__main__":
    main()
