"""``sdeint``: solve an SDE at given times, differentiably, by the gradient method you choose."""

from __future__ import annotations

import math
import numbers
from functools import partial
from typing import Any

import numpy as np

import diffsci as ds
from diffsci.extend import getval, observed
from diffsci.random import check_seed
from diffsci.typing import ArrayLike

from . import _validate
from ._adaptive import select_grid
from ._adjoint import stochastic_adjoint_solve
from ._brownian import AbstractBrownian, BrownianIncrements, BrownianInterval, BrownianPath, checked
from ._grid import Grid, make_grid
from ._model import SDE, Adjoint, Calculus, ErrorEstimate, Noise, as_enum
from ._reversible import reversible_solve
from ._solve import closure_error, solve, solve_checkpointed, trace_level
from ._solvers import SOLVERS, AbstractSolver, Method

__all__ = ["sdeint"]


# How each Adjoint is run: (sde, solver, grid, snapshots, level) -> a function
# (y0, params) -> ys, differentiated by that method (level: the trace level of y0 and params,
# for the closure checks). One line per gradient method.
_GRADIENT_METHODS = {
    Adjoint.BACKPROP: lambda sde, solver, grid, _, __: partial(solve, sde, solver, grid),
    Adjoint.CHECKPOINT: lambda sde, solver, grid, snapshots, level: (
        lambda y0, params: solve_checkpointed(sde, solver, grid, y0, params, snapshots, level)),
    Adjoint.REVERSIBLE: lambda sde, solver, grid, _, level: reversible_solve(sde, solver, grid,
                                                                             level),
    Adjoint.STOCHASTIC: lambda sde, solver, grid, _, level: stochastic_adjoint_solve(
        sde, solver, grid, level),
}
assert set(_GRADIENT_METHODS) == set(Adjoint), "every Adjoint needs a row"

# Which values traced by a differentiation each method differentiates when the drift or
# diffusion close over them (y0 and params: always, by every method):
#   "all":   any (the steps are recorded on the caller's trace);
#   "outer": only those of an outer differentiation (grad of grad: the method's rule is itself
#            differentiated); one traced with y0 and params, or with neither traced, is refused;
#   "none":  none (diffsci.checkpointed_loop refuses closures at every level); refused.
_CLOSURES = {
    Adjoint.BACKPROP: "all",
    Adjoint.CHECKPOINT: "none",
    Adjoint.REVERSIBLE: "outer",
    Adjoint.STOCHASTIC: "outer",
}
assert set(_CLOSURES) == set(Adjoint), "every Adjoint needs a row"


def _check_closures(adjoint: Adjoint, closure_level: int, level: int) -> None:
    """Refuse, before solving, a closed-over traced value the method cannot differentiate
    (``closure_level``: the trace level of drift/diffusion at (t0, plain y0, plain params);
    ``level``: that of y0 and params). The solvers re-check the whole solve's output."""
    rule = _CLOSURES[adjoint]
    if closure_level and (rule == "none" or (rule == "outer" and closure_level >= max(level, 1))):
        raise closure_error(adjoint.value)


def _check_traced_noise(brownian, adjoint: Adjoint) -> None:
    """Refuse traced Brownian increments (``BrownianIncrements`` of a value being
    differentiated, or a ``diffsci.jit`` input) where the method would hold them constant:
    only ``backprop`` records the steps, and with them every use of the noise."""
    if adjoint is Adjoint.BACKPROP or not isinstance(brownian, BrownianIncrements):
        return
    if trace_level((brownian.dW, brownian._H)):
        raise ValueError(
            f"sdeint: adjoint={adjoint.value!r} holds the Brownian increments constant, but "
            f"brownian's increments are traced (a value being differentiated, or an input of "
            f"diffsci.jit); their gradient would be lost. Use adjoint='backprop', or pass "
            f"plain increments (diffsci.stop_gradient)")


def _plain(tree):
    return ds.tree_map(getval, tree)


def _resolve_solver(method, sde: SDE, adjoint: Adjoint) -> AbstractSolver:
    if method is None:
        if adjoint is Adjoint.REVERSIBLE:
            method = Method.REVERSIBLE_HEUN
        elif sde.noise is Noise.ADDITIVE:
            method = Method.SRA1
        else:
            method = Method.EULER if sde.calculus is Calculus.ITO else Method.HEUN
    if isinstance(method, AbstractSolver):
        solver = method
    else:
        solver = SOLVERS[as_enum(Method, method, "sdeint: method")]
    solver.check(sde)
    if adjoint is Adjoint.REVERSIBLE and solver.method is not Method.REVERSIBLE_HEUN:
        raise ValueError(
            f"sdeint: adjoint='reversible' needs method='reversible_heun', got "
            f"{solver.method.value!r}"
        )
    return solver


def _check_outputs(sde, y0, params, t0):
    """Evaluate drift and diffusion once at (t0, y0) (plain values); return the Brownian
    dimension m and the trace level of the outputs (> 0: they close over a traced value)."""
    batch, d = y0.shape
    outs = []
    for name, fn in (("drift", sde.f), ("diffusion", sde.g)):
        try:
            outs.append(fn(t0, y0, params))
        except ValueError as e:  # typically shapes that do not broadcast
            raise ValueError(
                f"sdeint: {name}(t, y, params) raised at t = ts[0] = {t0} with y = y0 of shape "
                f"{y0.shape} and params of shape(s) {_leaf_shapes(params)}: {e}"
            ) from e
    f_out, g_out = outs
    closure_level = trace_level((f_out, g_out))
    for name, out in (("drift", f_out), ("diffusion", g_out)):
        v = np.asarray(getval(out))
        if v.dtype.kind in "fc" and not np.all(np.isfinite(v)):
            rows = np.nonzero(~np.isfinite(v.reshape(v.shape[0], -1)).all(axis=1))[0] \
                if v.ndim else np.zeros(1, int)
            raise ValueError(
                f"sdeint: {name} is non-finite at t = ts[0] = {t0}, y = y0 (path "
                f"{int(rows[0])}); check the {name} and params"
            )
    f = np.asarray(getval(f_out))
    if f.shape != y0.shape:
        raise ValueError(
            f"sdeint: drift returned shape {f.shape}, expected y0's shape {y0.shape} (batch, d)"
        )
    g = np.asarray(getval(g_out))
    if sde.noise in (Noise.DIAGONAL, Noise.SCALAR):
        if g.shape != y0.shape:
            raise ValueError(
                f"sdeint: diffusion returned shape {g.shape}; {sde.noise.value} noise needs "
                f"y0's shape {y0.shape} (batch, d)"
            )
    elif g.ndim != 3 or g.shape[:2] != (batch, d):
        raise ValueError(
            f"sdeint: diffusion returned shape {g.shape}; {sde.noise.value} noise needs "
            f"(batch, d, m) = ({batch}, {d}, m) for y0 of shape {y0.shape}"
        )
    return sde.brownian_dim(d, g.shape), closure_level


def _leaf_shapes(params):
    shapes = [np.shape(getval(x)) for x in ds.tree_leaves(params)]
    return ", ".join(map(str, shapes)) if shapes else "(none)"


def _error_estimate(value, solver) -> ErrorEstimate:
    """The adaptive error estimate: ``value`` checked against the solver, or the default."""
    if value is None:
        return ErrorEstimate.EMBEDDED if solver.embedded else ErrorEstimate.DOUBLING
    value = as_enum(ErrorEstimate, value, "sdeint: error_estimate")
    if value is ErrorEstimate.EMBEDDED and not solver.embedded:
        raise ValueError(
            f"sdeint: error_estimate='embedded' needs a solver with an embedded pair (heun, "
            f"milstein), got method {solver.method.value!r}; use error_estimate='doubling'"
        )
    return value


def _check_adaptive(solver, brownian, ts, batch, m, seed, rtol, atol, dt_min, max_steps,
                    dtype=np.float64):
    """Validate the adaptive options; return the Brownian interval to step on."""
    for name, v in (("rtol", rtol), ("atol", atol)):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or not v >= 0 \
                or not math.isfinite(v):
            raise ValueError(f"sdeint: {name} must be a finite number >= 0, got {v!r}")
    if not rtol + atol > 0:
        raise ValueError("sdeint: adaptive stepping needs rtol + atol > 0, got both 0")
    if dt_min is not None:
        _validate.positive_number(dt_min, "dt_min", "sdeint")
    _validate.count(max_steps, "max_steps", "sdeint", 1)
    if solver.needs_levy_area:
        raise ValueError(
            f"sdeint: adaptive=True does not support method {solver.method.value!r} (it needs "
            f"Lévy areas on a fixed grid); use a fixed dt, or heun/euler_heun/milstein/euler"
        )
    if brownian is None:
        span = float(ts[-1]) - float(ts[0])
        return BrownianInterval(float(ts[0]), float(ts[-1]), (batch, m), seed=seed,
                                tol=span * ADAPTIVE_RESOLUTION, dtype=dtype)
    if not isinstance(brownian, BrownianInterval):
        raise ValueError(
            f"sdeint: adaptive=True needs brownian to be a BrownianInterval (rejected steps "
            f"re-query sub-intervals of the same path), got "
            f"{type(getattr(brownian, 'inner', brownian)).__name__}"
        )
    return brownian


ADAPTIVE_RESOLUTION = 2.0**-24  # the adaptive default interval's tol, as a fraction of the span


def _noise_dtype(y0):
    """The default Brownian motion's dtype: float32 for a float32 state (float64 otherwise)."""
    return np.float32 if np.result_type(getval(y0)) == np.float32 else np.float64


def _make_brownian(times, batch, m, seed, levy, dtype=np.float64):
    """The default noise: a stored path when Lévy area is needed, else a Brownian interval
    whose span is stretched so that a uniform step grid lands on its dyadic points."""
    shape = (batch, m)
    if levy:
        return BrownianPath(times, shape, seed=seed, levy_area=True, dtype=dtype)
    t0, t1 = float(times[0]), float(times[-1])
    steps = np.diff(times)
    n = times.size - 1
    span = t1 - t0
    if np.allclose(steps, steps[0], rtol=1e-12, atol=0.0):
        span = steps[0] * (1 << max(1, math.ceil(math.log2(n))))
        span = max(span, t1 - t0)
    tol = min(span * 2.0**-16, float(np.min(steps)) / 4)  # no two step ends in one leaf
    return BrownianInterval(t0, t0 + span, shape, seed=seed, tol=tol, dtype=dtype)


def _check_resolution(brownian, times):
    """A user's BrownianInterval must resolve the smallest step (else increments inside one
    leaf would not have the exact joint law; the interval itself would refuse mid-solve)."""
    if isinstance(brownian, BrownianInterval):
        h = float(np.min(np.diff(times)))
        if h < brownian.tol:
            raise ValueError(
                f"sdeint: the smallest step {h:.3g} is below brownian's resolution "
                f"tol={brownian.tol:.3g}; make the BrownianInterval with tol <= {h:.3g}"
            )


def sdeint(sde: SDE, y0: ArrayLike, ts: ArrayLike, params: Any = None, *,
           method: Method | str | AbstractSolver | None = None, dt: float | None = None,
           seed: int = 0, brownian: AbstractBrownian | None = None,
           adjoint: Adjoint | str = Adjoint.BACKPROP, snapshots: int = 8, adaptive: bool = False,
           rtol: float = 1e-3, atol: float = 1e-6, dt_min: float | None = None,
           max_steps: int = 100_000, error_estimate: ErrorEstimate | str | None = None,
           return_brownian: bool = False) -> Any:
    """Solve ``sde`` from ``y0`` at ``ts[0]`` and return the solution at every time in ``ts``.

    Args:
        sde: the :class:`SDE`.
        y0: the initial state, ``(batch, d)`` (a ``(d,)`` array is one path; the output then
            has no batch axis).
        ts: the save times, a strictly increasing 1-D array (at least 2).
        params: a pytree passed to drift and diffusion; differentiated with every adjoint.
            Values the functions *close over* are differentiated only with ``"backprop"``;
            ``"checkpoint"``, ``"reversible"`` and ``"stochastic"`` refuse a closed-over
            value being differentiated (ValueError: pass it inside ``params``), except, for
            ``"reversible"`` and ``"stochastic"``, one traced by an outer differentiation
            (grad of grad). Never a silently zero gradient.
        method: a :class:`Method`, its string, or a solver instance. Default: reversible Heun
            for ``adjoint="reversible"``, SRA1 for additive noise, else Euler (Itô) or Heun
            (Stratonovich).
        dt: the largest step; each save interval gets uniform steps of at most dt. Default: the
            smallest save spacing. With ``adaptive=True``: the first step tried.
        seed: the seed of the Brownian motion made when ``brownian`` is not given.
        brownian: the Brownian motion to use, of shape ``(batch, m)`` covering ``ts``: a
            :class:`BrownianInterval` (its ``tol`` <= the smallest step), a
            :class:`BrownianPath`, a :class:`BrownianIncrements` (increments drawn by the
            caller on the step grid, possibly traced: differentiated with
            ``adjoint="backprop"``, refused by the others), or your own subclass of
            :class:`AbstractBrownian` (define ``increment(s, t)`` or ``__call__(s, t)``; each
            increment is checked for shape and finiteness). Default: one made from ``seed``
            (see ``return_brownian``).
        adjoint: an :class:`Adjoint` (or its string): ``"backprop"``, ``"checkpoint"``,
            ``"reversible"``, ``"stochastic"``.
        snapshots: the snapshots per save interval with ``adjoint="checkpoint"``.
        adaptive: choose the steps with error control (``sde._adaptive``; see
            ``error_estimate``):
            rejected steps re-query the same Brownian path, so ``brownian`` must be a
            :class:`BrownianInterval` (the default one is made when not given). Any one-step
            solver without Lévy area; any adjoint (the accepted grid is then solved and
            differentiated as a fixed grid).
        rtol, atol: the adaptive tolerances (relative, absolute; both > 0 in sum).
        dt_min: the smallest adaptive step before giving up (default ``(ts[-1] − ts[0])·1e-10``;
            never below 4× the Brownian interval's resolution ``tol``, whose default for
            adaptive solves is ``(ts[-1] − ts[0])·2⁻²⁴``).
        max_steps: the most adaptive steps attempted.
        error_estimate: an :class:`ErrorEstimate` (or its string): ``"embedded"`` (the
            solver's embedded pair: heun, milstein) or ``"doubling"`` (step doubling, any
            one-step solver). Default: embedded when the solver has a pair, else doubling.
        return_brownian: also return the Brownian motion the solve used (the one sdeint made
            when ``brownian`` is not given: a BrownianInterval, or a BrownianPath with Lévy
            area for SRA1/SRI), to re-use its path elsewhere.

    Returns:
        ``ys`` of shape ``(len(ts), batch, d)`` (``(len(ts), d)`` for a 1-D y0); with
        ``return_brownian=True``, ``(ys, brownian)``.

    Raises:
        ValueError: bad ts, dt, y0 shape, drift/diffusion output shape (both shapes named),
            Brownian shape or span, or a solver that does not support the SDE's noise/calculus;
            a closed-over value being differentiated with an adjoint that cannot (see params).
        FloatingPointError: the state became non-finite (names the time and the path).
        RuntimeError: adaptive stepping fell below ``dt_min`` or exceeded ``max_steps``.

    Example:
        >>> ou = SDE(lambda t, y, p: p * (1.0 - y), lambda t, y, p: 0.3 + 0 * y)
        >>> ys = sdeint(ou, np.zeros((4, 1)), np.linspace(0, 1, 5), 2.0, dt=0.01, seed=1)
        >>> ys.shape
        (5, 4, 1)

    References:
        Gradients: X. Li et al., "Scalable Gradients for Stochastic Differential Equations",
        AISTATS 2020 (stochastic adjoint); P. Kidger et al., "Efficient and Accurate Gradients
        for Neural SDEs", NeurIPS 2021 (reversible Heun). Derivations in ``sde/DERIVATIONS.md``.
    """
    if not isinstance(sde, SDE):
        raise TypeError(f"sdeint: sde must be an sde.SDE, got {type(sde).__name__}")
    adjoint = as_enum(Adjoint, adjoint, "sdeint: adjoint")
    who = "sdeint"
    _validate.not_traced(ts, "ts", who, "the save times are not differentiated")
    ts = _validate.real_array(ts, "ts", who).astype(np.float64)
    if ts.ndim != 1 or ts.size < 2 or np.any(np.diff(ts) <= 0):
        raise ValueError(
            f"sdeint: ts must be a strictly increasing finite 1-D array of at least 2 times, "
            f"got {ts if ts.size < 8 else ts.shape}"
        )
    dt = float(np.min(np.diff(ts))) if dt is None else _validate.positive_number(dt, "dt", who)
    y0 = _validate.real_array(y0, "y0", who)
    squeeze = np.ndim(getval(y0)) == 1
    if squeeze:
        y0 = y0[None, :]
    if np.ndim(getval(y0)) != 2 or 0 in np.shape(getval(y0)):
        raise ValueError(
            f"sdeint: y0 must have shape (batch, d) or (d,) with batch, d >= 1, got "
            f"{np.shape(getval(y0))}"
        )
    _validate.parameters(params, who)
    seed = check_seed(_validate.count(seed, "seed", who, 0), who)  # also < 2**64
    snapshots = _validate.count(snapshots, "snapshots", who, 1)
    adaptive = _validate.flag(adaptive, "adaptive", who)
    return_brownian = _validate.flag(return_brownian, "return_brownian", who)
    solver = _resolve_solver(method, sde, adjoint)
    t0 = float(ts[0])
    m, closure_level = _check_outputs(sde, _plain(y0), _plain(params), t0)
    level = trace_level((y0, params))
    _check_closures(adjoint, closure_level, level)
    batch = np.shape(getval(y0))[0]
    user_brownian = brownian
    if brownian is not None:
        brownian = checked(brownian)
        _check_traced_noise(brownian, adjoint)
        if tuple(brownian.shape) != (batch, m):
            raise ValueError(
                f"sdeint: brownian has shape {tuple(brownian.shape)}, expected (batch, m) = "
                f"({batch}, {m}) for {sde.noise.value} noise"
            )
        if brownian.t0 > ts[0] or brownian.t1 < ts[-1]:
            raise ValueError(
                f"sdeint: brownian spans [{brownian.t0}, {brownian.t1}], which does not cover "
                f"ts = [{ts[0]}, {ts[-1]}]"
            )
        if solver.needs_levy_area and not brownian.has_levy_area:
            raise ValueError(
                f"sdeint: method {solver.method.value!r} needs the space-time Lévy area of each "
                f"step, which brownian ({type(user_brownian).__name__}) does not generate; pass "
                f"BrownianPath(..., levy_area=True) on the solver's grid, or omit brownian= "
                f"(sdeint then makes one)"
            )
    if adaptive:
        brownian = _check_adaptive(solver, brownian, ts, batch, m, seed, rtol, atol, dt_min,
                                   max_steps, _noise_dtype(y0))
        dt_min = max((ts[-1] - ts[0]) * 1e-10 if dt_min is None else float(dt_min),
                     4.0 * brownian.tol)
        estimate = _error_estimate(error_estimate, solver)
        # the accepted grid is chosen on plain values: under diffsci.jit a guard on it (a
        # later call whose errors accept other steps re-traces; it was a constant of the trace)
        times, save = observed(
            lambda y, p: select_grid(sde, solver, ts, _plain(y), _plain(p), brownian,
                                     dt0=float(dt), rtol=float(rtol), atol=float(atol),
                                     dt_min=dt_min, max_steps=int(max_steps),
                                     estimate=estimate)[:2], y0, params)
    else:
        times, save = make_grid(ts, float(dt))
        if brownian is None:
            brownian = _make_brownian(times, batch, m, seed, solver.needs_levy_area,
                                      _noise_dtype(y0))
        _check_resolution(brownian, times)
    grid = Grid(times, save, brownian, solver.needs_levy_area)
    run = _GRADIENT_METHODS[adjoint](sde, solver, grid, snapshots, level)
    ys = run(y0, params)
    ys = ys[:, 0] if squeeze else ys
    if return_brownian:
        return ys, brownian if user_brownian is None else user_brownian
    return ys
