"""Numba kernels on plain arrays: counter-based normals for Brownian trees; model fast paths.

Kernels assume valid input (validation is in ``_ops.py`` and at the API boundary) and never see
traced values. Every forward kernel of a model family has a hand-written adjoint kernel beside it;
the maths is in ``sde/DERIVATIONS.md``.

Counter-based normals: ``normal(key, i)`` is a pure function of a 64-bit key and an index
(SplitMix64 finaliser, then Box–Muller), so a Brownian tree node gets the same normals whatever
the order in which nodes are visited.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO_M53 = 2.0**-53


@njit(cache=True)
def mix64(x):
    """SplitMix64's finaliser: a bijective 64-bit hash."""
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


@njit(cache=True)
def normal_pair(key, i):
    """Two independent standard normals, a pure function of (key, i) (Box–Muller)."""
    a = mix64(key + (np.uint64(2) * np.uint64(i) + np.uint64(1)) * _GOLDEN)
    b = mix64(a ^ _GOLDEN)
    u1 = (float(a >> _S11) + 0.5) * _TWO_M53
    u2 = float(b >> _S11) * _TWO_M53
    r = math.sqrt(-2.0 * math.log(u1))
    return r * math.cos(2.0 * math.pi * u2), r * math.sin(2.0 * math.pi * u2)


@njit(cache=True)
def bridge(wa, wb, frac, std, key, out):
    """``out = wa + frac (wb − wa) + std Z`` with Z the counter-based normals of ``key`` (1-D)."""
    n = out.size
    for i in range(0, n - 1, 2):
        z0, z1 = normal_pair(key, i >> 1)
        out[i] = wa[i] + frac * (wb[i] - wa[i]) + std * z0
        out[i + 1] = wa[i + 1] + frac * (wb[i + 1] - wa[i + 1]) + std * z1
    if n % 2 == 1:
        z0, _ = normal_pair(key, n >> 1)
        out[n - 1] = wa[n - 1] + frac * (wb[n - 1] - wa[n - 1]) + std * z0
    return out


@njit(cache=True)
def node_key(seed, index, salt):
    """The key of tree node ``index`` (an int64) under ``seed`` and a salt."""
    return mix64(mix64(np.uint64(seed) ^ mix64(np.uint64(salt))) + np.uint64(index))


# ------------------------------------------------------------------ Ornstein–Uhlenbeck, Euler
# dy = θ (μ − y) dt + σ dW on a uniform grid; y: (paths, n+1), dW: (paths, n).


@njit(parallel=True, cache=True)
def ou_euler(y0, theta, mu, sigma, dt, dW):
    """Euler–Maruyama paths of OU: ``y[p, k+1] = y[p, k] + θ(μ − y[p, k]) dt + σ dW[p, k]``."""
    paths, n = dW.shape
    y = np.empty((paths, n + 1))
    a = 1.0 - theta * dt
    for p in prange(paths):
        y[p, 0] = y0[p]
        for k in range(n):
            y[p, k + 1] = a * y[p, k] + theta * mu * dt + sigma * dW[p, k]
    return y


@njit(parallel=True, cache=True)
def ou_euler_adjoint(y, theta, mu, sigma, dt, dW, ybar):
    """Adjoint of :func:`ou_euler`: (ȳ0, θ̄, μ̄, σ̄) for the cotangent ``ybar`` (DERIVATIONS §3)."""
    paths, n = dW.shape
    y0bar = np.empty(paths)
    parts = np.zeros((paths, 3))
    a = 1.0 - theta * dt
    for p in prange(paths):
        lam = ybar[p, n]
        th = 0.0
        m = 0.0
        s = 0.0
        for k in range(n - 1, -1, -1):
            th += lam * (mu - y[p, k]) * dt
            m += lam * theta * dt
            s += lam * dW[p, k]
            lam = a * lam + ybar[p, k]
        y0bar[p] = lam
        parts[p, 0] = th
        parts[p, 1] = m
        parts[p, 2] = s
    return y0bar, parts[:, 0].sum(), parts[:, 1].sum(), parts[:, 2].sum()


# ------------------------------------------------------------------ GBM, exact solution
# y_k = y0 exp((μ − σ²/2) t_k + σ W_k) with W_k the cumulative Brownian path: (paths, n+1).


@njit(parallel=True, cache=True)
def gbm_exact(y0, mu, sigma, t, W):
    """``y[p, k] = y0[p] exp((μ − σ²/2) t[k] + σ W[p, k])``."""
    paths, n = W.shape
    y = np.empty((paths, n))
    c = mu - 0.5 * sigma * sigma
    for p in prange(paths):
        for k in range(n):
            y[p, k] = y0[p] * math.exp(c * t[k] + sigma * W[p, k])
    return y


@njit(parallel=True, cache=True)
def gbm_exact_adjoint(y, y0, mu, sigma, t, W, ybar):
    """Adjoint of :func:`gbm_exact`: (ȳ0, μ̄, σ̄) (DERIVATIONS §3)."""
    paths, n = W.shape
    y0bar = np.empty(paths)
    parts = np.zeros((paths, 2))
    for p in prange(paths):
        acc0 = 0.0
        am = 0.0
        asg = 0.0
        for k in range(n):
            w = ybar[p, k] * y[p, k]
            acc0 += w
            am += w * t[k]
            asg += w * (W[p, k] - sigma * t[k])
        y0bar[p] = acc0 / y0[p] if y0[p] != 0.0 else 0.0
        parts[p, 0] = am
        parts[p, 1] = asg
    return y0bar, parts[:, 0].sum(), parts[:, 1].sum()
