"""gbmo.plotting: every plot renders to a PNG, and its artists hold the model's numbers."""
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gbmo  # noqa: E402
from gbmo.plotting import plot_importance, plot_metric, plot_tree  # noqa: E402

RNG = np.random.default_rng(7)
X = RNG.normal(size=(300, 6))
X[:, 4:] = 1.0  # constant features are never split on: zero importance
X[RNG.random(X.shape) < 0.05] = np.nan
X_FILLED = np.nan_to_num(X)
Y = np.c_[X_FILLED[:, 0], X_FILLED[:, 1] - X_FILLED[:, 2], 2 * X_FILLED[:, 3]]
NAMES = ["alpha", "beta", "gamma", "delta", "const_a", "const_b"]
ROUNDS = 6


def _train(Y, rounds=ROUNDS, valid=True, **params):
    train_set = gbmo.Dataset(X[:240], Y[:240], feature_names=NAMES)
    valid_sets = [train_set, train_set.create_valid(X[240:], Y[240:])] if valid else []
    return gbmo.train({"verbosity": 0, "max_leaves": 6, "min_samples_leaf": 10, **params},
                      train_set, rounds, valid_sets=valid_sets)


@pytest.fixture(scope="module")
def booster():
    return _train(Y, metric=["rmse", "mae"])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _assert_png(ax, tmp_path):
    path = tmp_path / "plot.png"
    ax.figure.savefig(path)
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    # Empty axes ink about 1% of the pixels, a blank figure none.
    inked = (plt.imread(path)[..., :3] < 0.8).any(axis=-1).mean()
    assert inked > 0.02


# -- plot_metric -------------------------------------------------------------

def test_metric_curves_are_the_recorded_values(booster, tmp_path):
    ax = plot_metric(booster)
    _assert_png(ax, tmp_path)
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["training", "valid_1"]
    for line, name in zip(lines, ["training", "valid_1"]):
        np.testing.assert_array_equal(line.get_xdata(), np.arange(1, ROUNDS + 1))
        np.testing.assert_allclose(line.get_ydata(), booster.evals_result[name]["rmse"])
    assert ax.get_ylabel() == "rmse" and ax.get_xlabel() == "Iterations"


def test_metric_choice_and_data_set_choice(booster, tmp_path):
    _, ax = plt.subplots()
    assert plot_metric(booster.evals_result, metric="mae", dataset_names=["valid_1"],
                       ax=ax) is ax
    _assert_png(ax, tmp_path)
    (line,) = ax.get_lines()
    np.testing.assert_allclose(line.get_ydata(), booster.evals_result["valid_1"]["mae"])
    _, ax = plt.subplots()
    plot_metric(booster, metric="l1", dataset_names=["valid_1"], ax=ax)  # LightGBM's name
    (line,) = ax.get_lines()
    np.testing.assert_allclose(line.get_ydata(), booster.evals_result["valid_1"]["mae"])
    # a custom metric's own name comes first, alias or not
    custom = {"valid_1": {"l1": [3.0, 2.0, 1.0]}}
    _, ax = plt.subplots()
    plot_metric(custom, metric="l1", ax=ax)
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(), [3.0, 2.0, 1.0])


def test_metric_per_output_draws_a_line_per_output_and_data_set(booster, tmp_path):
    ax = plot_metric(booster, per_output=True)
    _assert_png(ax, tmp_path)
    lines = ax.get_lines()
    assert len(lines) == 2 * booster.n_outputs
    for line, (name, output) in zip(lines, [(n, j) for n in ("training", "valid_1")
                                            for j in range(booster.n_outputs)]):
        assert line.get_label() == f"{name} output {output}"
        expected = np.asarray(booster.evals_result[name]["rmse_per_output"])[:, output]
        np.testing.assert_allclose(line.get_ydata(), expected)


def test_a_restricted_metric_s_curves_are_named_by_their_own_outputs():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(300, 3))
    train = gbmo.Dataset(features, features)
    model = gbmo.train({"verbosity": -1, "metric": "rmse[1,2]"}, train, 3,
                       valid_sets=[train.create_valid(features, features)])
    ax = plot_metric(model, metric="rmse[1,2]", per_output=True)
    assert [line.get_label() for line in ax.get_lines()] == ["valid_0 output 1",
                                                             "valid_0 output 2"]


def test_metric_errors_name_what_is_available(booster):
    with pytest.raises(ValueError, match=r"'logloss'.*recorded: rmse, mae"):
        plot_metric(booster, metric="logloss")
    with pytest.raises(ValueError, match=r"metric 'rmse_per_output' is a record of per-output "
                                         r"values: give metric='rmse' with per_output=True"):
        plot_metric(booster, metric="rmse_per_output")
    with pytest.raises(ValueError, match=r"available: training, valid_1"):
        plot_metric(booster, dataset_names=["valid_0"])
    with pytest.raises(ValueError, match="evals_result is empty"):
        plot_metric(_train(Y, rounds=1, valid=False))
    with pytest.raises(ValueError, match="evals_result is empty"):
        plot_metric({"valid_0": {}})
    single_output = _train(Y[:, 0], rounds=2)
    with pytest.raises(ValueError, match=r"metric 'rmse' has no per-output values"):
        plot_metric(single_output, per_output=True)
    with pytest.raises(TypeError, match="plot_metric takes .* got builtins.list"):
        plot_metric([1.0, 0.5])


# -- plot_importance ---------------------------------------------------------

def _bar_widths(ax):
    return np.array([bar.get_width() for bar in ax.patches])


def test_importance_bars_in_order_without_zero_features(booster, tmp_path):
    ax = plot_importance(booster, importance_type="gain")
    _assert_png(ax, tmp_path)
    gain = booster.feature_importance("gain")
    used = np.flatnonzero(gain)
    assert 0 < len(used) <= 4  # the two constant features are left out
    # Bottom up: the most important feature is the last bar, on top.
    ascending = used[np.argsort(gain[used], kind="stable")]
    np.testing.assert_allclose(_bar_widths(ax), gain[ascending])
    assert [t.get_text() for t in ax.get_yticklabels()] == [NAMES[f] for f in ascending]
    assert [t.get_text() for t in ax.texts] == [f"{v:.3g}" for v in gain[ascending]]


def test_importance_top_k_split_counts_and_all_features(booster, tmp_path):
    splits = booster.feature_importance("split")
    ax = plot_importance(booster, importance_type="split", max_num_features=2, precision=None)
    _assert_png(ax, tmp_path)
    np.testing.assert_array_equal(_bar_widths(ax), np.sort(splits)[-2:])
    assert not ax.texts
    ax = plot_importance(booster, ignore_zero=False, feature_names=list("abcdef"))
    assert len(ax.patches) == booster.n_features
    assert {t.get_text() for t in ax.get_yticklabels()} == set("abcdef")


@pytest.mark.parametrize("stacked", [False, True])
def test_importance_per_output_bars(booster, tmp_path, stacked):
    ax = plot_importance(booster, importance_type="gain", per_output=True, stacked=stacked)
    _assert_png(ax, tmp_path)
    by_output = booster.feature_importance("gain", per_output=True)
    totals = by_output.sum(axis=1)
    used = np.flatnonzero(totals)
    ascending = used[np.argsort(totals[used], kind="stable")]
    assert len(ax.patches) == len(used) * booster.n_outputs
    # One bar container per output, each with a bar per shown feature.
    np.testing.assert_allclose(_bar_widths(ax), by_output[ascending].T.ravel())
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        f"output {j}" for j in range(booster.n_outputs)]
    if stacked:
        last = ax.patches[-len(used):]
        np.testing.assert_allclose([bar.get_x() + bar.get_width() for bar in last],
                                   totals[ascending])
        assert len(ax.texts) == len(used)
    else:
        assert not ax.texts


@pytest.mark.parametrize("importance_type", ["split", "average_gain"])
def test_stacked_importance_is_refused_where_the_outputs_do_not_sum_to_the_whole(
        booster, importance_type):
    """Found by a data scientist's audit: stacked split counts showed each
    feature's splits once per output (README's own example did)."""
    with pytest.raises(ValueError, match=f"sum to the whole only for importance_type='gain', "
                                         f"not '{importance_type}'"):
        plot_importance(booster, importance_type=importance_type, per_output=True, stacked=True)
    assert plot_importance(booster, importance_type=importance_type, per_output=True,
                           output=0, stacked=True).patches


def test_importance_of_one_output(booster, tmp_path):
    column = booster.feature_importance("gain", per_output=True)[:, 1]
    ax = plot_importance(booster, importance_type="gain", output=1)
    _assert_png(ax, tmp_path)
    used = np.flatnonzero(column)
    np.testing.assert_allclose(_bar_widths(ax), np.sort(column[used]))
    with pytest.raises(ValueError, match="the model has 3 outputs"):
        plot_importance(booster, output=3)


def test_importance_errors(booster):
    with pytest.raises(ValueError, match="feature_names has 2 names, but the model has 6"):
        plot_importance(booster, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="max_num_features"):
        plot_importance(booster, max_num_features=0)
    with pytest.raises(ValueError, match="importance_type 'cover'"):
        plot_importance(booster, importance_type="cover")
    with pytest.raises(ValueError, match="no feature has non-zero importance"):
        plot_importance(_train(Y, rounds=1, valid=False, min_samples_leaf=200))
    with pytest.raises(TypeError, match="plot_importance takes a gbmo.Booster or a fitted"):
        plot_importance("model.json")


# -- plot_tree ---------------------------------------------------------------

def _split_boxes(ax):
    return [t.get_text() for t in ax.texts if t.get_bbox_patch() is not None]


def test_tree_nodes_edges_and_leaf_bars(booster, tmp_path):
    ax = plot_tree(booster, tree_index=2)
    _assert_png(ax, tmp_path)
    tree = booster.trees[2]
    internal = np.flatnonzero(tree.node_left >= 0)
    boxes = _split_boxes(ax)
    assert len(boxes) == len(internal) == tree.n_leaves - 1
    for text, node in zip(boxes, internal):
        assert text.startswith(f"{NAMES[tree.node_feature[node]]} <= "
                               f"{tree.node_threshold[node]:.3g}\n")
    assert len(ax.get_lines()) == 2 * len(internal)
    edge_labels = [t.get_text() for t in ax.texts if t.get_bbox_patch() is None]
    assert sum("missing" in label for label in edge_labels) == len(internal)
    leaves = np.flatnonzero(tree.node_left < 0)
    assert len(ax.child_axes) == len(leaves)
    values = tree.dense_leaf_values(booster.n_outputs)
    for inset, node in zip(ax.child_axes, leaves):
        np.testing.assert_allclose([bar.get_height() for bar in inset.patches],
                                   values[tree.node_value[node]])
        assert inset.get_title() == f"leaf {tree.node_value[node]}, count {tree.node_count[node]}"


def test_tree_long_leaf_vectors_are_truncated_lists(tmp_path):
    wide = _train(RNG.normal(size=(300, 12)), rounds=1, valid=False)
    ax = plot_tree(wide, max_outputs=8)
    _assert_png(ax, tmp_path)
    tree = wide.trees[0]
    for inset, node in zip(ax.child_axes, np.flatnonzero(tree.node_left < 0)):
        assert not inset.patches
        (text,) = inset.texts
        values = tree.leaf_values[tree.node_value[node]]
        assert text.get_text().splitlines() == [f"{j}: {v:.3g}" for j, v in
                                                enumerate(values[:8])] + ["..."]
    ax = plot_tree(wide, max_outputs=12)
    assert all(len(inset.patches) == 12 for inset in ax.child_axes)


def test_tree_of_a_single_leaf(tmp_path):
    stump = _train(Y, rounds=1, valid=False, min_samples_leaf=200)
    ax = plot_tree(stump)
    _assert_png(ax, tmp_path)
    assert not _split_boxes(ax) and len(ax.child_axes) == 1


def test_tree_index_out_of_range_names_the_tree_count(booster):
    with pytest.raises(IndexError, match=f"the model has {ROUNDS} trees"):
        plot_tree(booster, tree_index=ROUNDS)
    with pytest.raises(IndexError, match=f"the model has {ROUNDS} trees"):
        plot_tree(booster, tree_index=-1)


# -- inputs and the optional dependency --------------------------------------

def test_a_fitted_estimator_is_accepted(tmp_path):
    sklearn_api = pytest.importorskip("gbmo.sklearn")
    model = sklearn_api.GBMORegressor(n_estimators=3, max_leaves=4, min_samples_leaf=10)
    with pytest.raises(TypeError, match="fitted gbmo estimator.*got gbmo.sklearn.GBMORegressor"):
        plot_tree(model)
    model.fit(X_FILLED, Y, eval_set=[(X_FILLED, Y)])
    for ax in (plot_metric(model), plot_importance(model), plot_tree(model, tree_index=1)):
        _assert_png(ax, tmp_path)
    assert len(plot_metric(model).get_lines()) == 1


def test_importance_auto_of_an_estimator_without_a_type_is_its_default():
    """XGBoost's get_params() gives importance_type=None: the estimator's default."""
    from gbmo.sklearn import GBMORegressor

    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 3))
    model = GBMORegressor(n_estimators=5, importance_type=None).fit(X, X[:, 0])
    ax = plot_importance(model)
    gain = model.booster_.feature_importance("gain")
    np.testing.assert_allclose(sorted(_bar_widths(ax)), sorted(gain[gain > 0]))


def test_importance_auto_is_lightgbm_s_split_count_or_the_estimator_s_own(booster):
    sklearn_api = pytest.importorskip("gbmo.sklearn")
    np.testing.assert_array_equal(np.sort(_bar_widths(plot_importance(booster))),
                                  np.sort(booster.feature_importance("split")[
                                      booster.feature_importance("split") > 0]))
    for kind in ("split", "gain"):
        model = sklearn_api.GBMORegressor(n_estimators=3, max_leaves=4, min_samples_leaf=10,
                                          importance_type=kind).fit(X_FILLED, Y)
        values = model.booster_.feature_importance(kind)
        np.testing.assert_allclose(np.sort(_bar_widths(plot_importance(model))),
                                   np.sort(values[values > 0]))


def test_lightgbm_s_limits_dpi_and_bar_keywords_are_taken(booster):
    ax = plot_importance(booster, xlim=(0, 50), ylim=(-1, 8), dpi=50, color="red")
    assert ax.get_xlim() == (0, 50) and ax.get_ylim() == (-1, 8)
    assert ax.figure.dpi == 50
    assert all(bar.get_facecolor()[:3] == (1.0, 0.0, 0.0) for bar in ax.patches)
    ax = plot_metric(booster, xlim=(1, 3), ylim=(0, 9), dpi=60)
    assert ax.get_xlim() == (1, 3) and ax.get_ylim() == (0, 9) and ax.figure.dpi == 60
    assert plot_tree(booster, tree_index=0, dpi=40).figure.dpi == 40


def test_gbmo_imports_without_matplotlib_and_plots_say_how_to_get_it(tmp_path):
    code = ("import sys, gbmo, gbmo.plotting\n"
            "assert 'matplotlib' not in sys.modules\n"
            "sys.modules['matplotlib'] = sys.modules['matplotlib.pyplot'] = None\n"
            "try:\n"
            "    gbmo.plotting.plot_metric({'training': {'rmse': [1.0]}})\n"
            "except ImportError as error:\n"
            "    print(error)\n")
    # Outside the source tree, where the installed (compiled) gbmo is imported.
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, cwd=tmp_path)
    assert "pip install matplotlib" in result.stdout and "gbmo[plot]" in result.stdout


def test_plot_tree_lists_a_categorical_split_s_set():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(5)
    labels = np.array(["ant", "bee", "cat", "dog", "eel", "fox"])
    codes = rng.integers(0, 6, 600)
    frame = pd.DataFrame({"animal": pd.Categorical(labels[codes]), "x": rng.normal(size=600)})
    y = np.array([3.0, -2.0, 1.0, -3.0, 2.0, 0.0])[codes] + 0.1 * rng.normal(size=600)
    model = gbmo.train({"verbosity": 0, "max_leaves": 3}, gbmo.Dataset(frame, y), 1)
    root_set = model.trees_to_dataframe().categories_left[0]
    ax = plot_tree(model)
    texts = [t.get_text() for t in ax.texts]
    root = next(t for t in texts if t.startswith("animal in {"))
    assert all(label in root for label in root_set[:4])
    assert "<=" not in root
    # a row of the DataFrame, category strings and all, as predict takes it
    row = frame.iloc[[0]]
    ax = plot_tree(model, example_case=row)
    leaf = model.predict_leaf(row)[0, 0]
    red_titles = [inset.get_title() for inset in ax.child_axes
                  if inset.title.get_color() == "red"]
    assert len(red_titles) == 1 and red_titles[0].startswith(f"leaf {leaf}, ")
    plt.close("all")


# -- plot_split_value_histogram ----------------------------------------------

def test_split_value_histogram_bars_are_the_booster_s_histogram(booster, tmp_path):
    ax = gbmo.plot_split_value_histogram(booster, "alpha", bins=4, width_coef=0.5)
    _assert_png(ax, tmp_path)
    counts, edges = booster.get_split_value_histogram("alpha", bins=4)
    bars = ax.patches
    np.testing.assert_array_equal([bar.get_height() for bar in bars], counts)
    np.testing.assert_allclose([bar.get_width() for bar in bars], 0.5 * np.diff(edges))
    np.testing.assert_allclose([bar.get_x() + bar.get_width() / 2 for bar in bars],
                               (edges[:-1] + edges[1:]) / 2)
    assert ax.get_title() == "Split value histogram for feature with name alpha"
    ax = gbmo.plot_split_value_histogram(booster, 0)
    assert ax.get_title() == "Split value histogram for feature with index 0"


def test_split_value_histogram_plot_errors(booster):
    with pytest.raises(ValueError, match="no split uses feature 'const_a'"):
        gbmo.plot_split_value_histogram(booster, "const_a")
    for bad in (0, "a"):
        with pytest.raises(ValueError, match="width_coef must be in"):
            gbmo.plot_split_value_histogram(booster, 0, width_coef=bad)


# -- plot_tree's LightGBM arguments ------------------------------------------

def test_tree_show_info_picks_what_the_nodes_show(booster):
    tree = booster.trees[2]
    internal = np.flatnonzero(tree.node_left >= 0)
    leaves = np.flatnonzero(tree.node_left < 0)
    ax = plot_tree(booster, tree_index=2, show_info=["data_percentage"])
    for text, node in zip(_split_boxes(ax), internal):
        share = 100 * tree.node_count[node] / tree.node_count[0]
        assert text.split("\n")[1:] == [f"{share:.3g}% of data"]
    for inset, node in zip(ax.child_axes, leaves):
        share = 100 * tree.node_count[node] / tree.node_count[0]
        assert inset.get_title() == f"leaf {tree.node_value[node]}, {share:.3g}% of data"
    ax = plot_tree(booster, tree_index=2, show_info=[])
    assert all("\n" not in text for text in _split_boxes(ax))
    assert ax.child_axes[0].get_title() == f"leaf {tree.node_value[leaves[0]]}"
    for bad in ("split_gain", 5):
        with pytest.raises(ValueError, match="show_info must be a list of split_gain"):
            plot_tree(booster, show_info=bad)
    with pytest.raises(ValueError, match="leaf_weight: gbmo's trees keep no internal values"):
        plot_tree(booster, show_info=["leaf_weight"])
    ax = plot_tree(booster, tree_index=2, show_info=(item for item in ["internal_count"]))
    assert all(text.split("\n")[1].startswith("count ") for text in _split_boxes(ax))


def test_tree_horizontal_puts_the_root_left_and_the_leaves_right(booster, tmp_path):
    ax = plot_tree(booster, tree_index=2, orientation="horizontal")
    _assert_png(ax, tmp_path)
    root_box = next(t for t in ax.texts if t.get_bbox_patch() is not None)
    leaf_boxes = [inset.get_position() for inset in ax.child_axes]
    assert root_box.get_position()[0] == 0.0
    assert all(ax.transData.inverted().transform(
        ax.figure.transFigure.transform((box.x0, box.y0)))[0] > 0 for box in leaf_boxes)
    with pytest.raises(ValueError, match="orientation must be 'vertical' or 'horizontal'"):
        plot_tree(booster, orientation="diagonal")


def test_tree_example_case_path_is_drawn_red(booster):
    row = X[:1]
    ax = plot_tree(booster, tree_index=2, example_case=row)
    tree = booster.trees[2]
    red_edges = [line for line in ax.get_lines() if line.get_color() == "red"]
    leaf = booster.predict_leaf(row)[0, 2]
    leaf_node = int(np.flatnonzero((tree.node_left < 0) & (tree.node_value == leaf))[0])
    # one red edge per level down to the row's leaf, ending there
    depth, node = 0, leaf_node
    while node != 0:
        node = int(np.flatnonzero((tree.node_left == node) | (tree.node_right == node))[0])
        depth += 1
    assert len(red_edges) == depth
    with pytest.raises(ValueError, match="example_case must be one row"):
        plot_tree(booster, example_case=X[:2])


def test_the_peers_keywords_name_the_same_plots(booster):
    """LightGBM's plot_metric(booster=...); XGBoost's plot_importance(show_values=)
    and plot_tree(tree_idx= / num_trees=)."""
    import matplotlib.pyplot as plt

    keyword = plot_metric(booster=booster)
    np.testing.assert_allclose(keyword.get_lines()[0].get_ydata(),
                               booster.evals_result["training"]["rmse"])
    assert plot_importance(booster, importance_type="gain").texts
    assert not plot_importance(booster, importance_type="gain", show_values=False).texts
    by_index = plot_tree(booster, tree_index=2)
    for given in ({"tree_idx": 2}, {"num_trees": 2}):
        drawn = plot_tree(booster, **given)
        assert [t.get_text() for t in drawn.texts] == [t.get_text() for t in by_index.texts]
    with pytest.raises(ValueError, match="give tree_index once: as tree_index or as tree_idx"):
        plot_tree(booster, tree_index=1, tree_idx=2)
    plt.close("all")


def test_create_tree_digraph_points_to_plot_tree(booster):
    with pytest.raises(NotImplementedError, match="plot_tree"):
        gbmo.create_tree_digraph(booster, tree_index=0)


def test_metric_of_a_cv_history_draws_the_means_and_a_band_of_one_stdv():
    X_filled = X_FILLED[:240]
    history = gbmo.cv({"verbosity": 0}, gbmo.Dataset(X_filled, Y[:240]), 4, nfold=3,
                      eval_train_metric=True, return_cvbooster=True)
    ax = plot_metric(history, metric="rmse")
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == {"train", "valid"}
    np.testing.assert_allclose(lines["valid"].get_ydata(), history["valid rmse-mean"])
    band = ax.collections[[line.get_label() for line in ax.get_lines()].index("valid")]
    top = band.get_paths()[0].vertices[:, 1].max()
    assert top == pytest.approx(max(np.add(history["valid rmse-mean"],
                                           history["valid rmse-stdv"])))
    with pytest.raises(ValueError, match="cv's history holds the folds' means"):
        plot_metric(history, per_output=True)
