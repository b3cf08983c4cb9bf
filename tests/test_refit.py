"""Booster.refit against its definition: the trees kept, each leaf's value
decay_rate * old + (1 - decay_rate) * the value the new data's gradients give."""
import numpy as np
import pytest
from scipy import sparse

import gbmo

RNG = np.random.default_rng(31)
X = RNG.normal(size=(1500, 4))
Y = np.c_[X[:, 0] + np.sin(2 * X[:, 1]), X[:, 2] * X[:, 0]] + 0.1 * RNG.normal(size=(1500, 2))
PARAMS = {"verbosity": -1, "max_leaves": 8, "learning_rate": 0.2}


@pytest.mark.parametrize("params, target", [
    ({}, Y), ({"tree_mode": "single_output"}, Y),
    ({"split": "sparse_restricted", "top_k": 1}, Y),
    ({"objective": "softmax", "num_class": 3}, np.argmax(np.c_[Y, 0.3 * X[:, 3]], axis=1)),
    ({"lambda_l1": 0.5, "max_delta_step": 0.3}, Y[:, 0]),
    # a multi-task loss whose tasks all set leaves from gradients
    ({"objective": gbmo.MultiTaskLoss([("sigmoid", [0]), ("mse", [1])])},
     np.c_[(Y[:, 0] > 0).astype(float), Y[:, 1]])])
def test_refit_on_the_training_data_without_decay_gives_the_model_back(params, target):
    """Without row sampling, a tree's leaves are exactly the values the
    training data's gradients at the rounds before give them."""
    booster = gbmo.train({**PARAMS, **params}, gbmo.Dataset(X, target), 15)
    refitted = booster.refit(X, target, decay_rate=0.0)
    np.testing.assert_allclose(refitted.predict(X), booster.predict(X), rtol=1e-9, atol=1e-9)
    kept = booster.refit(X[:200], np.roll(target, 7, axis=0)[:200], decay_rate=1.0)
    np.testing.assert_array_equal(kept.predict(X), booster.predict(X))
    assert [t.n_nodes for t in refitted.trees] == [t.n_nodes for t in booster.trees]


def test_refit_follows_the_new_data_by_decay_rate():
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, Y[:, 0]), 10)
    shifted = Y[:, 0] + 2.0  # the data drifted: everything 2 higher
    new = {rate: booster.refit(X, shifted, decay_rate=rate) for rate in (0.0, 0.5)}
    # the first tree's leaves by hand: its new value, then the blend
    leaf = booster.predict_leaf(X)[:, 0]
    residual = shifted - booster.init_score[0]
    lambda_l2 = 1.0  # the default
    for rate, refitted in new.items():
        for l in range(booster.trees[0].n_leaves):
            rows = leaf == l
            fitted = residual[rows].sum() / (rows.sum() + lambda_l2) * 0.2
            expected = rate * booster.trees[0].leaf_values[l, 0] + (1 - rate) * fitted
            assert refitted.trees[0].leaf_values[l, 0] == pytest.approx(expected, rel=1e-6)
    errors = {rate: np.abs(model.predict(X) - shifted).mean() for rate, model in new.items()}
    assert errors[0.0] < errors[0.5] < np.abs(booster.predict(X) - shifted).mean()


def test_leaves_the_new_data_misses_keep_only_their_decayed_value():
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 3)
    leaf = booster.predict_leaf(X)[:, 0]
    some = leaf != leaf[0]  # no row in the first row's leaf of tree 0
    refitted = booster.refit(X[some], Y[some], decay_rate=0.25)
    np.testing.assert_allclose(refitted.trees[0].leaf_values[leaf[0]],
                               0.25 * booster.trees[0].leaf_values[leaf[0]])


def test_refit_refuses_what_it_cannot_refit():
    booster = gbmo.train(PARAMS, gbmo.Dataset(X, Y), 3)
    with pytest.raises(ValueError, match="decay_rate must be a number in \\[0, 1\\], got 1.5"):
        booster.refit(X, Y, decay_rate=1.5)
    with pytest.raises(ValueError, match="label must give 2 output\\(s\\) for each of the 1500"):
        booster.refit(X, Y[:, 0])
    with pytest.raises(ValueError, match="X has 3 features"):
        booster.refit(X[:, :3], Y)
    with pytest.raises(TypeError, match="not a Dataset"):
        booster.refit(gbmo.Dataset(X, Y), Y)
    with pytest.raises(TypeError, match="label as a dense array"):
        booster.refit(X, sparse.csr_matrix(Y))
    with pytest.raises(ValueError, match="weight must be finite and >= 0; it holds negative"):
        booster.refit(X, Y, weight=-np.ones(1500))
    with pytest.raises(ValueError, match="weight must have shape \\(1500,\\), got \\(7,\\)"):
        booster.refit(X, Y, weight=np.ones(7))
    with pytest.raises(ValueError, match="weight must contain at least one non-zero weight"):
        booster.refit(X, Y, weight=np.zeros(1500))
    dart = gbmo.train({**PARAMS, "boosting": "dart"}, gbmo.Dataset(X, Y), 3)
    with pytest.raises(ValueError, match="cannot refit DART"):
        dart.refit(X, Y)
    pytest.importorskip("gbmo_losses")  # a task of quantile leaves (gbmo-losses)
    quantile_task = gbmo.train({**PARAMS, "objective": gbmo.MultiTaskLoss(
        [("quantile", [0], {"alpha": 0.5}), ("mse", [1])])}, gbmo.Dataset(X, Y), 2)
    with pytest.raises(ValueError, match=r"objective 'multitask' sets them from residual "
                                         r"quantiles \('quantile' on outputs \[0\]\)"):
        quantile_task.refit(X, Y)


@pytest.mark.parametrize("objective, params", [
    ("squared_hinge", {}), ("sigmoid", {}), ("sigmoid", {"sparse_threshold": 0.5}),
    ("squared_hinge", {"lambda_l1": 0.5})])
def test_a_sparse_y_model_refits_with_its_own_objective(objective, params):
    """Not with the registered loss that predicts for it, whose gradients
    (mse's for the squared hinge, every label's for the restricted sigmoid)
    set other leaves: on its training data without decay the model comes
    back, from a dense (label.toarray(), which refit asked for) or a sparse
    label."""
    labels = (RNG.random((1500, 8)) < 1 / (1 + np.exp(2 - X[:, :1] * np.arange(8)))).astype(float)
    weight = RNG.uniform(0.5, 2.0, size=1500)
    booster = gbmo.train({**PARAMS, "objective": objective, "top_k": 3, **params},
                         gbmo.Dataset(X, sparse.csr_matrix(labels), weight=weight), 10)
    for label in (labels, sparse.csr_matrix(labels)):
        refitted = booster.refit(X, label, decay_rate=0.0, weight=weight)
        np.testing.assert_allclose(refitted.predict(X), booster.predict(X), rtol=1e-9, atol=1e-9)
        assert refitted.params["objective"] == refitted.sparse_loss.name == objective
    drifted = booster.refit(X, np.roll(labels, 1, axis=1), decay_rate=0.5)
    assert not np.allclose(drifted.predict(X), booster.predict(X))
    for label, message in ((labels * 2, "0/1 labels"), (labels[:, 0], "takes label as \\(n_rows, "
                                                                      "n_labels\\) 0/1 labels"),
                           (labels[:, :5], "label must give 8 output")):
        with pytest.raises(ValueError, match=message):
            booster.refit(X, label)


def test_refit_takes_every_tree_past_the_best_round():
    booster = gbmo.train({**PARAMS, "learning_rate": 0.5}, gbmo.Dataset(X[:1000], Y[:1000]),
                         40, valid_sets=[gbmo.Dataset(X[1000:], Y[1000:])],
                         callbacks=[gbmo.early_stopping(3, verbose=False)])
    assert 0 < booster.best_iteration < booster.current_iteration()
    refitted = booster.refit(X[:1000], Y[:1000], decay_rate=np.float32(0.0))
    n = booster.current_iteration()
    np.testing.assert_allclose(refitted.predict(X, num_iteration=n),
                               booster.predict(X, num_iteration=n), rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="init_score must have shape \\(1500,\\) or"):
        booster.refit(X, Y, init_score=np.zeros(7))
    with pytest.raises(ValueError, match="refit's init_score gives 1 value a row; the model "
                                         "has 2 outputs"):
        booster.refit(X, Y, init_score=np.zeros(1500))
