"""Values the drift and diffusion close over, for every gradient method.

The rule (``sde._sdeint._CLOSURES``): ``backprop`` differentiates closed-over traced values
exactly; ``checkpoint``, ``reversible`` and ``stochastic`` differentiate ``y0`` and ``params``
only and refuse a closed-over value being differentiated with a ValueError that says what to do
(``reversible`` and ``stochastic`` accept values traced by an *outer* differentiation, grad of
grad, since their rules are then differentiated in turn). Never a silent zero: the grid below
runs every method x {closed-over, explicit} x {reverse, forward} and asserts that each result
is either the backprop gradient (itself checked by finite differences and the exact solution)
or that refusal.
"""

import numpy as np
import pytest

import diffsci as ds
import sde
from diffsci.testing import check_grads

pytestmark = pytest.mark.kernels  # Numba kernels: the Brownian tree's bridges, the fast paths

TS = np.array([0.0, 0.5, 1.0])
Y0 = np.array([[1.0, 0.5], [0.8, 1.2], [1.1, 0.9]])
A, S = 0.7, 0.3
METHODS = ["backprop", "checkpoint", "reversible", "stochastic"]
REFUSED = {"checkpoint", "reversible", "stochastic"}
DT = 0.05


def _gbm(a, s, p_index=None):
    """Stratonovich GBM dX = a X dt + s X ∘ dW; (a, s) closed over, or read from params."""
    if p_index is None:
        return sde.SDE(lambda t, y, p: a * y, lambda t, y, p: s * y, calculus="stratonovich")
    return sde.SDE(lambda t, y, p: p[0] * y, lambda t, y, p: p[1] * y, calculus="stratonovich")


def _loss(adjoint, route, dt=DT, seed=3):
    """L(a, s) = sum(y_T²) with (a, s) closed over or passed as params."""
    def f(a, s):
        if route == "closed":
            ys = sde.sdeint(_gbm(a, s), Y0, TS, None, method="reversible_heun", dt=dt,
                            adjoint=adjoint, seed=seed)
        else:
            ys = sde.sdeint(_gbm(None, None, 0), Y0, TS, (a, s), method="reversible_heun",
                            dt=dt, adjoint=adjoint, seed=seed)
        return np.sum(ys[-1] ** 2)
    return f


def _reference():
    return np.array(ds.grad(_loss("backprop", "explicit"), argnums=(0, 1))(A, S))


def _assert_refused(excinfo, adjoint):
    msg = str(excinfo.value)
    for part in (f"sdeint: adjoint={adjoint!r}", "differentiates y0 and params only",
                 "closes over a value being differentiated", "inside params",
                 "adjoint='backprop'"):
        assert part in msg, (part, msg)
    assert "args=" not in msg  # sdeint users cannot pass args= (the old checkpoint advice)


def test_backprop_gradient_is_exact():
    """The reference itself: finite differences, and near the exact solution's gradient at a
    fine step (X_T = X0 exp(aT + sW_T): dL/da = Σ 2T X_T², dL/ds = Σ 2 W_T X_T²)."""
    check_grads(_loss("backprop", "closed"), (A, S), modes=("rev", "fwd"))
    check_grads(_loss("backprop", "explicit"), (A, S), modes=("rev", "fwd"))
    dt = 1.0 / 512
    bm = sde.BrownianInterval(0.0, 1.0, (3, 2), seed=5, tol=dt / 4)
    g = ds.grad(lambda a, s: np.sum(sde.sdeint(_gbm(a, s), Y0, TS, None,
                                               method="reversible_heun", dt=dt,
                                               brownian=bm)[-1] ** 2), argnums=(0, 1))(A, S)
    W = bm.increment(0.0, 1.0)
    x = Y0 * np.exp(A + S * W)
    exact = np.array([np.sum(2 * x**2), np.sum(2 * W * x**2)])
    np.testing.assert_allclose(np.array(g), exact, rtol=0.02)


@pytest.mark.parametrize("adjoint", METHODS)
@pytest.mark.parametrize("route", ["closed", "explicit"])
@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_grid_every_method_route_mode(adjoint, route, mode):
    ref = _reference()
    f = _loss(adjoint, route)

    def run():
        if mode == "rev":
            return np.array(ds.grad(f, argnums=(0, 1))(A, S))
        return np.array([ds.jvp(f, (A, S), (1.0, 0.0))[1], ds.jvp(f, (A, S), (0.0, 1.0))[1]])

    if route == "closed" and adjoint in REFUSED:
        with pytest.raises(ValueError) as excinfo:
            run()
        _assert_refused(excinfo, adjoint)
        return
    g = run()
    assert np.all(np.abs(g) > 0.1 * np.abs(ref))  # no silent zero (ref is O(10) here)
    # checkpoint and reversible are backprop's gradient to round-off; the stochastic adjoint
    # agrees as dt -> 0 (measured 0.3-0.6 % at dt = 0.05 on this path)
    rtol = 0.02 if adjoint == "stochastic" else 1e-9
    np.testing.assert_allclose(g, ref, rtol=rtol)


@pytest.mark.parametrize("adjoint", sorted(REFUSED))
def test_refused_with_y0_traced_too(adjoint):
    """A closed-over value next to a traced y0 (the method's rule runs): refused, not lost."""
    def f(y0, a):
        ys = sde.sdeint(_gbm(a, S), y0, TS, None, method="reversible_heun", dt=DT,
                        adjoint=adjoint)
        return np.sum(ys[-1])
    with pytest.raises(ValueError) as excinfo:
        ds.grad(f, argnums=(0, 1))(Y0, A)
    _assert_refused(excinfo, adjoint)
    g = ds.grad(f, argnums=0)(Y0, A)  # a not differentiated: plain inside, nothing to lose
    gb = ds.grad(lambda y0: np.sum(sde.sdeint(_gbm(A, S), y0, TS, None, dt=DT,
                                              method="reversible_heun")[-1]))(Y0)
    np.testing.assert_allclose(g, gb, rtol=0.02 if adjoint == "stochastic" else 1e-10)


@pytest.mark.parametrize("adjoint", sorted(REFUSED))
@pytest.mark.parametrize("traced_y0", [False, True])
def test_closure_invisible_at_t0_is_refused_mid_solve(adjoint, traced_y0):
    """A closure that enters only after t0 escapes the check at (t0, y0); the solve's own
    check refuses it (the forward output is traced at the level of y0 and params or above)."""
    def f(y0, a):
        prob = sde.SDE(lambda t, y, p: (a if t > 0.3 else 0.0) * y, lambda t, y, p: S * y,
                       calculus="stratonovich")
        ys = sde.sdeint(prob, y0, TS, None, method="reversible_heun", dt=DT, adjoint=adjoint)
        return np.sum(ys[-1])
    argnums = (0, 1) if traced_y0 else 1
    with pytest.raises(ValueError) as excinfo:
        ds.grad(f, argnums=argnums)(Y0, A)
    _assert_refused(excinfo, adjoint)


@pytest.mark.parametrize("adjoint", ["backprop", "reversible", "stochastic"])
def test_outer_differentiation_of_a_closed_over_value(adjoint):
    """grad over a (closed over) of grad over s (params): the method's rule is differentiated
    by the outer level, so a closure at that level is exact: equal to the same mixed derivative
    with a passed in params."""
    def inner_closed(a):
        prob = sde.SDE(lambda t, y, p: a * y, lambda t, y, p: p * y, calculus="stratonovich")
        return ds.grad(lambda s: np.sum(sde.sdeint(prob, Y0, TS, s, method="reversible_heun",
                                                   dt=DT, adjoint=adjoint)[-1] ** 2))(S)

    def inner_explicit(a):
        return ds.grad(lambda s: np.sum(sde.sdeint(_gbm(None, None, 0), Y0, TS, (a, s),
                                                   method="reversible_heun", dt=DT,
                                                   adjoint=adjoint)[-1] ** 2))(S)

    closed, explicit = ds.grad(inner_closed)(A), ds.grad(inner_explicit)(A)
    assert abs(explicit) > 1.0
    np.testing.assert_allclose(closed, explicit, rtol=1e-10)
    if adjoint != "stochastic":  # the exact discrete mixed derivative, by finite differences
        h = 1e-5
        fd = (inner_explicit(A + h) - inner_explicit(A - h)) / (2 * h)
        np.testing.assert_allclose(closed, fd, rtol=1e-6)


def test_checkpoint_refuses_an_outer_closed_over_value():
    """diffsci.checkpointed_loop refuses closures at every level, so sdeint refuses first."""
    def inner(a):
        prob = sde.SDE(lambda t, y, p: a * y, lambda t, y, p: p * y, calculus="stratonovich")
        return ds.grad(lambda s: np.sum(sde.sdeint(prob, Y0, TS, s, method="reversible_heun",
                                                   dt=DT, adjoint="checkpoint")[-1]))(S)
    with pytest.raises(ValueError) as excinfo:
        ds.grad(inner)(A)
    _assert_refused(excinfo, "checkpoint")


@pytest.mark.parametrize("adjoint", METHODS)
def test_plain_closure_is_fine_everywhere(adjoint):
    """A closed-over plain number (nothing differentiated through it) is accepted by all."""
    f = lambda s: np.sum(sde.sdeint(sde.SDE(lambda t, y, p: A * y, lambda t, y, p: p * y,  # noqa: E731
                                            calculus="stratonovich"),
                                    Y0, TS, s, method="reversible_heun", dt=DT, seed=3,
                                    adjoint=adjoint)[-1] ** 2)
    g = ds.grad(f)(S)
    ref = _reference()[1]
    np.testing.assert_allclose(g, ref, rtol=0.02 if adjoint == "stochastic" else 1e-9)


@pytest.mark.parametrize("adjoint", ["reversible", "stochastic"])
def test_forward_over_reverse_with_an_outer_closed_over_value(adjoint):
    """jvp over a (closed over) of grad over s: the same as with a passed in params."""
    def inner(a, closed):
        if closed:
            prob = sde.SDE(lambda t, y, p: a * y, lambda t, y, p: p * y,
                           calculus="stratonovich")
            return ds.grad(lambda s: np.sum(sde.sdeint(prob, Y0, TS, s, dt=DT, adjoint=adjoint,
                                                       method="reversible_heun")[-1] ** 2))(S)
        return ds.grad(lambda s: np.sum(sde.sdeint(_gbm(None, None, 0), Y0, TS, (a, s), dt=DT,
                                                   method="reversible_heun",
                                                   adjoint=adjoint)[-1] ** 2))(S)
    closed = ds.jvp(lambda a: inner(a, True), (A,), (1.0,))[1]
    explicit = ds.jvp(lambda a: inner(a, False), (A,), (1.0,))[1]
    assert abs(explicit) > 1.0
    np.testing.assert_allclose(closed, explicit, rtol=1e-10)


def test_reversible_adjoint_hessian_through_params_equals_backprop():
    """Second order with params traced by both levels (the reversible rule's backward pass
    used to convert its traced parameter leaves to plain arrays and raise)."""
    def f(adjoint):
        return lambda p: np.sum(sde.sdeint(_gbm(None, None, 0), Y0, TS, (p[0], p[1]), dt=DT,
                                           method="reversible_heun", adjoint=adjoint)[-1] ** 2)
    p = np.array([A, S])
    hb, hr = ds.hessian(f("backprop"))(p), ds.hessian(f("reversible"))(p)
    assert np.all(np.abs(hb) > 1.0)
    np.testing.assert_allclose(hr, hb, rtol=1e-9)
