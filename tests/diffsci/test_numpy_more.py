"""diffsci/numpy/_more.py: values equal NumPy's, gradients equal independent references.

Gradients are checked to second order by the spec table (``specs_numpy_more.py``, run by
test_numpy_grads and test_jvps).  Here each class of function is swept over its documented
domain: the traced path's values against NumPy's own, and the Jacobians of the linear maps
(convolution, interp in ``fp``, gradient, quantile in ``a``) against dense references built
from NumPy alone.
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffsci as ds
import diffsci.numpy as dnp
from diffsci.testing import check_grads


def traced_value(f, *args):
    """``f``'s value computed on the traced path (every argument traced)."""
    return ds.pullback(f, *args)[0]


def jacobian(f, x):
    return ds.jacobian(f)(x)


def dense_jacobian(linear, n):
    """The Jacobian of a linear map of R^n, column by column from unit vectors."""
    return np.stack([np.asarray(linear(e)) for e in np.eye(n)], axis=-1)


R = np.random.default_rng(7)


# ---------------------------------------------------------------- convolution
@pytest.mark.parametrize("n,m", list(itertools.product(range(1, 6), range(1, 6))))
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_correlate_match_numpy_and_dense_jacobians(n, m, mode):
    a, v = R.standard_normal(n), R.standard_normal(m) + 1j * R.standard_normal(m)
    for ours, theirs in ((dnp.convolve, np.convolve), (dnp.correlate, np.correlate)):
        np.testing.assert_allclose(traced_value(lambda a, v: ours(a, v, mode), a, v),
                                   theirs(a, v, mode), rtol=1e-13, atol=1e-14)
        # Linear in a: the Jacobian is NumPy's map applied to unit vectors.
        ja = jacobian(lambda a: dnp.real(ours(a, v, mode)), a)
        np.testing.assert_allclose(ja, dense_jacobian(lambda e: theirs(e, v, mode).real, n),
                                   atol=1e-13)


def test_convolve_gradients_second_order_and_dispatch():
    a, v = R.standard_normal(6), R.standard_normal(3)
    check_grads(lambda a, v: dnp.convolve(a, v, "same") ** 2, (a, v), order=2)
    g1 = ds.grad(lambda a: np.sum(np.convolve(a, v) ** 2))(a)
    g2 = ds.grad(lambda a: dnp.sum(dnp.convolve(a, v) ** 2))(a)
    np.testing.assert_allclose(g1, g2)


# ---------------------------------------------------------------- interp
@settings(max_examples=40, deadline=None)
@given(st.integers(2, 8), st.integers(0, 2**31 - 1))
def test_interp_values_and_jacobians(n, seed):
    r = np.random.default_rng(seed)
    xp = np.cumsum(r.uniform(0.2, 1.0, n))
    fp = r.standard_normal(n)
    x = r.uniform(xp[0] - 1, xp[-1] + 1, 7)
    np.testing.assert_allclose(traced_value(dnp.interp, x, xp, fp), np.interp(x, xp, fp),
                               rtol=1e-13, atol=1e-14)
    # Linear in fp: columns are np.interp of unit vectors (the hat functions).
    np.testing.assert_allclose(jacobian(lambda f: dnp.interp(x, xp, f), fp),
                               dense_jacobian(lambda e: np.interp(x, xp, e), n), atol=1e-14)
    # In x: the slope of the interval holding x (0 outside the samples).
    j = np.clip(np.searchsorted(xp, x, "right") - 1, 0, n - 2)
    slope = np.where((x < xp[0]) | (x > xp[-1]), 0.0, np.diff(fp)[j] / np.diff(xp)[j])
    np.testing.assert_allclose(np.diag(jacobian(lambda x: dnp.interp(x, xp, fp), x)), slope,
                               rtol=1e-12, atol=1e-14)


def test_interp_period_and_complex_match_numpy():
    xp, x = np.array([0.2, 0.9, 1.7]), np.linspace(-3, 5, 17)
    fp = R.standard_normal(3) + 1j * R.standard_normal(3)
    np.testing.assert_allclose(traced_value(lambda f: dnp.interp(x, xp, f, period=2.0), fp),
                               np.interp(x, xp, fp, period=2.0), rtol=1e-13)
    np.testing.assert_allclose(traced_value(lambda f: dnp.interp(x, [1.0], f), fp[:1]),
                               np.interp(x, [1.0], fp[:1]))


# ---------------------------------------------------------------- numpy.gradient
@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("spacing", ["none", "scalar", "uniform", "coords"])
def test_gradient_matches_numpy_and_is_its_linear_map(edge_order, spacing):
    f = R.standard_normal((4, 5))
    coords = np.array([0.0, 0.3, 1.1, 1.5, 2.6])
    args = {"none": (), "scalar": (0.7,), "uniform": (np.arange(5.0) * 0.5,),
            "coords": (coords,)}[spacing]
    call = lambda f: dnp.gradient(f, *args, axis=1, edge_order=edge_order)  # noqa: E731
    np.testing.assert_allclose(traced_value(call, f),
                               np.gradient(f, *args, axis=1, edge_order=edge_order),
                               rtol=1e-13, atol=1e-13)
    jac = jacobian(lambda row: call(np.stack([row, row]))[0], f[0])
    ref = dense_jacobian(lambda e: np.gradient(np.stack([e, e]), *args, axis=1,
                                               edge_order=edge_order)[0], 5)
    np.testing.assert_allclose(jac, ref, atol=1e-12)


def test_gradient_in_the_coordinates_and_all_axes():
    f, x = R.standard_normal(5), np.array([0.0, 0.3, 1.1, 1.5, 2.6])
    np.testing.assert_allclose(traced_value(lambda f, x: dnp.gradient(f, x, edge_order=2), f, x),
                               np.gradient(f, x, edge_order=2), rtol=1e-13)
    check_grads(lambda x: dnp.gradient(f, x, edge_order=2), (x,), order=2, modes=("rev", "fwd"))
    f2 = R.standard_normal((3, 4))
    got = traced_value(lambda f: dnp.gradient(f, 2.0, 0.5), f2)
    for g, e in zip(got, np.gradient(f2, 2.0, 0.5)):
        np.testing.assert_allclose(g, e, rtol=1e-13)


# ---------------------------------------------------------------- order statistics
METHODS = ["linear", "hazen", "weibull", "median_unbiased", "normal_unbiased",
           "interpolated_inverted_cdf", "lower", "higher", "nearest", "midpoint"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", [1, 2, 5, 6])
def test_quantile_matches_numpy_over_q(method, n):
    a = R.standard_normal((3, n))
    q = np.linspace(0, 1, 11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(traced_value(lambda a: dnp.quantile(a, q, 1, method=method), a),
                                   np.quantile(a, q, 1, method=method), rtol=1e-13, atol=1e-15)
        a_nan = a.copy()
        a_nan[0, 0] = np.nan
        np.testing.assert_allclose(
            traced_value(lambda a: dnp.nanquantile(a, q, 1, method=method, keepdims=True),
                         a_nan),
            np.nanquantile(a_nan, q, 1, method=method, keepdims=True), rtol=1e-13, atol=1e-15)
        np.testing.assert_allclose(traced_value(lambda a: dnp.quantile(a, q, 1), a_nan),
                                   np.quantile(a_nan, q, 1))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 9), st.floats(0.0, 1.0), st.integers(0, 2**31 - 1))
def test_linear_quantile_gradient_is_the_interpolation_weights(n, q, seed):
    a = np.random.default_rng(seed).permutation(n) * 0.5 + 0.1
    g = ds.grad(lambda a: dnp.quantile(a, q))(a)
    pos = q * (n - 1)
    lo = int(np.floor(pos))
    hi = min(lo + 1, n - 1)
    w = np.zeros(n)
    order = np.argsort(a)
    w[order[lo]] += 1 - (pos - lo) if hi != lo else 1.0
    if hi != lo:
        w[order[hi]] += pos - lo
    np.testing.assert_allclose(g, w, atol=1e-12)
    # in q: the slope between the two order statistics
    s = np.sort(a)
    gq = ds.grad(lambda q: dnp.quantile(a, q))(q)
    np.testing.assert_allclose(gq, 0.0 if hi == lo or pos >= n - 1 else
                               (s[hi] - s[lo]) * (n - 1), atol=1e-12)


@pytest.mark.parametrize("shape,axis", [((7,), None), ((4, 6), 1), ((4, 5), 0),
                                        ((2, 3, 4), (0, 2)), ((1,), None)])
def test_median_and_nanmedian_equal_numpy(shape, axis):
    a = R.standard_normal(shape)
    for keep in (False, True):
        assert np.array_equal(traced_value(lambda a: dnp.median(a, axis, keepdims=keep), a),
                              np.median(a, axis, keepdims=keep))
    a.ravel()[::3] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(traced_value(lambda a: dnp.nanmedian(a, axis), a),
                                      np.nanmedian(a, axis))
        np.testing.assert_array_equal(traced_value(lambda a: dnp.median(a, axis), a),
                                      np.median(a, axis))


# ---------------------------------------------------------------- NaN-ignoring reductions
NAN_REDUCTIONS = ["nansum", "nanmean", "nanprod", "nanmax", "nanmin", "nanvar", "nanstd",
                  "nanmedian", "nancumsum", "nancumprod"]
PLAIN_OF = {"nansum": np.sum, "nanmean": np.mean, "nanprod": np.prod, "nanmax": np.max,
            "nanmin": np.min, "nanvar": np.var, "nanstd": np.std, "nanmedian": np.median,
            "nancumsum": np.cumsum, "nancumprod": np.cumprod}


@pytest.mark.parametrize("name", NAN_REDUCTIONS)
def test_nan_reductions_equal_numpy_and_ignore_nans_in_the_gradient(name):
    a = R.permutation(8) * 0.3 + 0.2
    a[[1, 5]] = np.nan
    ours = getattr(dnp, name)
    np.testing.assert_allclose(traced_value(ours, a), getattr(np, name)(a), rtol=1e-13)
    ok = ~np.isnan(a)

    def loss(x):
        return dnp.sum(ours(x) * 1.0)

    g = ds.grad(loss)(a)
    assert np.all(g[~ok] == 0)
    # the gradient on the finite entries is the plain reduction's on them alone
    ref = ds.grad(lambda x: dnp.sum(PLAIN_OF[name](x) * 1.0))(a[ok]) if name not in (
        "nancumsum", "nancumprod") else None
    if ref is not None:
        np.testing.assert_allclose(g[ok], ref, rtol=1e-12, atol=1e-15)
    if name in ("nanvar", "nanstd", "nanmedian", "nanmax", "nanmin"):
        np.testing.assert_allclose(
            traced_value(lambda x: ours(x.reshape(2, 4), axis=1, keepdims=True), a),
            getattr(np, name)(a.reshape(2, 4), axis=1, keepdims=True), rtol=1e-13)


def test_all_nan_slices_give_nan_and_warn_like_numpy():
    a = np.array([[np.nan, np.nan], [1.0, 2.0]])
    for name in ("nanmax", "nanmedian", "nanquantile"):
        args = (0.5,) if name == "nanquantile" else ()
        with pytest.warns(RuntimeWarning):
            got = traced_value(lambda x: getattr(dnp, name)(x, *args, axis=1), a)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_array_equal(got, getattr(np, name)(a, *args, axis=1))


# ---------------------------------------------------------------- statistics
COV_CASES = [dict(), dict(rowvar=False), dict(bias=True), dict(ddof=0),
             dict(fweights=np.array([1, 2, 1, 3, 1])), dict(aweights=np.array([.5, 1, 2, 1, .2])),
             dict(fweights=np.array([1, 2, 1, 3, 1]), aweights=np.array([.5, 1, 2, 1, .2]),
                  ddof=2)]


@pytest.mark.parametrize("kw", COV_CASES, ids=[str(sorted(k)) for k in COV_CASES])
def test_cov_and_corrcoef_equal_numpy(kw):
    m = R.standard_normal((3, 5))
    if kw.get("rowvar") is False:
        m = m.T
    np.testing.assert_allclose(traced_value(lambda m: dnp.cov(m, **kw), m), np.cov(m, **kw),
                               rtol=1e-13)
    rv = kw.get("rowvar", True)
    np.testing.assert_allclose(traced_value(lambda m: dnp.corrcoef(m, rowvar=rv), m),
                               np.corrcoef(m, rowvar=rv), rtol=1e-13)


def test_roots_gradient_closed_form():
    # p(r) = 0 at a simple root r: dr/dp_k = -r^(n-k) / p'(r)
    p = np.array([1.0, -6.0, 11.0, -6.0])
    r = np.sort(np.roots(p).real)
    jac = ds.jacobian(lambda p: dnp.sort(dnp.real(dnp.roots(p))))(p)
    powers = r[:, None] ** np.arange(3, -1, -1)[None, :]
    np.testing.assert_allclose(jac, -powers / np.polyval(np.polyder(p), r)[:, None],
                               rtol=1e-10)


def test_cov_gradient_closed_form():
    # d/dX <W, cov(X)> = (W + Wᵀ)(X - mean) / (n - 1)
    x, w = R.standard_normal((3, 6)), R.standard_normal((3, 3))
    g = ds.grad(lambda x: dnp.sum(w * dnp.cov(x)))(x)
    np.testing.assert_allclose(g, (w + w.T) @ (x - x.mean(1, keepdims=True)) / 5, rtol=1e-12)
    check_grads(lambda a: dnp.cov(x, aweights=a), (R.uniform(0.5, 2, 6),), order=2)


# ---------------------------------------------------------------- values of the rest
VALUES = [
    ("append", lambda x: dnp.append(x, [[1.0, 2.0, 3.0]], axis=0), (np.ones((2, 3)),)),
    ("r_", lambda x: dnp.r_[x, 2, 0:3, np.ones(2)], (np.arange(3.0),)),
    ("r_ axis/ndmin", lambda x: dnp.r_["0,2,1", x, x], (np.arange(3.0),)),
    ("c_", lambda x: dnp.c_[x, x * 2, np.zeros(3)], (np.arange(3.0),)),
    ("c_ 2-d", lambda x: dnp.c_[x, np.ones((2, 1))], (np.ones((2, 2)),)),
    ("partition", lambda x: dnp.partition(x, [1, 4]), (R.standard_normal(9),)),
    ("partition axis 0", lambda x: dnp.partition(x, 1, axis=0), (R.standard_normal((4, 3)),)),
    ("rollaxis", lambda x: dnp.rollaxis(x, 1, 3), (np.ones((2, 3, 4)),)),
    ("real_if_close", lambda z: dnp.real_if_close(z + 1e-16j), (np.ones(3),)),
    ("meshgrid xy", lambda x, y: dnp.meshgrid(x, y, np.ones(2)), (np.arange(3.0), np.ones(4))),
    ("meshgrid ij sparse", lambda x, y: dnp.meshgrid(x, y, indexing="ij", sparse=True),
     (np.arange(3.0), np.ones(4))),
    ("block", lambda a: dnp.block([[a, np.zeros((2, 1))], [np.ones((1, 3))]]), (np.eye(2),)),
    ("block 3-d", lambda a: dnp.block([[[a], [a]]]), (np.eye(2),)),
    ("insert scalar", lambda x: dnp.insert(x, 2, 9.0), (np.arange(4.0),)),
    ("insert axis", lambda x: dnp.insert(x, [1, 1], [[7.0], [8.0]], axis=1), (np.ones((2, 2)),)),
    ("insert slice", lambda x: dnp.insert(x, slice(0, 2), 5.0, axis=0), (np.ones((2, 2)),)),
    ("delete", lambda x: dnp.delete(x, [0, -1], axis=0), (R.standard_normal((4, 2)),)),
    ("delete mask", lambda x: dnp.delete(x, [True, False, True]), (np.arange(3.0),)),
    ("unwrap", lambda p: dnp.unwrap(p), (np.cumsum(R.uniform(-3, 3, 9)),)),
    ("unwrap discont", lambda p: dnp.unwrap(p, discont=4.0, period=5.0), (np.cumsum(
        R.uniform(-3, 3, 9)),)),
    ("geomspace", lambda a: dnp.geomspace(a, 1000.0, 4), (np.float64(1.0),)),
    ("geomspace negative", lambda a: dnp.geomspace(a, -8.0, 4), (np.float64(-1.0),)),
    ("logspace", lambda a: dnp.logspace(a, 2.0, 5, base=3.0), (np.float64(0.5),)),
    ("cumulative_sum", lambda x: dnp.cumulative_sum(x, axis=0, include_initial=True),
     (np.ones((2, 2)),)),
    ("cumulative_prod", lambda x: dnp.cumulative_prod(x * 2, include_initial=True),
     (np.ones(3),)),
    ("ediff1d", lambda x: dnp.ediff1d(x, to_begin=-1, to_end=[5, 6]), (np.arange(4.0) ** 2,)),
    ("polyval", lambda p, x: dnp.polyval(p, x), (R.standard_normal(4), R.standard_normal(3))),
    ("polyfit", lambda x, y: dnp.polyfit(x, y, 2), (np.linspace(0, 1, 6),
                                                    R.standard_normal(6))),
    ("vander", lambda x: dnp.vander(x, 4), (R.standard_normal(3),)),
    ("poly", lambda z: dnp.poly(z), (R.standard_normal(3),)),
    ("polyder/int", lambda p: dnp.polyint(dnp.polyder(p), k=1.5), (R.standard_normal(4),)),
    ("trim_zeros", lambda x: dnp.trim_zeros(x * np.array([0, 0, 1, 1, 0])), (np.ones(5),)),
    ("resize", lambda x: dnp.resize(x, 7), (np.arange(3.0),)),
    ("copysign", lambda x: dnp.copysign(x, np.array([-1.0, 1.0, -0.0])), (np.array([1., -2, 0]),)),
    ("frexp", lambda x: dnp.frexp(x), (R.standard_normal(3) * 100,)),
    ("modf", lambda x: dnp.modf(x), (R.standard_normal(3) * 3,)),
    ("matvec", lambda a, v: dnp.matvec(a, v), (R.standard_normal((2, 3)), R.standard_normal(3))),
    ("piecewise", lambda x: dnp.piecewise(x, [x < 0], [np.cos, lambda v: 2 * v]),
     (R.standard_normal(5),)),
    ("apply_along_axis", lambda x: dnp.apply_along_axis(lambda v: v[::-1] * v[0], 1, x),
     (R.standard_normal((2, 3)),)),
    ("kaiser", lambda b: dnp.kaiser(7, b), (np.float64(3.0),)),
    ("roots", lambda p: dnp.roots(p), (np.array([0.0, 1.0, -3.0, 2.0, 0.0, 0.0]),)),
    ("roots complex", lambda p: dnp.roots(p), (np.array([1.0, 2.0, 5.0]),)),
    ("i0", lambda x: dnp.i0(x), (R.standard_normal(4) * 3,)),
    ("polydiv", lambda u, v: dnp.polydiv(u, v), (R.standard_normal(5), np.array([2.0, 0.5]))),
    ("mean of a list", lambda x, y: dnp.mean([x, y, 3.0]), (np.float64(1.0), np.float64(2.0))),
    ("var of nested lists", lambda x: dnp.var([[x, 1.0], [2.0, x * x]], axis=1),
     (np.float64(1.5),)),
]


@pytest.mark.parametrize("what,f,args", VALUES, ids=[v[0] for v in VALUES])
def test_traced_values_equal_numpy(what, f, args):
    got, want = traced_value(f, *args), f(*args)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-14)
        assert np.shape(g) == np.shape(w)


# ---------------------------------------------------------------- plain numpy code
PLAIN = [
    ("np.interp", lambda f: np.interp(0.7, [0.0, 1.0, 2.0], f)),
    ("np.median", lambda f: np.median(f)),
    ("np.percentile", lambda f: np.percentile(f, 30)),
    ("np.nanmax", lambda f: np.nanmax(f)),
    ("np.nanstd", lambda f: np.nanstd(f)),
    ("np.cov", lambda f: np.sum(np.cov(np.stack([f, f ** 2])))),
    ("np.gradient", lambda f: np.sum(np.gradient(f) ** 2)),
    ("np.convolve", lambda f: np.sum(np.convolve(f, [1.0, -2.0]) ** 2)),
    ("np.append / np.insert / np.delete",
     lambda f: np.sum(np.delete(np.insert(np.append(f, f), 1, f[0]), 2) ** 2)),
    ("np.meshgrid", lambda f: np.sum(np.meshgrid(f, f)[0] * np.meshgrid(f, f)[1])),
    ("np.polyval", lambda f: np.polyval(f, 1.5)),
    ("np.partition", lambda f: np.partition(f, 1)[1]),
    ("np.unwrap", lambda f: np.sum(np.unwrap(f * 3))),
]


@pytest.mark.parametrize("what,f", PLAIN, ids=[p[0] for p in PLAIN])
def test_plain_numpy_code_dispatches(what, f):
    x = np.array([0.3, 1.4, -0.6])
    check_grads(f, (x,), order=1, modes=("rev", "fwd"))
    np.testing.assert_allclose(traced_value(f, x), f(x), rtol=1e-13)


# ---------------------------------------------------------------- casts (autograd's suite)
def test_explicit_casts():
    # dnp.astype / x.astype to a float dtype keep the gradient; to an int dtype cut it.
    assert ds.grad(lambda x: dnp.astype(x, np.float64) * x)(1.5) == 3.0
    assert ds.grad(lambda x: dnp.sum(x.astype(np.int64) * x))(np.array([1.5])) == [1.0]
    # NumPy's scalar types do not dispatch, so they can never differentiate: np.float64(x)
    # (a float cast, derivative 1) is refused rather than cutting the gradient silently;
    # an integer cast (np.int64(x), derivative 0 a.e.) returns the plain integer.
    for x in (1.5, np.array([1.5, 2.0])):
        with pytest.raises(ds.TracerConversionError):
            ds.grad(lambda x: np.sum(np.float64(x) * x))(x)
    assert ds.grad(lambda x: np.int64(x) * x)(1.5) == 1.0
    np.testing.assert_array_equal(
        ds.grad(lambda x: np.sum(np.asarray(x, np.int64) * x))(np.array([1.5, 2.5])), [1, 2])


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("call,exc,match", [
    (lambda x: dnp.interp(0.5, [0.0, 1.0], x), ValueError, "same length"),
    (lambda x: dnp.quantile(x, 0.5, method="inverted_cdf"), NotImplementedError,
     "quantile: method='inverted_cdf'"),
    (lambda x: dnp.quantile(x, 1.5), ValueError, "range"),
    (lambda x: dnp.convolve(x[None], x), ValueError, "1-d"),
    (lambda x: dnp.cov(x[None, None]), ValueError, "more than 2 dimensions"),
    (lambda x: dnp.gradient(x[:1]), ValueError, "too small"),
    (lambda x: dnp.gradient(x, [0.0, 1.0]), ValueError, "match the length"),
    (lambda x: dnp.polyfit(x, x, 1, full=True), NotImplementedError, "polyfit"),
    (lambda x: dnp.r_["r", x, x], NotImplementedError, "matrix directive"),
    (lambda x: dnp.quantile(x + 1j, 0.5), TypeError, "quantile: a must be an array of real"),
    (lambda x: dnp.nanpercentile(x + 1j, 5), TypeError, "nanpercentile: a must be"),
    (lambda x: dnp.ldexp(x + 1j, 2), TypeError, "ldexp: real input"),
    (lambda x: dnp.i0(x + 1j), TypeError, "i0: real input"),
    (lambda x: dnp.geomspace(x[0] + 1j, 2.0, 3), NotImplementedError, "complex endpoints"),
])
def test_bad_input_names_the_function(call, exc, match):
    with pytest.raises(exc, match=match):
        ds.grad(lambda x: dnp.sum(call(x)))(np.array([0.3, 1.4, -0.6]))


# ---------------------------------------------------------------- in-place writers
def _filled(write, x, *args, **kwargs):
    y = x * 1.0
    write(y, *args, **kwargs)
    return y


WRITERS = [
    ("fill_diagonal", lambda x, v: _filled(np.fill_diagonal, x, v), (3, 3), (2,)),
    ("fill_diagonal wrap", lambda x, v: _filled(np.fill_diagonal, x, v, wrap=True), (7, 3), ()),
    ("fill_diagonal 3-d", lambda x, v: _filled(np.fill_diagonal, x, v), (2, 2, 2), (2,)),
    ("put", lambda x, v: _filled(np.put, x, [0, 4, -1], v), (2, 3), (2,)),
    ("put clip", lambda x, v: _filled(np.put, x, [9, 1], v, mode="clip"), (2, 3), (2,)),
    ("place", lambda x, v: _filled(np.place, x, np.array([[1, 0, 1], [0, 0, 1]], bool), v),
     (2, 3), (2,)),
    ("putmask", lambda x, v: _filled(np.putmask, x, np.array([[1, 0, 1], [1, 1, 0]], bool), v),
     (2, 3), (4,)),
    ("put_along_axis", lambda x, v: _filled(np.put_along_axis, x, np.array([[2], [0]]), v, 1),
     (2, 3), (2, 1)),
    ("copyto", lambda x, v: _filled(np.copyto, x, v, where=np.array([True, False, True])),
     (2, 3), (3,)),
]


@pytest.mark.parametrize("what,f,xshape,vshape", WRITERS, ids=[w[0] for w in WRITERS])
def test_in_place_writers_on_traced_arrays(what, f, xshape, vshape):
    """np.fill_diagonal/put/place/putmask/put_along_axis/copyto write into traced arrays:
    values equal NumPy's; first-order gradients in the buffer and the values (recorded
    in-place writes are first order only)."""
    x, v = R.standard_normal(xshape), R.standard_normal(vshape)
    np.testing.assert_array_equal(traced_value(f, x, v), f(x, v))
    check_grads(f, (x, v), order=1, modes=("rev", "fwd"))


def test_writing_traced_values_into_a_plain_array_raises():
    from diffsci.numpy import _more
    # np.fill_diagonal dispatches on its destination only: NumPy's own conversion refuses
    with pytest.raises(TypeError, match="plain NumPy array"):
        ds.grad(lambda v: np.fill_diagonal(np.zeros((2, 2)), v))(1.0)
    with pytest.raises(TypeError, match="fill_diagonal: writing traced values"):
        ds.grad(lambda v: _more.fill_diagonal(np.zeros((2, 2)), v))(1.0)


# ---------------------------------------------------------------- lists of traced values
# Every function taking array_like: a list of traced scalars behaves as the stacked array.
LIST_CALLS = {
    "mean": lambda a: dnp.mean(a), "std": lambda a: dnp.std(a), "var": lambda a: dnp.var(a),
    "sum": lambda a: dnp.sum(a), "prod": lambda a: dnp.prod(a), "max": lambda a: dnp.max(a),
    "min": lambda a: dnp.min(a), "cumsum": lambda a: dnp.cumsum(a),
    "cumprod": lambda a: dnp.cumprod(a), "exp": lambda a: dnp.exp(a),
    "sin": lambda a: dnp.sin(a), "add": lambda a: dnp.add(a, a), "dot": lambda a: dnp.dot(a, a),
    "matmul": lambda a: dnp.matmul(a, a), "ravel": lambda a: dnp.ravel(a),
    "average": lambda a: dnp.average(a), "ptp": lambda a: dnp.ptp(a),
    "nansum": lambda a: dnp.nansum(a), "nanmean": lambda a: dnp.nanmean(a),
    "diff": lambda a: dnp.diff(a), "trapezoid": lambda a: dnp.trapezoid(a, a),
    "sort": lambda a: dnp.sort(a), "flip": lambda a: dnp.flip(a), "roll": lambda a: dnp.roll(a, 1),
    "repeat": lambda a: dnp.repeat(a, 2), "take": lambda a: dnp.take(a, [0, 3]),
    "outer": lambda a: dnp.outer(a, a), "inner": lambda a: dnp.inner(a, a),
    "kron": lambda a: dnp.kron(a, a), "vdot": lambda a: dnp.vdot(a, a),
    "split": lambda a: dnp.split(a, 2), "pad": lambda a: dnp.pad(a, 1),
    "linspace": lambda a: dnp.linspace(a, 3.0, 3), "full": lambda a: dnp.full((2, 4), a),
    "median": lambda a: dnp.median(a), "quantile": lambda a: dnp.quantile(a, 0.3),
    "percentile": lambda a: dnp.percentile(a, [10.0, 80.0]),
    "nanmax": lambda a: dnp.nanmax(a), "nanvar": lambda a: dnp.nanvar(a),
    "nanstd": lambda a: dnp.nanstd(a), "nanmedian": lambda a: dnp.nanmedian(a),
    "nanprod": lambda a: dnp.nanprod(a), "nancumsum": lambda a: dnp.nancumsum(a),
    "interp": lambda a: dnp.interp(1.7, [0.0, 1.0, 2.0, 3.0], a),
    "convolve": lambda a: dnp.convolve(a, a), "correlate": lambda a: dnp.correlate(a, a, "full"),
    "cov": lambda a: dnp.cov(a), "polyval": lambda a: dnp.polyval(a, 1.5),
    "polyfit": lambda a: dnp.polyfit([0.0, 1.0, 2.0, 3.5], a, 1),
    "gradient": lambda a: dnp.gradient(a), "ediff1d": lambda a: dnp.ediff1d(a),
    "append": lambda a: dnp.append(a, a), "insert": lambda a: dnp.insert(a, 1, a[:1]),
    "delete": lambda a: dnp.delete(a, 1), "partition": lambda a: dnp.partition(a, 1),
    "cumulative_sum": lambda a: dnp.cumulative_sum(a), "unwrap": lambda a: dnp.unwrap(a),
    "vander": lambda a: dnp.vander(a, 3), "meshgrid": lambda a: dnp.meshgrid(a, a),
    "geomspace": lambda a: dnp.geomspace(a, 2.0, 3), "resize": lambda a: dnp.resize(a, 6),
    "apply_along_axis": lambda a: dnp.apply_along_axis(dnp.sum, 0, a),
    "polyder": lambda a: dnp.polyder(a), "i0": lambda a: dnp.i0(a),
    "reshape": lambda a: dnp.reshape(a, (2, 2)), "moveaxis": lambda a: dnp.moveaxis(a, 0, 0),
    "expand_dims": lambda a: dnp.expand_dims(a, 0), "squeeze": lambda a: dnp.squeeze(a),
    "broadcast_to": lambda a: dnp.broadcast_to(a, (2, 4)), "tile": lambda a: dnp.tile(a, 2),
    "triu": lambda a: dnp.triu(a), "where": lambda a: dnp.where(np.arange(4) > 1, a, 0.0),
    "clip": lambda a: dnp.clip(a, 0.5, 1.5), "astype": lambda a: dnp.astype(a, np.complex128),
    "atleast_2d": lambda a: dnp.atleast_2d(a), "einsum": lambda a: dnp.einsum("i,i", a, a),
    "tensordot": lambda a: dnp.tensordot(a, a, 1), "transpose": lambda a: dnp.transpose(a),
    "swapaxes": lambda a: dnp.swapaxes(dnp.atleast_2d(a), 0, 1),
}


@pytest.mark.parametrize("name", sorted(LIST_CALLS))
def test_a_list_of_traced_values_is_an_array(name):
    f = LIST_CALLS[name]
    x = np.array([0.9, 1.7, 0.4, 1.3])

    def as_list(x):
        return f([x[0], x[1], x[2], x[3]])

    def as_array(x):
        return f(x)

    np.testing.assert_allclose(traced_value(as_list, x), traced_value(as_array, x), rtol=1e-14)
    jl, ja = ds.jacobian(as_list)(x), ds.jacobian(as_array)(x)
    for a, b in zip(jl, ja) if isinstance(ja, tuple) else [(jl, ja)]:
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)


def test_docstring_examples_run():
    import doctest

    from diffsci.numpy import _more
    from diffsci.scipy import interpolate, signal
    for mod in (_more, signal, interpolate):
        res = doctest.testmod(mod, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert res.failed == 0 and res.attempted > 0, (mod.__name__, res)
