"""The default thread count follows what limits OpenMP: OMP_NUM_THREADS,
threadpoolctl (which joblib's workers use) and the process's CPU affinity."""
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import scipy.sparse
import threadpoolctl
from joblib import Parallel, delayed

import gbmo
from gbmo.params import resolve_params
import gbmo.parallel
from gbmo.parallel import available_cpus, cgroup_cpu_quota, default_threads, thread_count


def _in_subprocess(code, **env):
    """stdout's words of code run in a new interpreter, with OMP_NUM_THREADS
    only when env sets it; outside the source tree, whose gbmo is not built."""
    environment = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**environment, **env}, cwd=tempfile.gettempdir(), check=True)
    return result.stdout.split()


def test_default_is_every_cpu_the_process_may_use():
    code = "from gbmo.parallel import default_threads; print(default_threads())"
    assert _in_subprocess(code) == [str(len(os.sched_getaffinity(0)))]


def test_a_dataset_constructs_with_the_default_thread_count():
    X = np.random.default_rng(0).normal(size=(100, 3))
    dataset = gbmo.Dataset(X, X[:, 0]).construct(resolve_params({}))
    assert dataset.X_binned.shape == (3, 100)


@pytest.mark.parametrize("n_threads", [None, 0, -1])
def test_a_threadpoolctl_limit_is_the_default_for_training_and_prediction(n_threads):
    X = np.random.default_rng(0).normal(size=(50, 2))
    booster = gbmo.train({"n_threads": n_threads}, gbmo.Dataset(X, X[:, 0]), num_boost_round=2)
    with threadpoolctl.threadpool_limits(1, user_api="openmp"):
        trained_on = []
        gbmo.train({"n_threads": n_threads}, gbmo.Dataset(X, X[:, 0]), num_boost_round=2,
                   callbacks=[lambda env: trained_on.append(env.params["n_threads"])])
        assert trained_on == [1, 1]
        assert thread_count(resolve_params({"n_threads": n_threads})["n_threads"]) == 1
        assert booster._n_threads(None) == booster._n_threads(n_threads) == 1
    assert booster._n_threads(None) == default_threads()


def test_a_model_trained_on_a_given_count_predicts_on_it():
    X = np.random.default_rng(0).normal(size=(50, 2))
    booster = gbmo.train({"n_threads": 3}, gbmo.Dataset(X, X[:, 0]), num_boost_round=2)
    with threadpoolctl.threadpool_limits(1, user_api="openmp"):
        assert booster._n_threads(None) == 3


def test_an_explicit_count_overrides_the_limit():
    with threadpoolctl.threadpool_limits(1, user_api="openmp"):
        assert thread_count(resolve_params({"n_threads": 3})["n_threads"]) == 3


@pytest.mark.parametrize("asked, cores, kept", [(-2, 8, 7), (-4, 8, 5), (-8, 8, 1),
                                                (-100, 8, 1), (-2, 1, 1)])
def test_counts_below_minus_one_are_joblib_s_all_cores_but_some(monkeypatch, asked, cores,
                                                                 kept):
    """scikit-learn's and LightGBM's estimators take n_jobs=-2 (all but one
    core); gbmo refused it as out of range."""
    monkeypatch.setattr(gbmo.parallel, "default_threads", lambda: cores)
    assert resolve_params({"n_jobs": asked})["n_threads"] == kept
    X = np.random.default_rng(0).normal(size=(50, 2))
    booster = gbmo.train({"verbosity": -1}, gbmo.Dataset(X, X[:, 0]), num_boost_round=1)
    assert booster._n_threads(asked) == kept
    with pytest.raises(ValueError, match=r"n_threads = -5000 is out of range; allowed: an "
                                         r"integer in \[-4096, 4096\]"):
        booster.predict(X, n_threads=-5000)


def test_omp_num_threads_sets_the_default():
    code = ("import numpy as np, gbmo; X = np.arange(20.0).reshape(10, 2); "
            "print(gbmo.train({}, gbmo.Dataset(X, X[:, 0]), 1)._n_threads(None))")
    assert _in_subprocess(code, OMP_NUM_THREADS="1") == ["1"]


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs to narrow")
def test_cpu_affinity_narrowed_after_start_up_bounds_the_default():
    code = ("import os; from gbmo.parallel import default_threads; before = default_threads(); "
            "os.sched_setaffinity(0, {min(os.sched_getaffinity(0))}); "
            "print(before, default_threads())")
    before, after = _in_subprocess(code)
    assert int(before) >= 2 and after == "1"


def test_joblib_workers_share_the_cpus_instead_of_each_taking_them_all():
    counts = Parallel(n_jobs=2)(delayed(
        lambda: (default_threads(), os.environ.get("OMP_NUM_THREADS")))() for _ in range(2))
    for threads, omp_num_threads in counts:
        assert omp_num_threads is not None
        assert threads == min(int(omp_num_threads), len(os.sched_getaffinity(0)))
    if len(os.sched_getaffinity(0)) == 2:
        assert [threads for threads, _ in counts] == [1, 1]


_rng = np.random.default_rng(1)
_X = _rng.normal(size=(30000, 12))
_X[:, 6:] *= _rng.random((30000, 6)) < 0.05  # mostly zeros: built row by row
_X[_rng.random(_X.shape) < 0.02] = np.nan
_FILLED = np.nan_to_num(_X)
_Y = np.c_[_FILLED[:, 0] + _FILLED[:, 6], np.sin(_FILLED[:, 1]), _rng.normal(size=30000)]
_CLASSES = (_FILLED[:, 0] > 0).astype(int) + (_FILLED[:, 1] > 0.5)


@pytest.mark.parametrize("params, target", [
    ({}, _Y), ({"growth": "depthwise", "max_depth": 5}, _Y),
    ({"objective": "softmax", "num_class": 3}, _CLASSES), ({"split": "sparse", "top_k": 1}, _Y),
    ({"tree_mode": "single_output"}, _Y), ({"data_sample_strategy": "goss"}, _Y),
    ({"growth": "symmetric", "max_depth": 4}, _Y),
    ({"subsample": 0.7, "colsample_bynode": 0.5, "extra_trees": True}, _Y),
    ({"boosting": "dart"}, _Y), ({"sparse_x": True}, _Y)],
    ids=lambda p: str(p) if isinstance(p, dict) else "")
def test_the_model_does_not_depend_on_the_thread_count(params, target):
    """Bit for bit, which is what lets the thread governor change the count
    between rounds (README, "Busy machines"). The governor is off, so the
    2-thread run does run on 2 threads on a busy machine too."""
    params = dict(params)
    X = scipy.sparse.csr_matrix(_FILLED) if params.pop("sparse_x", False) else _X
    models = [gbmo.train({**params, "n_threads": threads, "seed": 3, "adaptive_threads": False},
                         gbmo.Dataset(X, target), 8).model_to_string() for threads in (1, 2)]
    assert models[0] == models[1]


@pytest.mark.parametrize("files, quota", [
    ({"cpu.max": "150000 100000\n"}, 2), ({"cpu.max": "100000 100000\n"}, 1),
    ({"cpu.max": "max 100000\n"}, None),
    ({"cpu/cpu.cfs_quota_us": "50000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 1),
    ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
    ({}, None)])
def test_a_cgroup_cpu_quota_is_read_from_v2_or_v1_files(tmp_path, files, quota):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cgroup_cpu_quota(str(tmp_path)) == quota


def test_a_cgroup_quota_bounds_the_cpus_and_so_the_default(monkeypatch):
    monkeypatch.setattr(gbmo.parallel, "cgroup_cpu_quota", lambda: 1)
    assert available_cpus() == 1
    assert default_threads() == 1


def _in_child(action, booster, X, Y, results):
    results.put(action(booster, X, Y).tolist())


def _predict(booster, X, Y):
    return booster.predict(X, n_threads=2)


def _refit(booster, X, Y):
    return booster.refit(X, Y).predict(X[:50])


def _update(booster, X, Y):
    booster.update()
    return booster.predict(X[:50])


@pytest.mark.skipif(not hasattr(os, "register_at_fork"), reason="fork is POSIX's")
# Python >= 3.12 warns of forking a process with threads: here that is the point
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
@pytest.mark.parametrize("action", [_predict, _refit, _update])
def test_a_process_forked_after_parallel_work_runs_on_one_thread(action):
    """libgomp's threads do not survive fork: a child forked after the parent
    ran a parallel region hung in its first one (LightGBM's child hangs too),
    also with a count worked out before the fork (a loaded model's loss, a
    training run's governor). It now runs on one thread, the same model."""
    import multiprocessing

    rng = np.random.default_rng(5)
    X = rng.normal(size=(20_000, 10))
    Y = X[:, :2] + 0.1 * rng.normal(size=(20_000, 2))
    params = {"verbosity": 0, "n_threads": 2}
    if action is _update:
        booster = gbmo.Booster({**params, "adaptive_threads": False}, gbmo.Dataset(X, Y))
        booster.update()
    else:
        booster = gbmo.Booster(model_str=gbmo.train(params, gbmo.Dataset(X, Y), 5)
                               .model_to_string())
    booster.predict(X, n_threads=2)  # a parallel region in the parent
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    child = context.Process(target=_in_child, args=(action, booster, X, Y, results))
    child.start()
    try:
        in_child = results.get(timeout=120)
    finally:
        child.join(timeout=10)
        if child.is_alive():
            child.kill()
    np.testing.assert_array_equal(np.array(in_child), action(booster, X, Y))
