"""Measurements: ``expval``, ``var``, ``probs``, ``state``, ``sample``, ``counts``.

Each validates its arguments once, then composes the primitives of ``quantum._ops``; everything
except ``sample``/``counts`` is differentiable with respect to θ through ``diffsci`` (reverse and
forward mode), including batches θ[B, P].
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from diffsci.devices import check_device
from diffsci.extend import observed
from diffsci.random import check_seed
from diffsci.typing import Array, ArrayLike

from ._model import Circuit, Hamiltonian, _as_wires, compile_observable
from ._noise import MAX_DENSITY_QUBITS, observable_vectors
from ._ops import (
    Static,
    expval_p,
    forward_states,
    pauli_p,
    shift_expval_p,
    state_from_p,
    state_p,
)

METHODS = ("adjoint", "parameter-shift")


_PLAIN = (np.ndarray, np.generic, list, tuple, int, float)


def _is_traced(x) -> bool:
    """Whether x is a diffsci traced value (reverse-mode Tracer or forward-mode dual)."""
    return not isinstance(x, _PLAIN) and hasattr(x, "shape")


def _value(x):
    """The plain value of a possibly traced x (for shapes and sampling)."""
    while _is_traced(x):
        x = x._value
    return x


def _check_theta(circuit: Circuit, theta, what: str):
    """Validate θ against the circuit; returns θ as float64 (or the traced θ unchanged)."""
    if not isinstance(circuit, Circuit):
        raise TypeError(f"{what}: circuit must be a quantum.Circuit; got {type(circuit).__name__}.")
    if theta is None:
        theta = np.zeros(0)
    if _is_traced(theta):
        value = np.asarray(_value(theta))  # no NumPy dispatch on tracers
    else:
        try:
            value = theta if isinstance(theta, np.ndarray) else np.asarray(theta)
        except ValueError as exc:  # ragged nested lists
            raise ValueError(f"{what}: theta must be a rectangular array of real numbers; got "
                             f"{theta!r}.") from exc
    shape = value.shape
    p = circuit.n_params
    if len(shape) not in (1, 2) or shape[-1] != p:
        raise ValueError(
            f"{what}: theta must have shape ({p},) or (batch, {p}) for a circuit with {p} "
            f"parameter(s); got shape {shape}."
        )
    kind = value.dtype.kind
    if kind not in "fiu":
        raise TypeError(f"{what}: theta must be real numbers; got dtype {value.dtype} "
                        f"(kind {kind!r}).")
    # observed: under diffsci.jit a guard, checked at every call (not once, at trace time)
    if kind == "f" and not observed(lambda v: bool(np.isfinite(v).all()),
                                    theta if _is_traced(theta) else value):
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(value))[0])
        raise ValueError(f"{what}: theta must be finite; got {float(value[bad])!r} at index "
                         f"{bad}.")
    return theta if _is_traced(theta) else np.asarray(value, np.float64)


def _sampled_theta(circuit, theta, what: str):
    """θ for a sampling function (``sample``, ``counts``, ``expval_shots``): plain values only.
    Samples are not differentiable, so a traced θ (under ``ds.grad``, ``jvp`` or
    ``diffsci.jit``) is refused rather than given a silently zero gradient, or, under jit,
    frozen into the compiled program (the same samples at every call)."""
    theta = _check_theta(circuit, theta, what)
    if _is_traced(theta):
        raise TypeError(
            f"{what}: theta is traced (ds.grad, ds.jvp or ds.jit); samples are not "
            f"differentiable and would give a zero gradient. Differentiate the exact "
            f"quantum.expval, use expval_shots(..., grad=True) for the shot-noise "
            f"parameter-shift estimate, or pass diffsci.stop_gradient(theta)")
    return theta


def _check_method(method, what: str) -> str:
    """A gradient method by name (case, spaces and ``_`` for ``-`` ignored) or a ValueError."""
    key = method.strip().lower().replace("_", "-").replace(" ", "-") if isinstance(
        method, str) else None
    if key not in METHODS:
        raise ValueError(f"{what}: method must be one of {METHODS}; got {method!r}.")
    return key


def _check_obs(circuit: Circuit, observable, what: str):
    """Compile one Hamiltonian or a sequence of them; returns (compiled list, single?)."""
    single = isinstance(observable, Hamiltonian)
    hs = [observable] if single else observable
    if not single and not (isinstance(hs, Sequence) and hs):
        raise TypeError(f"{what}: observable must be a Hamiltonian or a non-empty list of them; "
                        f"got {type(observable).__name__}.")
    obs = [compile_observable(h, circuit.n_qubits, f"{what}: observable {k}")
           for k, h in enumerate(hs)]
    return obs, single


#: Tolerance of the norm check of an initial state: | ‖ψ₀‖ - 1 |.
NORM_ATOL = 1e-8


def _from_initial(circuit: Circuit, theta, initial_state, device: str, what: str):
    """U(θ)ψ₀ for a validated initial state (eq. A12), θ and ψ₀ broadcast over their batch."""
    if circuit.noisy:
        raise ValueError(f"{what}: initial_state applies to pure-state circuits; the circuit has "
                         f"noise channels.")
    if check_device(device) != "cpu":
        raise ValueError(f"{what}: initial_state runs on device='cpu' only; got {device!r}.")
    try:
        value = np.asarray(_value(initial_state))
    except ValueError as exc:
        raise ValueError(f"{what}: initial_state must be a rectangular array.") from exc
    dim = 1 << circuit.n_qubits
    if value.dtype.kind not in "fciu" or value.ndim not in (1, 2) or value.shape[-1] != dim:
        raise ValueError(f"{what}: initial_state must be numbers of shape ({dim},) or (batch, "
                         f"{dim}) for {circuit.n_qubits} qubit(s); got shape {value.shape}, "
                         f"dtype {value.dtype}.")
    if not np.isfinite(value).all():
        raise ValueError(f"{what}: initial_state must be finite.")
    norms = np.linalg.norm(value, axis=-1)
    if not np.all(np.abs(norms - 1.0) <= NORM_ATOL):
        raise ValueError(f"{what}: initial_state must have norm 1 (tolerance {NORM_ATOL:g}); got "
                         f"norm(s) {np.round(norms, 12).tolist()}.")
    tb = tuple(_value(theta).shape[:-1])
    sb = value.shape[:-1]
    if tb != sb:
        if tb and sb:
            raise ValueError(f"{what}: theta of shape {_value(theta).shape} and initial_state of "
                             f"shape {value.shape} do not broadcast (batches {tb} and {sb}).")
        if not tb:
            theta = theta * np.ones(sb + (1,))
        else:
            initial_state = initial_state * np.ones(tb + (1,))
    psi0 = initial_state if _is_traced(initial_state) else np.asarray(initial_state,
                                                                      np.complex128)
    return state_from_p(theta, psi0, Static(circuit.program))


def _pure(circuit: Circuit, what: str, instead: str):
    if circuit.noisy:
        raise ValueError(f"{what}: the circuit has noise channels, so it runs as a density "
                         f"matrix; {instead}.")


def _vec_rho(circuit: Circuit, theta, device: str, what: str):
    """vec(ρ(θ)) of shape (..., 4**n), differentiable (state_p on the 2n-qubit program)."""
    if circuit.n_qubits > MAX_DENSITY_QUBITS:
        raise ValueError(f"{what}: density-matrix simulation is for at most {MAX_DENSITY_QUBITS} "
                         f"qubits (a vector of 4**n amplitudes); the circuit has "
                         f"{circuit.n_qubits}.")
    return state_p(theta, Static(circuit.mixed_program, device=check_device(device)))


def density_matrix(circuit: Circuit, theta: ArrayLike | None = None, *,
                   device: str = "cpu") -> Array:
    """The density matrix ρ(θ) of a circuit with noise channels (or ψψ† of a pure one).

    Simulated as the vector vec(ρ) of a 2n-qubit register (``quantum._noise``), so its gradients
    come from the adjoint sweep with a snapshot per channel (``DERIVATIONS.md`` eq. N1–N3).

    Args:
        circuit: the circuit, at most ``MAX_DENSITY_QUBITS`` qubits.
        theta: parameters, shape (P,) or (B, P).
        device: ``"cpu"`` or ``"cuda"`` (channels as superoperator launches, the adjoint's
            snapshots kept on the device).

    Returns:
        complex128 array of shape (2**n, 2**n) or (B, 2**n, 2**n), differentiable.

    Raises:
        ValueError: too many qubits, an unknown device, theta's shape.

    Example:
        >>> density_matrix(Circuit(1).h(0).depolarizing(0, 0.75)).round(3)
        array([[0.5+0.j, 0. +0.j],
               [0. +0.j, 0.5+0.j]])
    """
    theta = _check_theta(circuit, theta, "density_matrix")
    rho = _vec_rho(circuit, theta, device, "density_matrix")
    d = 1 << circuit.n_qubits
    return np.reshape(rho, np.shape(_value(rho))[:-1] + (d, d))


def state(circuit: Circuit, theta: ArrayLike | None = None, *,
          initial_state: ArrayLike | None = None, device: str = "cpu") -> Array:
    """The state vector ``U(θ)|0…0⟩``, differentiable with complex AD.

    Args:
        circuit: the circuit.
        theta: parameters, shape (P,) or (B, P) (default: no parameters).
        device: ``"cpu"`` or ``"cuda"``.

        initial_state: the state the circuit acts on instead of |0…0⟩: unit-norm amplitudes of
            shape (2**n,) or (B, 2**n) (broadcast against θ's batch), differentiable: ψ̄₀ =
            U(θ)†ψ̄ by the same adjoint sweep (``DERIVATIONS.md`` eq. A12). Also taken by
            :func:`expval`, :func:`var` and :func:`probs`.

    Returns:
        complex128 array of shape (2**n,) or (B, 2**n); wire 0 is the most significant bit.
        A real loss of it (a fidelity ``|⟨t|ψ⟩|²``) has gradients by the adjoint sweep
        (``quantum/DERIVATIONS.md`` eq. A3), with diffsci's complex convention.

    Example:
        >>> state(Circuit(1).h(0)).round(3)
        array([0.707+0.j, 0.707+0.j])
    """
    theta = _check_theta(circuit, theta, "state")
    _pure(circuit, "state", "use density_matrix(circuit, theta)")
    if initial_state is not None:
        return _from_initial(circuit, theta, initial_state, device, "state")
    return state_p(theta, Static(circuit.program, device=check_device(device)))


def expval(circuit: Circuit, theta: ArrayLike | None,
           observable: Hamiltonian | Sequence[Hamiltonian], *, method: str = "adjoint",
           device: str = "cpu", initial_state: ArrayLike | None = None) -> Array:
    """Expectation value(s) ``⟨ψ(θ)|H|ψ(θ)⟩`` of Pauli-sum observables, differentiable in θ.

    Args:
        circuit: the circuit.
        theta: parameters, shape (P,) or (B, P).
        observable: a :class:`Hamiltonian` or a list of them.
        method: the gradient method, ``"adjoint"`` (one backward sweep for all parameters and all
            observables; Jones & Gacon, arXiv:2009.02823, Alg. 1) or ``"parameter-shift"``
            (Schuld et al., PRA 99, 032331 (2019); 2 or 4 circuits per angle).
        device: ``"cpu"`` or ``"cuda"``.

    Returns:
        A float (one observable), or shape (M,), (B,), (B, M).

    Raises:
        ValueError: theta's shape, an observable wire out of range, an unknown method.

    Example:
        >>> import diffsci as ds
        >>> from quantum import Z
        >>> c = Circuit(1).rx(0)
        >>> round(expval(c, np.array([0.3]), Z(0)), 12)          # cos 0.3
        0.955336489126
        >>> ds.grad(lambda t: expval(c, t, Z(0)))(np.array([0.3]))
        array([-0.29552021])
    """
    theta = _check_theta(circuit, theta, "expval")
    obs, single = _check_obs(circuit, observable, "expval")
    method = _check_method(method, "expval")
    if circuit.noisy:  # tr(H_m ρ) = Re⟨h_m, vec ρ⟩ (eq. N2), composed with diffsci ops
        if method != "adjoint":
            raise ValueError("expval: noisy circuits support method='adjoint' only (parameter "
                             "shift applies to unitary gates).")
        rho = _vec_rho(circuit, theta, device, "expval")
        h = observable_vectors(obs, circuit.n_qubits)
        return _squeeze(np.real(rho @ np.conj(h).T), single)
    if initial_state is not None:
        if method != "adjoint":
            raise ValueError("expval: initial_state supports method='adjoint' only.")
        psi = _from_initial(circuit, theta, initial_state, device, "expval")
        return _squeeze(pauli_p(psi, Static(circuit.program, obs)), single)
    device = check_device(device)
    if method == "adjoint" and not (_is_traced(theta) and _is_traced(theta._value)):
        # one primitive: three state vectors at the peak, one tape record
        out = expval_p(theta, Static(circuit.program, obs, device, single=single))
        return float(out) if single and not _is_traced(out) and np.ndim(out) == 0 else out
    static = Static(circuit.program, obs, device)
    if method == "adjoint":  # nested differentiation: the composed second-order rules
        out = pauli_p(state_p(theta, static), static)
    else:
        out = shift_expval_p(theta, static)
    return _squeeze(out, single)


def _squeeze(out, single):
    if not single:
        return out
    out = out[..., 0]
    if not _is_traced(out) and np.ndim(out) == 0:
        return float(out)
    return out


def var(circuit: Circuit, theta: ArrayLike | None,
        observable: Hamiltonian | Sequence[Hamiltonian], *, device: str = "cpu",
        initial_state: ArrayLike | None = None) -> Array:
    """Variance ``⟨H²⟩ - ⟨H⟩²`` of Pauli-sum observable(s), differentiable in θ.

    ``⟨H²⟩ = ‖Hψ‖²`` is computed term by term (no H² expansion, no dense matrix).

    Returns:
        Shaped as :func:`expval`'s result.
    """
    theta = _check_theta(circuit, theta, "var")
    _pure(circuit, "var", "var supports pure-state circuits only")
    obs, single = _check_obs(circuit, observable, "var")
    device = check_device(device)
    if initial_state is None:
        psi = state_p(theta, Static(circuit.program, device=device))
    else:
        psi = _from_initial(circuit, theta, initial_state, device, "var")
    mean = pauli_p(psi, Static(circuit.program, obs))
    sq = pauli_p(psi, Static(circuit.program, obs, square=True))
    return _squeeze(sq - mean * mean, single)


def _check_wires(circuit: Circuit, wires, what: str) -> tuple[int, ...]:
    n = circuit.n_qubits
    if wires is None:
        return tuple(range(n))
    wires = _as_wires(what, wires)
    if any(isinstance(w, bool | np.bool_) or not isinstance(w, int | np.integer) for w in wires):
        raise TypeError(f"{what}: wires must be int wire indices; got {wires!r}.")
    if any(not 0 <= w < n for w in wires):
        raise ValueError(f"{what}: wires must be ints in [0, {n}); got {wires}.")
    if len(set(wires)) != len(wires):
        raise ValueError(f"{what}: wires must be distinct; got {wires}.")
    return tuple(int(w) for w in wires)


def probs(circuit: Circuit, theta: ArrayLike | None = None,
          wires: int | Sequence[int] | None = None, *, device: str = "cpu",
          initial_state: ArrayLike | None = None) -> Array:
    """Measurement probabilities in the computational basis, all wires or a marginal.

    Args:
        circuit, theta, device: as in :func:`state`.
        wires: the wires to keep, in the order that forms the outcome index (default all).

    Returns:
        float array of shape (2**len(wires),) or (B, 2**len(wires)), differentiable in θ.
    """
    theta = _check_theta(circuit, theta, "probs")
    wires = _check_wires(circuit, wires, "probs")
    n = circuit.n_qubits
    if initial_state is not None:
        psi = _from_initial(circuit, theta, initial_state, device, "probs")
        p = np.real(psi) ** 2 + np.imag(psi) ** 2
    elif circuit.noisy:  # the diagonal of ρ
        rho = _vec_rho(circuit, theta, device, "probs")
        p = np.real(rho[..., :: (1 << n) + 1])
    else:
        psi = state_p(theta, Static(circuit.program, device=check_device(device)))
        p = np.real(psi) ** 2 + np.imag(psi) ** 2
    batch = np.shape(_value(p))[:-1]
    if wires == tuple(range(n)):
        return p
    p = np.reshape(p, batch + (2,) * n)
    nb = len(batch)
    others = tuple(nb + w for w in range(n) if w not in wires)
    if others:
        p = np.sum(p, axis=others)
    kept = sorted(wires)
    order = tuple(range(nb)) + tuple(nb + kept.index(w) for w in wires)
    p = np.transpose(p, order)
    return np.reshape(p, batch + (1 << len(wires),))


def sample(circuit: Circuit, theta: ArrayLike | None = None, shots: int = 1000,
           wires: int | Sequence[int] | None = None, *,
           seed: int | np.random.Generator | None = None, device: str = "cpu") -> np.ndarray:
    """Computational-basis samples (not differentiable).

    Args:
        shots: number of samples, >= 1.
        wires: the wires measured (default all), in output column order.
        seed: an int seed or a ``numpy.random.Generator``, for reproducible samples.

    Returns:
        int8 array of shape (shots, len(wires)) of bits (batch: (B, shots, len(wires))).
    """
    if isinstance(shots, bool) or not isinstance(shots, int | np.integer) or shots < 1:
        raise ValueError(f"sample: shots must be an int >= 1; got {shots!r}.")
    theta = _sampled_theta(circuit, theta, "sample")
    wires = _check_wires(circuit, wires, "sample")
    p = probs(circuit, theta, wires, device=device)
    rng = np.random.default_rng(check_seed(seed, "sample", generator=True))
    k = len(wires)
    flat = p.reshape(-1, p.shape[-1])
    out = np.empty((flat.shape[0], shots, k), np.int8)
    for b, row in enumerate(flat):
        idx = rng.choice(row.size, size=shots, p=row / row.sum())
        out[b] = (idx[:, None] >> np.arange(k - 1, -1, -1)) & 1
    return out[0] if p.ndim == 1 else out.reshape(p.shape[:-1] + (shots, k))


def counts(circuit: Circuit, theta: ArrayLike | None = None, shots: int = 1000,
           wires: int | Sequence[int] | None = None, *,
           seed: int | np.random.Generator | None = None, device: str = "cpu") -> dict[str, int]:
    """Sample and count outcomes as bitstrings (wire order), e.g. ``{"00": 503, "11": 497}``."""
    theta = _sampled_theta(circuit, theta, "counts")
    bits = sample(circuit, theta, shots, wires, seed=seed, device=device)
    if bits.ndim != 2:
        raise ValueError("counts: takes a single parameter set (theta of shape (P,)).")
    keys, num = np.unique(bits, axis=0, return_counts=True)
    return {"".join(str(int(b)) for b in key): int(c) for key, c in zip(keys, num)}


__all__ = ["METHODS", "counts", "density_matrix", "expval", "forward_states", "probs", "sample",
           "state", "var"]
