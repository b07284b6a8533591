"""GPU checks of the finance Monte Carlo kernels (GBM European/Asian, Heston full truncation),
collected by ``benchmarks/gpu_check.py``.

The reference is an independent vectorised NumPy simulation on the same counter-based normals.
"""

from __future__ import annotations

import numpy as np

from diffsci.devices import GpuCheck

from . import _cuda, _kernels

_N_STEPS = 16


def _inputs_for(product):
    def make(rng, size):
        return (np.uint64(rng.integers(1 << 32)), 100.0, 95.0 + 10 * rng.random(), 1.0, 0.03,
                0.01, 0.25, 1.0, product, _N_STEPS, size, True, 0.0)
    return make


def normals(seed, n_samples, n_steps):
    """The kernels' normals ``(n_samples, n_steps)`` (a Python loop over the njit generator)."""
    z = np.empty((n_samples, n_steps))
    for p in range(n_samples):
        key = np.uint64(_kernels.path_key(seed, p))
        for k in range(n_steps):
            z[p, k] = _kernels.normal(key, k)
    return z


def reference(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps, n_samples,
              antithetic, smoothing):
    """NumPy GBM samples (European or Asian, antithetic pairs averaged)."""
    z = normals(seed, n_samples, n_steps)
    t = expiry * np.arange(1, n_steps + 1) / n_steps
    out = 0.0
    for sign in ((1.0, -1.0) if antithetic else (1.0,)):
        W = np.cumsum(sign * np.sqrt(expiry / n_steps) * z, axis=1)
        S = spot * np.exp((rate - dividend - 0.5 * vol**2) * t + vol * W)
        x = S.mean(axis=1) if product == _kernels.ASIAN else S[:, -1]
        out = out + np.exp(-rate * expiry) * np.maximum(w * (x - strike), 0.0)
    return out / (2.0 if antithetic else 1.0)


def _heston_inputs(rng, size):
    return (np.uint64(rng.integers(1 << 32)), 100.0, 90.0 + 20 * rng.random(), 1.0, 0.03, 0.01,
            2.0, 0.04, 0.3, -0.7, 0.04, 1.0, _N_STEPS, size, True)


def heston_reference(seed, spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho, v0, w,
                     n_steps, n_samples, antithetic):
    """NumPy full-truncation Euler on the kernels' normals (step k uses normal(key, 2k) and
    normal(key, 2k + 1))."""
    z = np.empty((2, n_steps, n_samples))
    for p in range(n_samples):
        key = np.uint64(_kernels.path_key(seed, p))
        for k in range(n_steps):
            z[0, k, p] = _kernels.normal(key, 2 * k)
            z[1, k, p] = _kernels.normal(key, 2 * k + 1)
    dt = expiry / n_steps
    out = 0.0
    for sign in ((1.0, -1.0) if antithetic else (1.0,)):
        ls, v = np.full(n_samples, np.log(spot)), np.full(n_samples, v0)
        for k in range(n_steps):
            z1, z2 = sign * z[0, k], sign * z[1, k]
            vp = np.maximum(v, 0.0)
            sq = np.sqrt(vp * dt)
            ls = ls + (rate - dividend - 0.5 * vp) * dt + sq * z1
            v = v + kappa * (theta - vp) * dt + sigma * sq * (rho * z1 + np.sqrt(1 - rho**2) * z2)
        out = out + np.exp(-rate * expiry) * np.maximum(w * (np.exp(ls) - strike), 0.0)
    return out / (2.0 if antithetic else 1.0)


CHECKS = [
    GpuCheck(package="finance", name=f"gbm_{name}", make_inputs=_inputs_for(code),
             cpu_fn=_kernels.gbm_samples, cuda_fn=_cuda.gbm_samples, reference_fn=reference,
             size=1 << 14, sim_size=16, rtol=1e-11)
    for name, code in (("european", _kernels.EUROPEAN), ("asian", _kernels.ASIAN))
] + [
    GpuCheck(package="finance", name="heston_full_truncation", make_inputs=_heston_inputs,
             cpu_fn=_kernels.heston_samples, cuda_fn=_cuda.heston_samples,
             reference_fn=heston_reference, size=1 << 14, sim_size=16, rtol=1e-11)
]
