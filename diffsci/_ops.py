"""The core's Numba kernels bound as differentiable primitives: ``logsumexp``, ``softmax``.

The pattern every package follows for a Numba kernel with a hand-written adjoint: the
public function validates its input once; a
:class:`~diffsci.custom_vjp` runs the forward kernel of ``_kernels.py`` on plain
arrays and saves what the adjoint kernel needs.  The input is brought to 2-D
*rows* (the reduced axis moved last, one row per output element) so the kernels
only ever see C-contiguous ``(rows, n)`` arrays.

Higher order: when the backward pass is itself being traced (``grad`` of
``grad``, the VJP checked by ``check_grads(order=2)``), the cotangent or the
residuals are traced values.  The forward rule then calls the primitive again,
so the outer trace records it, and the backward rule computes the adjoint with
NumPy calls on traced values (and the other primitive) instead of the kernel,
so it is differentiable in turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .typing import Array, ArrayLike

import operator

import numpy as np

from . import _kernels as K
from ._core import getval, is_tracer
from ._custom import custom_vjp

__all__ = ["logsumexp", "softmax"]

_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


# ---------------------------------------------------------------------------
# Validation (once, at the boundary)
# ---------------------------------------------------------------------------
def _validate(x, axis, fname):
    """Check ``x`` and ``axis``; return ``(x, axis)`` with x an array and axis normalised."""
    if not is_tracer(x) and type(x) is not np.ndarray:
        x = np.asarray(x)  # lists, Python and NumPy scalars
    v = getval(x)
    if not isinstance(v, (np.ndarray, np.generic)):
        raise TypeError(
            f"{fname}: x must be an array of float32 or float64, got {type(v).__name__}"
        )
    if v.dtype.kind == "c":
        raise TypeError(
            f"{fname}: x must have dtype float32 or float64, got {v.dtype}; complex input "
            f"is not supported (take np.real(x) or np.abs(x) first)"
        )
    if v.dtype not in _FLOAT_DTYPES:
        raise TypeError(
            f"{fname}: x must have dtype float32 or float64, got {v.dtype}; "
            f"convert it with x.astype(np.float64)"
        )
    if axis is not None:
        try:
            axis = operator.index(axis)
        except TypeError:
            raise TypeError(
                f"{fname}: axis must be an int or None, got {type(axis).__name__} {axis!r}"
            ) from None
        if not -v.ndim <= axis < v.ndim:
            raise ValueError(
                f"{fname}: axis {axis} is out of range for x of shape {v.shape} "
                f"(ndim {v.ndim}); expected -{v.ndim} <= axis < {v.ndim}"
                if v.ndim else f"{fname}: x is 0-d, so axis must be None, got {axis}"
            )
        axis %= v.ndim
    bad = K.first_invalid(v)
    if bad >= 0:
        idx = np.unravel_index(bad, v.shape) if v.ndim else ()
        raise ValueError(
            f"{fname}: x has a non-finite entry {v.flat[bad]} at index "
            f"{tuple(int(i) for i in idx)}; NaN and +inf are rejected (-inf is allowed and "
            f"means 'masked out': weight 0)"
        )
    return x, axis


def _is_traced(*xs):
    return any(is_tracer(x) for x in xs)


# ---------------------------------------------------------------------------
# Rows: the reduced axis last, 2-D, C-contiguous
# ---------------------------------------------------------------------------
def _to_rows(x, axis):
    """``x`` as a C-contiguous ``(rows, n)`` array with ``axis`` last."""
    if axis is None:
        return np.ascontiguousarray(x).reshape(1, -1)
    if axis != x.ndim - 1:
        x = np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    return np.ascontiguousarray(x).reshape(x.size // n if n else int(np.prod(x.shape[:-1])), n)


def _from_rows(r, shape, axis):
    """Inverse of :func:`_to_rows` for an array of ``shape``."""
    if axis is None:
        return r.reshape(shape)
    moved = shape[:axis] + shape[axis + 1:] + (shape[axis],)
    r = r.reshape(moved)
    return r if axis == len(shape) - 1 else np.moveaxis(r, -1, axis)


def _reduced_shape(shape, axis, keepdims):
    if axis is None:
        return (1,) * len(shape) if keepdims else ()
    if keepdims:
        return shape[:axis] + (1,) + shape[axis + 1:]
    return shape[:axis] + shape[axis + 1:]


def _scalar_if_0d(a):
    return a[()] if a.ndim == 0 else a


# ---------------------------------------------------------------------------
# logsumexp
# ---------------------------------------------------------------------------
def logsumexp(x: ArrayLike, axis: int | None = -1, keepdims: bool = False) -> Array:
    """``log(sum(exp(x), axis))``, fused and numerically stable, differentiable.

    The maximum along ``axis`` is shifted out before exponentiating, so no
    entry overflows and the largest term is exactly 1 (Blanchard, Higham &
    Higham 2021).  The adjoint is ``ḡ · softmax(x)``, computed
    from the saved output with one ``exp`` per element; its derivation is in
    ``diffsci/DERIVATIONS.md`` ("logsumexp").

    Args:
        x: float32 or float64 array (dtype preserved), any rank.  ``-inf``
            entries are allowed and contribute nothing (masking); a slice that
            is entirely ``-inf`` (or empty) gives ``-inf`` with a zero gradient.
        axis: the axis to reduce (an int, negative counts from the end), or
            ``None`` for all elements.
        keepdims: keep the reduced axis with length 1.

    Returns:
        An array of ``x``'s dtype with ``axis`` removed (a NumPy scalar when
        the result is 0-d).

    Raises:
        TypeError: ``x`` is not a float32/float64 array, or ``axis`` is not an int.
        ValueError: ``axis`` is out of range, or ``x`` contains NaN or +inf.

    Example:
        >>> logsumexp(np.array([[0.0, 0.0], [1.0, -np.inf]]))
        array([0.69314718, 1.        ])

    References:
        P. Blanchard, D. J. Higham, N. J. Higham, "Accurately computing the
        log-sum-exp and softmax functions", IMA J. Numer. Anal. 41 (2021),
        eq. (1.1) and its shifted evaluation.
    """
    x, axis = _validate(x, axis, "logsumexp")
    if not isinstance(keepdims, (bool, np.bool_)):
        raise TypeError(f"logsumexp: keepdims must be a bool, got {type(keepdims).__name__}")
    return _logsumexp(x, axis, bool(keepdims))


@custom_vjp
def _logsumexp(x, axis, keepdims):
    out = K.logsumexp_rows(_to_rows(x, axis))
    return _scalar_if_0d(out.reshape(_reduced_shape(x.shape, axis, keepdims)))


def _logsumexp_fwd(x, axis, keepdims):
    if is_tracer(x):  # a lower trace level is recording too: let it
        out = _logsumexp(x, axis, keepdims)
        return out, (x, out, axis, keepdims, None)
    rows = _to_rows(x, axis)
    out1 = K.logsumexp_rows(rows)
    out = _scalar_if_0d(out1.reshape(_reduced_shape(x.shape, axis, keepdims)))
    return out, (x, out, axis, keepdims, (rows, out1))


def _logsumexp_bwd(res, g):
    x, out, axis, keepdims, kernel_res = res
    shape = np.shape(getval(x))
    if kernel_res is None or _is_traced(g):
        # Differentiable path: ḡ (axis restored) times softmax(x), itself a primitive.
        gk = np.reshape(g, _reduced_shape(shape, axis, True))
        return gk * _softmax(x, axis), None, None
    rows, out1 = kernel_res
    g1 = np.asarray(g, rows.dtype).reshape(-1)
    return _from_rows(K.logsumexp_rows_vjp(rows, out1, g1), shape, axis), None, None


_logsumexp.defvjp(_logsumexp_fwd, _logsumexp_bwd)


# ---------------------------------------------------------------------------
# softmax
# ---------------------------------------------------------------------------
def softmax(x: ArrayLike, axis: int | None = -1) -> Array:
    """``exp(x) / sum(exp(x), axis)``, fused and numerically stable, differentiable.

    Computed as ``exp(x - max) / sum(exp(x - max))``: the shifted division
    form, which Blanchard, Higham & Higham (2021) find more accurate than
    the division-free ``exp(x - logsumexp(x))``.  The adjoint ``y ⊙ (ḡ - Σ ḡ ⊙ y)`` uses only
    the saved output ``y``; its derivation is in ``diffsci/DERIVATIONS.md``
    ("softmax").

    Args:
        x: float32 or float64 array (dtype preserved), any rank.  ``-inf``
            entries get probability 0 (masking).  A slice that is entirely
            ``-inf`` has no mass anywhere and gives **zeros** (with a zero
            gradient), where ``scipy.special.softmax`` gives NaN.
        axis: the axis to normalise over, or ``None`` for all elements.

    Returns:
        An array of ``x``'s shape and dtype whose slices along ``axis`` sum to 1.

    Raises:
        TypeError: ``x`` is not a float32/float64 array, or ``axis`` is not an int.
        ValueError: ``axis`` is out of range, or ``x`` contains NaN or +inf.

    Example:
        >>> softmax(np.array([0.0, np.log(3.0)]))
        array([0.25, 0.75])

    References:
        P. Blanchard, D. J. Higham, N. J. Higham, "Accurately computing the
        log-sum-exp and softmax functions", IMA J. Numer. Anal. 41 (2021),
        eq. (1.2) and its shifted evaluation.
    """
    x, axis = _validate(x, axis, "softmax")
    return _softmax(x, axis)


@custom_vjp
def _softmax(x, axis):
    return _from_rows(K.softmax_rows(_to_rows(x, axis)), x.shape, axis)


def _softmax_fwd(x, axis):
    if is_tracer(x):
        y = _softmax(x, axis)
        return y, (y, axis, None)
    rows = K.softmax_rows(_to_rows(x, axis))
    return _from_rows(rows, x.shape, axis), (None, axis, (rows, x.shape))


def _softmax_bwd(res, g):
    y, axis, kernel_res = res
    if kernel_res is None or _is_traced(g):
        if y is None:
            rows, shape = kernel_res
            y = _from_rows(rows, shape, axis)
        return y * (g - np.sum(g * y, axis=axis, keepdims=True)), None
    rows, shape = kernel_res
    g2 = _to_rows(np.asarray(g, rows.dtype), axis)
    return _from_rows(K.softmax_rows_vjp(rows, g2), shape, axis), None


_softmax.defvjp(_softmax_fwd, _softmax_bwd)
