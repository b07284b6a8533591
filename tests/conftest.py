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
