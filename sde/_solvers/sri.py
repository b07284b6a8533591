"""SRI: Rößler's stochastic Runge–Kutta method for Itô SDEs with diagonal or scalar noise,
strong order 1.5.

Needs, per step, ``ΔW`` and ``I₁₀ = ∫ (W_u − W_t) du = h (ΔW/2 + H)`` (``H`` the space-time Lévy
area); the other iterated integrals of a diagonal/scalar noise follow from ΔW. The tableau (SRI2,
deterministic order 3) and the stage equations are in :mod:`sde._tableaus.sri2`. Four drift and
four diffusion evaluations per step (f and g at each stage; each g reused by later stages).

Reference: A. Rößler, SIAM J. Numer. Anal. 48(3), 2010, §5, scheme (5.1), method SRI2.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._model import Calculus, Noise
from .._tableaus import sri2 as tableau
from ._base import AbstractSolver, Method


@dataclass(frozen=True)
class SRI(AbstractSolver):
    """Rößler's SRI2 (2010, §5); Itô, diagonal or scalar noise."""

    method = Method.SRI
    strong_order = {Noise.DIAGONAL: 1.5, Noise.SCALAR: 1.5}
    calculus = frozenset({Calculus.ITO})
    needs_levy_area = True

    def step(self, sde, t, dt, y, state, params, dW, H=None):
        sqrt_dt = math.sqrt(dt)
        i10 = dt * (0.5 * dW + H)
        i11 = 0.5 * (dW * dW - dt)
        i111 = (dW * dW * dW - 3.0 * dt * dW) / 6.0
        fs, gs = [], []
        y1 = y
        for s in range(tableau.STAGES):
            h0, h1 = y, y
            for j in range(s):
                if tableau.A0[s][j]:
                    h0 = h0 + tableau.A0[s][j] * fs[j] * dt
                if tableau.B0[s][j]:
                    h0 = h0 + gs[j] * (tableau.B0[s][j] * i10 / dt)
                if tableau.A1[s][j]:
                    h1 = h1 + tableau.A1[s][j] * fs[j] * dt
                if tableau.B1[s][j]:
                    h1 = h1 + tableau.B1[s][j] * sqrt_dt * gs[j]
            fs.append(sde.f(t + tableau.C0[s] * dt, h0, params))
            gs.append(sde.g(t + tableau.C1[s] * dt, h1, params))
            weight = (tableau.BETA1[s] * dW + tableau.BETA2[s] * i11 / sqrt_dt
                      + tableau.BETA3[s] * i10 / dt + tableau.BETA4[s] * i111 / dt)
            if tableau.ALPHA[s]:
                y1 = y1 + tableau.ALPHA[s] * fs[s] * dt
            y1 = y1 + gs[s] * weight
        return y1, None
