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
# American/Bermudan CRR tree: the price alone, and price + Greeks from the exercise decisions and
# one sweep of the path weights (DERIVATIONS.md §TA). Lattice of ``_tree.py``: the
# tree is started two steps early (Pelsser & Vorst 1994), so layer i holds i + 3 nodes
# S_ref u^m, m = 2j − i − 2, and node (i, j) sits at grid index k = m + n + 2 = 2j − i + n.

#: The differentiated inputs of the tree Greeks kernel, in order: σ, T, r, q, K.
N_TREE_THETA = 5
#: Columns of :func:`tree_greeks`: price, delta, gamma, vega, theta, rho, dividend rho, dual
#: delta, vanna, volga, veta, vera, vol-dividend, vol-strike (the order of ``TREE_GREEKS``).
N_TREE_OUT = 14


@njit(cache=True)
def _tree_steps(expiry, rate, dividend, vol, n):
    """The per-step scalars of the lattice, shared by the price and Greeks kernels (so both make
    the same exercise decisions): ``(s, pu, pd, f, disc, g, p, u, d)`` with s = σ√Δt,
    u = e^s = 1/d, g = e^{(r−q)Δt}, p = (g − d)/(u − d), disc = e^{−rΔt}, pu = disc p,
    pd = disc − pu, f = e^{−qΔt}."""
    dt = expiry / n
    s = vol * math.sqrt(dt)
    up = math.exp(s)
    down = math.exp(-s)
    g = math.exp((rate - dividend) * dt)
    disc = math.exp(-rate * dt)
    p = (g - down) / (up - down)
    pu = disc * p
    return s, pu, disc - pu, math.exp(-dividend * dt), disc, g, p, up, down


@njit(cache=True)
def _tree_coefficients(expiry, rate, dividend, vol, n, th):
    """The per-step scalars of the lattice and their θ-derivatives, θ = (σ, T, r, q, K).

    Returns ``(s, pu, pd, ud, s_sig, f, disc)``: s = σ√Δt, pu = e^{−rΔt} p, pd = e^{−rΔt} − pu,
    ud = ∂pu/∂σ (= −∂pd/∂σ), s_sig = ∂s/∂σ, f = e^{−qΔt}, disc = e^{−rΔt}; writes into the rows
    of ``th`` (8 × ≥ 5 scratch) ∂/∂θ of s, pu, pd, ud, s_sig, f, disc and g = e^{(r−q)Δt}
    (eqs. TC1–TC3).
    """
    dt = expiry / n
    s_sig = math.sqrt(dt)
    s, pu, pd, f, disc, g, p, up, down = _tree_steps(expiry, rate, dividend, vol, n)
    sh = 0.5 * (up - down)
    ch = 0.5 * (up + down)
    p_s = (1.0 - g * ch) / (2.0 * sh * sh)
    p_g = 1.0 / (2.0 * sh)
    p_sg = -ch / (2.0 * sh * sh)
    p_ss = (-g * sh * sh - 2.0 * (1.0 - g * ch) * ch) / (2.0 * sh * sh * sh)
    s_th = th[0]
    pu_th = th[1]
    pd_th = th[2]
    ud_th = th[3]
    sd_th = th[4]
    f_th = th[5]
    disc_th = th[6]
    g_th = th[7]
    for r in range(8):
        for t in range(N_TREE_THETA):
            th[r, t] = 0.0
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
    ud = disc * p_s * s_sig
    for t in range(N_TREE_THETA):
        p_t = p_s * s_th[t] + p_g * g_th[t]
        pu_th[t] = disc_th[t] * p + disc * p_t
        pd_th[t] = disc_th[t] - pu_th[t]
        ud_th[t] = (disc_th[t] * p_s * s_sig + disc * (p_ss * s_th[t] + p_sg * g_th[t]) * s_sig
                    + disc * p_s * sd_th[t])
    return s, pu, pd, ud, s_sig, f, disc


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
def _exercise_grid(anchor, strike, s, w, n, grid):
    """Exercise values on the grid k = 0..2n+4 (m = k − n − 2) and their s-derivatives, written
    into the rows of ``grid`` (4 × ≥ 2n + 5 scratch).

    Rows ``(E, I, G, H)``: ``E = max(w(S_k − K), 0)``, ``I = 1{w(S_k − K) > 0}`` (½ on a node
    exactly at the strike, the mean of the kink's slopes, as AD of ``np.maximum``),
    ``G = ∂E/∂s = w S_k m I``, ``H = ∂²E/∂s² = w S_k m² I``.
    """
    e = grid[0]
    ind = grid[1]
    gg = grid[2]
    hh = grid[3]
    for k in range(2 * n + 5):
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
def _exercise_values(anchor, strike, s, w, n, e):
    """``e[k] = max(w(S_k − K), 0)`` on the grid k = 0..2n+4, ``S_k = S_ref e^{s(k − n − 2)}``."""
    for k in range(2 * n + 5):
        e[k] = max(w * (anchor * math.exp(s * (k - n - 2)) - strike), 0.0)


@njit(cache=True)
def _value_pass(anchor, strike, s, pu, pd, f, disc, w, american, n, every, smooth, e_grid, e_rows,
                vals, mask, ex_lo, ex_hi, scattered, keep):
    """The induction (TR1) from the last layer to layer 0; returns ``(V₋, V₀, V₊)``.

    Scratch: ``e_rows`` (2 × ≥ n + 3), ``vals`` (2 × ≥ n + 4), the two layer buffers. Layer i
    reads the exercise values of its nodes as one contiguous slice of the parity rows of the
    grid (:func:`_parity_rows`). With ``keep``, exercise layer i records its first and last
    exercised node in ``ex_lo[i]``, ``ex_hi[i]`` (``(i + 3, −1)`` without exercise) and, only if
    the nodes between are not all exercised (``scattered[i] = 1``), its decisions in
    ``mask[i (i + 5)/2 + j]``; each layer's bytes are first written to a row at the end of
    ``mask`` that stays in cache (an American put's exercise set is one interval per layer, so
    nothing of size n² is written). The last layer stores whether each node takes its exercise
    value.
    """
    last = n - 1 if smooth else n
    gk = strike * disc
    terminal_exercise = not smooth or (american and last % every == 0)
    _parity_rows(e_grid, n, e_rows)
    nxt = vals[last % 2]
    top = last * (last + 5) // 2
    row = top + last + 3  # the per-layer row of decision bytes
    for j in range(last + 3):
        k = 2 * j - last + n
        x = True
        if smooth:
            b = _bbs_node(anchor * math.exp(s * (k - n - 2)) * f, gk, s, k - n - 2, w)[0]
            x = terminal_exercise and e_grid[k] > b
            nxt[j] = e_grid[k] if x else b
        else:
            nxt[j] = e_grid[k]
        if keep:
            mask[top + j] = x
    for i in range(last - 1, -1, -1):
        cur = vals[i % 2, :i + 3]
        k0 = n - i
        e = e_rows[k0 % 2, k0 // 2:k0 // 2 + i + 3]
        allow = american and i % every == 0
        if keep and allow:
            lo, hi, count = _tree_layer_mask(nxt, cur, e, pu, pd, mask[row:row + i + 3])
            ex_lo[i] = lo
            ex_hi[i] = hi
            scattered[i] = 1 if count != hi - lo + 1 and count > 0 else 0
            if scattered[i]:
                off = i * (i + 5) // 2
                for j in range(lo, hi + 1):
                    mask[off + j] = mask[row + j]
        else:
            _tree_layer(nxt, cur, e, pu, pd, allow)
            if keep:
                ex_lo[i] = i + 3
                ex_hi[i] = -1
                scattered[i] = 0
        nxt = cur
    return nxt[0], nxt[1], nxt[2]


@njit(cache=True)
def tree_price_one(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth):
    """Price alone: the three layer-0 values ``(V₋, V₀, V₊)`` of the induction (TR1)."""
    s, pu, pd, f, disc = _tree_steps(expiry, rate, dividend, vol, n)[:5]
    e = np.empty(2 * n + 5)
    _exercise_values(anchor, strike, s, w, n, e)
    none = np.empty(1, np.int64)
    return _value_pass(anchor, strike, s, pu, pd, f, disc, w, american, n, every, smooth, e,
                       np.empty((2, n + 3)), np.empty((2, n + 4)), np.empty(1, np.uint8), none,
                       none, none, False)


@njit(cache=True)
def _parity_rows(grid, n, rows):
    """The grid k = 0..2n+4 as two contiguous rows by the parity of k: ``rows[k % 2, k // 2]``
    (``rows``: 2 × ≥ n + 3 scratch).

    Layer i's nodes sit at k = n − i + 2j, i.e. at ``rows[(n − i) % 2, (n − i) // 2 + j]``: one
    contiguous slice per layer (no stride-2 loads, so the layer loops vectorise).
    """
    for k in range(2 * n + 5):
        rows[k % 2, k // 2] = grid[k]


@njit(cache=True)
def _tree_layer_mask(nxt, cur, e, pu, pd, mask):
    """One layer of (TR1) keeping its exercise decisions: ``cur[j] = max(c_j, e[j])`` with
    ``c_j = pu nxt[j+1] + pd nxt[j]``, ``mask[j] = e[j] > c_j`` (1 byte per node).

    Returns the first and last exercised node, ``(size, −1)`` when none is, and their number.
    """
    size = cur.size
    lo = size
    hi = -1
    count = 0
    for j in range(size):
        c = pu * nxt[j + 1] + pd * nxt[j]
        x = e[j] > c
        cur[j] = e[j] if x else c
        mask[j] = x
        lo = min(lo, j if x else size)
        hi = max(hi, j if x else -1)
        count += 1 if x else 0
    return lo, hi, count


@njit(cache=True)
def _spread(src, dst, pu, pd):
    """The transpose of (TR1) on continuation adjoints: node k of the next layer receives
    ``pu`` from node k − 1 and ``pd`` from node k, ``dst[t] = pu src[t] + pd src[t + 1]``.
    (Callers pass slices, so the loop index is known non-negative and the loop vectorises.)"""
    for t in range(dst.size):
        dst[t] = pu * src[t] + pd * src[t + 1]


#: Adjoints below this (relative to the unit seed at layer 0) are set to zero: a node reached with
#: weight < 1e-200 changes no result in double precision, and the sweep then skips it and never
#: computes with subnormal numbers (which are ~100× slower).
ADJOINT_FLOOR = 1e-200


@njit(cache=True)
def _stop(g1, g2, lam, mu, j, i, phi, phi_t, phi_s, phi_st, a_t, b_t, a_st, b_st, ab_s):
    """Add a stopping node's terms (TA4, TA5) to ``g1 = ∂V₀/∂θ``, ``g2 = ∂²V₀/∂σ∂θ``; return
    its term of ``∂σ(V₊ − V₋)`` (TA6) before the seed correction.

    ``lam``/``mu`` are the node's weights from V₀ and from V₊ − V₋; ``phi`` its value Φ,
    ``phi_t`` ∂Φ/∂θ (5), ``phi_s`` ∂Φ/∂σ, ``phi_st`` ∂²Φ/∂σ∂θ (5); U = j − 1 up moves from the
    root, D = i − U down moves; ``a_t``, ``b_t`` = ∂ln pu/∂θ, ∂ln pd/∂θ and ``a_st``, ``b_st``
    their σ-derivatives; ``ab_s = a_σ − b_σ``.
    """
    u = j - 1.0
    d = i - u
    l_s = u * a_t[0] + d * b_t[0]
    if lam != 0.0:
        for t in range(N_TREE_THETA):
            l_t = u * a_t[t] + d * b_t[t]
            g1[t] += lam * (l_t * phi + phi_t[t])
            g2[t] += lam * ((l_s * l_t + u * a_st[t] + d * b_st[t]) * phi + l_s * phi_t[t]
                            + l_t * phi_s + phi_st[t])
    return mu * ((j * ab_s + i * b_t[0]) * phi + phi_s)


@njit(cache=True)
def _exercise_phi(phi_t, phi_st, gs, hs, ind, s_th, sd_th, s_sig, w):
    """∂E/∂θ and ∂²E/∂σ∂θ of an exercise value E = max(w(S_ref e^{ms} − K), 0) from its
    s-derivatives ``gs``, ``hs`` and indicator ``ind`` (:func:`_exercise_grid`)."""
    for t in range(N_TREE_THETA):
        phi_t[t] = gs * s_th[t]
        phi_st[t] = hs * s_sig * s_th[t] + gs * sd_th[t]
    phi_t[4] -= w * ind


@njit(cache=True)
def tree_greeks_one(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth,
                    mask, work, iwork, out):
    """Price and Greeks of one option: a value pass storing the exercise decisions, then one
    sweep of the path weights from t = 0 to expiry (DERIVATIONS.md §TA, eqs. TA1–TA8).

    With the decisions fixed (they are locally constant, so this is the exact derivative of the
    lattice price, as AD's), ``V₀ = Σ λ_ν Φ_ν`` over the stopping nodes ν (exercised, or on the
    last layer), ``λ_ν = N_ν pu^U pd^D`` the discounted weight of the continuation paths from the
    root. So ∂V₀/∂θ and ∂²V₀/∂σ∂θ are sums over the stopping nodes of λ times polynomials in
    (U, D) and Φ's own derivatives (TA4, TA5): no value or tangent is stored, only one byte per
    node, and the sweep propagates λ (and μ, the weights from V₊ − V₋, for vanna) with two
    multiply–adds per node. Allocates nothing (so numba.cuda compiles it as a device function):
    ``mask`` is :func:`tree_nodes` bytes, ``work`` float64 (:data:`TREE_WORK_ROWS`,
    :func:`tree_work_cols`), ``iwork`` int64 (3, ≥ n), all caller-owned scratch. Writes the
    :data:`N_TREE_OUT` columns into ``out``.
    """
    th = work[12:20]
    s, pu, pd, ud, s_sig, f, disc = _tree_coefficients(expiry, rate, dividend, vol, n, th)
    s_th = th[0]
    pu_th = th[1]
    pd_th = th[2]
    ud_th = th[3]
    sd_th = th[4]
    f_th = th[5]
    disc_th = th[6]
    _exercise_grid(anchor, strike, s, w, n, work[6:10])
    e_grid = work[6]
    i_grid = work[7]
    g_grid = work[8]
    h_grid = work[9]
    last = n - 1 if smooth else n
    gk = strike * disc
    width = last + 3
    # ---- value pass (TR1), keeping the decisions of the exercise layers
    ex_lo = iwork[0]
    ex_hi = iwork[1]
    scattered = iwork[2]
    v_lo, v_0, v_hi = _value_pass(anchor, strike, s, pu, pd, f, disc, w, american, n, every,
                                  smooth, e_grid, work[10:12], work[0:2], mask, ex_lo, ex_hi,
                                  scattered, True)
    # ---- coefficients of (TA4, TA5): ∂ln pu/∂θ, ∂ln pd/∂θ and their σ-derivatives
    a_t = work[20]
    b_t = work[21]
    a_st = work[22]
    b_st = work[23]
    phi_t = work[24]
    phi_st = work[25]
    g1 = work[26]
    g2 = work[27]
    for t in range(N_TREE_THETA):
        a_t[t] = pu_th[t] / pu
        b_t[t] = pd_th[t] / pd
        a_st[t] = ud_th[t] / pu - pu_th[0] * pu_th[t] / (pu * pu)
        b_st[t] = -ud_th[t] / pd - pd_th[0] * pd_th[t] / (pd * pd)
        g1[t] = 0.0
        g2[t] = 0.0
    ab_s = a_t[0] - b_t[0]
    dmu = 0.0  # Σ over stopping nodes of μ (L_σ Φ + Φ_σ), L_σ counted from node 0 (TA6)
    # ---- sweep of the weights λ (seed 1 at V₀) and μ (−1 at V₋, +1 at V₊), t = 0 → expiry;
    # rows offset by one, entries outside [lo, hi] zero
    lam = work[2:4]
    mu = work[4:6]
    for r in range(2):
        for j in range(width + 2):
            lam[r, j] = 0.0
            mu[r, j] = 0.0
    lam[0, 2] = 1.0
    mu[0, 1] = -1.0
    mu[0, 3] = 1.0
    lo, hi = 0, 2
    for i in range(last):
        la = lam[i % 2]
        ma = mu[i % 2]
        if american and i % every == 0:  # stopping nodes: exercised, reached (TA4–TA6)
            off = i * (i + 5) // 2
            k0 = n - i
            every_one = scattered[i] == 0  # all nodes in [ex_lo, ex_hi] exercised
            for j in range(max(lo, ex_lo[i]), min(hi, ex_hi[i]) + 1):
                if every_one or mask[off + j]:
                    # (I = 0 happens: a Black–Scholes value rounded below 0 loses to E = 0)
                    k = k0 + 2 * j
                    _exercise_phi(phi_t, phi_st, g_grid[k], h_grid[k], i_grid[k], s_th, sd_th,
                                  s_sig, w)
                    dmu += _stop(g1, g2, la[j + 1], ma[j + 1], j, i, e_grid[k], phi_t,
                                 g_grid[k] * s_sig, phi_st, a_t, b_t, a_st, b_st, ab_s)
                    la[j + 1] = 0.0
                    ma[j + 1] = 0.0
        ln_ = lam[(i + 1) % 2]
        mn = mu[(i + 1) % 2]
        # rows offset by one: nodes lo − 1 … hi + 1 of layer i → nodes lo … hi + 1 of i + 1
        _spread(la[lo:hi + 3], ln_[lo + 1:hi + 3], pu, pd)
        _spread(ma[lo:hi + 3], mn[lo + 1:hi + 3], pu, pd)
        hi += 1
        while lo <= hi and abs(ln_[lo + 1]) < ADJOINT_FLOOR and abs(mn[lo + 1]) < ADJOINT_FLOOR:
            ln_[lo + 1] = 0.0
            mn[lo + 1] = 0.0
            lo += 1
        while hi >= lo and abs(ln_[hi + 1]) < ADJOINT_FLOOR and abs(mn[hi + 1]) < ADJOINT_FLOOR:
            ln_[hi + 1] = 0.0
            mn[hi + 1] = 0.0
            hi -= 1
        if lo > hi:  # every reachable node exercised: nothing reaches the later layers
            break
        ln_[lo] = 0.0
        mn[lo] = 0.0
        ln_[hi + 2] = 0.0
        mn[hi + 2] = 0.0
    # ---- the last layer: every reached node stops, at its payoff or Black–Scholes value (TA7)
    if lo <= hi:
        la = lam[last % 2]
        ma = mu[last % 2]
        top = last * (last + 5) // 2
        for j in range(lo, hi + 1):
            k = 2 * j - last + n
            m = k - n - 2
            fwd = anchor * math.exp(s * m) * f
            if mask[top + j]:  # the value pass's decision: the payoff, or E beat B
                phi = e_grid[k]
                _exercise_phi(phi_t, phi_st, g_grid[k], h_grid[k], i_grid[k], s_th, sd_th,
                              s_sig, w)
                phi_s = g_grid[k] * s_sig
            else:  # through s, ln F = ln(S_ref e^{ms} f) and ln G = ln(K disc)
                b, b_s, d_f, d_g, b_ss, c_sf, c_sg = _bbs_node(fwd, gk, s, m, w)
                phi = b
                for t in range(N_TREE_THETA):
                    lnf_t = f_th[t] / f
                    lng_t = disc_th[t] / disc + (1.0 / strike if t == 4 else 0.0)
                    phi_t[t] = b_s * s_th[t] + d_f * fwd * lnf_t + d_g * gk * lng_t
                    phi_st[t] = ((b_ss * s_th[t] + c_sf * lnf_t + c_sg * lng_t) * s_sig
                                 + b_s * sd_th[t])
                phi_s = b_s * s_sig
            dmu += _stop(g1, g2, la[j + 1], ma[j + 1], j, last, phi, phi_t, phi_s, phi_st, a_t,
                         b_t, a_st, b_st, ab_s)
    # delta, gamma, vanna from the three layer-0 values: the quadratic interpolation in
    # x = ln(S/S_ref) through x = −2s, 0, 2s (TR2), and its σ-derivative
    v_x = (v_hi - v_lo) / (4.0 * s)
    v_xx = (v_hi - 2.0 * v_0 + v_lo) / (4.0 * s * s)
    d_span = dmu - 2.0 * ab_s * v_hi  # ∂(V₊ − V₋)/∂σ: the seed of V₊ sits at node 2 (TA6)
    out[0] = v_0
    out[1] = v_x / anchor
    out[2] = (v_xx - v_x) / (anchor * anchor)
    out[3] = g1[0]
    out[4] = -g1[1]
    out[5] = g1[2]
    out[6] = g1[3]
    out[7] = g1[4]
    out[8] = (d_span / (4.0 * s) - v_x * s_sig / s) / anchor
    for t in range(N_TREE_THETA):
        out[9 + t] = g2[t]


#: Rows of the float64 scratch of :func:`tree_greeks_one`: two value rows, λ and μ (two rows
#: each), the exercise grid (4), its parity rows (2), the per-step θ-derivatives (8) and eight
#: rows of five per-option coefficients and sums.
TREE_WORK_ROWS = 28


@njit(cache=True)
def tree_work_cols(n):
    """Columns of the float64 scratch of :func:`tree_greeks_one` (the exercise grid's 2n + 5)."""
    return 2 * n + 5


#: Rows of the int64 scratch of :func:`tree_greeks_one`: first and last exercised node of each
#: layer, and whether the nodes between are not all exercised.
TREE_IWORK_ROWS = 3


@njit(cache=True)
def tree_nodes(n, smooth):
    """Bytes of decision scratch that :func:`tree_greeks_one` needs: room for one per node of
    every layer (``(L + 1)(L + 6)/2``, ≈ n²/2; layer i from byte ``i (i + 5)/2``, written only
    where its exercise set is not one interval; the last layer's bytes say whether the node
    stops at its exercise value, always so without the BBS layer) and a row of L + 3."""
    last = n - 1 if smooth else n
    return (last + 1) * (last + 6) // 2 + last + 3


@njit(cache=True)
def tree_decisions(mask, iwork, n, smooth):
    """Every exercise decision of the last :func:`tree_greeks_one` call with this scratch, one
    byte per node (layer i from byte ``i (i + 5)/2``), rebuilt from the exercise ranges and the
    bytes kept for the scattered layers (for tests and diagnostics)."""
    last = n - 1 if smooth else n
    top = last * (last + 5) // 2
    out = np.zeros(top + last + 3, np.uint8)
    for i in range(last):
        off = i * (i + 5) // 2
        for j in range(iwork[0, i], iwork[1, i] + 1):
            out[off + j] = mask[off + j] if iwork[2, i] else 1
    for j in range(last + 3):
        out[top + j] = mask[top + j]
    return out


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
                       mask, work, iwork):
    """:func:`tree_greeks_one` over a flat batch, one thread, scratch ``mask[0]``, ``work[0]``,
    ``iwork[0]``: ``(m, N_TREE_OUT)``."""
    out = np.empty((anchor.size, N_TREE_OUT))
    for b in range(anchor.size):
        tree_greeks_one(anchor[b], strike[b], expiry[b], rate[b], dividend[b], vol[b], w[b],
                        american, n, every, smooth, mask[0], work[0], iwork[0], out[b])
    return out


@njit(parallel=True, cache=True)
def tree_greeks(anchor, strike, expiry, rate, dividend, vol, w, american, n, every, smooth, mask,
                work, iwork):
    """:func:`tree_greeks_one` over a flat batch, ``mask.shape[0]`` chunks in parallel.

    Chunk c prices options c, c + C, c + 2C, … with scratch row c: ``(m, N_TREE_OUT)``.
    """
    out = np.empty((anchor.size, N_TREE_OUT))
    chunks = mask.shape[0]
    for c in prange(chunks):
        for b in range(c, anchor.size, chunks):
            tree_greeks_one(anchor[b], strike[b], expiry[b], rate[b], dividend[b], vol[b], w[b],
                            american, n, every, smooth, mask[c], work[c], iwork[c], out[b])
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
