"""Shared pytest setup.

numba's CUDA simulator must be switched on before numba.cuda is first imported, so this happens
at import time, before any test module loads: on a machine without an NVIDIA driver
(no ``nvidia-smi``), ``NUMBA_ENABLE_CUDASIM=1`` is set unless the environment already says
otherwise, and the CUDA-kernel tests run on the simulator. On a GPU machine they run for real.
"""

import os
import shutil

# Tiny matrices dominate the tests; BLAS threads only contend on a shared 2-core machine
# (SciPy's solve_triangular on 3x3 went from ~3 µs to ~20 ms under load).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

if shutil.which("nvidia-smi") is None:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")


# The folders whose tests run the packages' Numba kernels in other processes (Dask workers) or
# through another framework go last: by then the package tests have filled Numba's disk cache,
# so the workers load the kernels instead of compiling them cold (in a fresh clone the quantum
# sweep alone took 353 s when it ran first).
_LAST = ("tests/distributed/", "tests/interop/")


def pytest_collection_modifyitems(config, items):
    def rank(item):
        path = item.nodeid.replace(os.sep, "/")
        return next((i + 1 for i, p in enumerate(_LAST) if path.startswith(p)), 0)

    items.sort(key=rank)  # stable: the order inside each group is kept
