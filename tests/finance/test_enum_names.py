"""Every enum argument of every pricer, passed as its member or as a string (its name or value,
in any case): one result, field for field.  Before, ``mc_price(product="digital")`` compared the
raw argument with ``Product.DIGITAL`` and silently returned ``bias=None`` (the smoothing bias
was reported only for the member)."""

import dataclasses

import numpy as np
import pytest

import finance as fin

HP = fin.HestonParams(kappa=2.0, theta=0.04, sigma=0.3, rho=-0.7, v0=0.04)
GBM = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.03, vol=0.2, n_paths=2000, n_steps=4)
BASKET = dict(spots=[100.0, 90.0], weights=[0.5, 0.5], strike=95.0, expiry=1.0, rate=0.02,
              vols=[0.2, 0.3], correlation=[[1.0, 0.4], [0.4, 1.0]], n_paths=2000)
HESTON = dict(spot=100.0, strike=100.0, expiry=1.0, rate=0.03, params=HP, n_paths=2000,
              n_steps=8)

#: (pricer, its other arguments, the enum argument, its enum)
ENUM_ARGUMENTS = [
    (fin.mc_price, GBM, "product", fin.Product),
    (fin.mc_price, dict(GBM, control_variate=True), "product", fin.Product),
    (fin.mc_greeks, GBM, "product", fin.Product),
    (fin.mc_greeks, dict(GBM, product=fin.Product.DIGITAL), "estimator", fin.GreekEstimator),
    (fin.basket_mc_price, BASKET, "basket", fin.Basket),
    (fin.basket_mc_greeks, BASKET, "basket", fin.Basket),
    (fin.heston_mc_price, HESTON, "scheme", fin.HestonScheme),
]


def _spellings(member):
    names = {member.name, member.name.lower(), member.name.lower().replace("_", "-")}
    if isinstance(member.value, str):
        names |= {member.value, member.value.upper()}
    return sorted(names)


def _fields(result):
    if isinstance(result, dict):
        return {k: _fields(v) for k, v in result.items()}
    if dataclasses.is_dataclass(result):
        return {f.name: _fields(getattr(result, f.name)) for f in dataclasses.fields(result)}
    return result


def _same(a, b, where):
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}.{k}")
    elif isinstance(a, tuple | list):
        assert isinstance(b, tuple | list) and len(a) == len(b), f"{where}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif a is None or b is None:
        assert a is b, f"{where}: {a!r} vs {b!r}"
    else:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=where)


@pytest.mark.parametrize("pricer,base,argument,kind", ENUM_ARGUMENTS,
                         ids=[f"{p.__name__}-{a}" for p, _, a, _ in ENUM_ARGUMENTS])
def test_a_name_is_its_member(pricer, base, argument, kind):
    tested = 0
    for member in kind:
        try:
            want = _fields(pricer(**base, **{argument: member}))
        except ValueError:  # a combination the pricer refuses (named in its message)
            for name in _spellings(member):
                with pytest.raises(ValueError):
                    pricer(**base, **{argument: name})
            continue
        for name in _spellings(member):
            _same(want, _fields(pricer(**base, **{argument: name})),
                  f"{pricer.__name__}({argument}={name!r})")
            tested += 1
    assert tested >= 2 * len(kind) - 2


def test_the_digital_smoothing_bias_is_reported_for_its_name():
    r = fin.mc_price(**GBM, product="digital")
    assert r.bias is not None and all(np.isfinite(r.bias))
