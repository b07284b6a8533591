"""Monte Carlo European options under Merton's jump-diffusion, with pathwise + likelihood-ratio
Greeks.

Exact simulation on the grid ``t_k = kT/n`` (Glasserman 2003, §3.5.1): per step,
``N_k ~ Poisson(λΔt)`` jumps with log-sizes ``N(μ_J, δ²)``, whose sum is ``N_k μ_J + δ√N_k Z'_k``,
and

    ln S_{k+1} = ln S_k + (r − q − λκ − σ²/2)Δt + σ√Δt Z_k + N_k μ_J + δ√N_k Z'_k,
    κ = e^{μ_J + δ²/2} − 1.

Greeks. Every input but λ enters through this smooth map and the Lipschitz payoff, so diffsci's
pathwise derivative is unbiased (Glasserman 2003, §7.2). λ also moves the *law* of the integer
counts N_k, to which a pathwise derivative is blind; its likelihood-ratio term (score
``∂/∂λ ln P(N) = Σ_k (N_k/λ − Δt) = N/λ − T``, Glasserman 2003, §7.3) is added with the
"magic box" ``Y · (s − stop_gradient(s))``, ``s = N ln λ − λT``: zero in value, so the price is
unchanged, and its gradient is ``Y · ∂s/∂λ``. ∂/∂λ is then the sum of the pathwise term (through
the compensator λκ) and the LR term — unbiased (checked against AD of the series in the tests).

References:
    R. C. Merton, J. Financ. Econ. 3 (1976) 125–144. P. Glasserman, *Monte Carlo Methods in
    Financial Engineering* (2003), §3.5.1 (jump-diffusions), §7.2 (pathwise), §7.3 (LR).
    J. Foerster et al., "DiCE: the infinitely differentiable Monte Carlo estimator", ICML 2018
    (the magic-box form of a score-function term).
"""

from __future__ import annotations

import numpy as np

import diffsci as ds
from diffsci.extend import observed, value_mask
from diffsci.typing import ArrayLike

from ._lookback_mc import check_paths
from ._mc import MCResult, stderr_of
from ._validate import check_bool, check_real, plain

__all__ = ["merton_mc_price"]


def merton_mc_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike, rate: ArrayLike = 0.0,
                    dividend: ArrayLike = 0.0, vol: ArrayLike, jump_intensity: ArrayLike,
                    jump_mean: ArrayLike, jump_vol: ArrayLike, is_call: bool = True,
                    n_paths: int = 100_000, n_steps: int = 1, seed: int = 0,
                    antithetic: bool = True) -> MCResult:
    """Monte Carlo price of a European option under Merton's jump-diffusion (differentiable).

    Units: ``expiry`` in years; ``rate``, ``dividend`` continuously compounded per year;
    ``vol`` per √year (0.2 = 20 %); derivatives are per unit of each input: theta is
    −∂/∂T per year, vega per 1.00 of volatility, rho per 1.00 of rate.

    Args:
        spot, strike, expiry, vol: scalars > 0; rate, dividend: scalars.
        jump_intensity: λ ≥ 0 (jumps per year); jump_mean: μ_J; jump_vol: δ ≥ 0 (of ln J).
        is_call: scalar bool.
        n_paths: paths (even with ``antithetic``: both normals mirrored, the counts kept).
        n_steps: grid steps (the European price does not depend on it: the simulation is exact).
        seed: NumPy generator seed.

    Returns:
        :class:`MCResult`; ``ds.grad`` of ``.price`` gives pathwise Greeks plus the
        likelihood-ratio term for λ (module docstring).

    Raises:
        ValueError/TypeError: invalid inputs naming the argument.

    Example:
        >>> r = merton_mc_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2,
        ...                     jump_intensity=0.5, jump_mean=-0.1, jump_vol=0.15, seed=1)
        >>> abs(float(r.price) - 11.6617) < 4 * r.stderr
        True
    """
    who = "merton_mc_price"
    kw = dict(spot=spot, strike=strike, expiry=expiry, vol=vol, rate=rate, dividend=dividend,
              jump_intensity=jump_intensity, jump_mean=jump_mean, jump_vol=jump_vol)
    lows = dict(spot=0.0, strike=0.0, expiry=0.0, vol=0.0, jump_intensity=0.0, jump_vol=0.0)
    for name, x in kw.items():
        check_real(who, name, x, low=lows.get(name),
                   strict=name not in ("jump_intensity", "jump_vol"))
        if np.shape(plain(x)) != ():
            raise ValueError(f"{who}: {name} must be a scalar, got shape {np.shape(plain(x))}")
    call = check_bool(who, "is_call", is_call)
    if call.shape != ():
        raise ValueError(f"{who}: is_call must be a scalar bool, got shape {call.shape}")
    half = check_paths(who, n_paths, n_steps, antithetic)
    n = int(n_steps)
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((2, half, n))
    # the counts depend on λT: drawn again by the compiled code under diffsci.jit, from the
    # generator's state after z (the same draws as here)
    counts = value_mask(_poisson_counts, jump_intensity, expiry, rng.bit_generator.state, half, n)
    if antithetic:
        z, counts = np.concatenate([z, -z], axis=1), np.concatenate([counts, counts])
    dt = expiry / n
    kappa = np.exp(jump_mean + 0.5 * jump_vol * jump_vol) - 1.0
    drift = (rate - dividend - jump_intensity * kappa - 0.5 * vol * vol) * expiry
    log_s = (np.log(spot) + drift + vol * np.sqrt(dt) * np.sum(z[0], axis=1)
             + jump_mean * counts.sum(axis=1)
             + jump_vol * np.sum(np.sqrt(counts) * z[1], axis=1))
    w = 1.0 if call else -1.0
    cash = np.exp(-rate * expiry) * np.maximum(w * (np.exp(log_s) - strike), 0.0)
    # the score of the Poisson counts in λ, in magic-box form (value unchanged); λ > 0 a guard
    if observed(_positive, jump_intensity):
        score = counts.sum(axis=1) * np.log(jump_intensity) - jump_intensity * expiry
        cash = cash + ds.stop_gradient(cash) * (score - ds.stop_gradient(score))
    samples = 0.5 * (cash[:half] + cash[half:]) if antithetic else cash
    return MCResult(price=np.mean(samples), stderr=stderr_of(samples, half), n_samples=half)


def _poisson_counts(lam, expiry, state, half, n):
    rng = np.random.Generator(np.random.PCG64())
    rng.bit_generator.state = state
    return rng.poisson(float(lam) * float(expiry) / n, size=(half, n)).astype(np.float64)


def _positive(x):
    return bool(float(x) > 0.0)
