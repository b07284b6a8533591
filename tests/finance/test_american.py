"""American exercise: the CRR tree vs published/QuantLib references, its AD Greeks vs finite
differences and the lattice, Longstaff–Schwartz vs the (Bermudan) tree within 4 standard errors."""

import numpy as np
import pytest

import diffsci as ds
import finance
from diffsci.testing import check_grads

pytestmark = pytest.mark.kernels  # runs the Numba kernels

PUT = dict(spot=36.0, strike=40.0, expiry=1.0, rate=0.06, vol=0.2)
#: Longstaff & Schwartz (2001), Table 1 row S = 36, σ = 0.2, T = 1 (converged lattice value).
LS_REF = 4.4867
#: QuantLib 1.44 CRR, 1000 steps, American put S = K = 100, r = 5%, σ = 20%, T = 1 (issue 7).
QL_CRR_1000 = 6.0896


def test_tree_converges_to_reference():
    for n in (500, 1000, 2000):
        assert abs(float(finance.tree_price(**PUT, n_steps=n)) - LS_REF) < 2e-4


#: The converged ATM American put (S = K = 100, r = 5 %, σ = 20 %, T = 1): BBS with Richardson
#: extrapolation, 2 V(2n) − V(n), gives 6.09040, 6.09038, 6.09037 at n = 1000, 2000, 4000;
#: Crank–Nicolson with 401/801/1601 nodes 6.08895, 6.08983, 6.09014 (→ 6.0903).
ATM_CONVERGED = 6.0904


def test_atm_reference_values_and_which_is_right():
    kw = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
    v = {n: float(finance.tree_price(**kw, n_steps=n)) for n in (2000, 4000, 8000)}
    for n in (2000, 4000):
        assert abs(2 * v[2 * n] - v[n] - ATM_CONVERGED) < 1e-4
    # the defaults (500 steps, BBS last step): 6.0915, +0.0011 from the converged value; the
    # plain 1000-step CRR tree (QuantLib's figure): 6.0896, −0.0008
    assert abs(float(finance.tree_price(**kw)) - 6.0915) < 5e-5
    crr = float(finance.tree_price(**kw, n_steps=1000, smooth=False))
    assert abs(crr - QL_CRR_1000) < 5e-5
    assert abs(crr - ATM_CONVERGED) < 1e-3 and abs(float(finance.tree_price(**kw)) -
                                                    ATM_CONVERGED) < 1.2e-3
    fd = float(finance.fd_price(**kw, n_space=801, n_time=1600))
    assert abs(fd - ATM_CONVERGED) < 1e-3


def test_plain_crr_matches_quantlib_number():
    v = finance.tree_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2,
                           n_steps=1000, smooth=False)
    assert abs(float(v) - QL_CRR_1000) < 1e-4


def test_quantlib_crr_when_installed():
    ql = pytest.importorskip("QuantLib")
    today = ql.Date(15, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    dc = ql.Actual365Fixed()
    process = ql.BlackScholesMertonProcess(
        ql.QuoteHandle(ql.SimpleQuote(100.0)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, 0.0, dc)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, 0.05, dc)),
        ql.BlackVolTermStructureHandle(ql.BlackConstantVol(today, ql.NullCalendar(), 0.2, dc)))
    opt = ql.VanillaOption(ql.PlainVanillaPayoff(ql.Option.Put, 100.0),
                           ql.AmericanExercise(today, today + 365))
    opt.setPricingEngine(ql.BinomialVanillaEngine(process, "crr", 1000))
    v = finance.tree_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2,
                           n_steps=1000, smooth=False)
    assert abs(float(v) - opt.NPV()) < 1e-3


def test_european_tree_matches_bsm_and_batches():
    spots = np.array([80.0, 100.0, 120.0])
    calls = np.array([True, False, True])
    kw = dict(strike=100.0, expiry=0.5, rate=0.03, dividend=0.01, vol=0.25)
    v = finance.tree_price(spot=spots, **kw, is_call=calls, american=False, n_steps=800)
    ref = finance.bsm_price(spot=spots, **kw, is_call=calls)
    np.testing.assert_allclose(v, ref, atol=2e-3)
    # American call without dividends is European
    v = finance.tree_price(spot=spots, **{**kw, "dividend": 0.0}, is_call=True, n_steps=800)
    np.testing.assert_allclose(v, finance.bsm_price(spot=spots, **{**kw, "dividend": 0.0}),
                               atol=2e-3)


def test_tree_greeks_by_ad_vs_finite_differences_of_the_tree():
    g = finance.greeks(finance.tree_price, **PUT, n_steps=400)

    def f(**kw):
        return float(finance.tree_price(**{**PUT, **kw}, n_steps=400))

    h = 0.5  # wide enough to average the lattice's exercise switches
    fd_delta = (f(spot=36 + h) - f(spot=36 - h)) / (2 * h)
    fd_gamma = (f(spot=36 + h) - 2 * f() + f(spot=36 - h)) / h**2
    fd_vega = (f(vol=0.21) - f(vol=0.19)) / 0.02
    fd_rho = (f(rate=0.061) - f(rate=0.059)) / 0.002
    assert abs(g["delta"] - fd_delta) < 2e-3
    assert abs(g["gamma"] - fd_gamma) < 5e-3
    assert abs(g["vega"] - fd_vega) < 0.05
    assert abs(g["rho"] - fd_rho) < 0.05
    # American put delta lies between −1 and the European delta, gamma above the European gamma
    eu = finance.greeks(finance.bsm_price, **PUT, is_call=False)
    assert -1 < g["delta"] < eu["delta"] and g["gamma"] > eu["gamma"]


def test_tree_modes_agree():
    # the lattice is anchored at the plain spot, so finite differences of tree_price (which move
    # the lattice) are not its derivative; the modes must agree with each other
    def f(s, v):
        return finance.tree_price(**{**PUT, "spot": s, "vol": v}, n_steps=60)

    g = finance.greeks(finance.tree_price, **PUT, n_steps=60)
    h = ds.hessian(f, argnums=(0, 1))(36.0, 0.2)
    assert abs(h[0][0] - g["gamma"]) < 1e-10 and abs(h[0][1] - g["vanna"]) < 1e-10
    _, tan = ds.jvp(lambda s: f(s, 0.2), (36.0,), (1.0,))
    assert abs(tan - g["delta"]) < 1e-12
    check_grads(lambda v, r: finance.tree_price(**{**PUT, "vol": v, "rate": r}, n_steps=60,
                                                american=False), (0.2, 0.06))


def test_lsm_within_4_se_of_bermudan_tree_and_greeks():
    r = finance.lsm_price(**PUT, n_steps=50, n_paths=50_000, seed=1)
    ref = float(finance.tree_price(**PUT, n_steps=1000, exercise_every=20))
    assert abs(float(r.price) - ref) < 4 * r.stderr
    assert abs(float(r.price) - LS_REF) < 4 * r.stderr + 0.015  # Bermudan bias, 50 dates
    d, v = ds.grad(lambda s, vol: finance.lsm_price(**{**PUT, "spot": s, "vol": vol},
                                                     n_paths=50_000, seed=1).price,
                   argnums=(0, 1))(36.0, 0.2)
    t = finance.greeks(finance.tree_price, **PUT, n_steps=1000, exercise_every=20)
    assert abs(d - t["delta"]) < 0.02 and abs(v - t["vega"]) < 0.4


@pytest.mark.parametrize("bad,match", [
    (dict(vol=-0.1), "vol must be > 0"), (dict(spot=0.0), "spot must be > 0"),
    (dict(n_steps=1), "n_steps must be an int >= 2"),
    (dict(exercise_every=0), "exercise_every"), (dict(is_call=1), "is_call must be bool"),
    (dict(rate=5.0, n_steps=2), "too coarse")])
def test_tree_bad_input(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        finance.tree_price(**{**PUT, **bad})


@pytest.mark.parametrize("bad,match", [
    (dict(spot=np.array([36.0, 40.0])), "spot must be a scalar"),
    (dict(n_paths=3), "n_paths must be even"), (dict(degree=0), "degree"),
    (dict(expiry=-1.0), "expiry must be > 0")])
def test_lsm_bad_input(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        finance.lsm_price(**{**PUT, **bad})


def test_crank_nicolson_vs_tree_and_reference_range():
    # issue 7: FD 6.0880–6.0896 for the ATM American put (QuantLib 1.44)
    v = float(finance.fd_price(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2))
    assert 6.0880 <= v <= 6.0896
    spots = np.array([30.0, 36.0, 44.0])
    calls = np.array([False, False, True])
    kw = dict(strike=40.0, expiry=1.0, rate=0.06, dividend=0.03, vol=0.25)
    fd = finance.fd_price(spot=spots, **kw, is_call=calls, n_space=301, n_time=400)
    tree = finance.tree_price(spot=spots, **kw, is_call=calls, n_steps=2000)
    np.testing.assert_allclose(fd, tree, atol=3e-3)
    eu = finance.fd_price(spot=spots, **kw, is_call=calls, american=False, n_space=301,
                          n_time=400)
    np.testing.assert_allclose(eu, finance.bsm_price(spot=spots, **kw, is_call=calls), atol=3e-3)


def test_crank_nicolson_greeks_vs_tree():
    g = finance.greeks(finance.fd_price, **PUT, n_space=201, n_time=300)
    t = finance.greeks(finance.tree_price, **PUT, n_steps=1000)
    for name, tol in (("price", 3e-3), ("delta", 1e-3), ("gamma", 2e-4), ("vega", 0.08),
                      ("rho", 0.06), ("theta", 0.005)):
        assert abs(g[name] - t[name]) < tol, (name, g[name], t[name])


@pytest.mark.parametrize("bad,match", [
    (dict(n_space=100), "n_space must be an odd int"), (dict(n_time=2), "n_time"),
    (dict(width=0.0), "width must be > 0"), (dict(strike=-1.0), "strike must be > 0")])
def test_fd_bad_input(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        finance.fd_price(**{**PUT, **bad})
