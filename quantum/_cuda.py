"""numba.cuda versions of the gate kernels and the adjoint sweep (``device="cuda"``).

Same contract as ``quantum._kernels``: plain arrays in, plain arrays out, a program's rows
``(kinds, ints, mats, pidx, scale, offset)`` as in ``_kernels``. One thread per amplitude pair
(1-qubit gates, rotations with an X/Y part), per amplitude quadruple (2-qubit gates, SWAP) or per
amplitude (diagonal gates, phases). The adjoint sweep keeps ψ and λ on the device from start to
end; each parameterised operation adds its ``Re⟨λ, A ψ⟩`` into a device gradient with a block
reduction in shared memory and one atomic add per block (``DERIVATIONS.md`` eq. A3), so only θ̄
comes back.

numba.cuda is imported lazily (:func:`_cuda`) so importing this module never fixes numba.cuda's
mode; kernels reach it through the module global ``cuda``, which the CUDA simulator swaps for its
fake module (``NUMBA_ENABLE_CUDASIM=1``, set by the tests on machines without a GPU).
"""

from __future__ import annotations

import functools

import numpy as np

from ._kernels import K_DIAG, K_MAT1, K_MAT2, K_PHASE, K_ROT, K_SWAP, K_X
from ._model import Program

#: Threads per block (also the shared-memory size of the reduction kernel).
THREADS = 128

cuda = None  # numba.cuda, bound on first use by _cuda()


def _cuda():
    """Import numba.cuda lazily (fixing its mode, real or simulator, only now) and return it."""
    global cuda
    if cuda is None:
        from numba import cuda as numba_cuda

        cuda = numba_cuda
    return cuda


# ----------------------------------------------------------------------------- kernel bodies


def _mat1_body(psi, b, cmask, m00, m01, m10, m11):
    k = cuda.grid(1)
    if k >= psi.size // 2:
        return
    i0 = ((k >> b) << (b + 1)) | (k & ((1 << b) - 1))
    if (i0 & cmask) != cmask:
        return
    i1 = i0 | (1 << b)
    a0 = psi[i0]
    a1 = psi[i1]
    psi[i0] = m00 * a0 + m01 * a1
    psi[i1] = m10 * a0 + m11 * a1


def _mat2_body(psi, bhi, blo, cmask, u):
    k = cuda.grid(1)
    if k >= psi.size // 4:
        return
    lo = min(bhi, blo)
    hi = max(bhi, blo)
    i = ((k >> lo) << (lo + 1)) | (k & ((1 << lo) - 1))
    i00 = ((i >> hi) << (hi + 1)) | (i & ((1 << hi) - 1))
    if (i00 & cmask) != cmask:
        return
    i01 = i00 | (1 << blo)
    i10 = i00 | (1 << bhi)
    i11 = i10 | (1 << blo)
    a0 = psi[i00]
    a1 = psi[i01]
    a2 = psi[i10]
    a3 = psi[i11]
    psi[i00] = u[0, 0] * a0 + u[0, 1] * a1 + u[0, 2] * a2 + u[0, 3] * a3
    psi[i01] = u[1, 0] * a0 + u[1, 1] * a1 + u[1, 2] * a2 + u[1, 3] * a3
    psi[i10] = u[2, 0] * a0 + u[2, 1] * a1 + u[2, 2] * a2 + u[2, 3] * a3
    psi[i11] = u[3, 0] * a0 + u[3, 1] * a1 + u[3, 2] * a2 + u[3, 3] * a3


def _x_body(psi, b, cmask):
    k = cuda.grid(1)
    if k >= psi.size // 2:
        return
    i0 = ((k >> b) << (b + 1)) | (k & ((1 << b) - 1))
    if (i0 & cmask) != cmask:
        return
    i1 = i0 | (1 << b)
    t = psi[i0]
    psi[i0] = psi[i1]
    psi[i1] = t


def _swap_body(psi, b0, b1, cmask):
    k = cuda.grid(1)
    if k >= psi.size // 4:
        return
    lo = min(b0, b1)
    hi = max(b0, b1)
    i = ((k >> lo) << (lo + 1)) | (k & ((1 << lo) - 1))
    i00 = ((i >> hi) << (hi + 1)) | (i & ((1 << hi) - 1))
    if (i00 & cmask) != cmask:
        return
    i01 = i00 | (1 << lo)
    i10 = i00 | (1 << hi)
    t = psi[i01]
    psi[i01] = psi[i10]
    psi[i10] = t


def _diag_body(psi, b, cmask, d0, d1):
    j = cuda.grid(1)
    if j >= psi.size or (j & cmask) != cmask:
        return
    if (j >> b) & 1:
        psi[j] = psi[j] * d1
    else:
        psi[j] = psi[j] * d0


def _rot_diag_body(psi, zmask, cmask, em, ep):
    j = cuda.grid(1)
    if j >= psi.size or (j & cmask) != cmask:
        return
    v = j & zmask
    par = 0
    while v:
        par ^= 1
        v &= v - 1
    psi[j] = psi[j] * (ep if par else em)


def _rot_pair_body(psi, xmask, zmask, pivot, cmask, c, ph):
    k = cuda.grid(1)
    if k >= psi.size // 2:
        return
    j = ((k >> pivot) << (pivot + 1)) | (k & ((1 << pivot) - 1))
    if (j & cmask) != cmask:
        return
    j2 = j ^ xmask
    v = j2 & zmask
    p2 = 0
    while v:
        p2 ^= 1
        v &= v - 1
    v = j & zmask
    p1 = 0
    while v:
        p1 ^= 1
        v &= v - 1
    a = psi[j]
    bb = psi[j2]
    psi[j] = c * a + (-ph if p2 else ph) * bb
    psi[j2] = c * bb + (-ph if p1 else ph) * a


def _phase_body(psi, mask, e):
    j = cuda.grid(1)
    if j < psi.size and (j & mask) == mask:
        psi[j] = psi[j] * e


def _generator_grad_body(lam, psi, is_phase, xmask, zmask, cmask, coef, grad, p, scale):
    """grad[p] += scale * Re(coef * Σ_j conj(lam_j) (P_c psi)_j); block reduction + atomic add."""
    buf = cuda.shared.array(THREADS, np.float64)
    t = cuda.threadIdx.x
    j = cuda.grid(1)
    val = 0.0
    if j < psi.size and (j & cmask) == cmask:
        if is_phase:
            w = lam[j].conjugate() * psi[j]
        else:
            src = j ^ xmask
            v = src & zmask
            par = 0
            while v:
                par ^= 1
                v &= v - 1
            w = lam[j].conjugate() * psi[src]
            if par:
                w = -w
        val = (coef * w).real
    buf[t] = val
    cuda.syncthreads()
    s = cuda.blockDim.x // 2
    while s > 0:
        if t < s:
            buf[t] += buf[t + s]
        cuda.syncthreads()
        s //= 2
    if t == 0:
        cuda.atomic.add(grad, p, scale * buf[0])


_BODIES = {
    "mat1": _mat1_body, "mat2": _mat2_body, "x": _x_body, "swap": _swap_body,
    "diag": _diag_body, "rot_diag": _rot_diag_body, "rot_pair": _rot_pair_body,
    "phase": _phase_body, "generator_grad": _generator_grad_body,
}


@functools.cache
def _kernel(name: str):
    """The numba.cuda kernel ``name``, compiled on first use."""
    return _cuda().jit(_BODIES[name])


def _launch(name: str, work: int, *args) -> None:
    threads = min(THREADS, 1 << max(int(work - 1).bit_length(), 0))
    blocks = (work + threads - 1) // threads
    _kernel(name)[blocks, threads](*args)


# ----------------------------------------------------------------------------- drivers


def apply_op(d_psi, kind: int, ints: np.ndarray, mat: np.ndarray, phi: float, inverse: bool,
             d_mat=None) -> None:
    """Apply one elementary operation (or its inverse) to a device state in place."""
    dim = d_psi.size
    b0, b1, cmask, xmask, zmask, ny = (int(v) for v in ints)
    if kind == K_MAT1:
        m = mat[:2, :2].conj().T if inverse else mat[:2, :2]
        _launch("mat1", dim // 2, d_psi, b0, cmask, complex(m[0, 0]), complex(m[0, 1]),
                complex(m[1, 0]), complex(m[1, 1]))
    elif kind == K_MAT2:
        if d_mat is None:
            d_mat = _cuda().to_device(np.ascontiguousarray(mat.conj().T if inverse else mat))
        _launch("mat2", dim // 4, d_psi, b0, b1, cmask, d_mat)
    elif kind == K_X:
        _launch("x", dim // 2, d_psi, b0, cmask)
    elif kind == K_SWAP:
        _launch("swap", dim // 4, d_psi, b0, b1, cmask)
    elif kind == K_DIAG:
        d0, d1 = complex(mat[0, 0]), complex(mat[1, 1])
        if inverse:
            d0, d1 = d0.conjugate(), d1.conjugate()
        _launch("diag", dim, d_psi, b0, cmask, d0, d1)
    elif kind == K_ROT:
        phi = -phi if inverse else phi
        c, s = np.cos(0.5 * phi), np.sin(0.5 * phi)
        if xmask == 0:
            _launch("rot_diag", dim, d_psi, zmask, cmask, complex(c, -s), complex(c, s))
        else:
            pivot = (xmask & -xmask).bit_length() - 1
            ph = (1j) ** ny * complex(0.0, -s)
            _launch("rot_pair", dim // 2, d_psi, xmask, zmask, pivot, cmask, float(c), ph)
    elif kind == K_PHASE:
        phi = -phi if inverse else phi
        _launch("phase", dim, d_psi, cmask, complex(np.cos(phi), np.sin(phi)))
    else:  # pragma: no cover - programs only hold the kinds above
        raise ValueError(f"unknown operation kind {kind}")


def _angles(program: Program, theta: np.ndarray) -> np.ndarray:
    k = program.pidx
    phi = program.offset.copy()
    on = k >= 0
    phi[on] += program.scale[on] * theta[k[on]]
    return phi


def _device_mats(program: Program):
    cu = _cuda()
    return cu.to_device(program.mats), cu.to_device(np.ascontiguousarray(
        program.mats.conj().transpose(0, 2, 1)))


def run_program(d_psi, program: Program, theta: np.ndarray, mats=None) -> None:
    """Apply a whole program to a device state in place."""
    d_mats, _ = mats or _device_mats(program)
    phi = _angles(program, theta)
    for g in range(program.kinds.size):
        kind = int(program.kinds[g])
        apply_op(d_psi, kind, program.ints[g], program.mats[g], phi[g], False,
                 d_mats[g] if kind == K_MAT2 else None)


def forward_states(program: Program, theta: np.ndarray) -> np.ndarray:
    """ψ(θ) from |0…0⟩ on the GPU; same shapes as ``quantum._ops.forward_states``."""
    cu = _cuda()
    dim = 1 << program.n_qubits
    out = np.zeros(theta.shape[:-1] + (dim,), np.complex128)
    mats = _device_mats(program)
    for b in np.ndindex(theta.shape[:-1]):
        psi0 = np.zeros(dim, np.complex128)
        psi0[0] = 1.0
        d_psi = cu.to_device(psi0)
        run_program(d_psi, program, theta[b], mats)
        out[b] = d_psi.copy_to_host()
    return out


def adjoint_vjp(program: Program, theta: np.ndarray, psi: np.ndarray,
                psibar: np.ndarray) -> np.ndarray:
    """θ̄ = Re(J^H ψ̄) by the adjoint sweep on the GPU (ψ, λ stay on the device)."""
    cu = _cuda()
    grad = np.zeros(theta.shape, np.float64)
    _, d_mats_h = _device_mats(program)
    for b in np.ndindex(theta.shape[:-1]):
        d_psi = cu.to_device(np.ascontiguousarray(psi[b]))
        d_lam = cu.to_device(np.ascontiguousarray(psibar[b]))
        d_grad = cu.to_device(np.zeros(theta.shape[-1]))
        phi = _angles(program, theta[b])
        dim = d_psi.size
        for g in range(program.kinds.size - 1, -1, -1):
            kind = int(program.kinds[g])
            ints = program.ints[g]
            if program.pidx[g] >= 0:
                is_phase = kind == K_PHASE
                coef = 1j if is_phase else complex(0.0, -0.5) * (1j) ** int(ints[5])
                _launch("generator_grad", dim, d_lam, d_psi, is_phase, int(ints[3]),
                        int(ints[4]), int(ints[2]), coef, d_grad, int(program.pidx[g]),
                        float(program.scale[g]))
            dm = d_mats_h[g] if kind == K_MAT2 else None
            apply_op(d_psi, kind, ints, program.mats[g], phi[g], True, dm)
            apply_op(d_lam, kind, ints, program.mats[g], phi[g], True, dm)
        grad[b] = d_grad.copy_to_host()
    return grad
