"""OpenQASM 2 import and export for the supported gate set (``qelib1.inc`` names).

- :func:`to_qasm` writes a circuit at given parameters (angles as multiples of pi where exact).
- :func:`from_qasm` reads a program into a circuit whose every angle is a fresh slot of θ,
  returned with its values, so an imported circuit is trainable at once.

The table :data:`QELIB1` maps a qelib1 name to ``(gate, implied controls)`` of ``quantum._gates``;
export inverts it after counting a gate's controls (a CNOT with one extra control is ``ccx``).
Reference: Cross, Bishop, Smolin & Gambetta, *Open Quantum Assembly Language*, arXiv:1707.03429
(2017), §3 and Appendix A (qelib1.inc).
"""

from __future__ import annotations

import ast
import math
import operator
import re
from fractions import Fraction

import numpy as np

from ._model import Circuit, Param

#: qelib1 name -> (our gate name, its number of angles). Controls are the leading qubits.
QELIB1: dict[str, tuple[str, int]] = {
    "id": ("I", 0), "x": ("X", 0), "y": ("Y", 0), "z": ("Z", 0), "h": ("H", 0),
    "s": ("S", 0), "sdg": ("Sdg", 0), "t": ("T", 0), "tdg": ("Tdg", 0), "sx": ("SX", 0),
    "rx": ("RX", 1), "ry": ("RY", 1), "rz": ("RZ", 1), "p": ("PhaseShift", 1),
    "u1": ("PhaseShift", 1), "u3": ("U3", 3), "u": ("U3", 3), "U": ("U3", 3),
    "cx": ("CNOT", 0), "CX": ("CNOT", 0), "cy": ("CY", 0), "cz": ("CZ", 0),
    "swap": ("SWAP", 0), "ccx": ("Toffoli", 0), "cswap": ("CSWAP", 0),
    "crx": ("CRX", 1), "cry": ("CRY", 1), "crz": ("CRZ", 1), "cu1": ("CPhase", 1),
    "cp": ("CPhase", 1), "rxx": ("IsingXX", 1), "ryy": ("IsingYY", 1), "rzz": ("IsingZZ", 1),
}
#: (our gate name, total number of controls) -> the qelib1 name written by :func:`to_qasm`.
EXPORT: dict[tuple[str, int], str] = {
    ("I", 0): "id", ("X", 0): "x", ("Y", 0): "y", ("Z", 0): "z", ("H", 0): "h", ("S", 0): "s",
    ("Sdg", 0): "sdg", ("T", 0): "t", ("Tdg", 0): "tdg", ("SX", 0): "sx", ("RX", 0): "rx",
    ("RY", 0): "ry", ("RZ", 0): "rz", ("PhaseShift", 0): "p", ("U3", 0): "u3",
    ("X", 1): "cx", ("Y", 1): "cy", ("Z", 1): "cz", ("SWAP", 0): "swap", ("X", 2): "ccx",
    ("SWAP", 1): "cswap", ("RX", 1): "crx", ("RY", 1): "cry", ("RZ", 1): "crz",
    ("PhaseShift", 1): "cu1", ("IsingXX", 0): "rxx", ("IsingYY", 0): "ryy", ("IsingZZ", 0): "rzz",
}
#: Names whose implied controls are folded into the base gate for :data:`EXPORT`.
_BASE = {"CNOT": "X", "CY": "Y", "CZ": "Z", "Toffoli": "X", "CSWAP": "SWAP", "CRX": "RX",
         "CRY": "RY", "CRZ": "RZ", "CPhase": "PhaseShift"}
#: Statements read and ignored (they do not change the state).
IGNORED = ("barrier", "measure", "creg")
#: Statements that are valid OpenQASM 2 but not supported here.
UNSUPPORTED = ("reset", "if", "gate", "opaque")

_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
        ast.Div: operator.truediv, ast.Pow: operator.pow, ast.USub: operator.neg,
        ast.UAdd: operator.pos}
_FUNCS = {"sin": math.sin, "cos": math.cos, "tan": math.tan, "exp": math.exp, "ln": math.log,
          "sqrt": math.sqrt}


def _format_angle(a: float) -> str:
    """``pi/2``, ``-3*pi/4``, ``0`` where a is a small rational multiple of pi, else repr."""
    f = Fraction(a / math.pi).limit_denominator(64)
    if abs(float(f) * math.pi - a) > 1e-12:
        return repr(float(a))
    if f == 0:
        return "0"
    num = {1: "", -1: "-"}.get(f.numerator, f"{f.numerator}*")
    return f"{num}pi" + ("" if f.denominator == 1 else f"/{f.denominator}")


def to_qasm(circuit: Circuit, theta=None) -> str:
    """The circuit as an OpenQASM 2.0 program at parameters θ.

    Args:
        circuit: the circuit (gates of :data:`EXPORT` only; no noise channels).
        theta: parameters, shape (P,); may be omitted for a circuit without parameters.

    Returns:
        The program text: header, ``qreg q[n];`` and one statement per gate (Rot as rz, ry, rz).

    Raises:
        ValueError: theta's shape; a gate or control count with no qelib1 name (iSWAP,
            MultiRZ, PauliRot, QubitUnitary, a channel), naming the gate and its position.

    Example:
        >>> print(to_qasm(Circuit(2).h(0).cnot(0, 1).rz(1, np.pi / 2)))
        OPENQASM 2.0;
        include "qelib1.inc";
        qreg q[2];
        h q[0];
        cx q[0],q[1];
        rz(pi/2) q[1];
    """
    if not isinstance(circuit, Circuit):
        raise TypeError(f"to_qasm: circuit must be a quantum.Circuit; got "
                        f"{type(circuit).__name__}.")
    p = circuit.n_params
    theta = np.zeros(0) if theta is None else np.asarray(theta, np.float64)
    if theta.shape != (p,):
        raise ValueError(f"to_qasm: theta must have shape ({p},) for a circuit with {p} "
                         f"parameter(s); got shape {theta.shape}.")
    if not np.isfinite(theta).all():
        raise ValueError(f"to_qasm: theta must be finite; got {theta.tolist()}.")
    lines = ["OPENQASM 2.0;", 'include "qelib1.inc";', f"qreg q[{circuit.n_qubits}];"]
    for k, op in enumerate(circuit.ops):
        angles = [theta[a.index] * a.scale if isinstance(a, Param) else a for a in op.angles]
        qubits = op.controls + op.wires
        if op.name == "Rot":  # RZ(ω) RY(θ) RZ(φ): applied rz(φ), ry(θ), rz(ω)
            parts = [("RZ", angles[0]), ("RY", angles[1]), ("RZ", angles[2])]
        else:
            parts = [(_BASE.get(op.name, op.name), *angles)]
        for base, *args in parts:
            name = EXPORT.get((base, len(op.controls)))
            if name is None:
                what = f"{op.name} with {len(op.controls)} control(s)" if op.controls else op.name
                raise ValueError(f"to_qasm: gate {k} ({what}) has no OpenQASM 2 qelib1 "
                                 f"equivalent; supported: {', '.join(sorted(set(QELIB1)))}.")
            arg = f"({','.join(_format_angle(float(a)) for a in args)})" if args else ""
            lines.append(f"{name}{arg} " + ",".join(f"q[{w}]" for w in qubits) + ";")
    return "\n".join(lines) + "\n"


def _eval(node, line: int):
    if isinstance(node, ast.Expression):
        return _eval(node.body, line)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.Name) and node.id == "pi":
        return math.pi
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left, line), _eval(node.right, line))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.operand, line))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCS and len(node.args) == 1):
        return _FUNCS[node.func.id](_eval(node.args[0], line))
    raise ValueError(f"from_qasm: line {line}: unsupported parameter expression "
                     f"{ast.unparse(node)!r} (numbers, pi, + - * / ^, sin cos tan exp ln sqrt).")


def _angle(text: str, line: int) -> float:
    try:
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"from_qasm: line {line}: cannot parse the parameter {text!r}.") from exc
    return _eval(tree, line)


_GATE_RE = re.compile(r"^([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*(.*)$", re.S)
_ARG_RE = re.compile(r"^([A-Za-z_]\w*)\s*(?:\[\s*(\d+)\s*\])?$")


def from_qasm(text: str, *, trainable: bool = True) -> tuple[Circuit, np.ndarray]:
    """Read an OpenQASM 2.0 program into a circuit.

    Supports ``qreg`` (several registers are laid out one after another), the gates of
    :data:`QELIB1` with parameter expressions of pi, and register broadcasting (``h q;``,
    ``cx a,b;`` over equal-size registers). ``barrier``, ``measure`` and ``creg`` are ignored.

    Args:
        text: the program.
        trainable: give every angle its own slot of θ (default); False: fixed angles.

    Returns:
        ``(circuit, theta)``: θ holds the file's angles (empty when ``trainable=False``).

    Raises:
        ValueError: a missing ``OPENQASM 2.x`` header, an unknown gate, an unsupported statement
            (``reset``, ``if``, ``gate``, ``opaque``), a bad argument or expression, a qubit out
            of range — each naming the line.

    Example:
        >>> c, theta = from_qasm('OPENQASM 2.0; include "qelib1.inc"; qreg q[1]; rx(pi/2) q[0];')
        >>> theta
        array([1.57079633])
    """
    if not isinstance(text, str):
        raise TypeError(f"from_qasm: text must be a str; got {type(text).__name__}.")
    statements = []  # (line number, statement)
    body = re.sub(r"//[^\n]*", "", text)
    line, start = 1, 0
    for i, ch in enumerate(body):
        if ch == ";":
            stmt = body[start:i]
            first = line - stmt.lstrip().count("\n")  # the line its first word is on
            statements.append((first, " ".join(stmt.split())))
            start = i + 1
        if ch == "\n":
            line += 1
    trailing = body[start:].strip()
    if not statements or not re.fullmatch(r"OPENQASM 2(\.\d+)?", statements[0][1]):
        got = statements[0][1] if statements else ""
        raise ValueError(f"from_qasm: line {statements[0][0] if statements else 1}: expected the "
                         f"header 'OPENQASM 2.0;'; got {got!r}.")
    regs: dict[str, tuple[int, int]] = {}
    gates = []  # (line, qelib1 name, angles, qubit lists)
    for ln, stmt in statements[1:]:
        word = stmt.split(" ", 1)[0].split("(", 1)[0]
        if stmt.startswith("include"):
            continue
        if word == "qreg":
            m = re.fullmatch(r"qreg ([A-Za-z_]\w*)\s*\[\s*(\d+)\s*\]", stmt)
            if not m:
                raise ValueError(f"from_qasm: line {ln}: bad register declaration {stmt!r}.")
            regs[m[1]] = (sum(s for _, s in regs.values()), int(m[2]))
            continue
        if word in IGNORED:
            continue
        if word in UNSUPPORTED:
            raise ValueError(f"from_qasm: line {ln}: unsupported statement {word!r} ({stmt!r}); "
                             f"supported: qreg, creg, include, barrier, measure and the gates "
                             f"{', '.join(QELIB1)}.")
        m = _GATE_RE.match(stmt)
        if not m or m[1] not in QELIB1:
            raise ValueError(f"from_qasm: line {ln}: unknown gate {word!r}; supported: "
                             f"{', '.join(QELIB1)}.")
        name, params, args = m[1], m[2], m[3]
        angles = [_angle(a, ln) for a in params.split(",")] if params else []
        if len(angles) != QELIB1[name][1]:
            raise ValueError(f"from_qasm: line {ln}: {name} takes {QELIB1[name][1]} "
                             f"parameter(s); got {len(angles)}.")
        qubits = []
        for a in args.split(","):
            am = _ARG_RE.match(a.strip())
            if not am or am[1] not in regs:
                raise ValueError(f"from_qasm: line {ln}: bad qubit argument {a.strip()!r} "
                                 f"(registers: {', '.join(regs) or 'none declared'}).")
            off, size = regs[am[1]]
            if am[2] is None:
                qubits.append([off + i for i in range(size)])
            elif int(am[2]) >= size:
                raise ValueError(f"from_qasm: line {ln}: {am[1]}[{am[2]}] is out of range for "
                                 f"register {am[1]} of size {size}.")
            else:
                qubits.append([off + int(am[2])])
        gates.append((ln, name, angles, qubits))
    if trailing:
        raise ValueError(f"from_qasm: line {line}: statement without ';': {trailing[:40]!r}.")
    n = sum(s for _, s in regs.values())
    if n == 0:
        raise ValueError("from_qasm: the program declares no qubits (qreg).")
    c = Circuit(n)
    values = []
    for ln, name, angles, qubits in gates:
        sizes = {len(q) for q in qubits if len(q) > 1}
        if len(sizes) > 1:
            raise ValueError(f"from_qasm: line {ln}: broadcast over registers of different "
                             f"sizes {sorted(sizes)}.")
        reps = sizes.pop() if sizes else 1
        gate = QELIB1[name][0]
        for r in range(reps):
            wires = [q[r] if len(q) > 1 else q[0] for q in qubits]
            if trainable:
                refs = [c.new_param() for _ in angles]
                values += angles
            else:
                refs = list(angles)
            try:
                c.append(gate, wires, refs if refs else None)
            except ValueError as exc:
                raise ValueError(f"from_qasm: line {ln}: {exc}") from exc
    return c, np.array(values, np.float64)
