"""The fused Dense primitive ``act(x @ w + b)``: one tape record that keeps only ``x``, ``w``,
``b`` and the output ``a``.

Composed from ``matmul``, ``add`` and the activation, a Dense layer leaves three arrays of the
output's size on the tape (``x @ w``, ``z = x @ w + b`` and ``a``); a neural SDE holds them for
every layer, solver stage and step.  For the activations whose derivative is a function of
their *output* (``f'(z) = D(f(z))``, table :data:`FUSED`), the layer is one primitive whose
rules rebuild ``f'(z)`` from ``a``, so only ``a`` (which the next layer keeps anyway) is new
memory.  The rules are written with NumPy calls on the (possibly traced) ``a``, ``w`` and ``x``,
so they differentiate again: grad of grad, Hessians and jvp of grad go through the same
primitive.  Derivation: diffsci/nn/DERIVATIONS.md, section D1.

Other activations (``gelu``, callables), complex or mixed-dtype inputs take the unfused
composition (:func:`dense_unfused`), whose derivatives come from its parts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .._core import defjvp, defvjp, primitive
from ..typing import Array, ArrayLike
from ._activations import ACTIVATIONS

__all__ = ["FUSED", "dense", "dense_unfused", "is_fused"]


def _softmax_vjp(g, a):
    return a * (g - np.sum(g * a, axis=-1, keepdims=True))


def _log_softmax_vjp(g, a):
    return g - np.exp(a) * np.sum(g, axis=-1, keepdims=True)


def _log_softmax_jvp(t, a):
    return t - np.sum(np.exp(a) * t, axis=-1, keepdims=True)


def _leaky(g, a, slope=0.01):
    return np.where(a > 0, g, slope * g)


#: Activation name -> (VJP map ``(g, a) -> g_z``, JVP map ``(t, a) -> t_a``) from the output
#: ``a = f(z)`` alone (diffsci/nn/DERIVATIONS.md §D1).  Elementwise activations have a diagonal
#: Jacobian, so one map serves both modes; softmax's Jacobian ``diag(a) - a aᵀ`` is symmetric.
FUSED = {
    "identity": (lambda g, a: g, lambda t, a: t),
    "tanh": (lambda g, a: g * (1.0 - a * a), lambda t, a: t * (1.0 - a * a)),
    "sigmoid": (lambda g, a: g * (a * (1.0 - a)), lambda t, a: t * (a * (1.0 - a))),
    "relu": (lambda g, a: np.where(a > 0, g, 0.0), lambda t, a: np.where(a > 0, t, 0.0)),
    "softplus": (lambda g, a: g * -np.expm1(-a), lambda t, a: t * -np.expm1(-a)),
    "elu": (lambda g, a: np.where(a > 0, g, g * (a + 1.0)),
            lambda t, a: np.where(a > 0, t, t * (a + 1.0))),
    "leaky_relu": (_leaky, _leaky),
    "softmax": (_softmax_vjp, _softmax_vjp),
    "log_softmax": (_log_softmax_vjp, _log_softmax_jvp),
}


def _fwd(x, w, *b, activation):
    z = np.matmul(x, w)
    if b:
        z += b[0]  # z is a fresh array: no second buffer
    return ACTIVATIONS[activation](z)


dense_prim = primitive(_fwd, name="dense")


def _vjp_x(g, a, x, w, *b, activation):
    return FUSED[activation][0](g, a) @ np.swapaxes(w, 0, 1)


def _vjp_w(g, a, x, w, *b, activation):
    gz = FUSED[activation][0](g, a)
    n = w.shape[0]
    return np.swapaxes(np.reshape(x, (-1, n)), 0, 1) @ np.reshape(gz, (-1, w.shape[1]))


def _vjp_b(g, a, x, w, b, activation):
    return np.sum(np.reshape(FUSED[activation][0](g, a), (-1, w.shape[1])), axis=0)


def _jvp_x(t, a, x, w, *b, activation):
    return FUSED[activation][1](t @ w, a)


def _jvp_w(t, a, x, w, *b, activation):
    return FUSED[activation][1](x @ t, a)


def _jvp_b(t, a, x, w, b, activation):
    return FUSED[activation][1](np.broadcast_to(t, np.shape(a)), a)


defvjp(dense_prim, _vjp_x, _vjp_w, _vjp_b)
defjvp(dense_prim, _jvp_x, _jvp_w, _jvp_b)

_REAL = (np.dtype(np.float32), np.dtype(np.float64))


def is_fused(activation, x, w, b):
    """Whether :func:`dense` takes the fused primitive for these arguments.

    True for an activation name in :data:`FUSED` (or ``None``) with ``x``, ``w`` and ``b``
    arrays (or traced arrays) of one real floating dtype, float32 or float64.
    """
    if activation is None:
        activation = "identity"
    if not isinstance(activation, str) or activation not in FUSED:
        return False
    dt = getattr(x, "dtype", None)  # plain, traced or dual arrays; lists and scalars have none
    if not isinstance(dt, np.dtype) or dt not in _REAL or not _same(w, dt):
        return False
    return b is None or _same(b, dt)


def _same(a, dt):
    d = getattr(a, "dtype", None)
    return isinstance(d, np.dtype) and d == dt


def dense_unfused(x, w, b, activation):
    """``act(x @ w + b)`` as a composition of ``matmul``, ``add`` and the activation."""
    from ._activations import get_activation

    y = x @ w
    if b is not None:
        y = y + b
    return get_activation(activation)(y)


def dense(x: ArrayLike, w: ArrayLike, b: ArrayLike | None,
          activation: str | Callable[..., Any] | None) -> Array:
    """``activation(x @ w + b)``, one primitive where the activation allows (D1).

    Args:
        x: input, shape ``(..., in_features)``.
        w: weights, shape ``(in_features, out_features)``.
        b: bias, shape ``(out_features,)``, or ``None``.
        activation: a name of :data:`~diffsci.nn.ACTIVATIONS`, a callable or ``None``.

    Returns:
        The output, shape ``(..., out_features)``, in the inputs' dtype.

    Raises:
        ValueError: from the activation lookup (unknown name).

    Example:
        >>> w, b = np.ones((3, 2)), np.zeros(2)
        >>> dense(np.ones((4, 3)), w, b, "tanh").shape
        (4, 2)

    References:
        diffsci/nn/DERIVATIONS.md §D1: the VJP and JVP of ``f(x w + b)`` from ``a = f(z)``.
    """
    if not is_fused(activation, x, w, b):
        return dense_unfused(x, w, b, activation)
    name = "identity" if activation is None else activation
    if b is None:
        return dense_prim(x, w, activation=name)
    return dense_prim(x, w, b, activation=name)
