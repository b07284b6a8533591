"""The data model: validation at the boundary, drawing, observables and their builders."""

import numpy as np
import pytest

from quantum import (
    Circuit,
    Hamiltonian,
    Param,
    X,
    Y,
    Z,
    counts,
    expval,
    hardware_efficient,
    heisenberg,
    maxcut,
    pauli,
    probs,
    sample,
    state,
    tfim,
)
from tests.quantum import problems as P


def test_param_slots_shared_scaled_fixed():
    c = Circuit(2)
    p = c.new_param()
    c.rz(0, p).rx(1).rz(1, -2 * p).ry(0, 0.5)
    assert c.n_params == 2
    assert [op.angles for op in c.ops] == [(Param(0),), (Param(1),), (Param(0, -2.0),), (0.5,)]


@pytest.mark.parametrize("build, match", [
    (lambda: Circuit(0), r"n_qubits must be in \[1, 30\]"),
    (lambda: Circuit(31), r"n_qubits must be in \[1, 30\]"),
    (lambda: Circuit(2).rx(2), r"wire 2 is out of range for a 2-qubit circuit"),
    (lambda: Circuit(2).cnot(1, 1), r"wires and controls must be distinct"),
    (lambda: Circuit(3).rx(0, controls=(0,)), r"wires and controls must be distinct"),
    (lambda: Circuit(2).append("RX", (0, 1)), r"expected 1 wire\(s\); got 2"),
    (lambda: Circuit(2).append("Foo", 0), r"unknown gate 'Foo'"),
    (lambda: Circuit(1).unitary(0, [[1, 1], [0, 1]]), r"not unitary: max \|U†U - I\|"),
    (lambda: Circuit(2).unitary((0, 1), np.eye(2)), r"shape \(4, 4\) for 2 wire\(s\)"),
    (lambda: Circuit(3).pauli_rot((0, 1), "XQ"), r"paulis must be a word over 'XYZ'"),
    (lambda: Circuit(3).pauli_rot((0, 1), "XYZ"), r"one letter per wire \(2\)"),
    (lambda: Circuit(1).rx(0, "a"), r"an angle must be None"),
])
def test_bad_circuits_raise_clear_errors(build, match):
    with pytest.raises((ValueError, TypeError), match=match):
        build()


def test_bad_measurement_arguments():
    c = Circuit(2).rx(0).cnot(0, 1)
    with pytest.raises(ValueError, match=r"shape \(1,\) or \(batch, 1\).*got shape \(3,\)"):
        expval(c, np.zeros(3), Z(0))
    with pytest.raises(ValueError, match=r"acts on wire 2 but the circuit has 2 qubit"):
        expval(c, np.zeros(1), Z(2))
    with pytest.raises(TypeError, match=r"must be a quantum.Hamiltonian"):
        expval(c, np.zeros(1), "Z0")
    with pytest.raises(ValueError, match=r"method must be one of"):
        expval(c, np.zeros(1), Z(0), method="magic")
    with pytest.raises(ValueError, match=r"device must be one of"):
        expval(c, np.zeros(1), Z(0), device="tpu")
    with pytest.raises(ValueError, match=r"wires must be distinct"):
        probs(c, np.zeros(1), wires=(0, 0))


@pytest.mark.parametrize("terms, match", [
    (((1.0, "XQ", (0, 1)),), "str over 'IXYZ'"),
    (((1.0, "XZ", (0,)),), "2 letter"),
    (((1.0, "XZ", (1, 1)),), "distinct ints"),
    (((1j, "X", (0,)),), "must be real"),
])
def test_bad_hamiltonians(terms, match):
    with pytest.raises(ValueError, match=match):
        Hamiltonian(terms)


def test_hamiltonian_algebra():
    h = 2.0 * (X(0) @ Z(2)) - Y(1) + 1.5
    assert h.terms == ((2.0, "XZ", (0, 2)), (-1.0, "Y", (1,)), (1.5, "", ()))
    assert pauli("XIZ", (0, 1, 2)).terms == ((1.0, "XZ", (0, 2)),)
    assert h.n_wires == 3
    with pytest.raises(ValueError, match="share wires"):
        X(0) @ Z(0)


def test_builders_ground_energies():
    # The paper's target: 4-site periodic Heisenberg AF, E0 = -8 (-2 per site).
    assert np.isclose(np.linalg.eigvalsh(P.dense_hamiltonian(heisenberg(4), 4))[0], -8.0)
    # TFIM at criticality, open chain of 4: E0 from exact diagonalisation of the dense matrix
    # built independently from Kronecker products.
    n = 4
    dense = sum(-P.kron_embed(P.pauli_word("ZZ"), (i, i + 1), n) for i in range(n - 1)) + sum(
        -P.kron_embed(P.X, (i,), n) for i in range(n))
    np.testing.assert_allclose(P.dense_hamiltonian(tfim(n), n), dense, atol=1e-14)
    # MaxCut of a triangle: best cut 2.
    assert np.isclose(np.linalg.eigvalsh(P.dense_hamiltonian(maxcut([(0, 1), (1, 2), (0, 2)]),
                                                             3))[0], -2.0)
    xxz = heisenberg(3, J=1.0, jz=0.5, periodic=False)
    assert xxz.terms[2] == (0.5, "ZZ", (0, 1)) and len(xxz.terms) == 6


def test_drawing():
    c = Circuit(3).h(0).cnot(0, 2).rz(1, 0.5).crx(2, 0).swap(0, 1)
    text = str(c)
    assert text.splitlines() == [
        "0: ─H──●───────────RX(θ0)──×──",
        "1: ────┼──RZ(0.5)──┼───────×──",
        "2: ────X───────────●──────────",
    ], text


def test_hardware_efficient_shape():
    c = hardware_efficient(4, 2)
    assert c.n_params == 28
    assert [op.name for op in c.ops].count("CNOT") == 8
    assert c.ops[0].name == "RX" and c.ops[-1].name == "RX"


def test_probs_sample_counts():
    c = Circuit(3).h(0).cnot(0, 1).x(2)
    p = probs(c)
    np.testing.assert_allclose(p, [0, 0.5, 0, 0, 0, 0, 0, 0.5], atol=1e-15)
    np.testing.assert_allclose(probs(c, wires=(2, 0)), [0, 0, 0.5, 0.5], atol=1e-15)
    bits = sample(c, shots=2000, seed=3)
    assert bits.shape == (2000, 3)
    assert np.all(bits[:, 0] == bits[:, 1]) and np.all(bits[:, 2] == 1)
    assert np.array_equal(bits, sample(c, shots=2000, seed=3))
    cnt = counts(c, shots=2000, seed=3)
    assert set(cnt) == {"001", "111"} and sum(cnt.values()) == 2000
    assert abs(cnt["111"] - 1000) < 150
    with pytest.raises(ValueError, match="shots must be an int >= 1"):
        sample(c, shots=0)


def test_state_without_parameters_and_bell_state():
    psi = state(Circuit(2).h(0).cnot(0, 1))
    np.testing.assert_allclose(psi, [2**-0.5, 0, 0, 2**-0.5], atol=1e-15)
