"""numba.cuda versions of the Monte Carlo kernels (one thread per path) and of the tree Greeks
kernel (one thread per option), same contract as ``_kernels``: the same counter-based normals and
the same per-path / per-option bodies (:func:`_kernels.path_core`, :func:`_kernels.vibrato_core`,
:func:`_kernels.tree_greeks_one`, ``@njit`` functions, which numba.cuda compiles as device
functions), so results agree with the CPU kernels to round-off.

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
    N_TREE_OUT,
    N_VIBRATO,
    TREE_IWORK_ROWS,
    TREE_WORK_ROWS,
    heston_path,
    heston_path_adjoint,
    path_core,
    tree_greeks_one,
    tree_nodes,
    tree_work_cols,
    vibrato_core,
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


# ---------------------------------------------------------------------------------------------
# Vibrato second-order Greeks (DERIVATIONS.md §VB): the CPU kernel's per-sample body.


def _vibrato_body(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps, out):
    p = cuda.grid(1)
    if p < out.shape[0]:
        r = vibrato_core(seed, p, spot, strike, expiry, rate, dividend, vol, w, product, n_steps)
        for j in range(N_VIBRATO):
            out[p, j] = r[j]


@functools.cache
def _vibrato_kernel():
    return _cuda().jit(_vibrato_body)


def gbm_vibrato(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps, n_samples):
    """Same as ``_kernels.gbm_vibrato``: per-sample (delta, vega, gamma, vanna, volga) estimates
    ``(n_samples, N_VIBRATO)``, one CUDA thread per sample; returns a host array."""
    c = _cuda()
    out = c.device_array((n_samples, N_VIBRATO))
    blocks = (n_samples + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    _vibrato_kernel()[blocks, THREADS_PER_BLOCK](np.uint64(seed), spot, strike, expiry, rate,
                                                 dividend, vol, w, product, n_steps, out)
    return np.asarray(out.copy_to_host())


# ---------------------------------------------------------------------------------------------
# CRR tree Greeks (DERIVATIONS.md §TA): one thread per option running the CPU body, its scratch
# (decision bytes, float64 and int64 rows) one row per option in device memory: about n²/2 bytes
# + 240 n bytes an option (n = 1000: 0.7 MB), so size batches to the device's memory.


def _tree_body(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth, mask,
               work, iwork, out):
    b = cuda.grid(1)
    if b < out.shape[0]:
        tree_greeks_one(anchor[b], strike[b], expiry[b], rate[b], dividend[b], vol[b], w[b],
                        american, n, every, smooth, mask[b], work[b], iwork[b], out[b])


def _tree_body_sim(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth,
                   mask, work, iwork, out):
    # the simulator wraps device arrays; the njit body wants the ndarrays underneath
    b = cuda.grid(1)
    if b < out.shape[0]:
        tree_greeks_one(anchor[b], strike[b], expiry[b], rate[b], dividend[b], vol[b], w[b],
                        american, n, every, smooth, _ndarray(mask[b]), _ndarray(work[b]),
                        _ndarray(iwork[b]), _ndarray(out[b]))


def _ndarray(x):
    return getattr(getattr(x, "_item", x), "_ary", x)


@functools.cache
def _tree_kernel():
    from numba import config

    return _cuda().jit(_tree_body_sim if config.ENABLE_CUDASIM else _tree_body)


def tree_greeks(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth):
    """Same as ``_kernels.tree_greeks`` without the scratch arguments (allocated here on the
    device): ``(m, N_TREE_OUT)`` for the flat float64 arrays of m options; returns a host
    array."""
    c = _cuda()
    m = anchor.shape[0]
    cols = int(tree_work_cols(n))
    mask = c.device_array((m, int(tree_nodes(n, smooth))), np.uint8)
    work = c.device_array((m, TREE_WORK_ROWS, cols))
    iwork = c.device_array((m, TREE_IWORK_ROWS, cols), np.int64)
    out = c.device_array((m, N_TREE_OUT))
    blocks = (m + THREADS_PER_BLOCK - 1) // THREADS_PER_BLOCK
    _tree_kernel()[blocks, THREADS_PER_BLOCK](anchor, strike, expiry, rate, dividend, vol, w,
                                              american, n, every, smooth, mask, work, iwork, out)
    return np.asarray(out.copy_to_host())
