"""Heun's method (stochastic trapezoidal predictor–corrector) for Stratonovich SDEs.

``ỹ = y + f dt + g·dW``; ``y' = y + (f + f̃) dt / 2 + (g + g̃)·dW / 2``. Strong order 0.5 for
general noise, 1.0 for commutative noise (scalar, additive, diagonal with ``g_i(y_i)``).

Embedded pair: the predictor ỹ is the Euler step (an embedded solution from the same stages),
so ``y' − ỹ = ((f̃ − f) dt + (g̃ − g)·dW)/2`` estimates the local error at no extra evaluation:
its drift part is the trapezoidal-vs-rectangle drift error of Lamba (2003), its diffusion part
``≈ ½ g g′ ΔW²``, of size O(h) — so ``error_order = 1`` (the Euler solution's ``p̂ + ½``).

Reference: Kloeden & Platen 1992, §15.1 (eq. 15.1.2, the Heun method); W. Rümelin,
"Numerical treatment of stochastic differential equations", SIAM J. Numer. Anal. 19 (1982);
H. Lamba, "An adaptive timestepping algorithm for stochastic differential equations",
J. Comput. Appl. Math. 161 (2003), §2 (embedded error estimates from an Euler step).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._fused import combine
from .._model import Calculus, Noise
from ._base import AbstractSolver, Method


@dataclass(frozen=True)
class Heun(AbstractSolver):
    """Stratonovich Heun (Kloeden & Platen 1992, eq. 15.1.2)."""

    method = Method.HEUN
    strong_order = {Noise.DIAGONAL: 1.0, Noise.SCALAR: 1.0, Noise.ADDITIVE: 1.0,
                    Noise.GENERAL: 0.5}
    calculus = frozenset({Calculus.STRATONOVICH})
    embedded = True
    error_order = 1.0

    @staticmethod
    def _stages(sde, t, dt, y, params, dW):
        f0 = sde.f(t, y, params)
        g0 = sde.g(t, y, params)
        y_pred = combine(sde, y, ((dt, f0),), ((g0, dW),))
        f1 = sde.f(t + dt, y_pred, params)
        g1 = sde.g(t + dt, y_pred, params)
        half = 0.5 * dW
        return combine(sde, y, ((0.5 * dt, f0), (0.5 * dt, f1)), ((g0, half), (g1, half))), y_pred

    def step(self, sde, t, dt, y, state, params, dW, H=None):
        return self._stages(sde, t, dt, y, params, dW)[0], None

    def step_with_error(self, sde, t, dt, y, state, params, dW, H=None):
        """The Heun step and ``y' − ỹ`` (the embedded Euler step's local error estimate)."""
        y1, y_pred = self._stages(sde, t, dt, y, params, dW)
        return y1, None, y1 - y_pred
