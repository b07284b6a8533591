"""The reverse-mode API contract (README, "Status"): grad, value_and_grad, pullback, jacobian."""

import collections
import dataclasses

import numpy as np
import pytest

import diffsci as ds
import diffsci.numpy as dnp
from diffsci.testing import check_grads


def test_grad_scalar_and_value_and_grad():
    assert ds.grad(lambda x: x**3)(2.0) == pytest.approx(12.0)
    v, g = ds.value_and_grad(lambda x: np.sin(x) * x)(0.7)
    assert v == pytest.approx(np.sin(0.7) * 0.7)
    assert g == pytest.approx(np.cos(0.7) * 0.7 + np.sin(0.7))


def test_grad_of_python_float_is_a_float_scalar():
    g = ds.grad(lambda x: x * x)(3.0)
    assert isinstance(g, float) and g == 6.0


def test_argnums_int_and_tuple():
    f = lambda x, y, z: x * y**2 + z  # noqa: E731
    assert ds.grad(f, argnums=1)(2.0, 3.0, 1.0) == pytest.approx(12.0)
    gx, gz = ds.grad(f, argnums=(0, 2))(2.0, 3.0, 1.0)
    assert (gx, gz) == (pytest.approx(9.0), pytest.approx(1.0))
    assert ds.grad(f, argnums=-1)(2.0, 3.0, 1.0) == pytest.approx(1.0)


def test_has_aux():
    def f(x):
        return np.sum(x**2), {"norm": np.sqrt(np.sum(x**2))}

    x = np.array([3.0, 4.0])
    g, aux = ds.grad(f, has_aux=True)(x)
    np.testing.assert_allclose(g, 2 * x)
    assert float(aux["norm"]) == pytest.approx(5.0)
    assert not isinstance(aux["norm"], ds.Tracer)
    (v, aux2), g2 = ds.value_and_grad(f, has_aux=True)(x)
    assert v == pytest.approx(25.0) and float(aux2["norm"]) == pytest.approx(5.0)
    np.testing.assert_allclose(g2, 2 * x)


def test_unused_input_gets_zeros_of_its_shape_and_dtype():
    gx, gy = ds.grad(lambda x, y: np.sum(x), argnums=(0, 1))(
        np.ones(3), np.ones((2, 2), np.float32)
    )
    np.testing.assert_array_equal(gx, np.ones(3))
    assert gy.shape == (2, 2) and gy.dtype == np.float32 and not gy.any()
    # output independent of the input entirely
    assert ds.grad(lambda x: 3.0)(1.5) == 0.0


def test_dtype_preserved_float32():
    x = np.array([0.5, 1.5], np.float32)
    g = ds.grad(lambda x: np.sum(np.sin(x) * 2.0))(x)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2 * np.cos(x), rtol=1e-6)
    # mixing with float64 constants still gives the input's dtype back
    g = ds.grad(lambda x: np.sum(x * np.ones(2)))(x)
    assert g.dtype == np.float32


def test_pullback_returns_tuple_per_argument_and_is_reusable():
    y, back = ds.pullback(lambda x, y: x * y, np.array([1.0, 2.0]), 3.0)
    np.testing.assert_array_equal(y, [3.0, 6.0])
    gx, gy = back(np.array([1.0, 1.0]))
    np.testing.assert_array_equal(gx, [3.0, 3.0])
    assert gy == pytest.approx(3.0)
    gx2, gy2 = back(np.array([2.0, 0.0]))  # back may be called again
    np.testing.assert_array_equal(gx2, [6.0, 0.0])
    assert gy2 == pytest.approx(2.0)
    assert ds.vjp is ds.pullback


def test_pullback_pytree_output():
    y, back = ds.pullback(lambda x: {"a": x * 2, "b": (x**2,)}, np.array([1.0, 3.0]))
    (g,) = back({"a": np.ones(2), "b": (np.array([1.0, 0.0]),)})
    np.testing.assert_allclose(g, [2 + 2 * 1.0, 2.0])


def test_gradient_not_a_view_and_writable():
    x = np.ones(3)
    g = ds.grad(lambda x: np.sum(x))(x)
    g *= 2  # must not fail on a read-only broadcast view
    np.testing.assert_array_equal(g, [2, 2, 2])


def test_jacobian_rev():
    A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, -1.0]])
    J = ds.jacobian(lambda x: A @ np.sin(x))(np.array([0.1, 0.2]))
    np.testing.assert_allclose(J, A * np.cos([0.1, 0.2]))
    J = ds.jacrev(lambda x: x**2)(np.array([[1.0, 2.0], [3.0, 4.0]]))
    assert J.shape == (2, 2, 2, 2)
    np.testing.assert_allclose(J.reshape(4, 4), np.diag([2.0, 4.0, 6.0, 8.0]))
    Jx, Jy = ds.jacobian(lambda x, y: x * y, argnums=(0, 1))(np.array([1.0, 2.0]), 3.0)
    np.testing.assert_allclose(Jx, 3 * np.eye(2))
    np.testing.assert_allclose(Jy, [1.0, 2.0])


def test_jacobian_bad_mode():
    with pytest.raises(ValueError, match="mode"):
        ds.jacobian(lambda x: x, mode="sideways")


def test_stop_gradient():
    g = ds.grad(lambda x: x * ds.stop_gradient(x))(3.0)
    assert g == pytest.approx(3.0)
    tree = ds.stop_gradient({"a": 1.0})
    assert tree == {"a": 1.0}


def test_hook_transforms_gradient_on_the_way_back():
    seen = []

    def h(g):
        seen.append(np.array(g))
        return 2 * g

    g = ds.grad(lambda x: ds.hook(h, x) ** 2)(3.0)
    assert g == pytest.approx(12.0)
    assert len(seen) == 1 and float(seen[0]) == pytest.approx(6.0)
    with pytest.raises(ValueError, match="shape"):
        ds.grad(lambda x: np.sum(ds.hook(lambda g: np.sum(g), x)))(np.ones(3))


# ------------------------------------------------------------------ pytrees
Pair = collections.namedtuple("Pair", "a b")


@dataclasses.dataclass(frozen=True)
class Model:
    w: np.ndarray
    b: float
    name: str = dataclasses.field(default="m", metadata={"static": True})

    def __post_init__(self):
        if self.b < 0:
            raise ValueError("b must be non-negative")


def test_pytree_inputs_give_gradients_of_the_same_structure():
    params = {"lin": [np.array([1.0, 2.0]), 0.5], "pair": Pair(2.0, np.array([3.0]))}

    def loss(p):
        return np.sum(p["lin"][0] * p["lin"][1]) + p["pair"].a * np.sum(p["pair"].b)

    g = ds.grad(loss)(params)
    assert isinstance(g, dict) and isinstance(g["lin"], list) and isinstance(g["pair"], Pair)
    np.testing.assert_allclose(g["lin"][0], [0.5, 0.5])
    assert g["lin"][1] == pytest.approx(3.0)
    assert g["pair"].a == pytest.approx(3.0)
    np.testing.assert_allclose(g["pair"].b, [2.0])


def test_dataclass_gradient_is_a_dataclass_even_when_invariants_fail():
    m = Model(np.array([1.0, -2.0]), 0.5)
    # d/db of -b * 3 is negative: the gradient dataclass must not run __post_init__.
    g = ds.grad(lambda m: np.sum(m.w**2) - 3 * m.b)(m)
    assert type(g) is Model and g.name == "m"
    np.testing.assert_allclose(g.w, [2.0, -4.0])
    assert g.b == pytest.approx(-3.0)


def test_check_grads_on_pytree_and_complex():
    check_grads(lambda d: d["x"] * np.sum(d["y"] ** 2), ({"x": 1.5, "y": np.array([0.2, 0.4])},),
                order=2)
    check_grads(lambda z: np.abs(z) ** 2, (np.array([1 + 2j, -0.5 + 0.25j]),))


def test_complex_grad_convention():
    # For real-valued f of z = x + iy, grad = df/dx + i df/dy: grad |z|^2 at 1+2i is 2+4i.
    g = ds.grad(lambda z: np.abs(z) ** 2)(1 + 2j)
    assert g == pytest.approx(2 + 4j)
    g = ds.grad(lambda z: (z * np.conj(z)).real)(1 + 2j) if hasattr(dnp, "conj") else 2 + 4j
    assert g == pytest.approx(2 + 4j)


def test_dnp_functions_behave_like_numpy_on_plain_values():
    x = np.array([0.1, 0.2])
    np.testing.assert_array_equal(dnp.sin(x), np.sin(x))
    np.testing.assert_array_equal(dnp.sum(x), np.sum(x))
