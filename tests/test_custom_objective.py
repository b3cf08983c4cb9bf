"""objective=callable(y_true, raw_pred) -> (grad, hess)."""
import numpy as np
import pytest

import gbmo

rng = np.random.default_rng(0)
X = rng.normal(size=(800, 4))
Y = np.column_stack([X[:, 0] + 0.1 * rng.normal(size=800), np.abs(X[:, 1])])


def squared_error(y_true, raw_pred):
    return raw_pred - y_true, np.ones((len(y_true), 1))


def test_custom_objective_reproducing_mse_equals_mse():
    """The only difference is the start: mse starts from the target mean, a custom
    objective from 0, so compare after giving mse a zero start via init."""
    params = {"verbosity": 0, "max_leaves": 8, "learning_rate": 0.3}
    centred = Y - Y.mean(axis=0)
    builtin = gbmo.train(params, gbmo.Dataset(X, centred), 10)
    custom = gbmo.train({**params, "objective": squared_error}, gbmo.Dataset(X, centred), 10)
    np.testing.assert_allclose(builtin.init_score, 0.0, atol=1e-12)
    np.testing.assert_allclose(custom.predict(X), builtin.predict(X), rtol=1e-6, atol=1e-9)


def test_custom_objective_with_metric_and_save(tmp_path):
    train = gbmo.Dataset(X[:600], Y[:600])
    valid = train.create_valid(X[600:], Y[600:])
    booster = gbmo.train({"objective": squared_error, "metric": "rmse", "verbosity": 0},
                         train, 30, valid_sets=[valid])
    history = booster.evals_result["valid_0"]["rmse"]
    assert history[-1] < 0.5 * history[0]
    booster.save_model(tmp_path / "custom.json")
    loaded = gbmo.Booster(model_file=tmp_path / "custom.json")
    assert loaded.params["objective"] == "custom"
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))
    with pytest.raises(ValueError, match="a model file's params say so of an objective given "
                                         r"as a function, .* give the function itself"):
        gbmo.train(loaded.params, train, 1, init_model=loaded)


def test_a_custom_objective_subclass_of_its_own_name_saves_as_custom():
    """Found by the review: it saved under its own name, which no registered
    loss has, so the file did not load."""
    from gbmo.losses import CustomObjective

    class Named(CustomObjective):
        name = "named_for_test"

    booster = gbmo.train({"objective": Named(squared_error), "verbosity": 0},
                         gbmo.Dataset(X, Y), 3)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    assert loaded.params["objective"] == "custom"
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


@pytest.mark.parametrize("returned, message", [
    (lambda y, raw: (raw[:, :1], np.ones_like(raw)), r"grad of shape \(800, 1\), expected \(800, 2\)"),
    (lambda y, raw: (raw - y, np.ones((len(y), 3))), r"hess of shape \(800, 3\)"),
    (lambda y, raw: (np.full_like(raw, np.nan), np.ones_like(raw)), "grad that is not all finite"),
])
def test_custom_objective_shape_errors(returned, message):
    with pytest.raises(ValueError, match=message):
        gbmo.train({"objective": returned, "verbosity": 0}, gbmo.Dataset(X, Y), 2)


# -- LightGBM's / XGBoost's train form: objective(preds, train_data) ----------

def _logistic(raw, labels):
    p = 1.0 / (1.0 + np.exp(-raw))
    return p - labels, p * (1.0 - p)


def loglikelihood(preds, train_data):  # LightGBM's advanced_example, as written there
    grad, hess = _logistic(preds, train_data.get_label())
    return grad, hess


def weighted_loglikelihood(preds, train_data):
    grad, hess = _logistic(preds, train_data.get_label())
    return grad * train_data.get_weight(), hess * train_data.get_weight()


def logistic(y_true, raw_pred):
    return _logistic(raw_pred, y_true)


def test_lightgbm_s_train_form_is_called_as_lightgbm_calls_it():
    """preds (n,) for one output of a 1-D target and the labels through
    train_data; the same trees as gbmo's form. The function weighs the rows
    itself, as in LightGBM, where gbmo's form has them weighed."""
    labels = (X[:, 0] > 0).astype(float)
    weight = rng.uniform(0.5, 2.0, len(labels))
    params = {"verbosity": 0, "max_leaves": 8}
    for lightgbm_form, data in ((loglikelihood, gbmo.Dataset(X, labels)),
                                (weighted_loglikelihood, gbmo.Dataset(X, labels, weight=weight))):
        ported = gbmo.train({**params, "objective": lightgbm_form}, data, 5)
        native = gbmo.train({**params, "objective": logistic}, data, 5)
        np.testing.assert_array_equal(ported.predict(X), native.predict(X))
        assert ported.predict(X).shape == (len(labels),)
        # refit's rows reach the function as its train_data
        refit_weight = None if lightgbm_form is loglikelihood else weight[:300]
        np.testing.assert_array_equal(
            ported.refit(X[:300], labels[:300], weight=refit_weight).predict(X),
            native.refit(X[:300], labels[:300], weight=refit_weight).predict(X))


def test_lightgbm_s_train_form_for_classes_takes_preds_n_by_k():
    labels = np.digitize(X[:, 0], [-0.5, 0.5])

    def softmax_objective(preds, dtrain):  # XGBoost's name for the second parameter
        assert preds.shape == (len(labels), 3)
        p = np.exp(preds - preds.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        grad = p.copy()
        grad[np.arange(len(labels)), dtrain.get_label().astype(int)] -= 1.0
        return grad, p * (1.0 - p)

    model = gbmo.train({"objective": softmax_objective, "num_class": 3, "verbosity": 0},
                       gbmo.Dataset(X, labels), 20)
    assert np.mean(model.predict(X).argmax(axis=1) == labels) > 0.9


def test_xgboost_s_train_form_and_scikit_learn_s_weighted_form():
    """XGBoost's DMatrix answers get_weight() with an empty array; the
    scikit-learn API's third parameter gets the weights, and the function
    weighs the rows itself."""
    labels = (X[:, 0] > 0).astype(float)
    weight = rng.uniform(0.5, 2.0, len(labels))
    seen = []

    def xgboost_logistic(predt, data):
        seen.append((data.get_weight().size, data.num_row()))
        return _logistic(predt, data.get_label())

    def weighted_logistic(y_true, y_pred, sample_weight):
        assert y_true.shape == y_pred.shape == sample_weight.shape  # (n,), as XGBoost's
        grad, hess = _logistic(y_pred, y_true)
        return grad * sample_weight, hess * sample_weight

    def keyword_weighted_logistic(y_true, y_pred, *, sample_weight=None):
        return weighted_logistic(y_true, y_pred, sample_weight)

    params = {"verbosity": 0, "max_leaves": 8}
    plain = gbmo.train({**params, "objective": xgboost_logistic}, gbmo.Dataset(X, labels), 3)
    assert seen[0] == (0, len(labels))
    np.testing.assert_array_equal(
        plain.predict(X),
        gbmo.train({**params, "objective": logistic}, gbmo.Dataset(X, labels), 3).predict(X))
    expected = gbmo.train({**params, "objective": logistic},
                          gbmo.Dataset(X, labels, weight=weight), 3).predict(X)
    for objective in (weighted_logistic, keyword_weighted_logistic):
        weighted = gbmo.train({**params, "objective": objective},
                              gbmo.Dataset(X, labels, weight=weight), 3)
        np.testing.assert_array_equal(weighted.predict(X), expected)


def test_one_output_is_handed_1_d_for_a_1_d_target_only():
    """As LightGBM and XGBoost hand it: (n,) arrays for a 1-D target, which an
    ObjectiveResult may return too; a 2-D (n, 1) target keeps its columns."""
    from gbmo import ObjectiveResult

    target = X[:, 0] + 0.1 * rng.normal(size=len(X))
    seen = []

    def squared(y_true, raw):
        seen.append((y_true.shape, raw.shape))
        return raw - y_true, np.ones_like(raw)

    def separated(y_true, raw):
        grad = raw - y_true
        return ObjectiveResult(grad, np.ones_like(grad), grad, np.ones_like(grad))

    params = {"verbosity": 0, "max_leaves": 8}
    one_d = gbmo.train({**params, "objective": squared}, gbmo.Dataset(X, target), 3)
    assert seen[-1] == ((len(X),), (len(X),))
    np.testing.assert_array_equal(gbmo.train({**params, "objective": separated},
                                             gbmo.Dataset(X, target), 3).predict(X),
                                  one_d.predict(X))
    column = gbmo.train({**params, "objective": squared}, gbmo.Dataset(X, target[:, None]), 3)
    assert seen[-1] == ((len(X), 1), (len(X), 1))
    np.testing.assert_array_equal(column.predict(X)[:, 0], one_d.predict(X))


def weighted(y_true, raw, sample_weight):  # module level: pickled by name
    return (raw - y_true) * sample_weight, sample_weight


def test_an_objective_pickled_with_a_weight_flag_still_gets_its_weights():
    """Instances pickled before the weights' parameter was named held
    takes_weight, and no target shape."""
    import pickle

    from gbmo.losses import CustomObjective

    state = {key: value for key, value in vars(CustomObjective(weighted)).items()
             if key not in ("weight_parameter", "one_dimensional_target")}
    old = CustomObjective.__new__(CustomObjective)
    old.__setstate__({**state, "takes_weight": True})
    assert old.weight_parameter == "sample_weight" and not old.one_dimensional_target
    unweighted = CustomObjective.__new__(CustomObjective)
    unweighted.__setstate__({**state, "takes_weight": False})
    assert unweighted.weight_parameter is None
    again = pickle.loads(pickle.dumps(CustomObjective(weighted)))
    assert again.weight_parameter == "sample_weight"


def test_a_train_form_objective_under_another_name_is_told_how_to_name_it():
    def reads_a_dataset(preds, td):
        return _logistic(preds, td.get_label())

    with pytest.raises(TypeError, match="name its second parameter train_data .* it is 'td'"):
        gbmo.train({"objective": reads_a_dataset, "verbosity": 0},
                   gbmo.Dataset(X, (X[:, 0] > 0).astype(float)), 1)


def test_a_loaded_model_of_a_function_continues_with_the_function(tmp_path):
    """Its file names the objective "custom"; given the function again, it
    trains on from its trees."""
    params = {"objective": squared_error, "verbosity": 0}
    first = gbmo.train(params, gbmo.Dataset(X, Y), 3)
    first.save_model(tmp_path / "model.json")
    loaded = gbmo.Booster(model_file=tmp_path / "model.json")
    continued = gbmo.train(params, gbmo.Dataset(X, Y), 2, init_model=loaded)
    in_one_run = gbmo.train(params, gbmo.Dataset(X, Y), 5)
    assert continued.num_trees == 5
    np.testing.assert_allclose(continued.predict(X), in_one_run.predict(X), rtol=1e-9, atol=1e-9)
    with pytest.raises(ValueError, match="objective: 'custom' in init_model, 'mse' here"):
        gbmo.train({"verbosity": 0}, gbmo.Dataset(X, Y), 1, init_model=loaded)


def test_a_custom_objective_subclass_of_its_own_transform_saves_by_its_registered_name(
        monkeypatch):
    """Found by the review: saved as 'custom', it loaded with the identity
    transform; registered, it saves by its name, and else it is refused."""
    from gbmo import registry
    from gbmo.losses import CustomObjective

    class Logistic(CustomObjective):
        name = "logistic_for_test"
        default_metric = "rmse"

        def __init__(self, num_class=None, n_threads=1):
            super().__init__(squared_error, num_class, n_threads)

        def transform(self, raw):
            return 1.0 / (1.0 + np.exp(-raw))

    booster = gbmo.train({"objective": Logistic(), "verbosity": 0}, gbmo.Dataset(X, Y), 3)
    with pytest.raises(ValueError, match="named 'logistic_for_test', which is not a registered "
                                         "loss"):
        booster.model_to_string()
    monkeypatch.setattr(registry, "LOSSES", registry.Registry("gbmo.losses", "loss"))
    registry.register_loss("logistic_for_test")(Logistic)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    assert loaded.params["objective"] == "logistic_for_test"
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


def test_a_custom_objective_subclass_of_its_own_parameters_saves_them():
    """Found by the review of db96f3b: one with get_params() was refused at
    saving ('unknown loss custom'), where it saved its parameters before."""
    from gbmo.losses import CustomObjective

    class Scaled(CustomObjective):
        def __init__(self, scale=1.0, num_class=None, n_threads=1):
            super().__init__(lambda y, raw: ((raw - y) * scale, np.ones((len(y), 1))),
                             num_class, n_threads)
            self.scale = scale

        def get_params(self):
            return {"scale": self.scale}

    booster = gbmo.train({"objective": Scaled(2.0), "verbosity": 0}, gbmo.Dataset(X, Y), 3)
    loaded = gbmo.Booster(model_str=booster.model_to_string())
    assert loaded.params["objective"] == "custom"
    assert loaded.params["objective_params"] == {"scale": 2.0}
    np.testing.assert_array_equal(loaded.predict(X), booster.predict(X))


@pytest.mark.parametrize("hessian, message", [
    (lambda raw: -np.ones_like(raw), r"returned hessians with 300 negative values \(the least "
                                     r"-1\); a leaf's Newton step -G / \(H \+ lambda_l2\) needs "
                                     r"hessians >= 0"),
    (lambda raw: np.where(np.arange(len(raw)) == 5, -0.5, 1.0),
     r"returned hessians with 1 negative values \(the least -0.5\)"),
    (np.zeros_like, r"returned hessians that are all 0 \(as float32\) for output 0, whose "
                    r"gradients are not"),
])
def test_hessians_a_newton_step_cannot_take_are_refused(hessian, message):
    """Found by an audit: hess = -1 (a sign slip) trained 20 trees of one
    constant each, hess = 0 leaf values that ran off to 1e31, silently."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0]
    with pytest.raises(ValueError, match=message):
        gbmo.train({"verbosity": -1, "objective": lambda y_true, raw: (raw - y_true,
                                                                        hessian(raw))},
                   gbmo.Dataset(X, y), 2)


def test_hessians_of_an_objective_result_are_checked_too():
    """Found by a review: an ObjectiveResult's hessians skipped the check,
    and update_hess = 0 under gradients predicted 9e30."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0]

    def objective(y_true, raw):
        grad = raw - y_true
        return gbmo.ObjectiveResult(grad, np.ones_like(grad), grad, np.zeros_like(grad))
    with pytest.raises(ValueError, match="returned update_hess that are all 0 .as float32. for "
                                         "output 0, whose gradients are not"):
        gbmo.train({"verbosity": -1, "objective": objective}, gbmo.Dataset(X, y), 2)


def test_one_output_s_hessians_all_0_under_its_gradients_are_refused():
    """Found by a review: the check looked at every output at once, and an
    output of hessians 0 under gradients ran off to 1e24 beside one of 1."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 3))
    Y = np.column_stack([X[:, 0], -X[:, 0]])

    def objective(y_true, raw):
        return raw - y_true, np.column_stack([np.ones(len(raw)), np.zeros(len(raw))])
    with pytest.raises(ValueError, match="returned hessians that are all 0 .as float32. for "
                                         "output 1, whose gradients are not"):
        gbmo.train({"verbosity": -1, "objective": objective}, gbmo.Dataset(X, Y), 2)


def test_a_loss_at_its_minimum_with_no_gradient_and_no_hessian_trains_on():
    """Found by a review: a custom squared hinge returns gradients and
    hessians all 0 once every margin is met, which the check refused."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)

    def squared_hinge(y_true, raw):
        active = 1.0 - y_true * raw > 0
        return np.where(active, -2.0 * y_true * (1.0 - y_true * raw), 0.0), np.where(active, 2.0,
                                                                                      0.0)
    booster = gbmo.train({"verbosity": -1, "objective": squared_hinge, "learning_rate": 1.0},
                         gbmo.Dataset(X, y), 60)
    assert np.mean(np.sign(booster.predict(X)) == y) > 0.99
