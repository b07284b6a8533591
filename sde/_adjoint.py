"""The stochastic adjoint (Li et al. 2020): gradients from a backward Stratonovich SDE.

The forward pass (any solver) keeps only the outputs at the save times. The backward pass solves,
from ``T`` down to ``t0`` on the same Brownian path, the augmented Stratonovich system

    dy  =  b(t, y, θ) dt + σ(t, y, θ) ∘ dW
    da  = −aᵀ∂_y b dt − Σ_j aᵀ∂_y σ_j ∘ dW_j
    da_θ = −aᵀ∂_θ b dt − Σ_j aᵀ∂_θ σ_j ∘ dW_j

with Heun's method, resetting ``y`` to the stored output at each save time and adding that
output's cotangent to ``a``. For an Itô SDE, ``b`` is the Stratonovich drift
``b_i = f_i − ½ Σ_j Σ_k σ_kj ∂_k σ_ij``; the correction is computed exactly, also for a
"diagonal" diffusion whose entries depend on other coordinates (then ``½ g_i ∂g_i/∂y_i`` needs the
Jacobian's diagonal: d forward-mode products, not the one reverse product that is exact only for
``g_i(y_i)``). One augmented increment is one vector–Jacobian product of
``(y, θ) ↦ b dt + σ·dW``. The gradient agrees with backpropagation as dt → 0 (optimise-then-
discretise). Derivation: ``sde/DERIVATIONS.md`` §2.

Reference: X. Li, T.-K. L. Wong, R. T. Q. Chen, D. Duvenaud, "Scalable Gradients for Stochastic
Differential Equations", AISTATS 2020, eqs. (11)–(14) and Algorithm 1.
"""

from __future__ import annotations

import numpy as np

import diffsci as ds

from ._grid import Grid
from ._model import Calculus, Noise
from ._solve import check_not_captured, solve

__all__ = ["ito_correction", "stratonovich_drift", "stochastic_adjoint_solve"]


def ito_correction(sde, t, y, params):
    """``c_i = ½ Σ_j Σ_k σ_kj ∂σ_ij/∂y_k`` (Itô drift − Stratonovich drift), differentiable."""
    if sde.noise is Noise.ADDITIVE:
        return 0.0 * y

    def g(yy):
        return sde.g(t, yy, params)

    gy = g(y)
    if sde.noise is Noise.SCALAR:
        return 0.5 * ds.jvp(g, (y,), (gy,))[1]
    if sde.noise is Noise.DIAGONAL:
        d = y.shape[-1]
        eye = np.eye(d)
        cols = [ds.jvp(g, (y,), (gy * eye[i],))[1][:, i] for i in range(d)]
        return 0.5 * np.stack(cols, axis=-1)
    c = 0.0 * y
    for j in range(gy.shape[-1]):
        c = c + ds.jvp(g, (y,), (gy[:, :, j],))[1][:, :, j]
    return 0.5 * c


def stratonovich_drift(sde, t, y, params):
    """The drift of the Stratonovich form of ``sde``."""
    f = sde.f(t, y, params)
    if sde.calculus is Calculus.STRATONOVICH or sde.noise is Noise.ADDITIVE:
        return f
    return f - ito_correction(sde, t, y, params)


def _augmented(sde, t, dt, dW, y, a, params):
    """The augmented increment (Δy, Δa, Δa_θ) over (dt, dW) at (t, y, a)."""

    def phi(yy, p):
        return stratonovich_drift(sde, t, yy, p) * dt + sde.g_prod(sde.g(t, yy, p), dW)

    dy, back = ds.pullback(phi, y, params)
    vy, vp = back(a)
    return dy, -vy, ds.tree_map(lambda v: -v, vp)


def stochastic_adjoint_solve(sde, solver, grid: Grid, level: int = 0):
    """A ``custom_vjp`` function ``(y0, params) -> ys`` differentiated by the stochastic adjoint.

    ``level`` is the trace level of sdeint's ``y0`` and ``params``: a forward output traced at
    that level or above comes from a value the drift or diffusion closes over, which this
    adjoint cannot differentiate, and is refused (:func:`sde._solve.check_not_captured`)."""
    times = grid.times.tolist()  # Python floats: weak scalars keep float32 states float32
    save_set = {int(i): n for n, i in enumerate(grid.save)}

    def forward(y0, params):
        ys = solve(sde, solver, grid, y0, params)
        check_not_captured(ys, level, "stochastic")
        return ys

    @ds.custom_vjp
    def run(y0, params):
        return forward(y0, params)

    def fwd(y0, params):
        ys = forward(y0, params)
        return ys, (ys, params)

    def bwd(res, gys):
        ys, params = res
        y, a = ys[-1], gys[-1]
        a_p = ds.tree_map(np.zeros_like, params)
        for k in range(grid.n_steps - 1, -1, -1):
            t1, t0 = times[k + 1], times[k]
            dt = t0 - t1
            dW = -grid.noise(k)[0]
            dy0, da0, dp0 = _augmented(sde, t1, dt, dW, y, a, params)
            dy1, da1, dp1 = _augmented(sde, t0, dt, dW, y + dy0, a + da0, params)
            y = y + 0.5 * (dy0 + dy1)
            a = a + 0.5 * (da0 + da1)
            a_p = ds.tree_map(lambda s, u, v: s + 0.5 * (u + v), a_p, dp0, dp1)
            if k in save_set:
                n = save_set[k]
                y = ys[n]
                a = a + gys[n]
        return a, a_p

    run.defvjp(fwd, bwd)
    return run
