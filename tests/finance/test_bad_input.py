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


# ------------------------------------------------------------------ one input policy, as a table
#: The analytic-side pricers with a valid keyword set and the numeric arguments to perturb.
HP_KW = dict(params=HP)
ANALYTIC = {
    "bsm_price": (finance.bsm_price, dict(BASE), ("spot", "strike", "expiry", "rate", "vol")),
    "black76_price": (finance.black76_price,
                      dict(forward=100.0, strike=100.0, expiry=1.0, rate=0.03, vol=0.2),
                      ("forward", "strike", "expiry", "rate", "vol")),
    "bachelier_price": (finance.bachelier_price,
                        dict(forward=100.0, strike=100.0, expiry=1.0, rate=0.03, vol=20.0),
                        ("forward", "strike", "expiry", "vol")),
    "digital_price": (finance.digital_price, dict(BASE), ("spot", "strike", "vol")),
    "geometric_asian_price": (finance.geometric_asian_price, dict(BASE), ("spot", "vol")),
    "barrier_price": (finance.barrier_price, dict(BASE, barrier=80.0),
                      ("spot", "barrier", "expiry", "vol")),
    "merton_jump_price": (finance.merton_jump_price,
                          dict(BASE, jump_intensity=0.5, jump_mean=-0.1, jump_vol=0.1),
                          ("spot", "jump_mean", "vol")),
    "lookback_price": (finance.lookback_price, dict(BASE), ("spot", "strike", "vol")),
    "heston_price": (finance.heston_price,
                     dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.03, **HP_KW),
                     ("spot", "strike", "expiry", "rate")),
    "fd_price": (finance.fd_price, dict(BASE, n_space=21, n_time=10),
                 ("spot", "strike", "expiry", "vol")),
    "implied_vol": (finance.implied_vol,
                    dict(price=10.0, spot=100.0, strike=100.0, expiry=1.0, rate=0.03),
                    ("price", "spot", "strike", "expiry")),
}
ROWS = [(pricer, name) for pricer, (_, _, names) in ANALYTIC.items() for name in names]


@pytest.mark.parametrize("pricer,name", ROWS)
def test_lists_and_tuples_are_arrays(pricer, name):
    fn, kw, _ = ANALYTIC[pricer]
    base = kw[name]
    values = [base, base * 1.01]
    want = fn(**{**kw, name: np.array(values)})
    for seq in (values, tuple(values)):
        np.testing.assert_allclose(fn(**{**kw, name: seq}), want, rtol=1e-14)


@pytest.mark.parametrize("pricer,name", ROWS)
def test_bools_are_not_numbers(pricer, name):
    fn, kw, _ = ANALYTIC[pricer]
    for flag in (True, np.array([True, False])):
        with pytest.raises(TypeError, match=f"{pricer}: {name} must be real numbers \\(a bool"):
            fn(**{**kw, name: flag})


@pytest.mark.parametrize("pricer,name", ROWS)
def test_non_finite_inputs_name_the_argument(pricer, name):
    fn, kw, _ = ANALYTIC[pricer]
    for bad in (np.inf, -np.inf, np.nan, [1.0, np.nan]):
        with pytest.raises(ValueError, match=f"{pricer}: {name} must be"):
            fn(**{**kw, name: bad})


@pytest.mark.parametrize("pricer", sorted(ANALYTIC))
def test_shapes_that_do_not_broadcast(pricer):
    fn, kw, names = ANALYTIC[pricer]
    a, b = names[0], names[1]
    with pytest.raises(ValueError, match=f"{pricer}: arguments do not broadcast together: .*"
                                         f"{a} \\(3,\\).*{b} \\(2,\\)"):
        fn(**{**kw, a: np.full(3, kw[a]), b: np.full(2, kw[b] * 1.01)})


@pytest.mark.parametrize("pricer", sorted(ANALYTIC))
def test_flags_must_be_bools(pricer):
    fn, kw, _ = ANALYTIC[pricer]
    with pytest.raises(TypeError, match="is_call must be bool"):
        fn(**{**kw, "is_call": 1.0})


def test_heston_params_and_barrier_flags():
    with pytest.raises(TypeError,
                       match="HestonParams: kappa must be real numbers \\(a bool is not one"):
        finance.HestonParams(kappa=True, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
    p = finance.HestonParams(kappa=[1.0, 2.0], theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
    assert isinstance(p.kappa, np.ndarray)
    with pytest.raises(ValueError, match="heston_price: arguments do not broadcast together"):
        finance.heston_price(spot=100.0, strike=[90.0, 100.0, 110.0], expiry=1.0, params=p)
    for flag in ("is_down", "knock_in"):
        with pytest.raises(TypeError, match=f"barrier_price: {flag} must be bool"):
            finance.barrier_price(**BASE, barrier=80.0, **{flag: 0})


@pytest.mark.parametrize("method,t,match", [
    ("discount", -1.0, "ForwardCurve.discount: t must be >= 0, got -1.0"),
    ("discount", [0.5, -0.1], "ForwardCurve.discount: t must be >= 0, got -0.1 at index \\(1,\\)"),
    ("discount", np.nan, "ForwardCurve.discount: t must be finite"),
    ("zero_rate", 0.0, "ForwardCurve.zero_rate: t must be > 0"),
    ("forward", -2.0, "ForwardCurve.forward: t must be >= 0")])
def test_forward_curve_times(method, t, match):
    curve = finance.ForwardCurve(times=np.array([1.0, 2.0]), forwards=np.array([0.02, 0.03]))
    with pytest.raises(ValueError, match=match):
        getattr(curve, method)(t)
    with pytest.raises(TypeError, match=f"ForwardCurve.{method}: t must be real numbers"):
        getattr(curve, method)(True)
    assert float(curve.discount(0.0)) == 1.0
    np.testing.assert_allclose(curve.discount([1.0, 2.0]), np.exp([-0.02, -0.05]), rtol=1e-15)


def test_rates_inputs():
    curve = finance.ForwardCurve(times=[1.0, 2.0], forwards=[0.02, 0.03])
    np.testing.assert_allclose(finance.bond_price(curve, maturities=[2.0], coupons=[0.05]),
                               finance.bond_price(curve, maturities=np.array([2.0]),
                                                  coupons=np.array([0.05])), rtol=1e-15)
    with pytest.raises(TypeError, match="bond_price: coupons must be real"):
        finance.bond_price(curve, maturities=[2.0], coupons=[True])
    with pytest.raises(ValueError, match="bond_price: maturities must be finite"):
        finance.bond_price(curve, maturities=[np.inf], coupons=[0.05])
    with pytest.raises(ValueError, match="bootstrap: par_rates must be finite"):
        finance.bootstrap(maturities=[1.0, 2.0], par_rates=[0.02, np.nan])
    c = finance.bootstrap(maturities=[1.0, 2.0], par_rates=[0.02, 0.025])
    assert np.all(np.isfinite(c.forwards))
    with pytest.raises(ValueError, match="calibrate_heston: arguments do not broadcast"):
        finance.calibrate_heston(spot=100.0, strikes=[90.0, 100.0, 110.0], expiries=[1.0, 2.0],
                                 implied_vols=0.2, x0=HP)
