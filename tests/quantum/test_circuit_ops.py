"""Circuit.copy / compose / adjoint, Hamiltonian.matrix, ground_state: against dense references."""

import numpy as np
import pytest
import scipy.sparse

import diffsci as ds
from diffsci.testing import check_grads
from quantum import Circuit, Hamiltonian, X, Y, Z, expval, ground_state, heisenberg, state, tfim
from tests.quantum import problems as P
from tests.quantum.test_ops import CIRCUIT, THETA, H, dense_state

pytestmark = pytest.mark.kernels
N = 4


def dense_unitary(c, theta):
    u = np.eye(2**c.n_qubits, dtype=complex)
    for op in c.ops:
        u = P.op_matrix(op, theta, c.n_qubits) @ u
    return u


def test_adjoint_is_the_inverse_for_every_gate():
    a = CIRCUIT.adjoint()
    assert a.n_params == CIRCUIT.n_params
    u, ua = dense_unitary(CIRCUIT, THETA), dense_unitary(a, THETA)
    np.testing.assert_allclose(ua, u.conj().T, atol=1e-12)
    psi = state(CIRCUIT.compose(a, shared=True), THETA)
    np.testing.assert_allclose(psi, np.eye(16)[0], atol=1e-12)
    np.testing.assert_allclose(state(a.adjoint(), THETA), state(CIRCUIT, THETA), atol=1e-12)


def test_adjoint_gradients():
    a = CIRCUIT.adjoint()
    check_grads(lambda t: expval(a, t, H), (THETA,))
    hd = P.dense_hamiltonian(H, N)
    ref = lambda t: np.vdot(dense_unitary(a, t)[:, 0], hd @ dense_unitary(a, t)[:, 0]).real  # noqa
    fd = np.array([(ref(THETA + 1e-6 * e) - ref(THETA - 1e-6 * e)) / 2e-6
                   for e in np.eye(THETA.size)])
    np.testing.assert_allclose(ds.grad(lambda t: expval(a, t, H))(THETA), fd, atol=1e-7)


def test_adjoint_refuses_channels():
    with pytest.raises(ValueError, match=r"Circuit.adjoint: gate 1 \(Depolarizing\) is a noise"):
        Circuit(1).rx(0).depolarizing(0, 0.1).adjoint()


def test_compose_concatenates_slots_maps_wires_and_copies():
    a = Circuit(3).ry(0).cnot(0, 1).rz(2)
    b = Circuit(2).rx(0).crz(0, 1)
    c = a.compose(b, wires=(2, 0))
    assert c.n_params == 4 and len(a) == 3  # a untouched
    ref = Circuit(3).ry(0).cnot(0, 1).rz(2).rx(2).crz(2, 0)
    t = np.array([0.3, -0.4, 1.2, 0.8])
    np.testing.assert_allclose(state(c, t), state(ref, t), atol=1e-13)
    np.testing.assert_allclose(state(a + a, np.r_[t[:2], t[:2]]),
                               dense_state_n(a + a, np.r_[t[:2], t[:2]]), atol=1e-12)
    check_grads(lambda s: expval(c, s, Z(0) @ X(2) + Y(1)), (t,))
    d = a.copy()
    d.h(1)
    assert len(a) == 3 and len(d) == 4 and d.n_params == a.n_params
    with pytest.raises(ValueError, match="Circuit.compose: wires must map"):
        a.compose(b, wires=(1, 1))
    with pytest.raises(ValueError, match="out of range"):
        b.compose(a)
    with pytest.raises(TypeError, match="other must be a Circuit"):
        a.compose("x")


def dense_state_n(c, t):
    return dense_unitary(c, t)[:, 0]


def test_dense_state_helper_agrees():
    np.testing.assert_allclose(dense_state_n(CIRCUIT, THETA), dense_state(CIRCUIT, THETA),
                               atol=1e-12)


RNG = np.random.default_rng(3)


def _random_hamiltonian(n, k, rng):
    terms = []
    for _ in range(k):
        wires = tuple(rng.permutation(n)[: rng.integers(0, n + 1)])
        terms.append((float(rng.normal()), "".join(rng.choice(list("IXYZ"), len(wires))), wires))
    return Hamiltonian(tuple(terms))


@pytest.mark.parametrize("n", [1, 2, 3, 5])
@pytest.mark.parametrize("seed", range(4))
def test_matrix_dense_and_sparse_match_the_reference(n, seed):
    h = _random_hamiltonian(n, 6, np.random.default_rng(seed))
    ref = P.dense_hamiltonian(h, n)
    np.testing.assert_allclose(h.matrix(n), ref, atol=1e-14)
    sp = h.matrix(n, sparse=True)
    assert scipy.sparse.issparse(sp) and sp.shape == (2**n, 2**n)
    np.testing.assert_allclose(sp.toarray(), ref, atol=1e-14)
    np.testing.assert_allclose(ref, ref.conj().T, atol=1e-14)  # Hermitian


def test_matrix_errors_and_empty():
    assert Hamiltonian().matrix().shape == (2, 2) and not Hamiltonian().matrix().any()
    with pytest.raises(ValueError, match=r"Hamiltonian.matrix: n_qubits must be an int in \[3,"):
        Z(2).matrix(2)
    with pytest.raises(ValueError, match="n_qubits must be an int"):
        Z(0).matrix(40, sparse=True)


@pytest.mark.parametrize("h, n, energy", [
    (heisenberg(4), 4, -8.0),  # the paper's VQE target
    (tfim(2, 1.0, 0.0), 2, -1.0),
    (-1.0 * X(0) - 0.5 * Z(1), 2, -1.5),
])
def test_ground_state_known_energies(h, n, energy):
    e, psi = ground_state(h, n)
    assert np.isclose(e, energy, atol=1e-10)
    m = h.matrix(n)
    np.testing.assert_allclose(m @ psi, e * psi, atol=1e-10)


def test_ground_state_sparse_solver_matches_dense():
    h = tfim(11, 1.0, 0.7) + 0.3 * Y(2) @ Y(5)
    e, psi = ground_state(h)  # 11 qubits: the sparse path
    w = np.linalg.eigvalsh(h.matrix(11))
    assert np.isclose(e, w[0], atol=1e-9)
    assert np.isclose(np.linalg.norm(psi), 1.0)
    np.testing.assert_allclose(h.matrix(11, sparse=True) @ psi, e * psi, atol=1e-7)
    with pytest.raises(TypeError, match="ground_state: H must be"):
        ground_state("Z0")


def test_vqe_reaches_the_exact_ground_energy_with_its_gradient():
    """A 2-qubit VQE: its optimum = ground_state's energy, its gradient = the dense FD."""
    from scipy.optimize import minimize

    c = Circuit(2).ry(0).ry(1).cnot(0, 1).ry(0).ry(1)
    h = -1.0 * Z(0) @ Z(1) - 0.6 * X(0) - 0.6 * X(1)
    f = lambda t: expval(c, t, h)  # noqa: E731
    res = minimize(f, np.full(4, 0.1), jac=ds.grad(f), method="BFGS")
    assert np.isclose(res.fun, ground_state(h)[0], atol=1e-8)
    hd = h.matrix(2)
    t = np.array([0.3, -0.2, 0.5, 1.1])
    ref = lambda s: np.vdot(dense_state_n(c, s), hd @ dense_state_n(c, s)).real  # noqa: E731
    fd = np.array([(ref(t + 1e-6 * e) - ref(t - 1e-6 * e)) / 2e-6 for e in np.eye(4)])
    np.testing.assert_allclose(ds.grad(f)(t), fd, atol=1e-8)
