"""Numba kernels on plain arrays: counter-based normals for Brownian trees; model fast paths.

Kernels assume valid input (validation is in ``_ops.py`` and at the API boundary) and never see
traced values. Every forward kernel of a model family has a hand-written adjoint kernel beside it;
the maths is in ``sde/DERIVATIONS.md``.

Counter-based normals: ``normal(key, i)`` is a pure function of a 64-bit key and an index
(SplitMix64 finaliser, then a ziggurat), so a Brownian tree node gets the same normals whatever
the order in which nodes are visited.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from diffsci.random import mix64, normal


@njit(cache=True)
def bridge(wa, wb, frac, std, key, out):
    """``out = wa + frac (wb − wa) + std Z`` with Z the counter-based normals of ``key`` (1-D)."""
    for i in range(out.size):
        out[i] = wa[i] + frac * (wb[i] - wa[i]) + std * normal(key, i)
    return out


@njit(cache=True)
def node_key(seed, index, salt):
    """The key of tree node ``index`` (an int64) under ``seed`` and a salt."""
    return mix64(mix64(np.uint64(seed) ^ mix64(np.uint64(salt))) + np.uint64(index))


@njit(cache=True)
def descend(seed, salt, lo, hi, wlo, whi, j, stop_at_j, leaf, mids, idx):
    """Walk a Brownian tree down from the bracket ``[lo, hi]`` (dyadic indices, values
    ``wlo``, ``whi``) towards dyadic point ``j`` (``stop_at_j``) or the finest leaf ``[j, j+1]``,
    bridging each midpoint: row ``k`` of ``mids`` gets W at dyadic point ``idx[k]``. Returns the
    number of rows written. One call per query instead of one per level (the per-call overhead
    was ≈ 10 % of a sequential sweep)."""
    k = 0
    a = wlo
    b = whi
    while hi - lo > 1:
        mid = (lo + hi) >> 1
        std = 0.5 * math.sqrt((hi - lo) * leaf)
        out = mids[k]
        bridge(a, b, 0.5, std, node_key(seed, mid, salt), out)
        idx[k] = mid
        k += 1
        if stop_at_j and mid == j:
            return k
        if j < mid:
            hi = mid
            b = out
        else:
            lo = mid
            a = out
    return k


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


# ------------------------------------------------------------------ CIR, Euler full truncation
# dx = κ(θ − x) dt + σ √x dW, with x⁺ = max(x, 0) in drift and diffusion (Lord, Koekkoek & van
# Dijk 2010): x_{k+1} = x_k + κ(θ − x_k⁺)Δ + σ √(x_k⁺) ΔW_k; x: (paths, n+1).


@njit(parallel=True, cache=True)
def cir_euler(y0, kappa, theta, sigma, dt, dW):
    """Full-truncation Euler paths of CIR."""
    paths, n = dW.shape
    y = np.empty((paths, n + 1))
    for p in prange(paths):
        x = y0[p]
        y[p, 0] = x
        for k in range(n):
            xp = max(x, 0.0)
            x = x + kappa * (theta - xp) * dt + sigma * math.sqrt(xp) * dW[p, k]
            y[p, k + 1] = x
    return y


@njit(parallel=True, cache=True)
def cir_euler_adjoint(y, kappa, theta, sigma, dt, dW, ybar):
    """Adjoint of :func:`cir_euler`: (ȳ0, κ̄, θ̄, σ̄) (DERIVATIONS §4)."""
    paths, n = dW.shape
    y0bar = np.empty(paths)
    parts = np.zeros((paths, 3))
    for p in prange(paths):
        lam = ybar[p, n]
        kb = 0.0
        tb = 0.0
        sb = 0.0
        for k in range(n - 1, -1, -1):
            x = y[p, k]
            xp = max(x, 0.0)
            sq = math.sqrt(xp)
            kb += lam * (theta - xp) * dt
            tb += lam * kappa * dt
            sb += lam * sq * dW[p, k]
            jac = 1.0
            if x > 0.0:
                jac += -kappa * dt + sigma * dW[p, k] * 0.5 / sq
            lam = lam * jac + ybar[p, k]
        y0bar[p] = lam
        parts[p, 0] = kb
        parts[p, 1] = tb
        parts[p, 2] = sb
    return y0bar, parts[:, 0].sum(), parts[:, 1].sum(), parts[:, 2].sum()


# ------------------------------------------------------------------ Heston, Euler full truncation
# log S: x_{k+1} = x_k + (μ − v_k⁺/2)Δ + √(v_k⁺) ΔW¹_k;
# v_{k+1} = v_k + κ(θ − v_k⁺)Δ + ξ √(v_k⁺) ΔW²_k,  ΔW² = ρ ΔW¹ + √(1 − ρ²) ΔZ.
# S, v: (paths, n+1); dW1, dZ: independent increments (paths, n).


@njit(parallel=True, cache=True)
def heston_euler(s0, v0, mu, kappa, theta, xi, rho, dt, dW1, dZ):
    """Full-truncation (log-)Euler paths of Heston: ``(S, v)``."""
    paths, n = dW1.shape
    S = np.empty((paths, n + 1))
    V = np.empty((paths, n + 1))
    rc = math.sqrt(1.0 - rho * rho)
    for p in prange(paths):
        x = math.log(s0[p])
        v = v0[p]
        S[p, 0] = s0[p]
        V[p, 0] = v
        for k in range(n):
            vp = max(v, 0.0)
            sq = math.sqrt(vp)
            dw2 = rho * dW1[p, k] + rc * dZ[p, k]
            x = x + (mu - 0.5 * vp) * dt + sq * dW1[p, k]
            v = v + kappa * (theta - vp) * dt + xi * sq * dw2
            S[p, k + 1] = math.exp(x)
            V[p, k + 1] = v
    return S, V


@njit(parallel=True, cache=True)
def heston_euler_adjoint(S, V, mu, kappa, theta, xi, rho, dt, dW1, dZ, Sbar, Vbar):
    """Adjoint of :func:`heston_euler`: (s̄0, v̄0, μ̄, κ̄, θ̄, ξ̄, ρ̄) (DERIVATIONS §4)."""
    paths, n = dW1.shape
    s0bar = np.empty(paths)
    v0bar = np.empty(paths)
    parts = np.zeros((paths, 5))
    rc = math.sqrt(1.0 - rho * rho)
    for p in prange(paths):
        lx = Sbar[p, n] * S[p, n]
        lv = Vbar[p, n]
        mb = 0.0
        kb = 0.0
        tb = 0.0
        xb = 0.0
        rb = 0.0
        for k in range(n - 1, -1, -1):
            v = V[p, k]
            vp = max(v, 0.0)
            sq = math.sqrt(vp)
            dw1 = dW1[p, k]
            dw2 = rho * dw1 + rc * dZ[p, k]
            mb += lx * dt
            kb += lv * (theta - vp) * dt
            tb += lv * kappa * dt
            xb += lv * sq * dw2
            rb += lv * xi * sq * (dw1 - rho / rc * dZ[p, k])
            nlv = lv
            if v > 0.0:
                dsq = 0.5 / sq
                nlv = lv * (1.0 - kappa * dt + xi * dw2 * dsq) + lx * (-0.5 * dt + dw1 * dsq)
            lv = nlv + Vbar[p, k]
            lx = lx + Sbar[p, k] * S[p, k]
        s0bar[p] = lx / S[p, 0]
        v0bar[p] = lv
        parts[p, 0] = mb
        parts[p, 1] = kb
        parts[p, 2] = tb
        parts[p, 3] = xb
        parts[p, 4] = rb
    return (s0bar, v0bar, parts[:, 0].sum(), parts[:, 1].sum(), parts[:, 2].sum(),
            parts[:, 3].sum(), parts[:, 4].sum())


# ------------------------------------------------------------------ Underdamped Langevin, Euler
# dx = v dt, dv = (−U′(x) − γ v) dt + σ dW with the quartic family U(x) = a x⁴/4 + b x²/2
# (a = 0: harmonic, stiffness b; a > 0, b < 0: double well with minima at ±√(−b/a)):
# x_{k+1} = x_k + v_k Δ,  v_{k+1} = v_k − (a x_k³ + b x_k + γ v_k) Δ + σ ΔW_k; x, v: (paths, n+1).


@njit(parallel=True, cache=True)
def langevin_euler(x0, v0, a, b, gamma, sigma, dt, dW):
    """Euler–Maruyama paths of underdamped Langevin in the quartic potential: ``(x, v)``."""
    paths, n = dW.shape
    X = np.empty((paths, n + 1))
    V = np.empty((paths, n + 1))
    for p in prange(paths):
        x = x0[p]
        v = v0[p]
        X[p, 0] = x
        V[p, 0] = v
        for k in range(n):
            force = -(a * x * x + b) * x - gamma * v
            x, v = x + v * dt, v + force * dt + sigma * dW[p, k]
            X[p, k + 1] = x
            V[p, k + 1] = v
    return X, V


@njit(parallel=True, cache=True)
def langevin_euler_adjoint(X, V, a, b, gamma, sigma, dt, dW, Xbar, Vbar):
    """Adjoint of :func:`langevin_euler`: (x̄0, v̄0, ā, b̄, γ̄, σ̄) (DERIVATIONS §5)."""
    paths, n = dW.shape
    x0bar = np.empty(paths)
    v0bar = np.empty(paths)
    parts = np.zeros((paths, 4))
    for p in prange(paths):
        lx = Xbar[p, n]
        lv = Vbar[p, n]
        ab = 0.0
        bb = 0.0
        gb = 0.0
        sb = 0.0
        for k in range(n - 1, -1, -1):
            x = X[p, k]
            ab -= lv * x * x * x * dt
            bb -= lv * x * dt
            gb -= lv * V[p, k] * dt
            sb += lv * dW[p, k]
            nlx = lx - lv * (3.0 * a * x * x + b) * dt + Xbar[p, k]
            lv = lx * dt + lv * (1.0 - gamma * dt) + Vbar[p, k]
            lx = nlx
        x0bar[p] = lx
        v0bar[p] = lv
        parts[p, 0] = ab
        parts[p, 1] = bb
        parts[p, 2] = gb
        parts[p, 3] = sb
    return (x0bar, v0bar, parts[:, 0].sum(), parts[:, 1].sum(), parts[:, 2].sum(),
            parts[:, 3].sum())
