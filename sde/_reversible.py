"""Reversible Heun's algebraically exact adjoint: the backprop gradient at O(1) memory in steps.

The forward pass keeps only the save-time outputs and the final solver state. The backward pass
walks the steps in reverse: it reconstructs the state at ``t_k`` from the state at ``t_{k+1}``
in closed form (the algebra of :meth:`ReversibleHeun.unstep`), evaluating ``f`` and ``g`` at the
reconstructed ``z_k`` under :func:`diffsci.pullback`, and applies the step's adjoint in closed form
(DERIVATIONS (R7)): one traced evaluation of f and g per backward step, whose VJP serves the next
step down. Because the reconstruction inverts the forward step exactly
(up to floating-point round-off), the gradient equals backpropagation through the same solve.
Derivation: ``sde/DERIVATIONS.md`` §1.

Reference: P. Kidger, J. Foster, X. Li, T. Lyons, "Efficient and Accurate Gradients for Neural
SDEs", NeurIPS 2021, §3 and Algorithm 2.
"""

from __future__ import annotations

import numpy as np

import diffsci as ds
from diffsci.extend import getval

from ._grid import Grid
from ._solve import check_finite, check_not_captured

__all__ = ["reversible_solve"]


def reversible_solve(sde, solver, grid: Grid, level: int = 0):
    """A ``custom_vjp`` function ``(y0, params) -> ys`` for reversible Heun on ``grid``.

    ``level`` is the trace level of sdeint's ``y0`` and ``params``: a forward output traced at
    that level or above comes from a value the drift or diffusion closes over, which this
    adjoint cannot differentiate, and is refused (:func:`sde._solve.check_not_captured`)."""
    times = grid.times.tolist()  # Python floats: weak scalars keep float32 states float32

    def forward(y0, params):
        state = solver.init(sde, times[0], y0, params)
        y = y0
        ys = [y0]
        for k in range(grid.n_steps):
            dW, _ = grid.noise(k)
            y, state = solver.step(sde, times[k], times[k + 1] - times[k], y, state, params, dW)
            check_finite(y, times[k + 1])
            if k + 1 in save_set:
                ys.append(y)
        ys = np.stack(ys)
        check_not_captured(ys, level, "reversible")
        return ys, (y, state)

    save_set = {int(i): n for n, i in enumerate(grid.save)}

    @ds.custom_vjp
    def solve(y0, params):
        return forward(y0, params)[0]

    def fwd(y0, params):
        ys, last = forward(y0, params)
        return ys, (y0, params, last)

    def fg(t, treedef):
        """(f, g) at time t as a function of z and the parameters' leaves (flattened once per
        backward pass: flattening the parameter pytree at every step costs more than the step's
        arithmetic for small networks)."""

        def F(z, *leaves):
            params = ds.tree_unflatten(treedef, leaves)
            return sde.f(t, z, params), sde.g(t, z, params)

        return F

    def bwd(res, gys):
        y0, params, (y, (z, fz, gz)) = res
        leaves, treedef = ds.tree_flatten(params)
        n = grid.n_steps
        a_y = gys[-1]
        a_z, a_f, a_g = np.zeros_like(z), np.zeros_like(fz), np.zeros_like(gz)
        a_p = [np.zeros(np.shape(getval(v))) for v in leaves]  # plain: traced leaves (2nd order)
        _, back_f = ds.pullback(fg(times[n], treedef), z, *leaves)  # (R2)'s VJP at z_N
        for k in range(n - 1, -1, -1):
            dW, _ = grid.noise(k)
            t, dt = times[k], times[k + 1] - times[k]
            # Reconstruct s_k (R4)-(R5); (f_k, g_k) with its pullback, reused by step k - 1.
            gdw1 = sde.g_prod(gz, dW)
            z_k = 2.0 * y - z - fz * dt - gdw1
            (f_k, g_k), back_k = ds.pullback(fg(t, treedef), z_k, *leaves)
            y_k = y - 0.5 * ((f_k + fz) * dt + sde.g_prod(g_k, dW) + gdw1)
            # The adjoint of step k (R7): s̄_{k+1} -> s̄_k and θ̄.
            gt_y = sde.g_prod_transpose(a_y, dW)
            z1_bar, *gp = back_f((a_f + (0.5 * dt) * a_y, a_g + 0.5 * gt_y))
            z1_bar = a_z + z1_bar
            a_p = [u + v for u, v in zip(a_p, gp)]
            a_f = (0.5 * dt) * a_y + dt * z1_bar
            a_g = 0.5 * gt_y + sde.g_prod_transpose(z1_bar, dW)
            a_y = a_y + 2.0 * z1_bar
            a_z = -z1_bar
            if k in save_set and k > 0:
                a_y = a_y + gys[save_set[k]]
            y, z, fz, gz, back_f = y_k, z_k, f_k, g_k, back_k
        # The initial map I: s_0 = (y0, y0, f(y0), g(y0)); back_f is the VJP at z_0 (= y0 up to
        # round-off).
        g0, *gp = back_f((a_f, a_g))
        a_p = [u + v for u, v in zip(a_p, gp)]
        return a_y + gys[0] + a_z + g0, ds.tree_unflatten(treedef, a_p)

    solve.defvjp(fwd, bwd)
    return solve
