"""``vectorize`` and ``fromfunction`` of diffsci.numpy, ``tensorinv`` and ``tensorsolve`` of
its linalg: composites of traced operations.

``vectorize`` calls the Python function once per broadcast element as NumPy's does, here
with traced scalars (elements of the traced inputs), and stacks the results: every
derivative is the function's own, element by element.  ``fromfunction`` hands the function
plain index arrays (as NumPy), so it differentiates through whatever traced values the
function closes over.  ``tensorinv``/``tensorsolve`` reshape to ``inv``/``solve`` as NumPy
does.
"""

from __future__ import annotations

import functools

import numpy as np

from .._core import getval, is_tracer
from . import _composite as C
from . import _wrap as W

__all__ = ["fromfunction", "vectorize"]


def _traced(xs):
    return any(is_tracer(x) for x in xs)


class vectorize:
    """``numpy.vectorize``: ``pyfunc`` applied elementwise over broadcast inputs, traced
    inputs included (the function is then called with traced scalars).

    Args:
        pyfunc: a function of scalars returning a scalar or a tuple of scalars.
        otypes, doc, excluded, cache, signature: as NumPy's; ``excluded`` positions and
            names are passed unchanged.  ``signature`` (generalised ufuncs) works on plain
            values only.

    Raises:
        NotImplementedError: for ``signature`` with traced inputs.

    Example:
        >>> import diffsci as ds
        >>> f = vectorize(lambda x, y: x * y if x > 0 else y)
        >>> ds.grad(lambda x: f(x, 3.0).sum())(np.array([1.0, -1.0])).tolist()
        [3.0, 0.0]
    """

    def __init__(self, pyfunc=np._NoValue, otypes=None, doc=None, excluded=None, cache=False,
                 signature=None):
        self.pyfunc = pyfunc
        self.excluded = set(excluded or ())
        self.signature = signature
        self._plain = np.vectorize(pyfunc, otypes=otypes, doc=doc, excluded=excluded,
                                   cache=cache, signature=signature)
        self.__doc__ = doc if doc is not None else getattr(pyfunc, "__doc__", None)
        functools.update_wrapper(self, pyfunc, updated=())

    def __call__(self, *args, **kwargs):
        varying = [i for i in range(len(args)) if i not in self.excluded]
        varying_kw = [k for k in kwargs if k not in self.excluded]
        if not _traced([args[i] for i in varying] + [kwargs[k] for k in varying_kw]):
            return self._plain(*args, **kwargs)
        if self.signature is not None:
            raise NotImplementedError("diffsci.numpy.vectorize: signature= is supported for "
                                      "plain inputs only")
        arrays = [C.asarray(args[i]) if is_tracer(args[i]) else np.asarray(args[i])
                  for i in varying] + [C.asarray(kwargs[k]) if is_tracer(kwargs[k])
                                       else np.asarray(kwargs[k]) for k in varying_kw]
        shape = np.broadcast_shapes(*[np.shape(getval(a)) for a in arrays])
        arrays = [W.broadcast_to(a, shape) if is_tracer(a) else np.broadcast_to(a, shape)
                  for a in arrays]
        outs = []
        for idx in np.ndindex(*shape):
            a = list(args)
            for j, i in enumerate(varying):
                a[i] = arrays[j][idx]
            kw = dict(kwargs)
            for j, k in enumerate(varying_kw):
                kw[k] = arrays[len(varying) + j][idx]
            outs.append(self.pyfunc(*a, **kw))
        if not outs:
            return self._plain(*args, **kwargs)
        if isinstance(outs[0], tuple):
            return tuple(_stack([o[m] for o in outs], shape) for m in range(len(outs[0])))
        return _stack(outs, shape)


def _stack(values, shape):
    values = [C.asarray(v) if is_tracer(v) else np.asarray(v) for v in values]
    if not _traced(values):
        return np.reshape(np.stack(values), shape)
    dtype = np.result_type(*[getval(v) for v in values])
    values = [v if is_tracer(v) else np.asarray(v, dtype) for v in values]
    return W.reshape(W.stack(values), shape)


def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """``numpy.fromfunction``: ``function(*indices(shape, dtype), **kwargs)``; the indices are
    plain, the function may use traced values it closes over.

    Example:
        >>> import diffsci as ds
        >>> ds.grad(lambda s: fromfunction(lambda i, j: s * i + j, (2, 2)).sum())(1.0)
        2.0
    """
    if like is not None:
        return np.fromfunction(function, shape, dtype=dtype, like=like, **kwargs)
    return function(*np.indices(shape, dtype=dtype), **kwargs)


def tensorinv(a, ind=2):
    """``numpy.linalg.tensorinv``: the inverse of ``a`` as a map from its first ``ind`` axes
    to the rest (``inv`` of the reshaped matrix), differentiable where that is invertible."""
    from . import linalg as L
    if not is_tracer(a):
        return np.linalg.tensorinv(a, ind)
    if ind <= 0:
        raise ValueError(f"diffsci.numpy.linalg.tensorinv: ind must be a positive integer, "
                         f"got {ind!r}")
    old = np.shape(getval(a))
    prod = int(np.prod(old[:ind]))
    inv = L.inv(W.reshape(a, (prod, -1)))
    return W.reshape(inv, old[ind:] + old[:ind])


def tensorsolve(a, b, axes=None):
    """``numpy.linalg.tensorsolve``: ``x`` with ``tensordot(a, x, x.ndim) = b`` (``solve`` of
    the reshaped system), differentiable in ``a`` and ``b``."""
    from . import linalg as L
    if not (is_tracer(a) or is_tracer(b)):
        return np.linalg.tensorsolve(a, b, axes)
    a = C.asarray(a) if is_tracer(a) else np.asarray(a)
    an = np.ndim(getval(a))
    if axes is not None:
        allaxes = list(range(an))
        for k in axes:
            allaxes.remove(k)
            allaxes.insert(an, k)
        a = W.transpose(a, allaxes)
    bshape = np.shape(getval(b))
    old = np.shape(getval(a))[-(an - len(bshape)):]
    prod = int(np.prod(old))
    if int(np.prod(bshape)) != prod:
        raise ValueError(f"diffsci.numpy.linalg.tensorsolve: a's trailing axes {old} must hold "
                         f"as many entries as b's shape {bshape}")
    x = L.solve(W.reshape(a, (prod, prod)), W.reshape(b, (prod,)))
    return W.reshape(x, old)
