"""GPU checks of the finance kernels (GBM European/Asian, Heston full truncation, vibrato
second-order Greeks, CRR tree Greeks), collected by ``benchmarks/gpu_check.py``.

The Monte Carlo references are independent vectorised NumPy computations on the same
counter-based normals; the tree's is diffsci's AD through the vectorised NumPy tree
(``tree_price`` on traced inputs), batched over the options.
"""

from __future__ import annotations

import numpy as np

import diffsci as ds
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


def _vibrato_inputs(rng, size):
    return (np.uint64(rng.integers(1 << 32)), 100.0, 90.0 + 20 * rng.random(), 1.0, 0.03, 0.01,
            0.25, 1.0 if rng.random() < 0.5 else -1.0, _kernels.EUROPEAN, _N_STEPS, size)


def vibrato_reference(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps,
                      n_samples):
    """NumPy vibrato estimates (DERIVATIONS.md §VB): the likelihood-ratio weights of the Gaussian
    ln S_T step (Hermite polynomials in Z) on the antithetic pair and the h(e^μ) control."""
    z = normals(seed, n_samples, n_steps).sum(axis=1) / np.sqrt(n_steps)
    sq = np.sqrt(expiry)
    s = vol * sq
    mu = np.log(spot) + (rate - dividend - 0.5 * vol**2) * expiry

    def h(x):
        return np.maximum(w * (np.exp(x) - strike), 0.0)

    disc = np.exp(-rate * expiry)
    odd = 0.5 * disc * (h(mu + s * z) - h(mu - s * z))
    even = disc * (0.5 * (h(mu + s * z) + h(mu - s * z)) - h(mu))
    # E[h] as a function of (μ, s): ∂μ weight z/s, ∂s (z² − 1)/s, ∂μμ (z² − 1)/s², ∂μs
    # (z³ − 3z)/s², ∂ss (z⁴ − 5z² + 2)/s²; μ_σ = −σT, s_σ = √T, μ_σσ = −T, μ_S = 1/S
    v_m, v_s = odd * z / s, even * (z**2 - 1) / s
    v_mm, v_ms = even * (z**2 - 1) / s**2, odd * (z**3 - 3 * z) / s**2
    v_ss = even * (z**4 - 5 * z**2 + 2) / s**2
    m_sig = -vol * expiry
    return np.stack([v_m / spot, v_m * m_sig + v_s * sq, (v_mm - v_m) / spot**2,
                     (v_mm * m_sig + v_ms * sq) / spot,
                     v_mm * m_sig**2 + 2 * v_ms * m_sig * sq + v_ss * expiry - v_m * expiry],
                    axis=1)


_TREE_STEPS = 128


def _tree_inputs_for(smooth):
    def make(rng, size):
        return (80.0 + 40.0 * rng.random(size), np.full(size, 100.0),
                0.25 + 1.75 * rng.random(size), 0.06 * rng.random(size),
                0.04 * rng.random(size), 0.1 + 0.4 * rng.random(size),
                np.where(rng.random(size) < 0.5, 1.0, -1.0), True, _TREE_STEPS, 1, smooth)
    return make


def tree_cpu(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth):
    """``_kernels.tree_greeks`` (options in parallel) with its scratch allocated here."""
    from numba import get_num_threads

    chunks = max(1, min(anchor.size, get_num_threads()))
    cols = int(_kernels.tree_work_cols(n))
    return _kernels.tree_greeks(anchor, strike, expiry, rate, dividend, vol, w, american, n,
                                every, smooth,
                                np.empty((chunks, int(_kernels.tree_nodes(n, smooth))), np.uint8),
                                np.empty((chunks, _kernels.TREE_WORK_ROWS, cols)),
                                np.empty((chunks, _kernels.TREE_IWORK_ROWS, cols), np.int64))


def tree_reference(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth):
    """The kernel's 14 columns by diffsci AD through the NumPy tree (``tree_price`` on traced
    inputs), batched: the options are independent, so gradients of sums are per-option."""
    from ._tree import TREE_GREEKS, _backward, tree_price

    def price(s, v, t, r, q, k):
        return tree_price(spot=s, strike=k, expiry=t, rate=r, dividend=q, vol=v, is_call=w > 0,
                          american=american, n_steps=n, exercise_every=every, smooth=smooth)

    x = (anchor, vol, expiry, rate, dividend, strike)
    total = lambda *a: np.sum(price(*a))  # noqa: E731
    g = ds.grad(total, argnums=tuple(range(6)))(*x)
    gs = ds.grad(lambda *a: np.sum(ds.grad(total, argnums=0)(*a)), argnums=(0, 1))(*x)
    gv = ds.grad(lambda *a: np.sum(ds.grad(total, argnums=1)(*a)), argnums=tuple(range(1, 6)))(*x)
    # the price by the NumPy tree on plain inputs (tree_price would run the kernel)
    value = _backward(anchor, strike, expiry, rate, dividend, vol, w, american, n, every,
                      smooth)[1]
    cols = dict(price=value, delta=g[0], gamma=gs[0], vega=g[1], theta=-g[2], rho=g[3],
                dividend_rho=g[4], dual_delta=g[5], vanna=gs[1], volga=gv[0], veta=gv[1],
                vera=gv[2], vol_dividend=gv[3], vol_strike=gv[4])
    return np.stack([np.asarray(cols[k], dtype=np.float64) for k in TREE_GREEKS], axis=1)


CHECKS = [
    GpuCheck(package="finance", name=f"gbm_{name}", make_inputs=_inputs_for(code),
             cpu_fn=_kernels.gbm_samples, cuda_fn=_cuda.gbm_samples, reference_fn=reference,
             size=1 << 14, sim_size=16, rtol=1e-11)
    for name, code in (("european", _kernels.EUROPEAN), ("asian", _kernels.ASIAN))
] + [
    GpuCheck(package="finance", name="heston_full_truncation", make_inputs=_heston_inputs,
             cpu_fn=_kernels.heston_samples, cuda_fn=_cuda.heston_samples,
             reference_fn=heston_reference, size=1 << 14, sim_size=16, rtol=1e-11)
] + [
    GpuCheck(package="finance", name="gbm_vibrato", make_inputs=_vibrato_inputs,
             cpu_fn=_kernels.gbm_vibrato, cuda_fn=_cuda.gbm_vibrato,
             reference_fn=vibrato_reference, size=1 << 16, sim_size=16, rtol=1e-11)
] + [
    GpuCheck(package="finance", name=f"tree_greeks_{label}", make_inputs=_tree_inputs_for(smooth),
             cpu_fn=tree_cpu, cuda_fn=_cuda.tree_greeks, reference_fn=tree_reference,
             size=1 << 9, sim_size=4, rtol=1e-9)
    for label, smooth in (("crr", False), ("bbs", True))
]
