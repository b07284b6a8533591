"""The errors users will hit (issue §6): each names what went wrong and the fix."""

import math

import numpy as np
import pytest

import diffsci as ds
from diffsci.extend import defvjp, primitive


def test_primitive_without_rule_names_it_the_argument_and_the_mode():
    @primitive
    def mystery(x, y):
        return x * y

    defvjp(mystery, lambda g, ans, x, y: g * y)  # a rule for argument 0 only
    assert ds.grad(lambda x: mystery(x, 2.0))(3.0) == pytest.approx(2.0)
    with pytest.raises(ds.MissingRuleError) as e:
        ds.grad(lambda y: mystery(2.0, y))(3.0)
    msg = str(e.value)
    assert "mystery" in msg and "argument 1" in msg and "VJP" in msg
    assert "defvjp" in msg  # says how to register one


def test_grad_of_non_scalar_suggests_jacobian_or_pullback():
    with pytest.raises(TypeError, match="scalar") as e:
        ds.grad(lambda x: x * 2)(np.ones(3))
    assert "jacobian" in str(e.value) and "pullback" in str(e.value)


def test_grad_of_complex_output_is_refused():
    with pytest.raises(TypeError, match="real"):
        ds.grad(lambda z: z * z)(1 + 1j)


def test_grad_with_respect_to_integer_input():
    with pytest.raises(TypeError, match="integer") as e:
        ds.grad(lambda x: x * 2.0)(3)
    assert "argument 0" in str(e.value) and "5.0" in str(e.value)
    with pytest.raises(TypeError, match="integer"):
        ds.grad(lambda x: np.sum(x * 2.0))(np.arange(3))


def test_grad_with_respect_to_non_numeric_leaf():
    with pytest.raises(TypeError, match="str"):
        ds.grad(lambda d: d["x"] * 2.0)({"x": 1.0, "name": "a"})


def test_cotangent_of_wrong_shape():
    _, back = ds.pullback(lambda x: x * 2, np.ones(3))
    with pytest.raises(ValueError, match=r"shape \(2,\), expected \(3,\)"):
        back(np.ones(2))
    _, back = ds.pullback(lambda x: (x, x), np.ones(3))
    with pytest.raises(ValueError, match="structure"):
        back(np.ones(3))


def test_np_asarray_on_traced_value():
    with pytest.raises(TypeError, match="stop_gradient"):
        ds.grad(lambda x: np.sum(np.asarray(x)))(np.ones(2))
    with pytest.raises(TypeError, match="np.stack"):
        ds.grad(lambda x: np.sum(np.array([x, x])))(1.0)


def test_numpy_function_without_rule_via_array_function():
    with pytest.raises(TypeError) as e:
        ds.grad(lambda x: np.sum(np.lib.stride_tricks.sliding_window_view(x, 2)))(np.ones(3))
    msg = str(e.value)
    assert ("numpy.lib.stride_tricks.sliding_window_view" in msg and "no rule" in msg
            and "register_numpy_function" in msg)


def test_numpy_ufunc_method_without_rule():
    with pytest.raises(TypeError, match="outer"):
        ds.grad(lambda x: np.sum(np.subtract.outer(x, x)))(np.ones(2))


def test_bad_argnums():
    with pytest.raises(ValueError, match="argnums"):
        ds.grad(lambda x: x, argnums=3)(1.0)


def test_has_aux_requires_a_pair():
    with pytest.raises(TypeError, match="pair"):
        ds.grad(lambda x: x * 2, has_aux=True)(1.0)


def test_int_bool_item_cut_the_gradient_but_work():
    def f(x):
        n = int(x)  # plain values for control flow
        scale = x.item() + ds.stop_gradient(x)  # the explicit cuts
        assert bool(x > 0)
        return x * n + scale  # only x * n is differentiated

    assert ds.grad(f)(np.array(2.5)) == pytest.approx(2.0)


@pytest.mark.parametrize("convert", [float, complex, math.sin, math.exp, math.sqrt,
                                     lambda x: math.fsum([x, x]),
                                     lambda x: np.fromiter([x, x], float)])
@pytest.mark.parametrize("transform", ["grad", "jvp"])
def test_implicit_conversions_are_refused_naming_the_fix(convert, transform):
    def f(x):
        return x * convert(x)

    with pytest.raises(ds.TracerConversionError, match="np.sin|stop_gradient"):
        if transform == "grad":
            ds.grad(f)(0.7)
        else:
            ds.jvp(f, (0.7,), (1.0,))


def test_a_pendulum_written_with_math_sin_is_refused_not_wrong():
    def energy_after(theta0):  # explicit Euler on theta'' = -sin(theta)
        theta, omega = theta0, 0.0
        for _ in range(10):
            theta, omega = theta + 0.1 * omega, omega - 0.1 * math.sin(theta)
        return theta

    with pytest.raises(ds.TracerConversionError):
        ds.grad(energy_after)(1.0)


def test_storing_into_a_plain_buffer_shows_diffsci_message_last():
    def f(x):
        out = np.zeros(3)
        out[0] = x[0]
        return np.sum(out)

    with pytest.raises(ds.TracerConversionError, match="like=x"):
        ds.grad(f)(np.ones(3))


def test_copy_and_deepcopy_are_traced_pickle_is_refused():
    import copy
    import pickle

    def f(x):
        tree = {"a": [x, 2.0 * x]}
        t2 = copy.deepcopy(tree)
        return np.sum(copy.copy(x) * t2["a"][1])

    assert ds.grad(f)(np.array(3.0)) == pytest.approx(12.0)
    with pytest.raises(ds.TracerConversionError, match="pickle"):
        ds.grad(lambda x: len(pickle.dumps(x)) * x)(1.0)


@pytest.mark.parametrize("inner", ["grad", "jvp", "pullback"])
def test_escaped_tracers_raise_naming_their_transform(inner):
    leaked = []

    def g(y):
        leaked.append(y * 2.0)
        return np.sum(y * y)

    if inner == "grad":
        ds.grad(g)(np.ones(2))
    elif inner == "jvp":
        ds.jvp(g, (np.ones(2),), (np.ones(2),))
    else:
        ds.pullback(g, np.ones(2))
    with pytest.raises(ds.UnexpectedTracerError, match=f"diffsci.{inner}"):
        ds.grad(lambda x: np.sum(leaked[-1] * x))(np.ones(2))
    with pytest.raises(ds.UnexpectedTracerError):
        np.sin(leaked[-1])
    with pytest.raises(ds.UnexpectedTracerError):  # not the "would cut the gradient" message
        np.asarray(leaked[-1])


@pytest.mark.parametrize("argnums,err", [((0, 0), ValueError), ((1, -1), ValueError),
                                         (True, TypeError), (0.0, TypeError),
                                         ((0, 1.0), TypeError), ("0", TypeError)])
@pytest.mark.parametrize("transform", [ds.grad, ds.value_and_grad, ds.jacobian, ds.jacfwd])
def test_bad_argnums_are_refused(argnums, err, transform):
    with pytest.raises(err, match="argnums"):
        transform(lambda x, y: x * y, argnums=argnums)(1.0, 2.0)


@pytest.mark.parametrize("out", [lambda x: x[0] > 0, lambda x: np.sum(x > 0),
                                 lambda x: (x * 2).astype(int)[0]])
def test_grad_of_a_boolean_or_integer_output_is_refused(out):
    with pytest.raises(TypeError, match="floating-point output"):
        ds.grad(lambda x: out(x))(np.ones(2))


@pytest.mark.parametrize("shape", [(1,), (1, 1), (1, 1, 1)])
def test_grad_of_a_size_one_array_is_the_gradient_of_its_element(shape):
    x = np.array([0.3, 1.2])
    g = ds.grad(lambda x: np.reshape(np.sin(x[0]) * x[1], shape))(x)
    np.testing.assert_allclose(g, [np.cos(0.3) * 1.2, np.sin(0.3)], rtol=1e-15)
    v, g2 = ds.value_and_grad(lambda x: np.reshape(x[0] * x[1], shape))(x)
    assert np.shape(v) == shape
    np.testing.assert_allclose(g2, [1.2, 0.3])
    with pytest.raises(TypeError, match="scalar"):
        ds.grad(lambda x: x * 1.0)(x)  # size 2: not a scalar


@pytest.mark.parametrize("f", [lambda x: x * [1.0, 3.0], lambda x: [1.0, 3.0] * x,
                               lambda x: np.multiply(x, [1.0, 3.0]), lambda x: (1.0, 3.0) * x,
                               lambda x: x / [1.0, 1 / 3.0]])
def test_python_sequences_as_constants_in_arithmetic(f):
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(ds.grad(lambda x: np.sum(f(x)))(x), [1.0, 3.0], rtol=1e-15)
    np.testing.assert_allclose(ds.jacfwd(lambda x: np.sum(f(x)))(x), [1.0, 3.0], rtol=1e-15)
