"""Bachelier (normal) model: European options when the forward is Gaussian.

References:
    L. Bachelier, "Théorie de la spéculation", Ann. Sci. ÉNS 17 (1900) 21–86.
    F. Le Floc'h, "Fast and accurate analytic basis point volatility", SSRN 2420757 (2016), eq. (2).
"""

from __future__ import annotations

import numpy as np

from diffsci.scipy.special import ndtr
from diffsci.typing import Array, ArrayLike

from .._validate import prepare

__all__ = ["bachelier_price"]

_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def bachelier_price(*, forward: ArrayLike, strike: ArrayLike, expiry: ArrayLike,
                    rate: ArrayLike = 0.0, vol: ArrayLike, is_call: bool = True) -> Array:
    """Bachelier price ``e^{−rT} (w(F − K) N(w d) + σ√T φ(d))`` with ``d = (F − K)/(σ√T)``.

    Units: ``expiry`` in years; ``rate`` continuously compounded, per year; ``vol`` in price
    units per √year (a normal vol). AD derivatives are per unit of each input: vega per 1.00 of
    normal vol, rho per 1.00 of rate, ∂/∂expiry per year (theta is −∂V/∂expiry per year).

    Args:
        forward: F (any real: the normal model allows negative forwards).
        strike: K (any real).
        expiry: T > 0.
        rate: discount rate r.
        vol: the normal (absolute, "basis-point") volatility σ > 0.
        is_call: bool (array).

    Returns:
        Prices shaped like the broadcast arguments.

    Raises:
        TypeError: a bool, complex or non-numeric number, or a non-bool is_call (naming it).
        ValueError: non-finite arguments, expiry or vol ≤ 0, or arguments that do not
            broadcast together (naming them).

    Example:
        >>> round(float(bachelier_price(forward=100.0, strike=100.0, expiry=1.0, vol=20.0)), 6)
        7.978846

    References:
        Le Floc'h (2016), eq. (2).
    """
    forward, strike, expiry, rate, vol, is_call = prepare(
        "bachelier_price", forward=(forward, None), strike=(strike, None), expiry=(expiry, 0.0),
        rate=(rate, None), vol=(vol, 0.0), flags={"is_call": is_call})
    w = np.where(is_call, 1.0, -1.0)
    sd = vol * np.sqrt(expiry)
    d = (forward - strike) / sd
    return np.exp(-rate * expiry) * (w * (forward - strike) * ndtr(w * d)
                                     + sd * _INV_SQRT_2PI * np.exp(-0.5 * d * d))
