"""Property-based fuzzing (issue 7, parts 3 and 4).

Training: over shapes (n 2..60, p 1..5, d 1..4), dtypes (float32, float64,
int64, bool, float16), memory layouts, NaN / inf / magnitude patterns, sample
weights, objectives (also a scipy sparse 0/1 Y through the sparse-output
path) and parameter values,
fit -> predict -> save -> load -> predict never raises, predictions are finite
with the right shape, every tree is valid (growth invariants), the raw scores
the training loop kept equal a fresh traversal of X, the feature
contributions (pred_contrib) sum to the raw scores, and the loaded model
predicts bit for bit what the original did.

Loader: a saved model with random fields mutated (out-of-range integers, NaN,
inf, negative numbers, lists shortened or lengthened, wrong types, truncated
text) either loads a model that predicts finite values or raises
gbmo.ModelFormatError, never another exception. Loading runs in-process: a
segfault kills pytest, which is itself the failure signal.

Two white-box hooks, both undone after each example: a metric added to
gbmo.metrics.METRICS (for a sparse Y, a wrapper around
gbmo.sparse_output.evaluate_sparse_output) records the raw scores the
training loop kept, and
gbmo.parallel.PARALLEL_MIN_WORK = 0 (for some examples) makes every kernel run
its OpenMP parallel region even on these tiny inputs.

The examples are derandomized (CI is deterministic) and bounded; the
properties and strategies are reused with many more examples by
tools/fuzz_long.py. Environment overrides: GBMO_FUZZ_EXAMPLES (training, 80),
GBMO_FUZZ_LOADER_EXAMPLES (mutated models, 100), GBMO_FUZZ_DEADLINE_MS (2000).
"""
import contextlib
import copy
import json
import math
import os

import numpy as np
import onnxruntime
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import gbmo
from gbmo import metrics as _metrics
from gbmo import parallel as _parallel
from gbmo import sparse_output as _sparse_output

FUZZ_EXAMPLES = int(os.environ.get("GBMO_FUZZ_EXAMPLES", "80"))
LOADER_EXAMPLES = int(os.environ.get("GBMO_FUZZ_LOADER_EXAMPLES", "100"))
DEADLINE_MS = int(os.environ.get("GBMO_FUZZ_DEADLINE_MS", "2000"))

COMMON_SETTINGS = dict(
    derandomize=True,
    database=None,
    deadline=DEADLINE_MS,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)

# --------------------------------------------------------------------------
# Capturing the raw scores the training loop kept
# --------------------------------------------------------------------------
# The training set passed as a validation set shares the loop's raw scores;
# a metric registered for the duration of a fit receives their transform
# unchanged, which is compared with booster.predict on the same X: the leaf
# assignment the loop used to update raw scores must equal a fresh traversal.
_CAPTURE_METRIC = "_fuzz_capture"


class _Capture:
    def __init__(self):
        self.prediction = None

    def __call__(self, y, prediction, weight=None, n_threads=None):
        self.prediction = np.array(prediction, copy=True)
        return 0.0


@contextlib.contextmanager
def forced_parallel(enabled):
    """With enabled, every kernel call gets its n_threads even for tiny inputs
    (gbmo.parallel.PARALLEL_MIN_WORK = 0), so small examples also run the
    OpenMP parallel regions."""
    if not enabled:
        yield
        return
    saved = _parallel.PARALLEL_MIN_WORK
    _parallel.PARALLEL_MIN_WORK = 0
    try:
        yield
    finally:
        _parallel.PARALLEL_MIN_WORK = saved


@contextlib.contextmanager
def capturing_metric():
    capture = _Capture()
    _metrics.METRICS[_CAPTURE_METRIC] = capture
    try:
        yield capture
    finally:
        _metrics.METRICS.pop(_CAPTURE_METRIC, None)


@contextlib.contextmanager
def capturing_sparse_raw_scores():
    """The sparse-output loop's raw scores (base + CSR deltas), densified here
    on tiny data, as its evaluation receives them."""
    capture = _Capture()
    evaluate = _sparse_output.evaluate_sparse_output

    def recording(metric, Y, D, base, *arguments, **keywords):
        capture.prediction = base + D.toarray()
        return evaluate(metric, Y, D, base, *arguments, **keywords)

    _sparse_output.evaluate_sparse_output = recording
    try:
        yield capture
    finally:
        _sparse_output.evaluate_sparse_output = evaluate


# --------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------
X_KINDS = ("normal", "few_distinct", "huge", "tiny", "with_inf", "constant_column",
           "duplicated_rows")
NAN_PATTERNS = ("none", "random", "column", "row", "single_value_column", "all")


@st.composite
def training_cases(draw):
    """A dict: X, y, params, rounds, and a description for the failure note.
    One case in five has 300-600 rows, so that features, and a categorical
    one of 300 categories, have more than 255 bins (16-bit bins, their
    threshold and set tables, model version 4)."""
    many_rows = draw(st.sampled_from([False, False, False, False, True]))
    n = draw(st.integers(300, 600) if many_rows else st.integers(2, 60))
    p = draw(st.integers(1, 5))
    d = draw(st.integers(1, 4))
    dtype = draw(st.sampled_from(["float64", "float64", "float32", "float32", "int64", "bool",
                                  "float16"]))
    x_kind = draw(st.sampled_from(X_KINDS))
    integral = dtype in ("int64", "bool")
    nan_pattern = "none" if integral else draw(st.sampled_from(NAN_PATTERNS))
    nan_fraction = draw(st.sampled_from([0.05, 0.3, 0.9]))
    objective = draw(st.sampled_from(["mse", "sigmoid", "softmax", "multiclassova", "sparse_labels"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)

    # -- X ------------------------------------------------------------------
    if dtype == "bool":
        X = rng.random((n, p)) < 0.5
    elif dtype == "int64":
        X = rng.integers(-5, 6, size=(n, p)).astype(np.int64)
        if x_kind == "huge":
            X = X * (2**40)
    else:
        X = rng.normal(size=(n, p))
        if x_kind == "few_distinct":
            X = np.round(X)
        elif x_kind == "huge":
            X = X * {"float64": 1e300, "float32": 1e37, "float16": 6e4}[dtype]
        elif x_kind == "tiny":
            X = X * {"float64": 1e-300, "float32": 1e-37, "float16": 1e-6}[dtype]
        elif x_kind == "with_inf":
            X[rng.random((n, p)) < 0.2] = np.inf
            X[rng.random((n, p)) < 0.2] = -np.inf
        with np.errstate(over="ignore"):  # float16 / float32 overflow to inf is wanted
            X = X.astype(dtype)
    if x_kind == "constant_column":
        X[:, rng.integers(p)] = 1
    elif x_kind == "duplicated_rows":
        X[n // 2:] = X[: n - n // 2]
    if nan_pattern == "random":
        X[rng.random((n, p)) < nan_fraction] = np.nan
    elif nan_pattern == "column":
        X[:, rng.integers(p)] = np.nan
    elif nan_pattern == "row":
        X[rng.integers(n)] = np.nan
    elif nan_pattern == "single_value_column":
        column = rng.integers(p)
        keep = rng.integers(n)
        X[np.arange(n) != keep, column] = np.nan
    elif nan_pattern == "all":
        X[:] = np.nan
    # a categorical feature: integer categories, negative and NaN ones missing
    categorical = objective != "sparse_labels" and draw(st.booleans())
    if categorical:
        column = int(rng.integers(p))
        if dtype != "bool":
            X[:, column] = rng.integers(-2, draw(st.sampled_from([2, 8, 300])), size=n)
            if dtype not in ("int64",):
                X[rng.random(n) < 0.2, column] = np.nan
    layout = draw(st.sampled_from(["C", "F", "strided", "read_only"]))
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "strided":
        big = np.zeros((2 * n, 2 * p), dtype=X.dtype)
        big[::2, ::2] = X
        X = big[::2, ::2]
    elif layout == "read_only":
        X = X.copy()
        X.flags.writeable = False
    weighting = draw(st.sampled_from(["none", "none", "ones", "random", "some_zero"]))
    weight = None
    if weighting == "ones":
        weight = np.ones(n)
    elif weighting == "random":
        weight = rng.random(n) * 3 + 0.01
    elif weighting == "some_zero":
        weight = (rng.random(n) < 0.5).astype(np.float64)
        weight[rng.integers(n)] = 1.0

    # -- y ------------------------------------------------------------------
    params = {}
    if objective == "mse":
        scale = draw(st.sampled_from([1.0, 1e-3, 1e6]))
        y = rng.normal(size=(n, d)) * scale
        if d == 1 and draw(st.booleans()):
            y = y[:, 0]
        n_outputs = d
    elif objective == "sigmoid":
        if draw(st.booleans()):
            y = (rng.random((n, d)) < 0.5).astype(np.float64)
        else:
            y = rng.random((n, d))
        if d == 1 and draw(st.booleans()):
            y = y[:, 0]
        n_outputs = d
    elif objective == "sparse_labels":
        # A scipy sparse 0/1 Y: the sparse-output path (gbmo.sparse_output).
        import scipy.sparse as sp

        n_outputs = d + draw(st.sampled_from([0, 1, 30]))
        y = sp.csr_matrix((rng.random((n, n_outputs)) < draw(st.sampled_from([0.05, 0.3, 0.9])))
                          .astype(np.float64))
    else:
        n_classes = d + 1
        y = rng.integers(0, n_classes, size=n)
        extra = draw(st.sampled_from([None, 0, 1, 2]))
        if extra is not None:
            params["num_class"] = max(2, int(y.max()) + 1 + extra)
            n_outputs = params["num_class"]
        else:
            n_outputs = max(2, int(y.max()) + 1)

    # -- parameters -----------------------------------------------------------
    split = draw(st.sampled_from(["dense", "dense", "sparse", "sparse_restricted"]))
    params.update({
        "objective": objective,
        "verbosity": 0,
        "n_threads": draw(st.sampled_from([1, 2, 3])),
        "max_leaves": draw(st.sampled_from([2, 3, 4, 7, 16, 64])),
        "max_depth": draw(st.sampled_from([-1, 0, 1, 2, 3, 6])),
        "min_samples_leaf": draw(st.sampled_from([1, 1, 2, 3, 5, 20, 30])),
        # above 255, bins are 16-bit
        "max_bins": draw(st.sampled_from([2, 3, 4, 16, 63, 255, 256, 1000, 65535])),
        "min_data_in_bin": draw(st.sampled_from([1, 1, 1, 3, 50])),
        "lambda_l2": draw(st.sampled_from([0.0, 1e-3, 1.0, 100.0])),
        "lambda_l1": draw(st.sampled_from([0.0, 0.0, 0.5, 1e3])),
        "learning_rate": draw(st.sampled_from([0.01, 0.1, 0.5, 1.0])),
        "min_child_weight": draw(st.sampled_from([0.0, 1e-3, 1.0])),
        "min_gain": draw(st.sampled_from([0.0, 0.0, 1e-3])),
        "hist_cache": draw(st.sampled_from([1, 2, 64])),
        "split": split,
        "growth": draw(st.sampled_from(["bestfirst", "depthwise"]
                                       + (["symmetric"] if split == "dense" else []))),
        # one-output trees take the dense split only
        "tree_mode": draw(st.sampled_from(["multi_output"]
                                          + (["single_output"] if split == "dense" else []))),
    })
    if split != "dense":
        params["top_k"] = draw(st.integers(1, n_outputs))  # more is refused
    rounds = draw(st.integers(1, 8))
    params["subsample"] = draw(st.sampled_from([1.0, 1.0, 0.5, 0.1]))
    params["subsample_freq"] = draw(st.sampled_from([1, 3]))
    if params["subsample"] == 1.0 and draw(st.booleans()):
        params.update(data_sample_strategy="goss",
                      top_rate=draw(st.sampled_from([0.0, 0.2, 0.9])),
                      other_rate=draw(st.sampled_from([0.01, 0.1])))
    if (objective == "sigmoid" and n_outputs == 1 and "data_sample_strategy" not in params
            and draw(st.booleans())):  # balanced bagging
        params["neg_bagging_fraction"] = draw(st.sampled_from([1.0, 0.3]))
        params["pos_bagging_fraction"] = draw(st.sampled_from([1.0, 0.6]))
    boosting = draw(st.sampled_from(["gbdt", "dart", "dart", "rf"]))
    if boosting == "dart":
        params.update(boosting="dart", drop_rate=draw(st.sampled_from([0.1, 0.9])),
                      skip_drop=draw(st.sampled_from([0.0, 0.5])))
    elif (boosting == "rf" and objective != "sparse_labels"
          and "data_sample_strategy" not in params):
        params["boosting"] = "rf"
    if params["growth"] != "symmetric":
        params["extra_trees"] = draw(st.sampled_from([False, False, True]))
    if objective != "sparse_labels":  # a sparse Y refuses the noise
        params["random_strength"] = draw(st.sampled_from([0.0, 0.0, 0.0, 1.0, 50.0]))
    params["colsample_bytree"] = draw(st.sampled_from([1.0, 1.0, 0.5]))
    params["colsample_bynode"] = draw(st.sampled_from([1.0, 1.0, 0.3]))
    if params.get("boosting") == "rf" and max(params["subsample"], params["colsample_bytree"],
                                              params["colsample_bynode"]) == 1.0 == min(
            params["subsample"], params["colsample_bytree"], params["colsample_bynode"]):
        params["colsample_bynode"] = 0.5  # a forest's trees need samples of their own
    if split == "dense" and params["tree_mode"] == "multi_output":
        ensembler = draw(st.sampled_from([None, None, None, "sketch_topk", "sketch_random",
                                          "sketch_projection", "mtgbm", "weighted_sum"]))
        if ensembler is not None:
            params["ensembler"] = ensembler
            if ensembler.startswith("sketch"):
                params["ensembler_params"] = {"k": draw(st.integers(1, n_outputs))}
        if params["lambda_l2"] > 0:  # L2 refuses 0 (test_score_function.py)
            params["score_function"] = draw(st.sampled_from(["NewtonL2", "NewtonL2", "L2"]))
    # bounds on leaf values follow the split gradients, which then set the leaves
    bounds_allowed = "ensembler" not in params and params.get("score_function") != "L2"
    if (split == "dense" and params["growth"] != "symmetric" and bounds_allowed
            and objective != "sparse_labels" and draw(st.booleans())):
        per_output = draw(st.booleans())
        shape = (p, n_outputs) if per_output else (p,)
        params["monotone_constraints"] = rng.integers(-1, 2, size=shape).tolist()
    if (split == "dense" and params["growth"] != "symmetric" and bounds_allowed
            and objective != "sparse_labels"):
        params["max_delta_step"] = draw(st.sampled_from([0.0, 0.0, 0.0, 0.05, 3.0]))
        params["path_smooth"] = draw(st.sampled_from([0.0, 0.0, 0.0, 2.0, 50.0]))
    if draw(st.integers(0, 3)) == 0:
        params["max_bins_by_feature"] = [draw(st.sampled_from([2, 3, 16, 255, 300, 65535]))
                                         for _ in range(p)]
    if draw(st.booleans()):
        params["interaction_constraints"] = [
            sorted(set(rng.integers(0, p, size=rng.integers(1, p + 1)).tolist()))
            for _ in range(draw(st.integers(1, 3)))]
    # linear leaves take the gradients of a dense, unbounded leaf and a dense X
    linear_allowed = (split == "dense" and bounds_allowed and objective != "sparse_labels"
                      and "monotone_constraints" not in params
                      and params.get("max_delta_step", 0.0) == 0.0
                      and params.get("path_smooth", 0.0) == 0.0
                      and params.get("data_sample_strategy") != "goss")
    if linear_allowed and draw(st.integers(0, 3)) == 0:
        params["linear_tree"] = True
        params["linear_lambda"] = draw(st.sampled_from([0.0, 0.0, 1e-3, 10.0]))
    if categorical:
        params["categorical_feature"] = [column]
        params["cat_smooth"] = draw(st.sampled_from([0.0, 10.0]))
        params["cat_l2"] = draw(st.sampled_from([0.0, 10.0]))
        params["min_data_per_group"] = draw(st.sampled_from([0, 5, 100]))
        params["max_cat_threshold"] = draw(st.sampled_from([1, 3, 32]))
        params["max_cat_to_onehot"] = draw(st.sampled_from([0, 4, 300]))
        if params.get("monotone_constraints") is not None:
            params["monotone_constraints"][column] = (
                [0] * n_outputs if isinstance(params["monotone_constraints"][column], list)
                else 0)
    if objective == "sparse_labels":
        # What the sparse-output path takes (others are refused by name, tested
        # in test_sparse_output.py).
        params.update(objective=draw(st.sampled_from(["squared_hinge", "sigmoid"])),
                      split="sparse", top_k=draw(st.integers(1, n_outputs)), growth="bestfirst",
                      tree_mode="multi_output")
        params.pop("ensembler", None)
        params.pop("score_function", None)
        params.pop("ensembler_params", None)
    # scipy sparse X (implicit entries are 0): the same model as the dense array
    sparse_format = None
    if dtype in ("float64", "float32") and not categorical and not params.get("linear_tree"):
        sparse_format = draw(st.sampled_from([None, None, None, "csr", "csc"]))
        if sparse_format is not None:
            import scipy.sparse as sp

            X = sp.csr_matrix(X) if sparse_format == "csr" else sp.csc_matrix(X)
    params["use_missing"] = draw(st.sampled_from([True, True, True, False]))
    if sparse_format is None:  # a sparse X's absent zeros cannot be missing values
        params["zero_as_missing"] = draw(st.sampled_from([False, False, False, True]))
    # Forcing the parallel regions on tiny inputs uses 3 threads: with libgomp's default
    # active waiting, a region of exactly as many threads as cores costs ~10 ms on a
    # loaded machine (vs ~0.05 ms with 3), which would blow the per-example deadline.
    force_parallel = params["n_threads"] == 3 and draw(st.booleans())
    description = dict(n=n, p=p, d=d, dtype=dtype, x_kind=x_kind, nan_pattern=nan_pattern,
                       nan_fraction=nan_fraction, layout=layout, weighting=weighting, seed=seed,
                       rounds=rounds, force_parallel=force_parallel, params=params,
                       sparse_format=sparse_format)
    return dict(X=X, y=y, weight=weight, params=params, rounds=rounds, n_outputs=n_outputs,
                force_parallel=force_parallel, description=description,
                sparse_labels=objective == "sparse_labels")


# --------------------------------------------------------------------------
# Properties
# --------------------------------------------------------------------------
def check_tree_invariants(booster, X, n_rows, bagged=False):
    """Every tree validates, internal nodes have two children, leaves are
    non-empty, leaf counts sum to n and equal a fresh traversal's counts
    (bagged: trees grown on a sample of the rows count only the sample);
    symmetric trees split every node of a level on one feature and bin."""
    leaves = booster.predict_leaf(X)
    assert leaves.shape == (n_rows, booster.num_trees)
    for t, tree in enumerate(booster.trees):
        tree.validate(booster.n_features, booster.n_outputs)
        internal = tree.node_left >= 0
        if booster.params["growth"] == "symmetric":
            depth = np.zeros(tree.n_nodes, dtype=int)
            for node in np.flatnonzero(internal):
                depth[tree.node_left[node]] = depth[tree.node_right[node]] = depth[node] + 1
            for level in np.unique(depth[internal]):
                at_level = internal & (depth == level)
                assert len(set(zip(tree.node_feature[at_level], tree.node_bin[at_level]))) == 1, \
                    f"tree {t}: level {level} of a symmetric tree has several splits"
        assert np.all((tree.node_right >= 0) == internal), f"tree {t}: a node with one child"
        is_leaf = ~internal
        assert np.all(tree.node_count[is_leaf] > 0), f"tree {t}: an empty leaf"
        assert tree.node_count[is_leaf].sum() == tree.node_count[0], \
            f"tree {t}: leaves do not hold every row"
        assert tree.node_count[0] == n_rows or (bagged and 0 < tree.node_count[0] <= n_rows)
        for node in np.flatnonzero(internal):
            left, right = tree.node_left[node], tree.node_right[node]
            assert tree.node_count[left] + tree.node_count[right] == tree.node_count[node]
        per_leaf = np.zeros(tree.n_leaves, dtype=np.int64)
        per_leaf[tree.node_value[is_leaf]] = tree.node_count[is_leaf]
        if bagged:
            continue
        traversed = np.bincount(leaves[:, t], minlength=tree.n_leaves)
        np.testing.assert_array_equal(
            traversed, per_leaf,
            err_msg=f"tree {t}: rows per leaf by traversal differ from the grower's counts")


def check_monotone(booster, X, constraints, n_outputs):
    """Raw predictions move the constrained way along every constrained
    feature: each row swept over the feature's sorted finite values (but 0
    under zero_as_missing, which reads it as missing, a value of no order)."""
    if constraints is None:
        return
    direction = np.array(constraints).reshape(len(constraints), -1) * np.ones(n_outputs)
    dense = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    zero_missing = booster.params["use_missing"] and booster.params["zero_as_missing"]
    for f in np.flatnonzero(np.any(direction != 0, axis=1)):
        grid = np.unique(dense[np.isfinite(dense[:, f]), f])
        grid = grid[grid != 0] if zero_missing else grid
        for row in dense[:5] if len(grid) > 1 else ():
            sweep = np.repeat(row[None], len(grid), axis=0)
            sweep[:, f] = grid
            steps = np.diff(booster.predict(sweep, raw_score=True).reshape(len(grid), -1),
                            axis=0)
            assert np.all(direction[f] * steps >= 0), f"not monotone in feature {f}"


def check_interactions(booster, groups):
    """Every root-to-leaf path splits on one feature, or on features one
    group holds."""
    if groups is None:
        return
    for tree in booster.trees:
        stack = [(0, frozenset())]
        while stack:
            node, path = stack.pop()
            if tree.node_left[node] < 0:
                assert len(path) <= 1 or any(path <= set(g) for g in groups), (path, groups)
                continue
            path = path | {int(tree.node_feature[node])}
            stack += [(tree.node_left[node], path), (tree.node_right[node], path)]


def _check_contributions(booster, X, raw, n_outputs, shape):
    contributions = booster.predict(X, pred_contrib=True)
    assert contributions.shape == (X.shape[0], X.shape[1] + 1, *shape[1:])
    # The two sums add the trees' values in different orders: their rounding
    # scales with the largest values added (huge leaves cancel when lambda_l2 is
    # 0 and hessians vanish), not with the result.
    magnitude = max(1.0, float(np.abs(raw).max()), sum(
        float(np.abs(tree.dense_leaf_values(n_outputs)).max()) for tree in booster.trees))
    np.testing.assert_allclose(contributions.sum(axis=1), raw, rtol=1e-9, atol=1e-9 * magnitude,
                               err_msg="feature contributions do not sum to the raw scores")


def _check_onnx(booster, X, raw):
    """The exported graph's raw scores are predict's, to float32's precision
    (the ONNX operator's output type; tests/test_onnx.py checks the rest):
    beyond float32's range, infinite of their sign."""
    dense = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    session = onnxruntime.InferenceSession(booster.to_onnx(raw_score=True).SerializeToString())
    exported = session.run(None, {"X": dense})[0].astype(np.float64)
    beyond = np.abs(raw) > np.finfo(np.float32).max
    np.testing.assert_array_equal(exported[beyond], np.copysign(np.inf, raw[beyond]))
    within = raw[~beyond]
    np.testing.assert_allclose(exported[~beyond], within, rtol=1e-6,
                               atol=1e-6 * max(1.0, float(np.abs(within).max(initial=0.0))),
                               err_msg="the ONNX graph's raw scores differ from predict's")


def check_train_save_load(case):
    """The training property: see the module docstring."""
    with forced_parallel(case.get("force_parallel", False)):
        _check_train_save_load(case)


def _check_train_save_load(case):
    X, y, params, rounds = case["X"], case["y"], case["params"], case["rounds"]
    note(repr(case["description"]))
    dataset = gbmo.Dataset(X, y, weight=case.get("weight"))
    sparse_labels = case.get("sparse_labels", False)
    if sparse_labels:
        with capturing_sparse_raw_scores() as capture:
            booster = gbmo.train({**params, "metric": "precision@1"}, dataset, rounds,
                                 valid_sets=[dataset])
    else:
        with capturing_metric() as capture:
            booster = gbmo.train({**params, "metric": _CAPTURE_METRIC}, dataset, rounds,
                                 valid_sets=[dataset])
    n = X.shape[0]
    n_outputs = case["n_outputs"]
    expected_trees = rounds * (n_outputs if params["tree_mode"] == "single_output" else 1)
    assert booster.num_trees == expected_trees
    assert booster.n_outputs == n_outputs

    # A 1-D target with one output predicts (n,), as LightGBM does.
    one_dimensional = not sparse_labels and np.ndim(y) == 1 and n_outputs == 1
    assert booster.one_dimensional_target == one_dimensional
    shape = (n,) if one_dimensional else (n, n_outputs)
    prediction = booster.predict(X)
    raw = booster.predict(X, raw_score=True)
    assert prediction.shape == shape and raw.shape == shape
    assert np.all(np.isfinite(raw)), "non-finite raw scores"
    assert np.all(np.isfinite(prediction)), "non-finite predictions"
    if sparse_labels:
        # base + the sum of deltas against the sum from base: rounding apart
        # only (more under dart, which takes dropped rounds out and puts them
        # back rescaled)
        scale = 1e-9 if params.get("boosting") == "dart" else 1e-12
        np.testing.assert_allclose(
            capture.prediction, raw, rtol=scale,
            atol=scale * max(1.0, float(np.abs(raw).max())),
            err_msg="raw scores kept by the training loop differ from predict(X_train)")
    elif params.get("boosting") in ("dart", "rf"):
        # dropped rounds are taken out and put back rescaled, a forest's mean
        # reweighed every round: rounding apart only
        np.testing.assert_allclose(
            capture.prediction.reshape(shape), prediction, rtol=1e-9,
            atol=1e-9 * max(1.0, float(np.abs(raw).max())),
            err_msg="raw scores kept by the training loop differ from predict(X_train)")
    else:
        np.testing.assert_array_equal(
            capture.prediction.reshape(shape), prediction,
            err_msg="raw scores kept by the training loop differ from predict(X_train)")
    bagged = (min(params.get("subsample", 1.0), params.get("pos_bagging_fraction", 1.0),
                  params.get("neg_bagging_fraction", 1.0)) < 1.0
              or params.get("data_sample_strategy") == "goss")
    check_tree_invariants(booster, X, n, bagged)
    check_monotone(booster, X, params.get("monotone_constraints"), n_outputs)
    check_interactions(booster, params.get("interaction_constraints"))
    if not params.get("linear_tree"):  # TreeSHAP and ONNX take constant leaves
        _check_contributions(booster, X, raw, n_outputs, shape)
        _check_onnx(booster, X, raw)

    text = booster.model_to_string()
    loaded = gbmo.Booster(model_str=text)
    np.testing.assert_array_equal(loaded.predict(X), prediction)
    np.testing.assert_array_equal(loaded.predict(X, raw_score=True), raw)
    np.testing.assert_array_equal(loaded.predict_leaf(X), booster.predict_leaf(X))
    assert loaded.model_to_string() == text
    if sparse_labels:
        k = min(3, n_outputs)
        labels, scores = booster.predict_topk(X, k)
        loaded_labels, loaded_scores = loaded.predict_topk(X, k)
        np.testing.assert_array_equal(loaded_labels, labels)
        np.testing.assert_array_equal(loaded_scores, scores)
        np.testing.assert_allclose(scores, -np.sort(-prediction, axis=1)[:, :k], rtol=1e-12)
    # Another memory layout of the same values predicts the same.
    dense = X.toarray() if hasattr(X, "toarray") else np.ascontiguousarray(X)
    np.testing.assert_array_equal(loaded.predict(dense), prediction)


# --------------------------------------------------------------------------
# Loader fuzz
# --------------------------------------------------------------------------
_REPLACEMENTS = [
    -1, -2, 0, 1, 2, 7, 2**31 - 1, 2**31, -(2**31) - 1, 2**32, 2**63, -(2**63) - 1, 10**400,
    1.5, -0.5, float("nan"), float("inf"), float("-inf"), "x", "", None, True, False,
    [], {}, [1, 2], [[0]], [[float("nan")]], {"a": 1},
]
_MUTATIONS = ("replace", "negate", "plus_one", "minus_one", "scale", "shorten", "lengthen",
              "empty", "reverse", "drop_key", "add_key", "wrap")


def _children(value):
    if isinstance(value, dict):
        return list(value.keys())
    if isinstance(value, list):
        return list(range(len(value)))
    return []


@st.composite
def loader_mutations(draw):
    """A list of (walk, mutation, argument): walk picks a node of the JSON tree,
    each step an index taken modulo the number of children there."""
    n = draw(st.integers(1, 3))
    return [(draw(st.lists(st.integers(0, 2**16), min_size=0, max_size=6)),
             draw(st.sampled_from(_MUTATIONS)),
             draw(st.integers(0, len(_REPLACEMENTS) - 1)))
            for _ in range(n)]


def _walk(data, walk):
    """(parent, key) of the node the walk reaches (parent None: the root)."""
    parent, key, node = None, None, data
    for step in walk:
        children = _children(node)
        if not children:
            break
        parent, key = node, children[step % len(children)]
        node = node[key]
    return parent, key, node


def describe_mutations(data, mutations):
    """The mutations in words (path, kind, replacement), for failure reports."""
    data = copy.deepcopy(data)
    lines = []
    for walk, mutation, argument in mutations:
        path, node = [], data
        for step in walk:
            children = _children(node)
            if not children:
                break
            key = children[step % len(children)]
            path.append(key)
            node = node[key]
        lines.append(f"{mutation} at {path!r} (replacement {_REPLACEMENTS[argument]!r})")
        data = mutate_model(data, [(walk, mutation, argument)])
    return "; ".join(lines)


def mutate_model(data, mutations):
    data = copy.deepcopy(data)
    for walk, mutation, argument in mutations:
        parent, key, node = _walk(data, walk)
        replacement = copy.deepcopy(_REPLACEMENTS[argument])
        if mutation == "replace":
            new = replacement
        elif mutation in ("negate", "plus_one", "minus_one", "scale"):
            if isinstance(node, bool) or not isinstance(node, (int, float)):
                new = replacement
            elif mutation == "negate":
                new = -node
            elif mutation == "plus_one":
                new = node + 1
            elif mutation == "minus_one":
                new = node - 1
            else:
                new = node * 1000
        elif mutation in ("shorten", "lengthen", "empty", "reverse"):
            if not isinstance(node, list):
                new = replacement
            elif mutation == "shorten":
                new = node[:-1] if argument % 2 else node[1:]
            elif mutation == "lengthen":
                new = node + [copy.deepcopy(node[-1]) if node and argument % 2 else replacement]
            elif mutation == "empty":
                new = []
            else:
                new = node[::-1]
        elif mutation == "drop_key":
            if isinstance(node, dict) and node:
                keys = list(node)
                del node[keys[argument % len(keys)]]
                continue
            new = replacement
        elif mutation == "add_key":
            if isinstance(node, dict):
                node[f"extra_{argument}"] = replacement
                continue
            new = replacement
        else:  # wrap
            new = [node]
        if parent is None:
            data = new
        else:
            parent[key] = new
    return data


def _base_models():
    """A few small trained models covering dense, sparse, per-output and linear trees,
    each as save_model writes it (a forest of columns) and then as
    dump_model's list of trees (N_MODELS of each)."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(80, 3))
    X[::7, 1] = np.nan
    Y = np.c_[X[:, 0], np.nan_to_num(X[:, 1]) * 2, X[:, 2] ** 2]
    common = {"verbosity": 0, "n_threads": 1, "max_leaves": 5, "min_samples_leaf": 5}
    models = [
        gbmo.train({**common}, gbmo.Dataset(X, Y), 3),
        gbmo.train({**common, "split": "sparse", "top_k": 1}, gbmo.Dataset(X, Y), 2),
        gbmo.train({**common, "tree_mode": "single_output"}, gbmo.Dataset(X, Y[:, :2]), 2),
        gbmo.train({**common, "objective": "softmax"},
                   gbmo.Dataset(X, (X[:, 0] > 0).astype(int) + (X[:, 2] > 1)), 2),
        gbmo.train({**common, "objective": "sigmoid"}, gbmo.Dataset(X, X[:, 0] > 0), 2),
        gbmo.train({**common, "linear_tree": True, "tree_mode": "single_output"},
                   gbmo.Dataset(X, Y[:, :2]), 3),
    ]
    assert len(models) == N_MODELS  # the loader fuzz draws model indices up front
    return ([json.loads(m.model_to_string()) for m in models]
            + [json.loads(json.dumps(m.dump_model())) for m in models]), X


_BASE = None
N_MODELS = 6


def base_models():
    global _BASE
    if _BASE is None:
        _BASE = _base_models()
    return _BASE


def check_mutated_model_loads_or_is_rejected(text, X):
    """Either gbmo.ModelFormatError at load, or a model whose predictions on X
    (or on rows of its own width) are finite with the right shape."""
    try:
        model = gbmo.Booster(model_str=text)
    except gbmo.ModelFormatError:
        return "rejected"
    n_features = model.n_features
    if n_features != X.shape[1]:
        if not 1 <= n_features <= 64:
            return "loaded, unusable width"
        X = np.random.default_rng(0).normal(size=(X.shape[0], n_features))
    prediction = model.predict(X)
    assert prediction.shape == ((X.shape[0],) if model.one_dimensional_target
                                else (X.shape[0], model.n_outputs))
    assert np.all(np.isfinite(prediction)), "a loaded model predicts non-finite values"
    raw = model.predict(X, raw_score=True)
    assert np.all(np.isfinite(raw))
    leaves = model.predict_leaf(X)
    # predict_leaf defaults to the best iteration, which may use fewer trees.
    assert leaves.shape[0] == X.shape[0] and leaves.shape[1] <= model.num_trees
    for t in range(leaves.shape[1]):
        assert 0 <= leaves[:, t].min() and leaves[:, t].max() < model.trees[t].n_leaves
    assert np.all(np.isfinite(model.predict(X, num_iteration=1)))
    # A model that loaded can be saved again, and the copy predicts the same.
    again = gbmo.Booster(model_str=model.model_to_string())
    np.testing.assert_array_equal(again.predict(X), prediction)
    return "loaded"


# --------------------------------------------------------------------------
# The tests
# --------------------------------------------------------------------------
@settings(max_examples=FUZZ_EXAMPLES, **COMMON_SETTINGS)
@given(case=training_cases())
def test_fit_predict_save_load_predict(case):
    check_train_save_load(case)


@settings(max_examples=LOADER_EXAMPLES, **COMMON_SETTINGS)
@given(model_index=st.integers(0, 2 * N_MODELS - 1), mutations=loader_mutations())
def test_mutated_model_file_loads_or_raises_model_format_error(model_index, mutations):
    models, X = base_models()
    data = mutate_model(models[model_index], mutations)
    note(describe_mutations(models[model_index], mutations))
    try:
        text = json.dumps(data)
    except (ValueError, RecursionError):
        assume(False)
    check_mutated_model_loads_or_is_rejected(text, X)


@settings(max_examples=max(10, LOADER_EXAMPLES // 4), **COMMON_SETTINGS)
@given(model_index=st.integers(0, 2 * N_MODELS - 1), cut=st.floats(0.0, 1.0),
       flip=st.integers(0, 2**16), char=st.sampled_from(list('0123456789-.,[]{}":eEaN ')))
def test_corrupted_model_text_loads_or_raises_model_format_error(model_index, cut, flip, char):
    models, X = base_models()
    text = json.dumps(models[model_index])
    position = flip % len(text)
    corrupted = text[:position] + char + text[position + 1:]
    truncated = corrupted[: max(1, int(math.floor(cut * len(corrupted))))]
    for candidate in (corrupted, truncated):
        check_mutated_model_loads_or_is_rejected(candidate, X)


def test_unmutated_base_models_load_and_predict():
    models, X = base_models()
    for data in models:
        assert check_mutated_model_loads_or_is_rejected(json.dumps(data), X) == "loaded"


# Regressions found by the loader fuzz, pinned as plain tests ---------------
_BIG = 10**400  # a JSON integer literal no float can hold
_OUT_OF_RANGE = [(field, value) for field in ("init_score", "node_left", "node_threshold",
                                              "leaf_values") for value in (_BIG, float("nan"))]
_OUT_OF_RANGE += [(field, value) for field in ("n_features", "n_outputs", "trees_per_round")
                  for value in (float("inf"), float("nan"))]
_OUT_OF_RANGE += [("init_score", float("inf")), ("leaf_values", float("inf")),
                  ("node_left", float("inf"))]


@pytest.mark.parametrize("layout", ["forest", "list of trees"])
@pytest.mark.parametrize("field, value", _OUT_OF_RANGE,
                         ids=[f"{f}-{'10e400' if v is _BIG else v}" for f, v in _OUT_OF_RANGE])
def test_number_out_of_range_is_a_model_format_error(field, value, layout):
    """An integer literal too large for a float (OverflowError in numpy / int())
    or an infinite count must be reported as ModelFormatError."""
    models, X = base_models()
    data = copy.deepcopy(models[0 if layout == "forest" else N_MODELS])
    if field == "init_score":
        data["init_score"] = [value] * len(data["init_score"])
    elif field in data:
        data[field] = value
    elif layout == "forest":
        data["forest"][field][0] = value
    elif field == "leaf_values":
        data["trees"][0]["leaf_values"][0][0] = value
    else:
        data["trees"][0][field][0] = value
    with pytest.raises(gbmo.ModelFormatError):
        gbmo.Booster(model_str=json.dumps(data))


def test_deeply_nested_json_is_a_model_format_error():
    with pytest.raises(gbmo.ModelFormatError):
        gbmo.Booster(model_str="[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize("field, value", [
    ("params", []),
    ("params", "x"),
    ("best_iteration", "3"),
    ("best_iteration", [1]),
    ("best_iteration", float("nan")),
    ("best_iteration", float("inf")),
])
def test_malformed_top_level_field_is_rejected_at_load(field, value):
    """A field that would make predict fail must be rejected when loading."""
    models, X = base_models()
    data = copy.deepcopy(models[0])
    data[field] = value
    try:
        model = gbmo.Booster(model_str=json.dumps(data))
    except gbmo.ModelFormatError as err:
        assert field in str(err)
        return
    prediction = model.predict(X)  # fails today: AttributeError / TypeError / ValueError
    assert np.all(np.isfinite(prediction))
