"""GPU checks for diffsci's own kernels, collected by ``benchmarks/gpu_check.py``.

Each entry of ``CHECKS`` pairs a numba.cuda kernel with its CPU (``@njit``) kernel and a float64
NumPy reference; see :class:`diffsci.devices.GpuCheck` for the contract. For now the only entry is
``axpy`` (``out[i] = a * x[i] + y[i]``), a fused elementwise kernel that exercises the machinery
end to end: launch-grid computation, device arrays, float64 arithmetic. Kernels of the AD core
join this table as they are written.

numba.cuda is imported inside functions only, so importing this module never fixes numba.cuda's
mode (real GPU or simulator).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

from diffsci.devices import GpuCheck

THREADS_PER_BLOCK = 256

# numba.cuda, bound on first use by _cuda(). Kernels must reach it as a *module global* named
# here, not as a local or closure variable: the CUDA simulator runs a kernel by swapping every
# global of the kernel's module that is numba.cuda for its fake module.
cuda = None


def _cuda():
    """Import numba.cuda lazily (fixing its mode, real or simulator, only now) and return it."""
    global cuda
    if cuda is None:
        from numba import cuda as numba_cuda

        cuda = numba_cuda
    return cuda


# ---------------------------------------------------------------- axpy: out = a * x + y


def _axpy_inputs(rng: np.random.Generator, size: int) -> tuple[float, np.ndarray, np.ndarray]:
    return float(rng.standard_normal()), rng.standard_normal(size), rng.standard_normal(size)


@njit(parallel=True, cache=False)
def _axpy_cpu(a: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    for i in prange(x.size):
        out[i] = a * x[i] + y[i]
    return out


def _axpy_kernel_body(a, x, y, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a * x[i] + y[i]


@functools.cache
def _axpy_kernel():
    """The numba.cuda kernel, compiled on first use."""
    return _cuda().jit(_axpy_kernel_body)


def _axpy_cuda(a: float, x, y):
    out = _cuda().device_array_like(x)
    blocks = (x.size + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    _axpy_kernel()[blocks, THREADS_PER_BLOCK](a, x, y, out)
    return out


def _axpy_reference(a: float, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.float64(a) * x.astype(np.float64) + y.astype(np.float64)


CHECKS = [
    GpuCheck(
        package="diffsci",
        name="axpy",
        make_inputs=_axpy_inputs,
        cpu_fn=_axpy_cpu,
        cuda_fn=_axpy_cuda,
        reference_fn=_axpy_reference,
        size=1 << 24,
        sim_size=256,
        rtol=1e-12,
    ),
]
