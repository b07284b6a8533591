"""Input checks at sde's API boundary: one function per kind of argument, each raising an error
that names the function, the argument, what was expected and what came.

Rules (shared by ``sdeint`` and the fast paths):

=================  ==========================================================================
kind               accepted
=================  ==========================================================================
real array         arrays, lists, tuples, scalars of int or float dtype (ints become float64);
                   not bool, complex, object or string dtypes; finite entries
positive number    a real number > 0 and finite (Python or NumPy scalar, not bool, not traced)
count              an int (Python or NumPy), not bool, >= a stated minimum
flag               True or False (Python or NumPy bool)
parameters         any pytree; its numeric leaves must not be bool and must be finite
=================  ==========================================================================
"""

from __future__ import annotations

import math
import numbers

import numpy as np

import diffsci as ds
from diffsci.extend import getval, is_tracer, observed

__all__ = ["count", "flag", "not_traced", "parameters", "positive_number", "real_array"]


def _describe(x) -> str:
    v = getval(x)
    if isinstance(v, np.ndarray):
        return f"an array of dtype {v.dtype} and shape {v.shape}"
    return f"{type(v).__name__} {v!r}"


def not_traced(x, name: str, who: str, why: str) -> None:
    """Refuse a traced ``x``: it would not be differentiated (a silently zero derivative)."""
    if any(is_tracer(leaf) for leaf in ds.tree_leaves(x)):
        raise TypeError(f"{who}: {name} is not differentiable ({why}), got a traced value; "
                        f"pass a plain value (diffsci.stop_gradient if on purpose)")


def _all_finite(v) -> bool:
    return bool(np.all(np.isfinite(v)))


def real_array(x, name: str, who: str, finite: bool = True):
    """``x`` as a real array (a traced array passes through, checked by its value): lists and
    tuples accepted; int dtypes become float64; bool, complex, object dtypes refused; finite."""
    v = getval(x)
    try:
        arr = np.asarray(v)
    except (ValueError, TypeError) as e:  # ragged lists
        raise ValueError(f"{who}: {name} must be a real array, got {type(v).__name__} that "
                         f"NumPy cannot make an array of ({e})") from None
    if arr.dtype.kind not in "fiu":
        what = "bool" if arr.dtype.kind == "b" else f"dtype {arr.dtype}"
        raise TypeError(f"{who}: {name} must be a real (int or float) array, got {what} "
                        f"(shape {arr.shape})")
    # observed: under diffsci.jit a guard, checked at every call (not once, at trace time)
    if finite and not observed(_all_finite, x if is_tracer(x) else arr):
        bad = np.argwhere(~np.isfinite(arr))
        first = tuple(int(i) for i in bad[0]) if arr.ndim else ()
        raise ValueError(f"{who}: {name} has non-finite entries (NaN or inf): {len(bad)} of "
                         f"{arr.size}, the first at index {first}")
    if is_tracer(x):
        return x
    return arr.astype(np.float64) if arr.dtype.kind in "iu" else arr


def positive_number(x, name: str, who: str) -> float:
    """A finite real number > 0 (not bool, not traced)."""
    not_traced(x, name, who, "a step or tolerance")
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real) \
            or not math.isfinite(x) or not x > 0:
        raise ValueError(f"{who}: {name} must be a finite number > 0, got {_describe(x)}")
    return float(x)


def count(x, name: str, who: str, lowest: int) -> int:
    """An int >= ``lowest`` (Python or NumPy, not bool)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral) or x < lowest:
        raise ValueError(f"{who}: {name} must be an int >= {lowest}, got {_describe(x)}")
    return int(x)


def flag(x, name: str, who: str) -> bool:
    """True or False."""
    if not isinstance(x, (bool, np.bool_)):
        raise TypeError(f"{who}: {name} must be True or False, got {_describe(x)}")
    return bool(x)


def parameters(params, who: str) -> None:
    """Numeric leaves of the ``params`` pytree: no bools, no NaN or inf (naming the leaf)."""
    leaves = ds.tree_leaves(params)
    for i, leaf in enumerate(leaves):
        v = getval(leaf)
        if isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype == bool):
            raise TypeError(f"{who}: params leaf {i} is a bool ({v!r}); parameters are numbers "
                            f"(use 1.0 / 0.0, or let drift/diffusion close over a flag)")
        if isinstance(v, (numbers.Number, np.ndarray, np.generic)):
            arr = np.asarray(v)
            if arr.dtype.kind in "fc" and not observed(_all_finite, leaf):
                raise ValueError(f"{who}: params leaf {i} (shape {arr.shape}) has non-finite "
                                 f"entries (NaN or inf)")
