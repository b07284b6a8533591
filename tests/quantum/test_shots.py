"""Finite-shot expectation values and parameter-shift gradients with standard errors."""

import numpy as np
import pytest

import diffsci as ds
from diffsci.testing import check_grads
from quantum import Circuit, X, Y, Z, expval, expval_shots
from tests.quantum import problems as P
from tests.quantum.test_ops import CIRCUIT, THETA, H

pytestmark = pytest.mark.kernels

C = Circuit(3).ry(0).rx(1).cnot(0, 1).crz(1, 2).phase(2).ising_yy(0, 2).u3(1)
T = np.random.default_rng(4).uniform(-np.pi, np.pi, C.n_params)
HC = 0.7 * Z(0) @ X(1) - 0.4 * Y(2) + 0.3 * X(0) @ Y(1) @ Z(2) + 0.25


def test_exact_mode_is_the_expectation_and_the_exact_gradient():
    """shots=None: the estimator on exact distributions = ⟨H⟩ and the adjoint gradient (every
    parameterised gate, shared/scaled slots), which check_grads and the dense FD confirm."""
    e = expval_shots(CIRCUIT, THETA, H, None, grad=True)
    assert e.stderr == 0.0 and np.all(e.grad_stderr == 0.0) and e.shots is None
    assert np.isclose(e.value, expval(CIRCUIT, THETA, H), atol=1e-12)
    np.testing.assert_allclose(e.grad, ds.grad(lambda t: expval(CIRCUIT, t, H))(THETA),
                               atol=1e-10)
    check_grads(lambda t: expval(CIRCUIT, t, H), (THETA,))
    hd = P.dense_hamiltonian(HC, 3)

    def dense(t):
        psi = np.zeros(8, complex)
        psi[0] = 1
        for op in C.ops:
            psi = P.op_matrix(op, t, 3) @ psi
        return np.vdot(psi, hd @ psi).real

    e = expval_shots(C, T, HC, None, grad=True)
    fd = np.array([(dense(T + 1e-6 * v) - dense(T - 1e-6 * v)) / 2e-6 for v in np.eye(T.size)])
    assert np.isclose(e.value, dense(T), atol=1e-12)
    np.testing.assert_allclose(e.grad, fd, atol=1e-8)


def test_finite_shots_scatter_about_the_exact_values_by_their_standard_errors():
    exact = expval_shots(C, T, HC, None, grad=True)
    shots = 4000
    z_val, z_grad = [], []
    for seed in range(6):
        e = expval_shots(C, T, HC, shots, grad=True, seed=seed)
        assert e.shots == shots
        z_val.append((e.value - exact.value) / e.stderr)
        z_grad.append((e.grad - exact.grad) / e.grad_stderr)
    z_val, z_grad = np.array(z_val), np.array(z_grad)
    assert np.all(np.abs(z_val) < 5) and np.all(np.abs(z_grad) < 5), (z_val, z_grad)
    # the standard error = the analytic one sqrt(Σ c_k² (1 - ⟨P_k⟩²) / shots), within sampling
    terms = [(0.7, Z(0) @ X(1)), (-0.4, Y(2)), (0.3, X(0) @ Y(1) @ Z(2))]
    var = sum(c * c * (1 - expval(C, T, 1.0 * p) ** 2) for c, p in terms) / shots
    e = expval_shots(C, T, HC, shots, seed=11)
    assert abs(e.stderr / np.sqrt(var) - 1) < 0.1
    assert e.grad is None and e.grad_stderr is None
    # reproducible with a seed, and the errors shrink as 1/sqrt(shots)
    a = expval_shots(C, T, HC, 500, grad=True, seed=3)
    b = expval_shots(C, T, HC, 500, grad=True, seed=3)
    assert a.value == b.value and np.array_equal(a.grad, b.grad)
    big = expval_shots(C, T, HC, 50_000, grad=True, seed=5)
    assert np.all(big.grad_stderr < a.grad_stderr / 5)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: expval_shots(C, T, HC, 1), ValueError, "expval_shots: shots must be an int >= 2"),
    (lambda: expval_shots(C, T, HC, 10.5), ValueError, "shots must be an int"),
    (lambda: expval_shots(C, np.stack([T, T]), HC), ValueError, "one parameter set"),
    (lambda: expval_shots(C, T * np.nan, HC), ValueError, "expval_shots: theta must be finite"),
    (lambda: expval_shots(C, T, "Z0"), TypeError, "must be a quantum.Hamiltonian"),
    (lambda: expval_shots(C, T, Z(5)), ValueError, "acts on wire 5"),
    (lambda: expval_shots(Circuit(1).rx(0).bit_flip(0, 0.1), [0.1], Z(0)), ValueError,
     "noise channels"),
])
def test_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_sampling_functions_refuse_traced_theta():
    """sample, counts and expval_shots are not differentiable: a traced θ is refused (the
    estimate's gradient was silently zero, and under diffsci.jit the samples were frozen into
    the compiled program); under jit the refusal runs the function eagerly, so the samples
    follow θ."""
    import warnings

    import diffsci as ds
    import quantum as q

    c = q.Circuit(2).ry(0).ry(1).cnot(0, 1)
    th = np.array([0.3, 0.5])
    calls = {
        "expval_shots": lambda t: q.expval_shots(c, t, q.Z(1), shots=100, seed=1).value,
        "sample": lambda t: np.sum(q.sample(c, t, 20, seed=1)) * 1.0,
        "counts": lambda t: float(len(q.counts(c, t, 20, seed=1))),
    }
    for name, f in calls.items():
        with pytest.raises(TypeError, match=f"{name}: theta is traced"):
            ds.grad(f)(th)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            jf = ds.jit(f, check=False)
            for t in (th, np.array([2.5, 2.0]), np.array([-1.0, 0.1])):
                assert jf(t) == f(t)
