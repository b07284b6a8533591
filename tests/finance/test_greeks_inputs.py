"""Input handling of the Greeks/tree/Monte Carlo pricers as one table: enum arguments by their
string names, lists and tuples as arrays, bools refused as numbers, non-finite values and shapes
that do not broadcast refused naming the function and the arguments."""

import numpy as np
import pytest

import finance

pytestmark = pytest.mark.kernels  # runs the Numba kernels

HP = finance.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
BASE = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.05, vol=0.2)
SMALL = dict(n_paths=2000)

#: Every pricer of this part with small valid arguments.
PRICERS = {
    "tree_price": (finance.tree_price, dict(BASE, n_steps=20)),
    "tree_greeks": (finance.tree_greeks, dict(BASE, n_steps=20)),
    "mc_price": (finance.mc_price, dict(BASE, **SMALL)),
    "mc_greeks": (finance.mc_greeks, dict(BASE, **SMALL)),
    "mc_barrier_price": (finance.mc_barrier_price, dict(BASE, barrier=80.0, **SMALL)),
    "mc_lookback_price": (finance.mc_lookback_price, dict(BASE, n_steps=4, **SMALL)),
    "merton_mc_price": (finance.merton_mc_price, dict(BASE, jump_intensity=0.5, jump_mean=-0.1,
                                                      jump_vol=0.1, **SMALL)),
    "lsm_price": (finance.lsm_price, dict(BASE, n_steps=4, **SMALL)),
    "heston_mc_price": (finance.heston_mc_price,
                        dict(spot=100.0, strike=100.0, expiry=1.0, params=HP, n_steps=4, **SMALL)),
}


def _value(r):
    return r.price if hasattr(r, "price") else r["price"] if isinstance(r, dict) else r


# (pricer, argument, enum member, its string spellings)
ENUMS = [
    ("mc_price", "product", finance.Product.ASIAN, ("asian", "ASIAN", " Asian ")),
    ("mc_price", "product", finance.Product.GEOMETRIC_ASIAN, ("geometric_asian",
                                                               "geometric-asian")),
    ("mc_greeks", "estimator", finance.GreekEstimator.LIKELIHOOD_RATIO,
     ("likelihood_ratio", "LIKELIHOOD_RATIO")),
    ("heston_mc_price", "scheme", finance.HestonScheme.FULL_TRUNCATION,
     ("full_truncation", "FULL_TRUNCATION")),
]


@pytest.mark.parametrize("who,arg,member,spellings", ENUMS)
def test_enum_arguments_accept_their_names(who, arg, member, spellings):
    fn, kw = PRICERS[who]
    kw = dict(kw, n_steps=4)
    ref = _value(fn(**kw, **{arg: member}))
    ref = ref[0] if isinstance(ref, tuple) else ref
    for s in spellings:
        got = _value(fn(**kw, **{arg: s}))
        assert float(got[0] if isinstance(got, tuple) else got) == float(ref)
    with pytest.raises(ValueError, match=f"{who}: {arg} must be a finance.{type(member).__name__}"
                                         f" or one of"):
        fn(**kw, **{arg: "no_such_" + arg})
    with pytest.raises(TypeError, match=f"{who}: {arg} must be"):
        fn(**kw, **{arg: 3.5})


def test_basket_enum_by_name():
    kw = dict(spots=[100.0, 100.0], weights=[0.5, 0.5], strike=100.0, expiry=1.0, rate=0.0,
              vols=[0.2, 0.3], correlation=[[1.0, 0.5], [0.5, 1.0]], n_paths=2000)
    a = finance.basket_mc_price(**kw, basket=finance.Basket.GEOMETRIC)
    b = finance.basket_mc_price(**kw, basket="geometric")
    assert float(a.price) == float(b.price)


@pytest.mark.parametrize("fn", [finance.tree_price, finance.tree_greeks])
def test_lists_and_tuples_are_arrays(fn):
    kw = dict(BASE, n_steps=20)
    a = fn(**{**kw, "spot": np.array([90.0, 110.0]), "strike": np.array([100.0])})
    b = fn(**{**kw, "spot": [90.0, 110.0], "strike": (100.0,)})
    np.testing.assert_array_equal(_value(a), _value(b))
    c = fn(**{**kw, "spot": [90.0, 110.0], "is_call": [True, False]})
    assert np.shape(_value(c)) == (2,)


NUMERIC = ("spot", "strike", "expiry", "rate", "vol")


@pytest.mark.parametrize("who", sorted(PRICERS))
@pytest.mark.parametrize("arg", NUMERIC)
def test_bools_are_not_numbers_and_non_finite_values_are_named(who, arg):
    fn, kw = PRICERS[who]
    if arg not in kw:
        pytest.skip(f"{who} has no {arg}")
    with pytest.raises(TypeError, match=f"{who}: {arg} must be"):
        fn(**{**kw, arg: True})
    for bad in (np.nan, np.inf, -np.inf):
        with pytest.raises(ValueError, match=f"{who}: {arg} must be finite"):
            fn(**{**kw, arg: bad})


@pytest.mark.parametrize("fn,who", [(finance.tree_price, "tree_price"),
                                    (finance.tree_greeks, "tree_greeks")])
def test_shapes_that_do_not_broadcast_name_function_and_arguments(fn, who):
    kw = dict(BASE, n_steps=20)
    with pytest.raises(ValueError, match=rf"{who}: arguments do not broadcast together: "
                                         rf"spot \(2,\), strike \(3,\)"):
        fn(**{**kw, "spot": [90.0, 110.0], "strike": [90.0, 100.0, 110.0]})
    with pytest.raises(ValueError, match=rf"{who}: .*is_call \(3,\)"):
        fn(**{**kw, "spot": [90.0, 110.0], "is_call": [True, False, True]})
    with pytest.raises(ValueError, match=r"greeks: the arguments of bsm_price do not broadcast"):
        finance.greeks(finance.bsm_price, **{**BASE, "spot": [90.0, 110.0],
                                             "strike": [90.0, 100.0, 110.0]})


@pytest.mark.parametrize("who", ["mc_price", "mc_greeks", "lsm_price", "heston_mc_price"])
def test_monte_carlo_scalars_refuse_arrays_naming_the_argument(who):
    fn, kw = PRICERS[who]
    with pytest.raises(ValueError, match=f"{who}: spot must be a scalar"):
        fn(**{**kw, "spot": [100.0, 110.0]})
