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

from ._kernels import (
    K_CHAN,
    K_CHAN2,
    K_DATA,
    K_DIAG,
    K_MAT1,
    K_MAT2,
    K_PHASE,
    K_ROT,
    K_SWAP,
    K_X,
    P_X,
    P_Y,
    P_Z,
)
from ._model import Program

#: Threads per block (also the shared-memory size of the reduction kernel).
THREADS = 128

cuda = None  # numba.cuda, bound on first use by _cuda()
_im_inner = _rot_dagger = None  # device copies of the CPU kernels' per-pair helpers (eq. A8)


def _cuda():
    """Import numba.cuda lazily (fixing its mode, real or simulator, only now) and return it.

    Also compiles, as device functions, the CPU kernels' per-pair Pauli helpers
    (``_kernels._im_inner``, ``_kernels._rot_dagger``), so both targets share one formula.
    """
    global cuda, _im_inner, _rot_dagger
    if cuda is None:
        from numba import cuda as numba_cuda

        from . import _kernels as K

        _im_inner = numba_cuda.jit(device=True, inline=True)(K._im_inner.py_func)
        _rot_dagger = numba_cuda.jit(device=True, inline=True)(K._rot_dagger.py_func)
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


def _rot_adj_body(psi, lam, b, ta, ca, sa, pa, fa, tb, cb, sb, pb, fb, two, grad):
    """One or two adjoint-sweep steps of one-wire rotations on bit b in one launch (eq. A7–A8),
    one thread per amplitude pair: Im⟨λ, P_a ψ⟩ on the entry values, U_a† on ψ and λ, then (if
    ``two``) Im⟨λ, P_b ψ⟩ and U_b†, the pair kept in registers. Each product is reduced per block
    in shared memory and added into grad[p] (times f = scale·sigma/2) with one atomic per block;
    p < 0: a fixed angle, no gradient."""
    buf_a = cuda.shared.array(THREADS, np.float64)
    buf_b = cuda.shared.array(THREADS, np.float64)
    t = cuda.threadIdx.x
    k = cuda.grid(1)
    da = 0.0
    db = 0.0
    if k < psi.size // 2:
        i = ((k >> b) << (b + 1)) | (k & ((1 << b) - 1))
        j = i | (1 << b)
        a0 = psi[i]
        a1 = psi[j]
        l0 = lam[i]
        l1 = lam[j]
        da = _im_inner(ta, l0, l1, a0, a1)
        a0, a1 = _rot_dagger(ta, ca, sa, a0, a1)
        l0, l1 = _rot_dagger(ta, ca, sa, l0, l1)
        if two:
            db = _im_inner(tb, l0, l1, a0, a1)
            a0, a1 = _rot_dagger(tb, cb, sb, a0, a1)
            l0, l1 = _rot_dagger(tb, cb, sb, l0, l1)
        psi[i] = a0
        psi[j] = a1
        lam[i] = l0
        lam[j] = l1
    buf_a[t] = da
    buf_b[t] = db
    cuda.syncthreads()
    h = cuda.blockDim.x // 2
    while h > 0:
        if t < h:
            buf_a[t] += buf_a[t + h]
            buf_b[t] += buf_b[t + h]
        cuda.syncthreads()
        h //= 2
    if t == 0:
        if pa >= 0:
            cuda.atomic.add(grad, pa, fa * buf_a[0])
        if two and pb >= 0:
            cuda.atomic.add(grad, pb, fb * buf_b[0])


def _cx_pair_body(psi, lam, b, c):
    """CNOT (control bit c, target bit b) on ψ and λ in one launch (it is its own inverse)."""
    k = cuda.grid(1)
    if k >= psi.size // 4:
        return
    lo = min(b, c)
    hi = max(b, c)
    i = ((k >> lo) << (lo + 1)) | (k & ((1 << lo) - 1))
    i = ((i >> hi) << (hi + 1)) | (i & ((1 << hi) - 1))
    i |= 1 << c
    j = i | (1 << b)
    t = psi[i]
    psi[i] = psi[j]
    psi[j] = t
    t = lam[i]
    lam[i] = lam[j]
    lam[j] = t


def _chan2_body(psi, sm, b0, b1, b2, b3, s0, s1, s2, s3):
    """vec(ρ) <- S vec(ρ) for a two-wire channel's 16×16 superoperator ``sm`` on the bits
    (b0, b1, b2, b3) = (row w0, row w1, col w0, col w1) (eq. N4); one thread per group of 16
    amplitudes, (s0 < s1 < s2 < s3) the same bits sorted."""
    k = cuda.grid(1)
    if k >= psi.size // 16:
        return
    base = k
    for p in (s0, s1, s2, s3):
        base = ((base >> p) << (p + 1)) | (base & ((1 << p) - 1))
    v = cuda.local.array(16, np.complex128)
    for a in range(16):
        off = (((a >> 3) & 1) << b0) | (((a >> 2) & 1) << b1) | (((a >> 1) & 1) << b2) \
            | ((a & 1) << b3)
        v[a] = psi[base + off]
    for r in range(16):
        acc = 0j
        for c in range(16):
            acc += sm[r, c] * v[c]
        off = (((r >> 3) & 1) << b0) | (((r >> 2) & 1) << b1) | (((r >> 1) & 1) << b2) \
            | ((r & 1) << b3)
        psi[base + off] = acc


_BODIES = {
    "mat1": _mat1_body, "mat2": _mat2_body, "x": _x_body, "swap": _swap_body,
    "diag": _diag_body, "rot_diag": _rot_diag_body, "rot_pair": _rot_pair_body,
    "phase": _phase_body, "generator_grad": _generator_grad_body, "rot_adj": _rot_adj_body,
    "cx_pair": _cx_pair_body, "chan2": _chan2_body,
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
    elif kind == K_MAT2 or kind == K_CHAN:  # K_CHAN "inverse": the adjoint S^H, as on the CPU
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


def _chan2(d_psi, program: Program, g: int, adjoint: bool) -> None:
    """Apply the K_CHAN2 row g (its 16×16 superoperator, or S^H) to a device vec(ρ)."""
    sm = program.mats[g + 1:g + 17].reshape(16, 16)  # S[r, c] = mats[g + 1 + r, c // 4, c % 4]
    sm = np.ascontiguousarray(sm.conj().T if adjoint else sm)
    bits = [int(b) for b in program.ints[g, :4]]
    _launch("chan2", d_psi.size // 16, d_psi, _cuda().to_device(sm), *bits, *sorted(bits))


def _rot1_bit(program: Program, g: int) -> int:
    """The bit mask of row g if it is an uncontrolled one-wire rotation, else 0."""
    _, _, cmask, xmask, zmask, _ = (int(v) for v in program.ints[g])
    one = xmask | zmask
    if program.kinds[g] == K_ROT and cmask == 0 and one and not one & (one - 1):
        return one
    return 0


def _rot1_matrix(row, phi: float) -> tuple:
    """(m00, m01, m10, m11) of a one-wire rotation row (the CPU kernels' formula)."""
    from ._kernels import _rot1_matrix as cpu

    return cpu.py_func(row, phi)


def _rot_step(program: Program, g: int, phi: float) -> tuple:
    """(code, c, s, p, f) of a one-wire rotation row for ``_rot_adj_body`` (eq. A8):
    U† = c + i s P, and grad[p] += f · Im⟨λ, Pψ⟩ with f = scale · sigma / 2."""
    _, _, _, xmask, zmask, ny = (int(v) for v in program.ints[g])
    if xmask == 0:
        code, k = P_Z, ny
    elif zmask == 0:
        code, k = P_X, ny
    else:
        code, k = P_Y, ny - 1
    sigma = 1.0 if k % 4 == 0 else -1.0
    p = int(program.pidx[g])
    return (code, float(np.cos(0.5 * phi)), float(sigma * np.sin(0.5 * phi)), p,
            float(0.5 * sigma * program.scale[g]))


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
    g = 0
    while g < program.kinds.size:
        one = _rot1_bit(program, g)
        if one and g + 1 < program.kinds.size and _rot1_bit(program, g + 1) == one:
            # two rotations on one bit: one 2×2 launch, as the CPU run_forward (eq. A7)
            a = np.array(_rot1_matrix(program.ints[g], phi[g])).reshape(2, 2)
            b = np.array(_rot1_matrix(program.ints[g + 1], phi[g + 1])).reshape(2, 2)
            m = b @ a
            _launch("mat1", d_psi.size // 2, d_psi, one.bit_length() - 1, 0, complex(m[0, 0]),
                    complex(m[0, 1]), complex(m[1, 0]), complex(m[1, 1]))
            g += 2
            continue
        kind = int(program.kinds[g])
        if kind == K_CHAN2:
            _chan2(d_psi, program, g, False)
        elif kind != K_DATA:
            apply_op(d_psi, kind, program.ints[g], program.mats[g], phi[g], False,
                     d_mats[g] if kind in (K_MAT2, K_CHAN) else None)
        g += 1


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
    """θ̄ = Re(J^H ψ̄) by the adjoint sweep on the GPU (ψ, λ stay on the device).

    A density-matrix program (channel rows) first replays the forward pass on the device,
    keeping a device copy of the state before each channel; the sweep restores it there and maps
    λ by the superoperator's adjoint (``DERIVATIONS.md`` eq. N3), as ``adjoint_sweep_mixed``.
    """
    cu = _cuda()
    grad = np.zeros(theta.shape, np.float64)
    mats = _device_mats(program)
    d_mats_h = mats[1]
    chan = [g for g in range(program.kinds.size) if program.kinds[g] in (K_CHAN, K_CHAN2)]
    for b in np.ndindex(theta.shape[:-1]):
        phi = _angles(program, theta[b])
        snaps = _snapshots(program, theta[b], mats, chan) if chan else {}
        d_psi = cu.to_device(np.ascontiguousarray(psi[b]))
        d_lam = cu.to_device(np.ascontiguousarray(psibar[b]))
        d_grad = cu.to_device(np.zeros(theta.shape[-1]))
        dim = d_psi.size
        g = program.kinds.size - 1
        while g >= 0:
            kind = int(program.kinds[g])
            ints = program.ints[g]
            if kind == K_DATA:
                g -= 1
                continue
            if kind in (K_CHAN, K_CHAN2):  # restore ψ before the channel; λ <- S^H λ
                d_psi.copy_to_device(snaps[g])
                if kind == K_CHAN2:
                    _chan2(d_lam, program, g, True)
                else:
                    apply_op(d_lam, kind, ints, program.mats[g], 0.0, True, d_mats_h[g])
                g -= 1
                continue
            one = _rot1_bit(program, g)
            if one:  # fused one-wire steps, a pair when the row before is on the same bit (A7)
                two = g >= 1 and _rot1_bit(program, g - 1) == one
                steps = [_rot_step(program, g, phi[g])]
                steps.append(_rot_step(program, g - 1, phi[g - 1]) if two else steps[0])
                _launch("rot_adj", dim // 2, d_psi, d_lam, one.bit_length() - 1, *steps[0],
                        *steps[1], two, d_grad)
                g -= 2 if two else 1
                continue
            if kind == K_X and ints[2] and not ints[2] & (ints[2] - 1):  # CNOT on both states
                _launch("cx_pair", dim // 4, d_psi, d_lam, int(ints[0]),
                        int(ints[2]).bit_length() - 1)
                g -= 1
                continue
            if program.pidx[g] >= 0:
                is_phase = kind == K_PHASE
                coef = 1j if is_phase else complex(0.0, -0.5) * (1j) ** int(ints[5])
                _launch("generator_grad", dim, d_lam, d_psi, is_phase, int(ints[3]),
                        int(ints[4]), int(ints[2]), coef, d_grad, int(program.pidx[g]),
                        float(program.scale[g]))
            dm = d_mats_h[g] if kind == K_MAT2 else None
            apply_op(d_psi, kind, ints, program.mats[g], phi[g], True, dm)
            apply_op(d_lam, kind, ints, program.mats[g], phi[g], True, dm)
            g -= 1
        grad[b] = d_grad.copy_to_host()
    return grad


def _snapshots(program: Program, theta: np.ndarray, mats, chan: list[int]) -> dict:
    """{g: device copy of vec(ρ) just before channel row g}, by one forward replay."""
    cu = _cuda()
    psi0 = np.zeros(1 << program.n_qubits, np.complex128)
    psi0[0] = 1.0
    d_psi = cu.to_device(psi0)
    out = {}
    start = 0
    for g in chan:  # run the rows between channels, snapshot, apply the channel
        seg = _segment(program, start, g)
        run_program(d_psi, seg, theta, None)
        out[g] = cu.device_array_like(d_psi)
        out[g].copy_to_device(d_psi)
        if program.kinds[g] == K_CHAN2:
            _chan2(d_psi, program, g, False)
        else:
            apply_op(d_psi, K_CHAN, program.ints[g], program.mats[g], 0.0, False, mats[0][g])
        start = g + 1
    return out


def _segment(program: Program, lo: int, hi: int) -> Program:
    """Rows lo..hi-1 of a program (whole two-wire channels never straddle a boundary)."""
    return Program(program.n_qubits, program.n_params, program.kinds[lo:hi],
                   program.ints[lo:hi], program.mats[lo:hi], program.pidx[lo:hi],
                   program.scale[lo:hi], program.offset[lo:hi])
