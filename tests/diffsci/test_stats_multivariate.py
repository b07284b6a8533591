"""diffsci.scipy.stats multivariate_normal (incl. singular covariances), dirichlet and
multinomial: SciPy's values, gradients (check_grads, both modes) and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import diffsci as ds
from diffsci.scipy import stats as D
from diffsci.testing import check_grads

MVN = D.multivariate_normal


def _spd(rng, d):
    a = rng.normal(size=(d, d))
    return a @ a.T + 0.5 * np.eye(d)


@pytest.mark.parametrize("d", [1, 2, 4])
def test_mvn_values_are_scipys(d):
    rng = np.random.default_rng(d)
    c, m, x = _spd(rng, d), rng.normal(size=d), rng.normal(size=(5, d))
    for method in ("logpdf", "pdf"):
        np.testing.assert_allclose(getattr(MVN, method)(x, m, c),
                                   getattr(st.multivariate_normal, method)(x, m, c), rtol=1e-12)
        np.testing.assert_allclose(getattr(MVN(m, c), method)(x[0]),
                                   getattr(st.multivariate_normal(m, c), method)(x[0]),
                                   rtol=1e-12)
    np.testing.assert_allclose(MVN.entropy(m, c), st.multivariate_normal.entropy(m, c),
                               rtol=1e-13)
    np.testing.assert_allclose(MVN(m, c).entropy(), st.multivariate_normal(m, c).entropy(),
                               rtol=1e-13)


def test_mvn_promotes_scalar_and_diagonal_covariances_as_scipy():
    x = np.array([0.3, 0.5])
    for mean, cov in [(0.1, 2.0), (np.zeros(2), np.array([1.0, 2.0])), (None, 1.5)]:
        np.testing.assert_allclose(MVN.logpdf(x, mean, cov),
                                   st.multivariate_normal.logpdf(x, mean, cov), rtol=1e-13)


@pytest.mark.parametrize("d", [1, 3])
def test_mvn_gradients_in_x_mean_and_cov(d):
    rng = np.random.default_rng(10 + d)
    c, m, x = _spd(rng, d), rng.normal(size=d), rng.normal(size=(3, d))
    check_grads(lambda x, m, c: MVN.logpdf(x, m, (c + c.T) / 2), (x, m, c), order=2)
    check_grads(lambda c: MVN.entropy(None, (c + c.T) / 2), (c,), order=2)
    check_grads(lambda m, c: MVN(m, c @ c.T + np.eye(d)).pdf(x[0]), (m, c))


def test_mvn_gradients_match_closed_forms():
    rng = np.random.default_rng(5)
    c, m, x = _spd(rng, 3), rng.normal(size=3), rng.normal(size=3)
    ci = np.linalg.inv(c)
    v = x - m
    gx, gm, gc = ds.grad(MVN.logpdf, argnums=(0, 1, 2))(x, m, c)
    np.testing.assert_allclose(gx, -ci @ v, rtol=1e-12)
    np.testing.assert_allclose(gm, ci @ v, rtol=1e-12)
    # d/dC of -(log det C + v^T C^-1 v)/2 = (C^-1 v v^T C^-1 - C^-1)/2 (unsymmetrised)
    np.testing.assert_allclose(gc, 0.5 * (ci @ np.outer(v, v) @ ci - ci), rtol=1e-10,
                               atol=1e-14)
    np.testing.assert_allclose(ds.grad(lambda c: MVN.entropy(None, c))(c), 0.5 * ci,
                               rtol=1e-12)


@pytest.mark.parametrize("d,r", [(3, 1), (3, 2), (5, 3)])
def test_mvn_singular_covariance(d, r):
    rng = np.random.default_rng(d * 10 + r)
    b, m = rng.normal(size=(d, r)), rng.normal(size=d)
    c = b @ b.T
    on = m + rng.normal(size=(4, r)) @ b.T  # on the affine support
    off = on + rng.normal(size=(4, d))  # off it
    for x in (on, off):
        np.testing.assert_allclose(MVN.logpdf(x, m, c, allow_singular=True),
                                   st.multivariate_normal.logpdf(x, m, c, allow_singular=True),
                                   rtol=1e-8)
    np.testing.assert_allclose(MVN.entropy(m, c, allow_singular=True),
                               st.multivariate_normal(m, c, allow_singular=True).entropy(),
                               rtol=1e-10)
    # derivatives along rank-preserving perturbations C = B B^T, x = m + B z (derivation M1)
    z = rng.normal(size=(2, r))
    check_grads(lambda b, z, m: MVN.logpdf(m + z @ b.T, m, b @ b.T, allow_singular=True),
                (b, z, m))
    check_grads(lambda b: MVN.entropy(None, b @ b.T, allow_singular=True), (b,))
    # independent reference: central differences of SciPy's singular logpdf in z and B
    def scipy_logpdf(b_, z_):
        return np.sum(st.multivariate_normal.logpdf(m + z_ @ b_.T, m, b_ @ b_.T,
                                                    allow_singular=True))

    ours_z, ours_b = ds.grad(lambda b, z: np.sum(MVN.logpdf(m + z @ b.T, m, b @ b.T,
                                                            allow_singular=True)),
                             argnums=(0, 1))(b, z)[::-1]
    h = 1e-5
    for ours, which in ((ours_z, 1), (ours_b, 0)):
        base = [b, z]
        fd = np.zeros_like(base[which])
        for i in np.ndindex(fd.shape):
            e = np.zeros_like(fd)
            e[i] = h
            hi, lo = list(base), list(base)
            hi[which], lo[which] = base[which] + e, base[which] - e
            fd[i] = (scipy_logpdf(*hi) - scipy_logpdf(*lo)) / (2 * h)
        np.testing.assert_allclose(ours, fd, rtol=1e-5, atol=1e-6)


def test_mvn_bad_input():
    c = np.array([[1.0, 1.0], [1.0, 1.0]])
    with pytest.raises(np.linalg.LinAlgError, match="allow_singular=True"):
        MVN.logpdf(np.zeros(2), np.zeros(2), c)
    with pytest.raises(ValueError, match="positive semidefinite"):
        MVN.logpdf(np.zeros(2), np.zeros(2), np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="symmetric"):
        MVN.logpdf(np.zeros(2), np.zeros(2), np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match=r"cov must be \(3, 3\)"):
        MVN.logpdf(np.zeros(3), np.zeros(3), np.eye(2))


def test_dirichlet():
    rng = np.random.default_rng(2)
    alpha = np.array([1.5, 2.0, 3.0])
    x = rng.dirichlet(alpha, size=4).T  # components on the first axis, as SciPy
    for method in ("logpdf", "pdf"):
        np.testing.assert_allclose(getattr(D.dirichlet, method)(x, alpha),
                                   getattr(st.dirichlet, method)(x, alpha), rtol=1e-12)
        np.testing.assert_allclose(getattr(D.dirichlet(alpha), method)(x[:, 0]),
                                   getattr(st.dirichlet(alpha), method)(x[:, 0]), rtol=1e-12)
    for method in ("mean", "var", "entropy"):
        np.testing.assert_allclose(getattr(D.dirichlet, method)(alpha),
                                   getattr(st.dirichlet, method)(alpha), rtol=1e-12)
        np.testing.assert_allclose(getattr(D.dirichlet(alpha), method)(),
                                   getattr(st.dirichlet, method)(alpha), rtol=1e-12)
    check_grads(lambda a: D.dirichlet.logpdf(x, a), (alpha,), order=2)
    check_grads(lambda x, a: D.dirichlet.logpdf(x, a), (x[:, 0], alpha), order=2)
    for method in ("mean", "var", "entropy"):
        check_grads(getattr(D.dirichlet, method), (alpha,), order=2)
    # d/dalpha_i logpdf = log x_i - digamma(alpha_i) + digamma(sum alpha)
    from scipy.special import digamma
    np.testing.assert_allclose(ds.grad(lambda a: D.dirichlet.logpdf(x[:, 0], a))(alpha),
                               np.log(x[:, 0]) - digamma(alpha) + digamma(alpha.sum()),
                               rtol=1e-12)
    with pytest.raises(ValueError, match="dirichlet.logpdf: alpha must be a vector"):
        D.dirichlet.logpdf(x, -alpha)
    with pytest.raises(ValueError, match="simplex"):
        D.dirichlet.logpdf(np.array([0.5, 0.6, 0.1]), alpha)


def test_multinomial():
    p = np.array([0.2, 0.3, 0.5])
    x = np.array([[1, 2, 0], [0, 1, 2], [1, 1, 0]])
    np.testing.assert_allclose(D.multinomial.logpmf(x, 3, p), st.multinomial.logpmf(x, 3, p),
                               rtol=1e-12)
    np.testing.assert_allclose(D.multinomial.pmf(x, 3, p), st.multinomial.pmf(x, 3, p),
                               rtol=1e-12)
    check_grads(lambda p: D.multinomial.logpmf(x[:2], 3, p), (p,), order=2)
    np.testing.assert_allclose(ds.grad(lambda p: D.multinomial.logpmf(x[0], 3, p))(p),
                               x[0] / p, rtol=1e-13)
    with pytest.raises(TypeError, match="x is a count"):
        ds.grad(lambda x: D.multinomial.logpmf(x, 3, p))(x[0].astype(float))
    with pytest.raises(ValueError, match="p must be non-negative and sum to 1"):
        D.multinomial.logpmf(x, 3, p * 2)


def test_every_multivariate_method_is_tested():
    # the methods the tests above check, per distribution
    tested = {"multivariate_normal": {"logpdf", "pdf", "entropy"},
              "dirichlet": {"logpdf", "pdf", "mean", "var", "entropy"},
              "multinomial": {"logpmf", "pmf"}}
    for name, methods in tested.items():
        d = getattr(D, name)
        public = {m for m in dir(d) if not m.startswith("_") and callable(getattr(d, m))
                  and m not in ("name", "rvs")}
        assert set(d.methods) == methods == public, (name, public)


def test_rvs_are_scipys_draws_at_the_plain_parameters():
    # sampling is not differentiated: the draws equal SciPy's, traced parameters or not
    alpha, mean = np.array([1.5, 2.0, 0.7]), np.array([0.3, -1.0])
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])
    np.testing.assert_array_equal(D.dirichlet.rvs(alpha, size=4, random_state=3),
                                  st.dirichlet.rvs(alpha, size=4, random_state=3))
    np.testing.assert_array_equal(
        D.multivariate_normal.rvs(mean, cov, size=5, random_state=4),
        st.multivariate_normal.rvs(mean, cov, size=5, random_state=4))

    def loss(a):
        x = D.dirichlet.rvs(a, size=1, random_state=5)[0]
        assert not ds.extend.is_tracer(x)
        return np.sum(D.dirichlet.logpdf(x, a))
    ds.grad(loss)(alpha)
    with pytest.raises(ValueError, match="alpha"):
        D.dirichlet.rvs(np.array([1.0, -1.0]))
