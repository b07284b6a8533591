"""Independent references for the new diffsci.scipy.special derivatives.

* gammainc / gammaincc / betainc: the shape-parameter derivatives (series and continued
  fractions differentiated, _special_incomplete.py) against mpmath at 60 digits on a grid over
  the documented domain, both evaluation regions; the complex-step second derivatives and the
  Cauchy-integral third derivatives too.
* Bessel functions: against SciPy's own derivative functions jvp, yvp, ivp, kvp.
* rgamma at its poles, zeta in q, values equal SciPy's, and the static arguments raise.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc

import diffsci as ds
from diffsci.scipy import _special_incomplete as inc
from diffsci.scipy import special as S

mp = pytest.importorskip("mpmath")


def _rel(ours, ref):
    return abs(ours - ref) / max(abs(ref), 1e-300)


def _dgamma_ref(a, x, order=1):
    """d^order/da^order P(a, x) by mpmath, from the smaller of P and Q (no cancellation)."""
    with mp.workdps(60):
        p = mp.gammainc(a, 0, x, regularized=True)
        if p < 0.5:
            return float(mp.diff(lambda t: mp.gammainc(t, 0, x, regularized=True), a, order))
        return -float(mp.diff(lambda t: mp.gammainc(t, x, mp.inf, regularized=True), a, order))


def _dbeta_ref(a, b, x, which):
    """d/da or d/db (which = (1, 0) or (0, 1), or (2, 0) ...) of I_x(a, b) by mpmath."""
    with mp.workdps(60):
        if mp.betainc(a, b, 0, x, regularized=True) < 0.5:
            return float(mp.diff(lambda s, t: mp.betainc(s, t, 0, x, regularized=True),
                                 (a, b), which))
        y = 1 - mp.mpf(x)  # 1 - I_x(a, b) = I_{1-x}(b, a), exact in mpmath
        return -float(mp.diff(lambda s, t: mp.betainc(t, s, 0, y, regularized=True),
                              (a, b), which))


A_GRID = [0.05, 0.3, 1.0, 2.5, 7.0, 20.0, 60.0, 200.0]
X_GRID = [1e-3, 0.1, 0.7, 1.5, 3.0, 8.0, 25.0, 70.0, 150.0, 300.0]


def test_gammainc_da_matches_mpmath_on_a_grid():
    a, x = np.meshgrid(A_GRID, X_GRID, indexing="ij")
    ours = inc.gammainc_da(a, x)
    worst = 0.0
    for idx in np.ndindex(a.shape):
        ref = _dgamma_ref(a[idx], x[idx])
        if abs(ref) < 1e-280:  # underflow of both
            assert abs(ours[idx]) < 1e-270
            continue
        worst = max(worst, _rel(ours[idx], ref))
    assert worst < 1e-11, worst


def test_gammainc_second_derivative_in_a_matches_mpmath():
    for a, x in [(0.3, 0.2), (1.0, 1.0), (2.5, 6.0), (7.0, 3.0), (20.0, 25.0)]:
        ours = ds.grad(ds.grad(S.gammainc))(a, x)
        np.testing.assert_allclose(ours, _dgamma_ref(a, x, 2), rtol=1e-9)
        np.testing.assert_allclose(ds.grad(ds.grad(S.gammaincc))(a, x), -ours, rtol=1e-15)


def test_gammainc_edges():
    # d/da is 0 at x = 0 and x = inf, NaN outside the domain; values stay SciPy's
    np.testing.assert_array_equal(inc.gammainc_da([1.0, 2.0], [0.0, np.inf]), [0.0, 0.0])
    assert np.isnan(inc.gammainc_da(-1.0, 1.0)) and np.isnan(inc.gammainc_da(1.0, -1.0))
    a, x = np.array([0.5, 3.0]), np.array([2.0, 0.5])
    np.testing.assert_array_equal(ds.pullback(S.gammainc, a, x)[0], sc.gammainc(a, x))
    np.testing.assert_array_equal(ds.pullback(S.gammaincc, a, x)[0], sc.gammaincc(a, x))


B_GRID = [0.05, 0.5, 1.0, 3.0, 10.0, 50.0, 200.0]
XB_GRID = [1e-4, 0.05, 0.3, 0.5, 0.8, 0.97, 0.9999]


def test_betainc_dab_matches_mpmath_on_a_grid():
    a, b, x = np.meshgrid(B_GRID, B_GRID, XB_GRID, indexing="ij")
    da, db = inc.betainc_dab(a, b, x)
    worst = 0.0
    rng = np.random.default_rng(0)
    pick = rng.choice(a.size, 120, replace=False)  # mpmath's 2-d diff is slow: a sample
    for flat in pick:
        idx = np.unravel_index(flat, a.shape)
        for ours, which in ((da[idx], (1, 0)), (db[idx], (0, 1))):
            ref = _dbeta_ref(a[idx], b[idx], x[idx], which)
            if abs(ref) < 1e-280:
                assert abs(ours) < 1e-270
                continue
            worst = max(worst, _rel(ours, ref))
    assert worst < 1e-11, worst


def test_betainc_second_derivatives_match_mpmath():
    for a, b, x in [(2.0, 3.0, 0.4), (0.5, 5.0, 0.9), (8.0, 1.5, 0.2)]:
        for i, j, which in [(0, 0, (2, 0)), (0, 1, (1, 1)), (1, 1, (0, 2))]:
            ours = ds.grad(lambda a, b: ds.grad(S.betainc, argnums=i)(a, b, x), argnums=j)(a, b)
            np.testing.assert_allclose(ours, _dbeta_ref(a, b, x, which), rtol=1e-9)


def _d3gamma_ref(a, x):
    """d³/da³ P(a, x) by mpmath's numerical differentiation at 50 digits."""
    with mp.workdps(50):
        return float(mp.diff(lambda s: mp.gammainc(s, 0, x, regularized=True), a, 3))


GAMMA3 = [(0.05, 3.0), (0.1, 0.5), (0.5, 0.2), (1.0, 1.0), (2.5, 1.0), (3.0, 8.0), (10.0, 12.0),
          (30.0, 25.0), (30.0, 30.0), (100.0, 90.0), (400.0, 390.0), (1.5, 40.0)]


def _nest_grad(f, times):
    """d^times/da^times of an elementwise f, by nested grads of sums."""
    for _ in range(times):
        f = (lambda g: lambda a: ds.grad(lambda u: np.sum(g(u)))(a))(f)
    return f


def test_gammainc_third_derivative_in_a_matches_mpmath():
    # Cauchy's integral of d/da on a circle (G3): both evaluation regions, small and large a
    a, x = np.array(GAMMA3).T
    ref = np.array([_d3gamma_ref(ai, xi) for ai, xi in GAMMA3])
    ours = _nest_grad(lambda a: S.gammainc(a, x), 3)(a)
    np.testing.assert_allclose(ours, ref, rtol=1e-10, atol=0)
    # gammaincc = 1 - gammainc
    np.testing.assert_allclose(_nest_grad(lambda a: S.gammaincc(a, x), 3)(a), -ref, rtol=1e-10)
    # forward mode: jvp of jvp of jvp
    f = lambda s: S.gammainc(s, x)  # noqa: E731
    for _ in range(3):
        f = (lambda g: lambda s: ds.jvp(g, (s,), (np.ones_like(s),))[1])(f)
    np.testing.assert_allclose(f(a), ref, rtol=1e-10)


def test_gammainc_mixed_derivatives_with_the_third_in_a():
    from diffsci.testing import check_grads
    a, x = 2.5, 1.7
    d3 = _nest_grad(lambda a: S.gammainc(a, x), 3)
    check_grads(_nest_grad(lambda a: S.gammainc(a, x), 2), (a,), order=1)  # FD of the second
    # d/dx of the third a-derivative: a closed form (d³/da³ of the density)
    ours = ds.grad(lambda y: ds.grad(ds.grad(ds.grad(S.gammainc)))(a, y))(x)
    with mp.workdps(30):
        ref = float(mp.diff(lambda s, y: mp.gammainc(s, 0, y, regularized=True), (a, x), (3, 1)))
    np.testing.assert_allclose(ours, ref, rtol=1e-10)
    assert np.isfinite(d3(a))


@pytest.mark.parametrize("a,b,x", [(2.0, 3.0, 0.4), (0.5, 5.0, 0.9), (8.0, 1.5, 0.2)])
def test_betainc_third_derivatives_match_mpmath(a, b, x):
    # every third derivative in (a, b), both continued-fraction regions (B1 and the flip B2)
    for i, j, k in [(0, 0, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1)]:
        which = [0, 0]
        for m in (i, j, k):
            which[m] += 1
        ours = ds.grad(lambda a, b: ds.grad(lambda a, b: ds.grad(S.betainc, argnums=i)(a, b, x),
                                            argnums=j)(a, b), argnums=k)(a, b)
        with mp.workdps(30):
            ref = float(mp.diff(lambda s, t: mp.betainc(s, t, 0, x, regularized=True), (a, b),
                                tuple(which)))
        np.testing.assert_allclose(ours, ref, rtol=1e-10)

def test_betainc_third_shape_derivative_is_differentiable_in_x():
    a, b, x = 2.0, 3.0, 0.4  # the x-derivative of d²/da db betainc: a closed form
    ours = ds.grad(lambda y: ds.grad(ds.grad(ds.grad(S.betainc), argnums=1))(a, b, y))(x)
    with mp.workdps(30):
        ref = float(mp.diff(lambda s, t, y: mp.betainc(s, t, 0, y, regularized=True),
                            (a, b, x), (2, 1, 1)))
    np.testing.assert_allclose(ours, ref, rtol=1e-10)


def test_fourth_order_in_the_shape_parameters_raises():
    with pytest.raises(NotImplementedError, match="gammainc: derivatives of fourth order in a"):
        ds.grad(ds.grad(ds.grad(ds.grad(S.gammainc))))(1.0, 1.0)
    with pytest.raises(NotImplementedError, match="betainc: derivatives of fourth order"):
        ds.grad(ds.grad(ds.grad(ds.grad(S.betainc))))(1.0, 2.0, 0.5)


@pytest.mark.parametrize("name,ours,ref", [
    ("jv", lambda v, x: S.jv(v, x), sc.jvp),
    ("yv", lambda v, x: S.yv(v, x), sc.yvp),
    ("iv", lambda v, x: S.iv(v, x), sc.ivp),
    ("kv", lambda v, x: S.kv(v, x), sc.kvp),
    ("jn", lambda v, x: S.jn(int(v), x), sc.jvp),
    ("yn", lambda v, x: S.yn(int(v), x), sc.yvp),
    ("kn", lambda v, x: S.kn(int(v), x), sc.kvp),
])
def test_bessel_derivatives_match_scipys_derivative_functions(name, ours, ref):
    # first and second derivatives over a grid of orders and arguments
    for v in (0.0, 1.0, 2.0, 3.0) if name in ("jn", "yn", "kn") else (0.0, 0.5, 1.0, 2.7, 5.0):
        x = np.linspace(0.3, 12.0, 9)
        g1 = ds.grad(lambda x: np.sum(ours(v, x)))(x)
        np.testing.assert_allclose(g1, ref(v, x, 1), rtol=1e-11, atol=1e-13)
        g2 = ds.grad(lambda x: np.sum(ds.grad(lambda x: np.sum(ours(v, x)))(x)))(x)
        np.testing.assert_allclose(g2, ref(v, x, 2), rtol=1e-10, atol=1e-12)


def test_exponentially_scaled_bessel_derivatives():
    x = np.linspace(-6.0, 6.0, 13)
    x = x[x != 0]
    for v in (0.0, 1.0, 2.5):
        want = (sc.ivp(v, x, 1) - np.sign(x) * sc.iv(v, x)) * np.exp(-np.abs(x))
        np.testing.assert_allclose(ds.grad(lambda x: np.sum(S.ive(v, x)))(x), want, rtol=1e-11)
    xp = x[x > 0]
    for v in (0.0, 1.0, 2.5):
        want = (sc.kvp(v, xp, 1) + sc.kv(v, xp)) * np.exp(xp)
        np.testing.assert_allclose(ds.grad(lambda x: np.sum(S.kve(v, x)))(xp), want, rtol=1e-11)
    pairs = [(S.j0, sc.jvp, 0), (S.j1, sc.jvp, 1), (S.y0, sc.yvp, 0), (S.y1, sc.yvp, 1),
             (S.k0, sc.kvp, 0), (S.k1, sc.kvp, 1)]
    for f, ref, v in pairs:
        np.testing.assert_allclose(ds.grad(lambda x, f=f: np.sum(f(x)))(xp), ref(v, xp, 1),
                                   rtol=1e-11)
    np.testing.assert_allclose(ds.grad(lambda x: np.sum(S.k0e(x)))(xp),
                               (sc.kvp(0, xp) + sc.k0(xp)) * np.exp(xp), rtol=1e-11)
    np.testing.assert_allclose(ds.grad(lambda x: np.sum(S.k1e(x)))(xp),
                               (sc.kvp(1, xp) + sc.k1(xp)) * np.exp(xp), rtol=1e-11)


def test_rgamma_at_the_poles_and_zeta_in_q():
    # 1/Gamma(x) ~ (-1)^n n! (x + n) near x = -n
    for n in range(5):
        assert ds.grad(S.rgamma)(float(-n)) == (-1) ** n * sc.factorial(n)
        with mp.workdps(30):
            want = float(mp.diff(mp.rgamma, -n, 2))
        np.testing.assert_allclose(ds.grad(ds.grad(S.rgamma))(float(-n)), want, rtol=1e-13)
        f = lambda x: S.rgamma(x)  # noqa: E731 - forward over reverse too
        np.testing.assert_allclose(ds.jvp(ds.grad(f), (float(-n),), (1.0,))[1], want,
                                   rtol=1e-13)
    with mp.workdps(30):
        for s, q in [(2.0, 0.5), (3.5, 2.0), (6.0, 1.3)]:
            np.testing.assert_allclose(ds.grad(lambda q: S.zeta(s, q))(q),
                                       float(mp.diff(lambda t: mp.zeta(s, t), q)), rtol=1e-13)


NEW_ONE_ARG = ["j0", "j1", "y0", "y1", "k0", "k0e", "k1", "k1e", "exp1", "expi", "spence",
               "log_expit", "entr", "rgamma", "gammasgn"]


@pytest.mark.parametrize("name", NEW_ONE_ARG)
def test_values_are_scipys(name):
    x = np.array([0.3, 1.7, 4.0])
    want = getattr(sc, name)(x)
    np.testing.assert_array_equal(getattr(S, name)(x), want)
    traced = ds.pullback(lambda x: getattr(S, name)(x) * 1.0, x)[0]
    np.testing.assert_array_equal(ds.stop_gradient(traced), want)


def test_order_and_two_argument_values_are_scipys():
    v, x = np.array([0.0, 1.5, 3.0]), np.array([0.4, 2.0, 7.0])
    for name in ("jv", "yv", "iv", "ive", "kv", "kve", "poch", "rel_entr", "kl_div"):
        np.testing.assert_array_equal(getattr(S, name)(v, x), getattr(sc, name)(v, x))
    n = np.array([0, 1, 3])
    for name in ("jn", "yn", "kn", "expn"):
        np.testing.assert_array_equal(getattr(S, name)(n, x), getattr(sc, name)(n, x))
    np.testing.assert_array_equal(S.zeta(3.0, x), sc.zeta(3.0, x))
    np.testing.assert_array_equal(S.hyp1f1(0.5, 1.5, x), sc.hyp1f1(0.5, 1.5, x))
    np.testing.assert_allclose(S.multigammaln(x + 2, 3), sc.multigammaln(x + 2, 3), rtol=1e-15)
    np.testing.assert_array_equal(S.betainc(x, x + 1, x / 8), sc.betainc(x, x + 1, x / 8))


def test_plain_scipy_code_differentiates_the_new_functions():
    x = np.array([0.5, 1.5])
    got = ds.grad(lambda x: np.sum(sc.jv(1.5, x) + sc.gammainc(x, 2.0) + sc.k1e(x)))(x)
    want = ds.grad(lambda x: np.sum(S.jv(1.5, x) + S.gammainc(x, 2.0) + S.k1e(x)))(x)
    np.testing.assert_allclose(got, want, rtol=1e-15)


# one call per entry of S.STATIC, the traced value in the declared argument
STATIC_CALLS = {
    ("jv", "v"): lambda v: S.jv(v, 1.0), ("jn", "n"): lambda n: S.jn(n, 1.0),
    ("yv", "v"): lambda v: S.yv(v, 1.0), ("yn", "n"): lambda n: S.yn(n, 1.0),
    ("iv", "v"): lambda v: S.iv(v, 1.0), ("ive", "v"): lambda v: S.ive(v, 1.0),
    ("kv", "v"): lambda v: S.kv(v, 1.0), ("kve", "v"): lambda v: S.kve(v, 1.0),
    ("kn", "n"): lambda n: S.kn(n, 1.0), ("expn", "n"): lambda n: S.expn(n, 1.0),
    ("multigammaln", "d"): lambda d: S.multigammaln(3.0, d),
    ("zeta", "x"): lambda x: S.zeta(x, 1.0),
    ("hyp1f1", "a"): lambda a: S.hyp1f1(a, 1.0, 1.0),
    ("hyp1f1", "b"): lambda b: S.hyp1f1(0.5, b, 1.0),
    ("hyp2f1", "a"): lambda a: S.hyp2f1(a, 1.0, 2.0, 0.5),
    ("hyp2f1", "b"): lambda b: S.hyp2f1(1.0, b, 2.0, 0.5),
    ("hyp2f1", "c"): lambda c: S.hyp2f1(1.0, 1.0, c, 0.5),
}


def test_every_static_argument_has_a_check():
    declared = {(f, a) for f, args in S.STATIC.items() for a in args}
    assert declared == set(STATIC_CALLS), declared ^ set(STATIC_CALLS)


@pytest.mark.parametrize("key", sorted(STATIC_CALLS),
                         ids=["-".join(k) for k in sorted(STATIC_CALLS)])
def test_static_arguments_raise_naming_them(key):
    fname, arg = key
    with pytest.raises(TypeError, match=f"{fname}: {arg} must be a plain value"):
        ds.grad(STATIC_CALLS[key])(1.0)
    with pytest.raises(TypeError, match=f"{fname}: {arg} must be a plain value"):
        ds.jvp(STATIC_CALLS[key], (1.0,), (1.0,))


def test_gammasgn_is_not_differentiated():
    assert ds.grad(lambda x: S.gammasgn(x) * x)(-0.5) == -1.0


@pytest.mark.parametrize("call,match", [
    (lambda: S.multigammaln(1.0, 3), "a must be greater than"),
    (lambda: S.multigammaln(3.0, 0), "d must be a positive integer"),
    (lambda: ds.grad(lambda n: S.factorial(n, exact=True))(2.0), "exact=True"),
])
def test_bad_input_raises(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


# ---------------------------------------------------------------- property sweeps
hyp = pytest.importorskip("hypothesis")
hst = pytest.importorskip("hypothesis.strategies")


def _log_uniform(lo, hi):
    return hst.floats(np.log(lo), np.log(hi)).map(np.exp)


@hyp.settings(max_examples=40, deadline=None, derandomize=True)
@hyp.given(a=_log_uniform(0.01, 1e3), x=_log_uniform(1e-6, 3e3))
def test_gammainc_da_property_over_the_domain(a, x):
    ref = _dgamma_ref(a, x)
    ours = float(inc.gammainc_da(a, x))
    if abs(ref) < 1e-280:
        assert abs(ours) < 1e-270
    else:
        assert _rel(ours, ref) < 1e-10, (a, x, ours, ref)


@hyp.settings(max_examples=25, deadline=None, derandomize=True)
@hyp.given(a=_log_uniform(0.02, 500.0), b=_log_uniform(0.02, 500.0),
           x=hst.floats(1e-6, 1 - 1e-6))
def test_betainc_dab_property_over_the_domain(a, b, x):
    da, db = inc.betainc_dab(a, b, x)
    for ours, which in ((float(da), (1, 0)), (float(db), (0, 1))):
        ref = _dbeta_ref(a, b, x, which)
        if abs(ref) < 1e-280:
            assert abs(ours) < 1e-270
        else:
            assert _rel(ours, ref) < 1e-10, (a, b, x, which, ours, ref)


def test_inverse_functions_against_differences_of_scipys():
    h = 1e-4

    def fd(f, args, i):
        lo, hi = list(args), list(args)
        lo[i] -= h
        hi[i] += h
        lo2, hi2 = list(args), list(args)
        lo2[i] -= 2 * h
        hi2[i] += 2 * h
        return (-f(*hi2) + 8 * f(*hi) - 8 * f(*lo) + f(*lo2)) / (12 * h)

    cases = [(S.gammaincinv, sc.gammaincinv, (1.7, 0.3)), (S.gammainccinv, sc.gammainccinv,
                                                           (2.5, 0.6)),
             (S.betaincinv, sc.betaincinv, (2.0, 3.5, 0.4)), (S.binom, sc.binom, (5.5, 2.2))]
    for ours, ref, args in cases:
        for i in range(len(args)):
            np.testing.assert_allclose(ds.grad(ours, argnums=i)(*args), fd(ref, args, i),
                                       rtol=1e-8)
    # round trips: gammainc(a, gammaincinv(a, y)) = y has zero derivative in a
    g = ds.grad(lambda a: S.gammainc(a, S.gammaincinv(a, 0.3)))(1.7)
    assert abs(g) < 1e-12
    g = ds.grad(lambda b: S.betainc(2.0, b, S.betaincinv(2.0, b, 0.4)), )(3.5)
    assert abs(g) < 1e-12


def test_hypergeometric_derivatives_against_closed_forms():
    z = np.array([-0.9, -0.5, -0.1, 0.2, 0.6, 0.9])
    # 2F1(1, 1; 2; z) = -log(1 - z)/z and M(1, 2, x) = (e^x - 1)/x
    want = (z / (1 - z) + np.log1p(-z)) / z ** 2
    np.testing.assert_allclose(ds.grad(lambda z: np.sum(S.hyp2f1(1.0, 1.0, 2.0, z)))(z), want,
                               rtol=1e-12)
    want = (np.exp(z) * (z - 1) + 1) / z ** 2
    np.testing.assert_allclose(ds.grad(lambda x: np.sum(S.hyp1f1(1.0, 2.0, x)))(z), want,
                               rtol=1e-12)


def test_binom_derivative_at_the_zeros_of_the_polynomial():
    # binom(n, 3) = n (n - 1) (n - 2)/6: slope (3 n^2 - 6 n + 2)/6 and curvature n - 1, also
    # where it is 0 (through rgamma's pole branch)
    for n in (0.0, 1.0, 2.0, 2.5, 4.0):
        np.testing.assert_allclose(ds.grad(S.binom)(n, 3.0), (3 * n * n - 6 * n + 2) / 6,
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(ds.grad(ds.grad(S.binom))(n, 3.0), n - 1, rtol=1e-12,
                                   atol=1e-14)


def _doc_targets():
    from diffsci.scipy import _special_gammainc, _special_more
    from diffsci.scipy import stats as D
    out = [(f"special.{n}", getattr(S, n).__doc__)
           for n in _special_more.__all__ + _special_gammainc.__all__]
    out += [(f"stats.{n}", (getattr(D, n) if callable(getattr(D, n)) and not hasattr(
        getattr(D, n), "name") else type(getattr(D, n))).__doc__)
        for n in D.__all__ if n != "norm"]
    return out


@pytest.mark.parametrize("name,doc", _doc_targets(), ids=[n for n, _ in _doc_targets()])
def test_docstring_examples_run(name, doc):
    import doctest

    from diffsci.scipy import stats as D
    globs = {"np": np, **{n: getattr(S, n) for n in S.__all__},
             **{n: getattr(D, n) for n in D.__all__}}
    test = doctest.DocTestParser().get_doctest(doc, globs, name, None, 0)
    assert test.examples, f"{name} has no example"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test, out=lambda s: None)
    assert runner.failures == 0, f"{name}: a docstring example gives another result"
