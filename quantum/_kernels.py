"""Numba kernels of the state-vector simulator, on plain arrays.

Everything here takes and returns plain ndarrays and scalars; nothing imports diffsci. The kernels
assume valid input (validation happens once, in ``_model.py`` / ``_ops.py``).

Conventions:

- A state of ``n`` qubits is a complex128 array of length ``2**n``; wire ``w`` is bit
  ``n - 1 - w`` of the amplitude index (wire 0 is the most significant bit, as in PennyLane).
- A circuit is compiled (``_model.compile_program``) into a *program*: one row per elementary
  operation, with a kind code (``K_*`` below), an integer row ``ints[g]`` =
  ``(bit0, bit1, cmask, xmask, zmask, ny)``, a 4×4 complex matrix slot ``mats[g]`` and an angle
  ``phi_g = scale[g] * theta[pidx[g]] + offset[g]`` (``pidx[g] = -1``: a fixed angle ``offset[g]``).
- A Pauli string is ``(xmask, zmask, ny)``: X or Y on the bits of ``xmask``, Z or Y on the bits of
  ``zmask``, ``ny`` the number of Y's. ``P|j⟩ = i**ny (-1)**popcount(j & zmask) |j ^ xmask⟩``.
- Elementary parameterised operations have a generator ``A`` with ``dU/dphi = A U``:
  ``K_ROT`` (``U = exp(-i phi P / 2)`` on the control subspace, ``A = -i/2 Π_c P``) and
  ``K_PHASE`` (``U = exp(i phi Π_mask)``, ``A = i Π_mask``). See ``quantum/DERIVATIONS.md``.

The adjoint sweep (:func:`adjoint_sweep`) and the tangent sweep (:func:`tangent_sweep`) run a whole
program inside one compiled call, so small circuits pay no per-gate Python overhead.

Fast paths (measured on the HEA-TFIM benchmark): uncontrolled one-wire rotations in unit-stride
blocks with unsigned indices (vectorised by LLVM), two of them on one wire (adjacent after
``compile_program``'s pairing) as one pass forward and one pass backward (eq. A7), with arithmetic
specialised per Pauli in the adjoint and tangent sweeps (eq. A8); single-control CNOT as
unit-stride swaps, on both states at once in the sweeps, and in the adjoint sweep absorbed into
its target's rotation pass (eq. A10); for programs of rotations and CNOTs only, the adjoint sweep
on split real/imaginary arrays (``adjoint_sweep_soa``, eq. A11); Hamiltonians fused (eq. P2: one
cached diagonal for the Z-type terms, one sweep per distinct flip mask). With more than one Numba
thread and states of at least :data:`PAR_MIN_AMPS` amplitudes, the sweeps run split by the top
bit (``*_split``, eq. T1): two threads, one fork-join per run of rows rather than per gate.
"""

from __future__ import annotations

import types

import numpy as np
from numba import njit, prange, uint64

# Kinds of elementary operations (a program's ``kinds`` column).
K_MAT1 = 0  # general 1-qubit matrix mats[g, :2, :2] on bit0, controlled by cmask
K_MAT2 = 1  # general 2-qubit matrix mats[g] on (bit0 = high, bit1 = low), controlled by cmask
K_X = 2  # X on bit0 (a permutation), controlled by cmask: X, CNOT, Toffoli, MCX
K_SWAP = 3  # SWAP of bit0 and bit1, controlled by cmask
K_DIAG = 4  # diag(mats[g,0,0], mats[g,1,1]) on bit0, controlled by cmask: Z, S, T, CZ ...
K_ROT = 5  # exp(-i phi P / 2), P = (xmask, zmask, ny), controlled by cmask
K_PHASE = 6  # exp(i phi) on amplitudes with all bits of cmask set: PhaseShift, CPhase
K_CHAN = 7  # a channel's superoperator mats[g] on (bit0 = row bit, bit1 = column bit) of vec(rho)
K_CHAN2 = 8  # a two-wire channel's 16×16 superoperator on bits ints[g, :4] = (row w0, row w1,
#              col w0, col w1); its rows are the 16 K_DATA rows that follow (mats[g + 1 + r])
K_DATA = 9  # payload of the K_CHAN2 or K_MATN row above it; every kernel skips it
K_MATN = 10  # a k-qubit matrix (k >= 3) on the bits of ints[g, 3], controlled by cmask; local
#              index bit t = the t-th lowest target bit; its 4**k entries, row-major, are the
#              K_DATA rows that follow (16 per row: mats[g + 1 + e // 16].flat[e % 16])

PARAM_KINDS = (K_ROT, K_PHASE)


@njit(cache=True, inline="always")
def _parity(v):
    """popcount(v) mod 2 for 0 <= v < 2**63."""
    v ^= v >> 32
    v ^= v >> 16
    v ^= v >> 8
    v ^= v >> 4
    v ^= v >> 2
    v ^= v >> 1
    return v & 1


@njit(cache=True, inline="always")
def _insert0(k, b):
    """k with a 0 bit inserted at position b."""
    low = k & ((1 << b) - 1)
    return ((k >> b) << (b + 1)) | low


@njit(cache=True, inline="always")
def _log2(v):
    """The position of the single set bit of v > 0."""
    p = 0
    while not (v >> p) & 1:
        p += 1
    return p


@njit(cache=True, inline="always")
def _iphase(ny):
    """i**ny."""
    r = ny & 3
    if r == 0:
        return 1.0 + 0.0j
    if r == 1:
        return 0.0 + 1.0j
    if r == 2:
        return -1.0 + 0.0j
    return 0.0 - 1.0j



# ----------------------------------------------------------------------------- gate kernels


@njit(cache=True)
def apply_mat1(psi, b, cmask, m00, m01, m10, m11):
    """psi <- U psi for U = [[m00, m01], [m10, m11]] on bit b, where all cmask bits are set."""
    half = psi.size >> 1
    bit = 1 << b
    for k in range(half):
        i0 = _insert0(k, b)
        if (i0 & cmask) != cmask:
            continue
        i1 = i0 | bit
        a0 = psi[i0]
        a1 = psi[i1]
        psi[i0] = m00 * a0 + m01 * a1
        psi[i1] = m10 * a0 + m11 * a1


@njit(cache=True)
def apply_mat2(psi, bhi, blo, cmask, m, inverse):
    """psi <- U psi (or U† psi) for a 4×4 U on bits (bhi = local MSB, blo), controlled by cmask."""
    u = np.empty((4, 4), np.complex128)
    for r in range(4):
        for c in range(4):
            u[r, c] = np.conj(m[c, r]) if inverse else m[r, c]
    lo, hi = min(bhi, blo), max(bhi, blo)
    quarter = psi.size >> 2
    bh = 1 << bhi
    bl = 1 << blo
    for k in range(quarter):
        i00 = _insert0(_insert0(k, lo), hi)
        if (i00 & cmask) != cmask:
            continue
        i01 = i00 | bl
        i10 = i00 | bh
        i11 = i10 | bl
        a0 = psi[i00]
        a1 = psi[i01]
        a2 = psi[i10]
        a3 = psi[i11]
        psi[i00] = u[0, 0] * a0 + u[0, 1] * a1 + u[0, 2] * a2 + u[0, 3] * a3
        psi[i01] = u[1, 0] * a0 + u[1, 1] * a1 + u[1, 2] * a2 + u[1, 3] * a3
        psi[i10] = u[2, 0] * a0 + u[2, 1] * a1 + u[2, 2] * a2 + u[2, 3] * a3
        psi[i11] = u[3, 0] * a0 + u[3, 1] * a1 + u[3, 2] * a2 + u[3, 3] * a3


@njit(cache=True)
def apply_x(psi, b, cmask):
    """psi <- X_b psi on the control subspace (a swap of amplitude pairs)."""
    half = psi.size >> 1
    bit = 1 << b
    for k in range(half):
        i0 = _insert0(k, b)
        if (i0 & cmask) != cmask:
            continue
        i1 = i0 | bit
        t = psi[i0]
        psi[i0] = psi[i1]
        psi[i1] = t


@njit(cache=True)
def apply_swap(psi, b0, b1, cmask):
    """psi <- SWAP(b0, b1) psi on the control subspace."""
    lo, hi = min(b0, b1), max(b0, b1)
    quarter = psi.size >> 2
    for k in range(quarter):
        i00 = _insert0(_insert0(k, lo), hi)
        if (i00 & cmask) != cmask:
            continue
        i01 = i00 | (1 << lo)
        i10 = i00 | (1 << hi)
        t = psi[i01]
        psi[i01] = psi[i10]
        psi[i10] = t


@njit(cache=True)
def apply_diag(psi, b, cmask, d0, d1):
    """psi <- diag(d0, d1)_b psi on the control subspace."""
    bit = 1 << b
    for j in range(psi.size):
        if (j & cmask) != cmask:
            continue
        if j & bit:
            psi[j] *= d1
        else:
            psi[j] *= d0


@njit(cache=True)
def _rot1_blocked(psi, bit, m00, m01, m10, m11):
    """psi <- [[m00, m01], [m10, m11]] on one uncontrolled bit, in contiguous blocks.

    The inner loop runs over ``bit`` consecutive amplitudes with unit stride; the indices are
    unsigned (:data:`uint64`) so Numba emits no negative-index wraparound and LLVM vectorises the
    loop (measured 1.1 -> 0.5 ns per amplitude at 16 qubits). The fast path of RX/RY/RZ.
    """
    n = psi.size
    for base in range(0, n, 2 * bit):
        for k in range(bit):
            i = uint64(base + k)
            j = uint64(base + k + bit)
            a0 = psi[i]
            a1 = psi[j]
            psi[i] = m00 * a0 + m01 * a1
            psi[j] = m10 * a0 + m11 * a1


@njit(cache=True)
def _diag1_blocked(psi, bit, d0, d1):
    """psi <- diag(d0, d1) on one uncontrolled bit, in contiguous blocks (unsigned indices)."""
    n = psi.size
    for base in range(0, n, 2 * bit):
        for k in range(bit):
            i = uint64(base + k)
            j = uint64(base + k + bit)
            psi[i] *= d0
            psi[j] *= d1


#: States of at least this many amplitudes run the split sweeps (when Numba runs more than one
#: thread). On an idle machine a fork-join costs microseconds and 2**14 would do; on a shared
#: 2-core machine the second thread can wait a scheduler slice (measured ≈ 8–12 ms per fork-join
#: under load), so threads are used only where a run of rows takes tens of milliseconds.
PAR_MIN_AMPS = 1 << 18


@njit(cache=True)
def cx1(psi, b, c):
    """psi <- CNOT psi (control bit c, target bit b): a swap on the quarter with bit c set.

    Runs of ``2**min(b, c)`` consecutive indices share the pattern of the two bits, so the inner
    loop is a unit-stride swap.
    """
    lo, hi = min(b, c), max(b, c)
    bit = 1 << b
    cbit = 1 << c
    run = 1 << lo
    for o in range(psi.size >> (2 + lo)):
        i0 = _insert0(_insert0(o << lo, lo), hi) | cbit
        for r in range(run):
            i = uint64(i0 + r)
            j = uint64(i0 + r + bit)
            t = psi[i]
            psi[i] = psi[j]
            psi[j] = t


@njit(cache=True)
def apply_rot(psi, xmask, zmask, ny, cmask, phi):
    """psi <- exp(-i phi P / 2) psi on the control subspace; P = (xmask, zmask, ny)."""
    c = np.cos(0.5 * phi)
    s = np.sin(0.5 * phi)
    one = xmask | zmask
    if cmask == 0 and (one & (one - 1)) == 0:  # one uncontrolled wire: RX, RY, RZ
        if xmask == 0:
            _diag1_blocked(psi, zmask, complex(c, -s), complex(c, s))
        else:
            ph = _iphase(ny) * complex(0.0, -s)
            _rot1_blocked(psi, xmask, c, -ph if zmask else ph, ph, c)
        return
    if xmask == 0:  # diagonal: Z-type strings (RZ, IsingZZ, MultiRZ)
        em = complex(c, -s)
        ep = complex(c, s)
        for j in range(psi.size):
            if (j & cmask) != cmask:
                continue
            psi[j] *= ep if _parity(j & zmask) else em
        return
    ph = _iphase(ny) * complex(0.0, -s)  # -i s i**ny
    p = 0
    while not (xmask >> p) & 1:
        p += 1
    half = psi.size >> 1
    for k in range(half):
        j = _insert0(k, p)
        if (j & cmask) != cmask:
            continue
        j2 = j ^ xmask
        a = psi[j]
        bb = psi[j2]
        sj2 = -1.0 if _parity(j2 & zmask) else 1.0
        sj = -1.0 if _parity(j & zmask) else 1.0
        psi[j] = c * a + ph * sj2 * bb
        psi[j2] = c * bb + ph * sj * a


@njit(cache=True)
def apply_phase(psi, mask, phi):
    """psi_j <- exp(i phi) psi_j where all bits of mask are set in j."""
    e = complex(np.cos(phi), np.sin(phi))
    for j in range(psi.size):
        if (j & mask) == mask:
            psi[j] *= e


@njit(cache=True)
def apply_op(psi, kind, ints, mat, phi, inverse):
    """Apply one elementary operation (or its inverse) in place."""
    b0 = ints[0]
    cmask = ints[2]
    if kind == K_MAT1:
        if inverse:
            apply_mat1(psi, b0, cmask, np.conj(mat[0, 0]), np.conj(mat[1, 0]),
                       np.conj(mat[0, 1]), np.conj(mat[1, 1]))
        else:
            apply_mat1(psi, b0, cmask, mat[0, 0], mat[0, 1], mat[1, 0], mat[1, 1])
    elif kind == K_MAT2 or kind == K_CHAN:  # K_CHAN "inverse": the adjoint S^H (not S^-1)
        apply_mat2(psi, b0, ints[1], cmask, mat, inverse)
    elif kind == K_X:
        if cmask != 0 and (cmask & (cmask - 1)) == 0:  # CNOT: one control, no branch per pair
            cx1(psi, b0, _log2(cmask))
        else:
            apply_x(psi, b0, cmask)
    elif kind == K_SWAP:
        apply_swap(psi, b0, ints[1], cmask)
    elif kind == K_DIAG:
        if inverse:
            apply_diag(psi, b0, cmask, np.conj(mat[0, 0]), np.conj(mat[1, 1]))
        else:
            apply_diag(psi, b0, cmask, mat[0, 0], mat[1, 1])
    elif kind == K_ROT:
        apply_rot(psi, ints[3], ints[4], ints[5], cmask, -phi if inverse else phi)
    elif kind == K_PHASE:
        apply_phase(psi, cmask, -phi if inverse else phi)


@njit(cache=True, inline="always")
def _is_rot1(kind, row):
    """Whether a row is an uncontrolled one-wire rotation (RX, RY, RZ): its bit mask, else 0."""
    one = row[3] | row[4]
    if kind == K_ROT and row[2] == 0 and one != 0 and (one & (one - 1)) == 0:
        return one
    return 0


@njit(cache=True, inline="always")
def _rot1_matrix(row, phi):
    """(m00, m01, m10, m11) of exp(-i phi P / 2) for the one-wire Pauli of a row."""
    c = np.cos(0.5 * phi)
    s = np.sin(0.5 * phi)
    if row[3] == 0:
        return complex(c, -s), 0.0j, 0.0j, complex(c, s)
    ph = _iphase(row[5]) * complex(0.0, -s)
    return complex(c, 0.0), -ph if row[4] else ph, ph, complex(c, 0.0)


@njit(cache=True, inline="always")
def _angle(g, pidx, scale, offset, theta):
    k = pidx[g]
    if k < 0:
        return offset[g]
    return scale[g] * theta[k] + offset[g]


@njit(cache=True)
def run_forward(psi, kinds, ints, mats, pidx, scale, offset, theta):
    """psi <- U_G ... U_1 psi for the program at parameters theta (in place).

    Two adjacent one-wire rotations on the same wire (``compile_program`` puts them side by side)
    run as one 2×2 product: one pass over the state instead of two.
    """
    g = 0
    while g < kinds.size:
        if kinds[g] == K_CHAN2:
            apply_chan2(psi, ints[g], mats, g, False)
            g += 1
            continue
        if kinds[g] == K_MATN:
            apply_matn(psi, ints[g], mats, g, False)
            g += 1
            continue
        bit = _is_rot1(kinds[g], ints[g])
        if bit and g + 1 < kinds.size and _is_rot1(kinds[g + 1], ints[g + 1]) == bit:
            a00, a01, a10, a11 = _rot1_matrix(ints[g], _angle(g, pidx, scale, offset, theta))
            b00, b01, b10, b11 = _rot1_matrix(ints[g + 1],
                                              _angle(g + 1, pidx, scale, offset, theta))
            m00 = b00 * a00 + b01 * a10
            m01 = b00 * a01 + b01 * a11
            m10 = b10 * a00 + b11 * a10
            m11 = b10 * a01 + b11 * a11
            _rot1_blocked(psi, bit, m00, m01, m10, m11)
            g += 2
            continue
        apply_op(psi, kinds[g], ints[g], mats[g], _angle(g, pidx, scale, offset, theta), False)
        g += 1


@njit(cache=True, parallel=True)
def run_forward_batch(psis, kinds, ints, mats, pidx, scale, offset, thetas):
    """Row b of psis <- the program at thetas[b] applied to it; rows run in parallel."""
    for r in prange(psis.shape[0]):
        run_forward(psis[r], kinds, ints, mats, pidx, scale, offset, thetas[r])


# ----------------------------------------------------------------------------- generators


@njit(cache=True)
def generator_inner(lam, psi, kind, ints):
    """⟨lam, A psi⟩ = Σ_j conj(lam_j) (A psi)_j for the generator A of a parameterised op."""
    cmask = ints[2]
    acc = 0.0j
    if kind == K_PHASE:
        for j in range(psi.size):
            if (j & cmask) == cmask:
                acc += np.conj(lam[j]) * psi[j]
        return 1j * acc
    xmask, zmask = ints[3], ints[4]
    one = xmask | zmask
    if cmask == 0 and (one & (one - 1)) == 0:  # one uncontrolled wire: blocked, no parity
        bit = one
        n = psi.size
        if xmask == 0:  # Z: Σ conj(lam_i) psi_i - conj(lam_i+b) psi_i+b
            for base in range(0, n, 2 * bit):
                for i in range(base, base + bit):
                    acc += np.conj(lam[i]) * psi[i] - np.conj(lam[i + bit]) * psi[i + bit]
        else:  # X (z = 0) or Y (z = x): src of i is i + b (sign +), of i + b is i (sign -1 if Y)
            sz = -1.0 if zmask else 1.0
            for base in range(0, n, 2 * bit):
                for i in range(base, base + bit):
                    acc += np.conj(lam[i]) * psi[i + bit] * sz + np.conj(lam[i + bit]) * psi[i]
        return complex(0.0, -0.5) * _iphase(ints[5]) * acc
    for j in range(psi.size):
        if (j & cmask) != cmask:
            continue
        src = j ^ xmask
        t = np.conj(lam[j]) * psi[src]
        acc += -t if _parity(src & zmask) else t
    return complex(0.0, -0.5) * _iphase(ints[5]) * acc


@njit(cache=True)
def add_generator(dst, psi, kind, ints, coef):
    """dst <- dst + coef · A psi for the generator A of a parameterised op."""
    cmask = ints[2]
    if kind == K_PHASE:
        f = complex(0.0, coef)
        for j in range(psi.size):
            if (j & cmask) == cmask:
                dst[j] += f * psi[j]
        return
    xmask, zmask = ints[3], ints[4]
    f = complex(0.0, -0.5 * coef) * _iphase(ints[5])
    for j in range(psi.size):
        if (j & cmask) != cmask:
            continue
        src = j ^ xmask
        v = f * psi[src]
        dst[j] += -v if _parity(src & zmask) else v


#: Reductions may be reassociated so that LLVM vectorises them (sums differ in the last bits only).
REDUCE_FLAGS = {"reassoc", "nsz", "contract"}

# Paired adjoint kernels (DERIVATIONS.md eq. A7–A8). A one-wire rotation row is classified once as
# ``U = exp(-i phi sigma P / 2)`` with ``P`` one of Z (code 0), X (1), Y (2) and a sign sigma; then
# ``U† = c + i s P`` with ``c = cos(phi/2)``, ``s = sigma sin(phi/2)``, and the gradient term
# ``Re⟨λ, A ψ⟩ = (sigma / 2) Im⟨λ, P ψ⟩`` (A = -i sigma P / 2). The per-amplitude arithmetic is
# specialised per Pauli (a diagonal phase for Z, a real matrix for Y, a swap-and-i for X) instead
# of a general complex 2×2 product; the branches are loop-invariant, so LLVM unswitches them.

P_Z, P_X, P_Y = 0, 1, 2


@njit(cache=True, inline="always")
def _pauli_code(row):
    """(code, sigma) of a one-wire rotation row: P = sigma · {Z, X, Y}[code] (eq. A8)."""
    if row[3] == 0:
        t, k = P_Z, row[5]
    elif row[4] == 0:
        t, k = P_X, row[5]
    else:
        t, k = P_Y, row[5] - 1  # P = i**ny X Z = i**(ny - 1) Y on one wire
    return t, (1.0 if (k & 3) == 0 else -1.0)


@njit(cache=True, inline="always")
def _im_inner(t, l0, l1, a0, a1):
    """Im(conj(l0) (P a)_0 + conj(l1) (P a)_1) for the Pauli P of code t."""
    if t == P_Z:  # (a0, -a1)
        return (l0.real * a0.imag - l0.imag * a0.real) - (l1.real * a1.imag - l1.imag * a1.real)
    if t == P_X:  # (a1, a0)
        return (l0.real * a1.imag - l0.imag * a1.real) + (l1.real * a0.imag - l1.imag * a0.real)
    # Y: (-i a1, i a0); Im(-i z) = -Re z
    return (l1.real * a0.real + l1.imag * a0.imag) - (l0.real * a1.real + l0.imag * a1.imag)


@njit(cache=True, inline="always")
def _rot_dagger(t, c, s, a0, a1):
    """(c + i s P) (a0, a1) for the Pauli P of code t."""
    if t == P_Z:  # diag(c + i s, c - i s)
        return (complex(c * a0.real - s * a0.imag, c * a0.imag + s * a0.real),
                complex(c * a1.real + s * a1.imag, c * a1.imag - s * a1.real))
    if t == P_X:  # [[c, i s], [i s, c]]
        return (complex(c * a0.real - s * a1.imag, c * a0.imag + s * a1.real),
                complex(c * a1.real - s * a0.imag, c * a1.imag + s * a0.real))
    return c * a0 + s * a1, c * a1 - s * a0  # Y: i s Y = [[0, s], [-s, 0]]


@njit(cache=True, inline="always")
def _rot_cs(row, phi):
    """(code, c, s, sigma) of a one-wire rotation row at angle phi: U† = c + i s P."""
    t, sigma = _pauli_code(row)
    return t, np.cos(0.5 * phi), sigma * np.sin(0.5 * phi), sigma


# The loops below run over blocks ``base`` of ``2 * bit`` amplitudes and, inside, ``bit``
# consecutive pairs with unsigned (``uint64``) indices and ``bit`` passed in (not derived from
# the bit position): the affine, wraparound-free form that LLVM vectorises (measured at 16 qubits:
# ≈ 3× faster than the pair-by-index form, which stays scalar). The Pauli codes are compile-time
# constants ``TA``/``TB`` in specialised copies (:func:`_specialise`): runtime codes cost ≈ 1.6×.


TA = TB = P_Z  # the Pauli codes of the bodies below; each specialised copy binds its own


def _rot1_adj_body(psi, lam, bit, c, s, cbit):
    """One adjoint-sweep step of a one-wire rotation (Pauli code ``TA``) on the bit ``bit``, in
    one pass over (psi, lam) (eq. A8): returns Im⟨lam, P psi⟩ on the entry values and applies
    U† = c + i s P to psi and lam. ``cbit`` (0: none; else a bit above ``bit``): first un-apply
    a CNOT with that control bit onto ``bit`` (the pair's loads swapped where it is set; eq. A10).
    """
    acc = 0.0
    if bit == 1:  # adjacent pairs (see _rot2_adj_body)
        for m in range(psi.size >> 1):
            i = uint64(2 * m)
            j = uint64(2 * m + 1)
            a0, a1 = psi[i], psi[j]
            l0, l1 = lam[i], lam[j]
            if i & cbit:
                a0, a1, l0, l1 = a1, a0, l1, l0
            acc += _im_inner(TA, l0, l1, a0, a1)
            a0, a1 = _rot_dagger(TA, c, s, a0, a1)
            l0, l1 = _rot_dagger(TA, c, s, l0, l1)
            psi[i], psi[j] = a0, a1
            lam[i], lam[j] = l0, l1
        return acc
    for base in range(0, psi.size, 2 * bit):
        swap = (base & cbit) != 0  # loop-invariant below: LLVM unswitches it
        for k in range(bit):
            i = uint64(base + k)
            j = uint64(base + k + bit)
            a0, a1 = psi[i], psi[j]
            l0, l1 = lam[i], lam[j]
            if swap:
                a0, a1, l0, l1 = a1, a0, l1, l0
            acc += _im_inner(TA, l0, l1, a0, a1)
            a0, a1 = _rot_dagger(TA, c, s, a0, a1)
            l0, l1 = _rot_dagger(TA, c, s, l0, l1)
            psi[i], psi[j] = a0, a1
            lam[i], lam[j] = l0, l1
    return acc


def _rot2_adj_body(psi, lam, bit, ca, sa, cb, sb, cbit):
    """Two adjoint-sweep steps (rows g, Pauli code ``TA``, then g - 1, code ``TB``: one-wire
    rotations on one bit) in one pass over (psi, lam) (eq. A7–A8): returns
    (Im⟨lam_g, P_a psi_g⟩, Im⟨lam_{g-1}, P_b psi_{g-1}⟩) and applies U_b† U_a† to psi and lam,
    the intermediate values staying in registers. ``cbit``: as in :func:`_rot1_adj_body`.
    """
    da = 0.0
    db = 0.0
    if bit == 1:
        # Adjacent pairs: one loop with a constant stride, which LLVM vectorises (the blocked
        # loop below has inner loops of length 1 here and stays scalar: ≈ 2× slower). The loads
        # and stores must stay in the loop body: behind an inlined helper LLVM gives up.
        for m in range(psi.size >> 1):
            i = uint64(2 * m)
            j = uint64(2 * m + 1)
            a0, a1 = psi[i], psi[j]
            l0, l1 = lam[i], lam[j]
            if i & cbit:
                a0, a1, l0, l1 = a1, a0, l1, l0
            da += _im_inner(TA, l0, l1, a0, a1)
            a0, a1 = _rot_dagger(TA, ca, sa, a0, a1)
            l0, l1 = _rot_dagger(TA, ca, sa, l0, l1)
            db += _im_inner(TB, l0, l1, a0, a1)
            a0, a1 = _rot_dagger(TB, cb, sb, a0, a1)
            l0, l1 = _rot_dagger(TB, cb, sb, l0, l1)
            psi[i], psi[j] = a0, a1
            lam[i], lam[j] = l0, l1
        return da, db
    for base in range(0, psi.size, 2 * bit):
        swap = (base & cbit) != 0
        for k in range(bit):
            i = uint64(base + k)
            j = uint64(base + k + bit)
            a0, a1 = psi[i], psi[j]
            l0, l1 = lam[i], lam[j]
            if swap:
                a0, a1, l0, l1 = a1, a0, l1, l0
            da += _im_inner(TA, l0, l1, a0, a1)
            a0, a1 = _rot_dagger(TA, ca, sa, a0, a1)
            l0, l1 = _rot_dagger(TA, ca, sa, l0, l1)
            db += _im_inner(TB, l0, l1, a0, a1)
            a0, a1 = _rot_dagger(TB, cb, sb, a0, a1)
            l0, l1 = _rot_dagger(TB, cb, sb, l0, l1)
            psi[i], psi[j] = a0, a1
            lam[i], lam[j] = l0, l1
    return da, db


def _specialise(fn, suffix, **consts):
    """An njit copy of ``fn`` whose globals ``consts`` (e.g. ``TA=P_Z``) are compile-time
    constants; a distinct qualified name keeps it apart in Numba's on-disk cache."""
    glob = dict(fn.__globals__)
    glob.update(consts)
    f = types.FunctionType(fn.__code__, glob, fn.__name__ + suffix, fn.__defaults__,
                           fn.__closure__)
    f.__qualname__ = fn.__qualname__ + suffix
    f.__doc__ = fn.__doc__
    return njit(cache=True, fastmath=REDUCE_FLAGS)(f)


def _rot1_tan_body(psi, dpsi, bit, c, s, f):
    """One forward-mode step of a one-wire rotation (Pauli code ``TA``) in one pass (eq. A5,
    A8): with U = c - i s P, psi <- U psi and dpsi <- U dpsi - i f P (U psi), f = sigma dphi / 2.
    """
    for base in range(0, psi.size, 2 * bit):
        for k in range(bit):
            i = uint64(base + k)
            j = uint64(base + k + bit)
            a0, a1 = _rot_dagger(TA, c, -s, psi[i], psi[j])
            d0, d1 = _rot_dagger(TA, c, -s, dpsi[i], dpsi[j])
            m0, m1 = _rot_dagger(TA, 0.0, -f, a0, a1)  # -i f P a
            psi[i], psi[j] = a0, a1
            dpsi[i], dpsi[j] = d0 + m0, d1 + m1


_PN = "zxy"
_rot1_adj_z, _rot1_adj_x, _rot1_adj_y = (
    _specialise(_rot1_adj_body, "_" + _PN[a], TA=a) for a in range(3))
(_rot2_adj_zz, _rot2_adj_zx, _rot2_adj_zy, _rot2_adj_xz, _rot2_adj_xx, _rot2_adj_xy,
 _rot2_adj_yz, _rot2_adj_yx, _rot2_adj_yy) = (
    _specialise(_rot2_adj_body, "_" + _PN[a] + _PN[b], TA=a, TB=b)
    for a in range(3) for b in range(3))
_rot1_tan_z, _rot1_tan_x, _rot1_tan_y = (
    _specialise(_rot1_tan_body, "_" + _PN[a], TA=a) for a in range(3))


# Split-complex (SoA) adjoint steps: ψ and λ as separate real and imaginary arrays (pr, pi, lr,
# li). LLVM vectorises complex arithmetic by splitting re/im into separate vectors anyway; from
# split arrays it needs no shuffles to do so, and pairs on bit 1 (blocks of four amplitudes)
# vectorise as a loop with two pairs per iteration (measured at 16 qubits, one Y·Z pair step:
# bits ≥ 3 75 -> 60 µs, bit 1 220 -> 112 µs, bit 0 118 -> 93 µs; bit 2 stays ≈ 220 µs). Used by
# :func:`adjoint_sweep_soa` for programs of one-wire rotations and CNOTs (eq. A11).


@njit(cache=True, inline="always")
def _step2(ta, tb, ca, sa, cb, sb, a0, a1, l0, l1):
    """Two adjoint steps (Pauli codes ta then tb) on one pair of ψ and λ amplitudes: returns
    (Im⟨λ, P_a ψ⟩, Im⟨λ', P_b ψ'⟩, ψ'' pair, λ'' pair) (eq. A7–A8)."""
    da = _im_inner(ta, l0, l1, a0, a1)
    a0, a1 = _rot_dagger(ta, ca, sa, a0, a1)
    l0, l1 = _rot_dagger(ta, ca, sa, l0, l1)
    db = _im_inner(tb, l0, l1, a0, a1)
    a0, a1 = _rot_dagger(tb, cb, sb, a0, a1)
    l0, l1 = _rot_dagger(tb, cb, sb, l0, l1)
    return da, db, a0, a1, l0, l1


def _rot2_soa_body(pr, pi, lr, li, bit, ca, sa, cb, sb, cbit):
    """:func:`_rot2_adj_body` on split-complex ψ = pr + i pi, λ = lr + i li; ``cb = 1, sb = 0``
    is a lone rotation (the second result then meaningless). Loads and stores stay in the loop
    bodies (behind a helper LLVM does not vectorise them)."""
    da = 0.0
    db = 0.0
    if bit == 1:  # adjacent pairs: one loop with a constant stride
        for q in range(pr.size >> 1):
            i = uint64(2 * q)
            j = uint64(2 * q + 1)
            a0, a1 = complex(pr[i], pi[i]), complex(pr[j], pi[j])
            l0, l1 = complex(lr[i], li[i]), complex(lr[j], li[j])
            if i & cbit:
                a0, a1, l0, l1 = a1, a0, l1, l0
            x, y, a0, a1, l0, l1 = _step2(TA, TB, ca, sa, cb, sb, a0, a1, l0, l1)
            da += x
            db += y
            pr[i], pi[i], pr[j], pi[j] = a0.real, a0.imag, a1.real, a1.imag
            lr[i], li[i], lr[j], li[j] = l0.real, l0.imag, l1.real, l1.imag
        return da, db
    if bit == 2:  # blocks of four: two pairs per iteration (a constant inner trip count)
        for q in range(pr.size >> 2):
            for r in range(2):
                i = uint64(4 * q + r)
                j = uint64(4 * q + r + 2)
                a0, a1 = complex(pr[i], pi[i]), complex(pr[j], pi[j])
                l0, l1 = complex(lr[i], li[i]), complex(lr[j], li[j])
                if i & cbit:
                    a0, a1, l0, l1 = a1, a0, l1, l0
                x, y, a0, a1, l0, l1 = _step2(TA, TB, ca, sa, cb, sb, a0, a1, l0, l1)
                da += x
                db += y
                pr[i], pi[i], pr[j], pi[j] = a0.real, a0.imag, a1.real, a1.imag
                lr[i], li[i], lr[j], li[j] = l0.real, l0.imag, l1.real, l1.imag
        return da, db
    for base in range(0, pr.size, 2 * bit):
        swap = (base & cbit) != 0  # loop-invariant below: LLVM unswitches it
        for k in range(bit):
            i = uint64(base + k)
            j = uint64(base + k + bit)
            a0, a1 = complex(pr[i], pi[i]), complex(pr[j], pi[j])
            l0, l1 = complex(lr[i], li[i]), complex(lr[j], li[j])
            if swap:
                a0, a1, l0, l1 = a1, a0, l1, l0
            x, y, a0, a1, l0, l1 = _step2(TA, TB, ca, sa, cb, sb, a0, a1, l0, l1)
            da += x
            db += y
            pr[i], pi[i], pr[j], pi[j] = a0.real, a0.imag, a1.real, a1.imag
            lr[i], li[i], lr[j], li[j] = l0.real, l0.imag, l1.real, l1.imag
    return da, db


(_rot2_soa_zz, _rot2_soa_zx, _rot2_soa_zy, _rot2_soa_xz, _rot2_soa_xx, _rot2_soa_xy,
 _rot2_soa_yz, _rot2_soa_yx, _rot2_soa_yy) = (
    _specialise(_rot2_soa_body, "_" + _PN[a] + _PN[b], TA=a, TB=b)
    for a in range(3) for b in range(3))


@njit(cache=True)
def rot2_soa(pr, pi, lr, li, bit, ta, ca, sa, tb, cb, sb, cbit):
    """:func:`_rot2_soa_body` for the Pauli codes (ta, tb) (serial)."""
    if ta == P_Z:
        if tb == P_Z:
            return _rot2_soa_zz(pr, pi, lr, li, bit, ca, sa, cb, sb, cbit)
        if tb == P_X:
            return _rot2_soa_zx(pr, pi, lr, li, bit, ca, sa, cb, sb, cbit)
        return _rot2_soa_zy(pr, pi, lr, li, bit, ca, sa, cb, sb, cbit)
    if ta == P_X:
        if tb == P_Z:
            return _rot2_soa_xz(pr, pi, lr, li, bit, ca, sa, cb, sb, cbit)
        if tb == P_X:
            return _rot2_soa_xx(pr, pi, lr, li, bit, ca, sa, cb, sb, cbit)
        return _rot2_soa_xy(pr, pi, lr, li, bit, ca, sa, cb, sb, cbit)
    if tb == P_Z:
        return _rot2_soa_yz(pr, pi, lr, li, bit, ca, sa, cb, sb, cbit)
    if tb == P_X:
        return _rot2_soa_yx(pr, pi, lr, li, bit, ca, sa, cb, sb, cbit)
    return _rot2_soa_yy(pr, pi, lr, li, bit, ca, sa, cb, sb, cbit)


@njit(cache=True)
def _cx1_soa(pr, pi, lr, li, b, c):
    """:func:`_cx1_pair` on split-complex ψ and λ."""
    _cx1_pair(pr, lr, b, c)
    _cx1_pair(pi, li, b, c)


@njit(cache=True)
def split_complex(z, out):
    """out[:n], out[n:] <- z.real, z.imag (the split-complex copy of a state of n amplitudes)."""
    n = z.size
    for k in range(n):
        i = uint64(k)
        out[i] = z[i].real
        out[i + n] = z[i].imag


@njit(cache=True)
def soa_rows_ok(kinds, ints):
    """Whether every row is a one-wire rotation or a single-control CNOT (the rows
    :func:`adjoint_sweep_soa` runs)."""
    for g in range(kinds.size):
        row = ints[g]
        if _is_rot1(kinds[g], row):
            continue
        if kinds[g] == K_X and row[2] != 0 and (row[2] & (row[2] - 1)) == 0:
            continue
        return False
    return True


@njit(cache=True)
def adjoint_sweep_soa(p, lam, kinds, ints, mats, pidx, scale, offset, theta, grad):
    """:func:`adjoint_sweep` on split-complex ψ and λ (``p = [Re ψ, Im ψ]``, ``lam = [Re λ,
    Im λ]``, as :func:`split_complex` writes them), for programs of one-wire rotations and
    single-control CNOTs only (:func:`soa_rows_ok`; eq. A11): the same fused steps (pairs
    eq. A7, Pauli-specialised eq. A8, CNOT absorbed eq. A10)."""
    n = p.size >> 1
    _sweep_soa(p[:n], p[n:], lam[:n], lam[n:], kinds, ints, pidx, scale, offset, theta, grad)


@njit(cache=True)
def adjoint_sweep_soa_tiled(p, lam, kinds, ints, mats, pidx, scale, offset, theta, grad, low,
                            tile):
    """:func:`adjoint_sweep_soa` cache-blocked as :func:`adjoint_sweep_tiled` (runs of rows on
    bits below log2(tile) block by block)."""
    n = p.size >> 1
    _sweep_soa_tiled(p[:n], p[n:], lam[:n], lam[n:], kinds, ints, pidx, scale, offset, theta,
                     grad, low, tile)


@njit(cache=True)
def _sweep_soa_tiled(pr, pi, lr, li, kinds, ints, pidx, scale, offset, theta, grad, low, tile):
    """The body of :func:`adjoint_sweep_soa_tiled` on the four real arrays."""
    n = pr.size
    hi = kinds.size
    while hi > 0:
        lo = _run_start(low, hi)
        if low[lo]:
            for t in range(0, n, tile):
                _sweep_soa(pr[t:t + tile], pi[t:t + tile], lr[t:t + tile], li[t:t + tile],
                           kinds[lo:hi], ints[lo:hi], pidx[lo:hi], scale[lo:hi], offset[lo:hi],
                           theta, grad)
        else:
            _sweep_soa(pr, pi, lr, li, kinds[lo:hi], ints[lo:hi], pidx[lo:hi], scale[lo:hi],
                       offset[lo:hi], theta, grad)
        hi = lo


@njit(cache=True, parallel=True)
def adjoint_sweep_soa_split(p, lam, kinds, ints, mats, pidx, scale, offset, theta, grad, top,
                            low, tile):
    """:func:`adjoint_sweep_soa` on two threads: runs of rows off the top bit sweep the two
    halves of the state independently (eq. T1), as :func:`adjoint_sweep_split` does for the
    complex sweep, each half cache-blocked as :func:`adjoint_sweep_soa_tiled` (``tile`` ≥ the
    state size: no blocking); rows on the top bit run serially on the whole state."""
    n = p.size >> 1
    half = n >> 1
    pr, pi, lr, li = p[:n], p[n:], lam[:n], lam[n:]
    parts = np.zeros((2, grad.size))
    hi = kinds.size
    while hi > 0:
        lo = _run_start(top, hi)
        if top[lo]:
            _sweep_soa(pr, pi, lr, li, kinds[lo:hi], ints[lo:hi], pidx[lo:hi], scale[lo:hi],
                       offset[lo:hi], theta, grad)
        else:
            for h in prange(2):
                a, b = h * half, (h + 1) * half
                _sweep_soa_tiled(pr[a:b], pi[a:b], lr[a:b], li[a:b], kinds[lo:hi], ints[lo:hi],
                                 pidx[lo:hi], scale[lo:hi], offset[lo:hi], theta, parts[h],
                                 low[lo:hi], tile)
        hi = lo
    grad += parts[0] + parts[1]


@njit(cache=True)
def _sweep_soa(pr, pi, lr, li, kinds, ints, pidx, scale, offset, theta, grad):
    """The body of :func:`adjoint_sweep_soa` on the four real arrays."""
    g = kinds.size - 1
    while g >= 0:
        row = ints[g]
        cbit = 0
        if kinds[g] == K_X:  # a CNOT (soa_rows_ok)
            if row[2] > (1 << row[0]) and g >= 1 and _is_rot1(kinds[g - 1], ints[g - 1]) == (
                    1 << row[0]):
                cbit = row[2]
                g -= 1
                row = ints[g]
            else:
                _cx1_soa(pr, pi, lr, li, row[0], _log2(row[2]))
                g -= 1
                continue
        one = _is_rot1(kinds[g], row)
        ta, ca, sa, siga = _rot_cs(row, _angle(g, pidx, scale, offset, theta))
        if g >= 1 and _is_rot1(kinds[g - 1], ints[g - 1]) == one:  # a pair (eq. A7)
            tb, cb, sb, sigb = _rot_cs(ints[g - 1], _angle(g - 1, pidx, scale, offset, theta))
            da, db = rot2_soa(pr, pi, lr, li, one, ta, ca, sa, tb, cb, sb, cbit)
            if pidx[g - 1] >= 0:
                grad[pidx[g - 1]] += scale[g - 1] * 0.5 * sigb * db
            step = 2
        else:  # a lone rotation: the pair kernel with the identity second
            da = rot2_soa(pr, pi, lr, li, one, ta, ca, sa, ta, 1.0, 0.0, cbit)[0]
            step = 1
        if pidx[g] >= 0:
            grad[pidx[g]] += scale[g] * 0.5 * siga * da
        g -= step


@njit(cache=True)
def rot1_tan(psi, dpsi, bit, t, c, s, f):
    """:func:`_rot1_tan_body` for the Pauli code t (serial)."""
    if t == P_Z:
        _rot1_tan_z(psi, dpsi, bit, c, s, f)
    elif t == P_X:
        _rot1_tan_x(psi, dpsi, bit, c, s, f)
    else:
        _rot1_tan_y(psi, dpsi, bit, c, s, f)


@njit(cache=True)
def rot1_adj(psi, lam, bit, t, c, s, cbit=0):
    """:func:`_rot1_adj_body` for the Pauli code t (serial)."""
    if t == P_Z:
        return _rot1_adj_z(psi, lam, bit, c, s, cbit)
    if t == P_X:
        return _rot1_adj_x(psi, lam, bit, c, s, cbit)
    return _rot1_adj_y(psi, lam, bit, c, s, cbit)


@njit(cache=True)
def rot2_adj(psi, lam, bit, ta, ca, sa, tb, cb, sb, cbit=0):
    """:func:`_rot2_adj_body` for the Pauli codes (ta, tb) (serial)."""
    if ta == P_Z:
        if tb == P_Z:
            return _rot2_adj_zz(psi, lam, bit, ca, sa, cb, sb, cbit)
        if tb == P_X:
            return _rot2_adj_zx(psi, lam, bit, ca, sa, cb, sb, cbit)
        return _rot2_adj_zy(psi, lam, bit, ca, sa, cb, sb, cbit)
    if ta == P_X:
        if tb == P_Z:
            return _rot2_adj_xz(psi, lam, bit, ca, sa, cb, sb, cbit)
        if tb == P_X:
            return _rot2_adj_xx(psi, lam, bit, ca, sa, cb, sb, cbit)
        return _rot2_adj_xy(psi, lam, bit, ca, sa, cb, sb, cbit)
    if tb == P_Z:
        return _rot2_adj_yz(psi, lam, bit, ca, sa, cb, sb, cbit)
    if tb == P_X:
        return _rot2_adj_yx(psi, lam, bit, ca, sa, cb, sb, cbit)
    return _rot2_adj_yy(psi, lam, bit, ca, sa, cb, sb, cbit)


@njit(cache=True)
def _cx1_pair(psi, lam, b, c):
    """CNOT (control bit c, target bit b) on psi and lam in one pass (it is its own inverse)."""
    lo, hi = min(b, c), max(b, c)
    bit = 1 << b
    cbit = 1 << c
    run = 1 << lo
    for o in range(psi.size >> (2 + lo)):
        i0 = _insert0(_insert0(o << lo, lo), hi) | cbit
        for r in range(run):
            i = uint64(i0 + r)
            j = uint64(i0 + r + bit)
            t = psi[i]
            psi[i] = psi[j]
            psi[j] = t
            t = lam[i]
            lam[i] = lam[j]
            lam[j] = t




@njit(cache=True)
def adjoint_sweep(psi, lam, kinds, ints, mats, pidx, scale, offset, theta, grad):
    """The adjoint method: grad[k] += Re⟨lam, dpsi/dtheta_k⟩ (DERIVATIONS.md, eq. A3).

    On entry ``psi`` is the final state and ``lam`` the cotangent of the final state; both are
    overwritten (on exit ``psi`` is the initial state, ``lam`` the initial state's cotangent).
    """
    g = kinds.size - 1
    while g >= 0:
        kind = kinds[g]
        row = ints[g]
        cbit = 0
        if kind == K_MATN:
            apply_matn(psi, row, mats, g, True)
            apply_matn(lam, row, mats, g, True)
            g -= 1
            continue
        if kind == K_X and row[2] != 0 and (row[2] & (row[2] - 1)) == 0:  # CNOT
            if row[2] > (1 << row[0]) and g >= 1 and _is_rot1(kinds[g - 1], ints[g - 1]) == (
                    1 << row[0]):  # its target's rotations next: one pass for all (eq. A10)
                cbit = row[2]
                g -= 1
                kind = kinds[g]
                row = ints[g]
            else:
                _cx1_pair(psi, lam, row[0], _log2(row[2]))
                g -= 1
                continue
        phi = _angle(g, pidx, scale, offset, theta)
        one = _is_rot1(kind, row)
        if one:
            ta, ca, sa, siga = _rot_cs(row, phi)
            if g >= 1 and _is_rot1(kinds[g - 1], ints[g - 1]) == one:  # a pair (eq. A7)
                tb, cb, sb, sigb = _rot_cs(ints[g - 1], _angle(g - 1, pidx, scale, offset, theta))
                da, db = rot2_adj(psi, lam, one, ta, ca, sa, tb, cb, sb, cbit)
                if pidx[g - 1] >= 0:
                    grad[pidx[g - 1]] += scale[g - 1] * 0.5 * sigb * db
                step = 2
            else:
                da = rot1_adj(psi, lam, one, ta, ca, sa, cbit)
                step = 1
            if pidx[g] >= 0:
                grad[pidx[g]] += scale[g] * 0.5 * siga * da
            g -= step
            continue
        if pidx[g] >= 0:
            grad[pidx[g]] += scale[g] * generator_inner(lam, psi, kind, ints[g]).real
        apply_op(psi, kind, ints[g], mats[g], phi, True)
        apply_op(lam, kind, ints[g], mats[g], phi, True)
        g -= 1


# ----------------------------------------------------------------------------- two-way split
#
# Multi-threading of one state by halves (DERIVATIONS.md eq. T1): a run of consecutive rows that
# do not touch the top bit acts on the halves ψ[:N/2] and ψ[N/2:] independently, so two threads
# run the *serial* fused, vectorised kernels on one half each, with one fork-join per run (a
# hardware-efficient layer has two such runs) instead of one per gate; rows on the top bit run on
# the whole state. Gradient contributions of the halves are summed.


@njit(cache=True, inline="always")
def _run_end(top, lo, up):
    """The end of the run of rows lo.. with top[lo]'s value (exclusive), at most up."""
    hi = lo + 1
    while hi < up and top[hi] == top[lo]:
        hi += 1
    return hi


@njit(cache=True, inline="always")
def _run_start(top, hi):
    """The start of the run of rows ..hi-1 with top[hi-1]'s value."""
    lo = hi - 1
    while lo > 0 and top[lo - 1] == top[hi - 1]:
        lo -= 1
    return lo


@njit(cache=True, parallel=True)
def run_forward_split(psi, kinds, ints, mats, pidx, scale, offset, theta, top):
    """:func:`run_forward` with two threads on the halves of runs off the top bit."""
    half = psi.size >> 1
    g = 0
    while g < kinds.size:
        e = _run_end(top, g, kinds.size)
        if top[g]:
            run_forward(psi, kinds[g:e], ints[g:e], mats[g:e], pidx[g:e], scale[g:e],
                        offset[g:e], theta)
        else:
            for h in prange(2):
                run_forward(psi[h * half:(h + 1) * half], kinds[g:e], ints[g:e], mats[g:e],
                            pidx[g:e], scale[g:e], offset[g:e], theta)
        g = e


@njit(cache=True, parallel=True)
def adjoint_sweep_split(psi, lam, kinds, ints, mats, pidx, scale, offset, theta, grad, top):
    """:func:`adjoint_sweep` with two threads on the halves of runs off the top bit."""
    half = psi.size >> 1
    parts = np.zeros((2, grad.size))
    hi = kinds.size
    while hi > 0:
        lo = _run_start(top, hi)
        if top[lo]:
            adjoint_sweep(psi, lam, kinds[lo:hi], ints[lo:hi], mats[lo:hi], pidx[lo:hi],
                          scale[lo:hi], offset[lo:hi], theta, grad)
        else:
            for h in prange(2):
                s = slice(h * half, (h + 1) * half)
                adjoint_sweep(psi[s], lam[s], kinds[lo:hi], ints[lo:hi], mats[lo:hi],
                              pidx[lo:hi], scale[lo:hi], offset[lo:hi], theta, parts[h])
        hi = lo
    grad += parts[0] + parts[1]


@njit(cache=True, parallel=True)
def tangent_sweep_split(psi, dpsi, kinds, ints, mats, pidx, scale, offset, theta, dtheta, top):
    """:func:`tangent_sweep` with two threads on the halves of runs off the top bit."""
    half = psi.size >> 1
    g = 0
    while g < kinds.size:
        e = _run_end(top, g, kinds.size)
        if top[g]:
            tangent_sweep(psi, dpsi, kinds[g:e], ints[g:e], mats[g:e], pidx[g:e], scale[g:e],
                          offset[g:e], theta, dtheta)
        else:
            for h in prange(2):
                s = slice(h * half, (h + 1) * half)
                tangent_sweep(psi[s], dpsi[s], kinds[g:e], ints[g:e], mats[g:e], pidx[g:e],
                              scale[g:e], offset[g:e], theta, dtheta)
        g = e


#: Cache blocking of the adjoint sweep: runs of rows on bits below TILE_BITS act on each block of
#: 2**TILE_BITS amplitudes independently (as the halves of eq. T1), so they sweep one block of ψ
#: and λ at a time (2 × 128 KiB, in L2) instead of streaming both whole states once per row. Used
#: from :data:`TILE_MIN_AMPS` amplitudes, where two states no longer fit in cache (measured at
#: 20 qubits on the HEA-TFIM benchmark: the backward sweep 115 -> 78 ms; 12-14 bits all within 10%).
TILE_BITS = 13
TILE_MIN_AMPS = 1 << 18


@njit(cache=True)
def adjoint_sweep_tiled(psi, lam, kinds, ints, mats, pidx, scale, offset, theta, grad, low, tile):
    """:func:`adjoint_sweep` with runs of rows marked ``low`` (bits < log2(tile) only) taken
    block by block: ψ[t:t + tile], λ[t:t + tile] for each block t."""
    hi = kinds.size
    while hi > 0:
        lo = _run_start(low, hi)
        if low[lo]:
            for t in range(0, psi.size, tile):
                adjoint_sweep(psi[t:t + tile], lam[t:t + tile], kinds[lo:hi], ints[lo:hi],
                              mats[lo:hi], pidx[lo:hi], scale[lo:hi], offset[lo:hi], theta, grad)
        else:
            adjoint_sweep(psi, lam, kinds[lo:hi], ints[lo:hi], mats[lo:hi], pidx[lo:hi],
                          scale[lo:hi], offset[lo:hi], theta, grad)
        hi = lo


@njit(cache=True, parallel=True)
def adjoint_sweep_batch(psis, lams, kinds, ints, mats, pidx, scale, offset, thetas, grads):
    """:func:`adjoint_sweep` for each row of a batch, rows in parallel."""
    for r in prange(psis.shape[0]):
        adjoint_sweep(psis[r], lams[r], kinds, ints, mats, pidx, scale, offset, thetas[r],
                      grads[r])


@njit(cache=True)
def apply_matn(psi, ints, mats, g, inverse):
    """psi <- U psi (``inverse``: U† psi) for the K_MATN row g: a 2**k × 2**k matrix on the k
    bits of ints[3] (local index bit t = the t-th lowest of them), where all cmask bits are set.
    """
    tmask = ints[3]
    cmask = ints[2]
    k = 0
    for b in range(63):
        if (tmask >> b) & 1:
            k += 1
    d = 1 << k
    bits = np.empty(k, np.int64)
    t = 0
    for b in range(63):
        if (tmask >> b) & 1:
            bits[t] = b
            t += 1
    u = np.empty((d, d), np.complex128)
    for r in range(d):
        for c in range(d):
            e = r * d + c
            q = e & 15
            v = mats[g + 1 + (e >> 4), q >> 2, q & 3]
            if inverse:
                u[c, r] = np.conj(v)
            else:
                u[r, c] = v
    offs = np.zeros(d, np.int64)
    for a in range(d):
        for t in range(k):
            if (a >> t) & 1:
                offs[a] += 1 << bits[t]
    v = np.empty(d, np.complex128)
    for m in range(psi.size >> k):
        base = m
        for t in range(k):
            base = _insert0(base, bits[t])
        if (base & cmask) != cmask:
            continue
        for a in range(d):
            v[a] = psi[base + offs[a]]
        for r in range(d):
            acc = 0.0j
            for c in range(d):
                acc += u[r, c] * v[c]
            psi[base + offs[r]] = acc


@njit(cache=True)
def apply_chan2(psi, ints, mats, g, adjoint):
    """vec(rho) <- S vec(rho) (``adjoint``: S^H) for the K_CHAN2 row g (eq. N4).

    S[r, c] = mats[g + 1 + r, c // 4, c % 4]; local index a = 8 r0 + 4 r1 + 2 c0 + c1 on the
    bits ``ints[0..3]``.
    """
    s = np.empty((16, 16), np.complex128)
    for r in range(16):
        for c in range(16):
            v = mats[g + 1 + r, c >> 2, c & 3]
            if adjoint:
                s[c, r] = np.conj(v)
            else:
                s[r, c] = v
    offs = np.zeros(16, np.int64)
    for a in range(16):
        for t in range(4):
            if (a >> (3 - t)) & 1:
                offs[a] += 1 << ints[t]
    bits = np.sort(ints[:4].copy())
    v = np.empty(16, np.complex128)
    for k in range(psi.size >> 4):
        base = _insert0(_insert0(_insert0(_insert0(k, bits[0]), bits[1]), bits[2]), bits[3])
        for a in range(16):
            v[a] = psi[base + offs[a]]
        for r in range(16):
            acc = 0.0j
            for c in range(16):
                acc += s[r, c] * v[c]
            psi[base + offs[r]] = acc


@njit(cache=True)
def run_forward_record(psi, kinds, ints, mats, pidx, scale, offset, theta, snaps):
    """:func:`run_forward`, saving the state before each channel row into ``snaps[s]``."""
    s = 0
    for g in range(kinds.size):
        if kinds[g] == K_MATN:
            apply_matn(psi, ints[g], mats, g, False)
            continue
        if kinds[g] == K_CHAN or kinds[g] == K_CHAN2:
            snaps[s, :] = psi
            s += 1
            if kinds[g] == K_CHAN2:
                apply_chan2(psi, ints[g], mats, g, False)
                continue
        apply_op(psi, kinds[g], ints[g], mats[g], _angle(g, pidx, scale, offset, theta), False)


@njit(cache=True)
def adjoint_sweep_mixed(psi, lam, kinds, ints, mats, pidx, scale, offset, theta, grad, snaps):
    """:func:`adjoint_sweep` for programs with (non-invertible) channel rows (eq. N3).

    At a ``K_CHAN`` row the state is restored from the snapshot saved by
    :func:`run_forward_record` and the cotangent is mapped by the superoperator's adjoint.
    """
    s = snaps.shape[0]
    for g in range(kinds.size - 1, -1, -1):
        kind = kinds[g]
        if kind == K_CHAN or kind == K_CHAN2:
            s -= 1
            psi[:] = snaps[s]
            if kind == K_CHAN2:
                apply_chan2(lam, ints[g], mats, g, True)
            else:
                apply_op(lam, kind, ints[g], mats[g], 0.0, True)
            continue
        if kind == K_MATN:
            apply_matn(psi, ints[g], mats, g, True)
            apply_matn(lam, ints[g], mats, g, True)
            continue
        phi = _angle(g, pidx, scale, offset, theta)
        if pidx[g] >= 0:
            d = generator_inner(lam, psi, kind, ints[g]).real
            grad[pidx[g]] += scale[g] * d
        apply_op(psi, kind, ints[g], mats[g], phi, True)
        apply_op(lam, kind, ints[g], mats[g], phi, True)


@njit(cache=True)
def tangent_sweep(psi, dpsi, kinds, ints, mats, pidx, scale, offset, theta, dtheta):
    """Forward-mode sweep: psi <- U psi and dpsi <- U dpsi + (dphi_g) A_g U psi, gate by gate.

    ``dpsi`` starts as the tangent of the initial state (zeros for a fixed |0…0⟩).
    """
    for g in range(kinds.size):
        kind = kinds[g]
        if kind == K_CHAN2:
            apply_chan2(psi, ints[g], mats, g, False)
            apply_chan2(dpsi, ints[g], mats, g, False)
            continue
        if kind == K_MATN:
            apply_matn(psi, ints[g], mats, g, False)
            apply_matn(dpsi, ints[g], mats, g, False)
            continue
        phi = _angle(g, pidx, scale, offset, theta)
        row = ints[g]
        one = _is_rot1(kind, row)
        if one:  # one pass over (psi, dpsi), no generator sweep (eq. A8)
            t, c, s, sigma = _rot_cs(row, phi)
            f = 0.0 if pidx[g] < 0 else 0.5 * sigma * scale[g] * dtheta[pidx[g]]
            rot1_tan(psi, dpsi, one, t, c, s, f)
            continue
        if kind == K_X and row[2] != 0 and (row[2] & (row[2] - 1)) == 0:  # CNOT on both
            _cx1_pair(psi, dpsi, row[0], _log2(row[2]))
            continue
        apply_op(psi, kind, row, mats[g], phi, False)
        apply_op(dpsi, kind, row, mats[g], phi, False)
        if pidx[g] >= 0:
            dphi = scale[g] * dtheta[pidx[g]]
            if dphi != 0.0:
                add_generator(dpsi, psi, kind, row, dphi)


@njit(cache=True)
def adjoint_tangent_sweep(psi, lam, dpsi, dlam, kinds, ints, mats, pidx, scale, offset, theta,
                          dtheta, grad, dgrad):
    """Second order: the adjoint sweep and its tangent along (dtheta, dlam) (eq. H1–H2).

    On entry ``psi``/``dpsi`` are the final state and its tangent J·dtheta, ``lam``/``dlam`` the
    cotangent and its tangent. grad[k] += Re⟨lam_g, A psi_g⟩ as in :func:`adjoint_sweep`;
    dgrad[k] += Re⟨dlam_g, A psi_g⟩ + Re⟨lam_g, A dpsi_g⟩, with
    dpsi_{g-1} = U†(dpsi_g - dphi A psi_g) and dlam_{g-1} = U†(dlam_g - dphi A lam_g).
    """
    for g in range(kinds.size - 1, -1, -1):
        kind = kinds[g]
        if kind == K_MATN:
            apply_matn(psi, ints[g], mats, g, True)
            apply_matn(lam, ints[g], mats, g, True)
            apply_matn(dpsi, ints[g], mats, g, True)
            apply_matn(dlam, ints[g], mats, g, True)
            continue
        phi = _angle(g, pidx, scale, offset, theta)
        if pidx[g] >= 0:
            k = pidx[g]
            grad[k] += scale[g] * generator_inner(lam, psi, kind, ints[g]).real
            dgrad[k] += scale[g] * (generator_inner(dlam, psi, kind, ints[g]).real
                                    + generator_inner(lam, dpsi, kind, ints[g]).real)
            dphi = scale[g] * dtheta[k]
            if dphi != 0.0:
                add_generator(dpsi, psi, kind, ints[g], -dphi)
                add_generator(dlam, lam, kind, ints[g], -dphi)
        apply_op(psi, kind, ints[g], mats[g], phi, True)
        apply_op(lam, kind, ints[g], mats[g], phi, True)
        apply_op(dpsi, kind, ints[g], mats[g], phi, True)
        apply_op(dlam, kind, ints[g], mats[g], phi, True)


# ----------------------------------------------------------------------------- Pauli observables


@njit(cache=True)
def pauli_terms_expval(psi, xm, zm, ph):
    """Re Σ_k ⟨psi| ph_k P_k |psi⟩ with P_k = (xm[k], zm[k]) and ph_k = coeff_k i**ny_k."""
    total = 0.0
    for k in range(xm.size):
        x = xm[k]
        z = zm[k]
        acc = 0.0j
        if x == 0:
            r = 0.0
            for j in range(psi.size):
                a = psi[j].real * psi[j].real + psi[j].imag * psi[j].imag
                r += -a if _parity(j & z) else a
            acc = complex(r, 0.0)
        else:
            for j in range(psi.size):
                src = j ^ x
                t = np.conj(psi[j]) * psi[src]
                acc += -t if _parity(src & z) else t
        total += (ph[k] * acc).real
    return total


@njit(cache=True)
def apply_pauli_terms(psi, out, xm, zm, ph):
    """out <- Σ_k ph_k P_k psi (out is overwritten; never a dense matrix)."""
    for j in range(out.size):
        out[j] = 0.0
    for k in range(xm.size):
        x = xm[k]
        z = zm[k]
        f = ph[k]
        for j in range(psi.size):
            src = j ^ x
            v = f * psi[src]
            out[j] += -v if _parity(src & z) else v


# ----------------------------------------------------------------------------- fused observables
#
# A Hamiltonian's compiled form (``_model.CompiledObservable.fused``): the Z-type terms (xmask 0)
# summed into one real diagonal ``diag`` (length 2**n, built once by :func:`build_diag`), the
# others grouped by flip mask (group g: mask ``gx[g]``, terms ``gstart[g]:gstart[g+1]`` of
# ``(tz, tph)``). Then ⟨ψ|H|ψ⟩ and Hψ take one sweep for the diagonal and one per distinct flip
# mask (DERIVATIONS.md, eq. P2), not one per term. They are serial: a few passes next to the
# sweep's, and one fork-join per group cost more than they saved on a shared 2-core machine.


@njit(cache=True)
def build_diag(diag, zm, coef):
    """diag_j <- Σ_k coef_k (-1)**popcount(j & zm_k) (the Z-type part of a Hamiltonian)."""
    for j in range(diag.size):
        s = 0.0
        for k in range(zm.size):
            s += -coef[k] if _parity(j & zm[k]) else coef[k]
        diag[j] = s


@njit(cache=True, inline="always")
def _group_coef(src, lo, hi, tz, tph):
    c = 0.0j
    for k in range(lo, hi):
        c += -tph[k] if _parity(src & tz[k]) else tph[k]
    return c


@njit(cache=True, inline="always")
def _pure_x(lo, hi, tz):
    """Whether terms lo..hi-1 are X strings (no Z or Y: a constant, real coefficient)."""
    for k in range(lo, hi):
        if tz[k] != 0:
            return False
    return True


@njit(cache=True, fastmath=REDUCE_FLAGS)
def re_vdot(a, b):
    """Re Σ_j conj(a_j) b_j (vectorised; e.g. ⟨ψ|H|ψ⟩ from ψ and Hψ)."""
    re = 0.0
    for k in range(a.size):
        i = uint64(k)
        re += a[i].real * b[i].real + a[i].imag * b[i].imag
    return re


@njit(cache=True, fastmath=REDUCE_FLAGS)
def _x1_dot(psi, bit):
    """Σ over pairs (i, i + bit) of Re(conj(psi_i) psi_{i+bit}): ⟨ψ|X_b|ψ⟩ / 2 for a one-bit X,
    in unit-stride blocks with unsigned indices (vectorised; see the adjoint kernels)."""
    re = 0.0
    for base in range(0, psi.size, 2 * bit):
        for k in range(bit):
            i = uint64(base + k)
            j = uint64(base + k + bit)
            re += psi[i].real * psi[j].real + psi[i].imag * psi[j].imag
    return re


@njit(cache=True)
def _x1_axpy(psi, out, bit, c):
    """out <- out + c X_b psi for a one-bit X (unit-stride blocks, unsigned indices)."""
    for base in range(0, psi.size, 2 * bit):
        for k in range(bit):
            i = uint64(base + k)
            j = uint64(base + k + bit)
            out[i] += c * psi[j]
            out[j] += c * psi[i]


@njit(cache=True)
def fused_expval(psi, diag, gx, gstart, tz, tph):
    """Re ⟨psi|H|psi⟩ for a fused Hamiltonian (``diag.size == 0``: no Z-type terms)."""
    total = 0.0
    if diag.size:
        for j in range(psi.size):
            a = psi[j]
            total += diag[j] * (a.real * a.real + a.imag * a.imag)
    for g in range(gx.size):
        x = gx[g]
        lo = gstart[g]
        hi = gstart[g + 1]
        if _pure_x(lo, hi, tz):  # X strings only: a real constant, summed over pairs (j, j ^ x)
            c = 0.0
            for k in range(lo, hi):
                c += tph[k].real
            p = _log2(x & -x)
            re = 0.0
            if x == (1 << p):  # X on one wire: the vectorised blocked loop
                re = _x1_dot(psi, x)
            else:
                for k in range(psi.size >> 1):
                    j = _insert0(k, p)
                    a = psi[j]
                    b = psi[j ^ x]
                    re += a.real * b.real + a.imag * b.imag
            total += 2.0 * c * re
            continue
        for j in range(psi.size):
            src = j ^ x
            t = np.conj(psi[j]) * psi[src] * _group_coef(src, lo, hi, tz, tph)
            total += t.real
    return total


@njit(cache=True)
def fused_apply(psi, out, diag, gx, gstart, tz, tph):
    """out <- H psi for a fused Hamiltonian (out overwritten)."""
    if diag.size:
        for j in range(psi.size):
            out[j] = diag[j] * psi[j]
    else:
        for j in range(psi.size):
            out[j] = 0.0
    for g in range(gx.size):
        x = gx[g]
        lo = gstart[g]
        hi = gstart[g + 1]
        if _pure_x(lo, hi, tz):
            c = 0.0
            for k in range(lo, hi):
                c += tph[k].real
            p = _log2(x & -x)
            if x == (1 << p):
                _x1_axpy(psi, out, x, c)
                continue
            for k in range(psi.size >> 1):
                j = _insert0(k, p)
                j2 = j ^ x
                out[j] += c * psi[j2]
                out[j2] += c * psi[j]
            continue
        for j in range(psi.size):
            src = j ^ x
            out[j] += _group_coef(src, lo, hi, tz, tph) * psi[src]


@njit(cache=True)
def fused_axpy(psi, out, coef, diag, gx, gstart, tz, tph):
    """out <- out + coef · H psi for a fused Hamiltonian (no temporary state).

    The adjoint method's cotangent ``λ = 2 Σ_m ḡ_m H_m ψ`` (eq. A1) is built by one call per
    observable into one buffer.
    """
    if diag.size:
        for j in range(psi.size):
            out[j] += (coef * diag[j]) * psi[j]
    for g in range(gx.size):
        _axpy_group(psi, out, coef, gx[g], gstart[g], gstart[g + 1], tz, tph)


@njit(cache=True)
def _axpy_group(psi, out, coef, x, lo, hi, tz, tph):
    """out <- out + coef · (terms lo:hi of one flip-mask group x) ψ."""
    if _pure_x(lo, hi, tz):
        c = 0.0
        for k in range(lo, hi):
            c += tph[k].real
        c *= coef
        p = _log2(x & -x)
        if x == (1 << p):
            _x1_axpy(psi, out, x, c)
            return
        for k in range(psi.size >> 1):
            j = _insert0(k, p)
            j2 = j ^ x
            out[j] += c * psi[j2]
            out[j2] += c * psi[j]
        return
    for j in range(psi.size):
        src = j ^ x
        out[j] += (coef * _group_coef(src, lo, hi, tz, tph)) * psi[src]


@njit(cache=True)
def fused_axpy_tiled(psi, out, coef, diag, gx, gstart, tz, tph, tile):
    """:func:`fused_axpy` (serial) with the diagonal and the one-wire X groups taken block by
    block (cache blocking, as ``adjoint_sweep_tiled``): one pass over out for all of them (an X
    on a bit below log2(tile) pairs amplitudes within the block, one above it adds the partner
    block ψ[t ^ x:]), then one pass per remaining group."""
    for t in range(0, psi.size, tile):
        ps = psi[t:t + tile]
        po = out[t:t + tile]
        if diag.size:
            for k in range(tile):
                i = uint64(k)
                po[i] += (coef * diag[t + k]) * ps[i]
        for g in range(gx.size):
            x = gx[g]
            if (x & (x - 1)) == 0 and _pure_x(gstart[g], gstart[g + 1], tz):
                c = 0.0
                for k in range(gstart[g], gstart[g + 1]):
                    c += tph[k].real
                if x < tile:
                    _x1_axpy(ps, po, x, coef * c)
                else:  # the partner block ψ[t ^ x : (t ^ x) + tile], the out block in cache
                    src = psi[t ^ x:(t ^ x) + tile]
                    for k in range(tile):
                        i = uint64(k)
                        po[i] += (coef * c) * src[i]
    for g in range(gx.size):
        x = gx[g]
        if (x & (x - 1)) == 0 and _pure_x(gstart[g], gstart[g + 1], tz):
            continue  # done block by block above
        _axpy_group(psi, out, coef, x, gstart[g], gstart[g + 1], tz, tph)


# ----------------------------------------------------------------------------- value and gradient
#
# One compiled call each for the two halves of a value and gradient of one observable (eq. A9,
# A11) on a small state, where each kernel call costs ≈ 1 µs of argument handling: the forward
# rule's ψ, Hψ and ⟨H⟩, and the backward rule's split copies and sweep. ``work`` is the
# (3, 2**n) block of the three state vectors (ψ, Hψ, scratch).


@njit(cache=True)
def forward_hpsi(work, kinds, ints, mats, pidx, scale, offset, theta, diag, gx, gstart, tz, tph):
    """work[0] <- ψ(θ) from |0…0⟩, work[1] <- Hψ; returns ⟨ψ|H|ψ⟩ = Re⟨ψ, Hψ⟩."""
    psi = work[0]
    hpsi = work[1]
    psi[:] = 0.0
    psi[0] = 1.0
    hpsi[:] = 0.0
    run_forward(psi, kinds, ints, mats, pidx, scale, offset, theta)
    fused_axpy(psi, hpsi, 1.0, diag, gx, gstart, tz, tph)
    return re_vdot(psi, hpsi)


@njit(cache=True)
def adjoint_hpsi_soa(work, kinds, ints, mats, pidx, scale, offset, theta, grad, factor):
    """grad <- factor · Re(J^H Hψ) for ψ = work[0], Hψ = work[1] by the split-complex sweep
    (:func:`adjoint_sweep_soa`): Hψ split into work[2], then ψ into work[1]."""
    lam = work[2].view(np.float64)
    p = work[1].view(np.float64)
    split_complex(work[1], lam)
    split_complex(work[0], p)
    adjoint_sweep_soa(p, lam, kinds, ints, mats, pidx, scale, offset, theta, grad)
    for k in range(grad.size):
        grad[k] *= factor
