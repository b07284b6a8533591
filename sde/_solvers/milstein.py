"""Milstein's method, derivative-free (Runge–Kutta) form, for diagonal and scalar noise.

``ŷ = y + f dt + g √dt`` (Itô) or ``y + g √dt`` (Stratonovich);
``y' = y + f dt + g dW + (g(ŷ) − g(y)) / √dt · I``, with ``I = (dW² − dt)/2`` (Itô) or ``dW²/2``
(Stratonovich). Strong order 1.0 when each ``g_i`` depends on ``y_i`` only (commutative noise);
a diagonal diffusion that couples dimensions needs Lévy areas this scheme does not draw.

Reference: Kloeden & Platen 1992, §11.1, eq. (11.1.5) (the derivative-free Milstein scheme).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._model import Calculus, Noise
from ._base import AbstractSolver, Method


@dataclass(frozen=True)
class Milstein(AbstractSolver):
    """Derivative-free Milstein (Kloeden & Platen 1992, eq. 11.1.5)."""

    method = Method.MILSTEIN
    strong_order = {Noise.DIAGONAL: 1.0, Noise.SCALAR: 1.0}
    calculus = frozenset({Calculus.ITO, Calculus.STRATONOVICH})

    def step(self, sde, t, dt, y, state, params, dW, H=None):
        sqrt_dt = math.sqrt(dt)
        f = sde.f(t, y, params)
        g = sde.g(t, y, params)
        if sde.calculus is Calculus.ITO:
            y_hat = y + f * dt + g * sqrt_dt
            iterated = 0.5 * (dW * dW - dt)
        else:
            y_hat = y + g * sqrt_dt
            iterated = 0.5 * dW * dW
        g_hat = sde.g(t, y_hat, params)
        return y + f * dt + g * dW + (g_hat - g) * (iterated / sqrt_dt), None
