"""Black-76: European options on a forward or futures price (lognormal forward).

References:
    F. Black, "The pricing of commodity contracts", J. Financ. Econ. 3 (1976) 167–179.
    Hull, *Options, Futures, and Other Derivatives*, 10th ed., eqs. (18.9)–(18.10).
"""

from __future__ import annotations

import numpy as np

from diffsci.scipy.special import ndtr
from diffsci.typing import Array, ArrayLike

from .._validate import prepare

__all__ = ["black76_price"]


def black76_price(*, forward: ArrayLike, strike: ArrayLike, expiry: ArrayLike,
                  rate: ArrayLike = 0.0, vol: ArrayLike, is_call: bool = True) -> Array:
    """Black-76 price: ``e^{−rT} w (F N(w d₁) − K N(w d₂))``, ``d₁,₂ = (ln(F/K) ± σ²T/2)/(σ√T)``.

    Units: ``expiry`` in years; ``rate`` continuously compounded, per year; ``vol`` per √year.
    AD derivatives are per unit of each input: vega per 1.00 of vol (÷ 100 for a vol point),
    rho per 1.00 of rate, ∂/∂expiry per year (theta is −∂V/∂expiry per year).

    Args:
        forward: F > 0, the forward (futures) price for delivery at ``expiry``.
        strike: K > 0.
        expiry: T > 0.
        rate: the discount rate r (continuous).
        vol: the lognormal volatility σ > 0.
        is_call: bool (array).

    Returns:
        Prices shaped like the broadcast arguments.

    Raises:
        TypeError: a bool, complex or non-numeric number, or a non-bool is_call (naming it).
        ValueError: non-finite arguments, forward, strike, expiry or vol ≤ 0, or arguments
            that do not broadcast together (naming them).

    Example:
        >>> round(float(black76_price(forward=100.0, strike=100.0, expiry=1.0, vol=0.2)), 6)
        7.965567

    References:
        Black (1976); Hull, 10th ed., eqs. (18.9)–(18.10).
    """
    forward, strike, expiry, rate, vol, is_call = prepare(
        "black76_price", forward=(forward, 0.0), strike=(strike, 0.0), expiry=(expiry, 0.0),
        rate=(rate, None), vol=(vol, 0.0), flags={"is_call": is_call})
    w = np.where(is_call, 1.0, -1.0)
    sd = vol * np.sqrt(expiry)
    d1 = np.log(forward / strike) / sd + 0.5 * sd
    return np.exp(-rate * expiry) * w * (forward * ndtr(w * d1) - strike * ndtr(w * (d1 - sd)))
