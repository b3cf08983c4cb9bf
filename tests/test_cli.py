import csv
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import gbmo
from gbmo.cli import main


def write_csv(path, header, rows, delimiter=","):
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, delimiter=delimiter)
        writer.writerow(header)
        for row in rows:
            writer.writerow([repr(v) if isinstance(v, float) else v for v in row])
    return str(path)


def read_predictions(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], np.array(rows[1:], dtype=np.float64)


@pytest.fixture
def regression_csv(tmp_path):
    """60 rows: features a, b, c (with a few missing values) and targets y1, y2."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    X[::7, 1] = np.nan
    Y = np.column_stack([X[:, 0] * 2 + np.nan_to_num(X[:, 1]), X[:, 2] - X[:, 0]])
    rows = []
    for x, y in zip(X, Y):
        cells = ["" if np.isnan(v) else float(v) for v in x]
        rows.append([float(y[0])] + cells + [float(y[1])])
    path = write_csv(tmp_path / "train.csv", ["y1", "a", "b", "c", "y2"], rows)
    return path, X, Y


def run_error(argv, capsys):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("gbmo: error: ")
    assert "Traceback" not in err
    return lines[0]


# -- demo ---------------------------------------------------------------------
def test_demo_prints_table_and_reaches_quality(capsys):
    assert main(["demo", "--rounds", "30"]) == 0
    out = capsys.readouterr().out
    assert "data set" in out and "seconds" in out
    assert "yeast test logloss" in out and "student test rmse" in out
    assert "held-out logloss" in out and "held-out rmse" in out
    yeast_row = next(line for line in out.splitlines() if line.startswith("yeast "))
    student_row = next(line for line in out.splitlines() if line.startswith("student "))
    enb_row = next(line for line in out.splitlines() if line.startswith("enb "))
    assert "1039" in yeast_row and "445" in yeast_row and " 10 " in yeast_row
    assert "454" in student_row and "195" in student_row
    accuracy = float(re.search(r"accuracy ([0-9.]+)", yeast_row).group(1))
    logloss = float(re.search(r"logloss ([0-9.]+)", yeast_row).group(1))
    overall = float(re.search(r"mean ([0-9.]+)", student_row).group(1))
    per_grade = [float(v) for v in re.findall(r"G\d ([0-9.]+)", student_row)]
    assert accuracy > 0.5
    assert 0 < logloss < 1.5
    assert overall < 4
    assert len(per_grade) == 3 and all(v < 4.5 for v in per_grade)
    assert overall == pytest.approx(np.mean(per_grade), abs=0.01)  # of values printed rounded
    # 30 rounds from the loads' means (about 22 and 25 kWh/m^2, spread 10 and 9)
    assert "538" in enb_row and "230" in enb_row and " 2 " in enb_row
    loads = [float(v) for v in re.findall(r"_load ([0-9.]+)", enb_row)]
    assert len(loads) == 2 and all(v < 5 for v in loads)


def test_demo_stops_early_on_held_out_rows_and_predicts_with_the_best_round(capsys):
    """The shipped sets stop improving within 500 rounds at learning rate 0.1,
    so the demo stops 20 rounds after the held-out loss was last at its best,
    and its table gives that round."""
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    stops = re.findall(r"(\w+): held-out loss flat for 20 rounds; stopped after round (\d+), "
                       r"predicting with round (\d+)", out)
    assert [name for name, _, _ in stops] == ["yeast", "student", "enb"]
    for name, stopped, best in stops:
        assert int(stopped) == int(best) + 20 < 500
        row = next(line for line in out.splitlines() if line.startswith(name + " "))
        # the table's numbers: train rows, test rows, outputs, rounds
        assert re.search(r"(\d+) +(\d+) +(\d+) +(\d+) ", row).group(4) == best


def test_demo_is_deterministic(capsys):
    main(["demo", "--rounds", "3"])
    first = capsys.readouterr().out
    main(["demo", "--rounds", "3"])
    second = capsys.readouterr().out

    def strip_seconds(text):
        return [line.rsplit(None, 1)[0] for line in text.splitlines()
                if line.startswith(("yeast ", "student ", "enb "))]

    assert strip_seconds(first) == strip_seconds(second)


def run_module(module, argv, cwd):
    """python -m module *argv in cwd (outside the source tree), importing the
    gbmo these tests import rather than whichever one is installed."""
    package_root = os.path.dirname(os.path.dirname(gbmo.__file__))
    return subprocess.run([sys.executable, "-m", module, *argv], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=dict(os.environ, PYTHONPATH=package_root))


def test_predict_to_a_pipe_closed_early_exits_quietly_and_takes_all_cores_as_0(tmp_path,
                                                                                 capsys):
    """gbmo predict --output - | head -2 ended in a BrokenPipeError traceback;
    --threads -1 and 0 mean all cores, as n_threads does in Python."""
    rng = np.random.default_rng(9)
    x = rng.normal(size=(20000, 2))  # predictions past a pipe's 64 KB
    data = write_csv(tmp_path / "data.csv", ["a", "b", "y"],
                     [[float(u), float(v), float(u - v)] for u, v in x])
    model = str(tmp_path / "model.json")
    assert main(["train", "--data", data, "--target", "y", "--output", model, "--rounds", "5",
                 "--threads", "-1"]) == 0
    assert main(["predict", "--model", model, "--data", data, "--output",
                 str(tmp_path / "p.csv"), "--threads", "0"]) == 0
    package_root = os.path.dirname(os.path.dirname(gbmo.__file__))
    reader = subprocess.Popen([sys.executable, "-m", "gbmo", "predict", "--model", model,
                               "--data", data, "--output", "-"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, cwd=tmp_path,
                              env=dict(os.environ, PYTHONPATH=package_root))
    assert reader.stdout.readline().strip() == b"output_0"
    reader.stdout.close()  # as head does after its lines
    assert reader.wait(timeout=120) == 1
    assert b"Traceback" not in reader.stderr.read()
    reader.stderr.close()


@pytest.mark.parametrize("module", ["gbmo", "gbmo.cli"])
def test_python_dash_m_behaves_as_the_console_script(module, tmp_path, capsys, monkeypatch):
    """python -m gbmo (gbmo/__main__.py) and python -m gbmo.cli give what
    main, the console script's entry point, gives: output, errors, exit code."""
    monkeypatch.setenv("COLUMNS", "100")  # argparse wraps help to the width, here and there
    for argv in (["--help"], ["train", "--help"], ["--version"], [],
                 ["predict", "--model", "absent.json", "--data", "x.csv", "--output", "p.csv"]):
        result = run_module(module, argv, tmp_path)
        code = main(argv)
        captured = capsys.readouterr()
        assert (result.returncode, result.stdout, result.stderr) == (code, captured.out,
                                                                     captured.err), argv
    result = run_module(module, ["demo", "--rounds", "5"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "yeast" in result.stdout and "student" in result.stdout


def test_help_and_usage_errors_return_codes(capsys):
    assert main(["--help"]) == 0
    assert "demo" in capsys.readouterr().out
    assert main([]) == 2                       # no command
    assert main(["train", "--data", "x.csv"]) == 2  # missing required options
    assert main(["demo", "--rounds", "-1"]) == 2
    capsys.readouterr()


# -- train / predict ------------------------------------------------------------
def test_train_predict_round_trip_multi_output(regression_csv, tmp_path, capsys):
    path, X, Y = regression_csv
    model = str(tmp_path / "model.json")
    code = main(["train", "--data", path, "--target", "y1,y2", "--output", model,
                 "--rounds", "20", "--param", "max_leaves=7", "min_samples_leaf=3",
                 "--param", "learning_rate=0.2", "--threads", "1"])
    assert code == 0, capsys.readouterr().err
    assert "model saved" in capsys.readouterr().out

    with open(model) as f:
        saved = json.load(f)
    assert saved["feature_names"] == ["a", "b", "c"]
    assert saved["n_outputs"] == 2 and len(saved["forest"]["tree_nodes"]) == 20
    assert saved["params"]["max_leaves"] == 7
    assert saved["params"]["learning_rate"] == 0.2

    # the training file still holds the targets: predict picks a, b, c by name
    pred_path = str(tmp_path / "pred.csv")
    assert main(["predict", "--model", model, "--data", path, "--output", pred_path]) == 0
    header, pred = read_predictions(pred_path)
    assert header == ["output_0", "output_1"]
    expected = gbmo.Booster(model_file=model).predict(X)
    np.testing.assert_array_equal(pred, expected)
    assert np.sqrt(np.mean((pred - Y) ** 2)) < np.std(Y)


def test_contributions_and_continued_training_from_the_command_line(regression_csv, tmp_path):
    path, X, Y = regression_csv
    first, more = str(tmp_path / "first.json"), str(tmp_path / "more.json")
    assert main(["train", "--data", path, "--target", "y1,y2", "--output", first,
                 "--rounds", "4"]) == 0
    assert main(["train", "--data", path, "--target", "y1,y2", "--output", more,
                 "--rounds", "3", "--init-model", first]) == 0
    continued = gbmo.Booster(model_file=more)
    whole = gbmo.train(gbmo.Booster(model_file=first).params, gbmo.Dataset(X, Y), 7)
    assert continued.num_trees == 7
    np.testing.assert_allclose(continued.predict(X), whole.predict(X), atol=1e-12)

    contrib_path = str(tmp_path / "contrib.csv")
    assert main(["predict", "--model", more, "--data", path, "--output", contrib_path,
                 "--contrib"]) == 0
    header, values = read_predictions(contrib_path)
    assert header == [f"{name}:output_{j}" for j in (0, 1) for name in ("a", "b", "c", "expected")]
    expected = continued.predict(X, pred_contrib=True)
    np.testing.assert_array_equal(values[:, :4], expected[:, :, 0])
    np.testing.assert_array_equal(values[:, 4:], expected[:, :, 1])
    np.testing.assert_allclose(values[:, :4].sum(axis=1), continued.predict(X)[:, 0], atol=1e-9)


def test_predict_uses_feature_names_not_column_order(regression_csv, tmp_path):
    path, X, _ = regression_csv
    model = str(tmp_path / "model.json")
    assert main(["train", "--data", path, "--target", "0,4", "--output", model, "--rounds", "5"]) == 0
    rows = [[float(x[2]), "id%d" % i, "" if np.isnan(x[1]) else float(x[1]), float(x[0])]
            for i, x in enumerate(X)]
    shuffled = write_csv(tmp_path / "shuffled.csv", ["c", "id", "b", "a"], rows)
    pred_path = str(tmp_path / "pred.csv")
    assert main(["predict", "--model", model, "--data", shuffled, "--output", pred_path]) == 0
    _, pred = read_predictions(pred_path)
    np.testing.assert_array_equal(pred, gbmo.Booster(model_file=model).predict(X))


def test_softmax_train_valid_predict(tmp_path, capsys):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(90, 2))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5).astype(int)
    rows = [[float(a), float(b), int(c)] for (a, b), c in zip(X, y)]
    train = write_csv(tmp_path / "train.tsv", ["x0", "x1", "label"], rows[:60], delimiter="\t")
    valid = write_csv(tmp_path / "valid.tsv", ["label", "x1", "x0"],
                      [[r[2], r[1], r[0]] for r in rows[60:]], delimiter="\t")
    model = str(tmp_path / "model.json")
    code = main(["train", "--data", train, "--target", "label", "--objective", "softmax",
                 "--valid", valid, "--rounds", "4", "--delimiter", "\\t", "--output", model,
                 "--param", "min_samples_leaf=2"])
    assert code == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "[4]" in out and "valid's logloss" in out   # gbmo's per-round log
    booster = gbmo.Booster(model_file=model)
    assert booster.loss.name == "softmax" and booster.n_outputs == 3

    pred_path = str(tmp_path / "pred.csv")
    assert main(["predict", "--model", model, "--data", valid, "--output", pred_path,
                 "--delimiter", "tab"]) == 0
    with open(pred_path) as f:
        header = f.readline().rstrip("\n").split("\t")
    assert header == ["class_0", "class_1", "class_2"]
    pred = np.loadtxt(pred_path, delimiter="\t", skiprows=1)
    np.testing.assert_array_equal(pred, booster.predict(X[60:]))
    np.testing.assert_allclose(pred.sum(axis=1), 1.0)

    raw_path = str(tmp_path / "raw.csv")
    assert main(["predict", "--model", model, "--data", valid, "--output", raw_path,
                 "--delimiter", "tab", "--raw"]) == 0
    raw = np.loadtxt(raw_path, delimiter="\t", skiprows=1)
    np.testing.assert_array_equal(raw, booster.predict(X[60:], raw_score=True))
    with open(raw_path) as f:
        assert f.readline().startswith("output_0")


def test_single_target_is_one_dimensional(regression_csv, tmp_path, capsys):
    path, X, _ = regression_csv
    model = str(tmp_path / "model.json")
    assert main(["train", "--data", path, "--target", "y2", "--output", model, "--rounds", "3"]) == 0
    booster = gbmo.Booster(model_file=model)
    assert booster.n_outputs == 1
    assert booster.feature_names == ["y1", "a", "b", "c"]
    capsys.readouterr()
    assert main(["predict", "--model", model, "--data", path, "--output", "-"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "output_0"
    Xf = np.column_stack([np.loadtxt(path, delimiter=",", skiprows=1, usecols=0), X])
    np.testing.assert_array_equal(np.array(out[1:], dtype=float), booster.predict(Xf))


# -- errors ---------------------------------------------------------------------
def test_error_missing_data_file(tmp_path, capsys):
    missing = str(tmp_path / "nope.csv")
    line = run_error(["train", "--data", missing, "--target", "y", "--output", "m.json"], capsys)
    assert "nope.csv" in line and "no such file" in line


def test_error_missing_model_file(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    line = run_error(["predict", "--model", str(tmp_path / "absent.json"), "--data", path,
                      "--output", str(tmp_path / "p.csv")], capsys)
    assert "absent.json" in line


def test_demo_with_no_rounds_reports_the_starting_scores(capsys):
    assert main(["demo", "--rounds", "0"]) == 0
    assert "yeast " in capsys.readouterr().out


def test_raw_and_contrib_are_one_or_the_other(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    assert main(["predict", "--model", "m.json", "--data", path, "--output", "p.csv", "--raw",
                 "--contrib"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


def test_lightgbm_s_num_iterations_parameter_sets_the_rounds(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    model = str(tmp_path / "m.json")
    assert main(["train", "--data", path, "--target", "y1", "--output", model, "--rounds", "3",
                 "--param", "num_iterations=5"]) == 0, capsys.readouterr().err
    assert gbmo.Booster(model_file=model).num_trees == 5


def test_list_parameters_are_read_as_json(regression_csv, tmp_path, capsys):
    path, X, _ = regression_csv
    model = str(tmp_path / "m.json")
    assert main(["train", "--data", path, "--target", "y1", "--output", model, "--rounds", "3",
                 "--param", "monotone_constraints=[0,1,0,0]"]) == 0
    assert gbmo.Booster(model_file=model).params["monotone_constraints"] == [0, 1, 0, 0]
    line = run_error(["train", "--data", path, "--target", "y1", "--output", model,
                      "--param", "monotone_constraints=[1,0"], capsys)
    assert "cannot read '[1,0' as a list" in line


def test_list_parameters_in_lightgbm_s_config_forms(regression_csv, tmp_path):
    """Numbers between commas, lists between commas; names between commas
    stay text (a metric list)."""
    path, X, _ = regression_csv
    model = str(tmp_path / "m.json")
    assert main(["train", "--data", path, "--target", "y1", "--output", model, "--rounds", "3",
                 "--param", "max_bin_by_feature=3,20,40,7", "monotone_constraints=0,1,0,0",
                 "interaction_constraints=[0,1],[2,3]", "metric=l2,l1", "verbosity=0"]) == 0
    params = gbmo.Booster(model_file=model).params
    assert params["max_bins_by_feature"] == [3, 20, 40, 7]
    assert params["monotone_constraints"] == [0, 1, 0, 0]
    assert params["interaction_constraints"] == [[0, 1], [2, 3]]
    assert params["metric"] == ["mse", "mae"]


def test_train_reports_the_score_of_the_round_the_model_predicts_with(regression_csv, tmp_path,
                                                                       capsys):
    """After early stopping, the best round's score (the last round's was
    printed, which no prediction of the saved model reproduces)."""
    path, X, Y = regression_csv
    rows = [[float(-y[0])] + ["" if np.isnan(v) else float(v) for v in x] + [float(-y[1])]
            for x, y in zip(X, Y)]  # targets turned over: training worsens it from round 1
    valid = write_csv(tmp_path / "valid.csv", ["y1", "a", "b", "c", "y2"], rows)
    model = str(tmp_path / "m.json")
    assert main(["train", "--data", path, "--target", "y1,y2", "--valid", valid, "--output",
                 model, "--rounds", "30", "--param", "early_stopping_round=3",
                 "--param", "min_samples_leaf=5"]) == 0
    out = capsys.readouterr().out
    booster = gbmo.Booster(model_file=model)
    best = booster.best_iteration
    assert 0 < best < booster.current_iteration()
    assert f"the model predicts with the best round, {best}" in out
    reported = float(out.split("valid rmse ")[1].split()[0].rstrip(";"))
    # the saved model's own validation score: the outputs' RMSEs averaged
    expected = np.mean(np.sqrt(np.mean((booster.predict(X) + Y) ** 2, axis=0)))
    assert reported == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize("no_metric", ["metric=None", "metric=none", "metric=null",
                                       "metric=na", "metric=custom", "eval_metric=None"])
def test_lightgbm_s_no_metric_names_turn_the_metrics_off(regression_csv, tmp_path, capsys,
                                                         no_metric):
    """metric=None is LightGBM's "no built-in metric", not Python's None (the
    objective's default metric)."""
    path, _, _ = regression_csv
    model = str(tmp_path / "m.json")
    assert main(["train", "--data", path, "--target", "y1,y2", "--valid", path, "--output",
                 model, "--rounds", "2", "--param", no_metric]) == 0
    out = capsys.readouterr().out
    assert "trained 2 rounds" in out and "rmse" not in out
    assert gbmo.Booster(model_file=model).params["metric"] == []


def test_error_missing_init_model(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    line = run_error(["train", "--data", path, "--target", "y1", "--output",
                      str(tmp_path / "m.json"), "--init-model", str(tmp_path / "absent.json")],
                     capsys)
    assert "absent.json: no such model file" in line
    assert not (tmp_path / "m.json").exists()


def test_error_corrupt_model_file(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "gbmo", "vers')
    line = run_error(["predict", "--model", str(bad), "--data", path,
                      "--output", str(tmp_path / "p.csv")], capsys)
    assert "bad.json" in line and "JSON" in line


def test_error_unknown_target_column(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    line = run_error(["train", "--data", path, "--target", "y1,zz", "--output",
                      str(tmp_path / "m.json")], capsys)
    assert "'zz'" in line and "y1, a, b, c, y2" in line
    line = run_error(["train", "--data", path, "--target", "9", "--output",
                      str(tmp_path / "m.json")], capsys)
    assert "'9'" in line


def test_error_target_takes_every_column(tmp_path, capsys):
    path = write_csv(tmp_path / "t.csv", ["a", "b"], [[1.0, 2.0], [3.0, 4.0]])
    line = run_error(["train", "--data", path, "--target", "a,b", "--output",
                      str(tmp_path / "m.json")], capsys)
    assert "no feature column" in line


def test_error_non_numeric_cell_names_line_and_column(tmp_path, capsys):
    rows = [[1.0, 2.0, 0.5], [2.0, "abc", 1.5], [3.0, 1.0, 2.5]]
    path = write_csv(tmp_path / "t.csv", ["f0", "f1", "y"], rows)
    line = run_error(["train", "--data", path, "--target", "y", "--output",
                      str(tmp_path / "m.json")], capsys)
    assert "line 3" in line and "'f1'" in line and "'abc'" in line


@pytest.mark.parametrize("objective", ["softmax", "multiclassova", "multiclass"])
def test_error_missing_target_value_for_an_objective_that_needs_every_label(tmp_path, capsys,
                                                                             objective):
    rows = [[1.0, 0], [2.0, 1], [2.5, 0], [3.0, ""], [4.0, 1]]
    path = write_csv(tmp_path / "t.csv", ["f0", "y"], rows)
    line = run_error(["train", "--data", path, "--target", "y", "--objective", objective,
                      "--output", str(tmp_path / "m.json")], capsys)
    assert line.endswith("t.csv, line 5, column 'y': the target is missing; objective "
                         f"'{'softmax' if objective == 'multiclass' else objective}' needs a "
                         "target value in every row")


@pytest.mark.parametrize("objective", ["mse", "sigmoid"])
def test_missing_targets_are_missing_labels_for_objectives_that_mask_them(tmp_path, capsys,
                                                                          objective):
    """Missing target cells (empty, NA, NaN, and pandas' other spellings)
    are missing labels, as NaN targets are to gbmo.train, in the training and
    the validation file."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(80, 3))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] + X[:, 2] > 0]).astype(float)
    Y[rng.random(Y.shape) < 0.2] = np.nan
    spellings = ["", "NA", "nan", "NaN", "N/A", "NULL", "None", "#N/A"]  # pandas' own
    rows = [[float(v) for v in x] + [spellings[(i + j) % 8] if np.isnan(t) else float(t)
                                     for j, t in enumerate(y)]
            for i, (x, y) in enumerate(zip(X, Y))]
    path = write_csv(tmp_path / "t.csv", ["a", "b", "c", "y1", "y2"], rows)
    model = str(tmp_path / "m.json")
    assert main(["train", "--data", path, "--target", "y1,y2", "--objective", objective,
                 "--valid", path, "--rounds", "5", "--output", model, "--param",
                 "min_samples_leaf=3"]) == 0, capsys.readouterr().err
    expected = gbmo.train({"objective": objective, "min_samples_leaf": 3, "verbosity": 0},
                          gbmo.Dataset(X, Y), 5, valid_sets=[gbmo.Dataset(X, Y)],
                          valid_names=["valid"])
    np.testing.assert_array_equal(gbmo.Booster(model_file=model).predict(X), expected.predict(X))
    metric = {"mse": "rmse", "sigmoid": "logloss"}[objective]
    last = expected.evals_result["valid"][metric][-1]
    assert f"valid {metric} {last:.6g}" in capsys.readouterr().out


def test_a_category_spelt_as_pandas_keeps_it_stays_a_category(tmp_path, capsys):
    """Found by the review of aff7d72: read in any case, pandas' missing
    spellings took the category "none" for missing, which pandas keeps."""
    rng = np.random.default_rng(5)
    names = np.array(["gas", "None", "wood", "none"])
    codes = rng.integers(0, 4, size=400)
    x = rng.normal(size=400)
    y = np.array([0.0, 5.0, 1.0, -5.0])[codes] + 0.1 * x
    path = write_csv(tmp_path / "t.csv", ["heating", "x", "y"],
                     [[names[c], float(v), float(t)] for c, v, t in zip(codes, x, y)])
    model = str(tmp_path / "m.json")
    assert main(["train", "--data", path, "--target", "y", "--output", model, "--rounds", "30",
                 "--param", "categorical_feature=heating", "learning_rate=0.3"]) == 0
    capsys.readouterr()
    booster = gbmo.Booster(model_file=model)
    assert sorted(booster.pandas_categories[0]) == ["gas", "none", "wood"]  # "None" is missing
    none = list(booster.pandas_categories[0]).index("none")
    raw = booster.predict(np.array([[none, 0.0], [np.nan, 0.0]]))  # "none" and a missing cell
    assert raw[0] < -4 and raw[1] > 4


def test_error_ragged_row(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("a,b,y\n1,2,3\n4,5\n")
    line = run_error(["train", "--data", str(path), "--target", "y", "--output",
                      str(tmp_path / "m.json")], capsys)
    assert "line 3" in line and "2 fields" in line


@pytest.mark.parametrize("bad", ["learning_rate", "=3", "max_leaves:4"])
def test_error_bad_param_syntax(regression_csv, tmp_path, capsys, bad):
    path, _, _ = regression_csv
    line = run_error(["train", "--data", path, "--target", "y1", "--output",
                      str(tmp_path / "m.json"), "--param", bad], capsys)
    assert "--param" in line and repr(bad) in line and "key=value" in line


def test_error_unknown_or_out_of_range_param(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    line = run_error(["train", "--data", path, "--target", "y1", "--output",
                      str(tmp_path / "m.json"), "--param", "learning_rat=0.1"], capsys)
    assert "learning_rat" in line and "learning_rate" in line
    line = run_error(["train", "--data", path, "--target", "y1", "--output",
                      str(tmp_path / "m.json"), "--param", "max_leaves=1"], capsys)
    assert "max_leaves" in line


def test_error_unknown_objective(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    line = run_error(["train", "--data", path, "--target", "y1", "--output",
                      str(tmp_path / "m.json"), "--objective", "hinge"], capsys)
    assert "hinge" in line and "softmax" in line


def test_error_objective_without_its_required_parameter(tmp_path, capsys):
    """Not Python's "__init__() missing 1 required positional argument": the
    objective, the parameter, and how to give it; before the data is read."""
    line = run_error(["train", "--data", str(tmp_path / "not_read.csv"), "--target", "y1,y2",
                      "--output", str(tmp_path / "m.json"), "--objective", "multitask"], capsys)
    assert line == ("gbmo: error: bad parameters: objective 'multitask' needs the parameter "
                    "'tasks', which was not given: give it in objective_params, e.g. "
                    "objective_params={'tasks': ...}; on the command line, as a JSON object: "
                    """--param 'objective_params={"tasks": ...}'""")


def test_objective_params_are_read_as_a_json_object(regression_csv, tmp_path, capsys):
    path, X, Y = regression_csv
    model = str(tmp_path / "m.json")
    tasks = '{"tasks": [["mse", [0]], ["mse", [1]]], "weights": [1, 3]}'
    assert main(["train", "--data", path, "--target", "y1,y2", "--output", model, "--rounds", "3",
                 "--objective", "multitask", "--param", f"objective_params={tasks}"]) == 0
    booster = gbmo.Booster(model_file=model)
    expected = gbmo.train({"objective": "multitask", "objective_params": json.loads(tasks),
                           "verbosity": 0}, gbmo.Dataset(X, Y), 3)
    assert booster.loss.name == "multitask"
    np.testing.assert_array_equal(booster.predict(X), expected.predict(X))

    line = run_error(["train", "--data", path, "--target", "y1,y2", "--output", model,
                      "--objective", "multitask", "--param", "objective_params={tasks: 1}"],
                     capsys)
    assert "cannot read '{tasks: 1}' as a JSON object" in line
    line = run_error(["train", "--data", path, "--target", "y1,y2", "--output", model,
                      "--objective", "multitask", "--param",
                      'objective_params={"tasks": [["mse", [0]], ["mse", [2]]]}'], capsys)
    assert "the tasks' columns must cover the outputs 0 .. 1 once each" in line


def test_error_bad_target_for_objective(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    line = run_error(["train", "--data", path, "--target", "y1", "--output",
                      str(tmp_path / "m.json"), "--objective", "sigmoid"], capsys)
    assert "sigmoid" in line


def test_error_predict_lacks_feature_columns(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    model = str(tmp_path / "model.json")
    assert main(["train", "--data", path, "--target", "y1,y2", "--output", model, "--rounds", "2"]) == 0
    capsys.readouterr()
    other = write_csv(tmp_path / "other.csv", ["a", "c"], [[1.0, 2.0]])
    line = run_error(["predict", "--model", model, "--data", other,
                      "--output", str(tmp_path / "p.csv")], capsys)
    assert "other.csv" in line and line.endswith("lacks the model's feature columns 'b'")


def test_error_a_feature_column_without_a_name(regression_csv, tmp_path, capsys):
    """Found by a data scientist's audit: the row index of pandas' to_csv, an
    empty header cell, became a feature named '', which predict's files lack."""
    path, X, Y = regression_csv
    rows = [[i, *x, *y] for i, (x, y) in enumerate(zip(np.nan_to_num(X), Y))]
    indexed = write_csv(tmp_path / "indexed.csv", ["", "a", "b", "c", "y1", "y2"], rows)
    line = run_error(["train", "--data", indexed, "--target", "y1,y2", "--output",
                      str(tmp_path / "m.json")], capsys)
    assert line.endswith("indexed.csv: column 0 has no name in the header, so a model could "
                         "not find it again; name it (a row index that pandas' to_csv wrote: "
                         "write the file with index=False)")


def test_error_valid_lacks_columns(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    valid = write_csv(tmp_path / "valid.csv", ["a", "b", "c"], [[1.0, 2.0, 3.0]])
    line = run_error(["train", "--data", path, "--target", "y1,y2", "--valid", valid,
                      "--output", str(tmp_path / "m.json")], capsys)
    assert "valid.csv" in line and "y1" in line


def test_error_empty_file_and_no_rows(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    line = run_error(["train", "--data", str(empty), "--target", "y", "--output",
                      str(tmp_path / "m.json")], capsys)
    assert "empty" in line
    header_only = tmp_path / "header.csv"
    header_only.write_text("a,y\n")
    line = run_error(["train", "--data", str(header_only), "--target", "y", "--output",
                      str(tmp_path / "m.json")], capsys)
    assert "no data rows" in line


def test_error_unwritable_output(regression_csv, tmp_path, capsys):
    path, _, _ = regression_csv
    line = run_error(["train", "--data", path, "--target", "y1", "--rounds", "1", "--output",
                      str(tmp_path / "no_dir" / "m.json")], capsys)
    assert "m.json" in line and "cannot write" in line


@pytest.mark.parametrize("word, expected", [("false", False), ("True", True), ("0", False)])
def test_true_and_false_parameters_are_read_as_words(regression_csv, tmp_path, word, expected):
    path, _, _ = regression_csv
    model = str(tmp_path / "m.json")
    assert main(["train", "--data", path, "--target", "y1", "--output", model, "--rounds", "2",
                 "--param", "data_sample_strategy=goss", "--param",
                 f"goss_renew_leaves={word}"]) == 0
    assert gbmo.Booster(model_file=model).params["goss_renew_leaves"] is expected


def test_train_takes_categorical_features_by_name(tmp_path):
    rng = np.random.default_rng(3)
    shop = rng.integers(0, 12, 300)
    x = rng.normal(size=300)
    y = 3 * rng.normal(size=12)[shop] + x
    path = write_csv(tmp_path / "shops.csv", ["shop", "x", "y"],
                     [[int(s), float(v), float(t)] for s, v, t in zip(shop, x, y)])
    model = str(tmp_path / "model.json")
    assert main(["train", "--data", path, "--target", "y", "--rounds", "20", "--output", model,
                 "--param", "categorical_feature=shop", "min_samples_leaf=5"]) == 0
    booster = gbmo.Booster(model_file=model)
    assert booster.category_order.features == [0]
    expected = gbmo.train({"categorical_feature": [0], "min_samples_leaf": 5, "verbosity": 0},
                          gbmo.Dataset(np.column_stack([shop, x]), y), 20)
    X = np.column_stack([shop, x]).astype(float)
    np.testing.assert_allclose(booster.predict(X), expected.predict(X))


def test_predict_reads_the_category_names_of_a_model_trained_on_pandas(tmp_path, capsys):
    """A model trained on pandas category columns keeps their categories; a
    CSV holds those names (or, for numeric categories, their numbers), and
    predict reads them as Booster.predict reads the DataFrame: a category the
    model was not trained on, or a missing cell, is missing (and noted)."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    region = rng.choice(["east", "north", "west"], 300)
    size = rng.choice([10, 20, 30], 300)
    x = rng.normal(size=300)
    Y = np.column_stack([(region == "north") * 3.0 + x, size / 10 - x])
    frame = pd.DataFrame({"region": pd.Categorical(region), "size": pd.Categorical(size),
                          "x": x})
    booster = gbmo.train({"min_samples_leaf": 5, "verbosity": 0}, gbmo.Dataset(frame, Y), 10)
    model = str(tmp_path / "model.json")
    booster.save_model(model)

    regions = ["west", "north", "south", None, "east", "south"]
    sizes = ["20", "30.0", "10", "20", "40", ""]
    path = write_csv(tmp_path / "test.csv", ["id", "x", "size", "region"],
                     [[i, 0.5 * i, s, "" if r is None else r]
                      for i, (r, s) in enumerate(zip(regions, sizes))])
    pred_path = str(tmp_path / "pred.csv")
    assert main(["predict", "--model", model, "--data", path, "--output", pred_path]) == 0
    expected = booster.predict(pd.DataFrame({
        "region": pd.Categorical(regions),
        "size": pd.Categorical([float(s) if s else None for s in sizes]),
        "x": 0.5 * np.arange(6)}))
    np.testing.assert_array_equal(read_predictions(pred_path)[1], expected)
    notes = capsys.readouterr().err.splitlines()
    assert notes == [
        f"gbmo: note: {path}, column 'region': 2 row(s) hold a category the model was not "
        "trained on ('south'); they are read as missing",
        f"gbmo: note: {path}, column 'size': 1 row(s) hold a category the model was not "
        "trained on ('40'); they are read as missing"]


def test_train_reads_a_categorical_feature_of_names(tmp_path, capsys):
    """A column named in categorical_feature that holds text has the sorted
    names as its categories, as a pandas category column of that text has:
    the model equals gbmo.train's on that DataFrame, keeps the names, and
    reads the validation file's and, continued, a file's names through them."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(6)
    region = rng.choice(["west", "north", "east", "south"], 240)
    x = rng.normal(size=240)
    y = (region == "north") * 3.0 - (region == "west") + x
    region[::17] = ""
    rows = [[r, float(v), float(t)] for r, v, t in zip(region, x, y)]
    valid_rows = [["central" if i % 5 == 0 else r, v, t] for i, (r, v, t) in enumerate(rows[200:])]
    train = write_csv(tmp_path / "train.csv", ["region", "x", "y"], rows[:200])
    valid = write_csv(tmp_path / "valid.csv", ["y", "x", "region"],
                      [row[::-1] for row in valid_rows])
    params = ["--param", "categorical_feature=region", "min_samples_leaf=5"]
    model = str(tmp_path / "model.json")
    assert main(["train", "--data", train, "--target", "y", "--valid", valid, "--rounds", "10",
                 "--output", model, *params]) == 0, capsys.readouterr().err
    captured = capsys.readouterr()
    assert "column 'region': 8 row(s) hold a category the model was not trained on " \
           "('central')" in captured.err

    def frame(rows):
        return pd.DataFrame({"region": pd.Categorical([r or None for r, _, _ in rows]),
                             "x": [v for _, v, _ in rows]})

    python_params = {"categorical_feature": "region", "min_samples_leaf": 5, "verbosity": 0}
    train_set = gbmo.Dataset(frame(rows[:200]), y[:200])
    expected = gbmo.train(python_params, train_set, 10, valid_names=["valid"],
                          valid_sets=[train_set.create_valid(frame(valid_rows), y[200:])])
    booster = gbmo.Booster(model_file=model)
    assert booster.pandas_categories == {0: ["east", "north", "south", "west"]}
    np.testing.assert_array_equal(booster.predict(frame(rows)), expected.predict(frame(rows)))
    assert f"valid rmse {expected.evals_result['valid']['rmse'][-1]:.6g}" in captured.out
    pred_path = str(tmp_path / "pred.csv")
    assert main(["predict", "--model", model, "--data", valid, "--output", pred_path]) == 0
    np.testing.assert_array_equal(read_predictions(pred_path)[1][:, 0],
                                  expected.predict(frame(valid_rows)))


def test_category_names_that_are_texts_of_one_number_stay_apart(tmp_path, capsys):
    """'007', '07' and '7' were read as the number 7, one category, unless
    another cell of the column was not a number: such a column keeps its names
    (and one whose numbers all differ keeps integer categories)."""
    rng = np.random.default_rng(8)
    effect = {"007": 0.0, "07": 3.0, "7": -3.0, "010": 1.0, "100": 5.0}
    zips = rng.choice(list(effect), 600)
    x = rng.normal(size=600)
    y = x + np.array([effect[z] for z in zips])
    train = write_csv(tmp_path / "train.csv", ["zip", "x", "y"],
                      [[z, float(v), float(t)] for z, v, t in zip(zips, x, y)])
    test = write_csv(tmp_path / "test.csv", ["zip", "x"], [[z, 0.0] for z in effect])
    model, out = str(tmp_path / "model.json"), str(tmp_path / "pred.csv")
    assert main(["train", "--data", train, "--target", "y", "--output", model, "--param",
                 "categorical_feature=zip", "min_samples_leaf=5"]) == 0, capsys.readouterr().err
    assert gbmo.Booster(model_file=model).pandas_categories == {
        0: ["007", "010", "07", "100", "7"]}
    assert main(["predict", "--model", model, "--data", test, "--output", out]) == 0
    np.testing.assert_allclose(read_predictions(out)[1][:, 0], list(effect.values()), atol=0.1)


def test_continued_training_reads_the_file_through_the_model_s_category_names(tmp_path):
    """--init-model with category names (here pandas', numbers among them):
    the file's cells are read through the model's names, not its own, as
    gbmo.train continues a model on a DataFrame of other categories."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(7)
    size = rng.choice([10, 20, 30], 200)
    region = rng.choice(["east", "north", "west"], 200)
    y = size / 10 + (region == "north") + rng.normal(size=200)

    def frame(rows):
        return pd.DataFrame({"size": pd.Categorical(size[rows]),
                             "region": pd.Categorical(region[rows])})

    params = {"categorical_feature": "size,region", "min_samples_leaf": 5, "verbosity": 0}
    first = gbmo.train(params, gbmo.Dataset(frame(slice(None)), y), 5)
    model = str(tmp_path / "first.json")
    first.save_model(model)
    # rows without size 10 and region 'east': the file's own names would be other codes
    rows = np.flatnonzero((size != 10) & (region != "east"))
    path = write_csv(tmp_path / "more.csv", ["size", "region", "y"],
                     [[int(size[i]), region[i], float(y[i])] for i in rows])
    continued = str(tmp_path / "continued.json")
    assert main(["train", "--data", path, "--target", "y", "--rounds", "3", "--init-model", model,
                 "--output", continued, "--param", "categorical_feature=size,region",
                 "min_samples_leaf=5"]) == 0
    expected = gbmo.train(params, gbmo.Dataset(frame(rows), y[rows]), 3, init_model=first)
    np.testing.assert_array_equal(gbmo.Booster(model_file=continued).predict(frame(slice(None))),
                                  expected.predict(frame(slice(None))))


def test_error_text_in_a_feature_not_named_categorical_suggests_it(tmp_path, capsys):
    path = write_csv(tmp_path / "t.csv", ["shop", "x", "y"],
                     [["a", 1.0, 2.0], ["b", 2.0, 3.0], ["a", 0.5, 1.0]])
    line = run_error(["train", "--data", path, "--target", "y", "--output",
                      str(tmp_path / "m.json")], capsys)
    assert line.endswith("t.csv, line 2, column 'shop': 'a' is not a number (missing values "
                         "are empty cells, NA, NaN, N/A, NULL, None); if 'shop' holds "
                         "category names, give --param categorical_feature=shop")


def test_onnx_writes_the_model_s_graph(regression_csv, tmp_path, capsys, monkeypatch):
    import onnxruntime

    path, X, _ = regression_csv
    model, graph = str(tmp_path / "model.json"), str(tmp_path / "model.onnx")
    assert main(["train", "--data", path, "--target", "y1,y2", "--output", model,
                 "--rounds", "5", "--param", "min_samples_leaf=3"]) == 0
    capsys.readouterr()
    assert main(["onnx", "--model", model, "--output", graph]) == 0
    assert capsys.readouterr().out == (f"wrote {graph}: input X, float64 (n, 3), columns a, b, c; "
                                       "output predictions, float32 (n, 2)\n")
    predicted = onnxruntime.InferenceSession(graph).run(None, {"X": X})[0]
    np.testing.assert_allclose(predicted, gbmo.Booster(model_file=model).predict(X), rtol=1e-6,
                               atol=1e-6)
    missing = str(tmp_path / "no" / "such" / "dir.onnx")
    assert run_error(["onnx", "--model", model, "--output", missing], capsys) == (
        f"gbmo: error: {missing}: cannot write: No such file or directory")
    monkeypatch.setitem(sys.modules, "onnx", None)
    assert "to_onnx needs the onnx package" in run_error(
        ["onnx", "--model", model, "--output", graph], capsys)


@pytest.mark.parametrize("cell", ["1_000", "١٢"])
def test_a_cell_that_pandas_reads_as_text_is_not_a_number(cell, tmp_path, capsys):
    """Found by an audit: float() took digit groups and other scripts'
    digits, so a mistyped cell trained as a number, where pandas' read_csv
    reads it as text."""
    rows = [[float(i), float(i % 3)] for i in range(20)]
    rows[4][0] = cell
    path = write_csv(tmp_path / "cells.csv", ["x", "y"], rows)
    message = run_error(["train", "--data", path, "--target", "y", "--output",
                         str(tmp_path / "m.json")], capsys)
    assert f"column 'x': {cell!r} is not a number" in message


def test_predict_takes_a_file_whose_unused_columns_repeat_a_name(regression_csv, tmp_path,
                                                                 capsys):
    """Found by an audit: predict picks the model's columns by name, yet
    refused a file whose id columns shared a name; a used name twice is
    still refused."""
    path, X, _ = regression_csv
    model = str(tmp_path / "model.json")
    assert main(["train", "--data", path, "--target", "y1,y2", "--output", model,
                 "--rounds", "3", "--param", "min_samples_leaf=3"]) == 0
    rows = [[i, i] + ["" if np.isnan(v) else float(v) for v in x] for i, x in enumerate(X)]
    repeated = write_csv(tmp_path / "ids.csv", ["id", "id", "a", "b", "c"], rows)
    out = str(tmp_path / "pred.csv")
    assert main(["predict", "--model", model, "--data", repeated, "--output", out]) == 0
    np.testing.assert_array_equal(read_predictions(out)[1],
                                  gbmo.Booster(model_file=model).predict(X))
    used_twice = write_csv(tmp_path / "aa.csv", ["a", "a", "b", "c"], [row[1:] for row in rows])
    capsys.readouterr()
    assert run_error(["predict", "--model", model, "--data", used_twice, "--output", out],
                     capsys) == (f"gbmo: error: {used_twice}: the column name 'a' appears twice "
                                 "in the header")
