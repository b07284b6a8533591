"""numba.cuda versions of the Monte Carlo kernels (one thread per path), same contract as
``_kernels``: the same counter-based normals and the same per-path body (:func:`_kernels.path_core`,
an ``@njit`` function, which numba.cuda compiles as a device function), so results agree with the
CPU kernels to round-off.

numba.cuda is bound lazily into the module global ``cuda`` (the CUDA simulator swaps that global
when ``NUMBA_ENABLE_CUDASIM=1``), so importing this module never fixes numba.cuda's mode.
"""

from __future__ import annotations

import functools

import numpy as np

from ._kernels import (
    HESTON_MAX_STEPS,
    N_GRAD,
    N_HESTON_GRAD,
    heston_path,
    heston_path_adjoint,
    path_core,
)

THREADS_PER_BLOCK = 128

cuda = None


def _cuda():
    global cuda
    if cuda is None:
        from numba import cuda as numba_cuda

        cuda = numba_cuda
    return cuda


def _samples_body(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps,
                  antithetic, smoothing, out, grads, with_grads):
    p = cuda.grid(1)
    if p < out.shape[0]:
        r = path_core(seed, p, 1.0, spot, strike, expiry, rate, dividend, vol, w, product, n_steps,
                      smoothing)
        if antithetic:
            s = path_core(seed, p, -1.0, spot, strike, expiry, rate, dividend, vol, w, product,
                          n_steps, smoothing)
            out[p] = 0.5 * (r[0] + s[0])
            if with_grads:
                for j in range(N_GRAD):
                    grads[p, j] = 0.5 * (r[j + 1] + s[j + 1])
        else:
            out[p] = r[0]
            if with_grads:
                for j in range(N_GRAD):
                    grads[p, j] = r[j + 1]


@functools.cache
def _kernel():
    return _cuda().jit(_samples_body)


def _run(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps, n_samples,
         antithetic, smoothing, with_grads):
    c = _cuda()
    out = c.device_array(n_samples)
    grads = c.device_array((n_samples if with_grads else 1, N_GRAD))
    blocks = (n_samples + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    _kernel()[blocks, THREADS_PER_BLOCK](np.uint64(seed), spot, strike, expiry, rate, dividend,
                                         vol, w, product, n_steps, antithetic, smoothing, out,
                                         grads, with_grads)
    return np.asarray(out.copy_to_host()), np.asarray(grads.copy_to_host())


def gbm_samples(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps, n_samples,
                antithetic, smoothing):
    """Same as ``_kernels.gbm_samples``, one CUDA thread per sample; returns a host array."""
    return _run(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps, n_samples,
                antithetic, smoothing, False)[0]


def gbm_samples_adjoint(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps,
                        n_samples, antithetic, smoothing):
    """Same as ``_kernels.gbm_samples_adjoint``: ``(samples, grads)`` as host arrays."""
    return _run(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps, n_samples,
                antithetic, smoothing, True)


# ---------------------------------------------------------------------------------------------
# Heston full-truncation Euler: the same per-path bodies as the CPU kernels. The adjoint's
# scratch (each step's variance and normals) is a per-thread local array of a fixed size (numba.cuda
# needs a compile-time shape; the simulator then hands the njit body a plain ndarray).


def _heston_body(seed, spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho, v0, w,
                 n_steps, antithetic, out):
    p = cuda.grid(1)
    if p < out.shape[0]:
        v = heston_path(seed, p, 1.0, spot, strike, expiry, rate, dividend, kappa, theta, sigma,
                        rho, v0, w, n_steps)
        if antithetic:
            v = 0.5 * (v + heston_path(seed, p, -1.0, spot, strike, expiry, rate, dividend, kappa,
                                       theta, sigma, rho, v0, w, n_steps))
        out[p] = v


def _heston_adjoint_body(seed, spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho, v0,
                         w, n_steps, antithetic, out, grads):
    p = cuda.grid(1)
    if p < out.shape[0]:
        buf = cuda.local.array((3, HESTON_MAX_STEPS), np.float64)
        r = heston_path_adjoint(seed, p, 1.0, spot, strike, expiry, rate, dividend, kappa, theta,
                                sigma, rho, v0, w, n_steps, buf)
        if antithetic:
            s = heston_path_adjoint(seed, p, -1.0, spot, strike, expiry, rate, dividend, kappa,
                                    theta, sigma, rho, v0, w, n_steps, buf)
            out[p] = 0.5 * (r[0] + s[0])
            for j in range(N_HESTON_GRAD):
                grads[p, j] = 0.5 * (r[j + 1] + s[j + 1])
        else:
            out[p] = r[0]
            for j in range(N_HESTON_GRAD):
                grads[p, j] = r[j + 1]


@functools.cache
def _heston_kernels():
    c = _cuda()
    return c.jit(_heston_body), c.jit(_heston_adjoint_body)


def heston_samples(seed, spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho, v0, w,
                   n_steps, n_samples, antithetic):
    """Same as ``_kernels.heston_samples``, one CUDA thread per sample; returns a host array."""
    c = _cuda()
    out = c.device_array(n_samples)
    blocks = (n_samples + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    _heston_kernels()[0][blocks, THREADS_PER_BLOCK](
        np.uint64(seed), spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho, v0, w,
        n_steps, antithetic, out)
    return np.asarray(out.copy_to_host())


def heston_samples_adjoint(seed, spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho,
                           v0, w, n_steps, n_samples, antithetic):
    """Same as ``_kernels.heston_samples_adjoint``: ``(samples, grads)`` as host arrays
    (``n_steps <= HESTON_MAX_STEPS``, checked by the callers)."""
    c = _cuda()
    out = c.device_array(n_samples)
    grads = c.device_array((n_samples, N_HESTON_GRAD))
    blocks = (n_samples + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    _heston_kernels()[1][blocks, THREADS_PER_BLOCK](
        np.uint64(seed), spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho, v0, w,
        n_steps, antithetic, out, grads)
    return np.asarray(out.copy_to_host()), np.asarray(grads.copy_to_host())
