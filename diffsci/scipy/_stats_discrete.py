"""Discrete distributions of ``diffsci.scipy.stats``: composites of special functions.

The count ``k`` (and ``loc``, which shifts the integer support) are not
differentiable: a traced ``k`` raises ``TypeError``.  Every continuous parameter
is (``mu``, ``p``, the real ``n`` of ``nbinom``, ``a`` and ``b`` of ``betabinom``);
the integer ``n`` of ``binom``, ``betabinom`` and ``multinomial`` is a count and
is checked to be a plain non-negative integer.  The distribution functions are
regularised incomplete gamma/beta functions (DLMF 8.4.10, 8.17.5), so they
differentiate in the parameters through those functions' shape derivatives.
``ppf`` is integer-valued: SciPy's value, no gradient.

References: N. L. Johnson, A. W. Kemp, S. Kotz, "Univariate Discrete
Distributions", 3rd ed. (Wiley, 2005).
"""

from __future__ import annotations

import numpy as np
import scipy.stats as st

from .._core import getval, is_tracer
from . import special as S
from ._stats_base import Discrete, _plain


def _prob(v):
    return (v >= 0) & (v <= 1)


def _count(v):
    return (v >= 0) & (v == np.floor(v))


_P = (_prob, "in [0, 1]")
_N = (_count, "a non-negative integer (plain, not traced)")
_POS = (lambda v: v > 0, "positive")


class _Counted(Discrete):
    """A discrete distribution whose ``n`` is a count: plain, never traced."""

    def _parse(self, method, args, kwds):
        shapes, loc, scale = super()._parse(method, args, kwds)
        n = shapes[self.shapes.index("n")]
        if is_tracer(n):
            raise TypeError(f"diffsci.scipy.stats.{self.name}.{method}: n is a count and is "
                            f"not differentiable; pass a plain value")
        return shapes, loc, scale


class poisson_gen(Discrete):
    """The Poisson distribution with mean ``mu`` (``scipy.stats.poisson``)."""

    name, shapes, rules = "poisson", ("mu",), {"mu": (lambda v: v >= 0, "non-negative")}
    _ex_shapes = (3.0,)

    def _scipy(self):
        return st.poisson

    def _logpmf(self, k, mu):
        return S.xlogy(k, mu) - S.gammaln(k + 1) - mu

    def _cdf(self, k, mu):
        return S.gammaincc(k + 1, mu)

    def _sf(self, k, mu):
        return S.gammainc(k + 1, mu)

    def entropy(self, mu, loc=0):
        """``scipy.stats.poisson.entropy``: ``-sum_k p_k log p_k``, summed over
        ``k <= mu + 20 sqrt(mu) + 40`` (the tail beyond holds less than 1e-40 of the mass), a
        composite of ``logpmf``: differentiable in ``mu > 0`` to every order
        (``dH/dmu = E[log(K + 1)] - log mu``).  ``loc`` shifts only.

        Example:
            >>> round(float(poisson.entropy(3.0)), 12)
            1.931470198149
        """
        mu_v = np.asarray(getval(mu), dtype=float)
        if np.any(np.isnan(mu_v)) or np.any(mu_v < 0):
            raise ValueError(f"diffsci.scipy.stats.poisson.entropy: mu must be non-negative, "
                             f"got {mu_v!r}")
        if not is_tracer(mu):
            return st.poisson.entropy(mu, loc)
        kmax = int(np.ceil(np.max(mu_v + 20 * np.sqrt(mu_v) + 40, initial=40)))
        k = np.arange(kmax + 1.0).reshape((-1,) + (1,) * mu_v.ndim)
        lp = S.xlogy(k, mu) - S.gammaln(k + 1) - mu
        return -np.sum(np.exp(lp) * lp, axis=0)


class binom_gen(_Counted):
    """The binomial distribution of ``n`` trials with probability ``p`` (``scipy.stats.binom``)."""

    name, shapes, rules = "binom", ("n", "p"), {"n": _N, "p": _P}
    _ex_shapes = (9, 0.3)

    def _scipy(self):
        return st.binom

    def _support(self, n, p):
        return 0, n

    def _logpmf(self, k, n, p):
        return (S.gammaln(n + 1) - S.gammaln(k + 1) - S.gammaln(n - k + 1)
                + S.xlogy(k, p) + S.xlog1py(n - k, -p))

    def _cdf(self, k, n, p):
        return S.betainc(n - k, k + 1, 1 - p)

    def _sf(self, k, n, p):
        return S.betainc(k + 1, n - k, p)


class nbinom_gen(Discrete):
    """Failures before the ``n``-th success with probability ``p`` (``scipy.stats.nbinom``).

    ``n`` may be any positive real, and is differentiable.
    """

    name, shapes, rules = "nbinom", ("n", "p"), {"n": _POS, "p": (lambda v: (v > 0) & (v <= 1),
                                                                    "in (0, 1]")}
    _ex_shapes = (2.5, 0.4)

    def _scipy(self):
        return st.nbinom

    def _logpmf(self, k, n, p):
        return (S.gammaln(n + k) - S.gammaln(k + 1) - S.gammaln(n)
                + S.xlogy(n, p) + S.xlog1py(k, -p))

    def _cdf(self, k, n, p):
        return S.betainc(n, k + 1, p)

    def _sf(self, k, n, p):
        return S.betainc(k + 1, n, 1 - p)


class bernoulli_gen(Discrete):
    """The Bernoulli distribution with success probability ``p`` (``scipy.stats.bernoulli``)."""

    name, shapes, rules, _hi = "bernoulli", ("p",), {"p": _P}, 1
    _ex_shapes = (0.3,)

    def _scipy(self):
        return st.bernoulli

    def _logpmf(self, k, p):
        return S.xlogy(k, p) + S.xlog1py(1 - k, -p)

    def _cdf(self, k, p):  # k = 0 here (k >= 1 is above the support's last step)
        return 1 - p + 0 * k

    def _sf(self, k, p):
        return p + 0 * k


class geom_gen(Discrete):
    """Trials until the first success, ``k >= 1`` (``scipy.stats.geom``)."""

    name, shapes, rules, _lo = "geom", ("p",), {"p": (lambda v: (v > 0) & (v <= 1),
                                                       "in (0, 1]")}, 1
    _ex_shapes = (0.3,)

    def _scipy(self):
        return st.geom

    def _logpmf(self, k, p):
        return S.xlog1py(k - 1, -p) + np.log(p)

    def _cdf(self, k, p):
        return -np.expm1(k * np.log1p(-p))

    def _sf(self, k, p):
        return np.exp(k * np.log1p(-p))

    def _logsf(self, k, p):
        return k * np.log1p(-p)


class betabinom_gen(_Counted):
    """The beta-binomial distribution (``scipy.stats.betabinom``): ``n`` trials, shapes a, b.

    ``cdf`` and ``sf`` sum the pmf over the support (at most ``n + 1`` terms).
    """

    name, shapes, rules = "betabinom", ("n", "a", "b"), {"n": _N, "a": _POS, "b": _POS}
    _ex_shapes = (9, 2.0, 3.0)

    def _scipy(self):
        return st.betabinom

    def _support(self, n, a, b):
        return 0, n

    def _logpmf(self, k, n, a, b):
        return (S.gammaln(n + 1) - S.gammaln(k + 1) - S.gammaln(n - k + 1)
                + S.betaln(k + a, n - k + b) - S.betaln(a, b))

    def _cdf(self, k, n, a, b):
        kmax = int(np.max(_plain(k))) if np.size(_plain(k)) else 0
        total = 0.0
        for j in range(kmax + 1):  # sum of pmf(j) for j <= k
            jj = np.minimum(float(j), _plain(n))
            term = np.exp(self._logpmf(jj, n, a, b))
            total = total + np.where(_plain(k) >= j, term, 0.0)
        return total

    def _sf(self, k, n, a, b):
        return 1 - self._cdf(k, n, a, b)


poisson = poisson_gen()
binom = binom_gen()
nbinom = nbinom_gen()
bernoulli = bernoulli_gen()
geom = geom_gen()
betabinom = betabinom_gen()

DISCRETE = ["bernoulli", "betabinom", "binom", "geom", "nbinom", "poisson"]
