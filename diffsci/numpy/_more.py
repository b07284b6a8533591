"""More of NumPy, differentiable: built from diffsci primitives (no rules of their own).

Like ``_composite.py``: on plain arguments each function is NumPy's own (results are
bit-for-bit NumPy's); when an argument is traced it composes primitives, whose rules give
every derivative to any order.  Integer-valued helpers (sort permutations, interval
indices, index maps of ``insert``/``delete``) are computed on plain values.  The one
primitive here, the N-d convolution ``_conv_p`` ('full' or 'valid'), has its rules in
``_vjps.py`` / ``_jvps.py`` (``DERIVATIONS.md`` §Convolution).

Conventions where a function is not differentiable (same as NumPy-AD systems):

==================  ===========================================================
function            convention
==================  ===========================================================
interp              at a knot ``x == xp[j]`` the interval to the right is used
                    (``xp[j] <= x < xp[j+1]``); outside ``xp`` the constant
                    ``left``/``right`` (default ``fp[0]``, ``fp[-1]``)
median, quantile    the gradient follows the sorting permutation (ties: the
                    stable order); ``q`` is differentiable for the continuous
                    methods (``linear``, ``hazen``, ``weibull`` ...)
nanmax, nanmin      shared among tied extrema (as ``max``); NaNs get 0
nan* reductions     NaN entries get a zero gradient
partition           the gradient follows the partition's permutation
unwrap              the 2π corrections are constants: the gradient is identity
real_if_close       ``real(a)`` when the imaginary parts are all within ``tol``
==================  ===========================================================
"""

from __future__ import annotations

import builtins
import functools
import math
import warnings

import numpy as np

from .._core import getval, is_tracer, nondifferentiable, primitive
from . import _composite as C
from . import _util
from . import _wrap as W
from ._composite import _along, _axis, _cast, _numpy_on_plain, _traced
from ._tracer_methods import register_numpy_function

__all__ = [
    "append", "apply_along_axis", "block", "c_", "convolve", "copysign", "corrcoef", "correlate",
    "cov", "cumulative_prod", "cumulative_sum", "delete", "divmod", "ediff1d", "extract",
    "frexp", "geomspace", "gradient", "insert", "interp", "ldexp", "matvec", "median",
    "meshgrid", "modf", "nancumprod", "nancumsum", "nanmax", "nanmedian", "nanmin",
    "nanpercentile", "nanprod", "nanquantile", "nanstd", "nanvar", "partition", "percentile",
    "piecewise", "poly", "polyadd", "polyder", "polyfit", "polyint", "polymul", "polysub",
    "polyval", "quantile", "r_", "real_if_close", "resize", "rollaxis",
    "sort_complex", "trim_zeros", "unstack", "unwrap", "vander", "vecmat",
]


def _arr(x):
    """``x`` as an array: traced values stay traced (a list holding them is stacked)."""
    if is_tracer(x):
        return x
    return C.asarray(x)


def _shape(x):
    return np.shape(getval(x))


# ---------------------------------------------------------------- lists of traced values
def accept_lists(prim):
    """``prim`` that first stacks positional arguments given as (nested) lists or tuples of
    traced values (``mean([x, y])``), as NumPy converts any array_like.  The wrapper keeps
    the primitive's attributes (rules, ``binary`` fast path) so it stands in for it."""
    @functools.wraps(prim)
    def f(a=_NO, b=_NO, /, *rest, **kwargs):
        # the common call (one or two arrays, no lists) in as few steps as possible: this
        # wrapper sits on every dnp.<name>(x) call (benchmarks/bench_overhead.py, W1)
        ta, tb = type(a), type(b)
        if not rest and ta is not list and ta is not tuple and tb is not list \
                and tb is not tuple:
            if b is _NO:
                return prim(a, **kwargs) if a is not _NO else prim(**kwargs)
            return prim(a, b, **kwargs)
        args = tuple(x for x in (a, b) if x is not _NO) + rest
        for x in args:
            t = type(x)
            if (t is list or t is tuple) and _traced(x):
                args = tuple(C.array(y) if type(y) in (list, tuple) and _traced(y) else y
                             for y in args)
                break
        return prim(*args, **kwargs)
    return f


class _Missing:
    __slots__ = ()


_NO = _Missing()


# Functions of ``_wrap.py`` (primitives and their thin wrappers) whose array arguments are
# all array_like: exported from diffsci.numpy through ``accept_lists`` (the operators,
# methods and np.<name> dispatch keep calling them directly).
_ARRAY_LIKE_PRIMITIVES = """
add subtract multiply true_divide power float_power negative positive remainder fmod
absolute fabs sqrt cbrt square reciprocal exp exp2 expm1 log log2 log10 log1p logaddexp
logaddexp2 sin cos tan arcsin arccos arctan arctan2 hypot sinh cosh tanh arcsinh arccosh
arctanh deg2rad radians rad2deg degrees sinc maximum minimum fmax fmin real imag conjugate
angle nan_to_num sum mean prod amax amin std var cumsum cumprod ravel transpose copy
matmul dot tensordot reshape moveaxis swapaxes expand_dims squeeze broadcast_to flip roll
tile triu tril where clip astype atleast_1d atleast_2d atleast_3d einsum
""".split()
_ALIASES = {"divide": "true_divide", "pow": "power", "mod": "remainder", "abs": "absolute",
            "asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "arctan2",
            "asinh": "arcsinh", "acosh": "arccosh", "atanh": "arctanh", "conj": "conjugate",
            "max": "amax", "min": "amin", "permute_dims": "transpose"}
LISTABLE = tuple(_ARRAY_LIKE_PRIMITIVES) + tuple(_ALIASES)  # (the names are dnp's)


def listable(ns):
    """Wrap namespace dict ``ns``'s functions named in LISTABLE with :func:`accept_lists`
    (wrapping whatever they are by then: the primitive, or its ``out=`` wrapper)."""
    # ufunc primitives stack sequences of traced values themselves (diffsci._core, with
    # ``stack_sequence``), without a wrapper on their hot path (bench_overhead W1)
    from .. import _core

    _core.stack_sequence = C.array
    ns.update({n: accept_lists(ns[n]) for n in LISTABLE
               if n in ns and not isinstance(getattr(ns[n], "fun", None), np.ufunc)})


# ---------------------------------------------------------------- shapes and index tricks
@_numpy_on_plain(np.append, arrays=(0, 1))
def append(arr, values, axis=None):
    arr, values = _arr(arr), _arr(values)
    if axis is None:
        arr, values, axis = W.ravel(arr), W.ravel(values), 0
    return W.concatenate([arr, values], axis=axis)


@_numpy_on_plain(np.rollaxis, arrays=(0,))
def rollaxis(a, axis, start=0):
    n = len(_shape(a))
    axis = _axis(axis, n)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise np.exceptions.AxisError(f"rollaxis: start={start} is out of bounds for an array "
                                      f"of dimension {n}")
    if axis < start:
        start -= 1
    if axis == start:
        return W.getitem(a, Ellipsis)
    axes = [i for i in range(n) if i != axis]
    axes.insert(start, axis)
    return W.transpose(a, axes)


class _Concatenator:
    """``r_``/``c_``: NumPy's index tricks, keeping traced items traced."""

    def __init__(self, plain, axis, ndmin, trans1d):
        self._plain, self._axis, self._ndmin, self._trans1d = plain, axis, ndmin, trans1d

    def __len__(self):
        return 0

    def __getitem__(self, key):
        if not _traced(key):
            return self._plain[key]
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self._axis, self._ndmin, self._trans1d
        if items and isinstance(items[0], str):
            spec, items = items[0], items[1:]
            if spec in ("r", "c"):
                raise NotImplementedError(
                    f"diffsci.numpy index trick: the matrix directive {spec!r} is not "
                    f"supported on traced values")
            vals = [int(s) for s in spec.split(",")]
            axis = vals[0]
            if len(vals) > 1:
                ndmin = vals[1]
            if len(vals) > 2:
                trans1d = vals[2]
        parts, scalars = [], []
        for item in items:
            if isinstance(item, slice):
                parts.append(np.r_[item])
                continue
            x = _arr(item)
            if not is_tracer(x) and np.ndim(x) == 0:
                scalars.append(len(parts))
            nd = len(_shape(x))
            if nd < ndmin:
                x = W.reshape(x, (1,) * (ndmin - nd) + _shape(x))
                k2, k1 = ndmin - nd, trans1d
                if k1 < 0:
                    k1 += k2 + 1
                axes = list(range(ndmin))
                x = W.transpose(x, axes[:k1] + axes[k2:] + axes[k1:k2])
            parts.append(x)
        arrays = [getval(p) for i, p in enumerate(parts) if i not in scalars]
        if scalars and arrays:  # NumPy casts scalars to the arrays' common type
            dt = np.result_type(*arrays)
            parts = [np.asarray(p, dt) if i in scalars else p for i, p in enumerate(parts)]
        return W.concatenate(parts, axis=axis)


r_ = _Concatenator(np.r_, 0, 1, -1)
c_ = _Concatenator(np.c_, -1, 2, 0)


@_numpy_on_plain(np.block, arrays=())
def block(arrays):
    np.block(_plain_nested(arrays))  # NumPy's validation and errors

    def depth(x):
        return 1 + depth(x[0]) if type(x) is list and x else (1 if type(x) is list else 0)

    def leaves(x):
        return [y for z in x for y in leaves(z)] if type(x) is list else [x]

    d = depth(arrays)
    nd = builtins.max([d] + [len(_shape(x)) for x in leaves(arrays)])

    def build(x, level):
        if type(x) is list:
            return W.concatenate([build(y, level + 1) for y in x], axis=-(d - level))
        x = _arr(x)
        s = _shape(x)
        return W.reshape(x, (1,) * (nd - len(s)) + s) if len(s) < nd else x

    return build(arrays, 0)


def _plain_nested(x):
    return [_plain_nested(y) for y in x] if type(x) is list else getval(x)


@_numpy_on_plain(np.meshgrid, arrays=None)
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    n = len(xi)
    shapes = [[1] * n for _ in range(n)]
    for i in range(n):
        shapes[i][i] = -1
    if indexing == "xy" and n > 1:
        shapes[0][:2], shapes[1][:2] = [1, -1], [-1, 1]
    out = [W.reshape(_arr(x), s) for x, s in zip(xi, shapes)]
    if not sparse:
        full = np.broadcast_shapes(*[_shape(o) for o in out])
        out = [W.broadcast_to(o, full) for o in out]
        if copy:
            out = [W.copy(o) for o in out]
    return tuple(out)


@_numpy_on_plain(np.unstack, arrays=(0,))
def unstack(x, /, *, axis=0):
    n = _shape(x)[axis]
    ax = _axis(axis, len(_shape(x)))
    return tuple(W.getitem(x, _along(ax, i)) for i in range(n))


def _index_map(shape):
    """Positive ids 1..size for an array's elements (their flat index + 1)."""
    return np.arange(1, int(np.prod(shape)) + 1).reshape(shape)


@_numpy_on_plain(np.insert, arrays=(0, 2))
def insert(arr, obj, values, axis=None):
    """``numpy.insert``: NumPy's own insert run on element ids tells each output element
    which element of ``arr`` or ``values`` it copies; the result gathers them."""
    arr, values = _arr(arr), _arr(values)
    if axis is None:
        arr, axis = W.ravel(arr), 0
    shape, vshape = _shape(arr), _shape(values)
    ids = _index_map(shape)
    vids = -_index_map(vshape)
    out = np.insert(ids, getval(obj), vids, axis)
    n = ids.size
    source = np.where(out > 0, out - 1, n - out - 1)
    dt = np.result_type(getval(arr))
    pool = W.concatenate([W.ravel(arr), W.ravel(_cast(values, dt))])
    return W.getitem(pool, source)


@_numpy_on_plain(np.delete, arrays=(0,))
def delete(arr, obj, axis=None):
    arr = _arr(arr)
    if axis is None:
        arr, axis = W.ravel(arr), 0
    keep = np.delete(_index_map(_shape(arr)) - 1, getval(obj), axis)
    return W.getitem(W.ravel(arr), keep)


@_numpy_on_plain(np.resize, arrays=(0,))
def resize(a, new_shape):
    a = W.ravel(_arr(a))
    new_shape = (new_shape,) if np.ndim(new_shape) == 0 else tuple(new_shape)
    n = int(np.prod(new_shape))
    size = _shape(a)[0]
    if size == 0 or n == 0:
        return np.zeros(new_shape, np.result_type(getval(a)))
    return W.reshape(W.getitem(a, np.arange(n) % size), new_shape)


@_numpy_on_plain(np.trim_zeros, arrays=(0,))
def trim_zeros(filt, trim="fb", axis=None):
    if len(_shape(filt)) != 1 or axis is not None:
        raise NotImplementedError("diffsci.numpy.trim_zeros: only 1-d arrays (axis=None) on "
                                  "traced values")
    nz = np.flatnonzero(np.asarray(getval(filt)) != 0)
    if nz.size == 0:
        return W.getitem(filt, slice(0, 0))
    start = nz[0] if "f" in trim.lower() else 0
    stop = nz[-1] + 1 if "b" in trim.lower() else len(getval(filt))
    return W.getitem(filt, slice(int(start), int(stop)))


@_numpy_on_plain(np.extract, arrays=(1,))
def extract(condition, arr):
    return W.getitem(W.ravel(_arr(arr)), np.nonzero(np.ravel(getval(condition)))[0])


@_numpy_on_plain(np.sort_complex, arrays=(0,))
def sort_complex(a):
    v = getval(a)
    out = C.sort(a)
    return out if np.iscomplexobj(v) else W.astype(out, np.result_type(v, 1j))


@_numpy_on_plain(np.partition, arrays=(0,))
def partition(a, kth, axis=-1, kind="introselect", order=None):
    """``numpy.partition``; the gradient follows the permutation that turns ``a`` into
    NumPy's partitioned array (found by matching both arrays' stable sort orders)."""
    if axis is None:
        a, axis = W.ravel(a), -1
    if order is not None:
        return C.take_along_axis(a, _partition_perm(getval(a), kth, axis, kind, order), axis)
    # recorded under diffsci.jit: the compiled code partitions its own input
    return C.take_along_axis(a, _util.value_mask(_partition_perm, a, kth, axis, kind), axis)


def _partition_perm(v, kth, axis, kind, order=None):
    """The permutation taking ``v`` to ``np.partition(v, kth, axis)``."""
    p = np.partition(v, kth, axis=axis, kind=kind, order=order)
    order_p = np.argsort(p, axis=axis, kind="stable")
    order_a = np.argsort(v, axis=axis, kind="stable")
    perm = np.empty_like(order_a)
    np.put_along_axis(perm, order_p, order_a, axis=axis)
    return perm


@_numpy_on_plain(np.apply_along_axis, arrays=(2,))
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    arr = _arr(arr)
    nd = len(_shape(arr))
    axis = _axis(axis, nd)
    moved = W.moveaxis(arr, axis, -1)
    outer = _shape(moved)[:-1]
    res = [func1d(W.getitem(moved, idx), *args, **kwargs) for idx in np.ndindex(*outer)]
    res = [_arr(r) for r in res]
    stacked = W.stack(res)
    rshape = _shape(res[0])
    stacked = W.reshape(stacked, outer + rshape)
    # NumPy puts the function's result axes where ``axis`` was.
    k = len(rshape)
    return W.moveaxis(stacked, tuple(range(len(outer), len(outer) + k)),
                      tuple(range(axis, axis + k))) if k else stacked


@_numpy_on_plain(np.piecewise, arrays=(0,))
def piecewise(x, condlist, funclist, *args, **kw):
    x = _arr(x)
    xv = getval(x)
    if isinstance(condlist, np.ndarray) and condlist.dtype == bool and condlist.ndim == xv.ndim:
        condlist = [condlist]
    condlist = [np.asarray(getval(c), bool) for c in condlist]
    n = len(condlist)
    if len(funclist) == n + 1:
        condlist.append(~np.any(condlist, axis=0))
    elif len(funclist) != n:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    out = W.multiply(x, 0.0) if np.result_type(xv).kind in "fc" else np.zeros_like(xv)
    for cond, func in zip(condlist, funclist):
        if not callable(func):
            out = W.where(cond, func, out)
        elif np.any(cond):
            idx = np.nonzero(cond)
            vals = _arr(func(W.getitem(x, idx), *args, **kw))
            base = W.where(cond, 0.0, out)
            out = W.add(base, W.scatter_add(np.zeros(xv.shape, np.result_type(
                getval(vals), xv)), vals, idx=idx))
    return out


# ---------------------------------------------------------------- elementwise
def _real_only(x, name):
    if np.iscomplexobj(getval(x)):
        raise TypeError(f"diffsci.numpy.{name}: real input expected, got "
                        f"{np.result_type(getval(x))}")


@_numpy_on_plain(np.copysign, arrays=(0, 1))
def copysign(x1, x2, /):
    """|x1| with the sign of ``x2``; differentiable in ``x1`` (``x2`` only sets a sign)."""
    sign2 = _util.value_mask(np.copysign, 1.0, x2)
    s = sign2 * _util.value_mask(np.sign, x1)
    return W.multiply(x1, W.where(_util.value_mask(np.equal, s, 0), sign2, s))


@_numpy_on_plain(np.ldexp, arrays=(0,))
def ldexp(x1, x2, /):
    _real_only(x1, "ldexp")
    return W.multiply(x1, np.ldexp(1.0, getval(x2)).astype(np.result_type(getval(x1), 1.0)))


@_numpy_on_plain(np.frexp, arrays=(0,))
def frexp(x, /):
    # the exponent and its power of two: value_masks (recomputed under diffsci.jit)
    return W.multiply(x, _util.value_mask(_frexp_scale, x)), _util.value_mask(_frexp_exp, x)


def _frexp_exp(x):
    return np.frexp(x)[1]


def _frexp_scale(x):
    m, e = np.frexp(x)
    return np.ldexp(1.0, -e).astype(m.dtype)


@_numpy_on_plain(np.modf, arrays=(0,))
def modf(x, /):
    whole = _util.value_mask(np.trunc, x)
    return W.subtract(x, whole), whole


@_numpy_on_plain(np.divmod, arrays=(0, 1))
def divmod(x1, x2, /):  # noqa: A001 - NumPy's name
    return _util.value_mask(np.floor_divide, x1, x2), W.remainder(x1, x2)


@_numpy_on_plain(np.real_if_close, arrays=(0,))
def real_if_close(a, tol=100):
    v = np.asarray(getval(a))
    if not np.iscomplexobj(v):
        return a
    if tol > 1:
        tol = np.finfo(v.dtype.type).eps * tol
    if np.all(np.absolute(v.imag) < tol):
        return W.real(a)
    return a


# ---------------------------------------------------------------- cumulative
def _cumulative(prim, x, axis, dtype, include_initial, fill):
    nd = len(_shape(x))
    if axis is None:
        if nd > 1:
            raise ValueError("axis must be specified for multi-dimensional arrays.")
        axis = 0
    if nd == 0:
        raise ValueError("cumulative functions need an array of at least one dimension")
    axis = _axis(axis, nd)
    y = prim(x, axis, dtype)
    if include_initial:
        shape = list(_shape(x))
        shape[axis] = 1
        y = W.concatenate([np.full(shape, fill, np.result_type(getval(y))), y], axis=axis)
    return y


@_numpy_on_plain(np.cumulative_sum, arrays=(0,))
def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative(W.cumsum, x, axis, dtype, include_initial, 0)


@_numpy_on_plain(np.cumulative_prod, arrays=(0,))
def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumulative(W.cumprod, x, axis, dtype, include_initial, 1)


# ---------------------------------------------------------------- nan reductions
def _keep(keepdims):
    return keepdims is not np._NoValue and bool(keepdims)


def _all_nan_warning(name):
    warnings.warn(f"All-NaN slice encountered ({name})", RuntimeWarning, stacklevel=3)


@_numpy_on_plain(np.nanprod, arrays=(0,))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
            where=np._NoValue):
    kw = {k: v for k, v in (("initial", initial), ("where", where)) if v is not np._NoValue}
    return W.prod(W.where(_util.value_mask(np.isnan, a), 1, a), axis, dtype,
                  keepdims=_keep(keepdims), **kw)


@_numpy_on_plain(np.nancumsum, arrays=(0,))
def nancumsum(a, axis=None, dtype=None, out=None):
    return W.cumsum(W.where(_util.value_mask(np.isnan, a), 0, a), axis, dtype)


@_numpy_on_plain(np.nancumprod, arrays=(0,))
def nancumprod(a, axis=None, dtype=None, out=None):
    return W.cumprod(W.where(_util.value_mask(np.isnan, a), 1, a), axis, dtype)


def _nanextreme(prim, fill, name, a, axis, keepdims, initial, where):
    kw = {k: v for k, v in (("initial", initial), ("where", where)) if v is not np._NoValue}
    nan = _util.value_mask(np.isnan, a)
    out = prim(W.where(nan, fill, a), axis, keepdims=_keep(keepdims), **kw)
    allnan = np.all(nan, axis=axis, keepdims=_keep(keepdims))
    if np.any(allnan):
        _all_nan_warning(name)
        out = W.where(allnan, np.nan, out)
    return out


@_numpy_on_plain(np.nanmax, arrays=(0,))
def nanmax(a, axis=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
           where=np._NoValue):
    return _nanextreme(W.amax, -np.inf, "nanmax", a, axis, keepdims, initial, where)


@_numpy_on_plain(np.nanmin, arrays=(0,))
def nanmin(a, axis=None, out=None, keepdims=np._NoValue, initial=np._NoValue,
           where=np._NoValue):
    return _nanextreme(W.amin, np.inf, "nanmin", a, axis, keepdims, initial, where)


@_numpy_on_plain(np.nanvar, arrays=(0,))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *,
           where=np._NoValue, mean=np._NoValue, correction=np._NoValue):
    if where is not np._NoValue or mean is not np._NoValue:
        raise NotImplementedError("diffsci.numpy.nanvar: where= and mean= are not supported "
                                  "on traced values")
    if correction is not np._NoValue:
        ddof = correction
    keep = _keep(keepdims)
    v = getval(a)
    ok = _util.value_mask(np.logical_not, _util.value_mask(np.isnan, a))
    rdt = np.finfo(np.result_type(v, 1.0)).dtype
    cnt = np.sum(ok, axis, keepdims=True, dtype=rdt)
    x = W.where(ok, a, 0)
    avg = W.sum(x, axis, dtype, keepdims=True) / cnt
    d = W.where(ok, W.subtract(x, avg), 0)
    sq = W.real(W.multiply(d, W.conjugate(d))) if np.iscomplexobj(v) else W.multiply(d, d)
    dof = cnt - ddof
    if np.any(dof <= 0):
        warnings.warn("Degrees of freedom <= 0 for slice.", RuntimeWarning, stacklevel=3)
    var = W.sum(sq, axis, keepdims=True) / np.where(dof > 0, dof, np.nan)
    return var if keep else (W.squeeze(var, axis) if axis is not None else W.reshape(var, ()))


def _safe_sqrt(x):
    """sqrt with derivative 0 (not inf) where x == 0, as ``std``'s convention."""
    zero = _util.value_mask(np.equal, x, 0)
    return W.where(zero, 0.0, W.sqrt(W.where(zero, 1.0, x)))


@_numpy_on_plain(np.nanstd, arrays=(0,))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=np._NoValue, *,
           where=np._NoValue, mean=np._NoValue, correction=np._NoValue):
    return _safe_sqrt(nanvar(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean,
                             correction=correction))


# ---------------------------------------------------------------- order statistics
# method -> (alpha, beta) of the virtual index n q + alpha + q (1 - alpha - beta) - 1
# (Hyndman & Fan), or the rounding of q (n - 1) for the discontinuous ones.
_CONTINUOUS = {"linear": (1.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
               "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
               "interpolated_inverted_cdf": (0.0, 1.0)}
_DISCRETE = {"lower": np.floor, "higher": np.ceil, "nearest": np.around, "midpoint": None}


def _quantile_core(a, q, axis, method, keepdims, nan_policy, name):
    """Quantiles of ``a`` along ``axis``; ``nan_policy`` 'propagate' (a NaN in a slice gives
    NaN) or 'omit' (each slice uses its non-NaN values)."""
    if method not in _CONTINUOUS and method not in _DISCRETE:
        raise NotImplementedError(
            f"diffsci.numpy.{name}: method={method!r} is not supported on traced values; "
            f"supported: {', '.join(sorted(list(_CONTINUOUS) + list(_DISCRETE)))}")
    a = _arr(a)
    v = getval(a)
    if np.iscomplexobj(v):
        raise TypeError(f"diffsci.numpy.{name}: a must be an array of real numbers, got "
                        f"{v.dtype}")
    nd = v.ndim
    if axis is None:
        a, ax_list, v = W.ravel(a), tuple(range(nd)), np.ravel(v)
        x = a
    else:
        ax_list = tuple(_axis(ax, nd) for ax in ((axis,) if np.ndim(axis) == 0 else axis))
        x = W.moveaxis(a, ax_list, tuple(range(-len(ax_list), 0)))
        x = W.reshape(x, _shape(x)[:nd - len(ax_list)] + (-1,))
    xv = getval(x)
    n = xv.shape[-1]
    xsv_shape = xv.shape
    qv = np.asarray(getval(q))
    if _util.observed(lambda q: bool(np.any((q < 0) | (q > 1))), q):
        raise ValueError(f"{name}: quantiles must be in the range [0, 1]")
    xs = C.sort(x, axis=-1)
    # what is read from the values (the NaN counts, the order statistics to interpolate
    # between) is a value_mask: recorded under diffsci.jit, recomputed by the compiled code
    stats = _util.value_mask(_nan_stats, xs, nan_policy == "omit")
    cnt, bad = stats[..., 0:1], stats[..., 1]
    qb = q if np.ndim(qv) == 0 else W.reshape(q, (1,) * (xv.ndim - 1) + qv.shape + (1,))
    # q's dims go after the batch dims: shapes (..., *q.shape, 1)
    cntb = W.reshape(cnt, _shape(cnt)[:-1] + (1,) * qv.ndim + (1,))
    if method in _CONTINUOUS and method != "linear":
        al, be = _CONTINUOUS[method]
        vidx = W.subtract(W.add(W.multiply(qb, cntb), W.add(al, W.multiply(
            qb, 1.0 - al - be))), 1.0)
    else:
        vidx = W.multiply(qb, W.subtract(cntb, 1.0))
    plan = _util.value_mask(_quantile_plan, vidx, cntb, n, method)
    lo, hi = W.astype(plan[..., 0:1], np.intp), W.astype(plan[..., 1:2], np.intp)
    if method in _CONTINUOUS:  # the fraction between them, differentiable in q
        gamma = W.where(_util.value_mask(np.not_equal, plan[..., 2:3], 0.0), 0.0,
                        W.subtract(vidx, plan[..., 3:4]))
    else:
        gamma = plan[..., 3:4]
    xs_b = W.reshape(xs, xsv_shape[:-1] + (1,) * qv.ndim + (n,))
    shape_b = np.broadcast_shapes(_shape(lo)[:-1] + (n,), _shape(xs_b))
    xs_b = W.broadcast_to(xs_b, shape_b)
    lo = W.broadcast_to(lo, shape_b[:-1] + (1,))
    hi = W.broadcast_to(hi, shape_b[:-1] + (1,))
    below_v = W.squeeze(C.take_along_axis(xs_b, lo, -1), -1)
    above_v = W.squeeze(C.take_along_axis(xs_b, hi, -1), -1)
    t = W.squeeze(W.broadcast_to(gamma, shape_b[:-1] + (1,)), -1)
    diff_ba = W.subtract(above_v, below_v)
    res = W.where(_util.value_mask(np.greater_equal, t, 0.5),
                  W.subtract(above_v, W.multiply(diff_ba, W.subtract(1.0, t))),
                  W.add(below_v, W.multiply(diff_ba, t)))
    # NaNs: 'propagate' gives NaN for a slice holding one, 'omit' for an all-NaN slice.
    bad = W.reshape(bad, _shape(bad) + (1,) * qv.ndim)
    if np.any(bad):  # a guard under diffsci.jit
        if nan_policy == "omit":
            _all_nan_warning(name)
        res = W.where(_util.value_mask(np.not_equal, W.broadcast_to(bad, _shape(res)), 0),
                      np.nan, res)
    # NumPy's layout: q's axes first, then the kept axes.
    nb = xv.ndim - 1
    if qv.ndim:
        res = W.moveaxis(res, tuple(range(nb, nb + qv.ndim)), tuple(range(qv.ndim)))
    if keepdims:
        shape = list(_shape(res)[:qv.ndim])
        rest = list(_shape(res)[qv.ndim:])
        full = []
        for d in range(nd):
            full.append(1 if d in ax_list else rest.pop(0))
        res = W.reshape(res, tuple(shape + full))
    return res


def _nan_stats(xs, omit):
    """Per slice of ``xs`` (last axis): the number of values a quantile uses and whether the
    slice gives NaN (holds a NaN; 'omit': has nothing but NaNs), as ``(..., 2)`` integers."""
    nan = np.isnan(xs)
    n = xs.shape[-1]
    cnt = n - np.sum(nan, -1) if omit else np.full(xs.shape[:-1], n)
    bad = (cnt == 0) if omit else np.any(nan, -1)
    return np.stack([cnt, bad.astype(cnt.dtype)], -1)


def _quantile_plan(vidx, cnt, n, method):
    """From the virtual index ``vidx`` of a quantile in its sorted slice of ``cnt`` values
    (of ``n``): ``(..., 4)`` floats, the positions below and above, whether it lies outside
    ``[0, cnt - 1]`` and ``floor(vidx)`` (continuous methods), or ``method``'s fixed fraction
    (the discrete ones)."""
    vi = np.asarray(vidx, dtype=np.float64)
    cnt = np.broadcast_to(cnt, vi.shape)
    zero = np.zeros(vi.shape)
    if method in _CONTINUOUS:
        base = np.floor(vi)
        below, above = vi < 0, vi >= cnt - 1
        lo = np.where(below, 0, np.where(above, cnt - 1, base))
        hi = np.where(below, 0, np.where(above, cnt - 1, base + 1))
        outside, last = (below | above).astype(np.float64), base
    elif method == "midpoint":
        lo, hi = np.floor(vi), np.ceil(vi)
        outside, last = zero, np.where(lo == hi, 0.0, 0.5)
    else:
        lo = hi = _DISCRETE[method](vi)
        outside, last = zero, zero
    top = builtins.max(n - 1, 0)
    return np.stack([np.clip(lo, 0, top), np.clip(hi, 0, top), outside, last], -1)[..., 0, :]


def _check_weights(weights, name):
    if weights is not None:
        raise NotImplementedError(f"diffsci.numpy.{name}: weights= is not supported on traced "
                                  f"values")


def _method(method, interpolation):
    return interpolation if interpolation is not None else method


@_numpy_on_plain(np.quantile, arrays=(0, 1))
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
             keepdims=False, *, weights=None, interpolation=None):
    """``numpy.quantile``, differentiable in ``a`` and (continuous methods) in ``q``.

    Args:
        a: real data; q: quantiles in [0, 1] (scalar or array, may be traced).
        axis, keepdims, method: as NumPy's; ``method`` one of 'linear', 'hazen', 'weibull',
            'median_unbiased', 'normal_unbiased', 'interpolated_inverted_cdf' (continuous:
            differentiable in ``q``), 'lower', 'higher', 'nearest', 'midpoint'.

    Returns:
        NumPy's result: q's axes first, then the kept axes; NaN for a slice holding a NaN.

    Raises:
        NotImplementedError: another method, or ``weights`` on traced values.
        TypeError: complex ``a``.  ValueError: ``q`` outside [0, 1].

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> ds.grad(lambda a: dnp.quantile(a, 0.25))(np.array([3.0, 1.0, 2.0]))
        array([0. , 0.5, 0.5])

    References:
        R. J. Hyndman, Y. Fan, "Sample quantiles in statistical packages", The American
        Statistician 50(4), 1996, 361-365 (the methods' virtual indices).
    """
    _check_weights(weights, "quantile")
    return _quantile_core(a, _arr(q), axis, _method(method, interpolation), keepdims,
                          "propagate", "quantile")


@_numpy_on_plain(np.percentile, arrays=(0, 1))
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None, interpolation=None):
    _check_weights(weights, "percentile")
    return _quantile_core(a, W.true_divide(_arr(q), 100), axis,
                          _method(method, interpolation), keepdims, "propagate", "percentile")


@_numpy_on_plain(np.nanquantile, arrays=(0, 1))
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=np._NoValue, *, weights=None, interpolation=None):
    _check_weights(weights, "nanquantile")
    return _quantile_core(a, _arr(q), axis, _method(method, interpolation), _keep(keepdims),
                          "omit", "nanquantile")


@_numpy_on_plain(np.nanpercentile, arrays=(0, 1))
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=np._NoValue, *, weights=None, interpolation=None):
    _check_weights(weights, "nanpercentile")
    return _quantile_core(a, W.true_divide(_arr(q), 100), axis,
                          _method(method, interpolation), _keep(keepdims), "omit",
                          "nanpercentile")


def _median_plan(xs, omit):
    """Per sorted slice: the two middle positions (equal for odd counts) and whether the
    slice gives NaN, as ``(..., 3)`` integers."""
    cnt, bad = np.moveaxis(_nan_stats(xs, omit), -1, 0)
    top = builtins.max(xs.shape[-1] - 1, 0)
    return np.stack([np.clip((cnt - 1) // 2, 0, top), np.clip(cnt // 2, 0, top), bad], -1)


def _median_core(a, axis, keepdims, omit, name):
    """The mean of the two middle order statistics (one for odd counts), as NumPy's."""
    a = _arr(a)
    v = getval(a)
    nd = v.ndim
    if axis is None:
        x, ax_list = W.ravel(a), tuple(range(nd))
    else:
        ax_list = tuple(_axis(ax, nd) for ax in ((axis,) if np.ndim(axis) == 0 else axis))
        x = W.moveaxis(a, ax_list, tuple(range(-len(ax_list), 0)))
        x = W.reshape(x, _shape(x)[:nd - len(ax_list)] + (-1,))
    xs = C.sort(x, axis=-1)
    # the middle positions and the NaN slices: recorded under diffsci.jit (value_mask)
    plan = _util.value_mask(_median_plan, xs, omit)
    lo, hi, bad = plan[..., 0:1], plan[..., 1:2], plan[..., 2]
    res = W.true_divide(W.add(C.take_along_axis(xs, lo, -1), C.take_along_axis(xs, hi, -1)), 2)
    res = W.squeeze(res, -1)
    if np.any(bad):  # a guard under diffsci.jit
        if omit:
            _all_nan_warning(name)
        res = W.where(_util.value_mask(np.not_equal, bad, 0), np.nan, res)
    if keepdims:
        res = W.reshape(res, tuple(1 if d in ax_list else s for d, s in enumerate(v.shape)))
    return res


@_numpy_on_plain(np.median, arrays=(0,))
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``numpy.median``: the mean of the two middle order statistics (the middle one for
    odd counts), equal to NumPy's; the gradient follows the sort (ties: stable order).

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> ds.grad(lambda a: dnp.median(a))(np.array([4.0, 1.0, 3.0, 2.0]))
        array([0. , 0. , 0.5, 0.5])
    """
    return _median_core(a, axis, keepdims, False, "median")


@_numpy_on_plain(np.nanmedian, arrays=(0,))
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=np._NoValue):
    return _median_core(a, axis, _keep(keepdims), True, "nanmedian")


# ---------------------------------------------------------------- statistics
@_numpy_on_plain(np.cov, arrays=(0, 1))
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """``numpy.cov``, differentiable in ``m``, ``y`` and ``aweights`` (NumPy's algorithm).

    Args:
        m, y, rowvar, bias, ddof, fweights, aweights, dtype: as NumPy's; ``fweights`` are
            integer counts (not differentiated).

    Returns:
        The covariance matrix (squeezed, as NumPy's).

    Raises:
        ValueError/TypeError/RuntimeError: NumPy's, for bad shapes and weights.

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> x = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 2.0]])
        >>> ds.grad(lambda x: dnp.cov(x)[0, 1])(x)  # row i: (x_j - mean x_j) / (n - 1)
        array([[ 0. , -0.5,  0.5],
               [-0.5,  0. ,  0.5]])
    """
    if ddof is not None and ddof != int(ddof):
        raise ValueError("ddof must be integer")
    m = _arr(m)
    if len(_shape(m)) > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = np.result_type(getval(m), np.float64) if y is None else np.result_type(
            getval(m), getval(y), np.float64)
    X = _cast(C.array(m, ndmin=2), dtype)
    if not rowvar and _shape(X)[0] != 1:
        X = W.transpose(X)
    if y is not None:
        y = _cast(C.array(_arr(y), ndmin=2), dtype)
        if len(_shape(y)) > 2:
            raise ValueError("y has more than 2 dimensions")
        if not rowvar and _shape(y)[0] != 1:
            y = W.transpose(y)
        X = W.concatenate([X, y], axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None
    nobs = _shape(X)[1]
    if fweights is not None:
        fw = np.asarray(getval(fweights), dtype=float)
        if not np.all(fw == np.around(fw)):
            raise TypeError("fweights must be integer")
        if fw.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fw.shape[0] != nobs:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if np.any(fw < 0):
            raise ValueError("fweights cannot be negative")
        w = fw
    if aweights is not None:
        aw = _cast(_arr(aweights), np.float64)
        if len(_shape(aw)) > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if _shape(aw)[0] != nobs:
            raise RuntimeError("incompatible numbers of samples and aweights")
        if _util.observed(lambda a: bool(np.any(a < 0)), aw):  # a guard under jit
            raise ValueError("aweights cannot be negative")
        w = aw if w is None else W.multiply(w, aw)
    avg, w_sum = C.average(X, axis=1, weights=w, returned=True)
    w_sum = W.getitem(w_sum, 0)
    if w is None:
        fact = nobs - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * W.sum(W.multiply(w, aw)) / w_sum
    if _util.observed(lambda f: bool(f <= 0), fact):
        warnings.warn("Degrees of freedom <= 0 for slice", RuntimeWarning, stacklevel=2)
        fact = 0.0
    X = W.subtract(X, W.getitem(avg, (slice(None), None)))
    X_T = W.transpose(X) if w is None else W.transpose(W.multiply(X, w))
    c = W.dot(X, W.conjugate(X_T))
    c = W.multiply(c, W.true_divide(1, fact))
    return W.squeeze(c)


@_numpy_on_plain(np.corrcoef, arrays=(0, 1))
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    c = cov(x, y, rowvar, dtype=dtype)
    if len(_shape(c)) == 0:
        return W.true_divide(c, c)
    d = C.diag(c)
    std = W.sqrt(W.real(d))
    c = W.true_divide(c, W.getitem(std, (slice(None), None)))
    c = W.true_divide(c, W.getitem(std, (None, slice(None))))
    if np.iscomplexobj(getval(c)):
        return W.add(W.clip(W.real(c), -1, 1), W.multiply(W.imag(c), 1j))
    return W.clip(c, -1, 1)


# ---------------------------------------------------------------- calculus
@_numpy_on_plain(np.gradient, arrays=(0,))
def gradient(f, *varargs, axis=None, edge_order=1):
    """``numpy.gradient``: second-order central differences inside, one-sided (first or
    second order) at the edges; differentiable in ``f`` and in the spacings/coordinates.

    Args:
        f: samples; varargs: spacing (one scalar, or one scalar or 1-d coordinate array per
            axis); axis, edge_order: as NumPy's.

    Returns:
        One array per axis (a tuple for several axes), as NumPy's.

    Raises:
        ValueError: too few samples for ``edge_order``, or coordinates of the wrong length.

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> x = np.array([0.0, 1.0, 3.0])
        >>> float(ds.grad(lambda x: dnp.gradient(np.array([0.0, 1.0, 9.0]), x)[1])(x)[2])
        -1.0
    """
    f = _arr(f)
    shape = _shape(f)
    N = len(shape)
    axes = tuple(range(N)) if axis is None else tuple(
        _axis(a, N) for a in ((axis,) if np.ndim(axis) == 0 else axis))
    n = len(varargs)
    if n == 0:
        dx = [1.0] * len(axes)
    elif n == 1 and np.ndim(getval(varargs[0])) == 0:
        dx = [varargs[0]] * len(axes)
    elif n == len(axes):
        dx = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    out = []
    for ax, h in zip(axes, dx):
        if shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        out.append(_gradient_axis(f, h, ax, N, edge_order))
    return out[0] if len(out) == 1 else tuple(out)


def _gradient_axis(f, h, ax, N, edge_order):
    def sl(s):
        return W.getitem(f, _along(ax, s))

    uniform = np.ndim(getval(h)) == 0
    if not uniform:
        hv = np.asarray(getval(h))
        if hv.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if len(hv) != _shape(f)[ax]:
            raise ValueError("when 1d, distances must match the length of the corresponding "
                             "dimension")
        d = C.diff(h)
        if not is_tracer(d) and np.all(getval(d) == getval(d)[0]):
            h, uniform = getval(d)[0], True
    if uniform:
        mid = W.true_divide(W.subtract(sl(slice(2, None)), sl(slice(None, -2))),
                            W.multiply(2.0, h))
        if edge_order == 1:
            first = W.true_divide(W.subtract(sl(slice(1, 2)), sl(slice(0, 1))), h)
            last = W.true_divide(W.subtract(sl(slice(-1, None)), sl(slice(-2, -1))), h)
        else:
            first = W.true_divide(W.add(W.subtract(W.multiply(2.0, sl(slice(1, 2))),
                                                   W.multiply(1.5, sl(slice(0, 1)))),
                                        W.multiply(-0.5, sl(slice(2, 3)))), h)
            last = W.true_divide(W.add(W.subtract(W.multiply(0.5, sl(slice(-3, -2))),
                                                  W.multiply(2.0, sl(slice(-2, -1)))),
                                       W.multiply(1.5, sl(slice(-1, None)))), h)
        return W.concatenate([first, mid, last], axis=ax)

    def bshape(v):  # a 1-d coefficient vector along ``ax``
        return W.reshape(v, [-1 if i == ax else 1 for i in range(N)])

    dx1 = W.getitem(d, slice(0, -1))
    dx2 = W.getitem(d, slice(1, None))
    s12 = W.add(dx1, dx2)
    a = bshape(W.true_divide(W.negative(dx2), W.multiply(dx1, s12)))
    b = bshape(W.true_divide(W.subtract(dx2, dx1), W.multiply(dx1, dx2)))
    c = bshape(W.true_divide(dx1, W.multiply(dx2, s12)))
    mid = W.add(W.add(W.multiply(a, sl(slice(None, -2))), W.multiply(b, sl(slice(1, -1)))),
                W.multiply(c, sl(slice(2, None))))
    if edge_order == 1:
        first = W.true_divide(W.subtract(sl(slice(1, 2)), sl(slice(0, 1))), W.getitem(d, 0))
        last = W.true_divide(W.subtract(sl(slice(-1, None)), sl(slice(-2, -1))),
                             W.getitem(d, -1))
    else:
        e1, e2 = W.getitem(d, 0), W.getitem(d, 1)
        e12 = W.add(e1, e2)
        a0 = W.true_divide(W.negative(W.add(W.multiply(2.0, e1), e2)), W.multiply(e1, e12))
        b0 = W.true_divide(e12, W.multiply(e1, e2))
        c0 = W.true_divide(W.negative(e1), W.multiply(e2, e12))
        first = W.add(W.add(W.multiply(a0, sl(slice(0, 1))), W.multiply(b0, sl(slice(1, 2)))),
                      W.multiply(c0, sl(slice(2, 3))))
        e1, e2 = W.getitem(d, -2), W.getitem(d, -1)
        e12 = W.add(e1, e2)
        a1 = W.true_divide(e2, W.multiply(e1, e12))
        b1 = W.true_divide(W.negative(e12), W.multiply(e1, e2))
        c1 = W.true_divide(W.add(W.multiply(2.0, e2), e1), W.multiply(e2, e12))
        last = W.add(W.add(W.multiply(a1, sl(slice(-3, -2))), W.multiply(b1, sl(slice(-2, -1)))),
                     W.multiply(c1, sl(slice(-1, None))))
    return W.concatenate([first, mid, last], axis=ax)


@_numpy_on_plain(np.ediff1d, arrays=(0,))
def ediff1d(ary, to_end=None, to_begin=None):
    a = W.ravel(_arr(ary))
    dt = np.result_type(getval(a))
    parts = [C.diff(a)]
    if to_begin is not None:
        parts.insert(0, W.ravel(_cast(_arr(to_begin), dt)))
    if to_end is not None:
        parts.append(W.ravel(_cast(_arr(to_end), dt)))
    return W.concatenate(parts) if len(parts) > 1 else parts[0]


@_numpy_on_plain(np.interp, arrays=(0, 1, 2))
def interp(x, xp, fp, left=None, right=None, period=None):
    """``numpy.interp``, differentiable in ``x``, ``xp``, ``fp`` (and ``left``/``right``).

    Args:
        x: query points; xp: increasing sample points; fp: values (real or complex);
        left, right, period: as NumPy's.

    Returns:
        The interpolated values, of ``x``'s shape.

    Raises:
        ValueError: ``xp``/``fp`` not 1-d, of different lengths or empty; ``period == 0``.

    At a knot the interval to the right is used; beyond the ends ``left``/``right`` (their
    gradient in ``x`` is 0).

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> float(ds.grad(lambda x: dnp.interp(x, [0.0, 1.0, 3.0], [0.0, 2.0, 3.0]))(2.0))
        0.5
    """
    x, xp, fp = _arr(x), _arr(xp), _arr(fp)
    if len(_shape(xp)) != 1 or len(_shape(fp)) != 1:
        raise ValueError("diffsci.numpy.interp: xp and fp must be 1-d sequences")
    if _shape(xp)[0] != _shape(fp)[0]:
        raise ValueError("fp and xp are not of the same length.")
    if _shape(xp)[0] == 0:
        raise ValueError("array of sample points is empty")
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = abs(period)
        left = right = None
        x = W.remainder(x, period)
        xp = W.remainder(xp, period)
        order = np.argsort(getval(xp))
        xp, fp = W.getitem(xp, order), W.getitem(fp, order)
        xp = W.concatenate([W.subtract(W.getitem(xp, slice(-1, None)), period), xp,
                            W.add(W.getitem(xp, slice(0, 1)), period)])
        fp = W.concatenate([W.getitem(fp, slice(-1, None)), fp, W.getitem(fp, slice(0, 1))])
    xv, xpv = getval(x), getval(xp)
    n = xpv.shape[0]
    f0, f1 = W.getitem(fp, 0), W.getitem(fp, -1)
    left = f0 if left is None else left
    right = f1 if right is None else right
    if n == 1:
        val = W.broadcast_to(f0, np.shape(xv))
    else:
        # the intervals: a guard under diffsci.jit (a later x in others re-traces)
        j = _util.observed(lambda p, v: np.clip(np.searchsorted(p, v, side="right") - 1, 0,
                                                n - 2), xp, x)
        xj, xj1 = W.getitem(xp, j), W.getitem(xp, j + 1)
        fj, fj1 = W.getitem(fp, j), W.getitem(fp, j + 1)
        slope = W.true_divide(W.subtract(fj1, fj), W.subtract(xj1, xj))
        val = W.add(W.multiply(slope, W.subtract(x, xj)), fj)
        val = W.where(_util.value_mask(np.equal, x, W.getitem(xp, -1)), f1, val)
    val = W.where(_util.value_mask(np.less, x, W.getitem(xp, 0)), left, val)
    return W.where(_util.value_mask(np.greater, x, W.getitem(xp, -1)), right, val)


# ---------------------------------------------------------------- convolution
def _conv(a, v, *, how="numpy", mode="full"):
    """N-d convolution, ``mode`` 'full' or 'valid' (then ``a`` is at least as large as ``v``
    in every dimension): ``numpy.convolve`` (1-d, ``how='numpy'``) or
    ``scipy.signal.convolve(..., method=how)``."""
    if how == "numpy":
        return np.convolve(a, v, mode)
    from scipy import signal
    return signal.convolve(a, v, mode, method=how)


_conv_p = primitive(_conv, name="convolve")


def conv_valid(a, v, how):
    """The 'valid' convolution through ``_conv_p``, the larger operand first."""
    if all(x >= y for x, y in zip(_shape(a), _shape(v))):
        return _conv_p(a, v, how=how, mode="valid")
    return _conv_p(v, a, how=how, mode="valid")


def _centered(y, shape):
    """The centre ``shape`` block of ``y`` (SciPy's and NumPy's 'same'/'valid' crops)."""
    full = _shape(y)
    idx = tuple(slice((f - s) // 2, (f - s) // 2 + s) for f, s in zip(full, shape))
    return W.getitem(y, idx)


def _as_1d(x):
    x = _arr(x)
    return W.reshape(x, (1,)) if len(_shape(x)) == 0 else x


def _check_1d(a, v, name):
    if len(_shape(a)) != 1 or len(_shape(v)) != 1:
        raise ValueError(f"diffsci.numpy.{name}: object too deep for desired array "
                         f"(both inputs must be 1-d)")
    if _shape(a)[0] == 0 or _shape(v)[0] == 0:
        raise ValueError(f"{name}: inputs cannot be empty")


def _np_mode(n, m, mode, y):
    lo, hi = builtins.min(n, m), builtins.max(n, m)
    if mode == "full":
        return y
    if mode == "same":
        s = (lo - 1) // 2
        return W.getitem(y, slice(s, s + hi))
    if mode == "valid":
        return W.getitem(y, slice(lo - 1, hi))
    raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")


@_numpy_on_plain(np.convolve, arrays=(0, 1))
def convolve(a, v, mode="full"):
    """``numpy.convolve``, differentiable in both sequences (DERIVATIONS.md §Convolution,
    eqs. CV1-CV3: each operand's adjoint is the full convolution of the cotangent with the
    other operand conjugated and reversed, cropped).

    Args:
        a, v: 1-d sequences (real or complex); mode: 'full', 'same' or 'valid'.

    Returns:
        NumPy's convolution.

    Raises:
        ValueError: inputs that are not 1-d or are empty; an unknown mode.

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> ds.grad(lambda a: dnp.convolve(a, [1.0, 2.0])[1])(np.array([3.0, 4.0]))
        array([2., 1.])
    """
    a, v = _as_1d(a), _as_1d(v)
    _check_1d(a, v, "convolve")
    if mode == "valid":
        return conv_valid(a, v, "numpy")
    return _np_mode(_shape(a)[0], _shape(v)[0], mode, _conv_p(a, v, how="numpy"))


@_numpy_on_plain(np.correlate, arrays=(0, 1))
def correlate(a, v, mode="valid"):
    """``numpy.correlate`` (c_k = Σ_n a[n+k] conj(v[n])), as a convolution with the
    conjugated, reversed ``v``."""
    a, v = _as_1d(a), _as_1d(v)
    _check_1d(a, v, "correlate")
    n, m = _shape(a)[0], _shape(v)[0]
    if n >= m:
        return convolve(a, W.conjugate(W.flip(v)), mode)
    return W.flip(W.conjugate(convolve(v, W.conjugate(W.flip(a)), mode)))


# ---------------------------------------------------------------- polynomials
@_numpy_on_plain(np.polyval, arrays=(0, 1))
def polyval(p, x):
    p, x = _arr(p), _arr(x)
    y = np.zeros(_shape(x), np.result_type(getval(x)))
    for i in range(_shape(p)[0]):
        y = W.add(W.multiply(y, x), W.getitem(p, i))
    return y


@_numpy_on_plain(np.vander, arrays=(0,))
def vander(x, N=None, increasing=False):
    x = _arr(x)
    if len(_shape(x)) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = _shape(x)[0] if N is None else N
    powers = np.arange(n) if increasing else np.arange(n)[::-1]
    cols = [np.ones(_shape(x), np.result_type(getval(x))) if k == 0 else _ipow(x, k)
            for k in powers]
    if not cols:
        return np.empty((_shape(x)[0], 0), np.result_type(getval(x)))
    return W.stack(cols, axis=1)


def _ipow(x, k):
    """x**k by repeated products, as numpy.vander's cumulative product computes it."""
    y = x
    for _ in range(k - 1):
        y = W.multiply(y, x)
    return y


@_numpy_on_plain(np.polyadd, arrays=(0, 1))
def polyadd(a1, a2):
    a1, a2 = W.ravel(_arr(a1)), W.ravel(_arr(a2))
    n1, n2 = _shape(a1)[0], _shape(a2)[0]
    if n1 < n2:
        a1 = W.concatenate([np.zeros(n2 - n1, np.result_type(getval(a1))), a1])
    elif n2 < n1:
        a2 = W.concatenate([np.zeros(n1 - n2, np.result_type(getval(a2))), a2])
    return W.add(a1, a2)


@_numpy_on_plain(np.polysub, arrays=(0, 1))
def polysub(a1, a2):
    return polyadd(a1, W.negative(W.ravel(_arr(a2))))


@_numpy_on_plain(np.polymul, arrays=(0, 1))
def polymul(a1, a2):
    return convolve(a1, a2)


@_numpy_on_plain(np.polyder, arrays=(0,))
def polyder(p, m=1):
    p = W.ravel(_arr(p))
    for _ in range(m):
        n = _shape(p)[0] - 1
        if n <= 0:
            return W.multiply(W.getitem(p, slice(0, 1)), 0.0)
        p = W.multiply(W.getitem(p, slice(0, n)), np.arange(n, 0, -1.0))
    return p


@_numpy_on_plain(np.polyint, arrays=(0,))
def polyint(p, m=1, k=None):
    p = W.ravel(_arr(p))
    ks = np.zeros(m) if k is None else np.atleast_1d(getval(k))
    if len(ks) == 1 and m > 1:
        ks = ks[0] * np.ones(m)
    for i in range(m):
        n = _shape(p)[0]
        p = W.concatenate([W.true_divide(p, np.arange(n, 0, -1.0)),
                           np.asarray([ks[i]], np.result_type(getval(p), ks))])
    return p


@_numpy_on_plain(np.poly, arrays=(0,))
def poly(seq_of_zeros):
    """The monic polynomial with the given roots (1-d); differentiable in the roots."""
    if len(_shape(seq_of_zeros)) != 1:
        raise NotImplementedError("diffsci.numpy.poly: only a 1-d sequence of roots on traced "
                                  "values (pass a traced matrix's eigenvalues)")
    z = _arr(seq_of_zeros)
    zv = getval(z)
    dt = np.result_type(zv, 1.0)
    a = np.ones((1,), dt)
    for i in range(zv.shape[0]):
        a = convolve(a, W.stack([np.ones((), dt), W.negative(W.getitem(z, i))]))
    if np.iscomplexobj(getval(a)):
        roots = np.asarray(zv, complex)
        if np.all(np.sort(roots) == np.sort(roots.conjugate())):
            a = W.real(a)
    return a


@_numpy_on_plain(np.polyfit, arrays=(0, 1))
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """``numpy.polyfit`` (least squares by QR of the column-scaled Vandermonde matrix),
    differentiable in ``x``, ``y`` and ``w``; ``full``/``cov`` are not supported on traced
    values."""
    if full or cov is not False:
        raise NotImplementedError("diffsci.numpy.polyfit: full= and cov= are not supported on "
                                  "traced values")
    from . import linalg as L
    order = int(deg) + 1
    x = _cast(_arr(x), np.float64)
    y = _arr(y)
    y = _cast(y, np.complex128 if np.iscomplexobj(getval(y)) else np.float64)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if len(_shape(x)) != 1:
        raise TypeError("expected 1D vector for x")
    if _shape(x)[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if len(_shape(y)) not in (1, 2):
        raise TypeError("expected 1D or 2D array for y")
    if _shape(x)[0] != _shape(y)[0]:
        raise TypeError("expected x and y to have same length")
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = _cast(_arr(w), np.float64)
        lhs = W.multiply(lhs, W.getitem(w, (slice(None), None)))
        rhs = W.multiply(rhs, w if len(_shape(rhs)) == 1 else W.getitem(w, (slice(None), None)))
    scale = W.sqrt(W.sum(W.multiply(lhs, lhs), axis=0))
    q, r = L.qr(W.true_divide(lhs, scale))
    c = L.solve(r, W.matmul(W.conjugate(W.transpose(q)), rhs))
    return W.true_divide(c, scale) if len(_shape(c)) == 1 else W.true_divide(
        c, W.getitem(scale, (slice(None), None)))


# ---------------------------------------------------------------- products
@_numpy_on_plain(np.matvec, arrays=(0, 1))
def matvec(x1, x2, /, **kwargs):
    return W.squeeze(W.matmul(x1, W.expand_dims(x2, -1)), -1)


@_numpy_on_plain(np.vecmat, arrays=(0, 1))
def vecmat(x1, x2, /, **kwargs):
    return W.squeeze(W.matmul(W.expand_dims(W.conjugate(x1), -2), x2), -2)


# ---------------------------------------------------------------- constructors
@_numpy_on_plain(np.geomspace, arrays=(0, 1))
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``numpy.geomspace`` for real endpoints, differentiable in both."""
    s, e = np.asarray(getval(start)), np.asarray(getval(stop))
    if np.iscomplexobj(s) or np.iscomplexobj(e):
        raise NotImplementedError("diffsci.numpy.geomspace: complex endpoints are not "
                                  "supported on traced values")
    if _util.observed(lambda s, e: bool(np.any(s == 0) or np.any(e == 0)), start, stop):
        raise ValueError("Geometric sequence cannot include zero")
    sign = _util.value_mask(np.sign, start)  # recomputed under jit
    start, stop = W.multiply(start, sign), W.multiply(stop, sign)
    res = C.logspace(W.log10(start), W.log10(stop), num=num, endpoint=endpoint, base=10.0,
                     axis=0)
    bshape = (1,) + np.shape(np.broadcast_arrays(s, e)[0])
    if num > 0:
        pieces = [W.broadcast_to(start, bshape)]
        mid_end = num - 1 if (endpoint and num > 1) else num
        if mid_end > 1:
            pieces.append(W.getitem(res, slice(1, mid_end)))
        if endpoint and num > 1:
            pieces.append(W.broadcast_to(stop, bshape))
        res = W.concatenate(pieces, axis=0)
    res = W.multiply(res, sign)
    if axis != 0:
        res = W.moveaxis(res, 0, axis)
    dt = np.result_type(s, e, float(num)) if dtype is None else dtype
    return _cast(res, dt)


# ---------------------------------------------------------------- phase
@_numpy_on_plain(np.unwrap, arrays=(0,))
def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """``numpy.unwrap``: the multiples of ``period`` it adds are constants (gradient 1)."""
    nd = len(_shape(p))
    axis = _axis(axis, nd)
    if discont is None:
        discont = period / 2
    slice1 = _along(axis, slice(1, None))
    # the multiples of period added: a value_mask (recomputed under diffsci.jit)
    steps = _util.value_mask(_unwrap_steps, p, axis, discont, period)
    tail = W.add(W.getitem(p, slice1), steps)
    return W.concatenate([W.getitem(p, _along(axis, slice(0, 1))), tail], axis=axis)


def _unwrap_steps(pv, axis, discont, period):
    """The cumulated corrections ``numpy.unwrap`` adds to ``pv[1:]`` along ``axis``."""
    dd = np.diff(pv, axis=axis)
    dtype = np.result_type(dd, period)
    if np.issubdtype(dtype, np.integer):
        interval_high, rem = divmod(period, 2)
        boundary_ambiguous = rem == 0
    else:
        interval_high = period / 2
        boundary_ambiguous = True
    interval_low = -interval_high
    ddmod = np.mod(dd - interval_low, period) + interval_low
    if boundary_ambiguous:
        np.copyto(ddmod, interval_high, where=(ddmod == interval_low) & (dd > 0))
    ph_correct = ddmod - dd
    np.copyto(ph_correct, 0, where=abs(dd) < discont)
    return np.cumsum(ph_correct, axis=axis)


@_numpy_on_plain(np.polydiv, arrays=(0, 1))
def polydiv(u, v):
    """Quotient and remainder of polynomial division (NumPy's long division), differentiable
    in both; the remainder's leading zeros are trimmed on the plain values as NumPy does."""
    u = W.add(W.ravel(_arr(u)), 0.0)
    v = W.add(W.ravel(_arr(v)), 0.0)
    m, n = _shape(u)[0] - 1, _shape(v)[0] - 1
    scale = W.true_divide(1.0, W.getitem(v, 0))
    r = [W.getitem(u, i) for i in range(m + 1)]
    q = []
    for k in range(m - n + 1):
        d = W.multiply(scale, r[k])
        q.append(d)
        for j in range(n + 1):
            r[k + j] = W.subtract(r[k + j], W.multiply(d, W.getitem(v, j)))
    dt = np.result_type(getval(u), getval(v))
    q = W.stack(q) if q else np.zeros(1, dt)
    r = W.stack(r)
    while np.allclose(getval(r)[0], 0, rtol=1e-14) and _shape(r)[-1] > 1:
        r = W.getitem(r, slice(1, None))
    return q, r


@_numpy_on_plain(np.apply_over_axes, arrays=(1,))
def apply_over_axes(func, a, axes):
    val = _arr(a)
    nd = len(_shape(val))
    for axis in (axes,) if np.ndim(axes) == 0 else axes:
        axis = _axis(axis, nd)
        res = _arr(func(val, axis))
        if len(_shape(res)) != nd:
            res = W.expand_dims(res, axis)
            if len(_shape(res)) != nd:
                raise ValueError("function is not returning an array of the correct shape")
        val = res
    return val


@_numpy_on_plain(np.i0, arrays=(0,))
def i0(x):
    """Modified Bessel function of the first kind, order 0 (real ``x``); i0' = i1."""
    from ..scipy import special
    _real_only(x, "i0")
    return special.i0(x)


def _asarray_like(np_fun):
    @_numpy_on_plain(np_fun)
    def f(a, dtype=None, *args, **kwargs):
        return C.asarray(a, dtype)
    f.__name__ = f.__qualname__ = np_fun.__name__
    return f


asanyarray = _asarray_like(np.asanyarray)
ascontiguousarray = _asarray_like(np.ascontiguousarray)
asfortranarray = _asarray_like(np.asfortranarray)
asarray_chkfinite = _asarray_like(np.asarray_chkfinite)


# ---- in-place writers: on a traced array they write through its (recorded) __setitem__.
# They are reached by NumPy's dispatch (np.fill_diagonal(traced, v)), not exported: the
# recorded in-place writes are first-order only for now (diffsci._inplace), and every
# export of diffsci.numpy is checked to second order.
def _cycled(values, count):
    """``values`` raveled and repeated cyclically to ``count`` entries (NumPy's rule)."""
    v = W.ravel(_arr(values))
    k = _shape(v)[0]
    if k == 0:
        return v
    return W.getitem(v, np.arange(count) % k)


def _flat_write(a, flat_idx, values):
    idx = np.unravel_index(np.asarray(flat_idx, np.intp), _shape(a))
    if len(idx[0]):
        a[idx] = _cycled(values, len(idx[0]))


def _writer(np_fun):
    """Run ``np_fun`` itself when its destination is a plain array."""
    def deco(f):
        @functools.wraps(f)
        def wrapper(a, *args, **kwargs):
            if not is_tracer(a):
                if _traced(args) or _traced(tuple(kwargs.values())):
                    raise TypeError(
                        f"diffsci.numpy.{np_fun.__name__}: writing traced values into a plain "
                        f"array would cut the gradient; make the destination traced "
                        f"(buf = np.zeros_like(x) for traced x)")
                return np_fun(a, *args, **kwargs)
            return f(a, *args, **kwargs)
        return wrapper
    return deco


@_writer(np.fill_diagonal)
def fill_diagonal(a, val, wrap=False):
    """``numpy.fill_diagonal`` on a traced array (in place, recorded); ``val`` is
    differentiable."""
    shape = _shape(a)
    if len(shape) < 2:
        raise ValueError("array must be at least 2-d")
    if len(shape) == 2:
        step, end = shape[1] + 1, (None if wrap else shape[1] * shape[1])
    else:
        if not np.all(np.diff(shape) == 0):
            raise ValueError("All dimensions of input must be of equal length")
        step, end = 1 + int(np.cumprod(shape[:-1]).sum()), None
    _flat_write(a, np.arange(int(np.prod(shape)))[:end:step], val)


@_writer(np.put)
def put(a, ind, v, mode="raise"):
    n = int(np.prod(_shape(a)))
    ind = np.asarray(getval(ind)).ravel()
    if mode == "wrap":
        ind = ind % n
    elif mode == "clip":
        ind = np.clip(ind, 0, n - 1)
    elif np.any((ind < -n) | (ind >= n)):
        raise IndexError(f"index out of range for array of size {n}")
    _flat_write(a, ind % n, v)


@_writer(np.place)
def place(arr, mask, vals):
    _flat_write(arr, np.flatnonzero(np.ravel(getval(mask))), vals)


@_writer(np.putmask)
def putmask(a, mask, values):
    m = np.asarray(getval(mask), bool)
    if m.size != int(np.prod(_shape(a))):
        raise ValueError("putmask: mask and data must be the same size")
    flat = np.flatnonzero(m.ravel())
    vals = W.ravel(_arr(values))
    k = _shape(vals)[0]
    if len(flat) and k:
        idx = np.unravel_index(flat, _shape(a))
        a[idx] = W.getitem(vals, flat % k)  # putmask cycles by position, not by count


@_writer(np.put_along_axis)
def put_along_axis(arr, indices, values, axis):
    shape = _shape(arr)
    if axis is None:
        raise NotImplementedError("diffsci.numpy.put_along_axis: axis=None on traced arrays")
    axis = _axis(axis, len(shape))
    ind = np.asarray(getval(indices))
    full = np.broadcast_shapes(ind.shape, _shape(values)) if np.ndim(getval(values)) else \
        ind.shape
    idx = tuple(np.broadcast_to(ind, full) if d == axis else np.broadcast_to(
        np.arange(shape[d]).reshape((1,) * d + (-1,) + (1,) * (len(shape) - d - 1)), full)
        for d in range(len(shape)))
    arr[idx] = W.broadcast_to(_arr(values), full)


@_writer(np.copyto)
def copyto(dst, src, casting="same_kind", where=True):
    if where is True:
        dst[...] = W.broadcast_to(_arr(src), _shape(dst))
    else:
        m = np.broadcast_to(np.asarray(getval(where), bool), _shape(dst))
        dst[m] = W.getitem(W.broadcast_to(_arr(src), _shape(dst)), m)


# ---- non-differentiable (integer results): they take traced values and return plain ones
_NONDIFFERENTIABLE_MORE = ["nanargmax", "nanargmin", "diag_indices_from", "mask_indices",
                           "bitwise_count", "bitwise_invert", "bitwise_left_shift",
                           "bitwise_right_shift", "isnat", "issubdtype", "isdtype",
                           "promote_types", "iterable", "typename", "mintypecode"]
for _n in _NONDIFFERENTIABLE_MORE:
    if hasattr(np, _n):
        globals()[_n] = nondifferentiable(getattr(np, _n))
del _n
__all__ += ["polydiv", "apply_over_axes", "i0", "asanyarray", "ascontiguousarray",
            "asfortranarray", "asarray_chkfinite"]
WRITERS = {np.fill_diagonal: fill_diagonal, np.put: put, np.place: place, np.putmask: putmask,
           np.put_along_axis: put_along_axis, np.copyto: copyto}
for _np_f, _f in WRITERS.items():
    register_numpy_function(_np_f, _f)
del _np_f, _f
__all__ += [n for n in _NONDIFFERENTIABLE_MORE if hasattr(np, n)]


@_numpy_on_plain(np.kaiser, arrays=())
def kaiser(M, beta):
    """The Kaiser window, differentiable in ``beta`` (NumPy's formula through ``i0``)."""
    if M < 1:
        return np.array([])
    if M == 1:
        return np.ones(1, np.result_type(getval(beta), 1.0))
    n = np.arange(0, M)
    alpha = (M - 1) / 2.0
    return W.true_divide(i0(W.multiply(beta, np.sqrt(1 - ((n - alpha) / alpha) ** 2.0))),
                         i0(beta))


__all__ += ["kaiser"]


def _nonzero_positions(v):
    return np.nonzero(np.ravel(v))[0]


@_numpy_on_plain(np.roots, arrays=(0,))
def roots(p):
    """Roots of a polynomial: the eigenvalues of its companion matrix (NumPy's algorithm),
    differentiable in the coefficients where the roots are simple.  Leading and trailing
    coefficients that are exactly 0 are structural, as NumPy strips them: the roots at 0
    they give are constants."""
    from . import linalg as L
    p = _arr(p)
    if len(_shape(p)) == 0:
        p = W.reshape(p, (1,))
    if len(_shape(p)) != 1:
        raise ValueError("Input must be a rank-1 array.")
    pv = getval(p)
    nz = _util.observed(_nonzero_positions, p)  # structural: a guard under diffsci.jit
    if len(nz) == 0:
        return np.array([])
    trailing = len(pv) - nz[-1] - 1
    p = W.getitem(p, slice(int(nz[0]), int(nz[-1]) + 1))
    p = _cast(p, np.result_type(getval(p), 1.0))
    n = _shape(p)[0]
    if n > 1:
        first = W.true_divide(W.negative(W.getitem(p, slice(1, None))), W.getitem(p, 0))
        below = np.diag(np.ones(n - 2, np.result_type(getval(p))), -1)[1:]
        r = L.eigvals(W.concatenate([W.reshape(first, (1, n - 1)), below], axis=0))
    else:
        r = np.array([])
    return W.concatenate([r, np.zeros(trailing, np.result_type(getval(r)))]) if trailing \
        else r


__all__ += ["roots"]
