"""Lookback (closed form and bridge Monte Carlo), Merton jump-diffusion Monte Carlo and local-vol
Monte Carlo: prices within standard errors of closed forms, pathwise (and likelihood-ratio) Greeks
against AD of the closed forms, bad input."""

import numpy as np
import pytest

import diffsci as ds
import finance
from diffsci.testing import check_grads

LB = dict(spot=100.0, expiry=1.0, rate=0.05, dividend=0.02, vol=0.25)
# QuantLib 1.44, AnalyticContinuousFloating/FixedLookbackEngine, inputs LB (T = 365/365):
# (strike, is_call) -> NPV
QL_LOOKBACK = {(None, True): 19.298087962269555, (None, False): 19.418793165628053,
               (90.0, True): 31.828012291239332, (100.0, True): 22.315718046232192,
               (110.0, True): 14.26275250662784, (90.0, False): 8.429884821499524,
               (100.0, False): 16.401163081665416, (110.0, False): 25.913457326672557}


@pytest.mark.parametrize("key", sorted(QL_LOOKBACK, key=str))
def test_lookback_closed_form_matches_quantlib(key):
    strike, call = key
    got = float(finance.lookback_price(**LB, strike=strike, is_call=call))
    assert got == pytest.approx(QL_LOOKBACK[key], rel=1e-12)


def test_lookback_closed_form_batches_and_is_smooth_at_zero_carry():
    k = np.array([90.0, 100.0, 110.0])
    got = finance.lookback_price(**LB, strike=k, is_call=True)
    np.testing.assert_allclose(got, [QL_LOOKBACK[(x, True)] for x in k], rtol=1e-12)
    # r = q: the σ²/(2b) term is interpolated, never NaN, and continuous in b
    kw = dict(LB, rate=0.03, dividend=0.03)
    at = float(finance.lookback_price(**kw))
    near = [float(finance.lookback_price(**{**kw, "dividend": 0.03 + d})) for d in (-1e-4, 1e-4)]
    assert np.isfinite(at) and abs(at - 0.5 * sum(near)) < 1e-6
    rho = ds.grad(lambda r: finance.lookback_price(**{**kw, "rate": r}))(0.03)
    up, down = (float(finance.lookback_price(**{**kw, "rate": 0.03 + d})) for d in (1e-4, -1e-4))
    assert rho == pytest.approx((up - down) / 2e-4, rel=1e-5)


@pytest.mark.parametrize("strike,call", [(None, True), (None, False), (95.0, True),
                                         (105.0, False)])
def test_lookback_closed_form_grads(strike, call):
    def f(s, t, r, q, v):
        return finance.lookback_price(spot=s, strike=strike, expiry=t, rate=r, dividend=q, vol=v,
                                      is_call=call)

    check_grads(f, (100.0, 1.0, 0.05, 0.02, 0.25), order=2, modes=("rev",))


@pytest.mark.parametrize("strike,call", [(None, True), (None, False), (110.0, True),
                                         (95.0, False)])
def test_mc_lookback_bridge_is_continuous_monitoring(strike, call):
    r = finance.mc_lookback_price(**LB, strike=strike, is_call=call, n_paths=60_000, n_steps=4,
                                  seed=11)
    ref = float(finance.lookback_price(**LB, strike=strike, is_call=call))
    assert abs(float(r.price) - ref) < 3 * r.stderr, (float(r.price), ref, r.stderr)
    lo, hi = r.ci
    assert lo < float(r.price) < hi


@pytest.mark.parametrize("strike,call", [(None, True), (110.0, True), (None, False),
                                         (95.0, False)])
def test_mc_lookback_discrete_vs_bgk_shift(strike, call):
    """Discrete monitoring (50 dates) against the continuous closed form shifted by
    Broadie–Glasserman–Kou: within 4 s.e. + 1 % (the shift's o(√Δt) error), while the unshifted
    continuous price is off by far more."""
    n = 50
    r = finance.mc_lookback_price(**LB, strike=strike, is_call=call, n_paths=40_000, n_steps=n,
                                  seed=1, bridge=False)
    bgk = float(finance.lookback_price(**LB, strike=strike, is_call=call, monitoring_dt=1 / n))
    cont = float(finance.lookback_price(**LB, strike=strike, is_call=call))
    assert abs(float(r.price) - bgk) < 4 * r.stderr + 0.01 * bgk
    assert abs(float(r.price) - cont) > 8 * r.stderr + 0.03 * cont


def test_mc_lookback_pathwise_greeks_vs_closed_form():
    names = ("spot", "vol", "rate")

    def mc(*x, seed):
        return finance.mc_lookback_price(**{**LB, **dict(zip(names, x))}, strike=105.0,
                                         n_paths=5_000, n_steps=8, seed=seed).price

    x = tuple(LB[k] for k in names)
    grads = np.array([ds.grad(lambda *a, s=s: mc(*a, seed=s), argnums=(0, 1, 2))(*x)
                      for s in range(16)])  # 16 replicates: the s.e. itself is good to ≈ 18 %
    est, se = grads.mean(axis=0), grads.std(axis=0, ddof=1) / np.sqrt(len(grads))
    ref = ds.grad(lambda *a: finance.lookback_price(**{**LB, **dict(zip(names, a))},
                                                    strike=105.0), argnums=(0, 1, 2))(*x)
    assert np.all(np.abs(est - np.array(ref)) < 4 * se), (est, ref, se)


MJ = dict(spot=100.0, strike=95.0, expiry=1.0, rate=0.05, dividend=0.01, vol=0.2,
          jump_intensity=0.5, jump_mean=-0.1, jump_vol=0.15)


@pytest.mark.parametrize("call,n_steps", [(True, 1), (False, 1), (True, 4)])
def test_merton_mc_within_3_se_of_series(call, n_steps):
    r = finance.merton_mc_price(**MJ, is_call=call, n_steps=n_steps, n_paths=80_000, seed=2)
    ref = float(finance.merton_jump_price(**MJ, is_call=call))
    assert abs(float(r.price) - ref) < 3 * r.stderr, (float(r.price), ref, r.stderr)


def test_merton_mc_greeks_with_intensity_lr_term():
    """Pathwise Greeks and ∂/∂λ (pathwise + likelihood ratio) vs AD of the series; without the
    LR term ∂/∂λ would be the compensator part alone (sign and size wrong)."""
    names = ("spot", "vol", "jump_intensity", "jump_mean", "jump_vol")
    x = tuple(MJ[k] for k in names)

    def mc(*a, seed):
        return finance.merton_mc_price(**{**MJ, **dict(zip(names, a))}, n_paths=20_000,
                                       seed=seed).price

    grads = np.array([ds.grad(lambda *a, s=s: mc(*a, seed=s), argnums=tuple(range(5)))(*x)
                      for s in range(8)])
    est, se = grads.mean(axis=0), grads.std(axis=0, ddof=1) / np.sqrt(len(grads))
    ref = np.array(ds.grad(lambda *a: finance.merton_jump_price(**{**MJ, **dict(zip(names, a))}),
                           argnums=tuple(range(5)))(*x))
    assert np.all(np.abs(est - ref) < 4 * se), (est, ref, se)
    assert ref[2] > 0 and est[2] > 0  # the price rises with λ here; pathwise alone is < 0
    p = finance.merton_mc_price(**MJ, n_paths=1000, seed=3)
    q = finance.merton_mc_price(**MJ, n_paths=1000, seed=3)
    assert float(p.price) == float(q.price)


def test_merton_mc_no_jumps_is_black_scholes():
    kw = {**MJ, "jump_intensity": 0.0}
    r = finance.merton_mc_price(**kw, n_paths=40_000, seed=5)
    ref = finance.bsm_price(**{k: MJ[k] for k in ("spot", "strike", "expiry", "rate", "dividend",
                                                  "vol")})
    assert abs(float(r.price) - ref) < 3 * r.stderr


LV = dict(spot=100.0, strike=105.0, expiry=1.0, rate=0.05, dividend=0.01)


def test_flat_local_vol_reproduces_black_scholes():
    lv = finance.ParametricLocalVol(atm_vol=0.2, long_vol=0.2)
    for call in (True, False):
        r = finance.local_vol_mc_price(**LV, local_vol=lv, is_call=call, n_steps=10,
                                       n_paths=40_000, seed=4)
        ref = finance.bsm_price(**LV, vol=0.2, is_call=call)
        assert abs(float(r.price) - ref) < 3 * r.stderr, (float(r.price), ref, r.stderr)


def test_time_dependent_local_vol_is_black_scholes_with_rms_vol_and_its_greeks():
    n = 20
    t = np.arange(n) / n

    def rms(a):
        lv = finance.ParametricLocalVol(atm_vol=a, long_vol=0.15, decay=2.0)
        return np.sqrt(np.mean(lv(t, np.full(n, 100.0)) ** 2))

    def bs(s, a):
        return finance.bsm_price(**{**LV, "spot": s}, vol=rms(a))

    def mc(s, a, seed):
        lv = finance.ParametricLocalVol(atm_vol=a, long_vol=0.15, decay=2.0)
        return finance.local_vol_mc_price(**{**LV, "spot": s}, local_vol=lv, n_steps=n,
                                          n_paths=10_000, seed=seed)

    r = mc(100.0, 0.3, 0)
    assert abs(float(r.price) - float(bs(100.0, 0.3))) < 3 * r.stderr
    grads = np.array([ds.grad(lambda s, a, k=k: mc(s, a, k).price, argnums=(0, 1))(100.0, 0.3)
                      for k in range(8)])
    est, se = grads.mean(axis=0), grads.std(axis=0, ddof=1) / np.sqrt(len(grads))
    ref = np.array(ds.grad(bs, argnums=(0, 1))(100.0, 0.3))
    assert np.all(np.abs(est - ref) < 4 * se), (est, ref, se)


def test_local_vol_callable_and_skew_lowers_otm_call():
    kw = dict(LV, strike=125.0, n_paths=20_000, seed=1)
    flat = finance.local_vol_mc_price(**kw, local_vol=lambda t, s: 0.2 + 0.0 * s)
    skew = finance.ParametricLocalVol(atm_vol=0.2, long_vol=0.2, skew=-2.0)
    low = finance.local_vol_mc_price(**kw, local_vol=skew)
    assert float(low.price) < float(flat.price) - 3 * np.hypot(flat.stderr, low.stderr)


@pytest.mark.parametrize("fn,kw,match", [
    (finance.lookback_price, dict(LB, vol=0.0), "vol must be > 0"),
    (finance.lookback_price, dict(LB, strike=-1.0), "strike must be > 0"),
    (finance.lookback_price, dict(LB, expiry=-1.0), "expiry must be > 0"),
    (finance.lookback_price, dict(LB, monitoring_dt=0.0), "monitoring_dt must be > 0"),
    (finance.mc_lookback_price, dict(LB, spot=0.0), "spot must be > 0"),
    (finance.mc_lookback_price, dict(LB, n_paths=3), "n_paths must be even"),
    (finance.mc_lookback_price, dict(LB, vol=np.array([0.2, 0.3])), "vol must be a scalar"),
    (finance.merton_mc_price, dict(MJ, jump_intensity=-0.1), "jump_intensity must be >= 0"),
    (finance.merton_mc_price, dict(MJ, jump_vol=-0.1), "jump_vol must be >= 0"),
    (finance.merton_mc_price, dict(MJ, vol=-0.2), "vol must be > 0"),
    (finance.merton_mc_price, dict(MJ, n_steps=0), "n_steps must be an int >= 1"),
    (finance.local_vol_mc_price, dict(LV, local_vol=0.2), "local_vol must be a callable"),
    (finance.local_vol_mc_price, dict(LV, local_vol=lambda t, s: 0.2 - 0.0 * s - t),
     "local_vol must return finite vols > 0"),
    (finance.local_vol_mc_price, dict(LV, strike=0.0, local_vol=lambda t, s: 0.2 + 0 * s),
     "strike must be > 0"),
])
def test_bad_input(fn, kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        fn(**kw)


def test_parametric_local_vol_validates():
    with pytest.raises(ValueError, match="atm_vol must be > 0"):
        finance.ParametricLocalVol(atm_vol=-0.2, long_vol=0.2)
    with pytest.raises(ValueError, match="decay must be >= 0"):
        finance.ParametricLocalVol(atm_vol=0.2, long_vol=0.2, decay=-1.0)


DUP = dict(spot=100.0, rate=0.03, dividend=0.01)


def _smile(t, k):
    y = np.log(k / (DUP["spot"] * np.exp((DUP["rate"] - DUP["dividend"]) * t)))
    return 0.2 - 0.04 * np.tanh(2 * y) + 0.03 * np.tanh(2 * y) ** 2


def test_dupire_of_flat_and_term_structure_surfaces():
    s = np.array([60.0, 100.0, 150.0])
    flat = finance.DupireLocalVol(implied_vol=lambda t, k: 0.2 + 0.0 * k, **DUP)
    np.testing.assert_allclose(flat(0.7, s), 0.2, rtol=1e-12)
    # σ_imp(T)² T = 0.04 T + 0.02 T²  ⇒  σ_loc(t)² = 0.04 + 0.04 t
    ts = finance.DupireLocalVol(implied_vol=lambda t, k: np.sqrt(0.04 + 0.02 * t) + 0.0 * k,
                                **DUP)
    np.testing.assert_allclose(ts(0.5, s), np.sqrt(0.06), rtol=1e-12)


@pytest.mark.parametrize("strike", [85.0, 100.0, 115.0])
def test_dupire_monte_carlo_reprices_the_smile(strike):
    """Monte Carlo under the Dupire local vol of a skewed smile returns the smile's own
    Black–Scholes prices (within 3 s.e.; the log-Euler bias at 50 steps is below that)."""
    lv = finance.DupireLocalVol(implied_vol=_smile, **DUP)
    call = strike >= 100.0
    r = finance.local_vol_mc_price(strike=strike, expiry=1.0, local_vol=lv, is_call=call,
                                   n_paths=40_000, n_steps=50, seed=3, **DUP)
    ref = finance.bsm_price(strike=strike, expiry=1.0, vol=_smile(1.0, strike), is_call=call,
                            **DUP)
    assert abs(float(r.price) - ref) < 3 * r.stderr, (float(r.price), ref, r.stderr)


def test_dupire_pathwise_delta_through_nested_forward_mode():
    iv = lambda t, k: np.sqrt(0.04 + 0.02 * t) + 0.0 * k  # noqa: E731
    lv = finance.DupireLocalVol(implied_vol=iv, **DUP)

    def mc(s, seed):
        return finance.local_vol_mc_price(spot=s, strike=105.0, expiry=1.0, rate=DUP["rate"],
                                          dividend=DUP["dividend"], local_vol=lv, n_steps=10,
                                          n_paths=8_000, seed=seed).price

    d = np.array([ds.grad(lambda s, k=k: mc(s, k))(100.0) for k in range(8)])
    ref = finance.greeks(finance.bsm_price, strike=105.0, expiry=1.0, vol=iv(1.0, 105.0),
                         **DUP)["delta"]
    assert abs(d.mean() - ref) < 4 * d.std(ddof=1) / np.sqrt(len(d))


def test_dupire_refuses_arbitrage_and_bad_surfaces():
    def wings(t, k):  # a quadratic smile in log-moneyness: butterfly arbitrage far out
        y = np.log(k / 100.0)
        return 0.2 - 0.1 * y / np.sqrt(t + 0.25) + 0.15 * y * y

    lv = finance.DupireLocalVol(implied_vol=wings, **DUP)
    with pytest.raises(ValueError, match="butterfly arbitrage"):
        lv(0.8, np.array([2.4, 100.0]))
    # w = 0.09 T/(1 + T)² decreases for T > 1
    dec = finance.DupireLocalVol(implied_vol=lambda t, k: 0.3 / (1 + t) + 0.0 * k, **DUP)
    with pytest.raises(ValueError, match="calendar arbitrage"):
        dec(2.0, np.array([100.0]))
    with pytest.raises(TypeError, match="implied_vol must be a callable"):
        finance.DupireLocalVol(implied_vol=0.2, **DUP)
