"""Adaptive step-size control, consistent with the Brownian path: embedded pairs or doubling.

Two local error estimates (:class:`~sde.ErrorEstimate`):

* **Embedded** (solvers with ``embedded = True``: Heun, Milstein): one step ``y'`` and, from
  the same stages, a lower-order solution ``ŷ`` (the Euler step); ``e = y' − ŷ`` estimates the
  local error of the lower-order solution, of size O(h^q) in mean square with
  ``q = solver.error_order``. The step advances with ``y'`` (local extrapolation, as in
  embedded Runge–Kutta pairs). One step per attempt.
* **Doubling** (any one-step solver): the step is taken whole (``y_h``) and as two half steps
  through ``t + h/2`` (``y_{h/2}``); ``e = y_{h/2} − y_h`` is O(h^{p+1/2}) for strong order p,
  so ``q = p + ½``; the step advances with ``y_{h/2}``. Three steps per attempt.

Either way the scaled error over paths and dimensions

    E = sqrt(mean((e / (atol + rtol·max(|y|, |y_new|)))²))

accepts the step when ``E ≤ 1`` and otherwise rejects it and retries with a smaller h; the next
h is ``h · clip(0.9 · E^{−1/q}, 0.2, 5)``. The attempts see the *same* Brownian path: every
increment is queried from a :class:`~sde.BrownianInterval`, which returns the increment of any
interval consistently with every other query.

A rejected step draws **no new noise**: the retry queries sub-intervals of the same Brownian path
(the Brownian tree conditions them on the increments already seen — a Brownian bridge), so the
accepted solution is a discretisation of the one path, not of a path biased towards small errors
(the bias of resampling on rejection; Gaines & Lyons 1997). One step size is shared by all paths
of the batch (as in torchsde).

The selection runs on plain values; its accepted grid (with doubling, every half step) is then
solved, and differentiated, like a fixed grid by :func:`sde.sdeint` with any ``adjoint``: the
gradient is that of the discrete solve on the accepted grid (step selection itself is not
differentiated, as in diffrax and torchsde).

References:
    H. Lamba, "An adaptive timestepping algorithm for stochastic differential equations",
    J. Comput. Appl. Math. 161, 2003 (embedded Euler/Milstein error estimates); C. Rackauckas
    and Q. Nie, "Adaptive methods for stochastic differential equations via natural embeddings
    and rejection sampling with memory", Discrete Contin. Dyn. Syst. B 22(7), 2017 (embedded
    SRK error estimates; rejections that keep the Brownian path); J. G. Gaines and T. J. Lyons,
    "Variable step size control in the numerical solution of stochastic differential
    equations", SIAM J. Appl. Math. 57(5), 1997 (rejection consistent with the Brownian path);
    E. Hairer, S. P. Nørsett, G. Wanner, *Solving Ordinary Differential
    Equations I*, §II.4 (step doubling, the controller); X. Li et al., AISTATS 2020 (torchsde's
    adaptive stepping with the Brownian tree).
"""

from __future__ import annotations

import numpy as np

from ._model import SDE, ErrorEstimate

__all__ = ["SAFETY", "FACTOR_MIN", "FACTOR_MAX", "select_grid"]

SAFETY = 0.9
FACTOR_MIN = 0.2
FACTOR_MAX = 5.0


def _error(y, y_new, e, rtol, atol):
    scale = atol + rtol * np.maximum(np.abs(y), np.abs(y_new))
    return float(np.sqrt(np.mean((e / scale) ** 2)))


def _attempt_embedded(sde, solver, t, t1, y, state, params, brownian):
    """One step with its embedded estimate: ``(y_new, state_new, e, new grid times)``."""
    y1, s1, e = solver.step_with_error(sde, t, t1 - t, y, state, params,
                                       brownian.increment(t, t1))
    return y1, s1, e, (t1,)


def _attempt_doubling(sde, solver, t, t1, y, state, params, brownian):
    """A whole step against two half steps on the same path."""
    tm = t + 0.5 * (t1 - t)
    y_whole, _ = solver.step(sde, t, t1 - t, y, state, params, brownian.increment(t, t1))
    y_mid, s_mid = solver.step(sde, t, tm - t, y, state, params, brownian.increment(t, tm))
    y_half, s_half = solver.step(sde, tm, t1 - tm, y_mid, s_mid, params,
                                 brownian.increment(tm, t1))
    return y_half, s_half, y_half - y_whole, (tm, t1)


# (attempt, the error's power of h) per estimate
_ESTIMATES = {
    ErrorEstimate.EMBEDDED: (_attempt_embedded, lambda solver, noise: solver.error_order),
    ErrorEstimate.DOUBLING: (_attempt_doubling,
                             lambda solver, noise: solver.strong_order[noise] + 0.5),
}


def select_grid(sde: SDE, solver, ts, y0, params, brownian, *, dt0: float, rtol: float,
                atol: float, dt_min: float, max_steps: int,
                estimate: ErrorEstimate = ErrorEstimate.DOUBLING):
    """Choose the accepted steps of an adaptive solve (plain arrays in, plain arrays out).

    Args:
        sde, solver: the problem and a one-step :class:`~sde.AbstractSolver`.
        ts: the save times; every one is landed on exactly.
        y0, params: plain (untraced) initial state and parameters.
        brownian: the Brownian motion (any-interval queries: a BrownianInterval).
        dt0: the first step tried; rtol, atol: the tolerances of E above;
        dt_min: the smallest step allowed; max_steps: the most attempted steps.
        estimate: the :class:`~sde.ErrorEstimate` (embedded needs ``solver.embedded``).

    Returns:
        ``(times, save, n_accepted, n_rejected)``: the grid the accepted solution lives on
        (every accepted step's end; with doubling also its midpoint), the index of each save
        time in it, and the step counts.

    Raises:
        RuntimeError: the step size fell below ``dt_min`` or ``max_steps`` was exceeded (names
            the time reached).
    """
    attempt, power = _ESTIMATES[estimate]
    exponent = -1.0 / power(solver, sde.noise)
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
            y_new, s_new, e, new_times = attempt(sde, solver, t, t1, y, state, params, brownian)
            err = _error(y, y_new, e, rtol, atol)
            if not np.isfinite(err):
                err = np.inf
            factor = FACTOR_MIN if err == np.inf else \
                min(FACTOR_MAX, max(FACTOR_MIN, SAFETY * max(err, 1e-10) ** exponent))
            if err <= 1.0:
                accepted += 1
                times.extend(new_times)
                t, y, state = t1, y_new, s_new
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
