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

from .._validate import check_bool, check_real

__all__ = ["bsm_price"]


def bsm_price(*, spot, strike, expiry, rate=0.0, dividend=0.0, vol, is_call=True):
    """Black–Scholes–Merton price of European calls and puts (batched, differentiable).

    ``V = w (S e^{−qT} N(w d₁) − K e^{−rT} N(w d₂))`` with ``w = ±1`` for call/put,
    ``d₁,₂ = (ln(S/K) + (r − q ± σ²/2) T) / (σ√T)``. All arguments broadcast together.

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
        ValueError: a non-finite argument, or spot, strike, expiry or vol ≤ 0 (naming it).

    Example:
        >>> float(bsm_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2))
        10.450583572185565

    References:
        Hull, *Options, Futures, and Other Derivatives*, 10th ed., eqs. (17.4)–(17.5).
    """
    who = "bsm_price"
    for name, x in (("spot", spot), ("strike", strike), ("expiry", expiry), ("vol", vol)):
        check_real(who, name, x, low=0.0)
    check_real(who, "rate", rate)
    check_real(who, "dividend", dividend)
    w = np.where(check_bool(who, "is_call", is_call), 1.0, -1.0)
    return _bsm(spot, strike, expiry, rate, dividend, vol, w)


def _bsm(spot, strike, expiry, rate, dividend, vol, w):
    """The formula on valid input (``w = ±1``); also used by the implied-vol solver."""
    sd = vol * np.sqrt(expiry)
    d1 = (np.log(spot / strike) + (rate - dividend) * expiry) / sd + 0.5 * sd
    d2 = d1 - sd
    return w * (spot * np.exp(-dividend * expiry) * ndtr(w * d1)
                - strike * np.exp(-rate * expiry) * ndtr(w * d2))
