"""Finite-shot estimates: expectation values and parameter-shift gradients with standard errors.

What a sampling device returns, simulated exactly: each Pauli term P_k of H = Σ_k c_k P_k is
measured in its own basis (H on an X wire, S† then H on a Y wire: then P_k is the parity of the
measured bits), ``shots`` times; the estimate of ⟨P_k⟩ is the mean parity, with variance
(1 - ⟨P_k⟩²)/shots estimated by the sample variance. A gradient is the parameter-shift rule
(``DERIVATIONS.md`` eq. S1–S2) with every shifted expectation estimated the same way from fresh
shots; independent estimates add their variances:

    Var Ê = Σ_k c_k² s_k² / shots,
    Var ∂̂_p E = Σ_k c_k² Σ_{rows g of slot p} scale_g² Σ_rule coef² (Var Ê₊ + Var Ê₋)

(s_k² the unbiased sample variance of term k's parities). With ``shots=None`` the same estimator
runs on the exact distributions (standard errors 0): its value and gradient are then ⟨H⟩ and the
exact gradient, which is what the finite-shot estimates scatter about.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from diffsci.random import check_seed
from diffsci.typing import ArrayLike

from . import _kernels as K
from ._measure import _sampled_theta
from ._model import Circuit, Hamiltonian, compile_program
from ._ops import SHIFT_FOUR_TERM, SHIFT_TWO_TERM, forward_states


@dataclass(frozen=True, eq=False)
class ShotEstimate:
    """A finite-shot estimate and its standard errors.

    Args:
        value: the estimate of ⟨H⟩.
        stderr: its standard error.
        grad: the parameter-shift estimate of d⟨H⟩/dθ (None unless asked for).
        grad_stderr: its standard errors, per slot of θ.
        shots: shots per measured term (per shifted circuit for the gradient); None: exact.
    """

    value: float
    stderr: float
    grad: np.ndarray | None
    grad_stderr: np.ndarray | None
    shots: int | None


def _basis_circuit(circuit: Circuit, word: str, wires) -> Circuit:
    c = circuit.copy()
    for p, w in zip(word, wires):
        if p == "Y":
            c.sdg(w)
        if p in "XY":
            c.h(w)
    return c


def _parity_estimate(program, theta, offset, wires, n, shots, rng):
    """(mean, variance of the mean) of the parity of ``wires`` after the program at offsets."""
    psi = forward_states(program.with_offsets(offset), theta)
    p = (psi.real**2 + psi.imag**2).reshape((2,) * n)
    others = tuple(w for w in range(n) if w not in wires)
    marg = np.sum(p, axis=others).reshape(-1) if others else p.reshape(-1)
    sign = 1.0 - 2.0 * (np.bitwise_count(np.arange(marg.size)) & 1)
    if shots is None:
        return float(marg @ sign), 0.0
    counts = rng.multinomial(shots, marg / marg.sum())
    mean = float(counts @ sign) / shots
    s2 = (1.0 - mean * mean) * shots / (shots - 1) if shots > 1 else 1.0
    return mean, s2 / shots


def expval_shots(circuit: Circuit, theta: ArrayLike | None, observable: Hamiltonian,
                 shots: int | None = 1000, *, grad: bool = False,
                 seed: int | np.random.Generator | None = None) -> ShotEstimate:
    """⟨H⟩ (and its gradient) as a sampling device would estimate them, with standard errors.

    Args:
        circuit: a pure-state circuit.
        theta: parameters, shape (P,).
        observable: a :class:`Hamiltonian`; each non-constant term is measured separately.
        shots: shots per term and per shifted circuit (>= 2), or None for the exact
            distributions (standard errors 0).
        grad: also estimate d⟨H⟩/dθ by parameter shift on shots (eq. S1–S2).
        seed: an int or a ``numpy.random.Generator``.

    Returns:
        A :class:`ShotEstimate`.

    Raises:
        ValueError: shots not an int >= 2 (or None); theta not of shape (P,) or not finite; a
            noisy circuit; an observable wire out of range. TypeError: observable not a
            Hamiltonian.

    Example:
        >>> from quantum import Z
        >>> c = Circuit(1).rx(0)
        >>> e = expval_shots(c, [0.3], Z(0), shots=None, grad=True)
        >>> round(e.value, 12), e.grad.round(12)                 # cos 0.3, -sin 0.3
        (0.955336489126, array([-0.29552021]))
    """
    if shots is not None and (isinstance(shots, bool) or not isinstance(shots, int | np.integer)
                              or shots < 2):
        raise ValueError(f"expval_shots: shots must be an int >= 2 or None (exact); got "
                         f"{shots!r}.")
    theta = np.asarray(_sampled_theta(circuit, theta, "expval_shots"), np.float64)
    if theta.ndim != 1:
        raise ValueError(f"expval_shots: theta must have shape ({circuit.n_params},) (one "
                         f"parameter set); got shape {theta.shape}.")
    if not isinstance(observable, Hamiltonian):
        raise TypeError(f"expval_shots: observable must be a quantum.Hamiltonian; got "
                        f"{type(observable).__name__}.")
    if observable.n_wires > circuit.n_qubits:
        raise ValueError(f"expval_shots: the observable acts on wire {observable.n_wires - 1} "
                         f"but the circuit has {circuit.n_qubits} qubit(s).")
    if circuit.noisy:
        raise ValueError("expval_shots: the circuit has noise channels; shot estimates are for "
                         "pure-state circuits.")
    rng = np.random.default_rng(check_seed(seed, "expval_shots", generator=True))
    n = circuit.n_qubits
    base = circuit.program
    value, var = 0.0, 0.0
    g = np.zeros(theta.size) if grad else None
    gvar = np.zeros(theta.size) if grad else None
    for coef, word, wires in observable.terms:
        if not word:  # the constant term: exact
            value += coef
            continue
        program = compile_program(_basis_circuit(circuit, word, wires))
        rows = base.kinds.size
        assert np.array_equal(program.kinds[:rows], base.kinds) and np.array_equal(
            program.pidx[:rows], base.pidx), "basis rows must follow the circuit's rows"
        mean, v = _parity_estimate(program, theta, program.offset, wires, n, shots, rng)
        value += coef * mean
        var += coef * coef * v
        if not grad:
            continue
        for row in np.flatnonzero(base.pidx >= 0):
            controlled = base.kinds[row] == K.K_ROT and base.ints[row, 2] != 0
            d, dv = 0.0, 0.0
            for shift, c in (SHIFT_FOUR_TERM if controlled else SHIFT_TWO_TERM):
                for sgn in (1.0, -1.0):
                    off = program.offset.copy()
                    off[row] += sgn * shift
                    m, mv = _parity_estimate(program, theta, off, wires, n, shots, rng)
                    d += sgn * c * m
                    dv += c * c * mv
            k = base.pidx[row]
            s = base.scale[row]
            g[k] += coef * s * d
            gvar[k] += (coef * s) ** 2 * dv
    return ShotEstimate(float(value), float(np.sqrt(var)), g,
                        None if gvar is None else np.sqrt(gvar), None if shots is None
                        else int(shots))
