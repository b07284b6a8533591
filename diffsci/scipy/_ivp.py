"""``solve_ivp`` with SciPy's signature, differentiable: explicit Runge–Kutta, Radau IIA, BDF.

Re-exported by :mod:`diffsci.scipy.integrate`.  ``solve_ivp(fun, t_span, y0, method, t_eval,
dense_output, args=, rtol=, atol=)`` solves ``dy/dt = fun(t, y, *args)`` for a 1-D ``y0``
and returns an :class:`OdeResult` like SciPy's (``t``, ``y`` of shape ``(n, len(t))``,
``sol``, ``nfev``, ``njev``, ``nlu``, ``status``, ``message``, ``success``).

Methods (rules as a table, :data:`METHODS`):

=========  =========================================================================
``RK45``   Dormand–Prince 5(4), FSAL, with Hairer's order-4 dense output (DOPRI5's
           ``contd5``); error exponent 1/5 (SciPy's controller constants).
``RK23``   Bogacki–Shampine 3(2), FSAL, cubic Hermite dense output; exponent 1/3.
``DOP853`` Dormand–Prince 8(5,3) (Hairer's DOP853): 12 stages, error estimators of
           orders 5 and 3 combined, order-7 dense output from 3 extra stages; exponent 1/8.
``Radau``  Radau IIA, 3 stages, order 5 (stiffly accurate, L-stable): the stage
           equations solved by simplified Newton on plain values; the local error
           estimated by step doubling (one step of h against two of h/2, the two
           half steps kept); dense output by the collocation polynomial
           (in :mod:`diffsci.scipy._ivp_radau`).
``BDF``    variable-order (1–5) variable-step numerical differentiation formulas in
           the quasi-constant step size form of Shampine & Reichelt (1997), the family
           SciPy's BDF uses: backward differences rescaled on a step change (Byrne &
           Hindmarsh 1975), Newton with a reused Jacobian, the order moved by ±1 after
           k+1 equal steps; dense output by the interpolating polynomial of the
           differences (in :mod:`diffsci.scipy._ivp_bdf`).
=========  =========================================================================

Gradients (``y0`` and the float leaves of ``args``; ``t_span`` and ``t_eval`` are plain):

* explicit methods, ``adjoint=False`` (default): the solver's arithmetic is recorded, so the
  gradient is the exact derivative of the *discrete* solution.  The step-size controller
  works on ``stop_gradient`` values: accepted step sizes (and the accept/reject decisions)
  are constants to the derivative.  Forward mode works through it.
* ``adjoint=True`` (every method): one :class:`diffsci.custom_vjp` whose backward pass
  solves the continuous adjoint system backwards between the output times, as
  :func:`diffsci.scipy.integrate.odeint`'s adjoint (DERIVATIONS.md (O1)–(O6)): by DOPRI5 for
  the explicit methods, by the same implicit method (on plain values) for Radau and BDF,
  whose adjoint systems are as stiff as the forward ones; the same rtol/atol; O(1) tape in
  the number of steps; approximates the exact gradient to the tolerance.
* ``Radau``: each step is one custom_vjp differentiated by the implicit function theorem on
  its stage equations G(Z; y0, p) = 0 (DERIVATIONS.md "solve_ivp" (IVP1)–(IVP3)): one
  transposed linear solve per step, the Newton iterations are never recorded.  Step sizes
  are constants, so this is again the exact derivative of the discrete solution.
* ``BDF``: likewise, each step's correction d solves G(d; y⁽⁰⁾, ψ, p) = d − (h/α) f(t, y⁽⁰⁾ +
  d, p) + ψ = 0 and is one custom_vjp by the IFT; the predictor y⁽⁰⁾, ψ and the difference
  updates are linear in the recorded differences, so the gradient is again that of the
  discrete solution for the accepted step sizes and orders.

Events (every method, either gradient): sign changes of each ``g(t, y, *args)`` per accepted
step, roots by Brent's method on the dense output (see :class:`_Events`), event times
differentiated by the IFT (first order).  With ``adjoint=True`` a plain solve locates the
roots (and a terminal stop), the adjoint custom_vjp gives y at them, and the same IFT
correction makes the times differentiable.

References:
    J. R. Dormand, P. J. Prince, J. Comput. Appl. Math. 6 (1980) 19–26.
    P. Bogacki, L. F. Shampine, Appl. Math. Lett. 2 (1989) 321–325.
    E. Hairer, S. P. Nørsett, G. Wanner, *Solving ODEs I*, 2nd ed. (1993), §II.4, §II.6
    (dense output of DOPRI5), §II.10 (DOP853); E. Hairer, G. Wanner, *Solving ODEs II*,
    2nd ed. (1996), §IV.5 (Radau IIA), §IV.8 (simplified Newton); §II.4 (step doubling,
    "Richardson extrapolation").
    L. F. Shampine, M. W. Reichelt, SIAM J. Sci. Comput. 18 (1997) 1–22 (the SciPy/MATLAB
    interface and controller; the NDF/BDF formulas in quasi-constant step size form).
    G. D. Byrne, A. C. Hindmarsh, ACM TOMS 1 (1975) 71–96 (rescaling the differences).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._api import pullback, stop_gradient
from .._core import Dual, Tracer, getval
from .._custom import custom_vjp
from .._tree import tree_flatten
from ..numpy import _util
from ..typing import ArrayLike
from . import integrate as _odeint_mod
from .integrate import DOPRI5, ButcherTableau
from .optimize import _split_args  # float leaves of args and their rebuild

__all__ = ["solve_ivp", "OdeResult", "OdeSolution", "RK23", "METHODS"]

#: Bogacki & Shampine (1989): order 3 with an embedded order-2 estimate, FSAL.
#: e = b − b̂ with b̂ = (7/24, 1/4, 1/3, 1/8).
RK23 = ButcherTableau(
    c=(0.0, 1 / 2, 3 / 4, 1.0),
    a=((), (1 / 2,), (0.0, 3 / 4), (2 / 9, 1 / 3, 4 / 9)),
    b=(2 / 9, 1 / 3, 4 / 9, 0.0),
    e=(2 / 9 - 7 / 24, 1 / 3 - 1 / 4, 4 / 9 - 1 / 3, -1 / 8),
    order=3,
)

#: Hairer's dense-output weights for DOPRI5 (HNW I §II.6, the code DOPRI5's ``contd5``):
#: y(t0 + θh) = y0 + θ(Δ + (1−θ)(B + θ(Δ − h k7 − B + (1−θ) h Σ d_i k_i))), B = h k1 − Δ.
_D5 = (-12715105075 / 11282082432, 0.0, 87487479700 / 32700410799,
       -10690763975 / 1880347072, 701980252875 / 199316789632, -1453857185 / 822651844,
       69997945 / 29380423)

SAFETY, FAC_MIN, FAC_MAX = 0.9, 0.2, 10.0


# Dormand & Prince's DOP853 (HNW I §II.10, the code DOP853): 12 stages of order 8, the 13th
# the derivative at the new point (FSAL-like), error estimators of orders 5 and 3 combined as
# in DOP853, and 3 extra stages for the order-7 dense output.  The coefficients are the
# published ones, taken from SciPy's table of them rather than retyped.
from scipy.integrate._ivp import dop853_coefficients as _D853  # noqa: E402

DOP853 = ButcherTableau(
    c=tuple(float(c) for c in _D853.C[:_D853.N_STAGES]) + (1.0,),
    a=tuple(tuple(float(v) for v in _D853.A[s, :s]) for s in range(_D853.N_STAGES))
    + (tuple(float(v) for v in _D853.B),),
    b=tuple(float(v) for v in _D853.B) + (0.0,),
    e=tuple(float(v) for v in _D853.E5),
    order=8,
)


def _err_dop853(ks, h, scale):
    """DOP853's error norm: |h| |e5|^2 / sqrt(n (|e5|^2 + 0.01 |e3|^2)) (HNW I §II.10)."""
    # the two estimates cancel to the rounding of the stages: on smooth problems the error norm
    # is noise, and the step sequence matches SciPy's only to that noise (1e-9 .. 1e-6)
    k = np.asarray(ks).T
    e5, e3 = np.dot(k, _D853.E5) / scale, np.dot(k, _D853.E3) / scale
    n5, n3 = float(np.linalg.norm(e5) ** 2), float(np.linalg.norm(e3) ** 2)
    if n5 == 0.0 and n3 == 0.0:
        return 0.0
    return abs(h) * n5 / math.sqrt((n5 + 0.01 * n3) * np.size(scale))


@dataclass(frozen=True)
class _Method:
    kind: str  # "explicit" or "implicit"
    tableau: ButcherTableau | None
    err_exponent: float  # 1 / (error estimator order + 1)
    error: Callable | None = None  # (plain ks, h, scale) -> error norm; default RMS of Σ e k h


#: The methods and their rules (see the module docstring).
METHODS = {
    "RK45": _Method("explicit", DOPRI5, 1 / 5),
    "RK23": _Method("explicit", RK23, 1 / 3),
    "DOP853": _Method("explicit", DOP853, 1 / 8, _err_dop853),
    "Radau": _Method("implicit", None, 1 / 6),
    "BDF": _Method("implicit", None, 1 / 6),  # variable order 1-5: the exponent is per order
}


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------
class OdeResult(dict):
    """SciPy's result bunch: a dict whose keys are also attributes.

    Keys: ``t`` (plain times), ``y`` (``(n, len(t))``, traced when differentiated), ``sol``
    (an :class:`OdeSolution` or ``None``), ``t_events``/``y_events`` (per event function,
    its times and states, traced when differentiated; ``None`` without events), ``nfev``,
    ``njev``, ``nlu``, ``status`` (0 success, 1 a terminal event, −1 failure),
    ``message``, ``success``.
    """

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    __setattr__ = dict.__setitem__


class OdeSolution:
    """The dense solution: ``sol(t)`` for a scalar (shape ``(n,)``) or 1-D ``t`` (``(n, m)``).

    Piecewise per accepted step, each piece the method's own continuous extension built
    from (possibly traced) step values, so ``sol(t)`` is differentiable in ``y0`` and
    ``args`` (in ``t`` too: the interpolants are polynomials in θ = (t − t_i)/h_i).
    """

    def __init__(self, ts: ArrayLike, pieces: Sequence[Callable[[Any], Any]]) -> None:
        self.ts = np.asarray(ts, dtype=np.float64)  # step boundaries, in integration order
        self.t_min, self.t_max = float(min(ts[0], ts[-1])), float(max(ts[0], ts[-1]))
        self._pieces = pieces  # pieces[i](theta) -> y on [ts[i], ts[i+1]]
        self._ascending = self.ts[-1] >= self.ts[0]

    def _index(self, tv):
        t_sorted = self.ts if self._ascending else self.ts[::-1]
        k = int(np.searchsorted(t_sorted, tv, side="left")) - 1
        k = min(max(k, 0), len(self._pieces) - 1)
        return k if self._ascending else len(self._pieces) - 1 - k

    def __call__(self, t: ArrayLike) -> Any:
        tv = np.asarray(getval(t), dtype=np.float64)
        if tv.ndim > 1:
            raise ValueError(f"OdeSolution: t must be a scalar or 1-D, got shape {tv.shape}")
        # the step each time falls in: a guard under diffsci.jit (a later t in another step
        # re-traces instead of reusing this one's polynomial)
        ks = _util.observed(lambda v: np.array([self._index(float(x)) for x in np.ravel(v)]), t)
        if tv.ndim == 0:
            return self._at(t, int(ks[0]))
        return np.stack([self._at(t[j], int(ks[j])) for j in range(tv.size)], axis=1)

    def _at(self, t, k):
        h = self.ts[k + 1] - self.ts[k]
        return self._pieces[k]((t - self.ts[k]) / h)


# ---------------------------------------------------------------------------
# validation (once, at the boundary)
# ---------------------------------------------------------------------------
def _positive(name, value, allow_inf=False):
    ok = (not isinstance(value, bool) and isinstance(value, numbers.Real)
          and value > 0 and (math.isfinite(value) or allow_inf))
    if not ok:
        raise ValueError(f"solve_ivp: {name} must be a positive {'' if allow_inf else 'finite '}"
                         f"number, got {value!r}")
    return float(value)


def _plain_times(name, t):
    if type(t) is Tracer or type(t) is Dual or any(
            type(x) is Tracer or type(x) is Dual for x in tree_flatten(t)[0]):
        raise TypeError(f"solve_ivp: {name} is being differentiated; solve_ivp differentiates "
                        f"y0 and args only (use diffsci.scipy.integrate.odeint for gradients "
                        f"in the times)")
    return np.asarray(t, dtype=np.float64)


@dataclass
class _Opts:
    rtol: float
    atol: np.ndarray | float
    max_step: float
    first_step: float | None
    max_steps: int


@dataclass
class _Stats:
    nfev: int = 0
    njev: int = 0
    nlu: int = 0


def _check(method, t_span, y0, t_eval, rtol, atol, max_step, first_step, max_steps, args,
           adjoint, dense_output):
    if method not in METHODS:
        raise ValueError(f"solve_ivp: method must be one of {sorted(METHODS)}, got {method!r}"
                         f" (LSODA is not implemented)")
    ts = _plain_times("t_span", t_span)
    if ts.shape != (2,) or not np.all(np.isfinite(ts)) or ts[0] == ts[1]:
        raise ValueError(f"solve_ivp: t_span must be two distinct finite numbers (t0, tf), "
                         f"got {t_span!r}")
    y0v = np.asarray(getval(y0))
    if y0v.ndim != 1 or y0v.size == 0:
        raise ValueError(f"solve_ivp: y0 must be a non-empty 1-D array (as SciPy), got shape "
                         f"{y0v.shape}")
    if y0v.dtype.kind not in "iuf":
        raise TypeError(f"solve_ivp: y0 must be real, got dtype {y0v.dtype}")
    if not isinstance(args, tuple):
        raise TypeError(f"solve_ivp: args must be a tuple, got {type(args).__name__}")
    rtol = _positive("rtol", rtol)
    if rtol < 100 * np.finfo(float).eps:
        raise ValueError(f"solve_ivp: rtol must be at least 100 * machine epsilon "
                         f"(2.2e-14), got {rtol!r}")
    atol_v = np.asarray(atol, dtype=np.float64)
    if atol_v.ndim > 1 or (atol_v.ndim == 1 and atol_v.shape != y0v.shape) \
            or not np.all(atol_v > 0) or not np.all(np.isfinite(atol_v)):
        raise ValueError(f"solve_ivp: atol must be a positive number or one per component of "
                         f"y0 (shape {y0v.shape}), got {atol!r}")
    max_step = _positive("max_step", max_step, allow_inf=True)
    first_step = None if first_step is None else _positive("first_step", first_step)
    if isinstance(max_steps, bool) or not isinstance(max_steps, numbers.Integral) \
            or max_steps < 1:
        raise ValueError(f"solve_ivp: max_steps must be a positive int, got {max_steps!r}")
    te = None
    if t_eval is not None:
        te = _plain_times("t_eval", t_eval)
        d = 1.0 if ts[1] > ts[0] else -1.0
        lo, hi = min(ts), max(ts)
        if te.ndim != 1 or np.any(te < lo) or np.any(te > hi):
            raise ValueError(f"solve_ivp: t_eval must be 1-D and within t_span = {tuple(ts)}, "
                             f"got {t_eval!r}")
        if te.size > 1 and not np.all(np.diff(te) * d > 0):
            raise ValueError("solve_ivp: t_eval must be strictly monotonic in the direction "
                             "of t_span")
    if not isinstance(adjoint, bool):
        raise TypeError(f"solve_ivp: adjoint must be True or False, got {adjoint!r}")
    if adjoint and dense_output:
        raise ValueError("solve_ivp: dense_output=True with adjoint=True: the dense solution "
                         "of the adjoint method is not differentiable; use adjoint=False")
    opts = _Opts(rtol, atol_v if atol_v.ndim else float(atol_v), max_step, first_step,
                 int(max_steps))
    return ts, te, opts


# ---------------------------------------------------------------------------
# shared pieces of the steppers
# ---------------------------------------------------------------------------
def _rms(x, scale):
    return float(np.sqrt(np.mean((np.asarray(x) / scale) ** 2)))


def _initial_step(f, t0, y0, f0, direction, order, opts, stats, span):
    """HNW I §II.4 "Starting step size" on plain values (a constant of the derivative)."""
    y0, f0 = np.asarray(getval(y0)), np.asarray(getval(f0))
    scale = opts.atol + np.abs(y0) * opts.rtol
    d0, d1 = _rms(y0, scale), _rms(f0, scale)
    h0 = 1e-6 if d0 < 1e-5 or d1 < 1e-5 else 0.01 * d0 / d1
    h0 = min(h0, span)
    f1 = np.asarray(getval(f(t0 + direction * h0, y0 + direction * h0 * f0)))
    stats.nfev += 1
    d2 = _rms(f1 - f0, scale) / h0
    dmax = max(d1, d2)
    h1 = max(1e-6, h0 * 1e-3) if dmax <= 1e-15 else (0.01 / dmax) ** (1.0 / (order + 1))
    return min(100 * h0, h1, opts.max_step, span)


def _too_many(where, opts, t):
    return (f"solve_ivp: max_steps={opts.max_steps} steps taken before reaching the end of "
            f"t_span (stopped at t = {t!r}, {where}); the problem may be stiff (try "
            f"method='Radau' or 'BDF') or its solution blow up")


# ---------------------------------------------------------------------------
# explicit Runge–Kutta (RK45, RK23, DOP853)
# ---------------------------------------------------------------------------
def _dense_rk45(y0, y1, ks, h):
    delta = y1 - y0
    bspl = ks[0] * h - delta
    c4 = delta - ks[6] * h - bspl
    c5 = _odeint_mod._combine(0.0, h, _D5, ks)

    def piece(th):
        return y0 + th * (delta + (1 - th) * (bspl + th * (c4 + (1 - th) * c5)))
    return piece


def _dense_dop853(f, t0, y0, y1, ks, h):
    """DOP853's order-7 continuous extension (HNW I §II.10, the code's ``contd8``): three
    extra stages, then y(t0 + θh) = y0 + a nested product of the seven F's in θ and 1 − θ."""
    ks = list(ks)
    for s in range(_D853.N_STAGES + 1, len(_D853.C)):
        a = tuple(float(v) for v in _D853.A[s, :s])
        ks.append(f(t0 + h * float(_D853.C[s]), _odeint_mod._combine(y0, h, a, ks)))
    delta = y1 - y0
    fs = [delta, ks[0] * h - delta, delta * 2 - (ks[_D853.N_STAGES] + ks[0]) * h]
    fs += [_odeint_mod._combine(0.0, h, tuple(float(v) for v in row), ks) for row in _D853.D]

    def piece(th):
        acc = 0.0
        for i, fi in enumerate(reversed(fs)):
            acc = (acc + fi) * (th if i % 2 == 0 else 1 - th)
        return y0 + acc
    return piece


def _dense_hermite(y0, y1, f0, f1, h):
    def piece(th):
        h00 = (1 + 2 * th) * (1 - th) ** 2
        h10 = th * (1 - th) ** 2
        h01 = th ** 2 * (3 - 2 * th)
        h11 = th ** 2 * (th - 1)
        return y0 * h00 + f0 * (h * h10) + y1 * h01 + f1 * (h * h11)
    return piece


def _explicit(f, t0, tf, y0, m, opts, stats, dense, on_step=None):
    """Adaptive explicit RK; returns step boundary times, y at them, and interpolants."""
    tab = m.tableau
    direction = 1.0 if tf > t0 else -1.0
    span = abs(tf - t0)
    t, y = t0, y0
    k1 = f(t, y)
    stats.nfev += 1
    h = opts.first_step if opts.first_step is not None else _initial_step(
        f, t0, y, k1, direction, 1 / m.err_exponent - 1, opts, stats, span)
    h = min(h, opts.max_step)
    ts, ys, pieces = [t0], [y0], []
    fac_max, nsteps = FAC_MAX, 0
    while (tf - t) * direction > 1e-13 * max(abs(tf), 1.0):
        if nsteps >= opts.max_steps:
            return ts, ys, pieces, _too_many("explicit", opts, t)
        remaining = abs(tf - t)
        last = h >= remaining
        h_used = remaining if last else h
        hs = direction * h_used
        ks = [k1]
        for s in range(1, len(tab.c)):
            y_new = _odeint_mod._combine(y, hs, tab.a[s], ks)
            ks.append(f(t + hs * tab.c[s], y_new))
        stats.nfev += len(tab.c) - 1
        nsteps += 1
        yv, ynv = stop_gradient((y, y_new))
        scale = opts.atol + opts.rtol * np.maximum(np.abs(yv), np.abs(ynv))
        if m.error is not None:
            err = m.error(stop_gradient(ks), hs, scale)
        else:
            err = _rms(_odeint_mod._combine(0.0, hs, tab.e, stop_gradient(ks)), scale)
        if err <= 1.0:
            t_new = tf if last else t + hs
            if dense and tab is DOP853:
                pieces.append(_dense_dop853(f, t, y, y_new, ks, hs))
                stats.nfev += len(_D853.C) - _D853.N_STAGES - 1
            elif dense:
                pieces.append(_dense_rk45(y, y_new, ks, hs) if tab is DOPRI5
                              else _dense_hermite(y, y_new, ks[0], ks[-1], hs))
            y, k1, t = y_new, ks[-1], t_new
            ts.append(t)
            ys.append(y)
            if on_step is not None and on_step(ts, ys, pieces):
                break
            factor = SAFETY * err ** (-m.err_exponent) if err > 0 else fac_max
            h = min(h_used * min(fac_max, max(FAC_MIN, factor)), opts.max_step)
            fac_max = FAC_MAX
        else:
            factor = FAC_MIN if not math.isfinite(err) else max(
                FAC_MIN, SAFETY * err ** (-m.err_exponent))
            h = h_used * factor
            fac_max = 1.0
            if h < 1e-14 * max(abs(t), 1.0):
                return ts, ys, pieces, (f"solve_ivp: the step size underflowed ({h:.3g}) at "
                                        f"t = {t!r}: the solution is not finite or the problem "
                                        f"is too stiff for method={_name(m)!r}")
    return ts, ys, pieces, None


def _run(m, fp, t0, tf, y0, p, opts, stats, dense, on_step=None):
    """One solve by method ``m``: (step times, y there, dense pieces, failure message or None)."""
    if m.kind == "explicit":
        return _explicit(lambda t, y: fp(t, y, p), t0, tf, y0, m, opts, stats, dense, on_step)
    if m is METHODS["Radau"]:
        from ._ivp_radau import radau_solve
        return radau_solve(fp, t0, tf, y0, p, opts, stats, dense, on_step)
    from ._ivp_bdf import bdf_solve
    return bdf_solve(fp, t0, tf, y0, p, opts, stats, dense, on_step)


def _traced(tree):
    return any(type(x) is Tracer or type(x) is Dual for x in tree_flatten(tree)[0])


def _name(m):
    return next(k for k, v in METHODS.items() if v is m)


# ---------------------------------------------------------------------------
# the adjoint of the explicit methods (continuous adjoint, as odeint's)
# ---------------------------------------------------------------------------
def _adjoint_solve(fp, y0, p, t_out, t0, tf, m, opts, stats):
    """y at the plain times t_out (t_out[0] may be > t0), with the continuous adjoint."""
    @custom_vjp
    def solve(y0, p):
        return _plain_outputs(fp, y0, p, t_out, t0, tf, m, opts, stats)

    def fwd(y0, p):
        ys = solve.fun(y0, p)
        return ys, (ys, y0, p)

    def bwd(res, g):
        ys, y0, p = res
        n = ys.shape[-1]
        sizes = [int(np.size(getval(x))) for x in p]
        offsets = np.cumsum([0] + sizes)
        oopts = _odeint_mod._Options("dopri5", opts.rtol, float(np.min(opts.atol)), None,
                                     opts.max_steps)

        def aug(s, t):  # (O2) of DERIVATIONS.md
            y, lam = s[:n], s[n:2 * n]
            fy, back = pullback(lambda y_, *p_: fp(t, y_, p_), y, *p)
            cts = back(lam)
            return np.concatenate([fy, -cts[0]] + [-np.reshape(c, (-1,)) for c in cts[1:]])

        def segment(s0, ta, tb):
            if m.kind == "explicit":  # DOPRI5, as odeint's adjoint
                return _odeint_mod._solve_dopri5(aug, s0, np.array([ta, tb]), oopts,
                                                 _odeint_mod._Stats())[-1]
            # stiff: the augmented system (O2) by the same implicit method, on plain values
            na = s0.size
            aopts = _Opts(opts.rtol, float(np.min(opts.atol)), opts.max_step, None,
                          opts.max_steps)
            ats, ays, _, fail = _run(m, lambda t, s_, q: aug(s_, t), ta, tb, s0, (), aopts,
                                     _Stats(), False)
            if fail:
                raise RuntimeError(f"solve_ivp (adjoint pass): {fail}")
            return np.asarray(ays[-1]).reshape(na)

        times = [t0] + [float(x) for x in t_out]
        states = [y0] + [ys[i] for i in range(len(t_out))]
        cot = [np.zeros(n)] + [g[i] for i in range(len(t_out))]
        lam = cot[-1]
        pbar = np.zeros(int(offsets[-1]))
        for i in range(len(times) - 1, 0, -1):
            if times[i] != times[i - 1]:
                s0 = np.concatenate([states[i], lam, pbar])
                s1 = segment(s0, times[i], times[i - 1])
                lam, pbar = s1[n:2 * n], s1[2 * n:]
            lam = lam + cot[i - 1]
        pcts = tuple(np.reshape(pbar[offsets[k]:offsets[k + 1]], np.shape(getval(x)))
                     for k, x in enumerate(p))
        return lam, pcts

    solve.defvjp(fwd, bwd)
    return solve(y0, p)


def _plain_outputs(fp, y0, p, t_out, t0, tf, m, opts, stats):
    y0 = np.asarray(getval(y0), dtype=np.float64)
    p = tuple(np.asarray(getval(x), dtype=np.float64) for x in p)
    ts, ys, pieces, fail = _run(m, fp, t0, tf, y0, p, opts, stats, dense=True)
    if fail:
        raise RuntimeError(fail)
    return np.stack([OdeSolution(ts, pieces)(float(t)) for t in t_out])


# ---------------------------------------------------------------------------
# events: located on the dense output, times differentiated by the implicit function theorem
# ---------------------------------------------------------------------------
def _parse_events(events):
    if events is None:
        return []
    evs = [events] if callable(events) else list(events)
    out = []
    for k, g in enumerate(evs):
        if not callable(g):
            raise TypeError(f"solve_ivp: events[{k}] must be callable, got {type(g).__name__}")
        terminal = getattr(g, "terminal", False)
        if not isinstance(terminal, (bool, numbers.Integral)) or terminal < 0:
            raise ValueError(f"solve_ivp: events[{k}].terminal must be a bool or a "
                             f"non-negative integer, got {terminal!r}")
        out.append((g, int(terminal), float(getattr(g, "direction", 0.0))))
    return out


class _Events:
    """Per accepted step: sign changes of each g(t, y, *args) between the step's ends (SciPy's
    rule, with ``direction``), roots by Brent's method on the step's dense output (plain), in
    the order of integration; ``terminal`` counts down to a stop.

    The event time of a root t_r of phi(t) = g(t, y(t; p), p) is returned as
    t* = t_r - phi(t_r) / phi'(t_r) with phi(t_r) evaluated on traced values and phi' plain: its
    value is t_r (phi(t_r) = 0 to rounding) and its first derivative is the implicit function
    theorem's dt*/dp = -(dphi/dp) / phi' (differentiating phi(t*(p); p) = 0; second derivatives
    of event times are not exact).  The state at the event is the dense output at t*, so it
    carries dy/dt dt*/dp too (Hairer, Nørsett & Wanner I §II.6 locate events the same way;
    the sensitivity of event times: e.g. Galán, Feehery & Barton, Appl. Numer. Math. 31 (1999)
    17).
    """

    def __init__(self, evs, rebuild, p, t0, tf):
        self.evs, self.rebuild, self.p = evs, rebuild, p
        self.direction = 1.0 if tf >= t0 else -1.0
        self.left = [t if t else -1 for _, t, _ in evs]  # terminal counts (-1: never stops)
        self.found = [[] for _ in evs]  # (t*, y*) per event
        self.stopped = False
        self._g_prev = None

    def _g(self, k, t, y, traced=False):
        g = self.evs[k][0]
        args = self.rebuild(self.p) if traced else stop_gradient(self.rebuild(self.p))
        return g(t, y, *args) if traced else float(np.real(getval(g(t, y, *args))))

    def step(self, ts, ys, pieces):
        from scipy.optimize import brentq
        t0, t1 = float(ts[-2]), float(ts[-1])
        if self._g_prev is None:
            y0v = np.asarray(stop_gradient(ys[-2]))
            self._g_prev = [self._g(k, t0, y0v) for k in range(len(self.evs))]
        y1v = np.asarray(stop_gradient(ys[-1]))
        g1 = [self._g(k, t1, y1v) for k in range(len(self.evs))]
        piece, h = pieces[-1], t1 - t0
        roots = []
        for k, (_, _, d) in enumerate(self.evs):
            ga, gb = self._g_prev[k], g1[k]
            up, down = ga <= 0 <= gb, ga >= 0 >= gb
            if not ((up and d >= 0) or (down and d <= 0)) or ga == gb == 0:
                continue

            def phi(th, k=k):
                return self._g(k, t0 + th * h, np.asarray(stop_gradient(piece(th))))
            th = 0.0 if ga == 0 else 1.0 if gb == 0 else brentq(phi, 0.0, 1.0, xtol=1e-15,
                                                                  rtol=4 * np.finfo(float).eps)
            if th == 0.0 and len(ts) > 2:  # a root at the step's start was the last step's
                continue
            roots.append((th, k))
        self._g_prev = g1
        for th, k in sorted(roots):
            t_r = t0 + th * h
            t_star, y_star = self._traced_root(k, t_r, t0, h, piece)
            self.found[k].append((t_star, y_star))
            if self.left[k] > 0:
                self.left[k] -= 1
                if self.left[k] == 0:
                    self.stopped = True
                    s = th
                    ts[-1], ys[-1] = t_r, y_star
                    pieces[-1] = lambda u, piece=piece, s=s: piece(u * s)
                    return True
        return False

    def _traced_root(self, k, t_r, t0, h, piece):
        def phi_plain(t):
            return self._g(k, t, np.asarray(stop_gradient(piece((t - t0) / h))))
        d = 1e-3 * abs(h)  # fourth-order central difference of the polynomial interpolant
        dphi = (8 * (phi_plain(t_r + d) - phi_plain(t_r - d))
                - (phi_plain(t_r + 2 * d) - phi_plain(t_r - 2 * d))) / (12 * d)
        if dphi == 0.0 or not math.isfinite(dphi):
            raise ValueError(f"solve_ivp: event {k} has a zero (or non-finite) time derivative "
                             f"at its root t = {t_r!r}: its time is not differentiable there")
        phi = self._g(k, t_r, piece((t_r - t0) / h), traced=True)
        t_star = t_r - phi / dphi
        return t_star, piece((t_star - t0) / h)

    def results(self, n):
        t_ev, y_ev = [], []
        for occ in self.found:
            if occ:
                t_ev.append(np.stack([t for t, _ in occ]))
                y_ev.append(np.stack([y for _, y in occ]))
            else:
                t_ev.append(np.zeros(0))
                y_ev.append(np.zeros((0, n)))
        return t_ev, y_ev


def _adjoint_result(fp, y0, p, rebuild, evs, te, t0, tf, m, opts, stats, n):
    """adjoint=True: a plain solve locates the output times and the events (and a terminal
    stop); one adjoint custom_vjp gives y at the output and event times; each event time is
    then t* = t_r − g(t_r, y_r, p) / (dg/dt) with y_r = y(t_r; p) from the adjoint solve
    (first-order IFT, as :class:`_Events`), its state y_r + f(t_r, y_r) (t* − t_r)."""
    y0v = np.asarray(getval(y0), dtype=np.float64)
    pv = tuple(np.asarray(getval(x), dtype=np.float64) for x in p)
    tracker = _Events(evs, rebuild, pv, t0, tf) if evs else None
    pts, pys, _, fail = _run(m, fp, t0, tf, y0v, pv, opts, _Stats(), bool(evs),
                             tracker.step if tracker else None)
    if fail is not None:
        return OdeResult(t=np.asarray(pts), y=np.stack(pys, axis=1), sol=None, t_events=None,
                         y_events=None, nfev=0, njev=0, nlu=0, status=-1, message=fail,
                         success=False)
    stopped = tracker is not None and tracker.stopped
    t_end = float(pts[-1]) if stopped else tf
    d = 1.0 if tf > t0 else -1.0
    if te is None:  # the output times are the plain solve's step boundaries
        t_out = np.asarray(pts, dtype=float)
    else:
        t_out = te[(te - t_end) * d <= 0] if stopped else te
    ev_t = [[float(getval(t)) for t, _ in occ] for occ in tracker.found] if evs else []
    t_all = np.concatenate([t_out] + [np.asarray(e, dtype=float) for e in ev_t])
    order = np.argsort(d * t_all, kind="stable")
    if t_all.size:
        ys_sorted = _adjoint_solve(fp, y0, p, t_all[order], t0, t_end, m, opts, stats)
        ys = ys_sorted[np.argsort(order)]
    else:
        ys = np.zeros((0, n))
    y_out = np.transpose(ys[:t_out.size]) if t_out.size else np.zeros((n, 0))
    t_events = y_events = None
    if evs:
        t_events, y_events, j = [], [], t_out.size
        args = rebuild(p)
        for k, times in enumerate(ev_t):
            tk, yk = [], []
            for t_r in times:
                y_r = ys[j]
                j += 1
                yv = np.asarray(getval(y_r), dtype=np.float64)
                fv = np.asarray(getval(fp(t_r, yv, pv)), dtype=np.float64)
                g = evs[k][0]

                def along(t, g=g, t_r=t_r, yv=yv, fv=fv):
                    return float(np.real(getval(g(t, yv + (t - t_r) * fv,
                                                   *stop_gradient(args)))))
                h = 1e-4 * max(abs(t_r), 1e-2)
                dphi = (8 * (along(t_r + h) - along(t_r - h))
                        - (along(t_r + 2 * h) - along(t_r - 2 * h))) / (12 * h)
                if dphi == 0.0 or not math.isfinite(dphi):
                    raise ValueError(f"solve_ivp: event {k} has a zero (or non-finite) time "
                                     f"derivative at its root t = {t_r!r}: its time is not "
                                     f"differentiable there")
                t_star = t_r - g(t_r, y_r, *args) / dphi
                tk.append(t_star)
                yk.append(y_r + fp(t_r, y_r, p) * (t_star - t_r))
            t_events.append(np.stack(tk) if tk else np.zeros(0))
            y_events.append(np.stack(yk) if yk else np.zeros((0, n)))
    status, message = (1, "A termination event occurred.") if stopped else (
        0, "The solver successfully reached the end of the integration interval.")
    return OdeResult(t=t_out, y=y_out, sol=None, t_events=t_events, y_events=y_events,
                     nfev=stats.nfev, njev=stats.njev, nlu=stats.nlu, status=status,
                     message=message, success=True)


# ---------------------------------------------------------------------------
# the public entry point
# ---------------------------------------------------------------------------
def solve_ivp(fun: Callable[..., Any], t_span: Sequence[float], y0: Any, method: str = "RK45",
              t_eval: ArrayLike | None = None, dense_output: bool = False, events: Any = None,
              vectorized: bool = False, args: tuple[Any, ...] | None = None, *, rtol: float = 1e-3,
              atol: float = 1e-6, max_step: float = np.inf, first_step: float | None = None,
              adjoint: bool = False, max_steps: int = 100_000) -> OdeResult:
    """Solve ``dy/dt = fun(t, y, *args)`` on ``t_span`` as :func:`scipy.integrate.solve_ivp`.

    Args:
        fun: ``fun(t, y, *args) -> dy/dt``, shape ``(n,)``.  Plain NumPy code.
        t_span: ``(t0, tf)``, plain numbers (``tf < t0`` integrates backwards).
        y0: the initial state, a 1-D real array (differentiable).
        method: ``"RK45"``, ``"RK23"``, ``"DOP853"``, ``"Radau"`` or ``"BDF"`` (the last two
            for stiff problems); see :data:`METHODS`.
        t_eval: plain 1-D times in ``t_span`` (monotonic in its direction) where the
            solution is reported (by each method's dense output, as SciPy); default:
            the step boundaries the solver chose.
        dense_output: also return ``sol``, a differentiable :class:`OdeSolution`.
        events: SciPy's: a callable ``g(t, y, *args)`` or a list of them, each with optional
            attributes ``terminal`` (bool, or the number of occurrences that stop the solve)
            and ``direction`` (0, or the sign of the crossings counted).  Located on the
            dense output by Brent's method; the event times are differentiable (implicit
            function theorem, first order; see :class:`_Events`).  Every method, with
            ``adjoint`` True or False.
        vectorized: SciPy's keyword, accepted and ignored (``fun`` is called per state).
        args: a tuple of extra arguments of ``fun``; their float leaves are
            differentiated.
        rtol, atol: the error tolerances (SciPy's meaning; ``atol`` scalar or per component).
        max_step, first_step: SciPy's bounds on the step size.
        adjoint: gradients by the continuous adjoint (O(1) tape) instead of recording the
            steps (every method; for Radau and BDF the adjoint system is solved by the same
            method).
        max_steps: the most steps one solve may take (then ``status = -1``).

    Returns:
        An :class:`OdeResult` with ``t``, ``y`` (``(n, len(t))``), ``sol``, ``nfev``,
        ``njev``, ``nlu``, ``status``, ``message``, ``success``.  Its gradient is that of
        the discrete solution with the accepted step sizes held constant (exact for
        ``adjoint=False``, to the tolerance for ``adjoint=True``).

    Raises:
        ValueError: a bad method, ``t_span``, ``t_eval``, tolerance or combination of
            options; an event's ``terminal`` not a count, or an event time where
            ``d/dt g = 0``.
        TypeError: ``fun`` not callable, ``y0`` not real, ``args`` not a tuple, or a
            traced ``t_span``/``t_eval``.
        RuntimeError: (adjoint forward pass) the solver failed.

    Example:
        >>> import numpy as np, diffsci as ds
        >>> from diffsci.scipy.integrate import solve_ivp
        >>> f = lambda t, y, k: -k * y
        >>> r = solve_ivp(f, (0, 1), np.array([1.0]), args=(2.0,), rtol=1e-10, atol=1e-12)
        >>> round(float(r.y[0, -1]), 8)  # exp(-2)
        0.13533528
        >>> g = ds.grad(lambda k: solve_ivp(f, (0, 1), np.array([1.0]), args=(k,),
        ...                                 rtol=1e-10, atol=1e-12).y[0, -1])(2.0)
        >>> round(float(g), 7)  # -exp(-2)
        -0.1353353
        >>> r = solve_ivp(f, (0, 1), np.array([1.0]), method="BDF", args=(2.0,), rtol=1e-8,
        ...               atol=1e-10)
        >>> bool(abs(r.y[0, -1] - np.exp(-2)) < 1e-6), r.status
        (True, 0)

    References:
        See the module docstring; DERIVATIONS.md "solve_ivp" (IVP1)–(IVP4) and the BDF
        section (Shampine & Reichelt 1997; Byrne & Hindmarsh 1975).
    """
    if not callable(fun):
        raise TypeError(f"solve_ivp: fun must be callable, got {type(fun).__name__}")
    args = () if args is None else args
    evs = _parse_events(events)
    ts_span, te, opts = _check(method, t_span, y0, t_eval, rtol, atol, max_step, first_step,
                               max_steps, args, adjoint, dense_output)
    m = METHODS[method]
    y0v = np.asarray(getval(y0))
    if not _traced(y0):
        y0 = np.asarray(y0, dtype=np.float64)
    p, rebuild = _split_args(args)
    n = y0v.size

    def fp(t, y, p):
        dy = fun(t, y, *rebuild(p))
        shape = np.shape(getval(dy))
        if shape != (n,):
            raise ValueError(f"solve_ivp: fun(t, y, *args) returned shape {shape}, expected "
                             f"({n},) like y0")
        return dy

    t0, tf = float(ts_span[0]), float(ts_span[1])
    stats = _Stats()
    if adjoint:
        return _adjoint_result(fp, y0, p, rebuild, evs, te, t0, tf, m, opts, stats, n)
    dense = dense_output or te is not None or bool(evs)
    tracker = _Events(evs, rebuild, p, t0, tf) if evs else None
    steps_t, steps_y, pieces, fail = _run(m, fp, t0, tf, y0, p, opts, stats, dense,
                                          tracker.step if tracker else None)
    sol = OdeSolution(steps_t, pieces) if dense and len(pieces) else None
    if fail is None and tracker is not None and tracker.stopped:
        status, message = 1, "A termination event occurred."
    elif fail is None:
        status, message = 0, "The solver successfully reached the end of the integration " \
                             "interval."
    else:
        status, message = -1, fail
    if te is None:
        t_out, y_out = np.asarray(steps_t), np.stack(steps_y, axis=1)
    else:
        reached = te[(te - steps_t[-1]) * np.sign(tf - t0) <= 0] if status else te
        t_out = reached
        y_out = sol(reached) if (sol is not None and reached.size) else np.zeros((n, 0))
    t_events, y_events = tracker.results(n) if tracker else (None, None)
    return OdeResult(t=t_out, y=y_out, sol=sol if dense_output else None, t_events=t_events,
                     y_events=y_events, nfev=stats.nfev, njev=stats.njev, nlu=stats.nlu,
                     status=status, message=message, success=status >= 0)
