"""Helpers shared by the rule tables: undoing broadcasting, conjugation, zeros."""

from __future__ import annotations

import numpy as np

from .._core import getval

__all__ = ["unbroadcast", "cj", "shape_of", "zeros_like_value", "is_complex"]


#: While :func:`diffsci.jit` traces: its versions of the hooks below (``diffsci/_jit/_masks.py``
#: sets it), so these functions can be imported by name and still follow the trace.
jit_hooks = None


def value_mask(ufunc, *args):
    """``ufunc`` (a comparison, ``np.isnan``, ``np.sign``, ...) of the arguments' values: a
    plain mask that selects a branch of a formula, ``np.where(mask, f(x), g(x))``, and is not
    differentiated.  Under :func:`diffsci.jit` it is recorded from the traced values, so the
    compiled program recomputes it on every call (a mask from ``getval(x) > 0`` would be a
    constant of the trace).  ``ufunc`` may be any plain function of the arguments' values
    returning one array of a shape fixed by theirs (an index, a count, a sorting
    permutation): it is then called as NumPy at every call of the compiled program.

    Example:
        >>> value_mask(np.greater, np.array([-1.0, 2.0]), 0.0)
        array([False,  True])
    """
    if jit_hooks is not None:
        return jit_hooks.value_mask(ufunc, *args)
    return ufunc(*[getval(a) for a in args])


def observed(fn, *args):
    """``fn(*plain values of args)``: a decision about values that is not part of the
    computation, typically a validity check returning ``None`` or what is wrong.

    In eager mode it is just the call.  Under :func:`diffsci.jit` it is a guard: the compiled
    program calls ``fn`` again at every call and re-traces when the outcome differs, so a
    check written with it raises for a later invalid input as in eager mode (a check on
    ``getval(x)`` alone runs once, at trace time).

    Example:
        >>> observed(lambda v: None if np.all(v > 0) else "must be positive", np.ones(2))
    """
    if jit_hooks is not None:
        return jit_hooks.observed(fn, *args)
    return fn(*[getval(a) for a in args])


def condition(c):
    """``where``'s condition as a plain value (it is not differentiated); under
    :func:`diffsci.jit` a condition recorded by the jit trace (a :func:`value_mask`) is kept,
    so the compiled program recomputes it instead of keeping the first call's."""
    if jit_hooks is not None:
        return jit_hooks.condition(c)
    return getval(c)


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
