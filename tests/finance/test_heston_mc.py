"""Heston Monte Carlo (full-truncation Euler, Andersen QE) vs the Fourier price within 4 s.e., and
its pathwise gradients (diffsci through the path loop) vs AD of the Fourier price."""

import numpy as np
import pytest

import diffsci as ds
import finance

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
        assert abs(float(r.price) - ref) < 4 * r.stderr, (k, float(r.price), ref, r.stderr)


@pytest.mark.parametrize("scheme", list(finance.HestonScheme))
def test_pathwise_gradient_vs_fourier_ad(scheme):
    def mc(s, v0, seed):
        p = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=v0)
        return finance.heston_mc_price(**{**KW, "spot": s}, strike=100.0, params=p,
                                       scheme=scheme, n_steps=16, n_paths=8_000,
                                       seed=seed).price

    def fourier(s, v0):
        p = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=v0)
        return finance.heston_price(**{**KW, "spot": s}, strike=100.0, params=p)

    grads = np.array([ds.grad(mc, argnums=(0, 1))(100.0, 0.04, seed) for seed in range(8)])
    est, se = grads.mean(axis=0), grads.std(axis=0, ddof=1) / np.sqrt(len(grads))
    ref = np.array(ds.grad(fourier, argnums=(0, 1))(100.0, 0.04))
    assert np.all(np.abs(est - ref) < 4 * se + 0.01 * np.abs(ref)), (est, ref, se)


@pytest.mark.parametrize("bad,match", [
    (dict(strike=np.array([90.0, 100.0])), "strike must be a scalar"),
    (dict(expiry=0.0), "expiry must be > 0"), (dict(params=(1, 2, 3, 4, 5)), "HestonParams"),
    (dict(scheme="qe"), "HestonScheme"), (dict(n_paths=3), "n_paths must be even"),
    (dict(n_steps=0), "n_steps must be an int >= 1")])
def test_bad_input(bad, match):
    kw = dict(**KW, strike=100.0, params=PARAMS["feller"])
    with pytest.raises((ValueError, TypeError), match=match):
        finance.heston_mc_price(**{**kw, **bad})
