"""``autograd.numpy.linalg`` is ``diffsci.numpy.linalg``, with autograd's two private helpers
its tests call (``_dot``, ``T``) mapped onto diffsci.numpy."""

import diffsci.numpy as _dnp
from diffsci.numpy.linalg import *  # noqa: F403

_dot = _dnp.matmul


def T(x):
    return _dnp.swapaxes(x, -1, -2)
