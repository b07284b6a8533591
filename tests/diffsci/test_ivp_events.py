"""Events of diffsci.scipy.integrate.solve_ivp with the implicit methods and with adjoint=True.

References: scipy.integrate.solve_ivp's event times (the same roots of g along the solution: they
agree to the solvers' tolerance, not to rounding, since the steps differ); the closed form of a
ball thrown up against linear drag (its height x(t; h, v0, g, c) is elementary, the hit time t*
is its root, and dt*/dp = −(∂x/∂p)/ẋ(t*) by the implicit function theorem, evaluated on the
closed form); central finite differences (check_grads).
"""

import numpy as np
import pytest
import scipy.integrate as si
from scipy.optimize import brentq

import diffsci as ds
from diffsci.scipy.integrate import solve_ivp
from diffsci.testing import check_grads


def drag(t, y, g, c):
    return np.stack([y[1], -g - c * y[1]])


def hit(t, y, g, c):
    return y[0]


def apex(t, y, g, c):
    return y[1]


hit.terminal, hit.direction = True, -1
Y0, G, C = np.array([2.0, 3.0]), 9.81, 0.4
CASES = [("Radau", False), ("BDF", False), ("RK45", True), ("DOP853", True), ("Radau", True),
         ("BDF", True)]


def closed_form(h, v0, g, c):
    """x(t) = h + (v0 + g/c)(1 − e^{−ct})/c − g t/c; returns t* and dt*/d(h, v0, g, c)."""
    def x(t):
        return h + (v0 + g / c) * (1 - np.exp(-c * t)) / c - g * t / c
    ts = brentq(x, 1e-9, 10.0, xtol=1e-15)
    E = np.exp(-c * ts)
    xdot = (v0 + g / c) * E - g / c
    dx = np.array([1.0, (1 - E) / c, (1 - E) / c ** 2 - ts / c,
                   -g / c ** 3 * (1 - E) + (v0 + g / c) * (ts * E / c - (1 - E) / c ** 2)
                   + g * ts / c ** 2])
    return ts, -dx / xdot


@pytest.mark.parametrize("method,adjoint", CASES)
def test_event_times_equal_scipy_and_terminal_stop(method, adjoint):
    kw = dict(method=method, args=(G, C), events=[hit, apex], rtol=1e-8, atol=1e-10)
    r = solve_ivp(drag, (0, 10), Y0, adjoint=adjoint, **kw)
    ref = si.solve_ivp(drag, (0, 10), Y0, **{**kw, "method": "RK45", "rtol": 1e-12,
                                              "atol": 1e-14})
    assert r.status == ref.status == 1 and r.success and r.message == ref.message
    # the roots of the two solutions: ~100 rtol (BDF's global error is a few hundred local
    # errors at rtol 1e-8)
    for ours, theirs in zip(r.t_events + r.y_events, ref.t_events + ref.y_events):
        assert np.shape(ours) == np.shape(theirs)
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(r.t[-1], ref.t_events[0][0], rtol=1e-6)
    # the state at a terminal event; adjoint=True integrates again (other steps) to the root
    # found by the plain pass, so y there is 0 only to the global error (measured 1.2e-7)
    np.testing.assert_allclose(r.y[0, -1], 0.0, atol=1e-6 if adjoint else 1e-8)
    te = np.linspace(0, 2, 9)  # t_eval stops at the terminal event
    r = solve_ivp(drag, (0, 10), Y0, adjoint=adjoint, t_eval=te, **kw)
    assert np.array_equal(r.t, te[te <= ref.t_events[0][0]])


@pytest.mark.parametrize("method,adjoint", CASES)
def test_terminal_event_time_gradient_equals_closed_form(method, adjoint):
    def tstar(y0, g, c):
        return solve_ivp(drag, (0, 10), y0, method=method, args=(g, c), events=hit,
                         adjoint=adjoint, rtol=1e-9, atol=1e-11).t_events[0][0]
    ts, dts = closed_form(Y0[0], Y0[1], G, C)
    np.testing.assert_allclose(tstar(Y0, G, C), ts, rtol=1e-7)
    gy, gg, gc = ds.grad(tstar, argnums=(0, 1, 2))(Y0, G, C)
    # backprop: the exact derivative of the discrete hit time, which is within the solver's
    # error (~1e-7 relative at rtol 1e-9) of the true one; adjoint: to its tolerance too
    np.testing.assert_allclose(np.concatenate([gy, [gg, gc]]), dts, rtol=2e-6, atol=1e-8)


@pytest.mark.parametrize("method,adjoint", [("Radau", False), ("BDF", False), ("RK45", True)])
def test_event_gradients_check_grads(method, adjoint):
    def f(y0, p):
        r = solve_ivp(drag, (0, 10), y0, method=method, args=(p[0], p[1]), events=[hit, apex],
                      adjoint=adjoint, rtol=1e-10, atol=1e-12)
        return np.concatenate([r.t_events[0], r.t_events[1], r.y_events[0][0],
                               r.y_events[1][0]])
    # the step sequence is a piecewise-constant function of the inputs: a flipped accept/reject
    # decision between x ± eps moves the solution by its error (~1e-10 here), which at eps =
    # 1e-6 spoiled the differences by 7e-4 for Radau (its gradient matches the closed form of
    # the other test to 1e-8).  eps = 1e-4: jumps contribute ≲ 1e-6, truncation ~1e-8.
    check_grads(f, (Y0, np.array([G, C])), modes=("rev",), eps=1e-4, rtol=1e-4, atol=1e-6)


def test_nonterminal_counts_directions_equal_scipy_radau():
    def osc(t, y):
        return np.stack([y[1], -y[0]])

    def zero(t, y):
        return y[0]

    zero.terminal = 2  # stop at the second crossing
    up = lambda t, y: y[1]  # noqa: E731
    up.direction = 1
    for method, adjoint in [("Radau", False), ("RK45", True)]:
        r = solve_ivp(osc, (0, 20), np.array([1.0, 0.0]), method=method, adjoint=adjoint,
                      events=[zero, up], rtol=1e-9, atol=1e-11)
        assert r.status == 1
        np.testing.assert_allclose(r.t_events[0], [np.pi / 2, 3 * np.pi / 2], rtol=1e-7)
        np.testing.assert_allclose(r.t_events[1], [np.pi], rtol=1e-7)
