"""Differentiable initial states: U(θ)ψ₀ and its gradients in θ and ψ₀ (eq. A12)."""

import numpy as np
import pytest

import diffsci as ds
from diffsci.testing import check_grads
from quantum import Circuit, X, Y, Z, expval, probs, state, var
from tests.quantum import problems as P
from tests.quantum.test_ops import CIRCUIT, THETA, H

pytestmark = pytest.mark.kernels
N = 4
RNG = np.random.default_rng(21)
PSI0 = P.random_state(N, RNG)
HD = P.dense_hamiltonian(H, N)


def dense_unitary(c, theta):
    u = np.eye(2**c.n_qubits, dtype=complex)
    for op in c.ops:
        u = P.op_matrix(op, theta, c.n_qubits) @ u
    return u


def _normalised(v):
    return v / np.sqrt(np.sum(np.real(v) ** 2 + np.imag(v) ** 2, axis=-1, keepdims=True))


def test_state_expval_probs_var_match_dense():
    u = dense_unitary(CIRCUIT, THETA)
    psi = u @ PSI0
    np.testing.assert_allclose(state(CIRCUIT, THETA, initial_state=PSI0), psi, atol=1e-12)
    assert np.isclose(expval(CIRCUIT, THETA, H, initial_state=PSI0), np.vdot(psi, HD @ psi).real)
    np.testing.assert_allclose(probs(CIRCUIT, THETA, initial_state=PSI0), np.abs(psi) ** 2,
                               atol=1e-12)
    np.testing.assert_allclose(probs(CIRCUIT, THETA, (3, 1), initial_state=PSI0),
                               (np.abs(psi) ** 2).reshape(2, 2, 2, 2).sum(axis=(0, 2)).T.ravel(),
                               atol=1e-12)
    ref_var = np.vdot(psi, HD @ HD @ psi).real - np.vdot(psi, HD @ psi).real ** 2
    assert np.isclose(var(CIRCUIT, THETA, H, initial_state=PSI0), ref_var)
    # |0…0⟩ as the initial state is the plain circuit; a list is accepted
    e0 = np.eye(2**N)[0]
    np.testing.assert_allclose(state(CIRCUIT, THETA, initial_state=e0.tolist()),
                               state(CIRCUIT, THETA), atol=1e-13)


def test_gradients_in_theta_and_the_initial_state_against_dense():
    def f(t, v):
        return expval(CIRCUIT, t, H, initial_state=_normalised(v))

    v = PSI0 * 1.3
    gt, gv = ds.grad(f, argnums=(0, 1))(THETA, v)

    def dense(t, v):
        psi = dense_unitary(CIRCUIT, t) @ (v / np.linalg.norm(v))
        return np.vdot(psi, HD @ psi).real

    eps = 1e-6
    fd_t = np.array([(dense(THETA + eps * e, v) - dense(THETA - eps * e, v)) / (2 * eps)
                     for e in np.eye(THETA.size)])
    fd_v = np.array([(dense(THETA, v + eps * e) - dense(THETA, v - eps * e)) / (2 * eps)
                     + 1j * (dense(THETA, v + 1j * eps * e) - dense(THETA, v - 1j * eps * e))
                     / (2 * eps) for e in np.eye(2**N)])  # diffsci's convention: d/dRe + i d/dIm
    np.testing.assert_allclose(gt, fd_t, atol=1e-7)
    np.testing.assert_allclose(gv, fd_v, atol=1e-7)
    check_grads(f, (THETA, v))
    check_grads(lambda t, v: state(CIRCUIT, t, initial_state=_normalised(v)), (THETA, v))


@pytest.mark.parametrize("shapes", ["theta-batch", "state-batch", "both"])
def test_batches_broadcast(shapes):
    c = Circuit(3).ry(0).crx(0, 2).ising_zz(1, 2).rz(1)
    t1 = RNG.uniform(-3, 3, c.n_params)
    tb = np.stack([t1, -t1, 0.5 * t1])
    v1 = P.random_state(3, RNG)
    vb = np.stack([P.random_state(3, RNG) for _ in range(3)])
    t, v = {"theta-batch": (tb, v1), "state-batch": (t1, vb), "both": (tb, vb)}[shapes]
    out = state(c, t, initial_state=v)
    assert out.shape == (3, 8)
    for b in range(3):
        tt = t[b] if t.ndim == 2 else t
        vv = v[b] if v.ndim == 2 else v
        np.testing.assert_allclose(out[b], dense_unitary(c, tt) @ vv, atol=1e-12)
    h = Z(0) @ X(2) + 0.4 * Y(1)
    check_grads(lambda t, v: np.sum(expval(c, t, h, initial_state=_normalised(v)) ** 2), (t, v))


def test_forward_mode():
    v = PSI0 * 0.8
    dt = RNG.normal(size=THETA.size)
    dv = RNG.normal(size=2**N) + 1j * RNG.normal(size=2**N)

    def f(t, v):
        return expval(CIRCUIT, t, H, initial_state=_normalised(v))

    _, tan = ds.jvp(f, (THETA, v), (dt, dv))
    gt, gv = ds.grad(f, argnums=(0, 1))(THETA, v)
    assert np.isclose(tan, gt @ dt + np.real(np.vdot(gv, dv)), atol=1e-10)


@pytest.mark.parametrize("call, match", [
    (lambda: state(CIRCUIT, THETA, initial_state=np.ones(16)), r"state: initial_state must have "
     r"norm 1"),
    (lambda: state(CIRCUIT, THETA, initial_state=PSI0[:8]), r"shape \(16,\) or \(batch, 16\)"),
    (lambda: state(CIRCUIT, THETA, initial_state=PSI0 * np.nan), "must be finite"),
    (lambda: state(CIRCUIT, np.stack([THETA] * 2), initial_state=np.stack([PSI0] * 3)),
     r"state: theta of shape \(2, \d+\) and initial_state of shape \(3, 16\) do not broadcast"),
    (lambda: expval(CIRCUIT, THETA, H, method="parameter-shift", initial_state=PSI0),
     "method='adjoint' only"),
    (lambda: probs(Circuit(1).rx(0).bit_flip(0, 0.1), [0.1], initial_state=[1, 0]),
     "pure-state circuits"),
    (lambda: state(CIRCUIT, THETA, initial_state=["a"] * 16), r"must be numbers of shape"),
])
def test_errors(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_second_order_refused_clearly():
    with pytest.raises(NotImplementedError, match="initial_state"):
        ds.hessian(lambda t: expval(CIRCUIT, t, H, initial_state=PSI0))(THETA)
