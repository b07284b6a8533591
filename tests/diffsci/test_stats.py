"""diffsci.scipy.stats.norm: SciPy's values, gradients in x, loc and scale (positional or
keyword), both modes to second order, accurate tails, the frozen form, and errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats

import diffsci as ds
from diffsci.scipy.stats import norm
from diffsci.testing import check_grads

METHODS = ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"]
PROBABILITY = {"ppf", "isf"}  # methods of a probability q rather than a point x


def _point(method, rng):
    return rng.uniform(0.05, 0.95, 4) if method in PROBABILITY else rng.normal(0, 2, 4)


@pytest.mark.parametrize("method", METHODS)
def test_grad_in_x_loc_and_scale(method):
    rng = np.random.default_rng(len(method))
    f = getattr(norm, method)
    args = (_point(method, rng), rng.normal(size=4), rng.uniform(0.5, 2.0, 4))
    check_grads(f, args, order=2)
    # keyword arguments are traced too: the methods are composites, not primitives
    check_grads(lambda x, loc, scale: f(x, loc=loc, scale=scale), args, order=1)
    check_grads(lambda x, scale: getattr(norm(scale=scale), method)(x), (args[0], args[2]))


@pytest.mark.parametrize("method", METHODS)
def test_values_are_scipys(method):
    rng = np.random.default_rng(7)
    x, loc, scale = _point(method, rng), 0.3, 1.7
    want = getattr(scipy.stats.norm, method)(x, loc=loc, scale=scale)
    np.testing.assert_allclose(getattr(norm, method)(x, loc, scale), want, rtol=1e-13)
    traced = ds.pullback(lambda x: getattr(norm, method)(x, loc, scale), x)[0]
    np.testing.assert_allclose(ds.stop_gradient(traced), want, rtol=1e-13)


def test_every_method_is_tested():
    public = {n for n in dir(norm) if not n.startswith("_")}
    assert public == set(METHODS), public ^ set(METHODS)


def test_far_tails():
    # logcdf far in the left tail: value -x^2/2 - log(-x sqrt(2 pi)) and slope ~ -x.
    g = ds.grad(norm.logcdf)(-1e3)
    np.testing.assert_allclose(g, 1e3 + 1e-3 - 2e-9, rtol=1e-12)
    assert ds.grad(norm.logsf)(1e3) == -g
    assert np.isfinite(ds.grad(ds.grad(norm.logcdf))(-1e3))
    assert ds.grad(norm.cdf)(40.0) == 0.0  # underflow, not NaN


def test_gradients_match_closed_forms():
    x, loc, s = 1.3, 0.2, 0.7
    z = (x - loc) / s
    pdf = np.exp(-z * z / 2) / np.sqrt(2 * np.pi) / s
    gx, gl, gs = ds.grad(norm.cdf, argnums=(0, 1, 2))(x, loc, s)
    np.testing.assert_allclose([gx, gl, gs], [pdf, -pdf, -pdf * z], rtol=1e-14)
    gx, gs = ds.grad(norm.logpdf, argnums=(0, 2))(x, loc, s)
    np.testing.assert_allclose([gx, gs], [-z / s, (z * z - 1) / s], rtol=1e-14)
    q = 0.8
    np.testing.assert_allclose(ds.grad(norm.ppf)(q, loc, s),
                               1 / scipy.stats.norm.pdf(norm.ppf(q, loc, s), loc, s), rtol=1e-13)


@pytest.mark.parametrize("call", [
    lambda: norm.cdf(0.0, scale=0.0),
    lambda: norm.logpdf(0.0, 0.0, np.array([1.0, -1.0])),
    lambda: ds.grad(lambda s: norm.pdf(0.0, scale=s))(-1.0),
    lambda: norm.ppf(0.5, scale=-2.0),
    lambda: norm(scale=0.0),
], ids=["cdf", "logpdf-array", "pdf-traced", "ppf", "frozen"])
def test_non_positive_scale_raises_naming_it(call):
    with pytest.raises(ValueError, match="scale must be positive"):
        call()
