"""Forward-mode (JVP) rules of diffsci.numpy and diffsci.numpy.linalg (issue #3 §1).

* Coverage: every differentiable primitive has an explicit JVP rule for every argument that
  has a VJP rule, so forward mode never falls back to ``_core._jvp_from_vjp`` (one reverse
  pass per call).  The variadic primitives (concatenate, stack, einsum) get their rules made
  per argument position, alongside their VJP rules.
* Correctness: every spec of ``test_numpy_grads.SPECS`` is checked in forward mode to second
  order (JVP of JVP) with the fallback disabled, and mixed (VJP of JVP, JVP of VJP).
* Shapes: rules of broadcasting primitives return tangents of the output's shape.
* Conventions at kinks: forward and reverse mode compute the same Jacobian there.
* Speed: explicit rules beat the fallback.
"""

from __future__ import annotations

import contextlib
import time
import zlib

import numpy as np
import pytest

import diffsci as ds
import diffsci._core as core
import diffsci.numpy as dnp
import diffsci.numpy.linalg as dla
from diffsci.numpy import _composite
from diffsci.numpy import _wrap as W
from diffsci.testing import check_grads
from tests.diffsci.test_complex import real_jacobian_jvp, real_jacobian_vjp
from tests.diffsci.test_numpy_grads import SPECS, _spec_id


# ---------------------------------------------------------------- discovery
def _primitives():
    """Every differentiable primitive reachable from diffsci.numpy and its linalg, by name
    (public ones and the private primitives behind public wrappers, e.g. ``_clip_p``)."""
    found = {}
    for mod, prefix in ((W, ""), (_composite, ""), (dnp, ""), (dla, "linalg.")):
        for name in dir(mod):
            obj = getattr(mod, name)
            if getattr(obj, "is_primitive", False) and id(obj) not in found:
                found[id(obj)] = (prefix + name, obj)
    return dict(found.values())


PRIMITIVES = _primitives()
VARIADIC = {W._concatenate_p, W._stack_p, W._einsum_p}


@contextlib.contextmanager
def no_fallback():
    """Make forward mode fail loudly if any primitive would use the VJP-based fallback."""
    def refuse(vjps, argnum, *args, **kwargs):
        raise AssertionError(f"primitive {vjps.name!r} argument {argnum} has no JVP rule")

    saved = core._jvp_from_vjp
    core._jvp_from_vjp = refuse
    try:
        yield
    finally:
        core._jvp_from_vjp = saved


@contextlib.contextmanager
def fallback_only(prim):
    """Remove ``prim``'s JVP rules: forward mode then goes through its VJP."""
    saved = dict(prim.jvps)
    prim.jvps.clear()
    try:
        yield
    finally:
        prim.jvps.update(saved)


# ---------------------------------------------------------------- coverage
def test_primitives_are_discovered():
    assert len(PRIMITIVES) >= 100
    for name in ("sin", "_clip_p", "_where_p", "_pad_p", "linalg._eigh_p", "linalg.det"):
        assert name in PRIMITIVES, name


def test_every_primitive_has_an_explicit_jvp():
    missing = []
    for name, prim in sorted(PRIMITIVES.items()):
        if prim in VARIADIC:
            continue
        assert prim.vjps, f"{name} has no VJP rule either"
        missing += [f"{name} (argument {i})" for i in prim.vjps if i not in prim.jvps]
    assert not missing, f"primitives without a JVP rule (forward mode falls back): {missing}"


@pytest.mark.parametrize("n", [1, 3, 7])
def test_variadic_primitives_get_jvps_for_every_operand(n):
    rng = np.random.default_rng(n)
    xs = [rng.standard_normal((2, 3)) for _ in range(n)]
    ts = [rng.standard_normal((2, 3)) for _ in range(n)]
    subs = ",".join("ij" for _ in range(n)) + "->ij"
    calls = {
        "concatenate": (lambda *a: dnp.concatenate(a, axis=1),
                        lambda *a: np.concatenate(a, axis=1)),
        "concatenate axis=None": (lambda *a: dnp.concatenate(a, axis=None),
                                  lambda *a: np.concatenate(a, axis=None)),
        "stack": (lambda *a: dnp.stack(a, axis=-1), lambda *a: np.stack(a, axis=-1)),
        "einsum": (lambda *a: dnp.einsum(subs, *a), None),
    }
    with no_fallback():
        for what, (f, linear) in calls.items():
            y, t = ds.jvp(f, tuple(xs), tuple(ts))
            if linear is not None:  # linear maps: the tangent is the map of the tangents
                np.testing.assert_allclose(t, linear(*ts), err_msg=what)
            check_grads(f, tuple(xs), order=1, modes=("fwd",))
    for prim in VARIADIC:
        assert all(i in prim.jvps for i in range(n)), prim.vjps.name


# ---------------------------------------------------------------- every spec, forward mode
def _args(spec):
    rng = np.random.default_rng(zlib.crc32(spec.name.encode()))
    return tuple(sample(rng) for sample in spec.args)


@pytest.mark.parametrize("spec", SPECS, ids=[_spec_id(s) for s in SPECS])
def test_jvp(spec):
    """JVP and JVP of JVP against central differences, with no fallback anywhere."""
    with no_fallback():
        check_grads(spec.fun, _args(spec), order=spec.order, modes=("fwd",))


@pytest.mark.parametrize("spec", SPECS, ids=[_spec_id(s) for s in SPECS])
def test_mixed_second_order(spec):
    """VJP of JVP and JVP of VJP (the compositions ``hessian`` and ``hvp`` use)."""
    if spec.order < 2:
        pytest.skip("a first-order spec (recorded in-place writes are first order only)")
    with no_fallback():
        check_grads(spec.fun, _args(spec), order=2, modes=("rev", "fwd"))


# ---------------------------------------------------------------- tangent shapes
BROADCASTING = [
    ("add", W.add), ("subtract", W.subtract), ("multiply", W.multiply),
    ("true_divide", W.true_divide), ("power", W.power), ("float_power", W.float_power),
    ("remainder", W.remainder), ("fmod", W.fmod), ("logaddexp", W.logaddexp),
    ("logaddexp2", W.logaddexp2), ("arctan2", W.arctan2), ("hypot", W.hypot),
    ("maximum", W.maximum), ("minimum", W.minimum), ("fmax", W.fmax), ("fmin", W.fmin),
]


@pytest.mark.parametrize("name,prim", BROADCASTING, ids=[b[0] for b in BROADCASTING])
@pytest.mark.parametrize("shapes", [((2, 3), (3,)), ((3,), (2, 3)), ((2, 1), (1, 3)),
                                    ((2, 3), ())])
def test_broadcasting_rules_return_the_output_shape(name, prim, shapes):
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2.0, shapes[0])
    y = rng.uniform(0.5, 2.0, shapes[1])
    ans = prim(x, y)
    for i, a in enumerate((x, y)):
        t = prim.jvps[i](np.ones(np.shape(a)), ans, x, y)
        assert np.shape(t) == np.shape(ans), (name, i, np.shape(t))


@pytest.mark.parametrize("argnum", [0, 1, 2])
def test_clip_and_where_rules_return_the_output_shape(argnum):
    a, lo, hi = np.linspace(-1, 1, 6).reshape(2, 3), np.full(3, -0.5), np.array(0.5)
    ans = W._clip_p(a, lo, hi)
    args = (a, lo, hi)
    assert W._clip_p.jvps[argnum](np.ones(np.shape(args[argnum])), ans, *args).shape == (2, 3)
    c, x, y = np.array([True, False, True]), np.ones((2, 1)), np.zeros(3)
    ans = W._where_p(c, x, y)
    if argnum:
        t = W._where_p.jvps[argnum](np.ones(np.shape((c, x, y)[argnum])), ans, c, x, y)
        assert t.shape == (2, 3)


# ---------------------------------------------------------------- kinks: fwd == rev
def _same_jacobian(f, x):
    if np.iscomplexobj(x):  # compare the real Jacobians (both directions per element)
        with no_fallback():
            jf = real_jacobian_jvp(f, x)
        np.testing.assert_allclose(jf, real_jacobian_vjp(f, x), rtol=1e-12, atol=1e-300)
        return jf
    with no_fallback():
        jf = ds.jacfwd(f)(x)
    np.testing.assert_allclose(jf, ds.jacrev(f)(x), rtol=1e-12, atol=1e-300)
    return jf


KINKS = [
    ("abs at 0", lambda x: dnp.abs(x), np.array([0.0, 2.0, -1.0])),
    ("complex abs at 0", lambda z: dnp.abs(z), np.array([0j, 3 + 4j])),
    ("maximum tie", lambda x: dnp.maximum(x, np.array([1.0, 0.0])), np.array([1.0, 2.0])),
    ("fmin tie", lambda x: dnp.fmin(x, 1.0), np.array([1.0, 0.5])),
    ("max shares ties", lambda x: dnp.max(x), np.array([1.0, 3.0, 3.0])),
    ("min shares ties, axis", lambda x: dnp.min(x, axis=1), np.array([[1.0, 1.0], [2.0, 0.0]])),
    ("clip at a bound", lambda x: dnp.clip(x, 0.0, 1.0), np.array([0.0, -1.0, 1.0, 0.5])),
    ("norm of zero", lambda x: dla.norm(x), np.zeros(3)),
    ("norm of zero rows", lambda x: dla.norm(x, axis=1), np.array([[0.0, 0.0], [3.0, 4.0]])),
    ("prod with one zero", lambda x: dnp.prod(x), np.array([2.0, 0.0, 3.0])),
    ("prod with two zeros", lambda x: dnp.prod(x), np.array([0.0, 0.0, 3.0])),
    ("cumprod with zeros", lambda x: dnp.cumprod(x), np.array([2.0, 0.0, 3.0, 0.0, 1.5])),
    ("prod underflow", lambda x: dnp.prod(x), np.array([1e-200, 1e-200, 5.0])),
    ("cumprod underflow", lambda x: dnp.cumprod(x), np.array([1e-200, 1e-200, 5.0])),
    ("std of a constant", lambda x: dnp.std(x), np.ones(3)),
    ("sinc at 0", lambda x: dnp.sinc(x), np.array([0.0, 0.5])),
    ("hypot at the origin", lambda x: dnp.hypot(x, 0.0), np.array([0.0, 1.0])),
    ("angle at 0", lambda z: dnp.angle(z), np.array([0j, 1 + 1j])),
    ("power y at x = 0", lambda y: dnp.power(np.array([0.0, 2.0]), y), np.array([2.0, 1.5])),
    ("nan_to_num", lambda x: dnp.nan_to_num(x + np.array([0.0, np.inf])), np.array([1.0, 2.0])),
]


@pytest.mark.parametrize("what,f,x", KINKS, ids=[k[0] for k in KINKS])
def test_forward_and_reverse_agree_at_kinks(what, f, x):
    _same_jacobian(f, x)


def test_kink_values():
    np.testing.assert_array_equal(_same_jacobian(lambda x: dnp.max(x), np.array([1.0, 3, 3])),
                                  [0.0, 0.5, 0.5])
    np.testing.assert_array_equal(_same_jacobian(lambda x: dnp.prod(x), np.array([2.0, 0, 3])),
                                  [0.0, 6.0, 0.0])
    np.testing.assert_allclose(
        _same_jacobian(lambda x: dnp.cumprod(x), np.array([1e-200, 1e-200, 5.0]))[2],
        [1e-200 * 5.0, 1e-200 * 5.0, 1e-400], rtol=1e-12)


# ---------------------------------------------------------------- dtypes
@pytest.mark.parametrize("f", [
    lambda x: dnp.sin(x) * dnp.exp(x) / (1 + x ** 2),
    lambda x: dnp.cumprod(dnp.concatenate([x, x])),
    lambda x: dla.solve(dnp.diag(x) + np.eye(3, dtype=np.float32), x),
    lambda x: dnp.std(x) + dla.norm(x, 3) + dnp.max(x),
])
def test_float32_in_float32_tangent_out(f):
    x = np.array([0.6, -0.8, 1.1], np.float32)
    y, t = ds.jvp(f, (x,), (np.ones(3, np.float32),))
    assert t.dtype == np.float32
    np.testing.assert_allclose(t, ds.jvp(f, (x.astype(float),), (np.ones(3),))[1], rtol=2e-3,
                               atol=1e-4)
    check_grads(f, (x,), modes=("fwd",))


# ---------------------------------------------------------------- speed
def _best_time(fn, reps=7, number=20):
    fn()
    best = np.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


SPEED = [
    ("sin", W.sin, lambda x: dnp.sin(x), (5,)),
    ("multiply", W.multiply, lambda x: x * x, (5,)),
    ("matmul", W.matmul, lambda x: x @ x, (4, 4)),
    ("cumprod", W.cumprod, lambda x: dnp.cumprod(x, axis=1), (4, 4)),
]


@pytest.mark.parametrize("name,prim,f,shape", SPEED, ids=[s[0] for s in SPEED])
def test_explicit_jvp_is_faster_than_the_fallback(name, prim, f, shape):
    x = np.random.default_rng(0).standard_normal(shape)
    run = (lambda: ds.jvp(f, (x,), (x,)))
    explicit = _best_time(run)
    with fallback_only(prim):
        np.testing.assert_allclose(run()[1], ds.jvp(f, (x,), (x,))[1])
        fallback = _best_time(run)
    assert prim.jvps, "rules restored"
    assert explicit < fallback, f"{name}: explicit {explicit * 1e6:.1f} µs, " \
                                f"fallback {fallback * 1e6:.1f} µs"


# ---------------------------------------------------------------- svd with full_matrices
@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (4, 2)])
@pytest.mark.parametrize("dtype", [float, complex])
def test_full_svd_tangents_keep_u_and_v_unitary(shape, dtype):
    # The extra columns of a complete U (rows of Vh) are not unique; their tangents are the
    # minimal rotation that keeps U unitary, and the first k columns match the reduced SVD.
    rng = np.random.default_rng(3)
    a, t = rng.standard_normal(shape), rng.standard_normal(shape)
    if dtype is complex:
        a, t = a + 1j * rng.standard_normal(shape), t + 1j * rng.standard_normal(shape)
    with no_fallback():
        (u, s, vh), (du, ds_, dvh) = ds.jvp(lambda a: tuple(dla.svd(a)), (a,), (t,))
        _, (du_k, ds_k, dvh_k) = ds.jvp(lambda a: tuple(dla.svd(a, full_matrices=False)),
                                        (a,), (t,))
    for q, dq in ((u, du), (vh.conj().T, dvh.conj().T)):
        skew = q.conj().T @ dq
        np.testing.assert_allclose(skew, -skew.conj().T, atol=1e-12)
    k = min(shape)
    np.testing.assert_allclose(du[:, :k], du_k, atol=1e-12)
    np.testing.assert_allclose(dvh[:k], dvh_k, atol=1e-12)
    np.testing.assert_allclose(ds_, ds_k, atol=1e-12)
    # the tangent of the (gauge-invariant) reconstruction U S Vh is Ȧ
    m, n = shape
    smat = np.zeros(shape)
    smat[:k, :k] = np.diag(s)
    dsmat = np.zeros(shape)
    dsmat[:k, :k] = np.diag(ds_)
    np.testing.assert_allclose(du @ smat @ vh + u @ dsmat @ vh + u @ smat @ dvh, t, atol=1e-12)
