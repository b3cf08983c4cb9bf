"""Per-output feature importance, accumulated while training.

A multi-output split's gain is a sum over outputs (dense: 0.5 (G_Lj^2/(H_Lj+l)
+ G_Rj^2/(H_Rj+l) - G_j^2/(H_j+l)) for each j; sparse: over the outputs each
side keeps), so each output's share is known at every split. Trees keep only
their total gain per node; the per-output sums live here, once per model,
instead of a d-vector per node in every tree.

Only features that were split on get a row: at large p most never are, and a
model file's n_features is not trusted to size an allocation at load.
"""
import numpy as np


class OutputImportance:
    """For each feature split on: the gain each output took from its splits and
    how many of its splits involved each output."""

    def __init__(self, n_features, n_outputs):
        self.n_features = n_features
        self.n_outputs = n_outputs
        self._row_of_feature = {}
        self._gain = np.zeros((0, n_outputs))
        self._splits = np.zeros((0, n_outputs), dtype=np.int64)

    def add(self, features, output_gains, involved, outputs=slice(None)):
        """A tree's splits: each one's feature, per-output gains and
        involvement (a row per split) for the outputs they cover (all of
        them, or the one output of a single-output tree). Added split by
        split in order (np.add.at), so sums do not depend on the batching."""
        if not len(features):
            return
        unique, split_feature = np.unique(features, return_inverse=True)
        rows = np.array([self._row(int(feature)) for feature in unique])[split_feature]
        np.add.at(self._gain[:, outputs], rows, output_gains)
        np.add.at(self._splits[:, outputs], rows, involved)

    def _row(self, feature):
        row = self._row_of_feature.get(feature)
        if row is None:
            row = len(self._row_of_feature)
            if row == len(self._gain):
                # Doubling keeps the appends of a whole training run linear.
                extra = max(8, row)
                self._gain = np.vstack([self._gain, np.zeros((extra, self.n_outputs))])
                self._splits = np.vstack(
                    [self._splits, np.zeros((extra, self.n_outputs), dtype=np.int64)])
            self._row_of_feature[feature] = row
        return row

    def _used(self):
        features = np.fromiter(self._row_of_feature, dtype=np.int64,
                               count=len(self._row_of_feature))
        rows = np.fromiter(self._row_of_feature.values(), dtype=np.int64,
                           count=len(self._row_of_feature))
        order = np.argsort(features)
        return features[order], rows[order]

    def dense(self):
        """(gain, splits), each (n_features, n_outputs)."""
        features, rows = self._used()
        gain = np.zeros((self.n_features, self.n_outputs))
        splits = np.zeros((self.n_features, self.n_outputs), dtype=np.int64)
        gain[features] = self._gain[rows]
        splits[features] = self._splits[rows]
        return gain, splits

    def to_dict(self):
        features, rows = self._used()
        return {"features": features.tolist(), "gain": self._gain[rows].tolist(),
                "splits": self._splits[rows].tolist()}

    @classmethod
    def from_dict(cls, data, n_features, n_outputs):
        """Raises ValueError naming what is wrong in a model file's field."""
        if not isinstance(data, dict):
            raise ValueError("'output_importance' must be an object")
        features = np.asarray(data.get("features"), dtype=np.int64)
        gain = np.asarray(data.get("gain"), dtype=np.float64)
        splits = np.asarray(data.get("splits"), dtype=np.int64)
        if features.ndim != 1 or np.any(features < 0) or np.any(features >= n_features) \
                or len(np.unique(features)) != len(features):
            raise ValueError("'output_importance.features' must list distinct feature "
                             f"indices in [0, {n_features})")
        shape = (len(features), n_outputs)
        if gain.reshape(-1, n_outputs).shape != shape or splits.reshape(-1, n_outputs).shape \
                != shape or not np.all(np.isfinite(gain)) or np.any(splits < 0):
            raise ValueError(f"'output_importance' gain and splits must be {shape} arrays of "
                             "finite gains and counts >= 0")
        importance = cls(n_features, n_outputs)
        importance._row_of_feature = {int(f): row for row, f in enumerate(features)}
        importance._gain = gain.reshape(shape)
        importance._splits = splits.reshape(shape)
        return importance
