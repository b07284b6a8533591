"""Euler–Maruyama: ``y' = y + f(t, y) dt + g(t, y)·dW``.

Strong order 0.5 (1.0 for additive noise). Itô only.

Reference: P. E. Kloeden and E. Platen, *Numerical Solution of Stochastic Differential Equations*,
Springer 1992, §9.1 and §10.2 (eq. 10.2.1).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._fused import combine
from .._model import Calculus, Noise
from ._base import AbstractSolver, Method


@dataclass(frozen=True)
class Euler(AbstractSolver):
    """Euler–Maruyama (Kloeden & Platen 1992, eq. 10.2.1)."""

    method = Method.EULER
    strong_order = {Noise.DIAGONAL: 0.5, Noise.SCALAR: 0.5, Noise.GENERAL: 0.5,
                    Noise.ADDITIVE: 1.0}
    calculus = frozenset({Calculus.ITO})

    def step(self, sde, t, dt, y, state, params, dW, H=None):
        f = sde.f(t, y, params)
        g = sde.g(t, y, params)
        return combine(sde, y, ((dt, f),), ((g, dW),)), None
