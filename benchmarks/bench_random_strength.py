"""random_strength (CatBoost's noise on split scores) against none, each
model trained to its best validation round.

    python benchmarks/bench_random_strength.py [--data-dir ../shared/data] [--seeds 3]
        [--strengths 0,1,2,4]

bench_score_function's data sets and settings (learning rate 0.1, 1 thread,
early stopping after 30 rounds; see its docstring), with bench_core's
10-output regression (synthetic_regression, 20,000 training rows, test
RMSE) beside the classes (test accuracy and logloss). A new draw of the
data or of its split per seed, and the seed seeds the noise too. Prints the
means over seeds and the per-seed metrics.
"""
import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_score_function import run  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", default=None, help="../shared/data, for mnist")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--strengths", default="0,1,2,4")
    args = parser.parse_args()
    strengths = [float(value) for value in args.strengths.split(",")]
    names = ["synthetic_regression", "synthetic", *(["mnist"] if args.data_dir else []),
             "digits", "breast_cancer"]
    print(f"{'data':<21} {'strength':>8} {'acc/RMSE':>9} {'logloss':>8} {'rounds':>7}  "
          "accuracy or RMSE per seed")
    for name in names:
        for strength in strengths:
            r = run(name, {"random_strength": strength}, args.seeds, args.data_dir)
            print(f"{name:<21} {strength:8g} {r[:, 0].mean():9.4f} {r[:, 1].mean():8.4f} "
                  f"{r[:, 2].mean():7.0f}  {np.round(r[:, 0], 4).tolist()}", flush=True)


if __name__ == "__main__":
    main()
