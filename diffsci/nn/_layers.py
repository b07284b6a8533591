"""Feed-forward layers: :class:`Dense` and :class:`MLP`, frozen dataclass pytrees.

A layer is its parameters: ``grad`` of a loss with respect to a ``Dense`` is
a ``Dense`` of gradients, and optimisers update it leaf by leaf.  The
activation is a *static* field (a name from
:data:`~diffsci.nn.ACTIVATIONS` or a callable), so gradients flow only to
the arrays.  ``Dense.__call__`` is one fused primitive for the common activations.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .._core import getval
from ._activations import get_activation
from ._fused import dense
from ._init import as_rng, glorot_uniform

__all__ = ["Dense", "MLP"]

_static = dict(metadata={"static": True})


def _check_size(cls, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{cls}: {name} must be a positive int, got {value!r}")
    return int(value)


@dataclasses.dataclass(frozen=True)
class Dense:
    """A fully connected layer ``activation(x @ w + b)``.

    Attributes:
        w: weights, shape ``(in_features, out_features)``.
        b: bias, shape ``(out_features,)``, or ``None`` for no bias.
        activation: static: a name in :data:`~diffsci.nn.ACTIVATIONS`
            (``"tanh"``, ``"relu"`` ...), a callable, or ``None`` (linear).

    Raises:
        ValueError: ``w`` is not 2-D, ``b`` does not match it, or the
            activation is unknown.

    Example:
        >>> import numpy as np, diffsci as ds
        >>> from diffsci.nn import Dense
        >>> layer = Dense.init(0, 3, 2, activation="tanh")
        >>> layer(np.ones((5, 3))).shape
        (5, 2)
        >>> g = ds.grad(lambda l: np.sum(l(np.ones(3))))(layer)
        >>> type(g).__name__, g.w.shape, g.activation
        ('Dense', (3, 2), 'tanh')
    """

    w: Any
    b: Any
    activation: str | Callable | None = dataclasses.field(default=None, **_static)

    def __post_init__(self):
        get_activation(self.activation)
        w_shape = np.shape(getval(self.w))
        if len(w_shape) != 2:
            raise ValueError(f"Dense: w must be 2-D (in_features, out_features), got shape "
                             f"{w_shape}")
        if self.b is not None and np.shape(getval(self.b)) != (w_shape[1],):
            raise ValueError(f"Dense: b must have shape ({w_shape[1]},) to match w of shape "
                             f"{w_shape}, got {np.shape(getval(self.b))}")

    @classmethod
    def init(cls, seed, in_features, out_features, activation=None, *, bias=True,
             w_init=glorot_uniform, dtype=np.float64):
        """A Dense layer with weights from ``w_init`` and a zero bias.

        Args:
            seed: an int or a ``numpy.random.Generator`` (see :func:`as_rng`).
            in_features: input width.
            out_features: output width.
            activation: see the class attributes.
            bias: include a bias (``b=None`` otherwise).
            w_init: ``w_init(rng, (in, out), dtype) -> array``; default
                :func:`glorot_uniform`.
            dtype: float64 or float32.

        Returns:
            A :class:`Dense`.
        """
        in_features = _check_size("Dense.init", "in_features", in_features)
        out_features = _check_size("Dense.init", "out_features", out_features)
        w = w_init(as_rng(seed), (in_features, out_features), dtype)
        b = np.zeros(out_features, dtype) if bias else None
        return cls(w=w, b=b, activation=activation)

    @property
    def in_features(self):
        """Input width."""
        return np.shape(getval(self.w))[0]

    @property
    def out_features(self):
        """Output width."""
        return np.shape(getval(self.w))[1]

    def __call__(self, x):
        """Apply the layer to ``x`` of shape ``(..., in_features)``.

        One fused primitive for the activations of :data:`diffsci.nn.FUSED` (its tape record
        keeps ``x``, ``w``, ``b`` and the output only; diffsci/nn/DERIVATIONS.md §D1),
        the composition ``matmul``, ``add``, activation otherwise (see :func:`~diffsci.nn.dense`).
        """
        n = np.shape(getval(x))[-1:]
        if n != (self.in_features,):
            raise ValueError(f"Dense: x has shape {np.shape(getval(x))}; its last axis must "
                             f"have in_features = {self.in_features} entries")
        return dense(x, self.w, self.b, self.activation)


@dataclasses.dataclass(frozen=True)
class MLP:
    """A multi-layer perceptron: a tuple of :class:`Dense` layers applied in order.

    Attributes:
        layers: the layers (a tuple; its gradient is a tuple of ``Dense``).

    Example:
        >>> mlp = MLP.init(0, [2, 16, 16, 1], activation="tanh")
        >>> mlp(np.zeros((4, 2))).shape
        (4, 1)
    """

    layers: tuple[Dense, ...]

    def __post_init__(self):
        object.__setattr__(self, "layers", tuple(self.layers))
        for k, (a, b) in enumerate(zip(self.layers, self.layers[1:])):
            if a.out_features != b.in_features:
                raise ValueError(f"MLP: layer {k} has {a.out_features} outputs but layer "
                                 f"{k + 1} takes {b.in_features} inputs")

    @classmethod
    def init(cls, seed, sizes: Sequence[int], activation="tanh", final_activation=None, *,
             w_init=glorot_uniform, dtype=np.float64):
        """An MLP with widths ``sizes = [in, hidden..., out]``.

        Args:
            seed: an int or a ``numpy.random.Generator``; the layers draw from
                one stream, in order.
            sizes: at least two positive ints.
            activation: the hidden layers' activation.
            final_activation: the last layer's (default ``None``: linear).
            w_init: weight initialiser of every layer.
            dtype: float64 or float32.

        Returns:
            An :class:`MLP` with ``len(sizes) - 1`` layers.
        """
        sizes = list(sizes)
        if len(sizes) < 2:
            raise ValueError(f"MLP.init: sizes must list at least an input and an output "
                             f"width, got {sizes}")
        rng = as_rng(seed)
        n = len(sizes) - 1
        return cls(tuple(
            Dense.init(rng, a, b, activation if k < n - 1 else final_activation,
                       w_init=w_init, dtype=dtype)
            for k, (a, b) in enumerate(zip(sizes, sizes[1:]))))

    def __call__(self, x):
        """Apply the layers to ``x`` of shape ``(..., sizes[0])``."""
        for layer in self.layers:
            x = layer(x)
        return x
