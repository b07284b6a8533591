"""Geometric-basket European options under correlated GBM, closed form.

References:
    Haug (2007), §5.1 (options on two correlated assets) and the log-normal geometric average;
    Glasserman, *Monte Carlo Methods in Financial Engineering* (2003), §4.1.2 (geometric basket as a
    control variate).
"""

from __future__ import annotations

import numpy as np

from diffsci.scipy.special import ndtr
from diffsci.typing import Array, ArrayLike

from .._corr import check_assets, check_correlation
from .._validate import check_bool, check_real

__all__ = ["geometric_basket_price"]


def geometric_basket_price(*, spots: ArrayLike, weights: ArrayLike, strike: ArrayLike,
                           expiry: ArrayLike, rate: ArrayLike = 0.0, dividends: ArrayLike = 0.0,
                           vols: ArrayLike, correlation: ArrayLike, is_call: bool = True) -> Array:
    """European call/put on ``G = Π_i S_i(T)^{a_i}`` (differentiable, scalar strike/expiry).

    ``ln G`` is Gaussian with mean ``Σ a_i (ln S_i + (r − q_i − σ_i²/2) T)`` and variance
    ``T Σ_ij a_i a_j σ_i σ_j ρ_ij``, so the price is Black's formula on ``F_G = E[G]`` discounted
    at ``e^{−rT}`` (``finance/DERIVATIONS.md`` §BK). With ``Σ a_i = 1`` it is the closed form that
    :func:`basket_mc_price` with ``Basket.GEOMETRIC`` estimates.

    Args:
        spots, vols: shape ``(d,)``, > 0. dividends: scalar or ``(d,)``. weights: ``(d,)``, ≥ 0.
        strike, expiry: scalars > 0. rate: scalar.
        correlation: ``(d, d)`` symmetric, unit diagonal, positive definite.
        is_call: bool.

    Returns:
        The price (a scalar).

    Raises:
        ValueError: naming the argument (bounds, shapes, a correlation that is not positive
            definite).

    Example:
        >>> round(float(geometric_basket_price(spots=[100.0, 100.0], weights=[0.5, 0.5],
        ...     strike=100.0, expiry=1.0, rate=0.05, vols=[0.2, 0.2],
        ...     correlation=[[1.0, 0.5], [0.5, 1.0]])), 6)
        9.129689

    References:
        Haug (2007), §5.1; Glasserman (2003), §4.1.2.
    """
    who = "geometric_basket_price"
    spots, vols, weights = (np.asarray(x) if isinstance(x, list) else x
                            for x in (spots, vols, weights))
    d = np.shape(spots)[0] if np.ndim(spots) == 1 else 0
    if d == 0:
        raise ValueError(f"{who}: spots must have shape (d,), got {np.shape(spots)}")
    _validate(who, d, spots, weights, strike, expiry, rate, dividends, vols, correlation)
    correlation = np.asarray(correlation) if isinstance(correlation, list) else correlation
    w = 1.0 if bool(check_bool(who, "is_call", is_call)) else -1.0
    sv = weights * vols
    var = expiry * np.sum(sv[:, None] * correlation * sv[None, :])
    mean = np.sum(weights * (np.log(spots) + (rate - dividends - 0.5 * vols**2) * expiry))
    sd = np.sqrt(var)
    d1 = (mean - np.log(strike) + var) / sd
    fwd = np.exp(mean + 0.5 * var)
    return w * np.exp(-rate * expiry) * (fwd * ndtr(w * d1) - strike * ndtr(w * (d1 - sd)))


def _validate(who, d, spots, weights, strike, expiry, rate, dividends, vols, correlation):
    check_assets(who, d, spots=spots, vols=vols, weights=weights, dividends=dividends)
    for name, x in (("spots", spots), ("vols", vols), ("strike", strike), ("expiry", expiry)):
        check_real(who, name, x, low=0.0)
    check_real(who, "weights", weights, low=0.0, strict=False)
    check_real(who, "rate", rate)
    check_real(who, "dividends", dividends)
    for name, x in (("strike", strike), ("expiry", expiry), ("rate", rate)):
        if np.ndim(x):
            raise ValueError(f"{who}: {name} must be a scalar, got shape {np.shape(x)}")
    check_correlation(who, correlation, d)
