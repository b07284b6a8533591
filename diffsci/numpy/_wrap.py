"""NumPy functions wrapped as diffsci primitives (their rules live in ``_vjps.py``).

Each line binds one NumPy function as a primitive: it runs the NumPy function
unchanged on plain values and records itself on traced ones.  Functions that
take a *sequence* of arrays (``concatenate``, ``stack`` ...) are wrapped as
primitives over ``*arrays`` so that every array is a traced positional
argument.  Non-differentiable functions are one explicit list at the end.
"""

from __future__ import annotations

import numpy as np

from .._core import nondifferentiable, primitive

# ---------------------------------------------------------------- arithmetic
add = primitive(np.add)
subtract = primitive(np.subtract)
multiply = primitive(np.multiply)
true_divide = primitive(np.true_divide)
divide = true_divide
power = primitive(np.power)
negative = primitive(np.negative)
positive = primitive(np.positive)
matmul = primitive(np.matmul)

# ---------------------------------------------------------------- elementwise math
absolute = primitive(np.absolute)
abs = absolute  # noqa: A001 - NumPy's name
sqrt = primitive(np.sqrt)
square = primitive(np.square)
exp = primitive(np.exp)
log = primitive(np.log)
sin = primitive(np.sin)
cos = primitive(np.cos)
tan = primitive(np.tan)
tanh = primitive(np.tanh)


# ---------------------------------------------------------------- reductions
sum = primitive(np.sum)  # noqa: A001
mean = primitive(np.mean)

# ---------------------------------------------------------------- shapes
reshape = primitive(np.reshape)
transpose = primitive(np.transpose)


def _getitem(x, idx):
    return x[idx]


getitem = primitive(_getitem, name="getitem")


def _scatter_add(base, values, idx=None):
    out = base.copy()
    np.add.at(out, idx, values)
    return out


# ``base`` with ``values`` added at ``idx`` (duplicates accumulate); the adjoint of getitem.
scatter_add = primitive(_scatter_add, name="scatter_add")

# ---------------------------------------------------------------- products
dot = primitive(np.dot)

# ---------------------------------------------------------------- non-differentiable
# Functions whose derivative is zero almost everywhere, or whose results are
# not floats: they accept traced values and return plain ones.
_NONDIFFERENTIABLE = [
    "floor", "ceil", "round", "rint", "trunc", "fix",
    "argmax", "argmin", "argsort", "argwhere", "nonzero", "flatnonzero", "searchsorted",
    "sign_bit", "signbit",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "isfinite", "isinf", "isnan", "isclose", "allclose", "array_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "all", "any",
    "shape", "ndim", "size", "result_type", "iscomplexobj", "isrealobj",
    "zeros_like", "ones_like", "empty_like", "full_like", "count_nonzero",
]
_nd = {n: nondifferentiable(getattr(np, n)) for n in _NONDIFFERENTIABLE if hasattr(np, n)}
globals().update(_nd)
