"""How many threads a kernel call, or a map over Python-level tasks, gets."""

import contextlib
import contextvars
import functools
import os
from concurrent.futures import ThreadPoolExecutor

from ._core._openmp import openmp_max_threads

# A parallel region costs tens of microseconds when the cores are free and
# milliseconds when another process holds one, so calls with less work than
# this (counted in inner-loop updates) run on one thread.
PARALLEL_MIN_WORK = 1 << 13
# An element of a per-element kernel (a loss's gradient, a metric's term, a
# value binned, a row's walk down a tree) is worth several such updates.
WORK_PER_ELEMENT = 8


def default_threads():
    """The thread count that n_threads None, 0 or -1 stands for: the OpenMP
    runtime's (OMP_NUM_THREADS, or threadpoolctl's limit while one is in force,
    else the CPUs at start-up), at most the CPUs this process may run on now.
    os.cpu_count() alone would ignore all three, so a joblib worker would start
    a thread per core beside its siblings."""
    return max(1, min(openmp_max_threads(), available_cpus()))


# the most threads a count may ask for, and below -1 the most it may leave out
MAX_THREADS = 4096


def asked_threads(n_threads):
    """A thread count as given (None, an integer) -> as kept: None for the
    default (None, 0, -1), below -1 joblib's and scikit-learn's all but
    some, n_cpus + 1 + n_threads (-2: all cores but one), at least 1."""
    if n_threads is None or n_threads in (0, -1):
        return None
    if n_threads < -1:
        return max(1, default_threads() + 1 + int(n_threads))
    return int(n_threads)


def available_cpus():
    """The CPUs this process may run on now: its affinity, and at most its
    cgroup's CPU quota rounded up (a container started with --cpus=2 on a
    64-core host sees 64 CPUs, but gets the time of 2)."""
    if hasattr(os, "sched_getaffinity"):
        cpus = len(os.sched_getaffinity(0))
    else:
        cpus = os.cpu_count() or 1
    quota = cgroup_cpu_quota()
    return cpus if quota is None else max(1, min(cpus, quota))


@functools.lru_cache(maxsize=None)
def cgroup_cpu_quota(root="/sys/fs/cgroup"):
    """The CPUs' worth of time the process's cgroup allows, rounded up, or
    None where no quota is set or readable. cgroup v2's cpu.max ("quota
    period" or "max period"), else v1's cpu.cfs_quota_us and cfs_period_us
    (-1: none). A dozen lines, so not worth a dependency (joblib's loky
    reads the same files). Read once: every prediction asks for the CPUs."""
    try:
        with open(os.path.join(root, "cpu.max"), encoding="ascii") as cpu_max:
            quota, period = cpu_max.read().split()[:2]
    except (OSError, ValueError):
        try:
            with open(os.path.join(root, "cpu", "cpu.cfs_quota_us"), encoding="ascii") as f:
                quota = f.read().strip()
            with open(os.path.join(root, "cpu", "cpu.cfs_period_us"), encoding="ascii") as f:
                period = f.read().strip()
        except OSError:
            return None
    try:
        quota, period = int(quota), int(period)
    except ValueError:  # "max": no quota
        return None
    if quota <= 0 or period <= 0:
        return None
    return -(-quota // period)


# libgomp's thread pool does not survive fork: a process forked after its
# parent ran a parallel region hangs in its own first one (LightGBM's too).
# So a forked child runs gbmo on one thread, as PyTorch's forked children
# do; spawn and forkserver workers (and joblib's loky) keep their threads.
_in_forked_child = False


def _after_fork_in_child():
    global _in_forked_child
    _in_forked_child = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def in_forked_child():
    return _in_forked_child


def thread_count(n_threads):
    """n_threads as resolve_params left it (None for the default) -> a count;
    1 in a forked child, whatever was asked for."""
    if _in_forked_child:
        return 1
    return n_threads if n_threads is not None else default_threads()


# A caller's thread count for code it calls that takes none, such as a loss's
# transform(raw) (the plugin contract) under predict(n_threads=...). A context
# variable, so that predictions running at once in several threads keep theirs.
_CALLER_THREADS = contextvars.ContextVar("gbmo_caller_threads", default=None)


@contextlib.contextmanager
def caller_threads(n_threads):
    """Within the block, caller_thread_count gives n_threads."""
    token = _CALLER_THREADS.set(n_threads)
    try:
        yield
    finally:
        _CALLER_THREADS.reset(token)


def caller_thread_count(own):
    """The count an enclosing caller_threads block set, else own."""
    count = _CALLER_THREADS.get()
    return own if count is None else count


def threads_for(n_threads, work):
    """The threads for a kernel call of `work` updates; 1 in a forked child,
    also for a count worked out before the fork (a loss's, a model's)."""
    return n_threads if work >= PARALLEL_MIN_WORK and not _in_forked_child else 1


def map_in_threads(function, items, n_threads):
    """list(map(function, items)) on up to n_threads threads; one thread runs
    in the caller's, so n_threads=1 starts no thread at all."""
    items = list(items)
    n_workers = min(n_threads, len(items))
    if n_workers <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(n_workers) as pool:
        return list(pool.map(function, items))
