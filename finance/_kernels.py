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


# ---------------------------------------------------------------------------------------------
# American/Bermudan CRR tree: the price alone, and price + Greeks by a hand-written reverse sweep
# of the backward induction and its σ-tangent (DERIVATIONS.md §TA). Lattice of ``_tree.py``: the
# tree is started two steps early (Pelsser & Vorst 1994), so layer i holds i + 3 nodes
# S_ref u^m, m = 2j − i − 2, and node (i, j) sits at grid index k = m + n + 2 = 2j − i + n.

#: The differentiated inputs of the tree Greeks kernel, in order: σ, T, r, q, K.
N_TREE_THETA = 5
#: Columns of :func:`tree_greeks`: V₋, V₀, V₊ (layer 0), their σ-derivatives, ∂V₀/∂θ (5),
#: ∂²V₀/∂σ∂θ (5), and the log-step s = σ√Δt.
N_TREE_OUT = 17


@njit(cache=True)
def _tree_coefficients(expiry, rate, dividend, vol, n):
    """The per-step scalars of the lattice and their θ-derivatives, θ = (σ, T, r, q, K).

    Returns ``(s, pu, pd, ud, s_sig, f, disc, s_th, pu_th, pd_th, ud_th, sd_th, f_th, disc_th)``:
    s = σ√Δt, pu = e^{−rΔt} p, pd = e^{−rΔt}(1 − p), ud = ∂pu/∂σ (= −∂pd/∂σ), s_sig = ∂s/∂σ,
    f = e^{−qΔt}, disc = e^{−rΔt}; the ``*_th`` arrays hold ∂/∂θ of s, pu, pd, ud, s_sig, f and
    disc (eqs. TA4–TA6).
    """
    dt = expiry / n
    s_sig = math.sqrt(dt)
    s = vol * s_sig
    up = math.exp(s)
    down = math.exp(-s)
    g = math.exp((rate - dividend) * dt)
    disc = math.exp(-rate * dt)
    f = math.exp(-dividend * dt)
    p = (g - down) / (up - down)
    sh = 0.5 * (up - down)
    ch = 0.5 * (up + down)
    p_s = (1.0 - g * ch) / (2.0 * sh * sh)
    p_g = 1.0 / (2.0 * sh)
    p_sg = -ch / (2.0 * sh * sh)
    p_ss = (-g * sh * sh - 2.0 * (1.0 - g * ch) * ch) / (2.0 * sh * sh * sh)
    s_th = np.zeros(N_TREE_THETA)
    g_th = np.zeros(N_TREE_THETA)
    disc_th = np.zeros(N_TREE_THETA)
    f_th = np.zeros(N_TREE_THETA)
    sd_th = np.zeros(N_TREE_THETA)
    s_th[0] = s_sig
    s_th[1] = s / (2.0 * expiry)
    sd_th[1] = s_sig / (2.0 * expiry)
    g_th[1] = (rate - dividend) / n * g
    g_th[2] = dt * g
    g_th[3] = -dt * g
    disc_th[1] = -rate / n * disc
    disc_th[2] = -dt * disc
    f_th[1] = -dividend / n * f
    f_th[3] = -dt * f
    pu = disc * p
    pd = disc - pu
    ud = disc * p_s * s_sig
    pu_th = np.empty(N_TREE_THETA)
    pd_th = np.empty(N_TREE_THETA)
    ud_th = np.empty(N_TREE_THETA)
    for t in range(N_TREE_THETA):
        p_t = p_s * s_th[t] + p_g * g_th[t]
        pu_th[t] = disc_th[t] * p + disc * p_t
        pd_th[t] = disc_th[t] - pu_th[t]
        ud_th[t] = (disc_th[t] * p_s * s_sig + disc * (p_ss * s_th[t] + p_sg * g_th[t]) * s_sig
                    + disc * p_s * sd_th[t])
    return s, pu, pd, ud, s_sig, f, disc, s_th, pu_th, pd_th, ud_th, sd_th, f_th, disc_th


@njit(cache=True)
def _ndtr(x):
    return 0.5 * math.erfc(-x * _INV_SQRT2)


@njit(cache=True)
def _bbs_node(fwd, gk, s, m, w):
    """One-step Black–Scholes value at a node and its partials (eq. TA7).

    ``fwd = S_ref e^{ms} e^{−qΔt}``, ``gk = K e^{−rΔt}``; returns ``(B, B_s, B_F/F·f-free parts)``
    as ``(B, B_s, dF, dG, B_ss, c_sF, c_sG)`` with B_s the total s-derivative (the node moves with
    s), ``dF = w Φ(w d₁)``, ``dG = −w Φ(w d₂)``, B_ss, and the mixed terms
    ``∂B_s/∂ln F = c_sF``, ``∂B_s/∂ln G = c_sG``.
    """
    d1 = math.log(fwd / gk) / s + 0.5 * s
    d2 = d1 - s
    nd1 = _ndtr(w * d1)
    phi = _INV_SQRT_2PI * math.exp(-0.5 * d1 * d1)
    b = w * (fwd * nd1 - gk * _ndtr(w * d2))
    d1_s = m / s - (d1 - 0.5 * s) / s + 0.5  # total ds of d₁ (ln F moves by m per unit s)
    b_s = w * nd1 * fwd * m + fwd * phi
    b_ss = fwd * (m * m * w * nd1 + phi * (m * d1_s + m - d1 * d1_s))
    c_sf = fwd * (phi * m / s + w * nd1 * m + phi - phi * d1 / s)
    c_sg = fwd * phi * (d1 - m) / s
    return b, b_s, w * nd1, -w * _ndtr(w * d2), b_ss, c_sf, c_sg


@njit(cache=True)
def _exercise_grid(anchor, strike, s, w, n):
    """Exercise values on the grid k = 0..2n+4 (m = k − n − 2) and their s-derivatives.

    Returns ``(E, I, G, H)``: ``E = max(w(S_k − K), 0)``, ``I = 1{w(S_k − K) > 0}`` (½ on a
    node exactly at the strike, the mean of the kink's slopes, as AD of ``np.maximum``),
    ``G = ∂E/∂s = w S_k m I``, ``H = ∂²E/∂s² = w S_k m² I``.
    """
    size = 2 * n + 5
    e = np.empty(size)
    ind = np.empty(size)
    gg = np.empty(size)
    hh = np.empty(size)
    for k in range(size):
        m = k - n - 2
        sk = anchor * math.exp(s * m)
        h = w * (sk - strike)
        if h >= 0.0:  # at a node exactly on the strike the kink's two slopes are averaged
            e[k] = h
            ind[k] = 1.0 if h > 0.0 else 0.5
            gg[k] = w * sk * m * ind[k]
            hh[k] = w * sk * m * m * ind[k]
        else:
            e[k] = 0.0
            ind[k] = 0.0
            gg[k] = 0.0
            hh[k] = 0.0
    return e, ind, gg, hh


@njit(cache=True)
def _tree_layer(nxt, cur, e, pu, pd, allow):
    """One induction layer (TR1): ``cur[j] = max(pu nxt[j+1] + pd nxt[j], e[j])``."""
    if allow:
        for j in range(cur.size):
            c = pu * nxt[j + 1] + pd * nxt[j]
            cur[j] = e[j] if e[j] > c else c
    else:
        for j in range(cur.size):
            cur[j] = pu * nxt[j + 1] + pd * nxt[j]


@njit(cache=True)
def _exercise_values(anchor, strike, s, w, n):
    """``max(w(S_k − K), 0)`` on the grid k = 0..2n+4, ``S_k = S_ref e^{s(k − n − 2)}``."""
    e = np.empty(2 * n + 5)
    for k in range(2 * n + 5):
        e[k] = max(w * (anchor * math.exp(s * (k - n - 2)) - strike), 0.0)
    return e


@njit(cache=True)
def tree_price_one(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth):
    """Price alone: the three layer-0 values ``(V₋, V₀, V₊)`` of the induction (TR1).

    Two layer buffers; layer i reads the exercise values of its nodes as the stride-2 slice of
    the grid starting at k = n − i.
    """
    dt = expiry / n
    s = vol * math.sqrt(dt)
    up = math.exp(s)
    down = math.exp(-s)
    p = (math.exp((rate - dividend) * dt) - down) / (up - down)
    disc = math.exp(-rate * dt)
    pu = disc * p
    pd = disc * (1.0 - p)
    last = n - 1 if smooth else n
    buf = np.empty((2, last + 3))
    f = math.exp(-dividend * dt)
    gk = strike * disc
    grid = _exercise_values(anchor, strike, s, w, n)
    nxt = buf[last % 2, :last + 3]
    for j in range(last + 3):
        ex = grid[n - last + 2 * j]
        if smooth:
            v = _bbs_node(anchor * math.exp(s * (2 * j - last - 2)) * f, gk, s, 2 * j - last - 2,
                          w)[0]
            nxt[j] = ex if american and last % every == 0 and ex > v else v
        else:
            nxt[j] = ex
    for i in range(last - 1, -1, -1):
        cur = buf[i % 2, :i + 3]
        _tree_layer(nxt, cur, grid[n - i:n + i + 5:2], pu, pd, american and i % every == 0)
        nxt = cur
    return nxt[0], nxt[1], nxt[2]


@njit(cache=True)
def _tree_layer_tangent(nxt, cur, e, ge, pu, pd, ud, allow):
    """One layer of (TR1) and its σ-tangent (TA2) on (value, tangent) rows."""
    nv = nxt[0]
    nt = nxt[1]
    cv = cur[0]
    ct = cur[1]
    if allow:
        for j in range(cv.size):
            a = nv[j + 1]
            b = nv[j]
            c = pu * a + pd * b
            cd = ud * (a - b) + pu * nt[j + 1] + pd * nt[j]
            x = e[j] > c
            cv[j] = e[j] if x else c
            ct[j] = ge[j] if x else cd
    else:
        for j in range(cv.size):
            a = nv[j + 1]
            b = nv[j]
            cv[j] = pu * a + pd * b
            ct[j] = ud * (a - b) + pu * nt[j + 1] + pd * nt[j]


_REASSOC = {"reassoc", "contract"}  # lets the layer sums vectorise (order of additions only)


@njit(cache=True, fastmath=_REASSOC)
def _tree_adjoint_layer(lam, big, vt, e, ind, gg, hh, pu, pd, s_sig, allow, mu, acc):
    """One layer of the reverse sweep (TA3): split λ, Λ into continuation and exercise parts.

    ``vt`` holds the (value, tangent) rows of the layer below from node ``lo`` on; writes the
    continuation adjoints into ``mu[0, 1:]`` (λ) and ``mu[1, 1:]`` (Λ), ``mu[:, 0]`` and
    ``mu[:, -1]`` zero, and adds the layer's terms to the eight sums ``acc``. The exercise
    decision is recomputed from the stored values with the forward pass's arithmetic.
    """
    m0 = mu[0]
    m1 = mu[1]
    va = vt[0]
    ta = vt[1]
    size = lam.size
    s1 = s2 = s3 = s4 = r1 = r2 = r3 = r4 = 0.0
    if allow:
        for j in range(size):
            a = va[j + 1]
            b = va[j]
            x = e[j] > pu * a + pd * b
            lj = lam[j]
            bj = big[j]
            mj = 0.0 if x else lj
            mb = 0.0 if x else bj
            nj = lj - mj
            nb = bj - mb
            s1 += mj * a
            s2 += mj * b
            r1 += mb * a + mj * ta[j + 1]
            r2 += mb * b + mj * ta[j]
            s3 += nj * gg[j]
            s4 += nj * ind[j]
            r3 += nb * gg[j] + nj * hh[j] * s_sig
            r4 += nb * ind[j]
            m0[j + 1] = mj
            m1[j + 1] = mb
    else:
        for j in range(size):
            a = va[j + 1]
            b = va[j]
            lj = lam[j]
            bj = big[j]
            s1 += lj * a
            s2 += lj * b
            r1 += bj * a + lj * ta[j + 1]
            r2 += bj * b + lj * ta[j]
            m0[j + 1] = lj
            m1[j + 1] = bj
    m0[0] = 0.0
    m1[0] = 0.0
    m0[size + 1] = 0.0
    m1[size + 1] = 0.0
    acc[0] += s1
    acc[1] += s2
    acc[2] += s3
    acc[3] += s4
    acc[4] += r1
    acc[5] += r2
    acc[6] += r3
    acc[7] += r4


#: Adjoints below this (relative to the unit seed at layer 0) are set to zero: a node reached with
#: weight < 1e-200 changes no result in double precision, and the sweep then skips it and never
#: computes with subnormal numbers (which are ~100× slower).
ADJOINT_FLOOR = 1e-200


@njit(cache=True)
def _tree_adjoint_spread(mu, lam_next, big_next, pu, pd, ud):
    """λ, Λ of the next layer from the continuation adjoints (the transpose of TR1, TA2):
    node k receives pu from node k − 1 and pd from node k; values below ADJOINT_FLOOR → 0."""
    m0 = mu[0]
    m1 = mu[1]
    for k in range(lam_next.size):
        x = pu * m0[k] + pd * m0[k + 1]
        y = pu * m1[k] + ud * m0[k] + pd * m1[k + 1] - ud * m0[k + 1]
        small = (abs(x) < ADJOINT_FLOOR) & (abs(y) < ADJOINT_FLOOR)
        lam_next[k] = 0.0 if small else x
        big_next[k] = 0.0 if small else y


@njit(cache=True)
def _tree_terminal(row, anchor, s, s_sig, f, gk, w, n, last, smooth, exercise, e_grid, gs_grid):
    """The last layer's (value, σ-tangent): the payoff, or the one-step Black–Scholes value
    (then max the exercise value when exercise is allowed there)."""
    for j in range(last + 3):
        k = 2 * j - last + n
        if smooth:
            m = k - n - 2
            r = _bbs_node(anchor * math.exp(s * m) * f, gk, s, m, w)
            if exercise and e_grid[k] > r[0]:
                row[0, j] = e_grid[k]
                row[1, j] = gs_grid[k]
            else:
                row[0, j] = r[0]
                row[1, j] = r[1] * s_sig
        else:
            row[0, j] = e_grid[k]
            row[1, j] = gs_grid[k]


@njit(cache=True)
def tree_greeks_one(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth,
                    vt, out):
    """Layer-0 values, their σ-tangents and the gradients of V₀ and ∂V₀/∂σ (eqs. TA1–TA8).

    The forward pass runs the induction and its σ-tangent (TA2), storing every layer's
    (value, tangent) pairs in the caller-owned scratch ``vt`` (at least :func:`tree_nodes` rows
    of 2 float64: ≈ 8 n² bytes, reused across calls so no fresh pages are touched); the reverse
    pass propagates the adjoints λ (of V₀; also that of the tangent) and Λ (of ∂V₀/∂σ through the
    values) from layer 0 to the last layer over the nodes they reach, recomputing each node's
    exercise decision from the stored layer below (the same arithmetic, so the same decision),
    and accumulates the sums of (TA3). Writes the :data:`N_TREE_OUT` columns into ``out``.
    """
    (s, pu, pd, ud, s_sig, f, disc, s_th, pu_th, pd_th, ud_th, sd_th, f_th,
     disc_th) = _tree_coefficients(expiry, rate, dividend, vol, n)
    e_grid, i_grid, g_grid, h_grid = _exercise_grid(anchor, strike, s, w, n)
    gs_grid = g_grid * s_sig
    last = n - 1 if smooth else n
    gk = strike * disc
    terminal_exercise = not smooth or (american and last % every == 0)
    block = tree_block(last)
    nck = (last - 1) // block + 1  # checkpoints at layers 0, B, 2B, … < last
    width = last + 3
    seg0 = _ckpt_offset(nck, block)
    pp0 = seg0 + block * width
    # forward: values and σ-tangents in two rows, layers kB saved as checkpoints
    nxt = vt[:, pp0:pp0 + width]
    _tree_terminal(nxt, anchor, s, s_sig, f, gk, w, n, last, smooth, terminal_exercise, e_grid,
                   gs_grid)
    for i in range(last - 1, -1, -1):
        row = pp0 + (last - i) % 2 * width
        cur = vt[:, row:row + i + 3]
        _tree_layer_tangent(nxt, cur, e_grid[n - i:n + i + 5:2], gs_grid[n - i:n + i + 5:2], pu,
                            pd, ud, american and i % every == 0)
        if i % block == 0:
            o = _ckpt_offset(i // block, block)
            vt[:, o:o + i + 3] = cur
        nxt = cur
    # reverse sweep, layer 0 → last; λ = ∂V₀/∂V (= ∂V̇₀/∂V̇), Λ = ∂V̇₀/∂V. Block by block, the
    # layers i0 + 1 … i0 + B are recomputed from the next checkpoint into a cache-sized buffer.
    lam = np.zeros((2, last + 4))
    big = np.zeros((2, last + 4))
    mu = np.zeros((2, last + 5))  # λ, Λ kept at the continuation nodes (one slot of padding)
    lam[0, 1] = 1.0
    acc = np.zeros(8)  # s1, s2, s3, s4, r1, r2, r3, r4 of (TA3)
    lo, hi = 1, 1  # the nodes of the current layer with nonzero adjoints lie in [lo, hi]
    done = False
    for kb in range(nck):
        i0 = kb * block
        top = min(i0 + block, last)
        r = seg0 + (top - i0 - 1) * width
        if top == last:
            _tree_terminal(vt[:, r:r + width], anchor, s, s_sig, f, gk, w, n, last, smooth,
                           terminal_exercise, e_grid, gs_grid)
        else:
            o = _ckpt_offset(top // block, block)
            b = min(top + 2, hi + top - i0)
            vt[:, r + lo:r + b + 1] = vt[:, o + lo:o + b + 1]
        # only the nodes the adjoints can reach: layer L ≤ top needs [lo, hi + L − i0] (the range
        # moves up at most one node per layer and never down)
        for i in range(top - 1, i0, -1):
            r = seg0 + (i - i0 - 1) * width
            b = min(i + 2, hi + i - i0)
            _tree_layer_tangent(vt[:, r + width + lo:r + width + b + 2], vt[:, r + lo:r + b + 1],
                                e_grid[n - i + 2 * lo:n - i + 2 * b + 1:2],
                                gs_grid[n - i + 2 * lo:n - i + 2 * b + 1:2], pu, pd, ud,
                                american and i % every == 0)
        for i in range(i0, top):
            o1 = seg0 + (i - i0) * width  # layer i + 1
            base = n - i
            _tree_adjoint_layer(lam[i % 2, lo:hi + 1], big[i % 2, lo:hi + 1],
                                vt[:, o1 + lo:o1 + hi + 2],
                                e_grid[base + 2 * lo:base + 2 * hi + 1:2],
                                i_grid[base + 2 * lo:base + 2 * hi + 1:2],
                                g_grid[base + 2 * lo:base + 2 * hi + 1:2],
                                h_grid[base + 2 * lo:base + 2 * hi + 1:2], pu, pd, s_sig,
                                american and i % every == 0, mu[:, lo:hi + 3], acc)
            ln_ = lam[(i + 1) % 2]
            bn = big[(i + 1) % 2]
            _tree_adjoint_spread(mu[:, lo:hi + 3], ln_[lo:hi + 2], bn[lo:hi + 2], pu, pd, ud)
            nlo, nhi = lo, hi + 1
            while nlo <= nhi and ln_[nlo] == 0.0 and bn[nlo] == 0.0:
                nlo += 1
            while nhi >= nlo and ln_[nhi] == 0.0 and bn[nhi] == 0.0:
                nhi -= 1
            if nlo > nhi:  # every reachable node exercised: nothing reaches the later layers
                lo, hi = 1, 0
                done = True
                break
            lo, hi = nlo, nhi
        if done:
            break
    s1, s2, s3, s4, r1, r2, r3, r4 = acc
    lc = lam[last % 2]
    bc = big[last % 2]
    g1 = np.zeros(N_TREE_THETA)
    g2 = np.zeros(N_TREE_THETA)
    for j in range(lo, hi + 1):
        lj = lc[j]
        bj = bc[j]
        k = 2 * j - last + n
        m = k - n - 2
        fwd = anchor * math.exp(s * m) * f
        r = _bbs_node(fwd, gk, s, m, w) if smooth else (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        if not smooth or (terminal_exercise and e_grid[k] > r[0]):
            s3 += lj * g_grid[k]
            s4 += lj * i_grid[k]
            r3 += bj * g_grid[k] + lj * h_grid[k] * s_sig
            r4 += bj * i_grid[k]
        else:  # the Black–Scholes layer (TA7), through s, ln F = ln(S_ref e^{ms} f), ln(K disc)
            b, b_s, d_f, d_g, b_ss, c_sf, c_sg = r
            for t in range(N_TREE_THETA):
                lnf_t = f_th[t] / f
                lng_t = disc_th[t] / disc + (1.0 / strike if t == 4 else 0.0)
                j1 = b_s * s_th[t] + d_f * fwd * lnf_t + d_g * gk * lng_t
                j2 = (b_ss * s_th[t] + c_sf * lnf_t + c_sg * lng_t) * s_sig + b_s * sd_th[t]
                g1[t] += lj * j1
                g2[t] += bj * j1 + lj * j2
    for t in range(N_TREE_THETA):
        k_t = 1.0 if t == 4 else 0.0
        out[6 + t] = s1 * pu_th[t] + s2 * pd_th[t] + s3 * s_th[t] - w * s4 * k_t + g1[t]
        out[11 + t] = (r1 * pu_th[t] + r2 * pd_th[t] + (s1 - s2) * ud_th[t] + r3 * s_th[t]
                       + s3 * sd_th[t] - w * r4 * k_t + g2[t])
    for j in range(3):  # layer 0: checkpoint 0
        out[j] = vt[0, j]
        out[3 + j] = vt[1, j]
    out[16] = s


@njit(cache=True)
def tree_block(last):
    """Layers per block of the reverse sweep: a block of (value, tangent) rows is ≈ 256 KiB."""
    return max(2, min(last, 16384 // (last + 3)))


@njit(cache=True)
def _ckpt_offset(k, block):
    """First row of checkpoint k (layer kB, kB + 3 nodes) in the scratch."""
    return block * k * (k - 1) // 2 + 3 * k


@njit(cache=True)
def tree_nodes(n, smooth):
    """Rows of (value, tangent) scratch that :func:`tree_greeks_one` needs: the checkpoint
    layers 0, B, 2B, …, one block of B layers and two layers (≈ n²/(2B) + (B + 2) n rows)."""
    last = n - 1 if smooth else n
    block = tree_block(last)
    return _ckpt_offset((last - 1) // block + 1, block) + (block + 2) * (last + 3)


@njit(cache=True)
def tree_prices_serial(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth):
    """:func:`tree_price_one` over a flat batch, one thread: ``(m, 3)`` layer-0 values."""
    out = np.empty((anchor.size, 3))
    for b in range(anchor.size):
        r = tree_price_one(anchor[b], strike[b], expiry[b], rate[b], dividend[b], vol[b], w[b],
                           american, n, every, smooth)
        out[b, 0] = r[0]
        out[b, 1] = r[1]
        out[b, 2] = r[2]
    return out


@njit(parallel=True, cache=True)
def tree_prices(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth):
    """:func:`tree_price_one` over a flat batch, options in parallel: ``(m, 3)``."""
    out = np.empty((anchor.size, 3))
    for b in prange(anchor.size):
        r = tree_price_one(anchor[b], strike[b], expiry[b], rate[b], dividend[b], vol[b], w[b],
                           american, n, every, smooth)
        out[b, 0] = r[0]
        out[b, 1] = r[1]
        out[b, 2] = r[2]
    return out


@njit(cache=True)
def tree_greeks_serial(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth,
                       vt):
    """:func:`tree_greeks_one` over a flat batch, one thread, scratch ``vt[0]``."""
    out = np.empty((anchor.size, N_TREE_OUT))
    for b in range(anchor.size):
        tree_greeks_one(anchor[b], strike[b], expiry[b], rate[b], dividend[b], vol[b], w[b],
                        american, n, every, smooth, vt[0], out[b])
    return out


@njit(parallel=True, cache=True)
def tree_greeks(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth, vt):
    """:func:`tree_greeks_one` over a flat batch, ``vt.shape[0]`` chunks in parallel.

    Chunk c prices options c, c + C, c + 2C, … with scratch row c: ``(m, N_TREE_OUT)``.
    """
    out = np.empty((anchor.size, N_TREE_OUT))
    chunks = vt.shape[0]
    for c in prange(chunks):
        for b in range(c, anchor.size, chunks):
            tree_greeks_one(anchor[b], strike[b], expiry[b], rate[b], dividend[b], vol[b], w[b],
                            american, n, every, smooth, vt[c], out[b])
    return out


# ---------------------------------------------------------------------------------------------
# Second-order Greeks by vibrato Monte Carlo (Giles 2009): DERIVATIONS.md §VB. X = ln S_T is
# N(μ, s²) given the inputs, μ = ln S + (r − q − σ²/2)T, s = σ√T; the likelihood-ratio weights of
# that one Gaussian step (Hermite polynomials in Z) differentiate E[h(e^X)] to second order, with
# the antithetic pair e^{μ ± sZ} and the control h(e^μ) cutting the variance.

#: Columns of :func:`gbm_vibrato`: delta, vega, gamma, vanna, volga (per-sample estimates).
N_VIBRATO = 5


@njit(cache=True)
def _payoff(x, strike, w, product):
    if product == DIGITAL:
        return 1.0 if w * (x - strike) > 0.0 else 0.0
    return max(w * (x - strike), 0.0)


@njit(cache=True)
def vibrato_core(seed, p, spot, strike, expiry, rate, dividend, vol, w, product, n_steps):
    """Sample ``p``: (delta, vega, gamma, vanna, volga) of the discounted payoff (eqs. VB1–VB4).

    Z is the path's standardised Brownian endpoint (the normals of :func:`path_core`, so the same
    seed gives the same terminal values).
    """
    key = path_key(seed, p)
    z = 0.0
    for k in range(n_steps):
        z += normal(key, k)
    z /= math.sqrt(n_steps)
    sq = math.sqrt(expiry)
    s = vol * sq
    mu = math.log(spot) + (rate - dividend - 0.5 * vol * vol) * expiry
    disc = math.exp(-rate * expiry)
    hp = _payoff(math.exp(mu + s * z), strike, w, product)
    hm = _payoff(math.exp(mu - s * z), strike, w, product)
    h0 = _payoff(math.exp(mu), strike, w, product)
    odd = 0.5 * disc * (hp - hm)
    even = disc * (0.5 * (hp + hm) - h0)
    z2 = z * z
    v_m = odd * z / s
    v_s = even * (z2 - 1.0) / s
    v_mm = even * (z2 - 1.0) / (s * s)
    v_ms = odd * (z2 * z - 3.0 * z) / (s * s)
    v_ss = even * (z2 * z2 - 5.0 * z2 + 2.0) / (s * s)
    m_sig = -vol * expiry  # ∂μ/∂σ; ∂s/∂σ = √T, ∂²μ/∂σ² = −T
    delta = v_m / spot
    vega = v_m * m_sig + v_s * sq
    gamma = (v_mm - v_m) / (spot * spot)
    vanna = (v_mm * m_sig + v_ms * sq) / spot
    volga = (v_mm * m_sig * m_sig + 2.0 * v_ms * m_sig * sq + v_ss * expiry - v_m * expiry)
    return delta, vega, gamma, vanna, volga


@njit(parallel=True, cache=True)
def gbm_vibrato(seed, spot, strike, expiry, rate, dividend, vol, w, product, n_steps, n_samples):
    """Per-sample vibrato estimates ``(n_samples, N_VIBRATO)`` (European or digital payoff)."""
    out = np.empty((n_samples, N_VIBRATO))
    for p in prange(n_samples):
        r = vibrato_core(seed, p, spot, strike, expiry, rate, dividend, vol, w, product, n_steps)
        for j in range(N_VIBRATO):
            out[p, j] = r[j]
    return out
