"""Training callbacks, as in LightGBM: plain callables that receive a
CallbackEnv after every round; raising EarlyStopException ends training. A
callback with a `close()` method has it called once training ends (however
it ends), e.g. to finish a progress bar."""
import numbers
import sys
import warnings
from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

from .metric_history import PER_OUTPUT, MetricHistory
from .training_callback import TrainingCallbackRounds, is_training_callback
from .validation import user_stacklevel


class EvalResult(NamedTuple):
    """One metric's value on one data set in a round, as LightGBM's (4.7):
    train's have 4 fields, cv's 5, the last the folds' standard deviation of
    the value (their mean). It unpacks and has a length as a tuple of those."""

    dataset_name: str
    metric_name: str
    metric_value: float
    maximize: bool
    metric_std_dev: Optional[float] = None

    def __len__(self):
        return 5 if self.is_cv_result() else 4

    def __iter__(self):
        return iter([getattr(self, field) for field in self._fields[:len(self)]])

    def is_cv_result(self):
        """Whether cv made it: metric_value is then the folds' mean."""
        return self.metric_std_dev is not None


@dataclass
class CallbackEnv:
    model: object
    # resolved; in train, n_threads is the round's own count (the thread
    # governor's), in cv the one asked for (each fold has its own)
    params: dict
    iteration: int            # 0-based index of the round just finished
    begin_iteration: int
    end_iteration: int
    # EvalResults: (data name, metric name, value, higher is better), and in
    # cv the folds' standard deviation of the value, as LightGBM's
    evaluation_result_list: list
    # the name of the training set's results when valid_sets holds it, else None
    training_set_name: str = None


class EarlyStopException(Exception):
    """Raised by a callback to end training. best_iteration is the 0-based
    index of the best round, as LightGBM's (env.iteration at that round):
    the booster then predicts with best_iteration + 1 rounds."""

    def __init__(self, best_iteration, best_score):
        super().__init__(best_iteration, best_score)
        self.best_iteration = best_iteration
        self.best_score = best_score


def ends_training(error):
    """Whether error is an early stop: gbmo's EarlyStopException, or another
    library's of that name with an integer best_iteration (LightGBM's
    early_stopping callback raises its own, which runs on gbmo's
    CallbackEnv; escaping train, it lost the model)."""
    return isinstance(error, EarlyStopException) or (
        type(error).__name__ == "EarlyStopException"
        and isinstance(getattr(error, "best_iteration", None), numbers.Integral))


def _is_lightgbm_callback(callback, kind):
    """Whether callback is LightGBM's callback class of kind (its
    _EarlyStoppingCallback, _LogEvaluationCallback, ...)."""
    cls = type(callback)
    return cls.__module__.partition(".")[0] == "lightgbm" and kind in cls.__name__


def stops_early(callback):
    """Whether callback may end training early: gbmo's early_stopping, or
    LightGBM's (its _EarlyStoppingCallback)."""
    return bool(getattr(callback, "stops_early", False)) or _is_lightgbm_callback(
        callback, "EarlyStopping")


def _as_gbmo_callback(callback):
    """gbmo's reset_parameter for LightGBM's, with the same schedules:
    LightGBM's calls env.model.reset_parameter, or, on a model that is not
    its Booster, the boosters of a CVBooster (AttributeError on gbmo's).
    Other callbacks as they are."""
    schedules = getattr(callback, "kwargs", None)
    if _is_lightgbm_callback(callback, "ResetParameter") and isinstance(schedules, dict):
        return reset_parameter(**schedules)
    return callback


def _shown(entry, show_stdv):
    """One result as the logs print it: "valid_0's rmse: 0.52", and in cv
    " + 0.013", the folds' standard deviation, with show_stdv."""
    data, metric, value = entry[:3]
    stdv = f" + {entry[4]:g}" if show_stdv and len(entry) > 4 else ""
    return f"{data}'s {metric}: {value:g}{stdv}"


def log_evaluation(period=1, show_stdv=True):
    """Prints the evaluation results every `period` rounds (and never for
    period <= 0); cv's with the folds' standard deviation unless show_stdv is
    False ("valid's rmse: 0.52 + 0.013"), as LightGBM's."""

    def _callback(env):
        if period > 0 and env.evaluation_result_list and (env.iteration + 1) % period == 0:
            results = "\t".join(_shown(entry, show_stdv) for entry in env.evaluation_result_list)
            print(f"[{env.iteration + 1}]\t{results}")

    _callback.order = 10
    return _callback


def record_evaluation(eval_result):
    """Fills the dict eval_result[data name][metric name] with one value per
    round, and for a multi-output metric [metric + "_per_output"] with the
    outputs' values, as the booster's evals_result; in cv, as LightGBM's,
    [metric + "-mean"] and [metric + "-stdv"]. Each run it serves starts
    the dict again, as LightGBM's does (a callback list reused across train,
    cv or fit calls)."""
    if not isinstance(eval_result, dict):
        raise TypeError("record_evaluation takes a dict")
    eval_result.clear()

    def _callback(env):
        if env.iteration == env.begin_iteration:
            eval_result.clear()
        for entry in env.evaluation_result_list:
            data, metric, value = entry[:3]
            history = eval_result.setdefault(data, MetricHistory())
            if len(entry) > 4:
                history.setdefault(f"{metric}-mean", []).append(value)
                history.setdefault(f"{metric}-stdv", []).append(entry[4])
                continue
            history.setdefault(metric, []).append(value)
            # the booster recorded this round's per-output values beside it
            per_output = getattr(env.model, "evals_result", {}).get(data, {}).get(
                metric + PER_OUTPUT)
            if per_output:
                history.setdefault(metric + PER_OUTPUT, []).append(per_output[-1])

    _callback.order = 20
    return _callback


def checked_min_delta(min_delta):
    """early_stopping's min_delta as a list of margins (one, or one per
    metric), refused unless numbers >= 0."""
    deltas = list(min_delta) if isinstance(min_delta, (list, tuple)) else [min_delta]
    deltas = deltas or [0.0]  # LightGBM's empty list: no margin
    if not all(isinstance(delta, numbers.Real) and delta >= 0 for delta in deltas):
        raise ValueError(f"min_delta must be a number >= 0 or a list of them (one, or one per "
                         f"metric), got {min_delta!r}")
    return deltas


def early_stopping(stopping_rounds, first_metric_only=False, verbose=True, min_delta=0.0):
    """Stops when a metric on a validation set has not improved by more than
    min_delta for stopping_rounds rounds; the booster then predicts with that
    metric's best round (booster.best_iteration). As in LightGBM, every
    validation set and metric is watched (first_metric_only: only the first
    metric, on every set), the first to stall decides, and when every round
    runs the best round of the first watched one is kept all the same. The
    training set is never watched, wherever valid_sets lists it; when it is
    the only set, early stopping is off, with a warning, as in LightGBM.
    The arguments are in LightGBM's order; verbose prints, as LightGBM's,
    when it starts and where the best round was. As in LightGBM,
    stopping_rounds <= 0 turns early stopping off, and min_delta may be a
    list: one value for every metric, or a value per metric in the order the
    metrics are evaluated, the same on every validation set."""
    if isinstance(stopping_rounds, bool) or not isinstance(stopping_rounds, numbers.Integral):
        raise ValueError(f"stopping_rounds must be an integer (<= 0: no early stopping), got "
                         f"{stopping_rounds!r}")
    deltas = checked_min_delta(min_delta)
    if stopping_rounds <= 0:
        return lambda env: None
    best = {}  # (data name, metric) -> (score, higher is better; iteration; value)
    metric_delta = {}  # metric -> its min_delta
    logged = {}  # iteration -> its results as log_evaluation prints them, for best rounds
    unscored = set()  # (data name, metric) warned of a NaN value

    def _report(headline, iteration):
        if verbose:
            print(f"{headline}, best iteration is:\n[{iteration + 1}]\t{logged[iteration]}")

    def _callback(env):
        if env.iteration == env.begin_iteration:
            best.clear()
            logged.clear()
            unscored.clear()
        results = env.evaluation_result_list
        if not results:
            raise ValueError("early stopping has no score to watch: it needs a validation set "
                             "(train's valid_sets; cv's folds are its own) and a metric, and "
                             "none was evaluated (an objective function has no default metric: "
                             "give metric= or feval=; metric='None' leaves only feval's)")
        watched = [r for r in results if r[0] != env.training_set_name]
        if not watched:
            if env.iteration == env.begin_iteration:
                warnings.warn("early stopping is off: the training set is the only one "
                              "evaluated (as LightGBM, it never watches it); give a validation "
                              "set", UserWarning, stacklevel=user_stacklevel())
            return
        if env.iteration == env.begin_iteration and verbose:
            print(f"Training until validation scores don't improve for {stopping_rounds} rounds")
        if env.iteration == env.begin_iteration:
            metric_delta.update(_deltas_by_metric(deltas, watched))
        if first_metric_only:
            watched = [r for r in watched if r[1] == results[0][1]]
        for data, metric, value, higher_is_better, *_ in watched:
            if value != value:  # NaN: no output had a value this round, nothing to keep
                if (data, metric) not in unscored:
                    unscored.add((data, metric))
                    warnings.warn(
                        f"early stopping: {data}'s {metric} is NaN in round "
                        f"{env.iteration + 1} (a metric of no value there, such as an auc of "
                        "labels of one class, or of no observed label), so that round does "
                        "not count for it; watch another metric or validation set if it "
                        "stays NaN",
                        UserWarning, stacklevel=user_stacklevel())
                continue
            score = value if higher_is_better else -value
            if (data, metric) not in best or score > best[data, metric][0] + metric_delta[metric]:
                best[data, metric] = (score, env.iteration, value)
                logged[env.iteration] = "\t".join(_shown(entry, True) for entry in results)
        for _, iteration, value in best.values():
            if env.iteration - iteration >= stopping_rounds:
                _report("Early stopping", iteration)
                raise EarlyStopException(iteration, value)
        if env.iteration == env.end_iteration - 1 and best:
            _, iteration, value = next(iter(best.values()))
            _report("Did not meet early stopping", iteration)
            raise EarlyStopException(iteration, value)

    _callback.order = 30
    _callback.stops_early = True  # train refuses it with boosting="dart"
    return _callback


def _deltas_by_metric(deltas, watched):
    """{metric: its min_delta} from one delta for all or one per metric, in
    the order the watched results first name them."""
    metrics = list(dict.fromkeys(result[1] for result in watched))
    if len(deltas) == 1:
        return dict.fromkeys(metrics, deltas[0])
    if len(deltas) != len(metrics):
        raise ValueError(f"min_delta has {len(deltas)} values, but {len(metrics)} metrics are "
                         f"evaluated ({', '.join(metrics)}): give one value, or one per metric")
    return dict(zip(metrics, deltas))


def reset_parameter(**kwargs):
    """Changes parameters before every round, as LightGBM's reset_parameter:
    each keyword (a parameter's name or alias) gives a list with a value per
    round of the run, or a function of the round (0 for the run's first)
    returning the value; e.g. learning_rate=lambda i: 0.1 * 0.99 ** i.
    Parameters read afresh every round or tree (params.RESETTABLE) only."""
    from .params import ALIASES, check_resettable, reset_value

    for key, schedule in kwargs.items():
        check_resettable(key, "reset_parameter")
        if not (callable(schedule) or isinstance(schedule, (list, tuple))):
            raise ValueError(f"reset_parameter's {key} must be a list (a value per round) or "
                             f"a function of the round, got {type(schedule).__name__}")

    def _callback(env):
        round_ = env.iteration - env.begin_iteration
        for key, schedule in kwargs.items():
            if callable(schedule):
                value = schedule(round_)
            elif len(schedule) != env.end_iteration - env.begin_iteration:
                raise ValueError(f"reset_parameter's {key} lists {len(schedule)} values for "
                                 f"{env.end_iteration - env.begin_iteration} rounds; give one "
                                 "per round")
            else:
                value = schedule[round_]
            name, value = reset_value(key, value)
            env.params[name] = value

    _callback.order = 10
    _callback.before_iteration = True
    # cv gives every fold these, even a value equal to what the fold had
    _callback.resets = frozenset(ALIASES.get(key, key) for key in kwargs)
    return _callback


class _PlainProgress:
    """A one-line progress display for when tqdm is not installed."""

    def __init__(self, total, stream):
        self.total, self.stream, self.count = total, stream, 0
        self.postfix = ""

    def update(self, count):
        self.count += count
        self.stream.write(f"\r[{self.count}/{self.total}] {self.postfix}")
        self.stream.flush()

    def set_postfix_str(self, text, refresh=True):
        self.postfix = text

    def close(self):
        self.stream.write("\n")
        self.stream.flush()


def progress_bar(show_metrics=True, stream=None, use_tqdm=True):
    """Shows training progress: a tqdm bar when tqdm is installed (and use_tqdm),
    else a plain line rewritten in place; with show_metrics, the latest
    evaluation results beside it. Writes to stream (default sys.stderr)."""

    state = {}

    def _callback(env):
        if "bar" not in state:
            total = env.end_iteration - env.begin_iteration
            out = stream or sys.stderr
            try:
                if not use_tqdm:
                    raise ImportError
                from tqdm.auto import tqdm

                state["bar"] = tqdm(total=total, file=out, unit="round")
            except ImportError:
                state["bar"] = _PlainProgress(total, out)
        bar = state["bar"]
        if show_metrics and env.evaluation_result_list:
            bar.set_postfix_str(", ".join(f"{data} {metric} {value:.4g}" for data, metric, value, *_
                                          in env.evaluation_result_list), refresh=False)
        bar.update(1)

    def close():
        bar = state.pop("bar", None)
        if bar is not None:
            bar.close()

    _callback.close = close
    _callback.order = 5
    return _callback


def controlled_run(controls, num_boost_round, callbacks, verbose):
    """(num_boost_round, callbacks) of a run whose params held LightGBM's
    training controls (params.split_controls): num_iterations replaces
    num_boost_round, and early_stopping_round > 0 adds early_stopping with
    first_metric_only and early_stopping_min_delta, as LightGBM's train
    does."""
    num_boost_round = controls.get("num_iterations", num_boost_round)
    callbacks = list(callbacks or [])
    first_only = controls.get("first_metric_only", False)
    if not isinstance(first_only, (bool, np.bool_, numbers.Integral)) or first_only not in (0, 1):
        raise ValueError(f"first_metric_only must be True or False ('true' / 'false' as text), "
                         f"got {first_only!r}")
    if "early_stopping_round" not in controls:
        # LightGBM ignores them there; defaults pass, others would be lost
        given = {key: controls[key] for key in ("first_metric_only", "early_stopping_min_delta")
                 if controls.get(key, False)}
        if given:
            shown = ", ".join(f"{key}={value!r}" for key, value in given.items())
            # early_stopping's own keywords
            keywords = ", ".join(f"{key.replace('early_stopping_', '')}={value!r}"
                                 for key, value in given.items())
            raise ValueError(f"{shown} in params acts only beside early_stopping_round in "
                             f"params, as in LightGBM's train, which ignores it here; with an "
                             f"early_stopping callback give it there: early_stopping(rounds, "
                             f"{keywords})")
        return num_boost_round, callbacks
    rounds = controls["early_stopping_round"]
    if isinstance(rounds, bool) or not isinstance(rounds, numbers.Integral):
        raise ValueError(f"early_stopping_round must be an integer (<= 0: none), got {rounds!r}")
    if rounds > 0:  # else LightGBM's "none"
        callbacks.append(early_stopping(
            rounds, bool(first_only), verbose=verbose,
            min_delta=controls.get("early_stopping_min_delta", 0.0)))
    return num_boost_round, callbacks


class RoundCallbacks:
    """A run's callbacks, sorted by their `order` and split once into those
    called before each round (before_iteration, as reset_parameter, which may
    change env.params) and those called after it. With verbosity > 0 and no
    log_evaluation among them, every round is logged. DART refuses early
    stopping (LightGBM turns it off with a warning): each round rescales
    earlier ones, so a best round's model is gone."""

    def __init__(self, callbacks, params):
        for callback in callbacks or []:
            if not callable(callback) and not is_training_callback(callback):
                raise TypeError(f"callbacks must be callables taking a CallbackEnv (gbmo's own, "
                                f"or written as LightGBM's) or XGBoost TrainingCallback "
                                f"objects, got {type(callback).__module__}."
                                f"{type(callback).__qualname__}")
        # XGBoost's, after gbmo's and LightGBM's each round, in their order
        self.training_callbacks = [TrainingCallbackRounds(c) for c in callbacks or []
                                   if is_training_callback(c)]
        callbacks = sorted((_as_gbmo_callback(c) for c in callbacks or []
                            if not is_training_callback(c)),
                           key=lambda c: getattr(c, "order", 0))
        self.stops_early = any(stops_early(c) for c in callbacks)
        self.check_params(params)
        if params["verbosity"] > 0 and not any(
                getattr(c, "__qualname__", "").startswith("log_evaluation")
                or _is_lightgbm_callback(c, "LogEvaluation") for c in callbacks):
            callbacks.insert(0, log_evaluation(1))
        self.before = [c for c in callbacks if getattr(c, "before_iteration", False)]
        self.after = [c for c in callbacks if not getattr(c, "before_iteration", False)]
        self.any_before = bool(self.before or self.training_callbacks)
        # the parameters reset_parameter callbacks set every round
        self.resets = frozenset().union(*(getattr(c, "resets", ()) for c in self.before))

    def check_params(self, params):
        """Refuses the parameters the callbacks cannot run with (cv checks
        each fold's too)."""
        if params["boosting"] == "dart" and self.stops_early:
            raise ValueError("boosting='dart' takes no early stopping: every round rescales the "
                             "rounds it drops, so the model of a best round is not kept; pick "
                             "the number of rounds by cv instead")

    def start(self, model):
        """Before the first round: XGBoost callbacks' before_training."""
        for rounds in self.training_callbacks:
            rounds.start(model)

    def before_round(self, env):
        """None, or the rounds of the model (those done) when an XGBoost
        callback ends training before this round."""
        for callback in self.before:
            callback(env)
        # a list, not a generator: every callback's hook runs, as in XGBoost
        if any([rounds.before_round(env) for rounds in self.training_callbacks]):
            return env.iteration
        return None

    def after_round(self, env):
        """None, or the rounds of the best model when a callback raises
        EarlyStopException (its 0-based best round + 1), or of every round
        done when an XGBoost callback ends training. XGBoost callbacks see
        every round, the one early stopping ends too."""
        best_rounds = None
        try:
            for callback in self.after:
                callback(env)
        except Exception as stop:  # noqa: BLE001 (any but an early stop is raised again)
            if not ends_training(stop):
                raise
            best_rounds = int(stop.best_iteration) + 1
        if any([rounds.after_round(env) for rounds in self.training_callbacks]) \
                and best_rounds is None:
            best_rounds = env.iteration + 1
        return best_rounds

    def finish(self):
        """After the last round, when no error ended training: XGBoost
        callbacks' after_training."""
        for rounds in self.training_callbacks:
            rounds.finish()

    def close(self):
        for callback in self.before + self.after:
            close = getattr(callback, "close", None)
            if callable(close):
                close()
