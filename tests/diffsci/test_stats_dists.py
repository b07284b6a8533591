"""diffsci.scipy.stats distributions: SciPy's values, gradients in x and every continuous
parameter (both modes; second order for the densities), broadcasting, the frozen form, the
support, and bad input.  ``test_every_distribution_has_a_spec`` fails for an exported
distribution without one; every method of every distribution is checked."""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Callable

import numpy as np
import pytest
import scipy.stats as st

import diffsci as ds
from diffsci.scipy import stats as D
from diffsci.testing import check_grads


def U(lo, hi):
    return lambda r, n: r.uniform(lo, hi, n)


@dataclasses.dataclass(frozen=True)
class CSpec:
    name: str
    shapes: tuple  # one sampler per shape parameter (r, n) -> array
    z: Callable  # standardised points inside the support
    order2: tuple = ("logpdf", "pdf")  # methods checked to second order


CONT = [
    CSpec("t", (U(1.5, 8.0),), U(-3.0, 3.0)),
    CSpec("chi2", (U(1.0, 6.0),), U(0.2, 6.0)),
    CSpec("gamma", (U(0.5, 4.0),), U(0.2, 5.0), ("logpdf", "pdf", "cdf")),
    CSpec("beta", (U(0.6, 4.0), U(0.6, 4.0)), U(0.05, 0.95)),
    CSpec("f", (U(2.0, 8.0), U(2.0, 9.0)), U(0.2, 3.0)),
    CSpec("invgamma", (U(1.0, 4.0),), U(0.2, 3.0)),
    CSpec("expon", (), U(0.1, 3.0), ("logpdf", "pdf", "cdf", "sf", "ppf")),
    CSpec("laplace", (), U(-3.0, 3.0)),
    CSpec("logistic", (), U(-3.0, 3.0), ("logpdf", "cdf", "logcdf", "ppf")),
    CSpec("cauchy", (), U(-3.0, 3.0), ("logpdf", "cdf", "ppf")),
    CSpec("uniform", (), U(0.05, 0.95)),
    CSpec("lognorm", (U(0.3, 1.5),), U(0.2, 4.0), ("logpdf", "cdf", "logsf", "ppf")),
    CSpec("truncnorm", (U(-2.0, -0.5), U(0.5, 2.0)), U(-0.45, 0.45)),
    CSpec("vonmises", (U(0.5, 4.0),), U(-3.0, 3.0)),
    CSpec("gennorm", (U(1.2, 3.0),), U(0.1, 2.0)),
    CSpec("pareto", (U(1.0, 4.0),), U(1.1, 4.0), ("logpdf", "cdf", "logcdf", "ppf")),
    CSpec("gumbel_r", (), U(-2.0, 3.0), ("logpdf", "cdf", "logsf")),
    CSpec("gumbel_l", (), U(-3.0, 2.0), ("logpdf", "sf", "logcdf")),
    CSpec("weibull_min", (U(0.8, 3.0),), U(0.2, 2.5), ("logpdf", "cdf", "logcdf", "isf")),
    CSpec("wrapcauchy", (U(0.1, 0.9),), U(0.2, 6.0)),
]
PROB = {"ppf", "isf"}


def _cont_args(spec, rng, method, n=3):
    shapes = tuple(s(rng, n) for s in spec.shapes)
    loc, scale = rng.normal(0, 1, n), rng.uniform(0.5, 2.0, n)
    if method in PROB:
        x = rng.uniform(0.1, 0.9, n)
    else:
        x = loc + scale * spec.z(rng, n)
    return (x,) + shapes + (loc, scale)


CASES = [(s, m) for s in CONT for m in getattr(D, s.name).methods]


@pytest.mark.parametrize("spec,method", CASES, ids=[f"{s.name}-{m}" for s, m in CASES])
def test_continuous_gradients(spec, method):
    rng = np.random.default_rng(zlib.crc32(f"{spec.name}{method}".encode()))
    args = _cont_args(spec, rng, method)
    f = getattr(getattr(D, spec.name), method)
    check_grads(f, args, order=2 if method in spec.order2 else 1)


@pytest.mark.parametrize("spec,method", CASES, ids=[f"{s.name}-{m}" for s, m in CASES])
def test_continuous_values_are_scipys(spec, method):
    rng = np.random.default_rng(zlib.crc32(f"{spec.name}{method}v".encode()))
    x, *shapes, loc, scale = _cont_args(spec, rng, method, n=6)
    ours = getattr(getattr(D, spec.name), method)
    want = getattr(getattr(st, spec.name), method)(x, *shapes, loc=loc, scale=scale)
    np.testing.assert_allclose(ours(x, *shapes, loc=loc, scale=scale), want, rtol=1e-10)
    traced = ds.pullback(lambda x: ours(x, *shapes, loc, scale), x)[0]
    np.testing.assert_allclose(ds.stop_gradient(traced), want, rtol=1e-10)
    # the frozen form, parameters broadcasting against x of another shape
    frozen = getattr(D, spec.name)(*(s[:1] for s in shapes), loc=loc[:1], scale=scale[:1])
    want1 = getattr(st, spec.name)(*(s[:1] for s in shapes), loc=loc[:1], scale=scale[:1])
    np.testing.assert_allclose(getattr(frozen, method)(x), getattr(want1, method)(x),
                               rtol=1e-10)


@dataclasses.dataclass(frozen=True)
class DSpec:
    name: str
    plain: tuple  # the shape parameters that are counts (closed over)
    cont: tuple  # samplers of the continuous shape parameters
    k: Callable  # (r, n) -> integer points on the support
    k_sf: Callable | None = None  # points where sf > 0 (log sf finite), if k has others


def K(lo, hi):
    return lambda r, n: r.integers(lo, hi, n).astype(float)


DISC = [
    DSpec("poisson", (), (U(0.5, 6.0),), K(0, 8)),
    DSpec("binom", (9,), (U(0.1, 0.9),), K(0, 9)),
    DSpec("nbinom", (), (U(0.5, 5.0), U(0.2, 0.8)), K(0, 8)),
    DSpec("bernoulli", (), (U(0.1, 0.9),), K(0, 2), K(0, 1)),
    DSpec("geom", (), (U(0.1, 0.9),), K(1, 8)),
    DSpec("betabinom", (7,), (U(0.5, 4.0), U(0.5, 4.0)), K(0, 7)),
]
DCASES = [(s, m) for s in DISC for m in getattr(D, s.name).methods if m != "ppf"]


@pytest.mark.parametrize("spec,method", DCASES, ids=[f"{s.name}-{m}" for s, m in DCASES])
def test_discrete_gradients_in_the_parameters(spec, method):
    rng = np.random.default_rng(zlib.crc32(f"{spec.name}{method}".encode()))
    k = (spec.k_sf or spec.k)(rng, 4) if method in ("sf", "logsf") else spec.k(rng, 4)
    cont = tuple(s(rng, 4) for s in spec.cont)
    f = getattr(getattr(D, spec.name), method)
    check_grads(lambda *c: f(k, *spec.plain, *c), cont,
                order=2 if method in ("pmf", "logpmf") else 1)


@pytest.mark.parametrize("spec,method", [(s, m) for s in DISC for m in getattr(D, s.name).methods],
                         ids=[f"{s.name}-{m}" for s in DISC for m in getattr(D, s.name).methods])
def test_discrete_values_are_scipys(spec, method):
    rng = np.random.default_rng(3)
    cont = tuple(s(rng, 1)[0] for s in spec.cont)
    k = np.arange(-1.0, 12.0)
    arg = np.linspace(0.05, 0.95, 7) if method == "ppf" else k
    want = getattr(getattr(st, spec.name), method)(arg, *spec.plain, *cont)
    with np.errstate(divide="ignore"):
        np.testing.assert_allclose(getattr(getattr(D, spec.name), method)(arg, *spec.plain, *cont),
                                   want, rtol=1e-10)
        frozen = getattr(D, spec.name)(*spec.plain, *cont, loc=1)
        want = getattr(getattr(st, spec.name)(*spec.plain, *cont, loc=1), method)(arg)
        np.testing.assert_allclose(getattr(frozen, method)(arg), want, rtol=1e-10)


def test_every_distribution_has_a_spec():
    covered = {s.name for s in CONT} | {s.name for s in DISC} | {
        "norm", "multivariate_normal", "dirichlet", "multinomial", "entropy", "sem", "gaussian_kde"}
    assert set(D.__all__) == covered, set(D.__all__) ^ covered


def test_poisson_entropy_equals_scipy_with_its_closed_form_derivative():
    mu = np.array([0.3, 3.0, 25.0, 400.0])
    np.testing.assert_allclose(ds.pullback(D.poisson.entropy, mu)[0], st.poisson.entropy(mu),
                               rtol=1e-13)
    check_grads(D.poisson.entropy, (mu,), order=2)
    k = np.arange(0.0, 2000.0)  # dH/dmu = E[log(K + 1)] - log(mu), summed with SciPy's pmf
    want = [np.sum(st.poisson.pmf(k, m) * np.log(k + 1)) - np.log(m) for m in mu]
    # both sides are differences of two O(log mu) ~ 6 sums of ~500 terms: absolute error
    np.testing.assert_allclose(ds.grad(lambda m: np.sum(D.poisson.entropy(m)))(mu), want,
                               rtol=1e-12, atol=1e-11)
    with pytest.raises(ValueError, match="mu must be non-negative"):
        ds.grad(D.poisson.entropy)(-1.0)


@pytest.mark.parametrize("bw", [None, "silverman", 0.4])
def test_gaussian_kde_equals_scipy_with_gradients_in_data_weights_and_points(bw):
    r = np.random.default_rng(5)
    x1, pts = r.standard_normal(7), np.linspace(-2.0, 2.0, 5)
    want = st.gaussian_kde(x1, bw).evaluate(pts)
    np.testing.assert_allclose(D.gaussian_kde(x1, bw)(pts), want, rtol=1e-13)
    np.testing.assert_allclose(ds.pullback(lambda x: D.gaussian_kde(x, bw).pdf(pts), x1)[0],
                               want, rtol=1e-13)
    check_grads(lambda x, p: D.gaussian_kde(x, bw).evaluate(p), (x1, pts), order=2)
    x2, w, p2 = r.standard_normal((2, 9)), r.uniform(0.5, 2.0, 9), r.standard_normal((2, 4))
    want = st.gaussian_kde(x2, bw, weights=w).logpdf(p2)
    got = ds.pullback(lambda x, w, p: D.gaussian_kde(x, bw, weights=w).logpdf(p), x2, w, p2)[0]
    np.testing.assert_allclose(got, want, rtol=1e-13)
    check_grads(lambda x, w, p: D.gaussian_kde(x, bw, weights=w).logpdf(p), (x2, w, p2))
    # d/dp of the 1-d density: -sum_i w_i N(p; x_i, h^2) (p - x_i) / h^2, with SciPy's h
    kde = st.gaussian_kde(x1, bw)
    h2 = kde.covariance[0, 0]
    dens = np.exp(-(pts[:, None] - x1) ** 2 / (2 * h2)) / np.sqrt(2 * np.pi * h2) / x1.size
    np.testing.assert_allclose(ds.grad(lambda p: np.sum(D.gaussian_kde(x1, bw)(p)))(pts),
                               np.sum(-dens * (pts[:, None] - x1) / h2, axis=1), rtol=1e-12)


def test_gaussian_kde_rejects_bad_input():
    with pytest.raises(ValueError, match="weights must have shape"):
        D.gaussian_kde(np.ones(3), weights=np.ones(2))
    with pytest.raises(ValueError, match="points have dimension"):
        D.gaussian_kde(np.random.default_rng(0).standard_normal((2, 5))).evaluate(np.ones((3, 2)))
    with pytest.raises(ValueError, match="bw_method"):
        D.gaussian_kde(np.array([0.0, 1.0, 2.0]), bw_method="wide")


@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"axis": None, "ddof": 0}])
def test_sem_equals_scipy_with_gradients(kw):
    x = np.random.default_rng(4).standard_normal((5, 3))
    np.testing.assert_allclose(ds.pullback(lambda x: D.sem(x, **kw), x)[0], st.sem(x, **kw),
                               rtol=1e-14)
    check_grads(lambda x: D.sem(x, **kw), (x,), order=2)
    # d sem / dx = (x - mean) / ((n - ddof) sem n) for one column
    c = x[:, 0]
    want = (c - c.mean()) / ((c.size - 1) * st.sem(c) * c.size)
    np.testing.assert_allclose(ds.grad(D.sem)(c), want, rtol=1e-12)


# ---------------------------------------------------------------- independent references
def test_shape_derivatives_match_closed_forms_and_differences():
    # d/dmu poisson.cdf(k, mu) = -pmf(k, mu); d/dp binom.cdf(k, n, p) = -n pmf(k; n - 1, p)
    k, mu = np.array([0.0, 2.0, 5.0]), 2.5
    np.testing.assert_allclose(ds.grad(lambda m: np.sum(D.poisson.cdf(k, m)))(mu),
                               -np.sum(st.poisson.pmf(k, mu)), rtol=1e-12)
    p = 0.3
    np.testing.assert_allclose(ds.grad(lambda p: np.sum(D.binom.cdf(k, 9, p)))(p),
                               -9 * np.sum(st.binom.pmf(k, 8, p)), rtol=1e-12)
    # d/ddf of t.cdf and d/da of gamma.cdf against SciPy's values by 4th-order differences
    for f, ref, x, s in [(D.t.cdf, st.t.cdf, 1.3, 4.5), (D.gamma.cdf, st.gamma.cdf, 2.0, 1.7),
                         (lambda x, a: D.beta.sf(x, a, 3.0), lambda x, a: st.beta.sf(x, a, 3.0),
                          0.3, 2.2), (D.chi2.ppf, st.chi2.ppf, 0.7, 3.1),
                         (D.t.ppf, st.t.ppf, 0.8, 4.5),
                         (lambda x, d: D.f.cdf(x, 3.0, d), lambda x, d: st.f.cdf(x, 3.0, d), 1.1,
                          5.0),
                         (lambda x, b: D.truncnorm.ppf(x, -1.0, b),
                          lambda x, b: st.truncnorm.ppf(x, -1.0, b), 0.4, 1.5)]:
        h = 1e-3
        fd = (-ref(x, s + 2 * h) + 8 * ref(x, s + h) - 8 * ref(x, s - h)
              + ref(x, s - 2 * h)) / (12 * h)
        np.testing.assert_allclose(ds.grad(f, argnums=1)(x, s), fd, rtol=1e-9)


def test_support_edges_are_scipys_and_gradients_stay_finite():
    x = np.array([-1.0, 0.0, 0.5, 2.0])
    for name, shapes in [("gamma", (2.0,)), ("beta", (2.0, 3.0)), ("expon", ()),
                         ("uniform", ()), ("pareto", (2.0,)), ("chi2", (3.0,))]:
        for m in ("pdf", "logpdf", "cdf", "sf", "logcdf", "logsf"):
            with np.errstate(divide="ignore"):
                want = getattr(getattr(st, name), m)(x, *shapes)
                np.testing.assert_allclose(getattr(getattr(D, name), m)(x, *shapes), want,
                                           rtol=1e-12, err_msg=f"{name}.{m}")
        g = ds.grad(lambda x: np.sum(getattr(D, name).cdf(x, *shapes)))(x[[0, 3]])
        assert np.all(np.isfinite(g)), (name, g)
    q = np.array([0.0, 1.0, 1.5])
    np.testing.assert_allclose(D.gamma.ppf(q, 2.0), st.gamma.ppf(q, 2.0))
    np.testing.assert_allclose(D.t.isf(q, 3.0), st.t.isf(q, 3.0))


def test_vonmises_cdf_is_exact_where_scipy_approximates():
    # SciPy switches to a normal approximation from kappa = 50 (errors ~1e-6); the Fourier
    # series here is exact: compare with mpmath quadrature of the density, and the unwrapping
    mp = pytest.importorskip("mpmath")
    for k in (80.0, 400.0):
        with mp.workdps(30):
            norm = mp.quad(lambda u: mp.exp(k * (mp.cos(u) - 1)), [-mp.pi, 0, mp.pi])
            for x in (-0.2, 0.03, 0.15):
                ref = mp.quad(lambda u: mp.exp(k * (mp.cos(u) - 1)), [-mp.pi, 0, x]) / norm
                # the series sums O(1) terms: its error is absolute, ~1e-16
                np.testing.assert_allclose(D.vonmises.cdf(x, k), float(ref), rtol=1e-13,
                                           atol=2e-16)
    x = np.array([-4.0, 0.5, 4.0, 10.0])
    np.testing.assert_allclose(D.vonmises.cdf(x + 2 * np.pi, 2.0), D.vonmises.cdf(x, 2.0) + 1,
                               rtol=1e-13)
    np.testing.assert_allclose(D.vonmises.cdf(x, 2.0), st.vonmises.cdf(x, 2.0), rtol=1e-12)
    # d/dx cdf = pdf, and d/dkappa by differences of SciPy's (exact for kappa < 50) cdf
    np.testing.assert_allclose(ds.grad(lambda x: np.sum(D.vonmises.cdf(x, 2.0)))(x),
                               st.vonmises.pdf(x, 2.0), rtol=1e-12)
    h = 1e-4
    fd = (st.vonmises.cdf(x, 2.0 + h) - st.vonmises.cdf(x, 2.0 - h)) / (2 * h)
    np.testing.assert_allclose([ds.grad(lambda k: D.vonmises.cdf(xi, k))(2.0) for xi in x], fd,
                               rtol=1e-7)


@pytest.mark.parametrize("a,b", [(10.0, 12.0), (40.0, 41.0), (-41.0, -40.0), (-np.inf, -30.0),
                                 (30.0, np.inf), (-0.5, np.inf), (-3.0, 3.0)])
def test_truncnorm_far_tails(a, b):
    # the mass Phi(b) - Phi(a) is taken in log space from its tail (derivation T1)
    lo = a if np.isfinite(a) else b - 2.0
    hi = b if np.isfinite(b) else a + 2.0
    x = np.linspace(lo, hi, 7)[1:-1]
    for m in ("logpdf", "pdf", "cdf", "sf", "logcdf", "logsf"):
        np.testing.assert_allclose(getattr(D.truncnorm, m)(x, a, b),
                                   getattr(st.truncnorm, m)(x, a, b), rtol=1e-9, err_msg=m)
    q = np.array([0.1, 0.5, 0.9])
    np.testing.assert_allclose(D.truncnorm.ppf(q, a, b), st.truncnorm.ppf(q, a, b), rtol=1e-12)
    np.testing.assert_allclose(ds.grad(lambda x: np.sum(D.truncnorm.cdf(x, a, b)))(x),
                               D.truncnorm.pdf(x, a, b), rtol=1e-9)
    np.testing.assert_allclose(ds.grad(lambda x: np.sum(D.truncnorm.logsf(x, a, b)))(x),
                               -D.truncnorm.pdf(x, a, b) / D.truncnorm.sf(x, a, b), rtol=1e-8)
    check_grads(lambda x: D.truncnorm.logcdf(x, a, b), (x,), order=2)


def test_t_cdf_at_its_median():
    # the z = 0 special case: the slope is the density, and d/ddf vanishes
    g = ds.grad(D.t.cdf, argnums=(0, 1))(0.0, 3.0)
    np.testing.assert_allclose(g, [st.t.pdf(0.0, 3.0), 0.0], atol=1e-15)


def test_broadcasting_as_scipy():
    x = np.linspace(0.5, 3.0, 4)[:, None]
    a = np.array([1.5, 2.5, 3.5])
    np.testing.assert_allclose(D.gamma.logpdf(x, a, scale=2.0),
                               st.gamma.logpdf(x, a, scale=2.0), rtol=1e-13)
    g = ds.grad(lambda a: np.sum(D.gamma.logpdf(x, a, scale=2.0)))(a)
    assert g.shape == a.shape


@pytest.mark.parametrize("call,exc,match", [
    (lambda: D.gamma.pdf(1.0, -1.0), ValueError, "gamma.pdf: a must be positive"),
    (lambda: D.beta.cdf(0.5, 1.0, 0.0), ValueError, "beta.cdf: b must be positive"),
    (lambda: D.t.cdf(0.5, 2.0, scale=-1.0), ValueError, "t.cdf: scale must be positive"),
    (lambda: D.t.cdf(0.5), TypeError, "missing shape parameter"),
    (lambda: D.t.cdf(0.5, 2.0, dof=3), TypeError, "unexpected parameter 'dof'"),
    (lambda: D.truncnorm.pdf(0.0, 1.0, 0.5), ValueError, "a must be less than b"),
    (lambda: D.binom.pmf(1.0, 2.5, 0.3), ValueError, "binom.pmf: n must be a non-negative"),
    (lambda: D.binom.pmf(1.0, 3, 1.5), ValueError, "binom.pmf: p must be in"),
    (lambda: ds.grad(lambda k: D.poisson.pmf(k, 2.0))(1.0), TypeError, "k is a count"),
    (lambda: ds.grad(lambda n: D.binom.pmf(1.0, n, 0.5))(3.0), TypeError, "n is a count"),
], ids=["gamma-a", "beta-b", "scale", "missing", "unexpected", "truncnorm", "binom-n",
        "binom-p", "poisson-k", "binom-n-traced"])
def test_bad_input_raises_naming_it(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_entropy():
    rng = np.random.default_rng(8)
    pk, qk = rng.uniform(0.1, 2.0, (4, 3)), rng.uniform(0.1, 2.0, (4, 3))
    for args, kw in [((pk,), {}), ((pk, qk), {}), ((pk,), {"base": 2.0}),
                     ((pk, qk), {"axis": 1, "base": 10.0})]:
        np.testing.assert_allclose(D.entropy(*args, **kw), st.entropy(*args, **kw), rtol=1e-13)
        check_grads(lambda *a, kw=kw: D.entropy(*a, **kw), args, order=2)
    # d/dp_i of -sum p log p at normalised p is -(log p_i + 1) minus its p-weighted mean
    p = np.array([0.2, 0.3, 0.5])
    g = ds.grad(D.entropy)(p)
    np.testing.assert_allclose(g, -np.log(p) - np.sum(-p * np.log(p)), rtol=1e-12)
    with pytest.raises(ValueError, match="entropy: pk must be non-negative"):
        D.entropy(np.array([-0.1, 1.1]))
