"""Correlated multi-asset GBM Monte Carlo: the geometric basket vs its closed form (price and AD
Greeks within 4 s.e.), one-asset limits vs BSM, AD vs per-sample Greeks, correlation errors."""

import numpy as np
import pytest

import diffsci as ds
import finance
from finance import Basket

KW = dict(spots=np.array([100.0, 90.0]), weights=np.array([0.6, 0.4]), strike=95.0, expiry=1.5,
          rate=0.04, dividends=np.array([0.01, 0.03]), vols=np.array([0.25, 0.35]),
          correlation=np.array([[1.0, 0.3], [0.3, 1.0]]))
MC = dict(n_paths=200_000, seed=3)


@pytest.mark.parametrize("is_call", [True, False])
def test_geometric_basket_mc_vs_closed_form_price_and_greeks(is_call):
    g = finance.basket_mc_greeks(**KW, is_call=is_call, basket=Basket.GEOMETRIC, **MC)

    def cf(spots, vols, rate):
        return finance.geometric_basket_price(**{**KW, "spots": spots, "vols": vols,
                                                 "rate": rate}, is_call=is_call)

    price = cf(KW["spots"], KW["vols"], KW["rate"])
    delta, vega, rho = ds.grad(cf, argnums=(0, 1, 2))(KW["spots"], KW["vols"], KW["rate"])
    assert abs(g["price"][0] - price) < 3 * g["price"][1]
    for name, ref in (("delta", delta), ("vega", vega), ("rho", rho)):
        est, se = g[name]
        assert np.all(np.abs(est - ref) < 4 * se), (name, est, ref, se)


def test_geometric_basket_closed_form_limits():
    # one asset: BSM; two perfectly correlated equal assets (ρ → 1): BSM on either
    one = finance.geometric_basket_price(spots=[100.0], weights=[1.0], strike=90.0, expiry=2.0,
                                         rate=0.03, dividends=0.01, vols=[0.3],
                                         correlation=[[1.0]], is_call=False)
    ref = finance.bsm_price(spot=100.0, strike=90.0, expiry=2.0, rate=0.03, dividend=0.01,
                            vol=0.3, is_call=False)
    assert abs(one - ref) < 1e-12
    rho = 1.0 - 1e-12
    two = finance.geometric_basket_price(spots=[100.0, 100.0], weights=[0.5, 0.5], strike=90.0,
                                         expiry=2.0, rate=0.03, dividends=0.01, vols=[0.3, 0.3],
                                         correlation=[[1.0, rho], [rho, 1.0]])
    assert abs(two - finance.bsm_price(spot=100.0, strike=90.0, expiry=2.0, rate=0.03,
                                       dividend=0.01, vol=0.3)) < 1e-9


def test_arithmetic_basket_one_asset_is_bsm():
    r = finance.basket_mc_price(spots=[100.0], weights=[1.0], strike=105.0, expiry=1.0,
                                rate=0.05, vols=[0.2], correlation=[[1.0]], **MC)
    ref = finance.bsm_price(spot=100.0, strike=105.0, expiry=1.0, rate=0.05, vol=0.2)
    assert abs(r.price - ref) < 3 * r.stderr


def test_ad_of_price_equals_per_sample_greeks_and_correlation_gradient():
    mc = dict(n_paths=20_000, seed=5)
    g = finance.basket_mc_greeks(**KW, **mc)

    def price(spots, vols, rate, c):
        corr = np.array([[1.0, 0.0], [0.0, 1.0]]) + c * np.array([[0.0, 1.0], [1.0, 0.0]])
        return finance.basket_mc_price(**{**KW, "spots": spots, "vols": vols, "rate": rate,
                                          "correlation": corr}, **mc).price

    d, v, r, dc = ds.grad(price, argnums=(0, 1, 2, 3))(KW["spots"], KW["vols"], KW["rate"], 0.3)
    np.testing.assert_allclose(d, g["delta"][0], rtol=1e-10)
    np.testing.assert_allclose(v, g["vega"][0], rtol=1e-10)
    np.testing.assert_allclose(r, g["rho"][0], rtol=1e-10)
    # the pathwise correlation sensitivity is the derivative of the same-seed estimator
    h = 1e-5
    fd = (price(KW["spots"], KW["vols"], KW["rate"], 0.3 + h)
          - price(KW["spots"], KW["vols"], KW["rate"], 0.3 - h)) / (2 * h)
    assert abs(dc - fd) < 1e-4 * max(1.0, abs(fd))
    assert dc > 0  # a call on an arithmetic basket gains from correlation


@pytest.mark.parametrize("corr,match", [
    ([[1.0, 0.9, 0.9], [0.9, 1.0, -0.9], [0.9, -0.9, 1.0]], "must be positive definite"),
    ([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]], "correlation must be positive definite"),
    ([[1.0, 0.2], [0.2, 1.0]], r"correlation must have shape \(3, 3\)"),
    ([[1.0, 0.2, 0.0], [0.1, 1.0, 0.0], [0.0, 0.0, 1.0]], "correlation must be symmetric"),
    ([[1.0, 1.5, 0.0], [1.5, 1.0, 0.0], [0.0, 0.0, 1.0]], "correlation must be <= 1"),
    ([[0.9, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], "correlation must have a unit diag")])
def test_bad_correlation_names_it(corr, match):
    kw = dict(spots=[100.0] * 3, weights=[1 / 3] * 3, strike=100.0, expiry=1.0, vols=[0.2] * 3,
              correlation=corr)
    with pytest.raises(ValueError, match=match):
        finance.basket_mc_price(**kw, n_paths=100)
    with pytest.raises(ValueError, match=match):
        finance.geometric_basket_price(**kw)


@pytest.mark.parametrize("name,value,match", [
    ("vols", [0.2, -0.1], "vols must be > 0"), ("spots", [100.0, 1.0, 2.0], "must be a scalar or"),
    ("weights", [-1.0, 2.0], "weights must be >= 0"), ("n_paths", 3, "n_paths must be even")])
def test_bad_input(name, value, match):
    kw = {**KW, **MC, name: value}
    with pytest.raises(ValueError, match=match):
        finance.basket_mc_price(**kw)
