"""Implied volatility: round trips over the whole price domain, IFT gradients, arbitrage errors."""

import numpy as np
import pytest

import diffsci as ds
import finance
from diffsci.testing import check_grads


@pytest.mark.parametrize("is_call", [True, False])
def test_round_trip_grid(is_call):
    K = np.array([60.0, 85.0, 100.0, 120.0, 170.0])
    T = np.array([0.05, 0.5, 2.0, 10.0])[:, None, None]
    vol = np.array([0.1, 0.3, 1.0, 2.5])[:, None]
    kw = dict(spot=100.0, strike=K, expiry=T, rate=0.03, dividend=0.01, is_call=is_call)
    p = finance.bsm_price(vol=vol, **kw)
    # quotes whose time value is below round-off cannot identify σ; keep the rest
    F = 100.0 * np.exp(0.02 * T)
    intrinsic = np.exp(-0.03 * T) * np.maximum((1 if is_call else -1) * (F - K), 0.0)
    ok = (p - intrinsic) > 1e-9 * np.maximum(p, 1.0)
    p = np.where(ok, p, intrinsic + 1.0)  # any valid quote in the masked slots
    got = finance.implied_vol(price=p, **kw)
    vol_b = np.broadcast_to(vol, got.shape)
    err = np.abs(got - vol_b)[np.broadcast_to(ok, got.shape)]
    assert err.max() < 1e-7, err.max()
    np.testing.assert_allclose(finance.bsm_price(vol=got, **kw), p, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("strike", [50.0, 100.0, 200.0])
def test_whole_price_domain_no_bracketing_failure(strike):
    F = 100.0
    lower, upper = max(F - strike, 0.0), F
    frac = np.array([1e-14, 1e-10, 1e-6, 1e-3, 0.1, 0.5, 0.9, 1 - 1e-6, 1 - 1e-10])
    p = lower + frac * (upper - lower)
    s = finance.implied_vol(price=p, spot=F, strike=strike, expiry=1.0)
    assert np.all(np.isfinite(s)) and np.all(s > 0) and np.all(np.diff(s) > 0)
    np.testing.assert_allclose(finance.bsm_price(spot=F, strike=strike, expiry=1.0, vol=s), p,
                               rtol=1e-9, atol=1e-13)


def test_ift_gradients():
    kw = dict(spot=100.0, strike=110.0, expiry=0.5, rate=0.03)
    p = finance.bsm_price(vol=0.25, **kw)
    vega = finance.greeks(finance.bsm_price, vol=0.25, **kw)["vega"]
    assert abs(ds.grad(lambda q: finance.implied_vol(price=q, **kw))(p) - 1 / vega) < 1e-12
    # σ(V(σ)) = σ: the chain rule through the solver is the identity, to second order
    f = lambda v: finance.implied_vol(price=finance.bsm_price(vol=v, **kw), **kw)  # noqa: E731
    assert abs(ds.grad(f)(0.25) - 1.0) < 1e-10
    assert abs(ds.grad(ds.grad(f))(0.25)) < 1e-8
    K = np.array([90.0, 110.0, 130.0])
    is_call = np.array([True, False, True])
    pk = finance.bsm_price(spot=100.0, strike=K, expiry=0.5, rate=0.03, vol=0.25, is_call=is_call)

    def g(p, s, k, t, r, q):
        return finance.implied_vol(price=p, spot=s, strike=k, expiry=t, rate=r, dividend=q,
                                   is_call=is_call)

    check_grads(g, (pk, 100.0, K, 0.5, 0.03, 0.0), order=2)


@pytest.mark.parametrize("price,match", [
    (20.0, "strictly above the intrinsic value"),  # K = 80: a call is worth > 20
    (101.0, "below the upper bound"), (np.nan, "price must be finite")])
def test_arbitrage_violations_raise(price, match):
    with pytest.raises(ValueError, match=match):
        finance.implied_vol(price=np.array([10.0, price]), spot=100.0,
                            strike=np.array([100.0, 80.0]), expiry=1.0)
