"""custom_vjp, the primitive registry and hooks."""

import numpy as np
import pytest

import diffsci as ds
from diffsci.extend import defvjp, primitive
from diffsci.testing import check_grads


def test_custom_vjp_pytree_args_and_outputs():
    @ds.custom_vjp
    def f(params, x):
        return {"y": params["a"] * np.sin(x), "z": params["b"] * x}

    def fwd(params, x):
        return f(params, x), (params, x)

    def bwd(res, g):
        params, x = res
        ga = np.sum(g["y"] * np.sin(x))
        gb = np.sum(g["z"] * x)
        gx = g["y"] * params["a"] * np.cos(x) + g["z"] * params["b"]
        return {"a": ga, "b": gb}, gx

    f.defvjp(fwd, bwd)
    p = {"a": 1.5, "b": -0.5}
    x = np.array([0.1, 0.7])
    check_grads(lambda p, x: f(p, x), (p, x))
    # only one output used: the other's cotangent is zeros
    g = ds.grad(lambda x: np.sum(f(p, x)["z"]))(x)
    np.testing.assert_allclose(g, [-0.5, -0.5])


def test_custom_vjp_runs_plain_function_without_tracers_and_needs_rules():
    calls = []

    @ds.custom_vjp
    def f(x):
        calls.append(1)
        return 2 * x

    assert f(3.0) == 6.0 and calls == [1]
    with pytest.raises(TypeError, match="defvjp"):
        ds.grad(f)(1.0)


def test_custom_vjp_second_order_through_differentiable_bwd():
    @ds.custom_vjp
    def sq(x):
        return x * x

    sq.defvjp(lambda x: (x * x, x), lambda x, g: (2 * x * g,))
    assert ds.grad(ds.grad(lambda x: sq(x) * x))(1.5) == pytest.approx(6 * 1.5)
    check_grads(lambda x: sq(x) * np.sin(x), (np.array([0.2, 0.9]),), order=2)


def test_custom_vjp_wrong_cotangent_count():
    @ds.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1],))
    with pytest.raises(TypeError, match="1 cotangent"):
        ds.grad(f)(1.0, 2.0)


def test_primitive_registry_with_kwargs_and_check_grads():
    @primitive
    def scaled_cube(x, scale=1.0):
        return scale * x**3

    defvjp(scaled_cube, lambda g, ans, x, scale=1.0: g * 3 * scale * x**2)
    check_grads(lambda x: scaled_cube(x, scale=2.0), (np.array([0.5, -1.0]),), order=2)


def test_check_grads_catches_a_wrong_adjoint():
    @primitive
    def badsin(x):
        return np.sin(x)

    defvjp(badsin, lambda g, ans, x: g * np.sin(x))  # should be cos
    with pytest.raises(AssertionError, match="VJP of .*argument 0"):
        check_grads(lambda x: badsin(x), (np.array([0.3, 1.1]),))


def test_check_grads_catches_a_wrong_second_order():
    @primitive
    def flatsin(x):
        return np.sin(x)

    # First order right, but the rule hides its own dependence on x from higher orders.
    defvjp(flatsin, lambda g, ans, x: g * ds.stop_gradient(np.cos(x)))
    check_grads(lambda x: flatsin(x), (np.array([0.3, 1.1]),), order=1)
    with pytest.raises(AssertionError, match="VJP of VJP of"):
        check_grads(lambda x: flatsin(x), (np.array([0.3, 1.1]),), order=2)


def test_check_grads_rejects_integer_args():
    with pytest.raises(TypeError, match="dtype int"):
        check_grads(lambda x: x * 2.0, (np.arange(3),))


# ---------------------------------------------------------------- misuse of the rules
# Each rule broken one way, under every differentiation that calls it (reverse, forward through
# the VJP, second order); the error names the function, the argument and what came.
def _rules_with(bwd=None, fwd=None, jvp=None):
    @ds.custom_vjp
    def f(x, y):
        return np.sin(x) * y

    f.defvjp(fwd or (lambda x, y: (f(x, y), (x, y))),
             bwd or (lambda r, g: (g * np.cos(r[0]) * r[1], g * np.sin(r[0]))))
    if jvp is not None:
        f.defjvp(jvp)
    return f


X2 = np.array([0.3, -1.1])
Y2 = np.array([0.7, 2.0])


def _differentiations(f):
    """(name, thunk) for every transform that reaches f's rules (both arguments traced)."""
    def loss(z):
        return np.sum(f(z[:2], z[2:]) ** 2)

    z0 = np.concatenate([X2, Y2])
    return [
        ("grad", lambda: ds.grad(lambda x, y: np.sum(f(x, y) ** 2), argnums=(0, 1))(X2, Y2)),
        ("jvp", lambda: ds.jvp(f, (X2, Y2), (np.ones(2), np.ones(2)))),
        ("hessian rev", lambda: ds.hessian(loss)(z0)),
        ("hessian fwd", lambda: ds.hessian(loss, mode="fwd")(z0)),
        ("grad of grad", lambda: ds.grad(lambda t: ds.grad(loss)(z0 * t)[0])(1.0)),
    ]


BAD_BWD = [
    ("too few", lambda r, g: (g * np.cos(r[0]) * r[1],), TypeError, r"1 cotangent\(s\) for 2"),
    ("too many", lambda r, g: (g, g, g), TypeError, r"3 cotangent\(s\) for 2"),
    ("not a tuple", lambda r, g: g * np.cos(r[0]) * r[1], TypeError, "must return a tuple"),
    ("a list", lambda r, g: [g * np.cos(r[0]), g], TypeError, "must return a tuple.*list"),
    ("wrong shape", lambda r, g: (np.sum(g * np.cos(r[0]) * r[1]), g * np.sin(r[0])),
     ValueError, r"argument 0 has shape \(\); expected \(2,\)"),
    ("broadcastable shape", lambda r, g: (g * np.cos(r[0]) * r[1], (g * np.sin(r[0]))[None]),
     ValueError, r"argument 1 has shape \(1, 2\); expected \(2,\)"),
    ("complex for a real argument", lambda r, g: (g * np.cos(r[0]) * r[1] + 0j, g * np.sin(r[0])),
     TypeError, "argument 0 is complex.*real"),
    ("integer dtype", lambda r, g: (g * np.cos(r[0]) * r[1], np.ones(2, dtype=int)),
     TypeError, "argument 1 has dtype int64; expected a float cotangent"),
    ("a string", lambda r, g: ("zero", g * np.sin(r[0])), TypeError, "argument 0 is a str"),
    ("wrong structure", lambda r, g: ({"x": g}, g), TypeError, "argument 0 has structure"),
]


@pytest.mark.parametrize("what,bwd,exc,match", BAD_BWD, ids=[b[0] for b in BAD_BWD])
def test_bwd_misuse_raises_naming_the_rule_and_argument(what, bwd, exc, match):
    f = _rules_with(bwd=bwd)
    for how, thunk in _differentiations(f):
        with pytest.raises(exc, match=match) as info:
            thunk()
            pytest.fail(f"no error under {how}")
        assert "custom_vjp f" in str(info.value), how


BAD_FWD = [
    ("output only", lambda x, y: np.stack([np.sin(x) * y, x])),  # an array of length 2 unpacks
    ("triple", lambda x, y: (np.sin(x) * y, (x, y), None)),
    ("output only, scalar", lambda x, y: np.sum(np.sin(x) * y)),
]


@pytest.mark.parametrize("what,fwd", BAD_FWD, ids=[b[0] for b in BAD_FWD])
def test_fwd_not_returning_a_pair_raises(what, fwd):
    f = _rules_with(fwd=fwd)
    for how, thunk in _differentiations(f):
        with pytest.raises(TypeError, match=r"custom_vjp f: its fwd must return a pair"):
            thunk()
            pytest.fail(f"no error under {how}")


def _good_jvp(p, t):
    (x, y), (dx, dy) = p, t
    out = np.sin(x) * y
    d = 0.0
    if dx is not None:
        d = d + np.cos(x) * y * dx
    if dy is not None:
        d = d + np.sin(x) * dy
    return out, d


BAD_JVP = [
    ("not a pair", lambda p, t: np.stack(_good_jvp(p, t)), "its jvp must return a pair"),
    ("tangent shape", lambda p, t: (_good_jvp(p, t)[0], np.sum(_good_jvp(p, t)[1])),
     r"tangent for output leaf 0 has shape \(\); expected \(2,\)"),
    ("complex tangent of a real output", lambda p, t: (_good_jvp(p, t)[0],
                                                      _good_jvp(p, t)[1] * (1 + 1j)),
     "is complex, but the value it belongs to is real"),
    ("tangent count", lambda p, t: (_good_jvp(p, t)[0], (_good_jvp(p, t)[1],) * 2),
     "2 tangent leaves for 1 output leaves"),
]


@pytest.mark.parametrize("what,jvp,match", BAD_JVP, ids=[b[0] for b in BAD_JVP])
def test_jvp_rule_misuse_raises(what, jvp, match):
    f = _rules_with(jvp=jvp)
    for how, thunk in _differentiations(f):
        if how in ("grad", "hessian rev", "grad of grad"):
            continue  # reverse over reverse does not use the jvp rule
        with pytest.raises((TypeError, ValueError), match=match) as info:
            thunk()
        assert "custom_vjp f" in str(info.value), how


def test_well_formed_rules_pass_every_differentiation():
    # The reference point of the misuse tests above: the same rules, well formed, give the
    # derivatives of sin(x) * y in every mode (and None / a float32 cotangent are accepted).
    f = _rules_with(bwd=lambda r, g: (g * np.cos(r[0]) * r[1], None), jvp=_good_jvp)
    check_grads(lambda x: f(x, Y2), (X2,), order=2)
    f32 = _rules_with(bwd=lambda r, g: (np.asarray(g * np.cos(r[0]) * r[1], np.float32),
                                        g * np.sin(r[0])))
    g = ds.grad(lambda x, y: np.sum(f32(x, y)), argnums=(0, 1))(X2, Y2)
    np.testing.assert_allclose(g[0], np.cos(X2) * Y2, rtol=1e-6)
    np.testing.assert_allclose(g[1], np.sin(X2), rtol=1e-12)


def test_complex_cotangent_for_a_complex_argument_is_fine():
    @ds.custom_vjp
    def f(z):
        return np.real(z * np.conj(z))

    f.defvjp(lambda z: (f(z), z), lambda z, g: (2 * g * z,))
    z = np.array([1 + 2j, -0.5j])
    np.testing.assert_allclose(ds.grad(lambda z: np.sum(f(z)))(z), 2 * z)
    check_grads(lambda z: f(z), (z,), order=2)


def test_pytree_argument_cotangent_checked_per_leaf():
    @ds.custom_vjp
    def f(p):
        return p["a"] * p["b"]

    f.defvjp(lambda p: (f(p), p), lambda p, g: ({"a": np.sum(g * p["b"]), "b": g * p["a"]},))
    p = {"a": np.array([1.0, 2.0]), "b": np.array([3.0, 4.0])}
    with pytest.raises(ValueError, match=r"argument 0 \(leaf 0 of its pytree\) has shape \(\)"):
        ds.grad(lambda p: np.sum(f(p)))(p)


# custom_jvp lives in diffsci/_forward.py; its rule is checked the same way once that module
# calls diffsci._custom.check_jvp_output on the rule's result (proposed, not yet applied).
def _custom_jvp_with(rule):
    @ds.custom_jvp
    def g(x):
        return np.sin(x)

    g.defjvp(rule)
    return g


@pytest.mark.parametrize("rule", [
    lambda p, t: np.stack([np.sin(p[0]), np.cos(p[0]) * t[0]]),  # not a pair: rows unpack
    lambda p, t: (np.sin(p[0]), np.sum(np.cos(p[0]) * t[0])),   # tangent of the wrong shape
], ids=["not a pair", "tangent shape"])
def test_custom_jvp_rule_misuse_raises(rule):
    g = _custom_jvp_with(rule)
    with pytest.raises((TypeError, ValueError), match="custom_jvp g"):
        ds.jvp(g, (np.array([0.2, 0.5]),), (np.ones(2),))


# ---------------------------------------------------------------- property: any shape mismatch
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@settings(max_examples=60, deadline=None)
@given(arg_shape=_shapes, ct_shape=_shapes, kind=st.sampled_from(["f", "c", "i"]),
       arg_complex=st.booleans())
def test_bwd_cotangent_checked_for_every_shape_and_kind(arg_shape, ct_shape, kind, arg_complex):
    # A bwd returning a cotangent of shape ct_shape and dtype kind ``kind`` for an argument of
    # shape arg_shape: accepted exactly when the shapes agree, the kind is float or complex,
    # and complex only for a complex argument; the gradient is then that cotangent.
    ct = {"f": np.ones(ct_shape), "c": np.ones(ct_shape) * (1 + 1j),
          "i": np.ones(ct_shape, dtype=np.int64)}[kind]

    @ds.custom_vjp
    def f(x):
        return np.sum(np.real(x))

    f.defvjp(lambda x: (f(x), None), lambda r, g: (ct,))  # g = 1 under grad
    x = np.full(arg_shape, 0.5) * (1 + 1j if arg_complex else 1)
    ok = ct_shape == arg_shape and kind in "fc" and (kind == "f" or arg_complex)
    if ok:
        np.testing.assert_array_equal(ds.grad(f)(x), ct)
    else:
        with pytest.raises((TypeError, ValueError), match="custom_vjp f: bwd's cotangent for "
                                                          "argument 0"):
            ds.grad(f)(x)
