"""Everything an adjoint author needs, in one place.

>>> import diffsci as ds
>>> from diffsci.extend import primitive, defvjp, unbroadcast
>>> @primitive
... def cube(x):
...     return x ** 3
>>> cube = defvjp(cube, lambda g, ans, x: g * 3 * x ** 2)  # returns the primitive
>>> float(ds.grad(cube)(2.0))
12.0
"""

from ._core import (
    MissingRuleError,
    Tape,
    Tracer,
    defjvp,
    defvjp,
    getval,
    is_tracer,
    nondifferentiable,
    primitive,
    top_trace,
)
from ._custom import custom_vjp
from .numpy._tracer_methods import register_numpy_function
from .numpy._util import cj, is_complex, observed, unbroadcast, value_mask

__all__ = [
    "MissingRuleError",
    "Tape",
    "Tracer",
    "cj",
    "custom_vjp",
    "defjvp",
    "defvjp",
    "getval",
    "is_complex",
    "is_tracer",
    "nondifferentiable",
    "observed",
    "primitive",
    "register_numpy_function",
    "top_trace",
    "unbroadcast",
    "value_mask",
]
