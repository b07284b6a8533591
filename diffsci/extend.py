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
from .numpy import _util
from .numpy._tracer_methods import register_numpy_function
from .numpy._util import cj, is_complex, unbroadcast


def observed(fn, *args):
    """``fn(*plain values of args)``: a decision about values that is not part of the
    computation, typically a validity check returning ``None`` or what is wrong.

    In eager mode it is just the call.  Under :func:`diffsci.jit` it is a guard: the compiled
    program calls ``fn`` again at every call and re-traces when the outcome differs, so a
    check written with it raises for a later invalid input as in eager mode (a check on
    ``getval(x)`` alone runs once, at trace time).

    Example:
        >>> import numpy as np
        >>> observed(lambda v: None if np.all(v > 0) else "must be positive", np.ones(2))
    """
    return _util.observed(fn, *args)


def value_mask(ufunc, *args):
    """``ufunc`` of the arguments' values (a comparison, ``np.isnan``, ``np.sign``): a plain
    mask that selects a branch of a formula, ``np.where(mask, f(x), g(x))``, and is not
    differentiated.  Under :func:`diffsci.jit` it is recorded from the traced values, so the
    compiled program recomputes it on every call (a mask from ``getval(x) > 0`` would be a
    constant of the trace).

    Example:
        >>> import numpy as np
        >>> value_mask(np.greater, np.array([-1.0, 2.0]), 0.0)
        array([False,  True])
    """
    return _util.value_mask(ufunc, *args)

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
