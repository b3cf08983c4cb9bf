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

# Trees kept before their gains are folded into the sums.
FOLD_EVERY = 256


class OutputImportance:
    """For each feature split on: the gain each output took from its splits and
    how many of its splits involved each output."""

    def __init__(self, n_features, n_outputs):
        self.n_features = n_features
        self.n_outputs = n_outputs
        self._row_of_feature = {}
        self._gain = np.zeros((0, n_outputs))
        self._splits = np.zeros((0, n_outputs), dtype=np.int64)
        # Trees added since the last fold, all of one kind (every output, or
        # one output each): folding a round's worth of small arrays at once
        # costs a few numpy calls instead of a few per tree.
        self._pending = []

    def add(self, features, output_gains, involved, output=None):
        """A tree's splits: each one's feature, per-output gains and
        involvement (a row per split), for every output (output None) or the
        one output of a single-output tree. Summed split by split in the
        order added (np.add.at), so sums do not depend on when they fold."""
        if not len(features):
            return
        if self._pending and (self._pending[0][3] is None) != (output is None):
            self._fold()  # the kinds overlap in columns: keep the order of the sums
        self._pending.append((features, output_gains, involved, output))
        if len(self._pending) >= FOLD_EVERY:
            self._fold()

    def _fold(self):
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        features = np.concatenate([np.asarray(item[0], dtype=np.int64) for item in pending])
        unique, split_feature = np.unique(features, return_inverse=True)
        rows = np.array([self._row(int(feature)) for feature in unique])[split_feature]
        gains = np.concatenate([item[1] for item in pending])
        involved = np.concatenate([item[2] for item in pending])
        if pending[0][3] is None:  # every output
            np.add.at(self._gain, rows, gains)
            np.add.at(self._splits, rows, involved)
            return
        cells = rows * self.n_outputs + np.concatenate(
            [np.full(len(item[0]), item[3], dtype=np.int64) for item in pending])
        np.add.at(self._gain.reshape(-1), cells, gains.reshape(-1))
        np.add.at(self._splits.reshape(-1), cells, involved.reshape(-1))

    def __getstate__(self):
        self._fold()
        return {**self.__dict__, "_pending": []}  # a copy's own list

    def __setstate__(self, state):
        # pickles from before the pending trees have none
        self.__dict__.update({"_pending": [], **state})

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
        self._fold()
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
        # contiguous, so that folding adds into views of them
        importance._gain = np.ascontiguousarray(gain.reshape(shape))
        importance._splits = np.ascontiguousarray(splits.reshape(shape))
        return importance
