"""LightGBM's manual training loop on a Booster.

    booster = gbmo.Booster(params, train_set)
    booster.add_valid(valid_set, "valid")
    for _ in range(100):
        booster.update()
        print(booster.eval_valid())

A Booster made so, or returned by gbmo.train(..., keep_training_booster=True),
holds its training run (the binned data, the raw scores, the random state):
update() grows one more round, exactly as the next round of gbmo.train
would. A loaded, pickled or copied Booster holds none; train(init_model=
booster) continues any Booster.
"""


class TrainingRun:
    """Booster's methods over the training run it holds (see the module)."""

    # True while gbmo.train drives the run's rounds: its callbacks may add
    # validation sets and evaluate, but the rounds are train's
    _driven_by_train = False

    def _check_not_driven(self, method):
        if self._driven_by_train:
            raise ValueError(f"{method}() is not taken inside train(): train drives this "
                             "run's rounds (its callbacks may add_valid, eval and "
                             "reset_parameter); call it on the booster train returns with "
                             "keep_training_booster=True")

    def _run(self, method, steps_the_run=False):
        if steps_the_run:
            self._check_not_driven(method)
        trainer = getattr(self, "_trainer", None)
        if trainer is None:
            raise ValueError(
                f"{method}() needs the training run this Booster was made with: "
                "Booster(params, train_set), or gbmo.train(..., keep_training_booster=True). "
                "A loaded, pickled or copied Booster, or one after free_dataset(), holds none; "
                "continue it with gbmo.train(params, train_set, init_model=booster)")
        return trainer

    def update(self, train_set=None, fobj=None):
        """One more boosting round, as LightGBM's update(); returns True when
        its trees could not split (LightGBM's is_finished). train_set, when
        given, must be the Booster's own (other data: another Booster, or
        gbmo.train with init_model). fobj, as LightGBM's: a function giving
        this round's (grad, hess) in place of the objective's, called as a
        custom objective is (f(y_true, raw_pred), or f(preds, train_data));
        the objective still transforms the scores the metrics read, and its
        own leaf renewal (quantile's) is left out that round."""
        trainer = self._run("update", steps_the_run=True)
        if train_set is not None and train_set is not trainer.train_set:
            raise ValueError("update() trains on the Booster's own train_set; for other data "
                             "start another Booster, or continue this one with "
                             "gbmo.train(params, other_set, init_model=booster)")
        if fobj is not None and not callable(fobj):
            raise ValueError(f"update()'s fobj must be a function (y_true, raw_pred) -> "
                             f"(grad, hess), got {type(fobj).__name__}")
        first = len(self.trees)
        trainer.step(trainer.next_iteration, objective=fobj)
        return all(tree.n_leaves == 1 for tree in self.trees[first:])

    def rollback_one_iter(self):
        """Takes the last round back, as LightGBM's: its trees leave the model
        and every raw score of the run (so later rounds start from the model
        before it, up to rounding), and its records leave evals_result.
        Per-output importance, which cannot take a round back, ends (None),
        and so does a best round taken back (best_iteration 0, no best_score).
        Not for DART, whose rounds rescaled earlier ones, nor for a random
        forest, nor beyond the rounds of this run."""
        trainer = self._run("rollback_one_iter", steps_the_run=True)
        if trainer.dart or trainer.forest:
            raise ValueError("rollback_one_iter cannot take back a DART or random forest "
                             "round: DART's rescaled the rounds it dropped, a forest's "
                             "reweighed every round's share of the mean")
        per_round = self.trees_per_round
        if len(self.trees) - per_round < trainer.first_new_tree:
            raise ValueError("rollback_one_iter takes back this run's rounds only; it has none "
                             "left (an init_model's rounds stay)")
        rolled_back = self.trees[-per_round:]
        del self.trees[-per_round:]
        for tree in rolled_back:
            trainer.training_set.add_tree(tree, trainer.bin_mapper.missing_bin,
                                          trainer.params["n_threads"], -1.0)
        trainer.add_to_eval_sets(rolled_back, -1.0)
        for history in self.evals_result.values():
            for values in history.values():
                if values:
                    values.pop()
        if self.best_iteration > self.current_iteration():
            self.best_iteration, self.best_score = 0, {}
        self.output_importance = None
        self._forget_packing()
        return self

    def add_valid(self, data, name):
        """data (a Dataset) evaluated from now on under name: by eval_valid(),
        and in evals_result after each update()."""
        from .dataset import Dataset

        trainer = self._run("add_valid")
        if not isinstance(data, Dataset):
            raise TypeError(f"add_valid takes a gbmo.Dataset, got {type(data).__name__}")
        if name in self.evals_result:
            raise ValueError(f"a data set is already evaluated as {name!r}; give another name")
        if data.n_features != trainer.train_set.n_features:
            raise ValueError(f"the data has {data.n_features} features, the training set "
                             f"{trainer.train_set.n_features}")
        trainer.add_valid(name, data)
        return self

    def set_train_data_name(self, name):
        """The name eval_train gives the training set ("training" until then),
        as LightGBM's method; returns self."""
        if not isinstance(name, str) or not name:
            raise ValueError(f"the training set's name must be a non-empty string, got {name!r}")
        self._run("set_train_data_name", steps_the_run=True).training_set.name = name
        return self

    def eval_train(self, feval=None):
        """[(\"training\", metric, value, higher is better)] of the model now on
        its training set: each metric of params, then each of feval (custom
        metrics, as train's)."""
        trainer = self._run("eval_train")
        return self._scores(trainer, trainer.training_set, feval)

    def eval_valid(self, feval=None):
        """The same on every validation set (train's valid_sets, add_valid's),
        under its name."""
        trainer = self._run("eval_valid")
        return [score for eval_set in trainer.eval_sets
                if eval_set.given is not trainer.train_set
                for score in self._scores(trainer, eval_set, feval)]

    def eval(self, data, name, feval=None):
        """The same on data, under name: the training set, a validation set,
        or new data, which is added as a validation set (as LightGBM's)."""
        trainer = self._run("eval")
        if data is trainer.train_set:
            eval_set = trainer.training_set
        else:
            eval_set = next((s for s in trainer.eval_sets if s.given is data), None)
            if eval_set is None:
                self.add_valid(data, name)
                eval_set = trainer.eval_sets[-1]
        return [(name, *score[1:]) for score in self._scores(trainer, eval_set, feval)]

    def reset_parameter(self, params, caller="reset_parameter"):
        """Changes parameters for the rounds to come, as LightGBM's
        Booster.reset_parameter: those read afresh every round
        (params.RESETTABLE: learning_rate, lambda_l2, subsample, ...).
        caller: the method errors name (XGBoost's set_param calls this)."""
        from .params import check_resettable, reset_value

        trainer = self._run(caller)
        changed = {}
        for key, value in params.items():
            check_resettable(key, f"Booster.{caller}")
            name, value = reset_value(key, value)
            changed[name] = value
        trainer.params.update(changed)
        return self

    def free_dataset(self):
        """Lets the training run go (its data and raw scores): update() and
        the eval methods end; the model stays."""
        self._check_not_driven("free_dataset")
        self._trainer = None
        return self

    @staticmethod
    def _scores(trainer, eval_set, feval):
        from .custom_metric import check_fevals

        trainer.check_fields_kept()  # a round checks them as it starts
        return [score[:4] for score in trainer.scores(eval_set, check_fevals(feval))]
