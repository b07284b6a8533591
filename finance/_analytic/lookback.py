"""Lookback options at inception under Black–Scholes: continuous monitoring in closed form, with the
Broadie–Glasserman–Kou shift for discrete monitoring.

Floating strike: call ``S_T − min S``, put ``max S − S_T`` (Goldman, Sosin & Gatto 1979). Fixed
strike: call ``max(max S − K, 0)``, put ``max(K − min S, 0)`` (Conze & Viswanathan 1991). The
extremes run over ``[0, T]`` and start at the spot (a new contract). With ``b = r − q``,
``a₁ = (ln(S/X) + (b + σ²/2)T)/(σ√T)``, ``a₂ = a₁ − σ√T`` and ``X`` the relevant level (the spot
for floating strikes, ``max(K, S)`` for a fixed call, ``min(K, S)`` for a fixed put), each price is
a Black–Scholes-like part plus ``S e^{−rT} σ²/(2b) [...]`` (Haug 2007, §4.15.1–4.15.2).

That term is 0/0 at ``b = 0``: for ``|b| < B_EPS`` the price is interpolated linearly in ``b``
between ``b = ±B_EPS`` (error O(B_EPS²) ≈ 1e-10 relative), so ``r = q`` (or r = q = 0) is fine and
smooth, never NaN.

References:
    M. B. Goldman, H. B. Sosin, M. A. Gatto, "Path dependent options: buy at the low, sell at the
    high", J. Finance 34 (1979) 1111–1127. A. Conze, Viswanathan, "Path dependent options: the
    case of lookback options", J. Finance 46 (1991) 1893–1907. E. G. Haug, *The Complete Guide to
    Option Pricing Formulas*, 2nd ed. (2007), §4.15. M. Broadie, P. Glasserman, S. Kou,
    "Connecting discrete and continuous path-dependent options", Finance Stoch. 3 (1999) 55–82
    (the shift ``e^{±βσ√Δt}``, β = −ζ(1/2)/√(2π) ≈ 0.5826).
"""

from __future__ import annotations

import numpy as np

from diffsci.extend import value_mask
from diffsci.scipy.special import log_ndtr, ndtr
from diffsci.typing import Array, ArrayLike

from .._validate import check_real, prepare

__all__ = ["BGK_BETA", "lookback_price"]

#: Broadie–Glasserman–Kou constant −ζ(1/2)/√(2π).
BGK_BETA = 0.5825971579390106
#: Below this |r − q| the closed form is interpolated in b (see the module docstring).
B_EPS = 1e-5


def lookback_price(*, spot: ArrayLike, strike: ArrayLike | None = None, expiry: ArrayLike,
                   rate: ArrayLike = 0.0, dividend: ArrayLike = 0.0, vol: ArrayLike,
                   is_call: bool = True, monitoring_dt: float | None = None) -> Array:
    """Price of a lookback option written today (batched, differentiable).

    Units: ``expiry`` in years; ``rate`` and ``dividend`` continuously compounded, per year;
    ``vol`` per √year (0.2 is 20 %). AD derivatives are per unit of each input: vega per 1.00 of
    vol (÷ 100 for a vol point), rho per 1.00 of rate, ∂/∂expiry per year (theta, as
    :func:`finance.greeks` reports it, is −∂V/∂expiry per year).
    ``monitoring_dt`` in years. Valid down to ``vol`` = 1e-3 and below (log-space terms,
    ``finance/DERIVATIONS.md`` §LB).

    Args:
        spot, expiry, vol: > 0.
        strike: K > 0 for a fixed-strike lookback (on the maximum for a call, the minimum for a
            put); None for a floating-strike one (``S_T − min S`` / ``max S − S_T``).
        rate, dividend: r and q (continuous); any values, r = q included.
        is_call: bool (array).
        monitoring_dt: None for continuous monitoring; else the spacing Δt of discrete fixings
            (including t = 0), priced by the Broadie–Glasserman–Kou shift: the discrete maximum
            is ≈ the continuous one times ``e^{−βσ√Δt}`` (minimum: ``e^{+βσ√Δt}``), which moves
            the strike of a fixed lookback and scales the expected extreme of a floating one. An
            O(Δt) approximation (BGK 1999, §4).

    Returns:
        Prices shaped like the broadcast arguments.

    Raises:
        TypeError: a bool, complex or non-numeric number, or a non-bool is_call (naming it).
        ValueError: non-finite arguments, spot, strike, expiry, vol or monitoring_dt ≤ 0, or
            arguments that do not broadcast together (naming them).

    Example:
        >>> round(float(lookback_price(spot=100.0, expiry=1.0, rate=0.05, vol=0.2)), 4)
        17.2168
    """
    who = "lookback_price"
    if strike is not None:
        spot, strike, expiry, rate, dividend, vol, call = prepare(
            who, spot=(spot, 0.0), strike=(strike, 0.0), expiry=(expiry, 0.0),
            rate=(rate, None), dividend=(dividend, None), vol=(vol, 0.0),
            flags={"is_call": is_call})
    else:
        spot, expiry, rate, dividend, vol, call = prepare(
            who, spot=(spot, 0.0), expiry=(expiry, 0.0), rate=(rate, None),
            dividend=(dividend, None), vol=(vol, 0.0), flags={"is_call": is_call})
    b = rate - dividend
    small = value_mask(np.less, value_mask(np.abs, b), B_EPS)  # recomputed under jit
    if monitoring_dt is not None:
        check_real(who, "monitoring_dt", monitoring_dt, low=0.0)
        shift = np.exp(BGK_BETA * vol * np.sqrt(monitoring_dt))
    else:
        shift = None

    def price(b):
        return _lookback(spot, strike, expiry, rate, dividend, b, vol, call, shift)

    if not small.any():
        return price(b)
    lo, hi = price(-B_EPS + 0.0 * b), price(B_EPS + 0.0 * b)
    interp = lo + (b + B_EPS) / (2 * B_EPS) * (hi - lo)
    b_safe = np.where(small, B_EPS, b)
    return np.where(small, interp, price(b_safe))


def _bracket(spot, x, expiry, rate, b, vol, sign):
    """``S e^{−rT} σ²/(2b) [sign·((S/X)^{−2b/σ²} N(sign·(−a₁ + 2b√T/σ)) − e^{bT} N(−sign·a₁))]``
    and a₁ (sign = +1 for the put-type terms on a minimum, −1 for a maximum)."""
    sd = vol * np.sqrt(expiry)
    a1 = (np.log(spot / x) + (b + 0.5 * vol * vol) * expiry) / sd
    c = 2.0 * b / (vol * vol)
    # log space: at low vol |c| ≈ 2|b|/σ² is huge and (S/X)^{−c} overflows where N(·) underflows
    term = (np.exp(-c * np.log(spot / x) + log_ndtr(sign * (-a1 + c * sd)))
            - np.exp(b * expiry + log_ndtr(-sign * a1)))
    return spot * np.exp(-rate * expiry) / c * sign * term, a1


def _lookback(spot, strike, expiry, rate, dividend, b, vol, call, shift):
    sd = vol * np.sqrt(expiry)
    df, fq = np.exp(-rate * expiry), spot * np.exp(-dividend * expiry)
    if strike is None:
        # call: S_T − m with m the minimum (starts at S); put: M − S_T
        br_c, a1 = _bracket(spot, spot, expiry, rate, b, vol, 1.0)
        br_p, _ = _bracket(spot, spot, expiry, rate, b, vol, -1.0)
        c = fq * ndtr(a1) - spot * df * ndtr(a1 - sd) + br_c
        p = spot * df * ndtr(sd - a1) - fq * ndtr(-a1) + br_p
        if shift is not None:  # discrete min ≈ continuous min·shift, max ≈ max/shift
            c = shift * c - (shift - 1.0) * fq        # e^{−rT}E[S_T] − shift·e^{−rT}E[m]
            p = (p + fq) / shift - fq                 # e^{−rT}E[M]/shift − e^{−rT}E[S_T]
        return np.where(call, c, p)
    k = strike if shift is None else strike
    kc = k * shift if shift is not None else k   # max(M_d − K) ≈ max(M/shift − K) = (…)/shift
    kp = k / shift if shift is not None else k   # max(K − m_d) ≈ max(K − m·shift) = shift·(…)
    xc = np.maximum(kc, spot)
    br_c, a1c = _bracket(spot, xc, expiry, rate, b, vol, -1.0)
    c = (df * np.maximum(spot - kc, 0.0) + fq * ndtr(a1c) - xc * df * ndtr(a1c - sd) + br_c)
    xp = np.minimum(kp, spot)
    br_p, a1p = _bracket(spot, xp, expiry, rate, b, vol, 1.0)
    p = (df * np.maximum(kp - spot, 0.0) + xp * df * ndtr(sd - a1p) - fq * ndtr(-a1p) + br_p)
    if shift is not None:
        c = c / shift
        p = p * shift
    return np.where(call, c, p)
