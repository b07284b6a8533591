"""Heun's method (stochastic trapezoidal predictor–corrector) for Stratonovich SDEs.

``ỹ = y + f dt + g·dW``; ``y' = y + (f + f̃) dt / 2 + (g + g̃)·dW / 2``. Strong order 0.5 for
general noise, 1.0 for commutative noise (scalar, additive, diagonal with ``g_i(y_i)``).

Reference: Kloeden & Platen 1992, §15.1 (eq. 15.1.2, the Heun method); W. Rümelin,
"Numerical treatment of stochastic differential equations", SIAM J. Numer. Anal. 19 (1982).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._model import Calculus, Noise
from ._base import AbstractSolver, Method


@dataclass(frozen=True)
class Heun(AbstractSolver):
    """Stratonovich Heun (Kloeden & Platen 1992, eq. 15.1.2)."""

    method = Method.HEUN
    strong_order = {Noise.DIAGONAL: 1.0, Noise.SCALAR: 1.0, Noise.ADDITIVE: 1.0,
                    Noise.GENERAL: 0.5}
    calculus = frozenset({Calculus.STRATONOVICH})

    def step(self, sde, t, dt, y, state, params, dW, H=None):
        f0 = sde.f(t, y, params)
        gdw0 = sde.g_prod(sde.g(t, y, params), dW)
        y_pred = y + f0 * dt + gdw0
        f1 = sde.f(t + dt, y_pred, params)
        gdw1 = sde.g_prod(sde.g(t + dt, y_pred, params), dW)
        return y + 0.5 * ((f0 + f1) * dt + gdw0 + gdw1), None
