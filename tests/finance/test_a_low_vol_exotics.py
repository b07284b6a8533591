"""Barrier and lookback closed forms at low volatility (down to 1e-3), near and far barriers,
short and long expiries, every flag: finite, equal to the same formulas evaluated by mpmath at
50 digits, consistent with parity and the deterministic (σ → 0) limit, finite gradients."""

import itertools

import numpy as np
import pytest

import diffsci as ds
import finance
from diffsci.testing import check_grads

mp = pytest.importorskip("mpmath")
mp.mp.dps = 50

VOLS = (1e-3, 5e-3, 0.02, 0.2, 1.0)
RATIOS = (0.5, 0.9, 0.99, 1.01, 1.1, 2.0)        # barrier / spot
EXPIRIES = (0.01, 1.0, 10.0)
RATES = (-0.02, 0.0, 0.05)
STRIKES = np.array([80.0, 100.0, 120.0])
Q = 0.01


def _n(x):
    return mp.ncdf(x)


def mp_barrier(S, K, H, T, r, q, v, call, down):
    """Haug (2007) §4.17.1 knock-out, term by term in 50-digit arithmetic."""
    S, K, H, T, r, q, v = (mp.mpf(x) for x in (S, K, H, T, r, q, v))
    phi, eta = (1 if call else -1), (1 if down else -1)
    s = v * mp.sqrt(T)
    mu = (r - q - v * v / 2) / (v * v)
    sf, kf = S * mp.exp(-q * T), K * mp.exp(-r * T)

    def ab(x):
        return phi * sf * _n(phi * x) - phi * kf * _n(phi * (x - s))

    def cd(y):
        return (phi * sf * (H / S) ** (2 * (mu + 1)) * _n(eta * y)
                - phi * kf * (H / S) ** (2 * mu) * _n(eta * (y - s)))

    sh = (1 + mu) * s
    a, b = ab(mp.log(S / K) / s + sh), ab(mp.log(S / H) / s + sh)
    c, d = cd(mp.log(H * H / (S * K)) / s + sh), cd(mp.log(H / S) / s + sh)
    above = K > H
    if call:
        return (a - c if above else b - d) if down else (0 if above else a - b + c - d)
    return (a - b + c - d if above else 0) if down else (b - d if above else a - c)


def mp_lookback(S, K, T, r, q, v, call):
    """Haug (2007) §4.15: floating (K None) or fixed strike, continuous monitoring."""
    S, T, r, q, v = (mp.mpf(x) for x in (S, T, r, q, v))
    b = r - q
    sd = v * mp.sqrt(T)

    def bracket(X, sign):
        a1 = (mp.log(S / X) + (b + v * v / 2) * T) / sd
        c = 2 * b / (v * v)
        term = (S / X) ** (-c) * _n(sign * (-a1 + c * sd)) - mp.exp(b * T) * _n(-sign * a1)
        return S * mp.exp(-r * T) / c * sign * term, a1

    df, fq = mp.exp(-r * T), S * mp.exp(-q * T)
    if K is None:
        if call:
            br, a1 = bracket(S, 1)
            return fq * _n(a1) - S * df * _n(a1 - sd) + br
        br, a1 = bracket(S, -1)
        return S * df * _n(sd - a1) - fq * _n(-a1) + br
    K = mp.mpf(K)
    if call:
        X = max(K, S)
        br, a1 = bracket(X, -1)
        return df * max(S - K, 0) + fq * _n(a1) - X * df * _n(a1 - sd) + br
    X = min(K, S)
    br, a1 = bracket(X, 1)
    return df * max(K - S, 0) + X * df * _n(sd - a1) - fq * _n(-a1) + br


def _barrier_grid():
    for v, h, t, r, call, down in itertools.product(VOLS, RATIOS, EXPIRIES, RATES,
                                                     (True, False), (True, False)):
        if (h < 1.0) == down:
            yield v, 100.0 * h, t, r, call, down


@pytest.mark.parametrize("vol", VOLS)
def test_barrier_grid_is_finite_and_matches_mpmath(vol):
    worst = 0.0
    for v, h, t, r, call, down in (g for g in _barrier_grid() if g[0] == vol):
        got = finance.barrier_price(spot=100.0, strike=STRIKES, barrier=h, expiry=t, rate=r,
                                    dividend=Q, vol=v, is_call=call, is_down=down)
        assert np.all(np.isfinite(got)), (v, h, t, r, call, down, got)
        for k, g in zip(STRIKES, got):
            ref = float(mp_barrier(100.0, k, h, t, r, Q, v, call, down))
            assert abs(g - ref) <= 1e-11 * max(1.0, abs(ref)), (v, h, t, r, call, down, k, g, ref)
            worst = max(worst, abs(g - ref))
        vanilla = finance.bsm_price(spot=100.0, strike=STRIKES, expiry=t, rate=r, dividend=Q,
                                    vol=v, is_call=call)
        knock_in = finance.barrier_price(spot=100.0, strike=STRIKES, barrier=h, expiry=t, rate=r,
                                         dividend=Q, vol=v, is_call=call, is_down=down,
                                         knock_in=True)
        assert np.all(np.isfinite(knock_in)) and np.all(got >= -1e-12)
        np.testing.assert_allclose(got + knock_in, vanilla, rtol=0, atol=1e-11)
        assert np.all(got <= vanilla + 1e-11)


def test_reported_low_vol_up_and_out_put():
    """The review's case (NaN before; OverflowError with scalar arguments)."""
    for barrier in (110.0, np.array([110.0, 150.0])):
        v = finance.barrier_price(spot=100.0, strike=100.0, barrier=barrier, expiry=1.0,
                                  rate=0.05, vol=0.005, is_call=False, is_down=False)
        assert np.all(np.isfinite(v))
    # the forward drifts up by 5 % in a year, 200 standard deviations: the put is worthless
    # unless the barrier is far above; with H = 150 it is the vanilla put (≈ 0 as well)
    ref = float(mp_barrier(100.0, 100.0, 110.0, 1.0, 0.05, 0.0, 0.005, False, False))
    assert abs(float(finance.barrier_price(spot=100.0, strike=100.0, barrier=110.0, expiry=1.0,
                                           rate=0.05, vol=0.005, is_call=False,
                                           is_down=False)) - ref) < 1e-15


@pytest.mark.parametrize("vol", VOLS)
def test_lookback_grid_is_finite_and_matches_mpmath(vol):
    for t, r, call in itertools.product(EXPIRIES, RATES, (True, False)):
        for strike in (None, *STRIKES):
            got = finance.lookback_price(spot=100.0, strike=strike, expiry=t, rate=r,
                                         dividend=Q, vol=vol, is_call=call)
            assert np.isfinite(got), (vol, t, r, call, strike)
            assert np.isfinite(finance.lookback_price(spot=100.0, strike=strike, expiry=t,
                                                      rate=r, dividend=Q, vol=vol,
                                                      is_call=call, monitoring_dt=t / 50))
            if abs(r - Q) < 1e-5:   # the b → 0 chord (documented); mpmath has 0/0 there
                continue
            ref = float(mp_lookback(100.0, None if strike is None else float(strike), t, r, Q,
                                    vol, call))
            assert abs(got - ref) <= 1e-10 * max(1.0, abs(ref)), (vol, t, r, call, strike,
                                                                  got, ref)


@pytest.mark.parametrize("call", [True, False])
def test_lookback_deterministic_limit(call):
    """σ → 0: the path is S e^{bt}, so a fixed-strike call pays max(S max(1, e^{bT}) − K, 0),
    a put max(K − S min(1, e^{bT}), 0), discounted; the gap is O(σ√T)."""
    t, r = 2.0, 0.05
    b = r - Q
    for k in STRIKES:
        got = float(finance.lookback_price(spot=100.0, strike=k, expiry=t, rate=r, dividend=Q,
                                           vol=1e-3, is_call=call))
        ext = 100.0 * (max(1.0, np.exp(b * t)) if call else min(1.0, np.exp(b * t)))
        ref = np.exp(-r * t) * max((ext - k) if call else (k - ext), 0.0)
        assert abs(got - ref) < 0.5, (k, got, ref)


def test_low_vol_gradients_are_finite_and_correct():
    def barrier(s, v, h):
        return finance.barrier_price(spot=s, strike=STRIKES, barrier=h, expiry=1.0, rate=0.05,
                                     dividend=Q, vol=v, is_call=False, is_down=False)

    def lookback(s, v, k):
        return finance.lookback_price(spot=s, strike=k, expiry=1.0, rate=0.05, dividend=Q,
                                      vol=v, is_call=True)

    for v in (5e-3, 0.02):
        g = ds.jacrev(barrier, argnums=(0, 1, 2))(100.0, v, 103.0)
        assert all(np.all(np.isfinite(x)) for x in g)
        check_grads(barrier, (100.0, v, 103.0), order=1, eps=1e-8 * max(1.0, v / 1e-2))
        g = ds.jacrev(lookback, argnums=(0, 1, 2))(100.0, v, STRIKES)
        assert all(np.all(np.isfinite(x)) for x in g)
        check_grads(lookback, (100.0, v, STRIKES), order=1, eps=1e-8)
