"""numba.cuda versions of the model kernels (one thread per path), same contract as ``_kernels``.

numba.cuda is bound lazily into the module global ``cuda`` (the CUDA simulator swaps that global
when ``NUMBA_ENABLE_CUDASIM=1``), so importing this module never fixes numba.cuda's mode.
"""

from __future__ import annotations

import functools
import math

import numpy as np

THREADS_PER_BLOCK = 128

cuda = None


def _cuda():
    global cuda
    if cuda is None:
        from numba import cuda as numba_cuda

        cuda = numba_cuda
    return cuda


def _ou_body(y0, a, c, sigma, dW, y):
    p = cuda.grid(1)
    if p < y.shape[0]:
        y[p, 0] = y0[p]
        for k in range(dW.shape[1]):
            y[p, k + 1] = a * y[p, k] + c + sigma * dW[p, k]


def _gbm_body(y0, c, sigma, t, W, y):
    p = cuda.grid(1)
    if p < y.shape[0]:
        for k in range(W.shape[1]):
            y[p, k] = y0[p] * math.exp(c * t[k] + sigma * W[p, k])


@functools.cache
def _kernel(name):
    return _cuda().jit({"ou": _ou_body, "gbm": _gbm_body}[name])


def _launch(n):
    return (n + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK, THREADS_PER_BLOCK


def ou_euler(y0, theta, mu, sigma, dt, dW):
    """Same as ``_kernels.ou_euler``, one CUDA thread per path; returns a host array."""
    paths, n = dW.shape
    y = _cuda().device_array((paths, n + 1))
    blocks, threads = _launch(paths)
    _kernel("ou")[blocks, threads](cuda.to_device(y0), 1.0 - theta * dt, theta * mu * dt, sigma,
                                   cuda.to_device(dW), y)
    return y.copy_to_host()


def gbm_exact(y0, mu, sigma, t, W):
    """Same as ``_kernels.gbm_exact``, one CUDA thread per path; returns a host array."""
    paths, n = W.shape
    y = _cuda().device_array((paths, n))
    blocks, threads = _launch(paths)
    _kernel("gbm")[blocks, threads](cuda.to_device(y0), mu - 0.5 * sigma * sigma, sigma,
                                    cuda.to_device(t), cuda.to_device(W), y)
    return np.asarray(y.copy_to_host())
