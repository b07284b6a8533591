"""Shared pytest setup.

numba's CUDA simulator must be switched on before numba.cuda is first imported, so this happens
at import time, before any test module loads: on a machine without an NVIDIA driver
(no ``nvidia-smi``), ``NUMBA_ENABLE_CUDASIM=1`` is set unless the environment already says
otherwise, and the CUDA-kernel tests run on the simulator. On a GPU machine they run for real.
"""

import os
import shutil

if shutil.which("nvidia-smi") is None:
    os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")
