"""Ensemble statistics, the Euler pseudo-likelihood and moment matching: against NumPy / SciPy
references, analytic maximum-likelihood estimates, finite differences, and bad input."""

import numpy as np
import pytest
from scipy import stats

import diffsci as ds
import sde
from diffsci.testing import check_grads
from tests.sde import problems

pytestmark = pytest.mark.kernels  # Numba kernels: the Brownian tree's bridges, the fast paths

RNG = np.random.default_rng(3)
YS = RNG.standard_normal((4, 50, 2)) * np.array([1.0, 2.0]) + 1.0


def test_ensemble_stats_match_numpy():
    st = sde.ensemble_stats(YS, quantiles=(0.0, 0.025, 0.5, 0.975, 1.0))
    np.testing.assert_allclose(st.mean, YS.mean(1), rtol=1e-13)
    np.testing.assert_allclose(st.var, YS.var(1, ddof=1), rtol=1e-13)
    ref = np.quantile(YS, [0.0, 0.025, 0.5, 0.975, 1.0], axis=1)
    np.testing.assert_allclose(st.quantiles, ref, rtol=1e-13)
    np.testing.assert_allclose(st.quantile(0.975), ref[3], rtol=1e-13)


def test_ensemble_stats_grads():
    f = lambda y: np.sum(np.sin(sde.ensemble_stats(y, (0.1, 0.5)).quantiles)  # noqa: E731
                         + sde.ensemble_stats(y).var)
    check_grads(f, (YS,), modes=("rev",))


def test_pseudo_loglik_diagonal_matches_scipy_and_ou_mle():
    """OU: the Euler pseudo-likelihood equals Σ log N by scipy, and its maximiser over (θμ, θ)
    is the least-squares regression of increments on levels (closed form)."""
    ou = sde.SDE(lambda t, y, p: p[0] * (p[1] - y), lambda t, y, p: p[2] + 0 * y)
    ts = np.linspace(0, 4, 201)
    ys = sde.sdeint(ou, np.zeros((8, 1)), ts, (2.0, 1.0, 0.5), dt=0.005, seed=1)
    p = (1.5, 0.8, 0.4)
    h = ts[1] - ts[0]
    ref = np.sum(stats.norm.logpdf(ys[1:], ys[:-1] + 1.5 * (0.8 - ys[:-1]) * h, 0.4 * np.sqrt(h)))
    ll = sde.pseudo_loglik(ou, ts, ys, p)
    assert abs(ll - ref) < 1e-9 * abs(ref)
    assert abs(sde.pseudo_loglik(ou, ts, ys, p, time_homogeneous=True) - ref) < 1e-9 * abs(ref)
    # closed-form maximiser: dy = (a + b y) h + noise regression
    x, dy = ys[:-1].ravel(), (ys[1:] - ys[:-1]).ravel()
    b, a = np.polyfit(x, dy / h, 1)
    theta, mu = -b, a / -b
    g = ds.grad(lambda q: sde.pseudo_loglik(ou, ts, ys, (q[0], q[1], 0.5)))(np.array([theta, mu]))
    assert np.max(np.abs(g)) < 1e-6 * abs(ll)


def test_pseudo_loglik_stratonovich_uses_ito_drift():
    """A Stratonovich GBM is the Itô GBM with drift μ + σ²/2: the likelihoods agree."""
    mu, s = 0.3, 0.4
    strat = problems.gbm("stratonovich")
    ito = problems.gbm("ito")
    ts = np.linspace(0, 1, 51)
    ys = sde.sdeint(ito, np.ones((6, 2)), ts, (mu + 0.5 * s**2, s), dt=0.01, seed=2)
    a = sde.pseudo_loglik(strat, ts, ys, (mu, s))
    b = sde.pseudo_loglik(ito, ts, ys, (mu + 0.5 * s**2, s))
    assert abs(a - b) < 1e-10 * abs(b)


def test_pseudo_loglik_general_noise_matches_scipy_and_grads():
    gen = sde.SDE(lambda t, y, p: -p[0] * y, lambda t, y, p: p[1] * (1.0 + 0.1 * y[:, :, None]**2)
                  * np.eye(2), noise="general")
    ts = np.linspace(0, 1, 11)
    p = (0.7, np.array([[0.5, 0.1], [0.0, 0.3]]))
    ys = sde.sdeint(gen, np.zeros((3, 2)), ts, p, dt=0.01, seed=4)
    ll = sde.pseudo_loglik(gen, ts, ys, p)
    ref = 0.0
    h = 0.1
    for k in range(10):
        for i in range(3):
            G = gen.g(0, ys[k, i:i + 1], p)[0]
            ref += stats.multivariate_normal.logpdf(ys[k + 1, i], ys[k, i] - 0.7 * ys[k, i] * h,
                                                    G @ G.T * h)
    assert abs(ll - ref) < 1e-9 * abs(ref)
    check_grads(lambda a, s: sde.pseudo_loglik(gen, ts, ys, (a, s)), p, modes=("rev",))


def test_moment_loss():
    model = YS + 0.1
    expected = np.mean((model.mean(1) - YS.mean(1)) ** 2)
    assert abs(sde.moment_loss(model, YS) - expected) < 1e-14
    assert abs(sde.moment_loss(model, sde.ensemble_stats(YS), weights=(0.0, 1.0))) < 1e-20
    check_grads(lambda y: sde.moment_loss(y, YS * 1.1), (YS,), modes=("rev",))


def test_moment_matching_fits_ou_parameters():
    """Fit (μ, σ) of an OU by moment matching on a fixed Brownian path: gradient steps reduce
    the loss and move the parameters towards the truth."""
    ou = sde.SDE(lambda t, y, p: 2.0 * (p[0] - y), lambda t, y, p: p[1] + 0 * y)
    ts = np.linspace(0, 1, 6)
    data = sde.sdeint(ou, np.zeros((400, 1)), ts, np.array([1.0, 0.5]), dt=0.02, seed=0)

    def loss(p):
        return sde.moment_loss(sde.sdeint(ou, np.zeros((400, 1)), ts, p, dt=0.02, seed=1), data)

    p = np.array([0.3, 0.2])
    l0 = loss(p)
    for _ in range(60):
        p = p - 2.0 * ds.grad(loss)(p)
    assert loss(p) < 0.05 * l0
    assert abs(p[0] - 1.0) < 0.1 and abs(p[1] - 0.5) < 0.15


@pytest.mark.parametrize("call,match", [
    (lambda: sde.ensemble_stats(np.ones((3, 4))), r"shape \(len\(ts\), batch, d\)"),
    (lambda: sde.ensemble_stats(np.ones((3, 1, 2))), "at least 2 paths"),
    (lambda: sde.ensemble_stats(YS, quantiles=(1.5,)), r"quantiles must lie in \[0, 1\]"),
    (lambda: sde.pseudo_loglik(problems.gbm(), np.linspace(0, 1, 3), YS, (0.1, 0.2)),
     "ys has 4 times, ts has 3"),
    (lambda: sde.pseudo_loglik(problems.scalar_gbm(), np.linspace(0, 1, 4), YS, (0.1, 0.2)),
     "singular"),
    (lambda: sde.moment_loss(YS, YS[:, :, :1]), "target statistics have shape"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
