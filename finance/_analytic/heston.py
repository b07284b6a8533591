"""Heston (1993) European options by Fourier integration of the characteristic function.

Characteristic function of ``x_T = ln(S_T/S) − (r − q)T`` at ``z = u − i/2`` (Lewis's shift), in
the "little Heston trap" form of Albrecher et al. (2007), eqs. (2)–(4), rewritten without
cancellation (``finance/DERIVATIONS.md`` §HS, eqs. (HS1)–(HS3)): with ``α = z² + iz = u² + 1/4``,
``b = κ − iρσz``, ``d = √(b² + σ²α)``, ``E = 1 − e^{−dT} = −expm1(−dT)``,

    D = −αE / ((b + d) + σ²α(1 − E)/(b + d)),
    C = κθ [−αT/(b + d) − 2y·log1p(σ²y)/(σ²y)],    y = −αE / (2d(b + d)),
    φ(z) = exp(C + D v₀),

which equals the textbook form (``(b − d)/σ² = −α/(b + d)``) but has no ``κθ/σ²`` factor times a
difference that vanishes as σ → 0, so it and its derivatives are accurate for every σ > 0
(``log1p(x)/x`` by its Taylor series for ``|x| < 1e-3``; the complex ``log1p`` from real
``log1p`` and ``arctan2``: NumPy's complex ``log1p`` loses the real part of tiny arguments).

Price by Lewis's (2001) single integral with a Black–Scholes control variate (HS4): with
``k = ln(S/K) + (r − q)T`` and ``w = θT + (v₀ − θ)(1 − e^{−κT})/κ`` the expected integrated
variance,

    C = C_BS(w) − √(SK) e^{−(r+q)T/2}/π · Re ∫₀^∞ e^{iuk} (φ(u − i/2) − e^{−wα/2}) / α du,

``C_BS(w)`` the Black–Scholes call with total variance ``w``. The difference vanishes as σ → 0
(the variance becomes deterministic and ``x_T`` Gaussian with variance ``w``), so the price is
continuous into that limit, and the poles of ``1/α`` at ``u = ±i/2`` cancel.

Quadrature (HS5–HS6): the integral runs along the ray ``u = r e^{iϑ}`` (the integrand decays on
the arc of the wedge between it and the real axis, and is analytic inside: checked numerically,
not proven — ``finance/DERIVATIONS.md`` §HS), with ϑ of the sign of
``k`` so that ``e^{iuk}`` decays instead of oscillating; on composite Gauss–Legendre panels
(``QUAD_NODES`` nodes) whose edges are chosen per option from plain values: geometric from
``min(L, 1)/16`` (``L = 1/√w``, the width of the bulk) up to where the integrand bound falls
below ``QUAD_TOL``, each panel split so that the integrand turns by at most ``PANEL_RADIANS``.
The nodes are constants under differentiation, so the price is one differentiable expression in
all inputs (diffsci differentiates it, complex arithmetic included, to any order). The result is
clipped to the no-arbitrage bounds ``max(S e^{−qT} − K e^{−rT}, 0) ≤ C ≤ S e^{−qT}`` (a clip of
round-off: the quadrature error is ≤ 1e-12 of the spot); puts by parity.

References:
    S. L. Heston, "A closed-form solution for options with stochastic volatility", Rev. Financ.
    Stud. 6 (1993) 327–343. H. Albrecher, P. Mayer, W. Schoutens, J. Tistaert, "The little Heston
    trap", Wilmott (Jan 2007) 83–92. A. Lewis, "A simple option formula for general
    jump-diffusion and other exponential Lévy processes" (2001), eq. (2.10). R. Lord,
    C. Kahl, "Optimal Fourier inversion in semi-analytical option pricing", J. Comput. Finance
    10(4) (2007) 1–30 (control variates and contour choice). L. Andersen, M. Lake, "Robust
    high-precision option pricing by Fourier transforms: contour deformations and
    double-exponential quadrature" (2018) (rotated contours).
"""

from __future__ import annotations

import numpy as np

from diffsci.extend import getval, observed, value_mask
from diffsci.scipy.special import ndtr
from diffsci.typing import Array, ArrayLike

from .._model import HestonParams
from .._validate import check_broadcast, prepare

_FIELDS = ("kappa", "theta", "sigma", "rho", "v0")

__all__ = ["PANEL_RADIANS", "QUAD_NODES", "QUAD_TOL", "heston_price"]

#: Gauss–Legendre nodes per panel.
QUAD_NODES = 20
#: The integrand may turn by at most this many radians across one panel.
PANEL_RADIANS = 8.0
#: Panels stop where ``r·|integrand|`` (a bound of the tail) is below this, everywhere beyond.
QUAD_TOL = 1e-16
_GL_X, _GL_W = np.polynomial.legendre.leggauss(QUAD_NODES)
_PROBES = 2.0 ** np.arange(0, 64)  # probe radii in units of r0 (plain panel selection)


def _log1p(x):
    """``log(1 + x)`` for complex ``x``, accurate for tiny ``|x|`` (real part by real log1p)."""
    re, im = np.real(x), np.imag(x)
    return 0.5 * np.log1p(2.0 * re + re * re + im * im) + 1j * np.arctan2(im, 1.0 + re)


def _log1p_ratio(x):
    """``log(1 + x)/x`` for complex ``x``: a Taylor series for ``|x| < 1e-3`` (so neither the value
    nor its derivative cancels as ``x → 0``), else :func:`_log1p` over ``x``."""
    small = value_mask(np.less, value_mask(np.abs, x), 1e-3)  # recomputed under jit
    xs = np.where(small, x, 0.0)
    series = 1.0 + xs * (-1.0 / 2 + xs * (1.0 / 3 + xs * (-1.0 / 4 + xs * (1.0 / 5 + xs * (
        -1.0 / 6 + xs / 7)))))
    xl = np.where(small, 1.0, x)
    return np.where(small, series, _log1p(xl) / xl)


def log_char_fn(z, expiry, kappa, theta, sigma, rho, v0):
    """``ln φ(z)``, ``φ(z) = E[exp(iz x_T)]``, for complex ``z`` (eqs. (HS1)–(HS3)); broadcasts."""
    alpha = z * z + 1j * z
    b = kappa - 1j * rho * sigma * z
    d = np.sqrt(b * b + sigma * sigma * alpha)
    bd = b + d
    e1 = -np.expm1(-d * expiry)                     # 1 − e^{−dT}
    s2 = sigma * sigma
    big_d = -alpha * e1 / (bd + s2 * alpha * (1.0 - e1) / bd)
    y = -alpha * e1 / (2.0 * d * bd)
    big_c = kappa * theta * (-alpha * expiry / bd - 2.0 * y * _log1p_ratio(s2 * y))
    return big_c + big_d * v0


def integrated_variance(expiry, kappa, theta, v0):
    """``w = E ∫₀ᵀ v dt = θT + (v₀ − θ)(1 − e^{−κT})/κ`` (the control variate's variance)."""
    return theta * expiry + (v0 - theta) * (-np.expm1(-kappa * expiry)) / kappa


def _integrand(z, k, expiry, w, kappa, theta, sigma, rho, v0):
    """``e^{izk}(φ(z − i/2) … )``: the Lewis integrand minus its control variate at ``u = z``."""
    zs = z - 0.5j
    alpha = z * z + 0.25
    ln_bs = -0.5 * w * alpha
    ln_h = log_char_fn(zs, expiry, kappa, theta, sigma, rho, v0)
    # φ − φ_BS = φ_BS·expm1(ln φ − ln φ_BS) where they are close (no cancellation as σ → 0);
    # where they are not, the plain difference (the expm1 form would overflow: φ_BS is Gaussian)
    diff = ln_h - ln_bs
    close = value_mask(np.less, value_mask(np.real, diff), 1.0)
    near = np.exp(ln_bs) * np.expm1(np.where(close, diff, 0.0))
    far = np.exp(np.where(close, -1.0, ln_h)) - np.exp(ln_bs)
    return np.exp(1j * z * k) * np.where(close, near, far) / alpha


def _envelope(z, k, expiry, w, kappa, theta, sigma, rho, v0):
    """``|e^{izk}|(|φ(z − i/2)| + |φ_BS|)/|α|`` on plain values: bounds the integrand and (up to
    polynomial factors) its derivatives in every input, so panels cut where this is negligible
    also resolve the Greeks (the controlled difference alone is O(σ) and would cut too early)."""
    alpha = z * z + 0.25
    ln_h = log_char_fn(z - 0.5j, expiry, kappa, theta, sigma, rho, v0)
    return np.abs(np.exp(1j * z * k)) * (np.abs(np.exp(ln_h)) + np.abs(np.exp(-0.5 * w * alpha)))\
        / np.abs(alpha)


def _wrap(x):
    """A difference of complex logarithms with its imaginary part taken into (−π, π]."""
    return np.real(x) + 1j * (np.pi - np.mod(np.pi - np.imag(x), 2.0 * np.pi))


def _log_terms(z, k, expiry, w, kappa, theta, sigma, rho, v0):
    """The logarithms of the Heston and the Black–Scholes terms of the integrand (plain)."""
    alpha = z * z + 0.25
    base = 1j * z * k - np.log(alpha)
    return (base + log_char_fn(z - 0.5j, expiry, kappa, theta, sigma, rho, v0),
            base - 0.5 * w * alpha)


def _panels(k, expiry, w, kappa, theta, sigma, rho, v0):
    """Plain panels per option: midpoints and half-widths ``(n, P)`` in r (zero-padded), the
    panel count per option and the ray direction ``e^{iϑ}`` (HS5–HS6)."""
    n = k.size
    # ϑ: the sign of k, at most π/8 (the Gaussian bulk decays for |ϑ| < π/4) and at most half of
    # the room π/2 ∓ arcsin ρ left before the far-field decay of φ turns into growth (HS5).
    sgn = np.where(k >= 0.0, 1.0, -1.0)
    room = 0.5 * np.pi - sgn * np.arcsin(rho)
    ang = sgn * np.minimum(0.5 * room, np.pi / 8.0)
    rot = np.exp(1j * ang)
    r0 = np.minimum(1.0 / np.sqrt(w), 1.0) / 8.0
    cols = [c[:, None] for c in (k, expiry, w, kappa, theta, sigma, rho, v0)]
    rot_ = rot[:, None]
    with np.errstate(all="ignore"):
        radii = r0[:, None] * _PROBES[None, :]
        mag = _envelope(radii * rot_, *cols) * radii
        mag = np.where(np.isfinite(mag), mag, np.inf)
        # the last probe whose tail bound (r|f| there or at any later probe) exceeds QUAD_TOL
        above = np.maximum.accumulate((mag > QUAD_TOL)[:, ::-1], axis=1)[:, ::-1]
        last = np.minimum(above.sum(axis=1), _PROBES.size - 1)   # panels end at radii[last]
        j = int(last.max()) + 1
        radii = radii[:, :j]
        # the turning rate |d ln g/dz| at the probes of the two terms g of the integrand (the
        # Heston and the Black–Scholes one; their difference may be pure round-off), by central
        # differences of their analytic logarithms
        h = 1e-5 * radii
        z = radii * rot_
        # (a term counts only where it is above the tolerance)
        rate = np.zeros_like(radii)
        for g, a, b in zip(_log_terms(z, *cols), _log_terms(z + h * rot_, *cols),
                           _log_terms(z - h * rot_, *cols)):
            alive = np.exp(np.real(g)) * radii > QUAD_TOL
            rate = np.maximum(rate, np.where(alive, np.abs(_wrap(a - b)) / (2.0 * h), 0.0))
    rate = np.where(np.isfinite(rate), rate, np.abs(k)[:, None] + 1.0 / radii)
    # panels [0, r_0], [r_0, r_1], ... [r_{last-1}, r_last]; each split into `parts` equal ones
    lo = np.concatenate([np.zeros((n, 1)), radii[:, :-1]], axis=1)
    om = np.maximum(np.concatenate([rate[:, :1], rate[:, :-1]], axis=1), rate)
    parts = np.maximum(np.ceil(om * (radii - lo) / PANEL_RADIANS), 1.0).astype(np.int64)
    parts = np.where(np.arange(j)[None, :] <= last[:, None], parts, 0)
    count = parts.sum(axis=1)
    row = np.repeat(np.arange(n), count)
    flat = parts.ravel()
    start = np.repeat(lo.ravel(), flat)
    width = np.repeat(((radii - lo) / np.maximum(parts, 1)).ravel(), flat)
    first = np.repeat(np.cumsum(flat) - flat, flat)
    t = np.arange(flat.sum()) - first                      # index inside the split panel
    a = start + t * width
    pos = np.arange(row.size) - np.repeat(np.cumsum(count) - count, count)
    half = np.zeros((n, int(count.max())))
    mid = np.zeros_like(half)
    half[row, pos] = 0.5 * width
    mid[row, pos] = a + 0.5 * width
    return mid, half, count, rot


def _panel_pack(*cols):
    """:func:`_panels` of the float64 columns as one complex array: midpoints, half-widths,
    ray direction (``(n, 2P + 1)``)."""
    mid, half, _, rot = _panels(*[np.asarray(c, dtype=np.float64) for c in cols])
    return np.concatenate([mid, half, rot[:, None]], axis=1)


def _panel_count(half):
    return np.count_nonzero(half > 0, axis=1)


def _integral(k, expiry, w, pars, shape):
    """``Re ∫`` of (HS4) per option (traced inputs flattened to ``(n,)`` or scalars): options
    are grouped by their number of panels so that short rules are not padded to long ones."""
    n = int(np.prod(shape))
    flat = [x if np.ndim(getval(x)) == 0 else np.reshape(np.broadcast_to(x, shape), (-1,))
            for x in (k, expiry, w, *pars)]
    # The panels are chosen from the values; under diffsci.jit they are a record recomputed
    # by the compiled code (value_mask) and their counts, which set the shapes, a guard.
    cols = [np.broadcast_to(x, (n,)) if np.ndim(getval(x)) == 0 else x for x in flat]
    packed = value_mask(_panel_pack, *cols)
    width = (packed.shape[1] - 1) // 2
    mid, half, rot = np.real(packed[:, :width]), np.real(packed[:, width:-1]), packed[:, -1]
    count = observed(_panel_count, half)
    order = np.argsort(count, kind="stable")
    sizes = count[order]
    # groups: a new one whenever the panel count doubles
    cuts = [0]
    for i in range(1, n):
        if sizes[i] > 2 * sizes[cuts[-1]]:
            cuts.append(i)
    cuts.append(n)
    parts = []
    for a, b in zip(cuts[:-1], cuts[1:]):
        idx = order[a:b]
        m = int(sizes[b - 1])
        z = ((mid[idx, :m, None] + half[idx, :m, None] * _GL_X) * rot[idx, None, None])
        wt = (half[idx, :m, None] * _GL_W) * rot[idx, None, None]
        z, wt = z.reshape(idx.size, -1), wt.reshape(idx.size, -1)
        cols = [x if np.ndim(getval(x)) == 0 else x[idx][:, None] for x in flat]
        parts.append(np.real(np.sum(_integrand(z, *cols) * wt, axis=-1)))
    inverse = np.empty(n, dtype=np.int64)
    inverse[order] = np.arange(n)
    joined = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return np.reshape(joined[inverse], shape)


def _bs_call(fwd_disc, k_disc, w):
    """Black–Scholes call from discounted forward, discounted strike and total variance."""
    sd = np.sqrt(w)
    d1 = np.log(fwd_disc / k_disc) / sd + 0.5 * sd
    return fwd_disc * ndtr(d1) - k_disc * ndtr(d1 - sd)


def heston_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike, rate: ArrayLike = 0.0,
                 dividend: ArrayLike = 0.0, params: HestonParams, is_call: bool = True) -> Array:
    """Heston European option prices (batched over all arguments, differentiable).

    Units: ``expiry`` in years; ``rate`` and ``dividend`` continuously compounded per year;
    variances (``theta``, ``v0``) per year and ``kappa``, ``sigma`` per year. Derivatives by
    diffsci are per unit of each input (e.g. ``∂/∂expiry`` per year: theta is ``−∂/∂expiry``).

    Args:
        spot, strike, expiry: > 0 (numbers or arrays; lists/tuples are accepted).
        rate, dividend: r and q.
        params: :class:`HestonParams` (differentiable: a dataclass pytree; its fields may be
            arrays broadcasting with the other arguments).
        is_call: bool (array).

    Returns:
        Prices shaped like the broadcast arguments, inside the no-arbitrage bounds.

    Raises:
        TypeError: non-numeric arguments, a bool where a number is expected, or params not a
            HestonParams.
        ValueError: non-finite or out-of-range arguments, or shapes that do not broadcast
            (naming them).

    Example:
        >>> p = HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
        >>> round(float(heston_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05,
        ...                          params=p)), 4)
        10.3942

    References:
        Albrecher et al. (2007), eqs. (2)–(4); Lewis (2001), eq. (2.10); Lord & Kahl (2007);
        ``finance/DERIVATIONS.md`` §HS.
    """
    who = "heston_price"
    if not isinstance(params, HestonParams):
        raise TypeError(f"{who}: params must be a HestonParams, got {type(params).__name__}")
    spot, strike, expiry, rate, dividend, is_call = prepare(
        who, spot=(spot, 0.0), strike=(strike, 0.0), expiry=(expiry, 0.0), rate=(rate, None),
        dividend=(dividend, None), flags={"is_call": is_call})
    pars = [getattr(params, f) for f in _FIELDS]
    shape = check_broadcast(who, spot=spot, strike=strike, expiry=expiry, rate=rate,
                            dividend=dividend, is_call=is_call,
                            **{f"params.{f}": x for f, x in zip(_FIELDS, pars)})
    k = np.log(spot / strike) + (rate - dividend) * expiry
    w = integrated_variance(expiry, params.kappa, params.theta, params.v0)
    integral = _integral(k, expiry, w, pars, shape)
    fwd_disc = spot * np.exp(-dividend * expiry)
    k_disc = strike * np.exp(-rate * expiry)
    call = _bs_call(fwd_disc, k_disc, w) - np.sqrt(fwd_disc * k_disc) / np.pi * integral
    put = call - fwd_disc + k_disc
    # clip round-off into the no-arbitrage bounds (a put's bounds after parity too)
    call = np.minimum(np.maximum(call, np.maximum(fwd_disc - k_disc, 0.0)), fwd_disc)
    put = np.minimum(np.maximum(put, np.maximum(k_disc - fwd_disc, 0.0)), k_disc)
    return np.where(is_call, call, put)

