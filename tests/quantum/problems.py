"""Shared reference problems for the quantum tests: dense matrices, independent of the package.

Gate matrices are written from their textbook definitions (Nielsen & Chuang §4.2) or as
``scipy.linalg.expm`` of their generators; :func:`embed` places a k-qubit matrix with controls into
the full 2**n × 2**n operator (wire 0 = most significant bit), and :func:`kron_embed` does the same
for uncontrolled gates by Kronecker products and a wire permutation.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import expm

I2 = np.eye(2, dtype=complex)
X = np.array([[0, 1], [1, 0]], dtype=complex)
Y = np.array([[0, -1j], [1j, 0]])
Z = np.diag([1.0 + 0j, -1.0])
P1 = np.diag([0.0 + 0j, 1.0])  # |1><1|
PAULI = {"I": I2, "X": X, "Y": Y, "Z": Z}


def kron(*ms):
    out = np.eye(1, dtype=complex)
    for m in ms:
        out = np.kron(out, m)
    return out


def pauli_word(word):
    return kron(*(PAULI[p] for p in word))


def rot(word, phi):
    """exp(-i phi P / 2) by the matrix exponential of its generator."""
    return expm(-0.5j * phi * pauli_word(word))


def controlled(u, n_controls=1):
    d = u.shape[0]
    full = np.eye(d * 2**n_controls, dtype=complex)
    full[-d:, -d:] = u
    return full


def u3(theta, phi, lam):
    c, s = np.cos(theta / 2), np.sin(theta / 2)
    return np.array([[c, -np.exp(1j * lam) * s], [np.exp(1j * phi) * s,
                                                   np.exp(1j * (phi + lam)) * c]])


def phase(phi):
    return expm(1j * phi * P1)


FIXED = {
    "I": I2, "X": X, "Y": Y, "Z": Z,
    "H": np.array([[1, 1], [1, -1]]) / np.sqrt(2),
    "S": np.diag([1, 1j]), "Sdg": np.diag([1, -1j]),
    "T": np.diag([1, np.exp(0.25j * np.pi)]), "Tdg": np.diag([1, np.exp(-0.25j * np.pi)]),
    "SX": expm(-0.25j * np.pi * (X - I2)),  # sqrt(X) = e^{iπ/4} RX(π/2)
    "SXdg": expm(0.25j * np.pi * (X - I2)),
    "SWAP": np.eye(4)[[0, 2, 1, 3]].astype(complex),
    "iSWAP": expm(0.25j * np.pi * (kron(X, X) + kron(Y, Y))),
}


def gate_matrix(name, angles=(), paulis=None, n_targets=1):
    """The matrix of a gate over (its implied controls +) targets, from definitions."""
    a = angles
    table = {
        "RX": lambda: rot("X", a[0]), "RY": lambda: rot("Y", a[0]), "RZ": lambda: rot("Z", a[0]),
        "PhaseShift": lambda: phase(a[0]),
        "U3": lambda: u3(*a),
        "Rot": lambda: rot("Z", a[2]) @ rot("Y", a[1]) @ rot("Z", a[0]),
        "CNOT": lambda: controlled(X), "CZ": lambda: controlled(Z), "CY": lambda: controlled(Y),
        "Toffoli": lambda: controlled(X, 2), "CSWAP": lambda: controlled(FIXED["SWAP"]),
        "CRX": lambda: controlled(rot("X", a[0])), "CRY": lambda: controlled(rot("Y", a[0])),
        "CRZ": lambda: controlled(rot("Z", a[0])), "CPhase": lambda: controlled(phase(a[0])),
        "IsingXX": lambda: rot("XX", a[0]), "IsingYY": lambda: rot("YY", a[0]),
        "IsingZZ": lambda: rot("ZZ", a[0]),
        "MultiRZ": lambda: rot("Z" * n_targets, a[0]),
        "PauliRot": lambda: rot(paulis, a[0]),
    }
    if name in FIXED:
        return FIXED[name]
    return table[name]()


def embed(u, wires, n, controls=()):
    """Full operator of matrix u on ``wires`` (first wire = most significant), with controls."""
    dim = 2**n
    k = len(wires)
    full = np.zeros((dim, dim), dtype=complex)
    for j in range(dim):
        bits = [(j >> (n - 1 - w)) & 1 for w in range(n)]
        if not all(bits[c] for c in controls):
            full[j, j] = 1.0
            continue
        col = sum(bits[w] << (k - 1 - i) for i, w in enumerate(wires))
        for row in range(2**k):
            out = list(bits)
            for i, w in enumerate(wires):
                out[w] = (row >> (k - 1 - i)) & 1
            jj = sum(b << (n - 1 - w) for w, b in enumerate(out))
            full[jj, j] += u[row, col]
    return full


def kron_embed(u, wires, n):
    """The same as ``embed`` without controls, by Kronecker products and an axis permutation."""
    k = len(wires)
    rest = [w for w in range(n) if w not in wires]
    big = kron(u, np.eye(2 ** len(rest)))  # acts on order wires + rest
    order = list(wires) + rest
    t = big.reshape((2,) * (2 * n))
    inv = np.argsort(order)
    t = t.transpose(list(inv) + [n + i for i in inv])
    del k
    return t.reshape(2**n, 2**n)


def dense_hamiltonian(H, n):
    """The 2**n × 2**n matrix of a quantum.Hamiltonian (tests only; the package never does this)."""
    out = np.zeros((2**n, 2**n), dtype=complex)
    for c, word, wires in H.terms:
        out += c * (embed(pauli_word(word), wires, n) if word else np.eye(2**n))
    return out


def random_state(n, rng):
    v = rng.standard_normal(2**n) + 1j * rng.standard_normal(2**n)
    return v / np.linalg.norm(v)


def random_unitary(d, rng):
    q, r = np.linalg.qr(rng.standard_normal((d, d)) + 1j * rng.standard_normal((d, d)))
    return q * (np.diag(r) / np.abs(np.diag(r)))


#: Kraus operators from their definitions (Nielsen & Chuang §8.3), strength p or γ.
KRAUS = {
    "BitFlip": lambda p: [np.sqrt(1 - p) * I2, np.sqrt(p) * X],
    "PhaseFlip": lambda p: [np.sqrt(1 - p) * I2, np.sqrt(p) * Z],
    "Depolarizing": lambda p: [np.sqrt(1 - p) * I2, np.sqrt(p / 3) * X, np.sqrt(p / 3) * Y,
                               np.sqrt(p / 3) * Z],
    "AmplitudeDamping": lambda g: [np.diag([1, np.sqrt(1 - g)]),
                                   np.sqrt(g) * np.array([[0, 1], [0, 0]])],
    "PhaseDamping": lambda g: [np.diag([1, np.sqrt(1 - g)]), np.sqrt(g) * np.diag([0, 1])],
}


def op_matrix(op, theta, n):
    """The full 2**n × 2**n matrix of a circuit's gate at parameters theta."""
    from quantum import GATES, Param

    ang = [theta[a.index] * a.scale if isinstance(a, Param) else a for a in op.angles]
    nc = GATES[op.name].base_controls
    targets = op.controls[:nc] + op.wires
    u = op.matrix if op.name == "QubitUnitary" else gate_matrix(op.name, ang, op.paulis,
                                                                len(op.wires))
    return embed(u, targets, n, controls=op.controls[nc:])


def dense_density(circuit, theta, kraus=None):
    """ρ(θ) by dense Kraus sums: U ρ U† per gate, Σ_k K_k ρ K_k† per channel.

    ``kraus`` maps the index of a ``Kraus`` operation (or of any channel) to its operators.
    """
    kraus = kraus or {}
    n = circuit.n_qubits
    rho = np.zeros((2**n, 2**n), complex)
    rho[0, 0] = 1.0
    for i, op in enumerate(circuit.ops):
        if op.name in KRAUS or i in kraus:
            ks = kraus[i] if i in kraus else KRAUS[op.name](op.angles[0])
            ks = [embed(np.asarray(k, complex), op.wires, n) for k in ks]
            rho = sum(k @ rho @ k.conj().T for k in ks)
        else:
            u = op_matrix(op, theta, n)
            rho = u @ rho @ u.conj().T
    return rho
