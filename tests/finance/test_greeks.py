"""``finance.greeks`` over every pricer: closed forms by AD (checked by central differences and
``check_grads``), the tree by its kernel, Monte Carlo as results with standard errors."""

import numpy as np
import pytest

import finance
from diffsci.testing import check_grads

pytestmark = pytest.mark.kernels  # runs the Numba kernels

HP = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
STRIKES = np.array([80.0, 100.0, 125.0])

#: (pricer, arguments): every closed form, batched over strikes.
CLOSED = [
    (finance.bsm_price, dict(spot=100.0, expiry=1.0, rate=0.05, dividend=0.01, vol=0.2)),
    (finance.black76_price, dict(forward=100.0, expiry=1.0, rate=0.05, vol=0.2)),
    (finance.bachelier_price, dict(forward=100.0, expiry=1.0, rate=0.05, vol=20.0)),
    (finance.digital_price, dict(spot=100.0, expiry=1.0, rate=0.05, vol=0.2)),
    (finance.heston_price, dict(spot=100.0, expiry=1.0, rate=0.05, dividend=0.01, params=HP)),
    (finance.barrier_price, dict(spot=100.0, barrier=70.0, expiry=1.0, rate=0.05, vol=0.25)),
    (finance.geometric_asian_price, dict(spot=100.0, expiry=1.0, rate=0.05, vol=0.2)),
    (finance.merton_jump_price, dict(spot=100.0, expiry=1.0, rate=0.05, vol=0.2,
                                     jump_intensity=0.5, jump_mean=-0.1, jump_vol=0.15)),
]
HESTON_FIELDS = {"d_kappa": "kappa", "d_theta_v": "theta", "d_sigma": "sigma",
                 "d_rho_corr": "rho", "d_v0": "v0"}
INPUTS = {"delta": None, "vega": "vol", "theta": "expiry", "rho": "rate",
          "dividend_rho": "dividend", "dual_delta": "strike", "d_barrier": "barrier",
          "d_jump_intensity": "jump_intensity", "d_jump_mean": "jump_mean",
          "d_jump_vol": "jump_vol"}


def _bumped(pricer, kw, name, h):
    if name in HESTON_FIELDS:
        f = HESTON_FIELDS[name]
        p = finance.HestonParams(**{**{k: getattr(HP, k) for k in HESTON_FIELDS.values()},
                                    f: getattr(HP, f) + h})
        return pricer(**{**kw, "params": p})
    arg = INPUTS[name] or ("spot" if "spot" in kw else "forward")
    return pricer(**{**kw, arg: kw.get(arg, 0.0) + h})


@pytest.mark.parametrize("pricer,kw", CLOSED, ids=lambda x: getattr(x, "__name__", ""))
def test_every_first_order_greek_vs_central_differences(pricer, kw):
    kw = {**kw, "strike": STRIKES}
    g = finance.greeks(pricer, **kw)
    expected = {"price", "delta", "gamma"} | ({"vega", "vanna", "volga"} if "vol" in kw else set())
    assert expected <= set(g) <= set(finance.GREEKS)
    if pricer is finance.heston_price:
        assert set(HESTON_FIELDS) <= set(g)
    for name, value in g.items():
        if name in ("price", "gamma", "vanna", "volga"):
            continue
        h = 1e-5
        fd = (_bumped(pricer, kw, name, h) - _bumped(pricer, kw, name, -h)) / (2 * h)
        fd = -fd if name == "theta" else fd
        np.testing.assert_allclose(value, fd, rtol=1e-5, atol=1e-6, err_msg=name)
        assert np.shape(value) == STRIKES.shape


def test_heston_greeks_check_grads_every_parameter():
    def f(s, k, t, r, q, kappa, theta, sigma, rho, v0):
        p = finance.HestonParams(kappa=kappa, theta=theta, sigma=sigma, rho=rho, v0=v0)
        return finance.heston_price(spot=s, strike=k, expiry=t, rate=r, dividend=q, params=p)

    check_grads(f, (100.0, 95.0, 1.0, 0.05, 0.01, 2.0, 0.04, 0.3, -0.7, 0.04))


def test_second_order_greeks_vs_black_scholes_closed_forms():
    from scipy.stats import norm

    s, k, t, r, q, v = 100.0, STRIKES, 0.7, 0.03, 0.01, 0.25
    g = finance.greeks(finance.bsm_price, spot=s, strike=k, expiry=t, rate=r, dividend=q, vol=v)
    d1 = (np.log(s / k) + (r - q + v * v / 2) * t) / (v * np.sqrt(t))
    d2 = d1 - v * np.sqrt(t)
    np.testing.assert_allclose(g["gamma"], np.exp(-q * t) * norm.pdf(d1) / (s * v * np.sqrt(t)))
    np.testing.assert_allclose(g["vanna"], -np.exp(-q * t) * norm.pdf(d1) * d2 / v)
    np.testing.assert_allclose(g["volga"], s * np.exp(-q * t) * norm.pdf(d1) * np.sqrt(t)
                               * d1 * d2 / v)


def test_tree_and_monte_carlo_dispatch():
    kw = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
    t = finance.greeks(finance.tree_price, **kw, n_steps=200)
    assert set(t) == set(finance.TREE_GREEKS)
    mc = finance.greeks(finance.mc_price, **kw, n_paths=20_000)
    bs = finance.greeks(finance.bsm_price, **kw)
    for name in ("price", "delta", "vega", "rho", "theta"):
        r = mc[name]
        assert isinstance(r, finance.MCGreek) and r.n_samples == 10_000
        lo, hi = r.confidence_interval(0.999)
        assert lo < float(bs[name]) < hi, (name, r, float(bs[name]))
        est, se = r  # still a 2-tuple
        assert est == r.value and se == r.stderr
    h = finance.greeks(finance.heston_mc_price, **{k: kw[k] for k in kw if k != "vol"},
                       params=HP, n_paths=4000, n_steps=10)
    assert set(h) == set(finance.HESTON_GREEKS) and all(np.isfinite(x.stderr) for x in h.values())


@pytest.mark.parametrize("bad,match", [
    (dict(spot=True), "bool"), (dict(vol=None), "vol"), (dict(spot="100"), "spot"),
    (dict(strike=np.ones(2), vol=np.ones(3)), "broadcast")])
def test_greeks_bad_input(bad, match):
    kw = dict(spot=100.0, strike=100.0, expiry=1.0, vol=0.2)
    with pytest.raises((TypeError, ValueError), match=match):
        finance.greeks(finance.bsm_price, **{**kw, **bad})


def test_greeks_names_the_missing_argument():
    with pytest.raises(TypeError, match=r"heston_price needs .*params"):
        finance.greeks(finance.heston_price, spot=100.0, strike=100.0, expiry=1.0)
