"""In-place writes on traced arrays: ``x[idx] = v``, ``x += y``, ``out=``.

Writes go to the real memory, so NumPy's aliasing semantics hold exactly
(other names for the array and views of it see the new values).  Each write
is one tape record whose parents are the overwritten array and the written
value; the traced object is re-pointed at that record (its old record moves
to a fresh object in the tape), so every name bound to it now refers to the
new version.

Values saved for the backward pass can be overwritten later.  Instead of
refusing (PyTorch's "modified by an inplace operation"), the record keeps an
undo log: the overwritten region's old contents.  The reverse sweep restores
them as it walks back past each write, so every rule reads exactly the values
it saw in the forward pass, and re-applies the writes when it is done.

What cannot be repaired is *lineage*: a traced value used after memory it
shares was overwritten through another name (a view taken before a write to
its base, or a write through a view).  Its forward value is right (memory is
memory) but its recorded history is not, so the backward pass raises an error
naming both operations instead of returning a wrong gradient (version
counters, as in PyTorch).
"""

from __future__ import annotations

import numpy as np

from ._core import Dual, Tracer, getval, record

__all__ = ["setitem", "inplace", "traced_like", "buffer_like", "InPlaceError"]

_ndarray = np.ndarray


class InPlaceError(RuntimeError):
    """An in-place write made a recorded value's history wrong; raised by the backward pass."""


def _is_basic(idx):
    items = idx if type(idx) is tuple else (idx,)
    return all(it is None or it is Ellipsis or type(it) in (int, slice)
               or isinstance(it, np.integer) for it in items)


def _plain_index(idx):
    if type(idx) is tuple:
        return tuple(getval(i) for i in idx)
    return getval(idx)


def _nested_error():
    return TypeError(
        "in-place writes on values traced at several levels at once (grad of grad, jvp of "
        "grad, check_grads(order=2)) are not supported yet; write the function without "
        "mutation for higher-order derivatives, or use first-order transforms"
    )


def setitem(x, idx, value):
    """``x[idx] = value`` for a traced array ``x`` (the ``__setitem__`` of tracers)."""
    idx = _plain_index(idx)
    if type(x) is Dual:
        return _setitem_dual(x, idx, value)
    tape = x._tape
    arr = x._value
    if type(arr) is Tracer or type(arr) is Dual:
        raise _nested_error()
    if type(arr) is not _ndarray:
        raise TypeError(
            f"cannot assign into a traced {type(arr).__name__}: only arrays support item "
            f"assignment"
        )
    if type(value) is Tracer and value._tape is tape:
        v, vpar = value._value, value._idx
        if type(v) is Tracer or type(v) is Dual:
            raise _nested_error()
    elif type(value) is Tracer or type(value) is Dual:
        raise _nested_error()
    else:
        v, vpar = value, None
    recs = tape.records
    i_old = x._idx
    basic = _is_basic(idx)
    prev = arr[idx].copy() if basic else arr[idx]
    arr[idx] = v  # NumPy's own errors (read-only, shapes, casting) come from here
    new = arr[idx].copy() if basic else arr[idx]
    # Move the old version's record to a fresh object; x becomes the write record.
    recs[i_old] = Tracer(arr, tape, i_old, x._rules, x._parents, x._args, x._kwargs)
    x._rules = _write_back
    x._parents = (i_old, vpar)
    x._args = (idx, basic, prev, new, np.shape(v), np.result_type(v))
    x._kwargs = None
    x._idx = len(recs)
    recs.append(x)
    if tape.writes is None:
        tape.writes = []
    tape.writes.append(x._idx)


def _setitem_dual(x, idx, value):
    """Forward mode: write the primal in place; the tangent is copied, then written."""
    trace = x._tape
    if type(value) is Dual and value._tape is trace:
        vp, vt = value._value, value._tangent
    else:
        vp, vt = value, 0.0
    x._value[idx] = vp  # recurses into a lower trace level if the primal is traced
    t = x._tangent
    if type(t) is Tracer or type(t) is Dual:
        raise _nested_error()
    t = np.array(t, copy=True)  # tangents may be shared between duals: copy on write
    t[idx] = vt
    x._tangent = t


def _winners(shape, idx, vshape):
    """Mask over ``arr[idx]`` of the positions whose write survived (last duplicate wins)."""
    ids = np.full(shape, -1, dtype=np.int64)
    m = int(np.prod(vshape, dtype=np.int64))
    ids[idx] = np.arange(m).reshape(vshape)
    return ids[idx] == np.arange(m).reshape(vshape)


def _write_back(grads, owned, g, rec):
    """Reverse sweep at a write record: undo the write, then propagate the cotangent."""
    from ._core import _add

    idx, basic, prev, _new, vshape, vdtype = rec._args
    rec._value[idx] = prev  # earlier records read the memory as it was before this write
    if g is _UNDO:
        return
    i_old, vpar = rec._parents
    if vpar is not None:
        gv = g[idx]
        if not basic:
            gv = np.where(_winners(np.shape(rec._value), idx, np.shape(gv)), gv, 0)
        from .numpy._util import unbroadcast

        gv = unbroadcast(gv, np.zeros(vshape, vdtype))
        if np.iscomplexobj(gv) and vdtype.kind != "c":
            gv = np.real(gv)
        _add(grads, owned, vpar, gv)
    gx = np.array(g, copy=True)
    gx[idx] = 0
    _add(grads, owned, i_old, gx)


class _UndoMarker:
    """Placeholder cotangent making the sweep visit a write record it must undo."""

    __slots__ = ()

    def __repr__(self):
        return "<undo>"


_UNDO = _UndoMarker()


def prepare(tape, grads):
    """Before a sweep over a tape with writes: check lineage, mark writes for undo."""
    _check_lineage(tape)
    for j in tape.writes:
        if grads[j] is None:
            grads[j] = _UNDO


def redo(tape):
    """After a sweep: re-apply every write, in order, leaving memory as the forward left it."""
    recs = tape.records
    for j in tape.writes:
        r = recs[j]
        idx, _basic, _prev, new = r._args[:4]
        r._value[idx] = new


def _root(a):
    while isinstance(a.base, _ndarray):
        a = a.base
    return a


def _region(arr, idx, basic):
    """The memory a write touched: a view for basic indices, else (conservatively) all of it."""
    if not basic:
        return arr
    items = idx if type(idx) is tuple else (idx,)
    if any(it is Ellipsis for it in items):
        return arr[idx]
    return arr[(*items, Ellipsis)]  # a view even when every index is an integer


def _overlaps(a, b):
    try:
        return np.shares_memory(a, b, max_work=100_000)
    except np.exceptions.TooHardError:
        return True


def _check_lineage(tape):
    """Raise if a value was used after memory it shares was overwritten through another name."""
    recs = tape.records
    by_root = {}
    for j in tape.writes:
        w = recs[j]
        region = _region(w._value, w._args[0], w._args[1])
        by_root.setdefault(id(_root(w._value)), []).append((j, region))
    for i, r in enumerate(recs):
        parents = r._parents
        if parents is None:
            continue
        for p in ((parents,) if type(parents) is int else parents):
            if p is None:
                continue
            v = recs[p]._value
            if type(v) is not _ndarray:
                continue
            for j, region in by_root.get(id(_root(v)), ()):
                if p < j < i and _overlaps(v, region):
                    raise InPlaceError(
                        f"the operation '{_opname(r)}' (tape record {i}) used a value made by "
                        f"'{_opname(recs[p])}' (record {p}) after an in-place write (record "
                        f"{j}) overwrote memory it shares (a view and its base). Its gradient "
                        f"would be wrong. Take the view after the write, write through the "
                        f"base array, or copy the view first (v = v.copy())."
                    )


def _opname(rec):
    rules = rec._rules
    if rules is _write_back:
        return "setitem"
    return getattr(rules, "name", getattr(rules, "__name__", "custom"))


# ---------------------------------------------------------------------------
# In-place operators, out=, traced constants
# ---------------------------------------------------------------------------
def inplace(op):
    """``x op= y`` as NumPy does it: compute, then write into x's memory."""

    def iop(self, other):
        result = op(self, other)
        if type(getval(self)) is not _ndarray:  # a scalar: nothing to write into
            return result
        setitem(self, Ellipsis, result)
        return self

    iop.__name__ = f"__i{getattr(op, '__name__', 'op')}__"
    return iop


def write_out(out, result):
    """Implement ``out=``: write ``result`` into the array ``out`` and return ``out``."""
    if type(out) is Tracer or type(out) is Dual:
        setitem(out, Ellipsis, result)
        return out
    raise TypeError(
        "a traced result is being written into a plain NumPy array through out=; that would "
        "cut the gradient. Create the output traced (out = np.zeros_like(x) with x traced) "
        "or use the returned value."
    )


def traced_like(x, plain):
    """``plain`` (a new array) as a traced constant at ``x``'s trace level, so it can be written.

    ``np.zeros_like(x)`` and friends return this for traced ``x``: a buffer that
    ``out[i] = f(x[i])`` loops can fill.
    """
    if type(x) is Dual:
        return Dual(plain, np.zeros_like(getval(plain)), x._tape)
    tape = x._tape
    return record(tape, plain, None, None, None)


def buffer_like(npfun):
    """``np.zeros_like``-style constructor returning a writable traced buffer for traced input."""

    def like(a, *args, **kwargs):
        plain = npfun(getval(a), *args, **kwargs)
        return traced_like(a, plain) if type(a) is Tracer or type(a) is Dual else plain

    like.__name__ = npfun.__name__
    like.__doc__ = (
        f"``numpy.{npfun.__name__}``; for a traced argument the new array is traced too (a "
        f"constant that in-place writes can fill: ``buf[i] = f(x[i])``)."
    )
    return like
