"""Quantile (pinball) loss, several quantiles as the outputs of one model."""
import numpy as np
from gbmo.losses import Loss

from ._common import float_target, given_once, masked_weighted, observed_quantile, real_number


class Quantile(Loss):
    """Quantile regression with the pinball loss, for quantile level a:

        L(r) = a r          if r >= 0
               (a - 1) r    otherwise,       r = y - raw.

    `alpha` is one level or a list of levels, each strictly in (0, 1):

    * several levels with a 1-D target y (n,) (or (n, 1)): one model whose
      output j predicts the alphas[j] quantile of y (a prediction interval in
      one model; its outputs share the trees' splits);
    * one level with y (n, d): output j predicts that quantile of column j;
    * L levels with y (n, d): d x L outputs, target j's levels in turn:
      output j L + l predicts the alphas[l] quantile of column j (intervals
      of every forecast horizon in one model; predict(X).reshape(n, d, L)).

    The prepared target keeps its own columns, (n, 1) in the first case: gbmo's
    metrics broadcast it against the (n, d) predictions; in the third each
    column is repeated for its L outputs.

    `non_crossing=True` (several levels only) sorts each row's predictions of
    a target in the order of their levels, so that a lower level never
    predicts above a higher one: the rearrangement of Chernozhukov, Fernandez-Val and Galichon
    (2010), which never moves the estimates away from a true quantile curve.
    Shared splits do not keep the outputs apart on their own: at seven
    levels after 300 rounds, 5.5% of held-out rows crossed somewhere
    (losses/README.md). Raw scores (predict(raw_score=True)) stay as the
    trees give them.

    The gradient is 1 - a where raw > y, else -a; the hessian is 1 for every
    row (the pinball loss has zero curvature almost everywhere). The trees
    split on these; each leaf's value is then the a-quantile of its rows'
    residuals (renew_leaf_values), as LightGBM does. The start score is
    the (weighted) quantile of the target. The default metric is quantile,
    the pinball loss at each output's level (as LightGBM's), so that early
    stopping watches what the model fits.
    """

    name = "quantile"
    default_metric = "quantile"
    exact_hessian = False
    # NaN marks a missing target (a horizon past a series' end): no gradient
    # there, and the start scores and leaves are quantiles of the observed
    masks_missing_targets = True

    def __init__(self, alpha=None, n_threads=1, quantile_alpha=None, non_crossing=False):
        super().__init__(n_threads)
        alpha = given_once(self.name, "alpha", alpha, "quantile_alpha", quantile_alpha, 0.5,
                           "; XGBoost's alpha, its L1 penalty, is gbmo's lambda_l1 "
                           "(reg_alpha)")
        several = isinstance(alpha, (list, tuple, np.ndarray))
        levels = list(alpha) if several else [alpha]
        if not levels:
            raise ValueError("objective 'quantile': parameter 'alpha' is an empty list; give "
                             "one quantile level or a list of them, each in (0, 1)")
        levels = [real_number(level, "alpha", self.name) for level in levels]
        outside = [level for level in levels if not 0 < level < 1]
        if outside:
            raise ValueError(f"objective 'quantile': every alpha must be strictly between 0 "
                             f"and 1, got {outside}")
        if not isinstance(non_crossing, (bool, np.bool_)):
            raise ValueError(f"objective 'quantile': parameter 'non_crossing' must be True or "
                             f"False, got {non_crossing!r}")
        if non_crossing and len(levels) < 2:
            raise ValueError("objective 'quantile': non_crossing=True orders the predictions "
                             "of several levels, and alpha gives one; give a list of levels")
        self.alpha = levels if several else levels[0]
        self.alphas = np.array(levels, dtype=np.float64)
        self.non_crossing = bool(non_crossing)

    def get_params(self):
        # models saved before non_crossing existed keep their files
        return {"alpha": self.alpha, **({"non_crossing": True} if self.non_crossing else {})}

    @property
    def onnx_transform(self):
        """gbmo's Booster.to_onnx: the sort of non_crossing has no ONNX form here."""
        return None if self.non_crossing else "identity"

    def transform(self, raw):
        if not self.non_crossing:
            return raw
        # each target's L outputs, sorted in their levels' order
        levels = len(self.alphas)
        by_target = np.asarray(raw).reshape(len(raw), -1, levels)
        ordered = np.empty_like(by_target)
        ordered[:, :, np.argsort(self.alphas, kind="stable")] = np.sort(by_target, axis=2)
        return ordered.reshape(np.shape(raw))

    def prepare_target(self, y):
        y = float_target(y, self.name, missing=True)
        if y.shape[1] > 1 and len(self.alphas) > 1:
            # output j L + l's own column: the metrics and gradients read it
            return np.repeat(y, len(self.alphas), axis=1)
        return y

    def n_outputs(self, y):
        return max(y.shape[1], len(self.alphas))

    def output_levels(self, n_outputs):
        """(n_outputs,) the level each output predicts: each target's levels in turn."""
        if n_outputs % len(self.alphas):
            # a MultiTaskLoss task of fewer columns than levels, say
            raise ValueError(f"objective {self.name!r}: {n_outputs} output(s) cannot hold the "
                             f"{len(self.alphas)} levels {self.alpha} of each target; several "
                             "levels need the quantile objective itself, not a task of one")
        return np.tile(self.alphas, n_outputs // len(self.alphas))

    def column_weights(self, y, weight, column):
        """How much each row weighs in the quantiles of target column `column`
        (its start score and its leaves): the sample weights (None: alike).
        mape weighs them by the targets' scale too."""
        return weight

    def init_score(self, y, weight):
        if y.shape[1] == 1:
            return np.asarray(observed_quantile(y[:, 0], self.column_weights(y, weight, 0),
                                                self.alphas), dtype=np.float64)
        levels = self.output_levels(y.shape[1])
        return np.array([observed_quantile(y[:, j], self.column_weights(y, weight, j),
                                           levels[j]) for j in range(y.shape[1])],
                        dtype=np.float64)

    def gradients(self, y, raw, weight):
        # one level: a number, which np.where takes faster than a row of them
        levels = self.alphas[0] if len(self.alphas) == 1 else self.output_levels(raw.shape[1])
        grad = np.where(raw > y, 1.0 - levels, -levels)
        return masked_weighted(grad, y, weight)

    def value(self, y, raw):
        residual = y - raw
        levels = self.output_levels(raw.shape[1])
        return float(np.nansum(np.maximum(levels * residual, (levels - 1.0) * residual)))

    def renew_leaf_values(self, y, raw, weight, rows, leaf_start, leaf_stop, outputs):
        """Each leaf's value for output j: the (weighted) alphas[j] quantile of
        its rows' residuals y - raw, as LightGBM renews quantile leaves (the
        gradients' value, their mean with a hessian of 1, moves a leaf by at
        most 1 before the learning rate, so targets on a larger scale took
        many rounds)."""
        values = np.empty((len(leaf_start), len(outputs)))
        levels = self.output_levels(raw.shape[1])
        for position, j in enumerate(outputs):
            column, level = (0 if y.shape[1] == 1 else j), levels[j]
            residual = y[rows, column] - raw[rows, j]
            # the leaves' rows in their order
            column_weight = self.column_weights(y, weight, column)
            if column_weight is not None:
                column_weight = np.asarray(column_weight, dtype=np.float64)[rows]
            for leaf, (start, stop) in enumerate(zip(leaf_start, leaf_stop)):
                # NaN for a leaf without an observed target: its gradients' value stays
                values[leaf, position] = observed_quantile(
                    residual[start:stop],
                    None if column_weight is None else column_weight[start:stop], level)
        return values
