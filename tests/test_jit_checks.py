"""Input checks hold at every call of a jitted function, not only at its trace.

The domain packages check values at their API boundary (finite, in bounds).  Written on plain
values (``getval``) such a check runs once, while ``diffsci.jit`` traces, and a later call with
an invalid value computed silently (``jit(bsm_price)`` priced a negative volatility at
-7.44).  Checks go through ``diffsci.extend.observed``, a guard under jit: the compiled
program re-runs the check, a different outcome re-traces, and the check raises the eager
message.
"""

from __future__ import annotations

import numpy as np
import pytest

import diffsci as ds
from diffsci._jit import _compile
from diffsci.extend import observed, value_mask


@pytest.fixture(autouse=True)
def python_backend(monkeypatch, tmp_path):
    monkeypatch.setattr(_compile, "BACKEND", "python")
    monkeypatch.setenv("DIFFSCI_JIT_CACHE", str(tmp_path))


def _bsm(s, v):
    import finance

    return finance.bsm_price(spot=s, strike=100.0, expiry=1.0, rate=0.01, vol=v)


def _gbm(y0):
    import sde

    t = np.linspace(0.0, 1.0, 5)
    w = np.cumsum(np.random.default_rng(0).standard_normal((4, 5)) * 0.5, axis=1)
    return np.mean(sde.gbm_paths(y0, 0.05, 0.2, t, w)[:, -1])


def _circuit(theta):
    from quantum import Circuit, Z, expval

    return expval(Circuit(2).ry(0).ry(1).cnot(0, 1), theta, Z(1))


def _norm(x, s):
    return np.sum(ds.scipy.stats.norm.logpdf(x, 0.0, s))


def _cov(x, w):
    return np.sum(np.cov(x, aweights=w))


_X = np.random.default_rng(1).standard_normal((2, 5))

def _average(a, w):
    return np.average(a, weights=w)


def _multigammaln(a):
    return ds.scipy.special.multigammaln(a, 3)


def _entropy(p):
    return ds.scipy.stats.entropy(p)


CASES = [
    ("numpy average zero weights", _average, (np.ones(3), np.ones(3)),
     (np.ones(3), np.array([1.0, -1.0, 0.0])), "Weights sum to zero"),
    ("multigammaln domain", _multigammaln, (3.0,), (0.5,), "must be greater than"),
    ("entropy negative pk", _entropy, (np.array([0.2, 0.8]),), (np.array([-0.2, 0.8]),),
     "must be non-negative"),
    ("numpy cov aweights", _cov, (_X, np.ones(5)), (_X, -np.ones(5)),
     "aweights cannot be negative"),
    ("finance vol", _bsm, (100.0, 0.2), (100.0, -0.2), "vol must be > 0"),
    ("finance spot", _bsm, (100.0, 0.2), (np.nan, 0.2), "spot must be finite"),
    ("sde y0", _gbm, (np.ones(4),), (np.array([1.0, np.nan, 1.0, 1.0]),), "y0 has non-finite"),
    ("quantum theta", _circuit, (np.array([0.3, 0.5]),), (np.array([np.nan, 0.5]),),
     "theta must be finite"),
    ("stats scale", _norm, (np.ones(2), np.ones(2)), (np.ones(2), -np.ones(2)),
     "scale must be positive"),
]


@pytest.mark.parametrize("name,f,good,bad,msg", CASES, ids=[c[0] for c in CASES])
def test_checks_raise_at_a_later_call(name, f, good, bad, msg):
    with pytest.raises((ValueError, ZeroDivisionError), match=msg):  # eager: the reference
        f(*bad)
    nums = tuple(k for k, a in enumerate(good) if np.ndim(a) or isinstance(a, float))
    for jf in (ds.jit(f, check=False), ds.jit(ds.grad(f, argnums=nums), check=False)):
        jf(*good)
        with pytest.raises((ValueError, ZeroDivisionError), match=msg):
            jf(*bad)
        jf(*good)  # and valid input still runs


def test_observed_and_value_mask_in_eager_mode_and_under_jit():
    assert observed(lambda v: None if np.all(v > 0) else "bad", np.ones(2)) is None
    np.testing.assert_array_equal(value_mask(np.greater, np.array([-1.0, 2.0]), 0.0),
                                  [False, True])

    def f(x):
        if observed(lambda v: bool(np.any(v < 0)), x):
            raise ValueError("x must be >= 0")
        m = value_mask(np.greater, x, 1.0)
        return np.sum(np.where(m, np.log(np.where(m, x, 1.0)), x - 1.0))

    jf = ds.jit(ds.value_and_grad(f), check=False)
    for x in (np.array([0.5, 2.0]), np.array([3.0, 0.2]), np.array([2.0, 4.0])):
        v, g = jf(x)
        ev, eg = ds.value_and_grad(f)(x)
        np.testing.assert_allclose(v, ev, rtol=1e-14)
        np.testing.assert_allclose(g, eg, rtol=1e-14)
    assert jf.stats()["specializations"] == 1  # the mask is a value: no re-specialization
    with pytest.raises(ValueError, match=">= 0"):
        jf(np.array([-1.0, 2.0]))


# ---------------------------------------------------------------- branches in the formulas
def _barrier(k):
    import finance

    return finance.barrier_price(spot=100.0, strike=k, barrier=95.0, expiry=1.0, rate=0.02,
                                 vol=0.25)


def _lookback(r):
    import finance

    return finance.lookback_price(spot=100.0, strike=100.0, expiry=1.0, rate=r, dividend=0.02,
                                  vol=0.3)


def _heston(s, mc=False):
    import finance

    p = finance.HestonParams(kappa=1.5, theta=0.04, sigma=s, rho=-0.6, v0=0.04)
    kw = dict(spot=100.0, strike=105.0, expiry=1.0, rate=0.01, params=p)
    if mc:
        return finance.heston_mc_price(n_paths=200, n_steps=4, **kw).price
    return finance.heston_price(**kw)


def _sde_adaptive(p):
    import sde

    prob = sde.SDE(lambda t, u, p: -p * u, lambda t, u, p: 0.3 * u, noise="diagonal",
                   calculus="ito")
    ys = sde.sdeint(prob, np.ones((4, 1)), np.linspace(0.0, 1.0, 3), p, dt=0.05, seed=3,
                    adaptive=True, adjoint="backprop")
    return np.sum(ys[-1])


BRANCHES = [
    ("sde adaptive accepted grid", _sde_adaptive, 0.5, (0.55, 2.0, 8.0)),
    ("barrier strike above/below the barrier", _barrier, 90.0, (100.0, 92.0, 97.0)),
    ("lookback b = r - q near 0", _lookback, 0.05, (0.02, 0.0200000001, 0.08)),
    ("heston Fourier near/far branch", _heston, 0.5, (0.3, 1e-4, 0.9)),
    ("heston QE quadratic/exponential", lambda s: _heston(s, mc=True), 0.5, (0.3, 0.9, 1.5)),
]


@pytest.mark.parametrize("check", [True, False])
@pytest.mark.parametrize("name,f,first,later", BRANCHES, ids=[b[0] for b in BRANCHES])
def test_formula_branches_follow_the_input(name, f, first, later, check):
    """A branch of a pricing formula chosen from the values (the strike against the barrier,
    a series near b = 0, Andersen's QE regime, an adaptive solver's accepted steps) is
    recomputed by the compiled code or guarded: traced at
    one input, called at inputs on other branches, equal to eager mode.  Before, the
    lookback price was wrong with the default check, the barrier and QE prices with
    check=False."""
    vg = ds.value_and_grad(f)
    jvg = ds.jit(vg, check=check)
    jvg(first)
    for x in later:
        got, want = jvg(x), vg(x)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-10, err_msg=f"{name} at {x}")
        np.testing.assert_allclose(got[1], want[1], rtol=1e-8, atol=1e-12,
                                   err_msg=f"{name} at {x}")
    assert jvg.stats()["eager"] == 0  # compiled, not the probe's eager fallback
