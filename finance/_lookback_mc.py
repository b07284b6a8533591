"""Monte Carlo lookback options under GBM: the extremes sampled exactly between grid points.

Paths are exact on the grid ``t_k = kT/n``. Given ``L_{k−1} = ln S_{t_{k−1}}`` and ``L_k``, the
log-price on the interval is a Brownian bridge with variance rate σ², whose maximum has the law

    M_k = (L_{k−1} + L_k + √((L_k − L_{k−1})² − 2σ²Δt ln U)) / 2,   U ~ U(0, 1)

(and the minimum the same with ``−√``), from inverting ``P(M ≥ m | L) = exp(−2(m − L_{k−1})
(m − L_k)/(σ²Δt))`` (Glasserman 2003, §6.4, eq. 6.50). The running extreme ``max_k M_k`` has the
law of the continuous path's extreme, so the estimator is *unbiased for continuous monitoring at
any n*, and — for fixed U and normals — a Lipschitz function of (S, K, T, r, q, σ): diffsci's
pathwise derivative of the sample mean is an unbiased Greek (Glasserman 2003, §7.2.2).
``bridge=False`` monitors only the grid (discrete lookback; see
``lookback_price(monitoring_dt=...)`` for the Broadie–Glasserman–Kou approximation).

References:
    Glasserman, *Monte Carlo Methods in Financial Engineering* (2003), §6.4 and §7.2;
    Andersen & Brotherton-Ratcliffe, "Exact exotics", Risk 9 (1996) 85–89 (bridge extremes);
    Broadie, Glasserman & Kou, Finance Stoch. 3 (1999) 55–82.
"""

from __future__ import annotations

import numpy as np

from diffsci.typing import ArrayLike

from ._mc import MCResult, stderr_of
from ._validate import check_bool, check_real, plain

__all__ = ["mc_lookback_price"]


def mc_lookback_price(*, spot: ArrayLike, strike: ArrayLike | None = None, expiry: ArrayLike,
                      rate: ArrayLike = 0.0, dividend: ArrayLike = 0.0, vol: ArrayLike,
                      is_call: bool = True, n_paths: int = 100_000, n_steps: int = 50,
                      seed: int = 0, antithetic: bool = True, bridge: bool = True) -> MCResult:
    """Monte Carlo price of a lookback written today, differentiable pathwise (first order).

    Units: ``expiry`` in years; ``rate``, ``dividend`` continuously compounded per year;
    ``vol`` per √year (0.2 = 20 %); derivatives are per unit of each input: theta is
    −∂/∂T per year, vega per 1.00 of volatility, rho per 1.00 of rate.

    Args:
        spot, expiry, vol: scalars > 0; rate, dividend: scalars.
        strike: None (floating strike: call ``S_T − min S``, put ``max S − S_T``) or K > 0
            (fixed strike: call ``max(max S − K, 0)``, put ``max(K − min S, 0)``).
        is_call: scalar bool.
        n_paths: paths (even with ``antithetic``, which mirrors the normals and keeps U).
        n_steps: grid steps (with ``bridge`` the estimate is unbiased for continuous monitoring
            at any n; without, the extremes run over the n + 1 grid values, t = 0 included).
        seed: NumPy generator seed.
        bridge: sample the extreme between grid points (continuous monitoring); False:
            discrete monitoring on the grid.

    Returns:
        :class:`MCResult` (``price`` traced when the inputs are; ``ci`` its 95 % interval).

    Raises:
        ValueError/TypeError: invalid inputs naming the argument.

    Example:
        >>> r = mc_lookback_price(spot=100.0, expiry=1.0, rate=0.05, vol=0.2, seed=1)
        >>> abs(float(r.price) - 17.2168) < 4 * r.stderr
        True
    """
    who = "mc_lookback_price"
    kw = dict(spot=spot, expiry=expiry, vol=vol, rate=rate, dividend=dividend)
    if strike is not None:
        kw["strike"] = strike
    for name, x in kw.items():
        check_real(who, name, x, low=0.0 if name not in ("rate", "dividend") else None)
        if np.shape(plain(x)) != ():
            raise ValueError(f"{who}: {name} must be a scalar, got shape {np.shape(plain(x))}")
    call = check_bool(who, "is_call", is_call)
    if call.shape != ():
        raise ValueError(f"{who}: is_call must be a scalar bool, got shape {call.shape}")
    half = check_paths(who, n_paths, n_steps, antithetic)
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((half, int(n_steps)))
    u = rng.random((half, int(n_steps)))
    if antithetic:
        z, u = np.concatenate([z, -z]), np.concatenate([u, u])
    n = int(n_steps)
    dt = expiry / n
    t = expiry * (np.arange(1, n + 1) / n)
    log_s = np.log(spot) + (rate - dividend - 0.5 * vol * vol) * t + vol * np.sqrt(dt) * np.cumsum(
        z, axis=1)
    prev = np.concatenate([np.log(spot) + 0.0 * log_s[:, :1], log_s[:, :-1]], axis=1)
    use_max = bool(call) != (strike is None)  # fixed call / floating put need the maximum
    sign = 1.0 if use_max else -1.0
    if bridge:
        width = np.sqrt((log_s - prev) ** 2 - 2.0 * vol * vol * dt * np.log(u))
        ext = 0.5 * (log_s + prev + sign * width)
    else:
        ext = np.concatenate([prev[:, :1], log_s], axis=1)
    ext = np.exp(np.max(ext, axis=1) if use_max else np.min(ext, axis=1))
    s_t = np.exp(log_s[:, -1])
    if strike is None:
        pay = s_t - ext if call else ext - s_t
    else:
        pay = np.maximum(sign * (ext - strike), 0.0)
    cash = np.exp(-rate * expiry) * pay
    samples = 0.5 * (cash[:half] + cash[half:]) if antithetic else cash
    se = stderr_of(samples, half)
    return MCResult(price=np.mean(samples), stderr=se, n_samples=half)


def check_paths(who, n_paths, n_steps, antithetic):
    """Validate the path counts; return the number of independent samples."""
    for name, x, lo in (("n_paths", n_paths, 2), ("n_steps", n_steps, 1)):
        if not (isinstance(x, int | np.integer) and x >= lo):
            raise ValueError(f"{who}: {name} must be an int >= {lo}, got {x!r}")
    if antithetic and n_paths % 2:
        raise ValueError(f"{who}: n_paths must be even with antithetic=True, got {n_paths}")
    return int(n_paths) // 2 if antithetic else int(n_paths)
