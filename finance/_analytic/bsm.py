"""Black–Scholes–Merton European options with a continuous dividend yield.

References:
    F. Black, M. Scholes, "The pricing of options and corporate liabilities", J. Polit. Econ. 81
    (1973) 637–654. R. C. Merton, "Theory of rational option pricing", Bell J. Econ. 4 (1973)
    141–183. J. C. Hull, *Options, Futures, and Other Derivatives*, 10th ed., §17.4,
    eqs. (17.4)–(17.5).
"""

from __future__ import annotations

import numpy as np

from diffsci.scipy.special import ndtr
from diffsci.typing import Array, ArrayLike

from .._validate import prepare

__all__ = ["bsm_price"]


def bsm_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike, rate: ArrayLike = 0.0,
              dividend: ArrayLike = 0.0, vol: ArrayLike, is_call: bool = True) -> Array:
    """Black–Scholes–Merton price of European calls and puts (batched, differentiable).

    ``V = w (S e^{−qT} N(w d₁) − K e^{−rT} N(w d₂))`` with ``w = ±1`` for call/put,
    ``d₁,₂ = (ln(S/K) + (r − q ± σ²/2) T) / (σ√T)``. All arguments broadcast together.

    Units: ``expiry`` in years; ``rate`` and ``dividend`` continuously compounded, per year;
    ``vol`` per √year (0.2 is 20 %). AD derivatives are per unit of each input: vega per 1.00 of
    vol (÷ 100 for a vol point), rho per 1.00 of rate, ∂/∂expiry per year (theta, as
    :func:`finance.greeks` reports it, is −∂V/∂expiry per year).

    Args:
        spot: S > 0.
        strike: K > 0.
        expiry: T > 0, in years.
        rate: continuously compounded risk-free rate r.
        dividend: continuous dividend yield q.
        vol: σ > 0.
        is_call: bool (array), True for calls.

    Returns:
        The prices, shaped like the broadcast arguments.

    Raises:
        TypeError: a bool, complex or non-numeric number, or a non-bool is_call (naming it).
        ValueError: a non-finite argument, spot, strike, expiry or vol ≤ 0 (naming it), or
            arguments that do not broadcast together.

    Example:
        >>> float(bsm_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2))
        10.450583572185565

    References:
        Hull, *Options, Futures, and Other Derivatives*, 10th ed., eqs. (17.4)–(17.5).
    """
    spot, strike, expiry, rate, dividend, vol, is_call = prepare(
        "bsm_price", spot=(spot, 0.0), strike=(strike, 0.0), expiry=(expiry, 0.0),
        rate=(rate, None), dividend=(dividend, None), vol=(vol, 0.0), flags={"is_call": is_call})
    w = np.where(is_call, 1.0, -1.0)
    return _bsm(spot, strike, expiry, rate, dividend, vol, w)


def _bsm(spot, strike, expiry, rate, dividend, vol, w):
    """The formula on valid input (``w = ±1``); also used by the implied-vol solver."""
    sd = vol * np.sqrt(expiry)
    d1 = (np.log(spot / strike) + (rate - dividend) * expiry) / sd + 0.5 * sd
    d2 = d1 - sd
    return w * (spot * np.exp(-dividend * expiry) * ndtr(w * d1)
                - strike * np.exp(-rate * expiry) * ndtr(w * d2))
