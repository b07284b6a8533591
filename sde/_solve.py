"""The plain stepping loops shared by every gradient method (plain or traced values)."""

from __future__ import annotations

import numpy as np

import diffsci as ds
from diffsci.extend import getval, top_trace

from ._grid import Grid

__all__ = ["check_finite", "check_not_captured", "closure_error", "solve", "solve_checkpointed",
           "trace_level"]


def trace_level(tree) -> int:
    """The highest trace level among ``tree``'s leaves (0 when none is traced)."""
    top = top_trace(ds.tree_leaves(tree))
    return 0 if top is None else top.level


def closure_error(adjoint: str) -> ValueError:
    """The refusal of a value a method cannot differentiate because drift/diffusion close
    over it (rule table: ``sdeint``'s ``_CLOSURES``)."""
    return ValueError(
        f"sdeint: adjoint={adjoint!r} differentiates y0 and params only, but the drift or "
        f"diffusion closes over a value being differentiated (its output is traced although "
        f"y0 and params reach it untraced); that value's gradient would be lost. Pass the "
        f"value inside params (e.g. params=(params, value), read as p[1] in drift/diffusion), "
        f"or use adjoint='backprop', which also differentiates closed-over values"
    )


def check_not_captured(out, level: int, adjoint: str) -> None:
    """Raise :func:`closure_error` if ``out`` is traced at ``level`` or above (``level``: the
    trace level of sdeint's y0 and params; at least 1): such a trace can only come from a value
    the drift or diffusion closes over, since the method's rule receives y0 and params
    untraced at that level."""
    if trace_level(out) >= max(level, 1):
        raise closure_error(adjoint)


def check_finite(y, t: float) -> None:
    """Raise FloatingPointError naming the time and the first path with a non-finite state."""
    v = getval(y)
    ok = np.isfinite(v)
    if not ok.all():
        rows = np.nonzero(~ok.reshape(v.shape[0], -1).all(axis=1))[0]
        raise FloatingPointError(
            f"sdeint: the state became non-finite at t={t!r} on path {int(rows[0])} "
            f"({rows.size} path(s) in all); lower dt, or check the drift/diffusion for overflow"
        )


def solve(sde, solver, grid: Grid, y0, params):
    """The plain stepping loop (traced when its inputs are): ``ys`` at the save indices."""
    times = grid.times.tolist()  # Python floats: weak scalars keep float32 states float32
    state = solver.init(sde, times[0], y0, params)
    y = y0
    ys = [y0]
    save = iter(grid.save[1:])
    nxt = next(save)
    for k in range(grid.n_steps):
        dW, H = grid.noise(k)
        y, state = solver.step(sde, times[k], times[k + 1] - times[k], y, state, params, dW, H)
        check_finite(y, times[k + 1])
        if k + 1 == nxt:
            ys.append(y)
            nxt = next(save, -1)
    return np.stack(ys)


def solve_checkpointed(sde, solver, grid: Grid, y0, params, snapshots, level=0):
    """:func:`solve` with each save interval under :func:`diffsci.checkpointed_loop`
    (``level``: the trace level of sdeint's y0 and params, for :func:`check_not_captured`)."""
    times = grid.times.tolist()  # Python floats: weak scalars keep float32 states float32

    def step(carry, p):
        k, y, state = carry
        dW, H = grid.noise(k)
        y, state = solver.step(sde, times[k], times[k + 1] - times[k], y, state, p, dW, H)
        if level == 0 or trace_level(carry) < level:  # the loop's rule runs the step untraced
            check_not_captured(y, level, "checkpoint")
        return k + 1, y, state

    carry = (0, y0, solver.init(sde, times[0], y0, params))
    ys = [y0]
    for a, b in zip(grid.save[:-1], grid.save[1:]):
        carry = ds.checkpointed_loop(step, carry, int(b - a), snapshots=snapshots,
                                     args=(params,))
        check_finite(carry[1], times[b])
        ys.append(carry[1])
    return np.stack(ys)
