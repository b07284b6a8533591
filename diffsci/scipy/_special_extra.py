"""Still more of ``diffsci.scipy.special``: Dawson, Faddeeva, Fresnel and sine/cosine
integrals, ``loggamma``, Box-Cox, Owen's T and ``comb``.

Imported (and re-exported) by :mod:`diffsci.scipy.special`; one line per function, its
derivative written with NumPy calls and this package's primitives (so it differentiates
again).  ``fresnel`` and ``sici`` return pairs: each member is its own primitive.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from .._core import defjvp, defvjp, is_tracer, primitive
from ..numpy._util import unbroadcast, value_mask
from .special import _binary, _elementwise, digamma, erf

__all__ = ["boxcox", "boxcox1p", "comb", "dawsn", "fresnel", "loggamma", "owens_t", "sici",
           "wofz"]

_2_SQRTPI = 2.0 / math.sqrt(math.pi)
_SQRT2 = math.sqrt(2.0)
_SQRT2PI = math.sqrt(2.0 * math.pi)

E = _elementwise
dawsn = E(sc.dawsn, lambda ans, x: 1 - 2 * x * ans, False, "1 - 2 x dawsn(x)", 0.0, 1.0,
          "DLMF 7.5.1 and 7.10 (Dawson's integral F)")
wofz = E(sc.wofz, lambda ans, z: -2 * z * ans + 2j / math.sqrt(math.pi), True,
         "-2 z w(z) + 2i/sqrt(pi) (holomorphic)", 0.0, 1.0, "DLMF 7.10.2 (Faddeeva w)")
loggamma = E(sc.loggamma, lambda ans, x: digamma(x), False,
             "digamma(x) (real x > 0, where loggamma = gammaln)", 1.0, -0.5772156649015329,
             "DLMF 5.2.2")


def _fresnel_s(x):
    return sc.fresnel(x)[0]


def _fresnel_c(x):
    return sc.fresnel(x)[1]


def _si(x):
    return sc.sici(x)[0]


def _ci(x):
    return sc.sici(x)[1]


_fresnel_s.__name__, _fresnel_c.__name__ = "fresnel_s", "fresnel_c"
_si.__name__, _ci.__name__ = "si", "ci"
_FS = E(_fresnel_s, lambda ans, x: np.sin(np.pi / 2 * x * x), False, "sin(pi x^2 / 2)", 0.0,
        0.0, "DLMF 7.2.8")
_FC = E(_fresnel_c, lambda ans, x: np.cos(np.pi / 2 * x * x), False, "cos(pi x^2 / 2)", 0.0,
        1.0, "DLMF 7.2.7")
_SI = E(_si, lambda ans, x: np.sinc(x / np.pi), False, "sin(x)/x (1 at 0)", 0.0, 1.0,
        "DLMF 6.2.9")
_CI = E(_ci, lambda ans, x: np.cos(x) / x, False, "cos(x)/x", 1.0, 0.5403023058681398,
        "DLMF 6.2.11")
del E


def fresnel(x):
    """``scipy.special.fresnel``: the pair ``(S(x), C(x))``, each differentiable to any order
    (``S' = sin(pi x^2/2)``, ``C' = cos(pi x^2/2)``; DLMF 7.2.7-8).

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(lambda x: fresnel(x)[1])(0.0))
        1.0
    """
    return (_FS(x), _FC(x)) if is_tracer(x) else sc.fresnel(x)


def sici(x):
    """``scipy.special.sici``: the pair ``(Si(x), Ci(x))``, each differentiable to any order
    (``Si' = sin(x)/x``, ``Ci' = cos(x)/x``; DLMF 6.2.9, 6.2.11).

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(lambda x: sici(x)[0])(0.0))
        1.0
    """
    return (_SI(x), _CI(x)) if is_tracer(x) else sc.sici(x)


def _boxcox_dl(ans, x, lmbda, log):
    # d/dl (x^l - 1)/l = (x^l log x)/l - (x^l - 1)/l^2; at l = 0 the limit (log x)^2 / 2.
    lz = lmbda == 0
    ls = np.where(lz, 1.0, lmbda)
    return np.where(lz, log * log / 2, (np.exp(ls * log) * log - ans) / ls)


boxcox = _binary(sc.boxcox, lambda ans, x, lmbda: x ** (lmbda - 1),
                 lambda ans, x, lmbda: _boxcox_dl(ans, x, lmbda, np.log(x)), False,
                 "x^(lmbda - 1) and (x^lmbda log x)/lmbda - boxcox/lmbda ((log x)^2/2 at "
                 "lmbda = 0)", "(2.0, 0.0)", "[0.5, 0.2402265069591007]",
                 "Box & Cox (1964), J. R. Stat. Soc. B 26, 211", args="x, lmbda")
boxcox1p = _binary(sc.boxcox1p, lambda ans, x, lmbda: (1 + x) ** (lmbda - 1),
                   lambda ans, x, lmbda: _boxcox_dl(ans, x, lmbda, np.log1p(x)), False,
                   "(1 + x)^(lmbda - 1) and the lmbda-derivative of boxcox at 1 + x",
                   "(1.0, 0.0)", "[0.5, 0.2402265069591007]",
                   "Box & Cox (1964), J. R. Stat. Soc. B 26, 211", args="x, lmbda")
owens_t = _binary(sc.owens_t,
                  lambda ans, h, a: -np.exp(-h * h / 2) / _SQRT2PI * erf(a * h / _SQRT2) / 2,
                  lambda ans, h, a: np.exp(-h * h * (1 + a * a) / 2) / (2 * np.pi * (1 + a * a)),
                  False, "-phi(h) erf(a h/sqrt 2)/2 and exp(-h^2 (1 + a^2)/2) / (2 pi (1 + a^2))",
                  "(0.0, 1.0)", "[-0.0, 0.07957747154594767]",
                  "Owen (1956), Ann. Math. Stat. 27, 1075, eq. (2.1)", args="h, a")


def _comb_defined(n, k):
    return (k >= 0) & (n >= k) & (n >= 0)


def comb(N, k, *, exact=False, repetition=False):
    """``scipy.special.comb(N, k)`` (``exact=False``): ``binom(N, k)`` for real N, k
    (``binom(N + k - 1, k)`` with ``repetition=True``), differentiable in both through
    :func:`~diffsci.scipy.special.binom`; 0 where SciPy's is 0 (``k < 0`` or ``N < k``).

    Raises:
        TypeError: for ``exact=True`` with a traced argument (integers are not
            differentiated).

    Example:
        >>> float(comb(5.0, 2.0))
        10.0
    """
    from .special import binom
    if not (is_tracer(N) or is_tracer(k)):
        return sc.comb(N, k, exact=exact, repetition=repetition)
    if exact:
        raise TypeError("diffsci.scipy.special.comb: exact=True counts integers and is not "
                        "differentiable; got a traced N or k")
    if repetition:
        N = N + k - 1
    ok = value_mask(_comb_defined, N, k)  # recomputed by diffsci.jit's compiled code
    return np.where(ok, binom(np.where(ok, N, 1.0), np.where(ok, k, 0.0)), 0.0)



# ---------------------------------------------------------------- spherical harmonics
def _sph_plain(n, m, theta, phi):
    return sc.sph_harm_y(n, m, theta, phi)


def _sph_jac_plain(n, m, theta, phi):  # (..., 2): d/dtheta, d/dphi, moved to the front
    return np.moveaxis(sc.sph_harm_y(n, m, theta, phi, diff_n=1)[1], -1, 0)


def _sph_hess_plain(n, m, theta, phi):  # (..., 2, 2), moved to the front: (2, 2, ...)
    return np.moveaxis(sc.sph_harm_y(n, m, theta, phi, diff_n=2)[2], (-2, -1), (0, 1))


_sph = primitive(_sph_plain, name="sph_harm_y")
_sph_jac = primitive(_sph_jac_plain, name="sph_harm_y_jacobian")
# SciPy gives derivatives to second order: the Hessian is a primitive without rules, so a
# third derivative raises (MissingRuleError) rather than coming out as zero.
_sph_hess = primitive(_sph_hess_plain, name="sph_harm_y_hessian")


def _sph_rules(prim, deriv, lead):
    def vjp(k):
        def rule(g, ans, n, m, theta, phi):
            d = deriv(n, m, theta, phi)  # (2,) + lead-shaped + out shape
            dk = d[(slice(None),) * lead + (k,)] if lead else d[k]
            c = g * np.conj(dk)
            if lead:
                c = np.sum(c, axis=tuple(range(lead)))
            return unbroadcast(np.real(c), theta if k == 0 else phi)
        return rule

    def jvp(k):
        def rule(t, ans, n, m, theta, phi):
            d = deriv(n, m, theta, phi)
            dk = d[(slice(None),) * lead + (k,)] if lead else d[k]
            return dk * t
        return rule
    defvjp(prim, None, None, vjp(0), vjp(1))
    defjvp(prim, None, None, jvp(0), jvp(1))


_sph_rules(_sph, _sph_jac, 0)
_sph_rules(_sph_jac, _sph_hess, 1)


def sph_harm_y(n, m, theta, phi, *, diff_n=0):
    """``scipy.special.sph_harm_y(n, m, theta, phi)``: the spherical harmonic Y_n^m at polar
    angle ``theta`` and azimuth ``phi``, differentiable in both angles to second order with
    SciPy's own derivatives (``diff_n=1, 2``); a third derivative raises.  The degree ``n``
    and order ``m`` are integers (not differentiated).

    Raises:
        TypeError: ``n`` or ``m`` traced, or ``diff_n`` with traced angles.

    Example:
        >>> import diffsci as ds
        >>> round(float(ds.grad(lambda p: sph_harm_y(1, 1, 0.5, p).imag)(0.0)), 12)
        -0.165638718695
    """
    if is_tracer(n) or is_tracer(m):
        raise TypeError("diffsci.scipy.special.sph_harm_y: n and m are integers and not "
                        "differentiated; got a traced value")
    if not (is_tracer(theta) or is_tracer(phi)):
        return sc.sph_harm_y(n, m, theta, phi, diff_n=diff_n)
    if diff_n:
        raise TypeError("diffsci.scipy.special.sph_harm_y: diff_n is supported for plain "
                        "angles only (differentiate the traced result instead)")
    return _sph(n, m, theta, phi)


__all__ += ["sph_harm_y"]
