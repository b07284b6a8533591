"""diffsci.optim (SGD, Adam, AdamW, minimize) and the diffsci.fit training loop.

First steps against hand-computed updates, convergence on a quadratic and on Rosenbrock,
pytree structure and dtype kept, hyper-parameter validation, minimize with pytree parameters and
bounds, and fit's history, callback, progress bar and non-finite errors.
"""

import dataclasses

import numpy as np
import pytest

import diffsci as ds
import diffsci.optim as optim
from diffsci._fit import fit


@dataclasses.dataclass(frozen=True)
class Line:
    slope: object
    offset: object
    name: str = dataclasses.field(default="line", metadata={"static": True})


def quadratic(p):
    """Minimum 0 at a = [1, -2], b = 0.5, line = (3, -1)."""
    return (np.sum((p["a"] - np.array([1.0, -2.0])) ** 2) + 2.0 * (p["b"] - 0.5) ** 2
            + (p["line"].slope - 3.0) ** 2 + (p["line"].offset + 1.0) ** 2)


def quad_start(dtype=np.float64):
    return {"a": np.zeros(2, dtype), "b": 0.0, "line": Line(np.asarray(0.0, dtype), 0.0)}


def rosenbrock(p):
    x, y = p
    return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2


# ---------------------------------------------------------------- first steps by hand
def test_sgd_steps_match_hand_computation():
    p, g = np.array([1.0, -2.0]), np.array([0.5, 3.0])
    opt = optim.SGD(0.1)
    new, state = opt.update(g, opt.init(p), p)
    np.testing.assert_array_equal(new, p - 0.1 * g)
    assert state.step == 1 and state.velocity is None

    opt = optim.SGD(0.1, momentum=0.9, weight_decay=0.01)
    s = opt.init(p)
    p1, s = opt.update(g, s, p)
    g0 = g + 0.01 * p
    np.testing.assert_array_equal(p1, p - 0.1 * g0)  # v1 = g
    p2, s = opt.update(g, s, p1)
    v2 = 0.9 * g0 + (g + 0.01 * p1)
    np.testing.assert_allclose(p2, p1 - 0.1 * v2, rtol=1e-15)

    opt = optim.SGD(0.1, momentum=0.9, nesterov=True)
    p1, _ = opt.update(g, opt.init(p), p)
    np.testing.assert_allclose(p1, p - 0.1 * (g + 0.9 * g), rtol=1e-15)


def test_adam_first_two_steps_match_kingma_ba_algorithm_1():
    p = np.array([1.0, -2.0, 0.5])
    g1 = np.array([3.0, -0.5, 1e-3])
    g2 = np.array([-1.0, 2.0, 0.0])
    opt = optim.Adam(0.1)
    p1, s = opt.update(g1, opt.init(p), p)
    # step 1: m̂ = g, v̂ = g², so each entry moves by lr g / (|g| + eps)
    np.testing.assert_allclose(p1, p - 0.1 * g1 / (np.abs(g1) + 1e-8), rtol=1e-15)
    p2, s = opt.update(g2, s, p1)
    m = 0.9 * (0.1 * g1) + 0.1 * g2
    v = 0.999 * (0.001 * g1**2) + 0.001 * g2**2
    mhat, vhat = m / (1 - 0.9**2), v / (1 - 0.999**2)
    np.testing.assert_allclose(p2, p1 - 0.1 * mhat / (np.sqrt(vhat) + 1e-8), rtol=1e-14)
    assert s.step == 2
    np.testing.assert_allclose(s.mu, m, rtol=1e-15)
    np.testing.assert_allclose(s.nu, v, rtol=1e-15)


def test_adam_weight_decay_l2_versus_decoupled():
    p, g = np.array([2.0, -1.0]), np.array([0.3, 0.7])
    l2 = optim.Adam(0.1, weight_decay=0.5)
    p1, _ = l2.update(g, l2.init(p), p)
    ge = g + 0.5 * p
    np.testing.assert_allclose(p1, p - 0.1 * ge / (np.abs(ge) + 1e-8), rtol=1e-15)
    adamw = optim.AdamW(0.1, weight_decay=0.5)
    assert adamw.decoupled
    p1, _ = adamw.update(g, adamw.init(p), p)
    np.testing.assert_allclose(p1, p * (1 - 0.1 * 0.5) - 0.1 * g / (np.abs(g) + 1e-8),
                               rtol=1e-15)


def test_learning_rate_schedule_is_called_with_the_step():
    seen = []

    def schedule(step):
        seen.append(step)
        return 0.1 / (1 + step)

    opt = optim.SGD(schedule)
    p, s = 1.0, opt.init(1.0)
    for _ in range(3):
        p, s = opt.update(1.0, s, p)
    assert seen == [0, 1, 2]
    assert p == pytest.approx(1.0 - 0.1 - 0.05 - 0.1 / 3)
    with pytest.raises(ValueError, match="schedule returned -1.0 at step 0"):
        optim.Adam(lambda step: -1.0).update(1.0, optim.Adam().init(1.0), 1.0)


# ---------------------------------------------------------------- convergence
@pytest.mark.parametrize("opt", [
    optim.SGD(0.2),
    optim.SGD(0.05, momentum=0.9),
    optim.SGD(0.05, momentum=0.9, nesterov=True),
    optim.Adam(0.05),
    optim.AdamW(0.05, weight_decay=1e-4),
], ids=["sgd", "momentum", "nesterov", "adam", "adamw"])
def test_optimisers_converge_on_a_pytree_quadratic(opt):
    p, s = quad_start(), None
    s = opt.init(p)
    vg = ds.grad(quadratic)
    for _ in range(400):
        p, s = opt.update(vg(p), s, p)
    assert quadratic(p) < 1e-6
    assert isinstance(p["line"], Line) and p["line"].name == "line"
    np.testing.assert_allclose(p["a"], [1.0, -2.0], atol=1e-3)


def test_adam_solves_rosenbrock():
    opt = optim.Adam(0.02)
    p = (np.float64(-1.2), np.float64(1.0))
    s = opt.init(p)
    g = ds.grad(rosenbrock)
    for _ in range(3000):
        p, s = opt.update(g(p), s, p)
    # Adam at a constant lr hovers within ~lr of the minimum of the curved valley: this checks
    # convergence of the optimiser, not the accuracy of a gradient.
    np.testing.assert_allclose(p, [1.0, 1.0], atol=1e-2)


# ---------------------------------------------------------------- structure and dtype
@pytest.mark.parametrize("opt", [optim.SGD(0.1, momentum=0.5), optim.Adam(0.1)],
                         ids=["sgd", "adam"])
def test_structure_and_float32_are_kept(opt):
    p = quad_start(np.float32)
    s = opt.init(p)
    g = ds.grad(quadratic)(p)
    assert g["a"].dtype == np.float32
    new, s = opt.update(g, s, p)
    assert ds.tree_flatten(new)[1] == ds.tree_flatten(p)[1]
    assert new["a"].dtype == np.float32 and new["line"].slope.dtype == np.float32
    assert isinstance(new["line"], Line)
    # the state is a pytree: it flattens, and its moment trees have params' structure
    leaves, _ = ds.tree_flatten(s)
    assert all(np.all(np.isfinite(leaf)) for leaf in leaves)


def test_update_rejects_grads_of_another_structure():
    opt = optim.Adam()
    p = {"w": np.zeros(2), "b": 0.0}
    with pytest.raises(ValueError, match="grads have structure"):
        opt.update({"w": np.zeros(2)}, opt.init(p), p)
    with pytest.raises(ValueError, match="state.mu has structure"):
        opt.update(p, opt.init({"w": np.zeros(2)}), p)


def test_an_optimiser_step_is_differentiable():
    # d/dp0 of loss(p0 - lr * grad(loss)(p0)) for loss = p²: d/dp0 [(1 - 2 lr)² p0²]
    opt = optim.SGD(0.1)

    def unrolled(p0):
        p1, _ = opt.update(ds.grad(lambda p: p * p)(p0), opt.init(p0), p0)
        return p1 * p1

    assert ds.grad(unrolled)(1.5) == pytest.approx(2 * 0.8**2 * 1.5)


# ---------------------------------------------------------------- validation
@pytest.mark.parametrize("make,match", [
    (lambda: optim.SGD(0.0), r"SGD: lr must be a positive finite number, got 0.0"),
    (lambda: optim.SGD(-1.0), r"got -1.0"),
    (lambda: optim.SGD(float("nan")), r"lr must be a positive finite number, got nan"),
    (lambda: optim.SGD(0.1, momentum=1.0), r"SGD: momentum must be in \[0.0, 1.0\), got 1.0"),
    (lambda: optim.SGD(0.1, nesterov=True), r"nesterov=True requires momentum > 0"),
    (lambda: optim.SGD(0.1, weight_decay=-1e-3), r"weight_decay must be in \[0.0, inf\)"),
    (lambda: optim.Adam(b1=1.0), r"Adam: b1 must be in \[0.0, 1.0\), got 1.0"),
    (lambda: optim.Adam(b2=-0.1), r"Adam: b2 must be in \[0.0, 1.0\), got -0.1"),
    (lambda: optim.Adam(eps=0.0), r"Adam: eps must be in \(0.0, inf\), got 0.0"),
])
def test_hyper_parameters_are_validated(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_hyper_parameter_types_are_validated():
    with pytest.raises(TypeError, match="lr must be a positive number or a schedule"):
        optim.Adam("0.1")
    with pytest.raises(TypeError, match="momentum must be a real number, got str"):
        optim.SGD(0.1, momentum="0.9")


# ---------------------------------------------------------------- minimize
def test_minimize_recovers_the_minimum_with_pytree_parameters():
    x0 = quad_start(np.float32)
    res = optim.minimize(quadratic, x0)
    assert res.success, res.message
    assert res.fun < 1e-10
    assert isinstance(res.x["line"], Line) and res.x["line"].name == "line"
    assert res.x["a"].dtype == np.float32 and res.x["a"].shape == (2,)
    np.testing.assert_allclose(res.x["a"], [1.0, -2.0], atol=1e-5)
    assert float(res.x["b"]) == pytest.approx(0.5, abs=1e-6)
    assert res.x_flat.dtype == np.float64 and res.x_flat.shape == (5,)
    np.testing.assert_allclose(res.x_flat, [1.0, -2.0, 0.5, 3.0, -1.0], atol=1e-5)
    assert isinstance(res.jac["line"], Line) and res.jac_flat.shape == (5,)


def test_minimize_rosenbrock_with_args_and_methods():
    def f(p, scale):
        return scale * rosenbrock((p["x"], p["y"]))

    for method in ["L-BFGS-B", "BFGS", "CG"]:
        res = optim.minimize(f, {"x": -1.2, "y": 1.0}, method=method, args=(2.0,),
                             options={"maxiter": 2000})
        assert res.x["x"] == pytest.approx(1.0, abs=1e-4), method
        assert res.x["y"] == pytest.approx(1.0, abs=1e-4), method
    res = optim.minimize(f, {"x": -1.2, "y": 1.0}, method="Nelder-Mead", args=(1.0,),
                         options={"xatol": 1e-8, "fatol": 1e-12, "maxiter": 5000})
    assert res.x["x"] == pytest.approx(1.0, abs=1e-4)


def test_minimize_bounds_as_pytrees_or_flat_pairs():
    x0 = {"a": np.zeros(2), "b": 0.0}

    def f(p):
        return np.sum((p["a"] - np.array([1.0, -2.0])) ** 2) + (p["b"] - 0.5) ** 2

    res = optim.minimize(f, x0, bounds=({"a": np.array([0.0, -1.0]), "b": 0.0},
                                        {"a": 0.5, "b": np.inf}))
    np.testing.assert_allclose(res.x["a"], [0.5, -1.0])
    assert res.x["b"] == pytest.approx(0.5)
    res = optim.minimize(f, x0, bounds=[(0, 0.5), (-1, None), (None, 0.25)])
    np.testing.assert_allclose(res.x_flat, [0.5, -1.0, 0.25], atol=1e-8)
    with pytest.raises(ValueError, match="bounds must be a sequence of 3"):
        optim.minimize(f, x0, bounds=[(0, 1)])
    with pytest.raises(ValueError, match="ambiguous"):
        optim.minimize(lambda p: p[0] ** 2 + p[1] ** 2, (1.0, 1.0), bounds=((0, 1), (0, 1)))


def test_minimize_callback_sees_pytrees():
    seen = []
    optim.minimize(quadratic, quad_start(), callback=lambda x: seen.append(x))
    assert seen and all(isinstance(x["line"], Line) for x in seen)


def test_minimize_rejects_a_non_finite_start_naming_the_leaf():
    def f(p):
        return np.sum(np.sqrt(p["scale"])) + p["w"] ** 2

    with np.errstate(divide="ignore"):
        with pytest.raises(FloatingPointError, match=r"not finite at x0\['scale'\]"):
            optim.minimize(f, {"w": 1.0, "scale": np.array([1.0, 0.0])})
    with pytest.raises(FloatingPointError, match=r"fun\(x0\) = inf"):
        with np.errstate(over="ignore"):
            optim.minimize(lambda p: np.exp(p["w"]), {"w": 1000.0})
    with pytest.raises(TypeError, match=r"x0\['z'\] has dtype complex128"):
        optim.minimize(lambda p: np.abs(p["z"]) ** 2, {"z": 1j})


# ---------------------------------------------------------------- fit
def test_fit_converges_and_returns_history():
    params, hist = fit(quadratic, quad_start(), optim.Adam(0.05), steps=400, progress=False)
    assert quadratic(params) < 1e-6
    assert set(hist) == {"step", "loss", "time"}
    assert hist["loss"].shape == (400,) and hist["loss"].dtype == np.float64
    np.testing.assert_array_equal(hist["step"], np.arange(400))
    assert hist["loss"][0] == pytest.approx(quadratic(quad_start()))
    assert np.all(np.diff(hist["time"]) >= 0)
    assert isinstance(params["line"], Line)


def test_fit_default_optimizer_args_and_aux():
    def loss(p, target):
        r = p - target
        return np.sum(r**2), {"max_residual": np.max(np.abs(r)).item()}

    params, hist = fit(loss, np.zeros(3), steps=20, progress=False,
                       args=(np.ones(3),), has_aux=True)
    assert len(hist["aux"]) == 20 and hist["aux"][0] == {"max_residual": 1.0}
    np.testing.assert_allclose(params, 0.2, rtol=0.05)  # Adam(1e-2): ~lr per step


def test_fit_callback_stops_early_with_the_params_it_saw():
    seen = []

    def callback(step, params, loss):
        seen.append((step, loss))
        return loss < 1.0

    params, hist = fit(quadratic, quad_start(), optim.Adam(0.1), steps=1000, progress=False,
                       callback=callback)
    n = len(hist["loss"])
    assert n < 1000 and hist["loss"][-1] < 1.0 <= hist["loss"][-2]
    assert [s for s, _ in seen] == list(range(n))
    assert quadratic(params) == pytest.approx(hist["loss"][-1])


def test_fit_stops_on_a_non_finite_gradient_naming_the_leaf():
    def loss(p):
        return np.sum(np.sqrt(p["dense"].slope)) + p["dense"].offset ** 2

    params = {"dense": Line(np.array([1.0, 0.0]), 1.0)}
    with np.errstate(divide="ignore"):
        with pytest.raises(FloatingPointError) as err:
            fit(loss, params, optim.SGD(0.1), steps=5, progress=False)
    msg = str(err.value)
    assert "params['dense'].slope" in msg and "at step 0" in msg and "inf" in msg


def test_fit_stops_on_a_non_finite_loss_at_the_step_it_happens():
    # log(p) with p driven below 0 by a large step: finite at step 0, NaN later
    def loss(p):
        return np.log(p) + 3.0 * p

    with np.errstate(invalid="ignore"):
        with pytest.raises(FloatingPointError, match=r"the loss is nan at step 1 \(last "
                                                     r"finite loss: .* at step 0\)"):
            fit(loss, 1.0, optim.SGD(1.0), steps=5, progress=False)


def test_fit_progress_bar_writes_the_loss_to_stderr(capsys):
    fit(quadratic, quad_start(), optim.Adam(0.05), steps=5, progress=True)
    out = capsys.readouterr()
    assert "loss=" in out.err and "5/5" in out.err and out.out == ""
    fit(quadratic, quad_start(), optim.Adam(0.05), steps=5, progress=False)
    out = capsys.readouterr()
    assert out.err == "" and out.out == ""


def test_fit_validates_its_arguments():
    with pytest.raises(TypeError, match="optimizer must be a diffsci.optim optimiser"):
        fit(quadratic, quad_start(), optimizer="adam", progress=False)
    with pytest.raises(ValueError, match="steps must be >= 0, got -1"):
        fit(quadratic, quad_start(), steps=-1, progress=False)
    with pytest.raises(TypeError, match="steps must be an int"):
        fit(quadratic, quad_start(), steps=10.0, progress=False)
    params, hist = fit(quadratic, quad_start(), steps=0, progress=False)
    assert hist["loss"].shape == (0,)
