"""diffsci.scipy.interpolate: values equal SciPy's; gradients in the data equal the dense
Jacobians of SciPy's own (affine) maps, gradients in the query points equal SciPy's
derivative splines, and check_grads passes to second order in both modes."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.interpolate as si

import diffsci as ds
from diffsci.scipy import interpolate as di
from diffsci.testing import check_grads

R = np.random.default_rng(11)
X = np.array([0.0, 0.4, 1.1, 1.5, 2.3, 3.0, 3.4])
XQ = np.array([-0.3, 0.2, 0.9, 1.3, 2.0, 2.9, 3.2, 3.7])  # off the knots, both ends outside


def traced_value(f, *args):
    return ds.pullback(f, *args)[0]


def affine_jacobian(f, y):
    """The Jacobian of an affine map of y, from SciPy alone: f(e_j) - f(0), per column."""
    f0 = np.asarray(f(np.zeros_like(y)))
    cols = [np.ravel(np.asarray(f(e.reshape(y.shape))) - f0) for e in np.eye(y.size)]
    return np.stack(cols, axis=-1)


def check_all(ours, theirs, y, xq, deriv=None, atol=1e-11):
    """Values (traced data; traced queries), Jacobian in the data, gradient in the queries."""
    want = theirs(y, xq)
    np.testing.assert_allclose(traced_value(lambda y: ours(y, xq), y), want, rtol=1e-11,
                               atol=atol)
    np.testing.assert_allclose(traced_value(lambda q: ours(y, q), xq), want, rtol=1e-11,
                               atol=atol)
    jac = ds.jacobian(lambda y: ours(y, xq))(y).reshape(np.size(want), -1)
    # an output filled with a constant NaN does not depend on the data: its row is 0
    ref = np.where(np.isnan(np.ravel(want))[:, None], 0.0,
                   affine_jacobian(lambda v: theirs(v, xq), y))
    np.testing.assert_allclose(jac, ref, atol=atol)
    if deriv is not None:  # elementwise in xq: the Jacobian's diagonal is the derivative
        jq = ds.jacobian(lambda q: ours(y, q))(xq)
        jq = jq.reshape(len(xq), -1, len(xq)) if jq.ndim > 2 else jq[:, None, :]
        diag = np.stack([jq[i, :, i] for i in range(len(xq))])
        np.testing.assert_allclose(diag.reshape(np.shape(deriv)), deriv, rtol=1e-10, atol=atol)


BCS = ["not-a-knot", "clamped", "natural", ((1, 0.5), (2, -1.0)), "periodic"]


@pytest.mark.parametrize("bc", BCS, ids=str)
@pytest.mark.parametrize("nu", [0, 1, 2, 3])
def test_cubic_spline(bc, nu):
    y = R.standard_normal(len(X))
    if bc == "periodic":
        y[-1] = y[0]

    def ours(y, q):
        return di.CubicSpline(X, y, bc_type=bc)(q, nu)

    def theirs(y, q):
        if bc == "periodic":
            y = np.append(y[:-1], y[0])  # SciPy reads y[-1] as y[0] too
        return si.CubicSpline(X, y, bc_type=bc)(q, nu)

    if bc == "periodic":  # the map reads y[:-1]: the Jacobian's last column is 0
        want = theirs(y, XQ)
        np.testing.assert_allclose(traced_value(lambda y: ours(y, XQ), y), want, rtol=1e-11,
                                   atol=1e-11)
        jac = ds.jacobian(lambda y: ours(y, XQ))(y)
        np.testing.assert_allclose(jac, affine_jacobian(lambda v: theirs(v, XQ), y), atol=1e-11)
        return
    check_all(ours, theirs, y, XQ, si.CubicSpline(X, y, bc_type=bc)(XQ, nu + 1))


def test_cubic_spline_axis_trailing_extrapolate_and_second_order():
    y = R.standard_normal((2, len(X), 3))
    for extrap in (True, False, "periodic"):
        want = si.CubicSpline(X, y, axis=1, extrapolate=extrap)(XQ.reshape(2, 4))
        got = traced_value(lambda y: di.CubicSpline(X, y, axis=1, extrapolate=extrap)(
            XQ.reshape(2, 4)), y)
        np.testing.assert_allclose(got, want, rtol=1e-11, atol=1e-12)
    check_grads(lambda y, q: di.CubicSpline(X, y)(q), (R.standard_normal(len(X)), XQ), order=2,
                modes=("rev", "fwd"))
    yc = R.standard_normal(len(X)) + 1j * R.standard_normal(len(X))
    np.testing.assert_allclose(traced_value(lambda y: di.CubicSpline(X, y)(XQ), yc),
                               si.CubicSpline(X, yc)(XQ), rtol=1e-11)


@pytest.mark.parametrize("k,bc", [(0, None), (1, None), (2, None), (3, None), (5, None),
                                  (3, "natural"), (3, "clamped"),
                                  (3, ([(1, 0.3)], [(2, -0.2)]))], ids=str)
def test_make_interp_spline(k, bc):
    y = R.standard_normal((len(X),) if isinstance(bc, tuple) else (len(X), 2))
    xq = XQ[1:-1] if k == 0 else XQ + 0.013  # even k has knots at midpoints (0.2, 1.3 ...)

    def ours(y, q):
        return di.make_interp_spline(X, y, k, bc_type=bc)(q)

    def theirs(y, q):
        return si.make_interp_spline(X, y, k, bc_type=bc)(q)

    deriv = si.make_interp_spline(X, y, k, bc_type=bc)(xq, nu=1) if k > 0 else np.zeros(
        (len(xq),) + y.shape[1:])
    check_all(ours, theirs, y, xq, deriv)
    if k >= 2:
        check_grads(lambda y, q: ours(y, q), (y, xq), order=2, modes=("rev", "fwd"))


KINDS = ["linear", "nearest", "nearest-up", "zero", "slinear", "quadratic", "cubic",
         "previous", "next"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fill", [np.nan, "extrapolate", (-1.0, 2.0)], ids=str)
def test_interp1d(kind, fill):
    y = R.standard_normal((2, len(X)))
    xq = XQ if fill is not np.nan else XQ[1:-1]

    def ours(y, q):
        return di.interp1d(X, y, kind, bounds_error=False, fill_value=fill)(q)

    def theirs(y, q):
        return si.interp1d(X, y, kind, bounds_error=False, fill_value=fill)(q)

    check_all(ours, theirs, y, xq)
    if kind in ("linear", "cubic") and fill == "extrapolate":
        check_grads(ours, (y, xq), order=2, modes=("rev", "fwd"))


def test_interp1d_bounds_error_is_scipys():
    with pytest.raises(ValueError, match="below the interpolation range"):
        ds.grad(lambda y: di.interp1d(X, y)(-1.0))(np.ones(len(X)))


GRID = (np.array([0.0, 0.5, 1.5, 2.0]), np.array([-1.0, 0.0, 1.0]), np.array([0.0, 0.3, 1.0]))


@pytest.mark.parametrize("ndim", [1, 2, 3])
@pytest.mark.parametrize("method", ["linear", "slinear", "nearest"])
@pytest.mark.parametrize("trailing", [(), (2,)])
def test_regular_grid_interpolator(ndim, method, trailing):
    grid = GRID[:ndim]
    values = R.standard_normal(tuple(len(g) for g in grid) + trailing)
    xi = np.stack([R.uniform(g[0], g[-1], (2, 3)) for g in grid], axis=-1)

    def ours(v, q):
        return di.RegularGridInterpolator(grid, v, method)(q)

    def theirs(v, q):
        return si.RegularGridInterpolator(grid, v, method)(q)

    check_all(ours, theirs, values, xi)
    if method == "linear":  # 'slinear' is the same code path
        check_grads(ours, (values, xi), order=2, modes=("rev", "fwd"))
        f = ds.grad(lambda q: ours(values, q).sum())(xi)
        eps = 1e-6
        for d in range(ndim):  # the gradient in each coordinate, by SciPy's own differences
            e = np.zeros(ndim)
            e[d] = eps
            fd = (theirs(values, xi + e) - theirs(values, xi - e)) / (2 * eps)
            np.testing.assert_allclose(f[..., d], fd.reshape(fd.shape[:2] + (-1,)).sum(-1),
                                       rtol=1e-6, atol=1e-8)


def test_regular_grid_fill_extrapolate_and_knots():
    grid = GRID[:2]
    values = R.standard_normal((4, 3))
    xi = np.array([[-0.5, 0.2], [1.0, 2.5], [0.5, 0.0], [2.0, 1.0]])  # outside, outside, knots
    for fill in (np.nan, None, 3.5):
        want = si.RegularGridInterpolator(grid, values, bounds_error=False, fill_value=fill)(xi)
        got = traced_value(lambda v: di.RegularGridInterpolator(
            grid, v, bounds_error=False, fill_value=fill)(xi), values)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match="out of bounds"):
        ds.grad(lambda v: di.RegularGridInterpolator(grid, v)(xi).sum())(values)
    # interpn is the same interpolator
    np.testing.assert_allclose(traced_value(lambda v: di.interpn(grid, v, xi[2:]), values),
                               si.interpn(grid, values, xi[2:]), rtol=1e-12)


def test_plain_calls_are_scipys():
    y = R.standard_normal(len(X))
    assert np.array_equal(di.CubicSpline(X, y)(XQ), si.CubicSpline(X, y)(XQ))
    assert np.array_equal(di.make_interp_spline(X, y)(XQ), si.make_interp_spline(X, y)(XQ))
    assert np.array_equal(di.interp1d(X, y, "cubic")(XQ[1:-1]),
                          si.interp1d(X, y, "cubic")(XQ[1:-1]))


@pytest.mark.parametrize("call,exc,match", [
    (lambda y: di.CubicSpline(y, y), NotImplementedError, "sample points"),
    (lambda y: di.CubicSpline(X, y)(XQ, nu=-1), NotImplementedError, "antiderivatives"),
    (lambda y: di.RegularGridInterpolator((X,), y, "cubic")(XQ[1:-1, None]), NotImplementedError,
     "method='cubic'"),
    (lambda y: di.CubicSpline(X[:-1], y), ValueError, ""),
])
def test_bad_input(call, exc, match):
    with pytest.raises(exc, match=match):
        ds.grad(lambda y: call(y).sum())(np.ones(len(X)))


def test_scalar_and_single_point_queries_match_scipy_when_traced():
    """A scalar query outside the data with a fill (interp1d) and a single 1-D point
    (RegularGridInterpolator: SciPy returns shape (1,)) give SciPy's values and shapes on
    the traced path too (the fill crashed inside NumPy's broadcast_to; the shape was ())."""
    import scipy.interpolate as si

    from diffsci.scipy import interpolate as interp

    x = np.linspace(0.0, 3.0, 7)
    y = np.sin(x)
    for kind in ("linear", "cubic", "nearest", "previous", "next"):
        ours = interp.interp1d(x, y, kind=kind, bounds_error=False, fill_value=(-1.0, 2.0))
        ref = si.interp1d(x, y, kind=kind, bounds_error=False, fill_value=(-1.0, 2.0))
        for q in (3.4, -0.5, 1.3):
            v, g = ds.value_and_grad(lambda q: ours(q) * 1.0)(q)
            np.testing.assert_allclose(v, ref(q), rtol=1e-12)
            assert np.shape(v) == np.shape(ref(q))
            if not 0.0 <= q <= 3.0:
                assert g == 0.0
    grid = (x, np.linspace(-1.0, 1.0, 5))
    vals = np.cos(x)[:, None] * np.linspace(0.5, 1.5, 5)[None, :]
    ref = si.RegularGridInterpolator(grid, vals)
    ours = interp.RegularGridInterpolator(grid, ds.numpy.asarray(vals))
    p = np.array([0.2, 0.1])
    out, back = ds.pullback(lambda p: ours(p), p)
    np.testing.assert_allclose(out, ref(p), rtol=1e-12)
    assert np.shape(out) == ref(p).shape == (1,)
