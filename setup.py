"""Builds the Cython kernels in gbmo/_core with OpenMP when the compiler has it.

setuptools has no portable "does this compiler take -fopenmp" switch, so we try
a tiny OpenMP program first and fall back to a serial build with a warning.
"""
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import warnings

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup

KERNELS = ["_binning", "_histogram", "_split", "_partition", "_predict", "_losses",
           "_leaf_values", "_sparse", "_projection", "_sparse_output", "_contrib", "_grow",
           "_openmp", "_tree_arrays", "_metrics", "_hessian", "_linear"]

OPENMP_PROBE = r"""
#include <omp.h>
int main(void) { int n = 0;
#pragma omp parallel reduction(+:n)
n += 1;
return n > 0 ? 0 : 1; }
"""


def openmp_flags():
    if sys.platform == "win32":
        return ["/openmp"], []
    compiler = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    compiler = compiler.split()[0]
    if shutil.which(compiler) is None:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        source = os.path.join(tmp, "probe.c")
        with open(source, "w") as f:
            f.write(OPENMP_PROBE)
        result = subprocess.run(
            [compiler, "-fopenmp", source, "-o", os.path.join(tmp, "probe")],
            capture_output=True,
        )
    if result.returncode != 0:
        return None
    return ["-fopenmp"], ["-fopenmp"]


flags = openmp_flags()
if flags is None:
    warnings.warn(
        "gbmo: the C compiler does not support OpenMP; building the kernels "
        "serially (n_threads has no effect). Install an OpenMP-capable compiler "
        "(gcc, or clang with libomp) for parallel training."
    )
    compile_flags, link_flags = [], []
else:
    compile_flags, link_flags = flags

extensions = [
    Extension(
        f"gbmo._core.{name}",
        [f"gbmo/_core/{name}.pyx"],
        include_dirs=[numpy.get_include()],
        extra_compile_args=["-O3"] + compile_flags if sys.platform != "win32" else compile_flags,
        extra_link_args=link_flags,
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
    )
    for name in KERNELS
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": 3,
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    )
)
