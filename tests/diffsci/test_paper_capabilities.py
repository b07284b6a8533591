"""The paper's capability examples (PAPER.md, "Capabilities it claims"), as tests."""

import dataclasses

import numpy as np
import pytest

import diffsci as ds
from diffsci.testing import check_grads


# 1. Control flow: the paper's Taylor-series sin, with a loop, an early return and a print.
def taylor_sin(x, log=print):
    """The paper's opening example, line for line: odd terms, alternating sign, early return."""
    t = 0.0
    sign = -1.0
    for i in range(1, 20):
        if i % 2 == 1:
            newterm = x**i / float(np.prod(np.arange(1, i + 1)))
            if abs(newterm) < 1e-8:
                return t
            log(f"i={i}")
            sign = -sign
            t = t + sign * newterm
    return t


def test_taylor_sin_derivative_matches_the_paper():
    lines = []
    g = ds.grad(taylor_sin)(1.0, log=lines.append)
    # The paper's value: truncation leaves a 2e-9 gap to cos(1).
    assert g == pytest.approx(0.5403023037918872, abs=1e-15)
    assert abs(g - np.cos(1.0)) < 3e-9
    # The print ran once per iteration (side effects run once, not again in the backward pass).
    assert lines == ["i=1", "i=3", "i=5", "i=7", "i=9", "i=11"]


def test_data_dependent_trip_count():
    def newton_sqrt(a):
        x = a
        while abs(x * x - a) > 1e-12:
            x = 0.5 * (x + a / x)
        return x

    assert ds.grad(newton_sqrt)(2.0) == pytest.approx(0.5 / np.sqrt(2.0), rel=1e-9)


# 2. Recursion.
def power(x, n):
    return 1.0 if n <= 0 else x * power(x, n - 1)


def test_recursion_pow():
    assert ds.grad(power)(5.0, 3) == pytest.approx(75.0)


# 3. User-defined types.
@dataclasses.dataclass
class Point:
    x: float
    y: float


def test_struct_gradient_is_struct_shaped():
    def dist2(p):
        return p.x**2 + 3 * p.y

    g = ds.grad(dist2)(Point(1.0, 2.0))
    assert isinstance(g, Point)
    assert (g.x, g.y) == (pytest.approx(2.0), pytest.approx(3.0))


class MyNum:
    """A number-like class that knows only + and *; AD values pass through it."""

    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return MyNum(self.v + (other.v if isinstance(other, MyNum) else other))

    def __mul__(self, other):
        return MyNum(self.v * (other.v if isinstance(other, MyNum) else other))


def test_user_number_type_carries_traced_values():
    def f(x):
        a = MyNum(x)
        return (a * a + a * 3.0).v

    assert ds.grad(f)(2.0) == pytest.approx(2 * 2.0 + 3.0)


# 4. Closures and higher-order functions: captured variables receive gradients.
def test_closures_capture_gradients():
    def f(a):
        scale = lambda t: a * t  # noqa: E731
        return sum(map(scale, [1.0, 2.0, 3.0]))

    assert ds.grad(f)(0.5) == pytest.approx(6.0)

    def outer(w):
        def inner(x):
            return w * x**2

        return ds.grad(inner)(3.0)  # = 6 w, a grad inside a differentiated function

    assert ds.grad(outer)(2.0) == pytest.approx(6.0)


# 5. Dictionaries and mutable containers.
def test_function_picked_from_a_dict_at_run_time():
    ops = {"sin": np.sin, "cube": lambda x: x**3}
    for name, want in (("sin", np.cos(0.5)), ("cube", 0.75)):
        assert ds.grad(lambda x, n=name: ops[n](x))(0.5) == pytest.approx(want)


def test_dict_store_and_load():
    def f(x):
        d = {}
        d["x"] = x
        return d["x"] * d["x"]

    assert ds.grad(f)(5.0) == pytest.approx(10.0)


def test_list_append_in_loop():
    def f(x):
        acc = []
        for k in range(4):
            acc.append(x ** (k + 1))
        return sum(acc)

    assert ds.grad(f)(2.0) == pytest.approx(1 + 2 * 2 + 3 * 4 + 4 * 8)


# 7. Custom adjoints and hooks (more in test_custom.py).
def test_custom_vjp_one_liner():
    @ds.custom_vjp
    def clip_grad(x):
        return x

    clip_grad.defvjp(lambda x: (x, None), lambda res, g: (np.clip(g, -1.0, 1.0),))
    assert ds.grad(lambda x: 10 * clip_grad(x))(1.0) == pytest.approx(1.0)


# 11. Nested AD: perturbation confusion and a Newton solver differentiated again.
def test_perturbation_confusion():
    # d/dx [x * d/dy (x + y)] at x = 1 is 1 (a confused system answers 2).
    f = lambda x: x * ds.grad(lambda y: x + y)(1.0)  # noqa: E731
    assert ds.grad(f)(1.0) == pytest.approx(1.0)


def test_grad_of_grad_and_newton_solver_inside_grad():
    assert ds.grad(ds.grad(lambda x: x**4))(2.0) == pytest.approx(48.0)

    def cube_root(a):  # solve x^3 = a by Newton, each step using grad
        x = 1.0
        for _ in range(30):
            f = lambda t: t**3 - a  # noqa: E731
            x = x - f(x) / ds.grad(f)(x)
        return x

    assert ds.grad(cube_root)(8.0) == pytest.approx(1 / 12, rel=1e-8)
    check_grads(lambda a: cube_root(a), (8.0,), order=1)


def test_third_order():
    d3 = ds.grad(ds.grad(ds.grad(lambda x: np.sin(x) * x)))
    x = 0.3
    assert d3(x) == pytest.approx(-3 * np.sin(x) - x * np.cos(x))
