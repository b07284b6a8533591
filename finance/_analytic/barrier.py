"""Single-barrier (knock-out and knock-in) European options under Black–Scholes–Merton,
continuously monitored, no rebate.

With ``b = r − q``, ``μ = (b − σ²/2)/σ²``, ``s = σ√T``, ``φ = ±1`` (call/put), ``η = ±1``
(down/up barrier H), Haug's building blocks (eqs. in §4.17.1 there):

    x₁ = ln(S/K)/s + (1 + μ)s,   x₂ = ln(S/H)/s + (1 + μ)s,
    y₁ = ln(H²/(SK))/s + (1 + μ)s,   y₂ = ln(H/S)/s + (1 + μ)s,
    A = φS e^{−qT} N(φx₁) − φK e^{−rT} N(φx₁ − φs),
    B = φS e^{−qT} N(φx₂) − φK e^{−rT} N(φx₂ − φs),
    C = φS e^{−qT} (H/S)^{2(μ+1)} N(ηy₁) − φK e^{−rT} (H/S)^{2μ} N(ηy₁ − ηs),
    D = φS e^{−qT} (H/S)^{2(μ+1)} N(ηy₂) − φK e^{−rT} (H/S)^{2μ} N(ηy₂ − ηs).

Knock-out values (K > H | K ≤ H): down-and-out call A − C | B − D; up-and-out call 0 |
A − B + C − D; down-and-out put A − B + C − D | 0; up-and-out put B − D | A − C. Knock-in by
parity: in = vanilla − out.

References:
    E. Reiner, M. Rubinstein, "Breaking down the barriers", Risk 4(8) (1991) 28–35.
    E. G. Haug, *The Complete Guide to Option Pricing Formulas*, 2nd ed. (2007), §4.17.1.
    Hull, 10th ed., §26.9.
"""

from __future__ import annotations

import numpy as np

from diffsci.extend import value_mask
from diffsci.scipy.special import log_ndtr, ndtr
from diffsci.typing import Array, ArrayLike

from .._validate import plain, prepare
from .bsm import _bsm

__all__ = ["barrier_price"]


def barrier_price(*, spot: ArrayLike, strike: ArrayLike, barrier: ArrayLike, expiry: ArrayLike,
                  rate: ArrayLike = 0.0, dividend: ArrayLike = 0.0, vol: ArrayLike,
                  is_call: bool = True, is_down: bool = True, knock_in: bool = False) -> Array:
    """Continuously monitored single-barrier option (batched, differentiable, no rebate).

    Units: ``expiry`` in years; ``rate`` and ``dividend`` continuously compounded, per year;
    ``vol`` per √year (0.2 is 20 %). AD derivatives are per unit of each input: vega per 1.00 of
    vol (÷ 100 for a vol point), rho per 1.00 of rate, ∂/∂expiry per year (theta, as
    :func:`finance.greeks` reports it, is −∂V/∂expiry per year).
    Valid down to ``vol`` = 1e-3 and below: the reflected terms are evaluated in log space
    (``finance/DERIVATIONS.md`` §BA), so no power overflows into ``inf · 0``.

    Args:
        spot, strike, barrier, expiry, vol: > 0 (broadcastable).
        rate, dividend: r and q (continuous).
        is_call: bool (array).
        is_down: bool (array): True for a barrier below the spot (down), False above (up).
        knock_in: bool (array): False for knock-out, True for knock-in (by parity).

    Returns:
        Prices shaped like the broadcast arguments.

    Raises:
        TypeError: a bool, complex or non-numeric number, or a non-bool flag (naming it).
        ValueError: invalid or non-broadcasting arguments, naming them; a spot already at or
            across the barrier
            (``spot > barrier`` required when down, ``spot < barrier`` when up).

    Example:
        >>> round(float(barrier_price(spot=100.0, strike=100.0, barrier=90.0, expiry=1.0,
        ...                           rate=0.05, vol=0.2)), 4)
        8.6655

    References:
        Haug (2007), §4.17.1; Reiner & Rubinstein (1991).
    """
    who = "barrier_price"
    spot, strike, barrier, expiry, rate, dividend, vol, is_call, down, knock_in = prepare(
        who, spot=(spot, 0.0), strike=(strike, 0.0), barrier=(barrier, 0.0),
        expiry=(expiry, 0.0), rate=(rate, None), dividend=(dividend, None), vol=(vol, 0.0),
        flags={"is_call": is_call, "is_down": is_down, "knock_in": knock_in})
    phi = np.where(is_call, 1.0, -1.0)
    s_p, h_p = np.broadcast_arrays(plain(spot), plain(barrier))
    down_b = np.broadcast_to(down, np.broadcast_shapes(down.shape, s_p.shape))
    s_b, h_b = np.broadcast_to(s_p, down_b.shape), np.broadcast_to(h_p, down_b.shape)
    bad = np.where(down_b, s_b <= h_b, s_b >= h_b)
    if bad.any():
        i = tuple(int(k) for k in np.argwhere(np.atleast_1d(bad))[0]) if bad.ndim else ()
        side = ">" if np.atleast_1d(down_b)[i if i else 0] else "<"
        raise ValueError(f"{who}: spot must be {side} barrier (already knocked), got spot "
                         f"{float(np.atleast_1d(s_b)[i if i else 0])!r}, barrier "
                         f"{float(np.atleast_1d(h_b)[i if i else 0])!r} at index {i}")
    out = _knock_out(spot, strike, barrier, expiry, rate, dividend, vol, phi,
                     np.where(down, 1.0, -1.0))
    return np.where(knock_in, _bsm(spot, strike, expiry, rate, dividend, vol, phi) - out, out)


def _knock_out(spot, strike, barrier, expiry, rate, dividend, vol, phi, eta):
    """Haug's A–D combination on valid input (``phi``, ``eta`` = ±1 arrays).

    The reflected terms C and D are evaluated in log space: ``(H/S)^{2(μ+1)} N(ηy)`` is
    ``exp(2(μ+1) ln(H/S) + log N(ηy))``. At low volatility μ ≈ b/σ² is huge, the power
    overflows (or underflows) while N(ηy) underflows (or is 1), and their product — bounded by
    the option's value — would be ``inf · 0 = NaN`` (an OverflowError for Python floats).
    """
    s = vol * np.sqrt(expiry)
    mu = (rate - dividend - 0.5 * vol * vol) / (vol * vol)
    sf, kf = spot * np.exp(-dividend * expiry), strike * np.exp(-rate * expiry)
    log_sf = np.log(spot) - dividend * expiry
    log_kf = np.log(strike) - rate * expiry
    log_ratio = np.log(barrier / spot)

    def vanilla_like(x):
        return phi * sf * ndtr(phi * x) - phi * kf * ndtr(phi * (x - s))

    def reflected(y):
        return phi * (np.exp(log_sf + 2.0 * (mu + 1.0) * log_ratio + log_ndtr(eta * y))
                      - np.exp(log_kf + 2.0 * mu * log_ratio + log_ndtr(eta * (y - s))))

    shift = (1.0 + mu) * s
    a = vanilla_like(np.log(spot / strike) / s + shift)
    b = vanilla_like(np.log(spot / barrier) / s + shift)
    c = reflected(np.log(barrier * barrier / (spot * strike)) / s + shift)
    d = reflected(np.log(barrier / spot) / s + shift)
    above = value_mask(np.greater, strike, barrier)  # recomputed under diffsci.jit
    call, dn = phi > 0, eta > 0
    zero = 0.0 * a
    # (K > H, K ≤ H) per product, Haug §4.17.1
    doc = np.where(above, a - c, b - d)
    uoc = np.where(above, zero, a - b + c - d)
    dop = np.where(above, a - b + c - d, zero)
    uop = np.where(above, b - d, a - c)
    return np.where(call, np.where(dn, doc, uoc), np.where(dn, dop, uop))
