"""Type aliases for annotating code that uses diffsci (as ``numpy.typing`` does for NumPy).

- :data:`ArrayLike`: what a numeric argument accepts: a number, a (nested) sequence of numbers,
  an ndarray, or a traced value (:class:`diffsci.Tracer`) while a transform such as
  :func:`diffsci.grad` runs.
- :data:`Array`: what a numeric function returns: an ndarray or NumPy scalar, or a traced
  value inside a transform. Traced values support the ndarray operations but are not ndarrays,
  so the alias is ``Any``: a type checker lets either through.
- :data:`PyTree`: nested tuples, lists, dicts, dataclasses and registered nodes whose leaves are
  arrays or numbers (``diffsci.tree_flatten``).

Example:
    >>> import numpy as np
    >>> from diffsci.typing import ArrayLike, Array
    >>> def energy(x: ArrayLike) -> Array:
    ...     return np.sum(np.asarray(x) ** 2)
    >>> float(energy([1.0, 2.0]))
    5.0
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import numpy.typing as npt

from ._core import Tracer

__all__ = ["Array", "ArrayLike", "PyTree", "ScalarFunction"]

ArrayLike: TypeAlias = npt.ArrayLike | Tracer
Array: TypeAlias = Any
PyTree: TypeAlias = Any
#: A function of arrays or pytrees returning a real scalar (what ``grad`` differentiates).
ScalarFunction: TypeAlias = Callable[..., Any]
