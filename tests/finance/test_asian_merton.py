"""Geometric Asian (Kemna–Vorst) and Merton jump-diffusion closed forms: QuantLib references,
limits, an independent Fourier reference, AD Greeks vs check_grads, validation."""

import numpy as np
import pytest
from scipy.integrate import quad

import diffsci as ds
import finance
from diffsci.testing import check_grads

# QuantLib 1.44, S = 100, K = 95, r = 5 %, q = 2 %, σ = 30 %, Actual/365:
# AnalyticContinuousGeometricAveragePriceAsianEngine, T = 1: (call, put) and call Greeks;
# AnalyticDiscreteGeometricAveragePriceAsianEngine, fixings every 30 days, T = 360/365.
QL_CONT = (9.527000325500424, 4.054749100973556)
QL_CONT_CALL_GREEKS = dict(delta=0.6372939667650848, gamma=0.020159346026323976,
                           vega=16.97287619249855)
QL_DISC = (9.942275311492462, 4.352895645556657)
KW = dict(spot=100.0, strike=95.0, rate=0.05, dividend=0.02, vol=0.3)
CP = np.array([True, False])


def test_geometric_asian_quantlib_references():
    got = finance.geometric_asian_price(**KW, expiry=1.0, is_call=CP)
    np.testing.assert_allclose(got, QL_CONT, rtol=1e-12)
    got = finance.geometric_asian_price(**KW, expiry=360 / 365, is_call=CP, n_fixings=12)
    np.testing.assert_allclose(got, QL_DISC, rtol=1e-12)
    g = finance.greeks(finance.geometric_asian_price, **KW, expiry=1.0)
    for k, v in QL_CONT_CALL_GREEKS.items():
        assert abs(g[k] - v) < 1e-9 * max(1.0, abs(v)), k


def test_geometric_asian_limits_and_parity():
    kw = dict(KW, expiry=np.array([0.5, 1.0, 2.0])[:, None], strike=np.array([80.0, 100.0, 120.0]))
    # one fixing at T is the European option
    np.testing.assert_allclose(finance.geometric_asian_price(**kw, n_fixings=1),
                               finance.bsm_price(**kw), rtol=1e-13)
    # many fixings converge to continuous averaging (error O(1/n))
    cont = finance.geometric_asian_price(**kw)
    fine = finance.geometric_asian_price(**kw, n_fixings=100_000)
    np.testing.assert_allclose(fine, cont, rtol=1e-4)
    # Kemna–Vorst: continuous = BSM with σ/√3 and q_A = (r + q + σ²/6)/2
    r, q, s = KW["rate"], KW["dividend"], KW["vol"]
    ref = finance.bsm_price(**{**kw, "vol": s / np.sqrt(3), "dividend": 0.5 * (r + q + s**2 / 6)})
    np.testing.assert_allclose(cont, ref, rtol=1e-12)
    # parity: C − P = e^{−rT}(E[G] − K)
    c = finance.geometric_asian_price(**kw, n_fixings=12)
    p = finance.geometric_asian_price(**kw, n_fixings=12, is_call=False)
    call0 = finance.geometric_asian_price(**{**kw, "strike": 1e-300}, n_fixings=12)
    np.testing.assert_allclose(c - p, call0 - kw["strike"] * np.exp(-r * kw["expiry"]),
                               rtol=1e-11)


def test_geometric_asian_matches_monte_carlo_geometric_payoff():
    # independent: exact GBM paths on the fixing grid, geometric payoff, fixed seed
    rng = np.random.default_rng(7)
    n, paths, T = 12, 400_000, 1.0
    r, q, s = KW["rate"], KW["dividend"], KW["vol"]
    dt = T / n
    z = rng.standard_normal((paths, n))
    logs = np.log(KW["spot"]) + np.cumsum((r - q - 0.5 * s**2) * dt + s * np.sqrt(dt) * z, axis=1)
    pay = np.exp(-r * T) * np.maximum(np.exp(logs.mean(axis=1)) - KW["strike"], 0.0)
    ref = finance.geometric_asian_price(**KW, expiry=T, n_fixings=n)
    assert abs(pay.mean() - ref) < 3 * pay.std() / np.sqrt(paths)


JUMPS = dict(jump_intensity=0.5, jump_mean=-0.1, jump_vol=0.25)


def lewis_call(S, K, T, r, q, vol, lam, mj, dj):
    """Independent reference: Lewis (2001) Fourier formula with Merton's characteristic function
    of X = ln(S_T/S) − (r − q)T."""
    k = np.exp(mj + 0.5 * dj**2) - 1.0

    def phi(u):
        return np.exp(T * (-0.5 * vol**2 * u * u - 1j * u * (0.5 * vol**2 + lam * k)
                           + lam * (np.exp(1j * u * mj - 0.5 * dj**2 * u * u) - 1.0)))

    kap = np.log(S / K) + (r - q) * T
    val = quad(lambda u: (np.exp(1j * u * kap) * phi(u - 0.5j)).real / (u * u + 0.25), 0, np.inf,
               epsabs=1e-13, epsrel=1e-12, limit=500)[0]
    return S * np.exp(-q * T) - np.sqrt(S * K) * np.exp(-(r + q) * T / 2) / np.pi * val


@pytest.mark.parametrize("strike,expiry", [(80.0, 0.25), (95.0, 1.0), (130.0, 3.0)])
def test_merton_matches_fourier_reference_and_parity(strike, expiry):
    kw = dict(KW, strike=strike, expiry=expiry)
    c = finance.merton_jump_price(**kw, **JUMPS)
    p = finance.merton_jump_price(**kw, **JUMPS, is_call=False)
    ref = lewis_call(100.0, strike, expiry, 0.05, 0.02, 0.3, *JUMPS.values())
    assert abs(c - ref) < 1e-8
    # the same quadrature reproduces BSM at λ = 0 (checks the reference itself)
    assert abs(lewis_call(100.0, strike, expiry, 0.05, 0.02, 0.3, 0.0, 0.0, 0.0)
               - finance.bsm_price(**kw)) < 1e-8
    fwd = 100 * np.exp(-0.02 * expiry) - strike * np.exp(-0.05 * expiry)
    np.testing.assert_allclose(c - p, fwd, atol=1e-11)


def test_merton_limits():
    kw = dict(KW, strike=np.array([70.0, 100.0, 140.0]), expiry=np.array([0.2, 1.0, 4.0])[:, None])
    bsm = finance.bsm_price(**kw, is_call=CP[:, None, None])
    zero = finance.merton_jump_price(**kw, jump_intensity=0.0, jump_mean=0.3, jump_vol=0.4,
                                     is_call=CP[:, None, None])
    np.testing.assert_allclose(zero, bsm, rtol=1e-12, atol=1e-14)
    # degenerate jumps of size 1 (μ_J = δ = 0) change nothing
    np.testing.assert_allclose(finance.merton_jump_price(**kw, jump_intensity=3.0, jump_mean=0.0,
                                                         jump_vol=0.0), bsm[0], rtol=1e-12)
    # the truncation bound: tol 1e-6 vs 1e-14 agree to tol·max(S, K)
    a = finance.merton_jump_price(**kw, jump_intensity=5.0, jump_mean=-0.2, jump_vol=0.3,
                                  tol=1e-6)
    b = finance.merton_jump_price(**kw, jump_intensity=5.0, jump_mean=-0.2, jump_vol=0.3,
                                  tol=1e-14)
    assert np.max(np.abs(a - b)) <= 1e-6 * 140


def test_merton_greeks_by_ad():
    # every argument by check_grads to second order; at λ = 0 (the boundary) ∂V/∂λ vs a one-sided
    # difference (the truncation keeps n ≤ 2, so it is exact there)
    def f(s, k, t, v, lam, mj, dj):
        return finance.merton_jump_price(spot=s, strike=k, expiry=t, rate=0.03, vol=v,
                                         jump_intensity=lam, jump_mean=mj, jump_vol=dj,
                                         is_call=CP)

    check_grads(f, (100.0, np.array([90.0, 110.0]), 0.8, 0.25, 0.7, -0.05, 0.2), order=2)
    dlam = ds.grad(lambda lam: np.sum(f(100.0, np.array([90.0, 110.0]), 0.8, 0.25, lam, -0.05,
                                         0.2)))(0.0)
    h = 1e-6
    fd = (np.sum(f(100.0, np.array([90.0, 110.0]), 0.8, 0.25, h, -0.05, 0.2))
          - np.sum(f(100.0, np.array([90.0, 110.0]), 0.8, 0.25, 0.0, -0.05, 0.2))) / h
    assert abs(dlam - fd) < 1e-5 * max(1.0, abs(fd))
    g = finance.greeks(finance.merton_jump_price, **KW, expiry=1.0, jump_intensity=0.0,
                       jump_mean=0.1, jump_vol=0.2)
    ref = finance.greeks(finance.bsm_price, **KW, expiry=1.0)
    for name in ref:
        np.testing.assert_allclose(g[name], ref[name], rtol=1e-12, err_msg=name)


def test_asian_greeks_check_grads():
    def f(s, k, t, r, v):
        return finance.geometric_asian_price(spot=s, strike=k, expiry=t, rate=r, vol=v,
                                             is_call=CP, n_fixings=6)

    check_grads(f, (100.0, np.array([95.0, 105.0]), 0.8, 0.02, 0.3), order=2)


@pytest.mark.parametrize("pricer,extra,name,value,match", [
    (finance.geometric_asian_price, {}, "vol", 0.0, "vol must be > 0"),
    (finance.geometric_asian_price, {}, "n_fixings", 0, "n_fixings must be an int >= 1"),
    (finance.geometric_asian_price, {}, "expiry", -1.0, "expiry must be > 0"),
    (finance.merton_jump_price, JUMPS, "jump_intensity", -0.1, "jump_intensity must be >= 0"),
    (finance.merton_jump_price, JUMPS, "jump_vol", np.nan, "jump_vol must be finite"),
    (finance.merton_jump_price, JUMPS, "jump_intensity", 1e5, "needs .* series terms"),
    (finance.merton_jump_price, JUMPS, "spot", 0.0, "spot must be > 0")])
def test_bad_input(pricer, extra, name, value, match):
    kw = dict(KW, expiry=1.0, **extra)
    kw[name] = value
    with pytest.raises(ValueError, match=match):
        pricer(**kw)
