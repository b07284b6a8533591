"""Numba kernels on plain arrays: GBM Monte Carlo paths with their pathwise adjoints.

Kernels assume valid input (validation is in ``_ops.py``) and never see traced values.

Random numbers are counter-based: the normals of path ``p`` are a pure function of
``(seed, p, step)`` (``diffsci.random.normal``: SplitMix64 finaliser, then a ziggurat), so the
CPU kernels, the numba.cuda kernels and any re-run see the same paths, in any thread order,
without storing them.

Per path, :func:`path_core` simulates ``S_k = S₀ exp(a t_k + σ W_k)``, ``a = r − q − σ²/2``,
``t_k = kT/n`` (exact GBM on the monitoring grid) and returns the discounted payoff and its
pathwise adjoint — the gradient with respect to (spot, strike, expiry, rate, dividend, vol) for a
unit cotangent — accumulated in the same sweep: for GBM the reverse sweep of Giles & Glasserman
collapses to three running sums (``finance/DERIVATIONS.md`` §MC). The adjoint therefore costs a few
multiply–adds per step on top of the price.

References:
    M. Giles, P. Glasserman, "Smoking adjoints: fast Monte Carlo Greeks", Risk 19 (2006) 88–92.
    P. Glasserman, *Monte Carlo Methods in Financial Engineering* (2003), §7.2 (pathwise).
    G. L. Steele, D. Lea, C. H. Flood, "Fast splittable pseudorandom number generators",
    OOPSLA 2014 (SplitMix64).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from diffsci.random import GOLDEN as _GOLDEN
from diffsci.random import mix64, normal

#: Product codes shared with ``_ops.Product`` (kernels take plain ints).
EUROPEAN, ASIAN, DIGITAL, GEOMETRIC_ASIAN = 0, 1, 2, 3
#: Internal product: the discounted underlying ``e^{−rT} S_T`` (mean ``S e^{−qT}``), the control
#: variate of the European payoff.
FORWARD = 4
N_GRAD = 6  # spot, strike, expiry, rate, dividend, vol

_INV_SQRT_2PI = 0.3989422804014327
_INV_SQRT2 = 0.7071067811865476


@njit(cache=True)
def path_key(seed, p):
    """The key of path ``p`` under ``seed``."""
    return mix64(mix64(np.uint64(seed) + _GOLDEN) + np.uint64(p))


@njit(cache=True)
def path_core(seed, p, sign, spot, strike, expiry, rate, dividend, vol, w, product, n_steps,
              smoothing):
    """Path ``p`` of ``seed`` (normals times ``sign`` = ±1 for antithetics): payoff, six adjoints.

    Returns:
        ``(P, P̄_spot, P̄_strike, P̄_expiry, P̄_rate, P̄_dividend, P̄_vol)`` for a unit cotangent.
    """
    key = path_key(seed, p)
    dt = expiry / n_steps
    sdt = math.sqrt(dt)
    a = rate - dividend - 0.5 * vol * vol
    disc = math.exp(-rate * expiry)
    W = 0.0
    x = 0.0   # X = Σ c_k S_k   (S_T, or the arithmetic average)
    xt = 0.0  # Σ c_k S_k t_k
    xw = 0.0  # Σ c_k S_k W_k
    for k in range(n_steps):
        z = normal(key, k)
        W += sign * sdt * z
        if product == GEOMETRIC_ASIAN:
            xt += (k + 1) * dt  # Σ t_k and Σ W_k; G = S₀ exp(a mean t + σ mean W) below
            xw += W
        elif product == ASIAN or k == n_steps - 1:
            t = (k + 1) * dt
            s = spot * math.exp(a * t + vol * W)
            x += s
            xt += s * t
            xw += s * W
    if product == ASIAN:
        x /= n_steps
        xt /= n_steps
        xw /= n_steps
    elif product == GEOMETRIC_ASIAN:
        # X = G, X_t = G·mean t_k, X_W = G·mean W_k: (MC3) holds with these sums
        x = spot * math.exp((a * xt + vol * xw) / n_steps)
        xt *= x / n_steps
        xw *= x / n_steps
    if product == DIGITAL:
        if smoothing > 0.0:
            width = smoothing * strike
            u = w * (x - strike) / width
            h = 0.5 * math.erfc(-u * _INV_SQRT2)
            phi = _INV_SQRT_2PI * math.exp(-0.5 * u * u)
            hx = w * phi / width
            # through x − K and through the width δ = smoothing·K: ∂u/∂K = −w(1/δ + (x−K)/(δK))
            hk = -w * phi * (1.0 / width + (x - strike) / (width * strike))
        else:
            h = 1.0 if w * (x - strike) > 0.0 else 0.0
            hx = 0.0
            hk = 0.0
    elif product == FORWARD:
        h = x
        hx = 1.0
        hk = 0.0
    else:
        h = max(w * (x - strike), 0.0)
        hx = w if h > 0.0 else 0.0
        hk = -hx
    pay = disc * h
    dx = disc * hx
    return (pay, dx * x / spot, disc * hk, dx * (a * xt + 0.5 * vol * xw) / expiry - rate * pay,
            dx * xt - expiry * pay, -dx * xt, dx * (xw - vol * xt))


@njit(parallel=True, cache=True)
def gbm_samples(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps, n_samples,
                antithetic, smoothing):
    """Discounted payoff samples (antithetic pairs averaged), shape ``(n_samples,)``."""
    out = np.empty(n_samples)
    for p in prange(n_samples):
        v = path_core(seed, p, 1.0, spot, strike, expiry, rate, dividend, vol, w, product, n_steps,
                      smoothing)[0]
        if antithetic:
            v = 0.5 * (v + path_core(seed, p, -1.0, spot, strike, expiry, rate, dividend, vol, w,
                                     product, n_steps, smoothing)[0])
        out[p] = v
    return out


@njit(parallel=True, cache=True)
def gbm_samples_adjoint(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps,
                        n_samples, antithetic, smoothing):
    """Samples and their pathwise adjoints: ``(samples (n,), grads (n, 6))`` in one sweep."""
    out = np.empty(n_samples)
    grads = np.empty((n_samples, N_GRAD))
    for p in prange(n_samples):
        r = path_core(seed, p, 1.0, spot, strike, expiry, rate, dividend, vol, w, product, n_steps,
                      smoothing)
        if antithetic:
            s = path_core(seed, p, -1.0, spot, strike, expiry, rate, dividend, vol, w, product,
                          n_steps, smoothing)
            out[p] = 0.5 * (r[0] + s[0])
            for j in range(N_GRAD):
                grads[p, j] = 0.5 * (r[j + 1] + s[j + 1])
        else:
            out[p] = r[0]
            for j in range(N_GRAD):
                grads[p, j] = r[j + 1]
    return out, grads



# ---------------------------------------------------------------------------------------------
# Heston, full-truncation Euler (Lord, Koekkoek & van Dijk 2010), European payoff.
# DERIVATIONS.md §HK: the forward step and its reverse sweep.

N_HESTON_GRAD = 10  # spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho, v0
#: The most time steps of the CUDA Heston adjoint (its per-thread scratch is 3 × this doubles).
HESTON_MAX_STEPS = 512


@njit(cache=True)
def heston_step(ls, v, z1, z2, dt, mu, kappa, theta, sigma, rho, rhob):
    """One full-truncation Euler step of (ln S, v) on the normals (z1, z2) (Lord et al. 2010)."""
    vp = max(v, 0.0)
    sq = math.sqrt(vp * dt)
    return (ls + (mu - 0.5 * vp) * dt + sq * z1,
            v + kappa * (theta - vp) * dt + sigma * sq * (rho * z1 + rhob * z2))


@njit(cache=True)
def heston_path(seed, p, sign, spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho,
                v0, w, n_steps):
    """Discounted European payoff of path ``p`` (normals times ``sign``), price only."""
    key = path_key(seed, p)
    dt = expiry / n_steps
    rhob = math.sqrt(1.0 - rho * rho)
    mu = rate - dividend
    ls = math.log(spot)
    v = v0
    for k in range(n_steps):
        z1 = normal(key, 2 * k)
        z2 = normal(key, 2 * k + 1)
        z1 *= sign
        z2 *= sign
        ls, v = heston_step(ls, v, z1, z2, dt, mu, kappa, theta, sigma, rho, rhob)
    return math.exp(-rate * expiry) * max(w * (math.exp(ls) - strike), 0.0)


@njit(cache=True)
def heston_path_adjoint(seed, p, sign, spot, strike, expiry, rate, dividend, kappa, theta, sigma,
                        rho, v0, w, n_steps, buf):
    """Payoff of path ``p`` and its ten adjoints (unit cotangent), by a reverse sweep.

    ``buf`` is caller-owned scratch of shape ``(3, n_steps)``: the forward pass stores each step's
    variance and normals there, the reverse sweep reads them back (no regeneration).

    Returns:
        ``(P, P̄_spot, P̄_strike, P̄_expiry, P̄_rate, P̄_dividend, P̄_κ, P̄_θ, P̄_σ, P̄_ρ, P̄_v₀)``.
    """
    key = path_key(seed, p)
    dt = expiry / n_steps
    rhob = math.sqrt(1.0 - rho * rho)
    mu = rate - dividend
    ls = math.log(spot)
    v = v0
    for k in range(n_steps):
        z1 = normal(key, 2 * k)
        z2 = normal(key, 2 * k + 1)
        z1 *= sign
        z2 *= sign
        buf[0, k] = v
        buf[1, k] = z1
        buf[2, k] = z2
        ls, v = heston_step(ls, v, z1, z2, dt, mu, kappa, theta, sigma, rho, rhob)
    disc = math.exp(-rate * expiry)
    s_t = math.exp(ls)
    h = max(w * (s_t - strike), 0.0)
    pay = disc * h
    hx = w if h > 0.0 else 0.0
    lbar = disc * hx * s_t  # adjoint of every ln S_k (∂ln S_{k+1}/∂ln S_k = 1)
    vbar = 0.0              # adjoint of v_{k+1}; v_n does not enter the payoff
    kbar = 0.0
    tbar = 0.0
    sbar = 0.0
    rbar = 0.0
    dtbar = 0.0
    for k in range(n_steps - 1, -1, -1):
        v = buf[0, k]
        z1 = buf[1, k]
        z2 = buf[2, k]
        vp = max(v, 0.0)
        sq = math.sqrt(vp * dt)
        xi = rho * z1 + rhob * z2
        kbar += vbar * (theta - vp) * dt
        tbar += vbar * kappa * dt
        sbar += vbar * sq * xi
        rbar += vbar * sigma * sq * (z1 - rho / rhob * z2)
        dsq_ddt = 0.5 * sq / dt  # ∂√(v⁺Δt)/∂Δt
        dtbar += (lbar * ((mu - 0.5 * vp) + z1 * dsq_ddt)
                  + vbar * (kappa * (theta - vp) + sigma * xi * dsq_ddt))
        if v > 0.0:
            dsq_dv = 0.5 * dt / sq
            vbar = (vbar * (1.0 - kappa * dt + sigma * xi * dsq_dv)
                    + lbar * (-0.5 * dt + z1 * dsq_dv))
    return (pay, lbar / spot, -disc * hx, dtbar / n_steps - rate * pay,
            lbar * expiry - expiry * pay, -lbar * expiry, kbar, tbar, sbar, rbar, vbar)


@njit(parallel=True, cache=True)
def heston_samples(seed, spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho, v0, w,
                   n_steps, n_samples, antithetic):
    """Discounted Heston payoff samples (antithetic pairs averaged), shape ``(n_samples,)``."""
    out = np.empty(n_samples)
    for p in prange(n_samples):
        v = heston_path(seed, p, 1.0, spot, strike, expiry, rate, dividend, kappa, theta, sigma,
                        rho, v0, w, n_steps)
        if antithetic:
            v = 0.5 * (v + heston_path(seed, p, -1.0, spot, strike, expiry, rate, dividend, kappa,
                                       theta, sigma, rho, v0, w, n_steps))
        out[p] = v
    return out


@njit(parallel=True, cache=True)
def heston_samples_adjoint(seed, spot, strike, expiry, rate, dividend, kappa, theta, sigma, rho,
                           v0, w, n_steps, n_samples, antithetic):
    """Samples and their pathwise adjoints: ``(samples (n,), grads (n, 10))``."""
    out = np.empty(n_samples)
    grads = np.empty((n_samples, N_HESTON_GRAD))
    for p in prange(n_samples):
        buf = np.empty((3, n_steps))
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
    return out, grads


# ---------------------------------------------------------------------------------------------
# Likelihood-ratio (score-function) Greeks for GBM: DERIVATIONS.md §LR.

@njit(cache=True)
def path_lr(seed, p, sign, spot, strike, expiry, rate, dividend, vol, w, product, n_steps):
    """Path ``p``: the sharp discounted payoff and its six likelihood-ratio Greek samples.

    Same paths as :func:`path_core`. The weights are the scores of the path density of the
    log-increments ``aΔ + σ√Δ Z_k`` (Glasserman 2003, §7.3); the strike Greek follows from the
    payoff's homogeneity in (S, K) (degree 0 for the digital, 1 otherwise).
    """
    key = path_key(seed, p)
    dt = expiry / n_steps
    sdt = math.sqrt(dt)
    a = rate - dividend - 0.5 * vol * vol
    W = 0.0
    zfirst = 0.0
    zsum = 0.0
    z2sum = 0.0
    x = 0.0
    lsum = 0.0
    for k in range(n_steps):
        z = normal(key, k)
        z *= sign
        if k == 0:
            zfirst = z
        zsum += z
        z2sum += z * z
        W += sdt * z
        if product == GEOMETRIC_ASIAN:
            lsum += a * (k + 1) * dt + vol * W
        elif product == ASIAN or k == n_steps - 1:
            x += spot * math.exp(a * (k + 1) * dt + vol * W)
    if product == ASIAN:
        x /= n_steps
    elif product == GEOMETRIC_ASIAN:
        x = spot * math.exp(lsum / n_steps)
    if product == DIGITAL:
        h = 1.0 if w * (x - strike) > 0.0 else 0.0
        degree = 0.0
    else:
        h = max(w * (x - strike), 0.0)
        degree = 1.0
    pay = math.exp(-rate * expiry) * h
    s_delta = zfirst / (spot * vol * sdt)
    s_mu = zsum * sdt / vol                      # score of the drift a
    s_vol = (z2sum - n_steps) / vol - zsum * sdt  # includes ∂a/∂σ = −σ
    s_t = (z2sum - n_steps) / (2.0 * expiry) + a * zsum * sdt / (vol * expiry)
    delta = pay * s_delta
    return (pay, delta, (degree * pay - spot * delta) / strike, pay * s_t - rate * pay,
            pay * s_mu - expiry * pay, -pay * s_mu, pay * s_vol)


@njit(parallel=True, cache=True)
def gbm_samples_lr(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps,
                   n_samples, antithetic):
    """Samples and their likelihood-ratio Greek samples: ``(samples (n,), grads (n, 6))``."""
    out = np.empty(n_samples)
    grads = np.empty((n_samples, N_GRAD))
    for p in prange(n_samples):
        r = path_lr(seed, p, 1.0, spot, strike, expiry, rate, dividend, vol, w, product, n_steps)
        if antithetic:
            s = path_lr(seed, p, -1.0, spot, strike, expiry, rate, dividend, vol, w, product,
                        n_steps)
            out[p] = 0.5 * (r[0] + s[0])
            for j in range(N_GRAD):
                grads[p, j] = 0.5 * (r[j + 1] + s[j + 1])
        else:
            out[p] = r[0]
            for j in range(N_GRAD):
                grads[p, j] = r[j + 1]
    return out, grads
