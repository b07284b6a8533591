"""``diffsci.scipy.stats``: scipy.stats' distributions, differentiable in x and every parameter.

The continuous distributions (``t``, ``chi2``, ``gamma``, ``beta`` ... in
:mod:`diffsci.scipy._stats_continuous`; ``expon``, ``laplace`` ... in
:mod:`diffsci.scipy._stats_locscale`), the discrete ones (``poisson``, ``binom`` ...
in :mod:`diffsci.scipy._stats_discrete`) and the multivariate ones
(``multivariate_normal``, ``dirichlet``, ``multinomial`` in
:mod:`diffsci.scipy._stats_multivariate`) are re-exported here; ``norm`` is below.

``norm`` mirrors ``scipy.stats.norm``: ``norm.cdf(x, loc=0, scale=1)`` and
friends, and the frozen form ``norm(loc, scale).cdf(x)``.  Every method is a
composite of :mod:`diffsci.scipy.special` functions and NumPy calls on the
standardised ``z = (x - loc) / scale``, so ``x``, ``loc`` and ``scale`` may all
be traced, positionally *or by keyword* (no primitive ever sees them as keyword
arguments), and derivatives of every order follow from the special functions'
rules.  The tails stay accurate: ``logcdf``/``logsf`` use ``log_ndtr``, whose
derivative is stable far into either tail.

Plain inputs give SciPy's values (the same formulas); unlike SciPy, a
non-positive ``scale`` raises instead of returning NaN.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import scipy.stats

from .._core import getval, is_tracer
from ..numpy import _util
from . import special
from ._stats_continuous import (  # noqa: E402, F401
    CONTINUOUS,
    beta,
    chi2,
    f,
    gamma,
    gennorm,
    invgamma,
    lognorm,
    pareto,
    t,
    truncnorm,
    vonmises,
    weibull_min,
    wrapcauchy,
)
from ._stats_discrete import (  # noqa: E402, F401
    DISCRETE,
    bernoulli,
    betabinom,
    binom,
    geom,
    nbinom,
    poisson,
)
from ._stats_locscale import (  # noqa: E402, F401
    LOCSCALE,
    cauchy,
    expon,
    gumbel_l,
    gumbel_r,
    laplace,
    logistic,
    uniform,
)
from ._stats_multivariate import (  # noqa: E402, F401
    MULTIVARIATE,
    dirichlet,
    multinomial,
    multivariate_normal,
)

__all__ = sorted(["entropy", "norm"] + CONTINUOUS + LOCSCALE + DISCRETE + MULTIVARIATE)

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _z(x, loc, scale, method):
    # a guard under diffsci.jit (checked at every call, not once)
    if _util.observed(lambda s: bool(np.any(np.asarray(s) <= 0) or np.any(np.isnan(s))), scale):
        raise ValueError(
            f"diffsci.scipy.stats.norm.{method}: scale must be positive, got {getval(scale)!r}"
        )
    return (x - loc) / scale


class _Norm:
    """The normal distribution N(loc, scale²) with SciPy's ``scipy.stats.norm`` methods.

    Call it to freeze the parameters: ``norm(loc, scale).pdf(x)``.

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(lambda s: norm.cdf(1.0, scale=s))(1.0))  # -pdf(1) * 1
        -0.24197072451914337

    References:
        Abramowitz & Stegun, "Handbook of Mathematical Functions", 26.2.1-26.2.2.
    """

    def __call__(self, loc=0.0, scale=1.0):
        """Freeze ``loc`` and ``scale`` (traced or plain): ``norm(0, 2).cdf(x)``."""
        _z(0.0, 0.0, scale, "__call__")
        return _FrozenNorm(loc, scale)

    def __repr__(self):
        return "diffsci.scipy.stats.norm"

    def logpdf(self, x, loc=0.0, scale=1.0):
        """Log density ``-z²/2 - log(scale) - log(2π)/2`` at ``z = (x - loc)/scale``.

        Args:
            x: points (real array-like, traced or plain).
            loc: mean (broadcasts with ``x``).
            scale: standard deviation, positive.

        Returns:
            The log density, the broadcast shape of the arguments.

        Raises:
            ValueError: ``scale`` is not positive.

        Example:
            >>> float(norm.logpdf(0.0))
            -0.9189385332046727
        """
        z = _z(x, loc, scale, "logpdf")
        return -0.5 * z * z - np.log(scale) - _HALF_LOG_2PI

    def pdf(self, x, loc=0.0, scale=1.0):
        """Density ``exp(logpdf)``; arguments and errors as :meth:`logpdf`.

        Example:
            >>> float(norm.pdf(0.0))
            0.3989422804014327
        """
        return np.exp(self.logpdf(x, loc, scale))

    def cdf(self, x, loc=0.0, scale=1.0):
        """Distribution function ``ndtr(z)``; arguments and errors as :meth:`logpdf`.

        Example:
            >>> float(norm.cdf(0.0))
            0.5
        """
        return special.ndtr(_z(x, loc, scale, "cdf"))

    def logcdf(self, x, loc=0.0, scale=1.0):
        """``log_ndtr(z)``, accurate (value and gradient) far into the left tail.

        Example:
            >>> float(norm.logcdf(-40.0))
            -804.6084420137539
        """
        return special.log_ndtr(_z(x, loc, scale, "logcdf"))

    def sf(self, x, loc=0.0, scale=1.0):
        """Survival function ``1 - cdf`` computed as ``ndtr(-z)`` (no cancellation).

        Example:
            >>> float(norm.sf(0.0))
            0.5
        """
        return special.ndtr(-_z(x, loc, scale, "sf"))

    def logsf(self, x, loc=0.0, scale=1.0):
        """``log_ndtr(-z)``, accurate far into the right tail.

        Example:
            >>> float(norm.logsf(40.0))
            -804.6084420137539
        """
        return special.log_ndtr(-_z(x, loc, scale, "logsf"))

    def ppf(self, q, loc=0.0, scale=1.0):
        """Quantile function ``loc + scale * ndtri(q)`` (inverse of :meth:`cdf`).

        Args:
            q: probabilities in [0, 1] (0 and 1 give ∓inf; outside gives NaN, as SciPy).
            loc, scale: as in :meth:`logpdf`.

        Example:
            >>> float(norm.ppf(0.5, loc=3.0))
            3.0
        """
        _z(0.0, 0.0, scale, "ppf")
        return loc + scale * special.ndtri(q)

    def isf(self, q, loc=0.0, scale=1.0):
        """Inverse survival function ``loc - scale * ndtri(q)``.

        Example:
            >>> float(norm.isf(0.975))
            -1.959963984540054
        """
        _z(0.0, 0.0, scale, "isf")
        return loc - scale * special.ndtri(q)


@dataclasses.dataclass(frozen=True)
class _FrozenNorm:
    """``norm(loc, scale)``: the methods of :data:`norm` with the parameters bound."""

    loc: Any
    scale: Any

    def logpdf(self, x):
        return norm.logpdf(x, self.loc, self.scale)

    def pdf(self, x):
        return norm.pdf(x, self.loc, self.scale)

    def cdf(self, x):
        return norm.cdf(x, self.loc, self.scale)

    def logcdf(self, x):
        return norm.logcdf(x, self.loc, self.scale)

    def sf(self, x):
        return norm.sf(x, self.loc, self.scale)

    def logsf(self, x):
        return norm.logsf(x, self.loc, self.scale)

    def ppf(self, q):
        return norm.ppf(q, self.loc, self.scale)

    def isf(self, q):
        return norm.isf(q, self.loc, self.scale)


#: The normal distribution, as ``scipy.stats.norm``.
norm = _Norm()


def entropy(pk, qk=None, base=None, axis=0):
    """``scipy.stats.entropy``: Shannon entropy of ``pk``, or the relative entropy to ``qk``.

    ``pk`` (and ``qk``) are normalised along ``axis`` first, as in SciPy; the result is
    ``sum(entr(pk))`` or ``sum(rel_entr(pk, qk))``, divided by ``log(base)``.  A
    composite of :func:`diffsci.scipy.special.entr` / ``rel_entr``: differentiable in
    ``pk`` and ``qk`` to every order (a zero probability in ``pk`` has an infinite
    one-sided slope, as ``-p log p`` does).

    Args:
        pk: non-negative weights, not all zero along ``axis``.
        qk: optional non-negative weights of the same shape.
        base: logarithm base (default e), a plain positive number.
        axis: the axis that holds the distribution.

    Returns:
        The entropy, ``pk``'s shape without ``axis``.

    Raises:
        ValueError: ``base`` is not positive, or ``pk``/``qk`` has a negative entry.

    Example:
        >>> float(entropy(np.array([0.5, 0.5]), base=2))
        1.0

    References:
        C. E. Shannon, Bell Syst. Tech. J. 27 (1948) 379; S. Kullback, R. A. Leibler,
        Ann. Math. Statist. 22 (1951) 79.
    """
    if base is not None and not base > 0:
        raise ValueError(f"diffsci.scipy.stats.entropy: base must be positive, got {base!r}")
    for name, v in (("pk", pk), ("qk", qk)):
        if v is not None and _util.observed(lambda a: bool(np.any(np.asarray(a) < 0)), v):
            raise ValueError(f"diffsci.scipy.stats.entropy: {name} must be non-negative")
    pk = pk / np.sum(pk, axis=axis, keepdims=True)
    if qk is None:
        out = np.sum(special.entr(pk), axis=axis)
    else:
        qk = qk / np.sum(qk, axis=axis, keepdims=True)
        out = np.sum(special.rel_entr(pk, qk), axis=axis)
    return out / math.log(base) if base is not None else out


def sem(a, axis=0, ddof=1, nan_policy="propagate"):
    """``scipy.stats.sem``: the standard error of the mean, ``std(a, ddof) / sqrt(n)`` along
    ``axis`` (``None``: all of ``a``), a composite of ``std``: differentiable in ``a``.

    Raises:
        NotImplementedError: ``nan_policy`` other than ``"propagate"`` for traced input.

    Example:
        >>> float(sem(np.array([1.0, 2.0, 3.0, 4.0])))
        0.6454972243679028
    """
    if not is_tracer(a):
        return scipy.stats.sem(a, axis=axis, ddof=ddof, nan_policy=nan_policy)
    if nan_policy != "propagate":
        raise NotImplementedError(f"diffsci.scipy.stats.sem: nan_policy={nan_policy!r} is "
                                  f"supported for plain input only")
    if axis is None:
        a, axis = np.ravel(a), 0
    n = np.shape(getval(a))[axis]
    return np.std(a, axis=axis, ddof=ddof) / np.sqrt(n)


__all__ = sorted(__all__ + ["sem"])


from ._stats_kde import gaussian_kde  # noqa: E402, F401

__all__ = sorted(__all__ + ["gaussian_kde"])
