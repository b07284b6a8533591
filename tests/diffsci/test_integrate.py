"""Tests for diffsci.scipy.integrate.odeint: values, both gradient methods, pytrees, errors.

References are closed forms: the linear ODE y' = A y has y(t) = expm(A t) y0, whose gradients
with respect to y0, A and t are known exactly (the A-gradient through the Fréchet derivative of
expm, scipy.linalg.expm_frechet). Tolerances are tied to the solver's: dopri5's global error is
a modest multiple of rtol for these smooth, non-stiff problems, so the checks use 1e3·rtol.
"""

import numpy as np
import pytest
from scipy.linalg import expm, expm_frechet

import diffsci as ds
from diffsci.scipy.integrate import DOPRI5, odeint
from diffsci.testing import check_grads

A = np.array([[-0.5, 1.0], [-1.0, -0.3]])
Y0 = np.array([1.0, 0.5])
T = np.array([0.0, 0.4, 1.3, 3.0])
W = np.random.default_rng(0).standard_normal((len(T), 2))  # loss weights: L = Σ_i ⟨w_i, y(t_i)⟩
METHODS = [dict(method="dopri5"), dict(method="rk4", step=0.01)]


def linear(y, t, A):
    return A @ y


def exact(A, y0, t):
    return np.stack([expm(A * (ti - t[0])) @ y0 for ti in t])


def exact_grads(A, y0, t, w):
    """∂L/∂A, ∂L/∂y0, ∂L/∂t for L = Σ_i ⟨w_i, expm(A (t_i − t_0)) y0⟩."""
    gA = sum(s * expm_frechet(A.T * s, np.outer(wi, y0), compute_expm=False)
             for s, wi in zip(t - t[0], w))
    gy0 = sum(expm(A * s).T @ wi for s, wi in zip(t - t[0], w))
    ys = exact(A, y0, t)
    gt = np.array([wi @ (A @ yi) for wi, yi in zip(w, ys)])
    gt[0] = -sum(wi @ (A @ yi) for wi, yi in zip(w[1:], ys[1:]))  # shifting t0 shifts all
    return gA, gy0, gt


# ---------------------------------------------------------------------------
# the tableau and the values
# ---------------------------------------------------------------------------
def test_tableau_order_conditions():
    """Dormand–Prince 5(4): row sums equal c, b is order 5, b − e (= b̂) is order 4."""
    c = np.array(DOPRI5.c)
    a = np.zeros((7, 7))
    for i, row in enumerate(DOPRI5.a):
        a[i, :len(row)] = row
    b, bhat = np.array(DOPRI5.b), np.array(DOPRI5.b) - np.array(DOPRI5.e)
    np.testing.assert_allclose(a.sum(1), c, atol=1e-15)
    for k in range(1, 6):  # Σ b_i c_i^(k-1) = 1/k (quadrature conditions)
        assert abs(b @ c ** (k - 1) - 1 / k) < 1e-14
    for k in range(1, 5):
        assert abs(bhat @ c ** (k - 1) - 1 / k) < 1e-14
    assert abs(b @ a @ c - 1 / 6) < 1e-14 and abs(b @ a @ a @ c - 1 / 24) < 1e-14
    np.testing.assert_allclose(a[-1, :6], b[:6])  # FSAL: the last stage is the new point


@pytest.mark.parametrize("opts", METHODS, ids=["dopri5", "rk4"])
def test_linear_ode_values(opts):
    ys = odeint(linear, Y0, T, A, **opts)
    assert ys.shape == (len(T), 2)
    np.testing.assert_allclose(ys, exact(A, Y0, T), rtol=0, atol=1e-6)
    assert ys[0] is not Y0 and np.array_equal(ys[0], Y0)


@pytest.mark.parametrize("rtol", [1e-5, 1e-8, 1e-11])
def test_dopri5_error_follows_rtol(rtol):
    ys, info = odeint(linear, Y0, T, A, rtol=rtol, atol=rtol * 1e-2, full_output=True)
    assert np.abs(ys - exact(A, Y0, T)).max() < 1e2 * rtol
    assert set(info) == {"nsteps", "nrejected", "nfev"} and info["nsteps"] > 0


def test_dopri5_step_count_scales_like_tol_to_minus_one_fifth():
    """Fifth order: 10⁵ times tighter tolerances cost about 10 times more steps."""
    n = [odeint(linear, Y0, T, A, rtol=r, atol=r * 1e-2, full_output=True)[1]["nsteps"]
         for r in (1e-4, 1e-9)]
    assert 5 < n[1] / n[0] < 20


def test_non_autonomous_and_decreasing_time():
    f = lambda y, t: np.cos(t) * y  # y = exp(sin t)
    t = np.linspace(0.0, 4.0, 9)
    np.testing.assert_allclose(odeint(f, 1.0, t), np.exp(np.sin(t)), rtol=1e-6)
    back = odeint(f, np.exp(np.sin(4.0)), t[::-1])
    np.testing.assert_allclose(back, np.exp(np.sin(t[::-1])), rtol=1e-6)
    np.testing.assert_allclose(odeint(f, 1.0, t, method="rk4", step=0.05), np.exp(np.sin(t)),
                               rtol=1e-6)


def test_single_time_returns_y0_and_integer_y0_is_promoted():
    assert np.array_equal(odeint(linear, Y0, np.array([2.0]), A), Y0[None])
    ys = odeint(lambda y, t: -y, np.array([1, 2]), np.array([0.0, 1.0]))
    assert ys.dtype == np.float64
    np.testing.assert_allclose(ys[1], np.exp(-1.0) * np.array([1, 2]), rtol=1e-6)


def test_float32_state_stays_float32():
    ys = odeint(linear, Y0.astype(np.float32), T, A.astype(np.float32), rtol=1e-5, atol=1e-6)
    assert ys.dtype == np.float32
    g = ds.grad(lambda y0: np.sum(odeint(linear, y0, T, A.astype(np.float32), rtol=1e-5,
                                         atol=1e-6)))(Y0.astype(np.float32))
    assert g.dtype == np.float32


# ---------------------------------------------------------------------------
# gradients: closed forms, the two methods, finite differences
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("gradient", ["adjoint", "backprop"])
@pytest.mark.parametrize("opts", METHODS, ids=["dopri5", "rk4"])
def test_linear_ode_exact_gradients(gradient, opts):
    loss = lambda A, y0, t: np.sum(W * odeint(linear, y0, t, A, gradient=gradient, rtol=1e-10,
                                              atol=1e-12, **opts))
    gA, gy0, gt = ds.grad(loss, argnums=(0, 1, 2))(A, Y0, T)
    eA, ey0, et = exact_grads(A, Y0, T, W)
    # rk4 with step 0.01 has global error ~1e-9 here; dopri5 at rtol 1e-10 ~1e-9 too.
    for got, want in ((gA, eA), (gy0, ey0), (gt, et)):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-7)


def test_adjoint_and_backprop_agree_to_solver_tolerance():
    def loss(gradient, rtol):
        return lambda A, y0: np.sum(W * odeint(linear, y0, T, A, gradient=gradient, rtol=rtol,
                                               atol=rtol * 1e-2))
    for rtol in (1e-6, 1e-9):
        ga = ds.grad(loss("adjoint", rtol), argnums=(0, 1))(A, Y0)
        gb = ds.grad(loss("backprop", rtol), argnums=(0, 1))(A, Y0)
        for a, b in zip(ga, gb):
            np.testing.assert_allclose(a, b, rtol=0, atol=1e2 * rtol)


def test_backprop_rk4_check_grads_exact_discrete_derivative():
    """Fixed steps: backprop is the exact derivative of the discrete map; default tolerances.

    step=0.07 does not divide the intervals, so t ± eps keeps the same number of steps.
    """
    f = lambda A, y0, t: odeint(linear, y0, t, A, gradient="backprop", method="rk4", step=0.07)
    check_grads(f, (A, Y0, T), modes=("rev", "fwd"))


def test_backprop_rk4_second_order():
    f = lambda A, y0: odeint(lambda y, t, A: np.tanh(A @ y), y0, T[:3], A, gradient="backprop",
                             method="rk4", step=0.1)
    check_grads(f, (A, Y0), order=2, modes=("rev",))


def test_adjoint_check_grads():
    """The hand-written adjoint against central differences (DERIVATIONS.md (O1)-(O6)).

    At rtol = 1e-11 the forward and the adjoint solves are accurate to ~1e-10; differences with
    eps = 1e-5 add ~1e-10/1e-5 = 1e-5 of solver noise at worst and eps² ~ 1e-10 of truncation,
    so 1e-4 relative separates a correct adjoint from a wrong one by orders of magnitude.
    """
    def pend(y, t, p):
        return np.stack([y[1], -p[0] * np.sin(y[0]) - p[1] * y[1] + 0.1 * np.cos(t)])

    f = lambda y0, t, p: odeint(pend, y0, t, p, gradient="adjoint", rtol=1e-11, atol=1e-12)
    check_grads(f, (np.array([1.0, 0.0]), T, np.array([2.0, 0.3])), modes=("rev",),
                eps=1e-5, rtol=1e-4, atol=1e-7)
    g = lambda y0, t, p: odeint(pend, y0, t, p, gradient="adjoint", method="rk4", step=0.07)
    check_grads(g, (np.array([1.0, 0.0]), T, np.array([2.0, 0.3])), modes=("rev",),
                eps=1e-5, rtol=1e-4, atol=1e-7)


def test_pytree_state_and_args():
    def f(y, t, p):
        return {"x": y["v"], "v": -p["k"] * np.sin(y["x"]) - p["c"] * y["v"]}

    y0 = {"x": np.array(1.0), "v": np.array(0.0)}
    p = {"k": 2.0, "c": np.array(0.3)}
    ys = odeint(f, y0, T, p)
    assert set(ys) == {"x", "v"} and ys["x"].shape == (len(T),)
    loss = lambda y0, p, g: np.sum(odeint(f, y0, T, p, gradient=g, rtol=1e-10,
                                          atol=1e-12)["x"] ** 2)
    ga = ds.grad(loss, argnums=(0, 1))(y0, p, "adjoint")
    gb = ds.grad(loss, argnums=(0, 1))(y0, p, "backprop")
    assert set(ga[0]) == {"x", "v"} and set(ga[1]) == {"k", "c"}
    for a, b in zip(ds.tree_leaves(ga), ds.tree_leaves(gb)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    check_grads(lambda y0, p: odeint(f, y0, T, p, rtol=1e-11, atol=1e-12), (y0, p),
                modes=("rev",), eps=1e-5, rtol=1e-4, atol=1e-7)


def test_non_float_args_pass_through():
    f = lambda y, t, A, n, name: A @ y * n
    g = ds.grad(lambda A: np.sum(odeint(f, Y0, T, A, 2, "label")))(A)
    ref = ds.grad(lambda A: np.sum(odeint(linear, Y0, T, 2 * A)))(A)  # chain rule inside
    np.testing.assert_allclose(g, ref, rtol=1e-6)


def test_forward_mode_through_backprop_matches_reverse():
    f = lambda A: odeint(linear, Y0, T, A, gradient="backprop").ravel()
    np.testing.assert_allclose(ds.jacfwd(f)(A), ds.jacrev(f)(A), rtol=1e-10, atol=1e-12)
    y, ydot = ds.jvp(lambda y0: odeint(linear, y0, T, A, gradient="backprop"), (Y0,),
                     (np.array([1.0, 0.0]),))
    np.testing.assert_allclose(ydot, exact(A, np.array([1.0, 0.0]), T), atol=1e-6)


def test_forward_mode_through_adjoint():
    """The adjoint is a custom_vjp; forward mode comes from transposing its VJP."""
    f = lambda k: odeint(lambda y, t, k: -k * y, 1.0, T, k)
    _, ydot = ds.jvp(f, (2.0,), (1.0,))
    np.testing.assert_allclose(ydot, -T * np.exp(-2.0 * T), atol=1e-6)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
@pytest.mark.parametrize("gradient", ["adjoint", "backprop"])
def test_hessian_through_adjoint_and_backprop(gradient, mode):
    """Second order: L(k) = y(T; k) for y' = −k y, y = e^{−kT}: d²L/dk² = T² e^{−kT}."""
    h = ds.hessian(lambda k: odeint(lambda y, t, k: -k * y, 1.0, np.array([0.0, 1.5]), k,
                                    gradient=gradient, rtol=1e-10, atol=1e-12)[-1],
                   mode=mode)(0.7)
    np.testing.assert_allclose(h, 1.5 ** 2 * np.exp(-0.7 * 1.5), rtol=1e-6)


def test_closure_backprop_works_adjoint_refuses():
    loss = lambda A, g: np.sum(odeint(lambda y, t: A @ y, Y0, T, gradient=g))
    np.testing.assert_allclose(ds.grad(loss)(A, "backprop"),
                               ds.grad(lambda A: np.sum(odeint(linear, Y0, T, A)))(A),
                               rtol=1e-6)
    with pytest.raises(ValueError, match="closes over"):
        ds.grad(loss)(A, "adjoint")


# ---------------------------------------------------------------------------
# memory: the adjoint keeps O(1) records in the number of steps
# ---------------------------------------------------------------------------
def _records_added(gradient, step):
    counts = []

    def loss(A):
        before = len(A._tape.records)
        ys = odeint(linear, Y0, T, A, gradient=gradient, method="rk4", step=step)
        counts.append(len(A._tape.records) - before)
        return np.sum(ys)

    ds.grad(loss)(A)
    return counts[0]


def test_adjoint_tape_is_constant_in_steps_backprop_grows():
    assert _records_added("adjoint", 0.1) == _records_added("adjoint", 0.01) < 20
    assert _records_added("backprop", 0.01) > 5 * _records_added("backprop", 0.1)


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("t, match", [
    (np.array([0.0, 1.0, 1.0]), r"strictly increasing.*t\[1\] = 1.0, t\[2\] = 1.0"),
    (np.array([0.0, 2.0, 1.0]), "strictly increasing"),
    (np.zeros((2, 2)), "1-D"),
    (np.array([0.0, np.inf]), "finite"),
])
def test_bad_times(t, match):
    with pytest.raises(ValueError, match=match):
        odeint(linear, Y0, t, A)


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(method="euler"), ValueError, "method must be one of"),
    (dict(gradient="fd"), ValueError, "gradient must be one of"),
    (dict(method="rk4"), ValueError, "needs step="),
    (dict(rtol=-1.0), ValueError, "rtol must be a positive"),
    (dict(atol=0.0), ValueError, "atol must be a positive"),
    (dict(max_steps=0), ValueError, "max_steps"),
])
def test_bad_options(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        odeint(linear, Y0, T, A, **kwargs)


def test_bad_state_and_func():
    with pytest.raises(TypeError, match="y0 leaf 0 must be real"):
        odeint(linear, Y0 + 0j, T, A)
    with pytest.raises(ValueError, match="func's output leaf 0 has shape"):
        odeint(lambda y, t: np.zeros(3), Y0, T)
    with pytest.raises(TypeError, match="func's output has structure"):
        odeint(lambda y, t: (y, y), Y0, T)
    with pytest.raises(TypeError, match="func must be callable"):
        odeint(None, Y0, T)


def test_adjoint_refuses_complex_traced_args():
    with pytest.raises(TypeError, match="real float arguments only"):
        ds.grad(lambda c: np.real(np.sum(odeint(lambda y, t, c: np.real(c) * y, Y0, T, c))))(
            1.0 + 0.5j)


def test_max_steps_and_blow_up():
    with pytest.raises(RuntimeError, match="max_steps=5"):
        odeint(linear, Y0, T, A, max_steps=5)
    with pytest.raises(RuntimeError, match="max_steps=10"):
        odeint(linear, Y0, T, A, method="rk4", step=0.01, max_steps=10)
    with pytest.raises(RuntimeError, match="max_steps|step size underflowed"):
        odeint(lambda y, t: y ** 2, 1.0, np.array([0.0, 2.0]), max_steps=2000)  # blows up at 1


# ---------------------------------------------------------------------------
# SciPy's keywords: args=(...) and tfirst=
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("tfirst", [False, True])
@pytest.mark.parametrize("gradient", ["adjoint", "backprop"])
@pytest.mark.parametrize("method", METHODS, ids=["dopri5", "rk4"])
def test_args_keyword_and_tfirst_differentiate_the_args(method, gradient, tfirst):
    """y' = −k y + c: y(t) = c/k + (y0 − c/k) e^{−k t}; the traced k, c in args=(...) are
    differentiated (check_grads) and equal the closed form's gradient."""
    if tfirst:
        f = lambda t, y, k, c: -k * y + c  # noqa: E731
    else:
        f = lambda y, t, k, c: -k * y + c  # noqa: E731
    t = np.array([0.0, 0.3, 1.1, 2.0])
    tol = dict(rtol=1e-11, atol=1e-12) if method["method"] == "dopri5" else {}

    def sol(k, c, y0):
        return odeint(f, y0, t, args=(k, c), tfirst=tfirst, gradient=gradient, **method, **tol)

    def closed(k, c, y0):
        return c / k + (y0 - c / k) * np.exp(-k * t)

    for k, c, y0 in [(0.7, 0.2, 1.0), (2.0, -1.0, 0.5), (0.1, 3.0, -2.0)]:
        np.testing.assert_allclose(sol(k, c, y0), closed(k, c, y0), rtol=1e-8, atol=1e-10)
        g = ds.jacrev(sol, argnums=(0, 1, 2))(k, c, y0)
        ref = ds.jacrev(closed, argnums=(0, 1, 2))(k, c, y0)
        for a, b in zip(g, ref):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)
    check_grads(sol, (0.7, 0.2, 1.0), modes=("rev",), eps=1e-5, rtol=1e-5, atol=1e-8)


def test_args_keyword_equals_positional_and_scipy():
    import scipy.integrate

    f = lambda y, t, A: A @ y  # noqa: E731
    ours = odeint(f, Y0, T, args=(A,), rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(ours, odeint(f, Y0, T, A, rtol=1e-10, atol=1e-12))
    ref = scipy.integrate.odeint(f, Y0, T, args=(A,), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours, ref, rtol=1e-8, atol=1e-10)
    ref_t = scipy.integrate.odeint(lambda t, y, A: A @ y, Y0, T, args=(A,), tfirst=True,
                                   rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(odeint(lambda t, y, A: A @ y, Y0, T, args=(A,), tfirst=True),
                               ref_t, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("call, match", [
    (lambda: odeint(linear, Y0, T, A, args=(A,)), "both positionally"),
    (lambda: odeint(linear, Y0, T, args=[A]), "args must be a tuple"),
    (lambda: odeint(linear, Y0, T, A, hmax=0.1), r"unexpected keyword.*hmax"),
    (lambda: odeint(linear, Y0, T, A, tfirst=1), "tfirst must be True or False"),
])
def test_args_keyword_errors(call, match):
    with pytest.raises(TypeError, match=match):
        call()
