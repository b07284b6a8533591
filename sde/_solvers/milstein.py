"""Milstein's method, derivative-free (Runge–Kutta) form, for diagonal and scalar noise.

``ŷ = y + f dt + g √dt`` (Itô) or ``y + g √dt`` (Stratonovich);
``y' = y + f dt + g dW + (g(ŷ) − g(y)) / √dt · I``, with ``I = (dW² − dt)/2`` (Itô) or ``dW²/2``
(Stratonovich). Strong order 1.0 when each ``g_i`` depends on ``y_i`` only (commutative noise);
a diagonal diffusion that couples dimensions needs Lévy areas this scheme does not draw.

Embedded pair: the Euler–Maruyama step ``y + f dt + g dW`` uses the same stages, and the
Milstein–Euler difference ``(g(ŷ) − g) I/√dt ≈ g g′ I₁₁`` is the local error of Euler's
diffusion term (size O(h)); a drift term ``(f(t + dt, y') − f) dt/2`` (Lamba 2003's
trapezoidal-vs-rectangle estimate, one more drift evaluation) covers drift-dominated problems,
where the stochastic term alone would let steps grow unchecked. ``error_order = 1``.

References: Kloeden & Platen 1992, §11.1, eq. (11.1.5) (the derivative-free Milstein scheme);
H. Lamba, J. Comput. Appl. Math. 161 (2003), §2 (the Euler–Milstein embedded estimate with
a drift error term).
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
    embedded = True
    error_order = 1.0

    @staticmethod
    def _stages(sde, t, dt, y, params, dW):
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
        correction = (g_hat - g) * (iterated / sqrt_dt)
        return y + f * dt + g * dW + correction, f, correction

    def step(self, sde, t, dt, y, state, params, dW, H=None):
        return self._stages(sde, t, dt, y, params, dW)[0], None

    def step_with_error(self, sde, t, dt, y, state, params, dW, H=None):
        """The Milstein step and the embedded Euler step's local error estimate."""
        y1, f, correction = self._stages(sde, t, dt, y, params, dW)
        return y1, None, correction + (0.5 * dt) * (sde.f(t + dt, y1, params) - f)
