"""``out=`` (by keyword and by position) and ``where=`` behave exactly as in NumPy, with exact
gradients in reverse and forward mode, for every kind of function that takes them: ufuncs,
reductions, accumulations, products, joins, gathers, non-differentiable functions."""

from __future__ import annotations

import numpy as np
import pytest

import diffsci as ds

X = np.array([.3, .7, 1.1])

# name -> f(x, b): writes a length-3 result into b through out= (the same code runs on plain
# NumPy arrays, the reference, and on traced ones).
CASES = {
 "einsum": lambda x, b: np.einsum("i,i->i", x, x, out=b),
 "concatenate": lambda x, b: np.concatenate([x[:1], x[1:]], out=b),
 "stack": lambda x, b: np.stack([x], out=b[None]) ,
 "dot": lambda x, b: np.dot(np.diag(x), x, out=b),
 "matmul": lambda x, b: np.matmul(np.diag(x), x, out=b),
 "cumsum": lambda x, b: np.cumsum(x, out=b),
 "clip": lambda x, b: np.clip(x, 0.5, 1.0, out=b),
 "round": lambda x, b: np.round(x, 1, out=b),
 "mean": lambda x, b: np.mean(np.outer(x, x), axis=0, out=b),
 "std": lambda x, b: np.std(np.outer(x, x), axis=0, out=b),
 "prod": lambda x, b: np.prod(np.outer(x, x), 0, None, b),
 "max": lambda x, b: np.max(np.outer(x, x), 0, b),
 "take": lambda x, b: np.take(x, [2, 0, 1], out=b),
 "where_ufunc": lambda x, b: np.multiply(x, x, out=b, where=x > 0.5),
 "trace": lambda x, b: np.trace(np.outer(x, np.ones((3, 3))).reshape(3, 3, 3), out=b),
 "ptp": lambda x, b: np.ptp(np.outer(x, x), axis=0, out=b),
 "var": lambda x, b: np.var(np.outer(x, x), 0, None, b),
 "nansum": lambda x, b: np.nansum(np.outer(x, x), axis=0, out=b),
 "sum where": lambda x, b: np.sum(np.outer(x, x), axis=0, out=b, where=~np.eye(3, dtype=bool)),
 "cumprod": lambda x, b: np.cumprod(x, 0, None, b),
 "around": lambda x, b: np.around(x, 1, b),
 "fix": lambda x, b: np.fix(x * 3, b),
 "amax": lambda x, b: np.amax(np.outer(x, x), 0, b),
 "median": lambda x, b: np.median(np.outer(x, x), 0, b),
 "quantile": lambda x, b: np.quantile(np.outer(x, x), 0.3, 0, b),
 "choose": lambda x, b: np.choose([0, 1, 0], [x, x * 2], out=b),
 "compress": lambda x, b: np.compress([True, True, True], x, out=b),
}


def _loss(f):
    def g(x):
        b = np.zeros_like(x) if isinstance(x, np.ndarray) else np.zeros(3, like=x)
        f(x, b)
        return np.sum(np.sin(b) * np.arange(1.0, 4.0))
    return g


@pytest.mark.parametrize("name", sorted(CASES))
def test_out_and_where_match_numpy_with_exact_gradients(name):
    g = _loss(CASES[name])
    with np.errstate(all="ignore"):
        value = g(X.copy())
        e = 1e-6
        fd = np.array([(g(X + e * u) - g(X - e * u)) / (2 * e) for u in np.eye(3)])
    v, gr = ds.value_and_grad(g)(X)
    assert v == pytest.approx(value, rel=1e-14)
    np.testing.assert_allclose(gr, fd, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ds.jacfwd(g)(X), gr, rtol=1e-12, atol=1e-14)


def test_integer_buffer_truncates_with_no_derivative_through_it():
    def f(x):
        b = np.zeros(3, int, like=x)
        np.cumsum(x * 3, 0, None, b)
        return np.sum(b * x)

    expected = np.cumsum(X * 3).astype(int)
    np.testing.assert_array_equal(ds.grad(f)(X), expected)
    assert ds.jvp(f, (X,), (np.ones(3),))[1] == pytest.approx(expected.sum())


@pytest.mark.parametrize("call,exc,match", [
    (lambda x: np.sin(x, out=np.zeros(3)), TypeError, "numpy.sin.*plain NumPy array"),
    (lambda x: np.cumsum(x, out=np.zeros(3)), TypeError, "numpy.cumsum.*plain NumPy array"),
    (lambda x: np.add(x, 1.0, where=x > 0.5), ValueError, "where= without out="),
    (lambda x: np.sin(x, out=np.zeros(3, int, like=x)), TypeError, "cannot cast"),
    (lambda x: np.cumsum(x, out=np.zeros(4, like=x)), ValueError, "out= has shape"),
    (lambda x: np.std(x, where=x > 0.5), NotImplementedError, "numpy.std: where="),
    (lambda x: np.max(x, where=x > 0.5), ValueError, "initial="),
])
def test_out_and_where_misuse_is_refused_naming_the_function(call, exc, match):
    with pytest.raises(exc, match=match):
        ds.grad(lambda x: np.sum(call(x)))(X)
