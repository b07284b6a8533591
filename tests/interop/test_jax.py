"""diffsci ⇄ JAX: to_jax and from_jax.

Gradients are compared with the same computation written in jax.numpy (to 1e-12) and
checked by jax.test_util.check_grads / diffsci.testing.check_grads (finite differences).
The conftest turns jax_enable_x64 on for each test of this folder and back off after it.
"""

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402
from jax.test_util import check_grads as jax_check_grads  # noqa: E402

import diffsci as ds  # noqa: E402
from diffsci.interop import from_jax, to_jax  # noqa: E402
from diffsci.testing import check_grads  # noqa: E402


def _model(xp):
    def f(p, x):
        h = xp.tanh(x @ p["w"] + p["b"])
        return {"loss": xp.sum(xp.sin(h) ** 2) + xp.sum(p["w"] ** 2), "h": h}

    return f


def _inputs(seed):
    rng = np.random.default_rng(seed)
    return ({"w": jnp.asarray(rng.normal(size=(3, 2))), "b": jnp.asarray(rng.normal(size=2))},
            jnp.asarray(rng.normal(size=(4, 3))))


def _close(a, b, tol=1e-12):
    for u, v in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=tol, atol=tol)


def _scalar(f):
    return lambda p, x: f(p, x)["loss"] + jnp.sum(f(p, x)["h"] ** 3)


def test_grad_jit_vmap_match_native_jax():
    p, x = _inputs(0)
    f, ref = to_jax(_model(np)), _model(jnp)
    _close(f(p, x), ref(p, x))
    g = jax.grad(_scalar(f), argnums=(0, 1))(p, x)
    gr = jax.grad(_scalar(ref), argnums=(0, 1))(p, x)
    _close(g, gr)
    _close(jax.jit(jax.grad(_scalar(f)))(p, x), gr[0])
    xs = jnp.stack([x, 2 * x, -x])
    _close(jax.vmap(jax.grad(_scalar(f)), in_axes=(None, 0))(p, xs),
           jax.vmap(jax.grad(_scalar(ref)), in_axes=(None, 0))(p, xs))


def test_check_grads_second_order_both_modes():
    x = jnp.asarray([0.3, -0.8, 1.1])
    fn = lambda xp: lambda x: xp.sin(x) * x[::-1] ** 2  # noqa: E731
    jax_check_grads(to_jax(fn(np)), (x,), order=2, modes=["rev"])
    jax_check_grads(to_jax(fn(np), mode="fwd"), (x,), order=2, modes=["fwd"])
    _close(jax.jacfwd(to_jax(fn(np), mode="fwd"))(x), jax.jacfwd(fn(jnp))(x))
    _close(jax.jacrev(to_jax(fn(np)))(x), jax.jacrev(fn(jnp))(x))
    s = lambda xp: lambda x: xp.sum(fn(xp)(x))  # noqa: E731
    h = jax.hessian(s(jnp))(x)
    _close(jax.jacfwd(jax.jacfwd(to_jax(s(np), mode="fwd")))(x), h)
    _close(jax.jacrev(jax.jacrev(to_jax(s(np))))(x), h)


def test_complex_convention_is_conjugated():
    rng = np.random.default_rng(2)
    z = jnp.asarray(rng.normal(size=3) + 1j * rng.normal(size=3))
    loss = lambda xp: lambda z: xp.sum(xp.abs(xp.exp(z) * xp.conj(z) + z ** 2) ** 2)  # noqa
    _close(jax.grad(to_jax(loss(np)))(z), jax.grad(loss(jnp))(z))
    # JAX's gradient of |z|² at 1+2i is 2−4i, the conjugate of diffsci's 2+4i (README)
    assert complex(jax.grad(to_jax(lambda z: np.abs(z) ** 2))(jnp.asarray(1 + 2j))) == 2 - 4j
    assert complex(ds.grad(lambda z: np.abs(z) ** 2)(1 + 2j)) == 2 + 4j
    v = jnp.asarray(rng.normal(size=3) + 1j * rng.normal(size=3))
    for fn in (lambda xp: lambda z: xp.exp(z) * xp.conj(z),   # neither
               lambda xp: lambda z: xp.sin(z) * z):            # holomorphic
        _close(jax.vjp(to_jax(fn(np)), z)[1](v), jax.vjp(fn(jnp), z)[1](v))
        _close(jax.jvp(to_jax(fn(np), mode="fwd"), (z,), (v,)), jax.jvp(fn(jnp), (z,), (v,)))
    fn = lambda z: np.exp(z) * np.conj(z)  # noqa: E731
    jax_check_grads(to_jax(fn), (z,), order=2, modes=["rev"])
    jax_check_grads(to_jax(fn, mode="fwd"), (z,), order=2, modes=["fwd"])


def test_float32_and_integer_inputs():
    f = to_jax(lambda x, i: np.sum(np.tanh(x[i]) ** 2))
    x = jnp.asarray([0.1, -0.5, 0.7], jnp.float32)
    i = jnp.asarray([2, 0])
    y = f(x, i)
    assert y.dtype == jnp.float32
    gx, gi = jax.grad(f, argnums=(0, 1), allow_int=True)(x, i)
    assert gx.dtype == jnp.float32 and gi.dtype == jax.dtypes.float0
    gr = jax.grad(lambda x: jnp.sum(jnp.tanh(x[i]) ** 2))(x)
    np.testing.assert_allclose(gx, gr, rtol=1e-6, atol=1e-7)
    assert gx[1] == 0


def test_batched_vmap_method():
    # f takes a leading batch axis: vmap hands it the whole batch in one call
    calls = []

    def f(x, w):
        calls.append(np.shape(x))
        return np.tanh(x * w)

    fb = to_jax(f, vmap_method="broadcast_all")
    xs, w = jnp.linspace(-1.0, 1.0, 5), jnp.asarray(0.7)
    g = jax.vmap(jax.grad(lambda x, w: fb(x, w), argnums=(0, 1)), in_axes=(0, None))(xs, w)
    gr = jax.vmap(jax.grad(lambda x, w: jnp.tanh(x * w), argnums=(0, 1)),
                  in_axes=(0, None))(xs, w)
    _close(g, gr)
    assert (5,) in calls and () not in calls[1:]


def test_declared_and_inferred_shapes():
    f = to_jax(lambda x: np.linalg.cholesky(x) @ np.ones(2),
               out_shape=jax.ShapeDtypeStruct((2,), jnp.float64))
    a = jnp.asarray([[4.0, 1.0], [1.0, 3.0]])
    _close(jax.jit(f)(a), jnp.linalg.cholesky(a) @ jnp.ones(2))
    # inference under jit calls f on zeros: a Cholesky of zeros fails, with the way out named
    g = to_jax(lambda x: np.linalg.cholesky(x) @ np.ones(2), name="chol")
    with pytest.raises(ValueError, match=r"to_jax\(chol\): inferring the output shapes called "
                                         r"f on zeros.*declare out_shape="):
        jax.jit(g)(a)
    g(a)                           # one concrete call infers the shapes ...
    _close(jax.jit(g)(a), f(a))    # ... and jit reuses them
    bad = to_jax(lambda x: np.sum(x), out_shape=jax.ShapeDtypeStruct((3,), jnp.float64),
                 name="bad")
    with pytest.raises(Exception, match=r"to_jax\(bad\): output leaf 0 has shape \(\), but "
                                        r"\(3,\) was declared"):
        jax.block_until_ready(bad(a))
    with pytest.raises(TypeError, match=r"output leaf 0 is a str"):
        to_jax(lambda x: "nope", name="s")(a)
    with pytest.raises(ValueError, match="mode must be 'rev', 'fwd' or 'both'"):
        to_jax(np.sin, mode="sideways")


def test_from_jax_all_orders_against_native():
    fn = lambda x, y: (jnp.tanh(x) * y ** 2, jnp.sum(jnp.sin(x * y)))  # noqa: E731
    f = from_jax(fn)
    x, y = np.array([0.3, -0.7]), np.array([1.2, 0.4])
    check_grads(f, (x, y), order=2)
    got = ds.grad(lambda x, y: np.sum(f(x, y)[0]) + 3 * f(x, y)[1], argnums=(0, 1))(x, y)
    ref = jax.grad(lambda x, y: jnp.sum(fn(x, y)[0]) + 3 * fn(x, y)[1], argnums=(0, 1))(x, y)
    _close(got, ref)
    _close(ds.hessian(lambda x: f(x, y)[1])(x), jax.hessian(lambda x: fn(x, y)[1])(x))


def test_from_jax_complex_and_errors():
    f = from_jax(lambda z: jnp.exp(z) * jnp.conj(z))
    z = np.array([0.3 + 0.4j, -0.2 + 0.1j])
    check_grads(f, (z,), order=2)
    v = np.array([1.0 - 2.0j, 0.5 + 0.5j])
    _, back = ds.pullback(f, z)
    # diffsci's cotangent is the conjugate of JAX's, with conjugated output cotangents
    jv = jax.vjp(lambda z: jnp.exp(z) * jnp.conj(z), z)[1](np.conj(v))[0]
    np.testing.assert_allclose(back(v)[0], np.conj(jv), rtol=1e-12, atol=1e-12)
    jax.config.update("jax_enable_x64", False)  # the conftest restores it
    with pytest.raises(TypeError, match=r"from_jax\(sq\): input 0 is float64 but JAX computes "
                                        r"in float32.*jax_enable_x64"):
        from_jax(lambda x: x ** 2, name="sq")(np.ones(2))
    jax.config.update("jax_enable_x64", True)
    with pytest.raises(TypeError, match=r"output leaf 0 is a str"):
        from_jax(lambda x: "nope", jit=False)(np.ones(2))


def test_vjp_runs_f_once_and_recomputes_when_the_pullback_is_gone(monkeypatch):
    from diffsci.interop import _jax

    calls = []

    def f(x):
        calls.append(1)
        return np.sin(x) * x

    x, v = jnp.asarray([0.2, 0.9]), jnp.asarray([1.0, -2.0])
    bridged = to_jax(f)
    ref = (jnp.sin(x) + x * jnp.cos(x)) * v
    bridged(x)                  # infers the shapes (one call)
    del calls[:]
    y, back = jax.vjp(bridged, x)   # eager: the forward callback runs now and keeps ...
    _close(back(v), (ref,))         # ... the pullback the backward callback then uses
    assert len(calls) == 1
    _close(back(2 * v), (2 * ref,))  # called again: still the kept pullback
    assert len(calls) == 1
    monkeypatch.setattr(_jax, "_KEEP", 0)  # nothing kept: the backward recomputes
    del calls[:]
    y, back = jax.vjp(bridged, 2 * x)
    _close(back(v), ((jnp.sin(2 * x) + 2 * x * jnp.cos(2 * x)) * v,))
    assert len(calls) == 2


# ---------------------------------------------------------------------------
# mode="both": forward and reverse mode in any combination (jax.hessian)
# ---------------------------------------------------------------------------
def _both_cases():
    """(diffsci fn, JAX fn, args, argnums): real, pytree, integer and complex inputs, and
    several outputs."""
    rng = np.random.default_rng(5)
    x = jnp.asarray(rng.normal(size=3))
    z = jnp.asarray(rng.normal(size=2) + 1j * rng.normal(size=2))
    p, xb = _inputs(6)
    i = jnp.asarray([2, 0, 0])
    return [
        (lambda xp: lambda x: xp.sum(xp.sin(x) * x[::-1] ** 2), (x,), 0),
        (lambda xp: lambda x, i: xp.sum(xp.tanh(x[i]) * x), (x, i), 0),
        (lambda xp: lambda p, x: (lambda o: o["loss"] + xp.sum(o["h"] ** 3))(
            _model(xp)(p, x)), (p, xb), (0, 1)),
        (lambda xp: lambda z: xp.sum(xp.abs(xp.exp(z) * xp.conj(z) + z ** 2) ** 2), (z,), 0),
        (lambda xp: lambda x: (xp.sin(x) * x[0], xp.sum(xp.exp(x))), (x,), 0),
    ]


@pytest.mark.parametrize("case", range(5))
def test_both_mode_hessian_matches_native_jax(case):
    fn, args, argnums = _both_cases()[case]
    f, ref = to_jax(fn(np), mode="both"), fn(jnp)
    _close(f(*args), ref(*args))
    if case == 3:  # real loss of complex z: the Hessian in its real and imaginary parts
        part = lambda h: lambda u, v: h(u + 1j * v)  # noqa: E731
        uv, argnums = (jnp.real(args[0]), jnp.imag(args[0])), (0, 1)
        f, ref, args = part(f), part(ref), uv
    _close(jax.hessian(f, argnums)(*args), jax.hessian(ref, argnums)(*args))
    if case == 0:  # every other composition of the two modes, and under jit
        for d in (lambda g: jax.jacrev(jax.jacrev(g)), lambda g: jax.jacrev(jax.jacfwd(g)),
                  lambda g: jax.jacfwd(jax.jacfwd(g)), lambda g: jax.jit(jax.hessian(g))):
            _close(d(f)(*args), d(ref)(*args))
    if case in (0, 1):
        g = (lambda x: f(x, args[1])) if case == 1 else f
        jax_check_grads(g, args[:1], order=2, modes=["fwd", "rev"])


def test_both_mode_vmap_and_third_order():
    # f sums over its last axis only: "broadcast_all" may hand it a leading batch axis
    fn = lambda xp: lambda x, w: xp.sum(xp.tanh(x * w) ** 2, axis=-1)  # noqa: E731
    xs, w = jnp.linspace(-1.0, 1.0, 4).reshape(2, 2), jnp.asarray([0.7, -0.3])
    ref = fn(jnp)
    want = jax.vmap(jax.hessian(ref, argnums=(0, 1)), in_axes=(0, None))(xs, w)
    for vm in ("sequential", "broadcast_all"):
        f = to_jax(fn(np), mode="both", vmap_method=vm)
        _close(jax.vmap(jax.hessian(f, argnums=(0, 1)), in_axes=(0, None))(xs, w), want)
    # vmap inside the derivatives (the batching rule's lax.map is differentiated)
    _close(jax.hessian(lambda w: jnp.sum(jax.vmap(f, in_axes=(0, None))(xs, w)))(w),
           jax.hessian(lambda w: jnp.sum(jax.vmap(ref, in_axes=(0, None))(xs, w)))(w))
    f = to_jax(fn(np), mode="both")
    _close(jax.jacfwd(jax.hessian(f))(xs[0], w), jax.jacfwd(jax.hessian(ref))(xs[0], w))


def test_both_mode_complex_conventions_match_native_jax():
    rng = np.random.default_rng(7)
    z = jnp.asarray(rng.normal(size=3) + 1j * rng.normal(size=3))
    v = jnp.asarray(rng.normal(size=3) + 1j * rng.normal(size=3))
    for fn in (lambda xp: lambda z: xp.exp(z) * xp.conj(z),   # neither
               lambda xp: lambda z: xp.sin(z) * z):            # holomorphic
        f = to_jax(fn(np), mode="both")
        _close(jax.vjp(f, z)[1](v), jax.vjp(fn(jnp), z)[1](v))
        _close(jax.jvp(f, (z,), (v,)), jax.jvp(fn(jnp), (z,), (v,)))
        jax_check_grads(f, (z,), order=2, modes=["fwd", "rev"])
    assert complex(jax.grad(to_jax(lambda z: np.abs(z) ** 2, mode="both"))(
        jnp.asarray(1 + 2j))) == 2 - 4j


def test_rev_mode_hessian_names_the_alternatives():
    f = to_jax(lambda x: np.sum(np.sin(x) ** 2), name="sq")
    x = jnp.asarray([0.3, 0.5])
    for run in (lambda: jax.hessian(f)(x), lambda: jax.jit(jax.hessian(f))(x),
                lambda: jax.jvp(jax.grad(f), (x,), (x,))):
        with pytest.raises(TypeError, match=r"to_jax\(sq\) was made with mode='rev'.*"
                                            r"jax\.jacrev\(jax\.jacrev\(f\)\).*"
                                            r"mode='both'"):
            run()
    _close(jax.jacrev(jax.jacrev(f))(x), jnp.diag(2 * jnp.cos(2 * x)))
