"""The model fast paths: hand-written adjoint kernels vs finite differences, vs the generic
solver, and the numba.cuda kernels (CUDA simulator on a CPU machine) vs the CPU kernels."""

import numpy as np
import pytest

import diffsci as ds
import sde
from diffsci.testing import check_grads
from sde import _ops

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
