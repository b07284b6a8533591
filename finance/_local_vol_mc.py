"""Monte Carlo under a local-volatility model ``dS/S = (r − q) dt + σ(t, S) dW``.

Log-Euler on the grid ``t_k = kT/n`` (Glasserman 2003, §6.1): with ``σ_k = σ(t_k, S_k)``,

    ln S_{k+1} = ln S_k + (r − q − σ_k²/2)Δt + σ_k √Δt Z_k,

exact when σ depends on t only and is constant on each step (then ln S_T is Gaussian with variance
``Σ σ_k² Δt``: Black–Scholes with the root-mean-square vol, a test). The surface is any
NumPy-written callable ``σ(t, S)`` (vectorised over the paths' S) or a :class:`ParametricLocalVol`;
the whole simulation is NumPy over diffsci, so ``ds.grad`` of the price gives pathwise Greeks in the
spot, rates and every parameter of the surface (through the callable's closure or the dataclass
fields). The price carries the Euler scheme's O(Δt) weak bias when σ depends on S.

References:
    B. Dupire, "Pricing with a smile", Risk 7 (1994) 18–20; E. Derman, I. Kani, "Riding on a
    smile", Risk 7 (1994) 32–39. P. Glasserman, *Monte Carlo Methods in Financial Engineering*
    (2003), §6.1 (Euler), §7.2 (pathwise).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import diffsci as ds
from diffsci.extend import observed
from diffsci.typing import Array, ArrayLike

from ._lookback_mc import check_paths
from ._mc import MCResult, stderr_of
from ._validate import check_bool, check_real, plain

__all__ = ["DupireLocalVol", "ParametricLocalVol", "local_vol_mc_price"]


@dataclass(frozen=True)
class ParametricLocalVol:
    """A smooth parametric local-vol surface (a pytree: its fields are differentiable).

    With log-moneyness ``x = ln(S/ref)``:

        σ(t, S) = √(σ_atm² e^{−2λt} + σ_∞² (1 − e^{−2λt})) · √(1 + skew·x + smile·x²)

    (λ = ``decay``),

    clipped below at ``floor`` — an ATM term structure relaxing from σ_atm to σ_∞ with rate
    ``decay``, times a quadratic smile in log-moneyness. Flat: ``skew = smile = 0``,
    ``σ_∞ = σ_atm``.

    Attributes:
        atm_vol, long_vol: σ_atm, σ_∞ > 0; decay ≥ 0; skew, smile: the smile's coefficients;
        ref_spot: the moneyness reference > 0; floor: the smallest vol returned (> 0).
    """

    atm_vol: float
    long_vol: float
    decay: float = 0.0
    skew: float = 0.0
    smile: float = 0.0
    ref_spot: float = 100.0
    floor: float = 0.01

    def __post_init__(self):
        who = "ParametricLocalVol"
        for name in ("atm_vol", "long_vol", "ref_spot", "floor"):
            check_real(who, name, getattr(self, name), low=0.0)
        check_real(who, "decay", self.decay, low=0.0, strict=False)
        check_real(who, "skew", self.skew)
        check_real(who, "smile", self.smile)

    def __call__(self, t, s):
        e = np.exp(-2.0 * self.decay * t)
        term = np.sqrt(self.atm_vol**2 * e + self.long_vol**2 * (1.0 - e))
        x = np.log(s / self.ref_spot)
        shape = np.maximum(1.0 + self.skew * x + self.smile * x * x, 0.0)
        return np.maximum(term * np.sqrt(shape + 1e-300), self.floor)


@dataclass(frozen=True)
class DupireLocalVol:
    """Dupire's local volatility of an implied-volatility surface, its derivatives by AD.

    With total implied variance ``w(T, y) = σ_imp(T, K)² T`` in log-moneyness ``y = ln(K/F_T)``,
    ``F_T = S e^{(r−q)T}`` (Gatheral, *The Volatility Surface*, 2006, eq. 1.10):

        σ_loc²(T, K) = w_T / (1 − (y/w) w_y + ¼(−¼ − 1/w + y²/w²) w_y² + ½ w_yy),

    ``w_T`` at fixed y. The three derivatives are forward-mode AD (``ds.jvp``, nested for
    ``w_yy``) of the user's surface, so it need only be written in NumPy; they stay differentiable,
    so pathwise Greeks through :func:`local_vol_mc_price` include the surface's parameters.

    Attributes:
        implied_vol: callable ``σ_imp(expiry, strike)`` (vectorised over strike), NumPy code.
        spot, rate, dividend: today's S (> 0), r and q.
        min_time: the surface is read at ``max(t, min_time)`` (the local vol at t = 0 is its
            limit).

    Raises (on call):
        ValueError: calendar (``w_T ≤ 0``) or butterfly (denominator ≤ 0) arbitrage where the
            paths go, naming t and the strike.

    Example:
        >>> lv = DupireLocalVol(implied_vol=lambda t, k: 0.2 + 0.0 * k, spot=100.0)
        >>> round(float(lv(0.5, np.array([90.0]))[0]), 12)
        0.2
    """

    implied_vol: Callable[[float, ArrayLike], Any] = field(metadata={"static": True})
    spot: float = 100.0
    rate: float = 0.0
    dividend: float = 0.0
    min_time: float = 1e-4

    def __post_init__(self):
        if not callable(self.implied_vol):
            raise TypeError("DupireLocalVol: implied_vol must be a callable sigma(expiry, "
                            f"strike), got {type(self.implied_vol).__name__}")
        check_real("DupireLocalVol", "spot", self.spot, low=0.0)
        check_real("DupireLocalVol", "rate", self.rate)
        check_real("DupireLocalVol", "dividend", self.dividend)
        check_real("DupireLocalVol", "min_time", self.min_time, low=0.0)

    def total_variance(self, T: ArrayLike, y: ArrayLike) -> Array:
        """``w(T, y) = σ_imp(T, F_T e^y)² T``."""
        fwd = self.spot * np.exp((self.rate - self.dividend) * T)
        return self.implied_vol(T, fwd * np.exp(y)) ** 2 * T

    def __call__(self, t, s):
        T = np.maximum(t, self.min_time)  # stays traced when t is (theta through σ_loc)
        y = np.log(s / self.spot) - (self.rate - self.dividend) * T
        ones = np.ones(np.shape(plain(y)))
        w, w_t = ds.jvp(lambda tt: self.total_variance(tt, y), (T,), (1.0,))

        def dw_dy(yy):
            return ds.jvp(lambda z: self.total_variance(T, z), (yy,), (ones,))[1]

        w_y, w_yy = ds.jvp(dw_dy, (y,), (ones,))
        den = (1.0 - y / w * w_y + 0.25 * (-0.25 - 1.0 / w + y * y / (w * w)) * w_y * w_y
               + 0.5 * w_yy)
        for name, v in (("calendar arbitrage: dw/dT <= 0", w_t), ("butterfly arbitrage: "
                                                                  "Dupire denominator <= 0", den)):
            bad = observed(lambda a: a <= 0, v)  # a guard under diffsci.jit
            if np.any(bad):
                k = np.broadcast_to(plain(s), bad.shape)[bad].flat[0]
                raise ValueError(f"DupireLocalVol: {name} in the implied-vol surface at t = "
                                 f"{float(plain(T)):g}, spot level {k:g}")
        return np.sqrt(w_t / den)


def local_vol_mc_price(*, spot: ArrayLike, strike: ArrayLike, expiry: ArrayLike,
                       rate: ArrayLike = 0.0, dividend: ArrayLike = 0.0,
                       local_vol: Callable[[float, np.ndarray], Any], is_call: bool = True,
                       n_paths: int = 100_000, n_steps: int = 50, seed: int = 0,
                       antithetic: bool = True) -> MCResult:
    """Monte Carlo price of a European option under local volatility (differentiable pathwise).

    Units: ``expiry`` in years; ``rate``, ``dividend`` continuously compounded per year;
    σ(t, S) per √year; derivatives are per unit of each input: theta is
    −∂/∂T per year, vega per 1.00 of volatility, rho per 1.00 of rate.

    Args:
        spot, strike, expiry: scalars > 0; rate, dividend: scalars.
        local_vol: a callable ``σ(t, S)`` (t a scalar, S an array of spots; NumPy code, so it is
            differentiable) returning positive vols, e.g. a :class:`ParametricLocalVol` or the
            :class:`DupireLocalVol` of an implied-vol surface.
        is_call: scalar bool.
        n_paths: paths (even with ``antithetic``). n_steps: Euler steps. seed: NumPy seed.

    Returns:
        :class:`MCResult`.

    Raises:
        ValueError/TypeError: invalid inputs naming the argument; ``local_vol`` returning a
        non-positive or non-finite vol (the message gives t and the value).

    Example:
        >>> lv = ParametricLocalVol(atm_vol=0.2, long_vol=0.2)
        >>> r = local_vol_mc_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05,
        ...                        local_vol=lv, seed=1)
        >>> abs(float(r.price) - 10.4506) < 4 * r.stderr
        True
    """
    who = "local_vol_mc_price"
    for name, x in dict(spot=spot, strike=strike, expiry=expiry, rate=rate,
                        dividend=dividend).items():
        check_real(who, name, x, low=0.0 if name not in ("rate", "dividend") else None)
        if np.shape(plain(x)) != ():
            raise ValueError(f"{who}: {name} must be a scalar, got shape {np.shape(plain(x))}")
    if not callable(local_vol):
        raise TypeError(f"{who}: local_vol must be a callable sigma(t, S), got "
                        f"{type(local_vol).__name__}")
    call = check_bool(who, "is_call", is_call)
    if call.shape != ():
        raise ValueError(f"{who}: is_call must be a scalar bool, got shape {call.shape}")
    half = check_paths(who, n_paths, n_steps, antithetic)
    n = int(n_steps)
    z = np.random.default_rng(seed).standard_normal((n, half))
    if antithetic:
        z = np.concatenate([z, -z], axis=1)
    dt = expiry / n
    log_s = np.log(spot) + np.zeros(z.shape[1])
    for k in range(n):
        sig = local_vol(k * dt, np.exp(log_s))
        bad = observed(_bad_vol, sig)  # a guard under diffsci.jit
        if bad is not None:
            raise ValueError(f"{who}: local_vol must return finite vols > 0, got {bad!r} at "
                             f"t = {float(plain(k * dt)):g}")
        log_s = log_s + (rate - dividend - 0.5 * sig * sig) * dt + sig * np.sqrt(dt) * z[k]
    w = 1.0 if call else -1.0
    cash = np.exp(-rate * expiry) * np.maximum(w * (np.exp(log_s) - strike), 0.0)
    samples = 0.5 * (cash[:half] + cash[half:]) if antithetic else cash
    se = stderr_of(samples, half)
    return MCResult(price=np.mean(samples), stderr=se, n_samples=half)


def _bad_vol(v):
    """The first vol that is not finite and > 0, else None."""
    v = np.asarray(v, dtype=np.float64)
    ok = np.isfinite(v) & (v > 0)
    return None if np.all(ok) else v[~ok].flat[0]
