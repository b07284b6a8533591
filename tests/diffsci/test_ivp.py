"""Tests for diffsci.scipy.integrate.solve_ivp: SciPy's values, gradients, stiffness, errors.

References: scipy.integrate.solve_ivp itself (RK45/RK23 are the same algorithms with the same
controller and dense output, so values and nfev agree to rounding; Radau estimates its error by
step doubling, so values agree to a modest multiple of rtol); closed forms for the linear ODE
y' = A y (expm, and the Fréchet derivative of expm for dA); central finite differences
(check_grads) and finite differences of SciPy's own solver at tight tolerances.
"""

import numpy as np
import pytest
import scipy.integrate as si
from scipy.linalg import expm, expm_frechet

import diffsci as ds
from diffsci.scipy._ivp_radau import RADAU_A, RADAU_C
from diffsci.scipy.integrate import solve_ivp
from diffsci.testing import check_grads

A = np.array([[-0.5, 1.0], [-1.0, -0.3]])
Y0 = np.array([1.0, 0.5])
TE = np.linspace(0.0, 4.0, 6)
W = np.random.default_rng(1).standard_normal((2, len(TE)))


def linear(t, y, A):
    return A @ y


def exact(A, y0, ts, t0=0.0):
    return np.stack([expm(A * (t - t0)) @ y0 for t in ts], axis=1)


def rober(t, y, k):
    return np.stack([-k[0] * y[0] + k[2] * y[1] * y[2],
                     k[0] * y[0] - k[1] * y[1] ** 2 - k[2] * y[1] * y[2],
                     k[1] * y[1] ** 2])


K_ROBER = np.array([0.04, 3e7, 1e4])


def test_radau_tableau_is_the_collocation_method():
    """Radau IIA: Σ_j a_ij c_j^(k-1) = c_i^k / k for k ≤ 3 (C(3)), last row = b (stiffly
    accurate), b integrates polynomials of degree ≤ 4 exactly (order 5 quadrature)."""
    for k in range(1, 4):
        np.testing.assert_allclose(RADAU_A @ RADAU_C ** (k - 1), RADAU_C ** k / k, atol=1e-15)
    b = RADAU_A[-1]
    for k in range(1, 6):
        assert abs(b @ RADAU_C ** (k - 1) - 1 / k) < 1e-14
    assert abs(b @ RADAU_C ** 5 - 1 / 6) > 1e-4  # and not degree 5: order exactly 5


# ---------------------------------------------------------------------------
# values against SciPy
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("span", [(0.0, 4.0), (4.0, 0.0)], ids=["forward", "backward"])
@pytest.mark.parametrize("rtol", [1e-3, 1e-6, 1e-9])
@pytest.mark.parametrize("method", ["RK45", "RK23"])
def test_explicit_values_and_nfev_equal_scipy(method, rtol, span):
    te = TE if span[0] == 0.0 else TE[::-1]
    kw = dict(method=method, t_eval=te, args=(A,), rtol=rtol, atol=rtol * 1e-3)
    ours = solve_ivp(linear, span, Y0, **kw)
    ref = si.solve_ivp(linear, span, Y0, **kw)
    assert ours.success and ours.status == 0 and ours.nfev == ref.nfev
    np.testing.assert_array_equal(ours.t, ref.t)
    np.testing.assert_allclose(ours.y, ref.y, rtol=1e-12, atol=1e-14)
    free = solve_ivp(linear, span, Y0, method=method, args=(A,), rtol=rtol, atol=rtol * 1e-3)
    ref_free = si.solve_ivp(linear, span, Y0, method=method, args=(A,), rtol=rtol,
                            atol=rtol * 1e-3)
    # the same accepted steps; summation order differs, so the times drift by ~1e-9 over 1500 steps
    np.testing.assert_allclose(free.t, ref_free.t, rtol=1e-8, atol=1e-8)
    assert free.y.shape == (2, len(free.t))


@pytest.mark.parametrize("span", [(0.0, 4.0), (4.0, 0.0)], ids=["forward", "backward"])
@pytest.mark.parametrize("rtol", [1e-3, 1e-6, 1e-9])
def test_radau_values_close_to_rtol(rtol, span):
    te = TE if span[0] == 0.0 else TE[::-1]
    r = solve_ivp(linear, span, Y0, method="Radau", t_eval=te, args=(A,), rtol=rtol,
                  atol=rtol * 1e-3)
    ex = exact(A, Y0, te, span[0])
    ref = si.solve_ivp(linear, span, Y0, method="Radau", t_eval=te, args=(A,), rtol=rtol,
                       atol=rtol * 1e-3)
    assert r.success and r.y.shape == (2, len(te)) and r.nlu > 0 and r.njev > 0
    # relative to the solution's size: backwards, the decaying modes grow (|y| up to ~5)
    # and amplify the local errors; step doubling is less tight than SciPy's estimate
    err = np.abs(r.y - ex).max() / np.abs(ex).max()
    err_scipy = np.abs(ref.y - ex).max() / np.abs(ex).max()
    assert err < 10 * rtol, (err, err_scipy)


@pytest.mark.parametrize("span", [(0.0, 4.0), (4.0, 0.0)], ids=["forward", "backward"])
@pytest.mark.parametrize("rtol", [1e-3, 1e-6, 1e-9])
def test_dop853_values_close_to_scipy_and_exact(rtol, span):
    """DOP853's error estimate cancels to the rounding of its stages (e5 ~ 1e-8 |k| here), so
    a last-bit difference in a stage moves the next step by up to 1e-6 relative: the step
    sequence is SciPy's to that, and the values at t_eval agree to far below the tolerance."""
    te = TE if span[0] == 0.0 else TE[::-1]
    kw = dict(method="DOP853", t_eval=te, args=(A,), rtol=rtol, atol=rtol * 1e-3)
    ours, ref = solve_ivp(linear, span, Y0, **kw), si.solve_ivp(linear, span, Y0, **kw)
    assert ours.success and abs(ours.nfev - ref.nfev) <= 26  # at most two steps apart
    np.testing.assert_array_equal(ours.t, ref.t)
    np.testing.assert_allclose(ours.y, ref.y, rtol=0, atol=1e-2 * rtol)
    np.testing.assert_allclose(ours.y, exact(A, Y0, te - span[0]), rtol=0, atol=10 * rtol)


def test_dop853_dense_output_and_t_eval_equal_scipy():
    kw = dict(method="DOP853", args=(A,), rtol=1e-9, atol=1e-12)
    r = solve_ivp(linear, (0, 4), Y0, dense_output=True, **kw)
    ref = si.solve_ivp(linear, (0, 4), Y0, dense_output=True, **kw)
    tt = np.linspace(0, 4, 37)
    np.testing.assert_allclose(r.sol(tt), ref.sol(tt), rtol=0, atol=1e-11)
    assert abs(r.nfev - ref.nfev) <= 32  # 3 extra stages per step for the dense output
    np.testing.assert_allclose(r.sol(tt), exact(A, Y0, tt), atol=1e-8)
    # the interpolant is differentiable: gradient in y0 against the exact solution's
    g = ds.grad(lambda y0: np.sum(solve_ivp(linear, (0, 4), y0, dense_output=True,
                                            **kw).sol(tt)))(Y0)
    np.testing.assert_allclose(g, sum(expm(A * t).T @ np.ones(2) for t in tt), atol=1e-7)


def test_result_fields_and_dense_output_match_scipy():
    r = solve_ivp(linear, (0, 4), Y0, args=(A,), dense_output=True, rtol=1e-8, atol=1e-10)
    ref = si.solve_ivp(linear, (0, 4), Y0, args=(A,), dense_output=True, rtol=1e-8,
                       atol=1e-10)
    for key in ("t", "y", "sol", "nfev", "njev", "nlu", "status", "message", "success"):
        assert key in r and getattr(r, key) is r[key]
    tt = np.linspace(0, 4, 37)
    np.testing.assert_allclose(r.sol(tt), ref.sol(tt), rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(r.sol(1.3), ref.sol(1.3), rtol=1e-11)
    assert r.sol(1.3).shape == (2,) and r.sol(tt).shape == (2, 37)
    for method in ("RK23", "Radau"):  # the interpolants are accurate to the tolerance
        s = solve_ivp(linear, (0, 4), Y0, method=method, args=(A,), dense_output=True,
                      rtol=1e-8, atol=1e-11)
        np.testing.assert_allclose(s.sol(tt), exact(A, Y0, tt), atol=1e-6)


# ---------------------------------------------------------------------------
# gradients
# ---------------------------------------------------------------------------
def exact_grads(A, y0, ts, w):
    """∂L/∂A, ∂L/∂y0 for L = Σ_j ⟨w_j, expm(A t_j) y0⟩."""
    gA = sum(t * expm_frechet(A.T * t, np.outer(wj, y0), compute_expm=False)
             for t, wj in zip(ts, w.T))
    gy0 = sum(expm(A * t).T @ wj for t, wj in zip(ts, w.T))
    return gA, gy0


GRAD_CASES = [("RK45", False), ("RK45", True), ("RK23", False), ("RK23", True),
              ("DOP853", False), ("DOP853", True), ("Radau", False)]


@pytest.mark.parametrize("method, adjoint", GRAD_CASES)
def test_linear_gradients_equal_expm_closed_form(method, adjoint):
    rtol = 1e-9 if method != "RK23" else 1e-7

    def loss(A, y0):
        r = solve_ivp(linear, (0, 4), y0, method=method, t_eval=TE, args=(A,), rtol=rtol,
                      atol=rtol * 1e-3, adjoint=adjoint)
        return np.sum(W * r.y)

    gA, gy0 = ds.grad(loss, argnums=(0, 1))(A, Y0)
    rA, ry0 = exact_grads(A, Y0, TE, W)
    np.testing.assert_allclose(gA, rA, rtol=0, atol=100 * rtol)
    np.testing.assert_allclose(gy0, ry0, rtol=0, atol=100 * rtol)


def pend(t, y, p):
    return np.stack([y[1], -p[0] * np.sin(y[0]) - p[1] * y[1] + 0.1 * np.cos(t)])


@pytest.mark.parametrize("method, adjoint", GRAD_CASES)
def test_check_grads_nonlinear(method, adjoint):
    """Central differences of the same solve; tolerances tight enough that the controller's
    piecewise-constant step choice moves the values by ~1e-12 only."""
    rtol = 1e-11 if method != "RK23" else 1e-9
    f = lambda y0, p: solve_ivp(pend, (0, 2), y0, method=method, t_eval=TE[:4] / 2,  # noqa
                                args=(p,), rtol=rtol, atol=1e-13, adjoint=adjoint).y
    check_grads(f, (np.array([1.0, 0.0]), np.array([2.0, 0.3])), modes=("rev",), eps=1e-5,
                rtol=1e-4, atol=1e-7)


def test_backprop_is_exact_derivative_of_the_discrete_solution():
    """At a loose tolerance (few steps), the backprop gradient equals finite differences of
    the discrete map with the same steps (first_step/max_step pin them): the step sizes are
    constants of the derivative."""
    for method in ("RK45", "RK23", "Radau"):
        f = lambda y0, p: solve_ivp(pend, (0, 2), y0, method=method, args=(p,),  # noqa
                                    first_step=0.25, max_step=0.25, rtol=1e-1, atol=1e-1).y
        check_grads(f, (np.array([1.0, 0.0]), np.array([2.0, 0.3])), modes=("rev",))
    g = lambda y0: solve_ivp(pend, (0, 2), y0, args=(np.array([2.0, 0.3]),),  # noqa
                             first_step=0.25, max_step=0.25, rtol=1e-1, atol=1e-1).y
    check_grads(g, (np.array([1.0, 0.0]),), modes=("fwd",))  # forward mode through RK45


def test_dense_solution_is_differentiable():
    def loss(A, y0):
        r = solve_ivp(linear, (0, 4), y0, args=(A,), dense_output=True, rtol=1e-10,
                      atol=1e-13)
        return r.sol(np.array([0.7, 2.9])) @ np.array([1.0, -2.0])

    w = np.stack([np.array([1.0, -2.0])] * 2)
    gA, gy0 = ds.grad(lambda A, y0: np.sum(loss(A, y0)), argnums=(0, 1))(A, Y0)
    rA, ry0 = exact_grads(A, Y0, np.array([0.7, 2.9]), w)
    np.testing.assert_allclose(gA, rA, atol=1e-7)
    np.testing.assert_allclose(gy0, ry0, atol=1e-7)


def test_adjoint_tape_is_constant_in_steps():
    counts = []

    def loss(A, rtol):
        before = len(A._tape.records)
        y = solve_ivp(linear, (0, 4), Y0, t_eval=TE, args=(A,), rtol=rtol, atol=rtol,
                      adjoint=True).y
        counts.append(len(A._tape.records) - before)
        return np.sum(y)

    ds.grad(loss)(A, 1e-3)
    ds.grad(loss)(A, 1e-9)
    assert counts[0] == counts[1] < 30


# ---------------------------------------------------------------------------
# stiffness
# ---------------------------------------------------------------------------
def test_robertson_radau_values_and_gradient():
    """Robertson's kinetics (rate constants 0.04, 3e7, 1e4): Radau needs ~1.5e3 evaluations of
    fun where an explicit method needs > 1e5 (SciPy's RK45: 2.4e5 on [0, 40]; ours stops at
    max_steps).  Values vs SciPy's Radau at rtol 1e-11; the gradient (IFT through each
    implicit step) vs central differences of SciPy's solver at rtol 1e-10."""
    y0 = np.array([1.0, 0.0, 0.0])
    te = np.array([0.0, 1.0, 10.0])
    kw = dict(method="Radau", t_eval=te, rtol=1e-7, atol=1e-11)
    r = solve_ivp(rober, (0, 10), y0, args=(K_ROBER,), **kw)
    ref = si.solve_ivp(rober, (0, 10), y0, method="Radau", t_eval=te, args=(K_ROBER,),
                       rtol=1e-11, atol=1e-15)
    np.testing.assert_allclose(r.y, ref.y, rtol=1e-5, atol=1e-10)
    assert r.success and r.nfev < 3000
    explicit = solve_ivp(rober, (0, 10), y0, args=(K_ROBER,), rtol=1e-7, atol=1e-11,
                         max_steps=1000)
    assert explicit.status == -1 and "max_steps" in explicit.message and not explicit.success

    loss = lambda k, y0: solve_ivp(rober, (0, 10), y0, args=(k,), **kw).y[0, -1]  # noqa
    gk, gy0 = ds.grad(loss, argnums=(0, 1))(K_ROBER, y0)

    def scipy_y(k, y0):
        return si.solve_ivp(rober, (0, 10), y0, method="Radau", args=(k,), rtol=1e-10,
                            atol=1e-14).y[0, -1]

    assert np.all(np.isfinite(gk)) and gk[0] < 0  # faster decay of y0: less of it left
    for j in (0,):  # one rate (each SciPy solve at 1e-10 takes ~1 s)
        e = np.zeros(3)
        e[j] = 1e-5 * K_ROBER[j]
        fd = (scipy_y(K_ROBER + e, y0) - scipy_y(K_ROBER - e, y0)) / (2 * e[j])
        np.testing.assert_allclose(gk[j], fd, rtol=2e-3, atol=1e-12)
    e = 1e-6
    fd0 = (scipy_y(K_ROBER, y0 + [e, 0, 0]) - scipy_y(K_ROBER, y0 - [e, 0, 0])) / (2 * e)
    np.testing.assert_allclose(gy0[0], fd0, rtol=1e-4)


def test_radau_implicit_steps_check_grads_on_a_stiff_linear_system():
    """A stiff linear system (eigenvalues −1 and −1e4): gradient vs expm's closed form and
    check_grads; Newton's iterations are not on the tape (IFT per step)."""
    S = np.array([[-1.0, 0.0], [1.0, -1e4]])

    def loss(S, y0):
        return np.sum(W[:, :3] * solve_ivp(linear, (0, 2), y0, method="Radau",
                                           t_eval=TE[:3] / 2, args=(S,), rtol=1e-8,
                                           atol=1e-11).y)

    gS, gy0 = ds.grad(loss, argnums=(0, 1))(S, Y0)
    rS, ry0 = exact_grads(S, Y0, TE[:3] / 2, W[:, :3])
    np.testing.assert_allclose(gS, rS, atol=1e-6)
    np.testing.assert_allclose(gy0, ry0, atol=1e-6)
    # pinned steps (no rejection at this loose tolerance): the exact discrete derivative
    pinned = lambda y0: solve_ivp(linear, (0, 2), y0, method="Radau", args=(S,),  # noqa
                                  first_step=0.1, max_step=0.1, rtol=1e-1, atol=1e-1)
    assert len(pinned(Y0).t) == 41  # 20 steps of 0.1, each two halves
    check_grads(lambda y0: pinned(y0).y, (Y0,), modes=("rev",))


# ---------------------------------------------------------------------------
# validation
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(t_span=(0.0, 0.0)), ValueError, "t_span must be two distinct"),
    (dict(t_span=(0.0, np.inf)), ValueError, "t_span must be two distinct"),
    (dict(y0=np.zeros((2, 1))), ValueError, "y0 must be a non-empty 1-D"),
    (dict(y0=np.array([1j, 0])), TypeError, "y0 must be real"),
    (dict(args=[A]), TypeError, "args must be a tuple"),
    (dict(rtol=0.0), ValueError, "rtol must be a positive"),
    (dict(rtol=1e-16), ValueError, "100 \\* machine epsilon"),
    (dict(atol=np.ones(3)), ValueError, "atol must be a positive number or one per"),
    (dict(t_eval=np.array([0.0, 5.0])), ValueError, "within t_span"),
    (dict(t_eval=np.array([2.0, 1.0])), ValueError, "strictly monotonic"),
    (dict(adjoint=True, dense_output=True), ValueError, "not differentiable"),
    (dict(max_steps=0), ValueError, "max_steps"),
    (dict(method="LSODA"), ValueError, "method must be one of"),
    (dict(fun=None), TypeError, "fun must be callable"),
])
def test_bad_input(kwargs, exc, match):
    call = dict(fun=linear, t_span=(0.0, 4.0), y0=Y0, args=(A,))
    call.update(kwargs)
    with pytest.raises(exc, match=match):
        solve_ivp(**call)


def test_traced_times_and_bad_fun_output():
    with pytest.raises(TypeError, match="t_span is being differentiated"):
        ds.grad(lambda tf: np.sum(solve_ivp(linear, (0.0, tf), Y0, args=(A,)).y))(1.0)
    with pytest.raises(ValueError, match=r"returned shape \(3,\), expected \(2,\)"):
        solve_ivp(lambda t, y: np.zeros(3), (0, 1), Y0)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("method", ["RK45", "Radau"])
def test_second_order(method, mode):
    """y' = −k y: d²y(T)/dk² = T² e^{−kT}; for Radau through the IFT rule of each step."""
    loss = lambda k: solve_ivp(lambda t, y, k: -k * y, (0, 1.5), np.array([1.0]),  # noqa
                               method=method, args=(k,), rtol=1e-10, atol=1e-12).y[0, -1]
    np.testing.assert_allclose(ds.hessian(loss, mode=mode)(0.7), 1.5 ** 2 * np.exp(-1.05),
                               rtol=1e-8)


def test_van_der_pol_mu_1000():
    """Van der Pol with mu = 1000 on [0, 300] (the slow branch of the relaxation oscillation):
    Radau needs a few hundred evaluations of fun, RK45 runs out of 2000 steps; the value and
    the gradients in mu and y0 equal SciPy's Radau (rtol 1e-11) and its central differences."""
    vdp = lambda t, y, mu: np.stack([y[1], mu * ((1 - y[0] ** 2) * y[1]) - y[0]])  # noqa
    y0 = np.array([2.0, 0.0])
    kw = dict(method="Radau", rtol=1e-6, atol=1e-9)
    r = solve_ivp(vdp, (0, 300), y0, args=(1000.0,), **kw)
    assert r.success and r.nfev < 2000
    ref = lambda mu, y0: si.solve_ivp(vdp, (0, 300), y0, method="Radau", args=(mu,),  # noqa
                                      rtol=1e-11, atol=1e-13).y[0, -1]
    np.testing.assert_allclose(r.y[0, -1], ref(1000.0, y0), rtol=1e-6)
    explicit = solve_ivp(vdp, (0, 300), y0, args=(1000.0,), rtol=1e-6, atol=1e-9,
                         max_steps=2000)
    assert explicit.status == -1 and not explicit.success
    gmu, gy0 = ds.grad(lambda mu, y0: solve_ivp(vdp, (0, 300), y0, args=(mu,), **kw).y[0, -1],
                       argnums=(0, 1))(1000.0, y0)
    np.testing.assert_allclose(gmu, (ref(1000.001, y0) - ref(999.999, y0)) / 0.002, rtol=1e-5)
    e = np.array([1e-6, 0.0])
    np.testing.assert_allclose(gy0[0], (ref(1000.0, y0 + e) - ref(1000.0, y0 - e)) / 2e-6,
                               rtol=1e-6)


def test_plain_lists_and_failure_status():
    """Lists and integers are accepted as SciPy does; a blow-up (y' = y², y(1) = ∞) ends with
    status −1, a message, and the t_eval points reached so far."""
    r = solve_ivp(lambda t, y: -y, [0, 1], [1, 2])
    np.testing.assert_allclose(r.y[:, -1], np.exp(-1.0) * np.array([1, 2]), rtol=1e-3)
    for method in ("RK45", "Radau"):
        r = solve_ivp(lambda t, y: y ** 2, (0, 2), np.array([1.0]), method=method,
                      t_eval=np.linspace(0, 2, 5), max_steps=2000)
        assert r.status == -1 and not r.success and r.message.startswith("solve_ivp:")
        assert r.t.size == r.y.shape[1] and np.all(r.t < 1.0)
        np.testing.assert_allclose(r.y[0], 1 / (1 - r.t), rtol=1e-2)



# ---------------------------------------------------------------------------
# events
# ---------------------------------------------------------------------------
def ball(t, y, g):
    return np.stack([y[1], -g * np.ones_like(y[0])])


def _hit(t, y, g):
    return y[0]


def _apex(t, y, g):
    return y[1]


_hit.terminal, _hit.direction = True, -1


@pytest.mark.parametrize("method", ["RK45", "RK23", "DOP853"])
def test_events_equal_scipy(method):
    kw = dict(method=method, args=(9.81,), events=[_hit, _apex], rtol=1e-10, atol=1e-12)
    r, ref = solve_ivp(ball, (0, 10), BALL0, **kw), si.solve_ivp(ball, (0, 10), BALL0, **kw)
    assert r.status == ref.status == 1 and r.success and r.message == ref.message
    for ours, theirs in zip(r.t_events + r.y_events, ref.t_events + ref.y_events):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(r.t[-1], ref.t[-1], rtol=1e-13)
    np.testing.assert_allclose(r.y[:, -1], ref.y[:, -1], atol=1e-13)
    # t_eval stops at the terminal event; the dense output ends there
    te = np.linspace(0, 2, 9)
    r = solve_ivp(ball, (0, 10), BALL0, t_eval=te, dense_output=True, **kw)
    ref = si.solve_ivp(ball, (0, 10), BALL0, t_eval=te, **kw)
    np.testing.assert_array_equal(r.t, ref.t)
    np.testing.assert_allclose(r.y, ref.y, atol=1e-12)
    np.testing.assert_allclose(r.sol(r.t_events[0][0]), [0.0, r.y_events[0][0][1]], atol=1e-12)


BALL0 = np.array([2.0, 3.0])


def test_event_time_gradient_equals_the_closed_form():
    # y(t) = h + v t - g t^2 / 2 hits 0 at t* = (v + s) / g, s = sqrt(v^2 + 2 g h)
    def tstar(y0, g):
        return solve_ivp(ball, (0, 10), y0, args=(g,), events=_hit, rtol=1e-11,
                         atol=1e-12).t_events[0][0]
    (h, v), g = BALL0, 9.81
    s = np.sqrt(v * v + 2 * g * h)
    gy, gg = ds.grad(tstar, argnums=(0, 1))(BALL0, g)
    np.testing.assert_allclose(gy, [1 / s, (1 + v / s) / g], rtol=1e-10)
    np.testing.assert_allclose(gg, -(v + s) / g ** 2 + h / (s * g), rtol=1e-10)
    _, ty = ds.jvp(lambda y0: tstar(y0, g), (BALL0,), (np.array([1.0, 0.0]),))
    np.testing.assert_allclose(ty, 1 / s, rtol=1e-10)


def test_event_gradients_nonlinear_check_grads():
    def cross(t, y, p):
        return y[0] - 0.3  # the pendulum's angle falling through 0.3

    cross.terminal, cross.direction = True, -1

    def f(y0, p):
        r = solve_ivp(pend, (0, 5), y0, args=(p,), events=cross, rtol=1e-11, atol=1e-13)
        return np.concatenate([r.t_events[0], r.y_events[0][0], r.y[:, -1]])

    check_grads(f, (np.array([1.0, 0.0]), np.array([2.0, 0.3])), modes=("rev", "fwd"),
                eps=1e-5, rtol=1e-4, atol=1e-7)


def test_terminal_counts_and_directions_equal_scipy():
    def osc(t, y):
        return np.stack([y[1], -y[0]])

    def zero(t, y):
        return y[0]

    zero.terminal = 2  # stop at the second crossing
    up = lambda t, y: y[1]  # noqa: E731
    up.direction = 1
    kw = dict(events=[zero, up], rtol=1e-10, atol=1e-12)
    r = solve_ivp(osc, (0, 20), np.array([1.0, 0.0]), **kw)
    ref = si.solve_ivp(osc, (0, 20), np.array([1.0, 0.0]), **kw)
    assert r.status == ref.status == 1
    for ours, theirs in zip(r.t_events, ref.t_events):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    np.testing.assert_allclose(r.t_events[0], [np.pi / 2, 3 * np.pi / 2], rtol=1e-9)


def test_event_errors():
    with pytest.raises(TypeError, match="events\\[0\\] must be callable"):
        solve_ivp(ball, (0, 10), BALL0, args=(9.81,), events=[3.0])
