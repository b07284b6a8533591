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
