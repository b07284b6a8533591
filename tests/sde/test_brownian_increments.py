"""``sde.BrownianIncrements``: increments drawn by the caller, possibly traced.

Every solver on every noise type it supports: the solve equals the one on a ``BrownianPath``
with the same increments, and the gradient with respect to the increments (with y0 and the
parameters) is right by finite differences in both modes — before, the fused step
combination (``sde/_fused.py``) held the noise constant and that gradient was a silent zero.
The Euler OU solve has a closed-form noise gradient.  The gradient methods that hold the noise
constant refuse traced increments; under ``diffsci.jit`` fresh increments at every call run
one compiled program, equal to eager mode."""

import warnings

import numpy as np
import pytest

import diffsci as ds
import sde
from diffsci.testing import check_grads
from sde._grid import make_grid
from sde._solvers import SOLVERS
from tests.sde import problems
from tests.sde.test_gradients import coupled, general

TS = np.array([0.0, 0.4, 1.0])
DT = 0.1
GRID = make_grid(TS, DT)[0]
Y0 = np.array([[1.0, 0.5], [0.8, 1.2], [1.1, 0.9]])
P = np.array([0.5, 0.4])

PROBLEMS = {
    "gbm ito": problems.gbm(), "gbm stratonovich": problems.gbm("stratonovich"),
    "scalar gbm": problems.scalar_gbm(), "coupled": coupled(),
    "coupled stratonovich": coupled("stratonovich"), "general": general(),
    "additive ou": problems.additive_ou(),
}
PARAMS = {"additive ou": (1.5, np.array([0.2, -0.1]), np.array([[0.4, 0.1], [0.0, 0.3]]))}


def _supported():
    out = []
    for name, prob in PROBLEMS.items():
        for method, solver in SOLVERS.items():
            try:
                solver.check(prob)
            except ValueError:
                continue
            out.append((name, method.value))
    return out


CASES = _supported()


def _m(prob):
    p = next((PARAMS[n] for n, q in PROBLEMS.items() if q is prob and n in PARAMS), P)
    return sde.sdeint(prob, Y0, TS, p, dt=DT, return_brownian=True, seed=1)[1].shape[1]


def _path(prob, levy):
    return sde.BrownianPath(GRID, (Y0.shape[0], _m(prob)), seed=4, levy_area=levy)


def _increments(bp):
    steps = list(zip(GRID[:-1], GRID[1:]))
    dW = np.stack([bp.increment(s, t) for s, t in steps])
    H = np.stack([bp.levy_area(s, t) for s, t in steps]) if bp.has_levy_area else None
    return dW, H


def test_the_sweep_covers_every_solver():
    assert {m for _, m in CASES} == {m.value for m in SOLVERS}, CASES


@pytest.mark.parametrize("name,method", CASES)
def test_the_same_solve_as_the_path(name, method):
    prob, p = PROBLEMS[name], PARAMS.get(name, P)
    bp = _path(prob, SOLVERS[sde.Method(method)].needs_levy_area)
    dW, H = _increments(bp)
    want = sde.sdeint(prob, Y0, TS, p, dt=DT, method=method, brownian=bp)
    got = sde.sdeint(prob, Y0, TS, p, dt=DT, method=method,
                     brownian=sde.BrownianIncrements(GRID, dW, H))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


@pytest.mark.kernels
@pytest.mark.parametrize("name,method", CASES)
def test_the_gradient_in_the_noise_by_finite_differences(name, method):
    prob = PROBLEMS[name]
    levy = SOLVERS[sde.Method(method)].needs_levy_area
    dW, H = _increments(_path(prob, levy))
    def f(y0, p, dW, *h):
        bm = sde.BrownianIncrements(GRID, dW, h[0] if h else None)
        return np.sum(np.sin(sde.sdeint(prob, y0, TS, p, dt=DT, method=method, brownian=bm)))

    args = (Y0, PARAMS.get(name, P), dW) + ((H,) if levy else ())
    check_grads(f, args, modes=("rev", "fwd"))
    assert np.max(np.abs(ds.grad(f, argnums=2)(*args))) > 1e-3  # the noise matters


def test_the_euler_ou_noise_gradient_in_closed_form():
    """y_{k+1} = y_k + θ(1 − y_k)h + σ dW_k: ∂y_N/∂dW_k = σ (1 − θh)^{N−1−k}."""
    theta, sigma, n = 1.5, 0.3, 10
    ou = sde.SDE(lambda t, y, p: p[0] * (1.0 - y), lambda t, y, p: p[1] + 0.0 * y)
    ts = np.linspace(0.0, 1.0, n + 1)
    dW = np.random.default_rng(0).standard_normal((n, 2, 1)) * np.sqrt(0.1)

    def last(dW):
        ys = sde.sdeint(ou, np.zeros((2, 1)), ts, np.array([theta, sigma]), dt=0.1,
                        method="euler", brownian=sde.BrownianIncrements(ts, dW))
        return np.sum(ys[-1])

    want = sigma * (1 - theta * 0.1) ** (n - 1 - np.arange(n))
    np.testing.assert_allclose(ds.grad(last)(dW), np.broadcast_to(want[:, None, None], dW.shape),
                               rtol=1e-13)


@pytest.mark.parametrize("adjoint,method", [("checkpoint", "euler"), ("stochastic", "milstein"),
                                            ("reversible", "reversible_heun")])
def test_methods_that_hold_the_noise_constant_refuse_traced_increments(adjoint, method):
    prob = PROBLEMS["gbm stratonovich" if method == "reversible_heun" else "gbm ito"]
    dW, _ = _increments(_path(prob, False))

    def f(p, dW):
        bm = sde.BrownianIncrements(GRID, dW)
        return np.sum(sde.sdeint(prob, Y0, TS, p, dt=DT, method=method, adjoint=adjoint,
                                 brownian=bm))

    with pytest.raises(ValueError, match="holds the Brownian increments constant"):
        ds.grad(f, argnums=1)(P, dW)
    # plain increments: the method's gradient in the parameters, as with the same path
    bp = _path(prob, False)
    want = ds.grad(lambda p: np.sum(sde.sdeint(prob, Y0, TS, p, dt=DT, method=method,
                                               adjoint=adjoint, brownian=bp)))(P)
    np.testing.assert_allclose(ds.grad(f)(P, dW), want, rtol=1e-12)


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(ts=np.array([0.0, 0.5, 0.4]), dW=np.zeros((2, 3, 1))), ValueError, "ts must be"),
    (dict(ts=GRID, dW=np.zeros((3, 3, 1))), ValueError, r"dW must have shape \(len\(ts\) - 1"),
    (dict(ts=GRID, dW=np.zeros(GRID.size - 1)), ValueError, "dW must have shape"),
    (dict(ts=GRID, dW=np.zeros((GRID.size - 1, 3, 1), int)), TypeError, "dW must be a float"),
    (dict(ts=GRID, dW=[[0.0]]), TypeError, "dW must be a float array, got list"),
    (dict(ts=GRID, dW=np.full((GRID.size - 1, 3, 1), np.nan)), ValueError, "dW has non-finite"),
    (dict(ts=GRID, dW=np.zeros((GRID.size - 1, 3, 1)), levy_area=np.zeros((2, 3, 1))),
     ValueError, "levy_area must have shape"),
])
def test_bad_input_names_the_argument(kwargs, error, match):
    with pytest.raises(error, match=match):
        sde.BrownianIncrements(**kwargs)


def test_a_traced_grid_is_refused():
    with pytest.raises(TypeError, match="ts is not differentiable"):
        ds.grad(lambda t: np.sum(sde.BrownianIncrements(t, np.zeros((2, 1, 1))).increment(
            0.0, 1.0)))(np.array([0.0, 0.5, 1.0]))


def test_an_off_grid_step_is_refused():
    bm = sde.BrownianIncrements(GRID, np.ones((GRID.size - 1, 3, 2)))
    with pytest.raises(ValueError, match="not a point of the grid"):
        sde.sdeint(PROBLEMS["gbm ito"], Y0, TS, P, dt=DT / 3, brownian=bm)
    np.testing.assert_array_equal(bm.increment(0.3, 0.1), np.full((3, 2), -2.0))


def test_without_levy_area_the_sra1_solver_is_refused():
    bm = sde.BrownianIncrements(GRID, np.zeros((GRID.size - 1, 3, 2)))
    with pytest.raises(ValueError, match="Lévy area"):
        sde.sdeint(problems.additive_ou(), Y0, TS, (1.5, 0.3, np.eye(2)), dt=DT, brownian=bm,
                   method="sra1")


@pytest.mark.kernels
def test_under_jit_fresh_increments_run_one_compiled_program():
    prob = PROBLEMS["coupled"]
    rng = np.random.default_rng(3)
    dws = [rng.standard_normal((GRID.size - 1, 3, 2)) * np.sqrt(DT) for _ in range(4)]

    def loss(p, dW):
        ys = sde.sdeint(prob, Y0, TS, p, dt=DT, method="euler",
                        brownian=sde.BrownianIncrements(GRID, dW))
        return np.sum(ys ** 2)

    jvg, vg = ds.jit(ds.value_and_grad(loss, argnums=(0, 1))), ds.value_and_grad(
        loss, argnums=(0, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no eager fallback, no re-trace warning
        for dW in dws:
            (v1, g1), (v2, g2) = jvg(P, dW), vg(P, dW)
            np.testing.assert_allclose(v1, v2, rtol=1e-12)
            for a, b in zip(g1, g2):
                np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)
    stats = jvg.stats()
    assert stats["specializations"] == 1 and stats["eager"] == 0, stats
    bad = dws[0].copy()
    bad[2, 1, 0] = np.inf  # the finiteness check is a guard: it raises at a later call
    with pytest.raises(ValueError, match="dW has non-finite"):
        jvg(P, bad)
