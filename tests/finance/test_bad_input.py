"""The issue's bad-input table, across every pricer that takes the argument: negative or zero
volatility, negative or zero time, non-positive spot or strike, NaN — each a ValueError naming the
argument and the bound (never a NaN price). Correlation matrices and implied-vol bounds have
their own tests (test_basket.py, test_implied_vol.py); a sample of each is repeated here."""

import numpy as np
import pytest

import finance

HP = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
BASE = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.03, vol=0.2)
SMALL_MC = dict(n_paths=16, n_steps=2)
PRICERS = {
    "bsm_price": (finance.bsm_price, {}),
    "digital_price": (finance.digital_price, {}),
    "geometric_asian_price": (finance.geometric_asian_price, {}),
    "barrier_price": (finance.barrier_price, dict(barrier=80.0)),
    "merton_jump_price": (finance.merton_jump_price,
                          dict(jump_intensity=0.5, jump_mean=-0.1, jump_vol=0.1)),
    "lookback_price": (finance.lookback_price, {}),
    "tree_price": (finance.tree_price, dict(n_steps=10)),
    "fd_price": (finance.fd_price, dict(n_space=21, n_time=10)),
    "lsm_price": (finance.lsm_price, dict(n_paths=64, n_steps=2)),
    "mc_price": (finance.mc_price, SMALL_MC),
    "mc_barrier_price": (finance.mc_barrier_price, dict(barrier=80.0, n_paths=16)),
    "mc_lookback_price": (finance.mc_lookback_price, SMALL_MC),
    "merton_mc_price": (finance.merton_mc_price,
                        dict(jump_intensity=0.5, jump_mean=-0.1, jump_vol=0.1, n_paths=16)),
}
CASES = [("vol", -0.2, "vol must be > 0"), ("vol", 0.0, "vol must be > 0"),
         ("expiry", -1.0, "expiry must be > 0"), ("expiry", 0.0, "expiry must be > 0"),
         ("spot", 0.0, "spot must be > 0"), ("spot", -5.0, "spot must be > 0"),
         ("strike", -1.0, "strike must be > 0"), ("strike", 0.0, "strike must be > 0"),
         ("vol", np.nan, "vol must be finite"), ("rate", np.nan, "rate must be finite")]


@pytest.mark.parametrize("pricer", sorted(PRICERS))
@pytest.mark.parametrize("name,value,match", CASES)
def test_black_scholes_family(pricer, name, value, match):
    fn, extra = PRICERS[pricer]
    with pytest.raises(ValueError, match=match):
        fn(**{**BASE, **extra, name: value})


@pytest.mark.parametrize("fn", [finance.heston_price, finance.heston_mc_price,
                                finance.heston_mc_greeks])
@pytest.mark.parametrize("name,value,match", [c for c in CASES if c[0] != "vol"])
def test_heston_family(fn, name, value, match):
    kw = {k: v for k, v in BASE.items() if k != "vol"}
    extra = {} if fn is finance.heston_price else dict(n_paths=16, n_steps=2)
    with pytest.raises(ValueError, match=match):
        fn(**{**kw, **extra, "params": HP, name: value})


@pytest.mark.parametrize("field,value,match", [
    ("sigma", 0.0, "sigma must be > 0"), ("v0", -0.01, "v0 must be > 0"),
    ("theta", np.nan, "theta must be finite"), ("rho", 1.0, "rho must be"),
    ("kappa", -1.0, "kappa must be > 0")])
def test_heston_params(field, value, match):
    kw = dict(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
    with pytest.raises(ValueError, match=match):
        finance.HestonParams(**{**kw, field: value})


def test_correlation_and_implied_vol_bounds():
    corr = np.array([[1.0, 0.9, 0.9], [0.9, 1.0, -0.9], [0.9, -0.9, 1.0]])  # not PSD
    with pytest.raises(ValueError, match="correlation"):
        finance.basket_mc_price(spots=[100.0] * 3, weights=[1 / 3] * 3, strike=100.0,
                                expiry=1.0, vols=[0.2] * 3, correlation=corr, n_paths=16)
    with pytest.raises(ValueError, match="below the upper bound"):
        finance.implied_vol(price=150.0, spot=100.0, strike=100.0, expiry=1.0)
    with pytest.raises(ValueError, match="strictly above the intrinsic value"):
        finance.implied_vol(price=10.0, spot=100.0, strike=80.0, expiry=1.0)


def test_local_vol_and_black76_bachelier():
    lv = finance.ParametricLocalVol(atm_vol=0.2, long_vol=0.2)
    kw = {k: v for k, v in BASE.items() if k != "vol"}
    for name, value, match in [c for c in CASES if c[0] not in ("vol",)]:
        with pytest.raises(ValueError, match=match):
            finance.local_vol_mc_price(**{**kw, "local_vol": lv, "n_paths": 16, name: value})
    for fn in (finance.black76_price, finance.bachelier_price):
        for name, value, match in (("vol", -0.1, "vol must be > 0"),
                                   ("expiry", 0.0, "expiry must be > 0")):
            with pytest.raises(ValueError, match=match):
                fn(**{"forward": 100.0, "strike": 100.0, "expiry": 1.0, "vol": 0.2,
                      name: value})
