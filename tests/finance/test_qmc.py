"""Randomised QMC for GBM Monte Carlo (``qmc=True``): the Brownian bridge's covariance, QMC error
below plain MC's at equal paths, AD Greeks vs Black–Scholes within a few replicate s.e., and the
input errors (n_paths not replicates × 2^m, digital, too few replicates, CUDA)."""

import numpy as np
import pytest

import diffsci as ds
import finance
from finance._qmc import bridge_plan, brownian_bridge, qmc_normals

pytestmark = pytest.mark.kernels  # runs the Numba kernels

KW = dict(spot=100.0, strike=105.0, expiry=0.75, rate=0.04, dividend=0.01, vol=0.3)
ARGS = ("spot", "strike", "expiry", "rate", "dividend", "vol")


@pytest.mark.parametrize("n", [1, 2, 5, 6, 8, 12])
def test_bridge_covariance_is_min_s_t(n):
    u = np.arange(1, n + 1) / n
    target = np.minimum.outer(u, u)
    # exact: the bridge is a linear map B = Z Aᵀ, so Cov = A Aᵀ
    a = brownian_bridge(np.eye(n)).T
    np.testing.assert_allclose(a @ a.T, target, atol=1e-12)
    # empirical, on scrambled-Sobol normals (the map QMC actually uses)
    b = brownian_bridge(qmc_normals(2**14, n, np.random.default_rng(n)))
    np.testing.assert_allclose(np.cov(b, rowvar=False), target, atol=0.03)
    np.testing.assert_allclose(b.mean(axis=0), 0.0, atol=0.02)
    # the first Sobol coordinate drives W(T) alone
    assert bridge_plan(n)[0][:3] == (n, 0, n)
    np.testing.assert_allclose(a[-1], np.eye(n)[0])


def test_qmc_error_below_plain_mc_at_equal_paths():
    ref = float(finance.bsm_price(**KW))
    n = 2**14
    err_q, err_m = [], []
    for seed in range(6):
        q = finance.mc_price(**KW, n_paths=n, seed=seed, qmc=True)
        m = finance.mc_price(**KW, n_paths=n, seed=seed, antithetic=False)
        err_q.append(abs(float(q.price) - ref))
        err_m.append(abs(float(m.price) - ref))
        assert abs(float(q.price) - ref) < 5 * q.stderr + 1e-12
    # RMS errors over seeds; QMC + bridge is ~50× better here, require 5×
    rq, rm = np.sqrt(np.mean(np.square(err_q))), np.sqrt(np.mean(np.square(err_m)))
    assert rq < rm / 5, (rq, rm)


def test_qmc_asian_multi_step_stderr_below_mc():
    kw = dict(**KW, product=finance.Product.ASIAN, n_steps=12, n_paths=2**13 * 8, seed=1)
    q = finance.mc_price(**kw, qmc=True)
    m = finance.mc_price(**kw, antithetic=False)
    assert abs(float(q.price) - float(m.price)) < 4 * np.hypot(q.stderr, m.stderr)
    assert q.stderr < m.stderr / 5


@pytest.mark.parametrize("is_call,n_steps", [(True, 1), (False, 6)])
def test_qmc_ad_greeks_match_closed_form(is_call, n_steps):
    g = finance.mc_greeks(**KW, is_call=is_call, n_paths=2**15, n_steps=n_steps, qmc=True,
                          seed=2)
    x = tuple(KW[a] for a in ARGS)

    def bsm(*a):
        return finance.bsm_price(**dict(zip(ARGS, a)), is_call=is_call)

    exact = ds.grad(bsm, argnums=tuple(range(6)))(*x)
    names = ("delta", "dual_delta", "theta", "rho", "dividend_rho", "vega")
    sign = (1, 1, -1, 1, 1, 1)
    assert abs(g["price"][0] - float(bsm(*x))) < 4 * g["price"][1]
    for name, s, ref in zip(names, sign, exact):
        est, se = g[name]
        assert abs(est - s * float(ref)) < 4 * se + 1e-9, (name, est, s * float(ref), se)
        assert se < 0.01 * max(abs(float(ref)), 1.0)  # QMC s.e. is small

    # ds.grad of the QMC price equals mc_greeks' estimates (same scramblings)
    def price(*a):
        return finance.mc_price(**dict(zip(ARGS, a)), is_call=is_call, n_paths=2**15,
                                n_steps=n_steps, qmc=True, seed=2).price

    rev = ds.grad(price, argnums=tuple(range(6)))(*x)
    for name, s, r in zip(names, sign, rev):
        assert abs(s * float(r) - g[name][0]) < 1e-9 * max(1.0, abs(g[name][0]))


def test_qmc_seeds_and_antithetic():
    a = finance.mc_price(**KW, n_paths=2**12, seed=3, qmc=True)
    b = finance.mc_price(**KW, n_paths=2**12, seed=3, qmc=True)
    c = finance.mc_price(**KW, n_paths=2**12, seed=4, qmc=True)
    assert float(a.price) == float(b.price) != float(c.price)
    assert a.n_samples == 8
    anti = finance.mc_price(**KW, n_paths=2**13, seed=3, qmc=True, antithetic=True)
    assert abs(float(anti.price) - float(finance.bsm_price(**KW))) < 5 * anti.stderr


@pytest.mark.parametrize("kw,match", [
    (dict(n_paths=1000), "power of two"),
    (dict(n_paths=8 * 24), "power of two"),
    (dict(n_paths=2**12, qmc_replicates=3), "power of two"),
    (dict(n_paths=8 * 6, antithetic=True), "power of two"),
    (dict(n_paths=8 * 2**6 + 8, antithetic=True), "power of two"),
    (dict(n_paths=2**12, qmc_replicates=1), "qmc_replicates"),
    (dict(n_paths=2**12, qmc_replicates=2.0), "qmc_replicates"),
    (dict(n_paths=2**12, product=finance.Product.DIGITAL), "EUROPEAN and Product.ASIAN"),
])
def test_qmc_bad_inputs(kw, match):
    with pytest.raises(ValueError, match=match):
        finance.mc_price(**KW, qmc=True, **kw)
    with pytest.raises(ValueError, match=match):
        finance.mc_greeks(**KW, qmc=True, **kw)
