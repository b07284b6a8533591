"""Adaptive step-size control: agreement with fixed small steps on the same Brownian path, the
consistency of rejected steps with that path, gradients on the accepted grid, bad input."""

import numpy as np
import pytest

import diffsci as ds
import sde
from sde._adaptive import select_grid
from sde._solvers import SOLVERS
from tests.sde import problems

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
    (dict(rtol=-1.0), "rtol must be a number >= 0"),
    (dict(rtol=0.0, atol=0.0), "rtol \\+ atol > 0"),
    (dict(max_steps=0), "max_steps must be an int >= 1"),
    (dict(dt_min=0.0), "dt_min must be a number > 0"),
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
