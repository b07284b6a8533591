"""Cash-or-nothing digital options under Black–Scholes–Merton.

References:
    E. G. Haug, *The Complete Guide to Option Pricing Formulas*, 2nd ed., §4.19.2 (cash-or-nothing).
    Hull, 10th ed., §26.7.
"""

from __future__ import annotations

import numpy as np

from diffsci.scipy.special import ndtr
from diffsci.typing import Array, ArrayLike

from .._validate import prepare

__all__ = ["digital_price"]


def digital_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike, rate: ArrayLike = 0.0,
                  dividend: ArrayLike = 0.0, vol: ArrayLike, is_call: bool = True,
                  payout: ArrayLike = 1.0) -> Array:
    """Cash-or-nothing digital: pays ``payout`` if ``S_T > K`` (call) or ``S_T < K`` (put).

    ``V = payout · e^{−rT} N(w d₂)``, ``d₂ = (ln(S/K) + (r − q − σ²/2)T)/(σ√T)``.

    Units: ``expiry`` in years; ``rate`` and ``dividend`` continuously compounded, per year;
    ``vol`` per √year (0.2 is 20 %). AD derivatives are per unit of each input: vega per 1.00 of
    vol (÷ 100 for a vol point), rho per 1.00 of rate, ∂/∂expiry per year (theta, as
    :func:`finance.greeks` reports it, is −∂V/∂expiry per year).

    Args:
        spot, strike, expiry, vol: > 0.
        rate, dividend: r and q (continuous).
        is_call: bool (array).
        payout: the cash amount (any real).

    Returns:
        Prices shaped like the broadcast arguments.

    Raises:
        TypeError: a bool, complex or non-numeric number, or a non-bool is_call (naming it).
        ValueError: non-finite arguments, spot, strike, expiry or vol ≤ 0, or arguments that
            do not broadcast together (naming them).

    Example:
        >>> round(float(digital_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05,
        ...                           vol=0.2)), 6)
        0.532325

    References:
        Haug (2007), §4.19.2.
    """
    spot, strike, expiry, rate, dividend, vol, payout, is_call = prepare(
        "digital_price", spot=(spot, 0.0), strike=(strike, 0.0), expiry=(expiry, 0.0),
        rate=(rate, None), dividend=(dividend, None), vol=(vol, 0.0), payout=(payout, None),
        flags={"is_call": is_call})
    w = np.where(is_call, 1.0, -1.0)
    sd = vol * np.sqrt(expiry)
    d2 = (np.log(spot / strike) + (rate - dividend) * expiry) / sd - 0.5 * sd
    return payout * np.exp(-rate * expiry) * ndtr(w * d2)
