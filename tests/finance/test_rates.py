"""Yield-curve bootstrap, bond pricing and key-rate durations by nested AD (the paper's demo)."""

import numpy as np
import pytest

import diffsci as ds
import finance
from diffsci.testing import check_grads
from finance import PAPER_MATURITIES as MATS
from finance import PAPER_PAR_RATES as PARS


def _forwards(y):
    return finance.bootstrap(maturities=MATS, par_rates=y).forwards


def test_par_instruments_reprice_to_one():
    curve = finance.bootstrap(maturities=MATS, par_rates=PARS)
    np.testing.assert_allclose(finance.bond_price(curve, maturities=MATS, coupons=PARS), 1.0,
                               atol=1e-14)
    # bills: D(T)(1 + yT) = 1 exactly; the 1-month forward is then ln(1 + yT)/T
    assert abs(curve.forwards[0] - np.log(1 + PARS[0] / 12) * 12) < 1e-14
    assert np.all(np.diff(curve.discount(np.linspace(0, 30, 301))) < 0)


def test_conventions():
    assert finance.treasury_frequency(0.5) is finance.Frequency.AT_MATURITY
    assert finance.treasury_frequency(1.0) is finance.Frequency.SEMIANNUAL
    t, mult, principal = finance.cashflows(2.0, finance.Frequency.SEMIANNUAL)
    np.testing.assert_allclose(t, [0.5, 1.0, 1.5, 2.0])
    np.testing.assert_allclose(mult, 0.5)
    np.testing.assert_allclose(principal, [0, 0, 0, 1])
    flat = finance.ForwardCurve(times=np.array([30.0]), forwards=np.array([0.03]))
    p = finance.bond_price(flat, maturities=[2.0], coupons=[0.05])
    np.testing.assert_allclose(p, 0.025 * np.exp(-0.03 * t).sum() + np.exp(-0.06), rtol=1e-15)


def test_key_rate_durations_of_par_bonds_are_diagonal():
    """The paper's check: each par bond is sensitive only to its own par rate."""
    p, d = finance.key_rate_durations(maturities=MATS, par_rates=PARS, bond_maturities=MATS,
                                      bond_coupons=PARS)
    np.testing.assert_allclose(p, 1.0, atol=1e-14)
    off = d - np.diag(np.diag(d))
    assert np.abs(off).max() < 1e-13
    # a par bill's duration is T/(1 + yT); diagonal entries grow with maturity
    np.testing.assert_allclose(d[0, 0], MATS[0] / (1 + PARS[0] * MATS[0]), rtol=1e-12)
    assert np.all(np.diff(np.diag(d)) > 0)


def test_nested_ad_matches_finite_differences_and_forward_mode():
    jr = ds.jacrev(_forwards)(PARS)
    jf = ds.jacfwd(_forwards)(PARS)
    np.testing.assert_allclose(jr, jf, atol=1e-13)
    h = 1e-6
    fd = np.stack([(_forwards(PARS + h * e) - _forwards(PARS - h * e)) / (2 * h)
                   for e in np.eye(MATS.size)], axis=1)
    np.testing.assert_allclose(jr, fd, atol=1e-7)


def test_portfolio_durations_and_second_order():
    mats, coupons = np.array([1.5, 4.0, 12.0]), np.array([0.03, 0.045, 0.02])
    p, d = finance.key_rate_durations(maturities=MATS, par_rates=PARS, bond_maturities=mats,
                                      bond_coupons=coupons)
    h = 1e-6

    def price(y):
        c = finance.bootstrap(maturities=MATS, par_rates=y)
        return finance.bond_price(c, maturities=mats, coupons=coupons)

    fd = np.stack([(price(PARS + h * e) - price(PARS - h * e)) / (2 * h)
                   for e in np.eye(MATS.size)], axis=1)
    np.testing.assert_allclose(d, -fd / p[:, None], atol=1e-7)
    # the sum of key-rate durations is close to the modified duration of a parallel par shift
    par = (price(PARS + h) - price(PARS - h)) / (2 * h)
    np.testing.assert_allclose(d.sum(axis=1), -par / p, rtol=1e-6)
    check_grads(lambda y: price(y)[2], (PARS,), order=2, modes=("rev",))


@pytest.mark.parametrize("kw,match", [
    (dict(maturities=MATS[::-1], par_rates=PARS), "maturities must be increasing"),
    (dict(maturities=MATS, par_rates=PARS[:3]), "par_rates must have shape"),
    (dict(maturities=MATS, par_rates=np.where(MATS > 5, np.nan, PARS)), "par_rates must be finite"),
    (dict(maturities=-MATS, par_rates=PARS), "maturities must be > 0")])
def test_bad_input(kw, match):
    with pytest.raises(ValueError, match=match):
        finance.bootstrap(**kw)


def test_curve_validation():
    with pytest.raises(ValueError, match="increasing"):
        finance.ForwardCurve(times=np.array([2.0, 1.0]), forwards=np.zeros(2))
    with pytest.raises(ValueError, match="one per pillar"):
        finance.ForwardCurve(times=np.array([1.0, 2.0]), forwards=np.zeros(3))
