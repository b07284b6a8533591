"""Numba functions the generated code calls (compiled once, cached with the package)."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, error_model="numpy")
def _sigmoid_s(x):
    """The stable logistic function of ``diffsci.nn.sigmoid`` on one float64."""
    e = np.exp(-np.abs(x))
    return (1.0 if x >= 0 else e) / (1.0 + e)
