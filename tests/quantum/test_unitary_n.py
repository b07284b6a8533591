"""QubitUnitary on any number of wires (K_MATN rows, 3 to MAX_UNITARY_WIRES wires)."""

from itertools import permutations

import numpy as np
import pytest

import diffsci as ds
from diffsci.testing import check_grads
from quantum import Circuit, X, Y, Z, density_matrix, expval, state
from quantum._model import MAX_UNITARY_WIRES
from quantum._ops import forward_states
from tests.quantum import problems as P

pytestmark = pytest.mark.kernels
N = 5
RNG = np.random.default_rng(8)


def dense_state(c, theta):
    psi = np.zeros(2**c.n_qubits, complex)
    psi[0] = 1
    for op in c.ops:
        psi = P.op_matrix(op, theta, c.n_qubits) @ psi
    return psi


def _circuit(wires, u, controls=()):
    c = Circuit(N)
    for w in range(N):
        c.ry(w).rz(w)
    c.unitary(wires, u, controls=controls).rx(wires[0]).cnot(wires[-1], wires[0]).ry(wires[1])
    return c


CASES = [(w, ()) for k in (3, 4) for w in list(permutations(range(N), k))[:: 17 if k == 3 else 53]]
CASES += [((4, 0, 2), (1,)), ((1, 3, 2, 0), (4,)), ((0, 1, 2, 3, 4), ())]


@pytest.mark.parametrize("wires, controls", CASES, ids=str)
def test_matches_dense_and_differentiates(wires, controls):
    u = P.random_unitary(2 ** len(wires), RNG)
    c = _circuit(wires, u, controls)
    theta = RNG.uniform(-np.pi, np.pi, c.n_params)
    np.testing.assert_allclose(state(c, theta), dense_state(c, theta), atol=1e-12)
    h = Z(wires[0]) @ X(wires[-1]) + 0.4 * Y(wires[1])
    hd = P.dense_hamiltonian(h, N)
    ref = lambda t: np.vdot(dense_state(c, t), hd @ dense_state(c, t)).real  # noqa: E731
    fd = np.array([(ref(theta + 1e-6 * e) - ref(theta - 1e-6 * e)) / 2e-6
                   for e in np.eye(theta.size)])
    np.testing.assert_allclose(ds.grad(lambda t: expval(c, t, h))(theta), fd, atol=1e-7)
    check_grads(lambda t: expval(c, t, h), (theta,))
    a = c.adjoint()  # U† of a K_MATN row
    np.testing.assert_allclose(state(c.compose(a, shared=True), theta), np.eye(2**N)[0],
                               atol=1e-12)


def test_second_order_and_batches():
    u = P.random_unitary(8, RNG)
    c = _circuit((3, 0, 1), u)
    theta = RNG.uniform(-np.pi, np.pi, c.n_params)
    f = lambda t: expval(c, t, Z(0) @ Z(3) + 0.5 * X(1))  # noqa: E731
    h_rev = ds.hessian(f, mode="rev")(theta)
    np.testing.assert_allclose(h_rev, ds.hessian(f, mode="fwd")(theta), atol=1e-10)
    g = ds.grad(f)
    fd = np.array([(g(theta + 1e-5 * e) - g(theta - 1e-5 * e)) / 2e-5
                   for e in np.eye(theta.size)])
    np.testing.assert_allclose(h_rev, fd, atol=1e-6)
    batch = np.stack([theta, -theta])
    gb = ds.grad(lambda b: np.sum(expval(c, b, Z(0) @ Z(3))))(batch)
    for b in range(2):
        np.testing.assert_allclose(gb[b], ds.grad(lambda t: expval(c, t, Z(0) @ Z(3)))(batch[b]),
                                   atol=1e-12)


def test_in_a_noisy_circuit():
    u = P.random_unitary(8, RNG)
    c = Circuit(3).ry(0).rx(2).unitary((2, 0, 1), u).depolarizing(1, 0.2).ry(1)
    theta = RNG.uniform(-np.pi, np.pi, c.n_params)
    np.testing.assert_allclose(density_matrix(c, theta), P.dense_density(c, theta), atol=1e-12)
    check_grads(lambda t: expval(c, t, X(1) @ Z(2)), (theta,))


def test_limits():
    with pytest.raises(ValueError, match=rf"act on 1 to {MAX_UNITARY_WIRES} wires; got 9"):
        Circuit(9).unitary(tuple(range(9)), np.eye(512))
    with pytest.raises(ValueError, match=r"shape \(8, 8\) for 3 wire"):
        Circuit(3).unitary((0, 1, 2), np.eye(4))
    c = Circuit(3).unitary((0, 1, 2), np.eye(8))
    with pytest.raises(NotImplementedError, match="device='cpu' only"):
        forward_states(c.program, np.zeros(0), device="cuda")
