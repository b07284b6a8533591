"""The ndarray face of :class:`~diffsci._core.Tracer`: operators, methods, NumPy protocols.

Operators are bound straight to primitives (``Tracer.__mul__ is multiply``) so
``x * y`` costs one primitive call.  ``__array_ufunc__`` and
``__array_function__`` route plain NumPy calls (``np.sin(x)``, ``np.sum(x)``)
to diffsci's primitives; a NumPy function without a diffsci rule raises.
"""

from __future__ import annotations

import dis
import sys
import threading

import numpy as np

from .. import _core, _inplace
from .._core import Dual, Tracer, TracerConversionError, getval
from . import _views

_UFUNCS = {}  # np.ufunc -> diffsci function
_FUNCS = {}  # numpy function -> diffsci function
_REDUCE = {}  # np.ufunc -> diffsci reduction (np.add.reduce -> sum)
_ACCUMULATE = {}  # np.ufunc -> diffsci accumulation (np.add.accumulate -> cumsum)


def register_numpy_function(np_func, diffsci_func):
    """Route calls of NumPy function ``np_func`` on traced values to ``diffsci_func``.

    Use it to make a plain-NumPy function you have written a rule for (with
    ``diffsci.extend.primitive``/``defvjp``) dispatch from ``np.<name>(tracer)``.
    """
    if isinstance(np_func, np.ufunc):
        _UFUNCS[np_func] = diffsci_func
    else:
        _FUNCS[np_func] = diffsci_func


def _no_rule(what, name):
    return TypeError(
        f"{what} {name} was called on a traced value but diffsci has no rule for it. "
        f"Use a diffsci.numpy function that has one, or give it a rule: "
        f"p = diffsci.extend.primitive(numpy_func); diffsci.extend.defvjp(p, vjp_rule); "
        f"diffsci.extend.register_numpy_function(numpy_func, p)."
    )


def _array_ufunc(self, ufunc, method, *inputs, **kwargs):
    if not kwargs and method == "__call__":  # np.sin(x): the common call, first
        f = _UFUNCS.get(ufunc)
        if f is not None:
            return f(*inputs)
    if kwargs and method == "__call__" and ("out" in kwargs or "where" in kwargs):
        # compute, then write into the output array (in place), keeping it where where=False
        return _inplace.ufunc_out(lambda *a, **k: _array_ufunc(self, ufunc, method, *a, **k),
                                  ufunc, inputs, kwargs)
    out = kwargs.pop("out", None)
    if out is not None:  # reduce/accumulate into out
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != 1:
            raise TypeError(f"numpy.{ufunc.__name__}: out= with several outputs on traced values")
        if kwargs.get("where", True) is not True:
            raise NotImplementedError(
                f"numpy.{ufunc.__name__}.{method}: where= on traced values is not supported; "
                f"mask the input with np.where first")
        return _inplace.write_out(outs[0], _array_ufunc(self, ufunc, method, *inputs, **kwargs),
                                  f"numpy.{ufunc.__name__}.{method}")
    if method == "__call__":
        f = _UFUNCS.get(ufunc)
    elif method in ("reduce", "accumulate"):
        f = (_REDUCE if method == "reduce" else _ACCUMULATE).get(ufunc)
        if len(inputs) == 1:  # ufunc.reduce/accumulate work along axis 0 by default
            kwargs.setdefault("axis", 0)
    else:
        f = None
    if f is None:
        label = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        raise _no_rule("NumPy ufunc", f"numpy.{label}")
    return f(*inputs, **kwargs)


# Constructors taking like= (NEP 35): with a traced like= they make a traced buffer.
_LIKE = {getattr(np, n) for n in ("zeros", "ones", "empty", "full", "arange", "eye", "identity",
                                  "array", "asarray", "asanyarray", "ascontiguousarray",
                                  "asfortranarray", "fromfunction", "fromiter", "require")
         if hasattr(np, n)}


def _array_function(self, func, types, args, kwargs):
    if func in _LIKE:  # np.zeros(n, like=x): NumPy drops like= and calls us on x
        if _closed(self):
            raise _core.escaped(self._tape)
        res = _FUNCS.get(func, func)(*args, **kwargs)
        if type(res) is Tracer or type(res) is Dual:
            return res
        return _inplace.traced_like(self, np.asarray(res))
    f = _FUNCS.get(func)
    if f is None:
        mod = getattr(func, "__module__", "numpy") or "numpy"
        raise _no_rule("NumPy function", f"{mod}.{func.__name__}")
    return f(*args, **kwargs)


def _closed(self):
    """True if the transform that traced ``self`` has returned (the value escaped)."""
    t = self._tape
    return (type(t.records) is _core._ClosedRecords) if type(self) is Tracer \
        else t.writes is _core._CLOSED


def _array(self, dtype=None, *args, **kwargs):
    if _closed(self):
        raise _core.escaped(self._tape)
    if dtype is not None and np.dtype(dtype).kind in "biu":
        # an explicit cast to integers or booleans (np.int64(x), np.asarray(x, int)): its
        # derivative is zero wherever it exists, so the plain value loses nothing
        return np.asarray(getval(self), dtype)
    raise TracerConversionError(
        "a traced value is being converted to a plain NumPy array (np.asarray, np.array, "
        "ndarray.__array__ or a compiled extension). That would silently cut the gradient. "
        "Use diffsci.numpy / NumPy functions that dispatch to diffsci (np.stack instead of "
        "np.array([...]) for lists of traced values); to fill a buffer with traced values "
        "create it traced (buf = np.zeros_like(x) or np.zeros(n, like=x) for traced x), not "
        "with np.zeros; or call diffsci.stop_gradient(x) to take the plain value on purpose."
    )


_STORE_SUBSCR = dis.opmap["STORE_SUBSCR"]
_pending = threading.local()


def take_pending_store_error():
    """The error of the last ``plain[i] = traced`` in this thread, once (NumPy replaces it
    with "setting an array element with a sequence"; the transforms re-raise it)."""
    err = getattr(_pending, "error", None)
    _pending.error = None
    return err


def _plain(kind):
    """float()/complex() of a traced value: refused, naming the fix.

    Python calls these implicitly (``math.sin(x)``, ``math.fsum``, ``np.fromiter``, NumPy's
    ``plain_array[i] = traced``) and each would silently cut the gradient.  ``x.item()`` and
    ``diffsci.stop_gradient(x)`` are the explicit ways to take the plain value.
    """

    def conv(self):
        if _closed(self):
            raise _core.escaped(self._tape)
        frame = sys._getframe(1)
        if frame.f_code.co_code[frame.f_lasti] == _STORE_SUBSCR:
            err = TracerConversionError(
                "a traced value is being stored into a plain NumPy array (plain[i] = traced); "
                "that would silently cut the gradient. Create the buffer traced instead "
                "(buf = np.zeros_like(x) or np.zeros(n, like=x) for traced x), or store "
                "x.item() to cut it on purpose.")
            _pending.error = err
            raise err
        err = TracerConversionError(
            f"{kind}() of a traced value (also called implicitly by math.sin/math.exp/"
            f"math.fsum, np.fromiter, ...) would silently cut the gradient. Use the NumPy "
            f"function instead (np.sin for math.sin, np.sum for math.fsum); to take the plain "
            f"value on purpose, call x.item() or diffsci.stop_gradient(x).")
        _pending.error = err
        raise err

    return conv


def _reduce(self, *args):
    raise TracerConversionError(
        "a traced value cannot be pickled (its derivative would be lost); pickle "
        "diffsci.stop_gradient(x) or the result of the transform")


def _sort_in_place(dnp):
    """``x.sort()`` sorts in place and returns None, as ndarray.sort does."""

    def sort(self, axis=-1, kind=None, order=None):
        _inplace.setitem(self, Ellipsis, dnp.sort(self, axis=axis, kind=kind, order=order))

    return sort


def _shape(self):
    v = self._value
    return v.shape if hasattr(v, "shape") else np.shape(v)


def _iter(self):
    for i in range(len(self)):
        yield self[i]


def _swap(f):
    return lambda self, other: f(other, self)


def _compare(f):
    return lambda self, other: f(getval(self), getval(other))


def install(dnp):
    """Attach operators, methods and the NumPy protocols to the traced types, from ``dnp``."""
    for T in (Tracer, Dual):
        _attach(T, dnp)
    _build_tables(dnp)


def _attach(T, dnp):
    # Arithmetic operators: bound directly to the primitives.
    # (each primitive's ``binary``: its two-argument fast path, without *args/**kwargs).
    for op, name in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                     ("truediv", "true_divide"), ("pow", "power"), ("matmul", "matmul")]:
        f = getattr(dnp, name).binary
        setattr(T, f"__{op}__", f)
        setattr(T, f"__r{op}__", _swap(f))
    T.__neg__, T.__pos__, T.__abs__ = dnp.negative, dnp.positive, dnp.absolute
    for op, name in [("floordiv", "floor_divide"), ("mod", "mod")]:
        if hasattr(dnp, name):
            setattr(T, f"__{op}__", getattr(dnp, name))
            setattr(T, f"__r{op}__", _swap(getattr(dnp, name)))
    # Comparisons give plain booleans (for control flow); they are not differentiable.
    T.__eq__ = _compare(np.equal)
    T.__ne__ = _compare(np.not_equal)
    T.__lt__ = _compare(np.less)
    T.__le__ = _compare(np.less_equal)
    T.__gt__ = _compare(np.greater)
    T.__ge__ = _compare(np.greater_equal)
    T.__hash__ = None
    # Conversions to plain Python values cut the gradient (as in PyTorch).
    # float()/complex() (often implicit: math.sin) are refused; int() and bool() (indices,
    # control flow: derivative zero) and x.item() (the explicit cut) return plain values.
    T.__float__ = _plain("float")
    T.__complex__ = _plain("complex")
    T.__int__ = lambda self: int(getval(self))
    T.__reduce__ = T.__reduce_ex__ = _reduce
    T.__copy__ = lambda self: dnp.copy(self)
    T.__deepcopy__ = lambda self, memo: dnp.copy(self)
    T.__bool__ = lambda self: bool(getval(self))
    T.__index__ = lambda self: getval(self).__index__()
    T.__format__ = lambda self, spec: format(getval(self), spec)
    T.item = lambda self, *a: getval(self).item(*a)
    T.tolist = lambda self: getval(self).tolist()
    T.__len__ = lambda self: len(getval(self))
    T.__iter__ = _iter
    T.__getitem__ = dnp.getitem
    # In-place writes go to the real memory and are recorded (see diffsci/_inplace.py).
    T.__setitem__ = _inplace.setitem
    for op, name in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"),
                     ("truediv", "true_divide"), ("pow", "power"), ("matmul", "matmul")]:
        setattr(T, f"__i{op}__", _inplace.inplace(getattr(dnp, name)))
    # NumPy protocols.
    T.__array__ = _array
    T.__array_ufunc__ = _array_ufunc
    T.__array_function__ = _array_function
    # Attributes.
    T.shape = property(_shape)
    T.ndim = property(lambda self: len(_shape(self)))
    T.size = property(lambda self: int(np.prod(_shape(self), dtype=np.int64)))
    T.dtype = property(lambda self: np.result_type(getval(self)))
    T.T = property(lambda self: dnp.transpose(self))
    if hasattr(dnp, "real"):
        T.real = property(lambda self: dnp.real(self))
        T.imag = property(lambda self: dnp.imag(self))
    if hasattr(dnp, "conj"):
        T.conj = T.conjugate = lambda self: dnp.conj(self)

    # Methods that are functions of the array, by name.
    def method(name):
        f = getattr(dnp, name)
        return lambda self, *args, **kwargs: f(self, *args, **kwargs)

    for name in [
        "sum", "mean", "prod", "max", "min", "std", "var", "cumsum", "cumprod", "ravel",
        "swapaxes", "squeeze", "dot", "clip", "trace", "diagonal", "repeat", "take",
        "all", "any", "argmax", "argmin", "argsort", "nonzero", "round", "copy", "sort",
        "astype", "flatten", "ptp",
    ]:
        if hasattr(dnp, name):
            setattr(T, name, method(name))
    T.flatten = lambda self, order="C": _views.flatten(self, order)  # a copy, as NumPy's
    T.astype = lambda self, dtype, order="K", casting="unsafe", subok=True, copy=True: (
        dnp.astype(self, dtype, copy=copy))
    T.sort = _sort_in_place(dnp)
    T.reshape = lambda self, *shape, **kw: dnp.reshape(
        self, shape[0] if len(shape) == 1 else shape, **kw)
    T.transpose = lambda self, *axes: dnp.transpose(
        self, (axes[0] if len(axes) == 1 else axes) if axes else None)



def _build_tables(dnp):
    """The dispatch tables for NumPy's protocols, by matching names."""
    for name in dir(dnp):
        if name.startswith("_"):
            continue
        ours, theirs = getattr(dnp, name), getattr(np, name, None)
        if theirs is None or ours is theirs or not callable(theirs):
            continue
        if isinstance(theirs, np.ufunc):
            _UFUNCS[theirs] = ours
        elif callable(ours):
            _FUNCS[theirs] = ours
    for sub in ("linalg", "fft"):
        ours_mod, theirs_mod = getattr(dnp, sub, None), getattr(np, sub, None)
        if ours_mod is None or theirs_mod is None:
            continue
        for name in getattr(ours_mod, "__all__", []):
            theirs = getattr(theirs_mod, name, None)
            if theirs is not None:
                _FUNCS[theirs] = getattr(ours_mod, name)
    for uf, red in [("add", "sum"), ("multiply", "prod"), ("maximum", "amax"),
                    ("minimum", "amin")]:
        if hasattr(dnp, red):
            _REDUCE[getattr(np, uf)] = getattr(dnp, red)
    for uf, acc in [("add", "cumsum"), ("multiply", "cumprod")]:
        if hasattr(dnp, acc):
            _ACCUMULATE[getattr(np, uf)] = getattr(dnp, acc)
