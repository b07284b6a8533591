"""The kernels bound as differentiable primitives of diffsci (``ds.custom_vjp``).

Three primitives, composed by ``quantum._measure``:

- :func:`state_p` ``θ -> ψ(θ)``: the forward kernel; its VJP is the adjoint sweep
  (``DERIVATIONS.md`` eq. A3), itself a primitive (:func:`_state_vjp_p`) whose VJP is the tangent
  sweep (eq. A5), so forward mode (``ds.jvp``, ``ds.jacfwd``) works through the custom_vjp too.
- :func:`pauli_p` ``ψ -> ⟨ψ|H_m|ψ⟩`` (or ``‖H_m ψ‖²``) for a list of Pauli-sum observables; VJP
  ``ψ̄ = 2 Σ_m ḡ_m H_m ψ`` (eq. A1), ``4 ... `` for the square (eq. A6).
- :func:`shift_expval_p` ``θ -> ⟨H_m⟩`` with parameter-shift gradients (eq. S1–S2).

So ``expval = pauli_p ∘ state_p``: one forward pass, one ``H ψ``, one backward sweep over two state
vectors: the adjoint method (Jones & Gacon 2020). Plain NumPy arrays go in and out of the kernels;
the ``device`` of a call selects CPU (``quantum._kernels``) or CUDA (``quantum._cuda``) kernels.
"""

from __future__ import annotations

import numpy as np

import diffsci as ds

from . import _kernels as K
from ._model import Program


class Static:
    """An opaque, non-differentiable bundle passed through ``custom_vjp`` (a pytree leaf)."""

    __slots__ = ("program", "obs", "device", "square")

    def __init__(self, program: Program, obs=None, device: str = "cpu", square: bool = False):
        self.program = program
        self.obs = obs
        self.device = device
        self.square = square


# ---------------------------------------------------------------------------- plain backends


def _zero_states(n_qubits: int, batch: tuple[int, ...]) -> np.ndarray:
    psi = np.zeros(batch + (1 << n_qubits,), np.complex128)
    psi[..., 0] = 1.0
    return psi


def forward_states(program: Program, theta: np.ndarray, device: str = "cpu") -> np.ndarray:
    """ψ(θ) from |0…0⟩; θ of shape (P,) or (B, P) gives (2**n,) or (B, 2**n)."""
    if device == "cuda":
        from . import _cuda

        return _cuda.forward_states(program, theta)
    psi = _zero_states(program.n_qubits, theta.shape[:-1])
    if theta.ndim == 1:
        K.run_forward(psi, *program.arrays, theta)
    else:
        K.run_forward_batch(psi, *program.arrays, theta)
    return psi


def adjoint_vjp(program: Program, theta: np.ndarray, psi: np.ndarray, psibar: np.ndarray,
                device: str = "cpu") -> np.ndarray:
    """θ̄ = Re(J^H ψ̄) by one backward sweep; ``psi`` is the final state (not modified)."""
    if device == "cuda":
        from . import _cuda

        return _cuda.adjoint_vjp(program, theta, psi, psibar)
    grad = np.zeros(theta.shape, np.float64)
    p = np.array(psi, np.complex128, copy=True)
    lam = np.array(psibar, np.complex128, copy=True)
    n_chan = int(np.count_nonzero(program.kinds == K.K_CHAN))
    if n_chan:  # density-matrix program: replay the forward pass saving a state per channel
        for b in np.ndindex(theta.shape[:-1]):
            snaps = np.empty((n_chan, psi.shape[-1]), np.complex128)
            rec = _zero_states(program.n_qubits, ())
            K.run_forward_record(rec, *program.arrays, theta[b], snaps)
            K.adjoint_sweep_mixed(p[b], lam[b], *program.arrays, theta[b], grad[b], snaps)
    elif theta.ndim == 1:
        K.adjoint_sweep(p, lam, *program.arrays, theta, grad)
    else:
        K.adjoint_sweep_batch(p, lam, *program.arrays, theta, grad)
    return grad


def tangent_jvp(program: Program, theta: np.ndarray, dtheta: np.ndarray) -> np.ndarray:
    """ψ̇ = J θ̇ by one forward tangent sweep (two state vectors)."""
    psi = _zero_states(program.n_qubits, theta.shape[:-1])
    dpsi = np.zeros_like(psi)
    if theta.ndim == 1:
        K.tangent_sweep(psi, dpsi, *program.arrays, theta, dtheta)
    else:
        for b in np.ndindex(theta.shape[:-1]):
            K.tangent_sweep(psi[b], dpsi[b], *program.arrays, theta[b], dtheta[b])
    return dpsi


def apply_observables(obs, psi: np.ndarray) -> np.ndarray:
    """``H_m ψ`` for every observable: shape ``psi.shape[:-1] + (M, 2**n)``."""
    out = np.empty(psi.shape[:-1] + (len(obs),) + psi.shape[-1:], np.complex128)
    for b in np.ndindex(psi.shape[:-1]):
        for m, (xm, zm, ph) in enumerate(obs):
            K.apply_pauli_terms(psi[b], out[b + (m,)], xm, zm, ph)
    return out


def observables_values(obs, psi: np.ndarray, square: bool = False) -> np.ndarray:
    """``⟨ψ|H_m|ψ⟩`` (or ``‖H_m ψ‖²``): shape ``psi.shape[:-1] + (M,)``."""
    out = np.empty(psi.shape[:-1] + (len(obs),), np.float64)
    if square:
        hpsi = apply_observables(obs, psi)
        return np.sum(hpsi.real**2 + hpsi.imag**2, axis=-1)
    for b in np.ndindex(psi.shape[:-1]):
        for m, (xm, zm, ph) in enumerate(obs):
            out[b + (m,)] = K.pauli_terms_expval(psi[b], xm, zm, ph)
    return out


# ---------------------------------------------------------------------------- state primitive


@ds.custom_vjp
def state_p(theta, static: Static):
    """ψ(θ) = U(θ)|0…0⟩ as a differentiable primitive (complex output)."""
    return forward_states(static.program, theta, static.device)


def _state_fwd(theta, static):
    psi = forward_states(static.program, theta, static.device)
    return psi, (theta, psi, static)


def _state_bwd(res, psibar):
    theta, psi, static = res
    inner = Static((static.program, theta, psi), device=static.device)
    return _state_vjp_p(psibar, inner), None


state_p.defvjp(_state_fwd, _state_bwd)


@ds.custom_vjp
def _state_vjp_p(psibar, static: Static):
    """θ̄ = Re(J^H ψ̄): linear in ψ̄; a primitive so that its own VJP (J θ̇) gives forward mode."""
    program, theta, psi = static.program
    return adjoint_vjp(program, theta, psi, np.asarray(psibar, np.complex128), static.device)


def _state_vjp_fwd(psibar, static):
    return _state_vjp_p(psibar, static), static


def _state_vjp_bwd(static, tbar):
    program, theta, _ = static.program
    return tangent_jvp(program, theta, np.asarray(tbar, np.float64)), None


_state_vjp_p.defvjp(_state_vjp_fwd, _state_vjp_bwd)


# ---------------------------------------------------------------------------- observables


@ds.custom_vjp
def pauli_p(psi, static: Static):
    """``[⟨ψ|H_m|ψ⟩]_m`` (``static.square``: ``[‖H_m ψ‖²]_m``), shape ``psi.shape[:-1] + (M,)``."""
    return observables_values(static.obs, psi, static.square)


def _pauli_fwd(psi, static):
    return observables_values(static.obs, psi, static.square), (psi, static)


def _pauli_bwd(res, g):
    psi, static = res
    hpsi = apply_observables(static.obs, psi)  # (..., M, dim), plain
    if static.square:  # d‖Hψ‖² -> ψ̄ = 2 H(Hψ)
        hpsi = np.stack([apply_observables([o], hpsi[..., m, :])[..., 0, :]
                         for m, o in enumerate(static.obs)], axis=-2)
    # ψ̄ = 2 Σ_m g_m H_m ψ; written with NumPy calls so a traced g (forward mode) works.
    return 2.0 * np.sum(g[..., None] * hpsi, axis=-2), None


pauli_p.defvjp(_pauli_fwd, _pauli_bwd)


# ---------------------------------------------------------------------------- parameter shift

#: Two-term rule for generators with eigenvalue gap 1 (RX ... PhaseShift): (shift, coefficient).
SHIFT_TWO_TERM = ((np.pi / 2, 0.5),)
#: Four-term rule for controlled rotations (generator eigenvalues 0, ±1/2); Anselmetti et al.,
#: New J. Phys. 23, 113010 (2021), eq. (16).
SHIFT_FOUR_TERM = (
    (np.pi / 2, (np.sqrt(2) + 1) / (4 * np.sqrt(2))),
    (3 * np.pi / 2, -(np.sqrt(2) - 1) / (4 * np.sqrt(2))),
)


def shift_jacobian(program: Program, theta: np.ndarray, obs) -> np.ndarray:
    """d⟨H_m⟩/dθ_k by parameter shift for one θ (P,): shape (P, M); 2 or 4 circuits per angle."""
    jac = np.zeros((theta.size, len(obs)))
    for g in np.flatnonzero(program.pidx >= 0):
        controlled = program.kinds[g] == K.K_ROT and program.ints[g, 2] != 0
        rule = SHIFT_FOUR_TERM if controlled else SHIFT_TWO_TERM
        d = 0.0
        for shift, coef in rule:
            vals = []
            for sgn in (1.0, -1.0):
                off = program.offset.copy()
                off[g] += sgn * shift
                psi = forward_states(program.with_offsets(off), theta)
                vals.append(observables_values(obs, psi))
            d = d + coef * (vals[0] - vals[1])
        jac[program.pidx[g]] += program.scale[g] * d
    return jac


@ds.custom_vjp
def shift_expval_p(theta, static: Static):
    """``[⟨H_m⟩]_m`` with parameter-shift gradients (for checking, hardware-style workflows)."""
    return observables_values(static.obs, forward_states(static.program, theta, static.device))


def _shift_fwd(theta, static):
    return shift_expval_p(theta, static), (theta, static)


def _shift_bwd(res, g):
    theta, static = res
    rows = []
    for b in np.ndindex(theta.shape[:-1]):
        jac = shift_jacobian(static.program, theta[b], static.obs)  # (P, M), plain
        rows.append(np.sum(jac * g[b][None, :], axis=-1))
    out = rows[0] if theta.ndim == 1 else np.stack(rows).reshape(theta.shape)
    return out, None


shift_expval_p.defvjp(_shift_fwd, _shift_bwd)
