"""The data model: circuits with parameter slots, Pauli-sum observables, compiled programs.

- :class:`Param` — a reference ``scale * theta[index]`` to a slot of the flat parameter vector.
- :class:`Operation` — one gate of a circuit (frozen).
- :class:`Circuit` — the builder: ``c = Circuit(2); c.rx(0); c.cnot(0, 1)``. Each gate appends a
  frozen :class:`Operation`; an angle left out takes a fresh slot of θ, so the same circuit runs for
  any θ of length ``c.n_params`` and for a batch θ[B, P].
- :class:`Hamiltonian` — a real-weighted sum of Pauli strings (frozen): ``X(0) @ Z(1) + Z(2)``.
- :class:`Program` — a circuit compiled into the flat arrays the kernels run (frozen).

Validation happens here, when a gate or a term is created: wire ranges, repeated wires, angle
counts, unitarity and Pauli-string lengths, each with an error naming the argument.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from numbers import Real
from typing import Any, TypeAlias

import numpy as np

from diffsci.typing import ArrayLike

from ._gates import GATES, ISWAP, Elementary, pauli_masks
from ._kernels import (
    K_CHAN,
    K_CHAN2,
    K_DATA,
    K_MAT1,
    K_MAT2,
    K_MATN,
    K_PHASE,
    K_ROT,
    K_SWAP,
    K_X,
    build_diag,
    soa_rows_ok,
)
from ._noise import (
    CHANNEL_WIRES,
    CHANNELS,
    KRAUS,
    check_kraus,
    check_strength,
    compile_mixed,
    superop,
)

#: The largest register a state vector is allocated for (2**30 amplitudes = 16 GiB).
MAX_QUBITS = 30
#: Tolerance of the unitarity check of user matrices: max |U†U - I|.
UNITARY_ATOL = 1e-8


@dataclass(frozen=True)
class Param:
    """A reference ``scale * theta[index]`` to one slot of a circuit's flat parameter vector.

    Args:
        index: the slot, ``0 <= index``.
        scale: a real factor (``2 * p`` or ``-p`` make scaled references to the same slot).

    Example:
        >>> c = Circuit(2); p = c.new_param()
        >>> c.rz(0, p).rz(1, -2 * p).n_params
        1
    """

    index: int
    scale: float = 1.0

    def __post_init__(self):
        if isinstance(self.index, bool) or not isinstance(self.index, int | np.integer):
            raise TypeError(f"Param.index must be an int; got {type(self.index).__name__}.")
        if self.index < 0:
            raise ValueError(f"Param.index must be >= 0; got {self.index}.")
        if isinstance(self.scale, bool) or not isinstance(self.scale, Real) or not np.isfinite(
                self.scale):
            raise ValueError(f"Param.scale must be a finite real number; got {self.scale!r}.")
        object.__setattr__(self, "scale", float(self.scale))

    def __mul__(self, c):
        if not isinstance(c, Real):
            return NotImplemented
        return Param(self.index, self.scale * float(c))

    __rmul__ = __mul__

    def __neg__(self):
        return Param(self.index, -self.scale)

    def label(self) -> str:
        """``θ3``, ``-θ3``, ``2θ3``."""
        s = self.scale
        pre = "" if s == 1.0 else "-" if s == -1.0 else f"{s:g}"
        return f"{pre}θ{self.index}"


Angle = Param | float


@dataclass(frozen=True, eq=False)
class Operation:
    """One gate of a circuit.

    Args:
        name: a key of the gate table ``quantum._gates.GATES``.
        wires: the target wires.
        controls: every control wire (those a name implies, like CNOT's, and extra ones).
        angles: one :class:`Param` or fixed float per angle of the gate.
        paulis: the Pauli word of a ``PauliRot`` (None otherwise).
        matrix: the unitary of a ``QubitUnitary``, the superoperator of a channel (None
            otherwise).
        kraus: the Kraus operators of a ``Kraus`` channel (None otherwise).
    """

    name: str
    wires: tuple[int, ...]
    controls: tuple[int, ...] = ()
    angles: tuple[Angle, ...] = ()
    paulis: str | None = None
    matrix: np.ndarray | None = None
    kraus: tuple[np.ndarray, ...] | None = None

    def label(self) -> str:
        """The text drawn on the target wires, e.g. ``RX(θ0)``."""
        name = self.name
        if self.paulis is not None:
            name = f"{name}[{self.paulis}]"
        if not self.angles:
            return name
        parts = [a.label() if isinstance(a, Param) else f"{a:.3g}" for a in self.angles]
        return f"{name}({','.join(parts)})"


def _as_wires(what: str, value, arg: str = "wires") -> tuple:
    """One wire (an int) or a sequence of them (tuple, list, 1-d int array) as a tuple; floats,
    bools, strings and None are not wires: a TypeError naming the argument."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_):
        return (value,)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.reshape(1)
    if not isinstance(value, str | bytes) and hasattr(value, "__iter__"):
        return tuple(value)
    raise TypeError(f"{what}: {arg} must be an int wire index or a sequence of them; got "
                    f"{value!r} ({type(value).__name__}).")


def _check_wires(what: str, wires, n_qubits: int, arg: str = "wires") -> tuple[int, ...]:
    out = []
    for w in _as_wires(what, wires, arg):
        if isinstance(w, bool | np.bool_) or not isinstance(w, int | np.integer):
            raise TypeError(f"{what}: {arg} must be int wire indices; got {w!r} "
                            f"({type(w).__name__}) in {arg}={wires!r}.")
        if not 0 <= w < n_qubits:
            raise ValueError(
                f"{what}: wire {int(w)} is out of range for a {n_qubits}-qubit circuit "
                f"(expected 0 <= wire < {n_qubits})."
            )
        out.append(int(w))
    return tuple(out)


def _lookup(table, name, what: str, arg: str):
    """``table[name]``, the name matched exactly or case-insensitively; else a ValueError."""
    if isinstance(name, str):
        if name in table:
            return name
        folded = {k.lower(): k for k in table}
        key = name.strip().lower().replace("_", "")
        for cand in (key, name.strip().lower()):
            if cand in folded:
                return folded[cand]
    raise ValueError(f"{what}: unknown {arg} {name!r}; known: {', '.join(table)}.")


#: An angle argument of a gate method: a number (fixed), a :class:`Param` (a slot of θ, possibly
#: shared and scaled) or None (a fresh slot of θ).
Angle: TypeAlias = "float | Param | None"


class Circuit:
    """A quantum circuit on ``n_qubits`` wires, built gate by gate; parameters are slots of θ.

    Every gate method appends one :class:`Operation` and returns the circuit, so calls chain.
    An angle argument is one of: omitted/None (a fresh slot of θ), a :class:`Param` (a possibly
    shared, scaled slot from :meth:`new_param`), or a number (a fixed angle). Every gate method
    takes ``controls=(...)``: extra control wires, so every gate has multi-controlled versions.
    The circuit is a mutable builder; its gates are frozen :class:`Operation` records, and its
    compiled :attr:`program` is rebuilt when gates are added.

    Args:
        n_qubits: number of wires, 1 <= n_qubits <= MAX_QUBITS.

    Raises:
        ValueError: ``n_qubits`` out of range.

    Example:
        >>> c = Circuit(2).h(0).cnot(0, 1).rz(1)
        >>> c.n_params
        1
        >>> print(c)
        0: ─H──●──────────
        1: ────X──RZ(θ0)──
    """

    def __init__(self, n_qubits: int):
        if isinstance(n_qubits, bool) or not isinstance(n_qubits, int | np.integer):
            raise TypeError(f"Circuit: n_qubits must be an int; got {type(n_qubits).__name__}.")
        if not 1 <= n_qubits <= MAX_QUBITS:
            raise ValueError(
                f"Circuit: n_qubits must be in [1, {MAX_QUBITS}] (a state vector of 2**n complex "
                f"amplitudes); got {n_qubits}."
            )
        self.n_qubits = int(n_qubits)
        self._ops: list[Operation] = []
        self._n_params = 0
        self._program: Program | None = None

    # ------------------------------------------------------------------ bookkeeping
    @property
    def n_params(self) -> int:
        """Length of the flat parameter vector θ."""
        return self._n_params

    @property
    def ops(self) -> tuple[Operation, ...]:
        """The gates, in order."""
        return tuple(self._ops)

    def new_param(self) -> Param:
        """Reserve a fresh slot of θ and return a reference to it (for sharing one angle)."""
        p = Param(self._n_params)
        self._n_params += 1
        return p

    def _angle(self, a) -> Angle:
        if a is None:
            return self.new_param()
        if isinstance(a, Param):
            self._n_params = max(self._n_params, a.index + 1)
            return a
        if isinstance(a, Real | np.floating | np.integer) and not isinstance(a, bool | np.bool_):
            if not np.isfinite(a):
                raise ValueError(f"Circuit: a fixed angle must be finite; got {a!r}.")
            return float(a)
        raise TypeError(
            f"Circuit: an angle must be None (a fresh slot of theta), a Param or a number; got "
            f"{type(a).__name__}. Trainable angles go through theta: expval(circuit, theta, H)."
        )

    def append(self, name: str, wires: int | Sequence[int], angles: Sequence[Angle] | None = None,
               *, controls: Sequence[int] = (), paulis: str | None = None,
               matrix: ArrayLike | None = None) -> Circuit:
        """Append the gate ``name`` (a key of the gate table) and return the circuit.

        Args:
            name: the gate's name, e.g. ``"RX"``, ``"CNOT"``, ``"PauliRot"``.
            wires: the gate's wires; for controlled names (CNOT, CRX, Toffoli, CSWAP) the leading
                ones are the controls, as in ``cnot(control, target)``.
            angles: a sequence with one entry per angle (None entries take fresh slots); None
                for all fresh.
            controls: extra control wires.
            paulis: the Pauli word of ``PauliRot``.
            matrix: the unitary of ``QubitUnitary`` (2**k × 2**k on its k wires, k <= 8).

        Raises:
            ValueError: unknown gate, wrong number of wires or angles, a wire out of range or
                repeated, a non-unitary matrix, a bad Pauli word.
        """
        name = _lookup(GATES, name, "Circuit.append", "gate")
        spec = GATES[name]
        what = f"Circuit.{name}"
        wires = _check_wires(what, wires, self.n_qubits)
        controls = _check_wires(what, controls, self.n_qubits, "controls")
        implied, targets = wires[: spec.base_controls], wires[spec.base_controls :]
        expected = None if spec.n_wires is None else spec.n_wires + spec.base_controls
        if expected is not None and len(wires) != expected:
            raise ValueError(f"{what}: expected {expected} wire(s); got {len(wires)}: {wires}.")
        if not targets:
            raise ValueError(f"{what}: needs at least one target wire; got wires {wires}.")
        every = implied + controls + targets
        if len(set(every)) != len(every):
            raise ValueError(
                f"{what}: wires and controls must be distinct; got wires {wires}, "
                f"controls {controls}."
            )
        if name == "PauliRot":
            if not isinstance(paulis, str) or len(paulis) != len(targets) or any(
                p not in "XYZ" for p in paulis
            ):
                raise ValueError(
                    f"{what}: paulis must be a word over 'XYZ' with one letter per wire "
                    f"({len(targets)}); got {paulis!r}."
                )
        elif paulis is not None:
            raise ValueError(f"{what}: paulis applies to PauliRot only.")
        if name == "QubitUnitary":
            matrix = _check_unitary(what, matrix, len(targets))
        n_angles = spec.n_angles
        if angles is None:
            angles = (None,) * n_angles
        elif not isinstance(angles, tuple | list):
            angles = (angles,)
        if len(angles) != n_angles:
            raise ValueError(f"{what}: expected {n_angles} angle(s); got {len(angles)}.")
        op = Operation(name, targets, implied + controls, tuple(self._angle(a) for a in angles),
                       paulis, matrix)
        self._ops.append(op)
        self._program = None
        return self

    # ------------------------------------------------------------------ one-qubit gates
    def i(self, wire: int, *, controls: Sequence[int] = ()) -> Circuit:
        """Identity (drawn, no work)."""
        return self.append("I", wire, controls=controls)

    def x(self, wire: int, *, controls: Sequence[int] = ()) -> Circuit:
        """Pauli X."""
        return self.append("X", wire, controls=controls)

    def y(self, wire: int, *, controls: Sequence[int] = ()) -> Circuit:
        """Pauli Y."""
        return self.append("Y", wire, controls=controls)

    def z(self, wire: int, *, controls: Sequence[int] = ()) -> Circuit:
        """Pauli Z."""
        return self.append("Z", wire, controls=controls)

    def h(self, wire: int, *, controls: Sequence[int] = ()) -> Circuit:
        """Hadamard."""
        return self.append("H", wire, controls=controls)

    def s(self, wire: int, *, controls: Sequence[int] = ()) -> Circuit:
        """S = diag(1, i)."""
        return self.append("S", wire, controls=controls)

    def sdg(self, wire: int, *, controls: Sequence[int] = ()) -> Circuit:
        """S† = diag(1, -i)."""
        return self.append("Sdg", wire, controls=controls)

    def t(self, wire: int, *, controls: Sequence[int] = ()) -> Circuit:
        """T = diag(1, e^{iπ/4})."""
        return self.append("T", wire, controls=controls)

    def tdg(self, wire: int, *, controls: Sequence[int] = ()) -> Circuit:
        """T† = diag(1, e^{-iπ/4})."""
        return self.append("Tdg", wire, controls=controls)

    def sx(self, wire: int, *, controls: Sequence[int] = ()) -> Circuit:
        """√X."""
        return self.append("SX", wire, controls=controls)

    def sxdg(self, wire: int, *, controls: Sequence[int] = ()) -> Circuit:
        """√X† (the inverse of :meth:`sx`)."""
        return self.append("SXdg", wire, controls=controls)

    def rx(self, wire: int, angle: Angle = None, *, controls: Sequence[int] = ()) -> Circuit:
        """RX(φ) = exp(-iφX/2)."""
        return self.append("RX", wire, (angle,), controls=controls)

    def ry(self, wire: int, angle: Angle = None, *, controls: Sequence[int] = ()) -> Circuit:
        """RY(φ) = exp(-iφY/2)."""
        return self.append("RY", wire, (angle,), controls=controls)

    def rz(self, wire: int, angle: Angle = None, *, controls: Sequence[int] = ()) -> Circuit:
        """RZ(φ) = exp(-iφZ/2)."""
        return self.append("RZ", wire, (angle,), controls=controls)

    def phase(self, wire: int, angle: Angle = None, *, controls: Sequence[int] = ()) -> Circuit:
        """PhaseShift(φ) = diag(1, e^{iφ})."""
        return self.append("PhaseShift", wire, (angle,), controls=controls)

    def u3(self, wire: int, theta: Angle = None, phi: Angle = None, lam: Angle = None, *,
           controls: Sequence[int] = ()) -> Circuit:
        """U3(θ, φ, λ) = PhaseShift(φ) RY(θ) PhaseShift(λ) (OpenQASM's u3)."""
        return self.append("U3", wire, (theta, phi, lam), controls=controls)

    def rot(self, wire: int, phi: Angle = None, theta: Angle = None, omega: Angle = None, *,
            controls: Sequence[int] = ()) -> Circuit:
        """Rot(φ, θ, ω) = RZ(ω) RY(θ) RZ(φ)."""
        return self.append("Rot", wire, (phi, theta, omega), controls=controls)

    # ------------------------------------------------------------------ multi-qubit gates
    def cnot(self, control: int, target: int, *, controls: Sequence[int] = ()) -> Circuit:
        """CNOT (controlled X)."""
        return self.append("CNOT", (control, target), controls=controls)

    def cz(self, control: int, target: int, *, controls: Sequence[int] = ()) -> Circuit:
        """Controlled Z."""
        return self.append("CZ", (control, target), controls=controls)

    def cy(self, control: int, target: int, *, controls: Sequence[int] = ()) -> Circuit:
        """Controlled Y."""
        return self.append("CY", (control, target), controls=controls)

    def toffoli(self, c0: int, c1: int, target: int, *, controls: Sequence[int] = ()) -> Circuit:
        """Toffoli (CCX)."""
        return self.append("Toffoli", (c0, c1, target), controls=controls)

    def swap(self, w0: int, w1: int, *, controls: Sequence[int] = ()) -> Circuit:
        """SWAP."""
        return self.append("SWAP", (w0, w1), controls=controls)

    def cswap(self, control: int, w0: int, w1: int, *, controls: Sequence[int] = ()) -> Circuit:
        """Fredkin (controlled SWAP)."""
        return self.append("CSWAP", (control, w0, w1), controls=controls)

    def iswap(self, w0: int, w1: int, *, controls: Sequence[int] = ()) -> Circuit:
        """iSWAP."""
        return self.append("iSWAP", (w0, w1), controls=controls)

    def crx(self, control: int, target: int, angle: Angle = None, *,
            controls: Sequence[int] = ()) -> Circuit:
        """Controlled RX."""
        return self.append("CRX", (control, target), (angle,), controls=controls)

    def cry(self, control: int, target: int, angle: Angle = None, *,
            controls: Sequence[int] = ()) -> Circuit:
        """Controlled RY."""
        return self.append("CRY", (control, target), (angle,), controls=controls)

    def crz(self, control: int, target: int, angle: Angle = None, *,
            controls: Sequence[int] = ()) -> Circuit:
        """Controlled RZ."""
        return self.append("CRZ", (control, target), (angle,), controls=controls)

    def cphase(self, control: int, target: int, angle: Angle = None, *,
               controls: Sequence[int] = ()) -> Circuit:
        """Controlled PhaseShift: diag(1, 1, 1, e^{iφ})."""
        return self.append("CPhase", (control, target), (angle,), controls=controls)

    def ising_xx(self, w0: int, w1: int, angle: Angle = None, *,
                 controls: Sequence[int] = ()) -> Circuit:
        """IsingXX(φ) = exp(-iφ X⊗X/2)."""
        return self.append("IsingXX", (w0, w1), (angle,), controls=controls)

    def ising_yy(self, w0: int, w1: int, angle: Angle = None, *,
                 controls: Sequence[int] = ()) -> Circuit:
        """IsingYY(φ) = exp(-iφ Y⊗Y/2)."""
        return self.append("IsingYY", (w0, w1), (angle,), controls=controls)

    def ising_zz(self, w0: int, w1: int, angle: Angle = None, *,
                 controls: Sequence[int] = ()) -> Circuit:
        """IsingZZ(φ) = exp(-iφ Z⊗Z/2)."""
        return self.append("IsingZZ", (w0, w1), (angle,), controls=controls)

    def multi_rz(self, wires: int | Sequence[int], angle: Angle = None, *,
                 controls: Sequence[int] = ()) -> Circuit:
        """MultiRZ(φ) = exp(-iφ Z⊗…⊗Z/2)."""
        return self.append("MultiRZ", wires, (angle,), controls=controls)

    def pauli_rot(self, wires: int | Sequence[int], paulis: str, angle: Angle = None, *,
                  controls: Sequence[int] = ()) -> Circuit:
        """PauliRot(φ, P) = exp(-iφP/2) for a Pauli word P over 'XYZ', one letter per wire."""
        return self.append("PauliRot", wires, (angle,), controls=controls, paulis=paulis)

    def unitary(self, wires: Sequence[int], matrix: ArrayLike, *,
                controls: Sequence[int] = ()) -> Circuit:
        """An arbitrary unitary on 1 to MAX_UNITARY_WIRES wires (checked: max |U†U - I| <=
        UNITARY_ATOL); ``matrix`` is 2**k × 2**k on ``wires`` in order, the first the most
        significant."""
        return self.append("QubitUnitary", wires, (), controls=controls, matrix=matrix)

    # ------------------------------------------------------------------ noise channels
    def channel(self, name: str, wire: int, strength: float | None = None, *,
                kraus: Sequence[ArrayLike] | None = None) -> Circuit:
        """Append the noise channel ``name`` (a key of ``quantum._noise.CHANNELS`` or "Kraus").

        A circuit with a channel is simulated as a density matrix (``expval``, ``probs``,
        ``density_matrix``; at most ``MAX_DENSITY_QUBITS`` qubits); channel strengths are fixed.

        Raises:
            ValueError: unknown channel, strength outside [0, 1], Kraus operators that are not
                2×2 (one wire) or 4×4 (two wires) or not trace preserving
                (``max |Σ K†K - I| > CPTP_ATOL``), a named channel on the wrong number of wires
                (``quantum._noise.CHANNEL_WIRES``).
        """
        name = KRAUS if isinstance(name, str) and name.lower() == KRAUS.lower() else _lookup(
            CHANNELS, name, "Circuit.channel", "channel")
        what = f"Circuit.{name}"
        if name == KRAUS:
            ks, angles = None, ()  # checked below, once the number of wires is known
        else:
            p = check_strength(what, strength)
            ks, angles = CHANNELS[name](p), (p,)
        wires = _check_wires(what, wire, self.n_qubits, "wire")
        if len(set(wires)) != len(wires):
            raise ValueError(f"{what}: wires must be distinct; got {wires} (wire repeated).")
        if name == KRAUS:
            if len(wires) not in (1, 2):
                raise ValueError(f"{what}: Kraus channels act on one or two wires; got wires "
                                 f"{wires}.")
        elif len(wires) != CHANNEL_WIRES.get(name, 1):
            raise ValueError(f"{what}: this channel acts on {CHANNEL_WIRES.get(name, 1)} "
                             f"wire(s); got wires {wires}.")
        if name == KRAUS:
            ks = check_kraus(what, kraus, len(wires))
        self._ops.append(Operation(name, wires, (), angles, None, superop(ks),
                                   tuple(ks) if name == KRAUS else None))
        self._program = None
        return self

    def bit_flip(self, wire: int, p: float) -> Circuit:
        """Bit flip: X with probability p."""
        return self.channel("BitFlip", wire, p)

    def phase_flip(self, wire: int, p: float) -> Circuit:
        """Phase flip: Z with probability p."""
        return self.channel("PhaseFlip", wire, p)

    def depolarizing(self, wire: int, p: float) -> Circuit:
        """Depolarising: X, Y, Z each with probability p/3 (p = 3/4: fully mixed)."""
        return self.channel("Depolarizing", wire, p)

    def amplitude_damping(self, wire: int, gamma: float) -> Circuit:
        """Amplitude damping: |1⟩ decays to |0⟩ with probability gamma (T1)."""
        return self.channel("AmplitudeDamping", wire, gamma)

    def phase_damping(self, wire: int, gamma: float) -> Circuit:
        """Phase damping: coherences scaled by √(1 - gamma) (T2)."""
        return self.channel("PhaseDamping", wire, gamma)

    def two_qubit_depolarizing(self, wires: int | Sequence[int], p: float) -> Circuit:
        """Two-qubit depolarising on ``wires`` (a pair): each of the 15 non-identity Pauli pairs
        P⊗Q with probability p/15 (p = 15/16: fully mixed on the pair)."""
        return self.channel("TwoQubitDepolarizing", wires, p)

    def two_qubit_dephasing(self, wires: int | Sequence[int], p: float) -> Circuit:
        """Correlated dephasing on ``wires`` (a pair): Z⊗I, I⊗Z, Z⊗Z each with probability p/3."""
        return self.channel("TwoQubitDephasing", wires, p)

    def kraus(self, wire: int, operators: Sequence[ArrayLike]) -> Circuit:
        """A general channel ρ -> Σ_k K_k ρ K_k† on one wire (2×2 K_k) or two (``wire`` a pair,
        4×4 K_k on (wire[0], wire[1]), wire[0] the most significant); checked CPTP.

        Example: a two-qubit depolarising channel of strength p is
        ``[√(1-p) I⊗I] + [√(p/15) P⊗Q for the 15 non-identity Pauli pairs]``
        (Nielsen & Chuang 2010, §8.3.4).
        """
        return self.channel(KRAUS, wire, kraus=operators)

    @property
    def noisy(self) -> bool:
        """Whether the circuit has a noise channel (and so runs as a density matrix)."""
        return self.program.n_channels > 0

    # ------------------------------------------------------------------ compiled form, drawing
    @property
    def program(self) -> Program:
        """The circuit compiled into kernel arrays (cached until a gate is added)."""
        if self._program is None or self._program.n_params != self._n_params:
            self._program = compile_program(self)
        return self._program

    @property
    def mixed_program(self) -> Program:
        """The 2n-qubit program evolving vec(ρ) (``quantum._noise.compile_mixed``), cached."""
        program = self.program
        if getattr(self, "_mixed", (None,))[0] is not program:
            self._mixed = (program, compile_mixed(program))
        return self._mixed[1]

    # ------------------------------------------------------------------ copy, compose, adjoint
    def copy(self) -> Circuit:
        """A new circuit with the same gates and parameter slots (gates are frozen: shared)."""
        out = Circuit(self.n_qubits)
        out._ops = list(self._ops)
        out._n_params = self._n_params
        return out

    __copy__ = copy

    def compose(self, other: Circuit, *, wires: int | Sequence[int] | None = None,
                shared: bool = False) -> Circuit:
        """A new circuit: this one's gates, then ``other``'s.

        Args:
            other: the circuit appended, on at most as many wires.
            wires: where other's wires go (``wires[k]`` for its wire k; default the same).
            shared: other's slots are this circuit's slots of the same index (e.g. U(θ) then
                U(θ)†); default False: they follow this circuit's, so θ = concat(θ_self,
                θ_other).

        Raises:
            TypeError: other is not a Circuit. ValueError: a wire map of the wrong length,
                repeated or out of range.

        Example:
            >>> c = Circuit(2).ry(0).cnot(0, 1)
            >>> (c + c).n_params, c.compose(c.adjoint(), shared=True).n_params
            (2, 1)
        """
        if not isinstance(other, Circuit):
            raise TypeError(f"Circuit.compose: other must be a Circuit; got "
                            f"{type(other).__name__}.")
        wmap = _check_wires("Circuit.compose", tuple(range(other.n_qubits)) if wires is None
                            else wires, self.n_qubits)
        if len(wmap) != other.n_qubits or len(set(wmap)) != len(wmap):
            raise ValueError(f"Circuit.compose: wires must map other's {other.n_qubits} wire(s) "
                             f"to distinct wires of this {self.n_qubits}-qubit circuit; got "
                             f"{wires!r}.")
        out = self.copy()
        shift = 0 if shared else self._n_params
        for op in other._ops:
            angles = tuple(Param(a.index + shift, a.scale) if isinstance(a, Param) else a
                           for a in op.angles)
            out._ops.append(Operation(op.name, tuple(wmap[w] for w in op.wires),
                                      tuple(wmap[w] for w in op.controls), angles, op.paulis,
                                      op.matrix, op.kraus))
        out._n_params = max(self._n_params, shift + other._n_params)
        return out

    def __add__(self, other):
        if not isinstance(other, Circuit):
            return NotImplemented
        return self.compose(other)

    def adjoint(self) -> Circuit:
        """The inverse circuit U(θ)†: the gates in reverse order, each inverted, on the same slots
        of θ (rotations negate their angles; S, T, SX become S†, T†, SX†; a QubitUnitary its
        conjugate transpose; U3(θ, φ, λ)† = U3(-θ, -λ, -φ), Rot(φ, θ, ω)† = Rot(-ω, -θ, -φ)).

        Raises:
            ValueError: the circuit has noise channels (not invertible).

        Example:
            >>> from quantum import state
            >>> c = Circuit(2).h(0).cnot(0, 1).rz(1)
            >>> round(abs(state(c.compose(c.adjoint(), shared=True), [0.4])[0]), 12)  # |00⟩ back
            1.0
        """
        out = Circuit(self.n_qubits)
        out._n_params = self._n_params
        for k in range(len(self._ops) - 1, -1, -1):
            op = self._ops[k]
            if op.name not in GATES:
                raise ValueError(f"Circuit.adjoint: gate {k} ({op.name}) is a noise channel, "
                                 f"which has no inverse.")
            name, angles, matrix = op.name, tuple(-a for a in op.angles), op.matrix
            name = _INVERSE_NAMES.get(name, name)
            if op.name == "U3":
                angles = (angles[0], angles[2], angles[1])
            elif op.name == "Rot":
                angles = angles[::-1]
            elif op.name == "QubitUnitary":
                matrix = op.matrix.conj().T.copy()
                matrix.setflags(write=False)
            elif op.name == "iSWAP":
                name, matrix = "QubitUnitary", ISWAP_DAGGER
            out._ops.append(Operation(name, op.wires, op.controls, angles, op.paulis, matrix))
        return out

    def __len__(self) -> int:
        return len(self._ops)

    def __str__(self) -> str:
        from ._draw import draw

        return draw(self)

    def __repr__(self) -> str:
        return (f"Circuit(n_qubits={self.n_qubits}, gates={len(self._ops)}, "
                f"n_params={self.n_params})")


#: The most wires a QubitUnitary acts on (a 2**k × 2**k matrix, 4**k / 16 payload rows).
MAX_UNITARY_WIRES = 8


def _check_unitary(what: str, matrix, n_wires: int) -> np.ndarray:
    if not 1 <= n_wires <= MAX_UNITARY_WIRES:
        raise ValueError(f"{what}: arbitrary unitaries act on 1 to {MAX_UNITARY_WIRES} wires; "
                         f"got {n_wires}.")
    try:
        u = np.array(matrix, dtype=np.complex128)
    except TypeError as exc:
        raise TypeError(f"{what}: matrix must be a numeric array; got {type(matrix).__name__}.") \
            from exc
    d = 2**n_wires
    if u.shape != (d, d):
        raise ValueError(f"{what}: matrix must have shape ({d}, {d}) for {n_wires} wire(s); got "
                         f"{u.shape}.")
    err = float(np.max(np.abs(u.conj().T @ u - np.eye(d))))
    if not err <= UNITARY_ATOL:
        raise ValueError(f"{what}: matrix is not unitary: max |U†U - I| = {err:.3g} "
                         f"(tolerance {UNITARY_ATOL:g}).")
    u.setflags(write=False)
    return u


#: Fixed gates whose inverse is another named gate (the rest are self-inverse or rotations).
_INVERSE_NAMES = {"S": "Sdg", "Sdg": "S", "T": "Tdg", "Tdg": "T", "SX": "SXdg", "SXdg": "SX"}
ISWAP_DAGGER = ISWAP.conj().T.copy()
ISWAP_DAGGER.setflags(write=False)


# ---------------------------------------------------------------------------- compiled programs


@dataclass(frozen=True, eq=False)
class Program:
    """A circuit as the flat arrays the kernels run; see ``quantum/_kernels.py`` for the layout.

    Args:
        n_qubits, n_params: register size and length of θ.
        kinds: int64[G] elementary-operation codes.
        ints: int64[G, 6] ``(bit0, bit1, cmask, xmask, zmask, ny)``.
        mats: complex128[G, 4, 4] fixed matrices.
        pidx, scale, offset: the angle of row g is ``scale[g] * θ[pidx[g]] + offset[g]``
            (``pidx[g] = -1``: fixed).
    """

    n_qubits: int
    n_params: int
    kinds: np.ndarray
    ints: np.ndarray
    mats: np.ndarray
    pidx: np.ndarray
    scale: np.ndarray
    offset: np.ndarray

    @property
    def arrays(self) -> tuple[np.ndarray, ...]:
        """``(kinds, ints, mats, pidx, scale, offset)``, the kernels' argument order."""
        return self.kinds, self.ints, self.mats, self.pidx, self.scale, self.offset

    @cached_property
    def n_channels(self) -> int:
        """The number of channel rows (``K_CHAN``/``K_CHAN2``): nonzero for density matrices."""
        return int(np.count_nonzero((self.kinds == K_CHAN) | (self.kinds == K_CHAN2)))

    @cached_property
    def top_rows(self) -> np.ndarray:
        """bool[G]: whether row g touches the top bit (wire 0) — the rows the two-way split
        sweeps (``_kernels.run_forward_split`` ...) run on the whole state."""
        top = 1 << max(self.n_qubits - 1, 0)
        return np.array([bool(m & top) for m in self.touched],
                        dtype=np.bool_).reshape(self.kinds.size)

    @cached_property
    def touched(self) -> tuple[int, ...]:
        """The bit mask each row reads or writes (``_touched``); a ``K_DATA`` row carries its
        ``K_CHAN2`` row's mask, so that every run of rows the split and blocked sweeps cut
        (``top_rows``, ``low_rows``) holds a two-wire channel together with its payload."""
        out = []
        for k, r in zip(self.kinds, self.ints):
            out.append(out[-1] if int(k) == K_DATA and out else _touched(int(k), r))
        return tuple(out)

    def low_rows(self, bits: int) -> np.ndarray:
        """bool[G]: whether row g touches only bits below ``bits`` (the rows the cache-blocked
        sweep ``_kernels.adjoint_sweep_tiled`` runs block by block); cached per ``bits``."""
        cache = self.__dict__.setdefault("_low_rows", {})
        if bits not in cache:
            mask = ~((1 << bits) - 1)
            cache[bits] = np.array([not (m & mask) for m in self.touched],
                                   dtype=np.bool_).reshape(self.kinds.size)
        return cache[bits]

    @cached_property
    def adjoint(self) -> Program:
        """The same circuit in the row order the adjoint sweep fuses best (``_attach_cnots``:
        each CNOT's target rotations just before it, eq. A10); ``self`` for density-matrix
        programs. The forward pass keeps ``self``'s order."""
        if self.n_channels:
            return self
        order = _attach_cnots(self.kinds, self.ints)
        if order == list(range(self.kinds.size)):
            return self
        return Program(self.n_qubits, self.n_params, *(a[order] for a in self.arrays))

    @cached_property
    def soa_ok(self) -> bool:
        """Whether every row is a one-wire rotation or a single-control CNOT: the programs the
        split-complex adjoint sweep runs (``_kernels.adjoint_sweep_soa``, eq. A11)."""
        return bool(soa_rows_ok(self.kinds, self.ints))

    def with_offsets(self, offset: np.ndarray) -> Program:
        """The same program with other fixed offsets (parameter shift)."""
        return Program(self.n_qubits, self.n_params, self.kinds, self.ints, self.mats, self.pidx,
                       self.scale, offset)


#: How far back ``_pair_rotations`` looks for a partner rotation (keeps compilation linear).
PAIR_WINDOW = 64


def _touched(kind: int, row) -> int:
    """The bit mask a program row reads or writes, by kind (a ``K_DATA`` row touches nothing
    itself: ``Program.touched`` gives it its ``K_CHAN2`` row's mask)."""
    b0, b1, cmask, xmask, zmask, _ = (int(v) for v in row)
    if kind == K_ROT:
        return xmask | zmask | cmask
    if kind == K_PHASE:
        return cmask
    if kind in (K_MAT2, K_SWAP, K_CHAN):  # K_CHAN: (row bit, column bit)
        return (1 << b0) | (1 << b1) | cmask
    if kind == K_CHAN2:  # (row w0, row w1, column w0, column w1)
        return (1 << b0) | (1 << b1) | (1 << cmask) | (1 << xmask)
    if kind == K_MATN:  # the target mask and the controls
        return xmask | cmask
    if kind == K_DATA:
        return 0
    return (1 << b0) | cmask


def _rot1_bit(kind: int, row) -> int:
    """The bit of an uncontrolled one-wire rotation row (RX, RY, RZ), else 0."""
    one = row[3] | row[4]
    return one if kind == K_ROT and row[2] == 0 and one and not one & (one - 1) else 0


def _pair_rotations(kinds, ints) -> list[int]:
    """A row order that puts two one-wire rotations on the same wire side by side.

    A one-wire uncontrolled rotation commutes with every operation on other wires, so it may
    move back past them to just after an earlier unpaired rotation on its wire (searching at
    most ``PAIR_WINDOW`` rows back). The kernels then apply such a pair in one pass
    (``run_forward``) and take both adjoint steps in one pass (``adjoint_sweep``). Every other
    row keeps its relative order.
    """
    out: list[int] = []
    paired: set[int] = set()
    for i, (kind, row) in enumerate(zip(kinds, ints)):
        bit = _rot1_bit(kind, row)
        partner = None
        for pos in range(len(out) - 1, max(-1, len(out) - 1 - PAIR_WINDOW), -1):
            j = out[pos] if bit else None
            if j is None:
                break
            if _rot1_bit(kinds[j], ints[j]) == bit and j not in paired:
                partner = pos
                break
            if _touched(kinds[j], ints[j]) & bit:
                break
        if partner is None:
            out.append(i)
        else:
            out.insert(partner + 1, i)
            paired.update((i, out[partner]))
    return out


def _cnot_target(kind: int, row) -> int:
    """The target bit mask of a CNOT row whose control bit is above its target, else 0."""
    cmask = row[2]
    single = cmask and not cmask & (cmask - 1)
    return 1 << row[0] if kind == K_X and single and cmask > 1 << row[0] else 0


def _attach_cnots(kinds, ints) -> list[int]:
    """A row order with the one-wire rotations on each CNOT's target moved to just before it.

    A rotation commutes with every operation on other wires, so the last rotation (or adjacent
    pair, see ``_pair_rotations``) on a CNOT's target may move forward past them to just before
    the CNOT (searching at most ``PAIR_WINDOW`` rows back). The backward sweep then un-applies the
    CNOT and takes the rotations' adjoint steps in one pass (``adjoint_sweep``, eq. A10); in a
    hardware-efficient layer every CNOT of the ladder absorbs its target's RY·RZ pair. Only for
    CNOTs whose control bit is above the target bit (the kernels' fused form).
    """
    out: list[int] = []
    attached: set[int] = set()
    for i, (kind, row) in enumerate(zip(kinds, ints)):
        bit = _cnot_target(kind, row)
        pos = len(out) - 1
        while bit and pos >= max(0, len(out) - PAIR_WINDOW):
            j = out[pos]
            if _rot1_bit(kinds[j], ints[j]) == bit:
                break
            if _touched(kinds[j], ints[j]) & bit:
                pos = -1
                break
            pos -= 1
        else:
            pos = -1
        if bit and pos >= 0 and out[pos] not in attached:
            start = pos
            if pos > 0 and _rot1_bit(kinds[out[pos - 1]], ints[out[pos - 1]]) == bit:
                start = pos - 1  # the pair's first row
            group = out[start:pos + 1]
            del out[start:pos + 1]
            out.extend(group)
            attached.update(group)
        out.append(i)
    return out


def _matn_rows(matrix: np.ndarray, wires, n: int, cmask: int):
    """The K_MATN row and its K_DATA rows of a k-qubit matrix on ``wires`` (k >= 3): the matrix
    permuted so that local index bit t is the t-th lowest target bit (the wires sorted: the
    first the most significant), its entries row-major, 16 per 4×4 K_DATA slot."""
    k = len(wires)
    order = np.argsort(wires)  # ascending wires = descending bits: the kernel's local order
    u = np.asarray(matrix).reshape((2,) * (2 * k)).transpose(
        list(order) + [k + i for i in order]).reshape(1 << k, 1 << k)
    flat = u.reshape(-1)
    tmask = sum(1 << (n - 1 - w) for w in wires)
    rows = (flat.size + 15) // 16
    data = np.zeros((rows, 16), np.complex128)
    data.reshape(-1)[: flat.size] = flat
    kinds = [K_MATN] + [K_DATA] * rows
    ints = [(0, 0, cmask, tmask, 0, 0)] + [(0,) * 6] * rows
    mats = [np.zeros((4, 4), np.complex128)] + [r.reshape(4, 4) for r in data]
    return kinds, ints, mats


def compile_program(circuit: Circuit) -> Program:
    """Compile a circuit's gates into a :class:`Program` of elementary operations."""
    n = circuit.n_qubits
    kinds, ints, mats, pidx, scale, offset = [], [], [], [], [], []
    for op in circuit.ops:
        bits = tuple(n - 1 - w for w in op.wires)
        cmask = sum(1 << (n - 1 - c) for c in op.controls)
        if op.name in GATES:
            elementary = GATES[op.name].build(bits, op.paulis)
        elif len(bits) == 1:  # a channel: its superoperator, run by the density-matrix program
            elementary = [Elementary(K_CHAN, bits, matrix=op.matrix)]
        else:  # a two-wire channel: a K_CHAN2 row, then its 16×16 superoperator in 16 K_DATA rows
            elementary = [Elementary(K_CHAN2, bits)] + [
                Elementary(K_DATA, (0,), matrix=row.reshape(4, 4)) for row in op.matrix]
        if elementary and elementary[0].kind == K_MATN:  # a K_MATN row, then its 4**k entries
            kinds_, ints_, mats_ = _matn_rows(op.matrix, op.wires, n, cmask)
            kinds += kinds_
            ints += ints_
            mats += mats_
            pidx += [-1] * len(kinds_)
            scale += [0.0] * len(kinds_)
            offset += [0.0] * len(kinds_)
            continue
        for e in elementary:
            m = np.zeros((4, 4), np.complex128)
            mat = op.matrix if e.kind in (K_MAT1, K_MAT2) and e.matrix is None else e.matrix
            if mat is not None:
                m[: mat.shape[0], : mat.shape[1]] = mat
            mask = cmask | (1 << e.bits[0]) if e.kind == K_PHASE else cmask
            b1 = e.bits[1] if len(e.bits) > 1 else 0
            kinds.append(e.kind)
            ints.append((e.bits[0], b1, mask, e.xmask, e.zmask, e.ny))
            mats.append(m)
            a = None if e.angle is None else op.angles[e.angle]  # channels: angle None
            if isinstance(a, Param):
                pidx.append(a.index)
                scale.append(a.scale)
                offset.append(0.0)
            else:
                pidx.append(-1)
                scale.append(0.0)
                offset.append(0.0 if a is None else float(a))
    if K_CHAN not in kinds and K_CHAN2 not in kinds:
        order = _pair_rotations(kinds, ints)
        kinds, ints, mats, pidx, scale, offset = (
            [col[i] for i in order] for col in (kinds, ints, mats, pidx, scale, offset))
    g = len(kinds)
    return Program(
        n_qubits=n,
        n_params=circuit.n_params,
        kinds=np.array(kinds, np.int64).reshape(g),
        ints=np.array(ints, np.int64).reshape(g, 6),
        mats=np.array(mats, np.complex128).reshape(g, 4, 4),
        pidx=np.array(pidx, np.int64).reshape(g),
        scale=np.array(scale, np.float64).reshape(g),
        offset=np.array(offset, np.float64).reshape(g),
    )


# ---------------------------------------------------------------------------- observables

Term = tuple[float, str, tuple[int, ...]]


@dataclass(frozen=True)
class Hamiltonian:
    """A real-weighted sum of Pauli strings, ``Σ_k c_k P_k``; applied term by term, never dense.

    Args:
        terms: ``(coeff, word, wires)`` triples: a real coefficient, a word over ``"IXYZ"`` and one
            wire per letter (identity letters are dropped; ``("", ())`` is the constant term).

    Raises:
        ValueError: a word with letters other than IXYZ, a length different from its wires', a
            repeated or negative wire, a complex coefficient.

    Example:
        >>> H = -1.0 * Z(0) @ Z(1) + 0.5 * X(0)
        >>> H.terms
        ((-1.0, 'ZZ', (0, 1)), (0.5, 'X', (0,)))
    """

    terms: tuple[Term, ...] = field(default=())

    def __post_init__(self):
        clean = []
        for t in self.terms:
            if not (isinstance(t, tuple | list) and len(t) == 3):
                raise ValueError(f"Hamiltonian: a term must be (coeff, word, wires); got {t!r}.")
            c, word, wires = t
            if isinstance(c, complex | np.complexfloating):
                if c.imag != 0:
                    raise ValueError(f"Hamiltonian: coefficients must be real (Hermitian "
                                     f"observable); got {c!r}.")
                c = c.real
            if isinstance(c, bool) or not isinstance(c, Real | np.floating | np.integer) \
                    or not np.isfinite(c):
                raise ValueError(f"Hamiltonian: a coefficient must be a finite real number; got "
                                 f"{c!r}.")
            wires = _as_wires("Hamiltonian", wires)
            if not isinstance(word, str) or any(p not in "IXYZ" for p in word):
                raise ValueError(f"Hamiltonian: a Pauli word is a str over 'IXYZ'; got {word!r}.")
            if len(word) != len(wires):
                raise ValueError(f"Hamiltonian: Pauli word {word!r} has {len(word)} letter(s) but "
                                 f"{len(wires)} wire(s) {wires}.")
            if any(isinstance(w, bool) or not isinstance(w, int | np.integer) or w < 0
                   for w in wires) or len(set(wires)) != len(wires):
                raise ValueError(f"Hamiltonian: wires must be distinct ints >= 0; got {wires}.")
            keep = [(p, int(w)) for p, w in zip(word, wires) if p != "I"]
            clean.append((float(c), "".join(p for p, _ in keep), tuple(w for _, w in keep)))
        object.__setattr__(self, "terms", tuple(clean))

    @cached_property
    def n_wires(self) -> int:
        """1 + the largest wire any term touches (0 for a constant); computed once."""
        return 1 + max((max(w) for _, _, w in self.terms if w), default=-1)

    def __add__(self, other):
        if isinstance(other, Real):
            other = Hamiltonian(((float(other), "", ()),))
        if not isinstance(other, Hamiltonian):
            return NotImplemented
        return Hamiltonian(self.terms + other.terms)

    __radd__ = __add__

    def __neg__(self):
        return -1.0 * self

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, c):
        if not isinstance(c, Real):
            return NotImplemented
        return Hamiltonian(tuple((float(c) * k, w, q) for k, w, q in self.terms))

    __rmul__ = __mul__

    def __matmul__(self, other):
        """Tensor product of Pauli sums on disjoint wires."""
        if not isinstance(other, Hamiltonian):
            return NotImplemented
        out = []
        for c1, w1, q1 in self.terms:
            for c2, w2, q2 in other.terms:
                if set(q1) & set(q2):
                    raise ValueError(f"Hamiltonian @: the factors share wires {set(q1) & set(q2)}; "
                                     "products of Paulis on one wire are not supported.")
                out.append((c1 * c2, w1 + w2, q1 + q2))
        return Hamiltonian(tuple(out))

    def matrix(self, n_qubits: int | None = None, *, sparse: bool = False) -> Any:
        """The 2**n × 2**n matrix of the observable (for checks and exact small-system work; the
        simulator itself never builds it): a ``scipy.sparse`` CSR matrix with ``sparse=True``
        (one entry per term and column, eq. P1), else a dense complex array.

        Args:
            n_qubits: the register (default 1 + the largest wire, at least 1).
            sparse: return a CSR matrix (up to MAX_SPARSE_QUBITS) instead of a dense array (up
                to MAX_DENSE_QUBITS).

        Raises:
            ValueError: n_qubits below the observable's wires or above the limit.

        Example:
            >>> (Z(0) @ Z(1)).matrix().real.diagonal()
            array([ 1., -1., -1.,  1.])
        """
        n = max(self.n_wires, 1) if n_qubits is None else n_qubits
        limit = MAX_SPARSE_QUBITS if sparse else MAX_DENSE_QUBITS
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or not (
                max(self.n_wires, 1) <= n <= limit):
            raise ValueError(f"Hamiltonian.matrix: n_qubits must be an int in "
                             f"[{max(self.n_wires, 1)}, {limit}] ({'sparse' if sparse else 'dense'}"
                             f"); got {n_qubits!r}.")
        from scipy import sparse as sp

        dim = 1 << int(n)
        j = np.arange(dim, dtype=np.int64)
        xm, zm, ph = _compile_terms(self, int(n))
        if xm.size == 0:
            m = sp.csr_matrix((dim, dim), dtype=np.complex128)
        else:
            rows = np.concatenate([j ^ x for x in xm])
            vals = np.concatenate([c * (1.0 - 2.0 * (np.bitwise_count(j & z) & 1))
                                   for z, c in zip(zm, ph)])
            m = sp.csr_matrix((vals, (rows, np.tile(j, xm.size))), shape=(dim, dim))
        return m if sparse else m.toarray()

    def __str__(self):
        parts = [f"{c:+g}·" + ("".join(f"{p}{w}" for p, w in zip(word, q)) or "I")
                 for c, word, q in self.terms]
        return " ".join(parts) or "0"


#: Size limits of :meth:`Hamiltonian.matrix` (a dense 2**14 matrix is 4 GiB).
MAX_DENSE_QUBITS = 13
MAX_SPARSE_QUBITS = 26


def ground_state(H: Hamiltonian, n_qubits: int | None = None) -> tuple[float, np.ndarray]:
    """The exact ground energy and a ground state of an observable on a small register.

    Dense ``numpy.linalg.eigh`` up to 10 qubits, the sparse Lanczos solver
    ``scipy.sparse.linalg.eigsh`` (smallest algebraic eigenvalue) above, up to
    ``MAX_SPARSE_QUBITS``. For VQE targets and checks.

    Args:
        H: the observable. n_qubits: the register (default 1 + the largest wire).

    Returns:
        ``(energy, psi)``: the smallest eigenvalue and a unit eigenvector (wire 0 the most
        significant bit, as :func:`quantum.state`); for a degenerate ground space, one vector of
        it.

    Raises:
        TypeError: H is not a Hamiltonian. ValueError: n_qubits out of range.

    Example:
        >>> round(ground_state(heisenberg(4))[0], 10)   # the paper's VQE target
        -8.0
    """
    if not isinstance(H, Hamiltonian):
        raise TypeError(f"ground_state: H must be a quantum.Hamiltonian; got "
                        f"{type(H).__name__}.")
    n = max(H.n_wires, 1) if n_qubits is None else n_qubits
    if n is not None and isinstance(n, int | np.integer) and n <= 10:
        w, v = np.linalg.eigh(H.matrix(n))
        return float(w[0]), v[:, 0]
    from scipy.sparse.linalg import eigsh

    m = H.matrix(n, sparse=True)
    w, v = eigsh(m, k=1, which="SA", tol=1e-12)
    return float(w[0]), v[:, 0] / np.linalg.norm(v[:, 0])


def X(wire: int) -> Hamiltonian:
    """Pauli X on one wire, as an observable."""
    return Hamiltonian(((1.0, "X", (wire,)),))


def Y(wire: int) -> Hamiltonian:
    """Pauli Y on one wire, as an observable."""
    return Hamiltonian(((1.0, "Y", (wire,)),))


def Z(wire: int) -> Hamiltonian:
    """Pauli Z on one wire, as an observable."""
    return Hamiltonian(((1.0, "Z", (wire,)),))


def pauli(word: str, wires: Sequence[int], coeff: float = 1.0) -> Hamiltonian:
    """One weighted Pauli string, e.g. ``pauli("XZY", (0, 2, 3))``."""
    return Hamiltonian(((coeff, word, tuple(wires)),))


def _bonds(n: int, periodic: bool) -> list[tuple[int, int]]:
    bonds = [(i, i + 1) for i in range(n - 1)]
    if periodic and n > 2:
        bonds.append((n - 1, 0))
    return bonds


def tfim(n: int, J: float = 1.0, h: float = 1.0, periodic: bool = False) -> Hamiltonian:
    """Transverse-field Ising chain ``H = -J Σ Z_i Z_{i+1} - h Σ X_i``.

    Args:
        n: number of sites (wires 0..n-1).
        J, h: coupling and transverse field.
        periodic: add the bond (n-1, 0).

    Reference: Sachdev, *Quantum Phase Transitions* (2011), eq. (5.1).
    """
    terms = [(-J, "ZZ", b) for b in _bonds(n, periodic)] + [(-h, "X", (i,)) for i in range(n)]
    return Hamiltonian(tuple(terms))


def heisenberg(n: int, J: float = 1.0, jz: float | None = None, periodic: bool = True,
               ) -> Hamiltonian:
    """Heisenberg XXZ chain ``H = Σ_bonds J (X X + Y Y) + jz Z Z`` (XXX when ``jz`` is None).

    With Pauli operators and ``J = 1`` the 4-site periodic antiferromagnet has ground energy -8
    (-2 per site), the paper's VQE target (Innes et al. 2019, §5.2).

    Args:
        n: number of sites.
        J: XY coupling (positive: antiferromagnetic).
        jz: ZZ coupling (default J).
        periodic: add the bond (n-1, 0).
    """
    jz = J if jz is None else jz
    terms = []
    for b in _bonds(n, periodic):
        terms += [(J, "XX", b), (J, "YY", b), (jz, "ZZ", b)]
    return Hamiltonian(tuple(terms))


def maxcut(edges: Sequence[tuple[int, int]],
           weights: Sequence[float] | None = None) -> Hamiltonian:
    """MaxCut cost ``C = Σ_(i,j) w_ij (Z_i Z_j - 1) / 2``; its minimum is minus the largest cut.

    Reference: Farhi, Goldstone & Gutmann, arXiv:1411.4028 (2014), eq. (2) (sign flipped so that
    minimising C maximises the cut).
    """
    edges = [tuple(e) for e in edges]
    weights = [1.0] * len(edges) if weights is None else [float(w) for w in weights]
    if len(weights) != len(edges):
        raise ValueError(f"maxcut: {len(edges)} edges but {len(weights)} weights.")
    terms = []
    for (i, j), w in zip(edges, weights):
        terms += [(0.5 * w, "ZZ", (i, j)), (-0.5 * w, "", ())]
    return Hamiltonian(tuple(terms))


class CompiledObservable(tuple):
    """``(xmask, zmask, phase)`` term arrays of a Hamiltonian on n qubits, and its fused form.

    A tuple of the three arrays (so ``xm, zm, ph = obs`` works), with :attr:`fused`: the
    arguments ``(diag, gx, gstart, tz, tph)`` of the fused kernels (``_kernels.fused_expval``,
    eq. P2 of ``DERIVATIONS.md``), built on first use and kept.
    """

    def __new__(cls, xm, zm, ph, n_qubits: int):
        self = super().__new__(cls, (xm, zm, ph))
        self.n_qubits = n_qubits
        self._fused = None
        return self

    @property
    def fused(self) -> tuple[np.ndarray, ...]:
        """``(diag, gx, gstart, tz, tph)``: the Z-type terms summed into one real diagonal
        (``diag`` empty when there are none), the other terms grouped by flip mask."""
        if self._fused is None:
            xm, zm, ph = self
            zt = xm == 0
            diag = np.empty(0)
            if np.any(zt):
                diag = np.empty(1 << self.n_qubits)
                build_diag(diag, zm[zt], ph[zt].real)  # Z-type terms have ny = 0: real phases
            order = np.argsort(xm[~zt], kind="stable")
            gxs, tz, tph = xm[~zt][order], zm[~zt][order], ph[~zt][order]
            gx, start = np.unique(gxs, return_index=True)
            gstart = np.append(start, gxs.size).astype(np.int64)
            self._fused = (diag, gx.astype(np.int64), gstart, tz, tph)
        return self._fused


@lru_cache(maxsize=64)
def _compile_terms(H: Hamiltonian, n_qubits: int) -> CompiledObservable:
    k = len(H.terms)
    xm = np.zeros(k, np.int64)
    zm = np.zeros(k, np.int64)
    ph = np.zeros(k, np.complex128)
    for t, (c, word, wires) in enumerate(H.terms):
        x, z, ny = pauli_masks(word, tuple(n_qubits - 1 - w for w in wires))
        xm[t], zm[t], ph[t] = x, z, c * (1j) ** ny
    return CompiledObservable(xm, zm, ph, n_qubits)


def compile_observable(H: Hamiltonian, n_qubits: int, what: str = "observable"):
    """The :class:`CompiledObservable` ``(xmask, zmask, phase)`` of a Hamiltonian on n qubits.

    ``phase[k] = coeff_k * i**ny_k`` so that term k acts as ``phase[k] * (-1)**popcount(src & z)``
    on the amplitude ``src = j ^ xmask[k]``. Compiled forms are cached per (H, n_qubits), so a
    training loop builds the fused diagonal once.

    Raises:
        TypeError: H is not a Hamiltonian.
        ValueError: a term touches a wire >= n_qubits.
    """
    if not isinstance(H, Hamiltonian):
        raise TypeError(f"{what} must be a quantum.Hamiltonian (e.g. Z(0) @ Z(1)); got "
                        f"{type(H).__name__}.")
    if H.n_wires > n_qubits:
        raise ValueError(f"{what} acts on wire {H.n_wires - 1} but the circuit has {n_qubits} "
                         f"qubit(s).")
    return _compile_terms(H, n_qubits)
