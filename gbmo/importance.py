"""Per-output feature importance, accumulated while training.

A multi-output split's gain is a sum over outputs (dense: 0.5 (G_Lj^2/(H_Lj+l)
+ G_Rj^2/(H_Rj+l) - G_j^2/(H_j+l)) for each j; sparse: over the outputs each
side keeps), so each output's share is known at every split. Trees keep only
their total gain per node; the (features x outputs) sums live here, once per
model, instead of a d-vector per node in every tree.
"""
import numpy as np


class OutputImportance:
    """gain[f, j]: the gain output j took from splits on feature f; splits[f, j]:
    how many splits on f involved output j."""

    def __init__(self, n_features, n_outputs):
        self.gain = np.zeros((n_features, n_outputs))
        self.splits = np.zeros((n_features, n_outputs), dtype=np.int64)

    def add(self, feature, output_gain, involved, outputs=slice(None)):
        """One split: its per-output gains and involvement for the outputs it
        covers (all of them, or the one output of a single-output tree)."""
        self.gain[feature, outputs] += output_gain
        self.splits[feature, outputs] += involved

    def to_dict(self):
        """Only the features that were split on: most are not, at large p."""
        used = np.flatnonzero(self.splits.any(axis=1))
        return {"features": used.tolist(), "gain": self.gain[used].tolist(),
                "splits": self.splits[used].tolist()}

    @classmethod
    def from_dict(cls, data, n_features, n_outputs):
        """Raises ValueError naming what is wrong in a model file's field."""
        if not isinstance(data, dict):
            raise ValueError("'output_importance' must be an object")
        importance = cls(n_features, n_outputs)
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
        importance.gain[features] = gain.reshape(shape)
        importance.splits[features] = splits.reshape(shape)
        return importance
