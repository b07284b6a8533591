"""Noise channels and density-matrix programs.

Data and validation, one row per channel: a channel maps a strength in [0, 1] to its Kraus
operators (Nielsen & Chuang, *Quantum Computation and Quantum Information*, 2010, §8.3; the
depolarising convention of PennyLane, ``K = √(1-p) I, √(p/3) X, √(p/3) Y, √(p/3) Z``).

A density matrix ρ of n qubits is simulated as the vector ``vec(ρ)[r·2**n + c] = ρ[r, c]`` of a
2n-qubit register (row wires first). A unitary U acts as ``U ⊗ conj(U)``: the gate on the row
copy of its wires and its complex conjugate on the column copy (:func:`compile_mixed`); a channel
with Kraus operators K_k acts as the superoperator ``Σ_k K_k ⊗ conj(K_k)`` on the (row, column)
pair of its wire — one ``K_CHAN`` row of the program. So the state-vector kernels, the adjoint
sweep (with the state restored from a snapshot at every channel, ``DERIVATIONS.md`` eq. N1–N3) and
the tangent sweep run density matrices unchanged.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ._kernels import K_CHAN, K_CHAN2, K_DATA, K_DIAG, K_MAT1, K_MAT2, K_MATN, K_PHASE, K_ROT

#: The largest register simulated as a density matrix (a 2n-qubit vector: 4**10 amplitudes).
MAX_DENSITY_QUBITS = 10
#: Tolerance of the trace-preservation check of Kraus operators: max |Σ K†K - I|.
CPTP_ATOL = 1e-8

_I = np.eye(2, dtype=complex)
_X = np.array([[0, 1], [1, 0]], dtype=complex)
_Y = np.array([[0, -1j], [1j, 0]])
_Z = np.diag([1.0 + 0j, -1.0])


def _bit_flip(p):
    return [np.sqrt(1 - p) * _I, np.sqrt(p) * _X]


def _phase_flip(p):
    return [np.sqrt(1 - p) * _I, np.sqrt(p) * _Z]


def _depolarizing(p):
    return [np.sqrt(1 - p) * _I] + [np.sqrt(p / 3) * m for m in (_X, _Y, _Z)]


def _amplitude_damping(g):
    return [np.array([[1, 0], [0, np.sqrt(1 - g)]], complex),
            np.array([[0, np.sqrt(g)], [0, 0]], complex)]


def _phase_damping(g):
    return [np.array([[1, 0], [0, np.sqrt(1 - g)]], complex),
            np.array([[0, 0], [0, np.sqrt(g)]], complex)]


_PAULIS = (_I, _X, _Y, _Z)


def _two_qubit_depolarizing(p):
    """√(1-p) I⊗I and √(p/15) P⊗Q for the 15 non-identity Pauli pairs (Nielsen & Chuang 2010,
    §8.3.4; Qiskit's ``depolarizing_error(·, 2)`` convention with p the error probability, so
    p = 15/16 gives the fully mixed state)."""
    return [np.sqrt(1 - p) * np.eye(4, dtype=complex)] + [
        np.sqrt(p / 15) * np.kron(a, b) for i, a in enumerate(_PAULIS)
        for j, b in enumerate(_PAULIS) if i or j]


def _two_qubit_dephasing(p):
    """Correlated dephasing: Z⊗I, I⊗Z, Z⊗Z each with probability p/3 (a two-wire phase flip)."""
    return [np.sqrt(1 - p) * np.eye(4, dtype=complex)] + [
        np.sqrt(p / 3) * np.kron(a, b) for a, b in ((_Z, _I), (_I, _Z), (_Z, _Z))]


#: name -> (strength -> Kraus operators); the strength is a probability or a damping rate in [0, 1].
CHANNELS = {
    "BitFlip": _bit_flip,
    "PhaseFlip": _phase_flip,
    "Depolarizing": _depolarizing,
    "AmplitudeDamping": _amplitude_damping,
    "PhaseDamping": _phase_damping,
    "TwoQubitDepolarizing": _two_qubit_depolarizing,
    "TwoQubitDephasing": _two_qubit_dephasing,
}
#: The number of wires of each named channel (1 unless listed).
CHANNEL_WIRES = {"TwoQubitDepolarizing": 2, "TwoQubitDephasing": 2}
#: The name of a user-given channel (``Circuit.kraus``).
KRAUS = "Kraus"


def check_strength(what: str, p) -> float:
    """A channel strength as float in [0, 1], or a ValueError naming it."""
    if isinstance(p, bool) or not isinstance(p, int | float | np.integer | np.floating):
        raise TypeError(f"{what}: the strength must be a real number in [0, 1]; got "
                        f"{type(p).__name__}.")
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{what}: the strength must be in [0, 1]; got {p!r}.")
    return float(p)


def check_kraus(what: str, ops, n_wires: int = 1) -> list[np.ndarray]:
    """Validate Kraus operators on ``n_wires`` (1 or 2) wires: d×d complex matrices, d = 2**n_wires,
    with ``Σ K†K = I`` (trace preserving; complete positivity holds for any Kraus form).

    Raises:
        ValueError: an empty list, a wrong shape, or ``max |Σ K†K - I| > CPTP_ATOL``.
    """
    d = 1 << n_wires
    try:
        ks = [np.array(k, dtype=np.complex128) for k in ops]
    except TypeError as exc:
        raise TypeError(f"{what}: Kraus operators must be a list of numeric 2×2 arrays.") from exc
    if not ks:
        raise ValueError(f"{what}: needs at least one Kraus operator.")
    for i, k in enumerate(ks):
        if k.shape != (d, d):
            raise ValueError(f"{what}: Kraus operators on {n_wires} wire(s) are {d}×{d}; "
                             f"operator {i} has shape {k.shape}.")
    err = float(np.max(np.abs(sum(k.conj().T @ k for k in ks) - np.eye(d))))
    if not err <= CPTP_ATOL:
        raise ValueError(f"{what}: the Kraus operators are not trace preserving (not CPTP): "
                         f"max |Σ K†K - I| = {err:.3g} (tolerance {CPTP_ATOL:g}).")
    return ks


def superop(ks) -> np.ndarray:
    """``Σ_k K_k ⊗ conj(K_k)``: the action on (row bits, column bits) of vec(ρ) (4×4 for one
    wire, 16×16 on (row w0, row w1, col w0, col w1) for two)."""
    s = sum(np.kron(k, k.conj()) for k in ks)
    s.setflags(write=False)
    return s


def compile_mixed(program):
    """The 2n-qubit program that evolves vec(ρ) for an n-qubit program with channel rows.

    Each gate row becomes a row on the row copy (bits + n) and its complex conjugate on the
    column copy: conj(exp(-iφP/2)) = exp(-i s φ P/2) with ``s = -(-1)**ny`` (eq. N1), and
    conj(exp(iφΠ)) = exp(-iφΠ); both copies read the same θ slot, so the adjoint sweep adds
    both generators' contributions. A ``K_CHAN`` row acts on (bit + n, bit).
    """
    n = program.n_qubits
    kinds, ints, mats, pidx, scale, offset = [], [], [], [], [], []
    data_of_matn = False
    for g in range(program.kinds.size):
        kind = int(program.kinds[g])
        b0, b1, cm, xm, zm, ny = (int(v) for v in program.ints[g])
        if kind == K_MATN:  # U on the row copy, conj U on the column copy, each with its data
            end = g + 1
            while end < program.kinds.size and program.kinds[end] == K_DATA:
                end += 1
            for row in (True, False):
                sh = n if row else 0
                kinds += [K_MATN] + [K_DATA] * (end - g - 1)
                ints += [(0, 0, cm << sh, xm << sh, 0, 0)] + [(0,) * 6] * (end - g - 1)
                mats += [program.mats[g]] + [program.mats[d] if row else program.mats[d].conj()
                                             for d in range(g + 1, end)]
                pidx += [-1] * (end - g)
                scale += [0.0] * (end - g)
                offset += [0.0] * (end - g)
            data_of_matn = True
            continue
        if kind == K_DATA and data_of_matn:
            continue  # emitted with its K_MATN row
        data_of_matn = False
        if kind in (K_CHAN, K_CHAN2, K_DATA):  # channel rows act once, on (row, column) bits
            kinds.append(kind)
            ints.append((b0 + n, b0, 0, 0, 0, 0) if kind == K_CHAN else
                        (b0 + n, b1 + n, b0, b1, 0, 0) if kind == K_CHAN2 else (0,) * 6)
            mats.append(program.mats[g])
            pidx.append(-1)
            scale.append(0.0)
            offset.append(0.0)
            continue
        s = 1.0
        if kind == K_ROT:
            s = -1.0 if ny % 2 == 0 else 1.0
        elif kind == K_PHASE:
            s = -1.0
        conj = kind in (K_MAT1, K_MAT2, K_DIAG)
        for row in (True, False):
            sh = n if row else 0
            kinds.append(kind)
            ints.append((b0 + sh, b1 + sh, cm << sh, xm << sh, zm << sh, ny))
            mats.append(program.mats[g] if row or not conj else program.mats[g].conj())
            pidx.append(program.pidx[g])
            scale.append(program.scale[g] * (1.0 if row else s))
            offset.append(program.offset[g] * (1.0 if row else s))
    g = len(kinds)
    return dataclasses.replace(
        program,
        n_qubits=2 * n,
        kinds=np.array(kinds, np.int64).reshape(g),
        ints=np.array(ints, np.int64).reshape(g, 6),
        mats=np.array(mats, np.complex128).reshape(g, 4, 4),
        pidx=np.array(pidx, np.int64).reshape(g),
        scale=np.array(scale, np.float64).reshape(g),
        offset=np.array(offset, np.float64).reshape(g),
    )


def observable_vectors(obs, n_qubits: int) -> np.ndarray:
    """``h_m`` with ``tr(H_m ρ) = Re⟨h_m, vec(ρ)⟩`` for compiled observables ``(xm, zm, ph)``.

    ``tr(P ρ) = Σ_j i**ny (-1)**popcount(j & z) ρ[j, j ^ x]`` (eq. N2), so ``h_m`` holds the
    conjugate coefficients at the indices ``j·2**n + (j ^ x)``: 2**n entries per term.
    """
    d = 1 << n_qubits
    j = np.arange(d, dtype=np.int64)
    out = np.zeros((len(obs), d * d), np.complex128)
    for m, (xm, zm, ph) in enumerate(obs):
        for x, z, c in zip(xm, zm, ph):
            sign = 1.0 - 2.0 * (np.bitwise_count(j & z) & 1)
            np.add.at(out[m], j * d + (j ^ x), np.conj(c * sign))
    return out
