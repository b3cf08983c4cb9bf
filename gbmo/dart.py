"""DART boosting (Rashmi & Gilad-Bachrach 2015; LightGBM's boosting="dart"
with uniform_drop).

Each round, unless skipped (probability skip_drop), every earlier round of
the run is dropped with probability drop_rate, capped so that max_drop
rounds are dropped on average and at most (when max_drop > 0). The new
trees are fitted to the gradients of the model without the dropped rounds
and shrunk by learning_rate / (k + 1), k the number dropped, and the dropped rounds are scaled by k / (k + 1): the
new trees and the dropped ones then weigh as the dropped ones did alone, so
the model does not overshoot while no few early trees dominate it.
"""


def rounds_to_drop(rng, n_rounds, drop_rate, max_drop, skip_drop):
    """The indices (into this run's rounds) of the rounds to drop this round."""
    if n_rounds == 0 or rng.random() < skip_drop:
        return []
    if max_drop > 0:
        drop_rate = min(drop_rate, max_drop / n_rounds)
    dropped = [i for i, draw in enumerate(rng.random(n_rounds)) if draw < drop_rate]
    if max_drop > 0 and len(dropped) > max_drop:
        dropped = sorted(rng.choice(dropped, size=max_drop, replace=False).tolist())
    return dropped
