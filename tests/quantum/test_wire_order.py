"""Every multi-wire gate and every channel in every wire order, on every kernel path.

The row bookkeeping of the split (two-thread) and cache-blocked sweeps cuts a program into runs
of rows by the bits they touch (``Program.top_rows``, ``Program.low_rows``). A row that touches
more bits than the bookkeeping knows is run on half a state (out of range: a crash) or cut from
its payload (a two-wire channel's 16 ``K_DATA`` rows). So each gate and channel here runs with
its wires in every order, one of them the top wire 0 and one the lowest wire n - 1, on a register
below and one at :data:`quantum._kernels.PAR_MIN_AMPS` / ``TILE_MIN_AMPS`` amplitudes (18 qubits
pure, 9 as a density matrix), with one and with two Numba threads, against a dense reference
written here (local matrices applied by ``np.tensordot``; Kraus sums by dense matrices).
Run under ``NUMBA_BOUNDSCHECK=1`` too (the ``kernels`` marker).
"""

import zlib
from itertools import permutations

import numba
import numpy as np
import pytest

import diffsci as ds
from diffsci.testing import check_grads
from quantum import GATES, Circuit, Param, X, Y, Z, density_matrix, expval, state
from quantum import _kernels as K
from tests.quantum import problems as P
from tests.quantum.test_noise import random_kraus

pytestmark = pytest.mark.kernels

RNG = np.random.default_rng(2024)
U4 = P.random_unitary(4, RNG)
U8 = P.random_unitary(8, RNG)
#: the multi-wire gates: (number of wires incl. implied controls, keyword arguments)
MULTI = {
    name: (spec.n_wires + spec.base_controls if spec.n_wires else 2, {})
    for name, spec in GATES.items() if (spec.n_wires or 2) + spec.base_controls >= 2
}
MULTI["PauliRot"] = (2, {"paulis": "XY"})
MULTI["QubitUnitary"] = (2, {"matrix": U4})
THREE = {"MultiRZ3": ("MultiRZ", {}), "PauliRot3": ("PauliRot", {"paulis": "YZX"}),
         "QubitUnitary3": ("QubitUnitary", {"matrix": U8})}

#: Register sizes: below every threshold (serial, one-call) and at the split/blocked threshold.
PURE_SIZES = (4, 18)
MIXED_SIZES = (2, 9)
assert 1 << 18 >= K.PAR_MIN_AMPS and 1 << 18 >= K.TILE_MIN_AMPS and 1 << 17 > 1 << K.TILE_BITS
THREADS = (1, 2) if numba.config.NUMBA_NUM_THREADS >= 2 else (1,)


@pytest.fixture(params=THREADS, ids=lambda t: f"{t}thr")
def threads(request):
    old = numba.get_num_threads()
    numba.set_num_threads(request.param)
    yield request.param
    numba.set_num_threads(old)


def apply_local(psi, u, wires, n):
    """u (on ``wires``, the first the most significant) applied to a state of n qubits."""
    k = len(wires)
    t = np.tensordot(u.reshape((2,) * (2 * k)), psi.reshape((2,) * n),
                     axes=(list(range(k, 2 * k)), list(wires)))
    return np.moveaxis(t, list(range(k)), list(wires)).reshape(-1)


def _gate_cases():
    cases = []
    for name, (k, kw) in MULTI.items():
        cases.append((name, k, kw))
    for name, kw in THREE.values():
        cases.append((name, 3, kw))
    return cases


def _wire_orders(k, n):
    base = (0, n - 1) if k == 2 else (0, n // 2, n - 1)
    return list(permutations(base))


def _build(name, wires, kw, n, fixed):
    """A fixed product-state layer (RY, RX on every wire), the gate (fresh angles), then a fresh
    RX on its first wire and RY on its last; fixed: the layer's angles."""
    c = Circuit(n)
    for w in range(n):
        c.ry(w, float(fixed[w, 0])).rx(w, float(fixed[w, 1]))  # a fixed product state
    c.append(name, wires, **kw)
    c.rx(wires[0]).ry(wires[-1])
    return c


def _reference_state(c, theta, n):
    """ψ(θ) by local dense matrices (tensordot), from the gate definitions of tests.problems;
    the first 2n gates (RY then RX on each wire) as the product state they make."""
    ops = c.ops
    psi = np.ones(1, complex)
    for w in range(n):
        ry, rx = ops[2 * w], ops[2 * w + 1]
        assert (ry.name, rx.name, ry.wires, rx.wires) == ("RY", "RX", (w,), (w,))
        psi = np.kron(psi, P.rot("X", rx.angles[0]) @ P.rot("Y", ry.angles[0])[:, 0])
    for op in ops[2 * n:]:
        ang = [theta[a.index] * a.scale if isinstance(a, Param) else a for a in op.angles]
        nc = GATES[op.name].base_controls
        u = op.matrix if op.name == "QubitUnitary" else P.gate_matrix(
            op.name, ang, op.paulis, len(op.wires))
        psi = apply_local(psi, np.asarray(u, complex), op.controls[:nc] + op.wires, n)
    return psi


def _reference_expval(psi, h, n):
    total = 0.0
    for coef, word, wires in h.terms:
        total += coef * np.vdot(psi, apply_local(psi, P.pauli_word(word), wires, n)).real
    return total


def _fd(f, theta, eps=1e-6):
    g = np.zeros_like(theta)
    for i in range(theta.size):
        e = np.zeros_like(theta)
        e[i] = eps
        g[i] = (f(theta + e) - f(theta - e)) / (2 * eps)
    return g


_REF = {}  # (case, n) -> dense reference values
_CYCLIC = {(0, 2, 3), (2, 3, 0), (3, 0, 2)}  # each wire once on top, once lowest
#: (gate case, n): every order below the thresholds; at 18 qubits both orders of a pair and the
#: three cyclic orders of a triple (each wire once the top wire and once the lowest)
CASES = [((name, k, kw, wires), n) for name, k, kw in _gate_cases() for wires in _wire_orders(k, 4)
         for n in PURE_SIZES if n <= 4 or k == 2 or wires in _CYCLIC]


def _ids(arg):
    (name, _, kw, wires), n = arg
    return f"{name}{len(wires)}-{''.join(map(str, wires))}-{n}q"


@pytest.mark.parametrize("case_n", CASES, ids=_ids)
def test_multi_wire_gate_every_order_every_path(case_n, threads):
    case, n = case_n
    name, k, kw, wires4 = case
    if name == "QubitUnitary" and k == 2:
        kw = {"matrix": U4}
    remap = {0: 0, 3: n - 1, 2: n // 2}
    wires = tuple(remap[w] for w in wires4)
    rng = np.random.default_rng(zlib.crc32(repr((name, wires, n)).encode()))
    fixed = rng.uniform(-np.pi, np.pi, (n, 2))
    c = _build(name, wires, kw, n, fixed)
    theta = rng.uniform(-np.pi, np.pi, c.n_params)
    h = Z(wires[0]) @ X(wires[-1]) + 0.5 * Y(wires[0]) - 0.3 * X(wires[-1]) + 0.2 * Z(wires[1])
    h2 = X(wires[0]) @ Y(wires[1]) + 0.4 * Z(wires[-1])

    def ref_loss(t):
        p = _reference_state(c, t, n)
        return _reference_expval(p, h, n) + 0.5 * _reference_expval(p, h2, n)

    key = (name, wires, n)
    if key not in _REF:  # the dense references, shared by the thread counts
        _REF[key] = (_reference_state(c, theta, n), ref_loss(theta), _fd(ref_loss, theta))
    psi_ref, v_ref, g_ref = _REF[key]
    np.testing.assert_allclose(state(c, theta), psi_ref, atol=1e-12)

    def loss(t):  # one observable (the Hψ-seeded rule) and a list of two (the general rule)
        return expval(c, t, h) + 0.5 * expval(c, t, [h2, h])[0]

    v, g = ds.value_and_grad(loss)(theta)
    assert np.isclose(v, v_ref, atol=1e-11)
    np.testing.assert_allclose(g, g_ref, atol=1e-7)
    if n <= 4 or threads > 1:  # the tangent sweep (one thread at 18 qubits: the serial one)
        u = rng.normal(size=theta.size)
        _, tan = ds.jvp(loss, (theta,), (u,))
        assert np.isclose(tan, g_ref @ u, atol=1e-7)
    if n <= 4:
        check_grads(lambda t: expval(c, t, h), (theta,))
        thetas = np.stack([theta, rng.uniform(-np.pi, np.pi, c.n_params)])  # the batch kernels
        gb = ds.grad(lambda t: np.sum(expval(c, t, h)))(thetas)
        for b in range(2):
            np.testing.assert_allclose(
                gb[b], _fd(lambda t: _reference_expval(_reference_state(c, t, n), h, n),
                           thetas[b]), atol=1e-7)


# ---------------------------------------------------------------------------- channels


def _two_wire_kraus(name, p, rng):
    if name == "TwoQubitDepolarizing":
        return [np.sqrt(1 - p) * np.eye(4)] + [
            np.sqrt(p / 15) * np.kron(P.PAULI[a], P.PAULI[b])
            for a in "IXYZ" for b in "IXYZ" if a + b != "II"]
    if name == "TwoQubitDephasing":
        return [np.sqrt(1 - p) * np.eye(4)] + [
            np.sqrt(p / 3) * np.kron(P.PAULI[a], P.PAULI[b]) for a, b in ("ZI", "IZ", "ZZ")]
    return random_kraus(4, 3, rng)


CHANNEL_CASES = [(name, order) for name in ("TwoQubitDepolarizing", "TwoQubitDephasing", "Kraus")
                 for order in ((0, 1), (1, 0))]


@pytest.mark.parametrize("n", MIXED_SIZES)
@pytest.mark.parametrize("name,order", CHANNEL_CASES)
def test_two_wire_channel_every_order_every_path(name, order, n, threads):
    """Two-wire channels (K_CHAN2 and its K_DATA payload), one-wire channels on the top and the
    lowest wire, and a two-wire gate, on vec(ρ) of 2n qubits: 2**18 amplitudes at n = 9."""
    rng = np.random.default_rng(7 + n + 3 * order[0])
    wires = (0, n - 1) if order == (0, 1) else (n - 1, 0)
    ks = _two_wire_kraus(name, 0.3, rng)
    c = Circuit(n)
    for w in range(n):
        c.ry(w, float(rng.uniform(-3, 3))).rx(w, float(rng.uniform(-3, 3)))
    if name == "TwoQubitDepolarizing":
        c.two_qubit_depolarizing(wires, 0.3)
    elif name == "TwoQubitDephasing":
        c.two_qubit_dephasing(wires, 0.3)
    else:
        c.kraus(wires, ks)
    c.depolarizing(0, 0.1).amplitude_damping(n - 1, 0.2).crx(wires[1], wires[0])
    c.append("IsingXX", wires).ry(wires[0])
    theta = rng.uniform(-np.pi, np.pi, c.n_params)
    chans = {2 * n: ks, 2 * n + 1: P.KRAUS["Depolarizing"](0.1),
             2 * n + 2: P.KRAUS["AmplitudeDamping"](0.2)}
    h = Z(wires[0]) @ X(wires[1]) + 0.5 * Y(wires[1])
    hd = P.dense_hamiltonian(h, n) if n <= 4 else None

    def ref(t):
        rho = _reference_rho(c, t, chans)
        total = 0.0
        for coef, word, ws in h.terms:  # tr(P ρ) with P applied to ρ's row wires
            d = 1 << n
            pr = apply_local(rho.reshape(-1), P.pauli_word(word), ws, 2 * n)
            total += coef * np.trace(pr.reshape(d, d)).real
        return total

    key = (name, order, n)
    if key not in _REF:  # the dense references, shared by the thread counts
        _REF[key] = (_reference_rho(c, theta, chans), ref(theta), _fd(ref, theta))
    rho_ref, v_ref, g_ref = _REF[key]
    np.testing.assert_allclose(density_matrix(c, theta), rho_ref, atol=1e-12)
    if hd is not None:  # the tensor reference = the dense-matrix Kraus sums of tests.problems
        dense = P.dense_density(c, theta, kraus=chans)
        np.testing.assert_allclose(rho_ref, dense, atol=1e-13)
        assert np.isclose(v_ref, np.trace(hd @ dense).real)
    v, g = ds.value_and_grad(lambda t: expval(c, t, h))(theta)
    assert np.isclose(v, v_ref, atol=1e-11)
    np.testing.assert_allclose(g, g_ref, atol=1e-7)
    u = rng.normal(size=theta.size)
    _, tan = ds.jvp(lambda t: expval(c, t, h), (theta,), (u,))
    assert np.isclose(tan, g_ref @ u, atol=1e-7)
    if n <= 2:
        check_grads(lambda t: expval(c, t, h), (theta,))


def _reference_rho(c, theta, chans):
    """ρ(θ) on (2,)*2n tensors: U on the row wires and conj U on the column wires per gate,
    Σ_k K_k ρ K_k† per channel (``chans``: op index -> Kraus operators)."""
    n = c.n_qubits
    r = np.zeros(1 << 2 * n, complex)
    r[0] = 1.0
    for i, op in enumerate(c.ops):
        col = tuple(n + w for w in op.wires)
        if i in chans:
            r = sum(apply_local(apply_local(r, np.asarray(k, complex), op.wires, 2 * n),
                                np.conj(np.asarray(k, complex)), col, 2 * n) for k in chans[i])
            continue
        ang = [theta[a.index] * a.scale if isinstance(a, Param) else a for a in op.angles]
        nc = GATES[op.name].base_controls
        u = np.asarray(P.gate_matrix(op.name, ang, op.paulis, len(op.wires)), complex)
        ws = op.controls[:nc] + op.wires
        r = apply_local(apply_local(r, u, ws, 2 * n), u.conj(), tuple(n + w for w in ws), 2 * n)
    d = 1 << n
    return r.reshape(d, d)


def test_row_masks_cover_every_bit_a_row_touches():
    """The bookkeeping itself: each row's mask (``Program.touched``) holds every bit its kernel
    indexes, and a two-wire channel's payload rows share its run in ``top_rows``/``low_rows``."""
    n = 3
    for wires in permutations((0, 1, 2), 2):
        c = Circuit(n).h(0).two_qubit_depolarizing(wires, 0.2).kraus(
            wires[::-1], random_kraus(4, 2, RNG)).bit_flip(wires[0], 0.1)
        prog = c.mixed_program
        for g, kind in enumerate(prog.kinds):
            row = prog.ints[g]
            if kind == K.K_CHAN2:
                bits = {int(b) for b in row[:4]}
                assert all(prog.touched[g] >> b & 1 for b in bits), (wires, g)
                assert len(set(prog.touched[g:g + 17])) == 1
                for bits_below in range(1, 2 * n + 1):
                    low = prog.low_rows(bits_below)
                    assert len(set(low[g:g + 17])) == 1
                assert len(set(prog.top_rows[g:g + 17])) == 1
            elif kind == K.K_CHAN:
                assert prog.touched[g] >> int(row[0]) & 1 and prog.touched[g] >> int(row[1]) & 1
