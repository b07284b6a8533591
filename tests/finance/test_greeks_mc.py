"""Second-order Monte Carlo Greeks by vibrato (``mc_greeks(second_order=True)``, DERIVATIONS §VB)
against the Black–Scholes closed forms, within the stated confidence intervals, over a grid of
strikes, both payoff signs, the sharp digital included."""

import pytest
from scipy.special import ndtr

import finance

pytestmark = pytest.mark.kernels

SECOND = ("gamma", "vanna", "volga")
LEVEL = 2 * ndtr(4.0) - 1  # the ±4 s.e. interval
STRIKES = (70.0, 85.0, 95.0, 100.0, 105.0, 115.0, 130.0)


@pytest.mark.parametrize("is_call", [True, False])
@pytest.mark.parametrize("product,closed", [(finance.Product.EUROPEAN, finance.bsm_price),
                                            (finance.Product.DIGITAL, finance.digital_price)])
def test_vibrato_second_order_within_ci_of_closed_forms(is_call, product, closed):
    z = 4.0  # 4 s.e. per comparison: 42 per product, a false alarm rate ~ 3e-3 (fixed seeds)
    for i, k in enumerate(STRIKES):
        kw = dict(spot=100.0, strike=k, expiry=0.8, rate=0.04, dividend=0.01, vol=0.3,
                  is_call=is_call)
        g = finance.mc_greeks(**kw, product=product, n_paths=200_000, seed=10 + i,
                              second_order=True)
        ref = finance.greeks(closed, **kw)
        for name in SECOND:
            r = g[name]
            assert isinstance(r, finance.MCGreek) and r.n_samples == 100_000
            lo, hi = r.confidence_interval(LEVEL)  # ±4 s.e.
            assert abs(hi - lo - 2 * z * r.stderr) < 1e-9 * r.stderr
            assert lo <= float(ref[name]) <= hi, (k, name, r, float(ref[name]))


def test_vibrato_standard_error_shrinks_like_one_over_root_n():
    kw = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
    a = finance.mc_greeks(**kw, n_paths=40_000, second_order=True)
    b = finance.mc_greeks(**kw, n_paths=160_000, second_order=True)
    for name in SECOND:
        assert 0.4 < b[name].stderr / a[name].stderr < 0.6, name


@pytest.mark.parametrize("bad,match", [
    (dict(product=finance.Product.ASIAN, n_steps=4), "EUROPEAN or DIGITAL"),
    (dict(control_variate=True), "control_variate"),
    (dict(qmc=True, n_paths=8 * 1024), "qmc")])
def test_second_order_refused_where_it_does_not_apply(bad, match):
    kw = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2, second_order=True)
    with pytest.raises(ValueError, match=match):
        finance.mc_greeks(**{**kw, **bad})
