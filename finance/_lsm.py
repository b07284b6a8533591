"""Longstaff–Schwartz least-squares Monte Carlo for American (Bermudan) options under GBM.

Two independent path sets (the same seed gives the same paths): the exercise policy is fitted on
the first (regression of discounted continuation cash flows on a polynomial in ``S/K`` over the
in-the-money paths, backwards from expiry) and the price is the mean discounted payoff of the
second set stopped by that policy — an out-of-sample, low-biased estimate.

Greeks, boundary held fixed. The stopping time τ of each pricing path is computed once from plain
values; the price ``mean(e^{−r t_τ} h(S_τ))`` with ``S_τ = S₀ exp((r − q − σ²/2)t_τ + σW_τ)``
is then differentiated by diffsci pathwise with τ fixed: the derivative of the price *under a
frozen policy*; because the fitted policy is (approximately) optimal, the price is stationary in
the policy and the frozen-boundary derivative equals the derivative of the optimal price to first
order (envelope theorem; finance/DERIVATIONS.md §LS). First order only.

References:
    F. A. Longstaff, E. S. Schwartz, "Valuing American options by simulation: a simple
    least-squares approach", Rev. Financ. Stud. 14 (2001) 113–147. Glasserman (2003), §8.6 and
    §7.2 (pathwise derivatives). Piterbarg, "Pathwise vs likelihood ratio Greeks for Bermudan
    options" (2004) on holding the exercise boundary fixed.
"""

from __future__ import annotations

import numpy as np

from diffsci.extend import value_mask
from diffsci.typing import ArrayLike

from ._mc import MCResult, stderr_of
from ._validate import check_bool, check_real, plain

__all__ = ["lsm_price"]


def lsm_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike, rate: ArrayLike = 0.0,
              dividend: ArrayLike = 0.0, vol: ArrayLike, is_call: bool = False,
              n_paths: int = 50_000, n_steps: int = 50, degree: int = 3, seed: int = 0,
              antithetic: bool = True) -> MCResult:
    """American (Bermudan, ``n_steps`` equally spaced exercise dates) price by Longstaff–Schwartz.

    Units: ``expiry`` in years; ``rate``, ``dividend`` continuously compounded per year;
    ``vol`` per √year (0.2 = 20 %); derivatives are per unit of each input: theta is
    −∂/∂T per year, vega per 1.00 of volatility, rho per 1.00 of rate.

    Args:
        spot, strike, expiry, vol: scalars > 0; rate, dividend: scalars (continuous).
        is_call: scalar bool (default False: a put).
        n_paths: paths in each of the two sets (regression, pricing); even with ``antithetic``.
        n_steps: exercise dates ``t_k = kT/n`` (k = 1..n); exercise at t = 0 is also allowed.
        degree: degree of the polynomial basis ``1, x, …, x^degree`` in ``x = S/K``.
        seed: the generator's seed.
        antithetic: pair each pricing path with its mirror (pairs count as one sample).

    Returns:
        :class:`MCResult` (``price`` differentiable with the exercise boundary held fixed).

    Raises:
        ValueError/TypeError: invalid inputs, naming the argument.

    Example:
        >>> r = lsm_price(spot=36.0, strike=40.0, expiry=1.0, rate=0.06, vol=0.2, seed=1)
        >>> abs(float(r.price) - 4.4867) < 4 * r.stderr + 0.01
        True

    References:
        Longstaff & Schwartz (2001), §2; Glasserman (2003), §8.6.
    """
    who = "lsm_price"
    for name, x in (("spot", spot), ("strike", strike), ("expiry", expiry), ("vol", vol)):
        check_real(who, name, x, low=0.0)
    for name, x in (("rate", rate), ("dividend", dividend)):
        check_real(who, name, x)
    for name, x in (("spot", spot), ("strike", strike), ("expiry", expiry), ("vol", vol),
                    ("rate", rate), ("dividend", dividend)):
        if np.shape(plain(x)) != ():
            raise ValueError(f"{who}: {name} must be a scalar, got shape {np.shape(plain(x))}")
    is_call = check_bool(who, "is_call", is_call)
    if is_call.shape != ():
        raise ValueError(f"{who}: is_call must be a scalar bool, got shape {is_call.shape}")
    for name, x, lo in (("n_paths", n_paths, 2), ("n_steps", n_steps, 1), ("degree", degree, 1)):
        if not (isinstance(x, int | np.integer) and x >= lo):
            raise ValueError(f"{who}: {name} must be an int >= {lo}, got {x!r}")
    if antithetic and n_paths % 2:
        raise ValueError(f"{who}: n_paths must be even with antithetic=True, got {n_paths}")
    w = 1.0 if is_call else -1.0
    n = int(n_steps)
    rng = np.random.default_rng(seed)
    p = plain
    z_fit = rng.standard_normal((int(n_paths), n))
    half = int(n_paths) // 2 if antithetic else int(n_paths)
    z = rng.standard_normal((half, n))
    if antithetic:
        z = np.concatenate([z, -z])
    # the policy and the stopping times from plain values (held fixed under differentiation;
    # recomputed by the compiled code under diffsci.jit)
    stop = value_mask(_stopping, z_fit, z, spot, strike, expiry, rate, dividend, vol, w, n,
                      int(degree))
    hit = value_mask(np.greater, stop, 0)
    stopped = value_mask(_stopped_at, expiry, z, stop, n)
    t_tau, w_tau = stopped[0], stopped[1]
    p_expiry = value_mask(p, expiry)
    # the differentiable part: payoff at the frozen stopping times
    s_tau = spot * np.exp((rate - dividend - 0.5 * vol * vol) * (expiry * t_tau / p_expiry)
                          + vol * w_tau * np.sqrt(expiry / p_expiry))
    cash = np.where(hit, np.exp(-rate * expiry * t_tau / p_expiry)
                    * np.maximum(w * (s_tau - strike), 0.0), 0.0)
    samples = 0.5 * (cash[:half] + cash[half:]) if antithetic else cash
    price = np.mean(samples)
    se = stderr_of(samples, half)
    now = np.maximum(w * (spot - strike), 0.0)
    price = np.where(value_mask(np.greater, now, price), now, price)  # exercise at t = 0 if better
    return MCResult(price=price, stderr=se, n_samples=half)


def _stopping(z_fit, z, spot, strike, expiry, rate, dividend, vol, w, n, degree):
    """Stopping index k (1..n) of each pricing path, or 0 (never), on plain values."""
    p = plain
    coef = _fit(z_fit, p(spot), p(strike), p(expiry), p(rate), p(dividend), p(vol), w, n, degree)
    t = p(expiry) * np.arange(1, n + 1) / n
    big_w = np.sqrt(p(expiry) / n) * np.cumsum(z, axis=1)
    paths = p(spot) * np.exp((p(rate) - p(dividend) - 0.5 * p(vol) ** 2) * t + p(vol) * big_w)
    return _stop(paths, coef, p(strike), w)


def _stopped_at(expiry, z, stop, n):
    """``(t_τ, W_τ)`` of each pricing path (the last date for one never stopped), plain."""
    t = plain(expiry) * np.arange(1, n + 1) / n
    big_w = np.sqrt(plain(expiry) / n) * np.cumsum(z, axis=1)
    idx = np.where(stop > 0, stop - 1, n - 1)
    return np.stack([t[idx], big_w[np.arange(len(idx)), idx]])


def _basis(x, degree):
    return np.stack([x**j for j in range(degree + 1)], axis=-1)


def _fit(z, spot, strike, expiry, rate, dividend, vol, w, n, degree):
    """Regression coefficients per exercise date k = 1..n−1 (row k−1), on plain arrays."""
    dt = expiry / n
    t = dt * np.arange(1, n + 1)
    paths = spot * np.exp((rate - dividend - 0.5 * vol**2) * t + vol * np.sqrt(dt)
                          * np.cumsum(z, axis=1))
    cash = np.maximum(w * (paths[:, -1] - strike), 0.0)  # value at the next date, undiscounted
    coef = np.zeros((n, degree + 1))
    for k in range(n - 2, -1, -1):
        cash = cash * np.exp(-rate * dt)
        ex = np.maximum(w * (paths[:, k] - strike), 0.0)
        itm = ex > 0
        if itm.sum() > degree + 1:
            a = _basis(paths[itm, k] / strike, degree)
            coef[k] = np.linalg.lstsq(a, cash[itm], rcond=None)[0]
            cont = a @ coef[k]
            now = itm.copy()
            now[itm] = ex[itm] > cont
            cash = np.where(now, ex, cash)
        else:
            coef[k] = np.inf  # never exercise where the fit is impossible
    coef[n - 1] = -np.inf  # expiry: exercise whenever in the money
    return coef


def _stop(paths, coef, strike, w):
    """First date index (1-based) where exercise beats the fitted continuation, 0 for never."""
    n_paths, n = paths.shape
    stop = np.zeros(n_paths, dtype=np.int64)
    for k in range(n - 1, -1, -1):
        ex = np.maximum(w * (paths[:, k] - strike), 0.0)
        if k == n - 1:
            go = ex > 0
        elif np.isinf(coef[k, 0]):
            continue
        else:
            go = (ex > 0) & (ex > _basis(paths[:, k] / strike, coef.shape[1] - 1) @ coef[k])
        stop = np.where(go, k + 1, stop)
    return stop
