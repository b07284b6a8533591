"""Monte Carlo knock-out options under GBM, continuously monitored by a Brownian-bridge correction.

Paths are sampled exactly on the grid ``t_k = kT/n``. Between two grid points the log-price is a
Brownian bridge, whose probability of *not* touching the barrier H is, with
``x_k = η ln(S_k/H) > 0`` (η = +1 down, −1 up),

    p_k = 1 − exp(−2 x_{k−1} x_k / (σ²Δt))     (0 when x_{k−1} x_k ≤ 0).

The estimator ``e^{−rT} h(S_T) Π_k p_k`` is the conditional expectation of the knocked-out payoff
given the grid values, so it is *unbiased for continuous monitoring at any n* and — unlike the
indicator ``1{not knocked}``, whose pathwise derivative is zero almost surely — Lipschitz in the
inputs, so its pathwise derivative (diffsci through this NumPy code) is an unbiased estimator of the
Greeks (finance/DERIVATIONS.md §BB). ``bridge=False`` gives discrete monitoring on the grid.

References:
    Glasserman (2003), §6.4 (eq. 6.50: the bridge crossing probability) and §7.2 (pathwise);
    Beaglehole, Dybvig, Zhou, "Going to extremes: correcting simulation bias in exotic option
    valuation", Financ. Anal. J. 53 (1997) 62–68.
"""

from __future__ import annotations

import numpy as np

from diffsci.extend import observed, value_mask
from diffsci.typing import ArrayLike

from ._mc import MCResult, stderr_of
from ._validate import check_bool, check_real, plain

__all__ = ["mc_barrier_price"]


def mc_barrier_price(*, spot: ArrayLike, strike: ArrayLike, barrier: ArrayLike, expiry: ArrayLike,
                     rate: ArrayLike = 0.0, dividend: ArrayLike = 0.0, vol: ArrayLike,
                     is_call: bool = True, is_down: bool = True, n_paths: int = 100_000,
                     n_steps: int = 1, seed: int = 0, antithetic: bool = True,
                     bridge: bool = True) -> MCResult:
    """Monte Carlo knock-out barrier price (GBM), differentiable pathwise (first order).

    Units: ``expiry`` in years; ``rate``, ``dividend`` continuously compounded per year;
    ``vol`` per √year (0.2 = 20 %); derivatives are per unit of each input: theta is
    −∂/∂T per year, vega per 1.00 of volatility, rho per 1.00 of rate.

    Args:
        spot, strike, barrier, expiry, vol: scalars > 0; rate, dividend: scalars.
        is_call, is_down: scalar bools (call/put, barrier below/above the spot).
        n_paths: paths (even with ``antithetic``; pairs count as one sample).
        n_steps: grid steps (with ``bridge`` the estimate is unbiased for any n >= 1).
        seed: NumPy generator seed (same seed, same paths).
        antithetic: pair each path with its mirror.
        bridge: weight by the bridge survival probability (continuous monitoring); False:
            knock out only at grid points (discrete monitoring).

    Returns:
        :class:`MCResult` (``price`` traced when the inputs are).

    Raises:
        ValueError/TypeError: invalid inputs naming the argument; a spot at or across the barrier.

    Example:
        >>> r = mc_barrier_price(spot=100.0, strike=100.0, barrier=90.0, expiry=1.0, rate=0.05,
        ...                      vol=0.2, seed=1)
        >>> abs(float(r.price) - 8.6655) < 4 * r.stderr
        True
    """
    who = "mc_barrier_price"
    kw = dict(spot=spot, strike=strike, barrier=barrier, expiry=expiry, vol=vol, rate=rate,
              dividend=dividend)
    for name, x in kw.items():
        check_real(who, name, x, low=0.0 if name not in ("rate", "dividend") else None)
        if np.shape(plain(x)) != ():
            raise ValueError(f"{who}: {name} must be a scalar, got shape {np.shape(plain(x))}")
    flags = {}
    for name, x in (("is_call", is_call), ("is_down", is_down)):
        flags[name] = check_bool(who, name, x)
        if flags[name].shape != ():
            raise ValueError(f"{who}: {name} must be a scalar bool, got shape "
                             f"{flags[name].shape}")
    eta = 1.0 if flags["is_down"] else -1.0
    if observed(lambda s, h: bool(eta * (float(s) - float(h)) <= 0), spot, barrier):
        side = ">" if eta > 0 else "<"
        raise ValueError(f"{who}: spot must be {side} barrier (already knocked), got spot "
                         f"{float(plain(spot))!r}, barrier {float(plain(barrier))!r}")
    for name, x, lo in (("n_paths", n_paths, 2), ("n_steps", n_steps, 1)):
        if not (isinstance(x, int | np.integer) and x >= lo):
            raise ValueError(f"{who}: {name} must be an int >= {lo}, got {x!r}")
    if antithetic and n_paths % 2:
        raise ValueError(f"{who}: n_paths must be even with antithetic=True, got {n_paths}")
    half = int(n_paths) // 2 if antithetic else int(n_paths)
    z = np.random.default_rng(seed).standard_normal((half, int(n_steps)))
    if antithetic:
        z = np.concatenate([z, -z])
    cash = _samples(z, spot, strike, barrier, expiry, rate, dividend, vol,
                    1.0 if flags["is_call"] else -1.0, eta, bool(bridge))
    samples = 0.5 * (cash[:half] + cash[half:]) if antithetic else cash
    se = stderr_of(samples, half)
    return MCResult(price=np.mean(samples), stderr=se, n_samples=half)


def _samples(z, spot, strike, barrier, expiry, rate, dividend, vol, phi, eta, bridge):
    """Discounted, survival-weighted payoffs per path (valid input; ``z`` plain normals)."""
    n = z.shape[1]
    dt = expiry / n
    t = expiry * (np.arange(1, n + 1) / n)
    log_s = np.log(spot) + (rate - dividend - 0.5 * vol * vol) * t + vol * np.sqrt(dt) * np.cumsum(
        z, axis=1)
    x = eta * (log_s - np.log(barrier))        # distance to the barrier, > 0 while alive
    prev = eta * np.log(spot / barrier)
    weight = 1.0
    for k in range(n):
        if bridge:
            q = np.maximum(prev * x[:, k], 0.0)
            weight = weight * (1.0 - np.exp(-2.0 * q / (vol * vol * dt)))
        else:
            weight = weight * value_mask(np.greater, x[:, k], 0)
        prev = x[:, k]
    payoff = np.maximum(phi * (np.exp(log_s[:, -1]) - strike), 0.0)
    return np.exp(-rate * expiry) * payoff * weight
