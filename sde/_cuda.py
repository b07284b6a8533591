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
    return _cuda().jit(_BODIES[name])


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


def _cir_body(y0, kappa, theta, sigma, dt, dW, y):
    p = cuda.grid(1)
    if p < y.shape[0]:
        x = y0[p]
        y[p, 0] = x
        for k in range(dW.shape[1]):
            xp = max(x, 0.0)
            x = x + kappa * (theta - xp) * dt + sigma * math.sqrt(xp) * dW[p, k]
            y[p, k + 1] = x


def _heston_body(s0, v0, mu, kappa, theta, xi, rho, dt, dW1, dZ, S, V):
    p = cuda.grid(1)
    if p < S.shape[0]:
        rc = math.sqrt(1.0 - rho * rho)
        x = math.log(s0[p])
        v = v0[p]
        S[p, 0] = s0[p]
        V[p, 0] = v
        for k in range(dW1.shape[1]):
            vp = max(v, 0.0)
            sq = math.sqrt(vp)
            dw2 = rho * dW1[p, k] + rc * dZ[p, k]
            x = x + (mu - 0.5 * vp) * dt + sq * dW1[p, k]
            v = v + kappa * (theta - vp) * dt + xi * sq * dw2
            S[p, k + 1] = math.exp(x)
            V[p, k + 1] = v


def _langevin_body(x0, v0, a, b, gamma, sigma, dt, dW, X, V):
    p = cuda.grid(1)
    if p < X.shape[0]:
        x = x0[p]
        v = v0[p]
        X[p, 0] = x
        V[p, 0] = v
        for k in range(dW.shape[1]):
            force = -(a * x * x + b) * x - gamma * v
            x, v = x + v * dt, v + force * dt + sigma * dW[p, k]
            X[p, k + 1] = x
            V[p, k + 1] = v


_BODIES = {"ou": _ou_body, "gbm": _gbm_body, "cir": _cir_body, "heston": _heston_body,
           "langevin": _langevin_body}


def cir_euler(y0, kappa, theta, sigma, dt, dW):
    """Same as ``_kernels.cir_euler``, one CUDA thread per path; returns a host array."""
    paths, n = dW.shape
    y = _cuda().device_array((paths, n + 1))
    blocks, threads = _launch(paths)
    _kernel("cir")[blocks, threads](cuda.to_device(y0), kappa, theta, sigma, dt,
                                    cuda.to_device(dW), y)
    return np.asarray(y.copy_to_host())


def heston_euler(s0, v0, mu, kappa, theta, xi, rho, dt, dW1, dZ):
    """Same as ``_kernels.heston_euler``, one CUDA thread per path; returns host ``(S, v)``."""
    paths, n = dW1.shape
    S = _cuda().device_array((paths, n + 1))
    V = cuda.device_array((paths, n + 1))
    blocks, threads = _launch(paths)
    _kernel("heston")[blocks, threads](cuda.to_device(s0), cuda.to_device(v0), mu, kappa, theta,
                                       xi, rho, dt, cuda.to_device(dW1), cuda.to_device(dZ), S, V)
    return np.asarray(S.copy_to_host()), np.asarray(V.copy_to_host())


def langevin_euler(x0, v0, a, b, gamma, sigma, dt, dW):
    """Same as ``_kernels.langevin_euler``, one CUDA thread per path; returns host ``(x, v)``."""
    paths, n = dW.shape
    X = _cuda().device_array((paths, n + 1))
    V = cuda.device_array((paths, n + 1))
    blocks, threads = _launch(paths)
    _kernel("langevin")[blocks, threads](cuda.to_device(x0), cuda.to_device(v0), a, b, gamma,
                                         sigma, dt, cuda.to_device(dW), X, V)
    return np.asarray(X.copy_to_host()), np.asarray(V.copy_to_host())
