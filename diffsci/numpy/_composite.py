"""NumPy functions built from diffsci primitives: they need no rules of their own.

Each function here has NumPy's signature.  On plain arguments it calls the
NumPy function itself (so results are bit-for-bit NumPy's); when any argument
is traced it composes the primitives of ``_wrap.py``, whose rules then give
the derivative.  Integer-valued helpers (``argsort`` permutations, index
arrays) are computed on plain values and never traced.
"""

from __future__ import annotations

import functools
import operator

import numpy as np

from .._core import getval, is_tracer
from . import _util
from . import _wrap as W

__all__ = [
    "arange", "array", "array_split", "asarray", "average", "broadcast_arrays", "choose",
    "column_stack", "compress", "cross", "diag", "diagflat", "diagonal", "diff", "dsplit", "dstack",
    "fliplr", "flipud", "full", "full_like", "hsplit", "hstack", "inner", "kron", "linspace",
    "logspace", "matrix_transpose", "nanmean", "nansum", "outer", "pad", "ptp", "repeat",
    "rot90", "select", "sort", "split", "take", "take_along_axis", "trace", "trapezoid", "vdot",
    "vecdot", "vsplit", "vstack",
]


def _traced(obj):
    """True if ``obj`` is traced or a (nested) list/tuple holding a traced value."""
    if is_tracer(obj):
        return True
    if type(obj) in (list, tuple):
        return any(_traced(o) for o in obj)
    return False


def _numpy_on_plain(np_fun, arrays=()):
    """Run ``np_fun`` itself when no argument is traced; the decorated composite otherwise.

    ``arrays``: the positions of array_like arguments (``None``: every position; the
    default, none).  A list or tuple holding traced values there is first made one traced
    array, as NumPy makes any array_like an array (``median([x, y])``).  Functions taking
    sequences of arrays (``hstack``, ``block``, ``multi_dot`` ...) leave it empty.
    """
    def deco(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            if _traced(args) or _traced(tuple(kwargs.values())):
                if arrays != ():
                    args = _lists_to_arrays(args, arrays)
                return f(*args, **kwargs)
            return np_fun(*args, **kwargs)
        return wrapper
    return deco


def _lists_to_arrays(args, positions):
    return tuple(array(a) if (positions is None or i in positions) and type(a) in (list, tuple)
                 and _traced(a) else a for i, a in enumerate(args))


def _axis(axis, ndim):
    return operator.index(axis) % ndim if ndim else 0


def _along(axis, index):
    """An index tuple selecting ``index`` along ``axis``."""
    return (slice(None),) * axis + (index,)


# ---------------------------------------------------------------- reductions
@_numpy_on_plain(np.average, arrays=(0,))
def average(a, axis=None, weights=None, returned=False, *, keepdims=np._NoValue):
    keep = keepdims is not np._NoValue and keepdims
    if weights is None:
        avg = W.mean(a, axis, keepdims=keep)
        scl = np.asarray(np.size(getval(a)) / np.size(getval(avg)), np.result_type(getval(avg)))
        scl = np.broadcast_to(scl, np.shape(getval(avg)))
    else:
        shape, wshape = np.shape(getval(a)), np.shape(getval(weights))
        wgt = weights
        if shape != wshape:
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
            axes = tuple(_axis(ax, len(shape)) for ax in axes)
            if wshape != tuple(shape[ax] for ax in axes):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            wgt = W.transpose(wgt, tuple(np.argsort(axes)))
            wgt = W.reshape(wgt, tuple(s if i in axes else 1 for i, s in enumerate(shape)))
        scl = W.sum(W.broadcast_to(wgt, shape), axis, keepdims=keep)
        if _util.observed(lambda v: bool(np.any(v == 0.0)), scl):  # a guard under jit
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        avg = W.sum(W.multiply(a, wgt), axis, keepdims=keep) / scl
    if returned:
        if np.shape(getval(scl)) != np.shape(getval(avg)):
            scl = W.broadcast_to(scl, np.shape(getval(avg)))
        return avg, scl
    return avg


@_numpy_on_plain(np.ptp, arrays=(0,))
def ptp(a, axis=None, out=None, keepdims=np._NoValue):
    """Peak to peak, ``max - min`` (ties share the gradient as in ``max``/``min``)."""
    keep = keepdims is not np._NoValue and keepdims
    return W.amax(a, axis, keepdims=keep) - W.amin(a, axis, keepdims=keep)


@_numpy_on_plain(np.nansum, arrays=(0,))
def nansum(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
           where=np._NoValue):
    kw = {k: v for k, v in (("keepdims", keepdims), ("initial", initial), ("where", where))
          if v is not np._NoValue}
    return W.sum(W.where(_util.value_mask(np.isnan, a), 0, a), axis, dtype, **kw)


@_numpy_on_plain(np.nanmean, arrays=(0,))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, *, where=np._NoValue):
    keep = keepdims is not np._NoValue and keepdims
    ok = _util.value_mask(np.logical_not, _util.value_mask(np.isnan, a))
    if where is not np._NoValue:
        ok = _util.value_mask(np.logical_and, ok, where)
    count = np.sum(ok, axis, keepdims=keep, dtype=np.finfo(np.result_type(getval(a))).dtype)
    return W.sum(W.where(ok, a, 0), axis, dtype, keepdims=keep) / count


@_numpy_on_plain(np.diff, arrays=(0,))
def diff(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    nd = np.ndim(getval(a))
    axis = _axis(axis, nd)
    parts = []
    for extra in (prepend, a, append):
        if extra is np._NoValue:
            continue
        if extra is not a and np.ndim(getval(extra)) == 0:
            shape = list(np.shape(getval(a)))
            shape[axis] = 1
            extra = W.broadcast_to(extra, shape)
        parts.append(extra)
    if len(parts) > 1:
        a = W.concatenate(parts, axis=axis)
    for _ in range(n):
        a = W.subtract(W.getitem(a, _along(axis, slice(1, None))),
                       W.getitem(a, _along(axis, slice(None, -1))))
    return a


@_numpy_on_plain(np.trapezoid, arrays=(0, 1))
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Trapezoidal rule; differentiable in ``y`` and in the sample points ``x``."""
    nd = np.ndim(getval(y))
    axis = _axis(axis, nd)
    if x is None:
        d = dx
    elif np.ndim(getval(x)) == 1:
        d = diff(x)
        d = W.reshape(d, [-1 if i == axis else 1 for i in range(nd)])
    else:
        d = diff(x, axis=axis)
    mid = W.add(W.getitem(y, _along(axis, slice(1, None))),
                W.getitem(y, _along(axis, slice(None, -1))))
    return W.sum(W.multiply(d, mid) / 2.0, axis)


# ---------------------------------------------------------------- shapes
def _stack_along(arrays, make, axis, dtype, casting):
    arrays = [make(a) for a in arrays]
    return W.concatenate(arrays, axis=axis, dtype=dtype, casting=casting)


@_numpy_on_plain(np.hstack, arrays=())
def hstack(tup, *, dtype=None, casting="same_kind"):
    first = np.ndim(getval(tup[0]))
    axis = 0 if first <= 1 else 1
    return _stack_along(tup, W._atleast_1d_p, axis, dtype, casting)


@_numpy_on_plain(np.vstack, arrays=())
def vstack(tup, *, dtype=None, casting="same_kind"):
    return _stack_along(tup, W._atleast_2d_p, 0, dtype, casting)


@_numpy_on_plain(np.dstack, arrays=())
def dstack(tup):
    return _stack_along(tup, W._atleast_3d_p, 2, None, "same_kind")


def _as_column(v):
    return W.reshape(v, (-1, 1)) if np.ndim(getval(v)) < 2 else v


@_numpy_on_plain(np.column_stack, arrays=())
def column_stack(tup):
    return _stack_along(tup, _as_column, 1, None, "same_kind")


@_numpy_on_plain(np.array_split, arrays=(0,))
def array_split(ary, indices_or_sections, axis=0):
    """Pieces are ``getitem`` slices of ``ary``: each is traced separately."""
    n = np.shape(getval(ary))[axis]
    try:
        points = [0, *indices_or_sections, n]
    except TypeError:
        sections = int(indices_or_sections)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extra = divmod(n, sections)
        sizes = [0] + extra * [each + 1] + (sections - extra) * [each]
        points = np.cumsum(sizes).tolist()
    ax = _axis(axis, np.ndim(getval(ary)))
    return [W.getitem(ary, _along(ax, slice(points[i], points[i + 1])))
            for i in range(len(points) - 1)]


@_numpy_on_plain(np.split, arrays=(0,))
def split(ary, indices_or_sections, axis=0):
    if np.ndim(indices_or_sections) == 0:
        n = np.shape(getval(ary))[axis]
        if n % int(indices_or_sections):
            raise ValueError("array split does not result in an equal division")
    return array_split(ary, indices_or_sections, axis)


@_numpy_on_plain(np.hsplit, arrays=(0,))
def hsplit(ary, indices_or_sections):
    if np.ndim(getval(ary)) == 0:
        raise ValueError("hsplit only works on arrays of 1 or more dimensions")
    return split(ary, indices_or_sections, 1 if np.ndim(getval(ary)) > 1 else 0)


@_numpy_on_plain(np.vsplit, arrays=(0,))
def vsplit(ary, indices_or_sections):
    if np.ndim(getval(ary)) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, 0)


@_numpy_on_plain(np.dsplit, arrays=(0,))
def dsplit(ary, indices_or_sections):
    if np.ndim(getval(ary)) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


@_numpy_on_plain(np.repeat, arrays=(0,))
def repeat(a, repeats, axis=None):
    if axis is None:
        a, axis = W.ravel(a), 0
    shape = list(np.shape(getval(a)))
    axis = _axis(axis, len(shape))
    reps = np.asarray(getval(repeats))
    if reps.size == 1:  # one count: broadcast a new axis and merge it
        r = int(reps.reshape(()))
        x = W.broadcast_to(W.expand_dims(a, axis + 1), [*shape[:axis + 1], r, *shape[axis + 1:]])
        return W.reshape(x, [*shape[:axis], shape[axis] * r, *shape[axis + 1:]])
    return W.getitem(a, _along(axis, np.repeat(np.arange(shape[axis]), reps)))


@_numpy_on_plain(np.broadcast_arrays, arrays=None)
def broadcast_arrays(*args, subok=False):
    shape = np.broadcast_shapes(*[np.shape(getval(a)) for a in args])
    return tuple(W.broadcast_to(a, shape) for a in args)


@_numpy_on_plain(np.fliplr, arrays=(0,))
def fliplr(m):
    return W.flip(m, 1)


@_numpy_on_plain(np.flipud, arrays=(0,))
def flipud(m):
    return W.flip(m, 0)


@_numpy_on_plain(np.rot90, arrays=(0,))
def rot90(m, k=1, axes=(0, 1)):
    k %= 4
    if k == 0:
        return W.getitem(m, slice(None))
    if k == 2:
        return W.flip(W.flip(m, axes[0]), axes[1])
    order = list(range(np.ndim(getval(m))))
    order[axes[0]], order[axes[1]] = order[axes[1]], order[axes[0]]
    if k == 1:
        return W.transpose(W.flip(m, axes[1]), order)
    return W.flip(W.transpose(m, order), axes[1])


@_numpy_on_plain(np.matrix_transpose, arrays=(0,))
def matrix_transpose(x, /):
    return W.swapaxes(x, -1, -2)


_GATHER_PAD_MODES = ("edge", "reflect", "symmetric", "wrap")


@_numpy_on_plain(np.pad, arrays=(0,))
def pad(array, pad_width, mode="constant", **kwargs):
    """``numpy.pad``, differentiable in ``array`` for modes 'constant' and 'empty' (the
    padding gets no gradient; ``constant_values`` is not differentiated) and for the
    gathering modes 'edge', 'reflect', 'symmetric', 'wrap' (even ``reflect_type``)."""
    if mode in ("constant", "empty"):
        return W._pad_p(array, pad_width=pad_width, mode=mode, **kwargs)
    if mode in _GATHER_PAD_MODES and kwargs.get("reflect_type", "even") == "even":
        # Each output element copies one input element: pad the element indices instead.
        shape = np.shape(getval(array))
        source = np.pad(np.arange(int(np.prod(shape))).reshape(shape), pad_width, mode, **kwargs)
        return W.getitem(W.ravel(array), source)
    raise NotImplementedError(
        f"diffsci.numpy.pad: mode={mode!r} (with {kwargs}) is not differentiable yet; "
        f"supported: 'constant', 'empty', {', '.join(map(repr, _GATHER_PAD_MODES))}")


@_numpy_on_plain(np.diagonal, arrays=(0,))
def diagonal(a, offset=0, axis1=0, axis2=1):
    x = W.moveaxis(a, (axis1, axis2), (-2, -1))
    n1, n2 = np.shape(getval(x))[-2:]
    d = max(0, min(n1, n2 - offset) if offset >= 0 else min(n1 + offset, n2))
    i = np.arange(d) + max(0, -offset)
    return W.getitem(x, (Ellipsis, i, i + offset))


@_numpy_on_plain(np.diag, arrays=(0,))
def diag(v, k=0):
    nd = np.ndim(getval(v))
    if nd == 2:
        return diagonal(v, k)
    if nd != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = np.shape(getval(v))[0] + abs(k)
    i = np.arange(n - abs(k)) + max(0, -k)
    zeros = np.zeros((n, n), np.result_type(getval(v)))
    return W.scatter_add(zeros, v, idx=(i, i + k))


@_numpy_on_plain(np.diagflat, arrays=(0,))
def diagflat(v, k=0):
    return diag(W.ravel(v), k)


@_numpy_on_plain(np.trace, arrays=(0,))
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    return W.sum(diagonal(a, offset, axis1, axis2), -1, dtype)


# ---------------------------------------------------------------- products
@_numpy_on_plain(np.vdot, arrays=(0, 1))
def vdot(a, b, /):
    return W.sum(W.multiply(W.conjugate(W.ravel(a)), W.ravel(b)))


@_numpy_on_plain(np.vecdot, arrays=(0, 1))
def vecdot(x1, x2, /, *, axis=-1, **kwargs):
    return W.sum(W.multiply(W.conjugate(x1), x2), axis=axis)


@_numpy_on_plain(np.outer, arrays=(0, 1))
def outer(a, b, out=None):
    return W.multiply(W.reshape(a, (-1, 1)), W.reshape(b, (1, -1)))


@_numpy_on_plain(np.inner, arrays=(0, 1))
def inner(a, b, /):
    if np.ndim(getval(a)) == 0 or np.ndim(getval(b)) == 0:
        return W.multiply(a, b)
    return W.tensordot(a, b, axes=([-1], [-1]))


@_numpy_on_plain(np.kron, arrays=(0, 1))
def kron(a, b):
    sa, sb = np.shape(getval(a)), np.shape(getval(b))
    nd = max(len(sa), len(sb))
    sa, sb = (1,) * (nd - len(sa)) + sa, (1,) * (nd - len(sb)) + sb
    a_ = W.reshape(a, [s for n in sa for s in (n, 1)])
    b_ = W.reshape(b, [s for n in sb for s in (1, n)])
    return W.reshape(W.multiply(a_, b_), [x * y for x, y in zip(sa, sb)])


@_numpy_on_plain(np.cross, arrays=(0, 1))
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = W.moveaxis(a, axisa, -1), W.moveaxis(b, axisb, -1)
    na, nb = np.shape(getval(a))[-1], np.shape(getval(b))[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    ac = [W.getitem(a, (Ellipsis, i)) for i in range(na)]
    bc = [W.getitem(b, (Ellipsis, i)) for i in range(nb)]
    if na == nb == 2:
        return ac[0] * bc[1] - ac[1] * bc[0]
    a0, a1, a2 = ac if na == 3 else (*ac, 0)
    b0, b1, b2 = bc if nb == 3 else (*bc, 0)
    c = W.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return W.moveaxis(c, -1, axisc)


# ---------------------------------------------------------------- indexing
def _in_range(idx, n, mode):
    """Indices into an axis of length ``n`` as ``np.take``'s ``mode`` reads them (0 <= i < n)."""
    idx = np.asarray(idx)
    if mode == "wrap":
        return np.mod(idx, n)
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    if idx.size and (idx.min() < -n or idx.max() >= n):
        raise IndexError(f"index {idx.min() if idx.min() < -n else idx.max()} is out of bounds "
                         f"for axis with size {n}")
    return np.where(idx < 0, idx + n, idx)


def _flat_take(idx, shape, axis, mode):
    """Positions in ``ravel(a)`` of ``np.take(a, idx, axis)`` for ``a`` of ``shape``."""
    n, post = shape[axis], int(np.prod(shape[axis + 1:], dtype=np.int64))
    idx = _in_range(idx, n, mode)
    pre = np.arange(int(np.prod(shape[:axis], dtype=np.int64))).reshape((-1,) + (1,) * idx.ndim)
    flat = ((pre * n + idx)[..., None] * post + np.arange(post)).astype(np.intp)
    return flat.reshape(shape[:axis] + idx.shape + shape[axis + 1:])


def _flat_along(idx, shape, axis):
    """Positions in ``ravel(a)`` of ``np.take_along_axis(a, idx, axis)``."""
    idx = _in_range(idx, shape[axis], "raise")
    nd = len(shape)
    grids = [idx if d == axis else
             np.arange(shape[d]).reshape((1,) * d + (-1,) + (1,) * (nd - d - 1))
             for d in range(nd)]
    return np.ravel_multi_index(np.broadcast_arrays(*grids), shape)


def _argsort(a, axis, kind, stable):
    return np.argsort(a, axis=axis, kind=kind, stable=stable)


@_numpy_on_plain(np.take, arrays=(0,))
def take(a, indices, axis=None, out=None, mode="raise"):
    if axis is None:
        a, axis = W.ravel(a), 0
    shape = np.shape(getval(a))
    if is_tracer(indices):  # under diffsci.jit: the positions recorded, recomputed by the code
        axis = _axis(axis, len(shape))
        return W.getitem(W.ravel(a), _util.value_mask(_flat_take, indices, shape, axis, mode))
    n = shape[axis]
    idx = np.asarray(getval(indices))
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    return W.getitem(a, _along(_axis(axis, np.ndim(getval(a))), idx))


@_numpy_on_plain(np.take_along_axis, arrays=(0,))
def take_along_axis(arr, indices, axis=-1):
    if axis is None:
        arr, axis = W.ravel(arr), 0
    shape = np.shape(getval(arr))
    nd = len(shape)
    axis = _axis(axis, nd)
    if is_tracer(indices):  # under diffsci.jit (a recorded argsort, an integer input)
        return W.getitem(W.ravel(arr), _util.value_mask(_flat_along, indices, shape, axis))
    idx = tuple(np.asarray(getval(indices)) if d == axis
                else np.arange(shape[d]).reshape((1,) * d + (-1,) + (1,) * (nd - d - 1))
                for d in range(nd))
    return W.getitem(arr, idx)


@_numpy_on_plain(np.select, arrays=())
def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    out = default
    for cond, choice in zip(reversed(condlist), reversed(choicelist)):
        out = W.where(cond, choice, out)
    return out


@_numpy_on_plain(np.choose, arrays=())
def choose(a, choices, out=None, mode="raise"):
    a = np.asarray(getval(a))
    n = len(choices)
    if mode == "wrap":
        a = np.mod(a, n)
    elif mode == "clip":
        a = np.clip(a, 0, n - 1)
    elif np.any((a < 0) | (a >= n)):
        raise ValueError("invalid entry in choice array")
    return select([a == i for i in range(n)], list(choices))


@_numpy_on_plain(np.compress, arrays=(1,))
def compress(condition, a, axis=None, out=None):
    return take(a, np.nonzero(np.asarray(getval(condition)))[0], axis)


@_numpy_on_plain(np.sort, arrays=(0,))
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """Sorted copy; the gradient follows the sorting permutation (ties: the stable order)."""
    if axis is None:
        a, axis = W.ravel(a), -1
    if order is not None:
        perm = np.argsort(getval(a), axis=axis, kind=kind, order=order, stable=stable)
    else:  # recorded under diffsci.jit: the compiled code sorts its own input
        perm = _util.value_mask(_argsort, a, axis, kind, stable)
    return take_along_axis(a, perm, axis)


# ---------------------------------------------------------------- constructors
def _cast(x, dtype):
    if dtype is None or np.result_type(getval(x)) == np.dtype(dtype):
        return x
    return W.astype(x, dtype)


@_numpy_on_plain(np.full, arrays=(1,))
def full(shape, fill_value, dtype=None, order="C", **kwargs):
    return _cast(W.broadcast_to(fill_value, shape), dtype)


@_numpy_on_plain(np.full_like, arrays=(0, 1))
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    shape = np.shape(getval(a)) if shape is None else shape
    dtype = np.result_type(getval(a)) if dtype is None else dtype
    return W.broadcast_to(_cast(fill_value, dtype), shape)


def _arange_length(*args):
    return len(np.arange(*args))


@_numpy_on_plain(np.arange, arrays=())
def arange(*args, dtype=None, **kwargs):
    """``numpy.arange``; traced ``start``/``step`` give ``start + i * step`` (differentiable)."""
    n = _util.observed(_arange_length, *args)  # the length: a guard under diffsci.jit
    start = args[0] if len(args) > 1 else 0
    step = args[2] if len(args) > 2 else 1
    return _cast(start + np.arange(n) * step, dtype)


@_numpy_on_plain(np.linspace, arrays=(0, 1))
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, **kwargs):
    """``numpy.linspace``, differentiable in ``start`` and ``stop``."""
    dt = np.result_type(getval(start), getval(stop), float(num)) if dtype is None else dtype
    div = num - 1 if endpoint else num
    delta = W.subtract(stop, start)
    nd = np.ndim(getval(delta))
    t = np.arange(num, dtype=float).reshape((-1,) + (1,) * nd)
    step = delta / div if div > 0 else delta * np.nan
    y = W.add(t * step, start) if div > 0 else W.add(t * delta, start)
    if endpoint and num > 1:
        last = W.broadcast_to(stop, (1,) + np.shape(getval(delta)))
        y = W.concatenate([W.getitem(y, slice(None, -1)), last], axis=0)
    y = _cast(W.moveaxis(y, 0, axis) if axis != 0 else y, dt)
    return (y, step) if retstep else y


@_numpy_on_plain(np.logspace, arrays=(0, 1))
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    y = linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    return _cast(W.power(base, y), dtype)


def asarray(a, dtype=None, order=None, **kwargs):
    """``numpy.asarray`` that keeps traced values traced (a list of them is stacked)."""
    if is_tracer(a):
        return _cast(a, dtype)
    if _traced(a):
        return array(a, dtype)
    return np.asarray(a, dtype, order, **kwargs)


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, **kwargs):  # noqa: A002
    """``numpy.array`` that keeps traced values traced (nested lists of them are stacked)."""
    if not _traced(object):
        return np.array(object, dtype, copy=copy, order=order, subok=subok, ndmin=ndmin,
                        **kwargs)
    x = object
    if type(x) in (list, tuple):
        x = W.stack([array(o) for o in x])
    x = _cast(x, dtype)
    nd = np.ndim(getval(x))
    return W.reshape(x, (1,) * (ndmin - nd) + np.shape(getval(x))) if ndmin > nd else x
