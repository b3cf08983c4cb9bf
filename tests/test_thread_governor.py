"""ThreadGovernor: each round's thread count from how the last rounds ran,
driven here by simulated clocks; and training that changes its thread count
between rounds grows the same model."""
import os
import time

import numpy as np
import pytest
import scipy.sparse as sp
import gbmo
import gbmo.engine
import gbmo.thread_governor
from gbmo.params import resolve_params
from gbmo.losses import MultiTaskLoss
from gbmo.thread_governor import (FALLBACK_ROUNDS, IDLE_WINDOW, JUDGED_SECONDS, PROBE_SPACING,
                                  STARVED_SHARE, FixedThreadCount, ThreadGovernor,
                                  machine_idle_seconds, other_running_tasks, thread_governor)

# rounds of 0.01 s that one judgement of the CPU share takes
JUDGED_ROUNDS = round(JUDGED_SECONDS / 0.01)


class Machine:
    """Clocks a test advances by hand: wall seconds, this process's CPU
    seconds, and the machine's idle CPU seconds (None: not known); and the
    tasks of other processes running when training starts."""

    def __init__(self, idle_known=True, cpus=8, others_running=0):
        self.wall = self.cpu = 0.0
        self.idle = 0.0 if idle_known else None
        self.cpus, self.others_running = cpus, others_running

    def governor(self, n_threads):
        return ThreadGovernor(n_threads, lambda: self.wall, lambda: self.cpu,
                              lambda: self.idle, lambda: self.others_running,
                              lambda: self.cpus, lambda: True)

    def run_round(self, governor, wall, running_threads=None, idle_cpus=0.0):
        """One round of `wall` seconds (or wall(thread count)) in which
        `running_threads` of the governor's threads held a core (all of them
        by default)."""
        threads = governor.round_threads()
        wall = wall(threads) if callable(wall) else wall
        running = threads if running_threads is None else min(threads, running_threads)
        self.wall += wall
        self.cpu += wall * running
        if self.idle is not None:
            self.idle += wall * idle_cpus
        governor.round_done()
        return threads


def test_free_cores_keep_every_thread():
    machine = Machine()
    governor = machine.governor(4)
    assert [machine.run_round(governor, 0.01) for _ in range(50)] == [4] * 50


def test_starved_rounds_drop_to_the_threads_that_ran():
    machine = Machine()
    for n_threads, running, fallback in [(8, 3, 3), (2, 1, 1)]:
        governor = machine.governor(n_threads)
        counts = [machine.run_round(governor, 0.01, running_threads=running)
                  for _ in range(JUDGED_ROUNDS + 2)]
        # judged once JUDGED_SECONDS of rounds are in (float sums of 0.01: one more)
        assert counts[:JUDGED_ROUNDS] == [n_threads] * JUDGED_ROUNDS
        assert counts[-1] == fallback


def test_one_long_starved_round_is_judged_at_once():
    machine = Machine()
    governor = machine.governor(2)
    machine.run_round(governor, 1.3, running_threads=1)
    assert machine.run_round(governor, 0.01) == 1


def test_cpu_time_that_lags_a_tick_on_short_rounds_does_not_drop_threads():
    """Another thread's CPU time is brought up to date at a scheduler tick, so
    a short round reads half or one and a half of its real share; judged
    over JUDGED_SECONDS the share is right."""
    machine = Machine()
    governor = machine.governor(2)
    counts = []
    for i in range(200):
        counts.append(governor.round_threads())
        machine.wall += 0.0035
        machine.cpu += 0.0035 * (1 if i % 2 else 3)
        governor.round_done()
    assert counts == [2] * 200


@pytest.mark.parametrize("cpus, others_running, n_threads, start", [
    (2, 2, 2, 1), (8, 3, 8, 5), (8, 3, 4, 4), (2, 0, 2, 2), (2, 9, 4, 1)])
def test_training_starts_on_the_cpus_other_running_tasks_leave(cpus, others_running,
                                                               n_threads, start):
    machine = Machine(cpus=cpus, others_running=others_running)
    governor = machine.governor(n_threads)
    assert governor.current == start
    assert machine.run_round(governor, 0.01) == start


def test_a_process_that_may_not_use_every_cpu_ignores_the_machine_readings():
    governor = ThreadGovernor(2, others_running=lambda: 5, idle_clock=lambda: 0.0,
                              cpus=lambda: 2, whole_machine=lambda: False)
    assert governor.current == 2 and governor.idle_clock() is None


@pytest.mark.parametrize("cpus, start", [(8, 4), (2, 2)])
def test_without_running_tasks_training_starts_on_every_cpu_up_to_n_threads(cpus, start):
    governor = ThreadGovernor(4, others_running=lambda: None, cpus=lambda: cpus)
    assert governor.current == start


def test_no_try_of_the_full_count_while_the_cpus_stay_busy():
    machine = Machine()
    governor = machine.governor(2)
    machine.run_round(governor, 1.0, running_threads=1)
    assert {machine.run_round(governor, 0.01) for _ in range(5000)} == {1}


def test_idle_cpus_bring_back_the_full_count_when_it_is_faster():
    machine = Machine()
    governor = machine.governor(2)
    machine.run_round(governor, 1.0, running_threads=1)
    counts = []
    for _ in range(FALLBACK_ROUNDS + 20):
        threads = governor.round_threads()
        wall = 0.01 if threads == 1 else 0.006
        machine.wall += wall
        machine.cpu += wall * threads
        machine.idle += wall * (2 - threads)
        governor.round_done()
        counts.append(threads)
    # FALLBACK_ROUNDS on one thread, then a try that wins and stays
    assert counts[:FALLBACK_ROUNDS] == [1] * FALLBACK_ROUNDS
    assert counts[FALLBACK_ROUNDS:] == [2] * 20


def test_idle_cpus_are_judged_over_the_last_window_not_since_the_drop():
    machine = Machine(cpus=2, others_running=2)
    governor = machine.governor(2)
    for _ in range(2000):  # 20 s busy
        machine.run_round(governor, 0.01)
    counts = [machine.run_round(governor, 0.01, idle_cpus=1.0)
              for _ in range(int(2 * IDLE_WINDOW / 0.01))]
    assert 2 in counts


def test_a_failed_try_waits_ten_times_its_excess():
    machine = Machine(idle_known=False)
    governor = machine.governor(2)
    machine.run_round(governor, 1.0, running_threads=1)
    counts = []
    for _ in range(400):
        threads = governor.round_threads()
        wall = 0.01 if threads == 1 else 0.21  # a try costs 0.2 s more
        machine.wall += wall
        machine.cpu += wall
        governor.round_done()
        counts.append(threads)
    tries = [i for i, threads in enumerate(counts) if threads == 2]
    assert tries[0] == FALLBACK_ROUNDS
    # 0.2 s of excess -> the next try after 2 s, 200 rounds of 0.01 s
    spacing = round(PROBE_SPACING * 0.2 / 0.01)
    assert spacing <= tries[1] - tries[0] - 1 <= spacing + 1  # float sums of 0.01
    assert len(tries) == 2


def test_a_serial_stretch_that_lowers_the_share_does_not_keep_the_fallback():
    """A round that spends half its time in Python: the threads' share is
    low on free cores too, but the full count is faster, so the try wins,
    and the share it had becomes normal instead of a reason to drop again."""
    machine = Machine()
    governor = machine.governor(2)
    counts = []
    for _ in range(60):
        threads = governor.round_threads()
        wall = 0.01 if threads == 2 else 0.015
        machine.wall += wall
        machine.cpu += 0.012 if threads == 2 else 0.015  # share 0.6 on two threads
        machine.idle += wall * (2 - (0.012 if threads == 2 else 0.015) / wall)
        governor.round_done()
        counts.append(threads)
    assert counts[:JUDGED_ROUNDS + 1] == [2] * JUDGED_ROUNDS + [1]
    assert counts[-30:] == [2] * 30


@pytest.mark.skipif(not os.path.exists("/proc/stat")
                    or len(os.sched_getaffinity(0)) < os.cpu_count(),
                    reason="the machine readings come from Linux's /proc, for a process that "
                           "may use every CPU")
def test_the_machine_readings_read_proc():
    first, others = machine_idle_seconds(), other_running_tasks()
    time.sleep(0.05)
    assert first is not None and machine_idle_seconds() >= first
    assert others is not None and others >= 0


class Alternating:
    """A governor that gives 2 and 1 threads by turns."""

    def __init__(self, n_threads):
        self.n_threads = self.current = n_threads
        self.counts = iter([2, 1] * 6)

    def round_threads(self):
        return next(self.counts)

    def round_done(self):
        pass


def _rounds_on(params, dataset, monkeypatch):
    """12 rounds with the thread count alternating; the model string and the
    count each round saw."""
    monkeypatch.setattr(gbmo.thread_governor, "ThreadGovernor", Alternating)
    seen = []
    booster = gbmo.train(params, dataset, 12,
                         callbacks=[lambda env: seen.append(env.params["n_threads"])])
    return booster.model_to_string(), seen


def test_changing_threads_between_rounds_grows_the_same_model(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 5))
    Y = np.c_[X[:, 0] + X[:, 1] ** 2, np.sin(X[:, 2])] + rng.normal(size=(3000, 2)) * 0.1
    params = {"max_leaves": 15, "n_threads": 2, "subsample": 0.8, "colsample_bynode": 0.7}
    fixed = gbmo.train(params, gbmo.Dataset(X, Y), 12).model_to_string()
    varied, seen = _rounds_on(params, gbmo.Dataset(X, Y), monkeypatch)
    assert seen == [2, 1] * 6
    assert varied == fixed


def test_a_sparse_label_run_changes_threads_between_rounds_too(monkeypatch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6))
    Y = sp.csr_matrix((X @ rng.normal(size=(6, 20)) > 1.5).astype(float))
    params = {"split": "sparse", "top_k": 3, "max_leaves": 8, "n_threads": 2}
    fixed = gbmo.train(params, gbmo.Dataset(X, Y), 12).model_to_string()
    varied, seen = _rounds_on(params, gbmo.Dataset(X, Y), monkeypatch)
    assert seen == [2, 1] * 6
    assert varied == fixed


def test_a_multitask_loss_passes_its_thread_count_to_its_tasks():
    loss = MultiTaskLoss([("mse", [0]), ("sigmoid", [1])])
    loss.n_threads = 3
    assert [task.n_threads for task in loss.losses] == [3, 3]



def test_row_wise_histograms_do_not_depend_on_the_threads(monkeypatch):
    """The first trees may run on fewer threads than the run (the governor
    starts low on a busy machine); the features built row by row, whose
    large nodes are added in chunks of rows, still give the trees and
    predictions of one thread, bit for bit."""
    rng = np.random.default_rng(0)
    X = (rng.random((20000, 20)) < 0.05).astype(float)  # one-hot-like: built by row
    y = X @ rng.normal(size=20) + 0.1 * rng.normal(size=20000)

    class StartsLow:
        def __init__(self, n_threads):
            self.n_threads, self.current = n_threads, 1

        def round_threads(self):
            threads, self.current = self.current, self.n_threads
            return threads

        def round_done(self):
            pass

    one = gbmo.train({"n_threads": 1, "verbosity": -1}, gbmo.Dataset(X, y), 4)
    monkeypatch.setattr(gbmo.thread_governor, "ThreadGovernor", StartsLow)
    data = gbmo.Dataset(X, y)
    trainer = gbmo.engine._Trainer(resolve_params({"n_threads": 2}), data, [], [])
    trainer.step(0)
    (_, _, entries), = data.dense_layouts.values()
    assert entries is not None  # every feature built by row
    two = gbmo.train({"n_threads": 2, "verbosity": -1}, gbmo.Dataset(X, y), 4)
    for a, b in zip(one.trees, two.trees):
        np.testing.assert_array_equal(a.node_feature, b.node_feature)
        np.testing.assert_array_equal(a.node_bin, b.node_bin)
    np.testing.assert_array_equal(one.predict(X), two.predict(X))


def test_every_busy_spell_drops_threads_not_only_the_first():
    """A try that wins on idle CPUs shows that a busy spell ended, not that a
    low share is normal: the next spell drops the threads again."""
    machine = Machine(cpus=2)
    governor = machine.governor(2)
    for spell in range(4):
        busy = [machine.run_round(governor, 0.01, running_threads=1) for _ in range(300)]
        for _ in range(300):
            machine.run_round(governor, lambda threads: 0.01 / threads, idle_cpus=1.0)
        assert busy[-200:] == [1] * 200, spell
        assert governor.current == 2, spell
        assert governor.starved_share == pytest.approx(STARVED_SHARE), spell


def test_never_more_threads_than_cpus_not_even_to_try():
    machine = Machine(idle_known=False, cpus=2)
    governor = machine.governor(8)
    counts = [machine.run_round(governor, 0.01) for _ in range(100)]
    assert max(counts) == 2


def test_a_try_that_only_ties_the_fallback_does_not_win():
    machine = Machine(idle_known=False, cpus=2)
    governor = machine.governor(2)
    machine.run_round(governor, 1.0, running_threads=1)
    counts = [machine.run_round(governor, 0.01) for _ in range(FALLBACK_ROUNDS + 5)]
    assert counts[FALLBACK_ROUNDS] == 2 and counts[FALLBACK_ROUNDS + 1:] == [1] * 4


def test_one_thread_is_not_governed():
    """One thread has nothing to judge: the fixed count, without clocks."""
    one = thread_governor(resolve_params({"n_threads": 1}))
    assert isinstance(one, FixedThreadCount) and one.round_threads() == 1
    assert isinstance(thread_governor(resolve_params({"n_threads": 2})), ThreadGovernor)


def test_adaptive_threads_false_keeps_the_count():
    threads = thread_governor(resolve_params({"n_threads": 3, "adaptive_threads": False}))
    assert isinstance(threads, FixedThreadCount)
    assert [threads.round_threads() for _ in range(5)] == [3] * 5
    X = np.random.default_rng(0).normal(size=(200, 3))
    seen = []
    gbmo.train({"n_threads": 3, "adaptive_threads": False}, gbmo.Dataset(X, X[:, 0]), 3,
               callbacks=[lambda env: seen.append(env.params["n_threads"])])
    assert seen == [3, 3, 3]
