"""XGBoost's Booster names: predict's iteration_range and output_margin,
get_score, num_boosted_rounds."""
import numpy as np
import pytest

import gbmo

RNG = np.random.default_rng(29)
X = RNG.normal(size=(300, 5))
Y = np.c_[X[:, 0] + X[:, 1], X[:, 1] - X[:, 2]]


@pytest.fixture(scope="module")
def booster():
    return gbmo.train({"verbosity": 0, "max_leaves": 6, "objective": "mse"},
                      gbmo.Dataset(X, Y, feature_name=list("abcde")), 6)


def test_iteration_range_is_the_rounds_begin_to_end_and_output_margin_the_raw_scores(booster):
    np.testing.assert_array_equal(booster.predict(X, iteration_range=(0, 3)),
                                  booster.predict(X, num_iteration=3))
    np.testing.assert_array_equal(booster.predict(X, iteration_range=(2, 5)),
                                  booster.predict(X, start_iteration=2, num_iteration=3))
    np.testing.assert_array_equal(booster.predict(X, iteration_range=(0, 0)), booster.predict(X))
    np.testing.assert_array_equal(booster.predict(X, output_margin=True),
                                  booster.predict(X, raw_score=True))
    with pytest.raises(ValueError, match="give the rounds once"):
        booster.predict(X, iteration_range=(0, 3), num_iteration=2)
    for bad in ((3, 1), (1.5, 3)):
        with pytest.raises(ValueError, match="iteration_range must be \\(begin, end\\), "
                                             "integers"):
            booster.predict(X, iteration_range=bad)


def test_get_score_is_xgboost_s_importance_of_the_features_splits_use(booster):
    splits = booster.feature_importance("split")
    total = booster.feature_importance("gain")
    used = [name for name, count in zip("abcde", splits) if count > 0]
    assert 0 < len(used) < 5  # e and others unused: left out, as XGBoost leaves them
    weight = booster.get_score()
    assert list(weight) == used
    assert weight == {name: float(splits["abcde".index(name)]) for name in used}
    gain, total_gain = booster.get_score("gain"), booster.get_score("total_gain")
    for name in used:
        j = "abcde".index(name)
        assert total_gain[name] == pytest.approx(total[j])
        assert gain[name] == pytest.approx(total[j] / splits[j])  # XGBoost's gain: the average
    with pytest.raises(ValueError, match="importance_type 'cover' is not allowed"):
        booster.get_score("cover")


def test_num_boosted_rounds_counts_the_rounds(booster):
    assert booster.num_boosted_rounds() == booster.current_iteration() == 6
