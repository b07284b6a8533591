"""The errors users will hit (issue §6): each names what went wrong and the fix."""

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
        ds.grad(lambda x: np.sum(np.polyfit(np.arange(3.0), x, 1)))(np.ones(3))
    msg = str(e.value)
    assert "numpy.polyfit" in msg and "no rule" in msg and "register_numpy_function" in msg


def test_numpy_ufunc_method_without_rule():
    with pytest.raises(TypeError, match="outer"):
        ds.grad(lambda x: np.sum(np.subtract.outer(x, x)))(np.ones(2))


def test_bad_argnums():
    with pytest.raises(ValueError, match="argnums"):
        ds.grad(lambda x: x, argnums=3)(1.0)


def test_has_aux_requires_a_pair():
    with pytest.raises(TypeError, match="pair"):
        ds.grad(lambda x: x * 2, has_aux=True)(1.0)


def test_float_int_bool_item_cut_the_gradient_but_work():
    def f(x):
        n = int(x)  # plain values for control flow
        scale = float(x) + x.item() if hasattr(x, "item") else float(x)
        assert bool(x > 0)
        return x * n + scale  # only x * n is differentiated

    assert ds.grad(f)(np.array(2.5)) == pytest.approx(2.0)
