"""``diffsci.scipy.stats.gaussian_kde``: a Gaussian kernel density estimate, differentiable in
the data, the weights and the evaluation points.

The estimate is SciPy's (Scott 1992, *Multivariate Density Estimation*, §6.3; Silverman 1986,
*Density Estimation*, §4.2):

    f(x) = sum_i w_i N(x; x_i, H),   H = factor^2 cov_w(data),

with ``factor = neff^(-1/(d+4))`` (Scott) or ``(neff (d+2)/4)^(-1/(d+4))`` (Silverman),
``neff = 1/sum w_i^2`` for normalised weights.  Everything is a composite of
:mod:`diffsci.numpy` (``cov``, ``linalg.cholesky``, ``logsumexp``): gradients to every order,
including through the bandwidth's dependence on the data.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats

from .. import numpy as dnp
from .._core import getval, is_tracer
from . import special as S

__all__ = ["gaussian_kde"]


def _plain_all(*xs):
    return not any(is_tracer(x) for x in xs)


class gaussian_kde:
    """``scipy.stats.gaussian_kde(dataset, bw_method=None, weights=None)``.

    Args:
        dataset: ``(d, n)`` samples (1-D for ``d = 1``).
        bw_method: ``None``/``"scott"``, ``"silverman"``, a scalar factor or a callable of
            the estimate returning one (as SciPy).
        weights: optional ``n`` non-negative weights (normalised here).

    Methods: ``evaluate(points)`` (also ``pdf`` and calling the object), ``logpdf(points)``
    (computed with ``logsumexp``: accurate far from the data).

    Raises:
        ValueError: fewer than two samples, more dimensions than samples, wrongly shaped
            weights or points, an unknown ``bw_method``.

    Example:
        >>> kde = gaussian_kde(np.array([0.0, 1.0, 3.0]))
        >>> round(float(kde.evaluate(1.0)[0]), 12)
        0.214895365338
    """

    def __init__(self, dataset, bw_method=None, weights=None):
        self.dataset = dnp.atleast_2d(dnp.asarray(dataset))
        self.d, self.n = np.shape(getval(self.dataset))
        if self.n < 2 or self.d > self.n:
            raise ValueError(f"diffsci.scipy.stats.gaussian_kde: dataset must have more samples "
                             f"than dimensions and at least 2, got shape {(self.d, self.n)}")
        if weights is not None:
            w = dnp.atleast_1d(dnp.asarray(weights))
            if np.shape(getval(w)) != (self.n,):
                raise ValueError(f"diffsci.scipy.stats.gaussian_kde: weights must have shape "
                                 f"({self.n},), got {np.shape(getval(w))}")
            self._weights = w / dnp.sum(w)
        else:
            self._weights = np.full(self.n, 1.0 / self.n)
        self.neff = 1.0 / dnp.sum(self._weights ** 2)
        self.set_bandwidth(bw_method)

    @property
    def weights(self):
        return self._weights

    def scotts_factor(self):
        return self.neff ** (-1.0 / (self.d + 4))

    def silverman_factor(self):
        return (self.neff * (self.d + 2.0) / 4.0) ** (-1.0 / (self.d + 4))

    covariance_factor = scotts_factor

    def set_bandwidth(self, bw_method=None):
        if bw_method is None or bw_method == "scott":
            self.covariance_factor = self.scotts_factor
        elif bw_method == "silverman":
            self.covariance_factor = self.silverman_factor
        elif np.isscalar(bw_method) and not isinstance(bw_method, str) or is_tracer(bw_method):
            self._bw = bw_method
            self.covariance_factor = lambda: self._bw
        elif callable(bw_method):
            self._bw_fun = bw_method
            self.covariance_factor = lambda: self._bw_fun(self)
        else:
            raise ValueError(f"diffsci.scipy.stats.gaussian_kde: bw_method must be 'scott', "
                             f"'silverman', a scalar or a callable, got {bw_method!r}")
        self.factor = self.covariance_factor()
        data_cov = dnp.atleast_2d(dnp.cov(self.dataset, rowvar=True, bias=False,
                                          aweights=self._weights))
        self.covariance = data_cov * self.factor ** 2
        self._chol = dnp.linalg.cholesky(self.covariance)
        self.log_det = 2.0 * dnp.sum(dnp.log(dnp.diagonal(self._chol)))

    def _points(self, points):
        p = dnp.atleast_2d(dnp.asarray(points))
        d, m = np.shape(getval(p))
        if d != self.d:
            if d == 1 and m == self.d:
                p = dnp.reshape(p, (self.d, 1))
            else:
                raise ValueError(f"diffsci.scipy.stats.gaussian_kde: points have dimension {d}, "
                                 f"dataset has dimension {self.d}")
        return p

    def _log_terms(self, points):
        p = self._points(points)
        diff = self.dataset[:, :, None] - p[:, None, :]  # (d, n, m)
        d, n, m = np.shape(getval(diff))
        z = dnp.linalg.solve(self._chol, dnp.reshape(diff, (d, n * m)))
        maha = dnp.reshape(dnp.sum(z * z, axis=0), (n, m))
        return -0.5 * maha - 0.5 * (self.d * math.log(2 * math.pi) + self.log_det)

    def logpdf(self, x):
        """log of the density at ``x`` (``(d, m)`` points), by ``logsumexp`` over the data."""
        if _plain_all(self.dataset, self._weights, x, self.factor):
            return self._scipy().logpdf(x)
        w = self._weights
        return S.logsumexp(self._log_terms(x), axis=0, b=dnp.reshape(w, (self.n, 1)))

    def evaluate(self, points):
        """The density at ``points`` (``(d, m)``, or ``m`` values for ``d = 1``)."""
        if _plain_all(self.dataset, self._weights, points, self.factor):
            return self._scipy().evaluate(points)
        return dnp.sum(dnp.reshape(self._weights, (self.n, 1)) * dnp.exp(self._log_terms(points)),
                       axis=0)

    __call__ = pdf = evaluate

    def _scipy(self):
        return scipy.stats.gaussian_kde(np.asarray(getval(self.dataset)),
                                        bw_method=float(getval(self.factor)),
                                        weights=np.asarray(getval(self._weights)))
