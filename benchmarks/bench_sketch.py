"""Output sketching against the dense split at equal wall time (issue 4).

    python benchmarks/bench_sketch.py [--rows 50000] [--features 100] [--outputs 100]
                                      [--k 5] [--budget 100] [--threads 2] [--seed 0]

A synthetic multi-output regression: X Gaussian (rows x features), outputs
correlated through a hidden layer of rank 10, Y = tanh(X[:, :20] W1) W2 + noise,
split 80/20 into train and test. Trained one after the other in this process:
gbmo with the dense split (all outputs choose the splits), gbmo with the
sketch_topk, sketch_random and sketch_projection ensemblers (k split columns
choose the splits, all outputs set the leaves), XGBoost multi_output_tree and
XGBoost one_output_per_tree (d trees a round); --methods picks a subset.

Every method trains until its wall clock passes --budget seconds (or --rounds
rounds); the clock starts before the training data is binned, so the budget
pays for binning as a user does. Reported per method: seconds per round (the
median over rounds 2 to R, R the rounds gbmo dense finished within the
budget: the first round also bins, and round times change as training goes
on while the faster methods run many more rounds, so every method is timed
over the same rounds), its ratio to gbmo dense's, the median over all its
rounds, the rounds finished within the budget and the test RMSE (mean over
outputs of each output's RMSE) of the model cut at that round, with its ratio
to gbmo dense's, and the test RMSE at round R (quality per round, apart from
speed). Ratios come from the same run: the machines are shared. The last
column is the share of the method's wall time during which some task waited
for a CPU (Linux /proc/pressure/cpu): well above a few percent, more threads
were runnable than there are cores -- another job, or the method's own extra
threads (a BLAS thread pool beside the OpenMP one) -- and its times are
inflated.
"""
import argparse
import json
import os
import time

import numpy as np

HIDDEN_RANK, INFORMATIVE_FEATURES, NOISE_SD, TEST_FRACTION = 10, 20, 0.1, 0.2
LEAVES, BINS, LEARNING_RATE, LAMBDA = 31, 255, 0.1, 1.0
# Fractions of the budget at which the test RMSE is also reported.
CHECKPOINTS = (0.25, 0.5, 1.0)


def make_problem(n_rows, n_features, n_outputs, seed):
    """(X_train, Y_train, X_test, Y_test): outputs correlated through a
    hidden layer of rank HIDDEN_RANK on the first INFORMATIVE_FEATURES
    features (the others are noise features the trees must learn to ignore)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_rows, n_features))
    informative = min(INFORMATIVE_FEATURES, n_features)
    to_hidden = rng.standard_normal((informative, HIDDEN_RANK)) / np.sqrt(informative)
    to_outputs = rng.standard_normal((HIDDEN_RANK, n_outputs)) / np.sqrt(HIDDEN_RANK)
    Y = np.tanh(X[:, :informative] @ to_hidden) @ to_outputs
    Y += NOISE_SD * rng.standard_normal(Y.shape)
    n_train = int(round(n_rows * (1 - TEST_FRACTION)))
    return X[:n_train], Y[:n_train], X[n_train:], Y[n_train:]


def mean_output_rmse(Y, prediction):
    """RMSE of each output, averaged over outputs (as gbmo's rmse metric)."""
    return float(np.mean(np.sqrt(np.mean((prediction - Y) ** 2, axis=0))))


def cpu_stall_seconds():
    """Seconds during which some runnable task waited for a CPU (Linux
    pressure stall information), or None where the kernel does not report it."""
    try:
        with open("/proc/pressure/cpu") as pressure:
            fields = dict(item.split("=") for item in pressure.readline().split()[1:])
        return int(fields["total"]) / 1e6
    except (OSError, KeyError, ValueError):
        return None


class WallClock:
    """The wall time at the end of every round, counted from its creation;
    `tick()` records a round and says whether the budget is spent.

    It also keeps the share of that time during which a runnable task waited
    for a CPU: near 0 when the method's threads have the cores to themselves,
    high when another job or a thread pool of the method's own competes."""

    def __init__(self, budget, max_rounds):
        self.budget, self.max_rounds = budget, max_rounds
        self.stall_start = self.stall_end = cpu_stall_seconds()
        self.start = time.perf_counter()
        self.round_ends = []

    def tick(self):
        self.round_ends.append(time.perf_counter() - self.start)
        self.stall_end = cpu_stall_seconds()
        return self.round_ends[-1] >= self.budget or len(self.round_ends) >= self.max_rounds

    def stalled_fraction(self):
        if self.stall_start is None or self.stall_end is None:
            return None
        return (self.stall_end - self.stall_start) / self.round_ends[-1]

    def rounds_within(self, seconds):
        """Rounds finished by `seconds` after the start (at least one, so a
        method slower than the budget still has a model to score)."""
        return max(1, int(np.searchsorted(self.round_ends, seconds, side="right")))

    def seconds_per_round(self, last_round):
        """Median time of rounds 2 .. last_round: the first also bins the
        data, and a round's time depends on how far training has gone (the
        trees' shapes change), so methods are compared over the same rounds."""
        durations = np.diff(self.round_ends[:last_round])
        return float(np.median(durations)) if durations.size else float(self.round_ends[0])


def train_gbmo(X, Y, args, ensembler=None):
    """(clock, predict(X, rounds)) of gbmo with the dense split or an ensembler."""
    import gbmo
    from gbmo.callback import EarlyStopException

    params = {"max_leaves": LEAVES, "max_bins": BINS, "learning_rate": LEARNING_RATE,
              "lambda_l2": LAMBDA, "n_threads": args.threads, "seed": args.seed,
              "verbosity": 0}
    if ensembler is not None:
        params.update(ensembler=ensembler, ensembler_params={"k": args.k})
    clock = WallClock(args.budget, args.rounds)

    def stop_at_budget(env):
        if clock.tick():
            raise EarlyStopException(env.iteration + 1, None)

    booster = gbmo.train(params, gbmo.Dataset(X, Y), args.rounds, callbacks=[stop_at_budget])
    return clock, lambda X_new, rounds: booster.predict(X_new, num_iteration=rounds,
                                                        n_threads=args.threads)


def train_xgboost(X, Y, args, multi_strategy):
    """(clock, predict(X, rounds)) of XGBoost hist, best-first like gbmo."""
    import xgboost

    class StopAtBudget(xgboost.callback.TrainingCallback):
        def after_iteration(self, model, epoch, evals_log):
            return clock.tick()

    params = {"tree_method": "hist", "multi_strategy": multi_strategy,
              "grow_policy": "lossguide", "max_leaves": LEAVES, "max_depth": 0,
              "max_bin": BINS, "learning_rate": LEARNING_RATE, "reg_lambda": LAMBDA,
              "nthread": args.threads, "seed": args.seed}
    clock = WallClock(args.budget, args.rounds)
    train_matrix = xgboost.QuantileDMatrix(X, Y, max_bin=BINS, nthread=args.threads)
    booster = xgboost.train(params, train_matrix, args.rounds, callbacks=[StopAtBudget()])
    return clock, lambda X_new, rounds: booster.predict(
        xgboost.DMatrix(X_new, nthread=args.threads), iteration_range=(0, rounds))


METHODS = ("dense", "sketch_topk", "sketch_random", "sketch_projection", "xgboost_multi",
           "xgboost_single")


def methods(args):
    """(name, trainer) of the chosen methods, gbmo dense always first: the
    ratios are to it."""
    k = args.k
    trainers = {
        "dense": ("gbmo dense", lambda X, Y: train_gbmo(X, Y, args)),
        "xgboost_multi": ("XGBoost multi_output_tree",
                          lambda X, Y: train_xgboost(X, Y, args, "multi_output_tree")),
        "xgboost_single": ("XGBoost one_output_per_tree",
                           lambda X, Y: train_xgboost(X, Y, args, "one_output_per_tree")),
    }
    for sketch in ("sketch_topk", "sketch_random", "sketch_projection"):
        trainers[sketch] = (f"gbmo {sketch} k={k}",
                            lambda X, Y, sketch=sketch: train_gbmo(X, Y, args, sketch))
    chosen = ["dense"] + [key for key in args.methods.split(",") if key != "dense"]
    unknown = set(chosen) - set(METHODS)
    if unknown:
        raise SystemExit(f"unknown methods {sorted(unknown)}; choose from {', '.join(METHODS)}")
    return [trainers[key] for key in chosen]


def run(args):
    X, Y, X_test, Y_test = make_problem(args.rows, args.features, args.outputs, args.seed)
    results = []
    for name, trainer in methods(args):
        clock, predict = trainer(X, Y)
        ran = len(clock.round_ends)
        rmse_at = {fraction: mean_output_rmse(
            Y_test, predict(X_test, clock.rounds_within(fraction * args.budget)))
            for fraction in CHECKPOINTS}
        results.append({"name": name, "clock": clock, "predict": predict, "rmse_at": rmse_at})
        print(f"  {name}: {ran} rounds in {clock.round_ends[-1]:.1f} s, "
              f"{clock.seconds_per_round(ran):.4f} s/round, test RMSE {rmse_at[1.0]:.5f}",
              flush=True)
    # Quality per round, apart from speed: every method cut at the rounds gbmo
    # dense finished within the budget (blank for a method that ran fewer).
    dense_rounds = results[0]["clock"].rounds_within(args.budget)
    for result in results:
        result["rmse_at_dense_rounds"] = (
            mean_output_rmse(Y_test, result["predict"](X_test, dense_rounds))
            if len(result["clock"].round_ends) >= dense_rounds else None)
    return results, dense_rounds, len(Y), len(Y_test)


def markdown_tables(results, dense_rounds, args):
    """The main table, then the test RMSE at each checkpoint of the budget."""
    dense = results[0]
    dense_seconds = dense["clock"].seconds_per_round(dense_rounds)
    dense_rmse = dense["rmse_at"][1.0]
    budget = f"{args.budget:g} s"
    lines = [f"| method | s/round, rounds 2-{dense_rounds} | time / dense "
             f"| s/round, all its rounds | rounds in {budget} | test RMSE at {budget} "
             f"| RMSE / dense | test RMSE at round {dense_rounds} | CPU stalled |",
             "|---|---|---|---|---|---|---|---|---|"]
    for result in results:
        clock = result["clock"]
        seconds = clock.seconds_per_round(dense_rounds)
        at_dense_rounds = result["rmse_at_dense_rounds"]
        stalled = clock.stalled_fraction()
        lines.append(
            f"| {result['name']} | {seconds:.4f} | {seconds / dense_seconds:.3f} "
            f"| {clock.seconds_per_round(len(clock.round_ends)):.4f} "
            f"| {clock.rounds_within(args.budget)} | {result['rmse_at'][1.0]:.5f} "
            f"| {result['rmse_at'][1.0] / dense_rmse:.4f} "
            f"| {'' if at_dense_rounds is None else f'{at_dense_rounds:.5f}'} "
            f"| {'' if stalled is None else f'{stalled:.0%}'} |")
    lines += ["", "| method | " + " | ".join(
        f"test RMSE at {fraction * args.budget:g} s" for fraction in CHECKPOINTS) + " |",
        "|---|" + "---|" * len(CHECKPOINTS)]
    for result in results:
        lines.append(f"| {result['name']} | " + " | ".join(
            f"{result['rmse_at'][fraction]:.5f}" for fraction in CHECKPOINTS) + " |")
    return "\n".join(lines)


def save_round_times(results, path):
    """Every method's wall clock at the end of each round, for plots or a
    closer look at how round times change over training."""
    with open(path, "w") as out:
        json.dump({r["name"]: r["clock"].round_ends for r in results}, out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=50_000, help="train + test rows")
    parser.add_argument("--features", type=int, default=100)
    parser.add_argument("--outputs", type=int, default=100)
    parser.add_argument("--k", type=int, default=5, help="split columns of the sketches")
    parser.add_argument("--budget", type=float, default=100.0,
                        help="wall-clock seconds each method trains for")
    parser.add_argument("--rounds", type=int, default=10_000,
                        help="at most this many rounds, whatever the budget")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", default=",".join(METHODS),
                        help="comma-separated, from: " + ", ".join(METHODS)
                        + " (dense always runs: the ratios are to it)")
    parser.add_argument("--save-round-times", metavar="PATH",
                        help="write each method's per-round wall clock as JSON")
    args = parser.parse_args()

    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    results, dense_rounds, n_train, n_test = run(args)
    print(f"\n{n_train} train / {n_test} test rows, {args.features} features, "
          f"{args.outputs} outputs (hidden rank {HIDDEN_RANK}), k={args.k}, "
          f"{LEAVES} leaves best-first, {BINS} bins, learning rate {LEARNING_RATE}, "
          f"{args.threads} threads, budget {args.budget:g} s; total "
          f"{time.perf_counter() - started:.0f} s, 1-minute load "
          f"{load_before:.1f} -> {os.getloadavg()[0]:.1f}\n")
    print(markdown_tables(results, dense_rounds, args))
    if args.save_round_times:
        save_round_times(results, args.save_round_times)


if __name__ == "__main__":
    main()
