import pickle

import numpy as np
import pytest

from gbmo.datasets import load_enb, load_student, load_yeast

YEAST_CLASS_COUNTS = {
    "CYT": 463, "NUC": 429, "MIT": 244, "ME3": 163, "ME2": 51,
    "ME1": 44, "EXC": 35, "VAC": 30, "POX": 20, "ERL": 5,
}

STUDENT_ONE_HOT_GROUPS = {
    "Mjob": 5, "Fjob": 5, "reason": 4, "guardian": 3,
}

STUDENT_BINARY_FEATURES = [
    "school_GP", "sex_F", "address_U", "famsize_LE3", "Pstatus_T",
    "schoolsup", "famsup", "paid", "activities", "nursery", "higher",
    "internet", "romantic",
]


@pytest.fixture(scope="module")
def yeast():
    return load_yeast()


@pytest.fixture(scope="module")
def student():
    return load_student()


def test_yeast_shapes_and_dtypes(yeast):
    assert yeast.data.shape == (1484, 8)
    assert yeast.data.dtype == np.float64
    assert yeast.target.shape == (1484,)
    assert yeast.target.dtype == np.int64
    assert yeast.feature_names == ["mcg", "gvh", "alm", "mit", "erl", "pox", "vac", "nuc"]
    assert np.isfinite(yeast.data).all()


def test_yeast_class_order_and_counts_match_uci(yeast):
    assert list(yeast.target_names) == list(YEAST_CLASS_COUNTS)
    counts = np.bincount(yeast.target, minlength=len(yeast.target_names))
    assert dict(zip(yeast.target_names, counts.tolist())) == YEAST_CLASS_COUNTS


def test_yeast_values_match_the_file(yeast):
    # First and last lines of yeast.data: ADT1_YEAST and G6PD_YEAST.
    np.testing.assert_array_equal(
        yeast.data[0], [0.58, 0.61, 0.47, 0.13, 0.50, 0.00, 0.48, 0.22]
    )
    np.testing.assert_array_equal(
        yeast.data[-1], [0.65, 0.54, 0.54, 0.13, 0.50, 0.00, 0.53, 0.22]
    )
    assert yeast.target_names[yeast.target[0]] == "MIT"
    assert yeast.target_names[yeast.target[-1]] == "CYT"
    assert 0.0 <= yeast.data.min() and yeast.data.max() <= 1.0
    assert set(np.unique(yeast.data[:, 4])) == {0.5, 1.0}


def test_student_shapes_and_dtypes(student):
    assert student.data.shape == (649, 43)
    assert student.data.dtype == np.float64
    assert student.target.shape == (649, 3)
    assert student.target.dtype == np.float64
    assert list(student.target_names) == ["G1", "G2", "G3"]
    assert len(student.feature_names) == 43
    assert len(set(student.feature_names)) == 43
    assert not np.isnan(student.data).any()
    assert not np.isnan(student.target).any()


def test_student_grades_are_whole_numbers_on_0_to_20(student):
    assert student.target.min() >= 0 and student.target.max() <= 20
    np.testing.assert_array_equal(student.target, np.round(student.target))
    # UCI quotes G1 and G2 but not G3; the first student is G1 "0", G2 "11", G3 11.
    np.testing.assert_array_equal(student.target[0], [0, 11, 11])
    assert (student.target[:, 2] == 0).sum() == 15


def test_student_one_hot_groups_sum_to_one(student):
    names = np.array(student.feature_names)
    for group, size in STUDENT_ONE_HOT_GROUPS.items():
        columns = np.char.startswith(names, group + "_")
        assert columns.sum() == size, group
        block = student.data[:, columns]
        assert set(np.unique(block)) == {0.0, 1.0}
        np.testing.assert_array_equal(block.sum(axis=1), 1.0)
        assert (block.sum(axis=0) > 0).all(), f"{group} has an empty category"


def test_student_binary_features_are_0_or_1_and_take_both_values(student):
    for name in STUDENT_BINARY_FEATURES:
        column = student.data[:, student.feature_names.index(name)]
        assert set(np.unique(column)) == {0.0, 1.0}, name


def test_student_encoding_of_the_first_row(student):
    # "GP";"F";18;"U";"GT3";"A";4;4;"at_home";"teacher";"course";"mother";2;2;0;
    # "yes";"no";"no";"no";"yes";"yes";"no";"no";4;3;4;1;1;3;4
    first = dict(zip(student.feature_names, student.data[0]))
    expected = {
        "school_GP": 1, "sex_F": 1, "age": 18, "address_U": 1, "famsize_LE3": 0,
        "Pstatus_T": 0, "Medu": 4, "Fedu": 4, "Mjob_at_home": 1, "Mjob_teacher": 0,
        "Fjob_teacher": 1, "Fjob_at_home": 0, "reason_course": 1, "guardian_mother": 1,
        "traveltime": 2, "studytime": 2, "failures": 0, "schoolsup": 1, "famsup": 0,
        "nursery": 1, "higher": 1, "internet": 0, "famrel": 4, "health": 3, "absences": 4,
    }
    assert {name: first[name] for name in expected} == expected


@pytest.mark.parametrize("load", [load_yeast, load_student, load_enb])
def test_return_X_y_matches_the_bunch(load):
    bunch = load()
    X, y = load(return_X_y=True)
    np.testing.assert_array_equal(X, bunch.data)
    np.testing.assert_array_equal(y, bunch.target)
    assert X.dtype == bunch.data.dtype and y.dtype == bunch.target.dtype


@pytest.mark.parametrize("load", [load_yeast, load_student, load_enb])
def test_bunch_is_a_dict_with_attributes_and_a_description(load):
    bunch = load()
    assert bunch["data"] is bunch.data
    assert bunch.frame is None
    assert "CC BY 4.0" in bunch.DESCR
    with pytest.raises(AttributeError):
        bunch.no_such_field
    restored = pickle.loads(pickle.dumps(bunch))
    np.testing.assert_array_equal(restored.data, bunch.data)


@pytest.mark.parametrize("load", [load_yeast, load_student, load_enb])
def test_each_call_returns_fresh_arrays(load):
    first = load()
    first.data[:] = -1
    assert (load().data >= 0).all()


@pytest.mark.parametrize("load", [load_yeast, load_student, load_enb])
def test_as_frame(load):
    pd = pytest.importorskip("pandas")
    bunch = load(as_frame=True)
    assert isinstance(bunch.data, pd.DataFrame)
    assert list(bunch.data.columns) == bunch.feature_names
    np.testing.assert_array_equal(bunch.data.to_numpy(), load().data)
    np.testing.assert_array_equal(bunch.target.to_numpy(), load().target)
    n_targets = 1 if bunch.target.ndim == 1 else bunch.target.shape[1]
    assert bunch.frame.shape == (bunch.data.shape[0], bunch.data.shape[1] + n_targets)
    X, y = load(return_X_y=True, as_frame=True)
    pd.testing.assert_frame_equal(X, bunch.data)


def test_enb_shapes_values_and_uci_design():
    """768 simulated buildings: 12 shapes x 4 orientations x 16 glazings."""
    enb = load_enb()
    assert enb.data.shape == (768, 8) and enb.target.shape == (768, 2)
    assert enb.data.dtype == enb.target.dtype == np.float64
    assert enb.feature_names[0] == "relative_compactness"
    assert list(enb.target_names) == ["heating_load", "cooling_load"]
    # first and last rows of the file
    np.testing.assert_array_equal(enb.data[0], [0.98, 514.5, 294.0, 110.25, 7.0, 2, 0.0, 0])
    np.testing.assert_array_equal(enb.target[0], [15.55, 21.33])
    np.testing.assert_array_equal(enb.data[-1], [0.62, 808.5, 367.5, 220.5, 3.5, 5, 0.4, 5])
    np.testing.assert_array_equal(enb.target[-1], [16.64, 16.03])
    shapes = np.unique(enb.data[:, :5], axis=0)
    assert len(shapes) == 12
    assert set(np.unique(enb.data[:, 5])) == {2.0, 3.0, 4.0, 5.0}
    glazing = np.unique(enb.data[:, 6:], axis=0)
    assert len(glazing) == 16 and set(glazing[glazing[:, 0] == 0, 1]) == {0.0}
    assert np.corrcoef(enb.target.T)[0, 1] > 0.97


def test_the_datasets_are_reachable_after_import_gbmo_as_readme_shows_them(tmp_path):
    """gbmo.datasets.load_yeast() after `import gbmo` raised AttributeError: the
    module was only reachable when imported itself."""
    import os
    import subprocess
    import sys

    import gbmo

    script = "import gbmo; print(gbmo.datasets.load_yeast().data.shape)"
    package_root = os.path.dirname(os.path.dirname(gbmo.__file__))
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=tmp_path, env=dict(os.environ, PYTHONPATH=package_root),
                            timeout=120)
    assert result.stdout.strip() == "(1484, 8)", result.stderr
