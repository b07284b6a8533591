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

import numba
import numpy as np

import diffsci as ds
from diffsci.extend import is_tracer

from . import _kernels as K
from ._model import Program


class Static:
    """An opaque, non-differentiable bundle passed through ``custom_vjp`` (a pytree leaf)."""

    __slots__ = ("program", "obs", "device", "square", "theta_traced", "single", "fresh")

    def __init__(self, program: Program, obs=None, device: str = "cpu", square: bool = False,
                 theta_traced: bool = False, single: bool = False):
        self.program = program
        self.obs = obs
        self.device = device
        self.square = square
        self.theta_traced = theta_traced  # θ is traced: second order needs θ's cotangent
        self.single = single  # expval_p: one observable, its axis dropped from the output
        self.fresh = False  # expval_p's residual: its saved Hψ is not swept yet (eq. A9)


# ---------------------------------------------------------------------------- plain backends


def _zero_states(n_qubits: int, batch: tuple[int, ...]) -> np.ndarray:
    psi = np.zeros(batch + (1 << n_qubits,), np.complex128)
    psi[..., 0] = 1.0
    return psi


def _no_matn_on_cuda(program: Program) -> None:
    if np.any(program.kinds == K.K_MATN):
        raise NotImplementedError("quantum: a QubitUnitary on more than two wires runs on "
                                  "device='cpu' only (no CUDA kernel yet).")


def forward_states(program: Program, theta: np.ndarray, device: str = "cpu",
                   out: np.ndarray | None = None) -> np.ndarray:
    """ψ(θ) from |0…0⟩; θ of shape (P,) or (B, P) gives (2**n,) or (B, 2**n) (into ``out``, a
    complex128 buffer of that shape, if given; CPU only)."""
    if device == "cuda":
        from . import _cuda

        _no_matn_on_cuda(program)
        return _cuda.forward_states(program, theta)
    if out is None:
        psi = _zero_states(program.n_qubits, theta.shape[:-1])
    else:
        psi = out
        psi[...] = 0.0
        psi[..., 0] = 1.0
    if theta.ndim == 1 and _par(psi.shape[-1]):
        K.run_forward_split(psi, *program.arrays, theta, program.top_rows)
    elif theta.ndim == 1:
        K.run_forward(psi, *program.arrays, theta)
    else:
        K.run_forward_batch(psi, *program.arrays, theta)
    return psi


def adjoint_vjp(program: Program, theta: np.ndarray, psi: np.ndarray, psibar: np.ndarray,
                device: str = "cpu", *, own_psibar: bool = False,
                scratch: np.ndarray | None = None) -> np.ndarray:
    """θ̄ = Re(J^H ψ̄) by one backward sweep; ``psi`` is the final state (not modified).

    ``own_psibar``: ψ̄ is a scratch complex128 buffer of the caller's, overwritten by the sweep
    (saves a copy: one state vector less at the peak). ``scratch``: a complex128 buffer shaped
    as ``psi`` for the swept copy of ψ (else a new one).
    """
    if device == "cuda":
        from . import _cuda

        _no_matn_on_cuda(program)
        return _cuda.adjoint_vjp(program, theta, psi, psibar)
    grad = np.zeros(theta.shape, np.float64)
    program = program.adjoint  # the sweep's fused row order (eq. A10)
    dim = psi.shape[-1]
    if theta.ndim == 1 and program.soa_ok:
        # split-complex sweep (eq. A11): λ split into the scratch buffer, then ψ into λ's own
        # buffer when the caller gave it up: no more state vectors than the complex sweep.
        lam = np.empty(2 * dim) if scratch is None else scratch.view(np.float64)
        K.split_complex(psibar, lam)
        p = psibar.view(np.float64) if own_psibar else np.empty(2 * dim)
        K.split_complex(psi, p)
        if _par(dim):  # two threads on the halves (eq. T1)
            tiled = dim >= 2 * K.TILE_MIN_AMPS  # each half blocked once it leaves the cache
            K.adjoint_sweep_soa_split(p, lam, *program.arrays, theta, grad, program.top_rows,
                                      program.low_rows(K.TILE_BITS),
                                      1 << K.TILE_BITS if tiled else dim)
        elif dim >= K.TILE_MIN_AMPS:
            K.adjoint_sweep_soa_tiled(p, lam, *program.arrays, theta, grad,
                                      program.low_rows(K.TILE_BITS), 1 << K.TILE_BITS)
        else:
            K.adjoint_sweep_soa(p, lam, *program.arrays, theta, grad)
        return grad
    if scratch is None:
        p = np.array(psi, np.complex128, copy=True)
    else:
        p = scratch
        p[...] = psi
    lam = psibar if own_psibar else np.array(psibar, np.complex128, copy=True)
    n_chan = program.n_channels
    if n_chan:  # density-matrix program: replay the forward pass saving a state per channel
        for b in np.ndindex(theta.shape[:-1]):
            snaps = np.empty((n_chan, psi.shape[-1]), np.complex128)
            rec = _zero_states(program.n_qubits, ())
            K.run_forward_record(rec, *program.arrays, theta[b], snaps)
            K.adjoint_sweep_mixed(p[b], lam[b], *program.arrays, theta[b], grad[b], snaps)
    elif theta.ndim == 1 and _par(psi.shape[-1]):
        K.adjoint_sweep_split(p, lam, *program.arrays, theta, grad, program.top_rows)
    elif theta.ndim == 1 and psi.shape[-1] >= K.TILE_MIN_AMPS:
        K.adjoint_sweep_tiled(p, lam, *program.arrays, theta, grad,
                              program.low_rows(K.TILE_BITS), 1 << K.TILE_BITS)
    elif theta.ndim == 1:
        K.adjoint_sweep(p, lam, *program.arrays, theta, grad)
    else:
        K.adjoint_sweep_batch(p, lam, *program.arrays, theta, grad)
    return grad


def tangent_jvp(program: Program, theta: np.ndarray, dtheta: np.ndarray, *,
                with_state: bool = False):
    """ψ̇ = J θ̇ by one forward tangent sweep (two state vectors); ``with_state``: also ψ."""
    psi = _zero_states(program.n_qubits, theta.shape[:-1])
    dpsi = np.zeros_like(psi)
    if theta.ndim == 1 and _par(psi.shape[-1]):
        K.tangent_sweep_split(psi, dpsi, *program.arrays, theta, dtheta, program.top_rows)
    elif theta.ndim == 1:
        K.tangent_sweep(psi, dpsi, *program.arrays, theta, dtheta)
    else:
        for b in np.ndindex(theta.shape[:-1]):
            K.tangent_sweep(psi[b], dpsi[b], *program.arrays, theta[b], dtheta[b])
    return (psi, dpsi) if with_state else dpsi


def adjoint_tangent(program: Program, theta, psibar, dtheta, dpsibar):
    """``(θ̄, θ̄̇)``: the VJP θ̄ = Re(J^H ψ̄) and its directional derivative along (θ̇, ψ̄̇).

    One tangent sweep (ψ, J θ̇), then one backward sweep over four state vectors (eq. H1–H2).

    Raises:
        NotImplementedError: a program with noise channels (no second derivatives there).
    """
    if np.any((program.kinds == K.K_CHAN) | (program.kinds == K.K_CHAN2)):
        raise NotImplementedError("quantum: second derivatives of circuits with noise channels "
                                  "are not supported; differentiate once.")
    psi, dpsi = tangent_jvp(program, theta, dtheta, with_state=True)
    lam = np.array(psibar, np.complex128, copy=True)
    dlam = np.array(np.broadcast_to(dpsibar, lam.shape), np.complex128, copy=True)
    grad = np.zeros(theta.shape)
    dgrad = np.zeros(theta.shape)
    for b in np.ndindex(theta.shape[:-1]):
        K.adjoint_tangent_sweep(psi[b], lam[b], dpsi[b], dlam[b], *program.arrays, theta[b],
                                dtheta[b], grad[b], dgrad[b])
    return grad, dgrad


def _par(dim: int) -> bool:
    """Multi-threaded kernels for a state of ``dim`` amplitudes (K.PAR_MIN_AMPS, >1 thread)?

    Sweeps then run split in halves (``K.*_split``: the serial fused kernels on two threads)."""
    return dim >= K.PAR_MIN_AMPS and numba.get_num_threads() > 1


def apply_observables(obs, psi: np.ndarray) -> np.ndarray:
    """``H_m ψ`` for every observable: shape ``psi.shape[:-1] + (M, 2**n)``.

    One sweep for the diagonal part and one per distinct flip mask (fused form, eq. P2).
    """
    out = np.empty(psi.shape[:-1] + (len(obs),) + psi.shape[-1:], np.complex128)
    kernel = K.fused_apply
    for b in np.ndindex(psi.shape[:-1]):
        for m, o in enumerate(obs):
            kernel(psi[b], out[b + (m,)], *o.fused)
    return out


def observables_cotangent(obs, psi: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``ψ̄ = 2 Σ_m g_m H_m ψ`` (eq. A1) into one new buffer, without a ``H_m ψ`` temporary."""
    return _axpy_obs(obs, psi, np.zeros(psi.shape, np.complex128), g)


def _axpy_obs(obs, psi: np.ndarray, out: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``out += 2 Σ_m g_m H_m ψ``; returns ``out``."""
    kernel = K.fused_axpy
    if psi.ndim == 1 and psi.size >= K.TILE_MIN_AMPS:
        for m, o in enumerate(obs):  # cache-blocked: two states no longer fit in cache
            K.fused_axpy_tiled(psi, out, 2.0 * float(g[m]), *o.fused, 1 << K.TILE_BITS)
        return out
    if psi.ndim == 1:  # the common case, without np.ndindex's overhead (small circuits)
        for m, o in enumerate(obs):
            kernel(psi, out, 2.0 * float(g[m]), *o.fused)
        return out
    for b in np.ndindex(psi.shape[:-1]):
        for m, o in enumerate(obs):
            kernel(psi[b], out[b], 2.0 * float(g[b + (m,)]), *o.fused)
    return out


def observables_values(obs, psi: np.ndarray, square: bool = False) -> np.ndarray:
    """``⟨ψ|H_m|ψ⟩`` (or ``‖H_m ψ‖²``): shape ``psi.shape[:-1] + (M,)``."""
    out = np.empty(psi.shape[:-1] + (len(obs),), np.float64)
    if square:
        hpsi = apply_observables(obs, psi)
        return np.sum(hpsi.real**2 + hpsi.imag**2, axis=-1)
    kernel = K.fused_expval
    if psi.ndim == 1:
        for m, o in enumerate(obs):
            out[m] = kernel(psi, *o.fused)
        return out
    for b in np.ndindex(psi.shape[:-1]):
        for m, o in enumerate(obs):
            out[b + (m,)] = kernel(psi[b], *o.fused)
    return out


# ---------------------------------------------------------------------------- state primitive
#
# Second derivatives: the VJP primitive takes θ as an argument; its JVP (forward over reverse) and
# its θ-cotangent (reverse over reverse) are the second-order sweep (H1). Rules call primitives,
# never kernels, on values that may be traced.


def _plain(x) -> bool:
    return isinstance(x, np.ndarray | np.generic | float | int | complex)


@ds.custom_vjp
def state_p(theta, static: Static):
    """ψ(θ) = U(θ)|0…0⟩ as a differentiable primitive (complex output)."""
    return forward_states(static.program, theta, static.device)


def _state_fwd(theta, static):
    psi = state_p(theta, static)  # plain at first order; a forward-mode dual when nested
    return psi, (theta, psi, static)


def _state_bwd(res, psibar):
    theta, psi, static = res
    # Only a traced θ (second order) needs θ's cotangent in the VJP's own VJP: it costs a
    # second-order sweep, and noisy circuits have none.
    vjp_static = Static((static.program, psi), device=static.device,
                        theta_traced=is_tracer(theta))
    return _state_vjp_p(psibar, theta, vjp_static), None


state_p.defvjp(_state_fwd, _state_bwd)


@ds.custom_vjp
def _state_vjp_p(psibar, theta, static: Static):
    """θ̄ = Re(J(θ)^H ψ̄): linear in ψ̄; its VJP is the tangent sweep, its JVP the second-order one."""
    program, psi = static.program
    if not _plain(psi):  # the cached final state is traced at an outer level: recompute it
        psi = forward_states(program, theta, static.device)
    return adjoint_vjp(program, theta, psi, np.asarray(psibar, np.complex128), static.device)


def _state_vjp_fwd(psibar, theta, static):
    return _state_vjp_p(psibar, theta, static), (psibar, theta, static)


def _state_vjp_bwd(res, tbar):
    psibar, theta, static = res
    program = static.program[0]
    if not (_plain(tbar) and _plain(theta) and _plain(psibar)):
        raise NotImplementedError("quantum: reverse mode over forward mode through expval/state "
                                  "(e.g. ds.grad of a ds.jvp) and derivatives of order three "
                                  "are not supported; for second derivatives use ds.hessian.")
    # θ̄ = Re(J(θ)ᴴψ̄) depends on θ too: its θ-cotangent Σ_k t̄_k ∂_θ Re⟨∂_kψ, ψ̄⟩ is the
    # directional derivative of θ̄ along t̄ (the matrix Re⟨∂_j∂_kψ, ψ̄⟩ is symmetric, eq. H2),
    # which second derivatives by reverse over reverse need.
    tbar = np.asarray(tbar, np.float64)
    theta_bar = None
    if static.theta_traced:
        theta_bar = adjoint_tangent(program, theta, psibar, tbar, 0.0)[1]
    return tangent_jvp(program, theta, tbar), theta_bar, None


def _state_vjp_jvp(primals, tangents):
    psibar, theta, static = primals
    dpsibar, dtheta, _ = tangents
    if not (_plain(psibar) and _plain(theta)):
        raise NotImplementedError("quantum: derivatives of order three and higher (or reverse "
                                  "over forward over reverse) of expval/state are not supported.")
    dtheta = np.zeros(np.shape(theta)) if dtheta is None else np.asarray(dtheta, np.float64)
    dpsibar = 0.0 if dpsibar is None else dpsibar
    return adjoint_tangent(static.program[0], theta, psibar, dtheta, dpsibar)


_state_vjp_p.defvjp(_state_vjp_fwd, _state_vjp_bwd)
_state_vjp_p.defjvp(_state_vjp_jvp)


# ---------------------------------------------------------------------------- initial states
#
# ψ(θ, ψ₀) = U(θ) ψ₀ (eq. A12): linear in ψ₀, so ψ̄₀ = U(θ)† ψ̄, which is the λ the adjoint sweep
# leaves on exit (eq. A4); θ̄ is the same sweep's gradient (the sweep never reads ψ₀). The tangent
# is ψ̇ = U ψ̇₀ + J θ̇: the tangent sweep (A5) started from (ψ₀, ψ̇₀) instead of (|0…0⟩, 0).


def forward_from(program: Program, theta: np.ndarray, psi0: np.ndarray) -> np.ndarray:
    """U(θ) ψ₀ for ψ₀ of shape theta.shape[:-1] + (2**n,) (CPU)."""
    psi = np.array(psi0, np.complex128, copy=True)
    if theta.ndim == 1 and _par(psi.shape[-1]):
        K.run_forward_split(psi, *program.arrays, theta, program.top_rows)
    elif theta.ndim == 1:
        K.run_forward(psi, *program.arrays, theta)
    else:
        K.run_forward_batch(psi, *program.arrays, theta)
    return psi


@ds.custom_vjp
def state_from_p(theta, psi0, static: Static):
    """U(θ) ψ₀, differentiable in θ and in the initial state ψ₀ (eq. A12)."""
    return forward_from(static.program, theta, psi0)


def _state_from_fwd(theta, psi0, static):
    psi = state_from_p(theta, psi0, static)
    return psi, (theta, psi, static, np.iscomplexobj(ds.extend.getval(psi0)))


def _state_from_bwd(res, psibar):
    theta, psi, static, complex_psi0 = res
    if not (_plain(theta) and _plain(psi) and _plain(psibar)):
        raise NotImplementedError("quantum: second derivatives through initial_state are not "
                                  "supported; differentiate once (reverse or forward mode).")
    p = np.array(psi, np.complex128, copy=True)
    lam = np.array(np.broadcast_to(psibar, p.shape), np.complex128, copy=True)
    grad = np.zeros(theta.shape)
    program = static.program
    if theta.ndim == 1:
        K.adjoint_sweep(p, lam, *program.arrays, theta, grad)
    else:
        K.adjoint_sweep_batch(p, lam, *program.arrays, theta, grad)
    return grad, lam if complex_psi0 else lam.real, None  # a real ψ₀: the real part


def _state_from_jvp(primals, tangents):
    theta, psi0, static = primals
    dtheta, dpsi0 = tangents[0], tangents[1]
    program = static.program
    psi = np.array(psi0, np.complex128, copy=True)
    dpsi = np.zeros_like(psi) if dpsi0 is None else np.array(
        np.broadcast_to(dpsi0, psi.shape), np.complex128, copy=True)
    dth = np.zeros(theta.shape) if dtheta is None else np.asarray(dtheta, np.float64)
    for b in np.ndindex(theta.shape[:-1]):
        K.tangent_sweep(psi[b], dpsi[b], *program.arrays, theta[b], dth[b])
    return psi, dpsi


state_from_p.defvjp(_state_from_fwd, _state_from_bwd)
state_from_p.defjvp(_state_from_jvp)


# ---------------------------------------------------------------------------- observables


@ds.custom_vjp
def _apply_obs_p(psi, static: Static):
    """``[H_m ψ]_m``, shape ``psi.shape[:-1] + (M, dim)``: linear and self-adjoint per m."""
    return apply_observables(static.obs, psi)


def _apply_obs_fwd(psi, static):
    return _apply_obs_p(psi, static), static


def _apply_obs_bwd(static, g):  # ψ̄ = Σ_m H_m ḡ_m (H_m Hermitian); primitive calls: g may be traced
    parts = [_apply_obs_p(g[..., m, :], Static(None, [o]))[..., 0, :]
             for m, o in enumerate(static.obs)]
    return sum(parts[1:], parts[0]), None


def _apply_obs_jvp(primals, tangents):
    psi, static = primals
    out = _apply_obs_p(psi, static)
    return out, None if tangents[0] is None else _apply_obs_p(tangents[0], static)


_apply_obs_p.defvjp(_apply_obs_fwd, _apply_obs_bwd)
_apply_obs_p.defjvp(_apply_obs_jvp)


@ds.custom_vjp
def pauli_p(psi, static: Static):
    """``[⟨ψ|H_m|ψ⟩]_m`` (``static.square``: ``[‖H_m ψ‖²]_m``), shape ``psi.shape[:-1] + (M,)``."""
    return observables_values(static.obs, psi, static.square)


def _pauli_fwd(psi, static):
    return pauli_p(psi, static), (psi, static)


def _pauli_bwd(res, g):
    psi, static = res
    hpsi = _apply_obs_p(psi, Static(None, static.obs))  # (..., M, dim)
    if static.square:  # d‖Hψ‖² -> ψ̄ = 2 H(Hψ)
        hpsi = np.stack([_apply_obs_p(hpsi[..., m, :], Static(None, [o]))[..., 0, :]
                         for m, o in enumerate(static.obs)], axis=-2)
    # ψ̄ = 2 Σ_m g_m H_m ψ; written with NumPy calls so traced g or ψ (nesting) work.
    return 2.0 * np.sum(g[..., None] * hpsi, axis=-2), None


pauli_p.defvjp(_pauli_fwd, _pauli_bwd)


# ---------------------------------------------------------------------------- fused expval
#
# ``expval_p = pauli_p ∘ state_p`` as one primitive, for θ traced by one level of differentiation
# (``ds.grad``, ``ds.value_and_grad``, ``ds.jvp``, ``ds.jacobian``: the common case). Its backward
# rule builds λ = 2 Σ_m ḡ_m H_m ψ in one buffer (``fused_axpy``) and sweeps it in place (with one
# observable the forward rule already made Hψ, eq. A9), so one value and gradient holds three
# state vectors at the peak (ψ saved by the forward pass, its copy swept back, λ) and records one
# tape entry instead of four. Nested differentiation (hessian) goes through the composed
# primitives above, which carry the second-order rules.


@ds.custom_vjp
def expval_p(theta, static: Static):
    """``[⟨ψ(θ)|H_m|ψ(θ)⟩]_m``, shape ``theta.shape[:-1] + (M,)`` (``static.single``: without the
    M axis), by the adjoint method."""
    psi = forward_states(static.program, theta, static.device)
    return _drop_m(observables_values(static.obs, psi), static)


def _drop_m(values, static):
    return values[..., 0] if static.single else values


def _one_call(theta, dim: int) -> bool:
    """Whether a one-observable value and gradient runs each half as one kernel call (one θ, a
    state below the cache-blocked and split sizes)."""
    return theta.ndim == 1 and dim < K.TILE_MIN_AMPS and not _par(dim)


def _hpsi_seeded(static) -> bool:
    """Whether expval_p's forward rule keeps Hψ as the sweep's seed (one observable, CPU)."""
    return len(static.obs) == 1 and static.device == "cpu"


def _expval_fwd(theta, static):
    if not _hpsi_seeded(static):
        psi = forward_states(static.program, theta, static.device)
        return _drop_m(observables_values(static.obs, psi), static), (theta, psi, static)
    # One observable (eq. A9): H ψ once, the value Re⟨ψ, Hψ⟩ from it, and H ψ kept as the
    # backward sweep's seed (scaled by 2ḡ afterwards): no separate ⟨H⟩ pass. The three state
    # vectors of a value and gradient (ψ, Hψ, ψ's swept copy) are one allocation: three separate
    # ones, freed together, are returned to the OS by glibc's heap trimming and fault back in
    # page by page on the next call (measured ≈ 1.4 ms of 11 ms at 16 qubits).
    dim = 1 << static.program.n_qubits
    work = np.empty((3,) + theta.shape[:-1] + (dim,), np.complex128)
    if _one_call(theta, dim):
        values = np.array([K.forward_hpsi(work, *static.program.arrays, theta,
                                          *static.obs[0].fused)])
    else:
        psi = forward_states(static.program, theta, out=work[0])
        work[1] = 0.0
        values = _hpsi_values(static.obs, psi, work[1])
    res_static = Static(static.program, static.obs, single=static.single)
    res_static.fresh = True
    return _drop_m(values, static), (theta, work, res_static)


def _hpsi_values(obs, psi, hpsi):
    """hpsi <- hpsi + H ψ (one observable; hpsi zero on entry); returns ⟨ψ|H|ψ⟩ = Re⟨ψ, Hψ⟩
    shaped (..., 1)."""
    if psi.ndim == 1:  # the common case, without np.ndindex's overhead (small circuits)
        _axpy_obs(obs, psi, hpsi, _HALF)
        return np.array([K.re_vdot(psi, hpsi)])
    _axpy_obs(obs, psi, hpsi, np.full(psi.shape[:-1] + (1,), 0.5))
    values = np.empty(psi.shape[:-1] + (1,), np.float64)
    for b in np.ndindex(psi.shape[:-1]):
        values[b + (0,)] = K.re_vdot(psi[b], hpsi[b])
    return values


_HALF = np.array([0.5])  # ψ̄ = 2ḡHψ at ḡ = 1/2: Hψ


def _expval_bwd(res, g):
    theta, work, static = res
    seeded = _hpsi_seeded(static)
    psi = work[0] if seeded else work  # several observables: the residual is ψ itself
    if static.single:
        g = g[..., None]
    if not (_plain(g) and _plain(theta)):  # defensive: a traced cotangent takes the composed rules
        psibar = _pauli_bwd((psi, Static(None, static.obs)), g)[0]
        return _state_bwd((theta, psi, static), psibar)
    g = np.asarray(g, np.float64)
    if not seeded:
        lam = observables_cotangent(static.obs, psi, g)
        return adjoint_vjp(static.program, theta, psi, lam, static.device, own_psibar=True), None
    # θ̄ is linear in ψ̄ = 2ḡHψ: sweep Hψ itself (in place), then scale θ̄ by 2ḡ. The sweep
    # overwrites Hψ, so a second call on the same residuals (ds.jacobian of a batch) rebuilds it.
    if not static.fresh:
        work[1] = 0.0
        _hpsi_values(static.obs, psi, work[1])
    static.fresh = False
    adj = static.program.adjoint
    if _one_call(theta, psi.shape[-1]) and adj.soa_ok:
        grad = np.zeros(theta.shape, np.float64)
        K.adjoint_hpsi_soa(work, *adj.arrays, theta, grad, 2.0 * float(g[0]))
        return grad, None
    grad = adjoint_vjp(static.program, theta, psi, work[1], own_psibar=True, scratch=work[2])
    if g.ndim == 1:  # one θ: a scalar factor, in place
        grad *= 2.0 * float(g[0])
        return grad, None
    return grad * (2.0 * g), None


def _expval_jvp(primals, tangents):
    """d⟨H_m⟩ = 2 Re⟨H_m ψ, ψ̇⟩ with ψ̇ from one tangent sweep (eq. A1, A5)."""
    theta, static = primals
    dtheta = tangents[0]
    if dtheta is None:
        return expval_p(theta, static), None
    psi, dpsi = tangent_jvp(static.program, theta, np.asarray(dtheta, np.float64),
                            with_state=True)
    hpsi = apply_observables(static.obs, psi)  # (..., M, dim)
    dot = np.einsum("...mj,...j->...m", np.conj(hpsi), dpsi)
    return (_drop_m(observables_values(static.obs, psi), static),
            _drop_m(2.0 * dot.real, static))


expval_p.defvjp(_expval_fwd, _expval_bwd)
expval_p.defjvp(_expval_jvp)


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
    if not _plain(theta):
        raise NotImplementedError("expval(method='parameter-shift') is differentiable once; for "
                                  "second derivatives (ds.hessian) use method='adjoint'.")
    rows = []
    for b in np.ndindex(theta.shape[:-1]):
        jac = shift_jacobian(static.program, theta[b], static.obs)  # (P, M), plain
        rows.append(np.sum(jac * g[b][None, :], axis=-1))
    out = rows[0] if theta.ndim == 1 else np.stack(rows).reshape(theta.shape)
    return out, None


shift_expval_p.defvjp(_shift_fwd, _shift_bwd)
