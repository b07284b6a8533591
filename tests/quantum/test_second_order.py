"""Second derivatives by reverse over reverse (DERIVATIONS.md eq. H2) for every measurement.

Each function of the table is built from one measurement on the every-gate circuit; its Hessian
by reverse over reverse (``ds.hessian(mode="rev")``) equals forward over reverse and the central
differences of its gradient; the gradient itself equals the central differences of the dense
reference simulation.
"""

import numpy as np
import pytest

import diffsci as ds
from diffsci.testing import check_grads
from quantum import Circuit, X, Y, Z, expval, probs, state, var
from tests.quantum import problems as P
from tests.quantum.test_ops import CIRCUIT, H2, THETA, H, dense_state

pytestmark = pytest.mark.kernels

C3 = Circuit(4).ry(0).rx(1).cnot(0, 1).crz(1, 2).ising_yy(2, 3).phase(3).u3(2).rot(0)
T3 = np.random.default_rng(5).uniform(-np.pi, np.pi, C3.n_params)
TARGET = P.random_state(4, np.random.default_rng(9))
HD = P.dense_hamiltonian(H, 4)
H2D = P.dense_hamiltonian(H2, 4)


def _dense_probs(psi):
    return np.abs(psi) ** 2


#: name -> (function of θ by the package, the same of the dense reference state ψ)
FUNCTIONS = {
    "expval": (lambda c, t: expval(c, t, H), lambda p: np.vdot(p, HD @ p).real),
    "expval-list": (lambda c, t: np.sum(np.array([1.0, -0.5]) * expval(c, t, [H, H2])),
                    lambda p: np.vdot(p, HD @ p).real - 0.5 * np.vdot(p, H2D @ p).real),
    "sin-expval": (lambda c, t: np.sin(expval(c, t, H2)) ** 2,
                   lambda p: np.sin(np.vdot(p, H2D @ p).real) ** 2),
    "var": (lambda c, t: var(c, t, H2),
            lambda p: np.vdot(p, H2D @ H2D @ p).real - np.vdot(p, H2D @ p).real ** 2),
    "probs": (lambda c, t: np.sum(np.arange(16.0) * probs(c, t)),
              lambda p: np.sum(np.arange(16.0) * _dense_probs(p))),
    "marginal": (lambda c, t: probs(c, t, wires=(2, 0))[1] ** 2,
                 lambda p: _dense_probs(p).reshape(2, 2, 2, 2).sum(axis=(1, 3)).T.reshape(-1)[1]
                 ** 2),
    "fidelity": (lambda c, t: np.abs(np.vdot(TARGET, state(c, t))) ** 2,
                 lambda p: np.abs(np.vdot(TARGET, p)) ** 2),
}


def _fd_jac(f, t, eps=1e-5):
    return np.array([(f(t + eps * e) - f(t - eps * e)) / (2 * eps) for e in np.eye(t.size)])


@pytest.mark.parametrize("circuit", ["every-gate", "small"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_reverse_over_reverse_equals_forward_over_reverse_and_dense(name, circuit):
    c, theta = (CIRCUIT, THETA) if circuit == "every-gate" else (C3, T3)
    f, ref = FUNCTIONS[name]
    fc = lambda t: f(c, t)  # noqa: E731
    h_rev = ds.hessian(fc, mode="rev")(theta)
    h_fwd = ds.hessian(fc, mode="fwd")(theta)
    np.testing.assert_allclose(h_rev, h_fwd, atol=1e-10)
    np.testing.assert_allclose(h_rev, h_rev.T, atol=1e-10)
    np.testing.assert_allclose(h_rev, _fd_jac(ds.grad(fc), theta), atol=1e-6)  # FD of the grad
    if circuit == "small":  # the gradient = central differences of the dense reference
        g_dense = _fd_jac(lambda s: ref(dense_state(c, s)), theta, 1e-6)
        np.testing.assert_allclose(ds.grad(fc)(theta), g_dense, atol=1e-7)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_check_grads_order_two(name):
    f = FUNCTIONS[name][0]
    check_grads(lambda t: f(C3, t), (T3,), order=2, modes=("rev",))  # VJP of the VJP


def test_reverse_over_reverse_of_a_batch():
    batch = np.stack([T3, -T3, 0.5 * T3])

    def f(b):
        return np.sum(expval(C3, b, Z(0) @ X(2) + 0.3 * Y(3)) ** 2)

    h = ds.hessian(f, mode="rev")(batch)
    np.testing.assert_allclose(h, ds.hessian(f, mode="fwd")(batch), atol=1e-10)
    for b in range(3):
        hb = ds.hessian(lambda t: expval(C3, t, Z(0) @ X(2) + 0.3 * Y(3)) ** 2, mode="rev")(
            batch[b])
        np.testing.assert_allclose(h[b, :, b, :], hb, atol=1e-10)
        for o in range(3):
            if o != b:
                np.testing.assert_allclose(h[b, :, o, :], 0.0, atol=1e-12)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_second_derivatives_refused_where_unsupported(mode):
    c = Circuit(1).rx(0)
    with pytest.raises(NotImplementedError, match="use method='adjoint'"):
        ds.hessian(lambda t: expval(c, t, Z(0), method="parameter-shift"), mode=mode)(np.ones(1))
    noisy = Circuit(1).rx(0).depolarizing(0, 0.1)
    with pytest.raises(NotImplementedError, match="noise channels"):
        ds.hessian(lambda t: expval(noisy, t, Z(0)), mode=mode)(np.ones(1))
