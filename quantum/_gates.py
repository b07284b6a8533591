"""The gate table: every supported gate, one row each, and how it compiles to elementary operations.

Data only. A row gives the number of target wires and angles, and a function that turns a gate
(its target bit positions and its angle references) into rows of elementary operations for the
kernels (``quantum._kernels.K_*``). Controls are added by the compiler for every gate alike, so
every gate has controlled and multi-controlled versions.

Matrices follow the usual textbook definitions (Nielsen & Chuang, *Quantum Computation and Quantum
Information*, 2010, §4.2; PennyLane's operation docs for IsingXX/YY/ZZ, MultiRZ, PauliRot, U3, Rot).
Rotations are ``exp(-i phi P / 2)``; ``PhaseShift(phi) = diag(1, e^{i phi})``;
``U3(θ, φ, λ) = PhaseShift(φ) RY(θ) PhaseShift(λ)``; ``Rot(φ, θ, ω) = RZ(ω) RY(θ) RZ(φ)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ._kernels import K_DIAG, K_MAT1, K_MAT2, K_MATN, K_PHASE, K_ROT, K_SWAP, K_X

_S2 = 1.0 / np.sqrt(2.0)

#: Fixed one-qubit matrices.
MATRICES_1Q: dict[str, np.ndarray] = {
    "I": np.eye(2, dtype=complex),
    "X": np.array([[0, 1], [1, 0]], dtype=complex),
    "Y": np.array([[0, -1j], [1j, 0]], dtype=complex),
    "Z": np.diag([1, -1]).astype(complex),
    "H": np.array([[1, 1], [1, -1]], dtype=complex) * _S2,
    "S": np.diag([1, 1j]),
    "Sdg": np.diag([1, -1j]),
    "T": np.diag([1, np.exp(1j * np.pi / 4)]),
    "Tdg": np.diag([1, np.exp(-1j * np.pi / 4)]),
    "SX": 0.5 * np.array([[1 + 1j, 1 - 1j], [1 - 1j, 1 + 1j]]),
    "SXdg": 0.5 * np.array([[1 - 1j, 1 + 1j], [1 + 1j, 1 - 1j]]),
}

ISWAP = np.array([[1, 0, 0, 0], [0, 0, 1j, 0], [0, 1j, 0, 0], [0, 0, 0, 1]], dtype=complex)


@dataclass(frozen=True)
class Elementary:
    """One elementary operation before packing into a program's arrays.

    Args:
        kind: a ``K_*`` code of ``quantum._kernels``.
        bits: target bit positions (one or two).
        xmask, zmask, ny: the Pauli string of a ``K_ROT``.
        matrix: the fixed matrix of ``K_MAT1``/``K_MAT2``/``K_DIAG`` (None otherwise).
        angle: which of the gate's angles drives a ``K_ROT``/``K_PHASE`` (None: fixed gate).
    """

    kind: int
    bits: tuple[int, ...]
    xmask: int = 0
    zmask: int = 0
    ny: int = 0
    matrix: np.ndarray | None = None
    angle: int | None = None


def pauli_masks(paulis: str, bits: tuple[int, ...]) -> tuple[int, int, int]:
    """(xmask, zmask, ny) of a Pauli string acting on the given bit positions."""
    x = z = ny = 0
    for p, b in zip(paulis, bits):
        if p in "XY":
            x |= 1 << b
        if p in "ZY":
            z |= 1 << b
        ny += p == "Y"
    return x, z, ny


def _fixed1(name: str) -> Callable:
    mat = MATRICES_1Q[name]
    if name == "X":
        return lambda bits, paulis: [Elementary(K_X, bits)]
    if name == "I":
        return lambda bits, paulis: []
    kind = K_DIAG if np.allclose(mat, np.diag(np.diag(mat))) else K_MAT1
    return lambda bits, paulis: [Elementary(kind, bits, matrix=mat)]


def _rot(paulis_fixed: str | None) -> Callable:
    def build(bits, paulis):
        p = paulis_fixed if paulis_fixed is not None else paulis
        if paulis_fixed is not None and len(p) == 1 and len(bits) > 1:  # MultiRZ: Z on every wire
            p = p * len(bits)
        x, z, ny = pauli_masks(p, bits)
        return [Elementary(K_ROT, bits, x, z, ny, angle=0)]

    return build


def _u3(bits, paulis):  # U3(θ, φ, λ) = P(φ) RY(θ) P(λ): applied right to left
    x, z, ny = pauli_masks("Y", bits)
    return [Elementary(K_PHASE, bits, angle=2), Elementary(K_ROT, bits, x, z, ny, angle=0),
            Elementary(K_PHASE, bits, angle=1)]


def _rot3(bits, paulis):  # Rot(φ, θ, ω) = RZ(ω) RY(θ) RZ(φ)
    xz = pauli_masks("Z", bits)
    xy = pauli_masks("Y", bits)
    return [Elementary(K_ROT, bits, *xz, angle=0), Elementary(K_ROT, bits, *xy, angle=1),
            Elementary(K_ROT, bits, *xz, angle=2)]


@dataclass(frozen=True)
class GateSpec:
    """One row of the gate table.

    Args:
        name: the gate's name as drawn and in OpenQASM-like listings.
        n_wires: number of target wires (None: any number, e.g. MultiRZ, PauliRot).
        n_angles: number of angles.
        build: ``(target bit positions, Pauli string or None) -> list[Elementary]``.
        base_controls: controls implied by the name (CNOT = X with 1 control ...).
    """

    name: str
    n_wires: int | None
    n_angles: int
    build: Callable
    base_controls: int = 0


def _spec(name, n_wires, n_angles, build, base_controls=0):
    return name, GateSpec(name, n_wires, n_angles, build, base_controls)


def _swap(bits, paulis):
    return [Elementary(K_SWAP, bits)]


def _iswap(bits, paulis):
    return [Elementary(K_MAT2, bits, matrix=ISWAP)]


def _phase(bits, paulis):
    return [Elementary(K_PHASE, bits, angle=0)]


def _unitary(bits, paulis):  # the matrix is attached by the compiler (Operation.matrix)
    return [Elementary(K_MAT1 if len(bits) == 1 else K_MAT2 if len(bits) == 2 else K_MATN, bits)]


#: name -> GateSpec. For controlled names (CNOT, CRX, Toffoli ...) the *leading* wires of a gate's
#: wire list are its controls (``base_controls`` of them); the build function sees only targets.
GATES: dict[str, GateSpec] = dict(
    [_spec(k, 1, 0, _fixed1(k)) for k in MATRICES_1Q]
    + [
        _spec("RX", 1, 1, _rot("X")),
        _spec("RY", 1, 1, _rot("Y")),
        _spec("RZ", 1, 1, _rot("Z")),
        _spec("PhaseShift", 1, 1, _phase),
        _spec("U3", 1, 3, _u3),
        _spec("Rot", 1, 3, _rot3),
        _spec("CNOT", 1, 0, _fixed1("X"), 1),
        _spec("CZ", 1, 0, _fixed1("Z"), 1),
        _spec("CY", 1, 0, _fixed1("Y"), 1),
        _spec("Toffoli", 1, 0, _fixed1("X"), 2),
        _spec("SWAP", 2, 0, _swap),
        _spec("CSWAP", 2, 0, _swap, 1),
        _spec("iSWAP", 2, 0, _iswap),
        _spec("CRX", 1, 1, _rot("X"), 1),
        _spec("CRY", 1, 1, _rot("Y"), 1),
        _spec("CRZ", 1, 1, _rot("Z"), 1),
        _spec("CPhase", 1, 1, _phase, 1),
        _spec("IsingXX", 2, 1, _rot("XX")),
        _spec("IsingYY", 2, 1, _rot("YY")),
        _spec("IsingZZ", 2, 1, _rot("ZZ")),
        _spec("MultiRZ", None, 1, _rot("Z")),
        _spec("PauliRot", None, 1, _rot(None)),
        _spec("QubitUnitary", None, 0, _unitary),
    ]
)
