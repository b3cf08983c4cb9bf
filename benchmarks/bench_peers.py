"""Time to accuracy: gbmo and its peers, each trained until its validation score stops improving.

    python benchmarks/bench_peers.py [--rows 50000] [--max-rounds 1500] [--patience 20] [--threads 2]

bench_core compares libraries at equal rounds, where a library that grows d
trees a round (one per output or class) fits more per round than one
vector-leaf tree does. This script asks what a user asks instead: trained to
its best validation score with early stopping, how accurate is each library
on the test set, and how long did it take?

The two problems are bench_core's: (a) regression, 100 features, 10 outputs
y = tanh(X[:, :20] W) + noise; (b) classification, 50 features, 10 classes.
`rows` training rows, 10,000 validation rows (early stopping), 50,000 test rows.

- gbmo: one model, one vector-leaf tree a round (GBDT-MO, dense split).
- gbmo_symmetric: the same with growth="symmetric", depth 6 (CatBoost's shape).
- LightGBM: one model per output (regression); multiclass (10 trees a round).
- XGBoost: multi_output_tree (one vector-leaf tree a round, as gbmo).
- CatBoost: MultiRMSE / MultiClass (one symmetric tree of depth 6 = 64
  vector leaves a round).
- scikit-learn: HistGradientBoosting, one model per output (regression);
  its multiclass (10 trees a round).
- catboost_lossguide (not run by default): CatBoost growing gbmo's tree
  shape, best-first to 63 leaves, to tell its symmetric trees' share of its
  accuracy from the rest of CatBoost.
- gbmo_l2 (not run by default): gbmo with score_function="L2", CatBoost's
  split score that counts rows where the Newton score sums hessians (the
  same as the default on regression, whose hessians are the rows' weights).
- gbmo_noise (not run by default): gbmo with random_strength=2, noise on
  each candidate split's score as CatBoost adds it (fading with the rounds).
- gbmo_symmetric_noise (not run by default): gbmo_symmetric with
  random_strength=1, CatBoost's default noise on its own tree shape.
- gbmo_linear, gbmo_linear_single and lightgbm_linear (not run by default):
  linear leaves (linear_tree=True); gbmo_linear_single in one tree per
  output, as LightGBM's.
- gbmo_ova and lightgbm_ova (not run by default, classification only): the
  multiclassova objective, a sigmoid per class; gbmo in one vector-leaf
  tree a round, LightGBM in a tree per class.

Every library gets learning rate 0.1, 63 leaves (CatBoost depth 6), 63 bins,
L2 1, 20 rows per leaf (not CatBoost: symmetric trees have no such limit),
the same threads, and stops `patience` rounds after its best validation
score; it then predicts with its best round (scikit-learn with all its
rounds, the patience included: it keeps no best round). Each fit runs in its own
subprocess; time is the whole fit (binning and validation scoring included).
"""
import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_core import (BINS, LAMBDA, LEARNING_RATE, LEAVES, MIN_LEAF,  # noqa: E402
                        make_data, run_cases)

N_VALID = 10_000


def fit_gbmo(case, data, max_rounds, patience, threads, shape=None):
    import gbmo

    X, Y, X_valid, Y_valid = data
    params = {"objective": "mse" if case == "regression" else "softmax",
              "max_leaves": LEAVES, "max_bins": BINS, "lambda_l2": LAMBDA,
              "learning_rate": LEARNING_RATE, "min_samples_leaf": MIN_LEAF,
              "n_threads": threads, "verbosity": 0, **(shape or {})}
    train_set = gbmo.Dataset(X, Y)
    booster = gbmo.train(params, train_set, max_rounds,
                         valid_sets=[train_set.create_valid(X_valid, Y_valid)],
                         callbacks=[gbmo.early_stopping(patience, verbose=False)])
    return booster.predict, booster.best_iteration


def fit_lightgbm(case, data, max_rounds, patience, threads, extra=None):
    import lightgbm

    X, Y, X_valid, Y_valid = data
    common = dict(n_estimators=max_rounds, num_leaves=LEAVES, max_bin=BINS, reg_lambda=LAMBDA,
                  learning_rate=LEARNING_RATE, min_child_samples=MIN_LEAF, n_jobs=threads,
                  verbose=-1, **(extra or {}))
    stop = [lightgbm.early_stopping(patience, verbose=False)]
    if case == "regression":
        models = [lightgbm.LGBMRegressor(**common).fit(X, Y[:, j], eval_X=(X_valid,),
                                                       eval_y=(Y_valid[:, j],), callbacks=stop)
                  for j in range(Y.shape[1])]
        return (lambda X_test: np.column_stack([m.predict(X_test) for m in models]),
                [m.best_iteration_ for m in models])
    model = lightgbm.LGBMClassifier(**common).fit(X, Y, eval_X=(X_valid,), eval_y=(Y_valid,),
                                                  callbacks=stop)
    return model.predict_proba, model.best_iteration_


def fit_xgboost(case, data, max_rounds, patience, threads):
    import xgboost

    X, Y, X_valid, Y_valid = data
    common = dict(n_estimators=max_rounds, tree_method="hist", multi_strategy="multi_output_tree",
                  grow_policy="lossguide", max_leaves=LEAVES, max_depth=0, max_bin=BINS,
                  reg_lambda=LAMBDA, learning_rate=LEARNING_RATE, n_jobs=threads,
                  early_stopping_rounds=patience)
    model = (xgboost.XGBRegressor(**common) if case == "regression"
             else xgboost.XGBClassifier(objective="multi:softprob", **common))
    model.fit(X, Y, eval_set=[(X_valid, Y_valid)], verbose=False)
    predict = model.predict if case == "regression" else model.predict_proba
    return predict, model.best_iteration + 1


def fit_catboost(case, data, max_rounds, patience, threads, shape=None):
    import catboost

    X, Y, X_valid, Y_valid = data
    shape = shape or {"depth": 6}
    common = dict(iterations=max_rounds, learning_rate=LEARNING_RATE, l2_leaf_reg=LAMBDA,
                  border_count=BINS, thread_count=threads, od_type="Iter", od_wait=patience,
                  use_best_model=True, verbose=False, allow_writing_files=False, **shape)
    if case == "regression":
        model = catboost.CatBoostRegressor(loss_function="MultiRMSE", **common)
    else:
        model = catboost.CatBoostClassifier(loss_function="MultiClass", **common)
    model.fit(X, Y, eval_set=(X_valid, Y_valid))
    predict = model.predict if case == "regression" else model.predict_proba
    return predict, model.get_best_iteration() + 1


def fit_sklearn(case, data, max_rounds, patience, threads):
    from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from threadpoolctl import threadpool_limits

    X, Y, X_valid, Y_valid = data
    common = dict(max_iter=max_rounds, max_leaf_nodes=LEAVES, max_bins=BINS,
                  l2_regularization=LAMBDA, learning_rate=LEARNING_RATE,
                  min_samples_leaf=MIN_LEAF, early_stopping=True, n_iter_no_change=patience,
                  tol=0.0)
    with threadpool_limits(threads, user_api="openmp"):
        if case == "regression":
            models = [HistGradientBoostingRegressor(**common).fit(X, Y[:, j], X_val=X_valid,
                                                                   y_val=Y_valid[:, j])
                      for j in range(Y.shape[1])]
        else:
            models = [HistGradientBoostingClassifier(**common).fit(X, Y, X_val=X_valid,
                                                                    y_val=Y_valid)]
    # sklearn predicts with every round it fitted, the patience rounds included.
    rounds = [m.n_iter_ for m in models]
    if case == "regression":
        return lambda X_test: np.column_stack([m.predict(X_test) for m in models]), rounds
    return models[0].predict_proba, rounds[0]


def fit_catboost_lossguide(case, data, max_rounds, patience, threads):
    """CatBoost with gbmo's tree shape (best-first, 63 leaves, 20 rows per
    leaf) instead of its symmetric trees: which of the two its accuracy comes from."""
    return fit_catboost(case, data, max_rounds, patience, threads,
                        {"grow_policy": "Lossguide", "max_leaves": LEAVES,
                         "min_data_in_leaf": MIN_LEAF})


def fit_gbmo_symmetric(case, data, max_rounds, patience, threads):
    """gbmo growing CatBoost's tree shape: symmetric trees of depth 6 (64 leaves)."""
    return fit_gbmo(case, data, max_rounds, patience, threads,
                    {"growth": "symmetric", "max_depth": 6, "max_leaves": 64})


def fit_gbmo_symmetric_noise(case, data, max_rounds, patience, threads):
    """gbmo's symmetric trees with random_strength 1, CatBoost's default noise."""
    return fit_gbmo(case, data, max_rounds, patience, threads,
                    {"growth": "symmetric", "max_depth": 6, "max_leaves": 64,
                     "random_strength": 1.0})


def fit_gbmo_l2(case, data, max_rounds, patience, threads):
    """gbmo scoring splits with CatBoost's L2 score (rows in place of hessians)."""
    return fit_gbmo(case, data, max_rounds, patience, threads, {"score_function": "L2"})


def fit_gbmo_noise(case, data, max_rounds, patience, threads):
    """gbmo with random_strength 2: noise on its split scores, as CatBoost's."""
    return fit_gbmo(case, data, max_rounds, patience, threads, {"random_strength": 2.0})


def fit_gbmo_goss(case, data, max_rounds, patience, threads):
    """gbmo with gradient-based one-side sampling (top_rate 0.2, other_rate 0.1)."""
    return fit_gbmo(case, data, max_rounds, patience, threads, {"data_sample_strategy": "goss"})


def _classes_only(case, what):
    if case != "classification":
        raise ValueError(f"{what} is a classification objective: run it with "
                         "--cases classification")


def fit_gbmo_ova(case, data, max_rounds, patience, threads):
    """gbmo with multiclassova: a sigmoid per class, in one vector-leaf tree."""
    _classes_only(case, "multiclassova")
    return fit_gbmo(case, data, max_rounds, patience, threads, {"objective": "multiclassova"})


def fit_lightgbm_ova(case, data, max_rounds, patience, threads):
    """LightGBM's multiclassova: a binary model per class (10 trees a round)."""
    _classes_only(case, "multiclassova")
    return fit_lightgbm(case, data, max_rounds, patience, threads,
                        {"objective": "multiclassova"})


def fit_gbmo_linear(case, data, max_rounds, patience, threads):
    """gbmo with linear leaves (linear_tree=True)."""
    return fit_gbmo(case, data, max_rounds, patience, threads, {"linear_tree": True})


def fit_gbmo_linear_single(case, data, max_rounds, patience, threads):
    """gbmo's linear leaves in one tree per output (tree_mode='single_output'),
    LightGBM's shape."""
    return fit_gbmo(case, data, max_rounds, patience, threads,
                    {"linear_tree": True, "tree_mode": "single_output"})


def fit_lightgbm_linear(case, data, max_rounds, patience, threads):
    """LightGBM with its linear trees (linear_tree=True)."""
    return fit_lightgbm(case, data, max_rounds, patience, threads, {"linear_tree": True})


def fit_lightgbm_goss(case, data, max_rounds, patience, threads):
    """LightGBM with its gradient-based one-side sampling, the same rates."""
    return fit_lightgbm(case, data, max_rounds, patience, threads,
                        {"data_sample_strategy": "goss"})


FITTERS = {"gbmo": fit_gbmo, "gbmo_symmetric": fit_gbmo_symmetric, "gbmo_goss": fit_gbmo_goss,
           "lightgbm": fit_lightgbm, "lightgbm_goss": fit_lightgbm_goss, "xgboost": fit_xgboost,
           "catboost": fit_catboost, "sklearn": fit_sklearn,
           "catboost_lossguide": fit_catboost_lossguide, "gbmo_ova": fit_gbmo_ova,
           "lightgbm_ova": fit_lightgbm_ova, "gbmo_l2": fit_gbmo_l2,
           "gbmo_noise": fit_gbmo_noise, "gbmo_symmetric_noise": fit_gbmo_symmetric_noise,
           "gbmo_linear": fit_gbmo_linear, "gbmo_linear_single": fit_gbmo_linear_single,
           "lightgbm_linear": fit_lightgbm_linear}
DEFAULT_LIBRARIES = "gbmo,gbmo_symmetric,lightgbm,xgboost,catboost,sklearn"


def worker(library, case, n_rows, max_rounds, patience, threads):
    X, Y, X_test, Y_test = make_data(case, n_rows + N_VALID)
    data = (X[:n_rows], Y[:n_rows], X[n_rows:], Y[n_rows:])
    start = time.perf_counter()
    predict, rounds = FITTERS[library](case, data, max_rounds, patience, threads)
    seconds = time.perf_counter() - start
    P = predict(X_test)
    if case == "regression":
        metric = float(np.sqrt(np.mean((P - Y_test) ** 2)))
    else:
        metric = float(np.mean(np.argmax(P, axis=1) == Y_test))
    print(json.dumps({"seconds": seconds, "rounds": np.ravel(rounds).tolist(), "metric": metric}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--max-rounds", type=int, default=1500)
    parser.add_argument("--patience", type=int, default=20)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--cases", default="regression,classification")
    parser.add_argument("--libraries", default=DEFAULT_LIBRARIES,
                        help=f"comma-separated, of {', '.join(FITTERS)}")
    parser.add_argument("--worker", nargs=2, metavar=("LIBRARY", "CASE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker, args.rows, args.max_rounds, args.patience, args.threads)
        return
    print(f"{args.rows} training rows, {N_VALID} validation, 50000 test; at most "
          f"{args.max_rounds} rounds, patience {args.patience}, {args.threads} threads")
    options = ["--rows", str(args.rows), "--max-rounds", str(args.max_rounds),
               "--patience", str(args.patience), "--threads", str(args.threads)]
    for case, results in run_cases(__file__, args.cases, args.libraries, options):
        metric = "test RMSE" if case == "regression" else "test accuracy"
        print(f"\n({case})  {'library':<18} {'rounds used':>15} {'seconds':>8} {metric:>14}"
              f" {'time / gbmo':>12}")
        ours = results.get("gbmo")
        for library, r in results.items():
            rounds = r["rounds"]
            shown = (str(rounds[0]) if len(rounds) == 1
                     else f"{min(rounds)}-{max(rounds)} x{len(rounds)}")
            ratio = "" if ours is None else f"{r['seconds'] / ours['seconds']:.2f}"
            print(f"{'':13}{library:<18} {shown:>15} {r['seconds']:8.1f} {r['metric']:14.5f}"
                  f" {ratio:>12}")


if __name__ == "__main__":
    main()
