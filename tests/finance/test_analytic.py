"""Closed-form pricers: reference values, parity, closed-form Greeks, gradients, validation."""

import numpy as np
import pytest
from scipy.stats import norm

import diffsci as ds
import finance
from diffsci.testing import check_grads

# Reference numbers from the issue (QuantLib 1.44): S = K = 100, r = 5 %, σ = 20 %, T = 1.
REF = dict(price=10.450584, delta=0.636831, gamma=0.018762, vega=37.524)
S = 100.0
K = np.array([70.0, 90.0, 100.0, 115.0, 150.0])
T = np.array([0.1, 0.5, 1.0, 2.0, 5.0])[:, None]


def closed_form(S, K, T, r, q, vol, w):
    """Textbook BSM Greeks (Hull 10th ed. §19; Haug 2007 §2.1)."""
    sd = vol * np.sqrt(T)
    d1 = (np.log(S / K) + (r - q + 0.5 * vol**2) * T) / sd
    d2 = d1 - sd
    n1 = norm.pdf(d1)
    dq, dr = np.exp(-q * T), np.exp(-r * T)
    return {
        "price": w * (S * dq * norm.cdf(w * d1) - K * dr * norm.cdf(w * d2)),
        "delta": w * dq * norm.cdf(w * d1),
        "gamma": dq * n1 / (S * sd),
        "vega": S * dq * n1 * np.sqrt(T),
        "theta": (-S * dq * n1 * vol / (2 * np.sqrt(T)) - w * r * K * dr * norm.cdf(w * d2)
                  + w * q * S * dq * norm.cdf(w * d1)),
        "rho": w * K * T * dr * norm.cdf(w * d2),
        "vanna": -dq * n1 * d2 / vol,
        "volga": S * dq * n1 * np.sqrt(T) * d1 * d2 / vol,
    }


def test_reference_values():
    g = finance.greeks(finance.bsm_price, spot=100.0, strike=100.0, expiry=1.0, rate=0.05,
                       vol=0.2)
    for k, v in REF.items():
        assert abs(g[k] - v) < 5e-6 * max(1.0, abs(v)), k


@pytest.mark.parametrize("is_call", [True, False])
def test_bsm_greeks_match_closed_form(is_call):
    w = 1.0 if is_call else -1.0
    g = finance.greeks(finance.bsm_price, spot=S, strike=K, expiry=T, rate=0.03, dividend=0.02,
                       vol=0.25, is_call=is_call)
    ref = closed_form(S, K, T, 0.03, 0.02, 0.25, w)
    for k in ref:
        np.testing.assert_allclose(g[k], ref[k], rtol=1e-9, atol=1e-11, err_msg=k)


def test_put_call_parity_and_black76():
    kw = dict(spot=S, strike=K, expiry=T, rate=0.04, dividend=0.01, vol=0.3)
    c = finance.bsm_price(**kw, is_call=True)
    p = finance.bsm_price(**kw, is_call=False)
    np.testing.assert_allclose(c - p, S * np.exp(-0.01 * T) - K * np.exp(-0.04 * T), atol=1e-11)
    # Black-76 on the forward is BSM with spot = F e^{-rT}... i.e. dividend = rate on spot = F
    F = S * np.exp(0.03 * T)
    b = finance.black76_price(forward=F, strike=K, expiry=T, rate=0.04, vol=0.3,
                              is_call=np.array([True, False, True, False, True]))
    ref = finance.bsm_price(spot=F, strike=K, expiry=T, rate=0.04, dividend=0.04, vol=0.3,
                            is_call=np.array([True, False, True, False, True]))
    np.testing.assert_allclose(b, ref, rtol=1e-13)


def test_bachelier():
    F, vol = 0.02, 0.006  # a rates-style normal vol
    strikes = np.array([-0.01, 0.0, 0.02, 0.05])
    c = finance.bachelier_price(forward=F, strike=strikes, expiry=2.0, rate=0.01, vol=vol)
    p = finance.bachelier_price(forward=F, strike=strikes, expiry=2.0, rate=0.01, vol=vol,
                                is_call=False)
    np.testing.assert_allclose(c - p, np.exp(-0.02) * (F - strikes), atol=1e-15)
    atm = finance.bachelier_price(forward=F, strike=F, expiry=2.0, rate=0.01, vol=vol)
    np.testing.assert_allclose(atm, np.exp(-0.02) * vol * np.sqrt(2.0 / (2 * np.pi)), rtol=1e-14)
    # against quadrature of the Gaussian payoff
    z = np.linspace(-12, 12, 200001)
    payoff = np.maximum(F + vol * np.sqrt(2.0) * z - 0.03, 0.0) * norm.pdf(z)
    ref = np.exp(-0.02) * np.trapezoid(payoff, z)
    got = finance.bachelier_price(forward=F, strike=0.03, expiry=2.0, rate=0.01, vol=vol)
    np.testing.assert_allclose(got, ref, rtol=1e-8)


def test_digital_is_minus_dcall_dstrike():
    kw = dict(spot=S, expiry=0.7, rate=0.03, dividend=0.01, vol=0.22)
    dcall = ds.grad(lambda k: np.sum(finance.bsm_price(strike=k, **kw)))(K)
    np.testing.assert_allclose(finance.digital_price(strike=K, **kw), -dcall, rtol=1e-12)
    dput = ds.grad(lambda k: np.sum(finance.bsm_price(strike=k, is_call=False, **kw)))(K)
    np.testing.assert_allclose(finance.digital_price(strike=K, is_call=False, **kw), dput,
                               rtol=1e-12)
    both = finance.digital_price(strike=K, **kw) + finance.digital_price(strike=K, is_call=False,
                                                                         **kw)
    np.testing.assert_allclose(both, np.exp(-0.03 * 0.7), rtol=1e-14)


@pytest.mark.parametrize("pricer,under", [(finance.bsm_price, "spot"),
                                          (finance.black76_price, "forward"),
                                          (finance.bachelier_price, "forward"),
                                          (finance.digital_price, "spot")])
def test_check_grads_second_order(pricer, under):
    vol = 30.0 if pricer is finance.bachelier_price else 0.3

    def f(u, k, t, r, v):
        return pricer(**{under: u}, strike=k, expiry=t, rate=r, vol=v,
                      is_call=np.array([True, False]))

    check_grads(f, (100.0, np.array([95.0, 110.0]), 0.8, 0.02, vol), order=2)


def test_greeks_of_other_pricers_match_finite_differences():
    kw = dict(forward=100.0, strike=np.array([90.0, 105.0]), expiry=0.5, rate=0.02, vol=0.25)
    g = finance.greeks(finance.black76_price, **kw)
    h = 1e-4

    def bump(name, d):
        return finance.black76_price(**{**kw, name: kw[name] + d})

    np.testing.assert_allclose(g["delta"], (bump("forward", h) - bump("forward", -h)) / (2 * h),
                               rtol=1e-7)
    np.testing.assert_allclose(g["vega"], (bump("vol", h) - bump("vol", -h)) / (2 * h), rtol=1e-7)
    np.testing.assert_allclose(g["theta"], -(bump("expiry", h) - bump("expiry", -h)) / (2 * h),
                               rtol=1e-7)
    np.testing.assert_allclose(g["volga"], (bump("vol", h) - 2 * g["price"] + bump("vol", -h))
                               / h**2, rtol=1e-4)


@pytest.mark.parametrize("name,value,match", [
    ("vol", -0.2, "vol must be > 0"), ("vol", 0.0, "vol must be > 0"),
    ("expiry", 0.0, "expiry must be > 0"), ("spot", np.nan, "spot must be finite"),
    ("strike", np.array([100.0, -1.0]), r"strike must be > 0, got -1.0 at index \(1,\)"),
    ("rate", np.inf, "rate must be finite")])
def test_bad_input_names_the_argument(name, value, match):
    kw = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.0, vol=0.2)
    kw[name] = value
    with pytest.raises(ValueError, match=match):
        finance.bsm_price(**kw)


def test_bad_is_call_and_positional_use():
    with pytest.raises(TypeError, match="is_call must be bool"):
        finance.bsm_price(spot=1.0, strike=1.0, expiry=1.0, vol=0.2, is_call="call")
    with pytest.raises(TypeError):
        finance.bsm_price(100.0, 100.0, 1.0, 0.0, 0.0, 0.2)  # keyword-only


def test_quantlib_european():
    ql = pytest.importorskip("QuantLib")
    today = ql.Date(15, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    dc = ql.Actual365Fixed()
    spot, strike, r, q, vol = 100.0, 95.0, 0.04, 0.015, 0.27
    maturity = today + 365
    T = dc.yearFraction(today, maturity)
    process = ql.BlackScholesMertonProcess(
        ql.QuoteHandle(ql.SimpleQuote(spot)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, q, dc)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, r, dc)),
        ql.BlackVolTermStructureHandle(ql.BlackConstantVol(today, ql.NullCalendar(), vol, dc)))
    for is_call, kind in ((True, ql.Option.Call), (False, ql.Option.Put)):
        opt = ql.VanillaOption(ql.PlainVanillaPayoff(kind, strike), ql.EuropeanExercise(maturity))
        opt.setPricingEngine(ql.AnalyticEuropeanEngine(process))
        g = finance.greeks(finance.bsm_price, spot=spot, strike=strike, expiry=T, rate=r,
                           dividend=q, vol=vol, is_call=is_call)
        assert abs(g["price"] - opt.NPV()) < 1e-10
        assert abs(g["delta"] - opt.delta()) < 1e-10
        assert abs(g["gamma"] - opt.gamma()) < 1e-10
        assert abs(g["vega"] - opt.vega()) < 1e-8
        assert abs(g["rho"] - opt.rho()) < 1e-8
        assert abs(g["theta"] - opt.theta()) < 1e-8
