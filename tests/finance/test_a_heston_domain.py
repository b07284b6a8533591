"""Heston pricer over its whole documented domain: HESTON_BOUNDS x expiries 1 hour-30 years x
strikes 0.5-2x spot. References: the Riccati ODEs for the characteristic function, an adaptive
quadrature (scipy.integrate.quad) and a much finer fixed rule for prices and Greeks, the
Black-Scholes limit, no-arbitrage bounds, QuantLib when importable."""

import itertools

import numpy as np
import pytest

import diffsci as ds
import finance
from diffsci.testing import check_grads
from finance._analytic import heston as H

from .heston_reference import fine_price, ode_log_char_fn, pricer_angle, quad_price

HOUR = 1.0 / (365.0 * 24.0)
BOUNDS = finance.HESTON_BOUNDS
FIELDS = ("kappa", "theta", "sigma", "rho", "v0")
CORNERS = [finance.HestonParams(*c) for c in itertools.product(*BOUNDS)]


def _random_params(rng, n):
    """Log-uniform in the positive bounds, uniform in rho."""
    out = []
    for _ in range(n):
        vals = [np.exp(rng.uniform(np.log(lo), np.log(hi))) if lo > 0 else rng.uniform(lo, hi)
                for lo, hi in BOUNDS]
        out.append(finance.HestonParams(*(float(v) for v in vals)))
    return out


def _cases():
    """A fixed set over the domain: 12 corners and 12 random interior points, each with an
    expiry and a strike (the extremes 1 hour / 30 years and 0.5 / 2 x spot included)."""
    rng = np.random.default_rng(20261201)
    corners = [CORNERS[i] for i in rng.choice(len(CORNERS), 12, replace=False)]
    cases = []
    for i, p in enumerate(corners + _random_params(rng, 12)):
        t = [HOUR, 30.0][i % 2] if i < 12 else float(np.exp(rng.uniform(np.log(HOUR),
                                                                        np.log(30.0))))
        k = [50.0, 100.0, 200.0][i % 3] if i < 12 else float(100 * np.exp(rng.uniform(
            np.log(0.5), np.log(2.0))))
        cases.append((p, t, k, float(rng.uniform(-0.01, 0.08)), float(rng.uniform(0.0, 0.04))))
    return cases


CASES = _cases()


def _price(p, t, k, r, q, is_call=True, spot=100.0):
    return float(finance.heston_price(spot=spot, strike=k, expiry=t, rate=r, dividend=q,
                                      params=p, is_call=is_call))


def test_characteristic_function_matches_riccati_ode():
    """The closed form, on the real axis and on the pricer's ray, equals the ODE solution (which
    has no branch to get wrong) at corners and interior points, short and long expiries."""
    rng = np.random.default_rng(7)
    sets = [CORNERS[i] for i in rng.choice(len(CORNERS), 6, replace=False)]
    sets += _random_params(rng, 3)
    for p, t in itertools.product(sets, (HOUR, 1.0, 30.0)):
        vals = [float(getattr(p, f)) for f in FIELDS]
        for u, sign in itertools.product((0.3, 4.0, 40.0), (1.0, -1.0)):
            z = u * np.exp(1j * pricer_angle(sign, vals[3])) - 0.5j
            got = np.exp(H.log_char_fn(np.complex128(z), t, *vals))
            ref = np.exp(ode_log_char_fn(z, t, *vals))
            assert abs(got - ref) < 1e-11, (vals, t, u, sign, got, ref)


@pytest.mark.parametrize("case", range(len(CASES)))
def test_price_matches_fine_reference(case):
    p, t, k, r, q = CASES[case]
    ref = float(fine_price(100.0, k, t, r, q, p))
    assert abs(_price(p, t, k, r, q) - ref) < 1e-10, (p, t, k, ref)


@pytest.mark.parametrize("case", [0, 3, 7, 12, 17, 22])
def test_price_matches_adaptive_quad(case):
    p, t, k, r, q = CASES[case]
    ref = quad_price(100.0, k, t, r, q, [float(getattr(p, f)) for f in FIELDS])
    assert abs(_price(p, t, k, r, q) - ref) < 1e-10, (p, t, k, ref)


@pytest.mark.parametrize("p,t,k", [
    (finance.HestonParams(2.0, 0.04, 0.3, -0.7, 0.04), 0.5, 80.0),
    (finance.HestonParams(5.0, 0.1, 1.0, 0.5, 0.02), 3.0, 130.0),
    (finance.HestonParams(0.5, 0.02, 0.5, -0.9, 0.1), 0.05, 95.0)])
def test_rotated_contour_equals_real_axis(p, t, k):
    """Where the real-axis integral is well conditioned it equals the pricer's ray integral (the
    contour may be rotated: no singularity in the wedge)."""
    vals = [float(getattr(p, f)) for f in FIELDS]
    ref = quad_price(100.0, k, t, 0.03, 0.01, vals, angle=0.0)
    assert abs(_price(p, t, k, 0.03, 0.01) - ref) < 1e-10


def test_reported_short_expiry_and_low_variance_cases():
    """The review's reproducers (QuantLib 1.44: 0.42742, 7.6e-8, ~0 at T = 1/360)."""
    p = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
    got = finance.heston_price(spot=100.0, strike=np.array([100.0, 105.0, 120.0]),
                               expiry=1 / 360, rate=0.05, params=p)
    assert abs(got[0] - 0.42742) < 5e-6 and abs(got[1] - 7.6e-8) < 5e-10
    assert 0.0 <= got[2] < 1e-14
    for k, g in zip((100.0, 105.0, 120.0), got):
        assert abs(g - quad_price(100.0, k, 1 / 360, 0.05, 0.0, [2.0, 0.04, 0.3, -0.7, 0.04])) \
            < 1e-12
    low = finance.HestonParams(kappa=2.0, theta=1e-4, sigma=0.3, rho=-0.7, v0=1e-4)
    v = _price(low, 30 / 365, 100.0, 0.05, 0.0)
    assert v > 0 and abs(v - quad_price(100.0, 100.0, 30 / 365, 0.05, 0.0,
                                        [2.0, 1e-4, 0.3, -0.7, 1e-4])) < 1e-12


def test_no_arbitrage_bounds_on_the_corner_grid():
    """All 32 corners x {1 hour, 1 day, 1 year, 30 years} x {0.5, 1, 2} x spot, calls and puts:
    finite and inside the bounds; parity holds to round-off."""
    t = np.array([HOUR, 1 / 365, 1.0, 30.0])[:, None, None]
    k = np.array([50.0, 100.0, 200.0])[None, :, None]
    batch = finance.HestonParams(*(np.array([float(getattr(c, f)) for c in CORNERS])
                                   for f in FIELDS))
    kw = dict(spot=100.0, strike=k, expiry=t, rate=0.05, dividend=0.02, params=batch)
    c = finance.heston_price(**kw)
    p = finance.heston_price(**kw, is_call=False)
    fwd, kd = 100.0 * np.exp(-0.02 * t), k * np.exp(-0.05 * t)
    assert c.shape == (4, 3, 32) and np.all(np.isfinite(c)) and np.all(np.isfinite(p))
    assert np.all(c >= np.maximum(fwd - kd, 0.0)) and np.all(c <= fwd)
    assert np.all(p >= np.maximum(kd - fwd, 0.0)) and np.all(p <= kd)
    np.testing.assert_allclose(c - p, np.broadcast_to(fwd - kd, c.shape), rtol=0, atol=1e-12)


@pytest.mark.parametrize("rho", [-0.7, 0.0])
def test_continuous_into_the_black_scholes_limit(rho):
    """σ → 0: the price tends to Black–Scholes with the integrated variance w (v0 ≠ θ, so the
    variance is time dependent), at rate O(σ) (O(σ²) for ρ = 0), with a finite σ-derivative
    that ds.grad reproduces."""
    t, k = 0.75, np.array([70.0, 100.0, 140.0])
    kappa, theta, v0 = 1.5, 0.06, 0.03
    w = theta * t + (v0 - theta) * (1 - np.exp(-kappa * t)) / kappa
    bs = finance.bsm_price(spot=100.0, strike=k, expiry=t, rate=0.02, dividend=0.01,
                           vol=np.sqrt(w / t))

    def price(s):
        return finance.heston_price(spot=100.0, strike=k, expiry=t, rate=0.02, dividend=0.01,
                                    params=finance.HestonParams(kappa, theta, s, rho, v0))

    slopes = []
    for s in (1e-4, 1e-6, 1e-8):
        gap = price(s) - bs
        assert np.all(np.abs(gap) <= (60 * s if rho else 60 * s * s) + 1e-13), (s, gap)
        slopes.append(gap / s)
    grad = ds.jacfwd(price)(1e-8)
    if rho:  # the first-order term ∝ ρσ: the slope converges, and the derivative is it
        np.testing.assert_allclose(slopes[1], slopes[2], rtol=1e-4)
        np.testing.assert_allclose(grad, slopes[1], rtol=1e-4)
        assert np.all(np.abs(slopes[1]) > 1e-3)
    else:    # no first-order term: the derivative at σ → 0 is 0 (O(σ))
        assert np.all(np.abs(grad) < 1e-6) and np.all(np.abs(slopes[0]) < 1e-2)


GREEK_CASES = [CASES[i] for i in (1, 4, 9, 14, 19)] + [
    (finance.HestonParams(2.0, 0.04, 1e-6, -0.7, 0.04), 1.0, 100.0, 0.05, 0.0)]


@pytest.mark.parametrize("case", range(len(GREEK_CASES)))
def test_greeks_match_fine_reference(case):
    """ds.grad of the pricer (spot, strike, expiry, rate, dividend, the five parameters) against
    ds.grad of the much finer reference rule, to 1e-10 (relative above 1)."""
    p, t, k, r, q = GREEK_CASES[case]

    def mine(s, kk, tt, rr, qq, pp):
        return finance.heston_price(spot=s, strike=kk, expiry=tt, rate=rr, dividend=qq,
                                    params=pp)

    def ref(s, kk, tt, rr, qq, pp):
        return fine_price(s, kk, tt, rr, qq, pp)

    args = (100.0, k, t, r, q, p)
    # the reference has converged: a 1.5x finer rule changes it by < 1e-13
    assert abs(float(fine_price(*args)) - float(fine_price(*args, panels=3000))) < 1e-13
    got = ds.grad(mine, argnums=tuple(range(6)))(*args)
    want = ds.grad(ref, argnums=tuple(range(6)))(*args)
    flat = lambda g: [*g[:5], *(getattr(g[5], f) for f in FIELDS)]  # noqa: E731
    for name, a, b in zip(("spot", "strike", "expiry", "rate", "dividend", *FIELDS), flat(got),
                          flat(want)):
        assert abs(float(a) - float(b)) <= 1e-10 * max(1.0, abs(float(b))), (name, a, b)


@pytest.mark.parametrize("case", [2, 5, 13, 20])
def test_greeks_against_finite_differences(case):
    p, t, k, r, q = CASES[case]

    def f(s, kk, tt, pp):
        return finance.heston_price(spot=s, strike=kk, expiry=tt, rate=r, dividend=q, params=pp)

    check_grads(f, (100.0, k, t, p), order=1)


def test_quantlib_short_expiries_and_corners():
    """QuantLib's adaptive analytic engine (relative tolerance 1e-12: at 1e-14 its integration
    gives up at one-day expiries; where it converges there, the two agree to 3e-13)."""
    ql = pytest.importorskip("QuantLib")
    today = ql.Date(15, 1, 2025)
    ql.Settings.instance().evaluationDate = today
    dc = ql.Actual365Fixed()
    sets = [(2.0, 0.04, 0.3, -0.7, 0.04), (2.0, 1e-4, 0.3, -0.7, 1e-4),
            (1e-3, 1.0, 3.0, -0.999, 1e-4), (20.0, 0.5, 0.05, 0.9, 0.3)]
    for kappa, theta, sigma, rho, v0 in sets:
        proc = ql.HestonProcess(ql.YieldTermStructureHandle(ql.FlatForward(today, 0.05, dc)),
                                ql.YieldTermStructureHandle(ql.FlatForward(today, 0.01, dc)),
                                ql.QuoteHandle(ql.SimpleQuote(100.0)), v0, kappa, theta, sigma,
                                rho)
        engine = ql.AnalyticHestonEngine(ql.HestonModel(proc), 1e-12, 10**7)
        p = finance.HestonParams(kappa, theta, sigma, rho, v0)
        for k, days in itertools.product((60.0, 100.0, 150.0), (1, 30, 2375)):
            opt = ql.VanillaOption(ql.PlainVanillaPayoff(ql.Option.Call, k),
                                   ql.EuropeanExercise(today + days))
            opt.setPricingEngine(engine)
            got = _price(p, days / 365, k, 0.05, 0.01)
            assert abs(got - opt.NPV()) < 1e-9, (kappa, theta, sigma, rho, v0, k, days)
