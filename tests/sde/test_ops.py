"""The model fast paths: hand-written adjoint kernels vs finite differences, vs the generic
solver, and the numba.cuda kernels (CUDA simulator on a CPU machine) vs the CPU kernels."""

import numpy as np
import pytest

import diffsci as ds
import sde
from diffsci.testing import check_grads
from sde import _ops

pytestmark = pytest.mark.kernels  # Numba kernels: the Brownian tree's bridges, the fast paths

RNG = np.random.default_rng(0)
DW = RNG.standard_normal((5, 40)) * 0.1
Y0 = RNG.standard_normal(5)


def test_ou_grads():
    f = lambda y0, th, mu, s: np.sin(_ops.ou_paths(y0, th, mu, s, 0.01, DW))  # noqa: E731
    check_grads(f, (Y0, 2.0, 1.0, 0.3), modes=("rev",))


def test_gbm_grads():
    t = np.linspace(0, 1, 40)
    W = np.cumsum(DW, axis=1)
    f = lambda y0, mu, s: np.sin(_ops.gbm_paths(y0, mu, s, t, W))  # noqa: E731
    check_grads(f, (1.0 + np.abs(Y0), 0.5, 0.3), modes=("rev",))


def test_ou_matches_sdeint_euler():
    ts = np.linspace(0, 0.4, 41)
    bm = sde.BrownianPath(ts, (5, 1), seed=2)
    dW = np.stack([bm.increment(a, b)[:, 0] for a, b in zip(ts[:-1], ts[1:])], axis=1)
    prob = sde.SDE(lambda t, y, p: p[0] * (p[1] - y), lambda t, y, p: p[2] + 0 * y)
    p = np.array([2.0, 1.0, 0.3])
    ref = sde.sdeint(prob, Y0[:, None], ts, p, method="euler", dt=0.01, brownian=bm)[:, :, 0].T
    np.testing.assert_allclose(_ops.ou_paths(Y0, *p, 0.01, dW), ref, rtol=1e-12, atol=1e-14)
    g1 = ds.grad(lambda p: np.sum(_ops.ou_paths(Y0, p[0], p[1], p[2], 0.01, dW) ** 2))(p)
    g2 = ds.grad(lambda p: np.sum(sde.sdeint(prob, Y0[:, None], ts, p, dt=0.01,
                                             brownian=bm) ** 2))(p)
    np.testing.assert_allclose(g1, g2, rtol=1e-10)


def test_forward_mode_is_refused_not_wrong():
    with pytest.raises(NotImplementedError, match="first order only"):
        ds.jvp(lambda th: _ops.ou_paths(Y0, th, 1.0, 0.3, 0.01, DW), (2.0,), (1.0,))


def test_bad_input():
    with pytest.raises(ValueError, match=r"y0 must have shape \(5,\)"):
        _ops.ou_paths(np.zeros(3), 2.0, 1.0, 0.3, 0.01, DW)
    with pytest.raises(ValueError, match="dt must be > 0"):
        _ops.ou_paths(Y0, 2.0, 1.0, 0.3, -0.01, DW)


def test_cuda_kernels_match_cpu():
    from sde._gpu_checks import CHECKS

    rng = np.random.default_rng(1)
    for check in CHECKS:
        args = check.make_inputs(rng, 8)
        np.testing.assert_allclose(np.asarray(check.cuda_fn(*args)), check.cpu_fn(*args),
                                   rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(check.cpu_fn(*args), check.reference_fn(*args), rtol=1e-12,
                                   atol=1e-13)


CIR_P = (2.0, 0.5, 0.3)


def test_cir_grads():
    f = lambda y0, k, th, s: np.sin(_ops.cir_paths(y0, k, th, s, 0.01, DW))  # noqa: E731
    check_grads(f, (0.5 + 0.1 * np.abs(Y0), *CIR_P), modes=("rev",))


@pytest.mark.filterwarnings("ignore:divide by zero")  # sdeint's √ rule at 0, times a zero cotangent
def test_cir_matches_sdeint_euler_with_truncation_active():
    """Near zero (θ small, σ large) paths go negative and the truncation acts; the kernel and
    its adjoint still match sdeint's Euler on the same path, values and gradients."""
    ts = np.linspace(0, 0.4, 41)
    bm = sde.BrownianPath(ts, (5, 1), seed=3)
    dW = np.stack([bm.increment(a, b)[:, 0] for a, b in zip(ts[:-1], ts[1:])], axis=1)
    prob = sde.SDE(lambda t, y, p: p[0] * (p[1] - np.maximum(y, 0.0)),
                   lambda t, y, p: p[2] * np.sqrt(np.maximum(y, 0.0)))
    p = np.array([1.0, 0.01, 0.8])
    y0 = np.full(5, 0.02)
    kern = _ops.cir_paths(y0, *p, 0.01, dW)
    assert kern.min() < 0  # truncation exercised
    ref = sde.sdeint(prob, y0[:, None], ts, p, method="euler", dt=0.01, brownian=bm)[:, :, 0].T
    np.testing.assert_allclose(kern, ref, rtol=1e-12, atol=1e-14)
    g1 = ds.grad(lambda p: np.sum(_ops.cir_paths(y0, p[0], p[1], p[2], 0.01, dW) ** 2))(p)
    g2 = ds.grad(lambda p: np.sum(sde.sdeint(prob, y0[:, None], ts, p, dt=0.01,
                                             brownian=bm) ** 2))(p)
    np.testing.assert_allclose(g1, g2, rtol=1e-10)


HESTON = dict(mu=0.02, kappa=2.0, theta=0.3, xi=0.4, rho=-0.6)


def test_heston_grads():
    dZ = np.random.default_rng(5).standard_normal(DW.shape) * 0.1

    def f(s0, v0, mu, kappa, theta, xi, rho):
        S, v = _ops.heston_paths(s0, v0, mu, kappa, theta, xi, rho, 0.01, DW, dZ)
        return np.sin(S) + v**2

    check_grads(f, (1.0 + 0.1 * np.abs(Y0), 0.3 + 0.05 * np.abs(Y0), *HESTON.values()),
                modes=("rev",))


def test_heston_matches_sdeint_general_noise():
    """Heston as a 2-D general-noise SDE in (log S, v) with Euler: same values, same gradient
    (ρ̄ included) as the kernel and its adjoint."""
    ts = np.linspace(0, 0.4, 41)
    bm = sde.BrownianPath(ts, (5, 2), seed=6)
    inc = np.stack([bm.increment(a, b) for a, b in zip(ts[:-1], ts[1:])], axis=2)  # (5, 2, n)

    def drift(t, y, p):
        vp = np.maximum(y[:, 1:], 0.0)
        return np.concatenate([p[0] - 0.5 * vp, p[1] * (p[2] - vp)], axis=1)

    def diffusion(t, y, p):
        sq = np.sqrt(np.maximum(y[:, 1:], 0.0))
        row0 = np.concatenate([sq, 0.0 * sq], axis=1)
        row1 = np.concatenate([p[3] * p[4] * sq, p[3] * np.sqrt(1 - p[4] ** 2) * sq], axis=1)
        return np.stack([row0, row1], axis=1)

    prob = sde.SDE(drift, diffusion, noise="general")
    p = np.array(list(HESTON.values()))
    s0, v0 = np.full(5, 1.0), np.full(5, 0.3)
    y0 = np.stack([np.log(s0), v0], axis=1)
    S, v = _ops.heston_paths(s0, v0, *p, 0.01, inc[:, 0], inc[:, 1])
    ref = sde.sdeint(prob, y0, ts, p, method="euler", dt=0.01, brownian=bm)
    np.testing.assert_allclose(np.log(S), ref[:, :, 0].T, rtol=1e-11, atol=1e-13)
    np.testing.assert_allclose(v, ref[:, :, 1].T, rtol=1e-11, atol=1e-13)

    def k_loss(p):
        S, v = _ops.heston_paths(s0, v0, *(p[i] for i in range(5)), 0.01, inc[:, 0], inc[:, 1])
        return np.sum(S[:, -1]) + np.sum(v**2)

    def s_loss(p):
        ys = sde.sdeint(prob, y0, ts, p, dt=0.01, brownian=bm)
        return np.sum(np.exp(ys[-1, :, 0])) + np.sum(ys[:, :, 1] ** 2)

    np.testing.assert_allclose(ds.grad(k_loss)(p), ds.grad(s_loss)(p), rtol=1e-9)


def test_cir_heston_bad_input():
    with pytest.raises(ValueError, match=r"cir_paths: y0 must have shape \(5,\)"):
        _ops.cir_paths(np.zeros(3), *CIR_P, 0.01, DW)
    with pytest.raises(ValueError, match="cir_paths: kappa must be a real scalar"):
        _ops.cir_paths(Y0, np.ones(2), 0.5, 0.3, 0.01, DW)
    with pytest.raises(ValueError, match=r"heston_paths: rho must satisfy \|rho\| < 1"):
        _ops.heston_paths(np.ones(5), np.ones(5), 0.0, 1.0, 0.1, 0.2, 1.0, 0.01, DW, DW)
    with pytest.raises(ValueError, match="heston_paths: s0 must be > 0"):
        _ops.heston_paths(np.zeros(5), np.ones(5), 0.0, 1.0, 0.1, 0.2, 0.1, 0.01, DW, DW)
    with pytest.raises(ValueError, match=r"heston_paths: dZ must have shape \(5, 40\)"):
        _ops.heston_paths(np.ones(5), np.ones(5), 0.0, 1.0, 0.1, 0.2, 0.1, 0.01, DW, DW[:, :3])


LANGEVIN = dict(a=4.0, b=-4.0, gamma=0.5, sigma=0.7)  # double well U = (x² − 1)² (+ const)


@pytest.mark.parametrize("a, b", [(0.0, 2.0), (4.0, -4.0)], ids=["harmonic", "double_well"])
def test_langevin_grads(a, b):
    def f(x0, v0, a, b, gamma, sigma):
        x, v = _ops.langevin_paths(x0, v0, a, b, gamma, sigma, 0.01, DW)
        return np.sin(x) + v**2

    check_grads(f, (Y0, 0.5 * Y0[::-1], a, b, 0.5, 0.7), modes=("rev",))


def _langevin_sde():
    def drift(t, y, p):
        x, v = y[:, :1], y[:, 1:]
        return np.concatenate([v, -(p[0] * x**3 + p[1] * x) - p[2] * v], axis=1)

    def diffusion(t, y, p):
        return np.concatenate([0.0 * y[:, :1], p[3] + 0.0 * y[:, 1:]], axis=1)

    return sde.SDE(drift, diffusion, noise="diagonal")


def test_langevin_matches_sdeint_euler():
    """Langevin as a 2-D diagonal-noise SDE in (x, v) (noise on v only) with Euler on the same
    Brownian path: same values and same gradient (all four parameters and both initial
    states) as the kernel and its adjoint."""
    ts = np.linspace(0, 0.4, 41)
    bm = sde.BrownianPath(ts, (5, 2), seed=7)
    dW = np.stack([bm.increment(a, b)[:, 1] for a, b in zip(ts[:-1], ts[1:])], axis=1)
    prob = _langevin_sde()
    p = np.array(list(LANGEVIN.values()))
    x0, v0 = Y0, 0.3 * np.ones(5)
    x, v = _ops.langevin_paths(x0, v0, *p, 0.01, dW)
    ref = sde.sdeint(prob, np.stack([x0, v0], axis=1), ts, p, method="euler", dt=0.01,
                     brownian=bm)
    np.testing.assert_allclose(x, ref[:, :, 0].T, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(v, ref[:, :, 1].T, rtol=1e-12, atol=1e-13)

    def k_loss(p, y0):
        x, v = _ops.langevin_paths(y0[:, 0], y0[:, 1], *(p[i] for i in range(4)), 0.01, dW)
        return np.sum(np.cos(x[:, -1])) + np.sum(v**2)

    def s_loss(p, y0):
        ys = sde.sdeint(prob, y0, ts, p, dt=0.01, brownian=bm)
        return np.sum(np.cos(ys[-1, :, 0])) + np.sum(ys[:, :, 1] ** 2)

    y0 = np.stack([x0, v0], axis=1)
    gk = ds.grad(k_loss, argnums=(0, 1))(p, y0)
    gs = ds.grad(s_loss, argnums=(0, 1))(p, y0)
    for u, w in zip(gk, gs):
        np.testing.assert_allclose(u, w, rtol=1e-9, atol=1e-12)


def test_langevin_nested_differentiation_refused():
    with pytest.raises(NotImplementedError, match="first order only"):
        ds.jvp(lambda g: _ops.langevin_paths(Y0, Y0, 0.0, 1.0, g, 0.3, 0.01, DW)[0], (0.5,),
               (1.0,))


def test_langevin_bad_input():
    with pytest.raises(ValueError, match=r"langevin_paths: v0 must have shape \(5,\)"):
        _ops.langevin_paths(Y0, np.zeros(3), 0.0, 1.0, 0.5, 0.3, 0.01, DW)
    with pytest.raises(ValueError, match="langevin_paths: gamma must be a real scalar"):
        _ops.langevin_paths(Y0, Y0, 0.0, 1.0, np.ones(2), 0.3, 0.01, DW)
    with pytest.raises(ValueError, match="langevin_paths: dt must be > 0"):
        _ops.langevin_paths(Y0, Y0, 0.0, 1.0, 0.5, 0.3, 0.0, DW)


def test_langevin_cuda_matches_cpu_through_the_api():
    """device="cuda" (the simulator on a CPU machine) gives the CPU kernel's paths, double well
    and harmonic, and the kernel is registered for benchmarks/gpu_check.py."""
    from sde._gpu_checks import CHECKS

    assert "langevin_euler" in {c.name for c in CHECKS}
    x0 = np.linspace(-1.5, 1.5, 5)
    for a, b in ((4.0, -4.0), (0.0, 2.0)):
        cpu = _ops.langevin_paths(x0, -x0, a, b, 0.5, 0.7, 0.01, DW)
        gpu = _ops.langevin_paths(x0, -x0, a, b, 0.5, 0.7, 0.01, DW, device="cuda")
        for u, w in zip(gpu, cpu):
            np.testing.assert_allclose(u, w, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="device"):
        _ops.langevin_paths(x0, x0, 4.0, -4.0, 0.5, 0.7, 0.01, DW, device="tpu")


def test_cuda_paths_refuse_traced_arguments_instead_of_a_zero_gradient():
    """device="cuda" runs the forward kernels only: a traced argument is refused (it got a
    silently zero gradient, the kernel's output being plain), naming device='cpu'; under
    diffsci.jit the refusal runs the function eagerly (its values stay right)."""
    x0 = np.linspace(0.5, 1.5, 5)
    from diffsci._jit import JitWarning

    dw = DW
    calls = {
        "ou_paths": lambda p: _ops.ou_paths(x0, p, 0.0, 0.3, 0.01, dw, device="cuda"),
        "gbm_paths": lambda p: _ops.gbm_paths(x0, p, 0.2, np.linspace(0.0, 1.0, dw.shape[1]),
                                              np.cumsum(dw, axis=1), device="cuda"),
        "cir_paths": lambda p: _ops.cir_paths(x0, p, 1.0, 0.3, 0.01, dw, device="cuda"),
        "heston_paths": lambda p: _ops.heston_paths(x0 * 100, x0 * 0.04, 0.01, p, 0.04, 0.3,
                                                    -0.5, 0.01, dw, np.ascontiguousarray(dw[::-1]),
                                                    device="cuda")[0],
        "langevin_paths": lambda p: _ops.langevin_paths(x0, -x0, p, -4.0, 0.5, 0.7, 0.01, dw,
                                                        device="cuda")[0],
    }
    for name, f in calls.items():
        assert np.all(np.isfinite(f(1.2)))  # plain values: the forward kernel runs
        with pytest.raises(TypeError, match=f"{name}: device='cuda' runs the forward kernel"):
            ds.grad(lambda p, f=f: np.sum(f(p)))(1.2)
        with pytest.warns(JitWarning, match="runs eagerly"):
            jf = ds.jit(lambda p, f=f: np.sum(f(p)))
            np.testing.assert_allclose(jf(1.2), np.sum(f(1.2)), rtol=1e-12)
        np.testing.assert_allclose(jf(0.7), np.sum(f(0.7)), rtol=1e-12)  # not frozen
