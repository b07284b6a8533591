"""Functions whose copy/view behaviour needs more than their primitive: ``diagonal`` (a
read-only view, as NumPy's) and ``flatten`` (always a copy).  ``tests/diffsci/test_views.py``
checks every view-returning function against ``np.shares_memory``."""

from __future__ import annotations

import numpy as np

from .._core import defjvp, defvjp, getval, primitive
from . import _composite as C
from . import _wrap as W

diagonal = primitive(np.diagonal)


def _diagonal_back(g, ans, a, offset=0, axis1=0, axis2=1):
    """Place g on the diagonal of zeros shaped like a (scatter-add, itself differentiable)."""
    shape = np.shape(a)
    nd = len(shape)
    ax1, ax2 = axis1 % nd, axis2 % nd
    n = np.shape(getval(g))[-1]
    i = np.arange(n) + max(0, -offset)
    idx = [slice(None)] * nd
    idx[ax1], idx[ax2] = i, i + offset
    # advanced indices separated by slices (or not first) put their axis first: match it
    zeros = np.zeros(shape, np.result_type(getval(g), getval(a)))
    probe = np.zeros(shape)[tuple(idx)]
    gg = g if probe.shape == np.shape(getval(g)) else np.moveaxis(g, -1, 0)
    return W.scatter_add(zeros, gg, idx=tuple(idx))


defvjp(diagonal, _diagonal_back)
defjvp(diagonal, lambda t, ans, a, offset=0, axis1=0, axis2=1: np.diagonal(t, offset, axis1,
                                                                            axis2))


def diag(v, k=0):
    """``numpy.diag``: a read-only view of a 2-D array's diagonal, or a new 2-D array."""
    if np.ndim(getval(v)) == 2:
        return diagonal(v, k)
    return C.diag(v, k)


def flatten(a, order="C"):
    """``ndarray.flatten``: a copy, never a view (unlike ``ravel``)."""
    return W.copy(W.ravel(a, order))
