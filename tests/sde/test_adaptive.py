"""Adaptive step-size control (step doubling and embedded pairs): agreement with fixed small
steps and the exact solution on the same Brownian path, the consistency of rejected steps with
that path, the embedded estimate itself, tolerance → error, gradients on the accepted grid
(finite differences, the exact pathwise derivative, the stochastic adjoint), bad input."""

import numpy as np
import pytest

import diffsci as ds
import sde
from diffsci.testing import check_grads
from sde._adaptive import _error, select_grid
from sde._solvers import SOLVERS
from tests.sde import problems

pytestmark = pytest.mark.kernels  # Numba kernels: the Brownian tree's bridges, the fast paths

TS = np.array([0.0, 0.5, 1.0])
P = np.array([problems.MU, problems.SIGMA])
Y0 = np.ones((32, 2))


def _bm(seed=5):
    return sde.BrownianInterval(0.0, 1.0, (32, 2), seed=seed, tol=2.0**-24)


def test_adaptive_matches_fixed_small_steps():
    """Heun with rtol = 1e-4 against Heun at dt = 2⁻¹² and the exact solution, all on one path."""
    prob, bm = problems.gbm("stratonovich"), _bm()
    ya = sde.sdeint(prob, Y0, TS, P, method="heun", dt=0.1, adaptive=True, rtol=1e-4,
                    atol=1e-6, brownian=bm)
    yf = sde.sdeint(prob, Y0, TS, P, method="heun", dt=2.0**-12, brownian=bm)
    exact = problems.gbm_exact(Y0, 1.0, bm.increment(0.0, 1.0), calculus="stratonovich")
    assert np.max(np.abs(ya - yf)) < 5e-3 * np.max(np.abs(yf))
    assert np.mean(np.abs(ya[-1] - exact)) < 3e-3  # measured 1.4e-3 (75 accepted steps)
    coarse = sde.sdeint(prob, Y0, TS, P, method="heun", dt=0.1, brownian=bm)
    assert np.mean(np.abs(ya[-1] - exact)) < 0.2 * np.mean(np.abs(coarse[-1] - exact))


def test_rejected_steps_reuse_the_path():
    """A large first step with a tight tolerance forces rejections. Every retry queries sub-
    intervals of the same path, so (1) the accepted grid's increments sum to W(0, 1) exactly,
    (2) the solution still converges to the exact solution *of that path* — a solver that drew
    fresh noise on rejection would solve a different path (and bias towards small increments)."""
    prob, bm = problems.gbm("stratonovich"), _bm(seed=9)
    solver = SOLVERS[sde.Method.HEUN]
    times, save, acc, rej = select_grid(prob, solver, TS, Y0, P, bm, dt0=0.5, rtol=1e-4,
                                        atol=1e-6, dt_min=1e-12, max_steps=10_000)
    assert rej > 0 and acc > 10
    assert np.all(np.diff(times) > 0) and np.array_equal(times[save], TS)
    steps = sum(bm.increment(a, b) for a, b in zip(times[:-1], times[1:]))
    np.testing.assert_allclose(steps, bm.increment(0.0, 1.0), rtol=0, atol=1e-12)
    ya = sde.sdeint(prob, Y0, TS, P, method="heun", dt=0.5, adaptive=True, rtol=1e-4,
                    brownian=bm)
    exact = problems.gbm_exact(Y0, 1.0, bm.increment(0.0, 1.0), calculus="stratonovich")
    assert np.mean(np.abs(ya[-1] - exact)) < 3e-3  # measured 1.4e-3 (75 accepted steps)
    # the query order does not matter: a fresh interval with the same seed gives the same answer
    yb = sde.sdeint(prob, Y0, TS, P, method="heun", dt=0.5, adaptive=True, rtol=1e-4,
                    brownian=_bm(seed=9))
    np.testing.assert_array_equal(ya, yb)


def test_adaptive_steps_follow_the_difficulty():
    """A drift that is stiff on [0.5, 1] only: the accepted steps there are smaller."""
    prob = sde.SDE(lambda t, y, p: -(1.0 + 200.0 * (t > 0.5)) * y, lambda t, y, p: 0.1 + 0 * y,
                   calculus="stratonovich")
    times, _, _, _ = select_grid(prob, SOLVERS[sde.Method.HEUN], TS, Y0, None, _bm(), dt0=0.1,
                                 rtol=1e-3, atol=1e-4, dt_min=1e-12, max_steps=10_000)
    h = np.diff(times)
    assert np.median(h[times[1:] > 0.55]) < 0.5 * np.median(h[times[1:] < 0.45])


def test_adaptive_gradients_backprop_equals_reversible():
    prob = sde.SDE(lambda t, y, p: -p[0] * y, lambda t, y, p: p[1] * np.cos(y),
                   calculus="stratonovich")
    p = np.array([0.7, 0.3])

    def loss(p, adjoint):
        ys = sde.sdeint(prob, Y0, TS, p, method="reversible_heun", dt=0.2, adaptive=True,
                        rtol=1e-3, adjoint=adjoint, brownian=_bm())
        return np.sum(ys[-1] ** 2)

    gb, gr = ds.grad(loss)(p, "backprop"), ds.grad(loss)(p, "reversible")
    np.testing.assert_allclose(gr, gb, rtol=1e-9)


@pytest.mark.parametrize("kwargs,match", [
    (dict(rtol=-1.0), "rtol must be a finite number >= 0"),
    (dict(rtol=0.0, atol=0.0), "rtol \\+ atol > 0"),
    (dict(max_steps=0), "max_steps must be an int >= 1"),
    (dict(dt_min=0.0), "dt_min must be a finite number > 0"),
    (dict(brownian=sde.BrownianPath(np.linspace(0, 1, 11), (32, 2))), "needs brownian to be a "
                                                                       "BrownianInterval"),
])
def test_adaptive_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sde.sdeint(problems.gbm("stratonovich"), Y0, TS, P, method="heun", dt=0.1,
                   adaptive=True, **kwargs)


def test_adaptive_gives_up_clearly():
    with pytest.raises(RuntimeError, match="max_steps=5"):
        sde.sdeint(problems.gbm("stratonovich"), Y0, TS, P, method="heun", dt=0.01,
                   adaptive=True, max_steps=5)
    with pytest.raises(ValueError, match="does not support method 'sra1'"):
        sde.sdeint(problems.additive_ou(), Y0, TS, (1.0, 0.0, np.eye(2)), method="sra1",
                   adaptive=True)


# ------------------------------------------------------------------ embedded pairs

EMBEDDED = [("milstein", "ito"), ("heun", "stratonovich")]


@pytest.mark.parametrize("name,calculus", EMBEDDED)
def test_embedded_estimate_is_the_euler_difference_and_scales_like_h(name, calculus):
    """The estimate is y' − (Euler step) (+ Lamba's drift term for Milstein), computed from the
    same stages, and its mean-square size scales like h^error_order (= h)."""
    prob, solver = problems.gbm(calculus), SOLVERS[sde.Method(name)]
    rng = np.random.default_rng(0)
    y = 1.0 + 0.1 * rng.standard_normal((4000, 2))
    rms = []
    hs = 2.0 ** -np.arange(4, 11)
    for h in hs:
        dW = rng.standard_normal(y.shape) * np.sqrt(h)
        y1, _, e = solver.step_with_error(prob, 0.0, h, y, None, P, dW)
        np.testing.assert_array_equal(y1, solver.step(prob, 0.0, h, y, None, P, dW)[0])
        euler = y + prob.f(0.0, y, P) * h + prob.g(0.0, y, P) * dW
        drift = 0.5 * h * (prob.f(h, y1, P) - prob.f(0.0, y, P)) if name == "milstein" else 0.0
        np.testing.assert_allclose(e, y1 - euler + drift, rtol=1e-12, atol=1e-15)
        rms.append(np.sqrt(np.mean(e**2)))
    slope = np.polyfit(np.log(hs), np.log(rms), 1)[0]
    assert abs(slope - solver.error_order) < 0.1, slope


@pytest.mark.parametrize("name,calculus", EMBEDDED)
def test_embedded_rejections_stay_on_the_path(name, calculus):
    """A big first step and a tight tolerance force rejections. Every retry queries sub-
    intervals of the same path: the accepted grid's increments add up to W(0, 1), every accepted
    step passes its own test (E ≤ 1 when recomputed on the grid), the adaptive solution is the
    fixed-grid solution on the accepted grid, and it converges to the exact solution of *that*
    path from two very different step histories."""
    prob, solver = problems.gbm(calculus), SOLVERS[sde.Method(name)]
    bm = _bm(seed=9)
    exact = problems.gbm_exact(Y0, 1.0, bm.increment(0.0, 1.0), calculus=calculus)
    errors = []
    for dt0 in (0.5, 0.002):
        times, save, acc, rej = select_grid(prob, solver, TS, Y0, P, bm, dt0=dt0, rtol=1e-3,
                                            atol=1e-6, dt_min=1e-12, max_steps=10_000,
                                            estimate=sde.ErrorEstimate.EMBEDDED)
        assert acc > 10 and (rej > 0 or dt0 < 0.01)
        assert np.array_equal(times[save], TS) and acc == times.size - 1
        steps = sum(bm.increment(a, b) for a, b in zip(times[:-1], times[1:]))
        np.testing.assert_allclose(steps, bm.increment(0.0, 1.0), rtol=0, atol=1e-12)
        y = Y0
        for a, b in zip(times[:-1], times[1:]):
            y1, _, e = solver.step_with_error(prob, a, b - a, y, None, P, bm.increment(a, b))
            assert _error(y, y1, e, 1e-3, 1e-6) <= 1.0
            y = y1
        ya = sde.sdeint(prob, Y0, TS, P, method=name, dt=dt0, adaptive=True, rtol=1e-3,
                        brownian=bm)
        yf = sde.sdeint(prob, Y0, times, P, method=name, dt=1.0, brownian=bm)[save]
        np.testing.assert_array_equal(ya, yf)
        np.testing.assert_allclose(ya[-1], y, rtol=1e-13)
        errors.append(np.mean(np.abs(ya[-1] - exact)))
    assert max(errors) < 6e-3, errors  # measured 2.6e-3 / 0.8e-3 at rtol = 1e-3 (64 paths)


@pytest.mark.parametrize("name,calculus", EMBEDDED)
def test_embedded_tolerance_controls_the_error(name, calculus):
    """Error against the exact solution falls with rtol, about proportionally (measured slopes
    0.9–1.0 in log–log), and the step count rises."""
    prob, bm = problems.gbm(calculus), _bm(seed=5)
    exact = problems.gbm_exact(Y0, 1.0, bm.increment(0.0, 1.0), calculus=calculus)
    rtols = [1e-1, 1e-2, 1e-3]
    errs, counts = [], []
    for rtol in rtols:
        times, *_ = select_grid(prob, SOLVERS[sde.Method(name)], TS, Y0, P, bm, dt0=0.1,
                                rtol=rtol, atol=1e-6, dt_min=1e-12, max_steps=10_000,
                                estimate=sde.ErrorEstimate.EMBEDDED)
        ya = sde.sdeint(prob, Y0, TS, P, method=name, dt=0.1, adaptive=True, rtol=rtol,
                        atol=1e-6, brownian=bm)
        errs.append(np.mean(np.abs(ya[-1] - exact)))
        counts.append(times.size)
    assert errs[0] > errs[1] > errs[2] and counts[0] < counts[1] < counts[2], (errs, counts)
    slope = np.polyfit(np.log(rtols), np.log(errs), 1)[0]
    assert 0.6 < slope < 1.4, slope


def test_embedded_gradients():
    """Itô GBM with embedded Milstein: the adaptive gradient is the gradient of the fixed-grid
    solve on the accepted grid (checked against finite differences), and it approximates the
    exact pathwise derivative ∂X_T/∂μ = T X_T, ∂X_T/∂σ = (W_T − σT) X_T."""
    prob, bm = problems.gbm("ito"), _bm(seed=3)
    times, save, _, _ = select_grid(prob, SOLVERS[sde.Method.MILSTEIN], TS, Y0, P, bm,
                                    dt0=0.1, rtol=1e-3, atol=1e-6, dt_min=1e-12,
                                    max_steps=10_000, estimate=sde.ErrorEstimate.EMBEDDED)

    def adaptive(p):
        return np.mean(sde.sdeint(prob, Y0, TS, p, method="milstein", dt=0.1, adaptive=True,
                                  rtol=1e-3, brownian=bm)[-1])

    def fixed(p):
        return np.mean(sde.sdeint(prob, Y0, times, p, method="milstein", dt=1.0,
                                  brownian=bm)[-1])

    ga, gf = ds.grad(adaptive)(P), ds.grad(fixed)(P)
    np.testing.assert_allclose(ga, gf, rtol=1e-12)
    check_grads(fixed, (P,), modes=("rev",))
    x = problems.gbm_exact(Y0, 1.0, bm.increment(0.0, 1.0))
    exact = np.array([np.mean(x), np.mean((bm.increment(0.0, 1.0) - P[1]) * x)])
    assert np.max(np.abs(ga - exact)) < 1e-2 * np.max(np.abs(exact))  # measured 0.4 %
    gs = ds.grad(lambda p: np.mean(sde.sdeint(prob, Y0, TS, p, method="milstein", dt=0.1,
                                              adaptive=True, rtol=1e-3, brownian=bm,
                                              adjoint="stochastic")[-1]))(P)
    assert np.max(np.abs(gs - ga)) < 2e-2 * np.max(np.abs(ga))


def test_embedded_bad_input():
    with pytest.raises(ValueError, match="error_estimate='embedded' needs a solver with an "
                                         "embedded pair"):
        sde.sdeint(problems.gbm("stratonovich"), Y0, TS, P, method="euler_heun", dt=0.1,
                   adaptive=True, error_estimate="embedded")
    with pytest.raises(ValueError, match="sdeint: error_estimate must be"):
        sde.sdeint(problems.gbm("stratonovich"), Y0, TS, P, method="heun", dt=0.1,
                   adaptive=True, error_estimate="richardson")
