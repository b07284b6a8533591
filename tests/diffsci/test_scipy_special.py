"""Gradients of diffsci.scipy.special, checked against finite differences and SciPy.

``SPECS`` holds one spec per function (more for functions with several modes or complex
input): the function it covers, a function using it, one domain-appropriate sampler per
argument and the order to check.  Every spec is checked in both modes to its order (2
unless noted), so "VJP of JVP of f" and friends are covered.  ``SPECIAL`` pins derivative
values at limits and conventions (i1'(0) = 1/2, xlogy at 0, log_ndtr in the far tails).
``test_every_function_has_a_spec`` fails when a public function has no spec.
"""

from __future__ import annotations

import dataclasses
import warnings
import zlib
from collections.abc import Callable

import numpy as np
import pytest
import scipy.special as sc

import diffsci as ds
from diffsci.scipy import special as S
from diffsci.testing import check_grads


# ---------------------------------------------------------------- samplers
def normal(*shape, scale=1.0):
    return lambda r: scale * r.standard_normal(shape)


def uniform(lo, hi, *shape):
    return lambda r: r.uniform(lo, hi, shape)


def cnormal(*shape, re=0.0):
    return lambda r: re + 0.5 * r.standard_normal(shape) + 0.5j * r.standard_normal(shape)


def const(value):
    return lambda r: np.array(value, dtype=complex if np.iscomplexobj(value) else float)


@dataclasses.dataclass(frozen=True)
class Spec:
    name: str  # the diffsci.scipy.special function this spec covers
    fun: Callable
    args: tuple  # one sampler per positional argument
    order: int = 2


S_ = Spec
x4 = normal(4)
SPECS = [
    S_("erf", S.erf, (x4,)),
    S_("erf", S.erf, (cnormal(3),)),
    S_("erfc", S.erfc, (x4,)),
    S_("erfc", S.erfc, (cnormal(3),)),
    S_("erfcx", S.erfcx, (normal(4, scale=3.0),)),
    S_("erfcx", S.erfcx, (cnormal(3, re=1.0),)),
    S_("erfinv", S.erfinv, (uniform(-0.9, 0.9, 4),)),
    S_("erfcinv", S.erfcinv, (uniform(0.1, 1.9, 4),)),
    S_("ndtr", S.ndtr, (normal(4, scale=2.0),)),
    S_("ndtr", S.ndtr, (cnormal(3),)),
    S_("log_ndtr", S.log_ndtr, (normal(4, scale=4.0),)),
    S_("log_ndtr", S.log_ndtr, (const([-30.0, -8.0, 8.0, 30.0]),)),
    S_("log_ndtr", S.log_ndtr, (cnormal(3, re=0.5),)),
    S_("ndtri", S.ndtri, (uniform(0.05, 0.95, 4),)),
    S_("gamma", S.gamma, (uniform(0.5, 4.0, 4),)),
    S_("gamma", S.gamma, (const([-0.5, -1.5, -2.3]),)),
    S_("gamma", S.gamma, (cnormal(3, re=2.0),), order=1),  # digamma' is real-only
    S_("gammaln", S.gammaln, (uniform(0.5, 6.0, 4),)),
    S_("gammaln", S.gammaln, (const([-0.5, -1.5, -2.3]),)),  # log|gamma| where gamma < 0
    S_("digamma", S.digamma, (uniform(0.5, 6.0, 4),)),
    S_("psi", S.psi, (uniform(0.5, 6.0, 4),)),
    S_("polygamma", lambda x: S.polygamma(0, x), (uniform(0.5, 4.0, 4),)),
    S_("polygamma", lambda x: S.polygamma(3, x), (uniform(0.5, 4.0, 4),)),
    S_("polygamma", lambda x: S.polygamma(np.array([1, 2, 1, 2]), x), (uniform(0.5, 4.0, 4),)),
    S_("beta", S.beta, (uniform(0.5, 3.0, 2, 3), uniform(0.5, 3.0, 3))),
    S_("betaln", S.betaln, (uniform(0.5, 3.0, 3), uniform(0.5, 3.0, 2, 3))),
    S_("expit", S.expit, (normal(4, scale=3.0),)),
    S_("logit", S.logit, (uniform(0.05, 0.95, 4),)),
    S_("i0", S.i0, (normal(4, scale=2.0),)),
    S_("i0e", S.i0e, (uniform(0.2, 3.0, 4),)),
    S_("i0e", S.i0e, (uniform(-3.0, -0.2, 4),)),
    S_("i1", S.i1, (normal(4, scale=2.0),)),
    S_("i1e", S.i1e, (uniform(0.2, 3.0, 4),)),
    S_("i1e", S.i1e, (uniform(-3.0, -0.2, 4),)),
    S_("xlogy", S.xlogy, (normal(2, 3), uniform(0.2, 2.0, 3))),
    S_("xlogy", S.xlogy, (cnormal(3), cnormal(3, re=1.0))),
    S_("xlog1py", S.xlog1py, (normal(3), uniform(-0.8, 2.0, 2, 3))),
    S_("xlog1py", S.xlog1py, (cnormal(3), cnormal(3, re=1.0))),
    S_("logsumexp", S.logsumexp, (normal(2, 3),)),
    S_("logsumexp", lambda a: S.logsumexp(a, axis=(0, 2), keepdims=True), (normal(2, 3, 2),)),
    S_("logsumexp", lambda a: S.logsumexp(a, axis=-1), (const([[0.0, -np.inf], [1.0, 2.0]]),)),
    S_("logsumexp", lambda a, b: S.logsumexp(a, axis=0, b=b), (normal(2, 3), uniform(0.2, 2, 3))),
    S_("logsumexp", lambda a, b: S.logsumexp(a, axis=1, b=b, return_sign=True)[0],
       (normal(2, 3), const([1.0, -0.5, 2.0]))),
    S_("logsumexp", lambda a: S.logsumexp(a, axis=1), (cnormal(2, 3),)),
    S_("softmax", S.softmax, (normal(2, 3),)),
    S_("softmax", lambda x: S.softmax(x, axis=(0, 2)), (normal(2, 3, 2),)),
    S_("log_softmax", lambda x: S.log_softmax(x, axis=1), (normal(2, 3),)),
    S_("log_softmax", S.log_softmax, (normal(3),)),
    # incomplete gamma and beta: both evaluation regions (series / continued fraction)
    S_("gammainc", S.gammainc, (uniform(0.5, 5.0, 4), uniform(0.1, 9.0, 4))),
    S_("gammainc", S.gammainc, (uniform(0.1, 0.5, 2, 1), uniform(0.01, 3.0, 3))),
    S_("gammaincc", S.gammaincc, (uniform(0.5, 5.0, 4), uniform(0.1, 9.0, 4))),
    S_("gammaincc", S.gammaincc, (const(30.0), uniform(20.0, 45.0, 3))),
    S_("betainc", S.betainc, (uniform(0.5, 4.0, 4), uniform(0.5, 4.0, 4),
                              uniform(0.05, 0.95, 4))),
    S_("betainc", S.betainc, (uniform(0.1, 0.6, 3), const(20.0), uniform(0.05, 0.95, 2, 1))),
    S_("gammaincinv", S.gammaincinv, (uniform(0.5, 4.0, 4), uniform(0.1, 0.9, 4))),
    S_("gammainccinv", S.gammainccinv, (uniform(0.5, 4.0, 4), uniform(0.1, 0.9, 4))),
    S_("betaincinv", S.betaincinv, (uniform(0.5, 4.0, 3), uniform(0.5, 4.0, 3),
                                    uniform(0.1, 0.9, 2, 3))),
    S_("binom", S.binom, (uniform(2.0, 6.0, 4), uniform(0.5, 2.0, 4))),
    S_("binom", S.binom, (const([2.0, 1.0]), const([3.0, 2.5]))),  # 0 at a pole of gamma
    # at the poles of gamma: first order here; second order against mpmath in
    # test_special_incomplete (finite differences of the VJP there difference SciPy's digamma
    # next to its pole, whose ~1e-10 relative error the 1e-6 step amplifies to ~1e-4)
    S_("rgamma", S.rgamma, (const([0.0, -1.0, -3.0]),), order=1),
    # Bessel functions (orders are static: closed over)
    S_("j0", S.j0, (normal(4, scale=3.0),)),
    S_("j1", S.j1, (normal(4, scale=3.0),)),
    S_("jv", lambda x: S.jv(1.5, x), (uniform(0.2, 6.0, 4),)),
    S_("jv", lambda x: S.jv(np.array([0.0, 2.0, -0.5]), x), (uniform(0.2, 6.0, 2, 3),)),
    S_("jn", lambda x: S.jn(3, x), (normal(4, scale=3.0),)),
    S_("y0", S.y0, (uniform(0.2, 6.0, 4),)),
    S_("y1", S.y1, (uniform(0.2, 6.0, 4),)),
    S_("yv", lambda x: S.yv(0.7, x), (uniform(0.2, 6.0, 4),)),
    S_("yn", lambda x: S.yn(2, x), (uniform(0.5, 6.0, 4),)),
    S_("iv", lambda x: S.iv(1.3, x), (uniform(0.1, 4.0, 4),)),
    S_("iv", lambda x: S.iv(2, x), (normal(4, scale=2.0),)),
    S_("ive", lambda x: S.ive(0.6, x), (uniform(0.1, 4.0, 4),)),
    S_("ive", lambda x: S.ive(3, x), (uniform(-4.0, -0.1, 4),)),
    S_("kv", lambda x: S.kv(0.4, x), (uniform(0.2, 4.0, 4),)),
    S_("kve", lambda x: S.kve(2.5, x), (uniform(0.2, 4.0, 4),)),
    S_("kn", lambda x: S.kn(2, x), (uniform(0.2, 4.0, 4),)),
    S_("k0", S.k0, (uniform(0.2, 4.0, 4),)),
    S_("k0e", S.k0e, (uniform(0.2, 4.0, 4),)),
    S_("k1", S.k1, (uniform(0.2, 4.0, 4),)),
    S_("k1e", S.k1e, (uniform(0.2, 4.0, 4),)),
    # gamma-function relatives
    S_("rgamma", S.rgamma, (uniform(0.3, 4.0, 4),)),
    S_("rgamma", S.rgamma, (const([-0.5, -1.5, -2.3]),)),
    S_("gammasgn", lambda x: S.gammasgn(x) * x ** 2, (const([-0.5, -1.5, 2.5]),)),
    S_("multigammaln", lambda a: S.multigammaln(a, 3), (uniform(1.5, 4.0, 4),)),
    S_("poch", S.poch, (uniform(0.5, 3.0, 4), uniform(-0.4, 3.0, 4))),
    S_("factorial", S.factorial, (uniform(0.2, 4.0, 4),)),
    S_("zeta", lambda q: S.zeta(3.0, q), (uniform(0.5, 3.0, 4),)),
    S_("zeta", lambda q: S.zeta(np.array([2.0, 4.5]), q), (uniform(0.5, 3.0, 3, 1),)),
    # exponential integrals, dilogarithm, Kummer's function
    S_("exp1", S.exp1, (uniform(0.2, 3.0, 4),)),
    S_("expi", S.expi, (uniform(0.2, 3.0, 4),)),
    S_("expi", S.expi, (uniform(-3.0, -0.2, 4),)),
    S_("expn", lambda x: S.expn(np.array([0, 1, 2, 5]), x), (uniform(0.2, 3.0, 4),)),
    S_("spence", S.spence, (uniform(0.1, 3.0, 4),)),
    S_("hyp1f1", lambda x: S.hyp1f1(0.5, 1.5, x), (normal(4),)),
    S_("hyp2f1", lambda z: S.hyp2f1(0.5, 1.5, 2.5, z), (uniform(-2.0, 0.9, 4),)),
    # logistic and entropy functions
    S_("log_expit", S.log_expit, (normal(4, scale=3.0),)),
    S_("entr", S.entr, (uniform(0.1, 2.0, 4),)),
    S_("rel_entr", S.rel_entr, (uniform(0.1, 2.0, 4), uniform(0.1, 2.0, 2, 4))),
    S_("kl_div", S.kl_div, (uniform(0.1, 2.0, 2, 4), uniform(0.1, 2.0, 4))),
    # Dawson, Faddeeva, Fresnel, sine/cosine integrals, Box-Cox, Owen's T, comb
    S_("dawsn", S.dawsn, (normal(4, scale=2.0),)),
    S_("wofz", S.wofz, (cnormal(3, re=0.5),)),
    S_("wofz", S.wofz, (normal(4),)),
    S_("loggamma", S.loggamma, (uniform(0.3, 5.0, 4),)),
    S_("fresnel", S.fresnel, (normal(4, scale=1.5),)),
    S_("sici", S.sici, (uniform(0.2, 5.0, 4),)),
    S_("boxcox", S.boxcox, (uniform(0.3, 3.0, 4), uniform(-1.0, 1.0, 4))),
    S_("boxcox1p", S.boxcox1p, (uniform(-0.5, 3.0, 2, 4), uniform(-1.0, 1.0, 4))),
    S_("owens_t", S.owens_t, (normal(4), normal(2, 4))),
    S_("comb", S.comb, (uniform(4.0, 8.0, 4), uniform(0.5, 3.5, 4))),
    S_("comb", lambda n, k: S.comb(n, k, repetition=True), (uniform(4.0, 8.0, 4),
                                                             uniform(0.5, 3.5, 4))),
    S_("sph_harm_y", lambda t, p: S.sph_harm_y(3, -2, t, p), (uniform(0.2, 3.0, 4),
                                                              normal(4, scale=2.0))),
    S_("sph_harm_y", lambda t: S.sph_harm_y(np.array([2, 3]), np.array([[1], [0]]), t, 0.4),
       (uniform(0.2, 3.0, 2),)),
]


def _spec_id(spec, _seen={}):  # noqa: B006 - counter for readable ids
    k = _seen[spec.name] = _seen.get(spec.name, 0) + 1
    return f"{spec.name}-{k}"


@pytest.mark.parametrize("spec", SPECS, ids=[_spec_id(s) for s in SPECS])
def test_grad(spec):
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
    args = tuple(sample(rng) for sample in spec.args)
    check_grads(spec.fun, args, order=spec.order)


def test_every_function_has_a_spec():
    covered = {s.name for s in SPECS}
    missing = sorted(set(S.__all__) - covered)
    assert not missing, f"diffsci.scipy.special functions without a gradient spec: {missing}"


# ---------------------------------------------------------------- values: SciPy's, traced or not
VALUE_CASES = [
    (name, x) for name, x in [
        ("erf", [-1.0, 0.3]), ("erfc", [-1.0, 3.0]), ("erfcx", [-2.0, 30.0]),
        ("erfinv", [-0.5, 0.99]), ("erfcinv", [0.01, 1.5]), ("ndtr", [-3.0, 0.5]),
        ("log_ndtr", [-50.0, 5.0]), ("ndtri", [1e-10, 0.7]), ("gamma", [0.5, 5.0]),
        ("gammaln", [0.5, 100.0]), ("digamma", [0.5, 100.0]), ("psi", [2.0]),
        ("expit", [-800.0, 3.0]), ("logit", [0.01, 0.5]), ("i0", [0.0, 5.0]),
        ("i0e", [-100.0, 0.5]), ("i1", [-2.0, 5.0]), ("i1e", [0.0, 100.0])]
]


@pytest.mark.parametrize("name,x", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
def test_values_are_scipys(name, x):
    x = np.array(x)
    ours = getattr(S, name)
    np.testing.assert_array_equal(ours(x), getattr(sc, name)(x))
    y, _ = ds.pullback(ours, x)
    np.testing.assert_array_equal(ds.stop_gradient(y), getattr(sc, name)(x))


def test_more_values_and_closed_forms():
    x = np.array([-1.3, 0.2, 2.5])
    for name in ("dawsn", "fresnel", "sici", "wofz"):
        np.testing.assert_array_equal(getattr(S, name)(x), getattr(sc, name)(x))
        y = ds.pullback(getattr(S, name), x)[0]
        np.testing.assert_array_equal(ds.stop_gradient(y), getattr(sc, name)(x))
    # closed forms of the derivatives against SciPy's own functions
    np.testing.assert_allclose(ds.grad(lambda x: np.sum(S.fresnel(x)[0]))(x),
                               np.sin(np.pi * x * x / 2), rtol=1e-14)
    np.testing.assert_allclose(ds.grad(lambda x: np.sum(S.sici(x)[1]))(np.abs(x)),
                               np.cos(np.abs(x)) / np.abs(x), rtol=1e-14)
    # Box-Cox in lmbda at 0 (the limit (log x)^2 / 2) and 4th-order differences elsewhere
    np.testing.assert_allclose(ds.grad(S.boxcox, argnums=1)(2.0, 0.0), np.log(2.0) ** 2 / 2)
    h = 1e-3
    for f, ref, a, b in [(S.boxcox, sc.boxcox, 1.7, 0.4), (S.owens_t, sc.owens_t, 0.8, 1.3),
                         (S.comb, sc.comb, 6.5, 2.2)]:
        fd = (-ref(a, b + 2 * h) + 8 * ref(a, b + h) - 8 * ref(a, b - h) + ref(a, b - 2 * h)) \
            / (12 * h)
        np.testing.assert_allclose(ds.grad(f, argnums=1)(a, b), fd, rtol=1e-9)
    # spherical harmonics: d/dphi Y = i m Y; d/dtheta from SciPy's own diff_n=1
    t, p = np.array([0.3, 1.1, 2.5]), np.array([0.2, -1.0, 2.0])
    np.testing.assert_array_equal(ds.pullback(lambda t: S.sph_harm_y(2, 1, t, p), t)[0],
                                  sc.sph_harm_y(2, 1, t, p))
    jv = ds.jvp(lambda p: S.sph_harm_y(2, 1, t, p), (p,), (np.ones(3),))[1]
    np.testing.assert_allclose(jv, 1j * sc.sph_harm_y(2, 1, t, p), rtol=1e-13)
    jt = ds.jvp(lambda t: S.sph_harm_y(2, 1, t, p), (t,), (np.ones(3),))[1]
    np.testing.assert_allclose(jt, sc.sph_harm_y(2, 1, t, p, diff_n=1)[1][:, 0], rtol=1e-13)
    with pytest.raises(ds.MissingRuleError, match="sph_harm_y_hessian"):  # no third order
        ds.grad(ds.grad(ds.grad(lambda t: S.sph_harm_y(1, 1, t, 0.3).real)))(0.5)
    # comb is 0 where SciPy's is, with zero gradient; exact=True is not differentiable
    assert ds.grad(S.comb)(2.0, 3.0) == 0.0
    with pytest.raises(TypeError, match="exact=True"):
        ds.grad(lambda n: S.comb(n, 2, exact=True))(5.0)


def test_two_argument_and_reduction_values_are_scipys():
    a, b = np.array([[0.5, 1.0], [2.0, 3.0]]), np.array([1.5, 0.5])
    for name in ("beta", "betaln", "xlogy", "xlog1py"):
        np.testing.assert_array_equal(getattr(S, name)(a, b), getattr(sc, name)(a, b))
    np.testing.assert_allclose(ds.pullback(lambda a: S.logsumexp(a, axis=0, b=b[:, None]),
                                           a)[0], sc.logsumexp(a, axis=0, b=b[:, None]),
                               rtol=1e-14)
    np.testing.assert_allclose(ds.pullback(lambda a: S.softmax(a), a)[0], sc.softmax(a),
                               rtol=1e-14)
    np.testing.assert_allclose(ds.pullback(lambda a: S.log_softmax(a, axis=1), a)[0],
                               sc.log_softmax(a, axis=1), rtol=1e-14)
    np.testing.assert_allclose(ds.pullback(lambda a: S.polygamma(2, a), a)[0],
                               sc.polygamma(2, a), rtol=1e-14)
    z = np.array([1 + 1j, 2.0])
    ours = ds.pullback(lambda z: S.logsumexp(z, return_sign=True), z)[0]
    np.testing.assert_allclose(ds.stop_gradient(ours), sc.logsumexp(z, return_sign=True),
                               rtol=1e-14)


def test_logsumexp_negative_sum_is_nan_and_sign_is_returned():
    a, b = np.array([0.0, 0.0]), np.array([1.0, -2.0])
    with np.errstate(invalid="ignore"):
        assert np.isnan(ds.pullback(lambda a: S.logsumexp(a, b=b), a)[0])
    (val, sign), _ = ds.pullback(lambda a: S.logsumexp(a, b=b, return_sign=True), a)
    assert sign == -1.0 and np.isclose(val, 0.0)
    # d/da log|1 e^a0 - 2 e^a1| at 0 = b e^a / s with s = -1
    np.testing.assert_allclose(ds.grad(lambda a: S.logsumexp(a, b=b, return_sign=True)[0])(a),
                               [-1.0, 2.0])


# ---------------------------------------------------------------- limits and conventions
def _g(f, *args, argnums=0):
    return ds.grad(f, argnums=argnums)(*args)


def _quiet(f):
    def quiet():
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return f()
    return quiet


SPECIAL = [
    ("i1'(0) = 1/2", lambda: _g(S.i1, 0.0), 0.5),
    ("i1e'(0) = 1/2", lambda: _g(S.i1e, 0.0), 0.5),
    ("i0e'(0) = 0 (sign(0) = 0 at the kink)", lambda: _g(S.i0e, 0.0), 0.0),
    ("i0'(0) = 0", lambda: _g(S.i0, 0.0), 0.0),
    ("i1''(0) = 0", lambda: _g(lambda x: _g(S.i1, x), 0.0), 0.0),
    ("erfinv'(0) = sqrt(pi)/2", lambda: _g(S.erfinv, 0.0), np.sqrt(np.pi) / 2),
    ("ndtri'(1/2) = sqrt(2 pi)", lambda: _g(S.ndtri, 0.5), np.sqrt(2 * np.pi)),
    ("digamma'(1) = pi^2/6", lambda: _g(S.digamma, 1.0), np.pi ** 2 / 6),
    ("digamma''(1) = -2 zeta(3)", lambda: _g(lambda x: _g(S.digamma, x), 1.0),
     -2 * sc.zeta(3)),
    ("gamma'(1) = -euler_gamma", lambda: _g(S.gamma, 1.0), -np.euler_gamma),
    ("expit' at +-800 is 0, not NaN", lambda: _g(lambda x: np.sum(S.expit(x)),
                                                 np.array([-800.0, 800.0])), [0.0, 0.0]),
    ("xlogy d/dy at x = y = 0 is 0", lambda: _g(S.xlogy, 0.0, 0.0, argnums=1), 0.0),
    ("xlogy d/dy at x = 0, y > 0 is 0", lambda: _g(S.xlogy, 0.0, 2.0, argnums=1), 0.0),
    ("xlogy d/dx at x = 0 is log y", lambda: _g(S.xlogy, 0.0, 2.0), np.log(2.0)),
    ("xlogy d/dx at y = 0 is -inf", _quiet(lambda: _g(S.xlogy, 0.0, 0.0)), -np.inf),
    ("xlogy d2/dxdy at x = 0 is 1/y", lambda: _g(lambda x: _g(S.xlogy, x, 2.0, argnums=1),
                                                 0.0), 0.5),
    ("xlog1py d/dy at x = 0, y = -1 is 0", lambda: _g(S.xlog1py, 0.0, -1.0, argnums=1), 0.0),
    ("xlog1py d/dx is log1p y", lambda: _g(S.xlog1py, 3.0, 1e-20), 1e-20),
    ("log_ndtr' at 40 underflows to 0", lambda: _g(S.log_ndtr, 40.0), 0.0),
    ("log_ndtr' at 0 = 2 pdf(0)", lambda: _g(S.log_ndtr, 0.0), 2 / np.sqrt(2 * np.pi)),
    ("logsumexp: an all -inf slice has zero gradient",
     lambda: _g(lambda a: np.sum(S.logsumexp(a, axis=1)),
                np.array([[-np.inf, -np.inf], [0.0, 0.0]])), [[0.0, 0.0], [0.5, 0.5]]),
    ("logsumexp: zero weight gets exp(a - out)",
     lambda: _g(lambda b: S.logsumexp(np.zeros(2), b=b), np.array([1.0, 0.0])), [1.0, 1.0]),
]


@pytest.mark.parametrize("what,compute,expected", SPECIAL, ids=[s[0] for s in SPECIAL])
def test_special_values(what, compute, expected):
    np.testing.assert_allclose(compute(), expected, rtol=1e-13, atol=1e-300)


def _mills(x):
    """phi(x)/Phi(x) = d log_ndtr / dx by mpmath in 50 digits."""
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 50
    x = mp.mpf(x)
    return float(mp.npdf(x) / mp.ncdf(x))


@pytest.mark.parametrize("x", [-1e5, -1e3, -40.0, -5.0, 0.0, 5.0, 37.0])
def test_log_ndtr_gradient_is_accurate_in_the_tails(x):
    np.testing.assert_allclose(_g(S.log_ndtr, x), _mills(x), rtol=1e-12)


def test_log_ndtr_second_derivative_in_the_left_tail():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 50
    for x in (-1e3, -40.0, -3.0):
        r = mp.npdf(x) / mp.ncdf(x)
        exact = float(-r * (x + r))  # d/dx (phi/Phi) = -(phi/Phi)(x + phi/Phi)
        np.testing.assert_allclose(_g(lambda x: _g(S.log_ndtr, x), x), exact, rtol=1e-7)


def test_digamma_derivatives_to_third_order():
    # d^k/dx^k digamma = polygamma(k, .) to third order by nesting grad.
    f = S.digamma
    for k in (1, 2, 3):
        f = ds.grad(f)
        np.testing.assert_allclose(f(1.5), sc.polygamma(k, 1.5), rtol=1e-12)


# ---------------------------------------------------------------- dtypes, dispatch
@pytest.mark.parametrize("name", ["erf", "erfinv", "ndtri", "log_ndtr", "gammaln", "digamma",
                                  "expit", "i0e", "i1"])
def test_float32_in_float32_gradient_out(name):
    x = np.array([0.3, 0.6], np.float32)
    g = ds.grad(lambda x: np.sum(getattr(S, name)(x)))(x)
    assert g.dtype == np.float32
    assert ds.grad(lambda x: np.sum(S.polygamma(1, x)))(x).dtype == np.float32


def test_plain_scipy_special_code_differentiates():
    x = np.array([0.2, 0.7])
    got = ds.grad(lambda x: np.sum(sc.erf(x) * sc.gammaln(x + 1) + sc.xlogy(x, x)))(x)
    want = ds.grad(lambda x: np.sum(S.erf(x) * S.gammaln(x + 1) + S.xlogy(x, x)))(x)
    np.testing.assert_allclose(got, want, rtol=1e-15)


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("call,exc,match", [
    (lambda: S.polygamma(1.5, 2.0), ValueError, "n must be a non-negative integer"),
    (lambda: S.polygamma(-1, 2.0), ValueError, "n must be a non-negative integer"),
    (lambda: ds.grad(lambda n: S.polygamma(n, 2.0))(1.0), TypeError, "n .* traced"),
    (lambda: ds.grad(lambda x: np.real(S.digamma(x)))(1.0 + 1j), TypeError, "complex"),
    (lambda: ds.grad(lambda a: S.logsumexp(a, axis=2))(np.ones((2, 2))), ValueError,
     "axis 2 is out of range"),
    (lambda: ds.grad(lambda a: S.logsumexp(a, axis="x"))(np.ones(2)), TypeError, "axis"),
    (lambda: ds.grad(lambda a: np.sum(S.softmax(a, axis=(0, 0))))(np.ones((2, 2))), ValueError,
     "repeated axis"),
    (lambda: ds.grad(lambda a: S.logsumexp(a))(np.array([np.nan, 0.0])), ValueError, "NaN"),
], ids=["polygamma-fractional-n", "polygamma-negative-n", "polygamma-traced-n",
        "digamma-complex-derivative", "logsumexp-axis-range", "logsumexp-axis-type",
        "softmax-repeated-axis", "logsumexp-nan"])
def test_bad_input_raises_naming_the_argument(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
