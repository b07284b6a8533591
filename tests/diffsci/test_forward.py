"""Forward mode, mixed mode and higher order (issue #3 §1)."""

import numpy as np
import pytest

import diffsci as ds
from diffsci.extend import defvjp, primitive
from diffsci.testing import check_grads

X = np.array([0.3, -1.2, 0.7])


def f_vec(x):
    return np.tanh(x) * np.exp(x / 3.0) + x**2


def test_jvp_matches_closed_form_and_reverse():
    y, t = ds.jvp(np.sin, (X,), (np.ones(3),))
    np.testing.assert_allclose(y, np.sin(X))
    np.testing.assert_allclose(t, np.cos(X))
    np.testing.assert_allclose(ds.jacfwd(f_vec)(X), ds.jacrev(f_vec)(X), rtol=1e-12)
    np.testing.assert_allclose(ds.jacobian(f_vec, mode="fwd")(X), ds.jacobian(f_vec)(X))


def test_jvp_pytrees_and_zero_tangent_for_constant_outputs():
    (y, c), (ty, tc) = ds.jvp(lambda d: (d["a"] * d["b"], 3.0), ({"a": 2.0, "b": 5.0},),
                              ({"a": 1.0, "b": 0.0},))
    assert (y, ty) == (10.0, 5.0)
    assert c == 3.0 and tc == 0.0


def test_jvp_errors():
    with pytest.raises(ValueError, match="shape"):
        ds.jvp(np.sin, (X,), (np.ones(2),))
    with pytest.raises(TypeError, match="tuple"):
        ds.jvp(np.sin, X, np.ones(3))


def test_jacfwd_argnums_and_shapes():
    A = np.arange(6.0).reshape(2, 3)
    J = ds.jacfwd(lambda x, A: A @ np.sin(x), argnums=(0, 1))(X, A)
    assert J[0].shape == (2, 3) and J[1].shape == (2, 2, 3)
    np.testing.assert_allclose(J[0], A * np.cos(X))
    Jr = ds.jacrev(lambda x, A: A @ np.sin(x), argnums=(0, 1))(X, A)
    np.testing.assert_allclose(J[1], Jr[1])


def test_hessian_and_hvp():
    def rosen(x):
        return np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)

    x = np.array([1.2, 0.8, -0.5])
    H = ds.hessian(rosen)(x)
    # closed form of the Rosenbrock Hessian
    Hx = np.zeros((3, 3))
    for i in range(2):
        Hx[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
        Hx[i, i + 1] += -400 * x[i]
        Hx[i + 1, i] += -400 * x[i]
        Hx[i + 1, i + 1] += 200
    np.testing.assert_allclose(H, Hx, rtol=1e-12)
    v = np.array([0.1, -2.0, 0.5])
    np.testing.assert_allclose(ds.hvp(rosen, x, v), Hx @ v, rtol=1e-12)


def test_perturbation_confusion_forward_and_mixed():
    # d/dx [x * d/dy (x + y)] = 1, in every combination of modes.
    inner_fwd = lambda x: x * ds.jvp(lambda y: x + y, (1.0,), (1.0,))[1]  # noqa: E731
    inner_rev = lambda x: x * ds.grad(lambda y: x + y)(1.0)  # noqa: E731
    for inner in (inner_fwd, inner_rev):
        assert ds.jvp(inner, (1.0,), (1.0,))[1] == pytest.approx(1.0)
        assert ds.grad(inner)(1.0) == pytest.approx(1.0)


def test_nested_modes_compose():
    x = 0.4
    assert ds.jvp(ds.grad(np.sin), (x,), (1.0,))[1] == pytest.approx(-np.sin(x))
    assert ds.grad(lambda x: ds.jvp(np.sin, (x,), (1.0,))[1])(x) == pytest.approx(-np.sin(x))
    d3 = ds.jvp(lambda x: ds.jvp(ds.grad(lambda x: x**4), (x,), (1.0,))[1], (x,), (1.0,))[1]
    assert d3 == pytest.approx(24 * x)


def test_forwarddiff_equals_reverse_mode():
    def model(p):
        return np.sin(p) * np.exp(-p**2) + p**3

    g_rev = ds.grad(lambda p: np.sum(model(p) ** 2))(X)
    g_mix = ds.grad(lambda p: np.sum(ds.forwarddiff(model)(p) ** 2))(X)
    np.testing.assert_allclose(g_mix, g_rev, rtol=1e-12)
    check_grads(lambda p, q: ds.forwarddiff(lambda a, b: a * np.sin(b))(p, q), (X, X[::-1]))
    z = np.array([0.5 + 0.2j, -0.1 + 1j])
    g1 = ds.grad(lambda z: np.sum(np.abs(ds.forwarddiff(lambda z: z * z + z)(z)) ** 2))(z)
    g2 = ds.grad(lambda z: np.sum(np.abs(z * z + z) ** 2))(z)
    np.testing.assert_allclose(g1, g2, rtol=1e-12)


def test_custom_jvp_used_by_both_modes():
    calls = []

    @ds.custom_jvp
    def softplus(x):
        calls.append("f")
        return np.log1p(np.exp(x))

    @softplus.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        calls.append("rule")
        return np.log(1 + np.exp(x)), t / (1 + np.exp(-x))

    sig = 1 / (1 + np.exp(-X))
    np.testing.assert_allclose(ds.jvp(softplus, (X,), (np.ones(3),))[1], sig)
    calls.clear()
    np.testing.assert_allclose(ds.grad(lambda x: np.sum(softplus(x)))(X), sig)
    assert "rule" in calls and "f" not in calls  # reverse mode never looks inside f


def test_primitive_without_jvp_rule_uses_its_vjp():
    @primitive
    def cube(x):
        return x**3

    defvjp(cube, lambda g, ans, x: 3 * g * x**2)
    assert ds.jvp(cube, (2.0,), (1.0,))[1] == pytest.approx(12.0)
    check_grads(cube, (X,), modes=("fwd",), order=2)


def test_custom_vjp_in_forward_mode():
    x = np.array([[0.1, 2.0, -1.0], [3.0, 0.0, 0.5]])
    t = np.ones_like(x)
    y, ty = ds.jvp(lambda x: ds.logsumexp(x, axis=1), (x,), (t,))
    np.testing.assert_allclose(ty, np.ones(2), rtol=1e-12)  # softmax rows sum to 1
    check_grads(lambda x: ds.softmax(x, axis=0), (x,), modes=("rev", "fwd"))


def test_check_grads_forward_catches_a_wrong_jvp():
    from diffsci.extend import defjvp

    @primitive
    def badexp(x):
        return np.exp(x)

    defvjp(badexp, lambda g, ans, x: g * ans)
    defjvp(badexp, lambda t, ans, x: 2 * t * ans)
    check_grads(badexp, (X,), modes=("rev",))
    with pytest.raises(AssertionError, match="JVP of"):
        check_grads(badexp, (X,), modes=("fwd",))


def test_hessian_modes_agree():
    def f(x):
        return np.sum(np.sin(x) * x**2) + x[0] * x[1] ** 3

    H = ds.hessian(f)(X)
    np.testing.assert_allclose(H, ds.hessian(f, mode="fwd")(X), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(H, H.T, rtol=1e-12)
    with pytest.raises(ValueError, match="mode"):
        ds.hessian(f, mode="sideways")


def test_custom_vjp_forward_mode_needs_a_traceable_bwd_or_a_jvp():
    from diffsci.extend import getval

    @ds.custom_vjp
    def double(x):
        return 2 * x

    double.defvjp(lambda x: (2 * x, None), lambda r, g: (2 * getval(g),))  # cuts the trace
    assert ds.grad(double)(1.5) == pytest.approx(2.0)  # reverse mode is fine
    with pytest.raises(TypeError, match="defjvp"):
        ds.jvp(double, (1.5,), (1.0,))
    double.defjvp(lambda p, t: (2 * p[0], 2 * t[0]))
    assert ds.jvp(double, (1.5,), (1.0,))[1] == pytest.approx(2.0)


def test_eigenvalue_gradients_at_repeated_eigenvalues_are_finite():
    import diffsci.numpy.linalg as dla

    for mode in ("rev", "fwd"):
        J = ds.jacobian(lambda a: dla.eigvalsh(a), mode=mode)(np.eye(3))
        assert np.all(np.isfinite(J))
    g = ds.grad(lambda a: np.sum(dla.eigh(a)[0] ** 2))(np.eye(2))
    np.testing.assert_allclose(g, 2 * np.eye(2))
