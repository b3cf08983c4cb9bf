#!/usr/bin/env python
"""Long fuzz run (issue 7, part 3): the properties of tests/test_fuzz.py with
many more examples.

    python tools/fuzz_long.py                      # 2000 training, 2000 loader examples
    python tools/fuzz_long.py --examples 10000 --loader-examples 5000 --random
    python tools/fuzz_long.py --only train --examples 500 --deadline 0

Properties (see tests/test_fuzz.py for the details):

  train   fit -> predict -> save -> load -> predict over shapes, dtypes, layouts,
          NaN / inf / magnitude patterns, weights, objectives and parameters:
          never raises, finite predictions, valid trees, training raw scores
          equal predict(X_train), loaded predictions bit-identical.
  loader  a saved model with mutated fields loads and predicts finite values,
          or raises gbmo.ModelFormatError — nothing else.
  text    the saved text with one character changed and / or truncated: same.

Runs in-process with faulthandler enabled: a segfault kills the run and
prints the Python stack of the example being run. The exit status is 1 when
any property failed. By default the examples are derandomized (the same run
each time); --random draws new ones (add --seed N to repeat a random run).
"""
import argparse
import faulthandler
import importlib.util
import pathlib
import sys
import time
import traceback

HERE = pathlib.Path(__file__).resolve().parent
TEST_FILE = HERE.parent / "tests" / "test_fuzz.py"


def _load_properties():
    spec = importlib.util.spec_from_file_location("gbmo_test_fuzz", TEST_FILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _settings(args, max_examples):
    from hypothesis import HealthCheck, Phase, settings

    phases = list(Phase)
    if args.no_shrink:
        phases = [p for p in phases if p is not Phase.shrink]
    return settings(
        max_examples=max_examples,
        deadline=None if args.deadline <= 0 else args.deadline,
        derandomize=not args.random,
        database=None,
        phases=phases,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


def _build(fz, args):
    from hypothesis import assume, given, note, seed
    from hypothesis import strategies as st

    def train_property(case):
        fz.check_train_save_load(case)

    def loader_property(model_index, mutations):
        import json

        models, X = fz.base_models()
        data = fz.mutate_model(models[model_index], mutations)
        note(fz.describe_mutations(models[model_index], mutations))
        try:
            text = json.dumps(data)
        except (ValueError, RecursionError):
            assume(False)
        fz.check_mutated_model_loads_or_is_rejected(text, X)

    def text_property(model_index, cut, flip, char):
        import json
        import math

        models, X = fz.base_models()
        text = json.dumps(models[model_index])
        position = flip % len(text)
        corrupted = text[:position] + char + text[position + 1:]
        truncated = corrupted[: max(1, int(math.floor(cut * len(corrupted))))]
        for candidate in (corrupted, truncated):
            fz.check_mutated_model_loads_or_is_rejected(candidate, X)

    tests = {
        "train": (args.examples, given(case=fz.training_cases())(train_property)),
        "loader": (args.loader_examples,
                   given(model_index=st.integers(0, 2 * fz.N_MODELS - 1),
                         mutations=fz.loader_mutations())(loader_property)),
        "text": (args.text_examples,
                 given(model_index=st.integers(0, 2 * fz.N_MODELS - 1), cut=st.floats(0.0, 1.0),
                       flip=st.integers(0, 2**16),
                       char=st.sampled_from(list('0123456789-.,[]{}":eEaN ')))(text_property)),
    }
    built = {}
    for name, (count, test) in tests.items():
        test = _settings(args, count)(test)
        if args.random and args.seed is not None:
            test = seed(args.seed)(test)
        built[name] = (count, test)
    return built


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=2000,
                        help="training examples (default 2000)")
    parser.add_argument("--loader-examples", type=int, default=2000,
                        help="mutated-model examples (default 2000)")
    parser.add_argument("--text-examples", type=int, default=500,
                        help="corrupted-text examples (default 500)")
    parser.add_argument("--only", choices=["train", "loader", "text"], action="append",
                        help="run only these properties (repeatable)")
    parser.add_argument("--deadline", type=float, default=5000,
                        help="time budget per example in ms; 0 disables (default 5000)")
    parser.add_argument("--random", action="store_true",
                        help="new random examples instead of the derandomized set")
    parser.add_argument("--seed", type=int, default=None, help="seed for --random")
    parser.add_argument("--no-shrink", action="store_true",
                        help="report the first failing example without shrinking it")
    args = parser.parse_args(argv)

    faulthandler.enable()
    fz = _load_properties()
    tests = _build(fz, args)
    failed = []
    for name in args.only or ["train", "loader", "text"]:
        count, test = tests[name]
        start = time.perf_counter()
        print(f"[{name}] {count} examples ...", flush=True)
        try:
            test()
        except Exception:  # a property failed: report it, run the others
            failed.append(name)
            traceback.print_exc()
            print(f"[{name}] FAILED after {time.perf_counter() - start:.1f} s", flush=True)
        else:
            print(f"[{name}] passed in {time.perf_counter() - start:.1f} s", flush=True)
    if failed:
        print(f"failed properties: {', '.join(failed)}")
        return 1
    print("all properties passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
