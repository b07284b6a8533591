"""Tests for diffsci.scipy.optimize's minimize, least_squares, brentq and root_scalar.

References: closed forms (the argmin of a quadratic x* = Q⁻¹ b, the linear least-squares
solution x* = A⁺ y, the root sqrt(c)), differentiated by diffsci; central differences
(check_grads); and central differences of SciPy's own solvers at tight tolerances.
"""

import numpy as np
import pytest
import scipy.optimize as so

import diffsci as ds
from diffsci.scipy.optimize import brentq, least_squares, minimize, root_scalar
from diffsci.testing import check_grads

Q = np.array([[3.0, 0.5, 0.1], [0.5, 2.0, -0.3], [0.1, -0.3, 1.5]])
B = np.array([1.0, -2.0, 0.5])


def quadratic(x, Q, b):
    return 0.5 * x @ Q @ x - b @ x


def nonquad(x, p):
    return np.sum((x - p[:2]) ** 2) + p[2] * np.sum(x ** 4) + 0.3 * x[0] * x[1]


P = np.array([1.0, -0.5, 0.2])

METHODS = ["BFGS", "L-BFGS-B", "CG", "Newton-CG", "trust-exact", "trust-ncg", "Nelder-Mead"]


@pytest.mark.parametrize("method", METHODS)
def test_quadratic_argmin_gradient_is_the_closed_form(method):
    """x* = Q⁻¹ b: dx*/db = Q⁻¹ and dx*/dQ = −Q⁻¹ (·) x*, compared as Jacobians."""
    xs = lambda Q, b: minimize(quadratic, np.zeros(3), args=(Q, b), method=method).x  # noqa
    closed = lambda Q, b: np.linalg.solve((Q + Q.T) / 2, b)  # xᵀQx sees sym(Q) only  # noqa
    np.testing.assert_allclose(xs(Q, B), closed(Q, B), rtol=1e-12, atol=1e-13)
    for a, r in zip(ds.jacrev(xs, argnums=(0, 1))(Q, B), ds.jacrev(closed, argnums=(0, 1))(Q, B)):
        np.testing.assert_allclose(a, r, rtol=1e-10, atol=1e-12)


def test_nonquadratic_argmin_check_grads_and_scipy_differences():
    xs = lambda p: minimize(nonquad, np.zeros(2), args=(p,)).x  # noqa: E731
    check_grads(xs, (P,), order=2, modes=("rev", "fwd"))
    J = ds.jacrev(xs)(P)

    def scipy_x(p):
        return so.minimize(nonquad, np.zeros(2), args=(p,), jac=ds.grad(nonquad),
                           hess=ds.hessian(nonquad), method="trust-exact",
                           options=dict(gtol=1e-14)).x

    fd = np.stack([(scipy_x(P + e) - scipy_x(P - e)) / 2e-4 for e in np.eye(3) * 1e-4], 1)
    np.testing.assert_allclose(J, fd, rtol=1e-5, atol=1e-7)


def test_minimum_value_envelope_theorem_and_result_fields():
    r = minimize(nonquad, np.zeros(2), args=(P,))
    assert r.success and r.x.shape == (2,) and np.linalg.norm(r.jac) < 1e-12 and r.nit > 0
    g = ds.grad(lambda p: minimize(nonquad, np.zeros(2), args=(p,)).fun)(P)
    np.testing.assert_allclose(g, ds.grad(nonquad, argnums=1)(r.x, P), rtol=1e-10)


def test_initial_guess_gets_zero_gradient_and_pytree_x():
    g = ds.grad(lambda x0, b: np.sum(minimize(quadratic, x0, args=(Q, b)).x),
                argnums=(0, 1))(np.ones(3), B)
    np.testing.assert_array_equal(g[0], 0.0)
    f = lambda x, c: (x["a"] - c) ** 2 + np.sum((x["b"] + c) ** 2)  # noqa: E731
    x = minimize(f, {"a": np.array(0.0), "b": np.zeros(2)}, args=(0.7,)).x
    np.testing.assert_allclose(x["a"], 0.7, rtol=1e-12)
    np.testing.assert_allclose(ds.grad(lambda c: minimize(
        f, {"a": np.array(0.0), "b": np.zeros(2)}, args=(c,)).x["b"][0])(0.7), -1.0,
        rtol=1e-12)


@pytest.mark.parametrize("bounds", [[(-5, 5)] * 3, so.Bounds(-5 * np.ones(3), 5 * np.ones(3))])
def test_inactive_bounds_give_the_interior_gradient(bounds):
    """L-BFGS-B stops at ~1e-8; the polish (kept inside the bounds) makes the IFT exact."""
    xs = lambda b: minimize(quadratic, np.zeros(3), args=(Q, b), method="L-BFGS-B",  # noqa
                            bounds=bounds).x
    np.testing.assert_allclose(ds.jacrev(xs)(B), np.linalg.inv(Q), rtol=1e-10, atol=1e-12)
    r = least_squares(lambda x, y: AMAT @ x - y, np.zeros(3), args=(YLIN,),
                      bounds=(-10.0, 10.0))
    np.testing.assert_allclose(r.x, np.linalg.lstsq(AMAT, YLIN, rcond=None)[0], rtol=1e-10)


def test_minimize_errors():
    with pytest.raises(ValueError, match=r"on a bound \(components \[0\]\)"):
        minimize(lambda x, c: np.sum((x - c) ** 2), np.zeros(2), args=(np.array([-1.0, 0.5]),),
                 method="L-BFGS-B", bounds=[(0, 1), (0, 1)])
    with pytest.raises(TypeError, match="args must be a tuple"):
        minimize(quadratic, np.zeros(3), args=[Q, B])
    with pytest.raises(TypeError, match="fun must be callable"):
        minimize(None, np.zeros(3))
    with pytest.raises(ValueError, match="closes over"):
        ds.grad(lambda c: minimize(lambda x: (x - c) ** 2, 0.0).x)(1.0)
    with pytest.raises(np.linalg.LinAlgError):  # a flat valley: no unique argmin derivative
        ds.grad(lambda c: np.sum(minimize(lambda x, c: (x[0] + x[1] - c) ** 2, np.zeros(2),
                                          args=(c,)).x))(1.0)


# ---------------------------------------------------------------------------
# least_squares
# ---------------------------------------------------------------------------
T = np.linspace(0.0, 2.0, 9)
AMAT = np.stack([np.ones_like(T), T, T ** 2], 1)
YLIN = np.cos(T)


def test_linear_least_squares_gradient_is_the_pseudoinverse():
    xs = lambda A, y: least_squares(lambda x, A, y: A @ x - y, np.zeros(3), args=(A, y)).x  # noqa
    closed = lambda A, y: np.linalg.solve(A.T @ A, A.T @ y)  # noqa: E731
    np.testing.assert_allclose(xs(AMAT, YLIN), closed(AMAT, YLIN), rtol=1e-10)
    for a, r in zip(ds.jacrev(xs, argnums=(0, 1))(AMAT, YLIN),
                    ds.jacrev(closed, argnums=(0, 1))(AMAT, YLIN)):
        np.testing.assert_allclose(a, r, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ds.jacrev(xs, argnums=1)(AMAT, YLIN), np.linalg.pinv(AMAT),
                               rtol=1e-8, atol=1e-10)


def expfit(x, y):
    return x[0] * np.exp(x[1] * T) + x[2] - y


@pytest.mark.parametrize("method", ["trf", "dogbox", "lm"])
def test_nonlinear_least_squares_vs_scipy_differences(method):
    """Noisy data (nonzero residual): the exact Hessian, not Gauss-Newton, is needed."""
    y = 2.0 * np.exp(-1.3 * T) + 0.5 + 0.05 * np.sin(7 * T)
    xs = lambda y: least_squares(expfit, np.array([1.0, -1.0, 0.0]), args=(y,),  # noqa
                                 method=method).x
    r = least_squares(expfit, np.array([1.0, -1.0, 0.0]), args=(y,), method=method)
    assert r.success and r.jac.shape == (9, 3) and r.fun.shape == (9,)
    np.testing.assert_allclose(r.cost, 0.5 * np.sum(r.fun ** 2))
    check_grads(xs, (y,), modes=("rev", "fwd"))
    J = ds.jacrev(xs)(y)

    def scipy_x(y):
        return so.least_squares(expfit, np.array([1.0, -1.0, 0.0]), args=(y,), method=method,
                                ftol=1e-15, xtol=1e-15, gtol=1e-15).x

    # SciPy stops with x accurate to ~1e-9 only, so a wide step: its error / 1e-3 ~ 1e-6,
    # truncation ~eps² ~ 1e-6 relative
    e = 1e-3
    fd = np.stack([(scipy_x(y + e * u) - scipy_x(y - e * u)) / (2 * e) for u in np.eye(9)], 1)
    np.testing.assert_allclose(J, fd, rtol=1e-4, atol=1e-5)
    gn = np.linalg.solve(r.jac.T @ r.jac, r.jac.T)  # Gauss-Newton's (wrong here) derivative
    assert np.abs(gn - J).max() > 1e-3


def test_least_squares_errors():
    with pytest.raises(ValueError, match="loss must be 'linear'"):
        least_squares(expfit, np.zeros(3), args=(YLIN,), loss="soft_l1")
    with pytest.raises(TypeError, match="args must be a tuple"):
        least_squares(expfit, np.zeros(3), args=YLIN)


# ---------------------------------------------------------------------------
# brentq and root_scalar
# ---------------------------------------------------------------------------
def kepler(x, e, m):
    return x - e * np.sin(x) - m  # Kepler's equation E − e sin E = M


@pytest.mark.parametrize("e, m", [(0.1, 0.5), (0.7, 2.0), (0.95, 0.1)])
def test_brentq_kepler_gradient(e, m):
    """dE/dM = 1/(1 − e cos E), dE/de = sin E/(1 − e cos E)."""
    E = brentq(kepler, 0.0, np.pi, args=(e, m))
    np.testing.assert_allclose(E, so.brentq(kepler, 0.0, np.pi, args=(e, m)), rtol=1e-14)
    ge, gm = ds.grad(lambda e, m: brentq(kepler, 0.0, np.pi, args=(e, m)), argnums=(0, 1))(e, m)
    d = 1 - e * np.cos(E)
    np.testing.assert_allclose([ge, gm], [np.sin(E) / d, 1 / d], rtol=1e-12)
    check_grads(lambda e, m: brentq(kepler, 0.0, np.pi, args=(e, m)), (e, m), order=2)


@pytest.mark.parametrize("kw", [dict(method="brentq", bracket=(0.0, 3.0)),
                                dict(method="bisect", bracket=(0.0, 3.0), xtol=1e-14),
                                dict(method="ridder", bracket=(0.0, 3.0)),
                                dict(method="toms748", bracket=(0.0, 3.0)),
                                dict(method="newton", x0=1.0), dict(method="halley", x0=1.0),
                                dict(method="secant", x0=1.0, x1=1.5), dict(x0=1.0)],
                         ids=lambda kw: kw.get("method", "default"))
def test_root_scalar_methods_sqrt(kw):
    """x² − c = 0: x = √c, dx/dc = 1/(2√c), d²x/dc² = −1/(4 c^{3/2})."""
    f = lambda x, c: x * x - c  # noqa: E731
    r = root_scalar(f, args=(2.0,), **kw)
    assert r.converged and r.iterations > 0
    np.testing.assert_allclose(r.root, np.sqrt(2.0), rtol=1e-12)
    g = lambda c: root_scalar(f, args=(c,), **kw).root  # noqa: E731
    np.testing.assert_allclose(ds.grad(g)(2.0), 0.5 / np.sqrt(2.0), rtol=1e-10)
    np.testing.assert_allclose(ds.hessian(g)(2.0), -0.25 * 2.0 ** -1.5, rtol=1e-8)


def test_scalar_root_errors():
    with pytest.raises(ValueError, match="different signs"):
        brentq(lambda x: x * x + 1.0, 0.0, 1.0)
    with pytest.raises(np.linalg.LinAlgError):  # f_x = 0 at the triple root x = 0
        ds.grad(lambda c: brentq(lambda x, c: x ** 3 - c, -1.0, 1.0, args=(c,)))(0.0)
    with pytest.raises(TypeError, match="fun must be callable"):
        root_scalar(None, x0=1.0)
