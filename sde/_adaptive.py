"""Adaptive step-size control by step doubling, consistent with the Brownian path.

Each attempted step from ``t`` to ``t + h`` is taken twice with the same solver: once whole
(``y_h``) and as two half steps through ``t + h/2`` (``y_{h/2}``). The two see the *same*
Brownian path: ``W(t, t+h) = W(t, t+h/2) + W(t+h/2, t+h)``, all three queried from a
:class:`~sde.BrownianInterval`, which returns the increment of any interval consistently with
every other query. The scaled difference

    E = sqrt(mean(((y_{h/2} − y_h) / (atol + rtol·max(|y|, |y_{h/2}|)))²))      (over paths and d)

estimates the local error of the whole step (for a strong order p solver the difference is
O(h^{p+1/2})). ``E ≤ 1`` accepts ``y_{h/2}`` (the more accurate value); otherwise the step is
rejected and retried with a smaller h. In both cases the next h is

    h ← h · clip(0.9 · E^{−1/(p+1/2)}, 0.2, 5)

A rejected step draws **no new noise**: the retry queries sub-intervals of the same Brownian path
(the Brownian tree conditions them on the increments already seen — a Brownian bridge), so the
accepted solution is a discretisation of the one path, not of a path biased towards small errors
(the bias of resampling on rejection; Gaines & Lyons 1997). One step size is shared by all paths
of the batch (as in torchsde).

The selection runs on plain values; its accepted grid (every half step) is then solved, and
differentiated, like a fixed grid by :func:`sde.sdeint` with any ``adjoint``: the gradient is that
of the discrete solve on the accepted grid (step selection itself is not differentiated, as in
diffrax and torchsde).

References:
    J. G. Gaines and T. J. Lyons, "Variable step size control in the numerical solution of
    stochastic differential equations", SIAM J. Appl. Math. 57(5), 1997 (rejection consistent
    with the Brownian path); E. Hairer, S. P. Nørsett, G. Wanner, *Solving Ordinary Differential
    Equations I*, §II.4 (step doubling, the controller); X. Li et al., AISTATS 2020 (torchsde's
    adaptive stepping with the Brownian tree).
"""

from __future__ import annotations

import numpy as np

from ._model import SDE

__all__ = ["SAFETY", "FACTOR_MIN", "FACTOR_MAX", "select_grid"]

SAFETY = 0.9
FACTOR_MIN = 0.2
FACTOR_MAX = 5.0


def _error(y, y_half, y_whole, rtol, atol):
    scale = atol + rtol * np.maximum(np.abs(y), np.abs(y_half))
    return float(np.sqrt(np.mean(((y_half - y_whole) / scale) ** 2)))


def select_grid(sde: SDE, solver, ts, y0, params, brownian, *, dt0: float, rtol: float,
                atol: float, dt_min: float, max_steps: int):
    """Choose the accepted steps of an adaptive solve (plain arrays in, plain arrays out).

    Args:
        sde, solver: the problem and a one-step :class:`~sde.AbstractSolver`.
        ts: the save times; every one is landed on exactly.
        y0, params: plain (untraced) initial state and parameters.
        brownian: the Brownian motion (any-interval queries: a BrownianInterval).
        dt0: the first step tried; rtol, atol: the tolerances of E above;
        dt_min: the smallest step allowed; max_steps: the most attempted steps.

    Returns:
        ``(times, save, n_accepted, n_rejected)``: the grid of every half step (``times``), the
        index of each save time in it, and the step counts.

    Raises:
        RuntimeError: the step size fell below ``dt_min`` or ``max_steps`` was exceeded (names
            the time reached).
    """
    order = solver.strong_order[sde.noise]
    exponent = -1.0 / (order + 0.5)
    t = float(ts[0])
    y = y0
    state = solver.init(sde, t, y, params)
    times = [t]
    save = [0]
    h = float(dt0)
    accepted = rejected = 0
    for target in ts[1:]:
        target = float(target)
        while t < target:
            if accepted + rejected >= max_steps:
                raise RuntimeError(
                    f"sdeint: adaptive stepping exceeded max_steps={max_steps} at t={t!r}; "
                    f"loosen rtol/atol or raise max_steps"
                )
            last = t + h >= target - 1e-12 * max(1.0, abs(target))
            t1 = target if last else t + h
            hh = t1 - t
            tm = t + 0.5 * hh
            dW = brownian.increment(t, t1)
            y_whole, _ = solver.step(sde, t, hh, y, state, params, dW)
            dW1 = brownian.increment(t, tm)
            dW2 = brownian.increment(tm, t1)
            y_mid, s_mid = solver.step(sde, t, tm - t, y, state, params, dW1)
            y_half, s_half = solver.step(sde, tm, t1 - tm, y_mid, s_mid, params, dW2)
            err = _error(y, y_half, y_whole, rtol, atol)
            if not np.isfinite(err):
                err = np.inf
            factor = FACTOR_MIN if err == np.inf else \
                min(FACTOR_MAX, max(FACTOR_MIN, SAFETY * max(err, 1e-10) ** exponent))
            if err <= 1.0:
                accepted += 1
                times.extend((tm, t1))
                t, y, state = t1, y_half, s_half
                if not last:
                    h = hh * factor
            else:
                rejected += 1
                h = hh * factor
                if h < dt_min:
                    raise RuntimeError(
                        f"sdeint: adaptive step size {h:.3g} fell below dt_min={dt_min:.3g} at "
                        f"t={t!r} (error estimate {err:.3g}); loosen rtol/atol, or check the "
                        f"drift/diffusion for blow-up"
                    )
        save.append(len(times) - 1)
    return np.asarray(times), np.asarray(save), accepted, rejected
