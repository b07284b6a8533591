"""Noise: density matrices against dense Kraus sums, channel limits, CPTP checks, gradients."""

import numpy as np
import pytest

import diffsci as ds
from diffsci.testing import check_grads
from quantum import (
    Circuit,
    X,
    Y,
    Z,
    density_matrix,
    expval,
    heisenberg,
    probs,
    sample,
    state,
    var,
)
from tests.quantum import problems as P
from tests.quantum.test_ops import every_gate_circuit

N = 4
RNG = np.random.default_rng(11)
USER_KRAUS = [np.sqrt(0.7) * np.eye(2), np.sqrt(0.3) * P.random_unitary(2, RNG)]


def noisy_circuit(rng):
    """Every gate (controlled, shared, fixed, unitary) with every channel in between."""
    c = every_gate_circuit(rng)
    c.depolarizing(0, 0.1).amplitude_damping(1, 0.3).phase_damping(2, 0.2).bit_flip(3, 0.15)
    c.phase_flip(0, 0.25).kraus(2, USER_KRAUS)
    c.ry(0).cnot(0, 3).crz(1, 2).iswap(0, 1).u3(3)
    c.amplitude_damping(0, 0.5).depolarizing(3, 0.05)
    return c


CIRCUIT = noisy_circuit(RNG)
THETA = RNG.uniform(-np.pi, np.pi, CIRCUIT.n_params)
KRAUS_AT = {i: USER_KRAUS for i, op in enumerate(CIRCUIT.ops) if op.name == "Kraus"}
H = heisenberg(N, jz=0.6) + 0.3 * X(0) @ Y(2) - 0.7 * Z(1)


def test_density_matrix_matches_dense_kraus_sums():
    rho = density_matrix(CIRCUIT, THETA)
    ref = P.dense_density(CIRCUIT, THETA, KRAUS_AT)
    np.testing.assert_allclose(rho, ref, atol=1e-12)
    assert np.isclose(np.trace(rho), 1.0) and np.allclose(rho, rho.conj().T)
    assert np.linalg.eigvalsh(rho).min() > -1e-12


def test_expval_probs_match_dense():
    ref = P.dense_density(CIRCUIT, THETA, KRAUS_AT)
    for h in (H, Z(0) @ Z(3), Y(1)):
        want = np.trace(P.dense_hamiltonian(h, N) @ ref).real
        np.testing.assert_allclose(expval(CIRCUIT, THETA, h), want, atol=1e-12)
    np.testing.assert_allclose(probs(CIRCUIT, THETA), np.diag(ref).real, atol=1e-12)
    marg = np.diag(ref).real.reshape(2, 2, 2, 2).sum(axis=(0, 2)).T.ravel()  # wires (3, 1)
    np.testing.assert_allclose(probs(CIRCUIT, THETA, wires=(3, 1)), marg, atol=1e-12)
    assert sample(CIRCUIT, THETA, 50, seed=0).shape == (50, N)


def test_pure_circuit_as_density_matrix_is_psi_psi_dagger():
    c = every_gate_circuit(np.random.default_rng(7))
    t = np.random.default_rng(2).uniform(-3, 3, c.n_params)
    psi = state(c, t)
    np.testing.assert_allclose(density_matrix(c, t), np.outer(psi, psi.conj()), atol=1e-12)


@pytest.mark.parametrize("build, rho_ref", [
    (lambda c: c.h(0).depolarizing(0, 0.75), np.eye(2) / 2),          # fully mixed
    (lambda c: c.x(0).amplitude_damping(0, 1.0), np.diag([1.0, 0.0])),  # decays to |0⟩
    (lambda c: c.h(0).phase_damping(0, 1.0), np.eye(2) / 2),          # coherences gone
    (lambda c: c.h(0).phase_flip(0, 0.5), np.eye(2) / 2),
    (lambda c: c.bit_flip(0, 1.0), np.diag([0.0, 1.0])),              # certain flip = X
    (lambda c: c.h(0).bit_flip(0, 0.3), np.full((2, 2), 0.5)),        # |+⟩ is X-invariant
    (lambda c: c.ry(0, 1.1).depolarizing(0, 0.0).amplitude_damping(0, 0.0),
     np.outer(*[np.array([np.cos(0.55), np.sin(0.55)])] * 2)),         # strength 0: identity
])
def test_channel_limits(build, rho_ref):
    np.testing.assert_allclose(density_matrix(build(Circuit(1))), rho_ref, atol=1e-12)


def test_amplitude_damping_relaxes_exponentially_and_depolarizing_shrinks_bloch_vector():
    g, k = 0.2, 5
    c = Circuit(1).x(0)
    for _ in range(k):
        c.amplitude_damping(0, g)
    np.testing.assert_allclose(expval(c, None, Z(0)), 1 - 2 * (1 - g) ** k, atol=1e-12)
    c = Circuit(1).h(0).depolarizing(0, 0.3)
    np.testing.assert_allclose(expval(c, None, X(0)), 1 - 4 * 0.3 / 3, atol=1e-12)


def test_gradients_reverse_forward_and_batches():
    f = lambda t: expval(CIRCUIT, t, [H, Z(0) @ Z(3)])  # noqa: E731
    check_grads(f, (THETA,), modes=("rev", "fwd"))
    check_grads(lambda t: np.sum(np.abs(density_matrix(CIRCUIT, t)[1:3, :]) ** 2), (THETA,),
                modes=("rev",))
    batch = np.stack([THETA, THETA[::-1]])
    g = ds.jacobian(lambda t: np.sum(expval(CIRCUIT, t, H)))(batch)
    for b in range(2):
        np.testing.assert_allclose(g[b], ds.grad(lambda t: expval(CIRCUIT, t, H))(batch[b]),
                                   atol=1e-10)


@pytest.mark.parametrize("build, err, match", [
    (lambda: Circuit(1).depolarizing(0, 1.5), ValueError, r"strength must be in \[0, 1\]"),
    (lambda: Circuit(1).bit_flip(0, "a"), TypeError, "strength must be a real number"),
    (lambda: Circuit(1).kraus(0, [np.eye(2), np.eye(2)]), ValueError,
     r"not trace preserving \(not CPTP\): max \|Σ K†K - I\| = 1"),
    (lambda: Circuit(2).kraus(0, [np.eye(4)]), ValueError, r"operator 0 has shape \(4, 4\)"),
    (lambda: Circuit(2).channel("Reset", 0, 0.1), ValueError, "unknown channel 'Reset'"),
    (lambda: Circuit(2).phase_flip(2, 0.1), ValueError, "wire 2 is out of range"),
    (lambda: state(Circuit(1).bit_flip(0, 0.1)), ValueError, "use density_matrix"),
    (lambda: var(Circuit(1).bit_flip(0, 0.1), None, Z(0)), ValueError, "pure-state circuits"),
    (lambda: expval(Circuit(1).rx(0).bit_flip(0, 0.1), np.ones(1), Z(0),
                    method="parameter-shift"), ValueError, "method='adjoint' only"),
    (lambda: density_matrix(Circuit(11)), ValueError, "at most 10 qubits"),
])
def test_noise_errors(build, err, match):
    with pytest.raises(err, match=match):
        build()


# ---------------------------------------------------------------------------- two-wire channels


def random_kraus(d, m, rng):
    """m Kraus operators of a random CPTP map on dimension d: blocks of a random isometry."""
    g = rng.normal(size=(m * d, d)) + 1j * rng.normal(size=(m * d, d))
    v, _ = np.linalg.qr(g)  # (m d) × d with orthonormal columns: Σ K†K = V†V = I
    return [v[k * d:(k + 1) * d] for k in range(m)]


KRAUS2 = random_kraus(4, 3, np.random.default_rng(21))


def two_wire_circuit():
    c = Circuit(3)
    c.ry(0).rx(1).h(2).cnot(0, 2).crz(2, 1)
    c.kraus((2, 0), KRAUS2)  # reversed, non-adjacent wires: wire 2 is the operators' MSB
    c.rz(0).ry(2).ising_xx(1, 2).depolarizing(1, 0.1)
    return c


def test_two_wire_kraus_matches_dense_kraus_sums():
    c = two_wire_circuit()
    theta = np.random.default_rng(3).uniform(-np.pi, np.pi, c.n_params)
    kraus_at = {i: KRAUS2 for i, op in enumerate(c.ops) if op.name == "Kraus"}
    rho = density_matrix(c, theta)
    np.testing.assert_allclose(rho, P.dense_density(c, theta, kraus_at), atol=1e-12)
    assert np.isclose(np.trace(rho).real, 1.0) and np.linalg.eigvalsh(rho).min() > -1e-12


def test_two_wire_depolarizing_limit():
    """p = 15/16 two-qubit depolarising is the fully mixed state on both wires."""
    paulis = [P.I2, P.X, P.Y, P.Z]
    p = 15 / 16
    ks = [np.sqrt(1 - p) * np.eye(4)] + [np.sqrt(p / 15) * np.kron(a, b) for i, a in
                                         enumerate(paulis) for j, b in enumerate(paulis) if i or j]
    c = Circuit(2).h(0).cnot(0, 1).kraus((0, 1), ks)
    np.testing.assert_allclose(density_matrix(c), np.eye(4) / 4, atol=1e-12)


def test_two_wire_kraus_gradients():
    c = two_wire_circuit()
    theta = np.random.default_rng(4).uniform(-np.pi, np.pi, c.n_params)
    h = Z(0) @ X(2) + 0.4 * Y(1) - 0.3 * Z(2)
    check_grads(lambda t: expval(c, t, h), (theta,), modes=("rev", "fwd"))


@pytest.mark.parametrize("build, match", [
    (lambda: Circuit(3).kraus((0, 1), [np.eye(4), np.eye(4)]), r"not CPTP"),
    (lambda: Circuit(3).kraus((0, 1), [np.eye(2)]), r"on 2 wire\(s\) are 4×4; operator 0"),
    (lambda: Circuit(3).kraus((0, 0), [np.eye(4)]), r"repeated|distinct"),
    (lambda: Circuit(3).channel("BitFlip", (0, 1), 0.1), r"acts on 1 wire\(s\); got wires"),
    (lambda: Circuit(3).two_qubit_depolarizing(0, 0.1), r"acts on 2 wire\(s\); got wires \(0,\)"),
    (lambda: Circuit(3).two_qubit_dephasing((0, 1), 1.5), r"strength must be in \[0, 1\]"),
])
def test_two_wire_kraus_errors(build, match):
    with pytest.raises(ValueError, match=match):
        build()


@pytest.mark.parametrize("name", ["TwoQubitDepolarizing", "TwoQubitDephasing"])
def test_named_two_wire_channels_match_dense_kraus(name):
    """Named two-wire channels = their Kraus sums written out densely (independent reference),
    CPTP, with adjoint gradients = finite differences."""
    paulis = [P.I2, P.X, P.Y, P.Z]
    p = 0.3
    if name == "TwoQubitDepolarizing":
        ks = [np.sqrt(1 - p) * np.eye(4)] + [np.sqrt(p / 15) * np.kron(a, b)
                                             for i, a in enumerate(paulis)
                                             for j, b in enumerate(paulis) if i or j]
    else:
        ks = [np.sqrt(1 - p) * np.eye(4)] + [np.sqrt(p / 3) * np.kron(a, b) for a, b in
                                             ((P.Z, P.I2), (P.I2, P.Z), (P.Z, P.Z))]
    c = Circuit(3).ry(0).h(1).cnot(0, 2).rx(2).channel(name, (2, 0), p).cnot(1, 0).rz(0)
    ref = Circuit(3).ry(0).h(1).cnot(0, 2).rx(2).kraus((2, 0), ks).cnot(1, 0).rz(0)
    theta = np.random.default_rng(8).uniform(-np.pi, np.pi, c.n_params)
    rho = density_matrix(c, theta)
    kraus_at = {i: ks for i, op in enumerate(c.ops) if op.name == name}
    np.testing.assert_allclose(rho, P.dense_density(c, theta, kraus_at), atol=1e-12)
    np.testing.assert_allclose(rho, density_matrix(ref, theta), atol=1e-12)
    h = Z(0) @ X(2) + 0.4 * Y(1)
    check_grads(lambda t: expval(c, t, h), (theta,), modes=("rev", "fwd"))


def test_two_qubit_depolarizing_full_strength_is_fully_mixed():
    c = Circuit(2).h(0).cnot(0, 1).two_qubit_depolarizing((0, 1), 15 / 16)
    np.testing.assert_allclose(density_matrix(c), np.eye(4) / 4, atol=1e-12)
    c = Circuit(2).h(0).h(1).two_qubit_dephasing((0, 1), 0.75)  # all coherences vanish
    np.testing.assert_allclose(density_matrix(c), np.eye(4) / 4, atol=1e-12)
