"""OpenQASM 2: export, import, round trips, and errors that name the line."""

import numpy as np
import pytest

from quantum import GATES, Circuit, from_qasm, state, to_qasm
from quantum._qasm import QELIB1
from tests.quantum import problems as P


def exportable_circuit():
    c = Circuit(4)
    for q in range(4):
        c.h(q)
    c.i(0).x(1).y(2).z(3).s(0).sdg(1).t(2).tdg(3).sx(0)
    c.rx(0).ry(1).rz(2).phase(3).u3(0).rot(1)
    c.cnot(0, 1).cy(1, 2).cz(2, 3).swap(0, 3).toffoli(0, 1, 2).cswap(3, 0, 1)
    c.crx(0, 2).cry(1, 3).crz(3, 0).cphase(2, 1)
    c.ising_xx(0, 3).ising_yy(1, 2).ising_zz(2, 0)
    c.x(3, controls=(0,)).cnot(0, 1, controls=(2,)).rz(1, 0.25, controls=(0,))
    return c


def test_round_trip_every_exportable_gate():
    c = exportable_circuit()
    theta = np.random.default_rng(0).uniform(-np.pi, np.pi, c.n_params)
    text = to_qasm(c, theta)
    c2, theta2 = from_qasm(text)
    np.testing.assert_allclose(state(c2, theta2), state(c, theta), atol=1e-12)
    assert to_qasm(c2, theta2) == text  # a fixed point
    c3, theta3 = from_qasm(text, trainable=False)
    assert c3.n_params == 0 and theta3.size == 0
    np.testing.assert_allclose(state(c3), state(c, theta), atol=1e-12)


def test_import_expressions_registers_broadcast_and_comments():
    text = """OPENQASM 2.0;
    include "qelib1.inc";   // the standard library
    qreg a[2];
    qreg b[2];
    creg m[4];
    h a;                    // broadcast over a register
    cx a, b;                // pairwise: cx a[0],b[0]; cx a[1],b[1]
    rz(-pi/4 + 2*sin(pi/6)^2) b[1];
    u3(pi/2, 0.1, -ln(2)) a[1];
    U(0.3, sqrt(4), exp(0)) b[0];
    cu1(3*pi/8) a[0], b[1];
    barrier a, b;
    measure a[0] -> m[0];
    """
    c, theta = from_qasm(text)
    ref = Circuit(4).h(0).h(1).cnot(0, 2).cnot(1, 3).rz(3).u3(1).u3(2).cphase(0, 3)
    want = [-np.pi / 4 + 0.5, np.pi / 2, 0.1, -np.log(2), 0.3, 2.0, 1.0, 3 * np.pi / 8]
    np.testing.assert_allclose(theta, want, atol=1e-14)
    np.testing.assert_allclose(state(c, theta), state(ref, np.array(want)), atol=1e-12)


def test_import_matches_dense_definitions():
    c, theta = from_qasm('OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\n'
                         'ry(0.7) q[0];\ncrz(1.3) q[0],q[1];\nrzz(0.4) q[1],q[0];\n')
    psi = np.zeros(4, complex)
    psi[0] = 1
    for u in (P.embed(P.rot("Y", 0.7), (0,), 2), P.embed(P.rot("Z", 1.3), (1,), 2, (0,)),
              P.embed(P.rot("ZZ", 0.4), (1, 0), 2)):
        psi = u @ psi
    np.testing.assert_allclose(state(c, theta), psi, atol=1e-12)


def test_export_angles_as_multiples_of_pi():
    text = to_qasm(Circuit(1).rz(0, np.pi).rx(0, -np.pi / 2).ry(0, 0.1).phase(0, 0.0))
    assert text.splitlines()[3:] == ["rz(pi) q[0];", "rx(-pi/2) q[0];", "ry(0.1) q[0];",
                                     "p(0) q[0];"]


HEADER = 'OPENQASM 2.0;\ninclude "qelib1.inc";\nqreg q[2];\n'


@pytest.mark.parametrize("text, match", [
    ("qreg q[2];\nh q[0];", r"line 1: expected the header 'OPENQASM 2.0;'"),
    (HEADER + "reset q[0];", r"line 4: unsupported statement 'reset'"),
    (HEADER + "h q[0];\nif(c==1) x q[0];", r"line 5: unsupported statement 'if'"),
    (HEADER + "opaque foo a;", r"line 4: unsupported statement 'opaque'"),
    (HEADER + "h q[0];\nfoo q[1];", r"line 5: unknown gate 'foo'"),
    (HEADER + "h q[2];", r"line 4: q\[2\] is out of range for register q of size 2"),
    (HEADER + "h r[0];", r"line 4: bad qubit argument 'r\[0\]'"),
    (HEADER + "rx(pi, 1) q[0];", r"line 4: rx takes 1 parameter\(s\); got 2"),
    (HEADER + "rx(theta) q[0];", r"line 4: unsupported parameter expression 'theta'"),
    (HEADER + "cx q[0],q[0];", r"line 4: Circuit.CNOT: wires and controls must be distinct"),
    (HEADER + "h q[0]", r"line 4: statement without ';'"),
])
def test_import_errors_name_the_line(text, match):
    with pytest.raises(ValueError, match=match):
        from_qasm(text)


@pytest.mark.parametrize("c, theta, match", [
    (Circuit(2).iswap(0, 1), None, r"gate 0 \(iSWAP\) has no OpenQASM 2"),
    (Circuit(3).h(0).x(2, controls=(0, 1)).x(2, controls=(0, 1)).z(0, controls=(1, 2)), None,
     r"gate 3 \(Z with 2 control\(s\)\)"),
    (Circuit(1).bit_flip(0, 0.1), None, r"gate 0 \(BitFlip\)"),
    (Circuit(1).rx(0), None, r"theta must have shape \(1,\)"),
])
def test_export_errors(c, theta, match):
    with pytest.raises(ValueError, match=match):
        to_qasm(c, theta)


def test_every_qelib1_name_imports():
    """Each name of the table imports as its gates, every parameter a slot of θ (matrices:
    tests/quantum/test_qasm_qelib.py)."""
    for name, (n_angles, n_qubits, rule) in QELIB1.items():
        args = ",".join(f"q[{i}]" for i in range(n_qubits))
        params = f"({','.join(['0.1'] * n_angles)})" if n_angles else ""
        c, theta = from_qasm(f"OPENQASM 2.0;\nqreg q[5];\n{name}{params} {args};")
        assert [op.name for op in c.ops] == [g for g, *_ in rule]
        assert theta.size == sum(isinstance(a, int) for *_, angles in rule for a in angles)
        for op in c.ops:
            spec = GATES[op.name]
            assert spec.n_wires is None or len(op.wires) == spec.n_wires
