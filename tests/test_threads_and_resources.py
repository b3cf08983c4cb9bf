"""Threads and resources: concurrent predictions on one booster, training
beside prediction, one OpenMP thread meaning one, no leak over 500
fit / predict / save / load cycles, and an interrupted fit."""
import gc
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import tracemalloc

import numpy as np
import pytest

import gbmo

RNG = np.random.default_rng(61)
X = RNG.normal(size=(3000, 6))
Y = np.c_[X[:, 0] + X[:, 1], np.sin(X[:, 2])]
QUIET = {"verbosity": 0}


def _run_in_threads(target, n_threads):
    results, errors = [None] * n_threads, []

    def work(i):
        try:
            results[i] = target(i)
        except BaseException as err:  # pragma: no cover - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors
    return results


def test_eight_threads_predicting_on_one_booster_match_serial_results():
    booster = gbmo.train({**QUIET, "max_leaves": 16}, gbmo.Dataset(X, Y), 30)
    blocks = np.array_split(RNG.normal(size=(8000, 6)), 8)
    serial = [booster.predict(block) for block in blocks]
    for _ in range(3):
        concurrent = _run_in_threads(lambda i: booster.predict(blocks[i], n_threads=2), 8)
        for got, expected in zip(concurrent, serial):
            np.testing.assert_array_equal(got, expected)
    leaves = _run_in_threads(lambda i: booster.predict_leaf(blocks[i]), 8)
    for got, block in zip(leaves, blocks):
        np.testing.assert_array_equal(got, booster.predict_leaf(block))


def test_training_in_one_thread_while_another_predicts():
    model = gbmo.train(QUIET, gbmo.Dataset(X, Y), 20)
    expected_prediction = model.predict(X)
    expected_model = gbmo.train(QUIET, gbmo.Dataset(X, Y[:, 0]), 15).predict(X)

    def work(i):
        if i == 0:
            return gbmo.train(QUIET, gbmo.Dataset(X, Y[:, 0]), 15).predict(X)
        return [model.predict(X) for _ in range(5)]

    trained, predictions = _run_in_threads(work, 2)
    np.testing.assert_array_equal(trained, expected_model)
    for prediction in predictions:
        np.testing.assert_array_equal(prediction, expected_prediction)


def test_predict_releases_the_gil():
    """While one thread predicts (a few hundred ms in the kernel), the main
    thread keeps running Python code."""
    booster = gbmo.train({**QUIET, "max_leaves": 63}, gbmo.Dataset(X, Y), 100)
    big = RNG.normal(size=(300_000, 6))
    worker = threading.Thread(target=booster.predict, args=(big,), kwargs={"n_threads": 1})
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    try:
        worker.start()
        progress = 0
        while worker.is_alive():
            progress += 1
        worker.join()
    finally:
        sys.setswitchinterval(previous)
    assert progress > 10_000


_THREAD_COUNT_SCRIPT = textwrap.dedent("""
    import os, sys
    import numpy as np
    import gbmo
    X = np.random.default_rng(0).normal(size=(400_000, 4))
    booster = gbmo.train({"verbosity": 0, "n_threads": 1}, gbmo.Dataset(X[:2000], X[:2000, 0]), 3)
    threads = lambda: set(os.listdir("/proc/self/task"))
    before = threads()
    booster.predict(X, n_threads=1)
    started_by_one = threads() - before
    booster.predict(X, n_threads=2)
    print(len(started_by_one), len(threads() - before))
""")


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="needs Linux /proc")
def test_n_threads_one_starts_no_openmp_thread():
    result = subprocess.run([sys.executable, "-c", _THREAD_COUNT_SCRIPT], capture_output=True,
                            text=True, cwd=tempfile.gettempdir(), timeout=120,
                            env={**os.environ, "OMP_NUM_THREADS": "4"})
    assert result.returncode == 0, result.stderr
    # Thread ids, not counts: a thread that is still exiting when the first
    # look is taken (as a pool's worker can be) would make a count drop.
    started_by_one, started_by_two = map(int, result.stdout.split())
    assert started_by_one == 0
    assert started_by_two > 0  # the check can see an OpenMP team when there is one


_SMALL_STACKS_SCRIPT = textwrap.dedent("""
    import threading
    import numpy as np
    import gbmo
    rng = np.random.default_rng(0)
    X = np.sort(rng.integers(0, 8, size=(20_000, 5)).astype(float), axis=0)
    Y = np.c_[X[:, 0] + X[:, 1], X[:, 2], X[:, 3] - X[:, 4]]
    threading.stack_size(64 * 1024)
    fits = []
    for y in (Y[:, 0], Y):  # rows of 2 and 4 values
        worker = threading.Thread(target=lambda y=y: fits.append(
            gbmo.train({"verbosity": 0, "n_threads": 2}, gbmo.Dataset(X, y), 3)))
        worker.start()
        worker.join()
    print(len(fits))
""")


def test_training_fits_in_small_thread_stacks():
    """The histogram kernels' scratch (add_rows_interleaved's 48 KB) is
    thread-local storage, not stack: on the stack a training thread of 64
    KB, and OpenMP threads of OMP_STACKSIZE=48K, crashed the process."""
    result = subprocess.run([sys.executable, "-c", _SMALL_STACKS_SCRIPT], capture_output=True,
                            text=True, cwd=tempfile.gettempdir(), timeout=120,
                            env={**os.environ, "OMP_STACKSIZE": "48K"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["2"]


def _cycle(path, seed):
    rng = np.random.default_rng(seed)
    X_small = rng.normal(size=(200, 4))
    booster = gbmo.train({**QUIET, "max_leaves": 8, "min_samples_leaf": 5},
                         gbmo.Dataset(X_small, X_small[:, :2]), 5)
    booster.save_model(path)
    loaded = gbmo.Booster(model_file=path)
    assert np.array_equal(loaded.predict(X_small), booster.predict(X_small))


def _rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_no_leak_over_500_fit_predict_save_load_cycles(tmp_path):
    path = tmp_path / "model.json"
    for seed in range(20):  # warm-up: caches, lazy imports, allocator pools
        _cycle(path, seed)
    gc.collect()
    tracemalloc.start()
    rss_start = _rss_bytes()
    traced = []
    try:
        for seed in range(500):
            _cycle(path, seed)
            if seed % 100 == 99:
                gc.collect()
                traced.append(tracemalloc.get_traced_memory()[0])
    finally:
        tracemalloc.stop()
    rss_growth = _rss_bytes() - rss_start
    # Python-level memory flat after the first block, process memory bounded.
    assert max(traced) - traced[0] < 256 * 1024, traced
    assert rss_growth < 32 * 2**20, rss_growth


def test_interrupted_fit_leaves_a_booster_usable_up_to_the_last_finished_round():
    seen = {}

    def interrupt(env):
        seen["booster"] = env.model
        if env.iteration == 4:
            raise KeyboardInterrupt

    for params in ({}, {"tree_mode": "single_output"}):
        with pytest.raises(KeyboardInterrupt):
            gbmo.train({**QUIET, **params}, gbmo.Dataset(X, Y), 50, callbacks=[interrupt])
        interrupted = seen["booster"]
        assert interrupted.current_iteration() == 5
        finished = gbmo.train({**QUIET, **params}, gbmo.Dataset(X, Y), 5)
        np.testing.assert_array_equal(interrupted.predict(X), finished.predict(X))
        reloaded = gbmo.Booster(model_str=interrupted.model_to_string())
        np.testing.assert_array_equal(reloaded.predict(X), finished.predict(X))
