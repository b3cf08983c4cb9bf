"""random_strength: noise on each candidate split's score (CatBoost's).

The kernels' choice is checked against a reference that scores every
candidate from the rows and draws its noise with its own splitmix64; the
training loop on data whose answer is known (two copies of one feature: the
noise must make both win sometimes; a strong feature: it must still win)."""
import math

import numpy as np
import pytest

import gbmo
from gbmo._core._grow import node_noise_key
from gbmo._core._split import find_best_sparse_splits, find_best_splits, noisy_level_scores

pytest.register_assert_rewrite("split_reference")
from split_reference import (  # noqa: E402
    LAMBDA, brute_force_feature, make_node, node_histogram, unset_outputs)

MASK = 2**64 - 1
GOLDEN = 0x9E3779B97F4A7C15


def splitmix(x):
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def reference_noise(key, feature, threshold, missing_left):
    """The documented draw: the four 16-bit quarters of a hash of the
    candidate's counter (feature, threshold, side), summed, centred and scaled
    to variance 1."""
    counter = (feature << 21) | (threshold << 1) | missing_left
    h = splitmix((key + (counter + 1) * GOLDEN) & MASK)
    quarters = sum((h >> shift) & 0xFFFF for shift in (0, 16, 32, 48)) + 2
    return (quarters / 65536 - 2.0) * math.sqrt(3.0)


def _draws(key, shape):
    """The raw draws of a table of candidates: scores of gain 0 whose spread
    is 1 (parent score 1, scale 1), every candidate competing."""
    table = np.empty(shape)
    noisy_level_scores(key, np.zeros(shape), 1.0, 1.0, -1.0, table)
    return table


def test_noise_draws_are_the_documented_draw_and_about_standard_normal():
    key = node_noise_key(12345, 7)
    table = _draws(key, (40, 255, 2))
    for f, t, m in [(0, 0, 0), (3, 17, 1), (39, 254, 1), (12, 100, 0)]:
        assert table[f, t, m] == pytest.approx(reference_noise(key, f, t, m), abs=1e-12)
    draws = table.ravel()  # 20,400 draws
    assert abs(draws.mean()) < 0.03 and abs(draws.std() - 1.0) < 0.03
    assert np.abs(draws).max() <= 2 * math.sqrt(3.0)
    # nearby candidates are not correlated
    assert abs(np.corrcoef(table[:, :-1, 0].ravel(), table[:, 1:, 0].ravel())[0, 1]) < 0.05
    other = _draws(node_noise_key(12345, 8), table.shape)
    assert abs(np.corrcoef(draws, other.ravel())[0, 1]) < 0.05


@pytest.mark.parametrize("parent_score", [3.0, -2.0])
def test_level_scores_add_the_spread_noise_above_the_least_gain(parent_score):
    rng = np.random.default_rng(5)
    gains = rng.uniform(-1.0, 4.0, size=(6, 9, 2))
    gains[0, 0, 0] = 1.5  # exactly the least gain: does not compete
    key, scale, least_gain = node_noise_key(3, 11), 0.7, 1.5
    scores = np.empty_like(gains)
    noisy_level_scores(key, gains, scale, parent_score, least_gain, scores)
    for (f, t, m), gain in np.ndenumerate(gains):
        if gain <= least_gain:
            assert scores[f, t, m] == -np.inf
            continue
        # a negative parent score counts as 0, as in the searches
        spread = scale * math.sqrt(2 * gain + max(parent_score, 0.0))
        assert scores[f, t, m] == pytest.approx(gain + spread * reference_noise(key, f, t, m),
                                                rel=1e-12)
    with pytest.raises(ValueError, match="both be"):
        noisy_level_scores(key, gains, scale, parent_score, least_gain, np.empty((6, 9, 3)))


def _search(hist, n_bins, parent, d, top_k, restricted, outputs, **noise):
    """find_best_splits (top_k None) or find_best_sparse_splits on one node."""
    common = (hist, np.arange(len(n_bins), dtype=np.int32), np.array(n_bins, dtype=np.int32),
              parent, d, 0, 1.0, LAMBDA, 5, 0.0)
    if top_k is None:
        return find_best_splits(*common, *outputs, 2, **noise)
    return find_best_sparse_splits(*common, top_k, restricted, *outputs, 2, **noise)


# d = 1 takes the one-output scan, which skips candidates by a bound on the
# noise (scan_thresholds_one_output); d = 2 the scan of any width; d = 3 with
# top_k the sparse searches. Odd seeds let only gains above least_gain compete.
@pytest.mark.parametrize("d, top_k, restricted", [(1, None, False), (2, None, False),
                                                  (3, 1, False), (3, 2, True)])
@pytest.mark.parametrize("seed", range(8))
def test_noisy_search_matches_a_reference_that_scores_every_candidate(seed, d, top_k,
                                                                      restricted):
    rng = np.random.default_rng(seed)
    max_bins, n_bins_per_feature = 12, [7, 12, 4, 9, 2]
    X_binned, grad, hess = make_node(rng, 200, n_bins_per_feature, {1, 3}, max_bins, d, 0)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    references = [brute_force_feature(X_binned[f], n_bins_per_feature[f], max_bins, grad, hess,
                                      0, 1.0, 5, 0.0, top_k, restricted)
                  for f in range(len(n_bins_per_feature))]
    gains = [c[0] for _, candidates, _ in references for c in candidates if c[3] and c[0] > 0]
    least_gain = float(np.quantile(gains, 0.4)) if seed % 2 else 0.0
    # a scale that makes the noise as large as the gains' differences
    scale, key = 0.5 + seed, node_noise_key(99, seed)
    outputs = unset_outputs(hist.shape[0])
    noiseless = np.full(hist.shape[0], 99.0)
    chosen = _search(hist, n_bins_per_feature, parent, d, top_k, restricted, outputs,
                     noise_scale=scale, noise_key=key, noiseless_gain=noiseless,
                     least_gain=least_gain)
    gain, bin_, missing_left = outputs
    best_scores = []
    for f, (_, candidates, parent_score) in enumerate(references):
        has_missing = bool((X_binned[f] == max_bins).any())
        scored = []
        for cand_gain, t, direction, valid, _, _, _ in candidates:
            if not valid or cand_gain <= least_gain:
                continue
            # the side scanned: without missing values only "missing right"
            side = int(direction) if has_missing else 0
            spread = scale * math.sqrt(2 * cand_gain + parent_score)
            scored.append((cand_gain + spread * reference_noise(key, f, t, side),
                           cand_gain, t, direction))
        if not scored:  # no candidate gains enough: none may win
            assert gain[f] == -np.inf and bin_[f] == -1
            best_scores.append(-np.inf)
            continue
        top = max(scored)
        assert gain[f] == pytest.approx(top[0], rel=1e-9)
        assert noiseless[f] == pytest.approx(top[1], rel=1e-9)
        assert (bin_[f], bool(missing_left[f])) == (top[2], bool(top[3]))
        best_scores.append(top[0])
    assert chosen == int(np.argmax(best_scores))
    # the noise changed some feature's choice from the noiseless one's
    plain = unset_outputs(hist.shape[0])
    _search(hist, n_bins_per_feature, parent, d, top_k, restricted, plain)
    assert (plain[1] != bin_).any()
    assert np.all(noiseless[bin_ >= 0] <= plain[0][bin_ >= 0] + 1e-12)


def test_noisy_search_needs_its_noiseless_gains_and_a_finite_scale():
    rng = np.random.default_rng(0)
    X_binned, grad, hess = make_node(rng, 50, [4, 4], set(), 4, 1, 0)
    hist, parent = node_histogram(X_binned, grad, hess, 4)
    outputs = unset_outputs(2)
    arguments = (hist, np.arange(2, dtype=np.int32), np.array([4, 4], dtype=np.int32), parent,
                 1, 0, 1.0, LAMBDA, 1, 0.0, *outputs, 1)
    with pytest.raises(ValueError, match="noiseless_gain, one per feature"):
        find_best_splits(*arguments, noise_scale=1.0)
    with pytest.raises(ValueError, match="noise_scale must be finite and >= 0"):
        find_best_splits(*arguments, noise_scale=-1.0, noiseless_gain=np.empty(2))


def _copies_data(n=4000, seed=0):
    """y depends on x0 only; x1 is an exact copy of x0, x2 and x3 are noise."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    X = np.column_stack([x, x, rng.normal(size=(n, 2))])
    return X, np.sin(2 * x) + 0.1 * rng.normal(size=n)


def _split_features(booster):
    return np.concatenate([tree.node_feature[tree.node_left >= 0] for tree in booster.trees])


@pytest.mark.parametrize("growth", ["bestfirst", "depthwise", "symmetric"])
def test_noise_spreads_splits_over_equally_good_features(growth):
    X, y = _copies_data()
    params = {"growth": growth, "max_depth": 3, "max_leaves": 8, "verbosity": 0, "seed": 1}
    plain = gbmo.train(params, gbmo.Dataset(X, y), 10)
    noisy = gbmo.train({**params, "random_strength": 1.0}, gbmo.Dataset(X, y), 10)
    # the first of two equal gains wins without noise: x1 never splits
    assert set(_split_features(plain)) == {0}
    used = np.bincount(_split_features(noisy), minlength=4)
    assert used[0] > 0 and used[1] > 0
    # a noisy choice among good candidates costs the fit little
    plain_error, noisy_error = (np.sqrt(np.mean((model.predict(X) - y) ** 2))
                                for model in (plain, noisy))
    assert noisy_error < 1.1 * plain_error
    # the same seed grows the same trees
    again = gbmo.train({**params, "random_strength": 1.0}, gbmo.Dataset(X, y), 10)
    assert again.model_to_string() == noisy.model_to_string()


def test_a_feature_far_better_than_the_others_still_wins():
    X, y = _copies_data()
    X = X[:, [0, 2, 3]]  # one informative feature, two of noise
    for seed in range(5):
        booster = gbmo.train({"random_strength": 2.0, "max_leaves": 4, "verbosity": 0,
                              "seed": seed}, gbmo.Dataset(X, y), 3)
        for tree in booster.trees:
            assert tree.node_feature[0] == 0  # each root splits on x0


def test_noise_fades_with_the_rounds():
    """CatBoost's fading, n / (n + exp(learning_rate x round)): with
    learning rate 1 on 200 rows it falls below the cutoff (1e-6) at round
    20, so a model continued from a plain one's 25 rounds grows the plain
    one's trees; in the first rounds it changes them."""
    X, y = _copies_data(n=200)
    X = X[:, [0, 1, 2, 3]]  # with the copy: before the cutoff its ties would break
    params = {"learning_rate": 1.0, "max_leaves": 4, "min_samples_leaf": 5, "verbosity": 0,
              "seed": 0}
    plain = gbmo.train(params, gbmo.Dataset(X, y), 30)
    start = gbmo.train(params, gbmo.Dataset(X, y), 25)
    continued = gbmo.train({**params, "random_strength": 1.0}, gbmo.Dataset(X, y), 5,
                           init_model=start)
    for a, b in zip(plain.trees[25:], continued.trees[25:]):
        np.testing.assert_array_equal(a.node_feature, b.node_feature)
        np.testing.assert_array_equal(a.node_threshold, b.node_threshold)
    noisy = gbmo.train({**params, "random_strength": 1.0}, gbmo.Dataset(X, y), 3)
    assert any((a.node_feature != b.node_feature).any()
               or (a.node_threshold != b.node_threshold).any()
               for a, b in zip(plain.trees[:3], noisy.trees))


def test_gains_are_the_splits_own_not_their_scores():
    """Importance and best-first order use a split's gain, without the noise
    that chose it: the noisy model's root gain is the gain the plain search
    finds for the same feature and threshold."""
    X, y = _copies_data()
    noisy = gbmo.train({"random_strength": 5.0, "max_leaves": 2, "verbosity": 0, "seed": 4},
                       gbmo.Dataset(X, y), 1)
    plain = gbmo.train({"max_leaves": 2, "verbosity": 0}, gbmo.Dataset(X, y), 1)
    assert noisy.trees[0].node_feature[0] in (0, 1)
    # the copies split alike, so the root gains agree whichever copy won
    if noisy.trees[0].node_threshold[0] == plain.trees[0].node_threshold[0]:
        assert noisy.trees[0].node_gain[0] == pytest.approx(plain.trees[0].node_gain[0], rel=1e-12)
    assert noisy.trees[0].node_gain[0] <= plain.trees[0].node_gain[0] * (1 + 1e-12)


@pytest.mark.parametrize("value", [-1.0, float("nan"), float("inf"), "strong"])
def test_random_strength_out_of_range_is_refused(value):
    X, y = _copies_data(n=100)
    with pytest.raises((ValueError, TypeError), match="random_strength"):
        gbmo.train({"random_strength": value, "verbosity": 0}, gbmo.Dataset(X, y), 1)


def test_estimators_take_random_strength():
    X, y = _copies_data()
    model = gbmo.GBMORegressor(n_estimators=10, random_strength=1.0, random_state=0).fit(X, y)
    assert model.get_params()["random_strength"] == 1.0
    assert set(np.unique(_split_features(model.booster_))) >= {0, 1}


@pytest.mark.parametrize("one_hot", [False, True])
def test_noise_varies_a_categorical_features_set_and_keeps_its_gain(one_hot):
    """A categorical feature's sets (runs of the node's order, or one
    category against the rest) compete by noisy score too: under large
    noise the set drawn changes with the node's key, and the gain reported
    is the chosen set's own, recomputed from the histogram."""
    rng = np.random.default_rng(5)
    d, max_bins, n_bins = 2, 12, [12]
    X_binned, grad, hess = make_node(rng, 400, n_bins, {0}, max_bins, d, 0)
    hist, parent = node_histogram(X_binned, grad, hess, max_bins)
    rules = {"categorical": np.ones(1, dtype=np.uint8), "cat_smooth": 0.0,
             "max_cat_to_onehot": 12 if one_hot else 0}
    sets = set()
    for node in range(12):
        order = np.empty((1, hist.shape[1]), dtype=np.int32)
        gain, bin_, missing_left = unset_outputs(1)
        noiseless = np.empty(1)
        find_best_splits(hist, np.zeros(1, dtype=np.int32), np.array(n_bins, dtype=np.int32),
                         parent, d, 0, 1.0, LAMBDA, 5, 0.0, gain, bin_, missing_left, 1,
                         category_order=order, noise_scale=3.0,
                         noise_key=node_noise_key(7, node), noiseless_gain=noiseless, **rules)
        left_bins = np.sort(order[0, :bin_[0] + 1])
        sets.add((tuple(left_bins), int(missing_left[0])))
        left = hist[0, left_bins].sum(axis=0) + (hist[0, -1] if missing_left[0] else 0.0)
        right = parent - left
        score = [np.sum(sums[:d] ** 2 / (sums[-1] + LAMBDA)) for sums in (left, right, parent)]
        own_gain = 0.5 * (score[0] + score[1] - score[2])
        assert noiseless[0] == pytest.approx(own_gain, rel=1e-9)
    assert len(sets) >= 3


def test_noise_never_picks_a_split_below_min_gain():
    """min_gain is applied to the chosen split's own gain: the noise lets
    only splits above it compete, so a node whose best split passes
    min_gain always splits (noise or not)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 20))
    y = X[:, 0] + 0.3 * rng.normal(size=2000)
    plain = gbmo.train({"max_leaves": 2, "verbosity": 0}, gbmo.Dataset(X, y), 1)
    min_gain = 0.8 * plain.trees[0].node_gain[0]  # per output: one output here
    for growth in ("bestfirst", "symmetric"):
        for seed in range(20):
            booster = gbmo.train({"max_leaves": 2, "max_depth": 1, "growth": growth,
                                  "min_gain": min_gain, "random_strength": 3.0, "seed": seed,
                                  "verbosity": 0}, gbmo.Dataset(X, y), 1)
            assert booster.trees[0].node_left[0] >= 0
            assert booster.trees[0].node_gain[0] > min_gain


def test_a_sparse_y_refuses_random_strength():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    X, _ = _copies_data(n=200)
    Y = scipy_sparse.random(200, 30, density=0.1, format="csr", random_state=0)
    Y.data[:] = 1.0
    with pytest.raises(ValueError, match="a sparse Y does not take random_strength"):
        gbmo.train({"split": "sparse", "top_k": 5, "random_strength": 1.0, "verbosity": 0},
                   gbmo.Dataset(X, Y), 1)
