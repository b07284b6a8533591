"""``diffsci.nn``: small neural-network layers whose parameters are dataclass pytrees.

Layers are frozen dataclasses built from an explicit seed
(``Dense.init(0, 3, 2)``), applied by calling them, and differentiated like
any other pytree: ``ds.grad(loss)(model)`` returns a model-shaped gradient
that :mod:`diffsci.optim` optimisers and :func:`diffsci.fit` consume.  Their
code is plain NumPy, with no AD-specific types.

>>> import numpy as np, diffsci as ds
>>> x = np.linspace(-1.0, 1.0, 32)[:, None]
>>> mlp = ds.nn.MLP.init(0, [1, 16, 1], activation="tanh")
>>> mlp, history = ds.fit(lambda m: np.mean((m(x) - x**2) ** 2), mlp, steps=500,
...                       progress=False)
>>> bool(history["loss"][-1] < 1e-2 * history["loss"][0])
True
"""

from ._activations import (
    ACTIVATIONS,
    elu,
    gelu,
    get_activation,
    identity,
    leaky_relu,
    log_softmax,
    relu,
    sigmoid,
    softmax,
    softplus,
    tanh,
)
from ._conv import conv
from ._fused import FUSED, dense
from ._init import (
    as_rng,
    glorot_normal,
    glorot_uniform,
    he_normal,
    lecun_normal,
    orthogonal,
    zeros,
)
from ._layers import MLP, Dense
from ._lstm import LSTM, LSTMCell

__all__ = [
    "ACTIVATIONS",
    "Dense",
    "FUSED",
    "LSTM",
    "LSTMCell",
    "MLP",
    "as_rng",
    "conv",
    "dense",
    "elu",
    "gelu",
    "get_activation",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "identity",
    "leaky_relu",
    "lecun_normal",
    "log_softmax",
    "orthogonal",
    "relu",
    "sigmoid",
    "softmax",
    "softplus",
    "tanh",
    "zeros",
]
