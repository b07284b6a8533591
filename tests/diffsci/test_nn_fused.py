"""diffsci.nn's fused Dense primitive ``act(x @ w + b)`` (diffsci/nn/_fused.py).

Every activation of the FUSED table, over input ranks 1-3, with and without bias: values and
first derivatives equal the unfused composition (matmul, add, activation) to rounding, and
check_grads at order 2 in both modes (VJP of VJP, JVP of VJP ...) passes against central finite
differences; Hessians and jvp of grad equal the composition's. float32 is kept, kinks take the
composition's one-sided slopes, and the other cases (gelu, callables, complex, mixed dtypes) take
the composition. A memory test bounds the tracemalloc peak of a 100-step recurrence by the bytes
the fused tape must keep (the layers' outputs), and checks the unfused tape exceeds it.
"""

import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import diffsci as ds
import diffsci.nn as nn
from diffsci.nn import _fused
from diffsci.nn._fused import FUSED, dense, dense_unfused, is_fused
from diffsci.testing import check_grads

pytestmark = pytest.mark.kernels  # softmax and log_softmax run Numba kernels (diffsci/_kernels.py)

NAMES = sorted(FUSED)
SHAPES = [(3,), (5, 3), (2, 4, 3)]


def _args(shape, bias, seed=0, dtype=np.float64, out=4):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    w = (rng.standard_normal((shape[-1], out)) * 0.8).astype(dtype)
    b = (rng.standard_normal(out) * 0.5).astype(dtype) if bias else None
    return x, w, b


def _fns(name, bias):
    """(fused, unfused) as functions of the traced arguments only."""
    if bias:
        return (lambda x, w, b: dense(x, w, b, name), lambda x, w, b: dense_unfused(x, w, b, name))
    return (lambda x, w: dense(x, w, None, name), lambda x, w: dense_unfused(x, w, None, name))


def _close(a, b, rtol=1e-12, atol=1e-14):
    for u, v in zip(ds.tree_leaves(a), ds.tree_leaves(b), strict=True):
        assert np.shape(u) == np.shape(v)
        np.testing.assert_allclose(u, v, rtol=rtol, atol=atol)


def test_the_table_covers_every_activation_but_gelu():
    assert set(FUSED) == set(nn.ACTIVATIONS) - {"gelu"}


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("name", NAMES)
def test_fused_equals_the_composition_and_finite_differences_to_order_2(name, shape, bias):
    x, w, b = _args(shape, bias)
    args = (x, w, b) if bias else (x, w)
    assert is_fused(name, x, w, b)
    fused, unfused = _fns(name, bias)
    _close(fused(*args), unfused(*args), rtol=1e-14, atol=0)
    argnums = tuple(range(len(args)))

    def loss(f):  # a non-linear read-out so that every output entry gets its own cotangent
        return lambda *a: np.sum(np.sin(3.0 * f(*a)))

    _close(ds.grad(loss(fused), argnums=argnums)(*args),
           ds.grad(loss(unfused), argnums=argnums)(*args))
    check_grads(fused, args, order=2)


@pytest.mark.parametrize("name", NAMES)
def test_hessian_and_jvp_of_grad_equal_the_composition(name):
    x, w, b = _args((3, 2), True, seed=1, out=3)
    fused, unfused = _fns(name, True)

    def loss(f):
        return lambda w: np.sum(np.cos(f(x, w, b)))

    _close(ds.hessian(loss(fused))(w), ds.hessian(loss(unfused))(w), rtol=1e-10, atol=1e-12)
    # jvp of grad in x, forward over reverse
    v = np.random.default_rng(2).standard_normal(x.shape)

    def jg(f):
        return ds.jvp(ds.grad(lambda x: np.sum(np.cos(f(x, w, b)))), (x,), (v,))

    _close(jg(fused), jg(unfused), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_float32_is_kept_and_agrees_with_float64(name):
    x, w, b = _args((5, 3), True, dtype=np.float32)
    fused, _ = _fns(name, True)
    y = fused(x, w, b)
    assert y.dtype == np.float32
    g = ds.grad(lambda x, w, b: np.sum(np.sin(fused(x, w, b))), argnums=(0, 1, 2))(x, w, b)
    assert all(gi.dtype == np.float32 for gi in g)
    g64 = ds.grad(lambda x, w, b: np.sum(np.sin(fused(x, w, b))), argnums=(0, 1, 2))(
        *(a.astype(np.float64) for a in (x, w, b)))
    _close(g, g64, rtol=1e-4, atol=1e-5)
    check_grads(fused, (x, w, b), order=1)


@pytest.mark.parametrize("name", ["relu", "leaky_relu", "elu"])
def test_kinks_take_the_compositions_slopes(name):
    # z = x @ w + b is exactly 0 in every entry of the first column
    x = np.array([[1.0, -2.0], [0.5, 3.0]])
    w = np.array([[0.0, 1.0], [0.0, -1.0]])
    b = np.array([0.0, 0.25])
    fused, unfused = _fns(name, True)
    for argnum in (0, 1, 2):
        _close(ds.jacobian(fused, argnums=argnum)(x, w, b),
               ds.jacobian(unfused, argnums=argnum)(x, w, b), rtol=0, atol=0)


def test_tails_are_finite_and_the_derivatives_accurate():
    x = np.array([[1.0], [-1.0], [0.0]])
    w = np.array([[-1000.0, -40.0, 40.0, 1000.0]])
    b = np.zeros(4)
    for name in ("sigmoid", "softplus", "tanh", "elu", "log_softmax", "softmax"):
        fused, unfused = _fns(name, True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            gf = ds.grad(lambda w: np.sum(fused(x, w, b) * np.arange(4.0)))(w)
            gu = ds.grad(lambda w: np.sum(unfused(x, w, b) * np.arange(4.0)))(w)
        assert np.all(np.isfinite(gf))
        # sigmoid'(z) = a (1 - a) rounds 1 - a in the upper tail: absolute error <= 2^-53 |x|
        np.testing.assert_allclose(gf, gu, rtol=1e-12, atol=4 * 2.0**-53)


@pytest.mark.parametrize("activation", ["gelu", np.sin, lambda z: z * z])
def test_other_activations_take_the_composition(activation):
    x, w, b = _args((4, 3), True)
    assert not is_fused(activation, x, w, b)
    layer = nn.Dense(w, b, activation)
    _close(layer(x), nn.get_activation(activation)(x @ w + b), rtol=0, atol=0)
    check_grads(lambda x, w: nn.Dense(w, b, activation)(x), (x, w), order=2)


def test_complex_and_mixed_dtypes_take_the_composition():
    x, w, b = _args((4, 3), True)
    wc = w + 0.3j * w[::-1]
    assert not is_fused("tanh", x, wc, b)
    assert not is_fused("tanh", x.astype(np.float32), w, b)
    assert not is_fused("tanh", x.tolist(), w, b)
    assert not is_fused("tanh", x.astype(int), w, b)
    np.testing.assert_allclose(nn.Dense(wc, b + 0j, "tanh")(x), np.tanh(x @ wc + b), rtol=1e-14)
    check_grads(lambda w: nn.Dense(w, b + 0j, "tanh")(x), (wc,), order=1)
    y = nn.Dense(w, b, "tanh")(x.astype(np.float32))
    assert y.dtype == np.float64


def test_dense_and_mlp_take_the_fused_primitive():
    mlp = nn.MLP.init(0, [3, 5, 2], activation="tanh", final_activation="sigmoid")
    x = np.random.default_rng(3).standard_normal((6, 3))
    seen = []
    with pytest.MonkeyPatch.context() as mp:
        orig = _fused._vjp_w
        mp.setitem(_fused.dense_prim.vjps, 1, lambda *a, **k: seen.append(k) or orig(*a, **k))
        g = ds.grad(lambda m: np.sum(m(x) ** 2))(mlp)
    assert [k["activation"] for k in seen] == ["sigmoid", "tanh"]  # reverse order
    ref = ds.grad(lambda m: np.sum(_unfused_mlp(m, x) ** 2))(mlp)
    _close(g, ref)


def _unfused_mlp(m, x):
    for layer in m.layers:
        x = dense_unfused(x, layer.w, layer.b, layer.activation)
    return x


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(NAMES), lead=st.lists(st.integers(1, 3), max_size=2),
       n_in=st.integers(1, 4), n_out=st.integers(1, 4), bias=st.booleans(),
       seed=st.integers(0, 2**16), scale=st.sampled_from([0.1, 1.0, 5.0]))
def test_property_fused_gradients_equal_the_composition(name, lead, n_in, n_out, bias, seed,
                                                        scale):
    x, w, b = _args((*lead, n_in), bias, seed=seed, out=n_out)
    w = w * scale
    args = (x, w, b) if bias else (x, w)
    fused, unfused = _fns(name, bias)
    argnums = tuple(range(len(args)))
    cot = np.random.default_rng(seed + 1).standard_normal((*lead, n_out))
    gf = ds.grad(lambda *a: np.sum(cot * fused(*a)), argnums=argnums)(*args)
    gu = ds.grad(lambda *a: np.sum(cot * unfused(*a)), argnums=argnums)(*args)
    # sigmoid's a (1 - a) and softplus's -expm1(-a) differ from the composition by rounding
    # of O(1) quantities: absolute tolerance relative to the gradients' scale
    for u, v in zip(gf, gu, strict=True):
        np.testing.assert_allclose(u, v, rtol=1e-12, atol=1e-13 * (1 + np.max(np.abs(v))))


# ------------------------------------------------------------------ memory
D, BATCH, HIDDEN, STEPS = 8, 32, 32, 100


def _recurrent_peak():
    """tracemalloc peak (bytes) of the gradient of a 100-step Euler recurrence with a drift
    MLP (D -> H -> H -> D, tanh) and a diffusion MLP (D -> H -> D, tanh/sigmoid)."""
    f = nn.MLP.init(0, [D, HIDDEN, HIDDEN, D], activation="tanh")
    g = nn.MLP.init(1, [D, HIDDEN, D], activation="tanh", final_activation="sigmoid")
    y0 = np.random.default_rng(0).standard_normal((BATCH, D)) * 0.5

    def loss(p):
        y = y0
        for _ in range(STEPS):
            y = y + 0.01 * p[0](y) + 0.1 * p[1](y)
        return np.mean(y ** 2)

    ds.grad(loss)((f, g))  # warm-up: first-call allocations out of the figure
    tracemalloc.start()
    try:
        grads = ds.grad(loss)((f, g))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak, grads


def test_memory_of_a_100_step_recurrence_is_the_layers_outputs():
    # What the fused tape must keep per step: the five layers' outputs (H + H + D + H + D
    # columns) and the four arrays of the update (two scalings, two sums), BATCH rows each.
    per_step = BATCH * 8 * ((3 * HIDDEN + 2 * D) + 4 * D)
    kept = STEPS * per_step  # 3.5 MiB; measured peak 3.9 MiB (records, sweep buffers)
    peak, grads = _recurrent_peak()
    assert peak <= 1.15 * kept + 2**19, (peak, kept)  # 4.5 MiB
    with pytest.MonkeyPatch.context() as mp:  # the same with the composition
        mp.setattr(_fused, "is_fused", lambda *a: False)
        peak_unfused, grads_unfused = _recurrent_peak()
    # the composition keeps x @ w and x @ w + b too: (3 (3H + 2D) + 4D) columns per step
    assert peak_unfused >= 0.9 * STEPS * BATCH * 8 * (3 * (3 * HIDDEN + 2 * D) + 4 * D)
    assert peak_unfused > 2.0 * peak  # measured 9.3 MiB
    _close(grads, grads_unfused, rtol=1e-12, atol=1e-15)


def test_extend_exports_top_trace():
    from diffsci import _core
    from diffsci.extend import top_trace

    assert top_trace is _core.top_trace
    seen = []

    def f(x):
        def g(y):
            seen.append((top_trace([x, y, 1.0]), y._tape, x._tape))
            return np.sum(np.sin(x * y))
        return np.sum(ds.grad(g)(x))

    ds.grad(f)(np.ones(2))
    top, inner, outer = seen[0]
    assert top is inner and inner is not outer and top_trace([np.ones(2), 2.0]) is None
