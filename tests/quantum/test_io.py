"""JSON save/load: every gate and channel, with shared/scaled/fixed slots and θ; errors."""

import json

import numpy as np
import pytest

import diffsci as ds
from diffsci.testing import check_grads
from quantum import Circuit, Z, density_matrix, expval, from_json, state, to_json
from tests.quantum.test_noise import random_kraus
from tests.quantum.test_ops import CIRCUIT, THETA, H

pytestmark = pytest.mark.kernels


def test_round_trip_every_gate_with_slots_and_theta():
    text = to_json(CIRCUIT, THETA, indent=1)
    c, theta = from_json(text)
    np.testing.assert_array_equal(theta, THETA)
    assert c.n_params == CIRCUIT.n_params and len(c) == len(CIRCUIT)
    for a, b in zip(c.ops, CIRCUIT.ops):
        assert (a.name, a.wires, a.controls, a.angles, a.paulis) == (
            b.name, b.wires, b.controls, b.angles, b.paulis)
        assert (a.matrix is None) == (b.matrix is None)
        if a.matrix is not None:
            np.testing.assert_array_equal(a.matrix, b.matrix)
    np.testing.assert_array_equal(state(c, theta), state(CIRCUIT, THETA))
    g = ds.grad(lambda t: expval(c, t, H))(theta)
    np.testing.assert_array_equal(g, ds.grad(lambda t: expval(CIRCUIT, t, H))(THETA))
    check_grads(lambda t: expval(c, t, H), (theta,))
    assert to_json(c, theta, indent=1) == text  # a fixed point
    c2, t2 = from_json(to_json(CIRCUIT))
    assert t2 is None and c2.n_params == CIRCUIT.n_params


def test_round_trip_channels_and_unused_slots():
    c = Circuit(2).ry(0).depolarizing(0, 0.2).two_qubit_dephasing((1, 0), 0.1)
    c.kraus((0, 1), random_kraus(4, 3, np.random.default_rng(1))).amplitude_damping(1, 0.3)
    c.new_param()  # an unused slot is kept
    theta = np.array([0.4, 9.0])
    c2, t2 = from_json(to_json(c, theta))
    assert c2.n_params == 2
    np.testing.assert_allclose(density_matrix(c2, t2), density_matrix(c, theta), atol=1e-15)
    f = lambda cc: ds.grad(lambda t: expval(cc, t, Z(0) @ Z(1)))(theta)  # noqa: E731
    np.testing.assert_allclose(f(c2), f(c), atol=1e-15)


def _doc(**change):
    d = json.loads(to_json(Circuit(2).rx(0).cnot(0, 1).unitary(1, np.eye(2)), [0.1]))
    for k, v in change.items():
        if k.startswith("op0_"):
            d["ops"][0][k[4:]] = v
        elif k.startswith("op2_"):
            d["ops"][2][k[4:]] = v
        else:
            d[k] = v
    return json.dumps(d)


@pytest.mark.parametrize("text, match", [
    ("{", "from_json: not a JSON document"),
    ('{"format": "x"}', "expected a document with format"),
    (_doc(version=7), "unsupported version 7"),
    (_doc(op0_name="Foo"), r"op 0 \(Foo\): Circuit.append: unknown gate 'Foo'"),
    (_doc(op0_wires=[5]), r"op 0 \(RX\): Circuit.RX: wire 5 is out of range"),
    (_doc(op0_wires=[0.5]), r"op 0 \(RX\): Circuit.RX: wires must be int"),
    (_doc(op0_angles=[{"param": -1, "scale": 1}]), r"Param.index must be >= 0"),
    (_doc(op0_angles=[1, 2]), r"expected 1 angle\(s\); got 2"),
    (_doc(op2_matrix=[[[1, 0], [1, 0]], [[0, 0], [1, 0]]]), r"op 2 .*not unitary"),
    (_doc(theta=[0.1, 0.2]), r"theta must be 1 finite numbers"),
    (_doc(n_params=0), r"n_params 0 is below the slots the ops use \(1\)"),
])
def test_load_errors(text, match):
    with pytest.raises(ValueError, match=match):
        from_json(text)


def test_save_errors():
    with pytest.raises(ValueError, match=r"to_json: theta must have shape \(1,\)"):
        to_json(Circuit(1).rx(0), [1, 2])
    with pytest.raises(ValueError, match="to_json: theta must be finite"):
        to_json(Circuit(1).rx(0), [np.nan])
    with pytest.raises(TypeError, match="to_json: circuit must be"):
        to_json("c")
