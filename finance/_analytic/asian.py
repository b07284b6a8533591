"""Geometric-average Asian options under Black–Scholes–Merton (Kemna–Vorst), closed form.

References:
    A. G. Z. Kemna, A. C. F. Vorst, "A pricing method for options based on average asset
    values", J. Banking Finance 14 (1990) 113–129. E. G. Haug, *The Complete Guide to Option
    Pricing Formulas*, 2nd ed., §4.20.1 (continuous) and §4.20.2 (discrete geometric average).
"""

from __future__ import annotations

import numpy as np

from diffsci.scipy.special import ndtr
from diffsci.typing import Array, ArrayLike

from .._validate import prepare

__all__ = ["geometric_asian_price"]


def geometric_asian_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike,
                          rate: ArrayLike = 0.0, dividend: ArrayLike = 0.0, vol: ArrayLike,
                          is_call: bool = True, n_fixings: int | None = None) -> Array:
    """Price of a European call/put on the geometric average of the spot (batched, differentiable).

    The average is ``G = (Π_k S_{t_k})^{1/n}`` over ``t_k = kT/n``, ``k = 1..n`` (the grid of
    ``mc_price(product=Product.ASIAN, n_steps=n)``), or ``exp((1/T)∫₀ᵀ ln S_t dt)`` when
    ``n_fixings`` is None (continuous). ``ln G`` is Gaussian with mean ``ln S + (r − q − σ²/2) m``
    and variance ``σ² v`` (``m = T(n+1)/(2n)``, ``v = T(n+1)(2n+1)/(6n²)``; continuous: ``T/2``,
    ``T/3``), so ``V = e^{−rT} w (F_G N(w d₁) − K N(w d₂))`` with ``F_G = E[G]``
    (derivation: ``finance/DERIVATIONS.md`` §GA).

    Units: ``expiry`` in years; ``rate`` and ``dividend`` continuously compounded, per year;
    ``vol`` per √year (0.2 is 20 %). AD derivatives are per unit of each input: vega per 1.00 of
    vol (÷ 100 for a vol point), rho per 1.00 of rate, ∂/∂expiry per year (theta, as
    :func:`finance.greeks` reports it, is −∂V/∂expiry per year).

    Args:
        spot, strike, expiry, vol: > 0.
        rate, dividend: r and q (continuous).
        is_call: bool (array), True for calls.
        n_fixings: number of equally spaced fixings (int ≥ 1), or None for continuous averaging.

    Returns:
        Prices shaped like the broadcast arguments.

    Raises:
        TypeError: a bool, complex or non-numeric number, or a non-bool is_call (naming it).
        ValueError: non-finite arguments, spot, strike, expiry or vol ≤ 0, a bad n_fixings, or
            arguments that do not broadcast together (naming them).

    Example:
        >>> round(float(geometric_asian_price(spot=100.0, strike=95.0, expiry=1.0, rate=0.05,
        ...                                   dividend=0.02, vol=0.3)), 6)
        9.527

    References:
        Kemna & Vorst (1990), eq. (A.8); Haug (2007), §4.20.1–4.20.2.
    """
    who = "geometric_asian_price"
    spot, strike, expiry, rate, dividend, vol, is_call = prepare(
        who, spot=(spot, 0.0), strike=(strike, 0.0), expiry=(expiry, 0.0), rate=(rate, None),
        dividend=(dividend, None), vol=(vol, 0.0), flags={"is_call": is_call})
    w = np.where(is_call, 1.0, -1.0)
    if n_fixings is None:
        m_frac, v_frac = 0.5, 1.0 / 3.0
    else:
        if not (isinstance(n_fixings, int | np.integer) and n_fixings >= 1):
            raise ValueError(f"{who}: n_fixings must be an int >= 1 or None, got {n_fixings!r}")
        n = float(n_fixings)
        m_frac, v_frac = (n + 1) / (2 * n), (n + 1) * (2 * n + 1) / (6 * n * n)
    mean = (rate - dividend - 0.5 * vol**2) * (m_frac * expiry)
    var = vol**2 * (v_frac * expiry)
    sd = np.sqrt(var)
    d1 = (np.log(spot / strike) + mean + var) / sd
    d2 = d1 - sd
    fwd = spot * np.exp(mean + 0.5 * var)
    return w * np.exp(-rate * expiry) * (fwd * ndtr(w * d1) - strike * ndtr(w * d2))
