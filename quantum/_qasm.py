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
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from diffsci.typing import ArrayLike

from ._model import Circuit, Param


def _e(gate, wires, controls=(), angles=()):
    """One gate of an import rule: the gate's wires and extra controls as positions among the
    statement's qubits; angles as positions among its parameters (int, trainable) or fixed
    values (float)."""
    return gate, wires, controls, angles


_HALF_PI = math.pi / 2
#: qelib1 name -> (number of parameters, number of qubits, the gates it becomes). Every gate of
#: qelib1.inc (arXiv:1707.03429, Appendix A, and the names added to the library since: u, p, cp,
#: sx, sxdg, csx, cu, rxx, rzz, c3x, c3sqrtx, c4x) but the relative-phase Toffolis rccx and rc3x
#: (define them with ``gate``), the built-ins U and CX, and ryy (not in qelib1.inc; to_qasm writes
#: its definition). Each maps to the exact unitary of its qelib1 definition up to a global phase.
QELIB1: dict[str, tuple[int, int, tuple]] = {
    "U": (3, 1, (_e("U3", (0,), (), (0, 1, 2)),)),
    "u": (3, 1, (_e("U3", (0,), (), (0, 1, 2)),)),
    "u3": (3, 1, (_e("U3", (0,), (), (0, 1, 2)),)),
    "u2": (2, 1, (_e("U3", (0,), (), (_HALF_PI, 0, 1)),)),
    "u1": (1, 1, (_e("PhaseShift", (0,), (), (0,)),)),
    "p": (1, 1, (_e("PhaseShift", (0,), (), (0,)),)),
    "u0": (1, 1, (_e("I", (0,)),)),  # u0(γ): an identity (a wait of γ time units)
    "CX": (0, 2, (_e("CNOT", (0, 1)),)),
    "cx": (0, 2, (_e("CNOT", (0, 1)),)),
    "id": (0, 1, (_e("I", (0,)),)),
    **{k: (0, 1, (_e(g, (0,)),)) for k, g in (
        ("x", "X"), ("y", "Y"), ("z", "Z"), ("h", "H"), ("s", "S"), ("sdg", "Sdg"),
        ("t", "T"), ("tdg", "Tdg"), ("sx", "SX"), ("sxdg", "SXdg"))},
    "rx": (1, 1, (_e("RX", (0,), (), (0,)),)),
    "ry": (1, 1, (_e("RY", (0,), (), (0,)),)),
    "rz": (1, 1, (_e("RZ", (0,), (), (0,)),)),
    "cz": (0, 2, (_e("CZ", (0, 1)),)),
    "cy": (0, 2, (_e("CY", (0, 1)),)),
    "ch": (0, 2, (_e("H", (1,), (0,)),)),
    "csx": (0, 2, (_e("SX", (1,), (0,)),)),
    "swap": (0, 2, (_e("SWAP", (0, 1)),)),
    "ccx": (0, 3, (_e("Toffoli", (0, 1, 2)),)),
    "cswap": (0, 3, (_e("CSWAP", (0, 1, 2)),)),
    "c3x": (0, 4, (_e("X", (3,), (0, 1, 2)),)),
    "c3sqrtx": (0, 4, (_e("SX", (3,), (0, 1, 2)),)),
    "c4x": (0, 5, (_e("X", (4,), (0, 1, 2, 3)),)),
    "crx": (1, 2, (_e("CRX", (0, 1), (), (0,)),)),
    "cry": (1, 2, (_e("CRY", (0, 1), (), (0,)),)),
    "crz": (1, 2, (_e("CRZ", (0, 1), (), (0,)),)),
    "cu1": (1, 2, (_e("CPhase", (0, 1), (), (0,)),)),
    "cp": (1, 2, (_e("CPhase", (0, 1), (), (0,)),)),
    "cu3": (3, 2, (_e("U3", (1,), (0,), (0, 1, 2)),)),
    # cu(θ, φ, λ, γ): controlled e^{iγ} U3(θ, φ, λ); the phase e^{iγ} is a phase on the control
    "cu": (4, 2, (_e("U3", (1,), (0,), (0, 1, 2)), _e("PhaseShift", (0,), (), (3,)))),
    "rxx": (1, 2, (_e("IsingXX", (0, 1), (), (0,)),)),
    "ryy": (1, 2, (_e("IsingYY", (0, 1), (), (0,)),)),
    "rzz": (1, 2, (_e("IsingZZ", (0, 1), (), (0,)),)),
}
#: Names of :data:`QELIB1` that qelib1.inc does not define: :func:`to_qasm` writes a ``gate``
#: definition for each one it uses (an exact decomposition into qelib1 gates).
DEFINITIONS: dict[str, str] = {
    "ryy": "gate ryy(theta) a,b { rx(pi/2) a; rx(pi/2) b; cx a,b; rz(theta) b; cx a,b; "
           "rx(-pi/2) a; rx(-pi/2) b; }",
}
#: (our gate name, total number of controls) -> the qelib1 name written by :func:`to_qasm`.
EXPORT: dict[tuple[str, int], str] = {
    ("I", 0): "id", ("X", 0): "x", ("Y", 0): "y", ("Z", 0): "z", ("H", 0): "h", ("S", 0): "s",
    ("Sdg", 0): "sdg", ("T", 0): "t", ("Tdg", 0): "tdg", ("SX", 0): "sx", ("SXdg", 0): "sxdg",
    ("RX", 0): "rx", ("RY", 0): "ry", ("RZ", 0): "rz", ("PhaseShift", 0): "p", ("U3", 0): "u3",
    ("X", 1): "cx", ("Y", 1): "cy", ("Z", 1): "cz", ("H", 1): "ch", ("SX", 1): "csx",
    ("SWAP", 0): "swap", ("X", 2): "ccx", ("X", 3): "c3x", ("X", 4): "c4x", ("SX", 3): "c3sqrtx",
    ("SWAP", 1): "cswap", ("RX", 1): "crx", ("RY", 1): "cry", ("RZ", 1): "crz",
    ("PhaseShift", 1): "cu1", ("U3", 1): "cu3", ("IsingXX", 0): "rxx", ("IsingYY", 0): "ryy",
    ("IsingZZ", 0): "rzz",
}
#: Names whose implied controls are folded into the base gate for :data:`EXPORT`.
_BASE = {"CNOT": "X", "CY": "Y", "CZ": "Z", "Toffoli": "X", "CSWAP": "SWAP", "CRX": "RX",
         "CRY": "RY", "CRZ": "RZ", "CPhase": "PhaseShift"}
#: Statements read and ignored (they do not change the state).
IGNORED = ("barrier", "measure", "creg")
#: Statements that are valid OpenQASM 2 but not supported here.
UNSUPPORTED = ("reset", "if", "opaque")

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


def to_qasm(circuit: Circuit, theta: ArrayLike | None = None) -> str:
    """The circuit as an OpenQASM 2.0 program at parameters θ.

    Args:
        circuit: the circuit (gates of :data:`EXPORT` only; no noise channels).
        theta: parameters, shape (P,); may be omitted for a circuit without parameters.

    Returns:
        The program text: header, a ``gate`` definition for each name used that qelib1.inc
        lacks (:data:`DEFINITIONS`: ryy), ``qreg q[n];`` and one statement per gate (Rot as
        rz, ry, rz).

    Raises:
        ValueError: theta's shape or a non-finite θ; a gate or control count with no qelib1
            name (iSWAP, MultiRZ, PauliRot, QubitUnitary, a channel), naming the gate and its
            position.

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
    lines = []
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
    used = {line.split("(", 1)[0].split(" ", 1)[0] for line in lines}
    head = ["OPENQASM 2.0;", 'include "qelib1.inc";']
    head += [DEFINITIONS[k] for k in sorted(DEFINITIONS) if k in used]
    return "\n".join(head + [f"qreg q[{circuit.n_qubits}];"] + lines) + "\n"


def _eval(node, line: int, env: dict):
    """The value of a parameter expression; names are pi and the parameters in ``env``."""
    if isinstance(node, ast.Expression):
        return _eval(node.body, line, env)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.Name) and node.id == "pi":
        return math.pi
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left, line, env), _eval(node.right, line, env))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.operand, line, env))
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCS and len(node.args) == 1):
        return _FUNCS[node.func.id](_eval(node.args[0], line, env))
    raise ValueError(f"from_qasm: line {line}: unsupported parameter expression "
                     f"{ast.unparse(node)!r} (numbers, pi, + - * / ^, sin cos tan exp ln sqrt"
                     f"{', the gate parameters ' + ', '.join(env) if env else ''}).")


def _angle(text: str, line: int, env: dict | None = None) -> tuple[float, bool]:
    """(value, whether it depends on a gate parameter of ``env``)."""
    try:
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"from_qasm: line {line}: cannot parse the parameter {text!r}.") from exc
    env = env or {}
    uses = any(isinstance(n, ast.Name) and n.id in env for n in ast.walk(tree))
    return _eval(tree, line, env), uses


def _split_params(params: str | None) -> list[str]:
    """A parameter list split at its top-level commas (``f(a, b)`` stays one)."""
    if not params:
        return []
    out, depth, cur = [], 0, ""
    for ch in params:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


_DEF_RE = re.compile(r"\bgate\s+([A-Za-z_]\w*)\s*(?:\(([^)]*)\))?\s*([^{]*)\{([^}]*)\}", re.S)


@dataclass(frozen=True)
class _Definition:
    """A ``gate`` definition: parameter names, qubit argument names, body statements."""

    params: tuple[str, ...]
    qubits: tuple[str, ...]
    body: tuple[tuple[int, str], ...]  # (line, statement)


def _definitions(body: str) -> tuple[str, dict[str, _Definition]]:
    """The ``gate`` definitions of a program, and the program with each replaced by blank lines
    (so line numbers stay)."""
    defs: dict[str, _Definition] = {}
    out, pos = [], 0
    for m in _DEF_RE.finditer(body):
        line = body.count("\n", 0, m.start()) + 1
        name = m[1]
        params = tuple(p.strip() for p in _split_params(m[2]) if p.strip())
        qubits = tuple(q.strip() for q in m[3].split(",") if q.strip())
        if not qubits or not all(re.fullmatch(r"[A-Za-z_]\w*", q) for q in qubits + params):
            raise ValueError(f"from_qasm: line {line}: bad gate declaration for {name!r}.")
        stmts, ln = [], line + m[0][: m.start(4) - m.start()].count("\n")
        for part in m[4].split(";"):
            if part.strip():
                stmts.append((ln + part[: len(part) - len(part.lstrip())].count("\n"),
                              " ".join(part.split())))
            ln += part.count("\n")
        if name in defs:
            raise ValueError(f"from_qasm: line {line}: gate {name!r} is defined twice.")
        defs[name] = _Definition(params, qubits, tuple(stmts))
        out.append(body[pos:m.start()] + "\n" * m[0].count("\n"))
        pos = m.end()
    out.append(body[pos:])
    return "".join(out), defs


_GATE_RE = re.compile(r"^([A-Za-z_]\w*)\s*(?:\((.*)\))?\s*(.*)$", re.S)
_ARG_RE = re.compile(r"^([A-Za-z_]\w*)\s*(?:\[\s*(\d+)\s*\])?$")


def from_qasm(text: str, *, trainable: bool = True) -> tuple[Circuit, np.ndarray]:
    """Read an OpenQASM 2.0 program into a circuit.

    Supports ``qreg`` (several registers are laid out one after another), every gate of
    qelib1.inc (:data:`QELIB1`) with parameter expressions of pi, ``gate`` definitions (with
    parameters, calling qelib1 gates and earlier definitions, nested to any depth), and register
    broadcasting (``h q;``, ``cx a,b;`` over equal-size registers). ``barrier``, ``measure`` and
    ``creg`` are ignored. A definition of a qelib1 name is taken to be that gate; a definition of
    ``ryy`` (which to_qasm writes) is the native gate when its unitary is IsingYY's.

    Args:
        text: the program.
        trainable: give every angle its own slot of θ (default): each angle of a top-level
            statement, and each angle inside a ``gate`` body that depends on the gate's
            parameters (constants there stay fixed); False: fixed angles.

    Returns:
        ``(circuit, theta)``: θ holds the file's angles (empty when ``trainable=False``).

    Raises:
        ValueError: a missing ``OPENQASM 2.x`` header, an unknown gate, an unsupported statement
            (``reset``, ``if``, ``opaque``), a bad argument, expression or definition, a wrong
            number of parameters or qubits, a qubit out of range — each naming the line.

    Example:
        >>> c, theta = from_qasm('OPENQASM 2.0; include "qelib1.inc"; qreg q[1]; rx(pi/2) q[0];')
        >>> theta
        array([1.57079633])
    """
    if not isinstance(text, str):
        raise TypeError(f"from_qasm: text must be a str; got {type(text).__name__}.")
    body, defs = _definitions(re.sub(r"//[^\n]*", "", text))
    statements = []  # (line number, statement)
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
    gates = []  # (line, name, angles, qubit lists)
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
                             f"supported: qreg, creg, include, barrier, measure, gate and the "
                             f"gates {', '.join(QELIB1)}.")
        name, params, args = _call(stmt, ln, defs)
        angles = [_angle(a, ln)[0] for a in params]
        qubits = []
        for a in args:
            am = _ARG_RE.match(a)
            if not am or am[1] not in regs:
                raise ValueError(f"from_qasm: line {ln}: bad qubit argument {a!r} "
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
    values: list[float] = []
    native = {k for k in DEFINITIONS if k in defs and _is_native(k, defs)}
    for ln, name, angles, qubits in gates:
        sizes = {len(q) for q in qubits if len(q) > 1}
        if len(sizes) > 1:
            raise ValueError(f"from_qasm: line {ln}: broadcast over registers of different "
                             f"sizes {sorted(sizes)}.")
        reps = sizes.pop() if sizes else 1
        for r in range(reps):
            wires = [q[r] if len(q) > 1 else q[0] for q in qubits]
            _emit(c, values, name, [(a, trainable) for a in angles], wires, ln, defs, native, 0)
    return c, np.array(values, np.float64)


#: How deeply ``gate`` definitions may nest (a definition calling itself is an error).
MAX_DEPTH = 64


def _call(stmt: str, ln: int, defs) -> tuple[str, list[str], list[str]]:
    """(name, parameter texts, argument texts) of a gate statement, its name and arity checked."""
    m = _GATE_RE.match(stmt)
    word = stmt.split(" ", 1)[0].split("(", 1)[0]
    if not m or (m[1] not in QELIB1 and m[1] not in defs):
        raise ValueError(f"from_qasm: line {ln}: unknown gate {word!r}; supported: "
                         f"{', '.join(QELIB1)} and the program's gate definitions.")
    name = m[1]
    params = [p for p in _split_params(m[2])]
    args = [a.strip() for a in m[3].split(",")] if m[3].strip() else []
    if name in QELIB1:
        n_par, n_q = QELIB1[name][0], QELIB1[name][1]
    else:
        n_par, n_q = len(defs[name].params), len(defs[name].qubits)
    if len(params) != n_par:
        raise ValueError(f"from_qasm: line {ln}: {name} takes {n_par} parameter(s); got "
                         f"{len(params)}.")
    if len(args) != n_q:
        raise ValueError(f"from_qasm: line {ln}: {name} acts on {n_q} qubit(s); got "
                         f"{len(args)}: {', '.join(args) or 'none'}.")
    return name, params, args


def _emit(c: Circuit, values: list, name: str, angles, wires, ln: int, defs, native, depth):
    """Append gate ``name`` at ``angles`` ((value, trainable) pairs) on ``wires`` to c."""
    if depth > MAX_DEPTH:
        raise ValueError(f"from_qasm: line {ln}: gate definitions nest deeper than {MAX_DEPTH} "
                         f"(a definition calling itself?).")
    if name in QELIB1 and (name not in defs or name not in DEFINITIONS or name in native):
        for gate, wpos, cpos, aspec in QELIB1[name][2]:
            refs = []
            for a in aspec:
                if isinstance(a, int):
                    value, tr = angles[a]
                    if tr:
                        refs.append(c.new_param())
                        values.append(value)
                    else:
                        refs.append(value)
                else:
                    refs.append(a)
            try:
                c.append(gate, [wires[i] for i in wpos], refs or None,
                         controls=[wires[i] for i in cpos])
            except ValueError as exc:
                raise ValueError(f"from_qasm: line {ln}: {exc}") from exc
        return
    d = defs[name]
    env = {p: v for p, (v, _) in zip(d.params, angles)}
    tr_env = {p: tr for p, (_, tr) in zip(d.params, angles)}
    qmap = dict(zip(d.qubits, wires))
    for ln2, stmt in d.body:
        if stmt.split(" ", 1)[0] == "barrier":
            continue
        sub, params, args = _call(stmt, ln2, defs)
        if sub == name:
            raise ValueError(f"from_qasm: line {ln2}: gate {name!r} calls itself.")
        sub_angles = []
        for text in params:
            value, _ = _angle(text, ln2, env)
            tree = ast.parse(text.strip().replace("^", "**"), mode="eval")
            tr = any(isinstance(x, ast.Name) and tr_env.get(x.id, False) for x in ast.walk(tree))
            sub_angles.append((value, tr))
        if any(a not in qmap for a in args):
            bad = next(a for a in args if a not in qmap)
            raise ValueError(f"from_qasm: line {ln2}: in gate {name!r}: {bad!r} is not one of its "
                             f"qubit arguments {', '.join(d.qubits)}.")
        _emit(c, values, sub, sub_angles, [qmap[a] for a in args], ln2, defs, native, depth + 1)


def _is_native(name: str, defs) -> bool:
    """Whether the program's definition of ``name`` has the native gate's unitary (up to a
    global phase), at a few parameter values."""
    from ._measure import state

    d = defs[name]
    k = len(d.qubits)
    rng = np.random.default_rng(0)
    for _ in range(2):
        angles = [(float(v), False) for v in rng.uniform(-np.pi, np.pi, len(d.params))]
        cols = []
        for use_def in (False, True):
            u = []
            for j in range(1 << k):
                c = Circuit(k)
                for w in range(k):
                    if (j >> (k - 1 - w)) & 1:
                        c.x(w)
                _emit(c, [], name, angles, list(range(k)), 0,
                      defs if use_def else {}, set(), 0)
                u.append(state(c))
            cols.append(np.array(u).T)
        a, b = cols
        phase = np.vdot(b.ravel(), a.ravel())
        if abs(phase) < 1e-12 or not np.allclose(a, b * phase / abs(phase), atol=1e-10):
            return False
    return True
