"""Every gate against a dense reference; the Pauli-term kernels against dense matrices."""

import numpy as np
import pytest

import diffsci as ds
from quantum import GATES, Circuit, Hamiltonian, expval, heisenberg, state, tfim
from quantum import _kernels as K
from quantum._model import compile_observable
from tests.quantum import problems as P

N = 4
RNG = np.random.default_rng(1234)
U1 = P.random_unitary(2, RNG)
U2 = P.random_unitary(4, RNG)

#: One spec per gate of the table: wires on a 4-qubit register (controls first for controlled
#: names), and keyword arguments of Circuit.append.
SPECS = {
    "I": ((2,), {}), "X": ((1,), {}), "Y": ((3,), {}), "Z": ((0,), {}), "H": ((2,), {}),
    "S": ((1,), {}), "Sdg": ((1,), {}), "T": ((3,), {}), "Tdg": ((0,), {}), "SX": ((2,), {}),
    "SXdg": ((1,), {}),
    "RX": ((1,), {}), "RY": ((0,), {}), "RZ": ((3,), {}), "PhaseShift": ((2,), {}),
    "U3": ((1,), {}), "Rot": ((3,), {}),
    "CNOT": ((2, 0), {}), "CZ": ((0, 3), {}), "CY": ((3, 1), {}), "Toffoli": ((3, 0, 2), {}),
    "SWAP": ((3, 1), {}), "CSWAP": ((1, 3, 0), {}), "iSWAP": ((0, 2), {}),
    "CRX": ((1, 2), {}), "CRY": ((3, 0), {}), "CRZ": ((0, 1), {}), "CPhase": ((2, 3), {}),
    "IsingXX": ((0, 3), {}), "IsingYY": ((2, 1), {}), "IsingZZ": ((1, 3), {}),
    "MultiRZ": ((3, 0, 2), {}), "PauliRot": ((2, 0, 3), {"paulis": "XYZ"}),
    "QubitUnitary": ((2, 0), {"matrix": U2}),
}


def test_every_gate_has_a_spec():
    assert set(SPECS) == set(GATES), set(GATES) ^ set(SPECS)


def _reference(name, wires, angles, kwargs, extra_controls=()):
    spec = GATES[name]
    nc = spec.base_controls
    if name == "QubitUnitary":
        u = kwargs["matrix"]
    else:
        u = P.gate_matrix(name, angles, kwargs.get("paulis"), len(wires) - nc)
    return P.embed(u, wires, N, controls=extra_controls)


def _run(circuit, theta, psi0):
    psi = psi0.copy()
    K.run_forward(psi, *circuit.program.arrays, np.asarray(theta, float))
    return psi


@pytest.mark.parametrize("name", sorted(SPECS))
@pytest.mark.parametrize("extra_control", [False, True])
def test_gate_matches_dense_reference(name, extra_control):
    wires, kwargs = SPECS[name]
    free = [w for w in range(N) if w not in wires]
    controls = (free[0],) if extra_control else ()
    c = Circuit(N).append(name, wires, controls=controls, **kwargs)
    angles = RNG.uniform(-np.pi, np.pi, c.n_params)
    psi0 = P.random_state(N, RNG)
    ref = _reference(name, wires, angles, kwargs, controls) @ psi0
    np.testing.assert_allclose(_run(c, angles, psi0), ref, atol=1e-12)
    # the inverse kernels undo the gate
    psi = _run(c, angles, psi0)
    prog = c.program
    for g in range(prog.kinds.size - 1, -1, -1):
        phi = prog.scale[g] * angles[prog.pidx[g]] + prog.offset[g] if prog.pidx[g] >= 0 \
            else prog.offset[g]
        K.apply_op(psi, prog.kinds[g], prog.ints[g], prog.mats[g], phi, True)
    np.testing.assert_allclose(psi, psi0, atol=1e-12)


@pytest.mark.parametrize("name", ["RX", "RY", "RZ", "IsingXX", "IsingYY", "IsingZZ"])
def test_rotations_are_expm_of_generator_and_cos_sin(name):
    phi = 0.83
    word = name[-1] * (2 if name.startswith("Ising") else 1)
    u = P.gate_matrix(name, (phi,))
    closed = np.cos(phi / 2) * np.eye(u.shape[0]) - 1j * np.sin(phi / 2) * P.pauli_word(word)
    np.testing.assert_allclose(u, closed, atol=1e-13)


def test_kron_embedding_agrees_with_controlled_embedding():
    u = P.random_unitary(4, RNG)
    np.testing.assert_allclose(P.kron_embed(u, (3, 1), N), P.embed(u, (3, 1), N), atol=1e-14)
    c = Circuit(N).unitary((3, 1), u)
    psi0 = P.random_state(N, RNG)
    np.testing.assert_allclose(_run(c, [], psi0), P.kron_embed(u, (3, 1), N) @ psi0, atol=1e-12)


def test_named_matrices():
    np.testing.assert_allclose(P.FIXED["SX"] @ P.FIXED["SX"], P.X, atol=1e-14)
    np.testing.assert_allclose(P.u3(0.3, 0.0, 0.0), P.rot("Y", 0.3), atol=1e-14)


@pytest.mark.parametrize("H", [heisenberg(N), tfim(N, 0.7, 1.3, periodic=True),
                               Hamiltonian(((0.4, "XYZI", (0, 1, 2, 3)), (-1.1, "YY", (3, 0)),
                                            (2.0, "", ())))],
                         ids=["heisenberg", "tfim", "mixed"])
def test_pauli_kernels_match_dense(H):
    psi = P.random_state(N, RNG)
    dense = P.dense_hamiltonian(H, N)
    xm, zm, ph = compile_observable(H, N)
    assert np.isclose(K.pauli_terms_expval(psi, xm, zm, ph), np.vdot(psi, dense @ psi).real,
                      atol=1e-12)
    out = np.empty_like(psi)
    K.apply_pauli_terms(psi, out, xm, zm, ph)
    np.testing.assert_allclose(out, dense @ psi, atol=1e-12)


#: Terms sharing a flip mask (XX, YY, XY on wires 0, 1; X and Y on wire 2 with Z's), Z-type terms
#: and a constant: the fused form groups them (eq. P2).
FUSED_H = Hamiltonian(((0.4, "XX", (0, 1)), (-0.7, "YY", (0, 1)), (0.3, "XY", (1, 0)),
                       (1.1, "XZ", (2, 3)), (0.6, "YZ", (2, 0)), (-0.2, "ZZ", (1, 3)),
                       (0.5, "Z", (2,)), (1.5, "", ()), (0.9, "XYZI", (0, 1, 2, 3))))


@pytest.mark.parametrize("H", [FUSED_H, tfim(N, 0.7, 1.3), Hamiltonian(((0.3, "XY", (1, 2)),)),
                               0.5 * Hamiltonian(((1.0, "ZZ", (0, 2)),))],
                         ids=["grouped", "tfim", "no-diagonal", "diagonal-only"])
def test_fused_observable_kernels_match_dense(H):
    obs = compile_observable(H, N)
    diag, gx, gstart, tz, tph = obs.fused
    assert gx.size == len(set(int(x) for x in obs[0] if x)), "one group per distinct flip mask"
    psi = P.random_state(N, RNG)
    dense = P.dense_hamiltonian(H, N)
    expval, apply = K.fused_expval, K.fused_apply
    assert np.isclose(expval(psi, *obs.fused), np.vdot(psi, dense @ psi).real, atol=1e-12)
    out = np.full_like(psi, np.nan)
    apply(psi, out, *obs.fused)
    np.testing.assert_allclose(out, dense @ psi, atol=1e-12)
    axpy = K.fused_axpy
    acc = psi.copy()
    axpy(psi, acc, -0.7, *obs.fused)  # acc <- acc - 0.7 H psi
    np.testing.assert_allclose(acc, psi - 0.7 * (dense @ psi), atol=1e-12)
    for tile in (2, 4, 2**N):  # cache-blocked: some groups per block, the others whole
        acc = psi.copy()
        K.fused_axpy_tiled(psi, acc, -0.7, *obs.fused, tile)
        np.testing.assert_allclose(acc, psi - 0.7 * (dense @ psi), atol=1e-12)
    assert compile_observable(H, N) is obs, "compiled forms are cached per (H, n)"


def test_generator_kernels_match_dense():
    lam, psi = P.random_state(N, RNG), P.random_state(N, RNG)
    c = Circuit(N).crx(1, 2, 0.4).phase(3, 0.2, controls=(0,))
    prog = c.program
    proj = lambda w: P.embed(P.P1, (w,), N)  # |1><1| on wire w
    gens = [-0.5j * proj(1) @ P.embed(P.X, (2,), N), 1j * proj(0) @ proj(3)]
    for g, A in enumerate(gens):
        got = K.generator_inner(lam, psi, prog.kinds[g], prog.ints[g])
        assert np.isclose(got, np.vdot(lam, A @ psi), atol=1e-12)
        dst = lam.copy()
        K.add_generator(dst, psi, prog.kinds[g], prog.ints[g], 0.7)
        np.testing.assert_allclose(dst, lam + 0.7 * A @ psi, atol=1e-12)


@pytest.mark.parametrize("first", ["X", "Y", "Z"])
@pytest.mark.parametrize("second", ["X", "Y", "Z", None])
def test_specialised_rotation_adjoint_kernels(first, second):
    """Every (Pauli, Pauli) pair and single of the one-wire adjoint kernels (eq. A7–A8), on every
    bit of 6 qubits (blocks of 1 to 32 pairs), serial and split (eq. T1): the gradient equals
    parameter shift, the swept-back state is |0…0⟩ and the cotangent equals the dense U† λ."""
    n = 6
    c = Circuit(n)
    for w in range(n):
        c.append("R" + first, (w,))
        if second:
            c.append("R" + second, (w,))
    for w in range(n - 1):
        c.cnot(w, w + 1)
    for w in range(n):
        c.append("R" + (second or first), (w,))
    prog = c.program
    theta = RNG.uniform(-np.pi, np.pi, prog.n_params)
    h = tfim(n, 0.8, 0.6) + Hamiltonian(((0.4, "YX", (0, 3)),))
    g_adj = ds.grad(lambda t: expval(c, t, h))(theta)
    g_ps = ds.grad(lambda t: expval(c, t, h, method="parameter-shift"))(theta)
    np.testing.assert_allclose(g_adj, g_ps, atol=1e-10)
    lam0 = P.random_state(n, np.random.default_rng(7))
    dense = np.eye(2**n, dtype=complex)
    for op in c.ops:
        dense = P.op_matrix(op, theta, n) @ dense
    grads = []
    for split, pr in ((False, prog), (True, prog), (False, prog.adjoint), (True, prog.adjoint)):
        psi = dense[:, 0].copy()
        lam = lam0.copy()
        grads.append(np.zeros(prog.n_params))
        if split:
            K.adjoint_sweep_split(psi, lam, *pr.arrays, theta, grads[-1], pr.top_rows)
        else:
            K.adjoint_sweep(psi, lam, *pr.arrays, theta, grads[-1])
        np.testing.assert_allclose(psi, np.eye(2**n)[0], atol=1e-12)
        np.testing.assert_allclose(lam, dense.conj().T @ lam0, atol=1e-12)
    for pr in (prog, prog.adjoint):  # split-complex (eq. A11)
        assert pr.soa_ok
        grads.append(np.zeros(prog.n_params))
        p, lm = np.concatenate([dense[:, 0].real, dense[:, 0].imag]), np.empty(2**(n + 1))
        K.split_complex(lam0, lm)
        K.adjoint_sweep_soa(p, lm, *pr.arrays, theta, grads[-1])
        np.testing.assert_allclose(p[:2**n] + 1j * p[2**n:], np.eye(2**n)[0], atol=1e-12)
        np.testing.assert_allclose(lm[:2**n] + 1j * lm[2**n:], dense.conj().T @ lam0,
                                   atol=1e-12)
    for gr in grads[1:]:
        np.testing.assert_allclose(gr, grads[0], atol=1e-12)
    # forward mode (tangent sweep, one pass per rotation): J·u against central differences
    u = np.random.default_rng(3).normal(size=prog.n_params)
    eps = 1e-6
    fd = (state(c, theta + eps * u) - state(c, theta - eps * u)) / (2 * eps)
    for split in (False, True):
        psi = np.eye(2**n, dtype=complex)[0]
        dpsi = np.zeros(2**n, complex)
        if split:
            K.tangent_sweep_split(psi, dpsi, *prog.arrays, theta, u, prog.top_rows)
        else:
            K.tangent_sweep(psi, dpsi, *prog.arrays, theta, u)
        np.testing.assert_allclose(psi, dense[:, 0], atol=1e-12)
        np.testing.assert_allclose(dpsi, fd, atol=1e-8)


@pytest.mark.parametrize("seed", range(6))
def test_cnot_fused_sweep_matches_unfused(seed):
    """The sweep in ``Program.adjoint``'s order (each CNOT's target rotations just before it,
    un-applied with the CNOT in one pass, eq. A10) = the sweep in the compiled order: gradient
    and swept-back states, on random circuits of X/Y/Z rotations (single and paired) on every
    wire and CNOTs with the control above and below the target (incl. bits 0, 1, 2 and the top
    bit); also split (eq. T1) and tiled, and the gradient against parameter shift."""
    rng = np.random.default_rng(100 + seed)
    n = 7
    c = Circuit(n)
    for _ in range(3):
        for w in range(n):
            for _ in range(rng.integers(0, 3)):
                c.append("R" + "XYZ"[rng.integers(3)], (w,))
        ladder = [(w, w + 1) for w in range(n - 1)] + [tuple(rng.choice(n, 2, replace=False))
                                                       for _ in range(3)]
        for a, b in ladder:
            c.cnot(int(a), int(b))
    prog = c.program
    adj = prog.adjoint
    fused = sum(1 for g in range(1, adj.kinds.size)
                if adj.kinds[g] == K.K_X and adj.kinds[g - 1] == K.K_ROT
                and adj.ints[g - 1, 3] | adj.ints[g - 1, 4] == 1 << adj.ints[g, 0]
                and adj.ints[g, 2] > 1 << adj.ints[g, 0])
    assert fused >= n - 3, fused  # most of the ladder's CNOTs absorb their target's rotations
    theta = rng.uniform(-np.pi, np.pi, prog.n_params)
    psi0, lam0 = P.random_state(n, rng), P.random_state(n, rng)
    ref = (psi0.copy(), lam0.copy(), np.zeros(prog.n_params))
    K.adjoint_sweep(*ref[:2], *prog.arrays, theta, ref[2])
    assert adj.soa_ok
    for mode in ("plain", "split", "tiled", "soa", "soa-tiled", "soa-split", "soa-split-tiled"):
        psi, lam, grad = psi0.copy(), lam0.copy(), np.zeros(prog.n_params)
        if mode.startswith("soa"):  # split-complex (eq. A11)
            p, lm = np.empty(2 * psi.size), np.empty(2 * psi.size)
            K.split_complex(psi, p)
            K.split_complex(lam, lm)
            if mode == "soa":
                K.adjoint_sweep_soa(p, lm, *adj.arrays, theta, grad)
            elif mode.startswith("soa-split"):
                tile = 8 if mode.endswith("tiled") else psi.size
                K.adjoint_sweep_soa_split(p, lm, *adj.arrays, theta, grad, adj.top_rows,
                                          adj.low_rows(3), tile)
            else:
                K.adjoint_sweep_soa_tiled(p, lm, *adj.arrays, theta, grad, adj.low_rows(3), 8)
            psi, lam = p[:psi.size] + 1j * p[psi.size:], lm[:psi.size] + 1j * lm[psi.size:]
        elif mode == "split":
            K.adjoint_sweep_split(psi, lam, *adj.arrays, theta, grad, adj.top_rows)
        elif mode == "tiled":
            K.adjoint_sweep_tiled(psi, lam, *adj.arrays, theta, grad, adj.low_rows(3), 8)
        else:
            K.adjoint_sweep(psi, lam, *adj.arrays, theta, grad)
        for x, y in zip(ref, (psi, lam, grad)):
            np.testing.assert_allclose(y, x, atol=1e-12, err_msg=mode)
    h = tfim(n, 0.7, 0.9)
    g_adj = ds.grad(lambda t: expval(c, t, h))(theta)
    g_ps = ds.grad(lambda t: expval(c, t, h, method="parameter-shift"))(theta)
    np.testing.assert_allclose(g_adj, g_ps, atol=1e-10)


def test_split_sweeps_match_serial():
    """The two-thread split sweeps (runs off the top bit on the two halves, eq. T1) = serial:
    forward, adjoint (gradient and final states) and tangent, on a circuit whose runs alternate
    between the top wire and the others (controlled, two-qubit and diagonal rows included)."""
    n = 5
    c = Circuit(n)
    for q in range(n):
        c.ry(q).rz(q)
    for q in range(n - 1):
        c.cnot(q, q + 1)
    c.crx(1, 3).append("IsingZZ", (2, 4)).rx(0).swap(1, 2).cnot(4, 0).ry(3).rz(0).t(2)
    c.cz(0, 1).rx(4)
    prog = c.program
    top = prog.top_rows
    assert top.any() and not top.all() and np.any(top[1:] != top[:-1]), top
    theta = RNG.uniform(-np.pi, np.pi, prog.n_params)
    lam0 = P.random_state(n, np.random.default_rng(11))
    u = np.random.default_rng(12).normal(size=prog.n_params)
    e0 = np.eye(2**n, dtype=complex)[0]
    a, b = e0.copy(), e0.copy()
    K.run_forward(a, *prog.arrays, theta)
    K.run_forward_split(b, *prog.arrays, theta, top)
    np.testing.assert_allclose(b, a, atol=1e-13)
    out = []
    for split in (False, True):
        psi, lam, grad = a.copy(), lam0.copy(), np.zeros(prog.n_params)
        if split:
            K.adjoint_sweep_split(psi, lam, *prog.arrays, theta, grad, top)
        else:
            K.adjoint_sweep(psi, lam, *prog.arrays, theta, grad)
        p2, d2 = e0.copy(), np.zeros(2**n, complex)
        if split:
            K.tangent_sweep_split(p2, d2, *prog.arrays, theta, u, top)
        else:
            K.tangent_sweep(p2, d2, *prog.arrays, theta, u)
        out.append((psi, lam, grad, p2, d2))
    for x, y in zip(*out):
        np.testing.assert_allclose(y, x, atol=1e-12)


@pytest.mark.parametrize("bits", [1, 3])
def test_tiled_sweep_matches_serial(bits):
    """The cache-blocked sweep (runs of rows on bits < ``bits`` block by block) = the plain one."""
    n = 5
    c = Circuit(n)
    for q in range(n):
        c.ry(q).rz(q)
    for q in range(n - 1):
        c.cnot(q, q + 1)
    c.crx(4, 3).swap(3, 4).rx(2).append("IsingZZ", (3, 4)).t(4).cz(0, 4).ry(4)
    prog = c.program
    low = prog.low_rows(bits)
    assert low.any() and not low.all()
    theta = RNG.uniform(-np.pi, np.pi, prog.n_params)
    psi0, lam0 = P.random_state(n, RNG), P.random_state(n, RNG)
    out = []
    for tiled in (False, True):
        psi, lam, grad = psi0.copy(), lam0.copy(), np.zeros(prog.n_params)
        if tiled:
            K.adjoint_sweep_tiled(psi, lam, *prog.arrays, theta, grad, low, 1 << bits)
        else:
            K.adjoint_sweep(psi, lam, *prog.arrays, theta, grad)
        out.append((psi, lam, grad))
    for x, y in zip(*out):
        np.testing.assert_allclose(y, x, atol=1e-12)
