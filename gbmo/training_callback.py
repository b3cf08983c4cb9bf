"""XGBoost's TrainingCallback objects in gbmo's rounds (gbmo.train, gbmo.cv
and the estimators' fit(callbacks=)): XGBoost's own and those users
write, subclasses of xgboost.callback.TrainingCallback or objects written
as one (xgboost itself is not imported).

Their hooks are called as XGBoost calls them: before_training(model) before
the first round, before_iteration(model, epoch, evals_log) before each round
and after_iteration(model, epoch, evals_log) after it, after_training(model)
when training ends without an error; True from before_iteration or
after_iteration ends training there, keeping every round trained, as in
XGBoost. model is the gbmo Booster (in cv, the folds as XGBoost's cv hands
them: the first fold's rounds and attributes, set_param and set_attr on
every fold); epoch the 0-based round of this run (as XGBoost's, not
counting a continued model's rounds); evals_log XGBoost's {data name:
{metric name: [one value a round]}} of gbmo's names ("valid_0", "rmse"), in
cv the folds' (mean, standard deviation) pairs. A run a callback ends
keeps best_iteration at its last round (XGBoost's EarlyStopping keeps its
best round in the attributes: booster.attr("best_iteration")), and what
after_training returns is not taken: the run's model is the Booster it was
given.
"""


def is_training_callback(callback):
    """Whether callback is an XGBoost TrainingCallback: an object, not a
    function, with an after_iteration method."""
    return not callable(callback) and callable(getattr(callback, "after_iteration", None))


def _epoch(env):
    """XGBoost's epoch: the round's index in this run."""
    return env.iteration - env.begin_iteration


class TrainingCallbackRounds:
    """One TrainingCallback's hooks around a run's rounds, with its evals_log."""

    def __init__(self, callback):
        if getattr(callback, "save_best", False) is True:
            raise ValueError("XGBoost's EarlyStopping(save_best=True) hands back a model cut at "
                             "its best round, which gbmo does not take; give save_best=False, "
                             "or gbmo.early_stopping(rounds), whose booster predicts with its "
                             "best round")
        self.callback = callback
        self.evals_log = {}
        self.model = None

    def _hook(self, name):
        hook = getattr(self.callback, name, None)
        return hook if callable(hook) else None

    def start(self, model):
        """before_training, with the run's model (cv's CVBooster: its folds)."""
        self.model = _FoldsAsOne(model) if hasattr(model, "boosters") else model
        if self._hook("before_training"):
            self.callback.before_training(self.model)

    def before_round(self, env):
        """Whether the callback ends training before this round."""
        hook = self._hook("before_iteration")
        return bool(hook and hook(self.model, _epoch(env), self.evals_log))

    def after_round(self, env):
        """Whether the callback ends training after this round, once the
        round's results are in evals_log."""
        for entry in env.evaluation_result_list:
            data, metric, value = entry[:3]
            self.evals_log.setdefault(data, {}).setdefault(metric, []).append(
                (value, entry[4]) if len(entry) > 4 else value)
        return bool(self.callback.after_iteration(self.model, _epoch(env), self.evals_log))

    def finish(self):
        """after_training, once training has ended without an error."""
        if self._hook("after_training"):
            self.callback.after_training(self.model)


class _FoldsAsOne:
    """cv's folds (a CVBooster) as XGBoost's cv hands them to its callbacks:
    the rounds, attributes and best round of the first fold (the folds train
    in lockstep); any other Booster method runs on every fold, as the
    CVBooster's (set_param, set_attr)."""

    def __init__(self, folds):
        self._folds = folds

    def num_boosted_rounds(self):
        return self._folds.boosters[0].num_boosted_rounds()

    def attr(self, key):
        return self._folds.boosters[0].attr(key)

    @property
    def best_iteration(self):
        return self._folds.best_iteration

    def __getattr__(self, name):
        if name.startswith("_"):  # copy and pickle ask before _folds is set
            raise AttributeError(name)
        return getattr(self._folds, name)
