"""Every qelib1.inc gate imported by from_qasm = the unitary of its published definition.

The definitions below are those of the OpenQASM 2 standard library (Cross et al.,
arXiv:1707.03429, Appendix A, and the gates added to qelib1.inc since), written as data for a
small interpreter of this test's own: the built-ins are ``U(θ, φ, λ) = Rz(φ) Ry(θ) Rz(λ)`` and
``CX``; every other gate is expanded from its body. Each gate's imported circuit must have the
interpreted unitary up to a global phase (OpenQASM 2 gates are defined up to one).
"""

import math
import re

import numpy as np
import pytest

from quantum import Circuit, from_qasm, state, to_qasm
from quantum._qasm import QELIB1
from tests.quantum import problems as P

pytestmark = pytest.mark.kernels

LIBRARY = """
gate u3(theta,phi,lambda) q { U(theta,phi,lambda) q; }
gate u2(phi,lambda) q { U(pi/2,phi,lambda) q; }
gate u1(lambda) q { U(0,0,lambda) q; }
gate cx c,t { CX c,t; }
gate id a { U(0,0,0) a; }
gate u0(gamma) q { U(0,0,0) q; }
gate u(theta,phi,lambda) q { U(theta,phi,lambda) q; }
gate p(lambda) q { U(0,0,lambda) q; }
gate x a { u3(pi,0,pi) a; }
gate y a { u3(pi,pi/2,pi/2) a; }
gate z a { u1(pi) a; }
gate h a { u2(0,pi) a; }
gate s a { u1(pi/2) a; }
gate sdg a { u1(-pi/2) a; }
gate t a { u1(pi/4) a; }
gate tdg a { u1(-pi/4) a; }
gate sx a { sdg a; h a; sdg a; }
gate sxdg a { s a; h a; s a; }
gate rx(theta) a { u3(theta,-pi/2,pi/2) a; }
gate ry(theta) a { u3(theta,0,0) a; }
gate rz(phi) a { u1(phi) a; }
gate cz a,b { h b; cx a,b; h b; }
gate cy a,b { sdg b; cx a,b; s b; }
gate swap a,b { cx a,b; cx b,a; cx a,b; }
gate ch a,b { h b; sdg b; cx a,b; h b; t b; cx a,b; t b; h b; s b; x b; s a; }
gate ccx a,b,c { h c; cx b,c; tdg c; cx a,c; t c; cx b,c; tdg c; cx a,c; t b; t c; h c;
  cx a,b; t a; tdg b; cx a,b; }
gate cswap a,b,c { cx c,b; ccx a,b,c; cx c,b; }
gate crx(lambda) a,b { u1(pi/2) b; cx a,b; u3(-lambda/2,0,0) b; cx a,b; u3(lambda/2,-pi/2,0) b; }
gate cry(lambda) a,b { ry(lambda/2) b; cx a,b; ry(-lambda/2) b; cx a,b; }
gate crz(lambda) a,b { rz(lambda/2) b; cx a,b; rz(-lambda/2) b; cx a,b; }
gate cu1(lambda) a,b { u1(lambda/2) a; cx a,b; u1(-lambda/2) b; cx a,b; u1(lambda/2) b; }
gate cp(lambda) a,b { p(lambda/2) a; cx a,b; p(-lambda/2) b; cx a,b; p(lambda/2) b; }
gate cu3(theta,phi,lambda) c,t { u1((lambda+phi)/2) c; u1((lambda-phi)/2) t; cx c,t;
  u3(-theta/2,0,-(phi+lambda)/2) t; cx c,t; u3(theta/2,phi,0) t; }
gate csx a,b { h b; cu1(pi/2) a,b; h b; }
gate cu(theta,phi,lambda,gamma) c,t { p(gamma) c; p((lambda+phi)/2) c; p((lambda-phi)/2) t;
  cx c,t; u(-theta/2,0,-(phi+lambda)/2) t; cx c,t; u(theta/2,phi,0) t; }
gate rxx(theta) a,b { u3(pi/2,theta,0) a; h b; cx a,b; u1(-theta) b; cx a,b; h b;
  u2(-pi,pi-theta) a; }
gate rzz(theta) a,b { cx a,b; u1(theta) b; cx a,b; }
gate c3x a,b,c,d { h d; p(pi/8) a; p(pi/8) b; p(pi/8) c; p(pi/8) d; cx a,b; p(-pi/8) b; cx a,b;
  cx b,c; p(-pi/8) c; cx a,c; p(pi/8) c; cx b,c; p(-pi/8) c; cx a,c; cx c,d; p(-pi/8) d;
  cx b,d; p(pi/8) d; cx c,d; p(-pi/8) d; cx a,d; p(pi/8) d; cx c,d; p(-pi/8) d; cx b,d;
  p(pi/8) d; cx c,d; p(-pi/8) d; cx a,d; h d; }
"""
#: gates this test defines from their matrices (qelib1.inc defines them by long decompositions):
#: c3sqrtx and c4x are the multi-controlled SX and X; ryy is not in qelib1.inc.
BY_MATRIX = {
    "c3sqrtx": lambda: P.controlled(P.FIXED["SX"], 3),
    "c4x": lambda: P.controlled(P.X, 4),
    "ryy": lambda a: P.rot("YY", a),
}


def _parse_library(text):
    defs = {}
    for m in re.finditer(r"gate\s+(\w+)\s*(?:\(([^)]*)\))?\s*([^{]*)\{([^}]*)\}", text):
        params = [p.strip() for p in (m[2] or "").split(",") if p.strip()]
        qubits = [q.strip() for q in m[3].split(",")]
        body = [" ".join(s.split()) for s in m[4].split(";") if s.strip()]
        defs[m[1]] = (params, qubits, body)
    return defs


DEFS = _parse_library(LIBRARY)


def _rz(a):
    return np.diag([np.exp(-0.5j * a), np.exp(0.5j * a)])


def _ry(a):
    return np.array([[np.cos(a / 2), -np.sin(a / 2)], [np.sin(a / 2), np.cos(a / 2)]])


def _value(expr, env):
    """An arithmetic parameter expression of the library (names: pi and the parameters; the
    parameter ``lambda`` is renamed, being a Python keyword)."""
    expr = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: f"v_{m[0]}" if m[0] in env else m[0],
                  expr.replace("^", "**"))
    scope = {"pi": math.pi, **{f"v_{k}": v for k, v in env.items()}}
    return float(eval(expr, {"__builtins__": {}}, scope))  # the test's own library text


def _apply(u, name, params, qubits, n):
    """u <- (the gate on qubit positions) u, interpreting the library."""
    if name == "U":
        th, ph, la = params
        return P.embed(_rz(ph) @ _ry(th) @ _rz(la), qubits, n) @ u
    if name == "CX":
        return P.embed(P.X, qubits[1:], n, controls=qubits[:1]) @ u
    fp, fq, body = DEFS[name]
    env = dict(zip(fp, params))
    qmap = dict(zip(fq, qubits))
    for stmt in body:
        m = re.match(r"(\w+)\s*(?:\((.*)\))?\s*(.*)$", stmt)
        args = _split(m[2]) if m[2] else []
        sub_params = [_value(a, env) for a in args]
        sub_q = [qmap[a.strip()] for a in m[3].split(",")]
        u = _apply(u, m[1], sub_params, sub_q, n)
    return u


def _split(text):
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return out + [cur]


def definition_unitary(name, params):
    n_params, k, _ = QELIB1[name]
    if name in BY_MATRIX:
        return BY_MATRIX[name](*params)
    return _apply(np.eye(1 << k, dtype=complex), name, list(params), list(range(k)), k)


def imported_unitary(text, k):
    """The unitary of an imported program, column by column (basis states prepared by X)."""
    c0, th = from_qasm(text)  # the X preparation adds no parameters: θ's slots stay
    cols = []
    for j in range(1 << k):
        c = Circuit(k)
        for w in range(k):
            if (j >> (k - 1 - w)) & 1:
                c.x(w)
        for op in c0.ops:
            c.append(op.name, op.controls[:_nc(op)] + op.wires, op.angles or None,
                     controls=op.controls[_nc(op):], paulis=op.paulis, matrix=op.matrix)
        cols.append(state(c, th))
    return np.array(cols).T


def _nc(op):
    from quantum import GATES

    return GATES[op.name].base_controls


def _assert_equal_up_to_phase(a, b, what):
    k = np.argmax(np.abs(b))
    phase = a.flat[k] / b.flat[k]
    assert np.isclose(abs(phase), 1.0, atol=1e-10), what
    np.testing.assert_allclose(a, phase * b, atol=1e-10, err_msg=what)


def test_the_library_is_complete():
    """Every qelib1 name the importer knows has a definition here (by body or by matrix), and
    the library's own built-in semantics agree with textbook matrices for a few gates."""
    assert set(QELIB1) - {"U", "CX"} <= set(DEFS) | set(BY_MATRIX), \
        set(QELIB1) - set(DEFS) - set(BY_MATRIX)
    _assert_equal_up_to_phase(definition_unitary("h", ()), P.FIXED["H"], "h")
    _assert_equal_up_to_phase(definition_unitary("ccx", ()), P.controlled(P.X, 2), "ccx")
    _assert_equal_up_to_phase(definition_unitary("swap", ()), P.FIXED["SWAP"], "swap")


@pytest.mark.parametrize("name", sorted(QELIB1))
def test_every_qelib1_gate_matches_its_published_definition(name):
    n_params, k, _ = QELIB1[name]
    rng = np.random.default_rng(len(name) * 31 + k)
    for _ in range(2):
        params = rng.uniform(-np.pi, np.pi, n_params)
        args = ",".join(f"q[{i}]" for i in range(k))
        par = f"({','.join(repr(float(p)) for p in params)})" if n_params else ""
        text = f'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[{k}];\n{name}{par} {args};\n'
        got = imported_unitary(text, k)
        if name == "U":
            want = _rz(params[1]) @ _ry(params[0]) @ _rz(params[2])
        elif name == "CX":
            want = P.controlled(P.X)
        else:
            want = definition_unitary(name, params)
        _assert_equal_up_to_phase(got, want, f"{name}{par}")


def test_user_gate_definitions_with_parameters_nested():
    text = """OPENQASM 2.0;
    include "qelib1.inc";
    gate layer(a, b) x, y { ry(a) x; rzz(b/2) x, y; u2(a - b, pi) y; }
    gate block(t) p, q, r { layer(t, 2*t) p, q; ccx p, q, r; layer(-t, pi/3) r, p; cx r, q; }
    qreg q[3];
    block(0.7) q[0], q[2], q[1];
    """
    got = imported_unitary(text, 3)
    lib = LIBRARY + """
    gate layer(a, b) x, y { ry(a) x; rzz(b/2) x, y; u2(a - b, pi) y; }
    gate block(t) p, q, r { layer(t, 2*t) p, q; ccx p, q, r; layer(-t, pi/3) r, p; cx r, q; }
    """
    DEFS.update(_parse_library(lib))
    try:
        want = _apply(np.eye(8, dtype=complex), "block", [0.7], [0, 2, 1], 3)
    finally:
        for k in ("layer", "block"):
            DEFS.pop(k)
    _assert_equal_up_to_phase(got, want, "block")
    c, theta = from_qasm(text)
    # trainable: the angles that depend on the trainable 0.7 (ry(a), rzz(b/2), u2's φ = a - b
    # of the first layer; ry(a) and φ of the second, whose b = pi/3 is a constant)
    np.testing.assert_allclose(theta, [0.7, 0.7, 0.7 - 1.4, -0.7, -0.7 - np.pi / 3])


def test_export_defines_what_qelib1_lacks_and_round_trips():
    c = Circuit(3).h(0).ising_yy(0, 2, 0.4).sxdg(1).h(2, controls=(1,)).sx(0, controls=(2,))
    c.u3(1, 0.3, 0.2, 0.1, controls=(0,)).x(2, controls=(0, 1)).ising_xx(1, 0, -0.8)
    text = to_qasm(c)
    assert "gate ryy(theta) a,b {" in text  # defined before use
    assert text.index("gate ryy") < text.index("\nryy(")
    for name in re.findall(r"^(\w+)[ (]", text, re.M):
        assert name in ("OPENQASM", "include", "gate", "qreg", "ryy") or name in DEFS, name
    c2, th2 = from_qasm(text)
    assert len(c2.ops) == len(c.ops)  # one gate each (x with two controls comes back as ccx)
    np.testing.assert_allclose(state(c2, th2), state(c), atol=1e-12)
    assert to_qasm(c2, th2) == text
    # the exported ryy definition itself (read by a reader that knows only qelib1) is IsingYY
    body = re.search(r"gate ryy.*\}", text)[0]
    DEFS.update(_parse_library(body))
    try:
        _assert_equal_up_to_phase(_apply(np.eye(4, dtype=complex), "ryy", [0.4], [0, 1], 2),
                                  P.rot("YY", 0.4), "ryy definition")
    finally:
        DEFS.pop("ryy")


def test_a_different_ryy_definition_is_used_as_written():
    text = ('OPENQASM 2.0;\ninclude "qelib1.inc";\ngate ryy(t) a,b { rx(t) a; cx a,b; }\n'
            'qreg q[2];\nryy(0.3) q[0],q[1];\n')
    c, theta = from_qasm(text)
    assert [op.name for op in c.ops] == ["RX", "CNOT"]
    np.testing.assert_allclose(theta, [0.3])


@pytest.mark.parametrize("text, match", [
    ("gate g a { foo a; }\ng q[0];", r"line 4: unknown gate 'foo'"),
    ("gate g a { g a; }\ng q[0];", r"line 4: gate 'g' calls itself"),
    ("gate g(t) a { rx(s) a; }\ng(1) q[0];", r"line 4: unsupported parameter expression 's'"),
    ("gate g a { x b; }\ng q[0];", r"line 4: in gate 'g': 'b' is not one of its qubit"),
    ("gate g a { x a; }\ng q[0], q[1];", r"line 5: g acts on 1 qubit\(s\); got 2"),
    ("gate g(t) a { x a; }\ng q[0];", r"line 5: g takes 1 parameter\(s\); got 0"),
    ("gate g a { x a; }\ngate g a { y a; }\n", r"line 5: gate 'g' is defined twice"),
    ("u2(0.1) q[0];", r"line 4: u2 takes 2 parameter\(s\); got 1"),
    ("cu3(1,2,3) q[0];", r"line 4: cu3 acts on 2 qubit\(s\); got 1"),
    ("opaque g a;", r"line 4: unsupported statement 'opaque'"),
])
def test_definition_errors_name_the_line(text, match):
    with pytest.raises(ValueError, match=match):
        from_qasm('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\n' + text)
