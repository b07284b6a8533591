"""Bad input is refused once, at the API boundary, with an error naming the function and argument.

Tables: every gate method with wires that are not wires (floats, bools, strings, None); every
measurement with a non-finite θ (NaN, ±inf, anywhere in a batch); containers accepted wherever an
array is; names (gates, channels, methods) accepted case-insensitively.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from quantum import (
    CHANNELS,
    GATES,
    Circuit,
    Hamiltonian,
    Param,
    Z,
    counts,
    density_matrix,
    expval,
    probs,
    sample,
    state,
    to_qasm,
    var,
)
from quantum._model import _lookup
from tests.quantum import problems as P

pytestmark = pytest.mark.kernels

NOT_WIRES = [1.0, np.float64(2.0), True, np.bool_(False), "0", None, 1 + 0j]

#: gate method -> positional wire arguments on a 3-qubit register (the first is replaced)
METHODS_1 = ["x", "y", "z", "h", "s", "sdg", "t", "tdg", "sx", "rx", "ry", "rz", "phase", "u3",
             "rot"]
METHODS_2 = ["cnot", "cz", "cy", "swap", "iswap", "crx", "cry", "crz", "cphase", "ising_xx",
             "ising_yy", "ising_zz"]


@pytest.mark.parametrize("bad", NOT_WIRES, ids=repr)
@pytest.mark.parametrize("method", METHODS_1 + METHODS_2)
def test_gate_methods_refuse_non_wires(method, bad):
    c = Circuit(3)
    args = (bad,) if method in METHODS_1 else (bad, 1)
    with pytest.raises(TypeError, match=r"Circuit\.\w+: wires must be"):
        getattr(c, method)(*args)
    args = (0,) if method in METHODS_1 else (0, 1)
    with pytest.raises(TypeError, match=r"Circuit\.\w+: controls must be"):
        getattr(c, method)(*args, controls=bad)
    assert len(c) == 0  # nothing appended


@pytest.mark.parametrize("bad", NOT_WIRES, ids=repr)
@pytest.mark.parametrize("channel", sorted(CHANNELS))
def test_channels_refuse_non_wires(channel, bad):
    two = channel.startswith("TwoQubit")
    with pytest.raises(TypeError, match=rf"Circuit\.{channel}: wire must be"):
        Circuit(3).channel(channel, (bad, 1) if two else bad, 0.1)
    with pytest.raises(TypeError, match=r"Circuit\.Kraus: wire must be"):
        Circuit(3).kraus(bad, [np.eye(2)])


MEASUREMENTS = {
    "expval": lambda c, t: expval(c, t, Z(0)),
    "expval-ps": lambda c, t: expval(c, t, Z(0), method="parameter-shift"),
    "var": lambda c, t: var(c, t, Z(0)),
    "probs": lambda c, t: probs(c, t),
    "state": lambda c, t: state(c, t),
    "sample": lambda c, t: sample(c, t, 10),
    "counts": lambda c, t: counts(c, t, 10),
    "density_matrix": lambda c, t: density_matrix(c, t),
}


@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("where", [(0,), (2,), (1, 1)])
@pytest.mark.parametrize("name", sorted(MEASUREMENTS))
def test_non_finite_theta_is_refused_naming_theta(name, where, value):
    c = Circuit(2).rx(0).ry(1).cnot(0, 1).rz(1)
    theta = np.full((2, 3) if len(where) == 2 else (3,), 0.3)
    theta[where] = value
    fn = name.split("-")[0]
    if name == "counts" and len(where) == 2:
        where = where[1:]  # counts takes one θ
        theta = theta[1]
    with pytest.raises(ValueError, match=rf"{fn}: theta must be finite; got -?(nan|inf) at "
                                         rf"index \({', '.join(map(str, where))},?\)"):
        MEASUREMENTS[name](c, theta)
    with pytest.raises(ValueError, match=rf"{fn}: theta must be finite"):  # as a Python list
        MEASUREMENTS[name](c, theta.tolist())


@pytest.mark.parametrize("build, exc, match", [
    (lambda: Circuit(1).rx(0, np.nan), ValueError, "fixed angle must be finite"),
    (lambda: Circuit(1).rx(0, Param(0, np.inf)), ValueError, "Param.scale must be a finite"),
    (lambda: Hamiltonian(((np.nan, "Z", (0,)),)), ValueError, "coefficient must be a finite"),
    (lambda: Hamiltonian(((1.0, "Z", 0.5),)), TypeError, "Hamiltonian: wires must be an int"),
    (lambda: Circuit(1).unitary(0, [[np.nan, 0], [0, 1]]), ValueError, "not unitary"),
    (lambda: Circuit(1).depolarizing(0, np.nan), ValueError, r"strength must be in \[0, 1\]"),
    (lambda: Circuit(1).kraus(0, [[[np.nan, 0], [0, 1]]]), ValueError, "not trace preserving"),
    (lambda: expval(Circuit(1).rx(0), [[0.1], [0.2, 0.3]], Z(0)), ValueError,
     "expval: theta must be a rectangular array"),
    (lambda: expval(Circuit(1).rx(0), np.zeros((2, 2)), Z(0)), ValueError,
     r"expval: theta must have shape \(1,\) or \(batch, 1\)"),
    (lambda: expval(Circuit(1).rx(0), ["a"], Z(0)), TypeError, "expval: theta must be real"),
    (lambda: expval(Circuit(1).rx(0), [0.1], Z(0), method="magic"), ValueError,
     "expval: method must be one of"),
    (lambda: expval(Circuit(1).rx(0), [0.1], Z(0), method=3), ValueError,
     "expval: method must be one of"),
    (lambda: probs(Circuit(2), None, wires=(0, 1.0)), TypeError, "probs: wires must be int"),
    (lambda: probs(Circuit(2), None, wires=True), TypeError, "probs: wires must be an int"),
    (lambda: sample(Circuit(2), None, 10, wires=[0, None]), TypeError, "sample: wires must be"),
    (lambda: Circuit(2).append("Foo", 0), ValueError, "Circuit.append: unknown gate 'Foo'"),
    (lambda: Circuit(2).channel("Foo", 0, 0.1), ValueError, "Circuit.channel: unknown channel"),
    (lambda: to_qasm(Circuit(1).rx(0), [np.nan]), ValueError, "to_qasm: theta must be finite"),
])
def test_bad_input_table(build, exc, match):
    with pytest.raises(exc, match=match):
        build()


def test_containers_accepted_wherever_an_array_is():
    u = P.random_unitary(4, np.random.default_rng(0))
    a = Circuit(3).rx([0]).cnot(*[1, 2]).unitary([0, 2], u.tolist()).multi_rz(np.array([0, 1]))
    a.kraus([1], [np.eye(2).tolist()]).append("RY", np.int64(2), controls=[0])
    b = Circuit(3).rx(0).cnot(1, 2).unitary((0, 2), u).multi_rz((0, 1)).kraus(1, [np.eye(2)])
    b.append("RY", 2, controls=(0,))
    theta = [0.3, -0.7, 1.1]
    np.testing.assert_allclose(density_matrix(a, theta), density_matrix(b, np.array(theta)))
    np.testing.assert_allclose(probs(a, tuple(theta), wires=[2, 0]),
                               probs(b, np.array(theta), wires=(2, 0)))
    assert expval(a, theta, Z(0)) == expval(b, np.array(theta), Z(0))


def test_gate_names_case_insensitive():
    assert len({k.lower() for k in GATES}) == len(GATES)  # no two names fold together
    for name in GATES:
        for variant in (name, name.lower(), name.upper(), f" {name} "):
            assert _lookup(GATES, variant, "test", "gate") == name
    c = Circuit(3).append("cnot", (0, 1)).append("rx", 2).append("isingzz", (0, 2))
    assert [op.name for op in c.ops] == ["CNOT", "RX", "IsingZZ"]
    c.append("multi_rz", (0, 1, 2))  # '_' ignored
    assert c.ops[-1].name == "MultiRZ"


@pytest.mark.parametrize("name", sorted(CHANNELS))
def test_channel_and_method_names_case_insensitive(name):
    wires = (0, 1) if name.startswith("TwoQubit") else 0
    a = Circuit(2).h(0).channel(name.lower(), wires, 0.2)
    b = Circuit(2).h(0).channel(name, wires, 0.2)
    np.testing.assert_allclose(density_matrix(a), density_matrix(b))
    c = Circuit(1).rx(0)
    for m in ("Adjoint", " parameter_shift ", "PARAMETER-SHIFT"):
        assert np.isclose(expval(c, [0.3], Z(0), method=m), np.cos(0.3))


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.text(max_size=2),
                 st.none(), st.complex_numbers()))
def test_property_nothing_but_ints_is_a_wire(w):
    with pytest.raises(TypeError, match="Circuit.RX: wires must be"):
        Circuit(2).rx(w)
