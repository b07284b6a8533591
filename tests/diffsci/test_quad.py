"""Tests for diffsci.scipy.integrate's quadrature: quad, trapezoid, cumulative_trapezoid, simpson.

References: SciPy's values; the closed form ∫ e^{−kx} cos(cx) dx =
e^{−kx} (c sin(cx) − k cos(cx)) / (k² + c²), differentiated by diffsci, for the Leibniz-rule
gradients of quad in both limits and the parameters; central differences (check_grads).
"""

import itertools

import numpy as np
import pytest
import scipy.integrate as si

import diffsci as ds
from diffsci.scipy.integrate import cumulative_trapezoid, quad, simpson, trapezoid
from diffsci.testing import check_grads


def f(x, k, c):
    return np.exp(-k * x) * np.cos(c * x)


def antiderivative(x, k, c):
    return np.exp(-k * x) * (c * np.sin(c * x) - k * np.cos(c * x)) / (k * k + c * c)


def closed(a, b, k, c):
    return antiderivative(b, k, c) - antiderivative(a, k, c)


CASES = [(0.0, 1.0, 2.0, 0.7), (0.2, 1.5, 0.3, 3.0), (1.5, 0.2, 1.0, 1.0),  # b < a
         (-1.0, 2.0, 0.5, 5.0), (0.0, 0.0, 1.0, 1.0)]


@pytest.mark.parametrize("a, b, k, c", CASES)
def test_quad_value_and_leibniz_gradients_equal_closed_form(a, b, k, c):
    val, err = quad(f, a, b, args=(k, c))
    ref = si.quad(f, a, b, args=(k, c))
    assert val == ref[0] and err == ref[1]
    np.testing.assert_allclose(val, closed(a, b, k, c), rtol=1e-12, atol=1e-14)
    q = lambda a, b, k, c: quad(f, a, b, args=(k, c))[0]  # noqa: E731
    g = ds.grad(q, argnums=(0, 1, 2, 3))(a, b, k, c)
    r = ds.grad(closed, argnums=(0, 1, 2, 3))(a, b, k, c)
    np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(g[1], f(b, k, c), rtol=1e-14)  # d/db = f(b)
    h = ds.hessian(q, argnums=(0, 1, 2, 3))(a, b, k, c)
    hr = ds.hessian(closed, argnums=(0, 1, 2, 3))(a, b, k, c)
    np.testing.assert_allclose(np.array(h, dtype=float), np.array(hr, dtype=float),
                               rtol=1e-8, atol=1e-11)


def test_quad_check_grads_orders_1_and_2_and_vector_args():
    q = lambda a, b, p: quad(lambda x, p: np.tanh(p[0] * x) * p[1] + x * p[2], a, b,  # noqa
                             args=(p,))[0]
    args = (0.3, 1.7, np.array([1.2, -0.5, 0.8]))
    check_grads(q, args, modes=("rev", "fwd"))
    check_grads(q, args, order=2, modes=("rev",))  # nested quads: the slow part


def test_quad_infinite_limit():
    """b = ∞: the value and parameter gradients still hold; the infinite limit is constant."""
    q = lambda a, k, c: quad(f, a, np.inf, args=(k, c))[0]  # noqa: E731
    ref = lambda a, k, c: -antiderivative(a, k, c)  # noqa: E731
    np.testing.assert_allclose(q(0.3, 1.5, 2.0), ref(0.3, 1.5, 2.0), rtol=1e-9)
    np.testing.assert_allclose(ds.grad(q, argnums=(0, 1, 2))(0.3, 1.5, 2.0),
                               ds.grad(ref, argnums=(0, 1, 2))(0.3, 1.5, 2.0), rtol=1e-8)
    with pytest.raises(ValueError, match="infinite limit b = inf is being differentiated"):
        ds.grad(lambda b: quad(f, 0.0, b, args=(1.0, 1.0))[0])(np.inf)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: quad(None, 0, 1), TypeError, "func must be callable"),
    (lambda: quad(f, 0, 1, args=[1.0, 1.0]), TypeError, "args must be a tuple"),
    (lambda: quad(f, 0, 1, args=(1.0, 1.0), epsabss=1e-9), TypeError, "unexpected keyword"),
    (lambda: quad(f, np.nan, 1, args=(1.0, 1.0)), ValueError, "a must be a real number"),
    (lambda: quad(lambda x: np.array([x, x]), 0, 1), ValueError, "must return a scalar"),
    (lambda: quad(f, 0, 1, args=(1.0, 1.0), weight="cos", wvar=1.0), ValueError,
     "weight= is not supported"),
])
def test_quad_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ---------------------------------------------------------------------------
# sample-based rules
# ---------------------------------------------------------------------------
RNG = np.random.default_rng(3)


@pytest.mark.parametrize("n, spacing", list(itertools.product(range(1, 10),
                                                              ["dx", "x1d", "x2d"])))
def test_rules_equal_scipy_and_check_grads(n, spacing):
    y = RNG.standard_normal((3, n))
    if spacing == "dx":
        kw = dict(dx=0.37)
    elif spacing == "x1d":
        kw = dict(x=np.sort(RNG.uniform(0, 2, n)) + np.arange(n) * 0.1)
    else:
        kw = dict(x=np.sort(RNG.uniform(0, 2, (3, n)), axis=-1) + np.arange(n) * 0.1)
    for ours, ref in [(trapezoid, si.trapezoid), (simpson, si.simpson)]:
        if n == 1 and ours is simpson:
            continue  # SciPy's simpson of one sample is undefined here
        np.testing.assert_allclose(ours(y, **kw), ref(y, **kw), rtol=1e-13, atol=1e-14)
    if n >= 2:
        np.testing.assert_allclose(cumulative_trapezoid(y, **kw),
                                   si.cumulative_trapezoid(y, **kw), rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(cumulative_trapezoid(y, initial=0, **kw),
                                   si.cumulative_trapezoid(y, initial=0, **kw), rtol=1e-13,
                                   atol=1e-14)
    if n >= 3:
        for rule in (trapezoid, simpson, cumulative_trapezoid):
            check_grads(lambda y: rule(y, **kw), (y,), modes=("rev", "fwd"))
            if "x" in kw:
                check_grads(lambda x: rule(y, x=x), (kw["x"],), modes=("rev", "fwd"))


def test_rules_other_axis():
    y = RNG.standard_normal((5, 4))
    x = np.linspace(0, 1, 5) ** 2
    for ours, ref in [(trapezoid, si.trapezoid), (simpson, si.simpson),
                      (cumulative_trapezoid, si.cumulative_trapezoid)]:
        np.testing.assert_allclose(ours(y, x=x, axis=0), ref(y, x=x, axis=0), rtol=1e-13)


def test_simpson_exactness():
    """Simpson's weights integrate quadratics exactly on any grid (unequal interval pairs and
    the even-sample last-interval correction included) and cubics on uniform grids."""
    for n in range(3, 10):
        x = np.sort(RNG.uniform(0, 3, n))
        y = 3 * x ** 2 - x + 0.5
        exact = (x[-1] ** 3 - x[0] ** 3) - (x[-1] ** 2 - x[0] ** 2) / 2 + 0.5 * (x[-1] - x[0])
        np.testing.assert_allclose(simpson(y, x=x), exact, rtol=1e-12)
    for n in (3, 5, 7, 9):
        x = np.linspace(-1.0, 2.0, n)
        np.testing.assert_allclose(simpson(x ** 3, dx=x[1] - x[0]), (16 - 1) / 4, rtol=1e-12)


@pytest.mark.parametrize("call, match", [
    (lambda: trapezoid(1.0), "at least one dimension"),
    (lambda: trapezoid(np.ones(3), x=np.ones(4)), "x has 4 samples, y has 3"),
    (lambda: simpson(np.ones((2, 3)), x=np.ones((3, 2))), "x must be 1-D of length 3"),
    (lambda: trapezoid(np.ones(3), axis=2), "axis=2 is out of range"),
    (lambda: cumulative_trapezoid(np.ones(3), initial=1.0), "initial must be None or 0"),
    (lambda: trapezoid(np.ones(3), dx=np.ones(2)), "dx must be a scalar"),
])
def test_rule_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()
