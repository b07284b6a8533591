"""Euler–Heun: Euler in the drift, Heun in the diffusion, for Stratonovich SDEs.

``ỹ = y + g·dW``; ``y' = y + f dt + (g + g(ỹ))·dW / 2``. Strong order 0.5 for general noise,
1.0 for commutative noise. One drift evaluation per step.

Reference: Kloeden & Platen 1992, §15.1; the "euler_heun" method of torchsde (Li et al. 2020).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._fused import combine
from .._model import Calculus, Noise
from ._base import AbstractSolver, Method


@dataclass(frozen=True)
class EulerHeun(AbstractSolver):
    """Stratonovich Euler–Heun."""

    method = Method.EULER_HEUN
    strong_order = {Noise.DIAGONAL: 1.0, Noise.SCALAR: 1.0, Noise.ADDITIVE: 1.0,
                    Noise.GENERAL: 0.5}
    calculus = frozenset({Calculus.STRATONOVICH})

    def step(self, sde, t, dt, y, state, params, dW, H=None):
        f = sde.f(t, y, params)
        g0 = sde.g(t, y, params)
        g1 = sde.g(t + dt, combine(sde, y, noise=((g0, dW),)), params)
        half = 0.5 * dW
        return combine(sde, y, ((dt, f),), ((g0, half), (g1, half))), None
