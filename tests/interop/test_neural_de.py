"""A torch network inside diffsci's differential-equation solvers (from_torch).

The network is the right-hand side of diffsci.scipy.integrate.odeint and the drift of an
sde.SDE; diffsci differentiates the solves (continuous adjoint, checkpointed backprop) with
the network's VJPs run by torch.  Checked against finite differences (check_grads) and
against the same solver written in torch and differentiated by torch.autograd.
"""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import diffsci as ds  # noqa: E402
import sde  # noqa: E402
from diffsci.interop import from_torch  # noqa: E402
from diffsci.scipy.integrate import odeint  # noqa: E402
from diffsci.testing import check_grads  # noqa: E402

TS = np.array([0.0, 0.3, 0.7, 1.0])
Y0 = np.array([1.0, -0.5])
STEP = 0.05


def _net():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(2, 8), torch.nn.Tanh(),
                               torch.nn.Linear(8, 2)).double()


def _ode_loss(net, p, y0, gradient, method="rk4", **kw):
    f = from_torch(net)
    ys = odeint(lambda y, t, p: f(p, y), y0, TS, p, method=method, gradient=gradient, **kw)
    return np.sum(ys[-1] ** 2) + np.sum(ys[1] * np.array([1.0, 2.0]))


def _torch_rk4_loss(net, y0):
    """odeint's rk4 written in torch: ceil(Δt/step) equal classical RK4 steps per interval
    (the step count with odeint's 1e-9 slack: 0.4 / 0.05 is 8.000000000000002)."""
    y, out = y0, [y0]
    for t0, t1 in zip(TS[:-1], TS[1:]):
        n = max(1, math.ceil((t1 - t0) / STEP - 1e-9))
        h = (t1 - t0) / n
        for _ in range(n):
            k1 = net(y)
            k2 = net(y + k1 * (h / 2))
            k3 = net(y + k2 * (h / 2))
            k4 = net(y + k3 * h)
            y = y + (k1 + 2 * k2 + 2 * k3 + k4) * (h / 6)
        out.append(y)
    return torch.sum(out[-1] ** 2) + torch.sum(out[1] * torch.tensor([1.0, 2.0], dtype=y.dtype))


def _torch_grads(net, y0_np, loss_fn):
    y0 = torch.tensor(y0_np, requires_grad=True)
    net.zero_grad()
    loss = loss_fn(net, y0)
    loss.backward()
    return loss.item(), {n: q.grad.numpy().copy() for n, q in net.named_parameters()}, \
        y0.grad.numpy().copy()


def test_torch_network_as_odeint_rhs():
    net = _net()
    p = from_torch(net).params
    value, gp_ref, gy_ref = _torch_grads(net, Y0, _torch_rk4_loss)
    # backprop through diffsci's rk4 = torch's backprop through the same steps, to 1e-12
    v, (gp, gy) = ds.value_and_grad(lambda p, y: _ode_loss(net, p, y, "backprop",
                                                           step=STEP), argnums=(0, 1))(p, Y0)
    assert abs(v - value) < 1e-12
    for n in gp:
        np.testing.assert_allclose(gp[n], gp_ref[n], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gy, gy_ref, rtol=1e-12, atol=1e-12)
    # the continuous adjoint (rk4 at h = 0.02 forward and backward) agrees with the discrete
    # gradient up to the solvers' O(h⁴) errors: 1.2e-9 measured, checked at 1e-7
    ga, gya = ds.grad(lambda p, y: _ode_loss(net, p, y, "adjoint", step=0.02),
                      argnums=(0, 1))(p, Y0)
    for n in ga:
        np.testing.assert_allclose(ga[n], gp_ref[n], rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(gya, gy_ref, rtol=1e-7, atol=1e-8)
    # and finite differences of the adjoint-differentiated solve (fixed steps, so the
    # differences are smooth): the adjoint's VJP through the adjoint identity
    check_grads(lambda p, y: _ode_loss(net, p, y, "adjoint", step=0.02), (p, Y0),
                modes=("rev",))


def _sde_problem(net):
    f = from_torch(net)

    def drift(t, y, p):
        return f(p["net"], y)

    def diffusion(t, y, p):
        return p["sigma"] * y

    return sde.SDE(drift, diffusion, noise="diagonal", calculus="ito"), f.params


def test_torch_network_as_sde_drift():
    net = _net()
    prob, netp = _sde_problem(net)
    grid = np.linspace(0.0, 1.0, 21)
    y0 = np.array([[1.0, -0.5], [0.3, 0.8], [-0.4, 0.2]])
    bm = sde.BrownianPath(grid, y0.shape, seed=3)
    ts = grid[::5]
    p = {"net": netp, "sigma": np.array(0.3)}
    w = np.linspace(0.5, 1.5, 6).reshape(3, 2)

    def loss(p, y0, adjoint):
        ys = sde.sdeint(prob, y0, ts, p, method="euler", dt=grid[1], brownian=bm,
                        adjoint=adjoint)
        return np.sum(ys[-1] ** 2 * w) + np.sum(ys[2])

    # Euler–Maruyama in torch on the same Brownian increments
    dws = [torch.tensor(bm.increment(a, b)) for a, b in zip(grid[:-1], grid[1:])]
    sigma = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)

    def torch_loss(net, y):
        out = [y]
        for k, dw in enumerate(dws):
            y = y + net(y) * (grid[k + 1] - grid[k]) + sigma * y * dw
            out.append(y)
        return torch.sum(out[-1] ** 2 * torch.tensor(w)) + torch.sum(out[10])

    value, gp_ref, gy_ref = _torch_grads(net, y0, torch_loss)
    for adjoint in ("backprop", "checkpoint"):
        v, (gp, gy) = ds.value_and_grad(lambda p, y: loss(p, y, adjoint), argnums=(0, 1))(p, y0)
        assert abs(v - value) < 1e-12 * max(1.0, abs(value))
        for n in gp_ref:
            np.testing.assert_allclose(gp["net"][n], gp_ref[n], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gp["sigma"], sigma.grad.numpy(), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(gy, gy_ref, rtol=1e-12, atol=1e-12)
    check_grads(lambda p, y: loss(p, y, "checkpoint"), (p, y0), modes=("rev",))
