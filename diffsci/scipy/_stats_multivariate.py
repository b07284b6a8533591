"""Multivariate distributions of ``diffsci.scipy.stats``: normal, Dirichlet, multinomial.

``multivariate_normal`` differentiates in ``x``, ``mean`` and ``cov`` through a
Cholesky factorisation (``diffsci.scipy.linalg``).  With ``allow_singular=True``
and a covariance of rank ``r < d`` it uses the identity (derivation M1)

    pdet(C) = det(C + I - P),    C^+ = (C + I - P)^{-1} - (I - P),

where ``P`` is the orthogonal projector onto the range of ``C`` (from an
eigendecomposition of the plain value, rank by SciPy's tolerance).  Holding ``P``
fixed gives the right derivatives along every perturbation that keeps the rank
(``C = A A^T`` with ``A`` of rank ``r``): ``d log pdet = tr(C^+ dC)`` there, the
extra ``tr((I - P) dC)`` vanishing since ``(I - P) A = 0``; and for ``x - mean`` in
the range, ``d (v^T C^+ v) = -v^T C^+ dC C^+ v`` as for the Moore-Penrose inverse.
Points off the affine support get ``logpdf = -inf`` (as SciPy).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.stats

from .._core import getval, is_tracer
from . import linalg as L
from . import special as S

_LOG_2PI = math.log(2.0 * math.pi)


def _plain(v):
    return np.asarray(getval(v), dtype=float)


class multivariate_normal_gen:
    """The multivariate normal distribution (``scipy.stats.multivariate_normal``).

    Methods ``logpdf``, ``pdf`` and ``entropy`` take ``(x, mean=None, cov=1,
    allow_singular=False)`` as SciPy; ``x`` has shape ``(..., d)``, ``mean`` ``(d,)``
    and ``cov`` ``(d, d)`` (a scalar or a vector of variances is promoted, as in
    SciPy).  Call it to freeze: ``multivariate_normal(mean, cov).logpdf(x)``.

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(lambda m: multivariate_normal.logpdf(np.zeros(2), m))(np.ones(2))[0])
        -1.0
    """

    name = "multivariate_normal"
    methods = ("logpdf", "pdf", "entropy")

    def __repr__(self):
        return "diffsci.scipy.stats.multivariate_normal"

    def _prep(self, method, mean, cov):
        cv = _plain(cov)
        if mean is None:  # SciPy: the dimension from cov, 1 for a scalar
            mean = np.zeros(1 if cv.ndim == 0 else cv.shape[0])
        d = np.shape(getval(mean))[-1] if np.ndim(getval(mean)) else 1
        if np.ndim(getval(mean)) > 1:
            raise ValueError(f"diffsci.scipy.stats.multivariate_normal.{method}: mean must "
                             f"be a vector, got shape {np.shape(getval(mean))}")
        if cv.ndim == 0:
            cov = cov * np.eye(d)
        elif cv.ndim == 1:
            cov = np.diag(cov) if not is_tracer(cov) else cov[:, None] * np.eye(d)
        cv = _plain(cov)
        if cv.shape != (d, d):
            raise ValueError(f"diffsci.scipy.stats.multivariate_normal.{method}: cov must be "
                             f"({d}, {d}) for a mean of length {d}, got shape {cv.shape}")
        if not np.allclose(cv, cv.T, rtol=1e-10, atol=1e-14 * np.max(np.abs(cv), initial=1)):
            raise ValueError(f"diffsci.scipy.stats.multivariate_normal.{method}: cov must be "
                             f"symmetric")
        # symmetrised (the same value): the Cholesky factor reads one triangle, and the
        # gradient of a function of a symmetric matrix should be symmetric
        cov = 0.5 * (cov + np.swapaxes(cov, -1, -2))
        return np.reshape(mean, (d,)) if np.ndim(getval(mean)) == 0 else mean, cov, d

    def _factor(self, method, cov, d, allow_singular):
        """(log pdet, a function v -> v^T C^+ v for v in the range, rank, projector)."""
        cv = _plain(cov)
        w, u = np.linalg.eigh(cv)
        # SciPy's _PSD tolerance (scipy.stats._multivariate._eigvalsh_to_eps)
        eps = 1e6 * np.finfo(float).eps * np.max(np.abs(w))
        if np.min(w) < -eps:
            raise ValueError(f"diffsci.scipy.stats.multivariate_normal.{method}: cov must be "
                             f"positive semidefinite (smallest eigenvalue {np.min(w):.3g})")
        keep = w > eps
        rank = int(np.sum(keep))
        if rank < d and not allow_singular:
            raise np.linalg.LinAlgError(
                f"diffsci.scipy.stats.multivariate_normal.{method}: cov is singular (rank "
                f"{rank} < {d}); pass allow_singular=True for the degenerate distribution")
        if rank == d:
            reg, proj = cov, None
        else:
            ur = u[:, keep]
            proj = ur @ ur.T
            reg = cov + (np.eye(d) - proj)  # (M1): P is held fixed
        chol = L.cholesky(reg, lower=True)
        logdet = 2 * np.sum(np.log(np.diagonal(chol)))

        def maha(v):
            sol = L.solve_triangular(chol, np.swapaxes(v, -1, -2) if np.ndim(getval(v)) > 1
                                     else v, lower=True)
            return np.sum(sol * sol, axis=0)

        return logdet, maha, rank, proj

    def logpdf(self, x, mean=None, cov=1, allow_singular=False):
        """Log density at ``x`` (shape ``(..., d)``), the leading shape (SciPy squeezes it).

        Raises:
            ValueError: shapes disagree, ``cov`` is not symmetric positive semidefinite.
            numpy.linalg.LinAlgError: ``cov`` is singular and ``allow_singular`` is False.
        """
        mean, cov, d = self._prep("logpdf", mean, cov)
        xv = x if np.ndim(getval(x)) else np.reshape(x, (1,))
        if d == 1 and np.ndim(getval(x)) >= 1 and np.shape(getval(x))[-1] != 1:
            xv = x[..., None]  # SciPy reads a vector x of a 1-d normal as several points
        logdet, maha, rank, proj = self._factor("logpdf", cov, d, allow_singular)
        dev = xv - mean
        lead = np.shape(getval(dev))[:-1]
        flat = np.reshape(dev, (-1, d))
        out = -0.5 * (rank * _LOG_2PI + logdet + maha(flat))
        if proj is not None:
            off = np.asarray(getval(flat)) @ (np.eye(d) - proj)
            tol = 1e-8 * (1 + np.max(np.abs(np.asarray(getval(flat))), axis=-1))
            out = np.where(np.linalg.norm(off, axis=-1) > tol, -np.inf, out)
        out = np.reshape(out, lead)
        return out[()] if out.ndim == 0 or np.size(getval(out)) != 1 else np.reshape(out, ())

    def pdf(self, x, mean=None, cov=1, allow_singular=False):
        """Density ``exp(logpdf)``; arguments as :meth:`logpdf`."""
        return np.exp(self.logpdf(x, mean, cov, allow_singular))

    def entropy(self, mean=None, cov=1, allow_singular=False):
        """Differential entropy ``(r (1 + log 2 pi) + log pdet(cov)) / 2`` (r the rank)."""
        mean, cov, d = self._prep("entropy", mean, cov)
        logdet, _, rank, _ = self._factor("entropy", cov, d, allow_singular)
        return 0.5 * (rank * (1 + _LOG_2PI) + logdet)

    def rvs(self, mean=None, cov=1, size=1, random_state=None):
        """SciPy's draws at the plain values of ``mean`` and ``cov`` (not differentiable)."""
        return scipy.stats.multivariate_normal.rvs(
            None if mean is None else _plain(mean), _plain(cov), size=size,
            random_state=random_state)

    def __call__(self, mean=None, cov=1, allow_singular=False):
        """Freeze: ``multivariate_normal(mean, cov)``."""
        return _FrozenMVN(self, mean, cov, allow_singular)


class _FrozenMVN:
    def __init__(self, dist, mean, cov, allow_singular):
        self.dist, self.mean, self.cov, self.allow_singular = dist, mean, cov, allow_singular

    def logpdf(self, x):
        return self.dist.logpdf(x, self.mean, self.cov, self.allow_singular)

    def pdf(self, x):
        return self.dist.pdf(x, self.mean, self.cov, self.allow_singular)

    def entropy(self):
        return self.dist.entropy(self.mean, self.cov, self.allow_singular)


def _check_alpha(method, alpha):
    av = _plain(alpha)
    if av.ndim != 1 or av.size < 2 or np.any(av <= 0) or np.any(np.isnan(av)):
        raise ValueError(f"diffsci.scipy.stats.dirichlet.{method}: alpha must be a vector of "
                         f"at least 2 positive numbers, got {getval(alpha)!r}")


class dirichlet_gen:
    """The Dirichlet distribution (``scipy.stats.dirichlet``), differentiable in x and alpha.

    ``x`` has the components on its *first* axis, as in SciPy (shape ``(K,)`` or
    ``(K, N)``); ``alpha`` has shape ``(K,)``.

    Example:
        >>> import diffsci as ds
        >>> float(dirichlet.logpdf(np.array([0.5, 0.5]), np.ones(2)))  # log Gamma(2)
        0.0
    """

    name = "dirichlet"
    methods = ("logpdf", "pdf", "mean", "var", "entropy")

    def __repr__(self):
        return "diffsci.scipy.stats.dirichlet"

    def _lognorm(self, alpha):
        return np.sum(S.gammaln(alpha)) - S.gammaln(np.sum(alpha))

    def logpdf(self, x, alpha):
        """``sum (alpha_i - 1) log x_i - log B(alpha)``.

        Raises:
            ValueError: ``alpha`` is not a vector of positive numbers, or ``x`` is not on
                the simplex (components in [0, 1] summing to 1, as SciPy checks).
        """
        _check_alpha("logpdf", alpha)
        xv = _plain(x)
        k = np.shape(getval(alpha))[0]
        if xv.shape[0] != k:
            raise ValueError(f"diffsci.scipy.stats.dirichlet.logpdf: x must have {k} "
                             f"components on its first axis, got shape {xv.shape}")
        if np.any(xv < 0) or np.any(xv > 1) or not np.allclose(np.sum(xv, 0), 1, atol=1e-10):
            raise ValueError("diffsci.scipy.stats.dirichlet.logpdf: x must lie on the simplex "
                             "(components in [0, 1] summing to 1 along the first axis)")
        a = alpha if xv.ndim == 1 else np.reshape(alpha, (k,) + (1,) * (xv.ndim - 1))
        return np.sum(S.xlogy(a - 1, x), axis=0) - self._lognorm(alpha)

    def pdf(self, x, alpha):
        """``exp(logpdf)``."""
        return np.exp(self.logpdf(x, alpha))

    def mean(self, alpha):
        """``alpha / sum(alpha)``."""
        _check_alpha("mean", alpha)
        return alpha / np.sum(alpha)

    def var(self, alpha):
        """``a_i (a0 - a_i) / (a0^2 (a0 + 1))``."""
        _check_alpha("var", alpha)
        a0 = np.sum(alpha)
        return alpha * (a0 - alpha) / (a0 * a0 * (a0 + 1))

    def entropy(self, alpha):
        """``log B(alpha) + (a0 - K) digamma(a0) - sum (a_i - 1) digamma(a_i)``."""
        _check_alpha("entropy", alpha)
        a0 = np.sum(alpha)
        k = np.shape(getval(alpha))[0]
        return (self._lognorm(alpha) + (a0 - k) * S.digamma(a0)
                - np.sum((alpha - 1) * S.digamma(alpha)))

    def rvs(self, alpha, size=1, random_state=None):
        """SciPy's draws at the plain value of ``alpha`` (not differentiable: sampling)."""
        _check_alpha("rvs", alpha)
        return scipy.stats.dirichlet.rvs(_plain(alpha), size=size, random_state=random_state)

    def __call__(self, alpha):
        _check_alpha("__call__", alpha)
        return _FrozenDirichlet(self, alpha)


class _FrozenDirichlet:
    def __init__(self, dist, alpha):
        self.dist, self.alpha = dist, alpha

    def logpdf(self, x):
        return self.dist.logpdf(x, self.alpha)

    def pdf(self, x):
        return self.dist.pdf(x, self.alpha)

    def mean(self):
        return self.dist.mean(self.alpha)

    def var(self):
        return self.dist.var(self.alpha)

    def entropy(self):
        return self.dist.entropy(self.alpha)


class multinomial_gen:
    """The multinomial distribution (``scipy.stats.multinomial``), differentiable in ``p``.

    ``x`` (counts, shape ``(..., K)``) and ``n`` are plain; ``p`` (shape ``(K,)`` or
    broadcasting with ``x``) is differentiated.

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(lambda p: multinomial.logpmf([1, 1], 2, p))(np.array([0.5, 0.5]))[0])
        2.0
    """

    name = "multinomial"
    methods = ("logpmf", "pmf")

    def __repr__(self):
        return "diffsci.scipy.stats.multinomial"

    def logpmf(self, x, n, p):
        """``log n! - sum log x_i! + sum x_i log p_i``; ``-inf`` where ``sum x != n``.

        Raises:
            TypeError: ``x`` or ``n`` is traced.
            ValueError: ``p`` is not a probability vector (non-negative, summing to 1).
        """
        for nm, v in (("x", x), ("n", n)):
            if is_tracer(v):
                raise TypeError(f"diffsci.scipy.stats.multinomial.logpmf: {nm} is a count "
                                f"and is not differentiable; pass a plain value")
        pv = _plain(p)
        if np.any(pv < 0) or not np.allclose(np.sum(pv, -1), 1, atol=1e-10):
            raise ValueError(f"diffsci.scipy.stats.multinomial.logpmf: p must be non-negative "
                             f"and sum to 1 along its last axis, got {pv!r}")
        xv = np.asarray(x, float)
        nv = np.asarray(n, float)
        ok = np.all(xv >= 0, -1) & np.all(xv == np.floor(xv), -1) & (np.sum(xv, -1) == nv)
        out = S.gammaln(nv + 1) - np.sum(S.gammaln(xv + 1), -1) + np.sum(S.xlogy(xv, p), -1)
        return np.where(ok, out, -np.inf)

    def pmf(self, x, n, p):
        """``exp(logpmf)``."""
        return np.exp(self.logpmf(x, n, p))


multivariate_normal = multivariate_normal_gen()
dirichlet = dirichlet_gen()
multinomial = multinomial_gen()

MULTIVARIATE = ["dirichlet", "multinomial", "multivariate_normal"]
