"""Forward-mode rules for diffsci.numpy, one line per primitive.

A rule is ``rule(t, ans, *args, **kwargs) -> output tangent`` for one
positional argument's tangent ``t``; a primitive's output tangent is the sum
over its dual arguments.  Holomorphic f: ``t * f'(x)`` (no conjugate — the
VJP is its adjoint ``g * conj(f'(x))``).  A tangent must have the output's
shape, so rules of broadcasting primitives broadcast (``_bc``).  Primitives
without an explicit rule still work in forward mode through the VJP
(``_core._jvp_from_vjp``), at the price of an extra reverse pass.
"""

from __future__ import annotations

import numpy as np

from .._core import defjvp
from . import _wrap as W


def _bc(t, ans):
    """Broadcast a tangent to the output's shape (needed when only one operand is dual)."""
    shape = np.shape(ans) if not hasattr(ans, "shape") else ans.shape
    return t if t.shape == shape else W.broadcast_to(t, shape)


def _linear(prim):
    """JVP of a primitive that is linear in its first argument: apply it to the tangent."""
    return lambda t, ans, x, *args, **kwargs: prim(t, *args, **kwargs)


# ---------------------------------------------------------------- arithmetic
defjvp(W.add, lambda t, ans, x, y: _bc(t, ans), lambda t, ans, x, y: _bc(t, ans))
defjvp(W.subtract, lambda t, ans, x, y: _bc(t, ans), lambda t, ans, x, y: _bc(-t, ans))
defjvp(W.multiply, lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t)
defjvp(W.true_divide, lambda t, ans, x, y: _bc(t / y, ans), lambda t, ans, x, y: -t * ans / y)
defjvp(W.negative, lambda t, ans, x: -t)
defjvp(W.positive, lambda t, ans, x: t)


def _power_x(t, ans, x, y):
    if type(y) is int or type(y) is float:
        return t * (y * x ** (y - 1)) if y != 0 else 0 * t
    return _bc(t * y * x ** np.where(y == 0, 1, y - 1), ans)


def _power_y(t, ans, x, y):
    safe = np.where(x == 0, 1, x)
    return _bc(t * np.where(x == 0, 0, np.log(safe) * ans), ans)


defjvp(W.power, _power_x, _power_y)

# ---------------------------------------------------------------- elementwise math
defjvp(W.sqrt, lambda t, ans, x: t / (2 * ans))
defjvp(W.square, lambda t, ans, x: 2 * x * t)
defjvp(W.exp, lambda t, ans, x: t * ans)
defjvp(W.log, lambda t, ans, x: t / x)
defjvp(W.sin, lambda t, ans, x: t * np.cos(x))
defjvp(W.cos, lambda t, ans, x: -t * np.sin(x))
defjvp(W.tan, lambda t, ans, x: t * (1 + ans * ans))
defjvp(W.tanh, lambda t, ans, x: t * (1 - ans * ans))


def _abs_jvp(t, ans, x):
    if np.iscomplexobj(x):  # d|z| = Re(conj(z) dz) / |z|  (0 at z = 0)
        return np.real(np.conj(x) * t) / np.where(ans == 0, 1, ans)
    return t * np.sign(x)


defjvp(W.absolute, _abs_jvp)

# ---------------------------------------------------------------- linear maps
for _p in (W.sum, W.mean, W.reshape, W.transpose, W.getitem):
    defjvp(_p, _linear(_p))
defjvp(W.scatter_add,
       lambda t, ans, base, v, idx=None: t,
       lambda t, ans, base, v, idx=None: W.scatter_add(np.zeros(np.shape(base), t.dtype), t,
                                                       idx=idx))

# ---------------------------------------------------------------- products
defjvp(W.matmul, lambda t, ans, x, y: W.matmul(t, y), lambda t, ans, x, y: W.matmul(x, t))
defjvp(W.dot, lambda t, ans, x, y: W.dot(t, y), lambda t, ans, x, y: W.dot(x, t))
