"""Counting functions that are linear in their ``weights``: ``bincount``, ``histogram``,
``histogram2d``, ``histogramdd``.

The samples only choose bins (derivative zero almost everywhere, like ``floor``), but the
weighted counts are sums of the weights, so ``weights=`` is differentiable (and a density is
a smooth function of them).  All four are built on one primitive, the weighted ``bincount``,
whose adjoint gathers the cotangent back at each sample's bin.
"""

from __future__ import annotations

import builtins

import numpy as np

from .._core import defjvp, defvjp, getval, is_tracer, primitive
from . import _util
from . import _wrap as W
from ._sets import _density, histogram_bin_edges


def _bincount(weights, x, minlength):
    return np.bincount(x, weights, minlength)


_bincount_w = primitive(_bincount, name="bincount")
defvjp(_bincount_w, lambda g, ans, weights, x, minlength: W.getitem(g, x))
defjvp(_bincount_w, lambda t, ans, weights, x, minlength: _bincount_w(t, x, minlength))


def bincount(x, /, weights=None, minlength=0):
    """``numpy.bincount``; differentiable in ``weights`` (the counts are their sums)."""
    xv = np.asarray(getval(x))
    if weights is None or not is_tracer(weights):
        return np.bincount(xv, getval(weights), minlength)
    return _bincount_w(weights, xv, minlength)


def _bin_index(sample, edges):
    """NumPy's bin of every sample (the last edge belongs to the last bin; -1/n outside)."""
    n = len(edges) - 1
    idx = np.searchsorted(edges, sample, side="right") - 1
    idx[sample == edges[-1]] = n - 1
    return idx, (idx >= 0) & (idx < n)


def _weighted_counts(samples, edges, weights, density):
    """Weighted counts over the grid of ``edges`` (one per dimension), traced in weights."""
    shape = tuple(len(e) - 1 for e in edges)
    keep = np.ones(len(samples[0]), bool)
    cols = []
    for s, e in zip(samples, edges):
        i, k = _bin_index(s, e)
        cols.append(i)
        keep &= k
    flat = np.ravel_multi_index(tuple(c[keep] for c in cols), shape) if keep.any() \
        else np.zeros(0, np.intp)
    w = W.getitem(W.ravel(weights), np.flatnonzero(keep))
    counts = W.reshape(_bincount_w(w, flat, int(np.prod(shape))), shape)
    if density:
        vol = np.ones(shape)
        for d, e in enumerate(edges):
            vol = vol * np.diff(e).reshape([-1 if k == d else 1 for k in range(len(shape))])
        counts = counts / W.sum(counts) / vol
    return counts


def histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002 - NumPy's name
    """``numpy.histogram``; differentiable in ``weights`` and, through the edges, in ``a``.

    ``a`` only picks bins (derivative zero almost everywhere), but the edges computed from
    it (``histogram_bin_edges``: ``linspace(min(a), max(a), n + 1)``) move with it, and so
    does a density (``n / diff(edges) / n.sum()``).  The edges are traced when ``a``, a
    ``range`` or array ``bins`` are.
    """
    av = np.asarray(getval(a))
    edges = histogram_bin_edges(a, bins, range)
    if not (is_tracer(weights) or is_tracer(edges)):
        return np.histogram(av, getval(bins), _plain_range(range), density, getval(weights))
    ev = np.asarray(getval(edges))
    if is_tracer(weights):
        counts = _weighted_counts([av.ravel()], [ev], weights, False)
    else:  # the counts: a value_mask (recomputed under diffsci.jit)
        counts = _util.value_mask(_plain_counts, a, edges, weights)
    return (_density(counts, edges) if density else counts), edges


def _plain_counts(a, edges, weights):
    return np.histogram(a, edges, weights=weights)[0]


def _plain_range(range):  # noqa: A002
    return None if range is None else tuple(getval(r) for r in range)


def histogramdd(sample, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """``numpy.histogramdd``; differentiable in ``weights``."""
    if isinstance(sample, (list, tuple)):
        sv = np.stack([np.asarray(getval(s)) for s in sample], axis=-1)
    else:
        sv = np.asarray(getval(sample))
    if weights is None or not is_tracer(weights):
        return np.histogramdd(sv, getval(bins), range, density, getval(weights))
    _, edges = np.histogramdd(sv, getval(bins), range)
    sv = sv.reshape(len(sv), -1) if sv.ndim > 1 else sv[:, None]
    counts = _weighted_counts([sv[:, d] for d in builtins.range(sv.shape[1])], edges, weights,
                              density)
    return counts, edges


def histogram2d(x, y, bins=10, range=None, density=None, weights=None):  # noqa: A002
    """``numpy.histogram2d``; differentiable in ``weights``."""
    xv, yv = np.asarray(getval(x)), np.asarray(getval(y))
    if weights is None or not is_tracer(weights):
        return np.histogram2d(xv, yv, getval(bins), range, density, getval(weights))
    _, ex, ey = np.histogram2d(xv, yv, getval(bins), range)
    return _weighted_counts([xv, yv], [ex, ey], weights, density), ex, ey
