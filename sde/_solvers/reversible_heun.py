"""Reversible Heun: an algebraically reversible Stratonovich solver (Kidger et al. 2021).

State ``(y, z, f(z), g(z))``, with ``z₀ = y₀``:

    z' = 2y − z + f(t, z) dt + g(t, z)·dW
    y' = y + (f(t, z) + f(t+dt, z')) dt/2 + (g(t, z) + g(t+dt, z'))·dW/2

The step inverts exactly in closed form (:meth:`ReversibleHeun.unstep`), which gives the
O(1)-memory adjoint of ``sde._reversible``. One drift and one diffusion evaluation per step.
Strong order 0.5 (1.0 for additive noise).

Reference: P. Kidger, J. Foster, X. Li, T. Lyons, "Efficient and Accurate Gradients for Neural
SDEs", NeurIPS 2021, Algorithm 1 (forward) and Algorithm 2 (reverse).
"""

from __future__ import annotations

from dataclasses import dataclass

from .._fused import combine
from .._model import Calculus, Noise
from ._base import AbstractSolver, Method


@dataclass(frozen=True)
class ReversibleHeun(AbstractSolver):
    """Reversible Heun (Kidger et al. 2021, Algorithm 1)."""

    method = Method.REVERSIBLE_HEUN
    strong_order = {Noise.DIAGONAL: 0.5, Noise.SCALAR: 0.5, Noise.GENERAL: 0.5,
                    Noise.ADDITIVE: 1.0}
    calculus = frozenset({Calculus.STRATONOVICH})

    def init(self, sde, t0, y0, params):
        return (y0, sde.f(t0, y0, params), sde.g(t0, y0, params))

    def step(self, sde, t, dt, y, state, params, dW, H=None):
        z, fz, gz = state
        z1 = combine(sde, y, ((1.0, y), (-1.0, z), (dt, fz)), ((gz, dW),))
        f1 = sde.f(t + dt, z1, params)
        g1 = sde.g(t + dt, z1, params)
        half = 0.5 * dW
        y1 = combine(sde, y, ((0.5 * dt, fz), (0.5 * dt, f1)), ((gz, half), (g1, half)))
        return y1, (z1, f1, g1)

    def unstep(self, sde, t, dt, y1, state1, params, dW):
        """Invert :meth:`step` from ``t + dt`` back to ``t`` (Kidger et al. 2021, Algorithm 2)."""
        z1, f1, g1 = state1
        gdw1 = sde.g_prod(g1, dW)
        z = 2.0 * y1 - z1 - f1 * dt - gdw1
        fz = sde.f(t, z, params)
        gz = sde.g(t, z, params)
        y = y1 - 0.5 * ((fz + f1) * dt + sde.g_prod(gz, dW) + gdw1)
        return y, (z, fz, gz)
