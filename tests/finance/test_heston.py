"""Heston by Fourier integration: limits, parity, QuantLib, AD gradients; calibration."""

import numpy as np
import pytest

import finance
from diffsci.testing import check_grads

P = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
TRUE = finance.HestonParams(kappa=1.5, theta=0.05, sigma=0.5, rho=-0.6, v0=0.03)
K = np.array([80.0, 90.0, 100.0, 110.0, 120.0])
T = np.array([0.25, 0.5, 1.0, 2.0, 3.0])[:, None]
# QuantLib 1.44 AnalyticHestonEngine, S=100, r=5 %, q=1 %, T = 365/365, params P
QL_REF = {80.0: 24.1253409635, 100.0: 9.7145620521, 120.0: 2.0547073715}


def test_black_scholes_limit_and_parity():
    # v0 = θ, σ → 0: Black–Scholes with vol √θ, up to O(σ²) (at σ ≲ 1e-5 the κθ/σ² factor of
    # the characteristic function cancels catastrophically; the limit is approached from above)
    flat = finance.HestonParams(kappa=2.0, theta=0.04, sigma=1e-3, rho=0.0, v0=0.04)
    got = finance.heston_price(spot=100.0, strike=K, expiry=T, rate=0.03, dividend=0.01,
                               params=flat)
    ref = finance.bsm_price(spot=100.0, strike=K, expiry=T, rate=0.03, dividend=0.01, vol=0.2)
    np.testing.assert_allclose(got, ref, atol=1e-5)
    c = finance.heston_price(spot=100.0, strike=K, expiry=T, rate=0.03, dividend=0.01, params=P)
    p = finance.heston_price(spot=100.0, strike=K, expiry=T, rate=0.03, dividend=0.01, params=P,
                             is_call=False)
    np.testing.assert_allclose(c - p, 100.0 * np.exp(-0.01 * T) - K * np.exp(-0.03 * T),
                               atol=1e-12)
    assert np.all(p > 0) and np.all(c > np.maximum(100 * np.exp(-0.01 * T) - K, 0))


def test_stored_quantlib_values():
    for k, ref in QL_REF.items():
        got = finance.heston_price(spot=100.0, strike=k, expiry=1.0, rate=0.05, dividend=0.01,
                                   params=P)
        assert abs(got - ref) < 1e-8, (k, got, ref)


def test_quantlib_live():
    ql = pytest.importorskip("QuantLib")
    today = ql.Date(15, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    dc = ql.Actual365Fixed()
    proc = ql.HestonProcess(ql.YieldTermStructureHandle(ql.FlatForward(today, 0.05, dc)),
                            ql.YieldTermStructureHandle(ql.FlatForward(today, 0.01, dc)),
                            ql.QuoteHandle(ql.SimpleQuote(100.0)), P.v0, P.kappa, P.theta,
                            P.sigma, P.rho)
    engine = ql.AnalyticHestonEngine(ql.HestonModel(proc))
    for k in (70.0, 100.0, 140.0):
        for days in (30, 365, 3650):
            opt = ql.VanillaOption(ql.PlainVanillaPayoff(ql.Option.Put, k),
                                   ql.EuropeanExercise(today + days))
            opt.setPricingEngine(engine)
            got = finance.heston_price(spot=100.0, strike=k, expiry=days / 365, rate=0.05,
                                       dividend=0.01, params=P, is_call=False)
            assert abs(got - opt.NPV()) < 1e-9, (k, days)


def test_gradients_through_complex_fourier_integral():
    def f(p, s, k):
        return finance.heston_price(spot=s, strike=k, expiry=0.7, rate=0.02, params=p)

    check_grads(f, (P, 100.0, np.array([90.0, 115.0])), order=1)


@pytest.mark.parametrize("gradient", list(finance.Gradient))
def test_calibration_recovers_parameters(gradient):
    price = finance.heston_price(spot=100.0, strike=K, expiry=T, rate=0.03, dividend=0.01,
                                 params=TRUE)
    iv = finance.implied_vol(price=price, spot=100.0, strike=K, expiry=T, rate=0.03,
                             dividend=0.01)
    x0 = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.3, v0=0.04)
    res = finance.calibrate_heston(spot=100.0, strikes=K, expiries=T, implied_vols=iv, rate=0.03,
                                   dividend=0.01, x0=x0, gradient=gradient)
    assert res.success and res.rmse_vol < 1e-6
    for name in ("kappa", "theta", "sigma", "rho", "v0"):
        assert abs(getattr(res.params, name) - getattr(TRUE, name)) < 1e-3, name


def test_bad_params():
    with pytest.raises(ValueError, match="rho must be"):
        finance.HestonParams(kappa=1.0, theta=0.04, sigma=0.3, rho=-1.0, v0=0.04)
    with pytest.raises(ValueError, match="sigma must be > 0"):
        finance.HestonParams(kappa=1.0, theta=0.04, sigma=-0.3, rho=0.0, v0=0.04)
    with pytest.raises(TypeError, match="params must be a HestonParams"):
        finance.heston_price(spot=1.0, strike=1.0, expiry=1.0, params=(1, 2, 3, 4, 5))


def test_second_order_by_forward_over_reverse():
    import diffsci as ds

    def price(s, p):
        return finance.heston_price(spot=s, strike=np.array([90.0, 110.0]), expiry=1.0,
                                    rate=0.03, params=p)

    gamma = ds.jacfwd(ds.grad(lambda s: np.sum(price(s, P))))(100.0)
    h = 1e-3
    fd = np.sum(price(100.0 + h, P) - 2 * price(100.0, P) + price(100.0 - h, P)) / h**2
    assert abs(gamma - fd) < 1e-6
    check_grads(lambda v0, rho: price(100.0, finance.HestonParams(2.0, 0.04, 0.3, rho, v0)),
                (0.04, -0.7), order=2, modes=("rev",))
