"""Heston Monte Carlo (full-truncation Euler, Andersen QE) vs the Fourier price within 4 s.e., and
its pathwise gradients vs AD of the Fourier price: QE by diffsci through the NumPy path loop, full
truncation by the Numba kernel's hand-written reverse sweep (also vs central differences and its
numba.cuda twin under the simulator)."""

import numpy as np
import pytest

import diffsci as ds
import finance
from diffsci.testing import check_grads

pytestmark = pytest.mark.kernels  # runs the Numba kernels

KW = dict(spot=100.0, expiry=1.0, rate=0.05, dividend=0.01)
PARAMS = {
    "feller": finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04),
    "no_feller": finance.HestonParams(kappa=1.0, theta=0.09, sigma=1.0, rho=-0.3, v0=0.09),
}


@pytest.mark.parametrize("name", sorted(PARAMS))
@pytest.mark.parametrize("scheme,n_steps", [(finance.HestonScheme.FULL_TRUNCATION, 100),
                                            (finance.HestonScheme.QE, 20)])
def test_mc_within_4_se_of_fourier(name, scheme, n_steps):
    p = PARAMS[name]
    for k, call in ((80.0, False), (100.0, True), (120.0, True)):
        r = finance.heston_mc_price(**KW, strike=k, params=p, is_call=call, scheme=scheme,
                                    n_steps=n_steps, n_paths=100_000, seed=3)
        ref = float(finance.heston_price(**KW, strike=k, params=p, is_call=call))
        assert abs(float(r.price) - ref) < 3 * r.stderr, (k, float(r.price), ref, r.stderr)


def test_qe_pathwise_gradient_vs_fourier_ad():
    def mc(s, v0, seed):
        p = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=v0)
        return finance.heston_mc_price(**{**KW, "spot": s}, strike=100.0, params=p,
                                       scheme=finance.HestonScheme.QE, n_steps=16, n_paths=8_000,
                                       seed=seed).price

    def fourier(s, v0):
        p = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=v0)
        return finance.heston_price(**{**KW, "spot": s}, strike=100.0, params=p)

    grads = np.array([ds.grad(mc, argnums=(0, 1))(100.0, 0.04, seed) for seed in range(8)])
    est, se = grads.mean(axis=0), grads.std(axis=0, ddof=1) / np.sqrt(len(grads))
    ref = np.array(ds.grad(fourier, argnums=(0, 1))(100.0, 0.04))
    assert np.all(np.abs(est - ref) < 4 * se + 0.01 * np.abs(ref)), (est, ref, se)


def test_kernel_greeks_vs_fourier_ad():
    """All ten adjoint-kernel sensitivities against AD of the Fourier price: within 4 s.e. plus
    the scheme's bias (full-truncation Euler at 64 steps: ≈ 0.6 % on ∂/∂v₀, 1.6 % at 16)."""
    p = PARAMS["feller"]
    g = finance.heston_mc_greeks(**KW, strike=105.0, params=p, n_paths=100_000, n_steps=64,
                                 seed=2)
    names = ("spot", "strike", "expiry", "rate", "dividend", "kappa", "theta", "sigma", "rho",
             "v0")

    def fourier(*x):
        kw = dict(zip(names, x))
        params = finance.HestonParams(**{k: kw.pop(k) for k in names[5:]})
        return finance.heston_price(**kw, params=params)

    x = (KW["spot"], 105.0, KW["expiry"], KW["rate"], KW["dividend"], p.kappa, p.theta, p.sigma,
         p.rho, p.v0)
    ref = ds.grad(fourier, argnums=tuple(range(10)))(*x)
    price = float(fourier(*x))
    assert abs(g["price"][0] - price) < 4 * g["price"][1] + 2e-3 * price
    for name, r, sign in zip(finance.HESTON_GREEKS[1:], ref, (1, 1, -1, 1, 1, 1, 1, 1, 1, 1)):
        est, se = g[name]
        assert abs(est - sign * r) < 4 * se + 0.01 * abs(r) + 1e-3, (name, est, sign * r, se)


def test_kernel_greeks_equal_ad_through_the_price():
    p = PARAMS["no_feller"]

    def price(s, v0, rho):
        q = finance.HestonParams(kappa=p.kappa, theta=p.theta, sigma=p.sigma, rho=rho, v0=v0)
        return finance.heston_mc_price(**{**KW, "spot": s}, strike=100.0, params=q, n_paths=256,
                                       n_steps=8, scheme=finance.HestonScheme.FULL_TRUNCATION,
                                       seed=4).price

    got = ds.grad(price, argnums=(0, 1, 2))(100.0, p.v0, p.rho)
    g = finance.heston_mc_greeks(**KW, strike=100.0, params=p, n_paths=256, n_steps=8, seed=4)
    np.testing.assert_allclose(got, [g["delta"][0], g["d_v0"][0], g["d_rho_corr"][0]],
                               rtol=1e-12)


@pytest.mark.parametrize("antithetic", [True, False])
def test_adjoint_kernel_check_grads(antithetic):
    """The hand-written reverse sweep vs central differences (Feller parameters, few paths: no
    variance reaches 0, where √v⁺ is not differentiable)."""
    def price(s, k, t, r, q, kappa, theta, sigma, rho, v0):
        params = finance.HestonParams(kappa=kappa, theta=theta, sigma=sigma, rho=rho, v0=v0)
        return finance.heston_mc_price(spot=s, strike=k, expiry=t, rate=r, dividend=q,
                                       params=params, n_paths=64, n_steps=8, seed=9,
                                       antithetic=antithetic,
                                       scheme=finance.HestonScheme.FULL_TRUNCATION).price

    check_grads(price, (100.0, 95.0, 1.0, 0.05, 0.01, 2.0, 0.04, 0.3, -0.7, 0.04),
                modes=("rev", "fwd"))


def test_cuda_adjoint_matches_cpu():
    from finance import _cuda, _kernels

    args = (np.uint64(7), 100.0, 100.0, 1.0, 0.03, 0.0, 1.0, 0.09, 1.0, -0.3, 0.09, -1.0, 6, 8,
            True)
    s_gpu, g_gpu = _cuda.heston_samples_adjoint(*args)
    s_cpu, g_cpu = _kernels.heston_samples_adjoint(*args)
    np.testing.assert_allclose(s_gpu, s_cpu, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(g_gpu, g_cpu, rtol=1e-12, atol=1e-12)
    p = PARAMS["feller"]
    kw = dict(**KW, strike=100.0, params=p, n_paths=16, n_steps=4)
    a = finance.heston_mc_greeks(**kw, device="cuda")
    b = finance.heston_mc_greeks(**kw)
    for name in finance.HESTON_GREEKS:
        assert abs(a[name][0] - b[name][0]) < 1e-10 * (1 + abs(b[name][0])), name


@pytest.mark.parametrize("bad,match", [
    (dict(strike=np.array([90.0, 100.0])), "strike must be a scalar"),
    (dict(expiry=0.0), "expiry must be > 0"), (dict(params=(1, 2, 3, 4, 5)), "HestonParams"),
    (dict(scheme="quadratic"), "HestonScheme"), (dict(scheme=1), "HestonScheme"),
    (dict(n_paths=3), "n_paths must be even"),
    (dict(n_steps=0), "n_steps must be an int >= 1"),
    (dict(device="cuda"), "needs scheme=HestonScheme.FULL_TRUNCATION"),
    (dict(spot=-1.0), "spot must be > 0"), (dict(strike=0.0), "strike must be > 0")])
def test_bad_input(bad, match):
    kw = dict(**KW, strike=100.0, params=PARAMS["feller"])
    with pytest.raises((ValueError, TypeError), match=match):
        finance.heston_mc_price(**{**kw, **bad})
