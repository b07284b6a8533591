"""``autograd.numpy`` is ``diffsci.numpy``; ``random`` is NumPy's (plain random inputs).

Two names are autograd's own, not NumPy's; they are built here from diffsci.numpy calls:
``make_diagonal`` and the ``__version__`` autograd re-exports (NumPy's).  ``where`` takes
autograd's keywords (``condition=, x=, y=``), which NumPy's positional-only ``where`` refuses.
"""

import numpy as _np
import numpy.random as random  # noqa: F401

import diffsci.numpy as _dnp
from diffsci import fft  # noqa: F401
from diffsci.numpy import *  # noqa: F403
from diffsci.numpy import linalg  # noqa: F401

globals().update({k: v for k, v in vars(_dnp).items() if not k.startswith("__")})
__version__ = _np.__version__
for _m in ("fft", "linalg", "random"):  # the submodules below, not diffsci.numpy's attributes
    globals()[_m] = __import__("importlib").import_module(f"{__name__}.{_m}")


def make_diagonal(D, offset=0, axis1=-1, axis2=-2):
    """autograd's: D's last axis placed on the diagonal of two new last axes."""
    if offset != 0 or {axis1, axis2} != {-1, -2}:
        raise NotImplementedError("make_diagonal: only offset=0 and axes (-1, -2), as autograd")
    n = _np.shape(D)[-1]
    return _dnp.expand_dims(D, -1) * _np.eye(n)


def where(condition, x=None, y=None):
    """autograd's calling convention (keywords allowed); the values are diffsci.numpy.where's."""
    if x is None and y is None:
        return _dnp.where(condition)
    return _dnp.where(condition, x, y)
