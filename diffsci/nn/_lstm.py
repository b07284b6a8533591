"""Long short-term memory: :class:`LSTMCell` and :class:`LSTM` (one or more stacked cells).

The cell (Hochreiter & Schmidhuber 1997, with the forget gate of Gers,
Schmidhuber & Cummins 2000), for input ``x`` and carry ``(h, c)``::

    z = x @ w_x + h @ w_h + b          # 4 blocks of width H, in the order i, f, g, o
    i = σ(z_i)   f = σ(z_f)   g = tanh(z_g)   o = σ(z_o)
    c' = f ⊙ c + i ⊙ g
    h' = o ⊙ tanh(c')

The gate order (input, forget, cell candidate, output) is PyTorch's, so its
``weight_ih_l0.T``, ``weight_hh_l0.T`` and ``bias_ih_l0 + bias_hh_l0`` load
directly as ``w_x``, ``w_h`` and ``b``.  Everything is plain NumPy: the
sequence loop is a Python loop and reverse mode differentiates through it.
"""

from __future__ import annotations

import dataclasses
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._core import getval
from ._activations import sigmoid
from ._init import as_rng, glorot_uniform, orthogonal

__all__ = ["LSTMCell", "LSTM"]


@dataclasses.dataclass(frozen=True)
class LSTMCell:
    """One LSTM step: ``cell(carry, x) -> (new_carry, h)`` with ``carry = (h, c)``.

    Attributes:
        w_x: input weights, shape ``(in_features, 4 H)``, gate blocks i, f, g, o.
        w_h: recurrent weights, shape ``(H, 4 H)``.
        b: bias, shape ``(4 H,)``.

    Raises:
        ValueError: the shapes do not fit together.

    Example:
        >>> cell = LSTMCell.init(0, 3, 8)
        >>> carry = cell.initial_carry((5,))
        >>> carry, h = cell(carry, np.ones((5, 3)))
        >>> h.shape, carry[1].shape
        ((5, 8), (5, 8))

    References:
        Hochreiter & Schmidhuber, "Long Short-Term Memory", Neural Computation
        9(8), 1997.  Gers, Schmidhuber & Cummins, "Learning to Forget:
        Continual Prediction with LSTM", Neural Computation 12(10), 2000
        (the forget gate, eq. 3.1-3.2).  Jozefowicz, Zaremba & Sutskever, "An
        Empirical Exploration of Recurrent Network Architectures", ICML 2015
        (forget-gate bias 1).
    """

    w_x: Any
    w_h: Any
    b: Any

    def __post_init__(self):
        sx, sh, sb = (np.shape(getval(a)) for a in (self.w_x, self.w_h, self.b))
        if len(sh) != 2 or sh[1] != 4 * sh[0]:
            raise ValueError(f"LSTMCell: w_h must have shape (H, 4H), got {sh}")
        if len(sx) != 2 or sx[1] != sh[1]:
            raise ValueError(f"LSTMCell: w_x must have shape (in_features, {sh[1]}) to match "
                             f"w_h of shape {sh}, got {sx}")
        if sb != (sh[1],):
            raise ValueError(f"LSTMCell: b must have shape ({sh[1]},), got {sb}")

    @classmethod
    def init(cls, seed, in_features, hidden, *, forget_bias=1.0, dtype=np.float64):
        """A cell with Glorot-uniform input weights, orthogonal recurrent weights per gate.

        The bias is zero except the forget gate's, ``forget_bias`` (1.0): the
        cell starts by remembering (Gers et al. 2000; Jozefowicz et al. 2015).

        Args:
            seed: an int or a ``numpy.random.Generator``.
            in_features: input width.
            hidden: H, the width of ``h`` and ``c``.
            forget_bias: initial bias of the forget gate.
            dtype: float64 or float32.

        Returns:
            An :class:`LSTMCell`.
        """
        for name, v in (("in_features", in_features), ("hidden", hidden)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"LSTMCell.init: {name} must be a positive int, got {v!r}")
        rng = as_rng(seed)
        H = int(hidden)
        w_x = glorot_uniform(rng, (int(in_features), 4 * H), dtype)
        w_h = np.concatenate([orthogonal(rng, (H, H), dtype) for _ in range(4)], axis=1)
        b = np.zeros(4 * H, dtype)
        b[H:2 * H] = forget_bias
        return cls(w_x=w_x, w_h=w_h, b=b)

    @property
    def in_features(self):
        """Input width."""
        return np.shape(getval(self.w_x))[0]

    @property
    def hidden(self):
        """H, the width of the hidden state and the cell state."""
        return np.shape(getval(self.w_h))[0]

    def initial_carry(self, batch_shape=()):
        """Zero ``(h, c)``, each of shape ``batch_shape + (H,)``, in the weights' dtype."""
        shape = tuple(batch_shape) + (self.hidden,)
        dtype = np.result_type(getval(self.w_h))
        return np.zeros(shape, dtype), np.zeros(shape, dtype)

    def __call__(self, carry, x):
        """One step on ``x`` of shape ``(..., in_features)``; returns ``((h', c'), h')``."""
        h, c = carry
        if np.shape(getval(x))[-1:] != (self.in_features,):
            raise ValueError(f"LSTMCell: x has shape {np.shape(getval(x))}; its last axis "
                             f"must have in_features = {self.in_features} entries")
        H = self.hidden
        z = x @ self.w_x + h @ self.w_h + self.b
        s = sigmoid(z)  # on all four blocks: one call instead of three; the g block is unused
        i, f, o = s[..., :H], s[..., H:2 * H], s[..., 3 * H:]
        g = np.tanh(z[..., 2 * H:3 * H])
        c = f * c + i * g
        h = o * np.tanh(c)
        return (h, c), h


@dataclasses.dataclass(frozen=True)
class LSTM:
    """An LSTM over a sequence: one or more :class:`LSTMCell` stacked, run over time.

    Layer ``k + 1`` reads the hidden states of layer ``k``; the output is the
    last layer's hidden state at every step.

    Attributes:
        cells: the cells, first layer first (a tuple).

    Example:
        >>> lstm = LSTM.init(0, in_features=4, hidden=16, num_layers=2)
        >>> hs, carry = lstm(np.zeros((10, 3, 4)))     # time-major [T, B, F]
        >>> hs.shape, len(carry), carry[0][0].shape
        ((10, 3, 16), 2, (3, 16))
    """

    cells: tuple[LSTMCell, ...]

    def __post_init__(self):
        object.__setattr__(self, "cells", tuple(self.cells))
        if not self.cells:
            raise ValueError("LSTM: cells must hold at least one LSTMCell")
        for k, (a, b) in enumerate(zip(self.cells, self.cells[1:])):
            if a.hidden != b.in_features:
                raise ValueError(f"LSTM: cell {k} has hidden size {a.hidden} but cell {k + 1} "
                                 f"takes {b.in_features} inputs")

    @classmethod
    def init(cls, seed, in_features, hidden, num_layers=1, *, forget_bias=1.0,
             dtype=np.float64):
        """A stack of ``num_layers`` cells.

        Args:
            seed: an int or a ``numpy.random.Generator``; the cells draw from
                one stream, in order.
            in_features: the input width of the first layer.
            hidden: H of every layer (an int), or one H per layer (a sequence;
                then ``num_layers`` is its length).
            num_layers: the number of stacked cells when ``hidden`` is an int.
            forget_bias: initial forget-gate bias of every cell.
            dtype: float64 or float32.

        Returns:
            An :class:`LSTM`.
        """
        if isinstance(hidden, Sequence):
            sizes = list(hidden)
        else:
            if isinstance(num_layers, bool) or not isinstance(num_layers, numbers.Integral) \
                    or num_layers < 1:
                raise ValueError(f"LSTM.init: num_layers must be a positive int, got "
                                 f"{num_layers!r}")
            sizes = [hidden] * int(num_layers)
        rng = as_rng(seed)
        ins = [in_features] + sizes[:-1]
        return cls(tuple(LSTMCell.init(rng, a, h, forget_bias=forget_bias, dtype=dtype)
                         for a, h in zip(ins, sizes)))

    @property
    def num_layers(self):
        """The number of stacked cells."""
        return len(self.cells)

    def initial_carry(self, batch_shape=()):
        """Zero carries, one ``(h, c)`` per layer (a tuple)."""
        return tuple(cell.initial_carry(batch_shape) for cell in self.cells)

    def __call__(self, xs, carry=None):
        """Run over ``xs`` of shape ``[T, ..., in_features]`` (time-major).

        Args:
            xs: the inputs, time first: ``[T, B, F]`` or ``[T, F]`` (or a
                sequence of ``T`` arrays).
            carry: the initial ``(h, c)`` of each layer (a tuple); default zeros.

        Returns:
            ``(hs, carry)``: the last layer's hidden states ``[T, ..., H]`` and
            the final ``(h, c)`` of each layer.
        """
        T = len(xs)
        if T == 0:
            raise ValueError("LSTM: xs is an empty sequence; it needs at least one time step")
        if carry is None:
            carry = self.initial_carry(np.shape(getval(xs[0]))[:-1])
        if len(carry) != len(self.cells):
            raise ValueError(f"LSTM: carry has {len(carry)} entries but there are "
                             f"{len(self.cells)} layers; pass one (h, c) per layer")
        seq = xs
        final = []
        for cell, state in zip(self.cells, carry):
            outs = []
            for t in range(T):
                state, h = cell(state, seq[t])
                outs.append(h)
            seq = outs
            final.append(state)
        return np.stack(seq), tuple(final)
