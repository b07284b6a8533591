"""Numba kernels of the core's fused primitives, with their hand-written adjoints.

Plain ``@njit`` functions on C-contiguous float32/float64 ndarrays.  They never
see traced values and never import diffsci: ``_ops.py`` validates the inputs,
reshapes them to 2-D *rows* (the reduced axis last, one row per output element)
and binds each forward kernel and its adjoint kernel as one differentiable
primitive.  The kernels assume valid input (no NaN, no +inf; -inf is allowed
and means "masked") and say so.

Each operation has a serial and a ``parallel=True`` driver over rows; the small
Python dispatchers at the end pick one by size (:data:`PARALLEL_MIN_ELEMENTS`):
a parallel launch costs a few microseconds, which only pays on large inputs.
The maths of every adjoint is in ``diffsci/DERIVATIONS.md``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = [
    "PARALLEL_MIN_ELEMENTS",
    "first_invalid",
    "logsumexp_rows",
    "logsumexp_rows_vjp",
    "softmax_rows",
    "softmax_rows_vjp",
]

#: Inputs with at least this many elements (and more than one row) run the
#: ``parallel=True`` drivers; smaller ones run serially.
PARALLEL_MIN_ELEMENTS = 1 << 16

_NEG_INF = -np.inf


# ---------------------------------------------------------------------------
# One row each (inlined into the drivers)
# ---------------------------------------------------------------------------
@njit(cache=True, inline="always")
def _row_max(x, i):
    m = _NEG_INF
    for j in range(x.shape[1]):
        if x[i, j] > m:
            m = x[i, j]
    return m


@njit(cache=True, inline="always")
def _lse_row(x, out, i):
    # log Σ exp x = m + log Σ exp(x - m), m = max x: every term is ≤ 1 and one is 1.
    m = _row_max(x, i)
    if m == _NEG_INF:  # an all -inf (or empty) row: the sum is 0, log 0 = -inf
        out[i] = m
        return
    s = 0.0
    for j in range(x.shape[1]):
        s += np.exp(x[i, j] - m)
    out[i] = m + np.log(s)


@njit(cache=True, inline="always")
def _lse_vjp_row(x, out, g, dx, i):
    # ∂/∂x_j = g · exp(x_j - lse) = g · softmax_j: one exp per element, none redone.
    lse = out[i]
    if lse == _NEG_INF:  # fully masked row: zero gradient, no exp(-inf + inf) = NaN
        for j in range(x.shape[1]):
            dx[i, j] = 0.0
        return
    gi = g[i]
    for j in range(x.shape[1]):
        dx[i, j] = gi * np.exp(x[i, j] - lse)


@njit(cache=True, inline="always")
def _softmax_row(x, y, i):
    m = _row_max(x, i)
    n = x.shape[1]
    if m == _NEG_INF:  # fully masked row: no mass anywhere (documented in _ops.softmax)
        for j in range(n):
            y[i, j] = 0.0
        return
    s = 0.0
    for j in range(n):
        e = np.exp(x[i, j] - m)
        y[i, j] = e
        s += e
    r = 1.0 / s
    for j in range(n):
        y[i, j] *= r


@njit(cache=True, inline="always")
def _softmax_vjp_row(y, g, dx, i):
    # x̄ = y ⊙ (ḡ - ⟨ḡ, y⟩): the Jacobian diag(y) - y yᵀ applied to ḡ.
    n = y.shape[1]
    d = 0.0
    for j in range(n):
        d += g[i, j] * y[i, j]
    for j in range(n):
        dx[i, j] = y[i, j] * (g[i, j] - d)


# ---------------------------------------------------------------------------
# Drivers: serial and parallel over rows (outputs preallocated by the caller)
# ---------------------------------------------------------------------------
@njit(cache=True)
def _lse_serial(x, out):
    for i in range(x.shape[0]):
        _lse_row(x, out, i)


@njit(cache=True, parallel=True)
def _lse_parallel(x, out):
    for i in prange(x.shape[0]):
        _lse_row(x, out, i)


@njit(cache=True)
def _lse_vjp_serial(x, out, g, dx):
    for i in range(x.shape[0]):
        _lse_vjp_row(x, out, g, dx, i)


@njit(cache=True, parallel=True)
def _lse_vjp_parallel(x, out, g, dx):
    for i in prange(x.shape[0]):
        _lse_vjp_row(x, out, g, dx, i)


@njit(cache=True)
def _softmax_serial(x, y):
    for i in range(x.shape[0]):
        _softmax_row(x, y, i)


@njit(cache=True, parallel=True)
def _softmax_parallel(x, y):
    for i in prange(x.shape[0]):
        _softmax_row(x, y, i)


@njit(cache=True)
def _softmax_vjp_serial(y, g, dx):
    for i in range(y.shape[0]):
        _softmax_vjp_row(y, g, dx, i)


@njit(cache=True, parallel=True)
def _softmax_vjp_parallel(y, g, dx):
    for i in prange(y.shape[0]):
        _softmax_vjp_row(y, g, dx, i)


@njit(cache=True)
def _first_invalid(x):
    # x is 1-D; -inf is valid, NaN and +inf are not (NaN fails every comparison).
    for k in range(x.shape[0]):
        v = x[k]
        if not v < np.inf:
            return k
    return -1


# ---------------------------------------------------------------------------
# Dispatch (plain Python on plain arrays)
# ---------------------------------------------------------------------------
def _parallel(x):
    return x.size >= PARALLEL_MIN_ELEMENTS and x.shape[0] > 1


def first_invalid(x):
    """Flat index of the first NaN or +inf entry of ``x``, or -1 if there is none."""
    return int(_first_invalid(x.reshape(-1)))


def logsumexp_rows(x):
    """``log Σ_j exp x[i, j]`` for each row of the 2-D array ``x``; shape ``(rows,)``."""
    out = np.empty(x.shape[0], x.dtype)
    (_lse_parallel if _parallel(x) else _lse_serial)(x, out)
    return out


def logsumexp_rows_vjp(x, out, g):
    """Adjoint of :func:`logsumexp_rows`: ``g[i] · exp(x[i, j] - out[i])`` (0 on -inf rows)."""
    dx = np.empty_like(x)
    (_lse_vjp_parallel if _parallel(x) else _lse_vjp_serial)(x, out, g, dx)
    return dx


def softmax_rows(x):
    """Softmax of each row of the 2-D array ``x`` (all -inf rows give zeros)."""
    y = np.empty_like(x)
    (_softmax_parallel if _parallel(x) else _softmax_serial)(x, y)
    return y


def softmax_rows_vjp(y, g):
    """Adjoint of :func:`softmax_rows` given its output ``y``: ``y ⊙ (g - Σ_j g ⊙ y)`` per row."""
    dx = np.empty_like(y)
    (_softmax_vjp_parallel if _parallel(y) else _softmax_vjp_serial)(y, g, dx)
    return dx
