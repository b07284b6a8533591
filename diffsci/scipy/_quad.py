"""Quadrature with gradients: quad (Leibniz rule), trapezoid, cumulative_trapezoid, simpson.

Re-exported by :mod:`diffsci.scipy.integrate`.

* :func:`quad` — SciPy's adaptive QUADPACK value; its derivative by the Leibniz integral
  rule (DERIVATIONS.md "quad" (Q1)): d/db ∫_a^b f = f(b), d/da = −f(a), and in the
  parameters ∫_a^b ∂f/∂p dx, itself computed by this ``quad`` (so it differentiates again).
* :func:`trapezoid`, :func:`cumulative_trapezoid`, :func:`simpson` — the sample-based rules as
  differentiable NumPy composites, in the samples ``y`` and the abscissae ``x``; the same
  formulas as SciPy (``simpson`` with an even number of samples uses the last-interval
  correction of SciPy ≥ 1.11, Cartwright 2017).

References:
    R. Piessens et al., *QUADPACK*, Springer 1983 (the values).  K. V. Cartwright,
    "Simpson's rule cumulative integration with MS Excel and irregularly-spaced data",
    J. Math. Sci. Math. Educ. 12 (2017) 1–9 (the even-sample correction).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.integrate

from .._api import pullback
from .._core import Dual, Tracer, getval
from .._custom import custom_vjp
from ..typing import Array, ArrayLike
from .optimize import _split_args  # float leaves of args and their rebuild

__all__ = ["quad", "trapezoid", "cumulative_trapezoid", "simpson"]


def _traced(x):
    return type(x) is Tracer or type(x) is Dual


# ---------------------------------------------------------------------------
# quad
# ---------------------------------------------------------------------------
def _quad_vec(F, a, b, p, opts):
    """∫_a^b F(x, p) dx for a vector-valued F (shape (m,)) as one custom_vjp in (a, b, p)."""

    @custom_vjp
    def integral(a, b, p):
        av, bv = float(a), float(b)
        g = lambda x: np.asarray(F(x, p), dtype=np.float64)  # noqa: E731
        m = g(av if math.isfinite(av) else (bv if math.isfinite(bv) else 0.0)).size
        vals, errs = np.empty(m), np.empty(m)
        for j in range(m):  # QUADPACK per component: SciPy's quad values exactly
            res = scipy.integrate.quad(lambda x: g(x)[j], av, bv, **opts)
            vals[j], errs[j] = res[0], res[1]
        opts_err[0] = float(np.max(errs)) if m else 0.0
        return vals

    opts_err = [0.0]

    def fwd(a, b, p):
        out = integral(a, b, p)  # a lower trace level sees its own custom_vjp call
        return out, (a, b, p)

    def bwd(res, g):
        a, b, p = res
        abar = None if not math.isfinite(float(getval(a))) else -np.dot(g, F(a, p))
        bbar = None if not math.isfinite(float(getval(b))) else np.dot(g, F(b, p))
        if not p:
            return abar, bbar, ()

        def dF(x, pg):  # x ↦ ∂/∂p ⟨g, F(x, p)⟩, flattened  (Q1)
            *pp, gg = pg
            _, back = pullback(lambda *p_: np.dot(gg, F(x, p_)), *pp)
            return np.concatenate([np.reshape(c, (-1,)) for c in back(1.0)])

        pbar_flat = _quad_vec(dF, a, b, tuple(p) + (g,), opts)[0]
        sizes = [int(np.size(getval(x))) for x in p]
        offs = np.cumsum([0] + sizes)
        pbar = tuple(np.reshape(pbar_flat[offs[k]:offs[k + 1]], np.shape(getval(x)))
                     for k, x in enumerate(p))
        return abar, bbar, pbar

    integral.defvjp(fwd, bwd)
    out = integral(a, b, p)
    return out, opts_err[0]


def _limit(name, v):
    val = getval(v)
    if np.ndim(val) != 0 or isinstance(val, bool) or not isinstance(
            np.asarray(val).item(), numbers.Real) or math.isnan(float(val)):
        raise ValueError(f"quad: {name} must be a real number (±inf allowed), got {v!r}")
    if not math.isfinite(float(val)) and _traced(v):
        raise ValueError(f"quad: the infinite limit {name} = {float(val)} is being "
                         f"differentiated; only finite limits have a derivative")
    return v if _traced(v) else np.float64(val)


_QUAD_KEYS = frozenset({"epsabs", "epsrel", "limit", "points", "weight", "wvar", "wopts",
                        "maxp1", "limlst"})


def quad(func: Callable[..., Any], a: ArrayLike, b: ArrayLike, args: tuple[Any, ...] = (),
         full_output: int = 0, **kwargs: Any) -> Any:
    """∫_a^b func(x, *args) dx by :func:`scipy.integrate.quad`, differentiable in a, b, args.

    Args:
        func: ``func(x, *args) -> real scalar`` (NumPy code, differentiable in ``args``).
        a, b: the limits (numbers, ±inf allowed; finite ones are differentiable).
        args: a tuple of extra arguments; their float leaves are differentiated.
        full_output: only 0 is supported (SciPy's infodict is not produced).
        **kwargs: SciPy's ``epsabs``, ``epsrel``, ``limit``, ``points``, ``weight``,
            ``wvar``, ``wopts``, ``maxp1``, ``limlst``.

    Returns:
        ``(value, abserr)`` as SciPy; ``value`` is differentiable, ``abserr`` (the largest
        QUADPACK error estimate of the forward integral) is a plain float.

    Raises:
        TypeError: ``func`` not callable, ``args`` not a tuple, an unknown keyword.
        ValueError: a NaN or non-scalar limit; a traced infinite limit; func not scalar.

    Example:
        >>> import numpy as np, diffsci as ds
        >>> f = lambda x, k: np.exp(-k * x)
        >>> round(float(quad(f, 0.0, 1.0, args=(2.0,))[0]), 12)  # (1 − e⁻²)/2
        0.432332358382
        >>> round(float(ds.grad(lambda b: quad(f, 0.0, b, args=(2.0,))[0])(1.0)), 12)  # e⁻²
        0.135335283237

    References:
        QUADPACK (Piessens et al. 1983); DERIVATIONS.md "quad" (Q1)–(Q2).
    """
    if not callable(func):
        raise TypeError(f"quad: func must be callable, got {type(func).__name__}")
    if not isinstance(args, tuple):
        raise TypeError(f"quad: args must be a tuple, got {type(args).__name__}")
    if full_output:
        raise ValueError("quad: full_output is not supported (only the value and abserr)")
    unknown = sorted(set(kwargs) - _QUAD_KEYS)
    if unknown:
        raise TypeError(f"quad: unexpected keyword argument(s) {unknown}")
    if "weight" in kwargs and kwargs["weight"] is not None:
        raise ValueError("quad: weight= is not supported (its Leibniz rule needs the weight "
                         "function); multiply it into func")
    a, b = _limit("a", a), _limit("b", b)
    p, rebuild = _split_args(args)

    def F(x, p):
        v = func(x, *rebuild(p))
        if np.ndim(getval(v)) != 0:
            raise ValueError(f"quad: func must return a scalar, got shape "
                             f"{np.shape(getval(v))}")
        return np.reshape(v, (1,))

    out, err = _quad_vec(F, a, b, p, kwargs)
    return out[0], err


# ---------------------------------------------------------------------------
# sample-based rules
# ---------------------------------------------------------------------------
def _prep(where, y, x, dx, axis):
    yv = np.asarray(getval(y))
    if yv.ndim == 0:
        raise ValueError(f"{where}: y must have at least one dimension, got a scalar")
    ax = axis if axis >= 0 else axis + yv.ndim
    if not 0 <= ax < yv.ndim:
        raise ValueError(f"{where}: axis={axis} is out of range for y of shape {yv.shape}")
    y = np.moveaxis(y, ax, -1)
    n = yv.shape[ax]
    if x is None:
        if np.ndim(getval(dx)) != 0:
            raise ValueError(f"{where}: dx must be a scalar, got shape {np.shape(getval(dx))}")
        h = np.ones(max(n - 1, 0)) * dx
    else:
        xv = np.asarray(getval(x))
        if xv.ndim == 1:
            if xv.shape[0] != n:
                raise ValueError(f"{where}: x has {xv.shape[0]} samples, y has {n} along "
                                 f"axis {axis}")
            h = x[1:] - x[:-1]
        elif xv.shape == yv.shape:
            xm = np.moveaxis(x, ax, -1)
            h = xm[..., 1:] - xm[..., :-1]
        else:
            raise ValueError(f"{where}: x must be 1-D of length {n} or shaped like y "
                             f"{yv.shape}, got shape {xv.shape}")
    return y, h, n, ax


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float = 1.0, axis: int = -1) -> Array:
    """The trapezoidal rule (:func:`scipy.integrate.trapezoid`), differentiable in y, x, dx.

    Args:
        y: samples; x: their abscissae (1-D along ``axis``, or shaped like ``y``);
        dx: the spacing when ``x`` is None; axis: the axis to integrate along.

    Returns:
        Σ h_i (y_i + y_{i+1})/2 along ``axis``.

    Raises:
        ValueError: mismatched shapes, a bad axis or a scalar ``y``.

    Example:
        >>> float(trapezoid([1.0, 2.0, 3.0], dx=0.5))
        2.0
    """
    y, h, n, _ = _prep("trapezoid", y, x, dx, axis)
    if n < 2:
        return np.sum(y[..., :0], axis=-1)
    return np.sum(h * (y[..., 1:] + y[..., :-1]), axis=-1) / 2


def cumulative_trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float = 1.0, axis: int = -1,
                         initial: float | None = None) -> Array:
    """Cumulative trapezoid (:func:`scipy.integrate.cumulative_trapezoid`), differentiable.

    Args:
        y, x, dx, axis: as :func:`trapezoid`.
        initial: ``None`` (the result has one sample fewer) or 0 (prepended, as SciPy ≥ 1.12
            allows only 0).

    Returns:
        The running integral along ``axis``.

    Raises:
        ValueError: as :func:`trapezoid`; ``initial`` other than None or 0.

    Example:
        >>> cumulative_trapezoid([1.0, 2.0, 3.0], initial=0)
        array([0. , 1.5, 4. ])
    """
    if initial is not None and not (np.ndim(initial) == 0 and float(initial) == 0.0):
        raise ValueError(f"cumulative_trapezoid: initial must be None or 0 (as SciPy), got "
                         f"{initial!r}")
    y, h, n, ax = _prep("cumulative_trapezoid", y, x, dx, axis)
    out = np.cumsum(h * (y[..., 1:] + y[..., :-1]) / 2, axis=-1)
    if initial is not None:
        out = np.concatenate([np.zeros(np.shape(getval(out))[:-1] + (1,)), out], axis=-1)
    return np.moveaxis(out, -1, ax)


def _simpson_pairs(y, h, start, stop):
    """Composite Simpson over interval pairs (i, i+1) for i = start, start+2, ... < stop."""
    h0, h1 = h[..., start:stop:2], h[..., start + 1:stop:2]
    y0, y1, y2 = y[..., start:stop:2], y[..., start + 1:stop + 1:2], y[..., start + 2:stop + 2:2]
    hs = h0 + h1
    return np.sum(hs / 6 * ((2 - h1 / h0) * y0 + hs * hs / (h0 * h1) * y1 + (2 - h0 / h1) * y2),
                  axis=-1)


def simpson(y: ArrayLike, x: ArrayLike | None = None, dx: float = 1.0, axis: int = -1) -> Array:
    """Simpson's rule (:func:`scipy.integrate.simpson`), differentiable in y, x, dx.

    Pairs of intervals get the (possibly unequal-width) Simpson weights (DERIVATIONS.md
    (Q3)); with an even number of samples the last interval gets SciPy's correction
    α y_N + β y_{N−1} − η y_{N−2} (Cartwright 2017).

    Args:
        y, x, dx, axis: as :func:`trapezoid`.

    Returns:
        The integral along ``axis``.

    Raises:
        ValueError: as :func:`trapezoid`.

    Example:
        >>> round(float(simpson([0.0, 1.0, 4.0, 9.0, 16.0])), 12)  # ∫_0^4 x² dx
        21.333333333333
    """
    y, h, n, _ = _prep("simpson", y, x, dx, axis)
    if n < 2:
        return np.sum(y[..., :0], axis=-1)
    if n == 2:
        return np.sum(h * (y[..., 1:] + y[..., :-1]), axis=-1) / 2
    if n % 2 == 1:
        return _simpson_pairs(y, h, 0, n - 1)
    total = _simpson_pairs(y, h, 0, n - 2)
    hm1, hm2 = h[..., -1], h[..., -2]
    alpha = (2 * hm1 ** 2 + 3 * hm1 * hm2) / (6 * (hm2 + hm1))
    beta = (hm1 ** 2 + 3 * hm1 * hm2) / (6 * hm2)
    eta = hm1 ** 3 / (6 * hm2 * (hm2 + hm1))
    return total + alpha * y[..., -1] + beta * y[..., -2] - eta * y[..., -3]
