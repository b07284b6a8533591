"""Tests for diffsci.scipy.optimize: implicit-function-theorem gradients of roots and minimisers.

References: the analytic IFT derivative of a cubic's root; central differences (check_grads,
orders 1 and 2) for vector systems; counts of tape records to show that no iteration is recorded.
"""

import numpy as np
import pytest
import scipy.sparse.linalg

import diffsci as ds
from diffsci.scipy.optimize import custom_root, fixed_point, minimize_scalar, root
from diffsci.testing import check_grads


def cubic(x, a, b):
    return x ** 3 + a * x - b


def system(x, p):
    """A nonlinear system in a pytree unknown: 2-vector u and scalar v."""
    return {"u": np.tanh(x["u"]) + p["A"] @ x["u"] - p["b"] + x["v"],
            "v": x["v"] ** 3 + x["v"] - p["b"][0] * np.cos(x["u"][1])}


P = {"A": np.array([[3.0, 0.5], [0.2, 2.0]]), "b": np.array([1.0, -0.5])}
X0 = {"u": np.zeros(2), "v": np.array(0.1)}


# ---------------------------------------------------------------------------
# root
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("a, b", [(1.0, 3.0), (0.5, -2.0), (4.0, 0.1)])
def test_cubic_root_gradient_is_the_ift_value(a, b):
    """x³ + a x − b = 0: ∂x/∂a = −x / (3x² + a), ∂x/∂b = 1 / (3x² + a)."""
    x = root(cubic, 1.0, args=(a, b))
    assert abs(cubic(x, a, b)) < 1e-12
    ga, gb = ds.grad(lambda a, b: root(cubic, 1.0, args=(a, b)), argnums=(0, 1))(a, b)
    np.testing.assert_allclose([ga, gb], [-x / (3 * x ** 2 + a), 1 / (3 * x ** 2 + a)],
                               rtol=1e-12)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_cubic_root_second_derivative(mode):
    """Differentiating 3x² x_b + a x_b = 1 once more: x_bb = −6 x x_b³."""
    x = root(cubic, 1.0, args=(1.0, 3.0))
    xb = 1 / (3 * x ** 2 + 1.0)
    h = ds.hessian(lambda b: root(cubic, 1.0, args=(1.0, b)), mode=mode)(3.0)
    np.testing.assert_allclose(h, -6 * x * xb ** 3, rtol=1e-10)


@pytest.mark.parametrize("method", ["hybr", "lm", "krylov"])
def test_vector_system_against_finite_differences(method):
    f = lambda p: root(system, X0, args=(p,), method=method, tol=1e-13)
    x = f(P)
    assert set(x) == {"u", "v"} and x["u"].shape == (2,) and x["v"].shape == ()
    res = system(x, P)
    assert max(np.abs(res["u"]).max(), abs(res["v"])) < 1e-9
    check_grads(f, (P,), modes=("rev", "fwd"))


def test_vector_system_second_order():
    check_grads(lambda p: root(system, X0, args=(p,)), (P,), order=2, modes=("rev", "fwd"))


def test_initial_guess_gets_zero_gradient_and_int_args_pass_through():
    f = lambda x, a, n: x ** n - a
    g = ds.grad(lambda x0, a: root(f, x0, args=(a, 3)), argnums=(0, 1))(1.5, 8.0)
    assert g[0] == 0.0
    np.testing.assert_allclose(g[1], 1 / (3 * 2.0 ** 2), rtol=1e-10)


def test_iterations_are_not_recorded():
    """The tape gains the same few records whether the solver iterates 10 or 60 times."""
    counts = {}

    def newton(iters):
        def solve(fun, x):
            jac = ds.jacfwd(fun)
            for _ in range(iters):
                x = x - np.linalg.solve(jac(x), fun(x))
            return x
        return solve

    for iters in (10, 60):
        def loss(b):
            before = len(b._tape.records)
            x = custom_root(cubic, 1.0, newton(iters), args=(1.0, b))
            counts[iters] = len(b._tape.records) - before
            return x
        g = ds.grad(loss)(3.0)
        x = root(cubic, 1.0, args=(1.0, 3.0))
        np.testing.assert_allclose(g, 1 / (3 * x ** 2 + 1), rtol=1e-12)
    assert counts[10] == counts[60] <= 4


def test_maxiter_does_not_change_the_backward_cost():
    """With scipy's hybr: tape records do not depend on how hard the solve was."""
    counts = []

    def loss(b, x0):
        before = len(b._tape.records)
        x = root(cubic, x0, args=(1.0, b), tol=1e-14)
        counts.append(len(b._tape.records) - before)
        return x

    for x0 in (1.2, 40.0):  # a close and a far initial guess
        ds.grad(loss)(3.0, x0)
    assert counts[0] == counts[1] <= 4


def test_custom_tangent_solve():
    """An iterative solver for J_xᵀ u = x̄ given only J_xᵀ-products (by pullback)."""
    def gmres(rmatvec, b):
        n = b.size
        op = scipy.sparse.linalg.LinearOperator((n, n), matvec=rmatvec, dtype=float)
        u, info = scipy.sparse.linalg.gmres(op, b, rtol=1e-13, atol=0.0)
        assert info == 0
        return u

    def solve(fun, x0):
        import scipy.optimize
        return scipy.optimize.root(fun, x0, tol=1e-13).x

    dense = ds.grad(lambda p: np.sum(root(system, X0, args=(p,))["u"]))(P)
    iterative = ds.grad(lambda p: np.sum(custom_root(system, X0, solve, gmres,
                                                     args=(p,))["u"]))(P)
    for a, b in zip(ds.tree_leaves(dense), ds.tree_leaves(iterative)):
        np.testing.assert_allclose(a, b, rtol=1e-9)


def test_errors():
    with pytest.raises(RuntimeError, match="did not converge"):
        root(lambda x: x ** 2 + 1.0, 1.0)  # no real root
    with pytest.raises(ValueError, match="closes over"):
        ds.grad(lambda b: root(lambda x: x ** 3 - b, 1.0))(2.0)
    with pytest.raises(TypeError, match="args must be a tuple"):
        custom_root(cubic, 1.0, lambda f, x: x, args=[1.0, 2.0])
    with pytest.raises(TypeError, match="fun must be callable"):
        root(None, 1.0)
    with pytest.raises(ValueError, match="f's output leaf 0 has shape"):
        root(lambda x: np.zeros(3), np.zeros(2))
    with pytest.raises(TypeError, match="x0 leaf 0 must be real"):
        root(lambda x: x, np.array([1j]))


# ---------------------------------------------------------------------------
# fixed_point and minimize_scalar
# ---------------------------------------------------------------------------
def test_fixed_point_dottie_number_and_gradient():
    """x = cos(a x): ∂x/∂a = −x sin(a x) / (1 + a sin(a x))."""
    g = lambda x, a: np.cos(a * x)
    x = fixed_point(g, 0.5, args=(1.0,))
    np.testing.assert_allclose(x, 0.7390851332151607, rtol=1e-12)
    s = np.sin(x)
    np.testing.assert_allclose(ds.grad(lambda a: fixed_point(g, 0.5, args=(a,)))(1.0),
                               -x * s / (1 + s), rtol=1e-10)
    check_grads(lambda a: fixed_point(g, 0.5, args=(a,)), (1.0,), order=2)


def test_fixed_point_vector():
    M = np.array([[0.2, 0.1], [-0.3, 0.4]])
    g = lambda x, c: 0.5 * np.tanh(M @ x) + c
    check_grads(lambda c: fixed_point(g, np.zeros(2), args=(c,)), (np.array([0.3, -0.2]),),
                order=2)


def test_minimize_scalar_gradient():
    """f = (x − a)² + 0.1 x⁴: f′ = 0 gives ∂x*/∂a = 2 / (2 + 1.2 x*²)."""
    f = lambda x, a: (x - a) ** 2 + 0.1 * x ** 4
    x = minimize_scalar(f, args=(1.0,))
    assert abs(float(ds.grad(f)(x, 1.0))) < 1e-12  # polished to rounding
    np.testing.assert_allclose(ds.grad(lambda a: minimize_scalar(f, args=(a,)))(1.0),
                               2 / (2 + 1.2 * x ** 2), rtol=1e-12)
    check_grads(lambda a: minimize_scalar(f, args=(a,)), (1.0,), order=2)
    xb = minimize_scalar(f, args=(1.0,), bounds=(0.0, 2.0), method="bounded")
    np.testing.assert_allclose(xb, x, rtol=1e-12)
