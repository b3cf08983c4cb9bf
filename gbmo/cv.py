"""cv(): k-fold cross-validation with the folds trained in lockstep, so early
stopping and other callbacks see the metric averaged over folds every round
(as LightGBM's cv does)."""
import contextlib
import numbers
import warnings

import numpy as np

from .booster import (MODEL_FORMAT, Booster, JSONModel, ModelFormatError, _model_text,
                      parse_model_json, read_model_file)
from .callback import CallbackEnv, EvalResult, RoundCallbacks, controlled_run
from .custom_metric import check_fevals
from .dataset import Dataset
from .sparse_output import SparseOutputTrainer, is_sparse_labels
from .foreign_keywords import refuse_foreign_keywords
from .engine import (_check_arguments, _load_init_model, _num_class_for, _Trainer,
                     _without_sparse_output_params)
from .losses import ClassIndexTarget, make_loss
from .metric_history import CVHistory
from .params import (RESETTABLE, keys_naming, resolve_params, split_controls,
                     with_dataset_params)
from .validation import user_stacklevel

_CLASS_OBJECTIVES = ("softmax", "sigmoid", "multiclassova")


def _fold_indices(y, nfold, stratified, shuffle, seed):
    """[(train rows, validation rows)] for nfold folds; stratified deals each
    class's rows round robin over the folds so every fold keeps the class mix."""
    rng = np.random.default_rng(seed)
    n = y.shape[0]
    order = rng.permutation(n) if shuffle else np.arange(n)
    fold_of = np.empty(n, dtype=np.int64)
    if stratified:
        _, labels = np.unique(y[order], return_inverse=True)
        # stable sort by class keeps the shuffled order within each class
        by_class = order[np.argsort(labels, kind="stable")]
        fold_of[by_class] = np.arange(n) % nfold
    else:
        fold_of[order] = np.arange(n) * nfold // n
    return [(np.flatnonzero(fold_of != k), np.flatnonzero(fold_of == k)) for k in range(nfold)]


def _check_folds(folds, n_rows):
    pairs = []
    for i, pair in enumerate(folds):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"folds[{i}] must be a (train rows, validation rows) pair")
        train_rows, valid_rows = (np.asarray(rows) for rows in pair)
        for name, rows in (("train", train_rows), ("validation", valid_rows)):
            if rows.ndim != 1 or not rows.size or rows.dtype.kind not in "iu" \
                    or rows.min() < 0 or rows.max() >= n_rows:
                raise ValueError(f"folds[{i}] {name} rows must be a non-empty 1-D array of row "
                                 f"indices in [0, {n_rows})")
        pairs.append((train_rows, valid_rows))
    if not pairs:
        raise ValueError("folds is empty")
    return pairs


class CVBooster(JSONModel):
    """cv's fold models, as LightGBM's CVBooster: `boosters` (one per fold)
    and `best_iteration`. A Booster method called on it runs on every fold's
    booster and gives the list of their results: cvbooster.predict(X) is one
    prediction per fold (num_trees() too). save_model / model_to_string /
    dump_model keep every fold in one JSON document, which
    CVBooster(model_file=...) or CVBooster(model_str=...) loads, or
    CVBooster().model_from_string (LightGBM's idiom: a CVBooster of no
    folds, best_iteration 0, until then)."""

    def __init__(self, boosters=None, model_file=None, model_str=None):
        if model_file is not None:
            model_str = read_model_file(model_file)
        if model_str is not None:
            boosters = _fold_boosters(model_str)
        self.boosters = list(boosters or [])
        self.best_iteration = self.boosters[0].best_iteration if self.boosters else 0

    def __iter__(self):
        return iter(self.boosters)

    def __len__(self):
        return len(self.boosters)

    def __getitem__(self, fold):
        return self.boosters[fold]

    def model_from_string(self, model_str):
        """Its folds are now those of model_str (what model_to_string gives),
        as LightGBM's method; returns self. A text that is no CVBooster raises
        ModelFormatError and leaves the folds as they were."""
        self.boosters = _fold_boosters(_model_text(model_str))
        self.best_iteration = self.boosters[0].best_iteration
        return self

    def dump_model(self, num_iteration=None, start_iteration=0, importance_type="split"):
        """{"boosters": [each fold's dump_model], "best_iteration": ...}."""
        return self._folds_record("dump_model", num_iteration, start_iteration, importance_type)

    def _model_record(self, num_iteration=None, start_iteration=0, importance_type="split"):
        """What save_model writes: dump_model's dict of each fold's _model_record."""
        return self._folds_record("_model_record", num_iteration, start_iteration,
                                  importance_type)

    def _folds_record(self, fold_record, *arguments):
        return {"boosters": [getattr(booster, fold_record)(*arguments)
                             for booster in self.boosters],
                "best_iteration": self.best_iteration}

    def __getattr__(self, name):
        member = getattr(Booster, name, None)
        if name.startswith("_") or not (callable(member) or isinstance(member, property)):
            raise AttributeError(f"CVBooster has no attribute {name!r}; it has boosters, "
                                 "best_iteration and the Booster methods, run on every fold")

        def on_every_fold(*args, **kwargs):
            if isinstance(member, property):
                return [getattr(booster, name) for booster in self.boosters]
            return [getattr(booster, name)(*args, **kwargs) for booster in self.boosters]

        return on_every_fold


def _fold_boosters(model_str):
    """The fold Boosters of a CVBooster's JSON document."""
    document = parse_model_json(model_str)
    if not isinstance(document, dict) or not isinstance(document.get("boosters"), list) \
            or not document["boosters"]:
        is_booster = isinstance(document, dict) and document.get("format") == MODEL_FORMAT
        one_booster = (" (this is one Booster's model: load it with gbmo.Booster(model_file=...) "
                       "or Booster(model_str=...))" if is_booster else "")
        raise ModelFormatError(f"not a gbmo CVBooster: it needs a 'boosters' list of models"
                               f"{one_booster}")
    return [Booster._from_dict(model) for model in document["boosters"]]


def cv(params, train_set, num_boost_round=100, nfold=5, stratified=None, shuffle=True,
       folds=None, callbacks=None, seed=0, return_boosters=False, feval=None, metrics=None,
       return_cvbooster=False, init_model=None, fpreproc=None, eval_train_metric=False,
       **other_libraries_keywords):
    """Cross-validates params on train_set (a Dataset).

    As LightGBM's cv, train_set is binned once and each fold takes its rows
    of the binned data (Dataset.subset): bin edges from every row's features,
    none from a target, so further cv calls on train_set bin nothing but
    the categorical features (train_set's, params' or fpreproc's), whose
    categories each fold ranks by its own training rows (or init_model's
    ranking) and bins itself. Each fold is evaluated on its validation rows
    every round. nfold folds are
    drawn with `seed` (shuffled unless shuffle=False), stratified by class by
    default for softmax, multiclassova and sigmoid with 1-D labels; `folds` may give the
    (train rows, validation rows) pairs instead, or an object with a
    scikit-learn style split(X, y) method.

    Returns {"valid <metric>-mean": [...], "valid <metric>-stdv": [...]} with
    one value per round (metrics averaged over outputs, then over folds), cut
    at the best round when early stopping ended the run; with
    return_boosters=True also "boosters", one per fold, and with
    return_cvbooster=True (LightGBM's) "cvbooster", a CVBooster of them.
    The results also answer to LightGBM's metric names (with metric="l2",
    "valid l2-mean" is gbmo's "valid mse-mean"; see gbmo.metric_history; the
    default metric of mse is rmse, not LightGBM's l2). Callbacks receive the
    fold means as ("valid", metric, mean, higher is better, standard
    deviation) results and the folds as env.model, a CVBooster (as
    LightGBM's; it iterates and indexes as the list of fold boosters). feval:
    custom metrics as in train, called on each fold's validation Dataset.
    params may hold num_iterations and early_stopping_round, as train's;
    metrics, as LightGBM's, replaces params' metric. A sparse Y (the
    sparse-output path) trains each fold as train does, with its own metrics
    and without feval or init_model.

    As LightGBM's: init_model (a Booster or a model file's path) is where
    every fold's training starts (rounds and best_iteration count its rounds
    too, as train's); fpreproc(fold_train, fold_valid, params)
    -> (fold_train, fold_valid, params) prepares each fold (params: a copy
    of the parameters given, without the run's controls); eval_train_metric
    also records each fold's training rows as "train <metric>-mean" /
    "-stdv", which early stopping does not watch. XGBoost's keywords
    (early_stopping_rounds, as_pandas, ...) are refused with gbmo's way named.
    """
    refuse_foreign_keywords("cv", other_libraries_keywords)
    raw_params, controls = split_controls(with_dataset_params(params, train_set))
    if metrics is not None and isinstance(raw_params, dict):
        aliases = keys_naming(raw_params, "metric")
        raw_params = {**{key: value for key, value in raw_params.items() if key not in aliases},
                      "metric": metrics}
    sparse_labels = isinstance(train_set, Dataset) and is_sparse_labels(train_set.Y)
    params = resolve_params(_without_sparse_output_params(raw_params, train_set))
    num_boost_round, callbacks = controlled_run(controls, num_boost_round, callbacks,
                                                params["verbosity"] > 0)
    fevals = check_fevals(feval)
    init_model = _load_init_model(init_model)
    if sparse_labels and init_model is not None:
        raise ValueError("a sparse Y does not take init_model yet")
    if fpreproc is not None and not callable(fpreproc):
        raise TypeError(f"fpreproc must be a function (fold_train, fold_valid, params) -> "
                        f"(fold_train, fold_valid, params), got {type(fpreproc).__name__}")
    if not isinstance(train_set, Dataset):
        raise TypeError(f"train_set must be a gbmo.Dataset, got {type(train_set).__name__}")
    if isinstance(num_boost_round, bool) or not isinstance(num_boost_round, numbers.Integral) \
            or num_boost_round < 1:
        raise ValueError(f"num_boost_round must be an integer >= 1, got {num_boost_round!r}")
    n_rows = train_set.n_rows
    y = train_set.Y if sparse_labels else np.asarray(train_set.Y)
    if folds is None:
        if isinstance(nfold, bool) or not isinstance(nfold, numbers.Integral) \
                or not 2 <= nfold <= n_rows:
            raise ValueError(f"nfold must be an integer in [2, {n_rows}] (the number of rows), "
                             f"got {nfold!r}")
        if stratified is None:
            stratified = params["objective"] in _CLASS_OBJECTIVES and y.ndim == 1
        if stratified and y.ndim != 1:
            raise ValueError("stratified folds need 1-D class labels; pass stratified=False")
        pairs = _fold_indices(y, int(nfold), stratified, shuffle, seed)
    else:
        if hasattr(folds, "split"):
            try:
                folds = list(folds.split(train_set.X, y))
            except ValueError as error:
                if "groups" not in str(error):
                    raise
                raise ValueError(f"{error} (cv calls folds.split(X, y), without groups): give "
                                 "folds=list(splitter.split(X, y, groups)), the (train rows, "
                                 "validation rows) pairs") from None
        pairs = _check_folds(folds, n_rows)

    if not sparse_labels:
        params = _params_counting_classes(params, train_set, init_model)
    callbacks = RoundCallbacks(callbacks, params)  # refusals before any binning
    names = ["train", "valid"] if eval_train_metric else ["valid"]
    trainers = []
    for fold, (train_rows, valid_rows) in enumerate(pairs):
        with _naming_fold(fold, len(pairs)):
            fold_train = train_set.subset(train_rows)
            fold_valid = train_set.subset(valid_rows, reference=fold_train)
            fold_raw, fold_params = raw_params, params
            if fpreproc is not None:
                fold_train, fold_valid, fold_raw = _prepared_fold(fpreproc, fold_train,
                                                                  fold_valid, raw_params)
                fold_params = resolve_params(_without_sparse_output_params(fold_raw,
                                                                           fold_train))
                callbacks.check_params(fold_params)
                if not sparse_labels:
                    fold_params = _params_counting_classes(fold_params, train_set, init_model)
            else:  # a fold too small to train on
                _check_arguments(fold_train, 0, [fold_valid], None)
            sets = [fold_train, fold_valid] if eval_train_metric else [fold_valid]
            trainers.append(
                SparseOutputTrainer(fold_raw, fold_train, sets, names, fevals)
                if sparse_labels
                else _Trainer(fold_params, fold_train, sets, names, init_model, fevals=fevals))
    if not sparse_labels:
        # the folds share their parameters: the first fold's warning of
        # one-leaf rounds speaks for them all (it came once per fold)
        for trainer in trainers[1:]:
            trainer.warned_of_single_leaves = True
        # callbacks may use each fold's run (set_param, reset_parameter,
        # eval_valid), as train's use its one
        for trainer in trainers:
            trainer.booster._trainer, trainer.booster._driven_by_train = trainer, True
    # the callbacks' env.model, as in LightGBM
    fold_models = CVBooster([trainer.booster for trainer in trainers])

    try:
        callbacks.start(fold_models)
        history = _run_folds(trainers, fold_models, params, num_boost_round, callbacks,
                             "train" if eval_train_metric else None,
                             0 if init_model is None else init_model.current_iteration())
        callbacks.finish()
    finally:
        callbacks.close()
        for booster in fold_models.boosters:
            booster._trainer, booster._driven_by_train = None, False
    if return_boosters:
        history["boosters"] = fold_models.boosters
    if return_cvbooster:
        history["cvbooster"] = fold_models
    return history


@contextlib.contextmanager
def _naming_fold(fold, n_folds):
    """A fold's refusal (ValueError, TypeError) names the fold: data split by
    a splitter of the user's can fail on one fold alone."""
    try:
        yield
    except (ValueError, TypeError) as error:
        if type(error) not in (ValueError, TypeError):  # a subclass may take other arguments
            raise
        # chained: the user's own code (fpreproc, an objective) stays in the traceback
        raise type(error)(f"cv fold {fold} (of folds 0 to {n_folds - 1}): {error}") from error


def _prepared_fold(fpreproc, fold_train, fold_valid, raw_params):
    """fpreproc's (fold_train, fold_valid, params), checked as train checks
    its arguments: Datasets of as many features, a dict without the run's
    controls (rounds, early stopping), which are cv's."""
    prepared = fpreproc(fold_train, fold_valid, dict(raw_params))
    if not isinstance(prepared, tuple) or len(prepared) != 3:
        got = (f"a tuple of {len(prepared)}" if isinstance(prepared, tuple)
               else type(prepared).__name__)
        raise TypeError(f"fpreproc must return (fold_train, fold_valid, params), got {got}")
    fold_train, fold_valid, fold_raw = prepared
    if not isinstance(fold_valid, Dataset):
        raise TypeError(f"fpreproc's fold_valid must be a gbmo.Dataset, got "
                        f"{type(fold_valid).__name__}")
    _check_arguments(fold_train, 0, [fold_valid], None)
    if not isinstance(fold_raw, dict):
        raise TypeError(f"fpreproc's params must be a dict, got {type(fold_raw).__name__}")
    controls = split_controls(fold_raw)[1]
    if controls:
        raise ValueError(f"fpreproc's params may not set {', '.join(map(repr, controls))}: "
                         "the rounds and early stopping are cv's, the same for every fold")
    return fold_train, fold_valid, fold_raw


def _params_counting_classes(params, train_set, init_model):
    """params with num_class counted on the whole target (or a continued
    model's count) when the objective takes class indices and none is given:
    a fold without the last classes then trains them all, as the others do."""
    params = {**params, "num_class": _num_class_for(params, init_model)}
    if params["num_class"] is not None:
        return params
    loss = make_loss(params["objective"], None, 1, params["objective_params"])
    if not isinstance(loss, ClassIndexTarget):
        return params
    return {**params, "num_class": loss.n_outputs(loss.prepare_target(train_set.Y))}


def _run_folds(trainers, fold_models, params, num_boost_round, callbacks, training_set_name,
               done):
    """The rounds of every fold (the CVBooster fold_models) in lockstep; rounds and
    best_iteration count after a continued model's `done` rounds, as train's
    do."""
    history = CVHistory()
    unscored = set()  # (data, metric) whose NaN in some fold was warned of
    for iteration in range(num_boost_round):
        if callbacks.any_before:
            before = {name: params[name] for name in RESETTABLE}
            rounds_done = callbacks.before_round(CallbackEnv(
                fold_models, params, done + iteration, done, done + num_boost_round, []))
            if rounds_done is not None:
                return _stopped(history, fold_models, rounds_done, done)
            # each fold's own copy of the parameters takes what the callbacks set:
            # reset_parameter's, and what another callback changed
            changed = {name: params[name] for name in RESETTABLE
                       if name in callbacks.resets or params[name] != before[name]}
            for trainer in trainers:
                trainer.params.update(changed)
        per_fold = [trainer.step(iteration) for trainer in trainers]
        names = [[(data, metric) for data, metric, _, _ in fold] for fold in per_fold]
        if any(fold_names != names[0] for fold_names in names):
            raise ValueError(f"the folds' metrics differ in round {iteration + 1} ({names}): a "
                             "feval must return the same metrics on every fold")
        results = []
        for position, (data, metric, _, higher_is_better) in enumerate(per_fold[0]):
            values = np.array([fold[position][2] for fold in per_fold])
            nan_folds = np.flatnonzero(np.isnan(values))
            if nan_folds.size and (data, metric) not in unscored:
                unscored.add((data, metric))
                warnings.warn(f"cv: {data} {metric} is NaN in round {iteration + 1} on fold(s) "
                              f"{nan_folds.tolist()} of 0 to {len(values) - 1} (a metric of no "
                              "value there, such as an auc of labels of one class, or of no "
                              "observed label), and so is the folds' mean; another metric, or "
                              "folds whose validation rows give it a value, may avoid it",
                              UserWarning,
                              stacklevel=user_stacklevel())
            history.setdefault(f"{data} {metric}-mean", []).append(float(values.mean()))
            history.setdefault(f"{data} {metric}-stdv", []).append(float(values.std()))
            results.append(EvalResult(data, metric, float(values.mean()), higher_is_better,
                                      float(values.std())))
        best_rounds = callbacks.after_round(CallbackEnv(
            fold_models, params, done + iteration, done, done + num_boost_round, results,
            training_set_name))
        if best_rounds is not None:
            return _stopped(history, fold_models, best_rounds, done)
    return history


def _stopped(history, fold_models, best_rounds, done):
    """The history of a run a callback ended, up to the model's best_rounds
    (counting a continued model's done), which the folds take."""
    for booster in fold_models.boosters:
        booster.best_iteration = best_rounds
    fold_models.best_iteration = best_rounds
    return CVHistory({key: values[:best_rounds - done] for key, values in history.items()})
