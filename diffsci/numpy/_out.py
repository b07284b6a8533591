"""``out=`` and ``where=`` for the functions of diffsci.numpy that are not ufuncs.

NumPy functions such as ``sum``, ``cumsum``, ``take`` or ``clip`` accept ``out`` by keyword or
by position (``np.cumsum(y, 0, None, b)``).  :func:`wrap_namespace` wraps every such function
of the namespace once: a call without ``out``/``where`` goes straight through; otherwise the
result is computed without them and written into ``out`` as an in-place write (exact
gradients through a traced buffer, an integer buffer truncating as NumPy does, a clear error
for a plain buffer that cannot hold a traced value).  ``where=`` of the reductions is
rewritten as a masked reduction (``sum(where=m)`` is ``sum(np.where(m, a, 0))``); where no
rewrite is known the call is refused, naming the function.  Ufuncs handle both in
:func:`diffsci._inplace.ufunc_out`.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from .. import _inplace
from .._core import _has_traced, getval

# where= of differentiable reductions: the value masked-out elements take, or how to rewrite.
_WHERE_FILL = {"sum": 0, "nansum": 0, "prod": 1, "nanprod": 1, "mean": "mean",
               "nanmean": "mean", "max": "initial", "amax": "initial", "min": "initial",
               "amin": "initial", "nanmax": "initial", "nanmin": "initial"}


def _out_position(npf):
    """The position of ``out`` among ``npf``'s positional parameters, or None; its names."""
    try:
        sig = inspect.signature(npf)
    except (TypeError, ValueError):
        return None, None
    params = list(sig.parameters.values())
    names = [p.name for p in params]
    if "out" not in names:
        return None, None
    k = names.index("out")
    kind = params[k].kind
    positional = kind in (inspect.Parameter.POSITIONAL_ONLY,
                          inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return (k if positional else len(params) + 1), sig


def _with_out(name, npf, ours, pos, sig):
    fill = _WHERE_FILL.get(name)
    nondiff = getattr(ours, "is_nondifferentiable", False)

    @functools.wraps(ours)
    def f(*args, **kwargs):
        if len(args) <= pos and "out" not in kwargs and "where" not in kwargs:
            return ours(*args, **kwargs)
        if not (_has_traced(args) or _has_traced(kwargs.values())):
            return npf(*args, **kwargs)  # nothing traced: NumPy itself
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"numpy.{name}: {e}") from None
        a = bound.arguments
        out = a.pop("out", None)
        where = a.pop("where", True)
        if type(out) is tuple:
            if len(out) != 1:
                raise TypeError(f"numpy.{name}: out= must be one array")
            out = out[0]
        masked = where is not True and where is not np._NoValue
        if masked and nondiff:
            a["where"] = getval(where)
        elif masked and fill == "mean":
            result = _masked_mean(a, where)
        elif masked:
            _mask_input(name, fill, a, where)
        if not masked or nondiff or fill != "mean":
            # parameters up to out positionally (traced ones must be), the rest by name
            lead = []
            for n in list(sig.parameters)[:pos]:
                if n not in a:
                    break
                if sig.parameters[n].kind is inspect.Parameter.VAR_POSITIONAL:
                    lead.extend(a.pop(n))
                    break
                lead.append(a.pop(n))
            result = ours(*lead, **a)
        if out is None:
            return result
        return _inplace.write_out(out, result, f"numpy.{name}")

    f.__wrapped_out__ = ours
    return f


def _mask_input(name, fill, a, where):
    """Rewrite a reduction's where= in the bound arguments ``a`` as a masked input."""
    from . import _wrap as W

    first = next(iter(a))
    x = a[first]
    mask = np.broadcast_to(getval(where), np.shape(getval(x)))
    if fill is None:
        raise NotImplementedError(
            f"numpy.{name}: where= on traced values is not supported by diffsci; mask the "
            f"input with np.where(mask, x, fill) and reduce that")
    if fill == "initial":
        fill = a.get("initial", np._NoValue)
        if fill is np._NoValue:
            raise ValueError(
                f"numpy.{name}: where= needs initial= (the value of an all-masked slice), as "
                f"in NumPy")
    a[first] = W.where(mask, x, fill)


def _masked_mean(a, where):
    from . import _wrap as W

    x = a[next(iter(a))]
    mask = np.broadcast_to(getval(where), np.shape(getval(x)))
    axis = a.get("axis")
    keepdims = a.get("keepdims", np._NoValue)
    kd = {} if keepdims is np._NoValue else {"keepdims": keepdims}
    return W.sum(W.where(mask, x, 0), axis=axis, **kd) / np.sum(mask, axis=axis, **kd)


def wrap_namespace(ns):
    """Wrap every function of namespace dict ``ns`` whose NumPy namesake takes ``out``."""
    for name, ours in list(ns.items()):
        if name.startswith("_") or not callable(ours) or isinstance(ours, type):
            continue
        npf = getattr(np, name, None)
        if npf is None or isinstance(npf, np.ufunc) or not callable(npf):
            continue
        pos, sig = _out_position(npf)
        if pos is None:
            continue
        ns[name] = _with_out(name, npf, ours, pos, sig)
