"""Merton's jump-diffusion: European options as a Poisson-weighted series of Black prices.

References:
    R. C. Merton, "Option pricing when underlying stock returns are discontinuous", J. Financ.
    Econ. 3 (1976) 125–144, eq. (16). Hull, *Options, Futures, and Other Derivatives*, 10th ed.,
    §27.1. Haug (2007), §6.8.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import poisson

from diffsci.scipy.special import ndtr
from diffsci.typing import Array, ArrayLike

from .._validate import check_real, plain, prepare

__all__ = ["MERTON_MAX_TERMS", "merton_jump_price"]

#: The series is refused (ValueError naming jump_intensity) if the truncation rule needs more.
MERTON_MAX_TERMS = 2000


def merton_jump_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike,
                      rate: ArrayLike = 0.0, dividend: ArrayLike = 0.0, vol: ArrayLike,
                      jump_intensity: ArrayLike, jump_mean: ArrayLike, jump_vol: ArrayLike,
                      is_call: bool = True, tol: float = 1e-13) -> Array:
    """Merton (1976) jump-diffusion price of European calls and puts (batched, differentiable).

    ``dS/S = (r − q − λk) dt + σ dW + (J − 1) dN``, ``N`` Poisson with intensity λ, ``ln J ~
    N(μ_J, δ²)``, ``k = e^{μ_J + δ²/2} − 1``. Conditional on ``n`` jumps the log price is Gaussian,
    so ``V = e^{−rT} Σ_n e^{−λT}(λT)ⁿ/n! · Black(F_n, K, σ_n, T)`` with ``F_n = S e^{(r−q−λk)T}
    (1+k)ⁿ`` and ``σ_n² = σ² + nδ²/T``.

    Truncation rule (``finance/DERIVATIONS.md`` §MJ): the sum runs over ``n = 0..N`` with ``N``
    the smallest integer at which the Poisson tails beyond ``N`` for the means ``λT`` and
    ``λ(1+k)T`` are both ≤ ``tol`` (at least ``N = 2``, so first and second derivatives in λ are
    exact at λ = 0). Each dropped call term is ≤ ``S e^{−qT}`` times a ``Poisson(λ(1+k)T)``
    probability and each put term ≤ ``K e^{−rT}`` times a ``Poisson(λT)`` one, so the truncation
    error is ≤ ``tol · max(S e^{−qT}, K e^{−rT})``. ``N`` is one integer for the whole batch.

    Units: ``expiry`` in years; ``rate`` and ``dividend`` continuously compounded, per year;
    ``vol`` per √year (0.2 is 20 %). AD derivatives are per unit of each input: vega per 1.00 of
    vol (÷ 100 for a vol point), rho per 1.00 of rate, ∂/∂expiry per year (theta, as
    :func:`finance.greeks` reports it, is −∂V/∂expiry per year).
    ``jump_intensity`` is per year; ``jump_mean`` and ``jump_vol`` are in log-price units.

    Args:
        spot, strike, expiry, vol: > 0.
        rate, dividend: r and q (continuous).
        jump_intensity: λ ≥ 0 (jumps per year); λ = 0 gives :func:`bsm_price`.
        jump_mean: μ_J, the mean of the log jump size (any real).
        jump_vol: δ ≥ 0, the standard deviation of the log jump size.
        is_call: bool (array).
        tol: the truncation tolerance, in (0, 1).

    Returns:
        Prices shaped like the broadcast arguments.

    Raises:
        TypeError: a bool, complex or non-numeric number, or a non-bool is_call (naming it).
        ValueError: non-finite arguments; spot, strike, expiry or vol ≤ 0; jump_intensity or
            jump_vol < 0; arguments that do not broadcast together; or a series that would need
            more than ``MERTON_MAX_TERMS`` terms.

    Example:
        >>> round(float(merton_jump_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05,
        ...                               vol=0.2, jump_intensity=0.0, jump_mean=0.0,
        ...                               jump_vol=0.0)), 6)
        10.450584

    References:
        Merton (1976), eq. (16); Hull (10th ed.), §27.1, eq. (27.1).
    """
    who = "merton_jump_price"
    (spot, strike, expiry, rate, dividend, vol, jump_intensity, jump_mean, jump_vol,
     is_call) = prepare(
        who, spot=(spot, 0.0), strike=(strike, 0.0), expiry=(expiry, 0.0), rate=(rate, None),
        dividend=(dividend, None), vol=(vol, 0.0), jump_intensity=(jump_intensity, None),
        jump_mean=(jump_mean, None), jump_vol=(jump_vol, None), flags={"is_call": is_call})
    for name, x in (("jump_intensity", jump_intensity), ("jump_vol", jump_vol)):
        check_real(who, name, x, low=0.0, strict=False)
    check_real(who, "tol", tol, low=0.0, high=0.5)
    w = np.where(is_call, 1.0, -1.0)
    k = np.exp(jump_mean + 0.5 * jump_vol**2) - 1.0
    n_max = _n_terms(plain(jump_intensity) * plain(expiry), plain(k), float(tol), who)
    lt = jump_intensity * expiry
    weight = np.exp(-lt)                                   # Poisson(λT) at n = 0
    fwd = spot * np.exp((rate - dividend - jump_intensity * k) * expiry)
    total = 0.0
    for n in range(n_max + 1):
        if n:
            weight = weight * lt / n                       # recursion: smooth at λ = 0
            fwd = fwd * (1.0 + k)
        sd = np.sqrt(vol**2 * expiry + n * jump_vol**2)
        d1 = np.log(fwd / strike) / sd + 0.5 * sd
        total = total + weight * w * (fwd * ndtr(w * d1) - strike * ndtr(w * (d1 - sd)))
    return np.exp(-rate * expiry) * total


def _n_terms(lt, k, tol, who):
    """The truncation index N of the series (plain values; one N for the batch)."""
    means = np.concatenate([np.ravel(lt), np.ravel(lt * (1.0 + k) * np.ones_like(lt))])
    n = int(np.max(poisson.isf(tol, np.maximum(means, 1e-300)))) if means.size else 0
    if n > MERTON_MAX_TERMS:
        raise ValueError(f"{who}: jump_intensity * expiry = {float(np.max(lt)):g} needs {n} "
                         f"series terms (> MERTON_MAX_TERMS = {MERTON_MAX_TERMS})")
    return max(n, 2)
