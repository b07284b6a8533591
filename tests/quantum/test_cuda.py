"""The numba.cuda kernels against the CPU kernels (on the CUDA simulator when there is no GPU)."""

import numpy as np
import pytest

import diffsci as ds
from diffsci.devices import cuda_available, cuda_simulator_active
from quantum import _cuda as C
from quantum import _kernels as K
from quantum import expval, hardware_efficient, heisenberg, state
from tests.quantum import problems as P
from tests.quantum.test_ops import CIRCUIT, THETA, H

pytestmark = pytest.mark.skipif(
    not (cuda_available() or cuda_simulator_active()),
    reason="needs a CUDA GPU or NUMBA_ENABLE_CUDASIM=1",
)


def test_every_op_matches_cpu_kernel_forward_and_inverse():
    prog = CIRCUIT.program
    cu = C._cuda()
    rng = np.random.default_rng(0)
    phi = C._angles(prog, THETA)
    for g in range(prog.kinds.size):
        for inverse in (False, True):
            psi = P.random_state(prog.n_qubits, rng)
            ref = psi.copy()
            K.apply_op(ref, prog.kinds[g], prog.ints[g], prog.mats[g], phi[g], inverse)
            d = cu.to_device(psi)
            C.apply_op(d, int(prog.kinds[g]), prog.ints[g], prog.mats[g], phi[g], inverse)
            np.testing.assert_allclose(d.copy_to_host(), ref, atol=1e-13,
                                       err_msg=f"op {g} kind {prog.kinds[g]} inverse={inverse}")


def test_state_and_adjoint_gradient_match_cpu():
    np.testing.assert_allclose(state(CIRCUIT, THETA, device="cuda"), state(CIRCUIT, THETA),
                               atol=1e-12)
    f = lambda dev: ds.value_and_grad(lambda t: expval(CIRCUIT, t, H, device=dev))(THETA)
    (v_gpu, g_gpu), (v_cpu, g_cpu) = f("cuda"), f("cpu")
    assert np.isclose(v_gpu, v_cpu, atol=1e-12)
    np.testing.assert_allclose(g_gpu, g_cpu, atol=1e-11)


def test_batch_on_device():
    c = hardware_efficient(3, 1)
    thetas = np.random.default_rng(2).normal(size=(2, c.n_params))
    h = heisenberg(3)
    g = lambda dev: ds.grad(lambda t: np.sum(expval(c, t, h, device=dev)))(thetas)
    np.testing.assert_allclose(g("cuda"), g("cpu"), atol=1e-11)


def test_gpu_check_entries_agree_with_their_references():
    from numba import cuda

    from quantum._gpu_checks import CHECKS

    rng = np.random.default_rng(4)
    for check in CHECKS:
        inputs = check.make_inputs(rng, check.sim_size)
        ref = check.reference_fn(*inputs)
        np.testing.assert_allclose(check.cpu_fn(*inputs), ref, rtol=0, atol=check.rtol * 10)
        dev = [cuda.to_device(x) if isinstance(x, np.ndarray) else x for x in inputs]
        got = check.cuda_fn(*dev).copy_to_host()
        np.testing.assert_allclose(got, ref, rtol=0, atol=check.rtol * 10, err_msg=check.name)


def test_fused_rotation_and_cnot_adjoint_launches_match_cpu():
    """The fused one-wire launches (pairs of every Pauli combination, singles, fixed angles,
    scaled parameters) and the two-state CNOT launch (eq. A7–A8) = the CPU sweep."""
    from itertools import product

    from quantum import Circuit, X, Y, Z

    c = Circuit(3)
    a = c.new_param()
    for k, (p, q) in enumerate(product("XYZ", repeat=2)):
        w = k % 3
        c.append("R" + p, (w,))
        c.append("R" + q, (w,), (a * 0.5,) if k == 4 else None)
        c.cnot(w, (w + 1) % 3)
    c.rx(1, 0.3).ry(2)  # a fixed-angle row and a lone rotation
    prog = c.program
    one = prog.ints[:, 3] | prog.ints[:, 4]
    pairs = sum(1 for g in range(len(one) - 1) if one[g] and one[g] == one[g + 1])
    assert pairs >= 6, "the circuit must exercise the paired launch"
    theta = np.random.default_rng(6).uniform(-np.pi, np.pi, c.n_params)
    h = Z(0) @ X(1) + 0.6 * Y(2) - 0.3 * X(0) @ Z(2)
    f = lambda dev: ds.value_and_grad(lambda t: expval(c, t, h, device=dev))(theta)
    (v_gpu, g_gpu), (v_cpu, g_cpu) = f("cuda"), f("cpu")
    assert np.isclose(v_gpu, v_cpu, atol=1e-12)
    np.testing.assert_allclose(g_gpu, g_cpu, atol=1e-11)


def test_density_matrix_and_noisy_gradients_on_device():
    """Density matrices on the device (one- and two-wire channels: K_CHAN as a 4×4 launch, K_CHAN2
    as a 16×16 launch per group of 16 amplitudes) and their adjoint gradients (snapshots kept on
    the device, eq. N3) = the CPU path."""
    from quantum import Circuit, X, Y, Z, density_matrix
    from tests.quantum.test_noise import random_kraus

    c = Circuit(2).ry(0).rx(1).cnot(0, 1).depolarizing(0, 0.2).rz(1).amplitude_damping(1, 0.3)
    c.two_qubit_depolarizing((1, 0), 0.25).ry(1).crx(0, 1).phase_damping(0, 0.1)
    c.kraus((0, 1), random_kraus(4, 3, np.random.default_rng(3))).rx(0)  # not self-adjoint
    theta = np.random.default_rng(7).uniform(-np.pi, np.pi, c.n_params)
    np.testing.assert_allclose(density_matrix(c, theta, device="cuda"), density_matrix(c, theta),
                               atol=1e-12)
    h = Z(0) @ X(1) + 0.5 * Y(1)
    f = lambda dev: ds.value_and_grad(lambda t: expval(c, t, h, device=dev))(theta)
    (v_gpu, g_gpu), (v_cpu, g_cpu) = f("cuda"), f("cpu")
    assert np.isclose(v_gpu, v_cpu, atol=1e-12)
    np.testing.assert_allclose(g_gpu, g_cpu, atol=1e-11)
