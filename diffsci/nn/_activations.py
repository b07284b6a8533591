"""Activation functions: plain NumPy compositions that work on arrays and traced values alike.

Each is written so that no branch overflows or divides by zero for any
finite input (``sigmoid(±1000)``, ``softplus(±1000)`` are exact and silent),
and so that its derivative, obtained by composition, is right everywhere,
kinks included (relu and leaky_relu take the left slope at 0, elu the
derivative of its negative branch, which is continuous there).  Layers name
them by string (``Dense(..., activation="tanh")``); :data:`ACTIVATIONS` is
the table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .._ops import logsumexp as _logsumexp
from .._ops import softmax as _softmax
from ..extend import defjvp, defvjp, primitive, value_mask
from ..typing import Array, ArrayLike

__all__ = [
    "relu",
    "tanh",
    "sigmoid",
    "softplus",
    "gelu",
    "elu",
    "leaky_relu",
    "softmax",
    "log_softmax",
    "identity",
    "ACTIVATIONS",
    "get_activation",
]

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def relu(x: ArrayLike) -> Array:
    """Rectified linear unit ``max(x, 0)``; its derivative at 0 is taken as 0.

    Example:
        >>> relu(np.array([-1.0, 0.0, 2.0]))
        array([0., 0., 2.])
    """
    # the mask from value_mask: recomputed by diffsci.jit's compiled code (x > 0 on a traced
    # value is a guard on the whole pattern: a re-trace at every new sign pattern)
    return np.where(value_mask(np.greater, x, 0), x, 0.0)


def tanh(x: ArrayLike) -> Array:
    """Hyperbolic tangent, ``np.tanh``."""
    return np.tanh(x)


def _sigmoid(x: ArrayLike) -> Array:
    x = np.asarray(x)
    e = np.exp(-np.abs(x))  # in (0, 1]: never overflows
    s = np.where(x >= 0, 1.0, e) / (1.0 + e)  # 1/(1+e^-x) for x >= 0, e^x/(1+e^x) below
    return s[()] if s.ndim == 0 else s


# One primitive rather than a composition: an LSTM step calls it on every gate,
# and one record with a cheap rule is ~4x faster than the stable composites
# (logaddexp is slow; 0.5 tanh(x/2) + 0.5 loses relative accuracy for x < -10).
sigmoid = primitive(_sigmoid, name="sigmoid")
sigmoid.__doc__ = """Logistic function ``1 / (1 + exp(-x))``, stable for any finite ``x``.

    Exponentiates only ``-|x|`` and keeps full relative accuracy in both tails
    (``sigmoid(-40)`` is 4.25e-18, not 0).  A differentiable primitive whose
    derivative is ``σ(x) σ(-x)`` (accurate in both tails, unlike
    ``σ (1 - σ)``) and is itself written with ``sigmoid``, so every order of
    derivative is available.

    Example:
        >>> sigmoid(np.array([-1000.0, 0.0, 1000.0]))
        array([0. , 0.5, 1. ])
    """
defvjp(sigmoid, lambda g, ans, x: g * (ans * sigmoid(-x)))
defjvp(sigmoid, lambda t, ans, x: t * (ans * sigmoid(-x)))


def softplus(x: ArrayLike) -> Array:
    """``log(1 + exp(x))``, stable for any finite ``x`` (``np.logaddexp(x, 0)``).

    Its derivative is :func:`sigmoid`.

    Example:
        >>> softplus(np.array([-1000.0, 0.0, 1000.0]))
        array([0.00000000e+00, 6.93147181e-01, 1.00000000e+03])
    """
    return np.logaddexp(x, 0.0)


def gelu(x: ArrayLike) -> Array:
    """Gaussian error linear unit, tanh approximation (Hendrycks & Gimpel 2016, eq. 2).

    ``0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))``.

    Example:
        >>> gelu(np.array([-3.0, 0.0, 1.0]))
        array([-0.00363739,  0.        ,  0.84119199])
    """
    return 0.5 * x * (1.0 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)))


def elu(x: ArrayLike, alpha: float = 1.0) -> Array:
    """Exponential linear unit: ``x`` for ``x > 0``, ``alpha (exp(x) - 1)`` otherwise.

    The exponential only ever sees non-positive arguments (Clevert et al. 2016).

    Example:
        >>> elu(np.array([-1000.0, 0.0, 2.0]))
        array([-1.,  0.,  2.])
    """
    positive = value_mask(np.greater, x, 0)
    return np.where(positive, x, alpha * np.expm1(np.where(positive, 0.0, x)))


def leaky_relu(x: ArrayLike, negative_slope: float = 0.01) -> Array:
    """``x`` for ``x > 0``, ``negative_slope · x`` otherwise (Maas et al. 2013).

    Example:
        >>> leaky_relu(np.array([-2.0, 3.0]))
        array([-0.02,  3.  ])
    """
    return np.where(value_mask(np.greater, x, 0), x, negative_slope * x)


def softmax(x: ArrayLike, axis: int = -1) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis``: :func:`diffsci.softmax` (a fused kernel).

    Example:
        >>> softmax(np.array([0.0, np.log(3.0)]))
        array([0.25, 0.75])
    """
    return _softmax(x, axis=axis)


def log_softmax(x: ArrayLike, axis: int = -1) -> Array:
    """``x - logsumexp(x)`` along ``axis``: log-probabilities, stable for any finite ``x``.

    Example:
        >>> log_softmax(np.array([0.0, 1000.0]))
        array([-1000.,     0.])
    """
    return x - _logsumexp(x, axis=axis, keepdims=True)


def identity(x: ArrayLike) -> Array:
    """``x`` unchanged (a layer without activation)."""
    return x


#: Activations by name, for layers' static ``activation`` fields.
ACTIVATIONS = {
    "relu": relu,
    "tanh": tanh,
    "sigmoid": sigmoid,
    "softplus": softplus,
    "gelu": gelu,
    "elu": elu,
    "leaky_relu": leaky_relu,
    "softmax": softmax,
    "log_softmax": log_softmax,
    "identity": identity,
}


def get_activation(activation: str | Callable[..., Any] | None) -> Callable[..., Any] | None:
    """The function for an activation given by name, as a callable, or ``None`` (identity).

    Args:
        activation: a key of :data:`ACTIVATIONS`, a callable ``f(x) -> y``, or ``None``.

    Returns:
        A callable.

    Raises:
        ValueError: an unknown name (the message lists the known ones).
        TypeError: neither a string, a callable nor ``None``.

    Example:
        >>> get_activation("tanh") is tanh
        True
    """
    if activation is None:
        return identity
    if isinstance(activation, str):
        try:
            return ACTIVATIONS[activation]
        except KeyError:
            raise ValueError(
                f"unknown activation {activation!r}; expected one of {sorted(ACTIVATIONS)} or "
                f"a callable") from None
    if callable(activation):
        return activation
    raise TypeError(f"activation must be a name, a callable or None, got "
                    f"{type(activation).__name__} {activation!r}")
