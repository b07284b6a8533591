"""The machinery of ``diffsci.scipy.stats``: distributions as tables of composites.

A distribution is a table of standardised formulas (``z = (x - loc) / scale`` for
continuous ones, ``k - loc`` for discrete ones) written with
:mod:`diffsci.scipy.special` functions and NumPy calls, so every method is
differentiable in ``x`` and every continuous parameter, positionally or by
keyword, to the orders the special functions have.  This module turns the table
into SciPy's methods: argument parsing (shape parameters, then ``loc`` and
``scale``, positional or keyword, broadcasting as SciPy does), validation once
at the boundary (a ``ValueError`` naming the distribution, method and
parameter, where SciPy returns NaN), the support (``-inf``/0/1 outside it,
with zero gradients rather than NaN), and the frozen form ``dist(*shapes,
loc=, scale=)``.

Quantile functions without a closed form are one primitive each: the value is
SciPy's, the derivatives come from the implicit function theorem on
``cdf(ppf(q; s); s) = q``: ``dppf/dq = 1/pdf`` and
``dppf/ds = -(dcdf/ds)/pdf`` at ``x = ppf(q; s)``, both written with the
distribution's own composites (so they differentiate again).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from .._core import defjvp, defvjp, getval, is_tracer, primitive
from .._forward import jvp
from ..numpy import _util
from ..numpy._util import unbroadcast

_NO = object()


def _plain(v):
    return np.asarray(getval(v))


def _invalid(v, check):
    """Whether the plain parameter values ``v`` hold a NaN or fail ``check``."""
    v = np.asarray(v)
    return bool(np.any(np.isnan(v)) or not np.all(check(v)))


def _positive(v):
    return v > 0


class _Dist:
    """Shared parsing, validation and freezing of continuous and discrete distributions."""

    name = "dist"
    shapes: tuple = ()
    #: per shape parameter: (check on the plain value, what it must be)
    rules: dict = {}
    params: tuple = ()  # ("loc", "scale") or ("loc",)
    methods: tuple = ()
    _lo, _hi = -np.inf, np.inf  # support (standardised), may depend on shapes via _support

    def __repr__(self):
        return f"diffsci.scipy.stats.{self.name}"

    def _support(self, *s):
        return self._lo, self._hi

    def _parse(self, method, args, kwds):
        names = self.shapes + self.params
        if len(args) > len(names):
            raise TypeError(f"diffsci.scipy.stats.{self.name}.{method}: takes at most "
                            f"{len(names)} parameters {names}, got {len(args)}")
        vals = dict(zip(names, args))
        for k, v in kwds.items():
            if k not in names:
                raise TypeError(f"diffsci.scipy.stats.{self.name}.{method}: unexpected "
                                f"parameter {k!r}; it takes {names}")
            if k in vals:
                raise TypeError(f"diffsci.scipy.stats.{self.name}.{method}: parameter {k!r} "
                                f"given twice")
            vals[k] = v
        missing = [n for n in self.shapes if n not in vals]
        if missing:
            raise TypeError(f"diffsci.scipy.stats.{self.name}.{method}: missing shape "
                            f"parameter(s) {missing}")
        shapes = tuple(vals[n] for n in self.shapes)
        for n, v in zip(self.shapes, shapes):
            check, what = self.rules[n]
            if _util.observed(_invalid, v, check):  # a guard under diffsci.jit
                raise ValueError(f"diffsci.scipy.stats.{self.name}.{method}: {n} must be "
                                 f"{what}, got {getval(v)!r}")
        loc = vals.get("loc", 0.0)
        scale = vals.get("scale", 1.0)
        if "scale" in self.params:
            if _util.observed(_invalid, scale, _positive):
                raise ValueError(f"diffsci.scipy.stats.{self.name}.{method}: scale must be "
                                 f"positive, got {getval(scale)!r}")
        return shapes, loc, scale

    def __call__(self, *args, **kwds):
        """Freeze the parameters: ``dist(*shapes, loc=..., scale=...)``."""
        shapes, loc, scale = self._parse("__call__", args, kwds)
        return _Frozen(self, shapes, loc, scale)


@dataclasses.dataclass(frozen=True)
class _Frozen:
    """A distribution with its parameters bound: the same methods, of ``x`` only."""

    dist: Any
    shapes: tuple
    loc: Any
    scale: Any

    def __getattr__(self, method):
        if method not in type(self).__dict__ and method in self.dist.methods:
            f = getattr(self.dist, method)
            extra = (self.loc, self.scale) if "scale" in self.dist.params else (self.loc,)
            return lambda x: f(x, *self.shapes, *extra)
        raise AttributeError(method)


def _safe_where(mask, z, fill):
    """``z`` with the entries outside ``mask`` (plain) replaced by ``fill``."""
    return np.where(mask, z, fill) if not np.all(mask) else z


_DOC = """

    Methods: {methods}.
    Each takes ``({x}, {sig})`` as SciPy's ({x} is ``q`` for the quantiles),
    positionally or by keyword, the arguments broadcasting together.
    Differentiable in {cont}.
    Freeze with ``{name}({sig0})``.

    Args:
        {x}: points{xwhat}.
{args}
    Returns:
        The broadcast shape of the arguments.
        {support}

    Raises:
        ValueError: {raises}
            (the message names the method and the parameter).
        TypeError: a parameter is missing, unknown or given twice{traced}.

    Example:
        >>> import scipy.stats
        >>> bool(np.isclose({name}.{m0}({x0}{ex}), scipy.stats.{name}.{m0}({x0}{ex})))
        True

    References:
        {refs};
        the SciPy reference of ``scipy.stats.{name}``;
        diffsci/DERIVATIONS.md, "diffsci.scipy.stats".
    """


def _document(cls):
    """Append the shared argument, error and example sections to a distribution's doc."""
    if not cls.__dict__.get("name"):
        return
    continuous = issubclass(cls, Continuous)
    shapes = cls.shapes
    sig = ", ".join(shapes + (("loc=0, scale=1",) if continuous else ("loc=0",)))
    args = "".join(f"        {n}: shape parameter, {cls.rules[n][1]}.\n" for n in shapes)
    args += ("        loc, scale: location and (positive) scale.\n" if continuous
             else "        loc: integer shift of the support (plain).\n")
    cls.__doc__ = (cls.__doc__ or "").rstrip() + _DOC.format(
        methods=", ".join(f"``{m}``" for m in cls.methods), sig=sig, x="x" if continuous
        else "k", sig0=", ".join(shapes + (("loc, scale",) if continuous else ("loc",))),
        cont="``x``, ``loc``, ``scale`` and the shape parameters, to every order the\n"
        "    special functions have" if continuous else "the continuous shape parameters "
        "(``k``, ``loc`` and\n    counts are plain)",
        xwhat="" if continuous else " (integers, plain)", args=args,
        support="Outside the support: density 0 (log -inf), cdf 0 or 1, zero gradients."
        if continuous else "Off the integer support: pmf 0 (log -inf).",
        raises=("a shape parameter is out of its domain or ``scale <= 0``" if continuous
                else "a shape parameter is out of its domain"),
        traced="" if continuous else ";\n            ``k``, ``loc`` or a count is traced",
        name=cls.name, m0=cls.methods[2] if len(cls.methods) > 2 else cls.methods[0],
        x0=cls._ex_x, ex="".join(f", {v}" for v in cls._ex_shapes),
        refs=cls._refs)


class Continuous(_Dist):
    """A continuous distribution from its standardised formulas (``_logpdf`` ... ``_ppf``)."""

    params = ("loc", "scale")
    methods = ("pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
    _inner = 0.5  # a point inside the support, substituted outside it
    _ex_x, _ex_shapes = 0.5, ()  # the docstring example's point and shape parameters
    _refs = "Johnson, Kotz & Balakrishnan, Continuous Univariate Distributions (1994-95)"

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        _document(cls)

    # standardised formulas; the subclasses give _logpdf and _cdf at least
    def _pdf(self, z, *s):
        return np.exp(self._logpdf(z, *s))

    def _logcdf(self, z, *s):
        return np.log(self._cdf(z, *s))

    def _sf(self, z, *s):
        return 1 - self._cdf(z, *s)

    def _logsf(self, z, *s):
        return np.log(self._sf(z, *s))

    def _isf(self, q, *s):
        return self._ppf(1 - q, *s)

    def _inside(self, z, s):
        lo, hi = self._support(*s)
        m = _util.value_mask  # recomputed by diffsci.jit's compiled code on every call
        return m(np.logical_and, m(np.greater_equal, z, lo), m(np.less_equal, z, hi)), lo, hi

    def _on_support(self, method, f, outside_lo, outside_hi, x, args, kwds):
        s, loc, scale = self._parse(method, args, kwds)
        z = (x - loc) / scale
        inside, lo, hi = self._inside(z, s)
        if np.all(inside):
            return f(z, s, scale)
        zs = _safe_where(inside, z, self._inner_point(s))
        out = f(zs, s, scale)
        below = _util.value_mask(np.less, z, lo)
        out = np.where(inside, out, np.where(below, outside_lo, outside_hi))
        return out

    def _inner_point(self, s):
        lo, hi = self._support(*s)
        lo, hi = _plain(lo), _plain(hi)
        return np.where(np.isfinite(lo) & np.isfinite(hi), (lo + hi) / 2,
                        np.where(np.isfinite(lo), lo + 1.0,
                                 np.where(np.isfinite(hi), hi - 1.0, 0.0)))

    def logpdf(self, x, *args, **kwds):
        """Log density at ``x``; ``-inf`` outside the support."""
        return self._on_support("logpdf", lambda z, s, sc: self._logpdf(z, *s) - np.log(sc),
                                -np.inf, -np.inf, x, args, kwds)

    def pdf(self, x, *args, **kwds):
        """Density at ``x``; 0 outside the support."""
        return self._on_support("pdf", lambda z, s, sc: self._pdf(z, *s) / sc, 0.0, 0.0,
                                x, args, kwds)

    def cdf(self, x, *args, **kwds):
        """Distribution function P(X <= x)."""
        return self._on_support("cdf", lambda z, s, sc: self._cdf(z, *s), 0.0, 1.0,
                                x, args, kwds)

    def logcdf(self, x, *args, **kwds):
        """Log of :meth:`cdf`."""
        return self._on_support("logcdf", lambda z, s, sc: self._logcdf(z, *s), -np.inf, 0.0,
                                x, args, kwds)

    def sf(self, x, *args, **kwds):
        """Survival function P(X > x)."""
        return self._on_support("sf", lambda z, s, sc: self._sf(z, *s), 1.0, 0.0,
                                x, args, kwds)

    def logsf(self, x, *args, **kwds):
        """Log of :meth:`sf`."""
        return self._on_support("logsf", lambda z, s, sc: self._logsf(z, *s), 0.0, -np.inf,
                                x, args, kwds)

    def _quantile(self, method, f, q, args, kwds):
        s, loc, scale = self._parse(method, args, kwds)
        m = _util.value_mask  # recomputed by diffsci.jit's compiled code on every call
        ok = m(np.logical_and, m(np.greater, q, 0), m(np.less, q, 1))
        lo, hi = self._support(*s)
        qs = _safe_where(ok, q, 0.5)
        out = loc + scale * f(qs, *s)
        if np.all(ok):
            return out
        edge_lo, edge_hi = (lo, hi) if method == "ppf" else (hi, lo)
        at0 = loc + scale * np.asarray(edge_lo, float)
        at1 = loc + scale * np.asarray(edge_hi, float)
        return np.where(ok, out, np.where(m(np.equal, q, 0), at0,
                                          np.where(m(np.equal, q, 1), at1, np.nan)))

    def ppf(self, q, *args, **kwds):
        """Quantile function, the inverse of :meth:`cdf` (NaN outside [0, 1])."""
        return self._quantile("ppf", self._ppf, q, args, kwds)

    def isf(self, q, *args, **kwds):
        """Inverse of :meth:`sf`."""
        return self._quantile("isf", self._isf, q, args, kwds)


class Discrete(_Dist):
    """A discrete distribution from its formulas at integer ``k`` (plain, not differentiated)."""

    params = ("loc",)
    methods = ("pmf", "logpmf", "cdf", "logcdf", "sf", "logsf", "ppf")
    _lo, _hi = 0, np.inf
    _ex_x, _ex_shapes = 2, ()
    _refs = "Johnson, Kemp & Kotz, Univariate Discrete Distributions, 3rd ed. (2005)"

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        _document(cls)

    def _logcdf(self, k, *s):
        return np.log(self._cdf(k, *s))

    def _sf(self, k, *s):
        return 1 - self._cdf(k, *s)

    def _logsf(self, k, *s):
        return np.log(self._sf(k, *s))

    def _k(self, method, k, args, kwds):
        if is_tracer(k):
            raise TypeError(f"diffsci.scipy.stats.{self.name}.{method}: k is a count and "
                            f"is not differentiable; pass a plain value")
        s, loc, _ = self._parse(method, args, kwds)
        if is_tracer(loc):
            raise TypeError(f"diffsci.scipy.stats.{self.name}.{method}: loc shifts the "
                            f"integer support and is not differentiable; pass a plain value")
        kk = np.asarray(k, float) - np.asarray(loc, float)
        lo, hi = self._support(*s)
        return kk, s, _plain(lo), _plain(hi)

    def logpmf(self, k, *args, **kwds):
        """Log probability of ``k``; ``-inf`` off the integer support."""
        kk, s, lo, hi = self._k("logpmf", k, args, kwds)
        on = (kk >= lo) & (kk <= hi) & (kk == np.floor(kk))
        ks = np.where(on, kk, np.where(np.isfinite(lo), lo, 0.0))
        return np.where(on, self._logpmf(ks, *s), -np.inf)

    def pmf(self, k, *args, **kwds):
        """Probability of ``k``; 0 off the integer support."""
        kk, s, lo, hi = self._k("pmf", k, args, kwds)
        on = (kk >= lo) & (kk <= hi) & (kk == np.floor(kk))
        ks = np.where(on, kk, np.where(np.isfinite(lo), lo, 0.0))
        return np.where(on, np.exp(self._logpmf(ks, *s)), 0.0)

    def _steps(self, method, f, below, above, k, args, kwds):
        kk, s, lo, hi = self._k(method, k, args, kwds)
        kf = np.floor(kk)
        inside = (kf >= lo) & (kf < hi)
        ks = np.where(inside, kf, np.where(np.isfinite(lo), lo, 0.0))
        out = f(ks, *s)
        return np.where(inside, out, np.where(kf < lo, below, above))

    def cdf(self, k, *args, **kwds):
        """P(K <= k)."""
        return self._steps("cdf", self._cdf, 0.0, 1.0, k, args, kwds)

    def logcdf(self, k, *args, **kwds):
        """log P(K <= k)."""
        return self._steps("logcdf", self._logcdf, -np.inf, 0.0, k, args, kwds)

    def sf(self, k, *args, **kwds):
        """P(K > k)."""
        return self._steps("sf", self._sf, 1.0, 0.0, k, args, kwds)

    def logsf(self, k, *args, **kwds):
        """log P(K > k)."""
        return self._steps("logsf", self._logsf, 0.0, -np.inf, k, args, kwds)

    def ppf(self, q, *args, **kwds):
        """The smallest k with cdf(k) >= q: integer-valued, so not differentiable (SciPy's)."""
        s, loc, _ = self._parse("ppf", args, kwds)
        return self._scipy().ppf(_plain(q), *(_plain(v) for v in s), loc=_plain(loc))


# ---------------------------------------------------------------- implicit quantiles
def implicit_ppf(name, plain_ppf, std_cdf, std_pdf, nshapes):
    """A primitive ``x = ppf(q, *shapes)`` solving ``F(x, *shapes) = q``, differentiable.

    ``plain_ppf`` gives the value (SciPy's); ``std_cdf`` is ``F`` (the cdf for a
    quantile, the sf for an inverse survival function) and ``std_pdf`` its slope
    ``dF/dx`` (minus the density for the sf), both differentiable composites.  The
    implicit function theorem gives ``dx/dq = 1/F_x`` and ``dx/ds = -F_s/F_x``.
    """
    p = primitive(plain_ppf, name=f"{name}_ppf")

    def dq(ans, q, *s):
        return 1 / std_pdf(ans, *s)

    def dshape(j):
        def d(ans, q, *s):
            def cdf_j(sj):
                args = list(s)
                args[j] = sj
                return std_cdf(ans, *args)
            sj = np.broadcast_to(s[j], np.shape(getval(ans)))
            ones = np.ones(np.shape(getval(ans)))
            dcdf = jvp(cdf_j, (sj * 1.0,), (ones,))[1]
            return -dcdf / std_pdf(ans, *s)
        return d

    derivs = [dq] + [dshape(j) for j in range(nshapes)]
    args_of = lambda q, s: (q,) + s  # noqa: E731
    defvjp(p, *[(lambda g, ans, q, *s, d=d, i=i:
                 unbroadcast(g * d(ans, q, *s), args_of(q, s)[i]))
                for i, d in enumerate(derivs)])
    defjvp(p, *[(lambda t, ans, q, *s, d=d: _bcast(t * d(ans, q, *s), ans))
                for d in derivs])
    return p


def _bcast(t, ans):
    shape = np.shape(getval(ans))
    return t if np.shape(getval(t)) == shape else np.broadcast_to(t, shape)
