"""Reversible Heun's algebraically exact adjoint: the backprop gradient at O(1) memory in steps.

The forward pass keeps only the save-time outputs and the final solver state. The backward pass
walks the steps in reverse: it reconstructs the state at ``t_k`` from the state at ``t_{k+1}``
in closed form (:meth:`ReversibleHeun.unstep`) and takes the vector–Jacobian product of that one
step with :func:`diffsci.pullback`. Because the reconstruction inverts the forward step exactly
(up to floating-point round-off), the gradient equals backpropagation through the same solve.
Derivation: ``sde/DERIVATIONS.md`` §1.

Reference: P. Kidger, J. Foster, X. Li, T. Lyons, "Efficient and Accurate Gradients for Neural
SDEs", NeurIPS 2021, §3 and Algorithm 2.
"""

from __future__ import annotations

import numpy as np

import diffsci as ds

from ._grid import Grid
from ._sdeint import check_finite

__all__ = ["reversible_solve"]


def _add(a, b):
    return ds.tree_map(lambda x, y: x + y, a, b)


def reversible_solve(sde, solver, grid: Grid):
    """A ``custom_vjp`` function ``(y0, params) -> ys`` for reversible Heun on ``grid``."""
    times = grid.times

    def step_fn(k, dW):
        t, dt = times[k], times[k + 1] - times[k]

        def f(y, state, params):
            return solver.step(sde, t, dt, y, state, params, dW)

        return f

    def forward(y0, params):
        state = solver.init(sde, times[0], y0, params)
        y = y0
        ys = [y0]
        for k in range(grid.n_steps):
            dW, _ = grid.noise(k)
            y, state = step_fn(k, dW)(y, state, params)
            check_finite(y, times[k + 1])
            if k + 1 in save_set:
                ys.append(y)
        return np.stack(ys), (y, state)

    save_set = {int(i): n for n, i in enumerate(grid.save)}

    @ds.custom_vjp
    def solve(y0, params):
        return forward(y0, params)[0]

    def fwd(y0, params):
        ys, last = forward(y0, params)
        return ys, (y0, params, last)

    def bwd(res, gys):
        y0, params, (y, state) = res
        a_y = gys[-1]
        a_state = tuple(np.zeros_like(s) for s in state)
        a_p = ds.tree_map(np.zeros_like, params)
        for k in range(grid.n_steps - 1, -1, -1):
            dW, _ = grid.noise(k)
            t, dt = times[k], times[k + 1] - times[k]
            y, state = solver.unstep(sde, t, dt, y, state, params, dW)
            _, back = ds.pullback(step_fn(k, dW), y, state, params)
            a_y, a_state, gp = back((a_y, a_state))
            a_p = _add(a_p, gp)
            if k in save_set and k > 0:
                a_y = a_y + gys[save_set[k]]
        a_y = a_y + gys[0]
        _, back = ds.pullback(lambda y_, p_: solver.init(sde, times[0], y_, p_), y0, params)
        g0, gp = back(a_state)
        return a_y + g0, _add(a_p, gp)

    solve.defvjp(fwd, bwd)
    return solve
