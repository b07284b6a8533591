"""Cash-or-nothing digital options under Black–Scholes–Merton.

References:
    E. G. Haug, *The Complete Guide to Option Pricing Formulas*, 2nd ed., §4.19.2 (cash-or-nothing).
    Hull, 10th ed., §26.7.
"""

from __future__ import annotations

import numpy as np

from diffsci.scipy.special import ndtr

from .._validate import check_bool, check_real

__all__ = ["digital_price"]


def digital_price(*, spot, strike, expiry, rate=0.0, dividend=0.0, vol, is_call=True,
                  payout=1.0):
    """Cash-or-nothing digital: pays ``payout`` if ``S_T > K`` (call) or ``S_T < K`` (put).

    ``V = payout · e^{−rT} N(w d₂)``, ``d₂ = (ln(S/K) + (r − q − σ²/2)T)/(σ√T)``.

    Args:
        spot, strike, expiry, vol: > 0.
        rate, dividend: r and q (continuous).
        is_call: bool (array).
        payout: the cash amount (any real).

    Returns:
        Prices shaped like the broadcast arguments.

    Raises:
        ValueError: non-finite arguments, or spot, strike, expiry or vol ≤ 0.

    Example:
        >>> round(float(digital_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05,
        ...                           vol=0.2)), 6)
        0.532325

    References:
        Haug (2007), §4.19.2.
    """
    who = "digital_price"
    for name, x in (("spot", spot), ("strike", strike), ("expiry", expiry), ("vol", vol)):
        check_real(who, name, x, low=0.0)
    for name, x in (("rate", rate), ("dividend", dividend), ("payout", payout)):
        check_real(who, name, x)
    w = np.where(check_bool(who, "is_call", is_call), 1.0, -1.0)
    sd = vol * np.sqrt(expiry)
    d2 = (np.log(spot / strike) + (rate - dividend) * expiry) / sd - 0.5 * sd
    return payout * np.exp(-rate * expiry) * ndtr(w * d2)
