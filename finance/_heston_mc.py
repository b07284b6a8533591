"""Monte Carlo European options under Heston: full-truncation Euler and Andersen's QE scheme.

Full truncation (Lord, Koekkoek & van Dijk 2010, eq. (9) with f₁ = identity, f₂ = f₃ = (·)⁺):

    v⁺ = max(v, 0),  ln S ← ln S + (r − q − v⁺/2)Δt + √(v⁺Δt) Z₁,
    v ← v + κ(θ − v⁺)Δt + σ√(v⁺Δt) (ρZ₁ + √(1 − ρ²) Z₂).

Quadratic-exponential (Andersen 2008, §3.2.3–3.2.4 and eq. (33) for ln S with γ₁ = γ₂ = ½, no
martingale correction): the next variance is drawn from a moment-matched quadratic-normal
(ψ ≤ ψ_c = 1.5) or exponential-with-mass-at-zero (ψ > ψ_c) law, ``ψ = s²/m²`` with m, s² the exact
conditional mean and variance of v(t + Δt).

Full truncation runs in a Numba path kernel (and its numba.cuda twin) with a hand-written reverse
sweep per path (Giles & Glasserman 2006; ``finance/DERIVATIONS.md`` §HK), bound as one primitive:
``ds.grad`` of the price, or :func:`heston_mc_greeks`, gives all ten first-order sensitivities for
≈ 1.2–1.4× the price alone. QE is plain NumPy over the paths (a loop over time steps),
differentiated by diffsci pathwise (first order).

References:
    R. Lord, R. Koekkoek, D. van Dijk, "A comparison of biased simulation schemes for stochastic
    volatility models", Quant. Finance 10 (2010) 177–194. L. Andersen, "Simple and efficient
    simulation of the Heston stochastic volatility model", J. Comput. Finance 11(3) (2008) 1–42.
"""

from __future__ import annotations

import enum

import numpy as np

from diffsci.devices import check_device
from diffsci.extend import value_mask
from diffsci.random import check_seed
from diffsci.scipy.special import ndtr
from diffsci.typing import ArrayLike

from ._kernels import HESTON_MAX_STEPS
from ._mc import MCGreek, MCResult, greek_results, stderr_of
from ._model import HestonParams
from ._ops import McConfig, heston_samples
from ._validate import as_enum, check_bool, check_real, plain

__all__ = ["HESTON_GREEKS", "HestonScheme", "heston_mc_greeks", "heston_mc_price"]

#: Andersen's switching level between the quadratic and exponential variance draws.
PSI_C = 1.5


class HestonScheme(enum.Enum):
    """Discretisation of the Heston variance process."""

    FULL_TRUNCATION = "full_truncation"  # Lord et al. (2010)
    QE = "qe"                            # Andersen (2008)


def heston_mc_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike, rate: ArrayLike = 0.0,
                    dividend: ArrayLike = 0.0, params: HestonParams, is_call: bool = True,
                    scheme: HestonScheme | str = HestonScheme.QE, n_paths: int = 100_000,
                    n_steps: int = 50, seed: int = 0, antithetic: bool = True,
                    device: str = "cpu") -> MCResult:
    """Monte Carlo price of a European option under Heston.

    Units: ``expiry`` in years; ``rate``, ``dividend`` continuously compounded per year;
    variances (``theta``, ``v0``) per year; derivatives per unit of each input (theta is
    −∂/∂T per year).

    Args:
        spot, strike, expiry: scalars > 0; rate, dividend: scalars.
        params: :class:`HestonParams`.
        is_call: scalar bool.
        scheme: a :class:`HestonScheme`. ``FULL_TRUNCATION`` runs the Numba path kernel with its
            hand-written adjoint (``finance._kernels.heston_path_adjoint``, DERIVATIONS §HK;
            counter-based normals, so ``ds.grad`` of the price costs ≈ 1.2–1.4× the price);
            ``QE`` runs NumPy over the paths (NumPy generator), differentiated by diffsci.
        n_paths: paths (even with ``antithetic``: Z → −Z for both normals, so QE's uniform
            ``N(Z)`` → ``1 − N(Z)``).
        n_steps: time steps.
        seed: the seed (same seed, same paths).
        device: ``"cpu"`` or ``"cuda"`` (numba.cuda, one thread per path; FULL_TRUNCATION only).

    Returns:
        :class:`MCResult` (``price`` traced when the inputs are).

    Raises:
        ValueError/TypeError: invalid inputs naming the argument.

    Example:
        >>> p = HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
        >>> r = heston_mc_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, params=p)
        >>> abs(float(r.price) - 10.3942) < 4 * r.stderr
        True

    References:
        Lord et al. (2010), eq. (9); Andersen (2008), §3.2; Giles & Glasserman (2006).
    """
    who = "heston_mc_price"
    cfg = _check(who, locals())
    scheme = as_enum(who, "scheme", scheme, HestonScheme)
    if scheme is HestonScheme.FULL_TRUNCATION:
        samples = heston_samples(spot, strike, expiry, rate, dividend, params.kappa,
                                 params.theta, params.sigma, params.rho, params.v0, cfg)
        se = stderr_of(samples, cfg.n_samples)
        return MCResult(price=np.mean(samples), stderr=se, n_samples=cfg.n_samples)
    half = cfg.n_samples
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((2, int(n_steps), half))
    if antithetic:
        z = np.concatenate([z, -z], axis=2)
    step = _STEPS[scheme]
    dt = expiry / int(n_steps)
    log_s, v = np.log(spot) + 0.0 * z[0, 0], params.v0 + 0.0 * z[0, 0]
    for k in range(int(n_steps)):
        log_s, v = step(log_s, v, z[0, k], z[1, k], dt, rate - dividend, params)
    cash = np.exp(-rate * expiry) * np.maximum(cfg.w * (np.exp(log_s) - strike), 0.0)
    samples = 0.5 * (cash[:half] + cash[half:]) if antithetic else cash
    se = stderr_of(samples, half)
    return MCResult(price=np.mean(samples), stderr=se, n_samples=half)


#: heston_mc_greeks' names, in kernel order (theta is −∂/∂expiry; the Heston θ is ``theta_v``).
HESTON_GREEKS = ("price", "delta", "dual_delta", "theta", "rho", "dividend_rho", "d_kappa",
                 "d_theta_v", "d_sigma", "d_rho_corr", "d_v0")


def heston_mc_greeks(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike,
                     rate: ArrayLike = 0.0, dividend: ArrayLike = 0.0, params: HestonParams,
                     is_call: bool = True, n_paths: int = 100_000, n_steps: int = 50, seed: int = 0,
                     antithetic: bool = True, device: str = "cpu") -> dict[str, MCGreek]:
    """Price and all ten first-order sensitivities of a Heston European, with standard errors.

    Units: ``expiry`` in years; ``rate``, ``dividend`` continuously compounded per year;
    variances (``theta``, ``v0``) per year; derivatives per unit of each input (theta is
    −∂/∂T per year).

    Full-truncation Euler on the Numba (or numba.cuda) path kernel, one fused forward + reverse
    sweep per path (Giles & Glasserman 2006; DERIVATIONS §HK); the values equal ``ds.grad`` of
    ``heston_mc_price(..., scheme=FULL_TRUNCATION).price`` on the same seed.

    Returns:
        A dict ``name -> MCGreek`` (``(estimate, stderr)`` with ``ci``; per unit of each input,
        T in years, theta = −∂/∂T per year) over :data:`HESTON_GREEKS`: ``price``, ``delta``,
        ``dual_delta`` (∂/∂K), ``theta`` (−∂/∂T), ``rho`` (∂/∂r), ``dividend_rho`` (∂/∂q),
        ``d_kappa``, ``d_theta_v``, ``d_sigma``, ``d_rho_corr``, ``d_v0``.

    Example:
        >>> p = HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
        >>> g = heston_mc_greeks(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, params=p,
        ...                      n_paths=20_000, n_steps=20)
        >>> round(g["delta"][0], 2)
        0.69
    """
    cfg = _check("heston_mc_greeks", dict(locals(), scheme=HestonScheme.FULL_TRUNCATION))
    if cfg.device == "cuda":
        from . import _cuda as backend
    else:
        from . import _kernels as backend
    args = (spot, strike, expiry, rate, dividend, params.kappa, params.theta, params.sigma,
            params.rho, params.v0)
    samples, grads = backend.heston_samples_adjoint(
        np.uint64(cfg.seed), *(float(plain(a)) for a in args), cfg.w, cfg.n_steps,
        cfg.n_samples, cfg.antithetic)
    cols = np.column_stack([samples, grads])
    est = cols.mean(axis=0)
    se = cols.std(axis=0, ddof=1) / np.sqrt(cfg.n_samples)
    sign = np.ones(len(HESTON_GREEKS))
    sign[3] = -1.0
    return greek_results(HESTON_GREEKS, est, se, cfg.n_samples, sign)


def _check(who, kw):
    """Validate the keyword arguments; return the kernel's McConfig."""
    for name in ("spot", "strike", "expiry", "rate", "dividend"):
        x = kw[name]
        check_real(who, name, x, low=0.0 if name not in ("rate", "dividend") else None)
        if np.shape(plain(x)) != ():
            raise ValueError(f"{who}: {name} must be a scalar, got shape {np.shape(plain(x))}")
    params, scheme = kw["params"], kw["scheme"]
    if not isinstance(params, HestonParams):
        raise TypeError(f"{who}: params must be a HestonParams, got {type(params).__name__}")
    for f in ("kappa", "theta", "sigma", "rho", "v0"):
        if np.shape(plain(getattr(params, f))) != ():
            raise ValueError(f"{who}: params.{f} must be a scalar, got shape "
                             f"{np.shape(plain(getattr(params, f)))}")
    scheme = as_enum(who, "scheme", scheme, HestonScheme)
    call = check_bool(who, "is_call", kw["is_call"])
    if call.shape != ():
        raise ValueError(f"{who}: is_call must be a scalar bool, got shape {call.shape}")
    n_paths, n_steps, antithetic = kw["n_paths"], kw["n_steps"], bool(kw["antithetic"])
    for name, x, lo in (("n_paths", n_paths, 2), ("n_steps", n_steps, 1)):
        if not (isinstance(x, int | np.integer) and x >= lo):
            raise ValueError(f"{who}: {name} must be an int >= {lo}, got {x!r}")
    if antithetic and n_paths % 2:
        raise ValueError(f"{who}: n_paths must be even with antithetic=True, got {n_paths}")
    device = check_device(kw["device"])
    if device == "cuda" and scheme is not HestonScheme.FULL_TRUNCATION:
        raise ValueError(f"{who}: device='cuda' needs scheme=HestonScheme.FULL_TRUNCATION "
                         f"(the QE scheme runs in NumPy), got {scheme!r}")
    if device == "cuda" and n_steps > HESTON_MAX_STEPS:
        raise ValueError(f"{who}: n_steps must be <= {HESTON_MAX_STEPS} with device='cuda' (the "
                         f"adjoint's per-thread scratch), got {n_steps}")
    return McConfig(w=1.0 if call else -1.0, product=0, n_steps=int(n_steps),
                    n_samples=int(n_paths) // 2 if antithetic else int(n_paths),
                    antithetic=antithetic, smoothing=0.0, seed=check_seed(kw["seed"], who),
                    device=device)


def _sqrt0(x):
    """√x for x ≥ 0 with derivative 0 (not ∞ · 0 = NaN) where x = 0."""
    pos = value_mask(np.greater, x, 0)  # recomputed under diffsci.jit
    return np.where(pos, np.sqrt(np.where(pos, x, 1.0)), 0.0)


def _full_truncation(log_s, v, z1, z2, dt, drift, p):
    vp = np.maximum(v, 0.0)
    sq = _sqrt0(vp * dt)
    log_s = log_s + (drift - 0.5 * vp) * dt + sq * z1
    v = v + p.kappa * (p.theta - vp) * dt + p.sigma * sq * (p.rho * z1
                                                           + np.sqrt(1.0 - p.rho**2) * z2)
    return log_s, v


def _qe(log_s, v, z1, z2, dt, drift, p):
    """Andersen's QE step: ``z1`` drives the variance draw, ``z2`` the independent log-price."""
    e = np.exp(-p.kappa * dt)
    m = p.theta + (v - p.theta) * e
    s2 = (v * p.sigma**2 * e / p.kappa * (1.0 - e)
          + p.theta * p.sigma**2 / (2.0 * p.kappa) * (1.0 - e) ** 2)
    psi = s2 / (m * m)
    quad = value_mask(np.less_equal, psi, PSI_C)  # the QE branch, recomputed under jit
    # quadratic: v' = a (b + Z)², b² = 2/ψ − 1 + √(2/ψ) √(2/ψ − 1)
    psi_q = np.where(quad, psi, 1.0)
    b2 = 2.0 / psi_q - 1.0 + np.sqrt(2.0 / psi_q) * np.sqrt(2.0 / psi_q - 1.0)
    a = m / (1.0 + b2)
    v_quad = a * (np.sqrt(b2) + z1) ** 2
    # exponential: P(v' = 0) = pm, else Exp with rate β; inverse CDF of the uniform ndtr(z1)
    psi_e = np.where(quad, 2.0, psi)
    pm = (psi_e - 1.0) / (psi_e + 1.0)
    beta = (1.0 - pm) / m
    uu = ndtr(z1)  # the variance draw's uniform is the same normal's CDF (antithetic: U → 1 − U)
    jump = value_mask(np.greater, uu, pm)
    safe = np.where(jump, (1.0 - pm) / (1.0 - uu), 1.0)
    v_exp = np.where(jump, np.log(safe) / beta, 0.0)
    v_new = np.where(quad, v_quad, v_exp)
    # log-price, Andersen eq. (33), γ₁ = γ₂ = ½
    k0 = -p.rho * p.kappa * p.theta / p.sigma * dt
    k1 = 0.5 * dt * (p.kappa * p.rho / p.sigma - 0.5) - p.rho / p.sigma
    k2 = 0.5 * dt * (p.kappa * p.rho / p.sigma - 0.5) + p.rho / p.sigma
    k3 = k4 = 0.5 * dt * (1.0 - p.rho**2)
    log_s = (log_s + drift * dt + k0 + k1 * v + k2 * v_new
             + _sqrt0(k3 * v + k4 * v_new) * z2)
    return log_s, v_new


_STEPS = {HestonScheme.FULL_TRUNCATION: _full_truncation, HestonScheme.QE: _qe}
