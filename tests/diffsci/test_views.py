"""Copy/view behaviour of every view-returning function equals NumPy's (``np.shares_memory``,
and the writeable flag), so that writes through a base or a view are seen where NumPy sees
them; then the gradient of a write after taking the view is exact in both modes."""

from __future__ import annotations

import numpy as np
import pytest

import diffsci as ds
import diffsci.numpy as dnp
from diffsci._core import getval
from diffsci.testing import check_grads

A = np.arange(24.0).reshape(2, 3, 4) * 0.1 + 0.05
M = np.arange(12.0).reshape(3, 4) * 0.1 + 0.05
C = (np.arange(6.0) + 1j * np.arange(6.0)[::-1]).reshape(2, 3)

# (name, function, input): each is called on a plain array and on a traced one.
VIEWS = [
    ("slice", lambda a: a[1:], A),
    ("step slice", lambda a: a[:, ::2], A),
    ("int index", lambda a: a[0], A),
    ("ellipsis", lambda a: a[..., 1], A),
    ("newaxis", lambda a: a[None], A),
    ("fancy index", lambda a: a[[0, 1]], A),
    ("bool index", lambda a: a[a > 1.0], A),
    (".T", lambda a: a.T, A),
    ("transpose", lambda a: np.transpose(a, (1, 0, 2)), A),
    ("ndarray.transpose", lambda a: a.transpose(2, 0, 1), A),
    ("reshape", lambda a: np.reshape(a, (6, 4)), A),
    ("ndarray.reshape", lambda a: a.reshape(-1), A),
    ("reshape of non-contiguous", lambda a: a.T.reshape(-1), A),
    ("ravel", lambda a: np.ravel(a), A),
    ("ravel of non-contiguous", lambda a: a.T.ravel(), A),
    ("ndarray.flatten", lambda a: a.flatten(), A),
    ("squeeze", lambda a: np.squeeze(a[:1]), A),
    ("expand_dims", lambda a: np.expand_dims(a, 1), A),
    ("swapaxes", lambda a: np.swapaxes(a, 0, 2), A),
    ("moveaxis", lambda a: np.moveaxis(a, 0, -1), A),
    ("broadcast_to", lambda a: np.broadcast_to(a, (3, 2, 3, 4)), A),
    ("diagonal", lambda a: np.diagonal(a), M),
    ("ndarray.diagonal", lambda a: a.diagonal(1), M),
    ("diagonal 3-d", lambda a: np.diagonal(a, 0, 1, 2), A),
    ("diag of 2-d", lambda a: np.diag(a), M),
    ("diag of 1-d", lambda a: np.diag(a[0]), M),
    ("real of complex", lambda a: np.real(a), C),
    ("imag of complex", lambda a: np.imag(a), C),
    (".real of complex", lambda a: a.real, C),
    ("real of real", lambda a: np.real(a), M),
    ("copy", lambda a: np.copy(a), A),
    ("ndarray.copy", lambda a: a.copy(), A),
    ("atleast_2d", lambda a: np.atleast_2d(a), M),
    ("atleast_3d", lambda a: np.atleast_3d(a), M),
    ("flip", lambda a: np.flip(a, 0), A),
    ("fliplr", lambda a: np.fliplr(a), M),
    ("rot90", lambda a: np.rot90(a), M),
    ("split", lambda a: np.split(a, 2, axis=1)[1], M),
    ("positive", lambda a: +a, M),
    ("matrix_transpose", lambda a: np.matrix_transpose(a), A),
    ("squeeze method", lambda a: a[:1].squeeze(), A),
    ("swapaxes method", lambda a: a.swapaxes(0, 1), A),
]


def _traced_result(f, a):
    got = {}

    def g(x):
        r = f(x)
        r = r[0] if isinstance(r, (list, tuple)) else r
        got["shares"] = np.shares_memory(getval(r), getval(x))
        got["writeable"] = getval(r).flags.writeable if isinstance(getval(r), np.ndarray) else None
        return np.sum(np.abs(r) ** 2)

    ds.grad(g)(a)
    return got


@pytest.mark.parametrize("name,f,a", VIEWS, ids=[v[0] for v in VIEWS])
def test_copy_or_view_as_in_numpy(name, f, a):
    a = a.copy()
    r = f(a)
    expected = np.shares_memory(r, a)
    got = _traced_result(f, a)
    assert got["shares"] == expected, f"{name}: shares memory {got['shares']}, NumPy {expected}"
    if isinstance(r, np.ndarray):
        assert got["writeable"] == r.flags.writeable, f"{name}: writeable flag differs"


def test_write_to_base_is_seen_by_a_diagonal_and_its_gradient():
    def f(x):
        y = x * 1.0
        d = np.diagonal(y)
        y[1, 1] = 3.0 * x[0, 2]
        return np.sum(d * d)

    def plain(x):
        y = x * 1.0
        d = np.diagonal(y)
        y[1, 1] = 3.0 * x[0, 2]
        return np.sum(d * d)

    assert f(M.copy()) == plain(M.copy())
    check_grads(f, (M,))
    g = ds.grad(f)(M)
    assert g[1, 1] == 0.0 and g[0, 2] == pytest.approx(2 * 9 * M[0, 2])
    np.testing.assert_allclose(ds.jacfwd(f)(M), g, rtol=1e-14)


def test_flatten_is_a_copy_so_writes_do_not_alias():
    def f(x):
        y = x * 1.0
        v = y.flatten()
        y[0, 0] = 10.0 * x[1, 1]
        return np.sum(v * v) + np.sum(y)

    check_grads(f, (M,))
    assert ds.grad(f)(M)[1, 1] == pytest.approx(2 * M[1, 1] + 1.0 + 10.0)


def test_dnp_diagonal_matches_numpy():
    for off in (-1, 0, 2):
        np.testing.assert_array_equal(dnp.diagonal(A, off, 1, 2), np.diagonal(A, off, 1, 2))
    check_grads(lambda a: dnp.diagonal(a, 1, 2, 0) ** 2, (A,))


# ---------------------------------------------------------------- counting with weights
@pytest.mark.parametrize("density", [False, True])
def test_weighted_counts_equal_numpy_and_are_linear_in_weights(density):
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, 40)
    a[:3] = [-1.0, 1.0, 0.0]  # the edges themselves
    xy = rng.uniform(0, 1, (40, 2))
    w = rng.uniform(0.5, 2.0, 40)
    cases = [
        (lambda w: dnp.histogram(a, 7, density=density, weights=w)[0],
         lambda w: np.histogram(a, 7, density=density, weights=w)[0]),
        (lambda w: dnp.histogram(a, np.array([-1.0, -0.2, 0.3, 1.0]), density=density,
                                 weights=w)[0],
         lambda w: np.histogram(a, np.array([-1.0, -0.2, 0.3, 1.0]), density=density,
                                weights=w)[0]),
        (lambda w: dnp.histogram2d(xy[:, 0], xy[:, 1], (3, 4), density=density, weights=w)[0],
         lambda w: np.histogram2d(xy[:, 0], xy[:, 1], (3, 4), density=density, weights=w)[0]),
        (lambda w: dnp.histogramdd(xy, 3, density=density, weights=w)[0],
         lambda w: np.histogramdd(xy, 3, density=density, weights=w)[0]),
        (lambda w: dnp.bincount((a > 0).astype(int) * 3, weights=w),
         lambda w: np.bincount((a > 0).astype(int) * 3, weights=w)),
    ]
    for ours, theirs in cases:
        J = ds.jacobian(ours)(w)
        np.testing.assert_allclose(ds.stop_gradient(ours(w)), theirs(w), rtol=1e-13)
        # the exact Jacobian by finite differences of NumPy's own function
        e = 1e-6
        fd = np.stack([(theirs(w + e * u) - theirs(w - e * u)) / (2 * e)
                       for u in np.eye(len(w))], axis=-1)
        np.testing.assert_allclose(J, fd, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(ds.jacfwd(ours)(w), J, rtol=1e-13, atol=1e-15)
        assert np.abs(J).sum() > 0  # not the silent zero of the non-differentiable list
