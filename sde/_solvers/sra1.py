"""SRA1: Rößler's stochastic Runge–Kutta method for additive noise, strong order 1.5.

Uses the increment ``I₁ = ΔW`` and ``I₁₀ = ∫ (W_u − W_t) du = h (ΔW/2 + H)`` with ``H`` the
space-time Lévy area of the step. The tableau is in :mod:`sde._tableaus.sra1`.

Reference: A. Rößler, SIAM J. Numer. Anal. 48(3), 2010, eq. (6.1) and Table 6.2.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._model import Calculus, Noise
from .._tableaus import sra1 as tableau
from ._base import AbstractSolver, Method


@dataclass(frozen=True)
class SRA1(AbstractSolver):
    """Rößler's SRA1 (2010, Table 6.2); additive noise, Itô = Stratonovich."""

    method = Method.SRA1
    strong_order = {Noise.ADDITIVE: 1.5}
    calculus = frozenset({Calculus.ITO, Calculus.STRATONOVICH})
    needs_levy_area = True

    def step(self, sde, t, dt, y, state, params, dW, H=None):
        i10 = dt * (0.5 * dW + H)
        g = [sde.g(t + c * dt, y, params) for c in tableau.C1]
        stages = []
        y1 = y
        for i in range(tableau.STAGES):
            h0 = y
            for j in range(i):
                h0 = (h0 + tableau.A0[i][j] * stages[j][1] * dt
                      + sde.g_prod(g[j], tableau.B0[i][j] * i10 / dt))
            f = sde.f(t + tableau.C0[i] * dt, h0, params)
            stages.append((h0, f))
            weight = tableau.BETA1[i] * dW + tableau.BETA2[i] * i10 / dt
            y1 = y1 + tableau.ALPHA[i] * f * dt + sde.g_prod(g[i], weight)
        return y1, None
