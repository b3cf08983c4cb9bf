"""Plots of a trained model, as LightGBM's plotting module, with the views a
vector-leaf model adds: learning curves and feature importance per output,
and trees whose leaves are drawn as small bar charts of their vectors.

matplotlib is optional (`pip install gbmo[plot]`): each function imports it
when called, so `import gbmo` never does. Every function draws on `ax` (a new
figure when None) and returns the Axes.

    from gbmo.plotting import (plot_metric, plot_importance, plot_tree,
                               plot_split_value_histogram)
"""
import numbers
import re

import numpy as np

from .booster import Booster
from .introspection import categories_left, depths_and_parents
from .metric_history import PER_OUTPUT
from .metrics import parse_metric
from .validation import one_of

_LINESTYLES = ("-", "--", ":", "-.")


def _axes(ax, figsize, dpi=None):
    """ax, or the Axes of a new figure; the ImportError says how to get matplotlib."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError("gbmo's plots need matplotlib: pip install matplotlib "
                          "(or pip install gbmo[plot])") from None
    if ax is None:
        _, ax = plt.subplots(figsize=figsize, dpi=dpi)
    return ax


def _output_color(output):
    # One color per output across plots, so a leaf's bar and a metric curve match.
    return f"C{output % 10}"


def _as_booster(model, caller, accepted="a gbmo.Booster or a fitted gbmo estimator"):
    if isinstance(model, Booster):
        return model
    booster = getattr(model, "booster_", None)
    if isinstance(booster, Booster):
        return booster
    raise TypeError(f"{caller} takes {accepted}, got {type(model).__module__}."
                    f"{type(model).__qualname__}")


def _feature_names(booster, feature_names):
    names = feature_names if feature_names is not None else booster.feature_name()
    if len(names) != booster.n_features:
        raise ValueError(f"feature_names has {len(names)} names, but the model has "
                         f"{booster.n_features} features")
    return [str(name) for name in names]


def _format(value, precision):
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.{precision}g}"


def _apply_labels(ax, title, xlabel, ylabel, grid, xlim=None, ylim=None):
    for setter, value in ((ax.set_title, title), (ax.set_xlabel, xlabel),
                          (ax.set_ylabel, ylabel), (ax.set_xlim, xlim), (ax.set_ylim, ylim)):
        if value is not None:
            setter(value)
    ax.grid(grid)


# -- learning curves --------------------------------------------------------

def _recorded_metrics(history):
    return [key for key in history if not key.endswith("_per_output")]


def _metric_curves(evals_result, metric, dataset_names, per_output):
    """(metric, [(label, values, line style)]) after checking every name."""
    if not evals_result or not any(evals_result.values()):
        raise ValueError("evals_result is empty: no metric was recorded (train with "
                         "valid_sets=[...] to record one)")
    if dataset_names is None:
        dataset_names = list(evals_result)
    unknown = [name for name in dataset_names if name not in evals_result]
    if unknown or not dataset_names:
        raise ValueError(f"dataset_names {list(dataset_names)!r} must name recorded data sets; "
                         f"available: {', '.join(evals_result)}")
    if isinstance(metric, str) and metric.endswith(PER_OUTPUT):
        raise ValueError(f"metric {metric!r} is a record of per-output values: give "
                         f"metric={metric[:-len(PER_OUTPUT)]!r} with per_output=True")
    if metric is None:
        metric = next(iter(_recorded_metrics(evals_result[dataset_names[0]])), None)
    elif metric not in evals_result[dataset_names[0]]:
        from .metrics import canonical_metric

        metric = canonical_metric(metric)  # recorded under gbmo's name ("l2" as "mse")
    curves = []
    for style, name in enumerate(dataset_names):
        history = evals_result[name]
        if metric not in history:
            raise ValueError(f"metric {metric!r} was not recorded for {name!r}; recorded: "
                             f"{', '.join(_recorded_metrics(history)) or 'none'}")
        if not per_output:
            curves.append((name, np.asarray(history[metric], dtype=float), {}))
            continue
        key = f"{metric}_per_output"
        if key not in history:
            raise ValueError(f"metric {metric!r} has no per-output values for {name!r} "
                             f"({key!r} is absent: a single-output model, or one of class "
                             "indices (softmax, multiclassova), records one value per round)")
        per_round = np.asarray(history[key], dtype=float)
        # a restricted metric ("rmse[1,2]") records its outputs' values in order
        outputs = parse_metric(metric)[1] or range(per_round.shape[1])
        curves.extend((f"{name} output {output}", values,
                       {"color": _output_color(output),
                        "linestyle": _LINESTYLES[style % len(_LINESTYLES)]})
                      for output, values in zip(outputs, per_round.T))
    return metric, curves


_CV_RECORD = re.compile(r"^(\S+) (.+)-(mean|stdv)$")


def _cv_means_and_spreads(history):
    """cv's history as (an evals_result of the folds' means, the same of their
    standard deviations; its "boosters" / "cvbooster" left aside); any other
    evals_result as it is, and {}."""
    records = [(key, _CV_RECORD.match(key)) for key in history if isinstance(key, str)]
    records = [(key, match) for key, match in records if match]
    if not records or any(isinstance(values, dict) for values in history.values()):
        return history, {}
    means, spreads = {}, {}
    for key, match in records:
        data, metric, statistic = match.groups()
        target = means if statistic == "mean" else spreads
        target.setdefault(data, {})[metric] = history[key]
    return means, spreads


def plot_metric(booster, metric=None, dataset_names=None, ax=None, xlim=None,
                ylim=None, title="Metric during training", xlabel="Iterations", ylabel=None,
                figsize=None, dpi=None, grid=True, per_output=False):
    """One curve per data set of `metric` against the boosting round (1, 2, ...).

    booster: a Booster, a fitted estimator or an evals_result
    dict ({data set: {metric: [per round], "<metric>_per_output": [[per
    output] per round]}}); or what gbmo.cv returns ({"valid rmse-mean":
    [...], "valid rmse-stdv": [...]}), whose means are drawn with a band of
    one standard deviation over the folds. metric defaults to the first one
    recorded, dataset_names to all recorded data sets. per_output=True draws
    one curve per output (a color per output, a line style per data set).
    ylabel defaults to the metric's name. The arguments before per_output are
    LightGBM's, in its order."""
    evals_result = (booster if isinstance(booster, dict)
                    else _as_booster(booster, "plot_metric",
                                     "a gbmo.Booster, a fitted gbmo estimator or an "
                                     "evals_result dict").evals_result)
    evals_result, spreads = _cv_means_and_spreads(evals_result)
    if spreads and per_output:
        raise ValueError("per_output=True needs per-output records; cv's history holds the "
                         "folds' means of each metric only")
    metric, curves = _metric_curves(evals_result, metric, dataset_names, per_output)
    ax = _axes(ax, figsize, dpi)
    from matplotlib.ticker import MaxNLocator  # _axes has made sure matplotlib is there

    for label, values, style in curves:
        rounds = np.arange(1, len(values) + 1)
        line, = ax.plot(rounds, values, label=label, **style)
        if spreads:
            spread = np.asarray(spreads[label][metric], dtype=float)
            ax.fill_between(rounds, values - spread, values + spread, alpha=0.2,
                            color=line.get_color())
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(loc="best")
    _apply_labels(ax, title, xlabel, metric if ylabel is None else ylabel, grid, xlim, ylim)
    return ax


# -- feature importance ------------------------------------------------------

def _importance_columns(booster, importance_type, per_output, output):
    """(n_features, n_series) importances and the series' legend labels (None for one)."""
    if output is None and not per_output:
        return booster.feature_importance(importance_type)[:, None], None
    by_output = booster.feature_importance(importance_type, per_output=True)
    if output is None:
        return by_output, [f"output {j}" for j in range(booster.n_outputs)]
    if not 0 <= output < booster.n_outputs:
        raise ValueError(f"output {output!r} is out of range: the model has "
                         f"{booster.n_outputs} outputs")
    return by_output[:, [output]], None


def plot_importance(booster, ax=None, height=0.6, xlim=None, ylim=None,
                    title="Feature importance", xlabel="Feature importance", ylabel="Features",
                    importance_type="auto", max_num_features=None, ignore_zero=True,
                    figsize=None, dpi=None, grid=True, precision=3, per_output=False,
                    output=None, stacked=False, feature_names=None, show_values=True, **kwargs):
    """Horizontal bars of `booster.feature_importance(importance_type)`, the
    most important feature on top, limited to the max_num_features most
    important; features with zero importance are left out unless ignore_zero
    is False. importance_type "auto", as LightGBM's: a fitted estimator's own
    importance_type, a Booster's "split". The arguments before per_output are
    LightGBM's, in its order; kwargs go to Axes.barh.

    per_output=True draws each output's importance (the per-output array,
    whose "gain" columns sum to the overall gain), grouped bars per feature or,
    for "gain" only, stacked with stacked=True, features ranked by their sum
    over outputs;
    output=j draws output j's column alone. Values are written at the bar
    ends with `precision` significant digits (a stack's total at its end;
    grouped bars carry none; precision=None, or XGBoost's show_values=False,
    writes none). height is the height of a feature's bar, or of its group
    of bars."""
    if max_num_features is not None and max_num_features < 1:
        raise ValueError(f"max_num_features must be None or >= 1, got {max_num_features!r}")
    if importance_type == "auto":
        # a fitted estimator's own (its default when None), else a Booster's split counts
        own = getattr(booster, "_own_default", None)
        importance_type = "split" if own is None else own("importance_type")
    booster = _as_booster(booster, "plot_importance")
    if stacked and per_output and output is None \
            and booster.importance_kind(importance_type) != "gain":
        # a split counts once in each output it involves (every output, with the dense split)
        raise ValueError(f"stacked=True adds the outputs' importances, which sum to the whole "
                         f"only for importance_type='gain', not {importance_type!r}: give "
                         "importance_type='gain', or stacked=False for bars side by side")
    names = _feature_names(booster, feature_names)
    importance, series_labels = _importance_columns(booster, importance_type, per_output, output)
    totals = importance.sum(axis=1)
    ranked = np.argsort(-totals, kind="stable")
    if ignore_zero:
        ranked = ranked[totals[ranked] != 0]
        if not ranked.size:
            raise ValueError("no feature has non-zero importance: the model made no split")
    # Bars are drawn bottom up: the most important feature goes last, on top.
    shown = ranked[:max_num_features][::-1]
    ax = _axes(ax, figsize, dpi)
    positions = np.arange(len(shown), dtype=float)
    n_series = importance.shape[1]
    bar_height = height if stacked else height / n_series
    left = np.zeros(len(shown))
    for series in range(n_series):
        values = importance[shown, series]
        offset = 0.0 if stacked else (series - (n_series - 1) / 2) * bar_height
        style = {"color": None if series_labels is None else _output_color(series), **kwargs}
        bars = ax.barh(positions + offset, values, height=bar_height, left=left, align="center",
                       label=None if series_labels is None else series_labels[series], **style)
        if stacked:
            left = left + values
        if show_values and precision is not None \
                and (n_series == 1 or stacked and series == n_series - 1):
            ax.bar_label(bars, labels=[_format(v, precision) for v in
                                       (left if stacked else values)], padding=3)
    ax.set_yticks(positions, [names[f] for f in shown])
    if series_labels is not None:
        ax.legend(loc="lower right")
    _apply_labels(ax, title, xlabel, ylabel, grid, xlim, ylim)
    return ax


def plot_split_value_histogram(booster, feature, bins=None, ax=None, width_coef=0.8,
                               xlim=None, ylim=None,
                               title="Split value histogram for feature with @index/name@ "
                                     "@feature@",
                               xlabel="Feature split value", ylabel="Count", figsize=None,
                               dpi=None, grid=True, **kwargs):
    """Bars of booster.get_split_value_histogram(feature, bins): how many
    splits use each range of the feature's thresholds, as LightGBM's
    function of the same name and arguments. Each bar is width_coef of its
    bin wide; @feature@ in the title becomes the feature, and @index/name@
    "index" or "name" as it was given. kwargs go to Axes.bar."""
    booster = _as_booster(booster, "plot_split_value_histogram")
    if not isinstance(width_coef, numbers.Real) or not 0.0 < width_coef <= 1.0:
        raise ValueError(f"width_coef must be in (0, 1], got {width_coef!r}")
    counts, edges = booster.get_split_value_histogram(feature, bins=bins)
    if not counts.sum():
        raise ValueError(f"no split uses feature {feature!r}: there is no histogram to draw")
    ax = _axes(ax, figsize, dpi)
    widths = np.diff(edges)
    ax.bar(edges[:-1] + widths / 2, counts, width=width_coef * widths, align="center",
           **kwargs)
    if title is not None:
        title = (title.replace("@feature@", str(feature))
                 .replace("@index/name@", "name" if isinstance(feature, str) else "index"))
    _apply_labels(ax, title, xlabel, ylabel, grid, xlim, ylim)
    return ax


def create_tree_digraph(booster, *args, **kwargs):
    """LightGBM's graphviz drawing: gbmo draws trees with matplotlib alone
    (plot_tree) and does not depend on graphviz, so this says so."""
    raise NotImplementedError("gbmo has no graphviz drawing of a tree: plot_tree(booster, "
                              "tree_index=...) draws it with matplotlib, leaves as bar charts "
                              "of their vectors")


# -- one tree ----------------------------------------------------------------

def _tree_layout(tree):
    """x, depth of every node: leaves at 0, 1, 2, ... from left to right, each
    internal node centred above its two children."""
    x = np.zeros(tree.n_nodes)
    depth = np.zeros(tree.n_nodes, dtype=np.int64)
    next_leaf = 0
    stack = [0]
    # Depth first with an explicit stack: a tree may be deeper than Python's recursion limit.
    while stack:
        node = stack.pop()
        left, right = tree.node_left[node], tree.node_right[node]
        if left < 0:
            x[node], next_leaf = next_leaf, next_leaf + 1
            continue
        depth[left] = depth[right] = depth[node] + 1
        stack += [right, left]
    # Children are numbered after their parents: a backward pass places every child first.
    for node in range(tree.n_nodes - 1, -1, -1):
        if tree.node_left[node] >= 0:
            x[node] = (x[tree.node_left[node]] + x[tree.node_right[node]]) / 2
    return x, depth


TREE_INFO = ("split_gain", "internal_count", "leaf_count", "data_percentage")
# LightGBM's show_info that gbmo's trees cannot show
_NOT_KEPT_INFO = ("internal_value", "internal_weight", "leaf_weight")


def _split_text(booster, tree, node, names, precision, shown):
    categories = categories_left(booster, tree, node)
    if categories is None:
        rule = f"<= {_format(tree.node_threshold[node], precision)}"
    else:  # a categorical split: the categories that go left, the first few
        shown_categories = ", ".join(map(str, categories[:4])) + (
            ", ..." if len(categories) > 4 else "")
        rule = f"in {{{shown_categories}}}"
    lines = [f"{names[tree.node_feature[node]]} {rule}"]
    if "split_gain" in shown:
        lines.append(f"gain {_format(tree.node_gain[node], precision)}")
    if "internal_count" in shown:
        lines.append(f"count {tree.node_count[node]}")
    if "data_percentage" in shown:
        lines.append(_share_text(tree, node, precision))
    return "\n".join(lines)


def _checked_show_info(show_info):
    """show_info as a tuple of TREE_INFO items (None: gains and counts)."""
    if show_info is None:
        return ("split_gain", "internal_count", "leaf_count")
    if isinstance(show_info, str) or not hasattr(show_info, "__iter__"):
        raise ValueError(f"show_info must be a list of {', '.join(TREE_INFO)}; got {show_info!r}")
    shown = tuple(show_info)
    not_kept = [item for item in shown if item in _NOT_KEPT_INFO]
    if not_kept:
        raise ValueError(f"show_info {', '.join(not_kept)}: gbmo's trees keep no internal "
                         f"values or hessian sums to show; allowed: {', '.join(TREE_INFO)}")
    if any(item not in TREE_INFO for item in shown):
        raise ValueError(f"show_info must be a list of {', '.join(TREE_INFO)}; got {shown!r}")
    return shown


def _share_text(tree, node, precision):
    return f"{_format(100.0 * tree.node_count[node] / tree.node_count[0], precision)}% of data"


def _leaf_caption(tree, node, shown, precision):
    parts = [f"leaf {tree.node_value[node]}"]
    if "leaf_count" in shown:
        parts.append(f"count {tree.node_count[node]}")
    if "data_percentage" in shown:
        parts.append(_share_text(tree, node, precision))
    return ", ".join(parts)


def _draw_leaf(ax, rectangle, values, caption, value_range, max_outputs, precision,
               highlighted):
    """An inset at rectangle (x, y, width, height in data units): bars of the
    leaf vector on the tree's common scale, or its first max_outputs values
    as text when it is longer; highlighted (example_case's leaf) in red."""
    inset = ax.inset_axes(rectangle, transform=ax.transData)
    inset.set_title(caption, fontsize=6, pad=2, color="red" if highlighted else "black")
    if len(values) > max_outputs:
        lines = [f"{j}: {_format(v, precision)}" for j, v in enumerate(values[:max_outputs])]
        inset.text(0.5, 1.0, "\n".join(lines + ["..."]), ha="center", va="top",
                   fontsize=6, transform=inset.transAxes)
        inset.axis("off")
        return
    inset.bar(np.arange(len(values)), values,
              color=[_output_color(j) for j in range(len(values))])
    inset.axhline(0.0, color="black", linewidth=0.5)
    inset.set_ylim(*value_range)
    inset.set_xticks([])
    inset.tick_params(axis="y", labelsize=5, length=2, pad=1)


def _example_path(booster, tree_index, tree, example_case):
    """The nodes example_case (one row) passes through in the tree."""
    shape = getattr(example_case, "shape", None) or np.shape(example_case)
    if len(shape) != 2 or shape[0] != 1:
        raise ValueError(f"example_case must be one row, (1, n_features), got shape "
                         f"{tuple(shape)}")
    leaf = booster.predict_leaf(example_case, num_iteration=-1)[0, tree_index]
    parent = depths_and_parents(tree)[1]
    node = int(np.flatnonzero((tree.node_left < 0) & (tree.node_value == leaf))[0])
    path = {node}
    while parent[node] >= 0:
        node = parent[node]
        path.add(node)
    return path


def plot_tree(booster, ax=None, tree_index=None, figsize=None, dpi=None, show_info=None,
              precision=3, orientation="vertical", example_case=None, feature_names=None,
              max_outputs=8, *, tree_idx=None, num_trees=None):
    """Draws tree `tree_index` (an index into booster.trees) with matplotlib alone.

    Internal nodes are boxes with "feature <= threshold" (or "feature in {...}",
    the categories a categorical split sends left); the edge to the left
    child is labelled "yes", the other "no", and the side missing values take
    also "missing". Each leaf is an inset Axes (in ax.child_axes, in node
    order) titled with its leaf index: a bar per output on a scale shared by
    the tree's leaves, or the first max_outputs values and "..." when the
    vector is longer. The arguments up to example_case are LightGBM's, in its
    order: show_info lists what else the nodes show, of TREE_INFO (None:
    split_gain, internal_count and leaf_count); orientation "vertical" (the
    root on top, the default) or "horizontal" (the root on the left,
    LightGBM's default); example_case, one row, is drawn as its path in red.
    tree_idx and num_trees are XGBoost's names of tree_index (default 0)."""
    tree_index = one_of("tree_index", tree_index, "tree_idx",
                        one_of("tree_idx", tree_idx, "num_trees", num_trees)) or 0
    booster = _as_booster(booster, "plot_tree")
    if not 0 <= tree_index < booster.num_trees:
        raise IndexError(f"tree_index {tree_index!r} is out of range: the model has "
                         f"{booster.num_trees} trees")
    shown = _checked_show_info(show_info)
    if orientation not in ("vertical", "horizontal"):
        raise ValueError(f"orientation must be 'vertical' or 'horizontal', got {orientation!r}")
    names = _feature_names(booster, feature_names)
    tree = booster.trees[tree_index]
    path = (set() if example_case is None
            else _example_path(booster, tree_index, tree, example_case))
    leaf_values = tree.dense_leaf_values(booster.n_outputs)
    across, depth = _tree_layout(tree)
    vertical = orientation == "vertical"
    x, y = (across, -depth) if vertical else (depth * 1.6, -across)
    if figsize is None:
        long_side, short_side = max(6.0, 1.1 * tree.n_leaves), max(3.0, 1.4 * (depth.max() + 1))
        figsize = (long_side, short_side) if vertical else (short_side * 1.4, long_side * 0.7)
    ax = _axes(ax, figsize, dpi)
    # Leaves share one scale, with 0 in it, so their bars compare.
    value_range = (min(leaf_values.min(), 0.0), max(leaf_values.max(), 0.0))
    margin = 0.05 * (value_range[1] - value_range[0]) or 1.0
    value_range = (value_range[0] - margin, value_range[1] + margin)
    for node in range(tree.n_nodes):
        left, right = tree.node_left[node], tree.node_right[node]
        if left < 0:
            rectangle = ([x[node] - 0.35, y[node] - 0.75, 0.7, 0.55] if vertical
                         else [x[node] - 0.1, y[node] - 0.3, 0.9, 0.55])
            _draw_leaf(ax, rectangle, leaf_values[tree.node_value[node]],
                       _leaf_caption(tree, node, shown, precision), value_range, max_outputs,
                       precision, node in path)
            continue
        ax.text(x[node], y[node], _split_text(booster, tree, node, names, precision, shown),
                ha="center", va="center", fontsize=7, zorder=3,
                bbox={"boxstyle": "round", "facecolor": "white",
                      "edgecolor": "red" if node in path else "gray"})
        missing_left = bool(tree.node_missing_left[node])
        for child, answer, takes_missing in ((left, "yes", missing_left),
                                             (right, "no", not missing_left)):
            on_path = node in path and child in path
            ax.plot([x[node], x[child]], [y[node], y[child]],
                    color="red" if on_path else "gray", linewidth=1.6 if on_path else 0.8,
                    zorder=1)
            ax.text((x[node] + x[child]) / 2, (y[node] + y[child]) / 2,
                    answer + (", missing" if takes_missing else ""), ha="center",
                    va="center", fontsize=6, color="dimgray", zorder=2)
    if vertical:
        ax.set_xlim(-0.6, tree.n_leaves - 0.4)
        ax.set_ylim(-depth.max() - 0.85, 0.45)
    else:
        ax.set_xlim(-0.6, 1.6 * depth.max() + 0.9)
        ax.set_ylim(-(tree.n_leaves - 0.4), 0.6)
    ax.axis("off")
    return ax
