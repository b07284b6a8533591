"""Frozen dataclasses and enums describing finance problems (pytrees for diffsci).

* :class:`Frequency` — how a bond pays its coupons.
* :class:`ForwardCurve` — a piecewise-constant instantaneous-forward yield curve; its
  ``forwards`` are the differentiable leaves, its pillar ``times`` are static.
* :class:`HestonParams` — the five Heston parameters, one differentiable leaf each.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from diffsci.extend import observed
from diffsci.typing import Array, ArrayLike

from ._validate import as_real, check_real, plain

__all__ = ["ForwardCurve", "Frequency", "HestonParams"]

_HESTON_FIELDS = ("kappa", "theta", "sigma", "rho", "v0")


class Frequency(enum.IntEnum):
    """Coupons per year; ``AT_MATURITY`` is one payment of principal plus simple interest."""

    AT_MATURITY = 0
    ANNUAL = 1
    SEMIANNUAL = 2
    QUARTERLY = 4


@dataclass(frozen=True)
class ForwardCurve:
    """Piecewise-constant forward rates: ``f(t) = forwards[i]`` on ``(times[i−1], times[i]]``.

    ``times[-1]`` onward the last forward extends flat; ``times[-1]`` is the last pillar. The
    discount factor is ``D(t) = exp(−∫₀ᵗ f)`` (continuous compounding). Times are in years,
    forwards continuously compounded per year.

    Attributes:
        times: increasing pillar times > 0 (years), static (not differentiated).
        forwards: one forward per pillar interval (differentiable).

    Example:
        >>> c = ForwardCurve(times=np.array([1.0, 2.0]), forwards=np.array([0.02, 0.03]))
        >>> round(float(c.discount(2.0)), 6)
        0.951229
    """

    times: np.ndarray = field(metadata={"static": True})
    forwards: np.ndarray

    def __post_init__(self):
        check_real("ForwardCurve", "times", self.times, low=0.0)
        t = np.asarray(self.times, dtype=np.float64)
        if t.ndim != 1 or t.size == 0 or not (np.all(t > 0) and np.all(np.diff(t) > 0)):
            raise ValueError(f"ForwardCurve: times must be increasing and > 0, got {t}")
        object.__setattr__(self, "forwards", as_real(self.forwards))
        if np.shape(plain(self.forwards)) != t.shape:
            raise ValueError(f"ForwardCurve: forwards must have shape {t.shape} (one per pillar), "
                             f"got {np.shape(plain(self.forwards))}")
        check_real("ForwardCurve", "forwards", self.forwards)
        object.__setattr__(self, "times", t)

    def overlap(self, t: ArrayLike) -> Array:
        """The plain matrix ``W[k, i] = |(0, t_k] ∩ (times[i−1], times[i]]|`` (last one open)."""
        check_real("ForwardCurve.overlap", "t", t, low=0.0, strict=False)
        t = np.atleast_1d(np.asarray(t, dtype=np.float64))
        left = np.concatenate([[0.0], self.times[:-1]])
        right = np.concatenate([self.times[:-1], [np.inf]])
        return np.clip(np.minimum(t[:, None], right) - left, 0.0, None)

    def discount(self, t: ArrayLike) -> Array:
        """Discount factors ``D(t)`` for times ``t ≥ 0`` in years (shape of ``t``).

        Raises:
            TypeError: a bool or non-numeric ``t``.
            ValueError: a negative or non-finite ``t`` (naming it; D(−1) is not 1).
        """
        check_real("ForwardCurve.discount", "t", t, low=0.0, strict=False)
        shape = np.shape(t)
        return np.reshape(np.exp(-(self.overlap(t) @ self.forwards)), shape)

    def zero_rate(self, t: ArrayLike) -> Array:
        """Continuously compounded zero rates ``−ln D(t)/t`` (per year) for ``t > 0`` (years).

        Raises:
            TypeError: a bool or non-numeric ``t``.
            ValueError: ``t ≤ 0`` or non-finite (naming it).
        """
        check_real("ForwardCurve.zero_rate", "t", t, low=0.0)
        t = np.asarray(t, dtype=np.float64)
        return np.reshape(self.overlap(t) @ self.forwards, t.shape) / t

    def forward(self, t: ArrayLike) -> Array:
        """The instantaneous forward ``f(t)`` (at a pillar, ``f(times[i]) = forwards[i]``).

        Raises:
            TypeError: a bool or non-numeric ``t``.
            ValueError: ``t < 0`` or non-finite (naming it).
        """
        check_real("ForwardCurve.forward", "t", t, low=0.0, strict=False)
        t = np.asarray(t, dtype=np.float64)
        i = np.minimum(np.searchsorted(self.times, t, side="left"), self.times.size - 1)
        return self.forwards[i]


@dataclass(frozen=True)
class HestonParams:
    """Heston (1993) parameters: ``dv = κ(θ − v)dt + σ√v dW₂``, ``d⟨W₁, W₂⟩ = ρ dt``, ``v(0) = v0``.

    Fields may be arrays (broadcast with the pricer's other arguments, e.g. a batch of parameter
    sets in :func:`heston_price`); lists and tuples become arrays, bools are refused. Units:
    per year (κ per year, θ and v₀ variances per year, σ per √year of variance).

    Attributes:
        kappa: mean-reversion speed κ > 0.
        theta: long-run variance θ > 0.
        sigma: vol of variance σ > 0.
        rho: correlation ρ ∈ (−1, 1).
        v0: initial variance > 0.
    """

    kappa: float
    theta: float
    sigma: float
    rho: float
    v0: float

    def __post_init__(self):
        for name in _HESTON_FIELDS:
            object.__setattr__(self, name, as_real(getattr(self, name)))
        for name in ("kappa", "theta", "sigma", "v0"):
            check_real("HestonParams", name, getattr(self, name), low=0.0)
        check_real("HestonParams", "rho", self.rho, low=-1.0, high=1.0)
        edge = observed(lambda r: np.abs(r) == 1.0, self.rho)  # a guard under diffsci.jit
        if np.any(edge):
            raise ValueError(f"HestonParams: rho must be in (-1, 1), got "
                             f"{float(np.asarray(plain(self.rho))[edge].flat[0])}")
