"""Reverse-mode rules for diffsci.numpy, one line per primitive.

A rule is ``rule(g, ans, *args, **kwargs) -> cotangent`` for one positional
argument.  Conventions (see DESIGN.md): for holomorphic f the rule is
``g * conj(f'(x))``; for a linear map A it is ``Aᴴ g``; broadcasting is undone
by :func:`unbroadcast` only.  Rules use NumPy calls, which dispatch back to
diffsci on traced values, so every rule is itself differentiable.
"""

from __future__ import annotations

import numpy as np

from .._core import defvjp, getval
from . import _wrap as W
from ._util import cj, unbroadcast

# ---------------------------------------------------------------- arithmetic
defvjp(W.add, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: unbroadcast(g, y))
defvjp(W.subtract, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: unbroadcast(-g, y))
defvjp(W.multiply,
       lambda g, ans, x, y: unbroadcast(g * cj(y), x),
       lambda g, ans, x, y: unbroadcast(g * cj(x), y))
defvjp(W.true_divide,
       lambda g, ans, x, y: unbroadcast(g / cj(y), x),
       lambda g, ans, x, y: unbroadcast(-g * cj(ans / y), y))
defvjp(W.negative, lambda g, ans, x: -g)
defvjp(W.positive, lambda g, ans, x: g)


def _power_x(g, ans, x, y):
    if type(y) is int or type(y) is float:  # the common x ** 2: no masking needed
        return g * cj(y * x ** (y - 1)) if y != 0 else 0 * g
    return unbroadcast(g * cj(y * x ** np.where(y == 0, 1, y - 1)), x)


def _power_y(g, ans, x, y):
    safe = np.where(x == 0, 1, x)
    return unbroadcast(g * cj(np.where(x == 0, 0, np.log(safe) * ans)), y)


defvjp(W.power, _power_x, _power_y)

# ---------------------------------------------------------------- elementwise math
defvjp(W.sqrt, lambda g, ans, x: g / cj(2 * ans))
defvjp(W.square, lambda g, ans, x: g * cj(2 * x))
defvjp(W.exp, lambda g, ans, x: g * cj(ans))
defvjp(W.log, lambda g, ans, x: g / cj(x))
defvjp(W.sin, lambda g, ans, x: g * cj(np.cos(x)))
defvjp(W.cos, lambda g, ans, x: -g * cj(np.sin(x)))
defvjp(W.tan, lambda g, ans, x: g * cj(1 + ans * ans))
defvjp(W.tanh, lambda g, ans, x: g * cj(1 - ans * ans))


def _abs_vjp(g, ans, x):
    # Real x: sign(x) (0 at the kink). Complex z: the cotangent is real g times z/|z|.
    if np.iscomplexobj(x):
        return np.real(g) * x / np.where(ans == 0, 1, ans)
    return g * np.sign(x)


defvjp(W.absolute, _abs_vjp)


# ---------------------------------------------------------------- reductions
def _expand_reduced(g, x, axis, keepdims):
    """Broadcast a reduction's cotangent back to the input's shape."""
    shape = np.shape(x)
    if axis is not None and not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        g = np.expand_dims(g, tuple(a % len(shape) for a in axes))
    return np.broadcast_to(g, shape)


def _sum_vjp(g, ans, x, axis=None, dtype=None, keepdims=False, **kw):
    return _expand_reduced(g, x, axis, keepdims)


def _mean_vjp(g, ans, x, axis=None, dtype=None, keepdims=False, **kw):
    n = np.size(x) / np.size(ans)
    return _expand_reduced(g, x, axis, keepdims) / n


defvjp(W.sum, _sum_vjp)
defvjp(W.mean, _mean_vjp)

# ---------------------------------------------------------------- shapes
defvjp(W.reshape, lambda g, ans, x, *a, **k: np.reshape(g, np.shape(x)))


def _transpose_vjp(g, ans, x, axes=None):
    return np.transpose(g) if axes is None else np.transpose(g, np.argsort(axes))


defvjp(W.transpose, _transpose_vjp)


# ---------------------------------------------------------------- indexing
def _is_basic_index(idx):
    items = idx if type(idx) is tuple else (idx,)
    for it in items:
        if not (it is None or it is Ellipsis or type(it) in (int, slice)
                or isinstance(it, np.integer)):
            return False
    return True


def _getitem_vjp(g, ans, x, idx):
    out = np.zeros(np.shape(x), np.result_type(getval(g), getval(x)))
    if type(g) is not np.ndarray and not isinstance(g, np.generic):  # traced: stay differentiable
        return W.scatter_add(out, g, idx=idx)
    if _is_basic_index(idx):
        out[idx] = g
    else:
        np.add.at(out, idx, g)
    return out


defvjp(W.getitem, _getitem_vjp)
defvjp(W.scatter_add,
       lambda g, ans, base, v, idx: g,
       lambda g, ans, base, v, idx: unbroadcast(W.getitem(g, idx), v))


# ---------------------------------------------------------------- products
def _matmul_x(g, ans, x, y):
    if np.ndim(y) == 1:
        if np.ndim(x) == 1:
            return g * cj(y)
        return unbroadcast(np.expand_dims(g, -1) * cj(y), x)
    if np.ndim(x) == 1:
        return unbroadcast(np.matmul(np.expand_dims(g, -2), np.swapaxes(cj(y), -1, -2))[..., 0, :], x)
    return unbroadcast(np.matmul(g, np.swapaxes(cj(y), -1, -2)), x)


def _matmul_y(g, ans, x, y):
    if np.ndim(x) == 1:
        if np.ndim(y) == 1:
            return g * cj(x)
        return unbroadcast(np.expand_dims(cj(x), -1) * np.expand_dims(g, -2), y)
    if np.ndim(y) == 1:
        return unbroadcast(np.matmul(np.swapaxes(cj(x), -1, -2), np.expand_dims(g, -1))[..., 0], y)
    return unbroadcast(np.matmul(np.swapaxes(cj(x), -1, -2), g), y)


defvjp(W.matmul, _matmul_x, _matmul_y)
