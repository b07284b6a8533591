"""``diffsci.scipy.special``'s incomplete gamma and beta functions and their inverses.

``gammainc``, ``gammaincc``, ``betainc`` are differentiable in every argument.  SciPy
gives no derivative in the shape parameters: it comes from
:mod:`diffsci.scipy._special_incomplete` (differentiated series and continued
fractions, about 1e-12 relative); the second derivatives in the shape parameters are
the complex-step derivative (Squire & Trapp, SIAM Rev. 40 (1998) 110) of those
routines, about 1e-10; the third derivatives in them (``gammainc``/``gammaincc`` in ``a``,
``betainc`` in ``a`` and ``b``, mixed too) are Cauchy's integral formula applied to the first
derivative on circles in the complex parameters (32-point trapezoidal rule, about 1e-10);
fourth derivatives in the shape parameters raise ``NotImplementedError``.
Derivatives involving ``x`` are closed forms (the densities and their parameter
derivatives).  ``gammaincinv``, ``gammainccinv`` and ``betaincinv`` are SciPy's
values with implicit-function-theorem rules built on these.
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc

from .._core import defjvp, defvjp, primitive
from ..numpy._util import unbroadcast
from . import _special_incomplete as _inc
from .special import _bc, digamma, gammaln, polygamma

__all__ = ["betainc", "betaincinv", "gammainc", "gammainccinv", "gammaincc", "gammaincinv"]


# ---------------------------------------------------------------- incomplete gamma and beta
def _gammainc_da_plain(a, x):
    return _inc.gammainc_da(a, x)


def _gammainc_daa_plain(a, x):
    # Complex step: d/da f(a) = Im f(a + ih)/h with no cancellation (f analytic in a).
    h = 1e-20
    return np.imag(_inc.gammainc_da(np.asarray(a, float) + 1j * h, x)) / h


def _gamma_pdf(a, x):
    """x^(a-1) exp(-x) / Gamma(a): d/dx gammainc(a, x)."""
    return np.exp(_xlogy(a - 1, x) - x - gammaln(a))


def _xlogy(x, y):
    from .special import xlogy
    return xlogy(x, y)


def _xlog1py(x, y):
    from .special import xlog1py
    return xlog1py(x, y)


_CAUCHY_NODES = 32


def _gammainc_daaa_plain(a, x):
    """d³/da³ gammainc(a, x) = d²/da² of G = d/da gammainc by Cauchy's integral formula,
    G''(a) = 2/(2 pi i) ∮ G(z) / (z - a)³ dz, on the circle |z - a| = r by the N-point
    trapezoidal rule: G''(a) ~ 2 / (N r²) sum_k G(a + r w^k) w^(-2k), w = exp(2 pi i / N),
    N = 32, r = min(a, max(1, sqrt(a))) / 2 (DERIVATIONS, G3).  gammainc is entire in a
    (x^a e^(-x) sum_n x^n / Gamma(a + n + 1)), so the rule converges geometrically; the
    circle keeps Re z >= a/2 > 0 where the series and continued fraction of
    :mod:`._special_incomplete` hold, and r ~ sqrt(a)/2 follows the width of the transition
    of gammainc in a.  Relative error below 1e-10 against mpmath on 0.05 <= a <= 400
    (tests/diffsci/test_special_incomplete.py); the rounding grows like 1e-12 / r²."""
    a, x = np.broadcast_arrays(np.asarray(a, float), np.asarray(x, float))
    r = 0.5 * np.minimum(a, np.maximum(1.0, np.sqrt(np.abs(a))))
    w = np.exp(2j * np.pi * np.arange(_CAUCHY_NODES) / _CAUCHY_NODES)
    z = a[..., None] + r[..., None] * w
    with np.errstate(invalid="ignore", divide="ignore"):  # a <= 0: NaN, as gammainc_da's
        g = _inc.gammainc_da(z, np.broadcast_to(x[..., None], z.shape))
        out = 2 * np.real(np.sum(g * w ** -2, axis=-1)) / (_CAUCHY_NODES * r ** 2)
    # gammainc_da is 0 at x = 0 and x = inf for every a: so is every a-derivative
    return np.where((x == 0) | np.isinf(x), 0.0, out)


def _no_fourth(*_):
    raise NotImplementedError(
        "diffsci.scipy.special.gammainc: derivatives of fourth order in a are not implemented "
        "(the third is Cauchy's integral of the first)")


def _gamma_dscore(a, x, k):
    """d^k/da^k of the gamma pdf divided by the pdf (k = 1, 2, 3)."""
    s = np.log(x) - digamma(a)
    if k == 1:
        return s
    if k == 2:
        return s ** 2 - polygamma(1, a)
    return s ** 3 - 3 * s * polygamma(1, a) - polygamma(2, a)


_gammainc_da = primitive(_gammainc_da_plain, name="gammainc_da")
_gammainc_daa = primitive(_gammainc_daa_plain, name="gammainc_daa")
_gammainc_daaa = primitive(_gammainc_daaa_plain, name="gammainc_daaa")
for _p, _da, _dx in (
        (_gammainc_da, lambda ans, a, x: _gammainc_daa(a, x),
         lambda ans, a, x: _gamma_pdf(a, x) * _gamma_dscore(a, x, 1)),
        (_gammainc_daa, lambda ans, a, x: _gammainc_daaa(a, x),
         lambda ans, a, x: _gamma_pdf(a, x) * _gamma_dscore(a, x, 2)),
        (_gammainc_daaa, None,
         lambda ans, a, x: _gamma_pdf(a, x) * _gamma_dscore(a, x, 3))):
    dar = _da or _no_fourth
    defvjp(_p, lambda g, ans, a, x, d=dar: unbroadcast(g * d(ans, a, x), a),
           lambda g, ans, a, x, d=_dx: unbroadcast(g * d(ans, a, x), x))
    defjvp(_p, lambda t, ans, a, x, d=dar: _bc(t * d(ans, a, x), ans),
           lambda t, ans, a, x, d=_dx: _bc(t * d(ans, a, x), ans))
del _p, _da, _dx


def _incomplete_doc(name, sign, value):
    return f"""``scipy.special.{name}(a, x)``, differentiable in ``x`` and in ``a``.

    ``d/dx = {sign}x^(a-1) exp(-x) / gamma(a)`` (every order).  SciPy has no derivative
    in ``a``: it is the differentiated series (``x < a + 1``) or continued fraction
    (``x >= a + 1``) of :mod:`diffsci.scipy._special_incomplete` (eqs. G1, G2), about
    1e-12 relative; the second derivative in ``a`` is its complex-step derivative
    (about 1e-10), the third Cauchy's integral formula on a circle in complex ``a`` (eq. G3,
    below 1e-10 against mpmath); mixed derivatives are closed forms.  Values are SciPy's.

    Args:
        a: positive real array-like.
        x: non-negative real array-like broadcasting with ``a``.

    Returns:
        ``scipy.special.{name}(a, x)``, the broadcast shape.

    Raises:
        NotImplementedError: a fourth derivative in ``a``.

    Example:
        >>> import diffsci as ds
        >>> round(float(ds.grad({name})(1.0, 1.0)), 12)  # d/da at a = x = 1
        {value}

    References:
        DLMF 8.2.4, 8.7.1, 8.9.2; A. J. Moore, Appl. Stat. 31 (1982) 330 (AS 187).
    """


_gammainc_p = primitive(sc.gammainc, name="gammainc")
defvjp(_gammainc_p, lambda g, ans, a, x: unbroadcast(g * _gammainc_da(a, x), a),
       lambda g, ans, a, x: unbroadcast(g * _gamma_pdf(a, x), x))
defjvp(_gammainc_p, lambda t, ans, a, x: _bc(t * _gammainc_da(a, x), ans),
       lambda t, ans, a, x: _bc(t * _gamma_pdf(a, x), ans))
_gammaincc_p = primitive(sc.gammaincc, name="gammaincc")
defvjp(_gammaincc_p, lambda g, ans, a, x: unbroadcast(-g * _gammainc_da(a, x), a),
       lambda g, ans, a, x: unbroadcast(-g * _gamma_pdf(a, x), x))
defjvp(_gammaincc_p, lambda t, ans, a, x: _bc(-t * _gammainc_da(a, x), ans),
       lambda t, ans, a, x: _bc(-t * _gamma_pdf(a, x), ans))
gammainc, gammaincc = _gammainc_p, _gammaincc_p
gammainc.__doc__ = _incomplete_doc("gammainc", "", -0.431729710635)
gammaincc.__doc__ = _incomplete_doc("gammaincc", "-", 0.431729710635)
gammainc.__module__ = gammaincc.__module__ = "diffsci.scipy.special"


def _betainc_da_plain(a, b, x):
    return _inc.betainc_dab_cached(a, b, x)[0]


def _betainc_db_plain(a, b, x):
    return _inc.betainc_dab_cached(a, b, x)[1]


def _cstep(k, j):
    """d/d(param j) of d/d(param k) of betainc by a complex step in parameter j."""
    def plain(a, b, x):
        h = 1e-20
        args = [np.asarray(a, float), np.asarray(b, float)]
        args[j] = args[j] + 1j * h
        return np.imag(_inc.betainc_dab(args[0], args[1], x)[k]) / h
    return plain


def _beta_pdf(a, b, x):
    """x^(a-1) (1-x)^(b-1) / B(a, b): d/dx betainc(a, b, x)."""
    from .special import betaln
    return np.exp(_xlogy(a - 1, x) + _xlog1py(b - 1, -x) - betaln(a, b))


def _beta_score(a, b, x):
    """(d/da, d/db) of log _beta_pdf."""
    psab = digamma(a + b)
    return np.log(x) - digamma(a) + psab, np.log1p(-x) - digamma(b) + psab


_betainc_1 = [primitive(_betainc_da_plain, name="betainc_da"),
              primitive(_betainc_db_plain, name="betainc_db")]
_betainc_2 = {(k, j): primitive(_cstep(k, j), name=f"betainc_d{'ab'[k]}{'ab'[j]}")
              for k in (0, 1) for j in (0, 1)}


def _define_beta_rules(p, dparams, dx):
    """VJP/JVP rules of a primitive p(a, b, x): dparams[j](ans, a, b, x) per shape param."""
    rules_v, rules_j = [], []
    for arg, d in enumerate(list(dparams) + [dx]):
        rules_v.append(lambda g, ans, a, b, x, d=d, arg=arg:
                       unbroadcast(g * d(ans, a, b, x), (a, b, x)[arg]))
        rules_j.append(lambda t, ans, a, b, x, d=d: _bc(t * d(ans, a, b, x), ans))
    defvjp(p, *rules_v)
    defjvp(p, *rules_j)


def _shape_radius(p):
    return 0.5 * np.minimum(p, np.maximum(1.0, np.sqrt(np.abs(p))))


def _cauchy3(k, j, l):
    """d/d(param l) d/d(param j) of d/d(param k) betainc by Cauchy's integral formula on
    circles |z - p| = r(p), r = min(p, max(1, sqrt p)) / 2, with the 32-point trapezoidal rule
    (one circle for j = l: 2 / (N r²) sum f(p + r w^m) w^(-2m); the product of two circles for
    j != l: 1 / (N² r_j r_l) sum f(.., p_j + r_j w^m, .., p_l + r_l w^n, ..) w^(-m-n))
    (DERIVATIONS, G3).  I_x(a, b) is analytic for Re a, Re b > 0, which the circles keep."""
    def plain(a, b, x):
        a, b, x = np.broadcast_arrays(np.asarray(a, float), np.asarray(b, float),
                                      np.asarray(x, float))
        p = [a[..., None, None], b[..., None, None]]
        r = [_shape_radius(a)[..., None, None], _shape_radius(b)[..., None, None]]
        w = np.exp(2j * np.pi * np.arange(_CAUCHY_NODES) / _CAUCHY_NODES)
        if j == l:
            z = list(p)
            z[j] = p[j] + r[j] * w[:, None]
            wt = w[:, None] ** -2 * 2 / (_CAUCHY_NODES * r[j] ** 2)
        else:
            z = list(p)
            z[j] = p[j] + r[j] * w[:, None]
            z[l] = p[l] + r[l] * w[None, :]
            wt = np.conj(w)[:, None] * np.conj(w)[None, :] / (_CAUCHY_NODES ** 2 * r[j] * r[l])
        za, zb, zx = np.broadcast_arrays(z[0] + 0j, z[1] + 0j, x[..., None, None])
        with np.errstate(invalid="ignore", divide="ignore"):
            f = _inc.betainc_dab(za, zb, zx)[k]
            out = np.real(np.sum(f * wt, axis=(-2, -1)))
        return np.where((x == 0) | (x == 1), 0.0, out)
    return plain


_betainc_3 = {}
for _k in (0, 1):
    for _j in (0, 1):
        for _l in (0, 1):
            _key = tuple(sorted((_k, _j, _l)))  # the derivative is symmetric
            if _key not in _betainc_3:
                _betainc_3[_key] = primitive(_cauchy3(*_key),
                                             name="betainc_d" + "".join("ab"[i] for i in _key))


def _no_fourth_beta(*_):
    raise NotImplementedError(
        "diffsci.scipy.special.betainc: derivatives of fourth order in a and b are not "
        "implemented (the third is Cauchy's integral of the first)")


def _beta_d3score(a, b, x, k, j, l):
    """d/d(param l) d/d(param j) d/d(param k) of the beta pdf, divided by the pdf."""
    s = _beta_score(a, b, x)
    t1, t2 = polygamma(1, a + b), polygamma(2, a + b)
    par = (a, b)

    def hess(u, v):
        return t1 - (polygamma(1, par[u]) if u == v else 0)

    def dhess(u, v, w):
        return t2 - (polygamma(2, par[u]) if u == v == w else 0)

    d2 = s[k] * s[j] + hess(k, j)
    return s[l] * d2 + hess(l, k) * s[j] + s[k] * hess(l, j) + dhess(k, j, l)


for _k in (0, 1):
    _define_beta_rules(
        _betainc_1[_k],
        [lambda ans, a, b, x, k=_k, j=j: _betainc_2[(k, j)](a, b, x) for j in (0, 1)],
        lambda ans, a, b, x, k=_k: _beta_pdf(a, b, x) * _beta_score(a, b, x)[k])
    for _j in (0, 1):
        _define_beta_rules(
            _betainc_2[(_k, _j)],
            [lambda ans, a, b, x, k=_k, j=_j, l=l: _betainc_3[tuple(sorted((k, j, l)))](a, b, x)
             for l in (0, 1)],
            lambda ans, a, b, x, k=_k, j=_j: _beta_pdf(a, b, x) * _beta_d2score(a, b, x, k, j))
for _key, _p3 in _betainc_3.items():
    _define_beta_rules(
        _p3, [_no_fourth_beta] * 2,
        lambda ans, a, b, x, key=_key: _beta_pdf(a, b, x) * _beta_d3score(a, b, x, *key))
del _k, _j, _l, _key, _p3


def _beta_d2score(a, b, x, k, j):
    """d/d(param j) d/d(param k) of the beta pdf, divided by the pdf."""
    s = _beta_score(a, b, x)
    t1 = polygamma(1, a + b)
    hess = {(0, 0): t1 - polygamma(1, a), (1, 1): t1 - polygamma(1, b), (0, 1): t1, (1, 0): t1}
    return s[k] * s[j] + hess[(k, j)]


def _betainc_plain(a, b, x):
    return sc.betainc(a, b, x)


betainc = primitive(_betainc_plain, name="betainc")
_define_beta_rules(betainc, [lambda ans, a, b, x, k=k: _betainc_1[k](a, b, x) for k in (0, 1)],
                   lambda ans, a, b, x: _beta_pdf(a, b, x))
betainc.__module__ = "diffsci.scipy.special"
betainc.__doc__ = """``scipy.special.betainc(a, b, x)``, differentiable in a, b and x.

    ``d/dx = x^(a-1) (1-x)^(b-1) / B(a, b)`` (every order).  SciPy has no derivative in
    ``a`` or ``b``: they come from the differentiated continued fraction of
    :mod:`diffsci.scipy._special_incomplete` (eqs. B1, B2), about 1e-12 relative; the
    second derivatives in ``a``, ``b`` are complex-step derivatives of those (about
    1e-10), the third ones Cauchy's integral formula on circles in complex ``a``/``b``
    (eq. G3, about 1e-10); mixed derivatives with ``x`` are closed forms.  Values are
    SciPy's.

    Args:
        a, b: positive real array-likes.
        x: real array-like in [0, 1]; the three broadcast together.

    Returns:
        ``scipy.special.betainc(a, b, x)``, the broadcast shape.

    Raises:
        NotImplementedError: a fourth derivative in ``a`` or ``b``.

    Example:
        >>> import diffsci as ds
        >>> float(ds.grad(betainc, argnums=2)(1.0, 1.0, 0.3))  # uniform density
        1.0

    References:
        DLMF 8.17.2, 8.17.22; R. J. Boik, J. F. Robison-Cox, J. Stat. Comput. Simul.
        61 (1998) 1.
    """


# ---------------------------------------------------------------- inverses (implicit rules)
def _inverse(name, plain, nargs, slope, dparams, doc):
    """A primitive ``x = plain(*params, y)`` solving ``F(*params, x) = y``.

    ``slope(params, x)`` is ``dF/dx`` and ``dparams[j](params, x)`` is ``dF/dparam_j``,
    both differentiable composites; the implicit function theorem gives
    ``dx/dy = 1/slope`` and ``dx/dparam_j = -dparams[j]/slope``.
    """
    p = primitive(plain, name=name)

    def dy(ans, *args):
        return 1 / slope(args[:-1], ans)

    def dpar(j):
        return lambda ans, *args: -dparams[j](args[:-1], ans) / slope(args[:-1], ans)

    derivs = [dpar(j) for j in range(nargs - 1)] + [dy]
    defvjp(p, *[(lambda g, ans, *args, d=d, i=i: unbroadcast(g * d(ans, *args), args[i]))
                for i, d in enumerate(derivs)])
    defjvp(p, *[(lambda t, ans, *args, d=d: _bc(t * d(ans, *args), ans)) for d in derivs])
    p.__doc__ = doc
    p.__module__ = "diffsci.scipy.special"
    return p


_INV_DOC = """``scipy.special.{name}``: the inverse in ``{y}`` of ``{of}``, differentiable in
    every argument.

    Values are SciPy's; derivatives follow from the implicit function theorem on
    ``{of} = {y}`` (``dx/d{y} = 1/F_x``, ``dx/ds = -F_s/F_x``), with ``F_s`` the
    shape-parameter derivatives of ``{of_name}`` (so second order works too).

    Args:
        {args}

    Returns:
        ``x`` with ``{of} = {y}``, the broadcast shape.

    Example:
        >>> import diffsci as ds
        >>> round(float(ds.grad({name}, argnums={last})({example})), 12)
        {value}

    References:
        DLMF 8.2.4, 8.17.2; the implicit function theorem.
    """

gammaincinv = _inverse(
    "gammaincinv", sc.gammaincinv, 2, lambda s, x: _gamma_pdf(s[0], x),
    [lambda s, x: _gammainc_da(s[0], x)],
    _INV_DOC.format(name="gammaincinv", y="y", of="gammainc(a, x)", of_name="gammainc",
                    args="a: positive real array-like.\n        y: probabilities in [0, 1].",
                    last=1, example="1.0, 0.5", value=2.0))
gammainccinv = _inverse(
    "gammainccinv", sc.gammainccinv, 2, lambda s, x: -_gamma_pdf(s[0], x),
    [lambda s, x: -_gammainc_da(s[0], x)],
    _INV_DOC.format(name="gammainccinv", y="y", of="gammaincc(a, x)", of_name="gammaincc",
                    args="a: positive real array-like.\n        y: probabilities in [0, 1].",
                    last=1, example="1.0, 0.5", value=-2.0))
betaincinv = _inverse(
    "betaincinv", sc.betaincinv, 3, lambda s, x: _beta_pdf(s[0], s[1], x),
    [lambda s, x: _betainc_1[0](s[0], s[1], x), lambda s, x: _betainc_1[1](s[0], s[1], x)],
    _INV_DOC.format(name="betaincinv", y="y", of="betainc(a, b, x)", of_name="betainc",
                    args="a, b: positive real array-likes.\n        y: probabilities in "
                         "[0, 1].", last=2, example="1.0, 1.0, 0.3", value=1.0))
