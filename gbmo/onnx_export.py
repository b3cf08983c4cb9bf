"""A Booster as an ONNX graph (Booster.to_onnx), so that a gbmo model serves
where gbmo is not installed: onnxruntime from C++, C#, Java or JavaScript,
or any runtime of ONNX-ML.

The trees become one ONNX-ML TreeEnsembleRegressor (opset 3), whose leaves
hold a weight per target: a vector leaf stays one leaf, so the runtime walks
one tree a round for every output, as gbmo does. Its thresholds are doubles
and its input X is double, so every row reaches the leaf it reaches in
gbmo; the operator's output is float32, so raw scores agree with
predict's to float32's precision (about 6e-8 relative; after exp or the
logistic function, about that times |raw|). A categorical split becomes a
chain of equality tests, its missing side taking what fails them all
(missing values, negative and unseen categories, as in gbmo); with several
outputs, each leaf's first weight is a marker of its own (_needs_markers).
The objective's transform follows as ONNX operators, and LightGBM's
use_missing=False and zero_as_missing=True as a rewrite of X before the
trees; the model's metadata says how to make X (_metadata).

onnx (the package) is needed to export, not to train or predict.
"""
import json

import numpy as np

from ._version import __version__
from .booster import checked_path
from .losses import MultiTaskLoss
from .missing_values import ZERO_THRESHOLD, reading

# TreeEnsembleRegressor 3 (ONNX-ML) takes double thresholds and leaf weights
# as tensors; opset 17 of the default domain and IR version 8 are read by
# every onnxruntime since 1.12 (2022)
ML_OPSET = 3
DEFAULT_OPSET = 17
IR_VERSION = 8
# how a loss says which transform its predictions take (gbmo.registry's
# contract), and the transforms _apply writes
TRANSFORM_ATTRIBUTE = "onnx_transform"
TRANSFORMS = ("identity", "sigmoid", "softmax", "exp")


def _onnx():
    try:
        import onnx
    except ImportError as error:
        raise ImportError("to_onnx needs the onnx package, which gbmo does not install: "
                          "python3 -m pip install onnx (or gbmo's extra, "
                          "python3 -m pip install 'gbmo[onnx]')") from error
    return onnx


def declared_transform(loss):
    """The transform loss's predictions take, by its onnx_transform: one of
    TRANSFORMS, or None when it declares none. A declaration inherited from
    a class above the one that defines transform does not count: the
    transform was overridden after it (a Loss subclass of its own transform
    would otherwise pass for the base's identity)."""
    if TRANSFORM_ATTRIBUTE in vars(loss):
        return getattr(loss, TRANSFORM_ATTRIBUTE)
    classes = type(loss).__mro__
    transform_owner = next((c for c in classes if "transform" in vars(c)), None)
    declaring = next((c for c in classes if TRANSFORM_ATTRIBUTE in vars(c)), None)
    if declaring is None or transform_owner is None or not issubclass(declaring,
                                                                      transform_owner):
        return None
    return getattr(loss, TRANSFORM_ATTRIBUTE)


def _transforms_by_columns(loss, n_outputs):
    """[(transform, columns)] of loss's predictions: a multitask loss's per
    task, else one for every column; ValueError naming a loss whose
    transform has no ONNX form."""
    parts = ([(task, list(columns)) for task, columns, _ in loss._tasks()]
             if isinstance(loss, MultiTaskLoss) else [(loss, list(range(n_outputs)))])
    transforms = []
    for part, columns in parts:
        transform = declared_transform(part)
        if transform not in TRANSFORMS:
            raise ValueError(
                f"objective {part.name!r} does not say how its predictions transform the raw "
                f"scores in ONNX (its {TRANSFORM_ATTRIBUTE} is {transform!r}; allowed: "
                f"{', '.join(TRANSFORMS)}): export the raw scores (to_onnx(raw_score=True), "
                "gbmo onnx --raw) and apply the transform after the runtime")
        transforms.append((transform, columns))
    return transforms


class _Graph:
    """The nodes and constants of an ONNX graph as it is built."""

    def __init__(self, onnx):
        self.onnx, self.nodes, self.constants, self._names = onnx, [], [], 0

    def name(self, stem):
        self._names += 1
        return f"{stem}_{self._names}"

    def constant(self, stem, value):
        name = self.name(stem)
        self.constants.append(self.onnx.numpy_helper.from_array(np.asarray(value), name))
        return name

    def add(self, operator, inputs, stem, domain=None, **attributes):
        output = self.name(stem)
        self.nodes.append(self.onnx.helper.make_node(operator, inputs, [output], domain=domain,
                                                     **attributes))
        return output


def _read_as_model(graph, X, booster):
    """X as the model reads it (gbmo.missing_values): numeric features' NaN
    as 0 without use_missing, their zeros as NaN with zero_as_missing."""
    use_missing, zero_as_missing = reading(booster.params)
    if use_missing and not zero_as_missing:
        return X
    numeric = np.ones((1, booster.n_features), dtype=bool)
    if booster.category_order is not None:
        numeric[0, list(booster.category_order.features)] = False
    mask = graph.constant("numeric_features", numeric)
    if not use_missing:
        read = graph.add("And", [graph.add("IsNaN", [X], "missing"), mask], "read_as_zero")
        return graph.add("Where", [read, graph.constant("zero", np.float64(0.0)), X], "X_read")
    zero = graph.add("LessOrEqual", [graph.add("Abs", [X], "magnitude"),
                                     graph.constant("zero_threshold", np.float64(ZERO_THRESHOLD))],
                     "zero")
    read = graph.add("And", [zero, mask], "read_as_missing")
    return graph.add("Where", [read, graph.constant("nan", np.float64(np.nan)), X], "X_read")


class _Ensemble:
    """TreeEnsembleRegressor's attributes, tree by tree: numpy arrays a tree
    (a Python loop over nodes took 0.7 s for 500 trees of 63 leaves)."""

    NODE_FIELDS = ("treeids", "nodeids", "featureids", "modes", "values", "truenodeids",
                   "falsenodeids", "missing_value_tracks_true")
    TARGET_FIELDS = ("treeids", "nodeids", "ids", "weights")

    def __init__(self, marker_target=None):
        """marker_target: a target past the outputs that every leaf gives a
        weight of its own first (see _needs_markers), or None."""
        self._nodes, self._targets = [], []
        self.marker_target, self._marked = marker_target, 0

    def add_leaf(self, tree_id, outputs, values):
        """A tree of one leaf."""
        self._nodes.append(self._node_arrays(tree_id, [0], [0], ["LEAF"], [0.0], [0], [0], [0]))
        self._add_targets(tree_id, np.zeros(1, dtype=np.int64), [outputs], [values])

    def add_tree(self, tree_id, tree, category_sets, n_outputs, share):
        """tree as nodes of tree_id: gbmo's node numbers, then one more node
        for each further category a categorical split tests."""
        split = tree.node_left >= 0
        nodes = np.arange(len(split))
        fields = [nodes, np.where(split, tree.node_feature, 0),
                  np.where(split, "BRANCH_LEQ", "LEAF").astype(object),
                  np.where(split, tree.node_threshold, 0.0), np.where(split, tree.node_left, 0),
                  np.where(split, tree.node_right, 0),
                  np.where(split, tree.node_missing_left, 0).astype(np.int64)]
        chains = [(node, self._categorical(node, tree, category_sets, fields))
                  for node in nodes[split] if category_sets.categorical(tree.node_feature[node])]
        next_node = len(nodes)
        for node, chain in chains:  # a chain's further nodes, numbered after the tree's
            chain[0] += next_node
            chain[5] = np.where(chain[5] < 0, chain[0] + 1, chain[5])  # the next test
            if len(chain[0]):
                fields[5][node] = chain[0][0]
            next_node += len(chain[0])
            fields = [np.concatenate([field, part]) for field, part in zip(fields, chain)]
        self._nodes.append(self._node_arrays(tree_id, *fields))
        leaves = nodes[~split]
        rows = tree.node_value[leaves]
        outputs = (np.tile(np.arange(n_outputs), (len(leaves), 1)) if tree.leaf_outputs is None
                   else tree.leaf_outputs[rows])
        self._add_targets(tree_id, leaves, outputs, share * tree.leaf_values[rows])

    def _add_targets(self, tree_id, leaves, outputs, values):
        """Each leaf's weights, values[l] for the outputs outputs[l] (a row
        each), after its marker's when there is a marker target."""
        outputs, values = np.reshape(outputs, (len(leaves), -1)), np.reshape(values,
                                                                             (len(leaves), -1))
        if self.marker_target is not None:
            markers = self._marked + 1 + np.arange(len(leaves), dtype=np.float64)
            self._marked += len(leaves)
            outputs = np.column_stack([np.full(len(leaves), self.marker_target), outputs])
            values = np.column_stack([markers, values])
        self._targets.append([np.full(outputs.size, tree_id), np.repeat(leaves, outputs.shape[1]),
                              outputs.ravel(), values.ravel().astype(np.float64)])

    @staticmethod
    def _categorical(node, tree, category_sets, fields):
        """Rewrites node of fields into the first test of its chain of equality
        tests, and returns the chain's further nodes (numbered from 0; the
        false side -1 where it is the chain's next test). The tested
        categories lead away from the missing side, which takes every value
        that matches none of them (NaN included)."""
        feature, left, right = (int(tree.node_feature[node]), int(tree.node_left[node]),
                                int(tree.node_right[node]))
        left_set, other = category_sets(feature, tree.categories_left.get(node),
                                        float(tree.node_threshold[node]))
        tested, matched, missed = ((other, right, left) if tree.node_missing_left[node]
                                   else (left_set, left, right))
        further = len(tested) - 1
        # no category leads away: an always-false test
        first = ("BRANCH_EQ", tested[0], -1 if further else missed) if len(tested) else (
            "BRANCH_LT", -np.inf, missed)
        for field, value in zip(fields[2:], (first[0], first[1], matched, first[2], 0)):
            field[node] = value
        if further <= 0:
            return [np.zeros(0, dtype=np.int64)] * 2 + [np.zeros(0, dtype=object)] + [
                np.zeros(0)] + [np.zeros(0, dtype=np.int64)] * 3
        follow = np.full(further, -1)
        follow[-1] = missed
        return [np.arange(further), np.full(further, feature),
                np.full(further, "BRANCH_EQ", dtype=object), np.asarray(tested[1:], dtype=float),
                np.full(further, matched), follow, np.zeros(further, dtype=np.int64)]

    @staticmethod
    def _node_arrays(tree_id, *fields):
        return [np.full(len(fields[0]), tree_id), *map(np.asarray, fields)]

    def attributes(self):
        """The operator's node and target attributes, as lists."""
        def joined(parts, names):
            return {name: np.concatenate(column).tolist()
                    for name, column in zip(names, zip(*parts))}
        return joined(self._nodes, self.NODE_FIELDS), joined(self._targets, self.TARGET_FIELDS)


def _needs_markers(trees, category_sets, n_outputs):
    """Whether leaves need a marker weight each: with several outputs and a
    categorical split's chain of equality tests. onnxruntime (1.32 at least)
    takes two leaves of one feature's chains for one when their first
    weights are equal (found by the fuzz: leaves of weights (0, 0, 0, 0) and
    (0, 0.004, -0.006, 0.006), and rows that reached the second were given
    the first's), which a weight of its own first in every leaf prevents;
    one output's equal leaves are alike anyway."""
    return n_outputs > 1 and any(
        category_sets.categorical(feature)
        for tree in trees for feature in tree.node_feature[tree.node_left >= 0].tolist())


class _CategorySets:
    """A categorical feature's split as sets of the raw categories X holds."""

    def __init__(self, booster):
        order = booster.category_order
        self._by_feature = ({} if order is None else
                            {f: (np.asarray(categories), np.asarray(ranks))
                             for f, categories, ranks in zip(order.features, order.categories,
                                                             order.ranks)})

    def categorical(self, feature):
        return feature in self._by_feature

    def __call__(self, feature, left_ranks, threshold):
        """(the categories sent left, the feature's other known categories)
        of a split sending left the ranks left_ranks, or, None (a symmetric
        tree's split on a categorical feature), the ranks up to threshold
        (predict walks a categorical feature's ranks)."""
        categories, ranks = self._by_feature[feature]
        left = ranks <= threshold if left_ranks is None else np.isin(ranks, left_ranks)
        return categories[left], categories[~left]


def export(booster, path=None, num_iteration=None, start_iteration=0, raw_score=False,
           probabilities=False, classes=None):
    """Booster.to_onnx's graph (an onnx ModelProto), also written to path
    when given. probabilities: predict_proba's output, named so, for a
    classifier: two columns (1 - p, p) where the booster predicts p alone.
    classes (a classifier's classes_, each probability's): a first output
    "label", the class of each row's largest probability."""
    if path is not None:
        checked_path(path, "path")
    probabilities = probabilities and not raw_score
    model = _graph(booster, num_iteration, start_iteration, raw_score, probabilities,
                   None if classes is None or not probabilities else _tensor_values(classes))
    if path is not None:
        with open(path, "wb") as file:
            file.write(model.SerializeToString())
    return model


def _tensor_values(classes):
    """classes as an array ONNX holds: text as str objects (a STRING
    tensor), integers as int64 (unsigned ones as uint64: 2**63 and beyond
    wrapped in int64), other numbers as float64, bools as bool."""
    classes = np.asarray(classes)
    if classes.dtype.kind in "USO":
        return np.array([str(label) for label in classes.tolist()], dtype=object)
    if classes.dtype.kind in "iu":
        return classes.astype(np.uint64 if classes.dtype.kind == "u" else np.int64)
    return classes.astype(bool if classes.dtype.kind == "b" else np.float64)


def _graph(booster, num_iteration, start_iteration, raw_score, probabilities, classes):
    first, stop = booster._tree_range(start_iteration, num_iteration)
    trees = booster.trees[first:stop]
    if any(tree.linear_leaves is not None for tree in trees):
        raise ValueError("to_onnx does not export linear leaves (linear_tree=True): ONNX-ML's "
                         "tree operators hold a constant a leaf; predict with gbmo, or train "
                         "without linear_tree")
    d = booster.n_outputs
    transforms = None if raw_score else _transforms_by_columns(booster.loss, d)
    onnx = _onnx()
    helper, graph = onnx.helper, _Graph(onnx)
    X = _read_as_model(graph, "X", booster)
    sets = _CategorySets(booster)
    marked = _needs_markers(trees, sets, d)
    ensemble = _Ensemble(marker_target=d if marked else None)
    # the start score is a first tree of one leaf, not the operator's
    # base_values: onnxruntime adds those only to the outputs that some
    # tree's leaf gave a value (sparse leaves give a few)
    ensemble.add_leaf(0, np.arange(d), booster.init_score)
    share = booster._tree_share(first, stop)
    for tree_id, tree in enumerate(trees, start=1):
        ensemble.add_tree(tree_id, tree, sets, d, share)
    nodes, targets = ensemble.attributes()
    raw = graph.add(
        "TreeEnsembleRegressor", [X], "raw_scores", domain="ai.onnx.ml", n_targets=d + marked,
        aggregate_function="SUM", post_transform="NONE",
        nodes_treeids=nodes["treeids"], nodes_nodeids=nodes["nodeids"],
        nodes_featureids=nodes["featureids"], nodes_modes=nodes["modes"],
        nodes_values_as_tensor=helper.make_tensor("nodes_values", onnx.TensorProto.DOUBLE,
                                                  [len(nodes["values"])], nodes["values"]),
        nodes_truenodeids=nodes["truenodeids"], nodes_falsenodeids=nodes["falsenodeids"],
        nodes_missing_value_tracks_true=nodes["missing_value_tracks_true"],
        target_treeids=targets["treeids"], target_nodeids=targets["nodeids"],
        target_ids=targets["ids"],
        target_weights_as_tensor=helper.make_tensor("target_weights", onnx.TensorProto.DOUBLE,
                                                    [len(targets["weights"])],
                                                    targets["weights"]))
    if marked:  # the markers' column goes
        raw = graph.add("Slice", [raw, *(graph.constant(name, np.array([value], dtype=np.int64))
                                         for name, value in (("start", 0), ("end", d),
                                                             ("axis", 1)))], "raw_scores")
    out = raw if transforms is None else _transformed(graph, raw, transforms, d)
    one_column = booster.one_dimensional_target
    if one_column and probabilities:  # predict_proba's (1 - p, p)
        one = graph.constant("one", np.ones((1, 1), dtype=np.float32))
        out = graph.add("Concat", [graph.add("Sub", [one, out], "other_class"), out],
                        "probabilities", axis=1)
        one_column, d = False, 2
    elif one_column:  # predict's (n,)
        out = graph.add("Squeeze", [out, graph.constant("axis", np.array([1], dtype=np.int64))],
                        "prediction")
    outputs = []
    if classes is not None:  # predict's labels: the class of the largest probability
        chosen = graph.add("ArgMax", [out], "class", axis=1, keepdims=0)
        labels = graph.constant("classes", classes)
        outputs.append(("label", graph.add("Gather", [labels, chosen], "label", axis=0),
                        helper.np_dtype_to_tensor_dtype(classes.dtype), [None]))
    outputs.append(("raw_scores" if raw_score else
                    "probabilities" if probabilities else "predictions", out,
                    onnx.TensorProto.FLOAT, [None] if one_column else [None, d]))
    for name, tensor, _, _ in outputs:  # the graph's outputs under their own names
        graph.nodes.append(helper.make_node("Identity", [tensor], [name]))
    model = helper.make_model(
        helper.make_graph(graph.nodes, "gbmo",
                          [helper.make_tensor_value_info("X", onnx.TensorProto.DOUBLE,
                                                         [None, booster.n_features])],
                          [helper.make_tensor_value_info(name, kind, shape)
                           for name, _, kind, shape in outputs],
                          initializer=graph.constants),
        opset_imports=[helper.make_opsetid("", DEFAULT_OPSET),
                       helper.make_opsetid("ai.onnx.ml", ML_OPSET)],
        producer_name="gbmo", producer_version=__version__, ir_version=IR_VERSION)
    helper.set_model_props(model, _metadata(booster))
    return model


def _metadata(booster):
    """What a server needs to make X, as the model's metadata_props (JSON
    text): feature_names in X's order; category_names, of each feature
    trained as a pandas category column, its categories, of which X holds a
    category's position in the list; category_codes, of each other
    categorical feature, the codes the model knows, which X holds
    themselves (others take the missing side)."""
    names, codes = {}, {}
    if booster.category_order is not None:
        for feature, known in zip(booster.category_order.features,
                                  booster.category_order.categories):
            name = booster.feature_name()[feature]
            if feature in booster.pandas_categories:
                names[name] = [_json_value(c) for c in booster.pandas_categories[feature]]
            else:
                codes[name] = [int(code) for code in np.asarray(known).tolist()]
    return {"feature_names": json.dumps(booster.feature_name()),
            "category_names": json.dumps(names), "category_codes": json.dumps(codes)}


def _json_value(value):
    """value as JSON holds it: a number or text as it is, anything else as text."""
    value = value.item() if isinstance(value, np.generic) else value
    return value if isinstance(value, (str, int, float)) and not isinstance(value, bool) \
        else str(value)


def _transformed(graph, raw, transforms, d):
    """raw's columns through their transforms, back in raw's column order."""
    if len(transforms) == 1 and len(transforms[0][1]) == d:
        return _apply(graph, raw, transforms[0][0])
    parts, order = [], []
    for transform, columns in transforms:
        part = graph.add("Gather", [raw, graph.constant("columns", np.array(columns,
                                                                            dtype=np.int64))],
                         "task_raw", axis=1)
        parts.append(_apply(graph, part, transform))
        order += columns
    joined = graph.add("Concat", parts, "tasks", axis=1)
    return graph.add("Gather", [joined, graph.constant("order", np.argsort(order))],
                     "task_predictions", axis=1)


def _apply(graph, raw, transform):
    if transform == "identity":
        return raw
    if transform == "softmax":
        return graph.add("Softmax", [raw], "predictions", axis=1)
    if transform == "exp":
        return graph.add("Exp", [raw], "predictions")
    # 1 / (1 + exp(-x)): onnxruntime's float32 Sigmoid approximates the tail
    # (17% off at -15, 0 from -18 on), its Exp does not
    one = graph.constant("one", np.float32(1.0))
    return graph.add("Reciprocal", [graph.add("Add", [graph.add(
        "Exp", [graph.add("Neg", [raw], "negated")], "exp"), one], "denominator")],
        "predictions")
