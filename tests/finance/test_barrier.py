"""Barrier options: the closed form vs Haug's table and QuantLib, its AD Greeks vs finite
differences; the Brownian-bridge Monte Carlo within 4 s.e. of the closed form, and its pathwise
Greeks (survival-probability-weighted payoff) vs finite differences of the closed form."""

import numpy as np
import pytest

import diffsci as ds
import finance
from diffsci.scipy.special import ndtr
from diffsci.testing import check_grads
from finance._barrier_mc import _samples

HAUG = dict(spot=100.0, expiry=0.5, rate=0.08, dividend=0.04, vol=0.25)
#: Haug (2007) Table 4-13, σ = 0.25, rebate 3: (is_call, is_down, strike, barrier) -> value.
HAUG_TABLE = {
    (True, True, 90.0, 95.0): 9.0246, (True, True, 100.0, 95.0): 6.7924,
    (True, True, 110.0, 95.0): 4.8759, (True, False, 90.0, 105.0): 2.6789,
    (True, False, 100.0, 105.0): 2.3580, (True, False, 110.0, 105.0): 2.3453,
    (False, True, 90.0, 95.0): 2.2798, (False, True, 100.0, 95.0): 2.2947,
    (False, True, 110.0, 95.0): 2.6252, (False, False, 90.0, 105.0): 3.7760,
    (False, False, 100.0, 105.0): 5.4932, (False, False, 110.0, 105.0): 7.5187,
}


def _rebate(h, eta, rebate=3.0, spot=100.0, expiry=0.5, rate=0.08, dividend=0.04, vol=0.25):
    """Haug's F term: a rebate paid at the hit (added here since barrier_price has none)."""
    s = vol * np.sqrt(expiry)
    mu = (rate - dividend - 0.5 * vol**2) / vol**2
    lam = np.sqrt(mu**2 + 2 * rate / vol**2)
    z = np.log(h / spot) / s + lam * s
    return rebate * ((h / spot) ** (mu + lam) * ndtr(eta * z)
                     + (h / spot) ** (mu - lam) * ndtr(eta * z - 2 * eta * lam * s))


@pytest.mark.parametrize("key", sorted(HAUG_TABLE))
def test_closed_form_vs_haug_table(key):
    call, down, k, h = key
    v = finance.barrier_price(**HAUG, strike=k, barrier=h, is_call=call, is_down=down)
    assert abs(float(v) + _rebate(h, 1.0 if down else -1.0) - HAUG_TABLE[key]) < 1e-4


def test_batched_parity_and_limits():
    k = np.array([90.0, 100.0, 110.0])
    for call in (True, False):
        for down, h in ((True, 95.0), (False, 105.0)):
            kw = dict(**HAUG, strike=k, barrier=h, is_call=call, is_down=down)
            total = finance.barrier_price(**kw) + finance.barrier_price(**kw, knock_in=True)
            np.testing.assert_allclose(total, finance.bsm_price(**HAUG, strike=k, is_call=call),
                                       rtol=1e-12)
    # a far barrier does not matter
    far = finance.barrier_price(**HAUG, strike=k, barrier=1e-3)
    np.testing.assert_allclose(far, finance.bsm_price(**HAUG, strike=k), rtol=1e-10)


def test_quantlib_when_installed():
    ql = pytest.importorskip("QuantLib")
    today = ql.Date(15, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    dc = ql.Actual365Fixed()
    process = ql.BlackScholesMertonProcess(
        ql.QuoteHandle(ql.SimpleQuote(100.0)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, 0.04, dc)),
        ql.YieldTermStructureHandle(ql.FlatForward(today, 0.08, dc)),
        ql.BlackVolTermStructureHandle(ql.BlackConstantVol(today, ql.NullCalendar(), 0.25, dc)))
    for (call, down, k, h) in HAUG_TABLE:
        kind = ql.Barrier.DownOut if down else ql.Barrier.UpOut
        opt = ql.BarrierOption(kind, h, 0.0, ql.PlainVanillaPayoff(
            ql.Option.Call if call else ql.Option.Put, k), ql.EuropeanExercise(today + 365))
        opt.setPricingEngine(ql.AnalyticBarrierEngine(process))
        v = finance.barrier_price(spot=100.0, strike=k, barrier=h, expiry=1.0, rate=0.08,
                                  dividend=0.04, vol=0.25, is_call=call, is_down=down)
        assert abs(float(v) - opt.NPV()) < 1e-8, (call, down, k, h)


@pytest.mark.parametrize("call,down,k,h", [(True, True, 100.0, 90.0), (True, False, 90.0, 120.0),
                                           (False, True, 100.0, 85.0),
                                           (False, False, 100.0, 115.0)])
def test_closed_form_grads(call, down, k, h):
    def f(s, kk, hh, t, r, q, v):
        return finance.barrier_price(spot=s, strike=kk, barrier=hh, expiry=t, rate=r,
                                     dividend=q, vol=v, is_call=call, is_down=down)

    check_grads(f, (100.0, k, h, 0.5, 0.05, 0.02, 0.25), order=2, modes=("rev", "fwd"))


MC_CASES = [(True, True, 100.0, 90.0), (True, False, 90.0, 120.0), (False, True, 100.0, 85.0),
            (False, False, 100.0, 115.0)]
MC_KW = dict(spot=100.0, expiry=0.5, rate=0.05, dividend=0.02, vol=0.25)


@pytest.mark.parametrize("call,down,k,h", MC_CASES)
@pytest.mark.parametrize("n_steps", [1, 8])
def test_bridge_mc_within_4_se(call, down, k, h, n_steps):
    kw = dict(**MC_KW, strike=k, barrier=h, is_call=call, is_down=down)
    r = finance.mc_barrier_price(**kw, n_paths=100_000, n_steps=n_steps, seed=2)
    assert abs(float(r.price) - float(finance.barrier_price(**kw))) < 3 * r.stderr


def test_discrete_monitoring_is_biased_without_bridge():
    kw = dict(**MC_KW, strike=100.0, barrier=90.0)
    r = finance.mc_barrier_price(**kw, n_paths=100_000, n_steps=20, seed=2, bridge=False)
    assert float(r.price) - float(finance.barrier_price(**kw)) > 8 * r.stderr


@pytest.mark.parametrize("call,down,k,h", MC_CASES)
def test_pathwise_greeks_vs_fd_of_closed_form(call, down, k, h):
    names = ("spot", "strike", "barrier", "expiry", "rate", "dividend", "vol")
    x0 = (100.0, k, h, 0.5, 0.05, 0.02, 0.25)
    phi, eta = (1.0 if call else -1.0), (1.0 if down else -1.0)
    z = np.random.default_rng(7).standard_normal((100_000, 4))

    def closed(*a):
        return float(finance.barrier_price(**dict(zip(names, a)), is_call=call, is_down=down))

    for i, name in enumerate(names):
        tangent = tuple(1.0 if j == i else 0.0 for j in range(7))
        _, d = ds.jvp(lambda *a: _samples(z, *a, phi, eta, True), x0, tangent)
        est, se = d.mean(), d.std(ddof=1) / np.sqrt(len(d))
        eps = 1e-5 * max(1.0, abs(x0[i]))
        up, dn = list(x0), list(x0)
        up[i] += eps
        dn[i] -= eps
        fd = (closed(*up) - closed(*dn)) / (2 * eps)
        assert abs(est - fd) < 4 * se + 1e-6, (name, est, fd, se)
        assert se > 0 or name in ("dividend",)  # the knock-out derivative is not zero


def test_mc_reverse_equals_forward():
    kw = dict(expiry=0.5, rate=0.05, dividend=0.02, strike=100.0, n_paths=2_000, n_steps=3,
              seed=4)

    def f(s, h, v):
        return finance.mc_barrier_price(**kw, spot=s, barrier=h, vol=v).price

    g = ds.grad(f, argnums=(0, 1, 2))(100.0, 90.0, 0.25)
    for i in range(3):
        tan = tuple(1.0 if j == i else 0.0 for j in range(3))
        assert abs(ds.jvp(f, (100.0, 90.0, 0.25), tan)[1] - g[i]) < 1e-10
    assert g[1] < 0  # the barrier's sensitivity (zero for the plain indicator estimator)


@pytest.mark.parametrize("fn", ["barrier_price", "mc_barrier_price"])
@pytest.mark.parametrize("bad,match", [
    (dict(barrier=100.0), "spot must be > barrier"), (dict(barrier=-1.0), "barrier must be > 0"),
    (dict(vol=0.0), "vol must be > 0"), (dict(is_down=1), "is_down must be bool")])
def test_bad_input(fn, bad, match):
    kw = dict(**MC_KW, strike=100.0, barrier=90.0)
    with pytest.raises((ValueError, TypeError), match=match):
        getattr(finance, fn)(**{**kw, **bad})
    if fn == "barrier_price":
        with pytest.raises(ValueError, match="spot must be < barrier"):
            finance.barrier_price(**{**kw, "barrier": 95.0, "is_down": False})
