"""GPU checks of the quantum kernels, collected by ``benchmarks/gpu_check.py``.

Each entry pairs a numba.cuda kernel (``quantum._cuda``) with its CPU kernel (``quantum._kernels``)
and an independent float64 NumPy reference (reshaped tensor contractions and vectorised bitmask
Pauli application). ``size`` is the number of amplitudes (a power of two): 2**24 on a GPU (24
qubits), 2**6 on the simulator. The CPU functions copy their input state (the runner reuses inputs
across timed calls); the CUDA functions act in place on the device copy they are given.
"""

from __future__ import annotations

import numpy as np

from diffsci.devices import GpuCheck

from . import _cuda as C
from . import _kernels as K


def _n(size: int) -> int:
    """Qubit count for a requested number of amplitudes (rounded up to a power of two >= 8)."""
    return max(3, (int(size) - 1).bit_length())


def _state(rng, size):
    size = 1 << _n(size)
    v = rng.standard_normal(size) + 1j * rng.standard_normal(size)
    return v / np.linalg.norm(v)


def _unitary(rng, d):
    q, r = np.linalg.qr(rng.standard_normal((d, d)) + 1j * rng.standard_normal((d, d)))
    return q * (np.diag(r) / np.abs(np.diag(r)))


def _parity_np(v: np.ndarray) -> np.ndarray:
    for s in (32, 16, 8, 4, 2, 1):
        v = v ^ (v >> s)
    return v & 1


# The Pauli string of the rotation/generator checks: Y on wire 0 (top bit), X on the lowest bit.
def _masks(n: int) -> tuple[int, int, int]:
    return (1 << (n - 1)) | 1, 1 << (n - 1), 1


def _pauli_np(psi, x, z, ny):
    src = np.arange(psi.size) ^ x
    sign = 1.0 - 2.0 * _parity_np(src & z)
    return (1j) ** ny * sign * psi[src]


# ----------------------------------------------------------------------------- apply_rot


def _rot_inputs(rng, size):
    _n(size)
    return _state(rng, size), float(rng.uniform(-np.pi, np.pi))


def _rot_cpu(psi, phi):
    out = psi.copy()
    K.apply_rot(out, *_masks(_n(psi.size)), 0, phi)
    return out


def _rot_cuda(d_psi, phi):
    C.apply_op(d_psi, K.K_ROT, np.array([0, 0, 0, *_masks(_n(d_psi.size))]), None, phi, False)
    return d_psi


def _rot_reference(psi, phi):
    p = _pauli_np(psi, *_masks(_n(psi.size)))
    return np.cos(phi / 2) * psi - 1j * np.sin(phi / 2) * p


# ----------------------------------------------------------------------------- apply_mat1 / mat2


def _mat1_inputs(rng, size):
    return _state(rng, size), _unitary(rng, 2)


def _mat1_cpu(psi, u):
    out = psi.copy()
    K.apply_mat1(out, _n(psi.size) // 2, 0, u[0, 0], u[0, 1], u[1, 0], u[1, 1])
    return out


def _mat1_cuda(d_psi, d_u):
    u = d_u.copy_to_host()
    m = np.zeros((4, 4), complex)
    m[:2, :2] = u
    C.apply_op(d_psi, K.K_MAT1, np.array([_n(d_psi.size) // 2, 0, 0, 0, 0, 0]), m, 0.0, False)
    return d_psi


def _mat1_reference(psi, u):
    n = _n(psi.size)
    b = n // 2
    t = psi.reshape(1 << (n - 1 - b), 2, 1 << b)
    return np.einsum("ij,ajb->aib", u, t).reshape(-1)


def _mat2_inputs(rng, size):
    return _state(rng, size), _unitary(rng, 4)


def _mat2_cpu(psi, u):
    out = psi.copy()
    K.apply_mat2(out, _n(psi.size) - 1, 1, 0, u, False)
    return out


def _mat2_cuda(d_psi, d_u):
    C.apply_op(d_psi, K.K_MAT2, np.array([_n(d_psi.size) - 1, 1, 0, 0, 0, 0]), None, 0.0,
               False, d_u)
    return d_psi


def _mat2_reference(psi, u):
    n = _n(psi.size)  # bits n-1 (wire 0, local MSB) and 1 (wire n-2)
    t = psi.reshape((2,) * n)
    out = np.tensordot(u.reshape(2, 2, 2, 2), t, axes=([2, 3], [0, n - 2]))
    return np.moveaxis(out, (0, 1), (0, n - 2)).reshape(-1)


# ----------------------------------------------------------------------------- generator_grad


def _gen_inputs(rng, size):
    return _state(rng, size), _state(rng, size)


def _gen_cpu(lam, psi):
    x, z, ny = _masks(_n(psi.size))
    return np.array([K.generator_inner(lam, psi, K.K_ROT, np.array([0, 0, 0, x, z, ny])).real])


def _gen_cuda(d_lam, d_psi):
    x, z, ny = _masks(_n(d_psi.size))
    d_grad = C._cuda().to_device(np.zeros(1))
    C._launch("generator_grad", d_psi.size, d_lam, d_psi, False, x, z, 0,
              complex(0.0, -0.5) * (1j) ** ny, d_grad, 0, 1.0)
    return d_grad


def _gen_reference(lam, psi):
    return np.array([np.real(-0.5j * np.vdot(lam, _pauli_np(psi, *_masks(_n(psi.size)))))])


CHECKS = [
    GpuCheck("quantum", "apply_rot (Y..X pair)", _rot_inputs, _rot_cpu, _rot_cuda,
             _rot_reference, size=1 << 24, sim_size=1 << 6, rtol=1e-12),
    GpuCheck("quantum", "apply_mat1", _mat1_inputs, _mat1_cpu, _mat1_cuda, _mat1_reference,
             size=1 << 24, sim_size=1 << 6, rtol=1e-12),
    GpuCheck("quantum", "apply_mat2", _mat2_inputs, _mat2_cpu, _mat2_cuda, _mat2_reference,
             size=1 << 24, sim_size=1 << 6, rtol=1e-12),
    GpuCheck("quantum", "generator_grad (reduce)", _gen_inputs, _gen_cpu, _gen_cuda,
             _gen_reference, size=1 << 24, sim_size=1 << 6, rtol=1e-10),
]
