"""Black–Scholes implied volatility: a bracketed Newton solver, differentiable by the IFT.

Solver (plain NumPy, vectorised over the batch, never recorded):

1. Undiscount (``c = price e^{rT}``, forward ``F = S e^{(r−q)T}``) and check the no-arbitrage
   bounds ``max(w(F − K), 0) < c < (F if call else K)``.
2. Move to the out-of-the-money option by put–call parity (``c − w(F − K)`` for an in-the-money
   quote), whose price ``b(s)`` in the total volatility ``s = σ√T`` rises from 0 to its bound.
3. Newton on ``ln b(s) − ln c`` (after Jäckel: the logarithm of the normalised Black price is
   far closer to linear in ``s`` than the price itself), started at the inflection point
   ``s_c = √(2|ln F/K|)`` (or, at the money, at the exact inverse ``2 N⁻¹((c/F + 1)/2)``),
   inside a bracket ``[lo, hi]`` kept by sign: a step leaving the bracket, or an underflowed
   ``b``, is replaced by bisection (the geometric mean once ``lo > 0``). ``hi`` is found by
   doubling, so the bracket always exists: no "root not bracketed" failure inside the bounds.

Accuracy: the normalised price is computed as ``F N(d₁) − K N(d₂)``, which loses relative precision
when both terms are tiny (deep out of the money at small total volatility); there the returned
volatility reprices the quote to round-off in *absolute* price. Jäckel's rational initial guesses
and asymptotic expansions ("Let's be rational", 2015) are not implemented.

Arbitrage violations are errors (a documented choice; no NaN is ever returned): a quote at or
outside its bounds raises ``ValueError`` naming ``price``, the index, the quote and the bound.

Gradients (``finance/DERIVATIONS.md`` §IV): σ(p, θ) solves ``V(θ, σ) = p``, so
``∂σ/∂p = 1/vega`` and ``∂σ/∂θ = −(∂V/∂θ)/vega`` (implicit-function theorem). The rule is a
``ds.custom_vjp`` whose backward pass is one pullback of the (differentiable) pricer at the
solution; the forward pass re-applies two Newton steps in differentiable NumPy from the plain
solution, so that the solution carries its own derivatives into nested differentiation (after k
steps from the exact root the derivatives are exact to order 2ᵏ − 1): second and third orders work.

References:
    P. Jäckel, "Let's be rational", Wilmott (2015) 40–53 (the normalised Black function and
    its inflection point ``s_c``). M. Brenner, M. Subrahmanyam, "A simple formula to compute
    the implied standard deviation", Financ. Anal. J. 44 (1988) 80–83. Krantz & Parks,
    *The Implicit Function Theorem* (2002), Thm. 3.3.1.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc

import diffsci as ds
from diffsci.extend import observed, value_mask
from diffsci.typing import Array, ArrayLike

from ._analytic.bsm import _bsm
from ._validate import plain, prepare

__all__ = ["implied_vol"]

MAX_ITER = 200
REL_TOL = 4e-16
_INV_SQRT_2PI = 1.0 / np.sqrt(2.0 * np.pi)


def implied_vol(*, price: ArrayLike, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike,
                rate: ArrayLike = 0.0, dividend: ArrayLike = 0.0, is_call: bool = True) -> Array:
    """The Black–Scholes–Merton volatility σ that reprices each quote (batched, differentiable).

    For Black-76 quotes pass ``spot=forward, dividend=rate``.

    Units: ``expiry`` in years; ``rate`` and ``dividend`` continuously compounded, per year;
    the result σ per √year (0.2 is 20 %). AD derivatives: ∂σ/∂price per unit of price (1/vega
    with vega per 1.00 of vol), ∂σ/∂expiry per year, ∂σ/∂rate per 1.00 of rate.

    Args:
        price: option prices (discounted, as :func:`bsm_price` returns them).
        spot, strike, expiry: > 0.
        rate, dividend: r and q (continuous).
        is_call: bool (array).

    Returns:
        σ > 0, shaped like the broadcast arguments.

    Raises:
        TypeError: a bool, complex or non-numeric number, or a non-bool is_call (naming it).
        ValueError: arguments that do not broadcast together (naming them), non-finite
            arguments, non-positive spot/strike/expiry, or a price at or outside the
            no-arbitrage bounds ``e^{−rT} max(w(F − K), 0) < price < S e^{−qT}`` (call) or
            ``< K e^{−rT}`` (put), naming the index, the price and the violated bound.

    Example:
        >>> from finance import bsm_price
        >>> p = bsm_price(spot=100.0, strike=110.0, expiry=0.5, rate=0.03, vol=0.25)
        >>> round(float(implied_vol(price=p, spot=100.0, strike=110.0, expiry=0.5, rate=0.03)), 12)
        0.25

    References:
        Jäckel (2015); the implicit-function theorem (Krantz & Parks 2002, Thm. 3.3.1).
    """
    price, spot, strike, expiry, rate, dividend, is_call = prepare(
        "implied_vol", price=(price, None), spot=(spot, 0.0), strike=(strike, 0.0),
        expiry=(expiry, 0.0), rate=(rate, None), dividend=(dividend, None),
        flags={"is_call": is_call})
    w = np.where(is_call, 1.0, -1.0)
    return _iv(price, spot, strike, expiry, rate, dividend, w)


# ---------------------------------------------------------------- the plain solver
def _arbitrage(price, spot, strike, expiry, rate, dividend, w):
    """The message for a quote at or outside its no-arbitrage bounds, else None (plain)."""
    p, S, K, T, r, q, w = np.broadcast_arrays(*(plain(a) for a in (price, spot, strike, expiry,
                                                                 rate, dividend)), w)
    F = S * np.exp((r - q) * T)
    c = p * np.exp(r * T)
    lower = np.maximum(w * (F - K), 0.0)
    upper = np.where(w > 0, F, K)
    for bad, bound, what in ((c <= lower, lower, "above the intrinsic value"),
                             (c >= upper, upper, "below the upper bound")):
        if bad.any():
            i = tuple(int(j) for j in np.argwhere(np.atleast_1d(bad))[0]) if bad.ndim else ()
            disc = np.exp(-r[i] * T[i])
            return (
                f"implied_vol: price must be strictly {what} (no-arbitrage bounds "
                f"e^(-rT) max(w(F-K),0) < price < {'S e^(-qT)' if w[i] > 0 else 'K e^(-rT)'}), "
                f"got price {float(p[i])!r} against bound {float(bound[i] * disc)!r} at index {i}")
    return None


def _solve(price, spot, strike, expiry, rate, dividend, w):
    """σ on plain arrays (validated); raises on arbitrage violations."""
    wrong = _arbitrage(price, spot, strike, expiry, rate, dividend, w)
    if wrong is not None:
        raise ValueError(wrong)
    p, S, K, T, r, q, w = np.broadcast_arrays(*(plain(a) for a in (price, spot, strike, expiry,
                                                                 rate, dividend)), w)
    F = S * np.exp((r - q) * T)
    c = p * np.exp(r * T)
    # the out-of-the-money option: a call when K >= F, else a put
    v = np.where(K >= F, 1.0, -1.0)
    target = np.where(v == w, c, c - w * (F - K))
    target = np.maximum(target, np.finfo(float).tiny)
    x = np.log(F / K)
    bound = np.where(v > 0, F, K)

    def b(s):
        with np.errstate(divide="ignore", invalid="ignore"):
            d1 = x / s + 0.5 * s
            return np.maximum(v * (F * sc.ndtr(v * d1) - K * sc.ndtr(v * (d1 - s))), 0.0), d1

    # bracket [lo, hi] with b(lo) < target <= b(hi)
    lo = np.zeros_like(c)
    hi = np.ones_like(c)
    for _ in range(60):
        below = b(hi)[0] < target
        if not below.any():
            break
        lo = np.where(below, hi, lo)
        hi = np.where(below, 2.0 * hi, hi)
    atm = 2.0 * sc.ndtri(0.5 * (np.minimum(target / bound, 1.0) + 1.0))
    s = np.where(np.abs(x) < 1e-12, atm, np.sqrt(2.0 * np.abs(x)))
    s = np.where((s > lo) & (s < hi), s, np.where(lo > 0, np.sqrt(lo * hi), 0.5 * hi))
    active = np.ones(c.shape, dtype=bool)
    for _ in range(MAX_ITER):
        bs, d1 = b(s)
        up = bs >= target
        lo = np.where(up, lo, s)
        hi = np.where(up, s, hi)
        dbds = F * _INV_SQRT_2PI * np.exp(-0.5 * d1 * d1)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = s - (np.log(bs) - np.log(target)) * bs / dbds
        mid = np.where(lo > 0, np.sqrt(lo * hi), 0.5 * hi)
        ok = np.isfinite(newton) & (newton > lo) & (newton < hi) & (bs > 0)
        s_new = np.where(ok, newton, mid)
        done = (np.abs(s_new - s) <= REL_TOL * s) | (hi - lo <= REL_TOL * hi)
        s = np.where(active, s_new, s)
        active &= ~done
        if not active.any():
            break
    return s / np.sqrt(T)


# ---------------------------------------------------------------- the IFT rule
def _vega(spot, strike, expiry, rate, dividend, vol):
    sd = vol * np.sqrt(expiry)
    d1 = (np.log(spot / strike) + (rate - dividend) * expiry) / sd + 0.5 * sd
    return spot * np.exp(-dividend * expiry) * _INV_SQRT_2PI * np.exp(-0.5 * d1 * d1) * np.sqrt(
        expiry)


@ds.custom_vjp
def _iv(price, spot, strike, expiry, rate, dividend, w):
    return _solve(price, spot, strike, expiry, rate, dividend, w)


def _iv_fwd(price, spot, strike, expiry, rate, dividend, w):
    # the plain solve, recomputed under diffsci.jit; its bounds check a guard
    wrong = observed(_arbitrage, price, spot, strike, expiry, rate, dividend, w)
    if wrong is not None:
        raise ValueError(wrong)
    sigma = value_mask(_solve, price, spot, strike, expiry, rate, dividend, w)
    if any(ds.extend.is_tracer(a) for a in (price, spot, strike, expiry, rate, dividend)):
        # nested differentiation: two differentiable Newton steps carry dσ/dθ (and d²σ/dθ²)
        for _ in range(2):
            sigma = sigma - (_bsm(spot, strike, expiry, rate, dividend, sigma, w) - price) / _vega(
                spot, strike, expiry, rate, dividend, sigma)
    return sigma, (sigma, price, spot, strike, expiry, rate, dividend, w)


def _iv_bwd(res, g):
    sigma, price, spot, strike, expiry, rate, dividend, w = res
    u = g / _vega(spot, strike, expiry, rate, dividend, sigma)

    def residual(p, s_, k, t, r, q):  # V(θ, σ) = p  ⇔  p − V = 0
        return p - _bsm(s_, k, t, r, q, sigma, w)

    _, back = ds.pullback(residual, price, spot, strike, expiry, rate, dividend)
    return (*back(u), None)


_iv.defvjp(_iv_fwd, _iv_bwd)
