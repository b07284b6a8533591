"""More of ``diffsci.scipy.special``: Bessel functions, zeta, gamma relatives, entropies.

Imported (and re-exported) by :mod:`diffsci.scipy.special`, whose helpers build the
primitives: one line per function in the tables below, its derivative written with
NumPy calls and this package's primitives so that it differentiates again.

Arguments that are not differentiated are declared in one place, :data:`STATIC`:
a traced value there raises ``TypeError`` naming the function and the argument.
The incomplete gamma and beta functions and their inverses are in
:mod:`diffsci.scipy._special_gammainc`.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc

from .._core import defjvp, defvjp, getval, is_tracer, nondifferentiable, primitive
from ..numpy import _util
from ..numpy._util import unbroadcast
from .special import _bc, _binary, _elementwise, _ratio, _safe, digamma, gammaln

__all__ = [
    "entr", "exp1", "expi", "expn", "factorial",
    "gammasgn", "hyp1f1", "hyp2f1", "iv", "ive", "j0", "j1", "jn", "jv", "k0", "k0e", "k1",
    "k1e", "kl_div", "kn", "kv", "kve", "log_expit", "multigammaln", "poch", "rel_entr",
    "rgamma", "spence", "y0", "y1", "yn", "yv", "zeta",
]

#: The arguments that are never differentiated (orders, counts, exponents), by function.
STATIC = {
    "jv": ("v",), "jn": ("n",), "yv": ("v",), "yn": ("n",), "iv": ("v",), "ive": ("v",),
    "kv": ("v",), "kve": ("v",), "kn": ("n",), "expn": ("n",), "multigammaln": ("d",),
    "zeta": ("x",), "hyp1f1": ("a", "b"), "hyp2f1": ("a", "b", "c"),
}  # gammasgn is not differentiable at all: it reads traced input as plain (zero gradient)


def _static(fname, **args):
    """Raise ``TypeError`` for a traced argument that :data:`STATIC` declares plain."""
    for arg, val in args.items():
        assert arg in STATIC[fname]
        if is_tracer(val):
            raise TypeError(
                f"diffsci.scipy.special.{fname}: {arg} must be a plain value, got a traced "
                f"value; {fname} is not differentiable in {arg} (diffsci.scipy.special.STATIC)"
            )


# ---------------------------------------------------------------- one-argument table
E = _elementwise
j0 = E(sc.j0, lambda ans, x: -j1(x), False, "-j1(x)", 1.0, -0.44005058574493355,
       "DLMF 10.6.3")
j1 = E(sc.j1, lambda ans, x: (j0(x) - jv(2, x)) / 2, False, "(j0(x) - jv(2, x))/2", 0.0, 0.5,
       "DLMF 10.6.1")
y0 = E(sc.y0, lambda ans, x: -y1(x), False, "-y1(x)", 1.0, 0.7812128213002888,
       "DLMF 10.6.3")
y1 = E(sc.y1, lambda ans, x: (y0(x) - yv(2, x)) / 2, False, "(y0(x) - yv(2, x))/2", 1.0,
       0.8694697855159659, "DLMF 10.6.1")
k0 = E(sc.k0, lambda ans, x: -k1(x), False, "-k1(x)", 1.0, -0.6019072301972346,
       "DLMF 10.29.3")
k0e = E(sc.k0e, lambda ans, x: ans - k1e(x), False,
        "k0e(x) - k1e(x), where k0e(x) = exp(x) k0(x)", 1.0, -0.4916904064563634,
        "DLMF 10.29.3")
k1 = E(sc.k1, lambda ans, x: -(k0(x) + kv(2, x)) / 2, False, "-(k0(x) + kv(2, x))/2", 1.0,
       -1.0229316684379428, "DLMF 10.29.1")
k1e = E(sc.k1e, lambda ans, x: ans - (k0e(x) + kve(2, x)) / 2, False,
        "k1e(x) - (k0e(x) + kve(2, x))/2, where k1e(x) = exp(x) k1(x)", 1.0,
        -1.1444630798068947, "DLMF 10.29.1")
exp1 = E(sc.exp1, lambda ans, x: -np.exp(-x) / x, False, "-exp(-x)/x", 1.0,
         -0.36787944117144233, "DLMF 6.2.1")
expi = E(sc.expi, lambda ans, x: np.exp(x) / x, False, "exp(x)/x", 1.0, 2.718281828459045,
         "DLMF 6.2.5")
spence = E(sc.spence, lambda ans, x: np.where(x == 1, -1.0, np.log(x) / _safe(1 - x)), False,
           "log(x)/(1 - x), and its limit -1 at x = 1", 2.0, -0.6931471805599453,
           "DLMF 25.12.2 (SciPy's spence(x) is Li2(1 - x))")
log_expit = E(sc.log_expit, lambda ans, x: sc_expit_neg(x), False,
              "expit(-x), accurate in both tails", 0.0, 0.5, "the logistic function")
entr = E(sc.entr, lambda ans, x: -(np.log(x) + 1), False,
         "-(log(x) + 1) (+inf at x = 0, the one-sided slope)", 1.0, -1.0,
         "the convention 0 log 0 = 0")
del E


def sc_expit_neg(x):
    from .special import expit
    return expit(-x)


def _rgamma_d(ans, x):
    # (1/Gamma)' = -digamma/Gamma (DLMF 5.2.2).  Near a pole x = -n of Gamma,
    # 1/Gamma(-n + e) = (-1)^n n! e (1 - digamma(n + 1) e + O(e^2)), so there the slope is
    # (-1)^n n! (1 - 2 digamma(n + 1) (x + n)): (-1)^n n! and, differentiated once more,
    # the second derivative -2 (-1)^n n! digamma(n + 1).
    # which x are poles, n there, (-1)^n n!, digamma(n + 1): recomputed under diffsci.jit
    terms = _util.value_mask(_pole_terms, x)
    pole, n, c, psi = (terms[..., j] for j in range(4))
    pole = _util.value_mask(np.not_equal, pole, 0.0)
    xs = np.where(pole, 0.5, x)
    return np.where(pole, c * (1 - 2 * psi * (x + n)), -rgamma(xs) * digamma(xs))


def _pole_terms(x):
    """``(..., 4)``: whether ``x`` is a pole ``-n`` of Gamma, ``n``, ``(-1)^n n!`` and
    ``digamma(n + 1)`` (n = 0 elsewhere)."""
    x = np.asarray(x, float)
    pole = (x <= 0) & (x == np.floor(x))
    n = np.where(pole, -x, 0.0)
    return np.stack([pole.astype(float), n, (-1.0) ** n * sc.gamma(n + 1), sc.digamma(n + 1)],
                    -1)


rgamma = _elementwise(sc.rgamma, _rgamma_d, False,
                      "-rgamma(x) digamma(x), and (-1)^n n! at the poles x = -n of gamma "
                      "(exact to second order there)", 1.0, 0.5772156649015329, "DLMF 5.2.2")

gammasgn = nondifferentiable(sc.gammasgn, name="gammasgn")
gammasgn.__doc__ = """``scipy.special.gammasgn``: the sign of gamma(x), not differentiable.

    Its derivative is zero wherever it is defined: a traced ``x`` is read as its
    plain value and the result is a plain array (no gradient flows through it).

    Args:
        x: real array-like.

    Returns:
        ``scipy.special.gammasgn(x)`` (+1 or -1; 0 at the poles in SciPy >= 1.15).

    Example:
        >>> float(gammasgn(-0.5))
        -1.0

    References:
        DLMF 5.2.1.
    """


# ---------------------------------------------------------------- two arguments
rel_entr = _binary(sc.rel_entr, lambda ans, x, y: np.log(x / y) + 1,
                   lambda ans, x, y: -_ratio(x, y), False,
                   "log(x/y) + 1 and -x/y (0 at x = 0)", "(2.0, 1.0)",
                   "[1.6931471805599454, -2.0]", "the relative entropy x log(x/y)")
kl_div = _binary(sc.kl_div, lambda ans, x, y: np.log(x / y), lambda ans, x, y: 1 - _ratio(x, y),
                 False, "log(x/y) and 1 - x/y", "(2.0, 1.0)", "[0.6931471805599453, -1.0]",
                 "the divergence x log(x/y) - x + y")
poch = _binary(sc.poch, lambda ans, z, m: ans * (digamma(z + m) - digamma(z)),
               lambda ans, z, m: ans * digamma(z + m), False,
               "poch(z, m) (digamma(z + m) - digamma(z)) and poch(z, m) digamma(z + m)",
               "(2.0, 1.0)", "[1.0, 1.8455686701969343]", "DLMF 5.2.5", args="z, m")


# ---------------------------------------------------------------- an order, then x
def _ordered(name, fun, deriv, static, deriv_text, example, value, ref):
    """``fun(v, x)`` differentiable in ``x`` only; ``deriv(ans, v, x)`` is d/dx."""
    p = primitive(fun, name=name)
    defvjp(p, lambda g, ans, v, x: unbroadcast(g * deriv(ans, v, x), x), argnums=(1,))
    defjvp(p, lambda t, ans, v, x: _bc(t * deriv(ans, v, x), ans), argnums=(1,))

    def public(v, x):
        _static(name, **{static: v})
        return p(v, x)

    public.__name__ = public.__qualname__ = name
    public.__module__ = "diffsci.scipy.special"
    public.prim = p
    public.__doc__ = (
        f"``scipy.special.{name}({static}, x)``, differentiable in ``x`` to any order.\n\n"
        f"The derivative in ``x`` is {deriv_text}; ``{static}`` is not differentiated\n"
        f"(``diffsci.scipy.special.STATIC``).\n\n"
        f"Args:\n    {static}: the order, a plain real array-like (never traced).\n"
        f"    x: real array-like broadcasting with ``{static}``.\n\n"
        f"Returns:\n    ``scipy.special.{name}({static}, x)``, the broadcast shape.\n\n"
        f"Raises:\n    TypeError: ``{static}`` is traced.\n\n"
        f"Example:\n    >>> import diffsci as ds\n"
        f"    >>> float(ds.grad(lambda x: {name}{example})(1.0))\n    {value}\n\n"
        f"References:\n    {ref}.\n"
    )
    return public


jv = _ordered("jv", sc.jv, lambda ans, v, x: (jv(v - 1, x) - jv(v + 1, x)) / 2, "v",
              "(jv(v - 1, x) - jv(v + 1, x))/2", "(0.5, x)", 0.09540051444747442,
              "DLMF 10.6.1")
jn = _ordered("jn", sc.jn, lambda ans, n, x: (jv(n - 1, x) - jv(n + 1, x)) / 2, "n",
              "(jv(n - 1, x) - jv(n + 1, x))/2", "(1, x)", 0.32514710081303305, "DLMF 10.6.1")
yv = _ordered("yv", sc.yv, lambda ans, v, x: (yv(v - 1, x) - yv(v + 1, x)) / 2, "v",
              "(yv(v - 1, x) - yv(v + 1, x))/2", "(0.5, x)", 0.8869461411509916,
              "DLMF 10.6.1")
yn = _ordered("yn", sc.yn, lambda ans, n, x: (yv(n - 1, x) - yv(n + 1, x)) / 2, "n",
              "(yv(n - 1, x) - yv(n + 1, x))/2", "(1, x)", 0.8694697855159659, "DLMF 10.6.1")
iv = _ordered("iv", sc.iv, lambda ans, v, x: (iv(v - 1, x) + iv(v + 1, x)) / 2, "v",
              "(iv(v - 1, x) + iv(v + 1, x))/2", "(0.5, x)", 0.7623627704702236,
              "DLMF 10.29.1")
ive = _ordered("ive", sc.ive, lambda ans, v, x: (ive(v - 1, x) + ive(v + 1, x)) / 2
               - np.sign(x) * ans, "v",
               "(ive(v - 1, x) + ive(v + 1, x))/2 - sign(x) ive(v, x), where "
               "ive(v, x) = exp(-|x|) iv(v, x)", "(0.5, x)", -0.06449372391774638,
               "DLMF 10.29.1")
kv = _ordered("kv", sc.kv, lambda ans, v, x: -(kv(v - 1, x) + kv(v + 1, x)) / 2, "v",
              "-(kv(v - 1, x) + kv(v + 1, x))/2", "(0.5, x)", -0.6916027566718419,
              "DLMF 10.29.1")
kve = _ordered("kve", sc.kve, lambda ans, v, x: ans - (kve(v - 1, x) + kve(v + 1, x)) / 2, "v",
               "kve(v, x) - (kve(v - 1, x) + kve(v + 1, x))/2, where kve(v, x) = "
               "exp(x) kv(v, x)", "(0.5, x)", -0.6266570686577502, "DLMF 10.29.1")
kn = _ordered("kn", sc.kn, lambda ans, n, x: -(kv(n - 1, x) + kv(n + 1, x)) / 2, "n",
              "-(kv(n - 1, x) + kv(n + 1, x))/2", "(1, x)", -1.0229316684379428,
              "DLMF 10.29.1")


def _expn_d(ans, n, x):
    # E_n' = -E_{n-1} (DLMF 8.19.13); E_0(x) = exp(-x)/x, so E_0' = -E_0 (1 + 1/x).
    n0 = np.asarray(n) == 0
    return np.where(n0, -ans * (1 + 1 / x), -expn(np.where(n0, 1, np.asarray(n) - 1), x))


expn = _ordered("expn", sc.expn, _expn_d, "n",
                "-expn(n - 1, x) (and -expn(0, x) (1 + 1/x) for n = 0)", "(2, x)",
                -0.2193839343955205, "DLMF 8.19.13")


def _zeta_plain(x, q):
    return sc.zeta(x, q)


_zeta_p = primitive(_zeta_plain, name="zeta")
defvjp(_zeta_p, lambda g, ans, x, q: unbroadcast(g * -x * _zeta_p(x + 1, q), q), argnums=(1,))
defjvp(_zeta_p, lambda t, ans, x, q: _bc(t * -x * _zeta_p(x + 1, q), ans), argnums=(1,))


def zeta(x, q=None):
    """``scipy.special.zeta``: the Hurwitz zeta function, differentiable in ``q``.

    ``d/dq zeta(x, q) = -x zeta(x + 1, q)``, itself differentiable.  The exponent
    ``x`` is not differentiated (SciPy has no derivative in it): it must be plain.

    Args:
        x: the exponent, a plain real array-like (``x > 1``).
        q: the shift, real array-like (``None``: the Riemann zeta function, q = 1).

    Returns:
        ``scipy.special.zeta(x, q)``, the broadcast shape.

    Raises:
        TypeError: ``x`` is traced.

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(lambda q: zeta(2.0, q))(1.0))  # -2 zeta(3)
        -2.404113806319188

    References:
        DLMF 25.11.17.
    """
    _static("zeta", x=x)
    if q is None:
        return sc.zeta(x)
    return _zeta_p(x, q)


def _hyp1f1_plain(a, b, x):
    return sc.hyp1f1(a, b, x)


_hyp1f1_p = primitive(_hyp1f1_plain, name="hyp1f1")
defvjp(_hyp1f1_p, lambda g, ans, a, b, x: unbroadcast(g * a / b * _hyp1f1_p(a + 1, b + 1, x), x),
       argnums=(2,))
defjvp(_hyp1f1_p, lambda t, ans, a, b, x: _bc(t * a / b * _hyp1f1_p(a + 1, b + 1, x), ans),
       argnums=(2,))


def hyp1f1(a, b, x):
    """``scipy.special.hyp1f1``: Kummer's function M(a, b, x), differentiable in ``x``.

    ``d/dx M(a, b, x) = a/b M(a + 1, b + 1, x)``, itself differentiable; ``a`` and ``b``
    are not differentiated.

    Args:
        a, b: plain real array-likes (never traced).
        x: real array-like broadcasting with them.

    Returns:
        ``scipy.special.hyp1f1(a, b, x)``.

    Raises:
        TypeError: ``a`` or ``b`` is traced.

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(lambda x: hyp1f1(1.0, 1.0, x))(0.0))  # M(1, 1, x) = e^x
        1.0

    References:
        DLMF 13.3.15.
    """
    _static("hyp1f1", a=a, b=b)
    return _hyp1f1_p(a, b, x)


def _hyp2f1_plain(a, b, c, z):
    return sc.hyp2f1(a, b, c, z)


def _d_hyp2f1(ans, a, b, c, z):
    return a * b / c * _hyp2f1_p(a + 1, b + 1, c + 1, z)


_hyp2f1_p = primitive(_hyp2f1_plain, name="hyp2f1")
defvjp(_hyp2f1_p, lambda g, ans, a, b, c, z: unbroadcast(g * _d_hyp2f1(ans, a, b, c, z), z),
       argnums=(3,))
defjvp(_hyp2f1_p, lambda t, ans, a, b, c, z: _bc(t * _d_hyp2f1(ans, a, b, c, z), ans),
       argnums=(3,))


def hyp2f1(a, b, c, z):
    """``scipy.special.hyp2f1``: Gauss' hypergeometric function, differentiable in ``z``.

    ``d/dz 2F1(a, b; c; z) = a b / c 2F1(a + 1, b + 1; c + 1; z)``, itself differentiable;
    ``a``, ``b``, ``c`` are not differentiated.

    Args:
        a, b, c: plain real array-likes (never traced).
        z: real array-like (``z < 1``) broadcasting with them.

    Returns:
        ``scipy.special.hyp2f1(a, b, c, z)``.

    Raises:
        TypeError: ``a``, ``b`` or ``c`` is traced.

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(lambda z: hyp2f1(1.0, 1.0, 2.0, z))(0.0))  # -log(1 - z)/z
        0.5

    References:
        DLMF 15.5.1.
    """
    _static("hyp2f1", a=a, b=b, c=c)
    return _hyp2f1_p(a, b, c, z)


# ---------------------------------------------------------------- composites
def multigammaln(a, d):
    """``scipy.special.multigammaln``: the log multivariate gamma function, differentiable in a.

    ``log Gamma_d(a) = d(d - 1)/4 log(pi) + sum_{j<d} gammaln(a - j/2)``, a composite of
    :func:`gammaln` (every order).

    Args:
        a: real array-like, every element greater than ``(d - 1)/2``.
        d: the dimension, a plain positive integer.

    Returns:
        The log multivariate gamma function, ``a``'s shape.

    Raises:
        TypeError: ``d`` is traced.
        ValueError: ``d`` is not a positive integer, or some ``a <= (d - 1)/2``.

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(lambda a: multigammaln(a, 1))(3.0))  # digamma(3)
        0.9227843350984671

    References:
        DLMF 35.3.1.
    """
    _static("multigammaln", d=d)
    if not (np.ndim(d) == 0 and float(d) == int(d) and int(d) >= 1):
        raise ValueError(f"diffsci.scipy.special.multigammaln: d must be a positive integer, "
                         f"got {d!r}")
    d = int(d)
    if _util.observed(lambda v: bool(np.any(np.asarray(v) <= 0.5 * (d - 1))), a):  # jit: guard
        raise ValueError(f"diffsci.scipy.special.multigammaln: a must be greater than "
                         f"(d - 1)/2 = {0.5 * (d - 1)}, got {getval(a)!r}")
    out = d * (d - 1) / 4 * math.log(math.pi)
    for j in range(d):
        out = out + gammaln(a - 0.5 * j)
    return out


def factorial(n, exact=False):
    """``scipy.special.factorial`` with ``exact=False``: ``gamma(n + 1)``, 0 for ``n < 0``.

    Differentiable in ``n`` (``gamma(n + 1) digamma(n + 1)``), every order.

    Args:
        n: real array-like.
        exact: must be False for traced ``n`` (exact factorials are integers).

    Returns:
        ``gamma(n + 1)`` where ``n >= 0``, else 0 (SciPy's convention).

    Raises:
        TypeError: ``exact=True`` with a traced ``n``.

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(factorial)(1.0))  # 1 - euler_gamma
        0.42278433509846713

    References:
        DLMF 5.4.1.
    """
    if not is_tracer(n):
        return sc.factorial(n, exact=exact)
    if exact:
        raise TypeError("diffsci.scipy.special.factorial: exact=True gives integers and is not "
                        "differentiable; pass exact=False for a traced n")
    from .special import gamma
    neg = n < 0
    return np.where(neg, 0.0, gamma(np.where(neg, 0.0, n) + 1))


def _binom_plain(n, k):
    return sc.binom(n, k)


_binom_plain.__name__ = "binom"  # the primitive's and its docstring's name


def _binom_dn(ans, n, k):
    # binom = Gamma(n + 1) rgamma(k + 1) rgamma(n - k + 1) (DLMF 26.3.1 extended); d/dn
    # through rgamma's derivative, finite where n - k + 1 is a pole of Gamma (binom = 0)
    from .special import gamma
    m = n - k + 1
    return gamma(n + 1) * rgamma(k + 1) * (digamma(n + 1) * rgamma(m) + _rgamma_d(rgamma(m), m))


def _binom_dk(ans, n, k):
    from .special import gamma
    m = n - k + 1
    return gamma(n + 1) * (_rgamma_d(rgamma(k + 1), k + 1) * rgamma(m)
                           - rgamma(k + 1) * _rgamma_d(rgamma(m), m))


binom = _binary(_binom_plain, _binom_dn, _binom_dk, False,
                "binom (digamma(n + 1) - digamma(n - k + 1)) and binom (digamma(n - k + 1) - "
                "digamma(k + 1)), through rgamma' where n - k + 1 is a pole of gamma",
                "(4.0, 2.0)", "[3.499999999999999, 0.0]", "DLMF 26.3.1, 5.2.2", args="n, k")
__all__ += ["binom"]
