"""Integration with gradients: :func:`odeint`, :func:`solve_ivp`, :func:`quad` and the sample rules.

:func:`solve_ivp` (RK45, RK23, DOP853, Radau, BDF; SciPy's signature and result) is in
:mod:`diffsci.scipy._ivp`; :func:`quad`, :func:`trapezoid`, :func:`cumulative_trapezoid` and
:func:`simpson` are in :mod:`diffsci.scipy._quad`; both are re-exported here.  The rest of this
docstring is about :func:`odeint`.

``odeint(func, y0, t, *args)`` solves ``dy/dt = func(y, t, *args)`` (the
argument order of :func:`scipy.integrate.odeint`) and returns ``y`` at every
time in ``t``.  Two integrators:

* ``"dopri5"``: the adaptive explicit Runge–Kutta pair of Dormand and Prince,
  order 5 with an embedded order-4 error estimate, with the step-size
  controller of Hairer, Nørsett and Wanner;
* ``"rk4"``: the classical fixed-step fourth-order Runge–Kutta method.

Two ways to differentiate the solution:

* ``gradient="backprop"`` records the solver's arithmetic on the tape, so the
  gradient is the exact derivative of the *discrete* solution.  The step-size
  controller's decisions (accept/reject, the next step) are computed from
  ``ds.stop_gradient`` values: they are constants to the derivative.  Memory
  grows with the number of steps.  Forward mode (``ds.jvp``) works through it.
* ``gradient="adjoint"`` is the continuous adjoint sensitivity method
  (Pontryagin; Chen et al. 2018): one :class:`diffsci.custom_vjp` whose
  backward pass solves the augmented system [y, λ, θ̄] backwards in time
  between consecutive output times, with vector–Jacobian products of
  ``func`` from :func:`diffsci.pullback`.  Memory is O(1) in the number of
  steps (only the outputs are kept).  Its gradient approximates the exact one
  to the solver tolerance.  Derivation: ``diffsci/DERIVATIONS.md``, section
  "ODE adjoint", equations (O1)–(O6).

References:
    J. R. Dormand, P. J. Prince, "A family of embedded Runge-Kutta formulae",
    J. Comput. Appl. Math. 6(1), 1980, 19–26 (Table 2: the tableau below).
    E. Hairer, S. P. Nørsett, G. Wanner, *Solving Ordinary Differential
    Equations I*, 2nd ed., Springer 1993, §II.4 (eqs. (4.11)–(4.13): error norm
    and step-size control; "Starting Step Size" algorithm) and Table 5.2.
    L. S. Pontryagin et al., *The Mathematical Theory of Optimal Processes*,
    Wiley 1962 (the adjoint equations).
    R. T. Q. Chen, Y. Rubanova, J. Bettencourt, D. Duvenaud, "Neural Ordinary
    Differential Equations", NeurIPS 2018, arXiv:1806.07366 (§2, eqs. (3)–(5)
    and Algorithm 1: the augmented backward system).
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._api import pullback, stop_gradient
from .._core import Dual, Tracer, getval
from .._custom import custom_vjp
from .._tree import Raveler, tree_flatten, tree_unflatten
from ..typing import ArrayLike

__all__ = ["odeint", "DOPRI5", "solve_ivp", "OdeResult", "OdeSolution", "quad", "trapezoid",
           "cumulative_trapezoid", "simpson"]


# ---------------------------------------------------------------------------
# Butcher tableau (data only)
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ButcherTableau:
    """An explicit Runge–Kutta pair: nodes ``c``, matrix ``a``, weights ``b``, error weights ``e``.

    ``a[i]`` holds the coefficients of stage ``i`` (row ``i`` of the strictly lower
    triangular matrix); ``e = b − b̂`` weights the embedded error estimate.
    """

    c: tuple[float, ...]
    a: tuple[tuple[float, ...], ...]
    b: tuple[float, ...]
    e: tuple[float, ...]
    order: int  # the exponent's denominator in the step-size rule: min(p, p̂) + 1 = 5


#: Dormand & Prince (1980), Table 2 "RK5(4)7M"; Hairer–Nørsett–Wanner I, Table 5.2.
DOPRI5 = ButcherTableau(
    c=(0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0),
    a=(
        (),
        (1 / 5,),
        (3 / 40, 9 / 40),
        (44 / 45, -56 / 15, 32 / 9),
        (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
        (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
        (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
    ),
    b=(35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0.0),
    # e = b − b̂ with b̂ = (5179/57600, 0, 7571/16695, 393/640, −92097/339200, 187/2100, 1/40)
    e=(71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40),
    order=5,
)

#: Step-size controller constants (HNW I §II.4, eq. (4.13)): safety factor and the
#: bounds on the step ratio; after a rejected step the step may not grow.
SAFETY, FAC_MIN, FAC_MAX = 0.9, 0.2, 10.0


# ---------------------------------------------------------------------------
# Options and validation
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _Options:
    method: str
    rtol: float
    atol: float
    step: float | None
    max_steps: int


@dataclass
class _Stats:
    nsteps: int = 0  # accepted steps
    nrejected: int = 0
    nfev: int = 0


def _positive(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not (
            math.isfinite(value) and value > 0):
        raise ValueError(f"odeint: {name} must be a positive finite number, got {value!r}")
    return float(value)


def _check_options(method, rtol, atol, step, max_steps, gradient):
    if method not in _SOLVERS:
        raise ValueError(f"odeint: method must be one of {sorted(_SOLVERS)}, got {method!r}")
    if gradient not in _GRADIENTS:
        raise ValueError(
            f"odeint: gradient must be one of {sorted(_GRADIENTS)}, got {gradient!r}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, numbers.Integral) \
            or max_steps < 1:
        raise ValueError(f"odeint: max_steps must be a positive int, got {max_steps!r}")
    if method == "rk4" and step is None:
        raise ValueError("odeint: method='rk4' needs step= (the largest step size; each "
                         "interval between output times is split into equal steps)")
    return _Options(method, _positive("rtol", rtol), _positive("atol", atol),
                    None if step is None else _positive("step", step), int(max_steps))


def _check_times(t):
    tv = np.asarray(getval(t))
    if tv.ndim != 1 or tv.size < 1:
        raise ValueError(f"odeint: t must be a 1-D array of output times, got shape {tv.shape}")
    if tv.dtype.kind not in "iuf":
        raise TypeError(f"odeint: t must be real, got dtype {tv.dtype}")
    if not np.all(np.isfinite(tv)):
        raise ValueError(f"odeint: t must be finite, got {tv}")
    if tv.size > 1:
        d = np.diff(tv)
        if not (np.all(d > 0) or np.all(d < 0)):
            k = int(np.argmax(d * np.sign(d[0]) <= 0)) + 1 if d[0] != 0 else 1
            raise ValueError(
                f"odeint: t must be strictly increasing or strictly decreasing; "
                f"t[{k - 1}] = {float(tv[k - 1])!r}, t[{k}] = {float(tv[k])!r}")
    if type(t) is Tracer or type(t) is Dual:
        return t
    return tv.astype(np.float64)


# ---------------------------------------------------------------------------
# Flattening the state pytree to one vector
# ---------------------------------------------------------------------------
# ---------------------------------------------------------------------------
# The integrators: f(y, t) -> dy/dt on flat vectors, plain or traced
# ---------------------------------------------------------------------------
def _norm(x, scale):
    """The RMS norm of HNW I eq. (4.11): sqrt(mean((x / scale)²)), a plain float."""
    return float(np.sqrt(np.mean((x / scale) ** 2)))


def _combine(y, h, coeffs, ks):
    """y + h·Σ_j coeffs[j]·ks[j], skipping zero coefficients (fewer tape records)."""
    acc = None
    for cj, kj in zip(coeffs, ks):
        if cj != 0.0:
            term = kj * cj
            acc = term if acc is None else acc + term
    return y if acc is None else y + acc * h


def _initial_step(f, t0, y0, f0, direction, t_end, opts, stats):
    """HNW I §II.4 "Starting Step Size" (p. 169), on plain values (a constant)."""
    y0, f0 = stop_gradient((y0, f0))
    scale = opts.atol + np.abs(y0) * opts.rtol
    d0, d1 = _norm(y0, scale), _norm(f0, scale)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, abs(t_end - t0))
    f1 = getval(f(y0 + direction * h0 * f0, t0 + direction * h0))
    stats.nfev += 1
    d2 = _norm(f1 - f0, scale) / h0
    dmax = max(d1, d2)
    h1 = max(1e-6, h0 * 1e-3) if dmax <= 1e-15 else (0.01 / dmax) ** (1.0 / DOPRI5.order)
    return min(100 * h0, h1)


def _step(t1, t0):
    """t1 − t0: a Python float when both are plain (keeps a float32 state float32)."""
    d = t1 - t0
    return d if type(d) is Tracer or type(d) is Dual else float(d)


def _solve_dopri5(f, y0, ts, opts, stats):
    """Adaptive Dormand–Prince 5(4) with output exactly at every time in ``ts``."""
    tab = DOPRI5
    tv = np.asarray(getval(ts), dtype=np.float64)
    out = [y0]
    if tv.size == 1:
        return out
    direction = 1.0 if tv[-1] > tv[0] else -1.0
    y, t = y0, ts[0]
    k1 = f(y, t)
    stats.nfev += 1
    h = opts.step if opts.step is not None else _initial_step(
        f, float(tv[0]), y, k1, direction, float(tv[1]), opts, stats)
    fac_max = FAC_MAX
    for i in range(1, tv.size):
        t_next = ts[i]
        tn = float(tv[i])
        while True:
            tc = float(getval(t))
            remaining = (tn - tc) * direction
            if remaining <= 1e-13 * max(abs(tn), 1.0):
                break
            if stats.nsteps + stats.nrejected >= opts.max_steps:
                raise RuntimeError(
                    f"odeint: max_steps={opts.max_steps} steps taken before reaching "
                    f"t[{i}] = {tn!r} (stopped at t = {tc!r}); the problem may be stiff or "
                    f"its solution blow up. Raise max_steps, or loosen rtol/atol.")
            last = h >= remaining
            # The step that lands on the output time is t_next − t: it carries t's
            # derivative when t is traced; interior steps are controller constants.
            hs = _step(t_next, t) if last else direction * h
            ks = [k1]
            for s in range(1, len(tab.c)):
                y_new = _combine(y, hs, tab.a[s], ks)
                ks.append(f(y_new, t + hs * tab.c[s]))
            # FSAL: the last stage's point (a[-1] = b) is the new solution, and its
            # slope ks[-1] is the next step's first stage.
            stats.nfev += len(tab.c) - 1
            h_used = abs(float(getval(hs)))
            err_vec = _combine(0.0, direction * h_used, tab.e, stop_gradient(ks))
            yv, ynv = stop_gradient((y, y_new))
            scale = opts.atol + opts.rtol * np.maximum(np.abs(yv), np.abs(ynv))
            err = _norm(err_vec, scale)
            if err <= 1.0:  # accept (HNW I eq. (4.12))
                stats.nsteps += 1
                y, k1 = y_new, ks[-1]
                t = t_next if last else t + hs
                factor = SAFETY * err ** (-1.0 / tab.order) if err > 0 else fac_max
                h = h_used * min(fac_max, max(FAC_MIN, factor))
                fac_max = FAC_MAX
            else:  # reject: shrink, and do not grow on the retry
                stats.nrejected += 1
                if not math.isfinite(err):
                    factor = FAC_MIN
                else:
                    factor = max(FAC_MIN, SAFETY * err ** (-1.0 / tab.order))
                h = h_used * factor
                fac_max = 1.0
                if h < 1e-14 * max(abs(tc), 1.0):
                    raise RuntimeError(
                        f"odeint: the step size underflowed ({h:.3g}) at t = {tc!r} before "
                        f"t[{i}] = {tn!r}: the solution is not finite or the problem is too "
                        f"stiff for an explicit method")
        out.append(y)
    return out


def _solve_rk4(f, y0, ts, opts, stats):
    """Classical RK4; each interval between output times is split into equal steps ≤ step."""
    tv = np.asarray(getval(ts), dtype=np.float64)
    out = [y0]
    y = y0
    for i in range(1, tv.size):
        n = max(1, math.ceil(abs(tv[i] - tv[i - 1]) / opts.step - 1e-9))
        if stats.nsteps + n > opts.max_steps:
            raise RuntimeError(
                f"odeint: method='rk4' would need more than max_steps={opts.max_steps} steps "
                f"to reach t[{i}] = {tv[i]!r} with step={opts.step!r}; raise max_steps or step")
        t0 = ts[i - 1]
        h = _step(ts[i], t0) / n
        for j in range(n):
            t = t0 + h * j
            k1 = f(y, t)
            k2 = f(y + k1 * (h / 2), t + h / 2)
            k3 = f(y + k2 * (h / 2), t + h / 2)
            k4 = f(y + k3 * h, t + h)
            y = y + (k1 + 2 * k2 + 2 * k3 + k4) * (h / 6)
        stats.nsteps += n
        stats.nfev += 4 * n
        out.append(y)
    return out


_SOLVERS = {"dopri5": _solve_dopri5, "rk4": _solve_rk4}


# ---------------------------------------------------------------------------
# Gradient methods
# ---------------------------------------------------------------------------
def _split_args(args):
    """Differentiable leaves of ``args`` (float arrays/numbers) and a rebuild function."""
    leaves, treedef = tree_flatten(args)
    diff = [k for k, x in enumerate(leaves) if _is_float(x)]

    def rebuild(p):
        full = list(leaves)
        for k, v in zip(diff, p):
            full[k] = v
        return tree_unflatten(treedef, full)

    return tuple(leaves[k] for k in diff), rebuild


def _is_float(x):
    v = getval(x)
    return isinstance(v, (np.ndarray, np.generic, float)) and np.result_type(v).kind == "f"


def _top_level(values):
    top = 0
    for x in tree_flatten(values)[0]:
        if (type(x) is Tracer or type(x) is Dual) and x._tape.level > top:
            top = x._tape.level
    return top


def _unwrap_level(x, level):
    return x._value if (type(x) is Tracer or type(x) is Dual) and x._tape.level == level else x


def _check_traced_args(args):
    """The adjoint differentiates real float leaves of args only: refuse other traced ones."""
    for k, x in enumerate(tree_flatten(args)[0]):
        if (type(x) is Tracer or type(x) is Dual) and np.result_type(getval(x)).kind != "f":
            raise TypeError(
                f"odeint(gradient='adjoint'): leaf {k} of args is being differentiated but is "
                f"{np.result_type(getval(x))}; the adjoint handles real float arguments only. "
                f"Pass real and imaginary parts separately, or use gradient='backprop'.")


def _check_no_closure(fflat, y0, t0, p):
    """Refuse a ``func`` that closes over a value being differentiated (adjoint method).

    ``func`` is evaluated once at the inputs with their innermost trace removed; a
    tracer of that level (or a newer one) in its output can only come from a closure,
    and its gradient would be lost by the adjoint's backward pass.
    """
    level = _top_level((y0, t0, p))
    y0, t0, p = (tuple(_unwrap_level(x, level) for x in tree_flatten(v)[0])
                 for v in (y0, t0, p))
    out = fflat(y0[0], t0[0], p)
    if any((type(o) is Tracer or type(o) is Dual) and o._tape.level >= level
           for o in tree_flatten(out)[0]):
        raise ValueError(
            "odeint(gradient='adjoint'): func closes over a value being differentiated (its "
            "output is traced although y, t and args are not); the adjoint's backward pass "
            "cannot see it. Pass the value through odeint's *args, or use "
            "gradient='backprop'.")


def _backprop(fflat, y0, ts, p, opts):
    stats = _Stats()
    ys = _SOLVERS[opts.method](lambda y, t: fflat(y, t, p), y0, ts, opts, stats)
    return np.stack(ys), stats


def _adjoint(fflat, y0, ts, p, opts):
    """The continuous adjoint as one custom_vjp (DERIVATIONS.md (O1)–(O6))."""
    stats = _Stats()
    solver = _SOLVERS[opts.method]

    @custom_vjp
    def solve(y0, ts, p):
        return np.stack(solver(lambda y, t: fflat(y, t, p), y0, ts, opts, stats))

    def fwd(y0, ts, p):
        # An outer trace level still in the inputs (jvp of grad: hessian) differentiates
        # the forward solve directly, in its own mode (backprop or dual numbers).
        ys = solve.fun(y0, ts, p)
        return ys, (ys, ts, p)

    def bwd(res, g):
        ys, ts, p = res
        n = ys.shape[-1]
        sizes = [int(np.size(getval(x))) for x in p]
        offsets = np.cumsum([0] + sizes)

        def aug_dynamics(s, t):
            # s = [y, λ, θ̄]; d/dt [y, λ, θ̄] = [f, −λᵀ∂f/∂y, −λᵀ∂f/∂θ]  (O2)
            y, lam = s[:n], s[n:2 * n]
            fy, back = pullback(lambda y_, *p_: fflat(y_, t, p_), y, *p)
            cts = back(lam)
            parts = [fy, -cts[0]] + [-np.reshape(c, (-1,)) for c in cts[1:]]
            return np.concatenate(parts)

        lam = g[-1]
        pbar = np.zeros(int(offsets[-1]), dtype=np.result_type(getval(ys)))
        tbar = [None] * len(g)
        back_stats = _Stats()
        for i in range(len(g) - 1, 0, -1):
            tbar[i] = np.sum(g[i] * fflat(ys[i], ts[i], p))  # (O5)
            s0 = np.concatenate([ys[i], lam, pbar])
            s1 = solver(aug_dynamics, s0, np.stack([ts[i], ts[i - 1]]), opts, back_stats)[-1]
            # Restart y from the forward pass's value at t[i-1] (torchdiffeq does the same):
            # the backward recomputation of y is only used inside the interval.  (O4)
            lam = s1[n:2 * n] + g[i - 1]
            pbar = s1[2 * n:]
        tbar[0] = -np.sum((lam - g[0]) * fflat(ys[0], ts[0], p))  # (O6)
        pcts = tuple(np.reshape(pbar[offsets[k]:offsets[k + 1]], np.shape(getval(x)))
                     for k, x in enumerate(p))
        return lam, np.stack(tbar), pcts

    solve.defvjp(fwd, bwd)
    return solve(y0, ts, p), stats


_GRADIENTS = {"adjoint": _adjoint, "backprop": _backprop}


def _keyword_args(args, kwargs):
    """Positional ``*args`` or SciPy's ``args=(...)`` keyword (not both); refuse other keywords."""
    if not kwargs:
        return args
    extra = sorted(set(kwargs) - {"args"})
    if extra:
        raise TypeError(f"odeint: unexpected keyword argument(s) {extra}; expected args=, "
                        f"method=, rtol=, atol=, gradient=, step=, max_steps=, full_output=, "
                        f"tfirst=")
    kw = kwargs["args"]
    if not isinstance(kw, tuple):
        raise TypeError(f"odeint: args must be a tuple (as scipy.integrate.odeint), got "
                        f"{type(kw).__name__}")
    if args:
        raise TypeError(f"odeint: extra arguments given both positionally ({len(args)}) and "
                        f"as args=(...); use one")
    return kw


def _scipy_positional_args(func, args):
    """SciPy's ``odeint(func, y0, t, (a, b))``: a lone tuple as the 4th positional argument.

    diffsci's ``*args`` reads it as one argument, SciPy's ``args`` as the tuple of extra
    arguments.  The two readings are told apart by ``func``'s signature, and the tuple is
    unpacked only where passing it whole is an arity error and unpacking it fits: so no call
    that binds today changes meaning (a tuple of one, or a ``func`` taking ``*args``, keeps
    diffsci's reading).
    """
    if len(args) != 1 or type(args[0]) is not tuple or len(args[0]) < 2:
        return args
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):  # builtins without a signature: keep diffsci's reading
        return args
    y = t = None

    def binds(*a):
        try:
            sig.bind(*a)
            return True
        except TypeError:
            return False
    if not binds(y, t, args[0]) and binds(y, t, *args[0]):
        return args[0]
    return args


# ---------------------------------------------------------------------------
# The public entry point
# ---------------------------------------------------------------------------
def odeint(func: Callable[..., Any], y0: Any, t: ArrayLike, *args: Any, method: str = "dopri5",
           rtol: float = 1e-7, atol: float = 1e-9, gradient: str = "adjoint",
           step: float | None = None, max_steps: int = 100_000, full_output: bool = False,
           tfirst: bool = False, **kwargs: Any) -> Any:
    """Solve ``dy/dt = func(y, t, *args)`` and return ``y`` at every time in ``t``.

    Args:
        func: ``func(y, t, *args) -> dy/dt`` (``func(t, y, *args)`` with
            ``tfirst=True``) with ``dy/dt`` shaped like ``y`` (the same pytree).
            Plain NumPy code.
        y0: the initial state at ``t[0]``: an array, a number, or a pytree of
            them (real floats; integers are promoted to float64).
        t: 1-D, strictly increasing or strictly decreasing output times;
            ``t[0]`` is the initial time.  May be differentiated.
        *args: extra arguments of ``func`` (pytrees); their float leaves are
            differentiated.  SciPy's keyword form ``args=(...)`` (a tuple) is
            the same thing; give one or the other.  SciPy's positional form
            ``odeint(func, y0, t, (a, b))`` is read as ``args=(a, b)`` when
            ``func``'s signature takes ``a, b`` and cannot take the tuple whole
            (never otherwise: a call that binds keeps its meaning).  With
            ``gradient="adjoint"`` every value being differentiated must reach
            ``func`` through ``y0``, ``t`` or ``args``, not through a closure (this
            is checked).
        method: ``"dopri5"`` (adaptive Dormand–Prince 5(4)) or ``"rk4"``
            (classical Runge–Kutta with fixed steps).
        rtol, atol: the tolerances of ``"dopri5"``: a step is accepted when the
            RMS of ``err_i / (atol + rtol·max(|y_i|, |y_new_i|))`` is ≤ 1 (HNW I
            eq. (4.11)).  The global error is roughly proportional to them.
        gradient: ``"adjoint"`` (continuous adjoint, O(1) memory in the number
            of steps; reverse mode) or ``"backprop"`` (differentiate the solver's
            steps: exact derivative of the discrete solution; reverse and
            forward mode).
        step: ``"rk4"``: the largest step; each interval between output times
            is split into ``ceil(|Δt| / step)`` equal steps (required).
            ``"dopri5"``: the first step (default: HNW's automatic choice).
        max_steps: the most steps (accepted and rejected) one solve may take.
        full_output: also return a dict with the forward solve's counts:
            ``nsteps`` (accepted), ``nrejected`` and ``nfev`` (calls of func).
        tfirst: ``func``'s first two arguments are ``(t, y)`` rather than
            SciPy odeint's default ``(y, t)``.

    Returns:
        ``y`` at the times ``t``: shaped like ``y0`` with a leading axis of length
        ``len(t)`` on every leaf (``ys[0]`` is ``y0``); ``(ys, info)`` with
        ``full_output=True``.

    Raises:
        ValueError: ``t`` is not 1-D, finite and strictly monotonic; a bad
            option; or (adjoint) ``func`` closes over a differentiated value.
        TypeError: ``y0`` is not real, or ``func`` returns another structure;
            ``args=`` is not a tuple or is given together with positional args;
            an unknown keyword.
        RuntimeError: ``max_steps`` was reached, or the step size underflowed.

    Example:
        >>> import numpy as np, diffsci as ds
        >>> from diffsci.scipy.integrate import odeint
        >>> t = np.array([0.0, 1.0])
        >>> round(float(odeint(lambda y, t, k: -k * y, 1.0, t, 2.0)[-1]), 7)  # exp(-2)
        0.1353353
        >>> round(float(ds.grad(lambda k: odeint(lambda y, t, k: -k * y, 1.0, t, k)[-1])(2.0)), 7)
        -0.1353353

    References:
        Dormand & Prince (1980); Hairer, Nørsett & Wanner I, §II.4; Chen et al.
        (2018), Algorithm 1.  See the module docstring.
    """
    if not callable(func):
        raise TypeError(f"odeint: func must be callable, got {type(func).__name__}")
    args = _scipy_positional_args(func, _keyword_args(args, kwargs))
    if not isinstance(tfirst, bool):
        raise TypeError(f"odeint: tfirst must be True or False, got {tfirst!r}")
    if tfirst:
        user = func
        func = lambda y, t, *a: user(t, y, *a)  # noqa: E731
    opts = _check_options(method, rtol, atol, step, max_steps, gradient)
    ts = _check_times(t)
    rav = Raveler(y0, "y0", "odeint")
    y0_flat = rav.ravel(y0, "y0")
    if np.result_type(getval(y0_flat)).kind != "f":  # integers: plain by construction
        y0_flat = np.asarray(y0_flat, dtype=rav.dtype)
    p, rebuild = _split_args(args)

    def fflat(y, t, p):
        dy = rav.ravel(func(rav.unravel(y), t, *rebuild(p)), "func's output")
        return dy if np.result_type(getval(dy)) == rav.dtype else dy.astype(rav.dtype)

    if gradient == "adjoint":
        _check_traced_args(args)
        _check_no_closure(fflat, y0_flat, ts[0], p)
    ys, stats = _GRADIENTS[gradient](fflat, y0_flat, ts, p, opts)
    out = rav.unravel(ys, (int(np.size(getval(ts))),))
    if full_output:
        return out, {"nsteps": stats.nsteps, "nrejected": stats.nrejected, "nfev": stats.nfev}
    return out


from ._ivp import OdeResult, OdeSolution, solve_ivp  # noqa: E402  (uses the pieces above)
from ._quad import cumulative_trapezoid, quad, simpson, trapezoid  # noqa: E402
