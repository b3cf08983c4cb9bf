"""Small real data sets that ship with gbmo, for examples, tests and demos.

Three data sets from the UCI Machine Learning Repository live in
``gbmo/data/``, gzip-compressed but otherwise byte-identical to the files
they were copied from, so they load offline and without extra dependencies:

- :func:`load_yeast` -- Yeast protein localization: 1484 proteins, 8 features,
  10 classes (multi-class; the "yeast" set of the GBDT-MO paper).
- :func:`load_student` -- Student Performance, Portuguese course: 649
  students, 43 features after encoding, 3 grades G1, G2, G3 (multi-output
  regression; the paper's "student" set).
- :func:`load_enb` -- Energy efficiency: 768 simulated buildings, 8
  features, 2 outputs, heating and cooling load (multi-output regression; the
  MULAN collection's "enb").

All three are distributed by UCI under the Creative Commons Attribution 4.0
licence (CC BY 4.0). If you use them, cite the original authors:

- Yeast: K. Nakai and M. Kanehisa (1991); P. Horton and K. Nakai, "A
  Probabilistic Classification System for Predicting the Cellular Localization
  Sites of Proteins", ISMB 1996.
- Student: P. Cortez and A. Silva, "Using Data Mining to Predict Secondary
  School Student Performance", FUBUTEC 2008.
- Energy efficiency: A. Tsanas and A. Xifara, "Accurate quantitative
  estimation of energy performance of residential buildings using statistical
  machine learning tools", Energy and Buildings 49, 2012.

``gbmo/data/README.md`` gives where each copy came from, its checksum and its
quirks. The loaders follow scikit-learn's: they return a :class:`Bunch` with
``data``, ``target``, ``target_names``, ``feature_names``, ``frame`` and
``DESCR``, or ``(data, target)`` with ``return_X_y=True``. They need only
numpy; ``as_frame=True`` needs pandas.
"""

import csv
import gzip
import os

import numpy as np

__all__ = ["Bunch", "load_enb", "load_student", "load_yeast"]

# gbmo contains compiled extensions, so it is always installed as files on
# disk and never imported from a zip archive: a plain path is enough.
_DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


class Bunch(dict):
    """A dict whose keys can also be read and set as attributes.

    Behaves like the ``Bunch`` scikit-learn's loaders return, so code written
    for ``sklearn.datasets`` works unchanged.
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value

    def __dir__(self):
        return list(self.keys())


_YEAST_FEATURES = ("mcg", "gvh", "alm", "mit", "erl", "pox", "vac", "nuc")

# The order of the GBDT-MO authors' loader, which is also largest class first.
_YEAST_CLASSES = ("CYT", "NUC", "MIT", "ME3", "ME2", "ME1", "EXC", "VAC", "POX", "ERL")

_YEAST_DESCR = """\
Yeast protein localization (UCI Machine Learning Repository)

Predict where in the cell a protein resides from 8 scores computed on its
amino acid sequence. 1484 proteins, 8 numeric features, 10 classes.

Features:
  mcg  McGeoch's method for signal sequence recognition
  gvh  von Heijne's method for signal sequence recognition
  alm  score of the ALOM membrane spanning region prediction program
  mit  discriminant score of the N-terminal region (mitochondrial or not)
  erl  presence of the "HDEL" endoplasmic reticulum retention signal
       (takes only the values 0.5 and 1.0)
  pox  peroxisomal targeting signal in the C-terminus
  vac  discriminant score of vacuolar against extracellular proteins
  nuc  discriminant score of nuclear localization signals

Classes (target index 0..9, with counts): CYT cytosolic 463, NUC nuclear 429,
MIT mitochondrial 244, ME3 membrane protein without N-terminal signal 163,
ME2 membrane protein with uncleaved signal 51, ME1 membrane protein with
cleaved signal 44, EXC extracellular 35, VAC vacuolar 30, POX peroxisomal 20,
ERL endoplasmic reticulum lumen 5.

22 proteins appear twice with identical rows, as in the UCI original.

Licence: CC BY 4.0 (UCI). Cite K. Nakai and M. Kanehisa (1991) and P. Horton
and K. Nakai, "A Probabilistic Classification System for Predicting the
Cellular Localization Sites of Proteins", ISMB 1996.
"""

_YES_NO = ("yes", "no")
_JOBS = ("at_home", "health", "other", "services", "teacher")

# Every column of student-por.csv in file order with its encoding:
#   number  kept as is
#   flag    one 0/1 column named "<column>_<first value>", 1 for the first value
#   yes_no  one 0/1 column keeping the column's name, 1 for "yes"
#   one_hot one 0/1 column per value, named "<column>_<value>"
#   grade   a target
# Categories are listed here rather than read from the file so that the
# feature layout is fixed and an unexpected value is an error.
_STUDENT_COLUMNS = (
    ("school", "flag", ("GP", "MS")),
    ("sex", "flag", ("F", "M")),
    ("age", "number", None),
    ("address", "flag", ("U", "R")),
    ("famsize", "flag", ("LE3", "GT3")),
    ("Pstatus", "flag", ("T", "A")),
    ("Medu", "number", None),
    ("Fedu", "number", None),
    ("Mjob", "one_hot", _JOBS),
    ("Fjob", "one_hot", _JOBS),
    ("reason", "one_hot", ("course", "home", "other", "reputation")),
    ("guardian", "one_hot", ("father", "mother", "other")),
    ("traveltime", "number", None),
    ("studytime", "number", None),
    ("failures", "number", None),
    ("schoolsup", "yes_no", _YES_NO),
    ("famsup", "yes_no", _YES_NO),
    ("paid", "yes_no", _YES_NO),
    ("activities", "yes_no", _YES_NO),
    ("nursery", "yes_no", _YES_NO),
    ("higher", "yes_no", _YES_NO),
    ("internet", "yes_no", _YES_NO),
    ("romantic", "yes_no", _YES_NO),
    ("famrel", "number", None),
    ("freetime", "number", None),
    ("goout", "number", None),
    ("Dalc", "number", None),
    ("Walc", "number", None),
    ("health", "number", None),
    ("absences", "number", None),
    ("G1", "grade", None),
    ("G2", "grade", None),
    ("G3", "grade", None),
)

_STUDENT_GRADES = ("G1", "G2", "G3")

_STUDENT_DESCR = """\
Student Performance, Portuguese language course (UCI Machine Learning
Repository)

Predict a secondary school student's three grades from demographic, social
and school-related attributes collected in two Portuguese schools. 649
students, 30 raw attributes encoded into 43 features, 3 targets.

Encoding (feature order follows the raw columns):
  school_GP, sex_F, address_U, famsize_LE3, Pstatus_T
      1 for GP school, female, urban address, family of at most 3, parents
      living together; 0 otherwise
  schoolsup, famsup, paid, activities, nursery, higher, internet, romantic
      1 for yes, 0 for no
  Mjob_*, Fjob_*, reason_*, guardian_*
      one-hot: exactly one column of each group is 1
  age, Medu, Fedu, traveltime, studytime, failures, famrel, freetime, goout,
  Dalc, Walc, health, absences
      numbers as recorded (most are ordinal scales)

Targets (columns of target, each on 0..20): G1 first period grade, G2 second
period grade, G3 final grade. 15 students have G3 = 0; they are kept.

Licence: CC BY 4.0 (UCI). Cite P. Cortez and A. Silva, "Using Data Mining to
Predict Secondary School Student Performance", Proceedings of the 5th Future
Business Technology Conference (FUBUTEC 2008), Porto, 2008.
"""


def load_yeast(return_X_y=False, as_frame=False):
    """Load the UCI Yeast protein localization data set (multi-class).

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a :class:`Bunch`.
    as_frame : bool, default=False
        Return ``data`` as a pandas DataFrame and ``target`` as a Series named
        ``"class"``, and fill ``frame`` with both; needs pandas.

    Returns
    -------
    Bunch or tuple
        ``data``: float64 array of shape (1484, 8); ``target``: int64 class
        index 0..9 in the order of ``target_names`` (CYT NUC MIT ME3 ME2 ME1
        EXC VAC POX ERL); ``target_names``: array of the class codes;
        ``feature_names``: list of the 8 feature names; ``frame``: None
        unless ``as_frame``; ``DESCR``: description and attribution.
    """
    class_index = {name: index for index, name in enumerate(_YEAST_CLASSES)}
    rows, classes = [], []
    with gzip.open(os.path.join(_DATA_DIR, "yeast.data.gz"), "rt", encoding="ascii") as f:
        for line_number, line in enumerate(f, start=1):
            fields = line.split()
            if len(fields) != 2 + len(_YEAST_FEATURES) or fields[-1] not in class_index:
                raise ValueError(f"yeast.data.gz line {line_number} is malformed: {line!r}")
            rows.append([float(value) for value in fields[1:-1]])
            classes.append(class_index[fields[-1]])
    return _deliver(
        data=np.array(rows, dtype=np.float64),
        target=np.array(classes, dtype=np.int64),
        feature_names=list(_YEAST_FEATURES),
        target_names=np.array(_YEAST_CLASSES),
        target_frame_name="class",
        descr=_YEAST_DESCR,
        return_X_y=return_X_y,
        as_frame=as_frame,
    )


def load_student(return_X_y=False, as_frame=False):
    """Load the UCI Student Performance data set, Portuguese course (3 outputs).

    The 30 raw attributes become 43 features, the count the GBDT-MO paper
    reports: the five two-valued ones to 0/1 (``school_GP``, ``sex_F``, ``address_U``,
    ``famsize_LE3``, ``Pstatus_T``), yes/no to 1/0, ``Mjob``, ``Fjob``,
    ``reason`` and ``guardian`` one-hot, the numeric ones as recorded. The
    features keep the order of the raw columns; see ``DESCR``.

    Parameters
    ----------
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a :class:`Bunch`.
    as_frame : bool, default=False
        Return ``data`` and ``target`` as pandas DataFrames and fill ``frame``
        with both; needs pandas.

    Returns
    -------
    Bunch or tuple
        ``data``: float64 array of shape (649, 43); ``target``: float64 array
        of shape (649, 3) holding the grades G1, G2, G3 on 0..20;
        ``target_names``: array ``["G1", "G2", "G3"]``; ``feature_names``:
        list of the 43 encoded feature names; ``frame``: None unless
        ``as_frame``; ``DESCR``: description and attribution.
    """
    feature_names = []
    for column, kind, values in _STUDENT_COLUMNS:
        if kind in ("number", "yes_no"):
            feature_names.append(column)
        elif kind == "flag":
            feature_names.append(f"{column}_{values[0]}")
        elif kind == "one_hot":
            feature_names.extend(f"{column}_{value}" for value in values)

    rows, grades = [], []
    path = os.path.join(_DATA_DIR, "student-por.csv.gz")
    # csv also strips the quotes UCI put around the G1 and G2 numbers.
    with gzip.open(path, "rt", encoding="ascii", newline="") as f:
        reader = csv.reader(f, delimiter=";")
        header = next(reader)
        expected_header = [column for column, _, _ in _STUDENT_COLUMNS]
        if header != expected_header:
            raise ValueError(
                f"student-por.csv.gz has columns {header}, expected {expected_header}"
            )
        for record in reader:
            row, row_grades = [], []
            for (column, kind, values), value in zip(_STUDENT_COLUMNS, record, strict=True):
                if values is not None and value not in values:
                    raise ValueError(
                        f"student-por.csv.gz line {reader.line_num}: column {column!r} "
                        f"has value {value!r}, expected one of {values}"
                    )
                if kind == "number":
                    row.append(float(value))
                elif kind == "grade":
                    row_grades.append(float(value))
                elif kind in ("flag", "yes_no"):
                    row.append(1.0 if value == values[0] else 0.0)
                else:
                    row.extend(1.0 if value == category else 0.0 for category in values)
            rows.append(row)
            grades.append(row_grades)

    return _deliver(
        data=np.array(rows, dtype=np.float64),
        target=np.array(grades, dtype=np.float64),
        feature_names=feature_names,
        target_names=np.array(_STUDENT_GRADES),
        target_frame_name=None,
        descr=_STUDENT_DESCR,
        return_X_y=return_X_y,
        as_frame=as_frame,
    )


_ENB_FEATURES = ("relative_compactness", "surface_area", "wall_area", "roof_area",
                 "overall_height", "orientation", "glazing_area", "glazing_area_distribution")
_ENB_TARGETS = ("heating_load", "cooling_load")

_ENB_DESCR = """\
Energy efficiency (UCI), as the MULAN multi-target regression collection's "enb"
--------------------------------------------------------------------------------

Predict the heating load and the cooling load of a building (kWh/m^2) from
its shape, simulated in Ecotect: 12 building shapes x 4 orientations x 16
glazings (none, or 3 glazing areas in 5 distributions) = 768 buildings, 8
features, 2 targets, which correlate at 0.976.

Features (UCI's X1..X8): relative_compactness, surface_area, wall_area,
roof_area, overall_height, orientation (2..5), glazing_area (share of the floor
area: 0, 0.1, 0.25, 0.4), glazing_area_distribution (0 none, 1..5 uniform,
north, east, south, west). MULAN's file names them Relative_compactness, X1,
X3..X8 (no X2); the loader uses UCI's meanings.

Targets (columns of target): heating_load (UCI's Y1), cooling_load (Y2).

Licence: CC BY 4.0 (UCI). Cite A. Tsanas and A. Xifara, "Accurate
quantitative estimation of energy performance of residential buildings using
statistical machine learning tools", Energy and Buildings 49 (2012) 560-567;
for the collection, E. Spyromitros-Xioufis, G. Tsoumakas, W. Groves and I.
Vlahavas, "Multi-target regression via input space expansion", Machine
Learning 104(1), 2016.
"""


def load_enb(return_X_y=False, as_frame=False):
    """Load the UCI Energy efficiency data set (2 outputs), MULAN's "enb".

    The arguments are load_student's. Returns a :class:`Bunch` (or ``(data,
    target)``): ``data``, float64 (768, 8); ``target``, float64 (768, 2), the
    heating and the cooling load; ``target_names`` ``["heating_load",
    "cooling_load"]``; ``feature_names``, the 8 names of ``DESCR``; ``frame``,
    None unless ``as_frame``; ``DESCR``, description and attribution.
    """
    width = len(_ENB_FEATURES) + len(_ENB_TARGETS)
    rows = []
    in_data = False
    with gzip.open(os.path.join(_DATA_DIR, "enb.arff.gz"), "rt", encoding="ascii") as f:
        for line_number, line in enumerate(f, start=1):
            line = line.strip()
            if not in_data:
                in_data = line.lower() == "@data"
                continue
            if not line:
                continue
            fields = line.split(",")
            if len(fields) != width:
                raise ValueError(f"enb.arff.gz line {line_number} is malformed: {line!r}")
            rows.append([float(value) for value in fields])
    table = np.array(rows, dtype=np.float64)
    return _deliver(
        data=np.ascontiguousarray(table[:, :len(_ENB_FEATURES)]),
        target=np.ascontiguousarray(table[:, len(_ENB_FEATURES):]),
        feature_names=list(_ENB_FEATURES),
        target_names=np.array(_ENB_TARGETS),
        target_frame_name=None,
        descr=_ENB_DESCR,
        return_X_y=return_X_y,
        as_frame=as_frame,
    )


def _deliver(data, target, feature_names, target_names, target_frame_name, descr,
             return_X_y, as_frame):
    """Package a loaded data set as the caller asked.

    ``target_frame_name`` names a 1-D target's pandas Series; a 2-D target
    becomes a DataFrame with ``target_names`` as its columns.
    """
    frame = None
    if as_frame:
        try:
            import pandas as pd
        except ImportError as error:
            raise ImportError(
                "as_frame=True needs pandas; install it with `pip install pandas`"
            ) from error
        data = pd.DataFrame(data, columns=feature_names)
        if target.ndim == 1:
            target = pd.Series(target, name=target_frame_name)
        else:
            target = pd.DataFrame(target, columns=list(target_names))
        frame = pd.concat([data, target], axis=1)
    if return_X_y:
        return data, target
    return Bunch(
        data=data,
        target=target,
        target_names=target_names,
        feature_names=feature_names,
        frame=frame,
        DESCR=descr,
    )
