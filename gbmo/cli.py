"""The ``gbmo`` command line: ``gbmo demo``, ``gbmo train`` and ``gbmo predict``
(``python -m gbmo ...`` runs the same).

    gbmo demo [--rounds N] [--threads T]
    gbmo train --data train.csv --target COLS --output model.json
               [--objective mse|softmax|sigmoid|multiclassova] [--param key=value ...]
               [--rounds N] [--valid valid.csv] [--init-model model.json]
               [--delimiter ,] [--threads T]
    gbmo predict --model model.json --data test.csv --output pred.csv
               [--raw | --contrib] [--delimiter ,] [--threads T]

CSV files have a header row. ``--target`` names the target columns (names or
0-based indices, comma-separated); every other column is a numeric feature.
An empty cell, ``NA`` or ``NaN`` (in any case), and pandas' read_csv's other
missing values as it spells them (``N/A``, ``NULL``, ``None``, ``#N/A``, ...)
are missing values, in a categorical column too; in a target column it
is a missing label, which objectives that mask them (mse, sigmoid,
gbmo-losses' quantile, l1, mape and huber) take and others refuse.
``predict`` takes the columns named in the model's ``feature_names`` (so a
file that still holds the targets or an id column works) and writes one
column per output:
``class_0 ..`` (probabilities) for softmax and multiclassova, ``output_0 ..``
otherwise. A categorical feature (``--param categorical_feature=NAMES``)
may hold integer categories or category names (text; also when two cells
are texts of one number, as "007" and "7"): training sorts the
names into categories, as pandas does, and the model keeps them, as it keeps
a pandas category column's; ``predict`` reads such columns as names (a
category the model was not trained on is missing, as in Booster.predict).

Errors in the input print one line ``gbmo: error: ...`` to stderr and give
exit code 2; ``main`` returns the exit code instead of exiting, so it can be
called in-process.
"""
import argparse
import csv
import json
import os
import sys
import time

import numpy as np

from . import __version__
from .booster import Booster
from .callback import early_stopping
from .categorical import resolve_categorical_features
from .dataset import Dataset
from .engine import train as _train
from .losses import make_loss, masks_missing_targets, quantile_levels
from .metrics import evaluate
from .parallel import MAX_THREADS
from .params import ALIASES, list_in_text, names_no_metric, resolve_params, split_controls
from .registry import MissingParameterError, PluginLoadError
from .validation import shortened

# Missing cells: gbmo's own (empty, NA and NaN in any case) and the rest of
# pandas' read_csv's na_values, as pandas spells them ("None" is missing, a
# category "none" is not), in every column, a categorical feature's too
_MISSING_ANY_CASE = {"", "na", "nan"}
_MISSING = {"-NaN", "-nan", "N/A", "n/a", "#N/A", "#N/A N/A", "#NA", "<NA>", "NULL", "null",
            "None", "1.#IND", "-1.#IND", "1.#QNAN", "-1.#QNAN"}


def _is_missing(cell):
    return cell in _MISSING or cell.lower() in _MISSING_ANY_CASE


class CLIError(Exception):
    """A problem with the user's input: reported as one line, exit code 2."""


def _guard(what, fn, *args, **kwargs):
    """Calls into gbmo, turning its ValueError/TypeError into a CLIError."""
    try:
        return fn(*args, **kwargs)
    except MissingParameterError as err:
        example = "{" + ", ".join(f'"{name}": ...' for name in err.missing) + "}"
        raise CLIError(f"{what}: {err}; on the command line, as a JSON object: "
                       f"--param '{err.given_in}={example}'") from None
    except (ValueError, TypeError) as err:
        raise CLIError(f"{what}: {err}") from None


# -- CSV ------------------------------------------------------------------------
class _Table:
    """A CSV file read as strings: header names, rows, and each row's line number."""

    def __init__(self, path, header, rows, lines):
        self.path = path
        self.header = header
        self.rows = rows
        self.lines = lines

    def index(self, name):
        return self.header.index(name)

    def missing(self, names):
        present = set(self.header)
        return [name for name in names if name not in present]

    def numbers(self, columns, missing_refused_by=None, category_names=None,
                suggest_categorical=False):
        """The float64 array (n_rows, len(columns)) of the given column indices,
        NaN where a cell is missing; missing_refused_by names the objective of
        target columns whose loss takes no missing target, which refuses them.
        The columns at the positions category_names ({position: names}) maps
        hold category names, read by category_codes. suggest_categorical: a
        cell that is not a number suggests categorical_feature (training)."""
        category_names = category_names or {}
        out = np.empty((len(self.rows), len(columns)), dtype=np.float64)
        for c, col in enumerate(columns):
            if c in category_names:
                out[:, c] = self.category_codes(col, category_names[c])
                continue
            for r, row in enumerate(self.rows):
                cell = row[col].strip()
                if _is_missing(cell):
                    if missing_refused_by is not None:
                        raise CLIError(
                            f"{self.path}, line {self.lines[r]}, column {self.header[col]!r}: "
                            f"the target is missing; objective {missing_refused_by!r} needs a "
                            "target value in every row"
                        )
                    out[r, c] = np.nan
                    continue
                try:
                    out[r, c] = _float_cell(cell)
                except ValueError:
                    name = self.header[col]
                    raise CLIError(
                        f"{self.path}, line {self.lines[r]}, column {name!r}: "
                        f"{shortened(row[col])!r} is not a number (missing values are "
                        "empty cells, NA, NaN, N/A, NULL, None)"
                        + (f"; if {name!r} holds category names, give --param "
                           f"categorical_feature={name}" if suggest_categorical else "")
                    ) from None
        return out

    def text_categories(self, col):
        """The sorted distinct cells of column col, the categories pandas makes
        of a text column, when a cell is neither missing nor a number, or two
        cells are texts of one number ("007" and "7", codes that differ); None
        when every cell is a number of its own, as the column then holds
        integer categories."""
        cells = {row[col].strip() for row in self.rows}
        named = sorted(cell for cell in cells if not _is_missing(cell))
        values = [_number(cell) for cell in named]
        numeric = all(isinstance(value, (int, float)) for value in values)
        return None if numeric and len(set(values)) == len(values) else named

    def category_codes(self, col, names):
        """Column col's cells as codes into a model's category names (strings or
        numbers, as pandas kept them), NaN where a cell is missing or names no
        category: Booster.predict, too, reads a DataFrame's category that
        training did not have as missing. Such cells are noted on stderr, as
        a misspelt category would otherwise pass unnoticed."""
        code_of = {name: code for code, name in enumerate(names)}
        codes = np.full(len(self.rows), np.nan)
        unknown, unknown_rows = {}, 0
        for r, row in enumerate(self.rows):
            cell = row[col].strip()
            # a number's text ("20", "20.0") names the numeric category 20
            code = code_of.get(cell, code_of.get(_number(cell)))
            if code is not None:
                codes[r] = code
            elif not _is_missing(cell):
                unknown[cell] = None
                unknown_rows += 1
        if unknown:
            shown = ", ".join(repr(shortened(cell)) for cell in list(unknown)[:5])
            print(f"gbmo: note: {self.path}, column {self.header[col]!r}: {unknown_rows} row(s) "
                  f"hold a category the model was not trained on ({shown}"
                  f"{', ...' if len(unknown) > 5 else ''}); they are read as missing",
                  file=sys.stderr)
        return codes


def _delimiter(text):
    text = {"\\t": "\t", "tab": "\t"}.get(text, text)
    if len(text) != 1:
        raise CLIError(f"--delimiter must be one character, got {text!r}")
    return text


def _read_csv(path, delimiter, used=None):
    """path's table; a name twice in its header is refused when it is one
    of the used names (None: every column is used; predict reads the
    model's features alone, and a file's other columns may repeat)."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f, delimiter=delimiter)
            header = None
            rows, lines = [], []
            for record in reader:
                if not record or (len(record) == 1 and not record[0].strip()):
                    continue  # blank line
                if header is None:
                    header = [name.strip() for name in record]
                    continue
                if len(record) != len(header):
                    raise CLIError(
                        f"{path}, line {reader.line_num}: {len(record)} fields, but the "
                        f"header has {len(header)} (is --delimiter {delimiter!r} right?)"
                    )
                rows.append(record)
                lines.append(reader.line_num)
    except FileNotFoundError:
        raise CLIError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CLIError(f"{path}: is a directory, not a CSV file") from None
    except UnicodeDecodeError as err:
        raise CLIError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    except csv.Error as err:
        raise CLIError(f"{path}: malformed CSV: {err}") from None
    except OSError as err:
        raise CLIError(f"{path}: cannot read: {err.strerror or err}") from None
    if header is None:
        raise CLIError(f"{path}: the file is empty; a header row is needed")
    seen = set()
    for name in header:
        if name in seen and (used is None or name in used):
            raise CLIError(f"{path}: the column name {name!r} appears twice in the header")
        seen.add(name)
    if not rows:
        raise CLIError(f"{path}: no data rows after the header")
    return _Table(path, header, rows, lines)


def _write_csv(path, header, values, delimiter):
    def write(f):
        writer = csv.writer(f, delimiter=delimiter, lineterminator="\n")
        writer.writerow(header)
        for row in values.tolist():
            writer.writerow([repr(v) for v in row])  # shortest exact float text

    if path == "-":
        write(sys.stdout)
        return
    try:
        with open(path, "w", encoding="utf-8", newline="") as f:
            write(f)
    except OSError as err:
        raise CLIError(f"{path}: cannot write: {err.strerror or err}") from None


# -- argument helpers ---------------------------------------------------------
def _parse_value(text):
    """A number, a list, a dict, None or else the text. Dicts are JSON objects
    (objective_params={"delta": 2}); lists are JSON
    (monotone_constraints=[1,0,-1]) or LightGBM's config forms: numbers
    between commas (max_bin_by_feature=3,20,40) and lists between commas
    (interaction_constraints=[0,1],[2,3])."""
    if text.startswith("{"):
        try:
            return json.loads(text)
        except ValueError as err:
            raise CLIError(f"cannot read {shortened(text)!r} as a JSON object, e.g. "
                           f'{{"delta": 2}}: {err}') from None
    if text.startswith("["):
        listed = list_in_text(text)
        if isinstance(listed, str):
            raise CLIError(f"cannot read {text!r} as a list (JSON, e.g. [1,0,-1], or LightGBM's "
                           "lists between commas, e.g. [0,1],[2,3])")
        return listed
    if "," in text:
        numbers = [_number(part.strip()) for part in text.split(",")]
        if all(isinstance(number, (int, float)) for number in numbers):
            return numbers
        return text  # e.g. metric=l2,l1
    number = _number(text)
    return None if number in ("None", "none", "null") else number


def _float_cell(cell):
    """A cell's number, as pandas' read_csv reads one: float() also takes
    digit groups ("1_000") and other scripts' digits, which would train a
    mistyped cell as a number silently (ValueError, as for other text)."""
    if "_" in cell or not cell.isascii():
        raise ValueError(f"not a number: {cell!r}")
    return float(cell)


def _number(text):
    """text as an int or a float (as _float_cell reads one), or else itself."""
    if "_" in text or not text.isascii():
        return text
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _parse_params(items):
    params = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise CLIError(f"bad --param {item!r}: expected key=value, e.g. learning_rate=0.05")
        if key in params:
            raise CLIError(f"--param {key!r} is given twice")
        value = value.strip()
        # metric=None is LightGBM's "no metric"; read as Python's None it would
        # mean the objective's default metric instead
        no_metric = ALIASES.get(key, key) == "metric" and names_no_metric(value)
        params[key] = value if no_metric else _parse_value(value)
    return params


def _target_columns(spec, table):
    columns = []
    for token in spec.split(","):
        token = token.strip()
        if not token:
            raise CLIError(f"--target {spec!r} has an empty column name")
        if token in table.header:
            col = table.index(token)
        elif token.isdigit() and int(token) < len(table.header):
            col = int(token)
        else:
            raise CLIError(
                f"--target: {table.path} has no column {token!r}; its columns are "
                f"{', '.join(table.header)} (or indices 0..{len(table.header) - 1})"
            )
        if col in columns:
            raise CLIError(f"--target names the column {table.header[col]!r} twice")
        columns.append(col)
    if len(columns) == len(table.header):
        raise CLIError(f"--target takes every column of {table.path}; no feature column is left")
    return columns


def _integer(text):
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None


def _non_negative_int(text):
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {value}")
    return value


def _positive_int(text):
    value = _non_negative_int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def _thread_count(text):
    """--threads of train and predict, as n_threads takes them in Python: an
    integer >= 1, -1 or 0 for all cores, below -1 all but some."""
    value = _integer(text)
    if not -MAX_THREADS <= value <= MAX_THREADS:
        raise argparse.ArgumentTypeError(f"expected an integer in [-{MAX_THREADS}, "
                                         f"{MAX_THREADS}] (-1 or 0: all cores; -2: all but "
                                         f"one), got {value}")
    return value


# -- commands -----------------------------------------------------------------
def _cmd_train(args):
    delimiter = _delimiter(args.delimiter)
    params = _parse_params(args.param)
    objective_keys = [k for k in params if k in ("objective", "loss")]
    if args.objective is not None:
        if objective_keys:
            raise CLIError("give the objective once: --objective or --param objective=..., not both")
        params["objective"] = args.objective
    if args.threads is not None:
        if any(k in params for k in ("n_threads", "num_threads", "nthread")):
            raise CLIError("give the thread count once: --threads or --param n_threads=..., not both")
        params["n_threads"] = args.threads
    # LightGBM's training controls (num_iterations, early_stopping_round) go to train
    resolved = _guard("bad parameters", resolve_params, split_controls(params)[0])
    loss = _guard("bad parameters", make_loss, resolved["objective"], resolved["num_class"],
                  objective_params=resolved["objective_params"])
    # losses that mask missing labels (mse, sigmoid, ...: masks_missing_targets) take
    # empty target cells, as gbmo.train takes NaN targets
    missing_refused_by = None if masks_missing_targets(loss) else loss.name

    init_model = None if args.init_model is None else _load_model(args.init_model)

    table = _read_csv(args.data, delimiter)
    target_cols = _target_columns(args.target, table)
    feature_cols = [c for c in range(len(table.header)) if c not in target_cols]
    feature_names = [table.header[c] for c in feature_cols]
    unnamed = [c for c in feature_cols if not table.header[c]]
    if unnamed:
        raise CLIError(f"{args.data}: column {unnamed[0]} has no name in the header, so a model "
                       "could not find it again; name it (a row index that pandas' to_csv "
                       "wrote: write the file with index=False)")
    target_names = [table.header[c] for c in target_cols]
    category_names = _category_names(resolved["categorical_feature"], table, feature_cols,
                                     feature_names, init_model)
    X = table.numbers(feature_cols, category_names=category_names, suggest_categorical=True)
    Y = table.numbers(target_cols, missing_refused_by)
    if Y.shape[1] == 1:
        Y = Y[:, 0]
    train_set = _guard(args.data, Dataset, X, Y, feature_names=feature_names)
    # as a pandas category column's, the names go into the model, for predict to read
    train_set.pandas_categories = category_names

    valid_sets, valid_names = [], []
    if args.valid is not None:
        vtable = _read_csv(args.valid, delimiter)
        absent = vtable.missing(feature_names + target_names)
        if absent:
            raise CLIError(f"{args.valid} lacks the training columns "
                           f"{', '.join(map(repr, absent))}")
        Xv = vtable.numbers([vtable.index(n) for n in feature_names],
                            category_names=category_names)
        Yv = vtable.numbers([vtable.index(n) for n in target_names], missing_refused_by)
        if Yv.shape[1] == 1:
            Yv = Yv[:, 0]
        valid_sets.append(_guard(args.valid, train_set.create_valid, Xv, Yv))
        valid_names.append("valid")

    start = time.perf_counter()
    booster = _guard("training failed", _train, params, train_set, args.rounds,
                     valid_sets=valid_sets, valid_names=valid_names, init_model=init_model)
    seconds = time.perf_counter() - start
    try:
        booster.save_model(args.output)
    except OSError as err:
        raise CLIError(f"{args.output}: cannot write: {err.strerror or err}") from None
    best = booster.best_iteration
    summary = (f"trained {booster.current_iteration()} rounds on {X.shape[0]} rows x "
               f"{X.shape[1]} features, {booster.n_outputs} output(s), objective "
               f"{booster.loss.name}, in {seconds:.2f} s" + (
                   f"; the model predicts with the best round, {best}" if best else ""))
    for name, metrics in booster.evals_result.items():
        for metric, values in metrics.items():
            if values and not metric.endswith("_per_output"):
                # the score of the round the saved model predicts with
                summary += f"; {name} {metric} {values[best - 1 if best else -1]:.6g}"
    print(summary)
    print(f"model saved to {args.output}")
    return 0


def _category_names(categorical_feature, table, feature_cols, feature_names, init_model):
    """{feature index: category names} of the categorical features whose cells
    are names: init_model's names of a feature when it has them, else the
    text categories of the training file's column (features whose cells are
    all numbers are integer categories and have no names)."""
    categorical = _guard("bad parameters", resolve_categorical_features, categorical_feature,
                         len(feature_cols), feature_names, {})
    known = init_model.pandas_categories if init_model is not None else {}
    names = {f: known.get(f) or table.text_categories(feature_cols[f]) for f in categorical}
    return {f: found for f, found in names.items() if found}


def _load_model(path):
    try:
        return Booster(model_file=path)
    except FileNotFoundError:
        raise CLIError(f"{path}: no such model file") from None
    except IsADirectoryError:
        raise CLIError(f"{path}: is a directory, not a model file") from None
    except UnicodeDecodeError:
        raise CLIError(f"{path}: not a gbmo model (not UTF-8 text)") from None
    except OSError as err:
        raise CLIError(f"{path}: cannot read: {err.strerror or err}") from None
    except ValueError as err:  # ModelFormatError
        raise CLIError(f"{path}: {err}") from None


def _contribution_table(contributions, feature_names, output_names):
    """(header, values) of pred_contrib's (n, features + 1, outputs) array:
    a column per feature and output, then the expected value's."""
    n_rows, n_columns, n_outputs = contributions.shape
    names = list(feature_names) + ["expected"]
    header = [name if n_outputs == 1 else f"{name}:{output}"
              for output in output_names for name in names]
    return header, contributions.transpose(0, 2, 1).reshape(n_rows, n_columns * n_outputs)


def _cmd_predict(args):
    delimiter = _delimiter(args.delimiter)
    booster = _load_model(args.model)

    names = booster.feature_names
    table = _read_csv(args.data, delimiter, used=set(names) if names else None)
    if names:
        absent = table.missing(names)
        if absent:
            shown = ", ".join(map(repr, absent[:10])) + (
                f" and {len(absent) - 10} more" if len(absent) > 10 else "")
            raise CLIError(f"{args.data} lacks the model's feature columns {shown}")
        columns = [table.index(n) for n in names]
    else:
        if len(table.header) != booster.n_features:
            raise CLIError(
                f"{args.data} has {len(table.header)} columns, but the model (saved without "
                f"feature names) takes {booster.n_features} features"
            )
        columns = list(range(len(table.header)))
    X = table.numbers(columns, category_names=booster.pandas_categories)
    prediction = _guard("prediction failed", booster.predict, X, raw_score=args.raw,
                        n_threads=args.threads, pred_contrib=args.contrib)
    if args.contrib:
        contributions = np.asarray(prediction).reshape(X.shape[0], X.shape[1] + 1, -1)
        header, prediction = _contribution_table(
            contributions, [table.header[c] for c in columns],
            [f"output_{j}" for j in range(contributions.shape[2])])
    else:
        prediction = np.asarray(prediction, dtype=np.float64).reshape(X.shape[0], -1)
        prefix = ("class" if booster.loss.name in ("softmax", "multiclassova") and not args.raw
                  else "output")
        header = [f"{prefix}_{j}" for j in range(prediction.shape[1])]
    _write_csv(args.output, header, prediction, delimiter)
    if args.output != "-":
        print(f"wrote {prediction.shape[0]} predictions x {prediction.shape[1]} columns to {args.output}")
    return 0


def _cmd_onnx(args):
    booster = _load_model(args.model)
    try:
        model = _guard("export failed", booster.to_onnx, args.output, raw_score=args.raw)
    except ImportError as err:
        raise CLIError(str(err)) from None
    except OSError as err:
        raise CLIError(f"{args.output}: cannot write: {err.strerror or err}") from None
    output = model.graph.output[0]
    shape = "".join(f", {dim.dim_value}" for dim in output.type.tensor_type.shape.dim[1:])
    print(f"wrote {args.output}: input X, float64 (n, {booster.n_features}), columns "
          f"{', '.join(booster.feature_name())}; output {output.name}, float32 "
          f"(n{shape or ','})")
    return 0


def _split(n, seed=0, train_fraction=0.7):
    order = np.random.default_rng(seed).permutation(n)
    n_train = int(round(train_fraction * n))
    return order[:n_train], order[n_train:]


DEMO_STOPPING_ROUNDS = 20


def _demo_log(name, booster, X_test, y_test):
    """Every set's metrics, one line per logged round (the first, the best,
    the last, and every 10th; every 20th in a run of 100 to 199 rounds, every
    30th from 200, ...): the held-out rows' recorded in training, the test
    rows' computed after it (early stopping watches every validation set, and
    these must steer nothing)."""
    held_out = booster.evals_result["held-out"]
    metrics = [metric for metric in held_out if not metric.endswith("_per_output")]
    y_test = booster.loss.prepare_target(y_test)
    levels = quantile_levels(booster.loss, booster.n_outputs)
    n_rounds = booster.current_iteration()
    every = 10 * (1 + n_rounds // 100)
    for i in range(1, n_rounds + 1):
        if i % every == 0 or i in (1, booster.best_iteration, n_rounds):
            prediction = booster.predict(X_test, num_iteration=i)  # only the rounds logged
            scores = ([(f"test {m}", evaluate(m, y_test, prediction, quantile_levels=levels)[0])
                       for m in metrics]
                      + [(f"held-out {m}", held_out[m][i - 1]) for m in metrics])
            print(f"  [{i:4d}] {name} " + ", ".join(f"{label} {value:.5f}"
                                                   for label, value in scores))


def _demo_train(name, bunch, params, max_rounds):
    """Trains on 70% of the rows, of which a fifth is held out to stop early,
    and returns (booster, test rows, seconds); the test rows (30%) steer
    nothing, so their metrics are honest."""
    train_rows, test_rows = _split(len(bunch.target))
    n_fit = int(0.8 * len(train_rows))
    fit_rows, stop_rows = train_rows[:n_fit], train_rows[n_fit:]
    train_set = Dataset(bunch.data[fit_rows], bunch.target[fit_rows],
                        feature_names=bunch.feature_names)
    stop = train_set.create_valid(bunch.data[stop_rows], bunch.target[stop_rows])
    start = time.perf_counter()
    booster = _train(params, train_set, max_rounds, valid_sets=[stop], valid_names=["held-out"],
                     callbacks=[early_stopping(DEMO_STOPPING_ROUNDS, verbose=False)])
    seconds = time.perf_counter() - start
    _demo_log(name, booster, bunch.data[test_rows], bunch.target[test_rows])
    rounds = booster.current_iteration()
    if rounds < max_rounds:
        print(f"  {name}: held-out loss flat for {DEMO_STOPPING_ROUNDS} rounds; stopped after "
              f"round {rounds}, predicting with round {booster.best_iteration}")
    return booster, test_rows, seconds


def _demo_regression(name, bunch, base, max_rounds):
    """Trains bunch's outputs with mse (one tree of vector leaves a round)
    and gives its table row: RMSE per output on the test rows, and their
    mean (the log's rmse, as gbmo's metric averages outputs)."""
    n_out = bunch.target.shape[1]
    print(f"\n{name}: {len(bunch.target)} rows, {bunch.data.shape[1]} features, "
          f"{n_out} outputs ({', '.join(bunch.target_names)})")
    booster, test_rows, seconds = _demo_train(name, bunch, dict(base, objective="mse"),
                                              max_rounds)
    squared = (booster.predict(bunch.data[test_rows]) - bunch.target[test_rows]) ** 2
    per_output = np.sqrt(squared.mean(axis=0))
    metric = "RMSE " + " ".join(f"{output} {value:.2f}"
                                for output, value in zip(bunch.target_names, per_output))
    return (name, f"mse, {n_out} outputs", len(bunch.target) - len(test_rows), len(test_rows),
            n_out, booster.best_iteration or booster.current_iteration(),
            f"{metric}, mean {per_output.mean():.2f}", seconds)


def _cmd_demo(args):
    from .datasets import load_enb, load_student, load_yeast

    base = dict(learning_rate=0.1, max_leaves=15, min_samples_leaf=5,
                n_threads=args.threads, seed=0, verbosity=0)
    print(f"gbmo {__version__} demo: at most {args.rounds} rounds, learning_rate 0.1, "
          f"max_leaves 15, min_samples_leaf 5, {args.threads} thread(s); 70/30 train/test "
          f"split (seed 0), a fifth of the training rows held out to stop early")
    rows = []

    # yeast: 10-class softmax, one tree of 10-vector leaves per round
    yeast = load_yeast()
    n_class = len(yeast.target_names)
    print(f"\nyeast: {len(yeast.target)} rows, {yeast.data.shape[1]} features, {n_class} classes")
    booster, test_rows, seconds = _demo_train(
        "yeast", yeast, dict(base, objective="softmax", num_class=n_class), args.rounds)
    proba = booster.predict(yeast.data[test_rows])
    y_te = yeast.target[test_rows]
    accuracy = float(np.mean(proba.argmax(axis=1) == y_te))
    logloss = float(-np.mean(np.log(np.clip(proba[np.arange(len(y_te)), y_te], 1e-15, 1.0))))
    rows.append(("yeast", f"softmax, {n_class} classes", len(yeast.target) - len(test_rows),
                 len(test_rows), n_class, booster.best_iteration or booster.current_iteration(),
                 f"accuracy {accuracy:.3f}, logloss {logloss:.3f}", seconds))

    # student (3 grades) and enb (heating and cooling load): regression, one
    # tree of vector leaves per round
    rows.append(_demo_regression("student", load_student(), base, args.rounds))
    rows.append(_demo_regression("enb", load_enb(), base, args.rounds))

    header = ("data set", "task", "train", "test", "outputs", "rounds", "test metrics", "seconds")
    cells = [header] + [(*r[:2], *(str(v) for v in r[2:6]), r[6], f"{r[7]:.2f}") for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    right = {2, 3, 4, 5, 7}

    def line(row):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w)
                         for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    print()
    print(line(header))
    print("  ".join("-" * w for w in widths))
    for row in cells[1:]:
        print(line(row))
    print("(student grades are on a 0..20 scale; enb's loads are in kWh/m^2, 6 to 48)")
    return 0


# -- parser -------------------------------------------------------------------
def _build_parser():
    parser = argparse.ArgumentParser(
        prog="gbmo",
        description="Gradient boosting with multi-output (vector-leaf) trees.",
    )
    parser.add_argument("--version", action="version", version=f"gbmo {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    demo = commands.add_parser(
        "demo", help="train on the shipped yeast, student and enb data sets and show test quality",
        description="Train on the shipped yeast (10-class softmax), student (3-output "
                    "regression) and enb (2-output regression) data sets with a seeded 70/30 "
                    "split, stopping early on training rows held out, and print test metrics.")
    demo.add_argument("--rounds", type=_non_negative_int, default=500,
                      help="most boosting rounds per data set (default 500; training stops "
                           f"once the held-out loss is flat for {DEMO_STOPPING_ROUNDS} rounds)")
    demo.add_argument("--threads", type=_positive_int, default=1,
                      help="OpenMP threads (default 1: the shipped sets are small, and more "
                           "threads mostly add overhead there)")
    demo.set_defaults(func=_cmd_demo)

    train = commands.add_parser(
        "train", help="train a model on a CSV file and save it as JSON",
        description="Train on a CSV file with a header row. --target names the target "
                    "columns; every other column is a numeric feature (empty, NA or NaN "
                    "cells are missing values), or a categorical one, named in --param "
                    "categorical_feature=..., of integer categories or category names "
                    "(text), which the model keeps for predict.")
    train.add_argument("--data", required=True, metavar="CSV", help="training data")
    train.add_argument("--target", required=True, metavar="COLS",
                       help="comma-separated target column names or 0-based indices; "
                            "one column gives a 1-D target (class indices for softmax and "
                            "multiclassova); mse and sigmoid take missing (empty, NA, NaN) "
                            "target cells as missing labels")
    train.add_argument("--output", required=True, metavar="MODEL", help="model file to write (JSON)")
    train.add_argument("--objective", default=None,
                       help="mse (default), softmax, sigmoid or multiclassova; LightGBM's names "
                            "(regression, multiclass, binary, ova) work too, and so do other "
                            "registered objectives (multitask, plugins), whose parameters go "
                            "in --param objective_params={...}")
    train.add_argument("--param", action="extend", nargs="+", metavar="KEY=VALUE",
                       help="a training parameter, e.g. learning_rate=0.05 max_leaves=15; "
                            "values are read as int, float, a list, a JSON object "
                            """(objective_params={"delta": 2}), None, or else string """
                            "(metric=None means no metric, as in LightGBM)")
    train.add_argument("--rounds", type=_non_negative_int, default=100,
                       help="boosting rounds (default 100)")
    train.add_argument("--init-model", metavar="MODEL",
                       help="a saved model to continue: its trees first, then --rounds more")
    train.add_argument("--valid", metavar="CSV",
                       help="validation data with the same columns; its metric is logged each "
                            "round (set --param verbosity=0 to silence)")
    train.add_argument("--delimiter", default=",", help="CSV field separator (default ','; '\\t' for tab)")
    train.add_argument("--threads", type=_thread_count, default=None,
                       help="OpenMP threads (default, -1 or 0: all cores, or "
                            "OMP_NUM_THREADS; -2: all but one)")
    train.set_defaults(func=_cmd_train)

    predict = commands.add_parser(
        "predict", help="predict a CSV file with a saved model",
        description="Predict with a saved model. The feature columns are found by the "
                    "model's feature names, so other columns (targets, ids) are ignored; a "
                    "model without feature names takes every column in order. A feature the "
                    "model knows category names of (a pandas category column in training) "
                    "is read as those names; one it was not trained on is missing.")
    predict.add_argument("--model", required=True, metavar="MODEL", help="model file (JSON)")
    predict.add_argument("--data", required=True, metavar="CSV", help="data to predict")
    predict.add_argument("--output", required=True, metavar="CSV",
                         help="predictions to write ('-' for stdout): class_0.. probabilities "
                              "for softmax and multiclassova, output_0.. otherwise")
    kind = predict.add_mutually_exclusive_group()
    kind.add_argument("--raw", action="store_true",
                      help="write raw scores (before the softmax / sigmoid)")
    kind.add_argument("--contrib", action="store_true",
                      help="write each feature's contribution to the raw scores (SHAP values) "
                           "instead: a column per feature and output ('name:output_j'), then "
                           "'expected'; they sum to the raw score")
    predict.add_argument("--delimiter", default=",",
                         help="CSV field separator of both files (default ',')")
    predict.add_argument("--threads", type=_thread_count, default=None,
                         help="OpenMP threads (default: the model's n_threads; -1 or 0: all "
                              "cores; -2: all but one)")
    predict.set_defaults(func=_cmd_predict)

    onnx = commands.add_parser(
        "onnx", help="write a saved model as an ONNX graph, for ONNX runtimes",
        description="Write a saved model as an ONNX graph (Booster.to_onnx), which "
                    "onnxruntime and other ONNX-ML runtimes predict with where gbmo is not "
                    "installed. Needs the onnx package.")
    onnx.add_argument("--model", required=True, metavar="MODEL", help="model file (JSON)")
    onnx.add_argument("--output", required=True, metavar="ONNX", help="ONNX file to write")
    onnx.add_argument("--raw", action="store_true",
                      help="the graph gives raw scores (before the softmax / sigmoid)")
    onnx.set_defaults(func=_cmd_onnx)
    return parser


def main(argv=None):
    """Runs the gbmo command line on argv (default sys.argv[1:]); returns the exit code."""
    parser = _build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error argparse reported
        code = exit_.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    try:
        return args.func(args)
    except (CLIError, PluginLoadError) as err:  # a plugin that fails to import says why itself
        message = " ".join(str(err).split("\n"))
        print(f"gbmo: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gbmo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of --output - closed the pipe (| head): quiet, where a
        # traceback came; stdout goes to devnull so that its flush at exit
        # cannot fail again
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):  # a stdout without a descriptor (main called in-process)
            pass
        return 1


if __name__ == "__main__":
    sys.exit(main())
