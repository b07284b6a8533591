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


@pytest.mark.parametrize("n_side", [5, 10])
def test_levenberg_marquardt_with_ad_jacobian(n_side):
    """LM on 25 and 100 quotes: exact recovery from a wrong start, with the one-sweep AD
    Jacobian equal to finite differences of the residuals, and no more iterations than LM with
    finite-difference Jacobians."""
    k = np.linspace(75.0, 125.0, n_side)
    t = np.linspace(0.25, 3.0, n_side)[:, None]
    price = finance.heston_price(spot=100.0, strike=k, expiry=t, rate=0.03, dividend=0.01,
                                 params=TRUE)
    iv = finance.implied_vol(price=price, spot=100.0, strike=k, expiry=t, rate=0.03,
                             dividend=0.01)
    x0 = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.3, v0=0.04)
    kw = dict(spot=100.0, strikes=k, expiries=t, implied_vols=iv, rate=0.03, dividend=0.01,
              x0=x0, method=finance.CalibrationMethod.LEVENBERG_MARQUARDT)
    ad = finance.calibrate_heston(**kw)
    fd = finance.calibrate_heston(**kw, gradient=finance.Gradient.FINITE_DIFFERENCE)
    for res in (ad, fd):
        assert res.success and res.rmse_vol < 1e-8
        for name in ("kappa", "theta", "sigma", "rho", "v0"):
            assert abs(getattr(res.params, name) - getattr(TRUE, name)) < 1e-6, name
    assert ad.nit <= fd.nit
    assert ad.nfev < fd.nfev  # FD spends 5 residual evaluations per Jacobian


def test_ad_jacobian_rows_match_finite_differences():
    import diffsci as ds
    from finance._calibrate import _to_params

    k = np.array([80.0, 100.0, 120.0, 90.0])
    t = np.array([0.5, 1.0, 2.0, 3.0])

    def residuals(x):
        return finance.heston_price(spot=100.0, strike=k, expiry=t, rate=0.03,
                                    params=_to_params(x))

    x = np.array([np.log(1.5), np.log(0.05), np.log(0.5), np.arctanh(-0.6), np.log(0.03)])
    rows = np.column_stack(ds.grad(lambda *c: np.sum(residuals(c)), argnums=tuple(range(5)))(
        *(np.full(k.size, v) for v in x)))
    fd = np.column_stack([(residuals(x + 1e-6 * e) - residuals(x - 1e-6 * e)) / 2e-6
                          for e in np.eye(5)])
    np.testing.assert_allclose(rows, fd, rtol=1e-6, atol=1e-8)


def test_calibration_bad_input():
    kw = dict(spot=100.0, strikes=K, expiries=T, implied_vols=0.2, x0=P)
    with pytest.raises(TypeError, match="method must be a finance.CalibrationMethod"):
        finance.calibrate_heston(**kw, method="lm")
    with pytest.raises(TypeError, match="x0 must be a HestonParams"):
        finance.calibrate_heston(**{**kw, "x0": (1, 2, 3, 4, 5)})
    with pytest.raises(ValueError, match="implied_vols must be > 0"):
        finance.calibrate_heston(**{**kw, "implied_vols": -0.2})


def test_batched_params_price_like_a_loop():
    ps = finance.HestonParams(kappa=np.array([1.0, 2.0]), theta=0.04, sigma=0.3,
                              rho=np.array([-0.7, 0.2]), v0=0.04)
    got = finance.heston_price(spot=100.0, strike=np.array([90.0, 110.0]), expiry=1.0,
                               params=ps)
    for i, (kappa, rho, strike) in enumerate(((1.0, -0.7, 90.0), (2.0, 0.2, 110.0))):
        one = finance.HestonParams(kappa=kappa, theta=0.04, sigma=0.3, rho=rho, v0=0.04)
        assert got[i] == pytest.approx(float(finance.heston_price(
            spot=100.0, strike=strike, expiry=1.0, params=one)), rel=1e-13)
    with pytest.raises(ValueError, match="rho must be in"):
        finance.HestonParams(kappa=1.0, theta=0.04, sigma=0.3, rho=np.array([0.1, 1.0]), v0=0.04)


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
