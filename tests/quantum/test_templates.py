"""Templates: strongly entangling layers and QAOA against dense references and known optima."""

import numpy as np
import pytest
from scipy.linalg import expm

import diffsci as ds
from diffsci.testing import check_grads
from quantum import (
    Circuit,
    X,
    Z,
    expval,
    maxcut,
    qaoa,
    state,
    strongly_entangling,
)
from tests.quantum import problems as P

RING6 = [(i, (i + 1) % 6) for i in range(6)]


def dense_strongly_entangling(n, weights, ranges):
    psi = np.zeros(2**n, complex)
    psi[0] = 1.0
    for layer, r in enumerate(ranges):
        for q in range(n):
            psi = P.embed(P.gate_matrix("Rot", weights[layer, q]), (q,), n) @ psi
        for q in range(n if n > 1 else 0):
            psi = P.embed(P.X, ((q + r) % n,), n, controls=(q,)) @ psi
    return psi


@pytest.mark.parametrize("n, layers, ranges", [(1, 2, None), (3, 3, None), (4, 2, [3, 2])])
def test_strongly_entangling_matches_dense_reference(n, layers, ranges):
    c = strongly_entangling(n, layers, ranges=ranges)
    assert c.n_params == 3 * n * layers
    w = np.random.default_rng(n).uniform(-np.pi, np.pi, c.n_params)
    default = [(layer % (n - 1)) + 1 if n > 1 else 0 for layer in range(layers)]
    ref = dense_strongly_entangling(n, w.reshape(layers, n, 3), ranges or default)
    np.testing.assert_allclose(state(c, w), ref, atol=1e-12)


def test_strongly_entangling_matches_pennylane():
    qml = pytest.importorskip("pennylane")
    n, layers = 3, 2
    w = np.random.default_rng(3).uniform(-np.pi, np.pi, (layers, n, 3))

    @qml.qnode(qml.device("default.qubit", wires=n))
    def circ():
        qml.StronglyEntanglingLayers(w, wires=range(n))
        return qml.state()

    np.testing.assert_allclose(state(strongly_entangling(n, layers), w.ravel()), circ(),
                               atol=1e-12)


def dense_qaoa(cost, n, theta):
    C = P.dense_hamiltonian(cost, n)
    B = sum(P.dense_hamiltonian(X(q), n) for q in range(n))
    psi = np.full(2**n, 2 ** (-n / 2), complex)
    for gamma, beta in theta.reshape(-1, 2):
        psi = expm(-1j * beta * B) @ (expm(-1j * gamma * C) @ psi)
    return psi


@pytest.mark.parametrize("cost, n", [
    (maxcut(RING6), 6),
    (maxcut([(0, 1), (1, 2), (0, 2), (2, 3)], [1.0, 0.5, 2.0, 1.5]), 4),
    (0.7 * Z(0) @ Z(1) @ Z(2) - 0.4 * Z(1) + 2.0, 3),
])
def test_qaoa_matches_dense_reference(cost, n):
    c = qaoa(cost, depth=3)
    theta = np.random.default_rng(0).uniform(-1.0, 1.0, c.n_params)
    psi = state(c, theta)
    ref = dense_qaoa(cost, n, theta)
    phase = np.vdot(psi, ref) / abs(np.vdot(psi, ref))  # the dropped constants: a global phase
    np.testing.assert_allclose(psi * phase, ref, atol=1e-10)
    np.testing.assert_allclose(expval(c, theta, cost), np.real(np.vdot(ref, P.dense_hamiltonian(
        cost, n) @ ref)), atol=1e-10)


def test_qaoa_depth_one_ring_reaches_three_quarters_of_the_cut():
    # Farhi et al. (2014), §IV: on a ring, p = 1 QAOA reaches <cut> = 3/4 of the edges; with
    # Wang et al. PRA 97, 022304 (2018) eq. (13), <C_uv> = 1/2 + (1/4) sin 4β sin 2γ on a ring
    # for e^{-iγ C_cut}; our cost maxcut() = -C_cut, so γ enters with the opposite sign.
    cost = maxcut(RING6)
    c = qaoa(cost, depth=1)
    for g, b in [(0.3, 0.2), (-0.7, 1.1)]:
        cut = -expval(c, np.array([g, b]), cost)
        np.testing.assert_allclose(cut, 6 * (0.5 - 0.25 * np.sin(4 * b) * np.sin(2 * g)),
                                   atol=1e-12)
    res = ds.optim.minimize(lambda t: expval(c, t, cost), np.array([0.5, 0.3]))
    np.testing.assert_allclose(-res.fun, 4.5, atol=1e-8)


def test_qaoa_gradients_shared_scaled_slots():
    cost = maxcut([(0, 1), (1, 2), (0, 2), (2, 3)], [1.0, 0.5, 2.0, 1.5])
    c = qaoa(cost, depth=2)
    theta = np.array([0.4, -0.3, 0.8, 0.2])
    check_grads(lambda t: expval(c, t, cost), (theta,))
    g_adj = ds.grad(lambda t: expval(c, t, cost))(theta)
    g_ps = ds.grad(lambda t: expval(c, t, cost, method="parameter-shift"))(theta)
    np.testing.assert_allclose(g_adj, g_ps, atol=1e-10)
    check_grads(lambda t: expval(strongly_entangling(3, 2), t, Z(0) @ Z(2)),
                (np.random.default_rng(1).uniform(-3, 3, 18),))


@pytest.mark.parametrize("build, err, match", [
    (lambda: strongly_entangling(3, 0), ValueError, "layers must be an int >= 1"),
    (lambda: strongly_entangling(3, 2, ranges=[1]), ValueError, "one entry per layer"),
    (lambda: strongly_entangling(3, 1, ranges=[3]), ValueError, r"in \[1, 2\]"),
    (lambda: qaoa(X(0) + Z(1), 1), ValueError, "must be diagonal"),
    (lambda: qaoa(maxcut(RING6), 0), ValueError, "depth must be an int >= 1"),
    (lambda: qaoa(maxcut(RING6), 1, n_qubits=4), ValueError, "acts on wire 5"),
    (lambda: qaoa(Circuit(2), 1), TypeError, "cost must be a quantum.Hamiltonian"),
])
def test_template_errors(build, err, match):
    with pytest.raises(err, match=match):
        build()
