"""Gradient specs of the value-selecting functions (unique, set operations, bin edges) and of
nextafter/heaviside.  Samples are tie-free (finite differences would break ties); the tie
convention is pinned in test_sets.py."""

import numpy as np

import diffsci.numpy as dnp

from .test_numpy_grads import Spec, away, cnormal, const, distinct, normal

_W = np.array([1.0, -2.0, 0.5, 3.0, 0.25, -1.5])  # weights of the returned values
_B = np.array([0.7, 2.1, 99.0])  # plain second operand of the set operations
_H = np.array([0.0, -1.0, 0.0, 2.0])  # heaviside steps, with zeros


def _cat(*xs):
    return dnp.concatenate(xs)


def _sym(v):
    """A symmetric loss: the unique_* family may return its values in any order (NumPy
    hashes complex values), so only functions of the set are checked by differences."""
    return dnp.sum(v * v + v ** 3)


def _dot(v, w=_W):
    return dnp.sum(v * w[: v.shape[0]])


SPECS = [
    Spec("unique", lambda x: _dot(dnp.unique(x)), (distinct(6),)),
    Spec("unique", lambda x: _dot(dnp.unique(x, return_inverse=True, return_counts=True)[0]),
         (distinct(2, 3),)),
    Spec("unique", lambda x: dnp.unique(x, axis=0) * 2.0,
         (const([[1.0, 2.0], [0.5, 0.3], [1.1, 2.0]]),)),
    Spec("unique_values", lambda x: _sym(dnp.unique_values(x)), (distinct(6),)),
    Spec("unique_counts", lambda x: _sym(dnp.unique_counts(x).values), (distinct(6),)),
    Spec("unique_inverse", lambda x: _sym(dnp.unique_inverse(x).values), (distinct(6),)),
    Spec("unique_all", lambda x: _sym(dnp.unique_all(x).values), (distinct(6),)),
    # ties: t, s, u are free values; copies of one value move together (the only moves that
    # keep a shared value shared), so the differences see the tie convention (shares sum to 1)
    Spec("unique", lambda t, s: _dot(dnp.unique(_cat(t, s, t[::-1]))), (normal(2), normal(3))),
    Spec("union1d", lambda t, s, u: _dot(dnp.union1d(_cat(t, s), _cat(s, u))),
         (normal(2), normal(2), normal(1))),
    Spec("intersect1d", lambda t, s, u: _dot(dnp.intersect1d(_cat(t, s), _cat(s[::-1], u, t))),
         (normal(2), normal(2), const([9.0]))),
    Spec("intersect1d", lambda t, s: _dot(dnp.intersect1d(_cat(t, s), _cat(s, _B),
                                                          return_indices=True)[0]),
         (normal(2), normal(2))),
    Spec("setdiff1d", lambda t, s: _dot(dnp.setdiff1d(_cat(t, s, t), _cat(s, _B))),
         (normal(2), normal(2))),
    Spec("setxor1d", lambda t, s, u: _dot(dnp.setxor1d(_cat(t, s), _cat(s, u))),
         (normal(2), normal(2), normal(2))),
    # complex values (NumPy orders them lexicographically); the same ties
    Spec("unique", lambda t, s: _dot(dnp.unique(_cat(t, s, t))), (cnormal(2), cnormal(2))),
    Spec("unique_values", lambda z: _sym(dnp.unique_values(z)), (cnormal(4),)),
    Spec("unique_counts", lambda z: _sym(dnp.unique_counts(z).values), (cnormal(4),)),
    Spec("unique_inverse", lambda z: _sym(dnp.unique_inverse(z).values), (cnormal(4),)),
    Spec("unique_all", lambda z: _sym(dnp.unique_all(z).values), (cnormal(4),)),
    Spec("union1d", lambda t, s: _dot(dnp.union1d(_cat(t, s), s)), (cnormal(2), cnormal(2))),
    Spec("intersect1d", lambda t, s: _dot(dnp.intersect1d(_cat(t, s), _cat(s, t[:1]))),
         (cnormal(2), cnormal(2))),
    Spec("setdiff1d", lambda t, s: _dot(dnp.setdiff1d(_cat(t, s), s)), (cnormal(2), cnormal(2))),
    Spec("setxor1d", lambda t, s: _dot(dnp.setxor1d(_cat(t, s), s)), (cnormal(2), cnormal(2))),
    Spec("histogram_bin_edges", lambda a: dnp.histogram_bin_edges(a, 4), (normal(7),)),
    Spec("histogram_bin_edges", lambda a: dnp.histogram_bin_edges(a, "auto"), (normal(20),)),
    Spec("histogram_bin_edges", lambda lo, hi: dnp.histogram_bin_edges(_B, 3, (lo, hi)),
         (const(-1.0), const(2.0))),
    Spec("histogram_bin_edges", lambda b: dnp.histogram_bin_edges(_B, b) * 3.0,
         (const([0.0, 0.5, 2.0]),)),
    Spec("histogram", lambda a: dnp.histogram(a, 3)[1], (normal(7),)),
    Spec("histogram", lambda a: dnp.histogram(a, 3, density=True)[0], (distinct(7),)),
    Spec("nextafter", lambda x, y: dnp.nextafter(x, y) * x, (normal(2, 3), away(3))),
    Spec("heaviside", lambda x2: dnp.heaviside(_H, x2) * x2, (normal(4),)),
    Spec("heaviside", lambda x1, x2: dnp.heaviside(x1, x2) * x2, (away(2, 3), normal(3))),
]
