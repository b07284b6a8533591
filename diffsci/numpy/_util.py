"""Helpers shared by the rule tables: undoing broadcasting, conjugation, zeros."""

from __future__ import annotations

import numpy as np

from .._core import getval

__all__ = ["unbroadcast", "cj", "shape_of", "zeros_like_value", "is_complex"]


def isnan_mask(a):
    """``np.isnan`` of ``a``'s value as a plain boolean array: the NaN mask of the nan-
    functions.  While :func:`diffsci.jit` traces, ``diffsci/_jit/_masks.py`` substitutes a
    version recorded from the traced value (else the mask of the first call would be a
    constant of the compiled program).  Call it as ``_util.isnan_mask`` (looked up per call)."""
    return np.isnan(getval(a))


def value_mask(ufunc, *args):
    """``ufunc`` (a comparison, ``np.isfinite``, ...) of the arguments' values: a plain
    boolean array that selects a branch of a formula (``np.where(mask, f(x), g(x))``) and is
    not differentiated.  While :func:`diffsci.jit` traces, a version recorded from the
    traced values is substituted (``diffsci/_jit/_masks.py``), so the compiled program
    recomputes it on every call.  Call it as ``_util.value_mask`` (looked up per call)."""
    return ufunc(*[getval(a) for a in args])


def observed(fn, *args):
    """``fn`` of the arguments' plain values: a decision about values that is not part of the
    computation (a validity check returning ``None`` or what is wrong).  While
    :func:`diffsci.jit` traces, a version that records it as a guard is substituted
    (``diffsci/_jit/_masks.py``): the compiled program calls ``fn`` again on every call, and a
    different outcome (an invalid value) re-traces, so the check raises as in eager mode
    instead of having run once at trace time.  Call it as ``_util.observed``."""
    return fn(*[getval(a) for a in args])


def shape_of(x):
    """Shape of a plain or traced value (Python scalars have shape ())."""
    return getattr(x, "shape", ())


def unbroadcast(g, x):
    """Sum the cotangent ``g`` down to the shape of ``x`` (undo NumPy broadcasting).

    This is the one place broadcasting is undone: every rule of a broadcasting
    primitive passes its cotangent through here.
    """
    try:
        shape = x.shape
    except AttributeError:  # a Python scalar
        shape = ()
    try:
        gshape = g.shape
    except AttributeError:
        return g
    if gshape == shape:
        return g
    # np.add.reduce skips ndarray.sum's Python-level wrapper (plain arrays only).
    total = np.add.reduce if type(g) is np.ndarray else _method_sum
    lead = len(gshape) - len(shape)
    if lead > 0:
        g = total(g, axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = total(g, axis=axes, keepdims=True)
    return g


def _method_sum(g, axis, keepdims=False):
    return g.sum(axis=axis, keepdims=keepdims)


def is_complex(x):
    """True if ``x`` (plain or traced) has a complex dtype."""
    t = type(x)
    if t is float or t is int:
        return False
    if t is complex:
        return True
    dt = getattr(x, "dtype", None)
    return dt is not None and dt.kind == "c"


def cj(x):
    """Complex conjugate, skipped (no copy) for real values."""
    t = type(x)
    if t is float or t is int:
        return x
    if t is complex:
        return x.conjugate()
    if x.dtype.kind != "c":
        return x
    return np.conj(x)


def zeros_like_value(x):
    """A zero cotangent for ``x`` (plain array of its shape and dtype)."""
    v = getval(x)
    return np.zeros(np.shape(v), np.result_type(v))
