"""Continuous distributions with shape parameters: one table of composites each.

(The location-scale families without shape parameters are in ``_stats_locscale.py``.)

Every formula is standardised (``z = (x - loc)/scale``) and written with
:mod:`diffsci.scipy.special` functions, so gradients flow to ``x``, ``loc``,
``scale`` and every shape parameter (derivatives of ``gammainc``/``betainc`` in
their shape parameters included).  Quantiles without a closed form are SciPy's
values with implicit-function-theorem derivatives (:func:`implicit_ppf`).

References: N. L. Johnson, S. Kotz, N. Balakrishnan, "Continuous Univariate
Distributions" (Wiley, 1994-95), vols. 1-2, for every density and distribution
function below; the SciPy reference of each ``scipy.stats`` distribution for the
parametrisation.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc
import scipy.stats as st

from .._core import getval
from ..numpy import _util
from . import special as S
from ._stats_base import Continuous, implicit_ppf

_LOG2 = math.log(2.0)
_LOGPI = math.log(math.pi)
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _pos(v):
    return v > 0


_POS = (_pos, "positive")


def _log1mexp(u):
    """``log(1 - exp(-u))`` for ``u > 0``, accurate for small and large u (both branches safe)."""
    big = _util.value_mask(np.greater, u, _LOG2)
    ub = np.where(big, u, 1.0)
    us = np.where(big, 1.0, u)
    return np.where(big, np.log1p(-np.exp(-ub)), np.log(-np.expm1(-us)))


def _at_zero(z, f, slope):
    """``f(z)`` with its value and slope at z = 0 exactly given by ``(0.5, slope)``.

    Used where a formula in ``z**2`` has a removable 0 * inf in its derivative at z = 0.
    """
    zero = _util.value_mask(np.equal, z, 0)
    if not np.any(zero):
        return f(z)
    zs = np.where(zero, 1.0, z)
    return np.where(zero, 0.5 + slope * z, f(zs))


class t_gen(Continuous):
    """Student's t with ``df`` degrees of freedom (``scipy.stats.t``)."""

    name, shapes, rules = "t", ("df",), {"df": _POS}
    _ex_shapes = (3.0,)

    def _logpdf(self, z, df):
        return (S.gammaln((df + 1) / 2) - S.gammaln(df / 2) - 0.5 * (np.log(df) + _LOGPI)
                - (df + 1) / 2 * np.log1p(z * z / df))

    def _cdf(self, z, df):
        # 1 - I_{df/(df+z^2)}(df/2, 1/2)/2 for z > 0, mirrored for z < 0
        def f(z):
            tail = 0.5 * S.betainc(df / 2, 0.5, df / (df + z * z))
            return np.where(z > 0, 1 - tail, tail)
        return _at_zero(z, f, np.exp(self._logpdf(0.0, df)))

    def _sf(self, z, df):
        return self._cdf(-z, df)

    def _ppf(self, q, df):
        return _t_ppf(q, df)


def _t_std_cdf(x, df):
    return t._cdf(x, df)


def _t_std_pdf(x, df):
    return np.exp(t._logpdf(x, df))


t = t_gen()
_t_ppf = implicit_ppf("t", lambda q, df: sc.stdtrit(df, q), _t_std_cdf, _t_std_pdf, 1)


class chi2_gen(Continuous):
    """The chi-squared distribution with ``df`` degrees of freedom (``scipy.stats.chi2``)."""

    name, shapes, rules, _lo, _inner = "chi2", ("df",), {"df": _POS}, 0.0, 1.0
    _ex_shapes = (3.0,)

    def _logpdf(self, z, df):
        return S.xlogy(df / 2 - 1, z) - z / 2 - S.gammaln(df / 2) - df / 2 * _LOG2

    def _cdf(self, z, df):
        return S.gammainc(df / 2, z / 2)

    def _sf(self, z, df):
        return S.gammaincc(df / 2, z / 2)

    def _ppf(self, q, df):
        return 2 * _gamma_ppf(q, df / 2)

    def _isf(self, q, df):
        return 2 * _gamma_isf(q, df / 2)


class gamma_gen(Continuous):
    """The gamma distribution with shape ``a`` (``scipy.stats.gamma``)."""

    name, shapes, rules, _lo, _inner = "gamma", ("a",), {"a": _POS}, 0.0, 1.0
    _ex_shapes = (2.0,)

    def _logpdf(self, z, a):
        return S.xlogy(a - 1, z) - z - S.gammaln(a)

    def _cdf(self, z, a):
        return S.gammainc(a, z)

    def _sf(self, z, a):
        return S.gammaincc(a, z)

    def _ppf(self, q, a):
        return _gamma_ppf(q, a)

    def _isf(self, q, a):
        return _gamma_isf(q, a)


gamma = gamma_gen()
chi2 = chi2_gen()
_gamma_ppf = implicit_ppf("gamma", lambda q, a: sc.gammaincinv(a, q), gamma._cdf,
                          lambda x, a: np.exp(gamma._logpdf(x, a)), 1)
_gamma_isf = implicit_ppf("gamma_isf", lambda q, a: sc.gammainccinv(a, q), gamma._sf,
                          lambda x, a: -np.exp(gamma._logpdf(x, a)), 1)


class beta_gen(Continuous):
    """The beta distribution with shapes ``a``, ``b`` on [0, 1] (``scipy.stats.beta``)."""

    name, shapes, rules, _lo, _hi = "beta", ("a", "b"), {"a": _POS, "b": _POS}, 0.0, 1.0
    _ex_shapes = (2.0, 3.0)

    def _logpdf(self, z, a, b):
        return S.xlogy(a - 1, z) + S.xlog1py(b - 1, -z) - S.betaln(a, b)

    def _cdf(self, z, a, b):
        return S.betainc(a, b, z)

    def _sf(self, z, a, b):
        return S.betainc(b, a, 1 - z)

    def _ppf(self, q, a, b):
        return _beta_ppf(q, a, b)


beta = beta_gen()
_beta_ppf = implicit_ppf("beta", lambda q, a, b: sc.betaincinv(a, b, q), beta._cdf,
                         lambda x, a, b: np.exp(beta._logpdf(x, a, b)), 2)


class f_gen(Continuous):
    """Fisher's F with ``dfn``, ``dfd`` degrees of freedom (``scipy.stats.f``)."""

    name, shapes, rules, _lo, _inner = "f", ("dfn", "dfd"), {"dfn": _POS, "dfd": _POS}, 0.0, 1.0
    _ex_shapes = (3.0, 5.0)

    def _logpdf(self, z, m, n):
        return (m / 2 * np.log(m / n) + S.xlogy(m / 2 - 1, z)
                - (m + n) / 2 * np.log1p(m * z / n) - S.betaln(m / 2, n / 2))

    def _cdf(self, z, m, n):
        return S.betainc(m / 2, n / 2, m * z / (m * z + n))

    def _sf(self, z, m, n):
        return S.betainc(n / 2, m / 2, n / (m * z + n))

    def _ppf(self, q, m, n):
        return _f_ppf(q, m, n)


f = f_gen()
_f_ppf = implicit_ppf("f", lambda q, m, n: sc.fdtri(m, n, q), f._cdf,
                      lambda x, m, n: np.exp(f._logpdf(x, m, n)), 2)


class invgamma_gen(Continuous):
    """The inverse gamma distribution with shape ``a`` (``scipy.stats.invgamma``)."""

    name, shapes, rules, _lo, _inner = "invgamma", ("a",), {"a": _POS}, 0.0, 1.0
    _ex_shapes = (2.0,)

    def _logpdf(self, z, a):
        return -(a + 1) * np.log(z) - 1 / z - S.gammaln(a)

    def _cdf(self, z, a):
        return S.gammaincc(a, 1 / z)

    def _sf(self, z, a):
        return S.gammainc(a, 1 / z)

    def _ppf(self, q, a):
        return 1 / _gamma_isf(q, a)

    def _isf(self, q, a):
        return 1 / _gamma_ppf(q, a)


invgamma = invgamma_gen()


class lognorm_gen(Continuous):
    """The log-normal distribution with shape ``s`` (``scipy.stats.lognorm``)."""

    name, shapes, rules, _lo, _inner = "lognorm", ("s",), {"s": _POS}, 0.0, 1.0
    _ex_shapes = (0.5,)

    def _logpdf(self, z, s):
        lz = np.log(z)
        return -lz - np.log(s) - _HALF_LOG_2PI - 0.5 * (lz / s) ** 2

    def _cdf(self, z, s):
        return S.ndtr(np.log(z) / s)

    def _logcdf(self, z, s):
        return S.log_ndtr(np.log(z) / s)

    def _sf(self, z, s):
        return S.ndtr(-np.log(z) / s)

    def _logsf(self, z, s):
        return S.log_ndtr(-np.log(z) / s)

    def _ppf(self, q, s):
        return np.exp(s * S.ndtri(q))

    def _isf(self, q, s):
        return np.exp(-s * S.ndtri(q))


lognorm = lognorm_gen()


class truncnorm_gen(Continuous):
    """The standard normal truncated to [a, b] (``scipy.stats.truncnorm``)."""

    name, shapes = "truncnorm", ("a", "b")
    rules = {"a": (lambda v: v < np.inf, "less than +inf (and below b)"),
             "b": (lambda v: v > -np.inf, "greater than -inf (and above a)")}
    _ex_shapes = (-1.0, 2.0)

    def _support(self, a, b):
        return a, b

    def _parse(self, method, args, kwds):
        shapes, loc, scale = super()._parse(method, args, kwds)
        a, b = (np.asarray(getval(v)) for v in shapes)
        if np.any(a >= b):
            raise ValueError(f"diffsci.scipy.stats.truncnorm.{method}: a must be less than b, "
                             f"got a={a!r}, b={b!r}")
        return shapes, loc, scale

    @staticmethod
    def _logdiff(lo, hi):
        """log(Phi(hi) - Phi(lo)) for lo <= hi, from the tail where the mass is (derivation
        T1): log_ndtr(-lo) + log1p(-exp(log_ndtr(-hi) - log_ndtr(-lo))) right of 0,
        mirrored left of 0, the plain difference across it; accurate far into the tails."""
        lov, hiv = getval(lo), getval(hi)
        right, left = lov > 0, hiv < 0
        mid = ~(right | left)
        # each branch on safe stand-ins where it is not taken (no inf/NaN in its gradient)
        lo_r, hi_r = np.where(right, lo, 1.0), np.where(right, hi, 2.0)
        rt = S.log_ndtr(-lo_r)
        right_v = rt + np.log1p(-np.exp(S.log_ndtr(-hi_r) - rt))
        lo_l, hi_l = np.where(left, lo, -2.0), np.where(left, hi, -1.0)
        lt = S.log_ndtr(hi_l)
        left_v = lt + np.log1p(-np.exp(S.log_ndtr(lo_l) - lt))
        lo_m, hi_m = np.where(mid, lo, -1.0), np.where(mid, hi, 1.0)
        mid_v = np.log(S.ndtr(hi_m) - S.ndtr(lo_m))
        return np.where(right, right_v, np.where(left, left_v, mid_v))

    def _logpdf(self, z, a, b):
        return -0.5 * z * z - _HALF_LOG_2PI - self._logdiff(a, b)

    def _logcdf(self, z, a, b):
        return self._log_part(self._logdiff(a, z), self._logdiff(z, b), self._logdiff(a, b))

    @staticmethod
    def _log_part(num, other, total):
        """log(num/total), from the complement ``log1p(-other/total)`` where it is near 0."""
        raw = num - total
        near1 = _util.value_mask(np.greater, raw, -_LOG2)
        comp = np.where(near1, other - total, -1.0)
        return np.where(near1, np.log1p(-np.exp(comp)), raw)

    def _cdf(self, z, a, b):
        return np.exp(self._logcdf(z, a, b))

    def _logsf(self, z, a, b):
        return self._log_part(self._logdiff(z, b), self._logdiff(a, z), self._logdiff(a, b))

    def _sf(self, z, a, b):
        return np.exp(self._logsf(z, a, b))

    def _ppf(self, q, a, b):
        return _truncnorm_ppf(q, a, b)

    def _inner_point(self, s):
        a, b = (np.asarray(getval(v), float) for v in s)
        return np.where(np.isfinite(a) & np.isfinite(b), (a + b) / 2,
                        np.where(np.isfinite(a), a + 1.0, np.where(np.isfinite(b), b - 1.0, 0.0)))


truncnorm = truncnorm_gen()
_truncnorm_ppf = implicit_ppf("truncnorm", lambda q, a, b: st.truncnorm.ppf(q, a, b),
                              truncnorm._cdf, lambda x, a, b: np.exp(truncnorm._logpdf(x, a, b)),
                              2)


class vonmises_gen(Continuous):
    """The von Mises distribution with concentration ``kappa`` (``scipy.stats.vonmises``).

    As SciPy, the density is 2 pi-periodic and the distribution function is unwrapped:
    ``cdf(x + 2 pi) = cdf(x) + 1``.  On [-pi, pi] it is the Fourier series (derivation V1)
    ``F(x) = 1/2 + x/(2 pi) + (1/pi) sum_{n>=1} r_n(kappa) sin(n x)/n`` with
    ``r_n = I_n(kappa)/I_0(kappa) = ive(n, kappa)/ive(0, kappa)``, summed to
    ``n = 16 + 9 sqrt(kappa)`` terms (``r_n ~ exp(-n^2/(2 kappa))`` is then below 1e-17),
    differentiable in ``x`` and ``kappa`` through ``ive``.  ``ppf`` is SciPy's value with
    implicit derivatives.
    """

    name, shapes, rules = "vonmises", ("kappa",), {"kappa": _POS}
    _ex_shapes = (2.0,)

    def _logpdf(self, z, kappa):
        # log(exp(kappa cos z) / (2 pi I0(kappa))) with I0 = exp(kappa) i0e(kappa)
        return kappa * (np.cos(z) - 1) - np.log(2 * math.pi * S.i0e(kappa))

    def _cdf(self, z, kappa):
        kv = np.asarray(getval(kappa), float)
        nterms = int(16 + 9 * math.sqrt(float(np.max(kv, initial=0.0))))
        wraps = np.floor((np.asarray(getval(z), float) + math.pi) / (2 * math.pi))
        zw = z - 2 * math.pi * wraps
        n = np.arange(1, nterms + 1, dtype=float)
        shape = np.broadcast_shapes(np.shape(getval(zw)), kv.shape)
        k = np.broadcast_to(kappa, shape)[..., None] if shape else kappa
        ratio = S.ive(n, k) / S.ive(0.0, k)
        series = np.sum(ratio * np.sin(n * np.reshape(zw, np.shape(getval(zw)) + (1,))) / n,
                        axis=-1)
        return wraps + 0.5 + zw / (2 * math.pi) + series / math.pi

    def _ppf(self, q, kappa):
        return _vonmises_ppf(q, kappa)


vonmises = vonmises_gen()
_vonmises_ppf = implicit_ppf("vonmises", lambda q, k: st.vonmises.ppf(q, k), vonmises._cdf,
                             lambda x, k: np.exp(vonmises._logpdf(x, k)), 1)


class gennorm_gen(Continuous):
    """The generalised normal distribution with shape ``beta`` (``scipy.stats.gennorm``)."""

    name, shapes, rules = "gennorm", ("beta",), {"beta": _POS}
    _ex_shapes = (1.5,)

    def _logpdf(self, z, beta):
        return np.log(beta) - _LOG2 - S.gammaln(1 / beta) - np.abs(z) ** beta

    def _cdf(self, z, beta):
        half = 0.5 * S.gammaincc(1 / beta, np.abs(z) ** beta)
        return np.where(z > 0, 1 - half, half)

    def _sf(self, z, beta):
        return self._cdf(-z, beta)

    def _ppf(self, q, beta):
        tail = np.minimum(q, 1 - q)
        r = _gamma_isf(2 * tail, 1 / beta) ** (1 / beta)
        return np.where(q > 0.5, r, -r)


gennorm = gennorm_gen()


class pareto_gen(Continuous):
    """The Pareto distribution with shape ``b`` on [1, inf) (``scipy.stats.pareto``)."""

    name, shapes, rules, _lo, _inner = "pareto", ("b",), {"b": _POS}, 1.0, 2.0
    _ex_shapes = (2.0,)
    _ex_x = 1.5

    def _logpdf(self, z, b):
        return np.log(b) - (b + 1) * np.log(z)

    def _cdf(self, z, b):
        return -np.expm1(-b * np.log(z))

    def _logcdf(self, z, b):
        return _log1mexp(b * np.log(z))

    def _sf(self, z, b):
        return np.exp(-b * np.log(z))

    def _logsf(self, z, b):
        return -b * np.log(z)

    def _ppf(self, q, b):
        return np.exp(-np.log1p(-q) / b)

    def _isf(self, q, b):
        return np.exp(-np.log(q) / b)


pareto = pareto_gen()


class weibull_min_gen(Continuous):
    """The Weibull distribution with shape ``c`` (``scipy.stats.weibull_min``)."""

    name, shapes, rules, _lo, _inner = "weibull_min", ("c",), {"c": _POS}, 0.0, 1.0
    _ex_shapes = (1.5,)

    def _logpdf(self, z, c):
        return np.log(c) + S.xlogy(c - 1, z) - z ** c

    def _cdf(self, z, c):
        return -np.expm1(-z ** c)

    def _logcdf(self, z, c):
        return _log1mexp(z ** c)

    def _sf(self, z, c):
        return np.exp(-z ** c)

    def _logsf(self, z, c):
        return -z ** c

    def _ppf(self, q, c):
        return (-np.log1p(-q)) ** (1 / c)

    def _isf(self, q, c):
        return (-np.log(q)) ** (1 / c)


weibull_min = weibull_min_gen()

class wrapcauchy_gen(Continuous):
    """The wrapped Cauchy distribution with shape ``c`` on [0, 2 pi] (``scipy.stats.wrapcauchy``).
    """

    name, shapes, _lo, _hi = "wrapcauchy", ("c",), 0.0, 2 * math.pi
    rules = {"c": (lambda v: (v > 0) & (v < 1), "in (0, 1)")}
    _ex_shapes = (0.5,)

    def _logpdf(self, z, c):
        return np.log1p(-c * c) - np.log(2 * math.pi * (1 + c * c - 2 * c * np.cos(z)))

    def _cdf(self, z, c):
        # (1/pi) atan(cr tan(z/2)) on [0, pi), mirrored on [pi, 2 pi], cr = (1 + c)/(1 - c)
        cr = (1 + c) / (1 - c)
        low = _util.value_mask(np.less, z, math.pi)
        zl = np.where(low, z, math.pi / 2)
        zh = np.where(low, 3 * math.pi / 2, z)
        return np.where(low, np.arctan(cr * np.tan(zl / 2)) / math.pi,
                        1 - np.arctan(cr * np.tan((2 * math.pi - zh) / 2)) / math.pi)

    def _ppf(self, q, c):
        val = (1 - c) / (1 + c)
        low = _util.value_mask(np.less, q, 0.5)
        ql = np.where(low, q, 0.25)
        qh = np.where(low, 0.75, q)
        return np.where(low, 2 * np.arctan(val * np.tan(math.pi * ql)),
                        2 * math.pi - 2 * np.arctan(val * np.tan(math.pi * (1 - qh))))


wrapcauchy = wrapcauchy_gen()

CONTINUOUS = ["beta", "chi2", "f", "gamma", "gennorm", "invgamma", "lognorm", "pareto", "t",
              "truncnorm", "vonmises", "weibull_min", "wrapcauchy"]
