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

A traced value used after memory it shares was overwritten through another
name (a view taken before a write to its base, a write through a view,
``y[1:] += 1``) has the right forward value (memory is memory) but a recorded
history that misses the write.  The reverse sweep repairs it: that use gets a
cotangent slot of its own, split cell by cell (matched by element address)
between the value's history and the writes that overwrote its cells
(:func:`sweep_with_repairs`, DERIVATIONS.md (W1)).  Forward mode keeps a log of
each trace's writes and brings a stale dual's tangent up to date when it is
next used (:func:`tangent`, (W2)).  Refused with :class:`InPlaceError`: views
of another dtype sharing the written memory (``.real`` of complex), and writes
on values traced at several levels at once.
"""

from __future__ import annotations

import bisect

import numpy as np

from ._core import _CLOSED, Dual, Tracer, escaped, getval, record

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


class NestedInPlaceError(InPlaceError, TypeError):
    """In-place writes on values traced at several levels at once are refused (not wrong)."""


def _nested_error():
    return NestedInPlaceError(
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
    """Forward mode: write the primal in place and the written cells' tangents.

    The tangent array is copied, then written (tangents may be shared between duals).  Other
    duals whose primal shares the written memory (views, bases) are brought up to date when
    they are next used (:func:`tangent`), from this trace's log of writes: cell by cell, a
    memory cell's tangent is the tangent of the last value written into it.
    """
    trace = x._tape
    t = tangent(x)  # raises for a dual that escaped its jvp
    arr = x._value
    if type(value) is Dual and value._tape is trace:
        vp, vt = value._value, tangent(value)
        if np.result_type(getval(arr)).kind not in "fc":  # an integer buffer truncates
            vt = 0.0
    else:
        vp, vt = value, 0.0
    arr[idx] = vp  # recurses into a lower trace level if the primal is traced
    if type(t) is Tracer or type(t) is Dual or type(vt) is Tracer or type(vt) is Dual:
        raise _nested_error()
    if type(arr) is not _ndarray:
        t = np.array(t, copy=True)
        t[idx] = vt
        x._tangent = t
        return
    t = np.array(np.broadcast_to(t, arr.shape), copy=True)
    t[idx] = vt
    x._tangent = t
    sa, order = _sorted_cells(addresses(arr)[idx])
    vals = np.ravel(t[idx])[order]
    root = _root(arr)
    if trace.writes is None:
        trace.writes, trace.by_root = [], {}
    trace.by_root.setdefault(id(root), []).append(len(trace.writes))
    trace.writes.append((root, sa, vals, arr.dtype.itemsize))  # root: keeps the memory alive
    x._ver = len(trace.writes)


def tangent(d):
    """The tangent of dual ``d``, brought up to date with the in-place writes of its trace
    (DERIVATIONS.md (W2))."""
    log = d._tape.writes
    if log is None:
        return d._tangent
    if log is _CLOSED:
        raise escaped(d._tape)
    n = len(log)
    ver = getattr(d, "_ver", 0)
    if ver == n:
        return d._tangent
    d._ver = n
    p = d._value
    if type(p) is not _ndarray:
        return d._tangent
    ks = d._tape.by_root.get(id(_root(p)))
    if not ks:
        return d._tangent
    t = None
    da = None
    for k in ks[bisect.bisect_left(ks, ver):]:
        _, sa, vals, isz = log[k]
        if da is None:
            da = addresses(p).ravel()
        pos, hit = _lookup(sa, da)
        if not hit.any():
            continue
        if p.dtype.itemsize != isz or not all(s % isz == 0 for s in p.strides):
            raise InPlaceError(
                "forward mode: a value was used after an in-place write overwrote part of "
                "its memory through a view of another dtype (.real, .imag or .view()); write "
                "through an array of the same dtype, or copy the view first (v = v.copy())"
            )
        if t is None:
            t = np.array(np.broadcast_to(d._tangent, p.shape), order="C", copy=True)
            tf = t.reshape(-1)
        m = np.flatnonzero(hit)
        tf[m] = vals[pos[m]]
    if t is not None:
        d._tangent = t
    return d._tangent


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
    if vpar is not None and rec._value.dtype.kind in "fc":  # an integer buffer truncates
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
    """Before a sweep over a tape with writes: mark the writes for undo."""
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


def addresses(a):
    """The byte address of every element of the array ``a`` (an int64 array of its shape)."""
    out = np.full(a.shape, a.ctypes.data, np.int64)
    nd = a.ndim
    for k, (n, s) in enumerate(zip(a.shape, a.strides)):
        if n > 1 and s:
            out += (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (nd - k - 1))
    return out


def cell_map(dst, src_addr):
    """Match the cells of array ``dst`` with the flat cells of a written region.

    ``src_addr`` are the region's element addresses (flat, in write order; for a fancy index
    a cell written twice keeps its last write, as NumPy does).  Returns ``(m, n)``: flat
    positions in ``dst`` and in the region holding the same memory cell.
    """
    sa, order = _sorted_cells(src_addr)
    pos, hit = _lookup(sa, addresses(dst).ravel())
    m = np.flatnonzero(hit)
    return m, order[pos[m]]


def _sorted_cells(addr):
    """Sorted distinct addresses of a written region and, for each, the flat position of its
    last write (a fancy index writing a cell twice keeps the last, as NumPy does)."""
    ra = addr.ravel()
    order = np.argsort(ra, kind="stable")
    sa = ra[order]
    if sa.size > 1:
        last = np.ones(sa.size, bool)
        last[:-1] = sa[:-1] != sa[1:]  # of equal addresses keep the last (stable sort)
        sa, order = sa[last], order[last]
    return sa, order


def _lookup(sa, da):
    """For addresses ``da``: their positions in the sorted ``sa`` and whether they are there."""
    if sa.size == 0:
        return np.zeros(da.size, np.intp), np.zeros(da.size, bool)
    pos = np.minimum(np.searchsorted(sa, da), sa.size - 1)
    return pos, sa[pos] == da


def _aligned(a, b):
    """True if the elements of arrays a and b sharing memory coincide cell for cell."""
    isz = a.dtype.itemsize
    if b.dtype.itemsize != isz:
        return False
    return (all(s % isz == 0 for s in a.strides + b.strides)
            and (a.ctypes.data - b.ctypes.data) % isz == 0)


class _Repair:
    """A use (record ``i``) of a value (record ``p``) whose memory was written, after ``p``
    was made and before ``i``, through another name (a view and its base, two views).

    The value record ``i`` read is ``p``'s memory as the writes left it: cell by cell, either
    ``p``'s own value or the value of the last write into that cell.  So the cotangent record
    ``i`` sends to ``p`` is split: the cells a write overwrote go to that write's value,
    the rest to ``p``.  ``parts`` holds, latest write first, ``(value record, m, n,
    region shape, value shape, value dtype)`` with ``m``/``n`` the matching cells (flat
    positions in ``p``'s value and in the write's region).  Derivation: DERIVATIONS.md (W1).
    """

    __slots__ = ("i", "pos", "p", "slot", "parts", "keep")

    def __init__(self, i, pos, p, parts, size):
        self.i, self.pos, self.p, self.parts = i, pos, p, parts
        keep = np.ones(size, bool)
        for part in parts:
            keep[part[1]] = False
        self.keep = keep
        self.slot = None

    def resolve(self, grads, owned):
        from ._core import _UNDO, _add
        from .numpy._util import unbroadcast

        g = grads[self.slot]
        grads[self.slot] = None
        if g is None or g is _UNDO:
            return
        shape = np.shape(getval(g))
        flat = np.reshape(g, (-1,))
        for vpar, m, n, rshape, vshape, vdtype in self.parts:
            if vpar is None or m.size == 0:
                continue
            size = int(np.prod(rshape, dtype=np.int64))
            gr = np.zeros(size, np.result_type(getval(g)))
            gr = _scatter(gr, flat[m], n)
            gv = unbroadcast(np.reshape(gr, rshape), np.zeros(vshape, vdtype))
            if np.iscomplexobj(getval(gv)) and vdtype.kind != "c":
                gv = np.real(gv)
            _add(grads, owned, vpar, gv)
        if self.keep.all():
            _add(grads, owned, self.p, g)
        elif self.keep.any():
            _add(grads, owned, self.p, np.reshape(flat * self.keep, shape))


def _scatter(base, values, idx):
    from .numpy import _wrap as W

    if type(values) is Tracer or type(values) is Dual:
        return W.scatter_add(base, values, idx=idx)
    np.add.at(base, idx, values)  # a broadcast view maps several cells to one position
    return base


def _plan(tape):
    """The repairs a sweep over ``tape`` needs (cached on the tape; see :class:`_Repair`)."""
    recs = tape.records
    cached = tape.plan
    if cached is not None and cached[0] == len(recs):
        return cached[1]
    by_root = {}
    for j in tape.writes:
        w = recs[j]
        by_root.setdefault(id(_root(w._value)), []).append(j)
    repairs = []
    for i, r in enumerate(recs):
        parents = r._parents
        if parents is None:
            continue
        for pos, p in enumerate((parents,) if type(parents) is int else parents):
            if p is None or type(p) is not int:
                continue
            v = recs[p]._value
            if type(v) is not _ndarray:
                continue
            js = by_root.get(id(_root(v)))
            if not js:
                continue
            lo, hi = bisect.bisect_right(js, p), bisect.bisect_left(js, i)
            if lo >= hi:
                continue
            parts = _parts(recs, r, i, p, v, js[lo:hi])
            if parts:
                repairs.append(_Repair(i, pos, p, parts, v.size))
    tape.plan = (len(recs), repairs)
    return repairs


def _parts(recs, r, i, p, v, js):
    """For a use of ``v`` (record p) at record i, the writes in ``js`` that overwrote cells of
    ``v`` (latest first), with the matching cells; raises if cells do not line up."""
    parts = []
    left = np.ones(v.size, bool)
    for j in reversed(js):
        w = recs[j]
        idx, basic = w._args[0], w._args[1]
        if not _overlaps(v, _region(w._value, idx, basic)):
            continue
        if not _aligned(v, w._value):
            raise InPlaceError(
                f"the operation '{_opname(r)}' (tape record {i}) used a value made by "
                f"'{_opname(recs[p])}' (record {p}) after an in-place write (record {j}) "
                f"overwrote part of its memory through a view of another dtype (.real, .imag "
                f"or .view()). diffsci cannot tell which part of each element changed; write "
                f"through an array of the same dtype, or copy the view first (v = v.copy())."
            )
        m, n = cell_map(v, addresses(w._value)[idx])
        sel = left[m]
        m, n = m[sel], n[sel]
        if m.size == 0:
            continue
        left[m] = False
        vpar = w._parents[1] if w._value.dtype.kind in "fc" else None  # integers truncate
        _, _, _, _, vshape, vdtype = w._args
        parts.append((vpar, m, n, np.shape(w._args[3]), vshape, vdtype))
    return parts


def sweep_with_repairs(tape, grads, owned, sweep):
    """Run ``sweep`` over ``tape`` with the repairs of :func:`_plan` applied.

    Each repaired use gets a cotangent slot of its own past the end of ``grads`` (its
    record's parent index points there during the sweep); right after the sweep passes the
    using record, the slot's cotangent is split between the value and the writes.
    """
    repairs = _plan(tape)
    if not repairs:
        return sweep(grads, len(grads), 0)
    recs = tape.records
    saved = []
    for rep in repairs:
        rep.slot = len(grads)
        grads.append(None)
        r = recs[rep.i]
        saved.append((r, r._parents))
        if type(r._parents) is int:
            r._parents = rep.slot
        else:
            ps = list(r._parents)
            ps[rep.pos] = rep.slot
            r._parents = tuple(ps)
    try:
        hi = len(recs)
        k = len(repairs) - 1
        while k >= 0:
            i = repairs[k].i
            sweep(grads, hi, i)  # records hi-1 ... i
            while k >= 0 and repairs[k].i == i:
                repairs[k].resolve(grads, owned)
                k -= 1
            hi = i
        sweep(grads, hi, 0)
    finally:
        for r, ps in saved:
            r._parents = ps
    return grads


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


def write_out(out, result, name="out=", broadcast=False):
    """Implement ``out=``: write ``result`` into the array ``out`` and return ``out``.

    As in NumPy, ``out`` must have the result's shape (a ufunc's result may broadcast to it);
    a traced ``out`` records the write (an integer buffer truncates: no derivative flows
    through it); a plain ``out`` cannot hold a traced result.
    """
    rshape, oshape = np.shape(getval(result)), np.shape(getval(out))
    if rshape != oshape and not (broadcast and np.broadcast_shapes(rshape, oshape) == oshape):
        raise ValueError(f"{name}: out= has shape {oshape}, the result has shape {rshape}")
    if type(out) is Tracer or type(out) is Dual:
        setitem(out, Ellipsis, result)
        return out
    if type(result) is not Tracer and type(result) is not Dual:
        np.copyto(out, result, casting="unsafe")
        return out
    raise TypeError(
        f"{name}: a traced result is being written into a plain NumPy array through out=; "
        f"that would cut the gradient. Create the output traced (out = np.zeros_like(x) with "
        f"x traced) or use the returned value."
    )


def ufunc_out(call, ufunc, inputs, kwargs):
    """``ufunc(*inputs, out=..., where=...)`` on traced values, as NumPy computes it.

    ``out`` may come positionally (after the inputs) or by keyword; ``where`` keeps ``out``'s
    old values where it is False.  ``call(*inputs, **kwargs)`` computes the plain result.
    """
    name = f"numpy.{ufunc.__name__}"
    kwargs = dict(kwargs or {})
    out = kwargs.pop("out", None)
    where = kwargs.pop("where", True)
    if len(inputs) > ufunc.nin:
        if out is not None or len(inputs) > ufunc.nin + 1:
            raise TypeError(f"{name}: out given twice, or too many positional arguments")
        inputs, out = inputs[:ufunc.nin], inputs[ufunc.nin]
    if type(out) is tuple:
        if len(out) != 1:
            raise TypeError(f"{name}: out= with several outputs is not supported on traced values")
        out = out[0]
    if out is None:
        if where is not True:
            raise ValueError(
                f"{name}: where= without out= leaves the masked entries uninitialised (NumPy "
                f"fills them with whatever memory holds); pass out= to keep its values there")
        return call(*inputs, **kwargs)
    casting = kwargs.pop("casting", "same_kind")
    result = call(*inputs, **kwargs)
    rdt, odt = np.result_type(getval(result)), np.result_type(getval(out))
    if not np.can_cast(rdt, odt, casting=casting):
        raise TypeError(f"{name}: cannot cast the output from {rdt} to out's {odt} with "
                        f"casting rule {casting!r} (as in NumPy)")
    if where is not True:
        from .numpy import _wrap as W

        mask = getval(where)
        result = W.where(np.broadcast_to(mask, np.shape(getval(out))), result, out)
    return write_out(out, result, name, broadcast=True)


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
