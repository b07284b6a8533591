"""Counter-based random numbers for Numba kernels (the packages' path and Brownian kernels).

``normal_pair(key, i)`` is a pure function of a 64-bit key and an index: the SplitMix64
finaliser (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014)
hashes the counter, and Box–Muller turns two 53-bit uniforms into two standard normals.  The same
(key, i) gives the same numbers on every call, in any order, on any thread — what Brownian trees
queried out of order and Monte Carlo kernels re-run by their adjoints need.  These are
``@njit`` functions on plain integers, to be called from other kernels.

Example:
    >>> import numpy as np
    >>> from diffsci.random import mix64, normal_pair
    >>> key = np.uint64(mix64(np.uint64(42)))  # keys are unsigned 64-bit integers
    >>> normal_pair(key, 0) == normal_pair(key, 0)
    True
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["GOLDEN", "mix64", "normal_pair"]

#: The 64-bit golden-ratio increment of SplitMix64.
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_TWO_M53 = 2.0**-53


@njit(cache=True)
def mix64(x):
    """SplitMix64's finaliser: a bijective 64-bit hash."""
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


@njit(cache=True)
def normal_pair(key, i):
    """Two independent standard normals, a pure function of (key, i) (Box–Muller)."""
    a = mix64(key + (np.uint64(2) * np.uint64(i) + np.uint64(1)) * GOLDEN)
    b = mix64(a ^ GOLDEN)
    u1 = (float(a >> _S11) + 0.5) * _TWO_M53
    u2 = float(b >> _S11) * _TWO_M53
    r = math.sqrt(-2.0 * math.log(u1))
    return r * math.cos(2.0 * math.pi * u2), r * math.sin(2.0 * math.pi * u2)
