"""unique, the set operations, histogram_bin_edges, nextafter and heaviside: NumPy's values
bit for bit on plain and traced inputs, the tie convention (each returned value is the mean of
its copies) against a dense reference, both modes to second order, np.<name> dispatch, and
that none of them is the old silent zero."""

import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffsci as ds
import diffsci.numpy as dnp
from diffsci.testing import check_grads

from . import test_numpy_grads as _grads  # noqa: F401  first: specs_sets imports it
from .specs_sets import SPECS  # noqa: E402


# ---------------------------------------------------------------- references
def _tie_jacobian(v, x):
    """Dense reference: d v_j / d x_i = 1 / (copies of v_j in x) where x_i == v_j (finite)."""
    v, x = np.ravel(v), np.ravel(x)
    jac = np.zeros((len(v), len(x)))
    for j, vj in enumerate(v):
        if not np.isfinite(vj):
            continue
        hits = [i for i, xi in enumerate(x) if xi == vj]
        for i in hits:
            jac[j, i] = 1.0 / len(hits)
    return jac


def _jac_both(f, x):
    """The Jacobian of ``f`` at ``x`` in reverse and in forward mode."""
    return ds.jacobian(f)(x), ds.jacfwd(f)(x)


# ---------------------------------------------------------------- the grids
_ARRAYS = [
    np.array([2.0, 1.0, 2.0, 3.0, 1.0, 2.0]),
    np.array([0.0, -0.0, 1.5, -0.0]),
    np.array([np.nan, 1.0, np.nan, np.inf, -np.inf, 1.0, np.inf]),
    np.array([0.1, 0.1, 0.1, 0.2]) * 3,
    np.array([[1.0, 5.0, 1.0], [5.0, 0.5, 7.0]]),
    np.array([4.0]),
    np.zeros(0),
    np.array([1.0, 3.0, 1.0], np.float32),
    np.array([1 + 2j, 1 - 1j, 1 + 2j, -0.0 + 0j, complex(0.0, -0.0), 1 - 1j]),
]
_IDS = ["dups", "signed-zeros", "nan-inf", "rounded", "2d", "one", "empty", "float32",
        "complex"]

_UNIQUE_CALLS = [
    ("unique", lambda m, x: m.unique(x)),
    ("unique flags", lambda m, x: m.unique(x, True, True, True)),
    ("unique equal_nan=False", lambda m, x: m.unique(x, return_counts=True, equal_nan=False)),
    ("unique unsorted", lambda m, x: m.unique(x, return_inverse=True, sorted=False)),
    ("unique_values", lambda m, x: m.unique_values(x)),
    ("unique_counts", lambda m, x: m.unique_counts(x)),
    ("unique_inverse", lambda m, x: m.unique_inverse(x)),
    ("unique_all", lambda m, x: m.unique_all(x)),
]


def _assert_same(ours, theirs):
    """Equal structure, dtypes and values (bit for bit, NaN equal to NaN, signs of zeros)."""
    if isinstance(theirs, tuple):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            _assert_same(o, t)
        return
    o = np.asarray(ds.stop_gradient(ours))
    assert o.dtype == theirs.dtype and o.shape == theirs.shape
    np.testing.assert_array_equal(o, theirs)
    for part in (np.real, np.imag) if o.dtype.kind == "c" else (np.asarray,):
        np.testing.assert_array_equal(np.signbit(part(o)), np.signbit(part(theirs)))


def _values(res):
    return res[0] if isinstance(res, tuple) else res


@pytest.mark.parametrize("x", _ARRAYS, ids=_IDS)
@pytest.mark.parametrize("name,call", _UNIQUE_CALLS, ids=[c[0] for c in _UNIQUE_CALLS])
def test_unique_values_are_numpys_and_ties_share(name, call, x):
    theirs = call(np, x)
    _assert_same(call(dnp, x), theirs)  # plain input
    seen = {}

    def f(x):
        res = call(dnp, x)
        seen["res"] = ds.stop_gradient(_values(res)), res[1:] if isinstance(res, tuple) else ()
        assert ds.extend.is_tracer(_values(res)) or np.size(_values(theirs)) == 0
        return _values(res)

    if np.size(_values(theirs)) == 0:
        f(x)
        return
    jac = ds.jacobian(f)(x)
    vals, rest = seen["res"]
    _assert_same(vals, _values(theirs))
    for o, t in zip(rest, theirs[1:] if isinstance(theirs, tuple) else ()):
        _assert_same(o, t)  # indices, inverse, counts: NumPy's plain integers
        assert not ds.extend.is_tracer(o)
    ref = _tie_jacobian(_values(theirs), x).reshape(jac.shape)
    np.testing.assert_allclose(jac, ref, rtol=1e-6 if x.dtype == np.float32 else 1e-15)
    np.testing.assert_allclose(ds.jacfwd(f)(x), ref, rtol=1e-6 if x.dtype == np.float32 else 1e-15)


def test_unique_rows_share_ties():
    x = np.array([[1.0, 2.0], [0.5, 0.3], [1.0, 2.0], [1.0, 2.0]])
    u, inv, cnt = np.unique(x, axis=0, return_inverse=True, return_counts=True)
    res = dnp.unique(x, axis=0, return_inverse=True, return_counts=True)
    _assert_same(res, (u, inv, cnt))
    for jac in _jac_both(lambda x: dnp.unique(x, axis=0), x):
        for j in range(len(u)):
            for i in range(len(x)):
                expect = np.eye(2) / cnt[j] if inv.ravel()[i] == j else np.zeros((2, 2))
                np.testing.assert_allclose(jac[j, :, i, :], expect, rtol=1e-15)
    xt = np.ascontiguousarray(x.T)  # the same along axis=1
    _assert_same(dnp.unique(xt, axis=1), np.unique(xt, axis=1))
    np.testing.assert_allclose(ds.jacobian(lambda x: dnp.unique(x, axis=1))(xt),
                               ds.jacobian(lambda x: dnp.unique(x, axis=0))(x).transpose(
                                   1, 0, 3, 2), rtol=1e-15)


_PAIRS = [
    (np.array([1.0, 2.0, 2.0, 5.0]), np.array([2.0, 7.0, 1.0])),
    (np.array([0.3, 0.3, 0.3]), np.array([0.3])),
    (np.array([1.0, np.nan, np.inf]), np.array([np.inf, np.nan, 4.0, 4.0])),
    (np.array([[3.0, 1.0], [1.0, 3.0]]), np.array([9.0, 8.0])),
    (np.array([1.0, 2.0]), np.zeros(0)),
]
_SET_CALLS = [
    ("union1d", lambda m, a, b: m.union1d(a, b), True),
    ("intersect1d", lambda m, a, b: m.intersect1d(a, b), True),
    ("intersect1d indices", lambda m, a, b: m.intersect1d(a, b, return_indices=True), True),
    ("setxor1d", lambda m, a, b: m.setxor1d(a, b), True),
    ("setdiff1d", lambda m, a, b: m.setdiff1d(a, b), False),
    ("setdiff1d assume_unique", lambda m, a, b: m.setdiff1d(a, b, assume_unique=True), False),
]


@pytest.mark.parametrize("a,b", _PAIRS, ids=["dups", "all-tied", "nan-inf", "2d", "empty"])
@pytest.mark.parametrize("name,call,uses_b", _SET_CALLS, ids=[c[0] for c in _SET_CALLS])
def test_set_values_are_numpys_and_ties_share(name, call, uses_b, a, b):
    theirs = call(np, a, b)
    _assert_same(call(dnp, a, b), theirs)
    vals = _values(theirs)
    both = np.concatenate([a.ravel(), b.ravel()])
    ref = _tie_jacobian(vals, both if uses_b else a)
    for argnum in (0, 1):
        def f(x, argnum=argnum):
            res = call(dnp, x, b) if argnum == 0 else call(dnp, a, x)
            _assert_same(res, theirs)
            return _values(res)

        x = (a, b)[argnum]
        if vals.size == 0 or x.size == 0:
            f(x)
            continue
        n_a = a.size
        expect = (ref[:, :n_a] if argnum == 0 else (ref[:, n_a:] if uses_b else
                                                     np.zeros((len(vals), b.size))))
        for jac in _jac_both(f, x):
            np.testing.assert_allclose(jac.reshape(expect.shape), expect, rtol=1e-15)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-1.5, -0.0, 0.0, 0.25, 1.0, 2.0, np.inf, np.nan]),
                min_size=1, max_size=9),
       st.lists(st.sampled_from([-1.5, 0.0, 0.25, 2.0, 3.0, np.nan]), min_size=0, max_size=6))
def test_property_every_value_is_the_mean_of_its_copies(a, b):
    a, b = np.array(a), np.array(b, dtype=float)
    both = np.concatenate([a, b])
    for call, x, src in [(lambda x: dnp.unique(x), a, a),
                         (lambda x: dnp.union1d(x[: a.size], x[a.size:]), both, both),
                         (lambda x: dnp.intersect1d(x[: a.size], x[a.size:]), both, both),
                         (lambda x: dnp.setxor1d(x[: a.size], x[a.size:]), both, both),
                         (lambda x: dnp.setdiff1d(x, b), a, a)]:
        out = np.asarray(ds.stop_gradient(call(x)))
        if out.size == 0:
            continue
        jac = ds.jacobian(call)(x)
        np.testing.assert_allclose(jac, _tie_jacobian(out, src), rtol=1e-15)


# ---------------------------------------------------------------- bin edges
_BINS = [1, 2, 3, 7, "auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt"]
_SAMPLES = [np.random.default_rng(3).standard_normal(25), np.array([0.3, 0.3, 0.3]),
            np.array([-2.0, 5.0, 5.0, -2.0, 1.0]), np.linspace(0.0, 1.0, 11),
            np.random.default_rng(4).uniform(-1, 1, 15).astype(np.float32),
            np.array([1e-300, 2e-300, 5e-300]), np.array([1e8, 1e8 + 3.0])]


def _edge_jacobian(a, edges):
    """Closed form: edge k = lo + (hi - lo) k / n, lo/hi shared among tied extrema."""
    a = np.ravel(a)
    n = len(edges) - 1
    lo = (a == a.min()) / np.sum(a == a.min())
    hi = (a == a.max()) / np.sum(a == a.max())
    k = np.arange(n + 1)[:, None]
    return (1 - k / n) * lo + (k / n) * hi


@pytest.mark.filterwarnings("ignore:The number of bins estimated may be suboptimal")
@pytest.mark.parametrize("bins", _BINS, ids=[str(b) for b in _BINS])
@pytest.mark.parametrize("a", _SAMPLES, ids=["normal", "constant", "tied-extrema", "grid",
                                              "float32", "tiny", "large"])
def test_histogram_bin_edges_values_and_derivative(a, bins):
    with np.errstate(all="ignore"):
        theirs = np.histogram_bin_edges(a, bins)
    _assert_same(dnp.histogram_bin_edges(a, bins), theirs)
    seen = {}

    def f(a):
        seen["e"] = dnp.histogram_bin_edges(a, bins)
        return seen["e"]

    with np.errstate(all="ignore"):
        jacs = _jac_both(f, a)
    _assert_same(seen["e"], theirs)
    ref = _edge_jacobian(a, theirs)
    for jac in jacs:
        np.testing.assert_allclose(jac, ref, rtol=1e-5 if a.dtype == np.float32 else 1e-12,
                                   atol=1e-6 if a.dtype == np.float32 else 1e-15)
    counts, edges = dnp.histogram(ds.stop_gradient(a), bins)
    with np.errstate(all="ignore"):
        tc, te = np.histogram(a, bins)
    _assert_same((counts, edges), (tc, te))


def test_histogram_edges_and_density_follow_a():
    a = np.array([0.0, 1.0, 4.0, 2.5, 3.9])
    for density in (False, True):
        res = {}

        def f(a, density=density):
            res["r"] = dnp.histogram(a, 3, density=density)
            return res["r"][1]

        jac = ds.jacobian(f)(a)
        _assert_same(res["r"], np.histogram(a, 3, density=density))
        np.testing.assert_allclose(jac, _edge_jacobian(a, res["r"][1]), rtol=1e-12)
    # density = c / (N (max - min) / n): d/dmax = -density / (max - min), d/dmin = +that
    dens = np.histogram(a, 3, density=True)[0]
    jac = ds.jacobian(lambda a: dnp.histogram(a, 3, density=True)[0])(a)
    ref = np.zeros((3, 5))
    ref[:, 0], ref[:, 2] = dens / 4.0, -dens / 4.0
    np.testing.assert_allclose(jac, ref, rtol=1e-12)
    check_grads(lambda a: dnp.histogram(a, 3, density=True)[0], (a,), order=2)
    # traced weights and traced a together
    w = np.array([1.0, 2.0, 0.5, 1.0, 3.0])
    _assert_same(dnp.histogram(a, 3, density=True, weights=w),
                 np.histogram(a, 3, density=True, weights=w))
    check_grads(lambda a, w: dnp.histogram(a, 3, density=True, weights=w)[0], (a, w), order=2)


def test_explicit_range_gives_constant_edges_and_a_traced_range_moves_them():
    a = np.array([0.2, 0.9, 0.4])

    def f(a):
        e = dnp.histogram_bin_edges(a, 4, range=(0.0, 1.0))
        assert not ds.extend.is_tracer(e)
        return dnp.sum(a) + np.sum(e)

    np.testing.assert_array_equal(ds.grad(f)(a), np.ones(3))
    for lo, hi in [(-1.0, 2.0), (0.5, 0.5)]:
        theirs = np.histogram_bin_edges(a, 4, range=(lo, hi))
        jl, jh = ds.jacobian(lambda lo, hi: dnp.histogram_bin_edges(a, 4, range=(lo, hi)),
                             argnums=(0, 1))(lo, hi)
        _assert_same(dnp.histogram_bin_edges(a, 4, range=(lo, hi)), theirs)
        np.testing.assert_allclose(jl, 1 - np.arange(5) / 4, rtol=1e-15)
        np.testing.assert_allclose(jh, np.arange(5) / 4, rtol=1e-15)


def test_array_bins_are_returned_traced():
    b = np.array([0.0, 0.5, 2.0])
    e = ds.jacobian(lambda b: dnp.histogram_bin_edges(np.ones(3), b))(b)
    np.testing.assert_array_equal(e, np.eye(3))
    with pytest.raises(ValueError, match="monotonically"):
        ds.grad(lambda b: dnp.sum(dnp.histogram_bin_edges(np.ones(3), b)))(b[::-1].copy())


@pytest.mark.parametrize("bad,match", [((2.0, 1.0), "max must be larger than min"),
                                       ((0.0, np.inf), "finite")])
def test_bad_range_raises_numpys_error_on_traced_input(bad, match):
    with pytest.raises(ValueError, match=match):
        ds.grad(lambda a: dnp.sum(dnp.histogram_bin_edges(a, 3, range=bad)))(np.ones(3))


def test_nonfinite_data_raises_numpys_error_on_traced_input():
    with pytest.raises(ValueError, match="not finite"):
        ds.grad(lambda a: dnp.sum(dnp.histogram_bin_edges(a, 3)))(np.array([1.0, np.nan]))


# ---------------------------------------------------------------- nextafter, heaviside
_X1 = np.array([-2.0, -0.0, 0.0, 1e-320, 1.0, np.inf, 3.0])
_X2 = np.array([0.0, 1.0, -1.0, 0.0, 1.0, 0.0, 3.0])


def test_nextafter_values_and_derivatives():
    theirs = np.nextafter(_X1, _X2)
    res = {}

    def f(x1, x2):
        res["v"] = dnp.nextafter(x1, x2)
        return res["v"]

    j1, j2 = ds.jacobian(f, argnums=(0, 1))(_X1, _X2)
    _assert_same(res["v"], theirs)
    _assert_same(dnp.nextafter(_X1, _X2), theirs)
    np.testing.assert_array_equal(j1, np.eye(7))
    np.testing.assert_array_equal(j2, np.zeros((7, 7)))
    _, t = ds.jvp(f, (_X1, _X2), (np.arange(7.0), np.ones(7)))
    np.testing.assert_array_equal(t, np.arange(7.0))
    # broadcasting, both modes, second order (a plain scalar x2, a traced scalar x1)
    x = np.random.default_rng(1).standard_normal((2, 3))
    check_grads(lambda x, y: dnp.nextafter(x, y) * x, (x, np.array([5.0, -5.0, 0.1])), order=2)
    check_grads(lambda s: dnp.nextafter(s, x) ** 2, (0.7,), order=2)


def test_heaviside_values_and_derivatives():
    h = np.array([0.5, 0.0, 1.0, 0.25, 2.0, 0.0, -1.0])
    theirs = np.heaviside(_X1, h)
    _assert_same(dnp.heaviside(_X1, h), theirs)
    res = {}

    def f(x1, x2):
        res["v"] = dnp.heaviside(x1, x2)
        return res["v"]

    j1, j2 = ds.jacobian(f, argnums=(0, 1))(_X1, h)
    _assert_same(res["v"], theirs)
    np.testing.assert_array_equal(j1, np.zeros((7, 7)))
    np.testing.assert_array_equal(j2, np.diag((_X1 == 0).astype(float)))
    _, t = ds.jvp(f, (_X1, h), (np.ones(7), np.arange(7.0)))
    np.testing.assert_array_equal(t, np.where(_X1 == 0, np.arange(7.0), 0.0))
    # a scalar x2 collects every zero step; both modes to second order
    np.testing.assert_array_equal(ds.grad(lambda s: dnp.sum(dnp.heaviside(_X1, s)))(0.5), 2.0)
    check_grads(lambda s: dnp.heaviside(_X1, s) * s, (0.5,), order=2)

    def only_x1(x1):
        r = dnp.heaviside(x1, 0.5)
        assert not ds.extend.is_tracer(r)  # the step alone has derivative zero a.e.
        return dnp.sum(x1) + np.sum(r)

    np.testing.assert_array_equal(ds.grad(only_x1)(_X1[:5]), np.ones(5))


def test_heaviside_out_and_where_on_traced_values():
    out = np.full(3, -7.0)
    x1 = np.array([0.0, 1.0, 0.0])

    def f(h):
        buf = dnp.zeros_like(h)
        np.heaviside(x1, h, out=buf, where=np.array([True, True, False]))
        return buf

    np.testing.assert_array_equal(ds.stop_gradient(f(np.array([0.5, 0.5, 0.5]))),
                                  [0.5, 1.0, 0.0])
    np.testing.assert_array_equal(ds.jacobian(f)(np.array([0.5, 0.5, 0.5])),
                                  np.diag([1.0, 0.0, 0.0]))
    np.heaviside(x1, 0.5, out=out)
    np.testing.assert_array_equal(out, [0.5, 1.0, 0.5])


# ---------------------------------------------------------------- np.<name> dispatch
_DISPATCH = [
    ("np.unique", lambda x: np.unique(x, return_counts=True)[0] * 2.0),
    ("np.unique_all", lambda x: np.unique_all(x).values * 2.0),
    ("np.unique_values", lambda x: np.unique_values(x) ** 2),
    ("np.union1d", lambda x: np.union1d(x, np.array([9.0, 1.0]))),
    ("np.intersect1d", lambda x: np.intersect1d(x, np.array([2.0, 3.0]))),
    ("np.setdiff1d", lambda x: np.setdiff1d(x, np.array([3.0]))),
    ("np.setxor1d", lambda x: np.setxor1d(x, np.array([3.0, 8.0]))),
    ("np.histogram_bin_edges", lambda x: np.histogram_bin_edges(x, 4)),
    ("np.histogram", lambda x: np.histogram(x, 2, density=True)[0]),
    ("np.nextafter", lambda x: np.nextafter(x, 0.0) * x),
    ("np.heaviside", lambda x: np.heaviside(x - 2.0, x)),
]
_XD = np.array([2.0, 1.0, 2.0, 3.0, 5.0])


@pytest.mark.parametrize("what,plain", _DISPATCH, ids=[d[0] for d in _DISPATCH])
def test_plain_numpy_dispatch_is_differentiable(what, plain):
    val = plain(_XD)  # plain arrays: NumPy itself
    res = {}

    def f(x):
        res["v"] = plain(x)
        return res["v"]

    jac = ds.jacobian(f)(_XD)
    _assert_same(res["v"], val)
    assert np.any(jac != 0), f"{what}: the old silent zero"
    np.testing.assert_allclose(ds.jacfwd(f)(_XD), jac, rtol=1e-15)


# ---------------------------------------------------------------- both modes, order 2
def _spec_id(spec, _seen={}):  # noqa: B006 - counter for readable ids
    k = _seen[spec.name] = _seen.get(spec.name, 0) + 1
    return f"{spec.name}-{k}"


@pytest.mark.parametrize("spec", SPECS, ids=[_spec_id(s) for s in SPECS])
def test_specs_in_both_modes_and_not_silent_zero(spec):
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()) + 1)
    args = tuple(sample(rng) for sample in spec.args)
    check_grads(spec.fun, args, order=spec.order, modes=("rev", "fwd"))
    if spec.name == "heaviside" and np.all(args[0] != 0) and len(args) == 2:
        return  # x1 away from 0: the derivative is zero there, by definition
    jac = ds.jacobian(spec.fun, argnums=tuple(range(len(args))))(*args)
    assert any(np.any(np.asarray(j) != 0) for j in jac), f"{spec.name}: silent zero"
