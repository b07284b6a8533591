"""Forward-mode rules for diffsci.numpy: shapes, indexing and products.

Same conventions as ``_jvps.py``.  Shape and indexing primitives are linear:
they apply themselves to the tangent.  Products are multilinear: the tangent
of one operand takes that operand's place.  Primitives over a sequence of
arrays (``concatenate``, ``stack``, ``einsum``) need a rule per argument
position: their VJP rule factory (``_wrap._VARIADIC_RULES``, filled by
``_vjps_shape.py``) is wrapped so that making the VJP rule of argument ``i``
also registers the JVP rule of argument ``i`` (:func:`_variadic`).
"""

from __future__ import annotations

import numpy as np

from .._core import defjvp, getval
from . import _vjps_shape  # noqa: F401  the VJP factories wrapped below must exist first
from . import _wrap as W
from ._jvps import _bc, _linear

# ---------------------------------------------------------------- shapes
for _p in (W.reshape, W.ravel, W.transpose, W.moveaxis, W.swapaxes, W.expand_dims, W.squeeze,
           W.broadcast_to, W.flip, W.roll, W.tile, W.triu, W.tril, W.copy, W._atleast_1d_p,
           W._atleast_2d_p, W._atleast_3d_p, W.getitem):
    defjvp(_p, _linear(_p))


def _astype_jvp(t, ans, x, dtype=None, copy=True):
    # A complex -> real cast keeps the real part (without NumPy's ComplexWarning).
    if np.dtype(dtype).kind != "c" and np.iscomplexobj(t):
        t = np.real(t)
    return W._astype_p(t, dtype=dtype, copy=copy)


def _pad_jvp(t, ans, x, pad_width=None, mode="constant", **kwargs):
    # 'constant' and 'empty' padding is constant: the tangent is padded with zeros.
    return W._pad_p(t, pad_width=pad_width)


defjvp(W._astype_p, _astype_jvp)
defjvp(W._pad_p, _pad_jvp)
defjvp(W.scatter_add,
       lambda t, ans, base, v, idx=None: _bc(t, ans),
       lambda t, ans, base, v, idx=None: W.scatter_add(
           np.zeros(np.shape(ans), np.result_type(getval(t), getval(ans))), t, idx))


# ---------------------------------------------------------------- sequences of arrays
def _variadic(prim, make_jvp):
    """Register JVP rules of a variadic primitive alongside its lazily made VJP rules."""
    make_vjp = W._VARIADIC_RULES[prim]

    def make(i):
        prim.jvps[i] = make_jvp(i)
        return make_vjp(i)

    W._VARIADIC_RULES[prim] = make
    for i in list(prim.vjps):
        prim.jvps[i] = make_jvp(i)


def _along(ndim, axis, before, after):
    pw = [(0, 0)] * ndim
    pw[axis] = (before, after)
    return pw


def _concatenate_jvp(i):
    # Argument i's tangent in its slot, zeros elsewhere: one pad.
    def rule(t, ans, *arrays, axis=0, **kwargs):
        if axis is None:
            sizes = [np.size(a) for a in arrays]
            t, ax = W.ravel(t), 0
        else:
            ax = axis % np.ndim(ans)
            sizes = [np.shape(a)[ax] for a in arrays]
        pw = _along(np.ndim(ans), ax, sum(sizes[:i]), sum(sizes[i + 1:]))
        return W._pad_p(t, pad_width=pw)
    return rule


def _stack_jvp(i):
    def rule(t, ans, *arrays, axis=0, **kwargs):
        ax = axis % np.ndim(ans)
        pw = _along(np.ndim(ans), ax, i, len(arrays) - 1 - i)
        return W._pad_p(W.expand_dims(t, ax), pad_width=pw)
    return rule


def _einsum_jvp(i):
    # Multilinear: operand i replaced by its tangent.
    def rule(t, ans, *ops, subscripts, **kwargs):
        ops = ops[:i] + (t,) + ops[i + 1:]
        return W._call_variadic(W._einsum_p, ops, subscripts=subscripts, **kwargs)
    return rule


_variadic(W._concatenate_p, _concatenate_jvp)
_variadic(W._stack_p, _stack_jvp)
_variadic(W._einsum_p, _einsum_jvp)

# ---------------------------------------------------------------- products
defjvp(W.matmul, lambda t, ans, x, y: W.matmul(t, y), lambda t, ans, x, y: W.matmul(x, t))
defjvp(W.dot, lambda t, ans, x, y: W.dot(t, y), lambda t, ans, x, y: W.dot(x, t))
defjvp(W.tensordot,
       lambda t, ans, a, b, axes=2: W.tensordot(t, b, axes),
       lambda t, ans, a, b, axes=2: W.tensordot(a, t, axes))
