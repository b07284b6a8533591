"""Functions that select or rearrange values, differentiable in the values they return.

``unique`` (and the ``unique_*`` family), ``union1d``, ``intersect1d``, ``setdiff1d`` and
``setxor1d`` return values of their inputs: away from ties each output is one input (a
gather).  Where an output value occurs several times in the inputs, the cotangent is shared
equally among the copies, the convention of ``max`` with ties: each output is the mean of
its copies.  Indices, inverses and counts are NumPy's, plain integers.

``histogram_bin_edges`` (and the edges of ``histogram``) with a number of bins or an
estimator name are ``linspace(lo, hi, n + 1)`` with ``(lo, hi)`` the data's ``min``/``max``
(or ``range``; NumPy's ``lo == hi`` case widens them by ±0.5), so they are differentiable in
``a`` (and in a traced ``range``); explicit ``bins`` arrays are returned as given.

``nextafter(x1, x2)`` moves ``x1`` by one ulp: derivative 1 in ``x1`` and 0 in ``x2``.
``heaviside(x1, x2)`` is ``x2`` where ``x1 == 0``: derivative ``[x1 == 0]`` in ``x2``, zero
in ``x1`` almost everywhere.

Every value is NumPy's own, bit for bit: each composite computes NumPy's result on plain
values and attaches the derivative of the composite with :func:`_exact`.  The maths:
DERIVATIONS.md, "Value-selecting functions".
"""

from __future__ import annotations

import numpy as np

from .._core import defjvp, defvjp, getval, is_tracer, primitive
from . import _util
from . import _wrap as W
from ._composite import _traced, array, diff, linspace
from ._util import unbroadcast

__all__ = ["heaviside", "histogram_bin_edges", "intersect1d", "nextafter", "setdiff1d",
           "setxor1d", "union1d", "unique"] + [
    n for n in ("unique_all", "unique_counts", "unique_inverse", "unique_values")
    if hasattr(np, n)]


# ---------------------------------------------------------------- helpers
def _arr(x):
    """A traced array from a traced value or a list holding traced values; plain otherwise."""
    if is_tracer(x) or not _traced(x):
        return x
    return array(x)


def _exact(value, traced):
    """``traced`` carrying exactly ``value`` (NumPy's result), with ``traced``'s derivative.

    ``traced`` equals ``value`` up to rounding; ``value - (t - traced)`` with ``t`` the plain
    value of ``traced`` is ``value`` exactly, since ``t - t`` is +0.0 wherever it is finite
    (non-finite entries get no derivative).
    """
    t = np.asarray(getval(traced))
    with np.errstate(invalid="ignore"):
        d = W.subtract(t, traced)
    fin = _util.value_mask(np.isfinite, traced)
    if not fin.all():
        d = W.where(fin, d, np.zeros((), t.dtype))
    return W.subtract(value if is_tracer(value) else np.asarray(value), d)


def _mean_of_copies(x, u):
    """``u`` (plain 1-D values taken from ``x``) as a traced array, each entry the mean of the
    copies of its value in ``x``.  Values of ``u`` not in ``x`` or not finite get none."""
    u = np.asarray(u)
    if u.size == 0:
        return u
    xf = W.ravel(x)
    # which entries of x are copies of which value: a guard under diffsci.jit (as u is)
    idx, sel, ginv, k = _util.observed(_copies, xf, u)
    sums = W.scatter_add(np.zeros(len(k), k.dtype), W.getitem(xf, sel), idx=idx)
    return _exact(u, W.getitem(W.true_divide(sums, k), ginv))


def _copies(xv, u):
    """For :func:`_mean_of_copies`: the value of ``u`` each finite copy in ``xv`` goes to,
    the copies, the entry of ``unique(u)`` of each ``u``, and the number of copies."""
    uu, ginv = np.unique(u, return_inverse=True)
    ux, xinv = np.unique(xv, return_inverse=True)  # match the distinct values only (fast)
    upos = np.minimum(np.searchsorted(uu, ux), len(uu) - 1)
    pos = upos[xinv.ravel()]
    sel = np.flatnonzero(((uu[upos] == ux) & np.isfinite(ux))[xinv.ravel()])
    dt = np.result_type(xv.dtype, u.dtype)
    k = np.maximum(np.bincount(pos[sel], minlength=len(uu)), 1).astype(dt)
    return pos[sel], sel, ginv.ravel(), k


def _mean_of_slices(x, u, axis, inverse):
    """``unique(..., axis=axis)``'s values ``u`` as a traced array: each slice is the mean
    of the slices of ``x`` equal to it (``inverse``: NumPy's slice of ``u`` for each)."""
    xv = np.asarray(getval(x))
    ax = axis % xv.ndim
    moved = np.moveaxis(xv, ax, 0).shape
    m = np.shape(u)[ax]
    inverse = np.ravel(inverse)
    xm = W.reshape(W.moveaxis(x, ax, 0), (moved[0], -1))
    k = np.maximum(np.bincount(inverse, minlength=m), 1).astype(xv.dtype)
    sums = W.scatter_add(np.zeros((m, xm.shape[1]), xv.dtype), xm, idx=inverse)
    means = W.moveaxis(W.reshape(W.true_divide(sums, k[:, None]), (m,) + moved[1:]), 0, ax)
    return _exact(u, means)


def _with_values(res, values):
    """NumPy's result ``res`` (an array, a tuple or a named tuple) with its values replaced."""
    if hasattr(res, "_replace"):
        return res._replace(values=values)
    if isinstance(res, tuple):
        return (values,) + res[1:]
    return values


# ---------------------------------------------------------------- unique
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           **kwargs):
    """``numpy.unique``; the unique values are differentiable.

    Args:
        ar: the input (traced or plain).
        return_index, return_inverse, return_counts, axis, equal_nan, sorted: as NumPy's.

    Returns:
        NumPy's result; the values are traced when ``ar`` is, each the mean of its copies
        in ``ar`` (so ties share the cotangent equally); indices, inverse and counts are
        NumPy's plain integer arrays.

    Raises:
        Whatever ``numpy.unique`` raises for these arguments.

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> w = np.array([1.0, 2.0])
        >>> ds.grad(lambda x: dnp.sum(dnp.unique(x) * w))(np.array([2.0, 1.0, 2.0]))
        array([1., 1., 1.])

    References:
        The sharing rule is that of ``max`` with ties (diffsci/numpy/_vjps.py).
    """
    ar = _arr(ar)
    av = getval(ar)
    if not is_tracer(ar):
        return np.unique(av, return_index, return_inverse, return_counts, axis, **kwargs)
    # the values (and what they index) are structure: a guard under diffsci.jit
    res = _util.observed(lambda v: np.unique(v, return_index, return_inverse, return_counts,
                                             axis, **kwargs), ar)
    vals = res[0] if isinstance(res, tuple) else res
    if axis is None:
        traced = _mean_of_copies(ar, vals)
    else:
        inv = _util.observed(lambda v: np.unique(v, return_inverse=True, axis=axis,
                                                 **kwargs)[1], ar)
        traced = _mean_of_slices(ar, vals, axis, inv)
    return _with_values(res, traced)


def _unique_family(name):
    npf = getattr(np, name)

    def f(x, /):
        x = _arr(x)
        res = npf(getval(x))
        if not is_tracer(x):
            return res
        return _with_values(res, _mean_of_copies(x, res.values if hasattr(res, "values")
                                                  else res))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"``numpy.{name}``; the values are differentiable (each the mean of its "
                 f"copies in ``x``), every other field is NumPy's.")
    return f


for _n in ("unique_all", "unique_counts", "unique_inverse", "unique_values"):
    if hasattr(np, _n):
        globals()[_n] = _unique_family(_n)


# ---------------------------------------------------------------- set operations
def _both(ar1, ar2):
    return W.concatenate([W.ravel(ar1), W.ravel(ar2)])


def union1d(ar1, ar2):
    """``numpy.union1d``, differentiable in the values.

    Args:
        ar1, ar2: the inputs (flattened, as NumPy's).

    Returns:
        NumPy's sorted union; traced when an input is, each value the mean of its copies in
        both inputs (a value in both shares its cotangent among all its copies).

    Raises:
        Whatever ``numpy.union1d`` raises.

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> ds.grad(lambda a: dnp.sum(dnp.union1d(a, np.array([2.0]))))(np.array([1.0, 2.0]))
        array([1. , 0.5])

    References:
        The tie rule of ``max`` (diffsci/numpy/_vjps.py); this module's docstring.
    """
    ar1, ar2 = _arr(ar1), _arr(ar2)
    u = _util.observed(lambda a, b: np.union1d(a, b), ar1, ar2)  # a guard under jit
    if not (is_tracer(ar1) or is_tracer(ar2)):
        return u
    return _mean_of_copies(_both(ar1, ar2), u)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False):
    """``numpy.intersect1d``, differentiable in the values.

    Args:
        ar1, ar2, assume_unique, return_indices: as NumPy's.

    Returns:
        NumPy's result; the values traced when an input is, each the mean of its copies in
        both inputs (the derivative along moves that keep the common value common: any other
        move empties the intersection).  ``return_indices`` gives NumPy's plain indices.

    Raises:
        Whatever ``numpy.intersect1d`` raises.

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> b = np.array([2.0, 5.0])
        >>> ds.grad(lambda a: dnp.sum(dnp.intersect1d(a, b)))(np.array([2.0, 1.0, 2.0]))
        array([0.33333333, 0.        , 0.33333333])

    References:
        The tie rule of ``max`` (diffsci/numpy/_vjps.py); this module's docstring.
    """
    ar1, ar2 = _arr(ar1), _arr(ar2)
    res = _util.observed(lambda a, b: np.intersect1d(a, b, assume_unique, return_indices),
                         ar1, ar2)  # a guard under diffsci.jit
    if not (is_tracer(ar1) or is_tracer(ar2)):
        return res
    vals = res[0] if return_indices else res
    return _with_values(res, _mean_of_copies(_both(ar1, ar2), vals))


def setdiff1d(ar1, ar2, assume_unique=False):
    """``numpy.setdiff1d``, differentiable in the values.

    Args:
        ar1, ar2, assume_unique: as NumPy's.

    Returns:
        NumPy's result; traced when ``ar1`` is, each value the mean of its copies in ``ar1``
        (``ar2`` only removes values: its derivative is zero almost everywhere).

    Raises:
        Whatever ``numpy.setdiff1d`` raises.

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> b = np.array([1.0])
        >>> ds.grad(lambda a: dnp.sum(dnp.setdiff1d(a, b)))(np.array([3.0, 1.0, 3.0]))
        array([0.5, 0. , 0.5])

    References:
        The tie rule of ``max`` (diffsci/numpy/_vjps.py); this module's docstring.
    """
    ar1, ar2 = _arr(ar1), _arr(ar2)
    # a guard under diffsci.jit
    u = _util.observed(lambda a, b: np.setdiff1d(a, b, assume_unique), ar1, ar2)
    if not is_tracer(ar1):
        return u
    return _mean_of_copies(ar1, u)


def setxor1d(ar1, ar2, assume_unique=False):
    """``numpy.setxor1d``, differentiable in the values.

    Args:
        ar1, ar2, assume_unique: as NumPy's.

    Returns:
        NumPy's result; traced when an input is, each value the mean of its copies in both
        inputs.

    Raises:
        Whatever ``numpy.setxor1d`` raises.

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> b = np.array([1.0, 4.0])
        >>> ds.grad(lambda a: dnp.sum(dnp.setxor1d(a, b) ** 2))(np.array([3.0, 1.0]))
        array([6., 0.])

    References:
        The tie rule of ``max`` (diffsci/numpy/_vjps.py); this module's docstring.
    """
    ar1, ar2 = _arr(ar1), _arr(ar2)
    # a guard under diffsci.jit
    u = _util.observed(lambda a, b: np.setxor1d(a, b, assume_unique), ar1, ar2)
    if not (is_tracer(ar1) or is_tracer(ar2)):
        return u
    return _mean_of_copies(_both(ar1, ar2), u)


# ---------------------------------------------------------------- bin edges
def _plain_edges(a, bins, *rng):
    return np.histogram_bin_edges(a, bins, rng or None)


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's name
    """``numpy.histogram_bin_edges``, differentiable in ``a``, ``range`` and array ``bins``.

    Args:
        a, bins, range, weights: as NumPy's.

    Returns:
        NumPy's edges.  With a number of bins or an estimator name they are
        ``linspace(lo, hi, n + 1)``: ``(lo, hi)`` is ``range`` if given, else
        ``(min(a), max(a))``, widened by ±0.5 when equal; traced when ``lo``/``hi`` are.
        Array ``bins`` are returned as given (traced if traced).

    Raises:
        Whatever ``numpy.histogram_bin_edges`` raises for these arguments.

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> ds.grad(lambda a: dnp.histogram_bin_edges(a, 2)[1])(np.array([0.0, 1.0, 4.0]))
        array([0.5, 0. , 0.5])

    References:
        NumPy's ``_get_outer_edges``/``_get_bin_edges`` (the linspace and the ±0.5 case).
    """
    a, bins = _arr(a), _arr(bins)
    rng = None if range is None else tuple(_arr(r) for r in range)
    # NumPy's edges of the values: a value_mask (recomputed under diffsci.jit)
    edges = _util.value_mask(_plain_edges, a, bins, *(() if rng is None else rng))
    if np.ndim(getval(bins)) == 1:
        return _exact(edges, bins) if is_tracer(bins) else edges
    if rng is None:
        if not is_tracer(a) or np.size(getval(a)) == 0:
            return edges
        lo, hi = W.min(a), W.max(a)
    else:
        lo, hi = rng
        if not (is_tracer(lo) or is_tracer(hi)):
            return edges
    if _util.observed(np.equal, lo, hi):  # a guard under diffsci.jit
        lo, hi = W.subtract(lo, 0.5), W.add(hi, 0.5)
    return _exact(edges, linspace(lo, hi, len(edges)))


def _density(counts, edges):
    """NumPy's ``density=True`` normalisation ``n / diff(edges) / n.sum()``, traced."""
    return W.true_divide(W.true_divide(counts, diff(edges)), W.sum(counts))


# ---------------------------------------------------------------- nextafter, heaviside
def _zeros(x):
    """The zero cotangent/tangent of a float argument (or output) ``x``."""
    v = np.asarray(getval(x))
    return np.zeros(v.shape, v.dtype if v.dtype.kind in "fc" else float)


nextafter = primitive(np.nextafter)
defvjp(nextafter,
       lambda g, ans, x1, x2, **kw: unbroadcast(g, x1),
       lambda g, ans, x1, x2, **kw: _zeros(x2))
defjvp(nextafter,
       lambda t, ans, x1, x2, **kw: W.broadcast_to(t, np.shape(ans)),
       lambda t, ans, x1, x2, **kw: _zeros(ans))

_heaviside_p = primitive(np.heaviside)


def _at_zero(x1):
    return np.asarray(getval(x1)) == 0


defvjp(_heaviside_p,
       lambda g, ans, x1, x2, **kw: _zeros(x1),
       lambda g, ans, x1, x2, **kw: unbroadcast(W.where(_at_zero(x1), g, 0.0), x2))
defjvp(_heaviside_p,
       lambda t, ans, x1, x2, **kw: _zeros(ans),
       lambda t, ans, x1, x2, **kw: W.broadcast_to(W.where(_at_zero(x1), t, 0.0),
                                                  np.shape(ans)))


def heaviside(x1, x2, /, *args, **kwargs):
    """``numpy.heaviside``: 0 for ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 for ``x1 > 0``.

    Args:
        x1: where to step (its derivative is zero almost everywhere).
        x2: the value at ``x1 == 0``.
        out, where, ...: as the ufunc's.

    Returns:
        NumPy's values; traced when ``x2`` is (derivative ``[x1 == 0]`` in ``x2``), plain
        when only ``x1`` is.

    Raises:
        Whatever ``numpy.heaviside`` raises.

    Example:
        >>> import numpy as np, diffsci as ds, diffsci.numpy as dnp
        >>> float(ds.grad(lambda h: dnp.sum(dnp.heaviside(np.array([0.0, 1.0]), h)))(0.5))
        1.0

    References:
        This module's docstring (the rules of ``_heaviside_p``).
    """
    if is_tracer(x2) or args or kwargs:
        return _heaviside_p(x1, x2, *args, **kwargs)
    return np.heaviside(getval(x1), x2)
