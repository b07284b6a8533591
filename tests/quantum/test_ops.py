"""Gradients: adjoint = parameter shift = finite differences; check_grads on every primitive."""

import numpy as np
import pytest

import diffsci as ds
from diffsci.testing import check_grads
from quantum import Circuit, X, Y, Z, expval, heisenberg, probs, state, tfim, var
from quantum._model import compile_observable
from quantum._ops import Static, pauli_p, state_p
from tests.quantum import problems as P

N = 4


def every_gate_circuit(rng):
    """A random 4-qubit circuit with every parameterised gate (plain, controlled, shared, fixed)."""
    c = Circuit(N)
    for q in range(N):
        c.h(q)
    shared = c.new_param()
    c.rx(0).ry(1).rz(2).phase(3).u3(0).rot(1)
    c.cnot(0, 1).iswap(2, 3).sx(0).t(1).s(2).cy(3, 0)
    c.crx(0, 2).cry(1, 3).crz(3, 0).cphase(2, 1)
    c.ising_xx(0, 3).ising_yy(1, 2).ising_zz(2, 0)
    c.multi_rz((0, 1, 3)).pauli_rot((3, 1, 2), "YXZ")
    c.rx(2, controls=(0, 1)).ry(3, controls=(1,)).phase(1, controls=(0, 3))
    c.ising_zz(1, 2, controls=(3,)).rot(2, controls=(3,))
    c.rz(1, shared).rx(3, -2.0 * shared).ry(0, 0.37)  # a shared, scaled and a fixed angle
    c.unitary((1, 3), P.random_unitary(4, rng)).toffoli(0, 1, 2).cz(3, 2)
    return c


RNG = np.random.default_rng(7)
CIRCUIT = every_gate_circuit(RNG)
THETA = RNG.uniform(-np.pi, np.pi, CIRCUIT.n_params)
H = heisenberg(N, jz=0.6, periodic=True) + 0.3 * X(0) @ Y(2) - 0.7 * Z(1)
H2 = tfim(N, 1.0, 0.8) + 0.25 * Y(3)


def dense_state(circuit, theta):
    """ψ(θ) from dense gate matrices (the reference simulator)."""
    psi = np.zeros(2**N, complex)
    psi[0] = 1
    from quantum import GATES, Param

    for op in circuit.ops:
        ang = [theta[a.index] * a.scale if isinstance(a, Param) else a for a in op.angles]
        nc = GATES[op.name].base_controls
        targets = op.controls[:nc] + op.wires
        u = op.matrix if op.name == "QubitUnitary" else \
            P.gate_matrix(op.name, ang, op.paulis, len(op.wires))
        psi = P.embed(u, targets, N, controls=op.controls[nc:]) @ psi
    return psi


def test_every_parameterised_gate_is_covered():
    names = {op.name for op in CIRCUIT.ops}
    from quantum import GATES

    assert {n for n, s in GATES.items() if s.n_angles} <= names


def test_state_matches_dense_simulation():
    np.testing.assert_allclose(state(CIRCUIT, THETA), dense_state(CIRCUIT, THETA), atol=1e-12)


def test_hamiltonian_expval_matches_dense_matrix():
    psi = dense_state(CIRCUIT, THETA)
    for h in (H, H2):
        ref = np.vdot(psi, P.dense_hamiltonian(h, N) @ psi).real
        assert np.isclose(expval(CIRCUIT, THETA, h), ref, atol=1e-12)


def test_adjoint_equals_parameter_shift_equals_finite_differences():
    f_adj = lambda t: expval(CIRCUIT, t, [H, H2])
    f_ps = lambda t: expval(CIRCUIT, t, [H, H2], method="parameter-shift")
    jac_adj = ds.jacrev(f_adj)(THETA)
    jac_ps = ds.jacrev(f_ps)(THETA)
    eps = 1e-6
    jac_fd = np.stack([(f_adj(THETA + eps * e) - f_adj(THETA - eps * e)) / (2 * eps)
                       for e in np.eye(THETA.size)], axis=-1)
    assert jac_adj.shape == (2, THETA.size)
    np.testing.assert_allclose(jac_adj, jac_ps, atol=1e-10)
    np.testing.assert_allclose(jac_adj, jac_fd, atol=1e-7)


def test_forward_mode_equals_reverse_mode():
    f = lambda t: expval(CIRCUIT, t, [H, H2])
    np.testing.assert_allclose(ds.jacfwd(f)(THETA), ds.jacrev(f)(THETA), atol=1e-11)


@pytest.mark.parametrize("method", ["adjoint", "parameter-shift"])
def test_check_grads_expval(method):
    check_grads(lambda t: expval(CIRCUIT, t, H, method=method), (THETA,))
    check_grads(lambda t: expval(CIRCUIT, t, [H, H2], method=method), (THETA,))


def test_check_grads_state_complex_output():
    check_grads(lambda t: state(CIRCUIT, t), (THETA,))


def test_check_grads_primitives_directly():
    static = Static(CIRCUIT.program, [compile_observable(H, N), compile_observable(H2, N)])
    check_grads(lambda t: state_p(t, static), (THETA,))
    psi = P.random_state(N, np.random.default_rng(3))
    check_grads(lambda p: pauli_p(p, static), (psi,))
    sq = Static(CIRCUIT.program, static.obs, square=True)
    check_grads(lambda p: pauli_p(p, sq), (psi,))


def test_check_grads_probs_and_var():
    check_grads(lambda t: probs(CIRCUIT, t), (THETA,))
    check_grads(lambda t: probs(CIRCUIT, t, wires=(2, 0)), (THETA,))
    check_grads(lambda t: var(CIRCUIT, t, H), (THETA,))


def test_batch_matches_rows_and_differentiates():
    thetas = np.stack([THETA, THETA[::-1].copy(), 0.5 * THETA])
    vals = expval(CIRCUIT, thetas, H)
    assert vals.shape == (3,)
    np.testing.assert_allclose(vals, [expval(CIRCUIT, t, H) for t in thetas], atol=1e-12)
    g = ds.grad(lambda t: np.sum(expval(CIRCUIT, t, H) * np.array([1.0, -2.0, 0.5])))(thetas)
    for row, w in zip(range(3), (1.0, -2.0, 0.5)):
        np.testing.assert_allclose(g[row], w * ds.grad(lambda t: expval(CIRCUIT, t, H))(
            thetas[row]), atol=1e-11)
    check_grads(lambda t: expval(CIRCUIT, t, [H, H2]), (thetas,), modes=("rev",))
    assert state(CIRCUIT, thetas).shape == (3, 2**N)
    check_grads(lambda t: state(CIRCUIT, t), (thetas[:2],), modes=("rev",))


def test_fidelity_loss_gradient_through_state():
    target = P.random_state(N, np.random.default_rng(5))

    def infidelity(t):
        amp = np.sum(np.conj(target) * state(CIRCUIT, t))
        return 1.0 - (np.real(amp) ** 2 + np.imag(amp) ** 2)

    check_grads(infidelity, (THETA,))


def test_hybrid_classical_pre_and_post_processing():
    w = np.linspace(0.1, 0.9, THETA.size)

    def loss(x):
        t = np.tanh(w * x) * 3.0
        return np.log1p(expval(CIRCUIT, t, H) ** 2)

    check_grads(loss, (THETA,))


def test_var_matches_dense():
    psi = dense_state(CIRCUIT, THETA)
    m = P.dense_hamiltonian(H, N)
    ref = np.vdot(psi, m @ m @ psi).real - np.vdot(psi, m @ psi).real ** 2
    assert np.isclose(var(CIRCUIT, THETA, H), ref, atol=1e-11)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_hessian_forward_and_reverse_over_reverse(mode):
    theta = THETA
    for f in (lambda t: expval(CIRCUIT, t, H), lambda t: np.sin(expval(CIRCUIT, t, H)) ** 2,
              lambda t: var(CIRCUIT, t, H2)):
        g = ds.grad(f)
        eps = 1e-5
        fd = np.array([(g(theta + eps * e) - g(theta - eps * e)) / (2 * eps)
                       for e in np.eye(theta.size)])
        h = ds.hessian(f, mode=mode)(theta)
        np.testing.assert_allclose(h, h.T, atol=1e-10)
        np.testing.assert_allclose(h, fd, atol=1e-6)


def test_second_order_checks_and_batches():
    c = Circuit(2).ry(0).rx(1).cnot(0, 1).crz(0, 1).phase(1)
    t = np.array([0.3, -0.5, 0.7, 1.1])
    f = lambda t: np.sum(expval(c, t, [Z(0) @ Z(1) + 0.5 * X(1), Y(0)]) ** 2)  # noqa: E731
    v = np.array([0.2, -1.0, 0.5, 0.3])
    hv = ds.jvp(ds.grad(f), (t,), (v,))[1]
    fd = (ds.grad(f)(t + 1e-5 * v) - ds.grad(f)(t - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(hv, fd, atol=1e-7)
    batch = np.stack([t, -t])
    h = ds.hessian(lambda b: np.sum(expval(c, b, Y(0))), mode="fwd")(batch)
    np.testing.assert_allclose(h[1, :, 1, :], ds.hessian(lambda x: expval(c, x, Y(0)),
                                                         mode="fwd")(-t), atol=1e-10)
    np.testing.assert_allclose(h[0, :, 1, :], 0.0)


def test_second_derivatives_clear_errors_where_unsupported():
    c = Circuit(1).rx(0)
    with pytest.raises(NotImplementedError, match="use method='adjoint'"):
        ds.hessian(lambda t: expval(c, t, Z(0), method="parameter-shift"), mode="fwd")(np.ones(1))
    noisy = Circuit(1).rx(0).depolarizing(0, 0.1)
    with pytest.raises(NotImplementedError, match="noise channels"):
        ds.hessian(lambda t: expval(noisy, t, Z(0)), mode="fwd")(np.ones(1))


def test_paired_rotations_reorder_and_differentiate():
    """One-wire rotations on one wire, separated by gates on other wires, run as adjacent pairs
    (eq. A7); states and gradients are unchanged (dense reference, parameter shift, FD)."""
    c = Circuit(3)
    a = c.new_param()
    c.rx(0, a).ry(1).cnot(1, 2).rz(0, a * 0.5).rx(2).ry(1).h(2).ry(2).rz(0, 0.3).ry(0)
    c.cnot(0, 1).rz(1).rx(1).ry(1)
    prog = c.program
    one = prog.ints[:, 3] | prog.ints[:, 4]
    pairs = sum(1 for g in range(len(one) - 1) if one[g] and one[g] == one[g + 1]
                and prog.kinds[g] == prog.kinds[g + 1] == 5)
    assert pairs >= 4, (prog.kinds, one)
    theta = np.random.default_rng(9).uniform(-np.pi, np.pi, c.n_params)
    dense = np.eye(8, dtype=complex)
    for op in c.ops:
        dense = P.op_matrix(op, theta, 3) @ dense
    np.testing.assert_allclose(state(c, theta), dense[:, 0], atol=1e-12)
    h = Z(0) @ X(1) + 0.7 * Y(2) - 0.2 * X(0)
    g = ds.grad(lambda t: expval(c, t, h))(theta)
    gs = ds.grad(lambda t: expval(c, t, h, method="parameter-shift"))(theta)
    np.testing.assert_allclose(g, gs, atol=1e-10)
    check_grads(lambda t: expval(c, t, h), (theta,), modes=("rev", "fwd"))
    hess = ds.hessian(lambda t: expval(c, t, h))(theta)  # reverse over reverse through pairs
    grad = ds.grad(lambda t: expval(c, t, h))
    eps = 1e-5
    fd = np.stack([(grad(theta + eps * e) - grad(theta - eps * e)) / (2 * eps)
                   for e in np.eye(theta.size)])
    np.testing.assert_allclose(hess, fd, atol=1e-7)


def test_value_and_grad_holds_at_most_three_state_vectors():
    """The fused expval primitive: ψ, its swept copy and λ (eq. A1) are the only states alive;
    measured with tracemalloc at 12 qubits (a state is 64 KiB; Python bookkeeping ≈ a few KiB)."""
    import tracemalloc

    n = 12
    c = Circuit(n)
    for w in range(n):
        c.ry(w).rz(w)
    for w in range(n - 1):
        c.cnot(w, w + 1)
    theta = np.random.default_rng(2).uniform(-np.pi, np.pi, c.n_params)
    h = tfim(n, 1.0, 0.5)
    vg = ds.value_and_grad(lambda t: expval(c, t, h))
    vg(theta)
    tracemalloc.start()
    vg(theta)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak / (16 * 2**n) < 3.3


def test_check_grads_fused_expval_primitive():
    from quantum._ops import expval_p

    static = Static(CIRCUIT.program, [compile_observable(H, N), compile_observable(H2, N)])
    check_grads(lambda t: expval_p(t, static), (THETA,), modes=("rev", "fwd"))
    thetas = np.stack([THETA, 0.3 * THETA])
    check_grads(lambda t: expval_p(t, static), (thetas,), modes=("rev", "fwd"))
    np.testing.assert_allclose(expval_p(thetas, static),
                               pauli_p(state_p(thetas, static), static), atol=1e-12)


def test_fused_expval_backward_runs_again_on_the_same_residuals():
    """The one-observable rule sweeps its saved Hψ in place (eq. A9); a second backward pass on the
    same residuals (a Jacobian of a batch, a vjp applied twice) rebuilds it: same gradients."""
    thetas = np.stack([THETA, 0.5 * THETA, THETA[::-1].copy()])
    jac = ds.jacobian(lambda t: expval(CIRCUIT, t, H))(thetas)  # one backward pass per row
    for b in range(3):
        np.testing.assert_allclose(jac[b, b], ds.grad(lambda t: expval(CIRCUIT, t, H))(
            thetas[b]), atol=1e-11)
        others = [r for r in range(3) if r != b]
        np.testing.assert_allclose(jac[b, others], 0.0, atol=1e-14)
    hea = Circuit(N)  # rotations and CNOTs only: the one-call split-complex path (eq. A11)
    for w in range(N):
        hea.ry(w).rz(w)
    for w in range(N - 1):
        hea.cnot(w, w + 1)
    assert hea.program.adjoint.soa_ok
    theta_hea = np.random.default_rng(8).uniform(-np.pi, np.pi, hea.n_params)
    for c, theta in ((CIRCUIT, THETA), (hea, theta_hea)):
        value, back = ds.vjp(lambda t, c=c: expval(c, t, H), theta)
        first = back(1.0)[0]
        np.testing.assert_allclose(back(-2.0)[0], -2.0 * first, atol=1e-12)
        np.testing.assert_allclose(value, expval(c, theta, H), atol=1e-12)
        g_ps = ds.grad(lambda t, c=c: expval(c, t, H, method="parameter-shift"))(theta)
        np.testing.assert_allclose(first, g_ps, atol=1e-10)
