"""Each boosting round's thread count, chosen from how the machine is used.

When other processes hold the cores, every parallel region waits for its
slowest thread, and the scheduler may have parked that thread for a time
slice. Beside two busy processes on 2 cores, 50 rounds on 2 fixed threads
took up to 81 s where 1 thread took 0.6 s, and LightGBM up to 266 s
(benchmarks/README.md, "Busy cores"). A tree does not depend on the thread
count, bit for bit, so the count may follow the machine without changing
the model. adaptive_threads=False keeps it fixed (FixedThreadCount).

- Training starts on the CPUs that other processes' running tasks leave
  free, where /proc tells (on a machine the process may use all of), and
  never on more threads than the CPUs.
- The signal after that is the CPU time the process got against its wall
  time times its threads, over rounds of at least JUDGED_SECONDS (another
  thread's CPU time is only brought up to date at a scheduler tick). On free
  cores the threads spin between regions and that share is about 1; when
  they wait for a core it falls to the share of threads that ran. A serial
  stretch (a Python objective, say) lowers it too, which is why a fallback
  is kept only while it is measured to be faster.
- Trying the full count again while the cores are still taken can cost a
  second: the woken thread may queue behind a busy process on its sibling's
  core, and then each parallel region waits a time slice. So a try waits
  until the machine's CPUs were idle enough, where /proc/stat tells, and
  until the fallback has run PROBE_SPACING times the last failed try's
  excess.
"""
import os
import time
from collections import deque

from .parallel import available_cpus, in_forked_child, thread_count

# the share of the threads' time that they held a core, below which rounds
# count as starved and drop the thread count
STARVED_SHARE = 0.75
# the rounds whose share is judged together last at least this long
JUDGED_SECONDS = 0.05
# rounds on the fallback count before a round tries the full count again
FALLBACK_ROUNDS = 8
# a try of the full count wins when its round takes less than this share of
# the fallback's median round (rounds differ in cost, so a tie is no win)
PROBE_MARGIN = 0.9
# a failed try of the full count waits this many times its excess: trying
# then takes at most a tenth of the time
PROBE_SPACING = 10
# a try waits for this share of the extra threads' CPUs to have been idle,
# over the last IDLE_WINDOW seconds or less
IDLE_SHARE = 0.5
IDLE_WINDOW = 1.0


def machine_idle_seconds():
    """CPU-seconds all CPUs of the machine spent idle since boot, or None
    where /proc/stat does not tell."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = stat.readline().split()
        return (int(fields[4]) + int(fields[5])) / os.sysconf("SC_CLK_TCK")  # idle, iowait
    except (OSError, ValueError, IndexError):
        return None


def other_running_tasks():
    """Tasks of other processes running or ready to run on the machine now,
    or None where /proc does not tell. This process's own running threads
    (this one, and OpenMP threads still spinning after a parallel region)
    are left out."""
    try:
        with open("/proc/loadavg", encoding="ascii") as loadavg:
            running = int(loadavg.read().split()[3].split("/")[0])
        for thread in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{thread}/stat", encoding="ascii") as stat:
                # the state follows the command name, which may hold spaces
                running -= stat.read().rsplit(")", 1)[1].split()[0] == "R"
    except (OSError, ValueError, IndexError):
        return None
    return max(0, running)


def thread_governor(params):
    """The governor of a training run's rounds, for resolved params."""
    n_threads = thread_count(params["n_threads"])
    if params["adaptive_threads"] and n_threads > 1:  # one thread has nothing to govern
        return ThreadGovernor(n_threads)
    return FixedThreadCount(n_threads)


def may_use_every_cpu():
    return available_cpus() >= (os.cpu_count() or 1)


def _unknown():
    return None


class FixedThreadCount:
    """The governor's interface with the count never changing."""

    def __init__(self, n_threads):
        self.n_threads = self.current = n_threads

    def round_threads(self):
        # a run started before a fork keeps its count: one thread in the child
        return 1 if in_forked_child() else self.n_threads

    def round_done(self):
        pass


class ThreadGovernor:
    """round_threads() before a round gives its thread count; round_done()
    after it measures the round. n_threads is the most it ever gives (the
    asked count, at most the CPUs); `current` is the count before the first
    round."""

    def __init__(self, n_threads, wall_clock=time.perf_counter, cpu_clock=time.process_time,
                 idle_clock=machine_idle_seconds, others_running=other_running_tasks,
                 cpus=available_cpus, whole_machine=may_use_every_cpu):
        if not whole_machine():
            # the machine's readings would count CPUs this process cannot run on
            idle_clock = others_running = _unknown
        n_cpus = cpus()
        self.n_threads = max(1, min(n_threads, n_cpus))
        self.wall_clock, self.cpu_clock, self.idle_clock = wall_clock, cpu_clock, idle_clock
        self.starved_share = STARVED_SHARE
        self.calibrating = False
        self.probe_after = 0.0  # seconds on the fallback before the next try
        self.probing = False
        self._reset_window()
        others = others_running() if self.n_threads > 1 else None
        self.current = max(1, min(self.n_threads, n_cpus - (others or 0)))
        self._start_fallback()  # a start below n_threads must earn its keep too

    def round_threads(self):
        self.probing = (self.current < self.n_threads
                        and len(self.fallback_walls) == FALLBACK_ROUNDS
                        and self.fallback_seconds >= self.probe_after
                        and self._cpus_were_idle())
        self.threads = self.n_threads if self.probing else self.current
        self.started = self.wall_clock(), self.cpu_clock()
        return 1 if in_forked_child() else self.threads

    def round_done(self):
        wall = self.wall_clock() - self.started[0]
        cpu = self.cpu_clock() - self.started[1]
        if self.probing:
            self._judge_probe(wall)
            return
        if self.current < self.n_threads:
            self.fallback_walls.append(wall)  # the last FALLBACK_ROUNDS
            self.fallback_seconds += wall
        if self.current > 1:
            self.window_wall += wall
            self.window_cpu += cpu
            if self.window_wall >= JUDGED_SECONDS:
                self._judge_window()

    def _judge_window(self):
        share = self.window_cpu / (self.window_wall * self.current)
        if self.calibrating:
            # the first window after the full count won a try on idle CPUs:
            # its share is what free cores give this run (below 1 when the
            # rounds have serial stretches), and starving is measured from it
            self.starved_share = STARVED_SHARE * min(1.0, share)
            self.calibrating = False
        elif share < self.starved_share:
            # down to the threads that held a core, on average
            running = round(self.window_cpu / self.window_wall)
            self.current = max(1, min(self.current - 1, running))
            self._start_fallback()
        self._reset_window()

    def _judge_probe(self, wall):
        walls = sorted(self.fallback_walls)
        fallback_wall = walls[len(walls) // 2]
        if wall < PROBE_MARGIN * fallback_wall:
            self.current = self.n_threads
            self.calibrating = True
            self.probe_after = 0.0
            self._reset_window()
        else:
            self.probe_after = PROBE_SPACING * max(0.0, wall - fallback_wall)
        self._start_fallback()

    def _reset_window(self):
        self.window_wall = self.window_cpu = 0.0

    def _start_fallback(self):
        self.fallback_walls = deque(maxlen=FALLBACK_ROUNDS)
        self.fallback_seconds = 0.0
        self.idle_since = self.wall_clock(), self.idle_clock()

    def _cpus_were_idle(self):
        wall_then, idle_then = self.idle_since
        wall_now, idle_now = self.wall_clock(), self.idle_clock()
        if idle_then is None or idle_now is None:
            return True
        wall = wall_now - wall_then
        if idle_now - idle_then >= IDLE_SHARE * (self.n_threads - self.current) * wall:
            return True
        if wall >= IDLE_WINDOW:
            self.idle_since = wall_now, idle_now
        return False
