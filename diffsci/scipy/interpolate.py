"""``scipy.interpolate``, differentiable in the data values and the query points.

=========================  ===============================================================
interpolator               differentiable in
=========================  ===============================================================
CubicSpline                ``y`` and the query points (all ``bc_type``; 'periodic' reads
                           ``y[:-1]``, ``y[-1]`` being ``y[0]``)
make_interp_spline         ``y`` and the query points (any ``k``, ``bc_type``)
interp1d                   ``y`` and the query points (every ``kind``; 'nearest',
                           'previous', 'next' are piecewise constant in the query points)
RegularGridInterpolator,   ``values`` and ``xi`` (methods 'linear', 'slinear', 'nearest')
interpn
=========================  ===============================================================

The sample points (``x``, ``points``) are not differentiated.  Every spline here is, for
fixed sample points, an affine map of the data: its piecewise-polynomial coefficients are
``c = c₀ + C y``, where SciPy itself builds ``C`` (the spline of each unit vector) and
``c₀`` (the spline of zeros, nonzero only for prescribed end derivatives).  Evaluation is
SciPy's power sum ``Σ_k c[K-k, i] (x - x_i)^k`` in the interval ``i`` holding ``x``
(``x_i <= x < x_{i+1}``; the last point belongs to the last interval), written with
differentiable calls, so derivatives of any order exist.  On plain data and plain query
points every call is SciPy's own.  ``C`` costs memory ``(K+1)·(m)·n`` for ``n`` samples:
meant for up to a few thousand samples.

Example:
    >>> import numpy as np, diffsci as ds
    >>> from diffsci.scipy.interpolate import CubicSpline
    >>> x = np.linspace(0, 3, 7)
    >>> g = ds.grad(lambda y: CubicSpline(x, y)(1.3))(np.sin(x))  # the cardinal weights
    >>> bool(np.isclose(g.sum(), 1.0))
    True

References:
    C. de Boor, *A Practical Guide to Splines*, rev. ed., Springer 2001, ch. IV–IX
    (cubic spline end conditions; B-spline interpolation).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import scipy.interpolate as _si

from .._core import getval
from ..numpy import _util
from ..numpy import _wrap as W
from ..numpy._composite import _traced
from ..numpy._more import _arr

__all__ = ["CubicSpline", "RegularGridInterpolator", "interp1d", "interpn",
           "make_interp_spline"]


def _shape(x):
    return np.shape(getval(x))


def _plain_x(x, name):
    if _traced(x):
        raise NotImplementedError(f"diffsci.scipy.interpolate.{name}: the sample points are "
                                  f"not differentiable; pass them as plain arrays")
    return np.asarray(x, dtype=float)


def _linear_map(build, n, dtype):
    """(c₀, C) with build(y) = c₀ + C·y: SciPy's coefficients of zeros and of unit vectors,
    ``C`` with the data axis last.  One SciPy call on the identity (its columns are the unit
    vectors, a trailing data axis), or one call per unit vector where SciPy cannot broadcast
    (end-derivative values given as scalars)."""
    c0 = np.asarray(build(np.zeros(n, dtype)))
    try:
        return c0, np.asarray(build(np.eye(n, dtype=dtype))) - c0[..., None]
    except ValueError:
        cols = [np.asarray(build(e)) - c0 for e in np.eye(n, dtype=dtype)]
        return c0, np.stack(cols, axis=-1)


def _apply(c0, cmat, y):
    """c₀ + C·y for y of shape (n, *trailing): shape c₀.shape + trailing."""
    trailing = _shape(y)[1:]
    c = W.tensordot(cmat, y, axes=([cmat.ndim - 1], [0]))
    return W.add(c, np.reshape(c0, c0.shape + (1,) * len(trailing)))


class _PiecewisePoly:
    """A piecewise polynomial with plain breakpoints and (possibly traced) coefficients
    ``c`` of shape (K+1, m, *trailing), evaluated as SciPy's PPoly evaluates."""

    def __init__(self, breaks, c, extrapolate, axis):
        self.x, self.c = breaks, c
        self.extrapolate, self.axis = extrapolate, axis

    def __call__(self, xq, nu=0, extrapolate=None):
        if nu < 0:
            raise NotImplementedError("diffsci.scipy.interpolate: antiderivatives (nu < 0) are "
                                      "not supported on traced values")
        extrapolate = self.extrapolate if extrapolate is None else extrapolate
        xq = _arr(xq)
        x = self.x
        xv = np.asarray(getval(xq), dtype=float)
        if extrapolate == "periodic":
            xq = W.add(W.remainder(W.subtract(xq, x[0]), x[-1] - x[0]), x[0])
            xv = np.asarray(getval(xq))
        m = len(x) - 1
        # the intervals (and below, the out-of-range mask) are discrete facts of the query
        # values: guards under diffsci.jit (observed), so a later call with queries in other
        # intervals re-traces instead of reusing these
        i = _util.observed(lambda v: np.clip(np.searchsorted(x, v, side="right") - 1, 0, m - 1), xq)
        cs = W.getitem(self.c, (slice(None), i))  # (K+1, *xq.shape, *trailing)
        trailing = _shape(self.c)[2:]
        s = W.subtract(xq, x[i])
        s = W.reshape(s, _shape(s) + (1,) * len(trailing))
        K = _shape(self.c)[0] - 1
        res, z = 0.0, 1.0
        for kp in range(K + 1):
            if kp >= nu:
                pre = math.prod(range(kp - nu + 1, kp + 1))
                term = W.getitem(cs, K - kp)
                term = W.multiply(term, z) if kp > nu else term
                res = W.add(res, W.multiply(term, float(pre)) if pre != 1 else term)
                if kp < K:
                    z = W.multiply(z, s) if kp > nu or not isinstance(z, float) else s
        if isinstance(res, float):  # nu > K: the zero polynomial
            res = W.multiply(W.getitem(cs, 0), 0.0)
        if extrapolate is False:
            out = _util.observed(lambda v: (v < x[0]) | (v > x[-1]), xq)
            if np.any(out):
                res = W.where(np.reshape(out, out.shape + (1,) * len(trailing)), np.nan, res)
        # SciPy puts the query axes where the data axis was.
        if self.axis != 0:
            q = xv.ndim
            res = W.moveaxis(res, tuple(range(q)), tuple(range(self.axis, self.axis + q)))
        return res


def _moved(y, axis):
    y = _arr(y)
    nd = len(_shape(y))
    axis = axis % nd
    return (W.moveaxis(y, axis, 0) if axis else y), axis


class CubicSpline:
    """``scipy.interpolate.CubicSpline``, differentiable in ``y`` and the query points.

    Args:
        x: plain, strictly increasing sample points.
        y: data, of length ``len(x)`` along ``axis`` (traced or plain).
        axis, bc_type, extrapolate: as in SciPy.

    Returns:
        A callable ``spline(xq, nu=0, extrapolate=None)``; ``spline.c`` holds the
        coefficients (traced when ``y`` is) and ``spline.x`` the breakpoints.

    Raises:
        NotImplementedError: traced sample points ``x``.
        ValueError: SciPy's, for bad ``x``/``y``/``bc_type``.
    """

    def __init__(self, x, y, axis=0, bc_type="not-a-knot", extrapolate=None):
        x = _plain_x(x, "CubicSpline")
        if not _traced(y):
            self._plain = _si.CubicSpline(x, y, axis=axis, bc_type=bc_type,
                                          extrapolate=extrapolate)
            c, self.extrapolate = self._plain.c, self._plain.extrapolate
            axis = self._plain.axis
        else:
            self._plain = None
            ym, axis = _moved(y, axis)
            n = len(x)
            dt = np.result_type(float, getval(ym))
            periodic = bc_type == "periodic"
            probe = _si.CubicSpline(x, np.zeros(n), bc_type=bc_type, extrapolate=extrapolate)
            self.extrapolate = probe.extrapolate
            if periodic:  # y[-1] is y[0]: the map reads y[:-1]
                def build(v):
                    return _si.CubicSpline(x, np.concatenate([v, v[:1]]), bc_type=bc_type).c
                c0, cmat = _linear_map(build, n - 1, dt)
                ym = W.getitem(ym, slice(0, n - 1))
            else:
                c0, cmat = _linear_map(lambda v: _si.CubicSpline(x, v, bc_type=bc_type).c, n, dt)
            c = _apply(c0, cmat, ym)
        self.x, self.c, self.axis = x, c, axis
        self._pp = _PiecewisePoly(x, c, self.extrapolate, axis)

    def __call__(self, xq, nu=0, extrapolate=None):
        if self._plain is not None and not _traced(xq):
            return self._plain(xq, nu, extrapolate)
        return self._pp(xq, nu, extrapolate)


class _SplineFromBasis:
    """A spline of SciPy's making (``make_interp_spline``, ``interp1d``), as a piecewise
    polynomial affine in the data: ``coefficients(y) = c₀ + C y``.  ``make`` gives
    (coefficients, breakpoints), built on first use for a spline of plain data."""

    def __init__(self, plain, make, extrapolate, axis):
        self._plain, self._make, self.axis, self.extrapolate = plain, make, axis, extrapolate
        self._built = None

    @property
    def _pp(self):
        if self._built is None:
            c, breaks = self._make()
            self._built = _PiecewisePoly(breaks, c, self.extrapolate, self.axis)
        return self._built

    @property
    def c(self):
        return self._pp.c

    @property
    def x(self):
        return self._pp.x

    def __call__(self, xq, nu=0, extrapolate=None):
        if self._plain is not None and not _traced(xq):
            return self._plain(xq, nu, extrapolate)
        return self._pp(xq, nu, extrapolate)


def _ppoly_coeffs(spl):
    """A BSpline's piecewise-polynomial coefficients (k+1, len(t)-1, *trailing) and
    breakpoints ``t``, as ``PPoly.from_spline`` computes them (the derivatives at the
    left ends, over m!) but for coefficients of any trailing shape."""
    t, k = spl.t, spl.k
    c = np.stack([spl(t[:-1], nu=m) / math.factorial(m) for m in range(k, -1, -1)])
    return c, t


def make_interp_spline(x, y, k=3, t=None, bc_type=None, axis=0, check_finite=True):
    """``scipy.interpolate.make_interp_spline``, differentiable in ``y`` and the query points.

    Returns a callable ``spline(xq, nu=0, extrapolate=None)`` (a SciPy ``BSpline`` evaluated
    through its piecewise-polynomial form on traced values); ``spline.c`` holds the
    piecewise-polynomial coefficients (traced when ``y`` is).
    """
    x = _plain_x(x, "make_interp_spline")
    if not _traced(y):
        plain = _si.make_interp_spline(x, y, k, t, bc_type, axis, check_finite)
        yv = np.moveaxis(np.asarray(y), axis, 0)

        def make():  # the PPoly form, for traced query points
            return _ppoly_coeffs(_si.make_interp_spline(x, yv, k, t, bc_type))
        return _SplineFromBasis(plain, make, plain.extrapolate, axis % yv.ndim)
    ym, axis = _moved(y, axis)
    n = len(x)
    dt = np.result_type(float, getval(ym))
    breaks = _ppoly_coeffs(_si.make_interp_spline(x, np.zeros(n), k, t, bc_type))[1]
    c0, cmat = _linear_map(lambda v: _ppoly_coeffs(_si.make_interp_spline(x, v, k, t,
                                                                          bc_type))[0], n, dt)
    c = _apply(c0, cmat, ym)
    return _SplineFromBasis(None, lambda: (c, breaks), True, axis)


_SPLINE_KINDS = {"zero": 0, "slinear": 1, "quadratic": 2, "cubic": 3}


class interp1d:  # noqa: N801 - SciPy's name
    """``scipy.interpolate.interp1d`` (legacy in SciPy), differentiable in ``y`` and the
    query points for every ``kind``.  Bounds and fill values behave as SciPy's."""

    def __init__(self, x, y, kind="linear", axis=-1, copy=True, bounds_error=None,
                 fill_value=np.nan, assume_sorted=False):
        x = _plain_x(x, "interp1d")
        self._ref = _si.interp1d(x, np.zeros(np.shape(getval(y))), kind, axis, True,
                                 bounds_error, fill_value, assume_sorted)
        self._fill = fill_value
        self._plain = None if _traced(y) else _si.interp1d(
            x, y, kind, axis, copy, bounds_error, fill_value, assume_sorted)
        if isinstance(kind, int):
            kind = {0: "zero", 1: "slinear", 2: "quadratic", 3: "cubic"}[kind]
        self.kind = kind
        order = np.argsort(x, kind="stable") if not assume_sorted else np.arange(len(x))
        self.x = x[order]
        ym, self.axis = _moved(y, axis)
        self.y = W.getitem(ym, order)
        if kind in _SPLINE_KINDS:
            self._spline = make_interp_spline(self.x, self.y, k=_SPLINE_KINDS[kind])
        elif kind == "linear":
            self._spline = make_interp_spline(self.x, self.y, k=1)
        elif kind in ("nearest", "nearest-up", "previous", "next"):
            self._spline = None
        else:
            raise NotImplementedError(f"diffsci.scipy.interpolate.interp1d: kind={kind!r}")

    def __call__(self, xq):
        if self._plain is not None and not _traced(xq):
            return self._plain(xq)
        xq = _arr(xq)
        xv = np.asarray(getval(xq), dtype=float)
        ref = self._ref
        x0, x1 = self.x[0], self.x[-1]
        lo, hi = _util.observed(lambda v: v < x0, xq), _util.observed(lambda v: v > x1, xq)
        if ref.bounds_error and (np.any(lo) or np.any(hi)):
            ref(xv)  # SciPy's error message
        if self._spline is not None:
            res = self._spline._pp(xq)
        else:
            n = len(self.x)
            if self.kind in ("nearest", "nearest-up"):
                mids = self.x / 2.0
                mids = mids[1:] + mids[:-1]  # SciPy's rounding of the midpoints
                side = "left" if self.kind == "nearest" else "right"
                idx = _util.observed(lambda v: np.searchsorted(mids, v, side=side), xq)
            elif self.kind == "previous":
                idx = _util.observed(lambda v: np.searchsorted(self.x, v, side="right") - 1, xq)
            else:
                idx = _util.observed(lambda v: np.searchsorted(self.x, v, side="left"), xq)
            res = W.getitem(self.y, np.clip(idx, 0, n - 1))
        trailing = _shape(self.y)[1:]
        if not ref._extrapolate:
            fill_lo, fill_hi = ref._fill_value_below, ref._fill_value_above
            if isinstance(ref.fill_value, tuple) and self.kind in ("previous", "next") and \
                    isinstance(getattr(self, "_fill", None), str):
                # 'extrapolate' for previous/next: SciPy fills one side with NaN and the
                # other with the end value, which the clipped index already gives.
                fill_lo, fill_hi = (fill_lo, None) if self.kind == "previous" else (None,
                                                                                    fill_hi)
            for mask, fill in ((lo, fill_lo), (hi, fill_hi)):
                if fill is None:
                    continue
                if np.any(mask):
                    if np.ndim(fill):  # SciPy keeps fills as (1,) + trailing
                        fill = np.broadcast_to(np.reshape(fill, np.shape(fill)[-len(trailing):]
                                                          if trailing else ()),
                                               mask.shape + trailing)
                    res = W.where(np.reshape(mask, mask.shape + (1,) * len(trailing)), fill, res)
        if self.axis != 0:
            q = xv.ndim
            res = W.moveaxis(res, tuple(range(q)), tuple(range(self.axis, self.axis + q)))
        return res


class RegularGridInterpolator:
    """``scipy.interpolate.RegularGridInterpolator``, differentiable in ``values`` and the
    query points ``xi`` for methods 'linear' (and 'slinear', the same) and 'nearest'.

    Knots follow SciPy: a query on a grid point uses the cell to its left (weight 1 on the
    point); 'nearest' rounds a tie down.  Bounds and fill values behave as SciPy's.
    """

    _METHODS = ("linear", "slinear", "nearest")

    def __init__(self, points, values, method="linear", bounds_error=True, fill_value=np.nan,
                 **kwargs):
        self.grid = tuple(_plain_x(p, "RegularGridInterpolator") for p in points)
        self._ref = _si.RegularGridInterpolator(self.grid, np.zeros(_shape(values)), method,
                                                bounds_error, fill_value, **kwargs)
        self._plain = None if _traced(values) or _traced(fill_value) else \
            _si.RegularGridInterpolator(self.grid, values, method, bounds_error, fill_value,
                                        **kwargs)
        self.values, self.method = _arr(values), method
        self.bounds_error, self.fill_value = bounds_error, fill_value

    def __call__(self, xi, method=None):
        method = self.method if method is None else method
        if self._plain is not None and not _traced(xi):
            return self._plain(xi, method=method)
        if method not in self._METHODS:
            raise NotImplementedError(f"diffsci.scipy.interpolate.RegularGridInterpolator: "
                                      f"method={method!r} on traced values; supported: "
                                      f"{', '.join(self._METHODS)}")
        nd = len(self.grid)
        xi = _arr(xi)
        xv = np.asarray(getval(xi), dtype=float)
        if xv.shape[-1] != nd:
            self._ref(xv)  # SciPy's error message
        if self.bounds_error:
            self._ref(xv, method=method)  # raises if out of bounds
        shape = xv.shape[:-1] if xv.ndim > 1 else (1,)  # one point: SciPy's shape (1,)
        flat = W.reshape(xi, (-1, nd))
        idx, dist = [], []
        for d, g in enumerate(self.grid):
            i = _util.observed(lambda f, d=d, g=g: np.clip(
                np.searchsorted(g, f[:, d], side="left") - 1, 0, len(g) - 2), flat)
            idx.append(i)
            dist.append(W.true_divide(W.subtract(W.getitem(flat, (slice(None), d)), g[i]),
                                      g[i + 1] - g[i]))
        trailing = _shape(self.values)[nd:]
        vslice = (slice(None),) + (None,) * len(trailing)
        if method == "nearest":
            corner = tuple(_util.observed(lambda yv, i=i: np.where(yv <= 0.5, i, i + 1), y)
                           for i, y in zip(idx, dist))
            res = W.getitem(self.values, corner)
        else:
            res = 0.0
            pairs = [((i, W.subtract(1.0, y)), (i + 1, y)) for i, y in zip(idx, dist)]
            for h in itertools.product(*pairs):
                corner, weights = zip(*h)
                w = weights[0]
                for wk in weights[1:]:
                    w = W.multiply(w, wk)
                res = W.add(res, W.multiply(W.getitem(self.values, corner),
                                            W.getitem(w, vslice)))
        if not self.bounds_error and self.fill_value is not None:
            out = _util.observed(lambda f: np.any([(f[:, d] < g[0]) | (f[:, d] > g[-1])
                                              for d, g in enumerate(self.grid)], axis=0), flat)
            if np.any(out):
                res = W.where(np.reshape(out, out.shape + (1,) * len(trailing)),
                              self.fill_value, res)
        return W.reshape(res, shape + trailing)


def interpn(points, values, xi, method="linear", bounds_error=True, fill_value=np.nan):
    """``scipy.interpolate.interpn`` through :class:`RegularGridInterpolator`."""
    if not _traced(values) and not _traced(xi):
        return _si.interpn(points, values, xi, method, bounds_error, fill_value)
    return RegularGridInterpolator(points, values, method, bounds_error, fill_value)(xi)
