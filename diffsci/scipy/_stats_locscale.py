"""Location-scale distributions of ``diffsci.scipy.stats`` without shape parameters.

expon, laplace, logistic, cauchy, uniform, gumbel_r, gumbel_l: standardised closed forms
(``z = (x - loc)/scale``), each a table of NumPy/special-function composites like those
of :mod:`diffsci.scipy._stats_continuous`, differentiable in ``x``, ``loc`` and
``scale`` to every order; the log methods are taken in the form that keeps the tails
(``log_expit``, ``log(1 - exp(-u))`` by :func:`_log1mexp`).

References: Johnson, Kotz & Balakrishnan, "Continuous Univariate Distributions"
(Wiley, 1994-95); the SciPy reference of each distribution.
"""

from __future__ import annotations

import math

import numpy as np

from . import special as S
from ._stats_base import Continuous
from ._stats_continuous import _LOG2, _LOGPI, _log1mexp


class expon_gen(Continuous):
    """The exponential distribution (``scipy.stats.expon``)."""

    name, _lo, _inner = "expon", 0.0, 1.0

    def _logpdf(self, z):
        return -z

    def _cdf(self, z):
        return -np.expm1(-z)

    def _logcdf(self, z):
        return _log1mexp(z)

    def _sf(self, z):
        return np.exp(-z)

    def _logsf(self, z):
        return -z

    def _ppf(self, q):
        return -np.log1p(-q)

    def _isf(self, q):
        return -np.log(q)


expon = expon_gen()


class laplace_gen(Continuous):
    """The Laplace (double exponential) distribution (``scipy.stats.laplace``)."""

    name = "laplace"

    def _logpdf(self, z):
        return -np.abs(z) - _LOG2

    def _cdf(self, z):
        return np.where(z < 0, 0.5 * np.exp(np.minimum(z, 0)), 1 - 0.5 * np.exp(-np.maximum(z, 0)))

    def _sf(self, z):
        return self._cdf(-z)

    def _ppf(self, q):
        return np.where(q < 0.5, np.log(2 * np.minimum(q, 0.5)),
                        -np.log(2 * (1 - np.maximum(q, 0.5))))

    def _isf(self, q):
        return -self._ppf(q)


laplace = laplace_gen()


class logistic_gen(Continuous):
    """The logistic distribution (``scipy.stats.logistic``)."""

    name = "logistic"

    def _logpdf(self, z):
        return S.log_expit(z) + S.log_expit(-z)

    def _cdf(self, z):
        return S.expit(z)

    def _logcdf(self, z):
        return S.log_expit(z)

    def _sf(self, z):
        return S.expit(-z)

    def _logsf(self, z):
        return S.log_expit(-z)

    def _ppf(self, q):
        return S.logit(q)

    def _isf(self, q):
        return -S.logit(q)


logistic = logistic_gen()


class cauchy_gen(Continuous):
    """The Cauchy distribution (``scipy.stats.cauchy``)."""

    name = "cauchy"

    def _logpdf(self, z):
        return -_LOGPI - np.log1p(z * z)

    def _cdf(self, z):
        return 0.5 + np.arctan(z) / math.pi

    def _sf(self, z):
        return 0.5 - np.arctan(z) / math.pi

    def _ppf(self, q):
        return np.tan(math.pi * (q - 0.5))

    def _isf(self, q):
        return np.tan(math.pi * (0.5 - q))


cauchy = cauchy_gen()


class uniform_gen(Continuous):
    """The uniform distribution on [loc, loc + scale] (``scipy.stats.uniform``)."""

    name, _lo, _hi = "uniform", 0.0, 1.0

    def _logpdf(self, z):
        return 0.0 * z

    def _cdf(self, z):
        return z

    def _sf(self, z):
        return 1 - z

    def _ppf(self, q):
        return q

    def _isf(self, q):
        return 1 - q


uniform = uniform_gen()


class gumbel_r_gen(Continuous):
    """The right-skewed Gumbel distribution (``scipy.stats.gumbel_r``)."""

    name = "gumbel_r"

    def _logpdf(self, z):
        return -z - np.exp(-z)

    def _cdf(self, z):
        return np.exp(-np.exp(-z))

    def _logcdf(self, z):
        return -np.exp(-z)

    def _sf(self, z):
        return -np.expm1(-np.exp(-z))

    def _logsf(self, z):
        return _log1mexp(np.exp(-z))

    def _ppf(self, q):
        return -np.log(-np.log(q))

    def _isf(self, q):
        return -np.log(-np.log1p(-q))


gumbel_r = gumbel_r_gen()


class gumbel_l_gen(Continuous):
    """The left-skewed Gumbel distribution (``scipy.stats.gumbel_l``)."""

    name = "gumbel_l"

    def _logpdf(self, z):
        return z - np.exp(z)

    def _cdf(self, z):
        return -np.expm1(-np.exp(z))

    def _logcdf(self, z):
        return _log1mexp(np.exp(z))

    def _sf(self, z):
        return np.exp(-np.exp(z))

    def _logsf(self, z):
        return -np.exp(z)

    def _ppf(self, q):
        return np.log(-np.log1p(-q))

    def _isf(self, q):
        return np.log(-np.log(q))


gumbel_l = gumbel_l_gen()


LOCSCALE = ["cauchy", "expon", "gumbel_l", "gumbel_r", "laplace", "logistic", "uniform"]
